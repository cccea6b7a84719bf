"""ROC205 cuda-library-header."""

from __future__ import annotations

from functools import cache

from rocmlint.cuda.conditions import in_nvidia_only_arm
from rocmlint.cuda.frontend import CudaContext, Include
from rocmlint.cuda.hip_gaps import is_libcudacxx_header, no_hip_equivalents
from rocmlint.data import load
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# Library names for the message, by the header's leading letters.
_LIBRARIES = (
    ("cublasLt", "cuBLASLt"),
    ("cublas", "cuBLAS"),
    ("cusparse", "cuSPARSE"),
    ("cusolver", "cuSOLVER"),
    ("cufft", "cuFFT"),
    ("curand", "cuRAND"),
    ("cudnn", "cuDNN"),
    ("nccl", "NCCL"),
    ("nvToolsExt", "NVTX"),
    ("nvtx3", "NVTX"),
    ("nvml", "NVML"),
    ("nvrtc", "NVRTC"),
    ("cub/", "CUB"),
    ("thrust/", "Thrust's CUDA backend"),
)
# Libraries whose ROCm counterpart has a different API (MIOpen, ROCm SMI): swapping the header fixes nothing.
_NO_DROP_IN = frozenset({"cuDNN", "NVML"})


@cache
def _headers() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """(CUDA library header -> HIP header, (folder prefix, HIP header) pairs)."""
    table = load("cuda_headers")
    return table["library"], tuple(sorted(table["library_prefixes"].items(), key=lambda p: -len(p[0])))


def hip_header(header: str) -> str | None:
    """The HIP header for a CUDA library header; a folder mapped to a folder (`thrust/system/cuda/`) keeps the rest."""
    exact, prefixes = _headers()
    if header in exact:
        return exact[header]
    hip = next(((prefix, hip) for prefix, hip in prefixes if header.startswith(prefix)), None)
    if hip is None:
        return None
    prefix, target = hip
    return target + header[len(prefix) :] if target.endswith("/") else target


def torch_hipify_renames(header: str) -> bool:
    """Whether torch's extension build swaps the include of a library header `hip_header` maps: any the table names
    one by one; under a folder it maps as a whole (`cub/`), those torch names (or a folder of, `thrust/system/cuda`)."""
    renamed = load("torch_hipify_gaps")["includes"]["renamed_under_folders"]
    return header in _headers()[0] or any(header == name or header.startswith(name + "/") for name in renamed)


def _library(header: str) -> str:
    return next((name for start, name in _LIBRARIES if header.startswith(start)), "a CUDA library")


