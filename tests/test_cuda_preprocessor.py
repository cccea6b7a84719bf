"""The preprocessor's vendor branches: three-valued #if evaluation for ROCm and NVIDIA builds, defines, includes."""

from __future__ import annotations

import pytest

from rocmlint.cuda.preprocessor import (
    MacroShape,
    VendorMacros,
    analyse,
    call_arguments,
    disabled_switches,
    dropped_on_rocm,
    evaluate_integer,
    holds_only_on_windows,
    invocation_arguments,
    names_in,
    parse_int,
    unused_parameters,
)
from rocmlint.vendor import Branch


def branch_of(source: str, marker: str = "HAZARD", macros: VendorMacros | None = None) -> Branch:
    return analyse(source, macros or VendorMacros()).branch_at(source.encode().index(marker.encode()))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("HAZARD;\n", Branch(True, True)),
        ("#ifdef USE_ROCM\nHAZARD;\n#endif\n", Branch(True, False)),
        ("#ifdef USE_ROCM\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#ifndef USE_ROCM\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#if !defined(__HIP_PLATFORM_AMD__)\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#if defined(__HIPCC__)\nx;\n#elif defined(__CUDACC__)\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#ifdef __NVCC__\nHAZARD;\n#endif\n", Branch(False, None)),
        # `__CUDACC__` alone may be hipify's `__HIPCC__`; in a chain testing `__HIPCC__` too it means nvcc.
        ("#ifdef __CUDACC__\nHAZARD;\n#endif\n", Branch(None, None)),
        ("#ifdef __CUDACC__\nHAZARD;\n#elif defined(__HIPCC__)\nx;\n#endif\n", Branch(False, None)),
        ("#if defined(__HIPCC__) && !defined(__CUDACC__)\nHAZARD;\n#endif\n", Branch(True, False)),
        # __CUDA_ARCH__ is never defined by HIP-Clang: the arm disappears on ROCm (ROC213 reports the gate).
        ("#if __CUDA_ARCH__ >= 800\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#if defined(__CUDA_ARCH__) && !defined(USE_ROCM)\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700\nHAZARD;\n#endif\n", Branch(True, None)),
        # CUDA version macros are 0 on ROCm: `< 9000` is taken there, so the #else is NVIDIA-only.
        ("#if CUDA_VERSION < 9000\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#if defined(USE_ROCM) || CUDA_VERSION >= 11000\nHAZARD;\n#endif\n", Branch(True, None)),
        # Device pass and arch macros: unknown on ROCm, never defined on NVIDIA.
        ("#ifdef __HIP_DEVICE_COMPILE__\nHAZARD;\n#endif\n", Branch(None, False)),
        ("#ifdef __HIP_DEVICE_COMPILE__\nx;\n#else\nHAZARD;\n#endif\n", Branch(None, True)),
        ("#if defined(__gfx942__) || defined(__GFX9__)\nHAZARD;\n#endif\n", Branch(None, False)),
        ("#if HIP_VERSION >= 50200000\nHAZARD;\n#endif\n", Branch(None, False)),
        # Project options say nothing about the vendor.
        ("#ifdef ENABLE_BF16\nHAZARD;\n#endif\n", Branch(None, None)),
        # Nested chains combine.
        ("#ifdef ENABLE_BF16\n#ifndef USE_ROCM\nHAZARD;\n#endif\n#endif\n", Branch(False, None)),
        ("#ifndef USE_ROCM\n#ifdef ENABLE_BF16\nx;\n#endif\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#ifdef USE_ROCM\nx;\n#endif\nHAZARD;\n", Branch(True, True)),
        # Continuations and comments inside directives.
        (
            "#if defined(USE_ROCM) \\\n    || defined(__HIP__)  /* ROCm */\nx;\n#else  // CUDA\nHAZARD;\n#endif\n",
            Branch(False, True),
        ),
        # A directive inside a block comment is not a directive.
        ("/*\n#ifdef USE_ROCM\n*/\nHAZARD;\n", Branch(True, True)),
        # A macro the file itself defines only for ROCm is a ROCm macro.
        (
            "#if defined(__HIP_PLATFORM_AMD__)\n#define IS_HIP 1\n#endif\n#ifndef IS_HIP\nHAZARD;\n#endif\n",
            Branch(False, True),
        ),
        # Include guards hold when the header is read.
        ("#ifndef KERNELS_H\n#define KERNELS_H\nHAZARD;\n#endif\n", Branch(True, True)),
        # Ternaries, arithmetic, function-like macros (unknown) and malformed conditions (unknown).
        ("#if (defined(USE_ROCM) ? 1 : 0)\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, True)),
        ("#if __has_include(<hip/hip_runtime.h>)\nHAZARD;\n#endif\n", Branch(None, None)),
        # A header of the CUDA toolkit or its libraries is on no ROCm include path; another header is unknown.
        ('#if __has_include("cudnn.h") && !defined(USE_ROCM)\nHAZARD;\n#endif\n', Branch(False, None)),
        ("#if __has_include(<cuda_fp8.h>) || defined(USE_ROCM)\nHAZARD;\n#endif\n", Branch(True, None)),
        ("#if __has_include(<nvml.h>)\nHAZARD;\n#else\nx;\n#endif\n", Branch(False, None)),
        ("#if !__has_include(<cub/cub.cuh>)\nHAZARD;\n#endif\n", Branch(True, None)),  # the fallback ROCm takes
        ('#if __has_include("my_kernels.h")\nHAZARD;\n#endif\n', Branch(None, None)),
        ("#if defined(\nHAZARD;\n#endif\n", Branch(None, None)),
    ],
)
def test_branches(source, expected):
    assert branch_of(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # A file's own device-pass macro around a test of the HIP device pass: the `#else` needs the host pass inside
        # an arm only the device pass enters, so no ROCm pass compiles it (a PTX `trap` there is NVIDIA's).
        (
            "#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n#define XYZ_DEVICE_COMPILE\n#endif\n"
            "#if defined(XYZ_DEVICE_COMPILE)\n#if !defined(NDEBUG) || defined(__HIP_DEVICE_COMPILE__)\nx;\n#else\n"
            "HAZARD;\n#endif\n#endif\n",
            Branch(False, None),
        ),
        (
            "#ifdef __HIP_DEVICE_COMPILE__\n#if !__HIP_DEVICE_COMPILE__\nHAZARD;\n#endif\n#endif\n",
            Branch(False, False),
        ),
        # `__HIP_DEVICE_COMPILE__` is 1 on the device pass, undefined on the host: `>= 700` holds on no ROCm pass, and
        # the `#else` (PTX `membar.sys` there) stays ROCm's.
        (
            "#if __CUDA_ARCH__ >= 700 || __HIP_DEVICE_COMPILE__ >= 700\nHAZARD;\n#else\nx;\n#endif\n",
            Branch(False, None),
        ),
        ("#if __CUDA_ARCH__ >= 700 || __HIP_DEVICE_COMPILE__ >= 700\nx;\n#else\nHAZARD;\n#endif\n", Branch(None, None)),
        # The host pass alone still takes the `#else` when NDEBUG is defined: it stays undecided.
        ("#if !defined(NDEBUG) || defined(__HIP_DEVICE_COMPILE__)\nx;\n#else\nHAZARD;\n#endif\n", Branch(None, None)),
        # No pass of a ROCm build has a target on the host.
        ("#ifndef __HIP_DEVICE_COMPILE__\n#ifdef __gfx90a__\nHAZARD;\n#endif\n#endif\n", Branch(False, False)),
        ("#ifdef __HIP_DEVICE_COMPILE__\n#ifdef __gfx90a__\nHAZARD;\n#endif\n#endif\n", Branch(None, False)),
        # A file one of whose conditions tests both compilers means nvcc by `__CUDACC__` alone, in a chain around it
        # or apart; a sibling chain testing `__HIPCC__` alone says no more than the chain testing it does.
        (
            "#ifdef __CUDACC__\nHAZARD;\n#endif\n#if defined(__CUDACC__) || defined(__HIPCC__)\nx;\n#endif\n",
            Branch(False, None),
        ),
        ("#ifdef __CUDACC__\nHAZARD;\n#endif\n#ifdef __HIPCC__\nx;\n#endif\n", Branch(None, None)),
        # A sibling arm of HIP-Clang's own including a header only ROCm ships: written for HIP-Clang as is, so
        # `__CUDACC__` means nvcc throughout the file.
        (
            "#if defined(__CUDACC__)\nHAZARD;\n#endif\n#if defined(__HIPCC__)\n#include <hipcub/hipcub.hpp>\n#endif\n",
            Branch(False, None),
        ),
        (
            "#ifdef __CUDACC__\nHAZARD;\n#endif\n#ifdef __HIP__\n#include <rocm_smi/rocm_smi.h>\n#endif\n",
            Branch(False, None),
        ),
        # A project header of its own under `__HIPCC__` says nothing about who wrote it.
        ('#ifdef __CUDACC__\nHAZARD;\n#endif\n#ifdef __HIPCC__\n#include "gpu_compat.h"\n#endif\n', Branch(None, None)),
        (
            "#if defined(__CUDACC__) || defined(__HIPCC__)\n#ifdef __CUDACC__\nHAZARD;\n#else\n"
            '#include "x.hip"\n#endif\n#endif\n',
            Branch(False, None),
        ),
        # HIP-Clang never defines `__HIP_ARCH__` (only the `__HIP_ARCH_HAS_*__` feature macros).
        ("#if defined(__HIP_ARCH__) && __HIP_ARCH__ < 600\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#if !defined(__HIP_ARCH__) || __HIP_ARCH__ != 906\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#define __HIP_ARCH__ 900\n#if defined(__HIP_ARCH__)\nHAZARD;\n#endif\n", Branch(True, True)),
    ],
)
def test_branches_no_rocm_compile_sees(source, expected):
    assert branch_of(source) == expected


