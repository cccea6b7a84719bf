"""ROC210 sync-mask-32bit."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Node
from rocmlint.cuda.masks import (
    SYNC_MASK_INTRINSICS,
    is_full_warp_mask_macro,
    is_portable_wrapper_use,
    mask_fix,
    non_sync_message,
    passed_to_sync_call,
    sync_call_in_macro,
    sync_macro_fix,
    sync_rewrites,
    value_width,
)
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_SYNC_MASK_WORDS = frozenset(name.encode() for name in SYNC_MASK_INTRINSICS)


class SyncMask32Bit(Rule):
    """
    ## What it does
    Flags 32-bit lane masks (`0xffffffff`, `uint32_t(-1)`, `unsigned` variables, a `FULL_MASK` macro
    that expands to a 32-bit literal) passed to `__shfl*_sync`, `__ballot_sync`, `__any_sync`,
    `__all_sync`, `__match_*_sync`, `__reduce_*_sync` or `__syncwarp(mask)`; also a widened literal that
    still names only 32 lanes (`0xffffffffull`).

    ## Why is this bad on ROCm?
    HIP's `*_sync` warp functions are templates whose device-side `static_assert` requires a 64-bit
    integer mask (`amd_warp_sync_functions.h`; on by default since ROCm 7.0, and forced on for PyTorch
    extensions through `-DHIP_ENABLE_WARP_SYNC_BUILTINS=1`), so a 32-bit mask stops the kernel from
    compiling. Widening the literal is not enough either: `0xffffffffull` names only lanes 0-31 of a
    64-lane wave, and HIP's runtime mask check wants the mask to equal the active lanes. PyTorch
    (`WARP_SHFL_XOR`) and vLLM (`VLLM_SHFL_XOR_SYNC`) call the plain `__shfl_xor` etc. on ROCm
    (HIP `hip_cpp_language_extensions.rst`, "Warp cross-lane functions").

    A `#define ...MASK 0xffffffff` that this file never passes to a `*_sync` call itself is reported
    at the definition, since its uses live in other files.

    ## Example
    ```cuda
    template <typename T>
    __device__ T warp_reduce_sum(T val) {
      for (int offset = 16; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
      return val;
    }
    ```

    ## Fix
    ```cuda
    template <typename T>
    __device__ T warp_reduce_sum(T val) {
      for (int offset = 16; offset > 0; offset >>= 1)
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        val += __shfl_down(val, offset);
    #else
        val += __shfl_down_sync(0xffffffff, val, offset);
    #endif
      return val;
    }
    ```
    For a full-warp mask (`0xffffffff` with any suffix, `~0u`, `uint32_t(-1)`, the all-ones 64-bit
    literal, `__activemask()`, or a same-file macro or `const` variable holding one), the statement is
    wrapped in a ROCm gate (climbing to the smallest statement that stands on its own lines) whose
    branch calls the non-sync intrinsic with the remaining arguments: `__shfl_sync(m, v, l[, w])` ->
    `__shfl(v, l[, w])`, likewise `__shfl_up`, `__shfl_down`, `__shfl_xor`; `__ballot_sync(m, p)` ->
    `__ballot(p)`, `__any_sync` -> `__any`, `__all_sync` -> `__all`; `__syncwarp(m)` ->
    `__builtin_amdgcn_wave_barrier()` (a wave runs in lockstep, only the compiler needs a barrier). These
    exist on every HIP release, which has no `*_sync` warp functions before ROCm 7. The ROCm branch gets
    the statement's other mask fixes too, so `unsigned m = __ballot_sync(FULL_MASK, p);` becomes
    `unsigned long long m = __ballot(p);` whether ROC201's or this rule's fix runs (they are the same
    edit). A macro body (`#define SHFL_DOWN(v, o, w) __shfl_down_sync(0xffffffff, v, o, w)`) gets a gated
    ROCm `#define` with the non-sync call. Partial masks, `__match_*_sync`, `__reduce_*_sync` and a bare
    `#define FINAL_MASK 0xffffffff` are reported without a fix.

    ## Fix safety
    Safe for full-warp masks: the NVIDIA branch keeps the original tokens (only `__LINE__` values below
    it move), and the ROCm branch calls the non-sync intrinsic with the remaining arguments, as
    PyTorch's `WARP_SHFL_*` do; with every lane named, the sync form adds nothing but the mask check. A
    partial mask (a subset of lanes) needs review: build it as a 64-bit `lane_mask_t` instead (see
    ROC211).
    """

    code = "ROC210"
    name = "sync-mask-32bit"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"_sync(", b"_sync (", b"__syncwarp", b"MASK")  # not `__syncthreads`, in every kernel
    applies_to_rocm_sources = True

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Calls are reported by the intrinsic's name, a whole word of the file."""
        anchors = ctx.offsets(*(_SYNC_MASK_WORDS & ctx.words))
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        if name not in SYNC_MASK_INTRINSICS:
            return
        arguments = ctx.arguments(node)
        if not arguments:
            return
        width = value_width(arguments[0], ctx)
        if width is None or is_portable_wrapper_use(node, ctx):
            return
        mask = ctx.text(arguments[0])
        resolved = ctx.resolve(arguments[0])
        shown = f"`{mask}`" if resolved == mask else f"`{mask}` (= `{resolved}`)"
        if width == 32:
            message = f"`{name}` gets the 32-bit mask {shown}; {_WHY}"
        elif parse_int(resolved) == 0xFFFFFFFF:
            # Widened but still 32 lanes: HIP checks the mask against the wave's active lanes.
            message = (
                f"`{name}` gets {shown}, which names only lanes 0-31 of a 64-lane wave; on ROCm call the "
                "non-sync intrinsic or pass `__activemask()` / a full 64-bit mask"
            )
        else:
            return
        ctx.report(node, message, fix=mask_fix(node, ctx, non_sync_message(name), sync_rewrites(node, ctx)))

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        value = define.value
        if "sync" in value:
            found = sync_call_in_macro(value)
            if found is not None:
                ctx.report(
                    define.directive,
                    f"macro `{define.name}` passes the 32-bit mask `{found[1]}` to `{found[0]}`; {_WHY}",
                    fix=sync_macro_fix(define, ctx),
                )
            return
        if (
            define.parameters is None
            and is_full_warp_mask_macro(define.name, value)
            and not passed_to_sync_call(define.name, ctx)
        ):
            ctx.report(
                define.directive,
                f"`{define.name}` is a 32-bit lane mask (`{value}`); HIP's `*_sync` intrinsics need a 64-bit mask "
                "and a wave has 64 lanes: on ROCm call the non-sync intrinsic or define a 64-bit mask",
            )