class CudaLibraryHeader(Rule):
    """
    ## What it does
    Flags `#include` of a CUDA library header (`cublas_v2.h`, `cublasLt.h`, `cusparse.h`, `cufft.h`, `curand.h`,
    `cudnn.h`, `nccl.h`, `cub/...`, `nvToolsExt.h`, ...) or of libcu++ (`<cuda/atomic>`, `<cuda/barrier>`,
    `<cuda/pipeline>`, `<cuda/std/...>`: `cuda/` headers without an extension, not a project's own `cuda/` folder)
    that a ROCm build compiles. Uses of libcu++ APIs HIP lacks (`cuda::barrier`, `cuda::pipeline`) are ROC217's. Not
    flagged in an NVIDIA arm that could never build on ROCm by the project's design (ROC214): no port compiles it.

    ## Why is this bad on ROCm?
    The CUDA libraries are not installed with ROCm; each has a ROCm counterpart with its own header: hipBLAS
    (`hipblas/hipblas.h`), hipBLASLt, hipSPARSE, hipFFT, hipRAND, hipSOLVER, hipCUB (`hipcub/hipcub.hpp`), RCCL
    (`rccl/rccl.h`), roctx (`roctracer/roctx.h`). cuDNN has no drop-in: MIOpen's API differs. The mapping comes from
    HIPIFY's header map (`src/CUDA2HIP.cpp`, regenerated into `rocmlint/data/cuda_headers.toml`) and torch's
    `cuda_to_hip_mappings.py`; the library table is in the HIP porting guide ("Library Equivalents"). ROCm does not
    ship libcu++ at all: its `cuda::std` parts have C++ standard library counterparts (`<cuda/std/type_traits>` ->
    `<type_traits>`, mamba's port aliases `cuda::std` to `std`), its barriers and pipelines none.

    ## Example
    ```cuda
    #include <cublas_v2.h>
    #include <cub/block/block_reduce.cuh>
    ```

    ## Fix
    Each include line goes behind the ROCm test (`rocm-condition`, default shown), with the ROCm library's header
    from the same table the rule reads in the ROCm branch; a `cub/` header also gets `namespace cub = hipcub;`
    there, since the code says `cub::`. Every include gets a gate of its own, so each fix stands alone:
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #include <hipblas/hipblas.h>
    #else
    #include <cublas_v2.h>
    #endif
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #include <hipcub/hipcub.hpp>
    namespace cub = hipcub;
    #else
    #include <cub/block/block_reduce.cuh>
    #endif
    ```
    `cudnn.h` and `nvml.h` get no fix: MIOpen and ROCm SMI have different APIs, so swapping the header
    would silence the report without making the code build; nor do libcu++ headers, whose ROCm side is a
    rewrite to the standard library (or, for barriers and pipelines, a redesign).

    ## Fix safety
    Safe: the NVIDIA branch keeps the original include line byte for byte and nothing in the ROCm test is defined by
    an NVIDIA build, so nvcc sees the same tokens (only line numbers move). On ROCm the calls still need their HIP
    names (hipify, which torch's `CUDAExtension` runs, or ROC216's table), and the ROCm library must be installed.
    When the project model finds that the build hipifies the sources (a torch `CUDAExtension`, a build file running
    hipify), a drop-in library's include is left out in every file hipify reaches of a project that already builds
    for ROCm that way (as for ROC204; `check --verbose` names the evidence) and reported at `info` with that evidence
    before a first port and in files the port left to NVIDIA (a hand-written HIP twin, as for ROC204;
    `show-hipified = true` or `--show-hipified` reports it everywhere, `show-hipified = false` or `--hide-hipified`
    nowhere); cuDNN and NVML, which hipify cannot swap for a drop-in, stay warnings, and so
    does a `cub/` header torch's own hipify leaves (`cub/warp/warp_scan.cuh`; `torch_hipify_gaps.toml` `[includes]`)
    where no build step runs a hipify tool itself.

    ## In projects written for AMD
    A file including a CUDA library header outside any vendor branch is NVIDIA-side code even in a project written
    for AMD (the CUB-backend examples of a library with a CUB and a rocPRIM backend): it does not build on ROCm, so
    it is reported unless the project model finds that no ROCm build compiles it (a setup.py or CMake source list
    for NVIDIA only, an include only from NVIDIA-only branches). Sources a build picks in ways the model does not
    read (a CMake `foreach` over an NVIDIA-only target list around a `file(GLOB)`) stay reported.
    """

    code = "ROC205"
    name = "cuda-library-header"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (
        b"cublas",
        b"cusparse",
        b"cusolver",
        b"cufft",
        b"curand",
        b"cudnn",
        b"nccl",
        b"nvToolsExt",
        b"nvtx3",
        b"nvml",
        b"nvrtc",
        b"cub/",
        b"thrust/system/cuda",
        b"cuda/",
    )

    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        header = include.header.strip()
        hip = hip_header(header)
        if (hip is not None or is_libcudacxx_header(header)) and in_nvidia_only_arm(include, ctx):
            return  # an arm ROCm skips by the project's design: a port never compiles the include
        if is_libcudacxx_header(header):
            ctx.report(include, _libcudacxx_message(header))
            return
        if hip is None:
            return
        library = _library(header)
        if library == "cuDNN":
            message = (
                f"`{header}`: cuDNN is not available on ROCm; MIOpen (`{hip}`) is the counterpart, with a different API"
            )
        else:
            message = f"`{header}` ({library}) is not available on ROCm; include `{hip}` in a ROCm branch"
        fix = _fix(include, header, hip, library, ctx)
        if ctx.hipified_build and library not in _NO_DROP_IN and (ctx.hipify_tool or torch_hipify_renames(header)):
            ctx.report_hipified(include, message, fix=fix)  # hipify swaps a drop-in library's include at build time
            return
        ctx.report(include, message, fix=fix)