def test_combinations_the_build_refuses_with_rocm():
    """`if(XYZ_UM AND NOT ENABLE_CUDA AND NOT XYZ_THIN) message(FATAL_ERROR ...)`: no ROCm build has XYZ_UM without
    XYZ_THIN, so code needing both is NVIDIA's; either alone may still be built."""
    refused = VendorMacros(rocm_refused=(frozenset({("XYZ_UM", True), ("XYZ_THIN", False)}),))
    both = "#if defined(XYZ_UM)\n#if !defined(XYZ_THIN)\nHAZARD;\n#endif\n#endif\n"
    assert branch_of(both) == Branch(None, None)
    assert branch_of(both, macros=refused) == Branch(False, None)
    assert branch_of("#if defined(XYZ_UM) && !defined(XYZ_THIN)\nHAZARD;\n#endif\n", macros=refused).on_rocm is False
    assert branch_of("#if defined(XYZ_UM)\nHAZARD;\n#endif\n", macros=refused) == Branch(None, None)
    assert branch_of("#if defined(XYZ_UM) && defined(XYZ_THIN)\nHAZARD;\n#endif\n", macros=refused).on_rocm is None
    # A file defining one of them itself is read once, as written.
    own = "#define XYZ_UM\n" + both
    assert branch_of(own, macros=refused).on_rocm is None


