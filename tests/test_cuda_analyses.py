"""Front-end questions the C++ rules used to answer themselves: word anchors and quoted macro values
(CudaContext), mask macros and the fix of a `*_sync` call (rocmlint/cuda/masks.py), device-property fields and
device attributes (rocmlint/cuda/device_query.py), the `#if` chains around code (rocmlint/cuda/conditions.py)
and inline PTX (rocmlint/cuda/hip_gaps.py). Syntax and warp questions: test_cuda_syntax.py, test_cuda_warp.py."""

from __future__ import annotations

import re

import pytest
from test_cuda_values import context, node_at

from rocmlint.cuda import device_query, masks
from rocmlint.cuda.conditions import (
    Chains,
    aliases_only_hip_mapped_names,
    arch_arm_rocm_needs,
    arm_outcomes_agree,
    chains_around,
    compares_cuda_arch_for_rocm,
    hides_plain_cpp_from_nvcc,
    holds_only_its_definition,
    holds_only_pragmas,
    is_version_test,
    unreachable_chain,
    works_around_nvcc,
)
from rocmlint.cuda.frontend import ByteSpan, CudaContext, Define, Node
from rocmlint.cuda.hip_gaps import asm_template, macro_asm_template, only_lacking_on_hip, ptx_in, rocm_macro_of


def _defines(ctx: CudaContext) -> list[Define]:
    return sorted(
        (d for defines in ctx.preprocessor.defines.values() for d in defines), key=lambda d: d.directive.start_byte
    )


# --- the context ---------------------------------------------------------------------------------------------
def test_word_offsets_skip_names_never_spelled_as_a_word() -> None:
    ctx = context("void f() { __shfl_sync(m, v, 0); g(__syncwarp_all); }\n")
    assert ctx.word_offsets("__shfl_sync", "__syncwarp") == (ctx.content.index(b"__shfl_sync"),)
    assert ctx.word_offsets("__ballot_sync") == ()


def test_quoted_shows_what_a_macro_stands_for() -> None:
    ctx = context("#define FULL_MASK 0xffffffff\nvoid f() { g(FULL_MASK, 0xff); }\n")
    assert ctx.quoted(node_at(ctx, "FULL_MASK", "identifier", 1)) == "`FULL_MASK` (= `0xffffffff`)"
    assert ctx.quoted(node_at(ctx, "0xff", "number_literal", 1)) == "`0xff`"


def test_arch_comparison_macros_rocm_reads() -> None:
    """`#define HAS_BF16 (__CUDA_ARCH__ >= 800)` is a hidden architecture test where ROCm reads it; not in an NVIDIA
    arm, not when its replacement decides for ROCm, not a function-like macro, and not after the project defines an
    architecture number for ROCm."""
    ctx = context(
        "#define HAS_BF16 (__CUDA_ARCH__ >= 800)\n#define ARCH __CUDA_ARCH__\n#define OLD(a) (__CUDA_ARCH__ < a)\n"
        "#define FP8 (defined(USE_ROCM) || __CUDA_ARCH__ >= 890)\n"
        "#ifndef USE_ROCM\n#define MMA (__CUDA_ARCH__ >= 750)\n#endif\n"
    )
    assert [d.name for d in _defines(ctx) if compares_cuda_arch_for_rocm(d, ctx)] == ["HAS_BF16"]
    recent = context(
        "#define ATOMICS (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700)\n#define SM_AMPERE 800\n"
        "#define BF16 (__CUDA_ARCH__ >= SM_AMPERE)\n#define LEGACY (__CUDA_ARCH__ < 700)\n"
    )
    assert [d.name for d in _defines(recent) if compares_cuda_arch_for_rocm(d, recent)] == ["BF16", "LEGACY"]
    own = context("#ifdef __HIPCC__\n#define __CUDA_ARCH__ 800\n#endif\n#define HAS_BF16 (__CUDA_ARCH__ >= 800)\n")
    assert not any(compares_cuda_arch_for_rocm(d, own) for d in _defines(own))


