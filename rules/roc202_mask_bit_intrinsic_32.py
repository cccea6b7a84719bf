"""ROC202 mask-bit-intrinsic-32 (also covers the catalog's ROC212: `__ffs`/`__clz`/`__brev`/`__fns`)."""

from __future__ import annotations

from rocmlint.cuda.frontend import CudaContext, Node
from rocmlint.cuda.masks import BIT_INTRINSICS_64, is_wave_mask
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

    ## Example
    ```cuda
    __device__ int rank_in_warp(bool pred) {
      unsigned mask = __ballot_sync(0xffffffff, pred);
      return __popc(mask & ((1u << (threadIdx.x % 32)) - 1));
    }
    ```

    ## Fix
    ```cuda
    __device__ int rank_in_warp(bool pred) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
      unsigned long long mask = __ballot(pred);
      return __popcll(mask & __lanemask_lt());
    #else
      unsigned mask = __ballot_sync(0xffffffff, pred);
      return __popc(mask & ((1u << (threadIdx.x % 32)) - 1));
    #endif
    }
    ```

    ## Fix safety
    Safe: the NVIDIA branch keeps the original tokens and the ROCm branch calls the `ll`/`64` variant,
    which returns the same value for the low 32 lanes. The variable holding the mask must be widened
    too (ROC201).
    """

    code = "ROC202"
    name = "mask-bit-intrinsic-32"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"__popc", b"__ffs", b"__clz", b"__brev", b"__fns")
    applies_to_rocm_sources = True

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        wide = BIT_INTRINSICS_64.get(name or "")
        if wide is None:
            return
        arguments = ctx.arguments(node)
        if not arguments or not is_wave_mask(arguments[0], ctx):
            return
        ctx.report(
            node,
            f"`{name}` truncates a wave mask to lanes 0-31; ROCm masks are 64-bit (64-lane waves): use `{wide}`",
        )


MaskBitIntrinsic32.valid = (
    # Gated: ROCm uses the 64-bit variant.
    Valid(
        "__device__ int warp_vote_count(bool pred) {\n"
        "#ifdef USE_ROCM\n"
        "  return __popcll(__ballot(pred));\n"
        "#else\n"
        "  return __popc(__ballot_sync(0xffffffff, pred));\n"
        "#endif\n"
        "}\n"
    ),
    Valid(
        "__device__ int first_active_lane() {\n"
        "#if !defined(__HIP_PLATFORM_AMD__)\n"
        "  return __ffs(__activemask()) - 1;\n"
        "#else\n"
        "  return __ffsll(__activemask()) - 1;\n"
        "#endif\n"
        "}\n"
    ),
    # Bit tricks on ordinary integers (apex welford's lastpow2, layer-norm's num_active) are not masks.
    Valid(
        "__device__ __forceinline__ int lastpow2(int n) {\n"
        "  int out = 1 << (31 - __clz(n));\n"
        "  if (n == out) out >>= 1;\n"
        "  return out;\n"
        "}\n"
        "__device__ int highest_bit(int num_active) {\n"
        "  return (8 * sizeof(num_active)) - __clz(num_active - 1);\n"
        "}\n"
        "__device__ int bits_set(unsigned flags) { return __popc(flags) + __brev(flags & 0xff); }\n"
    ),
    # The 64-bit variants on masks are what ROCm wants.
    Valid(
        "__global__ void stream_compact(const int* in, int* out, int* count) {\n"
        "  const auto votes = __ballot(in[threadIdx.x] > 0);\n"
        "  const int rank = __popcll(votes & __lanemask_lt());\n"
        "  if (__lane_id() == __ffsll(votes) - 1) atomicAdd(count, __popcll(votes));\n"
        "  out[rank] = in[threadIdx.x];\n"
        "}\n"
    ),
    Valid(
        "#ifndef USE_ROCM\n"
        "__device__ unsigned leader(unsigned mask) { return __fns(mask, 0, 1); }\n"
        "#endif\n"
    ),
)
MaskBitIntrinsic32.invalid = (
    Invalid(
        "__global__ void count_positive(const float* x, int* out) {\n"
        "  unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] > 0.f);\n"
        "  if (threadIdx.x % warpSize == 0) atomicAdd(out, __popc(votes));\n"
        "}\n",
        line=3,
        message="use `__popcll`",
    ),
    # Directly on the intrinsic.
    Invalid(
        "__device__ int first_active_lane() {\n  return __ffs(__activemask()) - 1;\n}\n",
        line=2,
        message="use `__ffsll`",
    ),
    # Through a prefix mask and a variable assigned later in a loop.
    Invalid(
        "__device__ int compact_rank(const int* keys, int n) {\n"
        "  unsigned long long peers = 0;\n"
        "  for (int i = threadIdx.x; i < n; i += blockDim.x) {\n"
        "    peers = __match_any_sync(__activemask(), keys[i]);\n"
        "  }\n"
        "  int lane = threadIdx.x % warpSize;\n"
        "  return __popc(peers & ((1ull << lane) - 1));\n"
        "}\n",
        line=7,
    ),
    # A variable of a lane-mask type.
    Invalid(
        "__device__ int highest_lane(lane_mask_t active) {\n  return 31 - __clz(active);\n}\n",
        line=2,
        message="use `__clzll`",
    ),
    Invalid(
        "__device__ unsigned nth_peer(bool p, int n) {\n"
        "  auto m = __ballot(p);\n"
        "  unsigned rev = __brev(~m);\n"
        "  return __fns(m, 0, n) + rev;\n"
        "}\n",
        line=3,
        message="use `__brevll`",
    ),
)
