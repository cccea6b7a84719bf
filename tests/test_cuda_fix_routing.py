"""Fixes that widen an `#if` chain's tests (ROC213, ROC214, ROC215) route ROCm into arms it skips today: they
must not send it into code HIP cannot build (rocmlint/cuda/hip_gaps.py), and still fix chains whose arms are
clean."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc213_cuda_arch_macro import CudaArchMacro
from rocmlint.rules.roc214_cudacc_macro import CudaccMacro
from rocmlint.rules.roc215_hip_platform_hcc import HipPlatformHcc

from rocmlint.cuda.frontend import ByteSpan, CudaContext, CudaOptions
from rocmlint.cuda.hip_gaps import lacking_on_hip
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
