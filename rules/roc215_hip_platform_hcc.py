"""ROC215 hip-platform-hcc."""

from __future__ import annotations

from rocmlint.cuda.conditions import (
    PLATFORM_ALTERNATIVES,
    ConditionRule,
    holds_only_its_definition,
    holds_only_pragmas,
    only_assertions_lost,
)
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
_ROCM_OLD = frozenset({"__HIP_PLATFORM_HCC__", "HIP_PLATFORM_HCC"})
# Current names that count as the alternative in a chain besides the ROCm macros (`__HIP_PLATFORM_NVIDIA__`
# is NVIDIA's, so the generic ROCm check does not see it).
_CURRENT = frozenset({"__HIP_PLATFORM_NVIDIA__"})


class HipPlatformHcc(ConditionRule, Rule):
    """
    ## What it does
    Flags `#if`/`#ifdef`/`#elif` tests of the deprecated `__HIP_PLATFORM_HCC__`, `__HIP_PLATFORM_NVCC__`
    or `HIP_PLATFORM_HCC` that do not also test `__HIP_PLATFORM_AMD__`, `USE_ROCM` or another current macro.

    Not flagged: an `#ifndef` of the old name whose one arm only defines it (a shim for code that still reads it),
    nor a test whose ROCm arm holds only `static_assert`s and whose other arms nothing: ROCm 6 skips a check, no code;
    nor one whose arms hold only compiler messages and hints (`#warning`, `#pragma`).

    The code such a test gates is analysed as its author meant it: the `#else` of `#ifdef __HIP_PLATFORM_HCC__`
    as NVIDIA-only (other rules do not report its `_sync` masks or PTX), its first arm as ROCm code. This report
    stands for the hazards of the NVIDIA side, and its fix settles them.

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
    Each `defined(__HIP_PLATFORM_HCC__)` test gets the current macro next to it, the old name kept for
    ROCm < 6.0, in every arm of the chain at once:
    ```cuda
    template <typename T>
    __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
    #if defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)
      return __shfl_xor(value, lane_mask);
    #else
      return __shfl_xor_sync(0xffffffff, value, lane_mask);
    #endif
    }
    ```
    `HIP_PLATFORM_HCC` likewise gets `__HIP_PLATFORM_AMD__`, and `__HIP_PLATFORM_NVCC__` gets
    `__HIP_PLATFORM_NVIDIA__`; `#ifndef X` becomes `#if !defined(X) && !defined(<current>)`. A test of
    the macro's value (`__HIP_PLATFORM_HCC__ == 1`) gets no automatic fix. A project whose ROCm build
    defines the old macro itself (a `-D__HIP_PLATFORM_HCC__` in setup.py or CMake, or the output of
    `hipconfig --cpp_config` passed on, found by the project model) is not flagged: its gates still work.
    Nor is a test of `__HIP_PLATFORM_NVCC__` in a project whose NVIDIA build defines it itself (a CMake
    `-D__HIP_PLATFORM_NVCC__` under a HIP platform test for nvcc), unless its chain also tests
    `__HIP_PLATFORM_HCC__`, which ROCm 6 no longer defines.

    ## Fix safety
    Safe: a plain NVIDIA build defines none of these macros, so it keeps its arm. Builds that include
    HIP's headers get the arm the code was written for: ROCm 6+ defines only `__HIP_PLATFORM_AMD__`
    (HIP on NVIDIA only `__HIP_PLATFORM_NVIDIA__`), and older HIP defines both spellings, so nothing
    changes there. ROCm 6+ enters the arms a widened `__HIP_PLATFORM_HCC__` test opens (and those after
    a negated one): the fix is withheld when such an arm, or a macro of this file it uses, holds what HIP
    lacks (inline PTX, a 32-bit `*_sync` mask, an API with no HIP equivalent), and when a test is compared
    or selected on rather than used for its truth. Those arms are judged as ROCm really compiles the file
    (the removed macro maybe defined, by ROCm < 6.0), not as the stale test meant them.
    """

    code = "ROC215"
    name = "hip-platform-hcc"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"HIP_PLATFORM_HCC", b"HIP_PLATFORM_NVCC")
    # The front end gates code as the stale tests meant it; this rule reads where ROCm 6 really goes instead
    # (`as_compiled`), so a stale test inside another one's NVIDIA arm is reported too.
    reports_gated = True
    # A stale gate breaks HIP code too: ROCm 6 takes the arm its author wrote for NVIDIA (a hand-ported `.cpp`'s
    # `#ifndef __HIP_PLATFORM_HCC__` around a `*_sync` wrapper).
    applies_to_rocm_sources = True

    def visit_directive(self, directive: Directive, ctx: CudaContext) -> None:
        if "HIP_PLATFORM_" not in directive.text:
            return
        macro = next((name for name in names_in(directive.condition) if name in _DEPRECATED), None)
        if macro is not None and ctx.build_defines_for_rocm(macro):
            return  # the project's ROCm build defines it itself: the gate still works
        if macro is not None and self._defines_itself(directive, macro, ctx):
            return  # `#ifndef OLD #define OLD #endif`: a shim for code that still reads the old name, no choice
        if (
            macro is not None
            and ctx.build_defines_for_nvidia_only(macro)
            and not self._chains(ctx).names(directive) & _ROCM_OLD
        ):
            return  # the NVIDIA build defines the old NVIDIA name itself and no arm waits for the old ROCm one
        # The deprecated names themselves do not count as the ROCm alternative.
        if macro is None or not self._candidate(directive, ctx, ignore=_DEPRECATED, also=_CURRENT, as_compiled=True):
            return
        arms = self._chains(ctx).arms_of(directive)
        if only_assertions_lost(arms, ctx):
            return  # ROCm 6 only skips the `static_assert` meant for it: no code differs
        if all(holds_only_pragmas(arm, ctx) for arm in arms):
            return  # a `#warning` for HIP on NVIDIA, a compiler hint: whichever arm ROCm takes, no code differs
        # Every `defined(<old name>)` of the chain gains `|| defined(<current name>)`, the old name kept for
        # ROCm < 6; a value test (`__HIP_PLATFORM_HCC__ == 1`) gets no fix.
        fix = self._chain_rewrite(directive, ctx, PLATFORM_ALTERNATIVES)
        self._report_condition(
            directive,
            ctx,
            f"`{macro}` was removed in ROCm 6.0 (HIP defines only `__HIP_PLATFORM_AMD__`/`__HIP_PLATFORM_NVIDIA__`), "
            f"so this test no longer picks the arm written for HIP; test `{_REPLACEMENT[macro]}` (or `USE_ROCM`) instead. "
            "The arms it gates are analysed as it meant them (the arm it leaves to NVIDIA as NVIDIA-only), so their "
            "hazards are reported here only",
            fix=fix,
        )

    def _defines_itself(self, directive: Directive, macro: str, ctx: CudaContext) -> bool:
        """`#ifndef <macro>` whose one arm only defines `<macro>`: nothing is chosen by the old name here."""
        one_arm = len(self._chains(ctx).arms_of(directive)) == 1
        return directive.kind == "ifndef" and one_arm and holds_only_its_definition(directive, macro, ctx)