def test_configured_rocm_macros():
    source = "#ifndef GGML_USE_HIP\nHAZARD;\n#endif\n"
    assert branch_of(source) == Branch(None, None)
    assert branch_of(source, macros=VendorMacros().with_project_macros(("GGML_USE_HIP",), ())) == Branch(False, True)


@pytest.mark.parametrize(
    ("source", "gated", "compiled"),
    [
        # The gate the author meant: ROC215 reports the test, the code is analysed as gated by it.
        ("#ifdef __HIP_PLATFORM_HCC__\nHAZARD;\n#endif\n", Branch(True, False), Branch(None, False)),
        ("#ifdef __HIP_PLATFORM_HCC__\nx;\n#else\nHAZARD;\n#endif\n", Branch(False, True), Branch(None, True)),
        ("#if !defined(HIP_PLATFORM_HCC)\nHAZARD;\n#endif\n", Branch(False, True), Branch(None, True)),
        (
            "#if defined(__HIP_PLATFORM_HCC__)\nx;\n#elif CUDA_VERSION >= 9000\ny;\n#else\nHAZARD;\n#endif\n",
            Branch(False, None),
            Branch(None, None),
        ),
        # Its value is not known: old HIP defined it empty or as 1.
        ("#if __HIP_PLATFORM_HCC__ == 1\nHAZARD;\n#endif\n", Branch(None, False), Branch(None, False)),
        # The NVIDIA spellings are NVIDIA's in both views.
        ("#ifdef __HIP_PLATFORM_NVCC__\nHAZARD;\n#endif\n", Branch(False, None), Branch(False, None)),
        ("#ifdef HIP_PLATFORM_NVCC\nx;\n#else\nHAZARD;\n#endif\n", Branch(True, None), Branch(True, None)),
    ],
)
def test_stale_platform_macros_gate_as_meant_and_compile_as_maybe_defined(source, gated, compiled):
    assert branch_of(source) == gated
    assert branch_of(source, macros=VendorMacros().as_compiled()) == compiled