# --- masks ---------------------------------------------------------------------------------------------------
def test_mask_macro_used_elsewhere() -> None:
    header = context("#define FINAL_MASK 0xffffffff\n#define LOW_MASK 0xffffffff\n#define HALF_MASK 0xffff\n")
    assert [d.name for d in _defines(header) if masks.mask_macro_used_elsewhere(d, header)] == ["FINAL_MASK"]
    used = context("#define FINAL_MASK 0xffffffff\n__device__ void f() { __syncwarp(FINAL_MASK); }\n")
    assert not any(masks.mask_macro_used_elsewhere(d, used) for d in _defines(used))
    # Used here only as the mask a ROCm definition of the wrapper drops: nothing of it reaches ROCm.
    wrapped = (
        "#ifdef USE_ROCM\n#define SHFL_DOWN_SYNC(mask, var, delta) __shfl_down(var, delta)\n"
        "#else\n#define SHFL_DOWN_SYNC __shfl_down_sync\n#endif\n#define FULL_MASK 0xffffffff\n"
        "__device__ float f(float v) { return SHFL_DOWN_SYNC(FULL_MASK, v, 1); }\n"
    )
    assert not any(masks.mask_macro_used_elsewhere(d, context(wrapped)) for d in _defines(context(wrapped)))
    # A use ROCm compiles (an unported wrapper) keeps it reported, as do uses the ROCm arm keeps.
    unported = wrapped.replace("__shfl_down(var, delta)", "__shfl_down_sync(mask, var, delta)")
    assert [d.name for d in _defines(context(unported)) if masks.mask_macro_used_elsewhere(d, context(unported))] == [
        "FULL_MASK"
    ]


def test_buffers_of_32_bits_the_mask_is_stored_into() -> None:
    """A struct member decides the type of a local pointer initialised from it; a parameter buffer counts only when
    the stored variable holds 64 bits (a 32-bit one is reported itself); a 64-bit buffer never."""
    ctx = context(
        "struct P {\n  unsigned int *bits;\n  unsigned long long *wide;\n};\n"
        "__global__ void k(P p, const float* x, unsigned* out, unsigned* low) {\n"
        "  unsigned int *b = p.bits + 1;\n  unsigned long long *w = p.wide;\n"
        "  auto m = __ballot(x[0] > 0);\n  unsigned n = __ballot(x[1] > 0);\n"
        "  b[0] = m;\n  w[0] = m;\n  *out = m;\n  low[0] = n;\n}\n"
    )
    first = node_at(ctx, "__ballot(x[0] > 0)", "call_expression")
    found = [(ctx.text(origin), ctx.text(store)) for origin, store in masks.buffers_of_32_bits(first, ctx)]
    assert found == [("unsigned int *bits;", "b[0] = m"), ("unsigned* out", "*out = m")]
    second = node_at(ctx, "__ballot(x[1] > 0)", "call_expression")
    assert masks.buffers_of_32_bits(second, ctx) == []


def test_sync_fix_only_for_full_warp_masks() -> None:
    ctx = context(
        "__device__ float f(float v, unsigned m) {\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n  return v;\n}\n"
    )
    fix = masks.sync_fix(node_at(ctx, "__shfl_xor_sync", "call_expression"), ctx)
    assert fix is not None and fix.message == "call `__shfl_xor` without the mask on ROCm"
    assert "v += __shfl_xor(v, 1);" in "".join(edit.content for edit in fix.edits)
    partial = context("__device__ float f(float v, unsigned m) {\n  return __shfl_xor_sync(m & 3, v, 1);\n}\n")
    assert masks.sync_fix(node_at(partial, "__shfl_xor_sync", "call_expression"), partial) is None


# --- device queries ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("condition", "same"),
    [
        ("prop.major >= 3", True),
        ("prop.major < 7", True),
        ("prop.major >= 6 || (prop.major == 5 && prop.minor >= 3)", True),
        ("prop.major > 7 || (prop.major == 7 && prop.minor >= 5)", True),
        ("prop.major >= 8", False),
        ("prop.major == 9", False),
        ("prop.major * 10 + prop.minor >= 75", True),
        ("prop.major * 10 + prop.minor >= 80", False),
        ("prop.major >= kMinimum", False),  # a value this file does not know
    ],
)
def test_same_on_current_gpus(condition: str, same: bool) -> None:
    ctx = context(f"bool f(const cudaDeviceProp& prop) {{ return {condition}; }}\n")
    returned = node_at(ctx, "return", "return_statement").named_children[0]

    def part(node: Node) -> str | None:
        field = node.child_by_field_name("field") if node.type == "field_expression" else None
        return None if field is None else ctx.text(field)

    assert device_query.same_on_current_gpus(returned, ctx, part) is same


