"""ROC208 warp-size-32."""

from __future__ import annotations

from rocmlint.cuda import warp
from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Node
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.cuda.syntax import assigned_name, bare, named_constants
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_CONSTANT_MESSAGE = (
    "`{}` hard-codes a 32-lane warp; CDNA wavefronts are 64 lanes: use `warpSize` at run time or a ROCm-gated "
    "`__GFX9__` selector for compile-time sizes"
)
_FROM_HALF_WAVE = "a 64-lane wavefront needs offsets from `warpSize / 2`"
_LOOPS = ("for_statement", "call_expression")  # a reduction loop, an unrolled butterfly
# What every finding needs besides its number (`also_requires`, any case): a thread/lane/warp name, `blockDim`, a shuffle.
_CONTEXT_WORDS = (b"blockdim", b"shfl", b"thread", b"lane", b"warp", b"tid", b"tx", b"wid", b"t_idx")


class WarpSize32(Rule):
    """
    ## What it does
    Flags code that hard-codes a 32-lane warp: warp-size constants defined as 32 (`#define WARP_SIZE 32`,
    `constexpr int kWarpSize = 32`, `THREADS_PER_WARP = 32` enumerators), lane and warp indices computed
    from thread ids with `% 32`, `& 31`, `& 0x1f`, `>> 5` or `/ 32`, and shuffle reductions whose first
    offset is 16; not in functions already doing 64-lane arithmetic (`& 63`, a shuffle by 32), where a 32
    is a half-wave on purpose (an MFMA tile), nor in files working on 32-lane logical warps on ROCm (every
    shuffle ROCm compiles passes a width of at most 32, one in a ROCm-only arm, and no ballot is compiled).

    ## Why is this bad on ROCm?
    CDNA GPUs (MI100 to MI355) run 64-lane wavefronts; only RDNA runs wave32. HIP's `warpSize` docs and
    porting guide ("do not assume 32 or 64") say to read `warpSize`. With a 32 constant, "lane 0 of each
    warp" elects two leaders per wavefront, `tid / 32` disagrees with `__shfl_down`/`__ballot` (whose width
    is the real wave size), and a butterfly from offset 16 reduces half the wavefront (llama.cpp#14196,
    DeepSpeed `context.h`, apex `welford.cu`, mamba `selective_scan_fwd_kernel.cuh`).

    ## Example
    ```cuda
    #define WARP_SIZE 32

    __global__ void row_sum(const float* x, float* out) {
      float v = x[threadIdx.x];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
      if (threadIdx.x % 32 == 0) atomicAdd(out, v);
    }
    ```

    ## Fix
    The autofix gates the constants' definition: a wave selector picks 64 for GFX8/GFX9 (GCN, CDNA) device
    passes and the host pass, 32 for other targets (RDNA, wave32):
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    #else
    #define WARP_SIZE 32
    #endif
    ```
    `constexpr`/`static const` declarations and enumerators get the same selector around a copy with `64`;
    lane arithmetic and reduction loops are rewritten by hand with the run-time `warpSize`:
    ```cuda
    __global__ void row_sum(const float* x, float* out) {
      float v = x[threadIdx.x];
      for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
      if (threadIdx.x % warpSize == 0) atomicAdd(out, v);
    }
    ```

    ## Fix safety
    Safe for the constant definitions: the NVIDIA `#else` keeps the definition token for token (only line
    numbers move). ROCm device passes follow HIP's selector (`__GFX8__`/`__GFX9__` mean 64 lanes).
    The host pass has no target macro: that selector alone would give 32 there, and host code sizing launches
    or instantiating kernel templates from the constant would disagree with CDNA device code (ROCm/vllm#694
    review), so the fix picks 64, the MI200/MI300 value. On RDNA (wave32) host code then sees 64 while device
    code gets 32: projects shipping for RDNA should size host launches from `hipDeviceAttributeWarpSize`.
    Expressions and loops are not fixed: `& 31` -> `% warpSize` changes the warps per block downstream.
    """

    code = "ROC208"
    name = "warp-size-32"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    applies_to_rocm_sources = True
    reports_a_cuda_habit = True
    triggers = (b"32", b"31", b"0x1f", b"0x1F", b"0x20", b">> 5", b">>5", b"16")
    also_requires = _CONTEXT_WORDS

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Lane arithmetic holds a split with its literal; a constant's name says `warp`, a reduction loop's or
        unrolled butterfly's shuffle `shfl`, in any case."""
        needed: dict[str, Anchors] = {}
        splits = warp.split_offsets(ctx)
        if splits:
            needed["binary_expression"] = splits
        for kinds, word in ((("declaration", "field_declaration", "enumerator"), b"warp"), (_LOOPS, b"shfl")):
            if offsets := ctx.offsets(word, lowered=True):
                needed.update(dict.fromkeys(kinds, offsets))
        return needed

    # --- constants ------------------------------------------------------------------------------
    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        if define.parameters is not None or not warp.is_warp_constant_name(define.name):
            return
        value = parse_int(ctx.resolve_text(define.value, define.directive))
        if value != 32 or warp.in_wave_selector(ctx, define.directive) or warp.logical_32_lane_warps(ctx):
            return
        ctx.report(define.directive, _CONSTANT_MESSAGE.format(define.name), fix=warp.wave_size_define_fix(define, ctx))

    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        for name_node, value in named_constants(node, ctx):
            name = ctx.text(name_node)
            if (
                warp.is_warp_constant_name(name)
                and ctx.int_value(value) == 32
                and not (warp.in_wave_selector(ctx, name_node) or warp.logical_32_lane_warps(ctx))
            ):
                fix = warp.wave_size_constant_fix(name_node, value, ctx)
                ctx.report(name_node, _CONSTANT_MESSAGE.format(name), fix=fix)

    # `static constexpr int kWarpSize = 32;` members and `enum { THREADS_PER_WARP = 32 };` alike.
    visit_field_declaration = visit_enumerator = visit_declaration

    # --- lane and warp index arithmetic ------------------------------------------------------------
    def visit_binary_expression(self, node: Node, ctx: CudaContext) -> None:
        split = warp.lane_split(node, ctx)
        if split is None:
            return
        left, operator = split
        if warp.builtin_index(bare(left), ctx) == "blockDim" and operator in ("/", ">>"):
            ctx.report(
                node, f"`{ctx.text(node)}` counts warps of 32 threads; a CDNA wavefront has 64: divide by `warpSize`"
            )
            return
        if not (warp.is_thread_index(left, ctx) or warp.is_lane_or_warp_name(assigned_name(node, ctx))):
            return
        if warp.in_32_lane_subgroups(node, ctx) or warp.in_wave_selector(ctx, node) or warp.in_wave64_code(node, ctx):
            return
        ctx.report(
            node,
            f"`{ctx.text(node)}` splits thread ids into 32-lane warps; on 64-lane CDNA wavefronts use "
            "`% warpSize` / `/ warpSize`",
        )

    # --- shuffle reductions sized for 32 lanes --------------------------------------------------------
    def visit_for_statement(self, node: Node, ctx: CudaContext) -> None:
        variable = warp.reduction_over_32_lanes(node, ctx)
        if variable is not None and not warp.in_wave64_code(node, ctx):
            ctx.report(node, f"shuffle reduction over `{variable}` spans only 32 lanes; {_FROM_HALF_WAVE}")

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = warp.unrolled_from_16(node, ctx)
        if name is not None and not warp.in_wave64_code(node, ctx):
            ctx.report(
                node, f"`{name}` with offset 16 starts a 32-lane reduction; a 64-lane wavefront needs offset 32 first"
            )