def test_project_macros_keep_the_stale_gates():
    source = "#ifdef __HIP_PLATFORM_HCC__\nx;\n#else\nHAZARD;\n#endif\n"
    macros = VendorMacros().with_project_macros(("MY_HIP",), ("MY_CUDA",))
    assert branch_of(source, macros=macros) == Branch(False, True)
    assert branch_of(source, macros=macros.as_compiled()) == Branch(None, True)


def test_unterminated_if_is_counted_and_code_still_has_a_branch():
    preprocessor = analyse("#ifndef USE_ROCM\nHAZARD;\n", VendorMacros())
    assert preprocessor.unterminated == 1
    assert preprocessor.branch_at(18) == Branch(False, True)


def test_stray_else_and_endif_do_not_crash():
    source = "#endif\n#else\nHAZARD;\n"
    assert branch_of(source) == Branch(True, True)


def test_defines_are_tracked_with_the_branch_rocm_sees():
    source = (
        "#ifdef USE_ROCM\n#define FULL_MASK 0xffffffffffffffffull\n#else\n#define FULL_MASK 0xffffffff\n#endif\nuse;\n"
    )
    preprocessor = analyse(source, VendorMacros())
    define = preprocessor.define_of("FULL_MASK", len(source))
    assert define is not None and define.value == "0xffffffffffffffffull"
    assert preprocessor.define_of("FULL_MASK", 0) is None


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        # The warp size the build sets per target: a wave64 ROCm target takes the 64-bit arm, before or after.
        (
            "#if XYZ_WARP_SIZE == 64\n#define M 0xffffffffffffffff\n#else\n#define M 0xffffffff\n#endif\n",
            "0x" + "f" * 16,
        ),
        (
            "#if XYZ_WARP_SIZE == 32\n#define M 0xffffffff\n#elif XYZ_WARP_SIZE == 64\n#define M ~0ull\n#endif\n",
            "~0ull",
        ),
        # Any other unknown switch: the last definition, as before.
        ("#if XYZ_TILE == 64\n#define M 0xffffffffffffffff\n#else\n#define M 0xffffffff\n#endif\n", "0xffffffff"),
        # A warp size the file decides for ROCm decides the arm.
        (
            "#define XYZ_WARP_SIZE 32\n#if XYZ_WARP_SIZE == 64\n#define M ~0ull\n#else\n#define M 0xffffffff\n#endif\n",
            "0xffffffff",
        ),
    ],
)
def test_a_warp_size_chain_gives_rocm_its_wave64_definition(chain, expected):
    source = chain + "use;\n"
    define = analyse(source, VendorMacros()).define_of("M", len(source))
    assert define is not None and define.value == expected