def test_property_fields_of_device_properties_only() -> None:
    ctx = context(
        "struct Version { int major; };\n"
        "void f(const cudaDeviceProp* p, Version v, Params params) {\n"
        "  auto dprops = at::cuda::getCurrentDeviceProperties();\n"
        "  g(p->major, v.major, dprops->minor, params.props->major, at::cuda::getCurrentDeviceProperties()->major);\n"
        "}\n"
    )
    fields = [n for n in ctx.descendants(ctx.tree.root_node, "field_expression") if ctx.text(n).endswith("major")]
    fields += [node_at(ctx, "dprops->minor", "field_expression")]
    found = {ctx.text(n): device_query.is_property_field(n, ctx, ("major", "minor")) for n in fields}
    assert found == {
        "p->major": True,
        "v.major": False,
        "params.props->major": True,
        "at::cuda::getCurrentDeviceProperties()->major": True,
        "dprops->minor": True,
    }


def test_holds_attribute_after_the_getter_in_the_same_function() -> None:
    ctx = context(
        "int f(int dev) {\n"
        "  int major = 0, count = 0;\n"
        "  g(major);\n"
        "  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);\n"
        "  cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev);\n"
        "  return major + count;\n"
        "}\n"
        "int h(int major) { return major; }\n"
    )
    capability = re.compile(r"ComputeCapability")

    def holds(text: str, occurrence: int) -> bool:
        return device_query.holds_attribute(node_at(ctx, text, "identifier", occurrence), ctx, capability)

    assert [holds("major", i) for i in (1, 3, 4, 5)] == [False, True, False, False]
    assert not holds("count", 2)


# --- #if chains ----------------------------------------------------------------------------------------------
def test_chains_around_with_and_without_later_arms() -> None:
    ctx = context("#if defined(A)\nint a;\n#elif defined(__gfx942__)\nint b;\n#endif\nint c;\n")
    at_a = node_at(ctx, "a", "identifier").start_byte
    assert chains_around(ctx, at_a, later_arms=True) == [["defined(A)", "defined(__gfx942__)"]]
    assert chains_around(ctx, at_a, later_arms=False) == [["defined(A)"]]
    assert chains_around(ctx, node_at(ctx, "c", "identifier").start_byte, later_arms=True) == []


def _agree(code: str) -> bool:
    ctx = context(code)
    opener = ctx.preprocessor.directives[0]
    return arm_outcomes_agree(Chains(ctx).arms_of(opener), ctx)


