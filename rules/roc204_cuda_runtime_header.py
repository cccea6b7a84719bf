"""ROC204 cuda-runtime-header."""

from __future__ import annotations

from functools import cache

from rocmlint.cuda.frontend import CudaContext, Include
from rocmlint.data import load
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


@cache
def _runtime_headers() -> dict[str, str]:
    """CUDA toolkit header -> HIP header ("" when ROCm needs none), from HIPIFY's header map."""
    table: dict[str, str] = load("cuda_headers")["runtime"]
    return table


class CudaRuntimeHeader(Rule):
    """
    ## What it does
    Flags `#include` of a CUDA toolkit runtime or device header (`cuda_runtime.h`, `cuda.h`,
    `cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`, `curand_kernel.h`, ...) that a ROCm build
    compiles.

    ## Why is this bad on ROCm?
    These headers are not on ROCm's include path ("fatal error: 'cuda_bf16.h' file not found"); HIP has
    its own (`hip/hip_runtime.h`, `hip/hip_fp16.h`, `hip/hip_bf16.h`, `hip/hip_cooperative_groups.h`,
    `hiprand/hiprand_kernel.h`). The mapping comes from HIPIFY's header map (`src/CUDA2HIP.cpp`,
    regenerated into `rocmlint/data/cuda_headers.toml`) and torch's `cuda_to_hip_mappings.py`. HIP-Clang
    ships an empty `cuda.h`, so including it compiles but the `CU*` driver symbols are missing. Sources
    built through torch's `CUDAExtension` are hipified automatically; stand-alone HIP builds are not.
    When the project model finds that the build hipifies the sources (a torch `CUDAExtension` in setup.py,
    a build file running hipify), an include hipify swaps is no error. In a project that already builds for
    ROCm that way (a build file defines a macro or lists sources for ROCm, an arm of a Python build file (setup.py,
    a `cpp_extension.load` script) whose test names ROCm builds something, CMake builds the HIP language:
    `rocmlint project` shows it as `rocm_build`), the ROCm build compiles every file hipify reaches as hipify
    rewrites it, whether or not the file tests a ROCm macro, so the include is left out there and `check --verbose`
    names the evidence. Files the build compiles for NVIDIA only are not checked for ROCm at all. Before a first port,
    and in a file the port left to NVIDIA (one with a hand-written HIP twin: a `.hip` file of its name beside it, a
    file of its name in a `hip/` or `rocm/` folder beside or in its own, a name saying hip or rocm where its own says
    cuda (`k_cuda.cu`, `k_hip.cpp`) or adding it (`k_rocm.cpp`), or a folder rewriting its own (`attention/hip_fmha/`
    for `attention/cuda/fmha/`), unless a source list of the ROCm build names the
    file itself or a build step hipifies its folder (the HIP copy is then that step's output, committed); or a header only such files, or files built for NVIDIA only, include), it is
    reported at `info`, with the build's evidence, as a note of what a port there touches (and for code that must
    also build as hand-written HIP). A torch JIT build (`cpp_extension.load`) compiles the sources its call names, or, when its
    `sources` are built before the call (`sources=params.sources`), the source lists its module builds (a glob
    `os.path.join(here, "csrc/*.cu")` names that folder's sources); its `if torch.version.hip:` arm is a ROCm
    build path. `show-hipified = true` (`--show-hipified`) reports such notes
    everywhere, `show-hipified = false` (`--hide-hipified`) nowhere.

    ## Example
    ```cuda
    #include <cuda_runtime.h>
    #include <cuda_bf16.h>
    ```

    ## Fix
    Each include line goes behind the ROCm test (`rocm-condition`, default shown), with the HIP header
    from the same table the rule reads in the ROCm branch. Every include gets a gate of its own, so each
    fix stands alone (it can be taken, dropped or `noqa`ed by itself, and ROC205's library includes next
    to it are fixed by that rule):
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #include <hip/hip_runtime.h>
    #else
    #include <cuda_runtime.h>
    #endif
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #include <hip/hip_bf16.h>
    #else
    #include <cuda_bf16.h>
    #endif
    ```
    A header HIP needs no counterpart for (`device_launch_parameters.h`, `texture_fetch_functions.h`)
    gets an empty ROCm branch.

    ## Fix safety
    Safe: the NVIDIA branch keeps the original include line byte for byte, and nothing in the ROCm test is
    defined by an NVIDIA build, so nvcc sees the same tokens (only line numbers move). The ROCm branch
    includes the HIP header HIPIFY maps the CUDA header to; the test includes `__HIP__`, which HIP-Clang
    always defines, because `__HIP_PLATFORM_AMD__` may only be defined once a HIP header is in. HIP 5.x
    lacks some newer headers (`hip/hip_bf16.h` is HIP 6), so old ROCm may still fail on those.
    """

    code = "ROC204"
    name = "cuda-runtime-header"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    # The header names themselves: a file that mentions none of them includes none of them.
    triggers = tuple(sorted({header.split("/")[0].encode() for header in _runtime_headers()}))

    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        hip = _runtime_headers().get(include.header.strip())
        if hip is None:
            return
        header = include.header.strip()
        if hip:
            message = f"`{header}` is not on ROCm's include path; include `{hip}` in a ROCm branch"
            fix = ctx.gated_fix(f"include `<{hip}>` on ROCm", include.directive, f"#include <{hip}>")
        else:
            message = f"`{header}` does not exist on ROCm (HIP needs no replacement); include it on NVIDIA only"
            # Nothing to include on ROCm: the ROCm branch is left empty.
            fix = ctx.gated_fix("include it on NVIDIA only", include.directive, "")
        if hip and ctx.hipified_build:
            ctx.report_hipified(include, message, fix=fix)  # hipify swaps the include at build time
            return
        ctx.report(include, message, fix=fix)