_WHY = (
    "HIP's `*_sync` intrinsics static_assert a 64-bit mask and a wave has 64 lanes: on ROCm call the "
    "non-sync intrinsic (`__shfl_xor`, `__ballot`, ...) or pass a 64-bit mask"
)


SyncMask32Bit.valid = (
    # The PyTorch-style port: plain intrinsic on ROCm, the original _sync call on NVIDIA.
    Valid(
        """
        template <typename T>
        __device__ __forceinline__ T warp_reduce_sum(T val) {
        #pragma unroll
          for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        #ifdef USE_ROCM
            val += __shfl_down(val, offset);
        #else
            val += __shfl_down_sync(0xffffffff, val, offset);
        #endif
          }
          return val;
        }
        """,
    ),
    # A CUDA_VERSION test is NVIDIA-only: ROCm takes the non-sync #else.
    Valid(
        """
        template <typename T>
        __device__ __forceinline__ T WARP_SHFL_XOR_NATIVE(T value, int laneMask, int width = warpSize,
                                                          unsigned int mask = 0xffffffff) {
        #if CUDA_VERSION >= 9000
          return __shfl_xor_sync(mask, value, laneMask, width);
        #else
          return __shfl_xor(value, laneMask, width);
        #endif
        }
        """,
    ),
    # Macro wrappers chosen per vendor: the ROCm definition drops the mask.
    Valid(
        """
        #if defined USE_ROCM
        #define SHFL_DOWN(mask, val, i) __shfl_down(val, i)
        #else
        #define SHFL_DOWN __shfl_down_sync
        #define FULL_MASK 0xffffffff
        #endif
        __device__ float block_sum(float v) {
          for (int i = 16; i > 0; i >>= 1) v += SHFL_DOWN(0xffffffff, v, i);
          return v;
        }
        """,
    ),
    # PyTorch's portable wrapper and 64-bit masks are fine.
    Valid(
        """
        #include <ATen/cuda/DeviceUtils.cuh>
        __global__ void count_positive(const float* x, int* out) {
          const uint64_t kFull = 0xffffffffffffffffull;
          float v = x[threadIdx.x];
          v += WARP_SHFL_XOR(v, 1);
          unsigned long long active = __activemask();
          bool any = __any_sync(active, v > 0.f);
          if (__all_sync(kFull, any)) out[blockIdx.x] = __ballot_sync(0xffffffffffffffffULL, v > 0.f) != 0;
        }
        """,
    ),
    Valid(
        """
        __device__ void publish(int* flag) {
        #if !defined(__HIP_PLATFORM_AMD__)
          __syncwarp(0xffffffffu);
        #endif
          *flag = 1;
        }
        """,
    ),
    # No mask: `__syncwarp()` is declared in HIP.
    Valid(
        """
        __device__ void stage(float* smem) {
          smem[threadIdx.x] = 0.f;
          __syncwarp();
        }
        """,
    ),
    # A ported macro body under #ifndef USE_ROCM.
    Valid(
        """
        #ifndef USE_ROCM
        #define SYNCWARP(mask) __syncwarp(mask)
        #define SHFL_DOWN(val, laneMask, width) __shfl_down_sync(0xffffffff, val, laneMask, width)
        #else
        #define SYNCWARP(mask)
        #define SHFL_DOWN(val, laneMask, width) __shfl_down(val, laneMask, width)
        #endif
        """,
    ),
)
SyncMask32Bit.invalid = (
    Invalid(
        """
        template <typename T>
        __device__ __forceinline__ T warp_reduce_sum(T val) {
        #pragma unroll
          for (int i = WARP_SIZE / 2; i > 0; i >>= 1) val = val + __shfl_down_sync(0xffffffff, val, i);
          return val;
        }
        """,
        expect=("4:59-4:95",),
        message="`__shfl_down_sync` gets the 32-bit mask `0xffffffff`",
        fixed="""
        template <typename T>
        __device__ __forceinline__ T warp_reduce_sum(T val) {
        #pragma unroll
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          for (int i = WARP_SIZE / 2; i > 0; i >>= 1) val = val + __shfl_down(val, i);
        #else
          for (int i = WARP_SIZE / 2; i > 0; i >>= 1) val = val + __shfl_down_sync(0xffffffff, val, i);
        #endif
          return val;
        }
        """,
    ),
    # A same-file macro resolves to a 32-bit literal.
    Invalid(
        """
        #define FULL_MASK 0xffffffff
        __global__ void softmax_warp(float* x) {
          float m = x[threadIdx.x];
          for (int o = 16; o > 0; o /= 2)
            m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o));
          x[threadIdx.x] = m;
        }
        """,
        expect=("5:18-5:50",),
        message="(= `0xffffffff`)",
    ),
    # `uint32_t(-1)` and a `constexpr unsigned` constant are 32-bit too.
    Invalid(
        """
        template <typename T>
        inline __device__ T warp_shuffle_xor(const T& x, uint32_t idx) {
          return __shfl_xor_sync(uint32_t(-1), x, idx);
        }
        """,
        expect=("3:10-3:47",),
        fixed="""
        template <typename T>
        inline __device__ T warp_shuffle_xor(const T& x, uint32_t idx) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return __shfl_xor(x, idx);
        #else
          return __shfl_xor_sync(uint32_t(-1), x, idx);
        #endif
        }
        """,
    ),
    Invalid(
        """
        constexpr unsigned FINAL_MASK = 0xffffffff;
        __device__ float2 group_sum(float2 s, int mask) {
          s.x += __shfl_xor_sync(FINAL_MASK, s.x, mask, 32);
          return s;
        }
        """,
        expect=("3:10-3:52",),
    ),
    # A partial mask held in a uint32_t for __syncwarp.
    Invalid(
        """
        __device__ void reduce_partials(float* smem, float v) {
          uint32_t mask = (((uint64_t)1) << (blockDim.x / 32)) - 1;
          int lane = threadIdx.x % 32;
          if (lane < blockDim.x / 32) {
            __syncwarp(mask);
            smem[lane] = v;
          }
        }
        """,
        expect=("5:5-5:21",),
        message="`__syncwarp`",
    ),
    # The ballot in the apex relu-mask kernels: the mask argument is the hazard here.
    Invalid(
        """
        __device__ void relu_bits(const float* x, unsigned long long* out) {
          bool rectified = x[threadIdx.x] < 0.f;
          unsigned long long bits = __ballot_sync(0xFFFFFFFFU, rectified);
          if (threadIdx.x == 0) *out = bits;
        }
        """,
        expect=("3:29-3:66",),
        fixed="""
        __device__ void relu_bits(const float* x, unsigned long long* out) {
          bool rectified = x[threadIdx.x] < 0.f;
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          unsigned long long bits = __ballot(rectified);
        #else
          unsigned long long bits = __ballot_sync(0xFFFFFFFFU, rectified);
        #endif
          if (threadIdx.x == 0) *out = bits;
        }
        """,
    ),
    # Widened to 64 bits, but lanes 32-63 are still missing from the mask.
    Invalid(
        """
        __device__ float broadcast_lane0(float v) {
          return __shfl_sync(0xffffffffULL, v, 0);
        }
        """,
        expect=("2:10-2:42",),
        message="names only lanes 0-31",
        fixed="""
        __device__ float broadcast_lane0(float v) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return __shfl(v, 0);
        #else
          return __shfl_sync(0xffffffffULL, v, 0);
        #endif
        }
        """,
    ),
    # `__syncwarp` with every lane: a wave runs in lockstep, ROCm only needs a compiler barrier.
    Invalid(
        """
        __device__ void stage(float* smem, float v) {
          smem[threadIdx.x] = v;
          __syncwarp(0xffffffff);
        }
        """,
        expect=("3:3-3:25",),
        message="`__syncwarp`",
        fixed="""
        __device__ void stage(float* smem, float v) {
          smem[threadIdx.x] = v;
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          __builtin_amdgcn_wave_barrier();
        #else
          __syncwarp(0xffffffff);
        #endif
        }
        """,
    ),
    # Also ROC201's hazard: the ROCm branch widens the variable too (ROC201's fix is the same edit).
    Invalid(
        """
        #define FULL_MASK 0xffffffff
        __global__ void count_positive(const float* x, int* count) {
          unsigned int mask = __ballot_sync(FULL_MASK, x[threadIdx.x] > 0.f);
          if (threadIdx.x == 0) atomicAdd(count, __popcll(mask));
        }
        """,
        expect=("3:23-3:69",),
        fixed="""
        #define FULL_MASK 0xffffffff
        __global__ void count_positive(const float* x, int* count) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          unsigned long long mask = __ballot(x[threadIdx.x] > 0.f);
        #else
          unsigned int mask = __ballot_sync(FULL_MASK, x[threadIdx.x] > 0.f);
        #endif
          if (threadIdx.x == 0) atomicAdd(count, __popcll(mask));
        }
        """,
    ),
    # A header-wide mask macro whose uses are in other files.
    Invalid(
        """
        #include <cuda.h>
        #define THREADS 256
        #define FINAL_MASK 0xffffffff
        """,
        expect=("3:1-3:30",),
        message="`FINAL_MASK` is a 32-bit lane mask",
    ),
    # A macro body that a ROCm build sees.
    Invalid(
        """
        #define SHFL_DOWN(val, laneMask, width) __shfl_down_sync(0xffffffff, val, laneMask, width)
        """,
        expect=("1:1-1:91",),
        message="macro `SHFL_DOWN`",
        fixed="""
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #define SHFL_DOWN(val, laneMask, width) __shfl_down(val, laneMask, width)
        #else
        #define SHFL_DOWN(val, laneMask, width) __shfl_down_sync(0xffffffff, val, laneMask, width)
        #endif
        """,
    ),
)
