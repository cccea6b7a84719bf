"""ROC247 unported-cuda-call."""

from __future__ import annotations

from functools import cache

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.hip_gaps import LIBRARY_NAMES, api_type_map, hip_api_names, renamed_api_call, rocm_macro_of
from rocmlint.cuda.syntax import is_own_name
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class UnportedCudaCall(Rule):
    """
    ## What it does
    Flags calls to CUDA runtime and library functions HIP has under another name (`cufftPlan3d`, `curand_init`,
    `cudaMalloc`; HIPIFY's table, ROC216's), and the library types HIP renames (`cufftHandle`, `curandState`,
    `cudaStream_t`), in files whose own headers spell CUDA functions by their HIP names for ROCm (`#define gpuFree
    hipFree` in the `USE_HIP` arm of a portability header), where no build step hipifies the file. A name the
    project remaps for ROCm (`#define cufftHandle hipfftHandle` under `USE_HIP`), defines itself, or that ROCm never
    compiles is not flagged.

    ## Why is this bad on ROCm?
    A project that ports by its own macros compiles its CUDA sources for ROCm as written, with HIP-Clang: nothing
    renames the calls its macros do not cover, and HIP declares no `cufftDestroy` or `curand_normal`, so the ROCm
    build fails there (a real port's kernel called cuFFT directly beside its own macro header; the port added
    `gpufft*` macros for hipFFT, and later a `gpufftHandle` for the plan member its header still declared as
    `cufftHandle`). ROC216 lists the same calls as a porting checklist where hipify renames them.

    ## Example
    ```cuda
    #include "gpu_macro.cuh"  // #ifdef USE_HIP: #define gpuFree hipFree ... #else: #define gpuFree cudaFree
    PPPM::~PPPM() { cufftDestroy(plan); }
    ```

    ## Fix
    ```cuda
    // gpu_macro.cuh: #define gpufftDestroy hipfftDestroy (USE_HIP) / cufftDestroy (else)
    PPPM::~PPPM() { gpufftDestroy(plan); }
    ```

    ## Fix safety
    No automatic fix: the macro belongs in the project's portability header, with the HIP library's include.
    """

    code = "ROC247"
    name = "unported-cuda-call"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"cuda", b"cublas", b"cusparse", b"cusolver", b"curand", b"cufft", b"nvrtc")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Calls, only in a file with portability macros that nothing hipifies (most files need no parse)."""
        if ctx.hipified_build or not ctx.rocm_spelling(hip_api_names()):
            return {}
        types = ctx.offsets(*(_renamed_type_words() & ctx.words))
        return {"call_expression": None, "type_identifier": types} if types else {"call_expression": None}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        call = renamed_api_call(node, ctx)
        if call is None:
            return
        name, hip, library = call
        spelled_by = "" if ctx.hipified_build else ctx.rocm_spelling(hip_api_names())  # found once per file
        if not spelled_by:
            return  # hipify renames it, or no portability macros: a first port, whose calls ROC216 lists
        ctx.report(
            node,
            f"`{name}` ({library} API) is not declared on ROCm: this project spells CUDA "
            f"functions through its own macros ({spelled_by} is a HIP name for ROCm), so ROCm compiles this file as "
            f"written; call it through such a macro (`{hip}` on ROCm)",
        )

    def visit_type_identifier(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.text(node)
        renamed = _renamed_types().get(name)
        if renamed is None or ctx.hipified_build or is_own_name(node, ctx) or rocm_macro_of(name, node, ctx):
            return  # not a library type HIP renames, or the project declares or maps this name itself
        spelled_by = ctx.rocm_spelling(hip_api_names())
        if not spelled_by:
            return
        hip, library = renamed
        ctx.report(
            node,
            f"`{name}` ({library} type) is not declared on ROCm: this project spells CUDA names through its own "
            f"macros ({spelled_by} is a HIP name for ROCm), so ROCm compiles this file as written; name it through "
            f"such a macro (`{hip}` on ROCm)",
        )


@cache
def _renamed_types() -> dict[str, tuple[str, str]]:
    """The CUDA runtime and library types HIP names otherwise -> (HIP name, library as messages name it). Not the
    device library's (`__nv_bfloat16`): HIP's headers declare some CUDA spellings of device types themselves."""
    return {
        name: (hip, LIBRARY_NAMES[library])
        for name, (hip, library) in api_type_map().items()
        if library != "device" and hip != name
    }


@cache
def _renamed_type_words() -> frozenset[bytes]:
    return frozenset(name.encode() for name in _renamed_types())


_LAYER = """
        #ifdef USE_ROCM
        #include <hip/hip_runtime.h>
        #define gpuFree hipFree
        #else
        #define gpuFree cudaFree
        #endif"""