@pytest.mark.parametrize(
    ("code", "agree"),
    [
        # nvcc's host pass and sm_80/sm_90 take the arm, so does ROCm.
        ("#if __CUDA_ARCH__ >= 800 || !defined(__CUDA_ARCH__)\nint bf16;\n#endif\n", True),
        ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\nint trap;\n#else\nint real;\n#endif\n", True),
        ("#if defined(_MSC_VER) && __CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ == 2\nint war;\n#endif\n", True),
        # The newest toolkit takes ROCm's arm: the one an older nvcc takes instead is a workaround of its own.
        (
            "#if !defined(__CUDACC_VER_MAJOR__) || __CUDACC_VER_MAJOR__ > 12"
            " || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ > 3)\nint x;\n#endif\n",
            True,
        ),
        ("#if defined(CUDA_VERSION) && CUDA_VERSION < 12000\nint old_nvcc_bug;\n#else\nint real;\n#endif\n", True),
        # Device-pass detection, a legacy arm, a feature of recent toolkits: ROCm differs.
        ("#ifdef __CUDA_ARCH__\nint device;\n#else\nint host;\n#endif\n", False),
        ("#if CUDART_VERSION < 11000\nint legacy;\n#endif\n", False),
        ("#if CUDA_VERSION >= 12000\nint feature;\n#endif\n", False),
        # A project macro may make ROCm and sm_80 differ.
        ("#if !defined(OPTION) || __CUDA_ARCH__ < 700\nint x;\n#endif\n", False),
        # NVIDIA's arm is all 32-bit-mask `_sync`: ROCm's `#else` is the only one it can build.
        (
            "#if CUDA_VERSION >= 9000\nv = __shfl_sync(0xffffffff, v, 0);\n#else\nv = __shfl(v, 0);\n#endif\n",
            True,
        ),
        # ... but not when ROCm has no arm of its own, or the chain tells nvcc's passes apart.
        ("#if CUDA_VERSION >= 9000\nv = __shfl_sync(0xffffffff, v, 0);\n#endif\n", False),
        ("#ifdef __CUDA_ARCH__\n#define TRAP() __brkpt()\n#else\n#define TRAP() abort()\n#endif\n", False),
        # The arm ROCm takes holds what HIP lacks.
        ("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700\n__nanosleep(ns);\n#endif\n", False),
    ],
)
def test_arm_outcomes_agree(code: str, agree: bool) -> None:
    assert _agree(code) is agree


@pytest.mark.parametrize(
    ("arm", "only_pragmas"),
    [
        ('#pragma GCC optimize("O3")\n', True),
        ('_Pragma("float_control(precise, off, push)")\n', True),
        ("IMPRECISE_BEGIN\n", True),
        ("", True),
        ("#define __device__\n", False),
        ("inline int f() { return 0; }\n", False),
    ],
)
def test_holds_only_pragmas(arm: str, only_pragmas: bool) -> None:
    ctx = context(f"#if !defined(__NVCC__)\n{arm}#endif\n")
    assert holds_only_pragmas(ctx.preprocessor.directives[0], ctx) is only_pragmas


@pytest.mark.parametrize(
    ("code", "hidden"),
    [
        ("#ifndef __CUDACC__\n#include <filesystem>\nnamespace fs = std::filesystem;\n#endif\n", True),
        (
            "#if !defined(__CUDACC__)\n#if __GNUC__ < 9\nbool f();\n#else\nbool f() { return g(); }\n#endif\n#endif\n",
            True,
        ),
        ("#ifndef __CUDACC__\n#include <filesystem>\n#else\n#include <cuda_runtime.h>\n#endif\n", False),  # an arm lost
        ("#ifdef __CUDACC__\n#include <cuda_runtime.h>\n#endif\n", False),  # the arm ROCm skips
        ("#ifndef __CUDACC__\n#define __host__\n#endif\n", False),  # a stand-in for CUDA
        ("#ifndef __CUDACC__\nstruct __align__(8) V { int x; };\n#endif\n", False),  # a reserved word
        ("#define STUBS int f();\n#ifndef __CUDACC__\nSTUBS\n#endif\n", False),  # a macro's expansion
        ("#ifndef __CUDACC__\nint n = __popc(x);\n#endif\n", False),  # a CUDA spelling
    ],
)
def test_hides_plain_cpp_from_nvcc(code: str, hidden: bool) -> None:
    ctx = context(code)
    opener = next(d for d in ctx.preprocessor.directives if d.kind in ("if", "ifdef", "ifndef"))
    assert hides_plain_cpp_from_nvcc(Chains(ctx).arms_of(opener), ctx) is hidden