def test_alternative_spellings_of_the_logical_operators():
    """`#if not defined(X)` is `#if !defined(X)`; `and`/`or` are `&&`/`||` (boost::multi's `MULTI_USE_HIP`)."""
    source = (
        "#if not defined(USE_ROCM)\nHAZARD;\n#endif\n#if defined(USE_ROCM) and not defined(NDEBUG)\nCHECK;\n#endif\n"
    )
    preprocessor = analyse(source, VendorMacros())
    assert preprocessor.branch_at(source.index("HAZARD")) == Branch(False, True)
    assert preprocessor.branch_at(source.index("CHECK")) == Branch(None, False)
    assert names_in("not defined(A) or B") == ["defined", "A", "B"]


def test_includes_and_function_like_defines():
    source = '#include <cuda_runtime.h>\n#include "kernels/common.cuh"\n#define SHFL(v, o) __shfl_xor_sync(0xffffffff, v, o)\n'
    preprocessor = analyse(source, VendorMacros())
    assert [(i.header, i.system) for i in preprocessor.includes] == [
        ("cuda_runtime.h", True),
        ("kernels/common.cuh", False),
    ]
    assert preprocessor.defines["SHFL"][0].parameters == ("v", "o")
    assert [d.line for d in preprocessor.directives] == [1, 2, 3]


def test_byte_offsets_count_utf8_bytes():
    source = "// größe\n#ifndef USE_ROCM\nHAZARD;\n#endif\n"
    assert branch_of(source) == Branch(False, True)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("32", 32),
        ("0xffffffff", 0xFFFFFFFF),
        ("0xFFFFFFFFu", 0xFFFFFFFF),
        ("0x20u", 32),
        ("(64)", 64),
        ("010", 8),
        ("0", 0),
        ("x", None),
        ("1.5", None),
    ],
)
def test_parse_int(text, value):
    assert parse_int(text) == value


def test_configured_nvidia_macros_are_never_defined_on_rocm():
    source = "#ifdef PTX_AVAILABLE\nHAZARD;\n#endif\n"
    assert branch_of(source) == Branch(None, None)
    assert branch_of(source, macros=VendorMacros().with_project_macros((), ("PTX_AVAILABLE",))) == Branch(False, None)


def test_an_elif_line_is_read_where_its_chain_is():
    source = "#ifndef USE_ROCM\nint a;\n#elif CUDA_VERSION >= 11000\nint b;\n#endif\n"
    preprocessor = analyse(source, VendorMacros())
    elif_line = preprocessor.directives[1]
    assert preprocessor.branch_at(elif_line.start_byte + 3) == Branch(True, True)
    assert preprocessor.branch_at(source.index("int a")) == Branch(False, True)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("(32 * 1024 + 16)", 32784),
        ("7 / 2", 3),
        ("-7 / 2", -3),
        ("-7 % 2", -1),
        ("1 << 16", 65536),
        ("2 +", None),
        ("N * 4", None),
    ],
)
def test_evaluate_integer_follows_c(text, value):
    assert evaluate_integer(text) == value


@pytest.mark.parametrize(
    ("defines", "expected"),
    [
        # A macro standing for a vendor expression has that expression's value in an `#if`.
        ("#define MMA_OK !defined(USE_ROCM) && __CUDA_ARCH__ >= 700\n", Branch(False, None)),
        ("#define IS_AMD defined(__HIP_PLATFORM_AMD__)\n#define NOT_AMD !IS_AMD\n", Branch(False, True)),
        # Either side of a vendor test: 1 on ROCm, 0 on NVIDIA; the file's two #defines agree per vendor.
        (
            "#ifdef USE_ROCM\n#define ON_HIP 1\n#else\n#define ON_HIP 0\n#endif\n#define NOT_AMD !ON_HIP\n",
            Branch(False, True),
        ),
    ],
)
def test_macros_standing_for_expressions(defines, expected):
    source = defines + "#if " + ("MMA_OK" if "MMA_OK" in defines else "NOT_AMD") + "\nx\n#endif\n"
    assert analyse(source, VendorMacros()).branch_at(source.index("\nx") + 1) == expected