UnportedCudaCall.valid = (
    # No portability macros: a first port, or one hipify renames (ROC216's checklist).
    Valid(
        """
        #include <cufft.h>
        void destroy(cufftHandle plan) { cufftDestroy(plan); }
        """,
    ),
    # The call goes through the project's macros, or sits where ROCm never compiles it.
    Valid(
        _LAYER
        + """
        #ifdef USE_ROCM
        #define gpufftDestroy hipfftDestroy
        #else
        #define gpufftDestroy cufftDestroy
        #endif
        void destroy(void* p, int plan) { gpuFree(p); gpufftDestroy(plan); }
        """,
    ),
    Valid(
        _LAYER
        + """
        #ifndef USE_ROCM
        void destroy(cufftHandle plan) { cufftDestroy(plan); }
        #endif
        """,
    ),
    # A type the project maps for ROCm itself; a device type HIP's headers may spell.
    Valid(
        _LAYER
        + """
        #ifdef USE_ROCM
        #define cufftHandle hipfftHandle
        #endif
        struct Plan { cufftHandle plan; __nv_bfloat16 scale; };
        """,
    ),
    # A template's own type parameter spelled like a cuRAND type.
    Valid(
        _LAYER
        + """
        template <typename curandState>
        class ScopedStates {
          curandState* states() { return _states; }
          curandState* _states;
        };
        """,
    ),
    # A macro spelling a HIP function for NVIDIA too is no port: the file may be HIP code calling CUDA on purpose.
    Valid(
        """
        #define gpuFree hipFree
        void release(void* p) { gpuFree(p); cudaFree(p); }
        """,
    ),
)
UnportedCudaCall.invalid = (
    Invalid(
        _LAYER
        + """
        __global__ void init(curandState* states, unsigned long long seed) {
          curand_init(seed, threadIdx.x, 0, &states[threadIdx.x]);
        }
        """,
        expect=("7:22-7:33", "8:3-8:58"),
        message="so ROCm compiles this file as written",
    ),
    Invalid(
        _LAYER
        + """
        void plan3d(cufftHandle* plan, int n) {
          if (cufftPlan3d(plan, n, n, n, CUFFT_C2C) != CUFFT_SUCCESS) return;
        }
        """,
        expect=("7:13-7:24", "8:7-8:44"),
        message="is not declared on ROCm",
    ),
    Invalid(
        _LAYER
        + """
        void release(void* p, cudaStream_t s) { gpuFree(p); cudaStreamSynchronize(s); }
        """,
        expect=("7:23-7:35", "7:53-7:77"),
        message="is not declared on ROCm",
    ),
    # The plan member a header still declares with cuFFT's type after the calls went through `gpufft*` macros.
    Invalid(
        _LAYER
        + """
        #ifdef USE_ROCM
        #define gpufftDestroy hipfftDestroy
        #else
        #define gpufftDestroy cufftDestroy
        #endif
        class PPPM {
          ~PPPM() { gpufftDestroy(plan); }
          cufftHandle plan;
        };
        """,
        expect=("14:3-14:14",),
        message="`cufftHandle` (cuFFT type) is not declared on ROCm",
    ),
)
