"""ROC202 mask-bit-intrinsic-32 (also covers the catalog's ROC212: `__ffs`/`__clz`/`__brev`/`__fns`)."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.masks import (
    BIT_INTRINSICS_64,
    bit_intrinsic_rewrites,
    is_wave_mask,
    mask_fix,
)
from rocmlint.cuda.warp import wave_size_at
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class MaskBitIntrinsic32(Rule):
    """
    ## What it does
    Flags the 32-bit bit intrinsics `__popc`, `__ffs`, `__clz`, `__brev` and `__fns` applied to a wave
    mask: a `__ballot*`/`__activemask`/`__match_any*`/`__match_all*` result, bit operations on one, a
    variable such a result is stored in within the same function, or a variable of a lane-mask type.

    ## Why is this bad on ROCm?
    HIP's ballot-style intrinsics return 64-bit masks because a GCN/CDNA wave has 64 lanes
    (`amd_warp_functions.h`). The 32-bit bit intrinsics take an `unsigned int`, so the mask is truncated
    to lanes 0-31: `__popc` undercounts, `__ffs` misses the first active lane when it is above 31,
    `__clz`/`__brev` compute against the wrong width. HIP provides the 64-bit forms `__popcll`,
    `__ffsll`, `__clzll`, `__brevll` and `__fns64` (`amd_device_functions.h`). The same intrinsics on
    ordinary integers (bit tricks on sizes, counts) are fine and not reported.
    Code only wave32 targets compile (the `#else` of `#if defined(__GFX9__)`, `__GFX11__`,
    `__AMDGCN_WAVEFRONT_SIZE == 32`) is not reported: the mask fits 32 bits there.

    ## Example
    ```cuda
    __device__ int rank_in_warp(bool pred) {
      unsigned mask = __ballot_sync(0xffffffff, pred);
      return __popc(mask & ((1u << (threadIdx.x % warpSize)) - 1));
    }
    ```

    ## Fix
    ```cuda
    __device__ int rank_in_warp(bool pred) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      unsigned long long mask = __ballot(pred);
    #else
      unsigned mask = __ballot_sync(0xffffffff, pred);
    #endif
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      return __popcll(mask & ((1ull << (threadIdx.x % warpSize)) - 1));
    #else
      return __popc(mask & ((1u << (threadIdx.x % warpSize)) - 1));
    #endif
    }
    ```
    (What `rocmlint check --fix` writes with ROC201, ROC202, ROC210 and ROC211 on; the declaration is
    ROC201's fix.) The fix wraps the statement holding the call (or the smallest statement around it
    that stands on its own lines) in a ROCm gate whose branch calls the 64-bit form: `__popc` ->
    `__popcll`, `__ffs` -> `__ffsll` (the argument cast to `unsigned long long` unless it is already
    64-bit: HIP overloads `__ffsll` for signed and unsigned, so a 32-bit argument is ambiguous), `__fns`
    -> `__fns64`. The ROCm branch gets the other mask fixes of the statement too (`1ull <<` for lane
    shifts, non-sync intrinsics for full-warp masks). `__clz(m)` -> `(__clzll(m) - 32)` and `__brev(m)`
    -> `__brevll(m)` are offered as unsafe fixes.

    ## Fix safety
    Sometimes: safe for some intrinsics, unsafe for others. Safe for `__popc`, `__ffs` and `__fns`: the
    NVIDIA branch keeps the original tokens, and the `ll`/`64` variant returns the same value for a mask
    of lanes 0-31 (a count, a 1-based lowest lane, the n-th set lane) and the right one for lanes 32-63.
    Unsafe for `__clz` and `__brev`: their results count from the top bit, so `(__clzll(m) - 32)` keeps
    every value for lanes 0-31 but goes negative for a higher lane, and `__brevll` moves the reversed
    bits to the upper half; the code around them (`31 - __clz(m)`, a shift) needs a look.
    """

    code = "ROC202"
    name = "mask-bit-intrinsic-32"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    language = "cuda"
    triggers = (b"__popc", b"__ffs", b"__clz", b"__brev", b"__fns")
    applies_to_rocm_sources = True

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported call holds the intrinsic's name."""
        anchors = ctx.offsets(*(name.encode() for name in BIT_INTRINSICS_64))
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        wide = BIT_INTRINSICS_64.get(name or "")
        if wide is None:
            return
        arguments = ctx.arguments(node)
        if not arguments or not is_wave_mask(arguments[0], ctx) or wave_size_at(ctx, node) == 32:
            return  # a wave32 target's mask fits 32 bits
        ctx.report(
            node,
            f"`{name}` truncates a wave mask to lanes 0-31; ROCm masks are 64-bit (64-lane waves): use `{wide}`",
            fix=mask_fix(node, ctx, f"use `{wide}` on ROCm", bit_intrinsic_rewrites(node, ctx)),
        )