WarpSize32.valid = (
    # Written for 64-lane waves already (`& 63`): the 32 picks the MFMA half-wave on purpose.
    Valid(
        """
        __device__ void store(float* o, const float* a) { int lane = threadIdx.x & 63; o[lane] = a[threadIdx.x / 32]; }
        """,
    ),
    # The constant is chosen per vendor; the 32 sits in the NVIDIA-only arm.
    Valid(
        """
        #ifdef USE_ROCM
        #define WARP_SIZE 64
        #else
        #define WARP_SIZE 32
        #endif
        __global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }
        """,
    ),
    # DeepSpeed-style: a constexpr per platform, the 32 only where __HIP_PLATFORM_AMD__ is undefined.
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        constexpr int hw_warp_size = 32;
        #else
        constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;
        #endif
        """,
    ),
    # Lane ids from the real wave size; the NVIDIA-only mask arm is gated (mamba reverse_scan.cuh).
    Valid(
        """
        struct WarpScan {
          int lane_id;
          __device__ WarpScan()
        #ifndef USE_ROCM
              : lane_id(threadIdx.x & 0x1f)
        #else
              : lane_id(threadIdx.x & (warpSize - 1))
        #endif
          {}
        };
        """,
    ),
    # A per-target wave selector: the 32 is the RDNA (wave32) arm.
    Valid(
        """
        #ifdef USE_ROCM
        #if defined(__gfx942__) || defined(__gfx90a__)
        #define WARP_THREADS 64
        #elif defined(__gfx1100__)
        #define WARP_THREADS 32
        #endif
        #endif
        """,
    ),
    # `/ 32` and `>> 5` on element counts, bit positions and grid-wide indices are not lane arithmetic.
    Valid(
        """
        __global__ void pack_bits(const bool* in, unsigned* out, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          const int tid = blockIdx.x * blockDim.x + threadIdx.x;
          if (in[tid]) atomicOr(&out[tid >> 5], 1u << (tid & 31));
          int words = n / 32;
          size_t bytes = n * sizeof(float) / 32;
          if (i < words) out[i] = in[i * 32] ? 1u << (n & 31) : 0u;
        }
        """,
    ),
    # Reductions sized from warpSize / C10_WARP_SIZE, and explicit 32-wide sub-group shuffles.
    Valid(
        """
        template <typename T>
        __device__ T warp_sum(T v) {
          for (int offset = C10_WARP_SIZE >> 1; offset > 0; offset >>= 1) v += WARP_SHFL_DOWN(v, offset);
          for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor(v, offset, 32);
          return v + (threadIdx.x % warpSize);
        }
        """,
    ),
    # A reduction among the first 32 threads on purpose, and leaders of explicit 32-wide shuffle groups.
    Valid(
        """
        template <typename T>
        __device__ T block_reduce(T* x, T val, int lanes) {
          const int tid = threadIdx.x;
          T result = val;
          if (tid < 32) {
            for (int i = 16; i >= lanes; i >>= 1) result += __shfl_down(result, i);
          }
          return result;
        }
        __global__ void group_sum(float2* out, float2 v) {
          __shared__ float2 per_group[8];
          for (int m = 16; m > 0; m >>= 1) v.x += __shfl_xor(v.x, m, 32);
          if (threadIdx.x % 32 == 0) per_group[threadIdx.x / 32] = v;
        }
        """,
    ),
    # What the fix writes: a per-target selector behind the ROCm gate, the original in the NVIDIA arm.
    Valid(
        """
        struct Traits {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          static constexpr int kWarpSize = 64;
          #else
          static constexpr int kWarpSize = 32;
          #endif
        #else
          static constexpr int kWarpSize = 32;
        #endif
          static constexpr int kWarps = 256 / kWarpSize;
        };
        """,
    ),
)
WarpSize32.invalid = (
    Invalid(
        """
        #include <cuda_runtime.h>
        #define WARP_SIZE 32
        __global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }
        """,
        expect=("2:1-2:21",),
        message="`WARP_SIZE` hard-codes a 32-lane warp",
        fixed="""
        #include <cuda_runtime.h>
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
        #define WARP_SIZE 64
        #else
        #define WARP_SIZE 32
        #endif
        #else
        #define WARP_SIZE 32
        #endif
        __global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }
        """,
    ),
    Invalid(
        """
        __global__ void quantize(const float* x, int8_t* q) {
          int gid = threadIdx.x >> 5;
          int lane = threadIdx.x & 0x1f;
          q[gid * 32 + lane] = (int8_t)x[threadIdx.x];
        }
        """,
        expect=("2:13-2:29", "3:14-3:32"),
        message="`threadIdx.x >> 5`",
        no_fix=True,
    ),
    Invalid(
        """
        template <int kNRows>
        __global__ void scan_fwd(float2* smem_running_prefix, int chunk) {
          float2 running_prefix = chunk > 0 && threadIdx.x % 32 == 0
              ? smem_running_prefix[0] : make_float2(1.f, 0.f);
        }
        """,
        expect=("3:40-3:56",),
    ),
    Invalid(
        """
        template <typename T>
        __device__ T warp_reduce_sum(T val) {
          for (int offset = 16; offset > 0; offset /= 2)
            val += __shfl_xor_sync(0xffffffff, val, offset);
          return val;
        }
        """,
        expect=("3:3-4:53",),
        message="spans only 32 lanes",
    ),
    Invalid(
        """
        struct Traits {
          static constexpr int kWarpSize = 32;
          static constexpr int kWarps = 256 / kWarpSize;
        };
        """,
        expect=("2:24-2:33",),
        fixed="""
        struct Traits {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          static constexpr int kWarpSize = 64;
          #else
          static constexpr int kWarpSize = 32;
          #endif
        #else
          static constexpr int kWarpSize = 32;
        #endif
          static constexpr int kWarps = 256 / kWarpSize;
        };
        """,
    ),
    Invalid(
        """
        __global__ void softmax(const float* in, float* out) {
          const int tid = threadIdx.x;
          enum { THREADS_PER_WARP = 32 };
          int warp_id = tid / 32;
          out[warp_id] = in[tid];
        }
        """,
        expect=("3:10-3:26", "4:17-4:25"),
        fixed="""
        __global__ void softmax(const float* in, float* out) {
          const int tid = threadIdx.x;
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          enum { THREADS_PER_WARP = 64 };
          #else
          enum { THREADS_PER_WARP = 32 };
          #endif
        #else
          enum { THREADS_PER_WARP = 32 };
        #endif
          int warp_id = tid / 32;
          out[warp_id] = in[tid];
        }
        """,
    ),
    # The hazard sits in a .hip file: wave-size rules still apply to ROCm sources.
    Invalid(
        """
        #include <hip/hip_runtime.h>
        __global__ void k(float* x) {
          int d3 = threadIdx.x;
          int lane = d3 & 31;
          x[lane] = 0.f;
        }
        """,
        path="example.hip",
        expect=("4:14-4:21",),
    ),
)
