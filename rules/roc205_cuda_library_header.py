"""ROC205 cuda-library-header."""

from __future__ import annotations

from functools import cache

from rocmlint.cuda.frontend import CudaContext, Include
from rocmlint.data import load
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# Library names for the message, by the header's leading letters.
_LIBRARIES = (
    ("cublasLt", "cuBLASLt"), ("cublas", "cuBLAS"), ("cusparse", "cuSPARSE"), ("cusolver", "cuSOLVER"),
    ("cufft", "cuFFT"), ("curand", "cuRAND"), ("cudnn", "cuDNN"), ("nccl", "NCCL"), ("nvToolsExt", "NVTX"),
    ("nvtx3", "NVTX"), ("nvml", "NVML"), ("nvrtc", "NVRTC"), ("cub/", "CUB"), ("thrust/", "Thrust's CUDA backend"),
)


@cache
def _headers() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """(CUDA library header -> HIP header, (folder prefix, HIP header) pairs)."""
    table = load("cuda_headers")
    return table["library"], tuple(sorted(table["library_prefixes"].items(), key=lambda p: -len(p[0])))


def hip_header(header: str) -> str | None:
    exact, prefixes = _headers()
    if header in exact:
        return exact[header]
    return next((hip for prefix, hip in prefixes if header.startswith(prefix)), None)


def _library(header: str) -> str:
    return next((name for start, name in _LIBRARIES if header.startswith(start)), "a CUDA library")


class CudaLibraryHeader(Rule):
    """
    ## What it does
    Flags `#include` of a CUDA library header (`cublas_v2.h`, `cublasLt.h`, `cusparse.h`, `cufft.h`,
    `curand.h`, `cudnn.h`, `nccl.h`, `cub/...`, `nvToolsExt.h`, ...) that a ROCm build compiles.

    ## Why is this bad on ROCm?
    The CUDA libraries are not installed with ROCm; each has a ROCm counterpart with its own header:
    hipBLAS (`hipblas/hipblas.h`), hipBLASLt, hipSPARSE, hipFFT, hipRAND, hipSOLVER, hipCUB
    (`hipcub/hipcub.hpp`), RCCL (`rccl/rccl.h`), roctx (`roctracer/roctx.h`). cuDNN has no drop-in:
    MIOpen's API differs. The mapping comes from HIPIFY's header map (`src/CUDA2HIP.cpp`, regenerated
    into `rocmlint/data/cuda_headers.toml`) and torch's `cuda_to_hip_mappings.py`; the library table is in
    the HIP porting guide ("Library Equivalents").

    ## Example
    ```cuda
    #include <cublas_v2.h>
    #include <cub/block/block_reduce.cuh>
    ```

    ## Fix
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
    #include <hipblas/hipblas.h>
    #include <hipcub/hipcub.hpp>
    namespace cub = hipcub;
    #else
    #include <cublas_v2.h>
    #include <cub/block/block_reduce.cuh>
    #endif
    ```

    ## Fix safety
    Safe: the NVIDIA branch keeps the original include lines token for token; the ROCm branch includes
    the HIP library's header. The calls still need their HIP names (hipify, or ROC216's table).
    """

    code = "ROC205"
    name = "cuda-library-header"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"cublas", b"cusparse", b"cusolver", b"cufft", b"curand", b"cudnn", b"nccl", b"nvToolsExt", b"nvtx3", b"nvml", b"nvrtc", b"cub/", b"thrust/system/cuda")

    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        header = include.header.strip()
        hip = hip_header(header)
        if hip is None:
            return
        library = _library(header)
        if library == "cuDNN":
            message = f"`{header}`: cuDNN is not available on ROCm; MIOpen (`{hip}`) is the counterpart, with a different API"
        else:
            message = f"`{header}` ({library}) is not available on ROCm; include `{hip}` in a ROCm branch"
        ctx.report(include, message)


CudaLibraryHeader.valid = (
    # mamba's selective scan: CUB on NVIDIA, hipCUB plus a namespace alias on ROCm.
    Valid(
        "#ifndef USE_ROCM\n"
        "    #include <cub/block/block_load.cuh>\n"
        "    #include <cub/block/block_store.cuh>\n"
        "    #include <cub/block/block_scan.cuh>\n"
        "#else\n"
        "    #include <hipcub/hipcub.hpp>\n"
        "    namespace cub = hipcub;\n"
        "#endif\n"
        "template <int kNThreads> __device__ float block_sum(float v) {\n"
        "  using BlockReduce = cub::BlockReduce<float, kNThreads>;\n"
        "  __shared__ typename BlockReduce::TempStorage tmp;\n"
        "  return BlockReduce(tmp).Sum(v);\n"
        "}\n"
    ),
    Valid(
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "#include <hipblas/hipblas.h>\n"
        "#include <rocblas/rocblas.h>\n"
        "#else\n"
        "#include <cublas_v2.h>\n"
        "#include <cublasLt.h>\n"
        "#endif\n"
    ),
    Valid(
        "#if !defined(USE_ROCM) && defined(USE_NCCL)\n"
        "#include <nccl.h>\n"
        "#include <nvToolsExt.h>\n"
        "#endif\n"
    ),
    # Thrust itself is provided by rocThrust under the same names; project headers that look alike are
    # not CUDA's.
    Valid(
        "#include <thrust/device_vector.h>\n"
        "#include <thrust/sort.h>\n"
        '#include "cublas_wrappers_impl.h"\n'
        '#include "my_cub_utils.cuh"\n'
    ),
    Valid(
        "#include <hip/hip_runtime.h>\n"
        "#include <cublas_v2.h>  // hipified in place by the build\n"
    ),
)
CudaLibraryHeader.invalid = (
    # DeepSpeed's context.h: cuBLAS and cuRAND included unguarded.
    Invalid(
        "#pragma once\n"
        "#include <ATen/cuda/CUDAContext.h>\n"
        "#include <cuda_runtime_api.h>\n"
        "#include <cassert>\n"
        "#include <iostream>\n"
        "#include <vector>\n"
        "#include <cublas_v2.h>\n"
        "#include <cuda.h>\n"
        "#include <curand.h>\n",
        line=7,
        message="hipblas/hipblas.h",
    ),
    Invalid(
        "#include <cub/block/block_reduce.cuh>\n"
        "template <int kThreads> __global__ void row_sum(const float* x, float* out, int cols) {\n"
        "  using BlockReduce = cub::BlockReduce<float, kThreads>;\n"
        "  __shared__ typename BlockReduce::TempStorage tmp;\n"
        "  float s = 0.f;\n"
        "  for (int c = threadIdx.x; c < cols; c += kThreads) s += x[blockIdx.x * cols + c];\n"
        "  float total = BlockReduce(tmp).Sum(s);\n"
        "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
        "}\n",
        line=1,
        message="hipcub/hipcub.hpp",
    ),
    Invalid(
        "#include <cufft.h>\n"
        "#ifndef USE_ROCM\n"
        "#include <cufftXt.h>\n"
        "#endif\n",
        line=1,
        message="hipfft/hipfft.h",
    ),
    Invalid(
        '#include "cudnn.h"\n'
        "cudnnHandle_t make_handle() { cudnnHandle_t h; cudnnCreate(&h); return h; }\n",
        line=1,
        message="MIOpen",
    ),
    Invalid(
        "#ifdef WITH_NVTX\n"
        "#include <nvtx3/nvToolsExt.h>\n"
        "#endif\n",
        line=2,
        message="roctracer/roctx.h",
    ),
)
