"""ROC211 lane-shift-32bit."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.masks import (
    is_lane_shift_32,
    lane_shift_offsets,
    lane_shift_rewrites,
    mask_fix,
    shifts_by_warp_size,
)
from rocmlint.cuda.warp import wave_size_at
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class LaneShift32Bit(Rule):
    """
    ## What it does
    Flags lane-bit shifts on a 32-bit operand: `1 << lane`, `1u << (threadIdx.x % warpSize)`,
    `1U << lane_id`, `(unsigned)1 << __lane_id()`, where the shift amount is a lane index, and lane masks
    shifted by an amount counted from the built-in `warpSize` (`0xffffffff >> (warpSize - len)`, the low
    `len` lanes).

    ## Why is this bad on ROCm?
    Lane indices reach 63 on a 64-lane wave (GCN/CDNA). Shifting a 32-bit `1` by 32 or more is undefined
    behaviour and in practice yields garbage or zero, so lane masks built this way (for comparing with a
    ballot, for prefix counts) are wrong for the upper half of the wave; `warpSize - len` is 64 - len there,
    past 31 for every `len` below 33, and the 32-bit mask cannot name lanes 32-63 anyway. HIP's porting guide has a
    dedicated "Lane masks bit-shift" section recommending `1ull` or a 64-bit `lane_mask_t`
    (rocm-systems `hip_porting_guide.rst`). Shifts by other amounts (`1 << log2_size`) are not reported.
    Code only wave32 targets compile (the `#else` of `#if defined(__GFX9__)`, `__GFX11__`,
    `__AMDGCN_WAVEFRONT_SIZE == 32`) is not reported: lanes stop at 31 there.

    ## Example
    ```cuda
    __device__ bool lane_is_set(unsigned long long ballot, int lane_id) {
      return (ballot & (1U << lane_id)) != 0;
    }
    ```

    ## Fix
    ```cuda
    __device__ bool lane_is_set(unsigned long long ballot, int lane_id) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      return (ballot & (1ull << lane_id)) != 0;
    #else
      return (ballot & (1U << lane_id)) != 0;
    #endif
    }
    ```
    When the shifted constant is 1 (`1`, `1u`, `(unsigned)1`, `uint32_t{1}`, a same-file macro for 1),
    the statement (or the smallest statement around it that stands on its own lines) is wrapped in a
    ROCm gate whose branch shifts `1ull`; the branch gets the statement's other mask fixes too (ROC201,
    ROC202, ROC210). Other constants (`3u << lane`) are reported without a fix: widening them changes
    which bits survive for lanes below 32 too.

    ## Fix safety
    Safe: the NVIDIA branch keeps the original tokens (only `__LINE__` values below it move); the ROCm
    branch only widens the shifted 1, which gives the same bit for lanes 0-31 and the right one above.
    Where the result is stored in a 32-bit variable, widen that too (ROC201 does it for ballot masks).
    """

    code = "ROC211"
    name = "lane-shift-32bit"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"lane", b"Lane", b"LANE", b"warpSize", b"WARP_SIZE", b"WarpSize", b"PER_WARP")
    applies_to_rocm_sources = True

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A lane shift holds its `<<` (`lane_shift_offsets`)."""
        anchors = lane_shift_offsets(ctx)
        return {"binary_expression": anchors} if anchors else {}

    def visit_binary_expression(self, node: Node, ctx: CudaContext) -> None:
        if not is_lane_shift_32(node, ctx) or wave_size_at(ctx, node) == 32:
            return  # lanes of a wave32 target stop at 31
        if shifts_by_warp_size(node, ctx):
            ctx.report(
                node,
                f"`{ctx.text(node)}` shifts a 32-bit mask by an amount counted from `warpSize`, which is 64 on CDNA: "
                "the shift reaches 32 or more (undefined) and lanes 32-63 have no bit; build a 64-bit mask on ROCm",
            )
            return
        ctx.report(
            node,
            f"`{ctx.text(node)}` shifts a 32-bit value by a lane index, which reaches 63 on a 64-lane wave "
            "(undefined for lanes >= 32); shift a 64-bit one (`1ull << ...` or `lane_mask_t`)",
            fix=mask_fix(node, ctx, "shift `1ull` on ROCm", lane_shift_rewrites(node, ctx)),
        )