HipPlatformHcc.valid = (
    Valid(
        """
        template <typename T>
        __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
        #if defined(__HIP_PLATFORM_AMD__) || defined(USE_ROCM)
          return __shfl_xor(value, lane_mask);
        #else
          return __shfl_xor_sync(0xffffffff, value, lane_mask);
        #endif
        }
        """,
    ),
    # Kept for old ROCm next to the current macro.
    Valid(
        """
        #if defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)
        #include <hip/hip_runtime.h>
        #define GPU_WARP_SIZE 64
        #else
        #define GPU_WARP_SIZE 32
        #endif
        """,
    ),
    # The chain tests the current macro first.
    Valid(
        """
        #if defined(__HIP_PLATFORM_AMD__)
        #define HIP_BACKEND_AMD 1
        #elif defined(__HIP_PLATFORM_HCC__)
        #define HIP_BACKEND_AMD 1
        #endif
        """,
    ),
    # Comments and string literals are not tests.
    Valid(
        """
        // Before ROCm 6.0 this was __HIP_PLATFORM_HCC__.
        __device__ const char* kPlatform = "__HIP_PLATFORM_HCC__";
        """,
    ),
    # Only a message for HIP on NVIDIA: whichever arm ROCm takes, no code differs.
    Valid("#ifdef __HIP_PLATFORM_NVCC__\n#warning rocBLAS on NVCC is an odd configuration\n#endif\n"),
    # ROCm 6 skips only a compile-time check: no arm holds code.
    Valid(
        """
        #ifdef __HIP_PLATFORM_HCC__
        static_assert(std::is_empty<TempStorage>::value, "no temp storage");
        #else
        // NVIDIA's TempStorage is not empty
        #endif
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        #ifdef __HIP_PLATFORM_NVCC__
        #include <hip/hip_runtime.h>
        #endif
        #endif
        """,
    ),
)
HipPlatformHcc.invalid = (
    # ROCm 6 now checks the assertion written for NVIDIA's 32-lane warp.
    Invalid(
        """
        #ifdef __HIP_PLATFORM_HCC__
        static_assert(kWarp == 64, "wavefront");
        #else
        static_assert(kWarp == 32, "warp");
        #endif
        """,
        expect=("1:1-1:28",),
    ),
    # A hand-ported HIP source: ROCm 6 compiles the `*_sync` arm with its 32-bit mask.
    Invalid(
        """
        #include <hip/hip_runtime.h>
        __device__ float shfl_xor(float v, int m) {
        #ifndef __HIP_PLATFORM_HCC__
          return __shfl_xor_sync(0xffffffff, v, m);
        #else
          return __shfl_xor(v, m);
        #endif
        }
        """,
        expect=("3:1-3:29",),
        path="layer_norm.cpp",
    ),
    Invalid(
        """
        template <typename T>
        __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
        #ifdef __HIP_PLATFORM_HCC__
          return __shfl_xor(value, lane_mask);
        #else
          return __shfl_xor_sync(0xffffffff, value, lane_mask);
        #endif
        }
        """,
        expect=("3:1-3:28",),
        message="test `__HIP_PLATFORM_AMD__`",
        fixed="""
        template <typename T>
        __device__ __forceinline__ T WARP_SHFL_XOR(T value, int lane_mask) {
        #if defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)
          return __shfl_xor(value, lane_mask);
        #else
          return __shfl_xor_sync(0xffffffff, value, lane_mask);
        #endif
        }
        """,
    ),
    Invalid(
        """
        #if defined(__HIP_PLATFORM_NVCC__)
        #include <cuda_runtime.h>
        #else
        #include <hip/hip_runtime.h>
        #endif
        """,
        expect=("1:1-1:35",),
        message="`__HIP_PLATFORM_NVIDIA__`",
        fixed="""
        #if defined(__HIP_PLATFORM_NVCC__) || defined(__HIP_PLATFORM_NVIDIA__)
        #include <cuda_runtime.h>
        #else
        #include <hip/hip_runtime.h>
        #endif
        """,
    ),
    Invalid(
        """
        #if !defined(HIP_PLATFORM_HCC)
        #define USE_CUDNN_FRONTEND 1
        #endif
        """,
        expect=("1:1-1:31",),
        fixed="""
        #if !defined(HIP_PLATFORM_HCC) && !defined(__HIP_PLATFORM_AMD__)
        #define USE_CUDNN_FRONTEND 1
        #endif
        """,
    ),
    Invalid(
        """
        __global__ void fill(float* out, float v, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
        #if defined(__HIP_PLATFORM_HCC__) && (__HIP_PLATFORM_HCC__ == 1)
          if (i < n) __builtin_nontemporal_store(v, out + i);
        #else
          if (i < n) out[i] = v;
        #endif
        }
        """,
        expect=("3:1-3:65",),
        # No fix: the value test would stay false on ROCm 6.
        no_fix=True,
    ),
    Invalid(
        """
        #ifndef __HIP_PLATFORM_HCC__  // CUDA build
        #include <cuda_fp16.h>
        #elif defined(__HIP_PLATFORM_HCC__) && !defined(NO_HALF)
        #include <hip/hip_fp16.h>
        #endif
        """,
        expect=("1:1-1:44",),
        fixed="""
        #if !defined(__HIP_PLATFORM_HCC__) && !defined(__HIP_PLATFORM_AMD__)  // CUDA build
        #include <cuda_fp16.h>
        #elif (defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)) && !defined(NO_HALF)
        #include <hip/hip_fp16.h>
        #endif
        """,
    ),
    # A stale test inside another one's NVIDIA arm: ROCm 6 still reads it.
    Invalid(
        """
        #ifndef __HIP_PLATFORM_HCC__
        #ifdef __HIP_PLATFORM_NVCC__
        #include <hip/hip_runtime.h>
        #endif
        #endif
        """,
        expect=("1:1-1:29", "2:1-2:29"),
        message="analysed as it meant them",
        fixed="""
        #if !defined(__HIP_PLATFORM_HCC__) && !defined(__HIP_PLATFORM_AMD__)
        #if defined(__HIP_PLATFORM_NVCC__) || defined(__HIP_PLATFORM_NVIDIA__)
        #include <hip/hip_runtime.h>
        #endif
        #endif
        """,
    ),
)