def test_header_values_and_learned_macros_decide_tests():
    from rocmlint.cuda.preprocessor import LearnedMacro, MacroEvidence, MacroState

    evidence = MacroEvidence("header", "compat.h", 3, "defined under a ROCm-only condition")
    flag = LearnedMacro("XYZ_HIP", "rocm", MacroState(True, 1), MacroState(True, 0), evidence)
    macros = VendorMacros().with_learned({"XYZ_HIP": flag}, {"WARP": "32", "ON_AMD": "XYZ_HIP"})
    source = "#if XYZ_HIP\na\n#endif\n#if ON_AMD\nb\n#endif\n#if WARP == 32\nc\n#endif\n"
    preprocessor = analyse(source, macros)
    assert preprocessor.branch_at(source.index("\na") + 1) == Branch(True, False)
    assert preprocessor.branch_at(source.index("\nb") + 1) == Branch(True, False)
    assert preprocessor.branch_at(source.index("\nc") + 1) == Branch(True, True)


def test_a_hipified_file_keeps_cudacc_unknown_in_a_chain_testing_hipcc():
    """hipify renames `__CUDACC__` to `__HIPCC__`: in a file the build hipifies, ROCm may take the nvcc arm."""
    source = "#if defined(__CUDACC__)\nHAZARD;\n#elif defined(__HIPCC__)\nx;\n#endif\n"
    assert branch_of(source, macros=VendorMacros().with_learned({}, hipified=True)) == Branch(None, None)
    assert branch_of(source, macros=VendorMacros().with_learned({})) == Branch(False, None)


def test_a_learned_switch_decides_past_the_files_own_default():
    """`#ifndef SWITCH` / `#define SWITCH 0` is the default for builds that do not pass the switch; each vendor's
    build passing its own value skips it, so the learned value decides `#if SWITCH == 0`. A define either build
    reaches still wins."""
    from rocmlint.cuda.preprocessor import LearnedMacro, MacroEvidence, MacroState

    evidence = MacroEvidence("build", "CMakeLists.txt", 7, "the ROCm build defines it 1, the other build 0")
    switch = LearnedMacro("XYZ_SWITCH", "rocm", MacroState(True, 1), MacroState(True, 0), evidence)
    macros = VendorMacros().with_learned({"XYZ_SWITCH": switch}, {})
    default = "#ifndef XYZ_SWITCH\n#define XYZ_SWITCH 0\n#endif\n#if XYZ_SWITCH == 0\nnv\n#else\nrocm\n#endif\n"
    preprocessor = analyse(default, macros)
    assert preprocessor.branch_at(default.index("\nnv") + 1) == Branch(False, True)
    assert preprocessor.branch_at(default.index("\nrocm") + 1) == Branch(True, False)
    forced = "#define XYZ_SWITCH 0\n#if XYZ_SWITCH == 0\nnv\n#endif\n"
    assert analyse(forced, macros).branch_at(forced.index("\nnv") + 1) == Branch(True, True)


@pytest.mark.parametrize(
    ("test", "on_rocm"),
    [
        ("defined(__HIP_PLATFORM_AMD__) && HIP_VERSION > 305", True),  # HIP 3.5: every supported ROCm is newer
        ("HIP_VERSION >= 60200000", None),  # ROCm 6.2: depends on the installed release
        ("ROCM_VERSION < 40000", False),
        ("500 <= TORCH_HIP_VERSION", None),  # the floor itself: not below it, so not decided
        ("400 < TORCH_HIP_VERSION", True),
        ("HIP_VERSION_MAJOR * 100 > 300", None),  # arithmetic on a version: unknown
    ],
)
def test_rocm_versions_older_than_any_supported_release_are_decided(test, on_rocm):
    source = f"#if {test}\nx\n#endif\n"
    assert analyse(source, VendorMacros()).branch_at(source.index("\nx") + 1).on_rocm is on_rocm


def test_arms_only_a_windows_toolchain_enters():
    assert holds_only_on_windows("defined(__NVCC__) && defined(_MSC_VER)")
    assert holds_only_on_windows("_WIN32")  # `#ifdef _WIN32`'s condition
    assert holds_only_on_windows("defined(_MSC_VER) && _MSC_VER >= 1920")
    assert not holds_only_on_windows("defined(__NVCC__) || defined(_MSC_VER)")
    assert not holds_only_on_windows("!defined(_WIN32) && defined(__CUDACC__)")
    assert not holds_only_on_windows("defined(__NVCC__)")