@pytest.mark.parametrize(
    ("code", "workaround"),
    [
        # nvcc handed the other arm's code with plain C++ left out or spelled out.
        ("#ifndef __NVCC__\n[[no_unique_address]] M m;\n#else\nM m;\n#endif\n", True),
        ("#if defined(X) && !defined(__NVCC__)\n#define DEP [[deprecated]]\n#else\n#define DEP\n#endif\n", True),
        ("#if defined(__NVCC__)\nreturn static_cast<long>(r) > 0;\n#else\nreturn r > 0;\n#endif\n", True),
        # nvcc's version recorded in a macro.
        ("#ifdef __NVCC__\n#define XYZ_NVCC __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__\n#endif\n", True),
        (
            "#if defined(__NVCC__)\n// nvcc: its version\n#define XYZ_NVCC \\\n  __CUDACC_VER_MAJOR__ * 100\n#endif\n",
            True,
        ),
        # The vendor split: what only one arm has is CUDA's, spelled out or through a macro.
        ("#ifdef __NVCC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n", False),
        ("#define Q __device__\n#ifdef __NVCC__\n#define HD Q inline\n#else\n#define HD inline\n#endif\n", False),
        ("#ifdef __NVCC__\nint n = __popc(x);\n#else\nint n = popcount(x);\n#endif\n", False),
        # `__CUDACC__` is the CUDA language, not the compiler's quirks.
        ("#ifndef __CUDACC__\n[[no_unique_address]] M m;\n#else\nM m;\n#endif\n", False),
        # An empty arm, a macro that is no version, code beside the version.
        ("#ifdef __NVCC__\n#else\nM m;\n#endif\n", False),
        ("#ifdef __NVCC__\n#define XYZ_HAS_CUDA __CUDACC__\n#endif\n", False),
        ("#ifdef __NVCC__\n#define XYZ_NVCC __CUDACC_VER_MAJOR__\nint f();\n#endif\n", False),
    ],
)
def test_works_around_nvcc(code: str, workaround: bool) -> None:
    ctx = context(code)
    opener = next(d for d in ctx.preprocessor.directives if d.kind in ("if", "ifdef", "ifndef") and "__" in d.text)
    assert works_around_nvcc(Chains(ctx).arms_of(opener), ctx) is workaround


def test_a_lone_macro_defined_as_code_is_no_pragma() -> None:
    ctx = context("#define STUBS inline int f() { return 0; }\n#ifndef __NVCC__\nSTUBS\n#endif\n")
    assert not holds_only_pragmas(ctx.preprocessor.directives[1], ctx)


@pytest.mark.parametrize(
    ("arm", "only_its_definition"),
    [
        ("#define __HIP_PLATFORM_HCC__\n", True),
        ("#define __HIP_PLATFORM_HCC__ 1\n", True),
        ("#define __HIP_PLATFORM_HCC__\n#define OTHER 1\n", False),
        ("#define OTHER 1\n", False),
        ("int x = 0;\n", False),
        ("", False),
    ],
)
def test_holds_only_its_definition(arm: str, only_its_definition: bool) -> None:
    ctx = context(f"#ifndef __HIP_PLATFORM_HCC__\n{arm}#endif\n")
    directive = ctx.preprocessor.directives[0]
    assert holds_only_its_definition(directive, "__HIP_PLATFORM_HCC__", ctx) is only_its_definition


@pytest.mark.parametrize(
    ("arm", "aliases_only"),
    [
        ("  #define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1  // renamed\n", True),
        # A routine rebuilt on a newer API, or dropped: ROCm may lack the old one too (HIPIFY keeps removed names).
        ("#define cusparseCreateCsrsm2Info(info)\n", False),
        ("#define cusparseZcsr2csc(h, m) \\\n  { cusparseCsr2cscEx2(h, m); }\n", False),
        ("#define CUSPARSE_CSRMV_ALG1\n", False),
        # A name of the project's own: code reading it may need it on ROCm too.
        ("#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1\n#define MY_ALG 1\n", False),
        # Code besides the defines, or a nested condition.
        ("#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1\nint alg = 1;\n", False),
        ("#ifdef X\n#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1\n#endif\n", False),
        ("", False),
    ],
)
def test_aliases_only_hip_mapped_names(arm: str, aliases_only: bool) -> None:
    ctx = context(f"#if CUDA_VERSION >= 12000\n{arm}#endif\n")
    assert aliases_only_hip_mapped_names(ctx.preprocessor.directives[0], ctx) is aliases_only


_SOLVE_INFO = "void setup(csrsm2Info_t* i) { cusparseCreateSolveAnalysisInfo(i); }\n"


