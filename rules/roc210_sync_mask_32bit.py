"""ROC210 sync-mask-32bit."""

from __future__ import annotations

from rocmlint.cuda import masks
from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Node
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_WHY = (
    "HIP's `*_sync` intrinsics static_assert a 64-bit mask and a wave has 64 lanes: on ROCm call the "
    "non-sync intrinsic (`__shfl_xor`, `__ballot`, ...) or pass a 64-bit mask"
)
_LANES_0_TO_31 = (
    "which names only lanes 0-31 of a 64-lane wave; on ROCm call the non-sync intrinsic or pass "
    "`__activemask()` / a full 64-bit mask"
)
_MASK_MACRO = (
    "`{}` is a 32-bit lane mask (`{}`); HIP's `*_sync` intrinsics need a 64-bit mask and a wave has 64 lanes: on "
    "ROCm call the non-sync intrinsic or define a 64-bit mask"
)


class SyncMask32Bit(Rule):
    """
    ## What it does
    Flags 32-bit lane masks (`0xffffffff`, `uint32_t(-1)`, `unsigned` variables, a `FULL_MASK` macro
    that expands to a 32-bit literal) passed to `__shfl*_sync`, `__ballot_sync`, `__any_sync`,
    `__all_sync`, `__match_*_sync`, `__reduce_*_sync` or `__syncwarp(mask)`; also a widened literal that
    still names only 32 lanes (`0xffffffffull`). A `#define ...MASK 0xffffffff` no `*_sync` call of this file uses
    is reported (it is used elsewhere), unless ROCm compiles none of its uses here (a wrapper's mask ROCm drops) or
    no file of the project names it but its definition (read with the project: a mask passed nowhere). A mask a warp-size chain picks (`#if WARP_SIZE == 64`) is its wave64 arm's.
    A call of the file's own `*_sync` for ROCm, one that never reads its mask, is the project's stand-in, not HIP's.

    ## Why is this bad on ROCm?
    HIP's `*_sync` warp functions `static_assert` a 64-bit mask (`amd_warp_sync_functions.h`; on by default
    since ROCm 7.0, forced on for PyTorch extensions by `-DHIP_ENABLE_WARP_SYNC_BUILTINS=1`): a 32-bit mask
    stops the kernel from compiling. A widened `0xffffffffull` names only lanes 0-31 of a 64-lane wave, and
    HIP's runtime check wants the mask to equal the active lanes. Ports call the plain `__shfl_xor`
    etc. on ROCm (PyTorch's `WARP_SHFL_XOR`, per-vendor wrapper macros; HIP's "Warp cross-lane functions").

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
    A full-warp mask (`0xffffffff` with any suffix, `~0u`, `uint32_t(-1)`, the all-ones 64-bit literal,
    `__activemask()`, a same-file macro or `const` holding one) puts the smallest statement on its own lines
    behind a ROCm gate calling the non-sync intrinsic without the mask (every HIP release has them; the
    `*_sync` ones came with ROCm 7), or `__builtin_amdgcn_wave_barrier()` for `__syncwarp(m)` (a wave runs
    in lockstep: only the compiler needs a barrier). That branch also gets the statement's other mask fixes
    (ROC201's `unsigned long long` ballot variable). A macro body gets a gated ROCm `#define`. Partial
    masks, `__match_*_sync`, `__reduce_*_sync` and a bare `#define FINAL_MASK 0xffffffff` get no fix.

    ## Fix safety
    Safe for full-warp masks: the NVIDIA branch keeps the original tokens (only `__LINE__` below it
    moves) and the ROCm branch does what PyTorch's `WARP_SHFL_*` do; with every lane named, the sync
    form adds only the mask check. A partial mask needs review: build a 64-bit `lane_mask_t` (ROC211).
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
        anchors = ctx.word_offsets(*masks.SYNC_MASK_INTRINSICS)
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        arguments = ctx.arguments(node) if name in masks.SYNC_MASK_INTRINSICS else []
        if not arguments or masks.is_portable_wrapper_use(node, ctx) or masks.calls_maskless_shim(node, ctx):
            return
        width = masks.value_width(arguments[0], ctx)
        if width == 32:
            message = f"`{name}` gets the 32-bit mask {ctx.quoted(arguments[0])}; {_WHY}"
        elif width is not None and ctx.int_value(arguments[0]) == 0xFFFFFFFF:
            message = f"`{name}` gets {ctx.quoted(arguments[0])}, {_LANES_0_TO_31}"
        else:
            return
        ctx.report(node, message, fix=masks.sync_fix(node, ctx))

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        found = masks.sync_call_in_macro(define.value)
        if found is not None:
            message = f"macro `{define.name}` passes the 32-bit mask `{found[1]}` to `{found[0]}`; {_WHY}"
            ctx.report(define.directive, message, fix=masks.sync_macro_fix(define, ctx))
        elif masks.mask_macro_used_elsewhere(define, ctx):
            ctx.report(define.directive, _MASK_MACRO.format(define.name, define.value))


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
    # Macro wrappers chosen per vendor: the ROCm definition drops the mask, or the whole CUDA argument of a vendor
    # selector (`XYZ_HIP_OR_CUDA`), which ROCm never compiles.
    Valid(
        """
        #if defined USE_ROCM
        #define SHFL_DOWN(mask, val, i) __shfl_down(val, i)
        #define XYZ_HIP_OR_CUDA(h, c) h
        #else
        #define SHFL_DOWN __shfl_down_sync
        #define FULL_MASK 0xffffffff
        #define XYZ_HIP_OR_CUDA(h, c) c
        #endif
        __device__ float pair_sum(float v, int i) {
          return v + SHFL_DOWN(0xffffffff, v, i) + XYZ_HIP_OR_CUDA(__shfl_xor(v, 1), __shfl_xor_sync(0xffffffff, v, 1));
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
    # No mask (`__syncwarp()` is declared in HIP), or a mask only NVIDIA compiles.
    Valid(
        """
        __device__ void stage(float* smem) {
          smem[threadIdx.x] = 0.f;
          __syncwarp();
        #if !defined(__HIP_PLATFORM_AMD__)
          __syncwarp(0xffffffffu);
        #endif
        }
        """,
    ),
    # A ported macro body under #ifndef USE_ROCM; the file's own `*_sync` for ROCm, which drops the mask.
    Valid(
        """
        #ifndef USE_ROCM
        #define SYNCWARP(mask) __syncwarp(mask)
        #define SHFL_DOWN(val, laneMask, width) __shfl_down_sync(0xffffffff, val, laneMask, width)
        #else
        #define SYNCWARP(mask)
        #define SHFL_DOWN(val, laneMask, width) __shfl_down(val, laneMask, width)
        static __device__ int __any_sync(unsigned mask, int predicate) { return __any(predicate); }
        #endif
        __device__ bool any_lane(int p) { return __any_sync(0xffffffff, p); }
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