@pytest.mark.parametrize(
    "macro", ["__gfx942__", "__GFX9__", "__gfx11_generic__", "__gfx9_4_generic__", "__gfx10_3_generic__"]
)
def test_amd_target_macros_are_never_defined_on_nvidia(macro):
    source = f"#ifdef {macro}\nx\n#endif\n"
    assert analyse(source, VendorMacros()).branch_at(source.index("\nx") + 1).on_nvidia is False


# --- vendor selector macros -------------------------------------------------------------------------------------------
_SELECTOR = """\
#if defined(__HIP_PLATFORM_AMD__)
#define XYZ_HIP_OR_CUDA(h, c) h
#elif defined(__CUDACC__)
#define XYZ_HIP_OR_CUDA(h, c) c
#else
#define XYZ_HIP_OR_CUDA(h, c) ((void)0)
#endif
"""


def _shapes(source: str, name: str) -> list[MacroShape]:
    defines = analyse(source, VendorMacros()).defines[name]
    return [MacroShape(d.directive.branch, len(d.parameters or ()), unused_parameters(d)) for d in defines]


def test_unused_parameters_are_the_positions_a_replacement_never_names():
    defines = analyse(
        "#define A(h, c) h\n#define B(x, ...) f(#x, __VA_ARGS__)\n#define C(h, c) (h) + g(c)\n#define D 1\n",
        VendorMacros(),
    ).defines
    assert unused_parameters(defines["A"][0]) == {1}
    assert unused_parameters(defines["B"][0]) == frozenset()
    assert unused_parameters(defines["C"][0]) == frozenset()
    assert unused_parameters(defines["D"][0]) == frozenset()


def test_a_vendor_selector_drops_on_rocm_the_argument_only_nvidia_uses():
    assert dropped_on_rocm(_shapes(_SELECTOR, "XYZ_HIP_OR_CUDA")) == (2, {1})


@pytest.mark.parametrize(
    "source",
    [
        # Defined the same for both vendors: nothing is vendor-selected.
        "#define XYZ_FIRST(h, c) h\n",
        # The ROCm arm uses both arguments.
        "#ifdef __HIP_PLATFORM_AMD__\n#define XYZ_SEL(h, c) h, c\n#else\n#define XYZ_SEL(h, c) c\n#endif\n",
        # NVIDIA drops the argument too: no selector, whatever it is for.
        "#ifdef __HIP_PLATFORM_AMD__\n#define XYZ_SEL(h, c) h\n#else\n#define XYZ_SEL(h, c) h\n#endif\n",
        # ROCm may take either definition (a project switch), one of which uses the argument.
        "#ifdef XYZ_FAST\n#define XYZ_SEL(h, c) h\n#else\n#define XYZ_SEL(h, c) c\n#endif\n",
    ],
)
def test_no_selector_where_rocm_may_compile_the_argument(source):
    name = "XYZ_FIRST" if "XYZ_FIRST" in source else "XYZ_SEL"
    assert dropped_on_rocm(_shapes(source, name)) is None


def test_invocation_arguments_split_as_the_preprocessor_splits():
    content = b"r = SEL(f(a, b), g(\"x,)\", '('), /* , ) */ h[1, 2]);\nSEL(open, "
    found = list(invocation_arguments(content, "SEL"))
    assert [[content[s:e].strip() for s, e in arguments] for arguments in found] == [
        [b"f(a, b)", b"g(\"x,)\", '(')", b"/* , ) */ h[1, 2]"]
    ]
    # `<...>` is no bracket to the preprocessor: a template argument list splits.
    assert len(next(invocation_arguments(b"SEL(std::pair<int, int>{}, y)", "SEL"))) == 3