LaneShift32Bit.valid = (
    # RDNA targets only (`__GFX11__`, `__GFX12__`): lanes stop at 31.
    Valid(
        """
        __device__ bool lane_set(unsigned mask) {
        #if defined(__GFX11__) || defined(__GFX12__)
          int lane = threadIdx.x & 31;
          return mask & (1u << lane);
        #else
          return false;
        #endif
        }
        """,
    ),
    # Another accelerator's arm (SYCL): a chain testing its macro before the ROCm one tells the builds apart, and a
    # ROCm build takes its own arm.
    Valid(
        """
        #if defined(XYZ_USE_SYCL)
        __device__ unsigned lane_bit(int lane) { return 0x1u << lane; }
        #elif defined(__HIP_PLATFORM_AMD__)
        __device__ unsigned long long lane_bit(int lane) { return 1ull << lane; }
        #endif
        """,
    ),
    # The ported apex kernel: a ROCm-side 64-bit constant chosen by the preprocessor.
    Valid(
        """
        #ifdef USE_ROCM
        using bitmask_t = uint64_t;
        #define ONE_BITMASK 1UL
        #else
        using bitmask_t = unsigned int;
        #define ONE_BITMASK 1U
        #endif
        __device__ void unpack(const bitmask_t* relu_mask, bool* rectified, int j) {
          const int lane_id = threadIdx.x % warpSize;
          rectified[j] = ((shfl_sync(relu_mask[0], j) & (ONE_BITMASK << lane_id)) != 0);
        }
        """,
    ),
    Valid(
        """
        __device__ int lanes_below(unsigned long long votes, int lane) {
        #if defined(USE_ROCM)
          return __popcll(votes & ((1ull << lane) - 1));
        #else
          return __popc(votes & ((1u << lane) - 1));
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ bool is_leader(unsigned mask) {
        #if !defined(__HIP_PLATFORM_AMD__)
          return mask & (1 << (threadIdx.x % 32));
        #else
          return false;
        #endif
        }
        """,
    ),
    # 64-bit operands and non-lane shift amounts.
    Valid(
        """
        __global__ void lane_bits(unsigned long long* out, int log2_size, int num_lanes) {
          const int lane = threadIdx.x % warpSize;
          out[0] = 1ull << lane;
          out[1] = (uint64_t)1 << __lane_id();
          out[2] = 1 << log2_size;
          out[3] = (1u << num_lanes) - 1;
        }
        """,
    ),
    # A 64-bit mask counted from `warpSize`, a 32-bit one from a 32 constant, and a right shift of data by a count.
    Valid(
        """
        __device__ float low_lanes(float v, int len, unsigned bits, int n) {
          const unsigned long long wide = ~0ull >> (warpSize - len);
          const unsigned narrow = 0xffffffffu >> (32 - len);
          return __shfl_down_sync(wide, v, 1) + (narrow & (bits >> n));
        }
        """,
    ),
    # A bit index into a 32-bit word of a bitset is not a lane.
    Valid(
        """
        __global__ void set_bits(unsigned* bitmap, const int* idx, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) atomicOr(&bitmap[idx[i] / 32], 1u << (idx[i] % 32));
        }
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        __device__ unsigned my_bit() { return 1U << (threadIdx.x % warpSize); }
        #endif
        """,
    ),
    # One bit per thread in 32-bit words: `% 32` bounds the shift (ROC208 reviews the literal 32).
    Valid(
        """
        __global__ void mark_done(unsigned* done_bits) {
          atomicOr(&done_bits[threadIdx.x / 32], 1u << (threadIdx.x % 32));
        }
        """,
    ),
)
LaneShift32Bit.invalid = (
    # The apex relu-mask unpacking: `1U << lane_id` against a shuffled mask.
    Invalid(
        """
        __device__ void unpack(unsigned int relu_mask, bool* rectified) {
          const int lane_id = threadIdx.x % THREADS_PER_WARP;
          for (int j = 0; j < 4; ++j) {
            rectified[j] = ((__shfl(relu_mask, j) & (1U << lane_id)) != 0);
          }
        }
        """,
        expect=("4:46-4:59",),
        message="`1U << lane_id`",
        fixed="""
        __device__ void unpack(unsigned int relu_mask, bool* rectified) {
          const int lane_id = threadIdx.x % THREADS_PER_WARP;
          for (int j = 0; j < 4; ++j) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
            rectified[j] = ((__shfl(relu_mask, j) & (1ull << lane_id)) != 0);
        #else
            rectified[j] = ((__shfl(relu_mask, j) & (1U << lane_id)) != 0);
        #endif
          }
        }
        """,
    ),
    Invalid(
        """
        __device__ int rank_in_warp(unsigned long long votes) {
          return __popcll(votes & ((1u << (threadIdx.x % warpSize)) - 1));
        }
        """,
        expect=("2:29-2:59",),
    ),
    Invalid(
        """
        __global__ void mark(int* flags, unsigned long long* out) {
          int laneId = threadIdx.x & (warpSize - 1);
          if (flags[threadIdx.x]) atomicOr(out, 1 << laneId);
        }
        """,
        expect=("3:41-3:52",),
        fixed="""
        __global__ void mark(int* flags, unsigned long long* out) {
          int laneId = threadIdx.x & (warpSize - 1);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          if (flags[threadIdx.x]) atomicOr(out, 1ull << laneId);
        #else
          if (flags[threadIdx.x]) atomicOr(out, 1 << laneId);
        #endif
        }
        """,
    ),
    Invalid(
        """
        #define ONE 1u
        __device__ bool lane_set(unsigned long long m) {
          return m & (ONE << __lane_id());
        }
        """,
        expect=("3:15-3:33",),
        fixed="""
        #define ONE 1u
        __device__ bool lane_set(unsigned long long m) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return m & (1ull << __lane_id());
        #else
          return m & (ONE << __lane_id());
        #endif
        }
        """,
    ),
    Invalid(
        """
        __device__ bool neighbour_set(unsigned long long m, int lane) {
          return (m & (uint32_t{1} << (lane + 1))) != 0;
        }
        """,
        expect=("2:16-2:41",),
    ),
    # The low `len` lanes of a 32-bit mask: `warpSize - len` reaches 63 on CDNA (no fix: the mask's type must widen).
    Invalid(
        """
        template <typename T>
        __device__ T warp_min(T value, int len) {
          const uint32_t mask = (0xffffffff >> (warpSize - len));
          return min(value, __shfl_down_sync(mask, value, 1));
        }
        """,
        expect=("3:26-3:56",),
        message="counted from `warpSize`",
        no_fix=True,
    ),
    # Two bits per lane: no fix (a 64-bit `3ull` keeps bit 32 that the 32-bit shift drops at lane 31).
    Invalid(
        """
        __device__ bool pair_set(unsigned long long m, int lane) {
          return m & (3u << lane);
        }
        """,
        expect=("2:15-2:25",),
    ),
    Invalid(
        """
        __device__ unsigned long long my_bit() {
          return 1U << (threadIdx.x & (warpSize - 1));
        }
        """,
        path="kernel.hip",
        expect=("2:10-2:46",),
    ),
)