@pytest.mark.parametrize(
    ("definitions", "remapped"),
    [
        (
            "#if CUDA_VERSION >= 11000 || defined(USE_ROCM)\n#define cusparseCreateSolveAnalysisInfo(i) "
            "cusparseCreateCsrsm2Info(i)\n#else\n#define cusparseCreateSolveAnalysisInfo(i) x(i)\n#endif\n",
            True,
        ),
        # ROCm may not see it, sees it only after the use, or its replacement names an API HIP lacks.
        (
            "#if CUDA_VERSION >= 11000\n#define cusparseCreateSolveAnalysisInfo(i) cusparseCreateCsrsm2Info(i)\n#endif\n",
            False,
        ),
        ("", False),
        ("#define cusparseCreateSolveAnalysisInfo(i) cusparseCreateSolveAnalysisInfo(i)\n", False),
    ],
)
def test_rocm_macro_of(definitions: str, remapped: bool) -> None:
    ctx = context(
        definitions + _SOLVE_INFO + "#define cusparseCreateSolveAnalysisInfo(i) cusparseCreateCsrsm2Info(i)\n"
    )
    use = node_at(ctx, "{ cusparseCreateSolveAnalysisInfo(i); }", "compound_statement")
    assert rocm_macro_of("cusparseCreateSolveAnalysisInfo", use, ctx) is remapped


# --- what HIP lacks ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "only_lacking"),
    [
        ("return __shfl_xor_sync(0xffffffff, v, 1);", True),
        ('asm("mov.u32 %0, %%laneid;" : "=r"(id));\n__nanosleep(10);', True),
        ("#define SHFL(v, l) __shfl_sync(0xffffffff, v, l)", True),
        ("__nanosleep(10);\ncount++;", False),
        ("return __shfl_xor(v, 1);", False),
        ("", False),
    ],
)
def test_only_lacking_on_hip(code: str, only_lacking: bool) -> None:
    ctx = context(code)
    assert only_lacking_on_hip(ctx, ByteSpan(0, len(ctx.content))) is only_lacking


def test_asm_template_expands_string_macros() -> None:
    ctx = context(
        '#define LANE_ASM "mov.u32 %0, %%laneid;"\n__device__ unsigned f() { unsigned r; asm(LANE_ASM : "=r"(r)); return r; }\n'
    )
    asm = node_at(ctx, "asm(", "gnu_asm_expression")
    template = asm_template(ctx, ctx.text(asm), asm)
    assert "%%laneid" in template and ptx_in(template) == ("%%laneid", "laneid")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param('asm volatile("bar.sync 0;")', "bar.sync 0;", id="asm-volatile"),
        # The literals written, then the string macros they name (enough to recognise the instruction).
        pytest.param('__asm__ __volatile__(PREFIX ".u32 %0;" : "=r"(r))', ".u32 %0; =r ld.global", id="string-macro"),
        pytest.param("do { x = 1; } while (0)", None, id="no-asm"),
        pytest.param("asm_helper(x)", None, id="asm-word-only"),
    ],
)
def test_macro_asm_template(body: str, expected: str | None) -> None:
    """The asm template of a macro body, completed by the file's string macros (the body expands later)."""
    ctx = context(f'#define PREFIX "ld.global"\n#define BODY(r) {body}\nint anchor;\n')
    define = ctx.preprocessor.defines["BODY"][0]
    assert macro_asm_template(ctx, define) == expected


@pytest.mark.parametrize(
    ("condition", "version"),
    [
        ("__CUDA_ARCH__ >= 800", True),
        ("800 <= __CUDA_ARCH__", True),
        ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900", True),
        ("!defined(__CUDA_ARCH__) || (__CUDA_ARCH__ < 700)", True),
        ("defined(__CUDA_ARCH__) && CUDA_VERSION >= 11000", True),
        ("defined(__CUDA_ARCH__)", False),
        ("__CUDA_ARCH__", False),
        ("!defined(__CUDA_ARCH__) && defined(__CUDACC__)", False),
    ],
)
def test_version_tests_are_toolkit_versions_and_architecture_comparisons(condition: str, version: bool) -> None:
    """ROC207 reports these; ROC213 only conditions whose CUDA test is device-pass detection."""
    assert is_version_test(condition) is version