CudaRuntimeHeader.valid = (
    Valid(
        """
        #ifdef USE_ROCM
        #include <hip/hip_runtime.h>
        #include <hip/hip_fp16.h>
        #else
        #include <cuda_runtime.h>
        #include <cuda_fp16.h>
        #endif
        __global__ void scale(__half* x, float s, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] = __float2half(__half2float(x[i]) * s);
        }
        """,
    ),
    # DeepSpeed style: the CUDA-only header sits under a negated HIP platform test.
    Valid(
        """
        #include "ds_kernel_utils.h"
        #if !defined(__HIP_PLATFORM_AMD__)
        #include <cuda_bf16.h>
        #endif
        template <typename T> __device__ T load_elem(const T* p) { return *p; }
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        #include <cooperative_groups.h>
        #include <curand_kernel.h>
        namespace cg = cooperative_groups;
        #endif
        """,
    ),
    # A ROCm source (includes the HIP runtime unguarded) is past porting; project headers that merely
    # look alike are not CUDA's.
    Valid(
        """
        #include <hip/hip_runtime.h>
        #include "cuda_runtime_compat.h"
        #include "cuda_utils.h"
        __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }
        """,
    ),
    Valid(
        """
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
        #include <hip/hip_cooperative_groups.h>
        #elif defined(__CUDACC__)
        #include <cooperative_groups.h>
        #endif
        """,
    ),
)
CudaRuntimeHeader.invalid = (
    Invalid(
        """
        #include <cuda_runtime.h>
        #include <torch/extension.h>
        __global__ void relu(float* x, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] = fmaxf(x[i], 0.f);
        }
        """,
        expect=("1:1-1:26",),
        message="hip/hip_runtime.h",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hip/hip_runtime.h>
        #else
        #include <cuda_runtime.h>
        #endif
        #include <torch/extension.h>
        __global__ void relu(float* x, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] = fmaxf(x[i], 0.f);
        }
        """,
    ),
    # Consecutive includes: one gate each, so each fix stands alone.
    Invalid(
        """
        #pragma once
        #include <ATen/ATen.h>
        #include <cuda.h>
        #include <cuda_bf16.h>
        """,
        expect=("3:1-3:18", "4:1-4:23"),
        message="`cuda.h`",
        fixed="""
        #pragma once
        #include <ATen/ATen.h>
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hip/hip_runtime.h>
        #else
        #include <cuda.h>
        #endif
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hip/hip_bf16.h>
        #else
        #include <cuda_bf16.h>
        #endif
        """,
    ),
    Invalid(
        """
        #include <cuda_fp16.h>
        #if !defined(USE_ROCM)
        #include <cuda_bf16.h>
        #endif
        """,
        expect=("1:1-1:23",),
        message="hip/hip_fp16.h",
    ),
    Invalid(
        """
        #include "curand_kernel.h"
        __global__ void dropout(curandStatePhilox4_32_10_t* states, float* x, float p, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n && curand_uniform(&states[i]) < p) x[i] = 0.f;
        }
        """,
        expect=("1:1-1:27",),
        message="hiprand/hiprand_kernel.h",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #include <hiprand/hiprand_kernel.h>
        #else
        #include "curand_kernel.h"
        #endif
        __global__ void dropout(curandStatePhilox4_32_10_t* states, float* x, float p, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n && curand_uniform(&states[i]) < p) x[i] = 0.f;
        }
        """,
    ),
    Invalid(
        """
        #ifdef ENABLE_PROFILING
        #include <cuda_profiler_api.h>
        #endif
        #include <device_launch_parameters.h>
        """,
        expect=("2:1-2:31", "4:1-4:38"),
    ),
    # Nothing to include on ROCm: the ROCm branch is empty.
    Invalid(
        """
        #include <device_launch_parameters.h>
        """,
        expect=("1:1-1:38",),
        message="NVIDIA only",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)

        #else
        #include <device_launch_parameters.h>
        #endif
        """,
    ),
)
