"""ROC215 hip-platform-hcc."""

from __future__ import annotations

from rocmlint.cuda.conditions import ConditionRule
from rocmlint.cuda.frontend import CudaContext
from rocmlint.cuda.preprocessor import Directive, names_in
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# Removed in ROCm 6.0, with their current spelling.
_REPLACEMENT = {
    "__HIP_PLATFORM_HCC__": "__HIP_PLATFORM_AMD__",
    "HIP_PLATFORM_HCC": "__HIP_PLATFORM_AMD__",
    "__HIP_PLATFORM_NVCC__": "__HIP_PLATFORM_NVIDIA__",
    "HIP_PLATFORM_NVCC": "__HIP_PLATFORM_NVIDIA__",
}
_DEPRECATED = frozenset(_REPLACEMENT)


class HipPlatformHcc(ConditionRule, Rule):
    """
    ## What it does
    Flags `#if`/`#ifdef`/`#elif` tests of the deprecated `__HIP_PLATFORM_HCC__`, `__HIP_PLATFORM_NVCC__`
    or `HIP_PLATFORM_HCC` that do not also test `__HIP_PLATFORM_AMD__`, `USE_ROCM` or another current macro.

    ## Why is this bad on ROCm?
    ROCm 6.0 removed both platform macros; `hip/hip_common.h` now defines only `__HIP_PLATFORM_AMD__` and
    `__HIP_PLATFORM_NVIDIA__` (pytorch/FBGEMM#2086, ROCm/pytorch#1303, ROCm/hipBLASLt#369,
    llnl/RAJA#1568). A `#ifdef __HIP_PLATFORM_HCC__` ROCm branch is silently skipped on current ROCm and
    the CUDA branch, with its `_sync` intrinsics, PTX or cuDNN calls, is compiled for AMD instead. Older
    PyTorch `aten/src/ATen/cuda/DeviceUtils.cuh` gated every `WARP_SHFL*` wrapper this way.

    ## Example
    ```cuda
    template <typename T>
    __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
    #ifdef __HIP_PLATFORM_HCC__
      return __shfl_xor(value, lane_mask);
    #else
      return __shfl_xor_sync(0xffffffff, value, lane_mask);
    #endif
    }
    ```

    ## Fix
    ```cuda
    template <typename T>
    __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
    #if defined(__HIP_PLATFORM_AMD__) || defined(USE_ROCM)
      return __shfl_xor(value, lane_mask);
    #else
      return __shfl_xor_sync(0xffffffff, value, lane_mask);
    #endif
    }
    ```

    ## Fix safety
    Safe: none of `__HIP_PLATFORM_HCC__`, `__HIP_PLATFORM_AMD__` or `USE_ROCM` is defined on an NVIDIA
    build, so it keeps the arm it had; only ROCm builds change, into the arm written for them.
    """

    code = "ROC215"
    name = "hip-platform-hcc"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"HIP_PLATFORM_HCC", b"HIP_PLATFORM_NVCC")
    # Gating is decided per directive by ConditionRule (an `#elif` is read where its chain is).
    reports_gated = True

    def visit_directive(self, directive: Directive, ctx: CudaContext) -> None:
        if "HIP_PLATFORM_" not in directive.text:
            return
        macro = next((name for name in names_in(directive.condition) if name in _DEPRECATED), None)
        # The deprecated names themselves do not count as the ROCm alternative.
        if macro is None or not self._candidate(directive, ctx, ignore=_DEPRECATED):
            return
        self._report_condition(
            directive,
            ctx,
            f"`{macro}` was removed in ROCm 6.0 (HIP defines only `__HIP_PLATFORM_AMD__`/`__HIP_PLATFORM_NVIDIA__`), "
            f"so this test no longer picks the arm written for HIP; test `{_REPLACEMENT[macro]}` (or `USE_ROCM`) instead",
        )


HipPlatformHcc.valid = (
    Valid(
        "template <typename T>\n"
        "__device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {\n"
        "#if defined(__HIP_PLATFORM_AMD__) || defined(USE_ROCM)\n"
        "  return __shfl_xor(value, lane_mask);\n"
        "#else\n"
        "  return __shfl_xor_sync(0xffffffff, value, lane_mask);\n"
        "#endif\n"
        "}\n"
    ),
    # Kept for old ROCm next to the current macro.
    Valid(
        "#if defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)\n"
        "#include <hip/hip_runtime.h>\n"
        "#define GPU_WARP_SIZE 64\n"
        "#else\n"
        "#define GPU_WARP_SIZE 32\n"
        "#endif\n"
    ),
    # The chain tests the current macro first.
    Valid(
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "#define HIP_BACKEND_AMD 1\n"
        "#elif defined(__HIP_PLATFORM_HCC__)\n"
        "#define HIP_BACKEND_AMD 1\n"
        "#endif\n"
    ),
    # Comments and string literals are not tests.
    Valid(
        "// Before ROCm 6.0 this was __HIP_PLATFORM_HCC__.\n"
        '__device__ const char* kPlatform = "__HIP_PLATFORM_HCC__";\n'
    ),
    Valid("#ifndef USE_ROCM\n#ifdef __HIP_PLATFORM_NVCC__\n#include <hip/hip_runtime.h>\n#endif\n#endif\n"),
)
HipPlatformHcc.invalid = (
    Invalid(
        "template <typename T>\n"
        "__device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {\n"
        "#ifdef __HIP_PLATFORM_HCC__\n"
        "  return __shfl_xor(value, lane_mask);\n"
        "#else\n"
        "  return __shfl_xor_sync(0xffffffff, value, lane_mask);\n"
        "#endif\n"
        "}\n",
        line=3,
        message="test `__HIP_PLATFORM_AMD__`",
    ),
    Invalid(
        "#if defined(__HIP_PLATFORM_NVCC__)\n"
        "#include <cuda_runtime.h>\n"
        "#else\n"
        "#include <hip/hip_runtime.h>\n"
        "#endif\n",
        line=1,
        message="`__HIP_PLATFORM_NVIDIA__`",
    ),
    Invalid(
        "#if !defined(HIP_PLATFORM_HCC)\n"
        "#define USE_CUDNN_FRONTEND 1\n"
        "#endif\n",
        line=1,
    ),
    Invalid(
        "__global__ void fill(float* out, float v, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "#if defined(__HIP_PLATFORM_HCC__) && (__HIP_PLATFORM_HCC__ == 1)\n"
        "  if (i < n) __builtin_nontemporal_store(v, out + i);\n"
        "#else\n"
        "  if (i < n) out[i] = v;\n"
        "#endif\n"
        "}\n",
        line=3,
    ),
)