# --- other accelerators' arms ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Tested before the ROCm macro: a ROCm build never defines it.
        ("#if defined(XYZ_USE_SYCL)\nHAZARD;\n#elif defined(__HIP_PLATFORM_AMD__)\nx;\n#endif\n", Branch(False, None)),
        ("#ifdef XYZ_USE_MUSA\nHAZARD;\n#elif defined(USE_ROCM)\nx;\n#else\ny;\n#endif\n", Branch(False, None)),
        # Every chain of the file learns it, not only the one testing it before the ROCm macro.
        (
            "#if defined(XYZ_USE_SYCL)\na;\n#elif defined(USE_ROCM)\nb;\n#endif\n#ifdef XYZ_USE_SYCL\nHAZARD;\n#endif\n",
            Branch(False, None),
        ),
        # After the ROCm arm, or with no ROCm arm, nothing says how a ROCm build defines it.
        ("#if defined(USE_ROCM)\nx;\n#elif defined(XYZ_USE_SYCL)\nHAZARD;\n#endif\n", Branch(False, None)),
        ("#if defined(XYZ_USE_SYCL)\nHAZARD;\n#else\nx;\n#endif\n", Branch(None, None)),
        # A CPU feature switch holds in a ROCm build too.
        ("#if defined(XYZ_USE_CPU_AVX2)\nHAZARD;\n#elif defined(USE_ROCM)\nx;\n#endif\n", Branch(None, None)),
    ],
)
def test_another_accelerators_macro_tested_before_the_rocm_one_is_undefined_on_rocm(source, expected):
    assert branch_of(source) == expected


def test_call_arguments_takes_one_whole_call_only() -> None:
    assert call_arguments(" __shfl_xor_sync(uint32_t(-1), var, lane) ") == (
        "__shfl_xor_sync",
        ["uint32_t(-1)", "var", "lane"],
    )
    assert call_arguments('f(a, "x,y", /* , */ b)') == ("f", ["a", '"x,y"', "/* , */ b"])
    assert call_arguments("f(a) + g(b)") is None
    assert call_arguments("f(a,)") is None
    assert call_arguments("x + f(a)") is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # The switch's only `#define` is commented out: no build takes the arm.
        ("//#define TEXTURE\n#if defined(TEXTURE) && __CUDA_ARCH__ >= 300\nHAZARD;\n#endif\n", Branch(False, False)),
        ("/* #define TEXTURE 1 */\n#ifndef TEXTURE\nHAZARD;\n#endif\n", Branch(True, True)),
        # A real `#define` in the file, or a commented-out line that is no `#define` of it: unknown as before.
        ("//#define TEXTURE\n#define TEXTURE\n#ifdef TEXTURE\nHAZARD;\n#endif\n", Branch(True, True)),
        ("// needs TEXTURE defined\n#ifdef TEXTURE\nHAZARD;\n#endif\n", Branch(None, None)),
    ],
)
def test_a_switch_turned_off_by_commenting_its_define_is_undefined(source, expected):
    assert branch_of(source) == expected


def test_a_commented_out_switch_the_project_defines_elsewhere_stays_unknown():
    source = "//#define TEXTURE\n#ifdef TEXTURE\nHAZARD;\n#endif\n"
    assert branch_of(source, macros=VendorMacros().with_learned({}, {"TEXTURE": "1"})) == Branch(None, None)
    assert branch_of(source, macros=VendorMacros().with_learned({}, rocm_build_values={"TEXTURE": "1"})) == Branch(
        True, None
    )
    built = VendorMacros().with_learned({}, built_for_any_vendor=frozenset({"TEXTURE"}))
    assert branch_of(source, macros=built) == Branch(None, None)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("//#define A\n", {"A"}),  # on the first line
        ("int x;\r\n  /* #  define B 1 */\r\n", {"B"}),  # indented, CRLF, spaces after '#'
        ("x = 1; // #define C\n", set()),  # not alone on its line
        ("// undefine D\n// #define E\n// #define E\n", {"E"}),  # the word elsewhere, the same line twice
        ("#define F 1\n// we define G\n", set()),
    ],
)
def test_commented_defines_are_the_lines_the_pattern_matches_from_their_start(source, expected):
    assert disabled_switches(source, []) == frozenset(expected)