MaskBitIntrinsic32.valid = (
    # Under `__AMDGCN_WAVEFRONT_SIZE == 32` a wave's mask fits 32 bits.
    Valid(
        """
        __device__ int first_hit(bool hit) {
        #if __AMDGCN_WAVEFRONT_SIZE == 32
          return __ffs(__ballot(hit)) - 1;
        #else
          return __ffsll(__ballot(hit)) - 1;
        #endif
        }
        """,
    ),
    # Gated: ROCm uses the 64-bit variant.
    Valid(
        """
        __device__ int warp_vote_count(bool pred) {
        #ifdef USE_ROCM
          return __popcll(__ballot(pred));
        #else
          return __popc(__ballot_sync(0xffffffff, pred));
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ int first_active_lane() {
        #if !defined(__HIP_PLATFORM_AMD__)
          return __ffs(__activemask()) - 1;
        #else
          return __ffsll(__activemask()) - 1;
        #endif
        }
        """,
    ),
    # Bit tricks on ordinary integers (apex welford's lastpow2, layer-norm's num_active) are not masks.
    Valid(
        """
        __device__ __forceinline__ int lastpow2(int n) {
          int out = 1 << (31 - __clz(n));
          if (n == out) out >>= 1;
          return out;
        }
        __device__ int highest_bit(int num_active) {
          return (8 * sizeof(num_active)) - __clz(num_active - 1);
        }
        __device__ int bits_set(unsigned flags) { return __popc(flags) + __brev(flags & 0xff); }
        """,
    ),
    # The 64-bit variants on masks are what ROCm wants.
    Valid(
        """
        __global__ void stream_compact(const int* in, int* out, int* count) {
          const auto votes = __ballot(in[threadIdx.x] > 0);
          const int rank = __popcll(votes & __lanemask_lt());
          if (__lane_id() == __ffsll(votes) - 1) atomicAdd(count, __popcll(votes));
          out[rank] = in[threadIdx.x];
        }
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        __device__ unsigned leader(unsigned mask) { return __fns(mask, 0, 1); }
        #endif
        """,
    ),
)
MaskBitIntrinsic32.invalid = (
    Invalid(
        """
        __global__ void count_positive(const float* x, int* out) {
          unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] > 0.f);
          if (threadIdx.x % warpSize == 0) atomicAdd(out, __popc(votes));
        }
        """,
        expect=("3:51-3:64",),
        message="use `__popcll`",
        fixed="""
        __global__ void count_positive(const float* x, int* out) {
          unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] > 0.f);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          if (threadIdx.x % warpSize == 0) atomicAdd(out, __popcll(votes));
        #else
          if (threadIdx.x % warpSize == 0) atomicAdd(out, __popc(votes));
        #endif
        }
        """,
    ),
    # Directly on the intrinsic.
    Invalid(
        """
        __device__ int first_active_lane() {
          return __ffs(__activemask()) - 1;
        }
        """,
        expect=("2:10-2:31",),
        message="use `__ffsll`",
        fixed="""
        __device__ int first_active_lane() {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return __ffsll(__activemask()) - 1;
        #else
          return __ffs(__activemask()) - 1;
        #endif
        }
        """,
    ),
    # A 32-bit mask variable: `__ffsll` gets an explicit 64-bit argument (HIP overloads it).
    Invalid(
        """
        __device__ int leader(const int* keys) {
          const unsigned peers = __match_any_sync(__activemask(), keys[threadIdx.x]);
          const int first = __ffs(peers) - 1;
          return first;
        }
        """,
        expect=("3:21-3:33",),
        fixed="""
        __device__ int leader(const int* keys) {
          const unsigned peers = __match_any_sync(__activemask(), keys[threadIdx.x]);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          const int first = __ffsll(static_cast<unsigned long long>(peers)) - 1;
        #else
          const int first = __ffs(peers) - 1;
        #endif
          return first;
        }
        """,
    ),
    # Through a prefix mask and a variable assigned later in a loop.
    Invalid(
        """
        __device__ int compact_rank(const int* keys, int n) {
          unsigned long long peers = 0;
          for (int i = threadIdx.x; i < n; i += blockDim.x) {
            peers = __match_any_sync(__activemask(), keys[i]);
          }
          int lane = threadIdx.x % warpSize;
          return __popc(peers & ((1ull << lane) - 1));
        }
        """,
        expect=("7:10-7:46",),
    ),
    # A variable of a lane-mask type.
    Invalid(
        """
        __device__ int highest_lane(lane_mask_t active) {
          return 31 - __clz(active);
        }
        """,
        expect=("2:15-2:28",),
        message="use `__clzll`",
        # Unsafe: `(__clzll(m) - 32)` equals `__clz(m)` for lanes 0-31, so `31 - ...` finds the top lane.
        fixed="""
        __device__ int highest_lane(lane_mask_t active) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return 31 - (__clzll(active) - 32);
        #else
          return 31 - __clz(active);
        #endif
        }
        """,
    ),
    Invalid(
        """
        __device__ unsigned nth_peer(bool p, int n) {
          auto m = __ballot(p);
          unsigned rev = __brev(~m);
          return __fns(m, 0, n) + rev;
        }
        """,
        expect=("3:18-3:28", "4:10-4:24"),
        message="use `__brevll`",
    ),
)