def _libcudacxx_message(header: str) -> str:
    missing = f"`{header}` (libcu++) is not on ROCm's include path"
    reason = no_hip_equivalents().headers.get(header)
    if reason is not None:
        return f"{missing}: {reason}"
    if header.startswith("cuda/std/"):
        return f"{missing}; include `<{header.removeprefix('cuda/std/')}>` and use `std::` in a ROCm branch"
    return f"{missing}; include it on NVIDIA only and write the ROCm branch with the C++ standard library or HIP"


def _fix(include: Include, header: str, hip: str, library: str, ctx: CudaContext) -> Fix | None:
    """The include swapped behind the ROCm test, one gate per include (each fix stands alone)."""
    if library in _NO_DROP_IN:
        return None  # the ROCm header would not declare what the code calls: the port is a rewrite
    rocm = f"#include <{hip}>"
    if header.startswith("cub/"):
        rocm += "\nnamespace cub = hipcub;"  # the code says `cub::`; hipCUB's namespace is `hipcub`
    return ctx.gated_fix(f"include `<{hip}>` on ROCm", include.directive, rocm)


CudaLibraryHeader.valid = (
    # Whatever the include path holds, a conjunction with an NVIDIA-only test is false on ROCm.
    Valid(
        '#if __has_include("cudnn.h") && !defined(USE_ROCM)\n#include "cudnn.h"\n'
        "int cudnn_version() { return CUDNN_VERSION; }\n#endif\n"
    ),
    # mamba's port: the libcu++ header on NVIDIA only, `cuda::std` aliased to `std` on ROCm.
    Valid(
        """
        #ifndef USE_ROCM
        #include <cuda/std/type_traits>
        #else
        #include <type_traits>
        namespace cuda { namespace std = ::std; }
        #endif
        """,
    ),
    # mamba's selective scan: CUB on NVIDIA, hipCUB plus a namespace alias on ROCm.
    Valid(
        """
        #ifndef USE_ROCM
            #include <cub/block/block_load.cuh>
            #include <cub/block/block_store.cuh>
            #include <cub/block/block_scan.cuh>
        #else
            #include <hipcub/hipcub.hpp>
            namespace cub = hipcub;
        #endif
        template <int kNThreads> __device__ float block_sum(float v) {
          using BlockReduce = cub::BlockReduce<float, kNThreads>;
          __shared__ typename BlockReduce::TempStorage tmp;
          return BlockReduce(tmp).Sum(v);
        }
        """,
    ),
    Valid(
        """
        #if defined(__HIP_PLATFORM_AMD__)
        #include <hipblas/hipblas.h>
        #include <rocblas/rocblas.h>
        #else
        #include <cublas_v2.h>
        #include <cublasLt.h>
        #endif
        """,
    ),
    Valid(
        """
        #if !defined(USE_ROCM) && defined(USE_NCCL)
        #include <nccl.h>
        #include <nvToolsExt.h>
        #endif
        """,
    ),
    # Thrust itself is provided by rocThrust under the same names; project headers that look alike are
    # not CUDA's.
    Valid(
        """
        #include <thrust/device_vector.h>
        #include <thrust/sort.h>
        #include "cublas_wrappers_impl.h"
        #include "my_cub_utils.cuh"
        """,
    ),
    Valid(
        """
        #include <hip/hip_runtime.h>
        #include <cublas_v2.h>  // hipified in place by the build
        """,
    ),
)
CudaLibraryHeader.invalid = (
    # libcu++ headers; a project's own `cuda/` header has an extension and is not one.
    Invalid(
        """
        #include <cuda/barrier>
        #include <cuda/std/type_traits>
        #include "cuda/q_matrix.cuh"
        #include <cuda/atomic>
        """,
        expect=("1:1-1:24", "2:1-2:32", "4:1-4:23"),
        message="`cuda/barrier` (libcu++) is not on ROCm's include path: libcu++ `cuda::barrier`",
        no_fix=True,
    ),
    # DeepSpeed's context.h: cuBLAS and cuRAND included unguarded.
    Invalid(
        """
        #pragma once
        #include <ATen/cuda/CUDAContext.h>
        #include <cuda_runtime_api.h>
        #include <cassert>
        #include <iostream>
        #include <vector>
        #include <cublas_v2.h>
        #include <cuda.h>
        #include <curand.h>
        """,
        expect=("7:1-7:23", "9:1-9:20"),
        message="hipblas/hipblas.h",
        fixed="""
        #pragma once
        #include <ATen/cuda/CUDAContext.h>
        #include <cuda_runtime_api.h>
        #include <cassert>
        #include <iostream>
        #include <vector>
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hipblas/hipblas.h>
        #else
        #include <cublas_v2.h>
        #endif
        #include <cuda.h>
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hiprand/hiprand.h>
        #else
        #include <curand.h>
        #endif
        """,
    ),
    Invalid(
        """
        #include <cub/block/block_reduce.cuh>
        template <int kThreads> __global__ void row_sum(const float* x, float* out, int cols) {
          using BlockReduce = cub::BlockReduce<float, kThreads>;
          __shared__ typename BlockReduce::TempStorage tmp;
          float s = 0.f;
          for (int c = threadIdx.x; c < cols; c += kThreads) s += x[blockIdx.x * cols + c];
          float total = BlockReduce(tmp).Sum(s);
          if (threadIdx.x == 0) out[blockIdx.x] = total;
        }
        """,
        expect=("1:1-1:38",),
        message="hipcub/hipcub.hpp",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hipcub/hipcub.hpp>
        namespace cub = hipcub;
        #else
        #include <cub/block/block_reduce.cuh>
        #endif
        template <int kThreads> __global__ void row_sum(const float* x, float* out, int cols) {
          using BlockReduce = cub::BlockReduce<float, kThreads>;
          __shared__ typename BlockReduce::TempStorage tmp;
          float s = 0.f;
          for (int c = threadIdx.x; c < cols; c += kThreads) s += x[blockIdx.x * cols + c];
          float total = BlockReduce(tmp).Sum(s);
          if (threadIdx.x == 0) out[blockIdx.x] = total;
        }
        """,
    ),
    Invalid(
        """
        #include <cufft.h>
        #ifndef USE_ROCM
        #include <cufftXt.h>
        #endif
        """,
        expect=("1:1-1:19",),
        message="hipfft/hipfft.h",
    ),
    Invalid(
        """
        #include "cudnn.h"
        cudnnHandle_t make_handle() { cudnnHandle_t h; cudnnCreate(&h); return h; }
        """,
        expect=("1:1-1:19",),
        message="MIOpen",
        # No fix: MIOpen's API is not cuDNN's.
        no_fix=True,
    ),
    Invalid(
        """
        #ifdef WITH_NVTX
        #include <nvtx3/nvToolsExt.h>
        #endif
        """,
        expect=("2:1-2:30",),
        message="roctracer/roctx.h",
        fixed="""
        #ifdef WITH_NVTX
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <roctracer/roctx.h>
        #else
        #include <nvtx3/nvToolsExt.h>
        #endif
        #endif
        """,
    ),
    # A folder mapped to a folder keeps the rest of the path.
    Invalid(
        """
        #include <thrust/system/cuda/execution_policy.h>
        """,
        expect=("1:1-1:49",),
        message="thrust/system/hip/execution_policy.h",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <thrust/system/hip/execution_policy.h>
        #else
        #include <thrust/system/cuda/execution_policy.h>
        #endif
        """,
    ),
)