def test_copies_into_32_bits_follows_the_stored_mask_one_step() -> None:
    # The `mask` of the inner block is another variable: its copy is no copy of the ballot.
    ctx = context(
        "__device__ void k(const float* x, int lane) {\n"
        "  unsigned int kept; uint64_t wide; unsigned other;\n"
        "  auto mask = __ballot(x[lane] < 0.f);\n"
        "  kept = mask; wide = mask; other = (unsigned)mask;\n"
        "  unsigned long long again;\n"
        "  again = __ballot(x[lane] > 0.f);\n"
        "  other = again;\n"
        "  { unsigned int mask = 0u; kept = mask; }\n"
        "}\n"
    )
    first = node_at(ctx, "__ballot(x[lane] < 0.f)", "call_expression")
    assert [(ctx.text(d), ctx.text(c)) for d, c in masks.copies_into_32_bits(first, ctx)] == [
        ("unsigned int kept;", "kept = mask")
    ]
    second = node_at(ctx, "__ballot(x[lane] > 0.f)", "call_expression")
    assert [ctx.text(c) for _, c in masks.copies_into_32_bits(second, ctx)] == ["other = again"]


def test_an_architecture_arm_whose_else_only_traps_is_the_arm_rocm_needs():
    """`conditions.arch_arm_rocm_needs`: the `__CUDA_ARCH__` arm holding the offset, when its `#else` only traps
    (llama.cpp's dot products); not when the `#else` computes, nor when the chain tests a ROCm macro."""

    def needed(fallback: str, condition: str = "__CUDA_ARCH__ >= 610") -> bool:
        ctx = context(
            f"__device__ int f(int a) {{\n#if {condition}\n  return __dp4a(a, a, 0);\n#else\n{fallback}\n#endif\n}}\n"
        )
        return arch_arm_rocm_needs(ctx, ctx.content.index(b"__dp4a")) is not None

    assert needed("  assert(false);\n  return 0;  // only to satisfy the compiler")
    assert needed("  (void) a;\n  __trap();")
    assert not needed("  return a * a;")
    assert not needed("  assert(false);\n  return 0;", "__CUDA_ARCH__ >= 610 && !defined(USE_ROCM)")


_AFTER_RETURNS = """
template <int N, class T> T ipow(T v) {
  if constexpr (N == 0) {
    return 1;
  } else if constexpr (N % 2 == 0) {
#if THRUST_MINOR_VERSION < 16
    return ipow<N / 2>(v);
#else
    return ipow<N / 2>(v) * v;
#endif
  } else {
    return v * ipow<N - 1>(v);  // odd
  }
  // an old nvcc warns of a missing return
#if __CUDACC_VER_MAJOR__ < 11
  ARM
#endif
}
"""


def _unreachable(code: str) -> bool:
    ctx = context(code)
    opener = next(d for d in ctx.preprocessor.directives if "__CUDACC_VER_MAJOR__" in d.condition)
    return unreachable_chain(Chains(ctx).arms_of(opener), ctx)


def test_a_chain_after_an_if_whose_every_arm_returns_is_unreachable() -> None:
    assert _unreachable(_AFTER_RETURNS.replace("ARM", "return T{};"))
    assert _unreachable(_AFTER_RETURNS.replace("ARM", "throw 1;"))
    # An arm holding what HIP lacks still fails to compile on ROCm.
    assert not _unreachable(_AFTER_RETURNS.replace("ARM", "__nanosleep(10); return T{};"))
    returning = _AFTER_RETURNS.replace("ARM", "return T{};")
    # No `else`: control may reach the chain.
    assert not _unreachable(returning.replace("} else {\n    return v * ipow<N - 1>(v);  // odd\n  }", "}"))
    # An arm that may fall through: an inner `#if` without `#else`, a last statement that is no return.
    assert not _unreachable(returning.replace("#else\n    return ipow<N / 2>(v) * v;\n", ""))
    assert not _unreachable(returning.replace("return v * ipow<N - 1>(v);", "v = v * ipow<N - 1>(v);"))
