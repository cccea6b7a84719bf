"""Fixes that widen an `#if` chain's tests (ROC213, ROC214, ROC215) route ROCm into arms it skips today: they
must not send it into code HIP cannot build (rocmlint/cuda/hip_gaps.py), and still fix chains whose arms are
clean."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc203_inline_ptx import InlinePtx
from rocmlint.rules.roc207_cuda_version_gate import CudaVersionGate
from rocmlint.rules.roc213_cuda_arch_macro import CudaArchMacro
from rocmlint.rules.roc214_cudacc_macro import CudaccMacro
from rocmlint.rules.roc215_hip_platform_hcc import HipPlatformHcc

from rocmlint.cuda.conditions import PASS_AND_COMPILER_ALTERNATIVES, condition_tests, with_alternatives
from rocmlint.cuda.frontend import ByteSpan, CudaContext, CudaOptions
from rocmlint.cuda.hip_gaps import lacking_on_hip, without_comments
from rocmlint.cuda.preprocessor import VendorMacros, analyse
from rocmlint.rule import Rule
from rocmlint.source import SourceFile
from rocmlint.testing import run_example


def lacking_in(code: str) -> str | None:
    """What HIP lacks in the whole of `code`, a file of its own."""
    source = SourceFile.from_bytes("k.cu", code.encode("utf-8"), "cuda")
    ctx = CudaContext(source, analyse(code, VendorMacros()), CudaOptions())
    return lacking_on_hip(ctx, ByteSpan(0, len(ctx.content)))


# The case: the device arm asserts with a PTX breakpoint intrinsic HIP does not declare.
_BRKPT = (
    "#include <cstdio>\n"
    "#ifdef __CUDA_ARCH__\n"
    "#define RUNTIME_ASSERT(x) __brkpt()\n"
    "#else\n"
    '#define RUNTIME_ASSERT(x) fprintf(stderr, "assert: %s\\n", #x)\n'
    "#endif\n"
)
# `#ifndef`: the device pass is routed into the `#else` arm, which holds inline PTX.
_PTX_IN_ELSE = (
    "__host__ __device__ inline unsigned lane() {\n"
    "#ifndef __CUDA_ARCH__\n"
    "  return 0;\n"
    "#else\n"
    "  unsigned id;\n"
    '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
    "  return id;\n"
    "#endif\n"
    "}\n"
)
# The device pass would be routed into a 32-bit-mask `_sync` reduction, which HIP's 64-bit-mask templates reject.
_SYNC_MASK_UNDER_ARCH = (
    "__device__ __host__ inline float warp_sum(float v) {\n"
    "#if defined(__CUDA_ARCH__)\n"
    "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);\n"
    "#endif\n"
    "  return v;\n"
    "}\n"
)
_WMMA_UNDER_CUDACC = "#ifdef __CUDACC__\n#include <mma.h>\nusing namespace nvcuda;\n#endif\n"
_PIPELINE_UNDER_HCC = "#if defined(__HIP_PLATFORM_HCC__)\n#include <cuda_pipeline.h>\n#endif\n"

CASES = [
    pytest.param(CudaArchMacro, _BRKPT, id="ROC213-brkpt"),
    pytest.param(CudaArchMacro, _PTX_IN_ELSE, id="ROC213-ptx-in-else"),
    pytest.param(CudaArchMacro, _SYNC_MASK_UNDER_ARCH, id="ROC213-32-bit-sync-mask"),
    pytest.param(CudaccMacro, _WMMA_UNDER_CUDACC, id="ROC214-wmma"),
    pytest.param(HipPlatformHcc, _PIPELINE_UNDER_HCC, id="ROC215-pipeline"),
]


@pytest.mark.parametrize(("rule", "code"), CASES)
def test_no_fix_routes_rocm_into_code_hip_lacks(rule: type[Rule], code: str) -> None:
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1  # still reported: only the fix goes
    assert diagnostics[0].fix is None


# The same chains with portable arms keep their safe fix.
CLEAN = [
    pytest.param(CudaArchMacro, _BRKPT.replace("__brkpt()", "__builtin_trap()"), "__HIP_DEVICE_COMPILE__", id="ROC213"),
    pytest.param(
        CudaArchMacro,
        _PTX_IN_ELSE.replace('asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));', "id = threadIdx.x % warpSize;"),
        "__HIP_DEVICE_COMPILE__",
        id="ROC213-ifndef",
    ),
    pytest.param(
        CudaccMacro, "#ifdef __CUDACC__\n#define HOST_DEVICE __host__ __device__\n#endif\n", "__HIPCC__", id="ROC214"
    ),
    pytest.param(
        HipPlatformHcc,
        "#if defined(__HIP_PLATFORM_HCC__)\n#include <hip/hip_runtime.h>\n#endif\n",
        "__HIP_PLATFORM_AMD__",
        id="ROC215",
    ),
]


@pytest.mark.parametrize(("rule", "code", "added"), CLEAN)
def test_clean_arms_keep_their_safe_fix(rule: type[Rule], code: str, added: str) -> None:
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1
    fix = diagnostics[0].fix
    assert fix is not None and fix.applicability.name == "SAFE"
    assert any(added in edit.content for edit in fix.edits)


def test_an_arm_rocm_already_compiles_does_not_block_the_fix() -> None:
    # The `#else` arm is what ROCm compiles today: the fix does not change that it gets `__brkpt`.
    code = "#ifdef __CUDA_ARCH__\n#define ON_DEVICE 1\n#else\n#define TRAP() __brkpt()\n#endif\n"
    diagnostics = run_example(CudaArchMacro, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("#define RUNTIME_ASSERT(x) __brkpt()", "__brkpt"),
        ("wmma::fragment<wmma::matrix_a, 16, 16, 16, half> a;", "wmma"),
        ("cg :: memcpy_async(group, dst, src, n);", "cg::memcpy_async"),
        ("#include <cuda/barrier>", "cuda/barrier"),
        ('asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));', "%%laneid"),
        ("v += __shfl_xor_sync(0xffffffff, v, 16);", "__shfl_xor_sync(0xffffffff, ...)"),
        ("#include <cuda_fp8.h>", "cuda_fp8.h"),
        ("__nv_fp8_e4m3 q = __nv_fp8_e4m3(x);", "__nv_fp8_e4m3"),
        ("#include <cutlass/gemm/device/gemm.h>", "cutlass/gemm/device/gemm.h"),
        ("__nanosleep(100);", "__nanosleep"),
    ],
)
def test_lacking_on_hip_finds(code: str, found: str) -> None:
    lacking = lacking_in(code)
    assert lacking is not None and f"`{found}`" in lacking


@pytest.mark.parametrize(
    "code",
    [
        "return warpSize;",
        "int wmma = 3;",  # a variable, not the namespace
        'asm volatile("v_add_f32 %0, %1, %2" : "=v"(r) : "v"(a), "v"(b));',  # GCN assembly
        "x = 1;  // __brkpt() would stop here",
        "#include <hip/hip_runtime.h>",
        "v += __shfl_xor_sync(__activemask(), v, 16);",  # a mask whose width HIP accepts
    ],
)
def test_lacking_on_hip_ignores(code: str) -> None:
    assert lacking_in(code) is None


def test_an_arm_the_fix_routes_rocm_out_of_does_not_block_it() -> None:
    # ROCm 6 takes the `#else` today; the fix sends it into the `__HIP_PLATFORM_HCC__` arm, away from the mask.
    code = (
        "__device__ float xor_sum(float v, int m) {\n"
        "#ifdef __HIP_PLATFORM_HCC__\n"
        "  return v + __shfl_xor(v, m);\n"
        "#else\n"
        "  return v + __shfl_xor_sync(0xffffffff, v, m);\n"
        "#endif\n"
        "}\n"
    )
    diagnostics = run_example(HipPlatformHcc, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


# --- stale platform gates: other rules read them as meant, fixes are routed as ROCm 6 compiles the file -----
_LANE_UNDER_STALE_GATE = (
    "__device__ unsigned lane() {{\n  unsigned id = 0;\n#{opener}\n{first}\n#else\n{second}\n#endif\n  return id;\n}}\n"
)
_PTX_LANE = '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));'
_HIP_LANE = "  id = __lane_id();"


def test_a_negated_stale_test_keeps_routing_rocm_6_past_its_arm() -> None:
    # ROCm 6 takes the first arm (the macro is gone); widening `!defined` sends it into `#else`, whose PTX the
    # gating view calls ROCm-only (the author's meaning) but which ROCm 6 does not compile today: no fix.
    code = _LANE_UNDER_STALE_GATE.format(opener="ifndef __HIP_PLATFORM_HCC__", first=_HIP_LANE, second=_PTX_LANE)
    diagnostics = run_example(HipPlatformHcc, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


def test_a_stale_gate_is_reported_once_and_says_its_arms_are_analysed_as_meant() -> None:
    code = _LANE_UNDER_STALE_GATE.format(opener="ifdef __HIP_PLATFORM_HCC__", first=_HIP_LANE, second=_PTX_LANE)
    diagnostics = run_example(HipPlatformHcc, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None
    assert "analysed as it meant them" in diagnostics[0].message
    assert run_example(InlinePtx, code) == []


@pytest.mark.parametrize(
    ("opener", "reported"),
    [
        pytest.param("ifdef __HIP_PLATFORM_HCC__", True, id="rocm-arm"),
        pytest.param("ifndef __HIP_PLATFORM_HCC__", False, id="nvidia-arm"),
        pytest.param("ifdef __HIP_PLATFORM_NVCC__", False, id="nvcc-arm"),
    ],
)
def test_conditions_inside_a_stale_gate_are_read_as_its_side(opener: str, reported: bool) -> None:
    # The arm the stale test gives ROCm is ROCm code (ROC207 reports an architecture test there); the arm it
    # gives NVIDIA is NVIDIA-only, as under `#ifndef USE_ROCM`.
    code = f"#{opener}\n#if __CUDA_ARCH__ >= 800\n#define HAS_BF16 1\n#endif\n#endif\n"
    assert len(run_example(CudaVersionGate, code)) == int(reported)
    assert len(run_example(HipPlatformHcc, code)) == 1


# --- which arms a widened test routes ROCm into -------------------------------------------------------------
# A negation written without `!` is no truth test: the rewrite is refused (it would route ROCm into `#else`).
_NOT_A_TRUTH_TEST = "#if {condition}\n#define TRAP() 0\n#else\n#define TRAP() __brkpt()\n#endif\n"


@pytest.mark.parametrize(
    ("rule", "condition"),
    [
        pytest.param(CudaArchMacro, "defined(__CUDA_ARCH__) == 0", id="ROC213-compared"),
        pytest.param(CudaArchMacro, "0 == defined(__CUDA_ARCH__)", id="ROC213-compared-left"),
        pytest.param(CudaArchMacro, "defined(__CUDA_ARCH__) ? 0 : 1", id="ROC213-selected"),
        pytest.param(CudaArchMacro, "(defined(__CUDA_ARCH__) || defined(FOO)) == 0", id="ROC213-group-compared"),
        pytest.param(HipPlatformHcc, "defined(__HIP_PLATFORM_HCC__) == 0", id="ROC215-compared"),
    ],
)
def test_a_test_outside_a_truth_context_gets_no_fix(rule: type[Rule], condition: str) -> None:
    diagnostics = run_example(rule, _NOT_A_TRUTH_TEST.format(condition=condition))
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


def test_a_compiler_test_outside_a_truth_context_gets_no_fix() -> None:
    # An NVIDIA arm HIP could build (`abort()`): with `__brkpt()` there ROCm's own arm would be its only choice.
    code = _NOT_A_TRUTH_TEST.format(condition="defined(__CUDACC__) == 0").replace("__brkpt()", "abort()")
    diagnostics = run_example(CudaccMacro, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


@pytest.mark.parametrize(
    "condition",
    [
        "defined(__CUDA_ARCH__) == 0",
        "0 == defined(__CUDA_ARCH__)",
        "defined(__CUDA_ARCH__) ? 0 : 1",
        "(defined(__CUDA_ARCH__)) == 0",
        "FOO(defined(__CUDA_ARCH__))",
    ],
)
def test_with_alternatives_refuses_a_test_outside_a_truth_context(condition: str) -> None:
    assert with_alternatives(condition, PASS_AND_COMPILER_ALTERNATIVES) is None


@pytest.mark.parametrize(
    ("condition", "negated"),
    [
        ("defined(__CUDA_ARCH__)", [False]),
        ("!defined(__CUDA_ARCH__)", [True]),
        ("!!defined(__CUDA_ARCH__)", [False]),
        ("!(defined(__CUDA_ARCH__) || defined(FOO))", [True]),
        ("!(!defined(__CUDA_ARCH__) && X)", [False]),
        ("defined(__CUDA_ARCH__) || !defined(FOO)", [False]),
        ("(defined(__CUDA_ARCH__) && !defined(__CUDACC__))", [False, True]),
    ],
)
def test_a_test_is_negated_when_an_odd_number_of_bangs_apply_to_it(condition: str, negated: list[bool]) -> None:
    tests = condition_tests(condition, PASS_AND_COMPILER_ALTERNATIVES)
    assert tests is not None and [test.negated for test in tests] == negated


def test_a_group_negated_routes_rocm_into_later_arms() -> None:
    # `!(...)` turns false on the HIP device pass once widened: ROCm falls through to `__brkpt`.
    code = _NOT_A_TRUTH_TEST.format(condition="!(defined(__CUDA_ARCH__) || defined(FOO))")
    diagnostics = run_example(CudaArchMacro, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


def test_a_group_negated_routes_rocm_out_of_its_arm() -> None:
    # The widened test can only make the first arm false: ROCm leaves `__brkpt` for the clean `#else`.
    code = "#if !(defined(__CUDA_ARCH__) || defined(FOO))\n#define TRAP() __brkpt()\n#else\n#define TRAP() 0\n#endif\n"
    diagnostics = run_example(CudaArchMacro, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


@pytest.mark.parametrize(
    ("rule", "name"),
    [
        pytest.param(CudaArchMacro, "__CUDA_ARCH__", id="ROC213"),
        pytest.param(CudaccMacro, "__CUDACC__", id="ROC214"),
        pytest.param(HipPlatformHcc, "__HIP_PLATFORM_HCC__", id="ROC215"),
    ],
)
def test_another_name_negated_does_not_route_later_arms(rule: type[Rule], name: str) -> None:
    # Widening the positive test only takes ROCm away from the `#else`; `!defined(FOO)` is not widened.
    code = f"#if defined({name}) || !defined(FOO)\n#define TRAP() 0\n#else\n#define TRAP() __brkpt()\n#endif\n"
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


def test_an_alternative_rocm_never_defines_routes_nothing() -> None:
    # `__HIP_PLATFORM_NVIDIA__` is never defined on ROCm: widening the test cannot move a ROCm build.
    code = "#ifdef __HIP_PLATFORM_NVCC__\n#include <cuda_pipeline.h>\n#endif\n"
    diagnostics = run_example(HipPlatformHcc, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


@pytest.mark.parametrize(
    ("rule", "name"),
    [
        pytest.param(CudaArchMacro, "__CUDA_ARCH__", id="ROC213"),
        pytest.param(CudaccMacro, "__CUDACC__", id="ROC214"),
        pytest.param(HipPlatformHcc, "__HIP_PLATFORM_HCC__", id="ROC215"),
    ],
)
def test_an_arm_rocm_compiles_today_does_not_block_the_fix_after_a_negated_test(rule: type[Rule], name: str) -> None:
    # ROCm skips the first arm today (`ENABLE_FAST` is 0) and compiles `#else`: the fix changes nothing there.
    code = (
        f"#define ENABLE_FAST 0\n#if !defined({name}) && ENABLE_FAST\n#define TRAP() 0\n#else\n"
        "#define TRAP() __brkpt()\n#endif\n"
    )
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


# --- what HIP lacks, same-file macros included --------------------------------------------------------------
_LANE = "__device__ inline unsigned lane() {{\n  unsigned id = 0;\n#{opener}\n  {body}\n#endif\n  return id;\n}}\n"


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        pytest.param(
            CudaArchMacro,
            '#define MYASM "mov.u32 %0, %%laneid;"\n'
            + _LANE.format(opener="ifdef __CUDA_ARCH__", body='asm volatile(MYASM : "=r"(id));'),
            id="ROC213-asm-template-macro",
        ),
        pytest.param(
            CudaArchMacro,
            "#define FULL_MASK 0xffffffff\n"
            + _LANE.format(opener="if defined(__CUDA_ARCH__)", body="id = __shfl_xor_sync(FULL_MASK, id, 1);"),
            id="ROC213-mask-macro",
        ),
        pytest.param(
            CudaArchMacro,
            "#define TRAP() __brkpt()\n" + _LANE.format(opener="ifdef __CUDA_ARCH__", body="TRAP();"),
            id="ROC213-macro-body",
        ),
        pytest.param(
            CudaArchMacro,
            "#define BREAK __brkpt()\n#define TRAP() BREAK\n"
            + _LANE.format(opener="ifdef __CUDA_ARCH__", body="TRAP();"),
            id="ROC213-macro-body-through-a-macro",
        ),
        pytest.param(
            CudaArchMacro,
            _LANE.format(
                opener="ifdef __CUDA_ARCH__", body='asm volatile("mov.u32 %0, %%laneid; // lane" : "=r"(id));'
            ),
            id="ROC213-comment-marker-in-template",
        ),
        pytest.param(
            CudaccMacro,
            _LANE.format(opener="ifdef __CUDACC__", body='asm volatile("mov.u32 %0, %%laneid; // lane" : "=r"(id));'),
            id="ROC214-comment-marker-in-template",
        ),
        pytest.param(
            HipPlatformHcc,
            _LANE.format(
                opener="ifdef __HIP_PLATFORM_HCC__", body='asm volatile("mov.u32 %0, %%laneid; /* lane" : "=r"(id));'
            ),
            id="ROC215-comment-marker-in-template",
        ),
        pytest.param(
            HipPlatformHcc,
            "#define FULL_MASK 0xffffffff\n"
            + _LANE.format(opener="ifdef __HIP_PLATFORM_HCC__", body="id = __shfl_xor_sync(FULL_MASK, id, 1);"),
            id="ROC215-mask-macro",
        ),
        pytest.param(
            CudaccMacro,
            "#define TRAP() __brkpt()\n" + _LANE.format(opener="ifdef __CUDACC__", body="TRAP();"),
            id="ROC214-macro-body",
        ),
        pytest.param(
            CudaccMacro,
            "#define FULL_MASK 0xffffffff\n"
            + _LANE.format(opener="ifdef __CUDACC__", body="id = __shfl_xor_sync(FULL_MASK, id, 1);"),
            id="ROC214-mask-macro",
        ),
        pytest.param(
            HipPlatformHcc,
            '#define MYASM "mov.u32 %0, %%laneid;"\n'
            + _LANE.format(opener="ifdef __HIP_PLATFORM_HCC__", body='asm volatile(MYASM : "=r"(id));'),
            id="ROC215-asm-template-macro",
        ),
        pytest.param(
            HipPlatformHcc,
            "#define TRAP() __brkpt()\n" + _LANE.format(opener="ifdef __HIP_PLATFORM_HCC__", body="TRAP();"),
            id="ROC215-macro-body",
        ),
    ],
)
def test_same_file_macros_the_arm_uses_count(rule: type[Rule], code: str) -> None:
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is None


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        pytest.param(
            CudaArchMacro,
            "#define TRAP() __builtin_trap()\n" + _LANE.format(opener="ifdef __CUDA_ARCH__", body="TRAP();"),
            id="ROC213-clean-macro-body",
        ),
        pytest.param(
            CudaArchMacro,
            _LANE.format(
                opener="ifdef __CUDA_ARCH__", body='asm volatile("s_nop 0"); printf("ld.global.u32 failed\\n");'
            ),
            id="ROC213-ptx-like-string-outside-asm",
        ),
        pytest.param(
            CudaccMacro,
            _LANE.format(opener="ifdef __CUDACC__", body='asm volatile("s_nop 0"); printf("mov.u32 failed\\n");'),
            id="ROC214-ptx-like-string-outside-asm",
        ),
        pytest.param(
            HipPlatformHcc,
            "#define TRAP() __builtin_trap()\n" + _LANE.format(opener="ifdef __HIP_PLATFORM_HCC__", body="TRAP();"),
            id="ROC215-clean-macro-body",
        ),
    ],
)
def test_clean_code_and_macros_keep_the_fix(rule: type[Rule], code: str) -> None:
    diagnostics = run_example(rule, code)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('a = "x // y"; // gone', 'a = "x // y";  '),
        ('a = \'"\'; /* gone */ b = "/*";', 'a = \'"\';   b = "/*";'),
        ("a = 1; /* to the end", "a = 1;  "),
    ],
)
def test_without_comments_keeps_literals(code: str, expected: str) -> None:
    assert without_comments(code) == expected
