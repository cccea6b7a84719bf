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
_HOST_SIZE = (
    "CDNA wavefronts have 64 lanes: use `warpSize` in device code and the device's warp size "
    "(`hipDeviceAttributeWarpSize`, `at::cuda::warp_size()`) in host code"
)
_FROM_WAVE = "with 64-lane wavefronts lanes 32-63 redo the next step's elements: stride by `warpSize`"
_LIMIT = "over HIP's 1024-thread block limit; size the warp count `1024 / warp size`"
_TRANSPOSE = "{} threads are not whole 64-lane CDNA wavefronts, which a warp-transposing `BlockLoad`/`BlockStore` needs"
_LOOPS = ("for_statement", "call_expression")  # a reduction loop, an unrolled butterfly
# Lane arithmetic, constants and reductions: one of these numbers, and a thread/lane/warp name, `blockDim`, a shuffle.
_SIZE_TRIGGERS = (b"32", b"31", b"0x1f", b"0x1F", b"0x20", b">> 5", b">>5", b"16")
_CONTEXT_WORDS = (b"blockdim", b"shfl", b"thread", b"lane", b"warp", b"tid", b"tx", b"wid", b"t_idx")
# Warps counted as 32 lanes (warning): a 32 or a lane, in a file that works on warps or asserts a warp size.
_COUNT_TRIGGERS = (b"32", b"lane", b"Lane")


class WarpSize32(Rule):
    """
    ## What it does
    Flags code that hard-codes a 32-lane warp: warp-size constants defined as 32 (`#define WARP_SIZE 32`, `constexpr
    int kWarpSize = 32`, `THREADS_PER_WARP = 32` enumerators), lane and warp indices computed from thread ids with
    `% 32`, `& 31`, `& 0x1f`, `>> 5` or `/ 32`, and shuffle reductions whose first offset is 16; not in functions
    already doing 64-lane arithmetic (`& 63`, a shuffle by 32), where a 32 is a half-wave on purpose (an MFMA tile),
    nor in files working on 32-lane logical warps on ROCm (every shuffle ROCm compiles passes a width of at most 32,
    one in a ROCm-only arm, and no ballot is compiled), nor in `void` functions working on 32-lane halves of their
    own (lanes split by 32, every lane exchange an xor by less than 32, no vote or `warpSize`). At warning level, a 32 that counts warps in a file that
    works on warps (shuffles, ballots, warp reductions): `THREADS / 32` warps per block, `if (blockSize > 32)`, a
    warp size clamped to 32 (`min(n, 32)`), `block_x = max(32, ...)`, `dim3 threads(32, 4)` rows of one warp (not
    the block of a launch of kernels the file defines doing no warp work: tile rows); blocks of 32 or more warps (`#define NUM_WARPS 32` times a warp size, `dim3 threads(kWarpSize, 32)`); per-warp arrays
    read at a lane index (`sums[lane_id]`); and, in any file, `static_assert(kWarpSize == 32)`. Blocks of 32 or 96
    threads sizing a warp-transposing `BlockLoad`/`BlockStore` (`constexpr int THREADS = 32`, `launch<32, 4, T>()`
    of a template whose collectives, or whose traits' collectives, it sizes); loops that start at a lane index and
    stride 32 lanes (`for (i = lane * k; ...; i += 32 * k)`, or from 0 adding a lane; `threadIdx.x` is the lane
    where the function names `threadIdx.y` its warp index, `wid = threadIdx.y`; warning).

    ## Why is this bad on ROCm?
    CDNA GPUs (MI100 to MI355) run 64-lane wavefronts; only RDNA runs wave32. HIP's `warpSize` docs and porting
    guide ("do not assume 32 or 64") say to read `warpSize`. With a 32 constant, "lane 0 of each warp" elects two
    leaders per wavefront, `tid / 32` disagrees with `__shfl_down`/`__ballot` (whose width is the real wave size),
    and a butterfly from offset 16 reduces half the wavefront (llama.cpp#14196, DeepSpeed `context.h`, apex
    `welford.cu`, mamba `selective_scan_fwd_kernel.cuh`). Per-warp scratch sized `THREADS / 32` is half unused; a
    block row of 32 threads is half a wavefront, so an unwidthed shuffle reads the next row; a block of 32 warps is
    2048 threads at 64 lanes, over HIP's 1024 limit (exllamav2's port sizes `NUM_WARPS` as `1024 / warpSize`);
    `sums[lane_id]` over 32 per-warp sums reads past the 16 a 1024-thread block has; an assertion of 32 lanes fails
    once the constant follows the wave size. rocPRIM's warp-transpose loads and stores assert whole wavefronts.

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
    `constexpr`/`static const` declarations and enumerators get the same selector around a copy with `64`.
    By hand: lane arithmetic, loops and warp counts use `warpSize` in device code and the device's warp size
    on the host (`hipDeviceAttributeWarpSize`, `at::cuda::warp_size()`, as apex's port does).

    ## Fix safety
    Safe for the constant definitions: the NVIDIA `#else` keeps the definition token for token (only line
    numbers move). ROCm device passes follow HIP's selector (`__GFX8__`/`__GFX9__` mean 64 lanes).
    The host pass has no target macro: that selector alone would give 32 there, and host code sizing launches
    or instantiating kernel templates from the constant would disagree with CDNA device code (ROCm/vllm#694
    review), so the fix picks 64, the MI200/MI300 value; projects shipping for RDNA should size host launches
    from `hipDeviceAttributeWarpSize`. Expressions, loops and warp counts are not fixed: what depends on them
    (the warps per block, shared arrays, launch grids) changes with them.
    Warp counts are not reported in ROCm sources (`.hip` files), where only the constants, lane arithmetic and
    reductions are.
    """

    code = "ROC208"
    name = "warp-size-32"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    applies_to_rocm_sources = True
    reports_a_cuda_habit = True
    triggers = (*_SIZE_TRIGGERS, b"lane", b"Lane")
    also_requires = (*_CONTEXT_WORDS, *warp.WORKS_ON_WARPS, b"static_assert")

    def __init__(self) -> None:
        self._in_file: dict[str, bool] = {}  # one instance per file: what the file holds, searched once

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Lane arithmetic holds a split with its literal; a constant's name says `warp`, a reduction loop's or
        unrolled butterfly's shuffle `shfl`, in any case; warp counts a `32`, `dim3` or a lane; assertions
        `static_assert` (in a file that spells `warp`)."""
        needed: dict[str, list[int]] = {}
        if self._sizes(ctx):
            if splits := warp.split_offsets(ctx):
                needed["binary_expression"] = splits
            for kinds, word in ((("declaration", "field_declaration", "enumerator"), b"warp"), (_LOOPS, b"shfl")):
                if offsets := ctx.offsets(word, lowered=True):
                    for kind in kinds:
                        needed.setdefault(kind, []).extend(offsets)
        names, sizes = warp.warp_transposed_blocks(ctx)
        if sizes:  # blocks of 32-lane warps handed to warp-transposing collectives: their sizes and templates
            needed["template_argument_list"] = list(ctx.offsets(b"<"))
            needed.setdefault("declaration", []).extend(ctx.word_offsets(*names))
            needed.setdefault("field_declaration", []).extend(ctx.word_offsets(*names))
        if not self._counts(ctx):
            return dict(needed)
        # An assertion of 32 lanes names a warp-size constant (`asserted_warp_size_32`).
        if ctx.mentions(b"warp", lowered=True) and (assertions := ctx.word_offsets("static_assert")):
            needed["static_assert_declaration"] = list(assertions)
        if not self._counts(ctx, on_warps=True):
            return dict(needed)
        for kind, offsets in (
            ("declaration", ctx.word_offsets("dim3")),
            ("call_expression", ctx.word_offsets("dim3")),
            ("number_literal", ctx.offsets(b"32")),
            ("subscript_expression", ctx.offsets(b"lane", lowered=True)),
            ("for_statement", ctx.offsets(b"+= 32", b"+=32", b"* 32)", b"*32)")),
        ):
            if offsets:
                needed.setdefault(kind, []).extend(offsets)
        return dict(needed)

    def _sizes(self, ctx: CudaContext) -> bool:
        """What lane arithmetic, constants and reductions need in the file (their prefilter words)."""
        if "sizes" not in self._in_file:
            found = ctx.mentions(*_SIZE_TRIGGERS) and ctx.mentions(*_CONTEXT_WORDS, lowered=True)
            self._in_file["sizes"] = found
        return self._in_file["sizes"]

    def _counts(self, ctx: CudaContext, *, on_warps: bool = False) -> bool:
        """What warp counts need in the file, never a ROCm source (only the sizes apply there); `on_warps`: a
        file that works on warps too, where a 32 or a lane index is about warps."""
        if "counts" not in self._in_file:
            self._in_file["counts"] = not ctx.is_rocm_source and ctx.mentions(*_COUNT_TRIGGERS)
            self._in_file["on_warps"] = self._in_file["counts"] and warp.works_on_warps(ctx)
        return self._in_file["on_warps" if on_warps else "counts"]

    def _report_count(self, ctx: CudaContext, span: Node | Define, message: str) -> None:
        ctx.report(span.directive if isinstance(span, Define) else span, message, severity=Severity.WARNING)

    # --- constants ------------------------------------------------------------------------------
    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        if self._counts(ctx) and (warps := warp.define_of_32_warps(define, ctx)) is not None:
            self._report_count(
                ctx,
                define,
                f"`{define.name}` puts {warps} warps in a block: {warps * 64} threads with 64-lane CDNA "
                f"wavefronts, {_LIMIT}",
            )
        if self._counts(ctx, on_warps=True) and (what := warp.define_used_as_warp(define, ctx)) is not None:
            self._report_count(ctx, define, f"`{define.name}` (32) is used as the warp size ({what}); {_HOST_SIZE}")
        if define.parameters is not None or not warp.is_warp_constant_name(define.name) or not self._sizes(ctx):
            return
        value = parse_int(ctx.resolve_text(define.value, define.directive))
        if value != 32 or warp.in_wave_selector(ctx, define.directive) or warp.logical_32_lane_warps(ctx):
            return
        ctx.report(define.directive, _CONSTANT_MESSAGE.format(define.name), fix=warp.wave_size_define_fix(define, ctx))

    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        self._check_constants(node, ctx)
        self._check_blocks(node, ctx)

    def _check_constants(self, node: Node, ctx: CudaContext) -> None:
        for name_node, value in named_constants(node, ctx):
            name = ctx.text(name_node)
            if warp.half_wave_transposed_block(name_node, value, ctx):
                ctx.report(name_node, _TRANSPOSE.format(f"`{name} = {ctx.text(value)}`"))
            elif (
                self._sizes(ctx)
                and warp.is_warp_constant_name(name)
                and ctx.int_value(value) == 32
                and not (warp.in_wave_selector(ctx, name_node) or warp.logical_32_lane_warps(ctx))
            ):
                fix = warp.wave_size_constant_fix(name_node, value, ctx)
                ctx.report(name_node, _CONSTANT_MESSAGE.format(name), fix=fix)

    # `static constexpr int kWarpSize = 32;` members and `enum { THREADS_PER_WARP = 32 };` alike.
    visit_field_declaration = visit_enumerator = _check_constants

    def _check_blocks(self, node: Node, ctx: CudaContext) -> None:
        """`dim3 threads(kWarpSize, 32)` declared or called: a block of 32 warps."""
        if not self._counts(ctx, on_warps=True):
            return
        for arguments, warps in warp.dim3_blocks_of_32_warps(node, ctx):
            self._report_count(
                ctx,
                arguments,
                f"`{warp.shortened(ctx.text(arguments))}` is a block of {warps} warps: {warps * 64} "
                f"threads with 64-lane CDNA wavefronts, {_LIMIT}",
            )

    def visit_template_argument_list(self, node: Node, ctx: CudaContext) -> None:
        """`launch<32, 4, T>(...)`: a block size of 32-lane warps given to a template sized by a warp transpose."""
        for argument, parameter in warp.half_wave_template_arguments(node, ctx):
            ctx.report(argument, _TRANSPOSE.format(f"`{ctx.text(argument)}` (as {parameter})"))

    # --- lane and warp index arithmetic ------------------------------------------------------------
    def visit_binary_expression(self, node: Node, ctx: CudaContext) -> None:
        split = warp.lane_split(node, ctx) if self._sizes(ctx) else None
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
        variable = warp.reduction_over_32_lanes(node, ctx) if self._sizes(ctx) else None
        if variable is not None and not warp.in_wave64_code(node, ctx):
            ctx.report(node, f"shuffle reduction over `{variable}` spans only 32 lanes; {_FROM_HALF_WAVE}")
        step = warp.lane_strided_by_32(node, ctx) if self._counts(ctx, on_warps=True) else None
        if step is not None and not (warp.in_32_lane_subgroups(step, ctx) or warp.in_wave64_code(step, ctx)):
            self._report_count(ctx, step, f"`{ctx.text(step)}` strides a lane index by 32 lanes; {_FROM_WAVE}")

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        self._check_blocks(node, ctx)  # a `dim3(a, b)` value
        name = warp.unrolled_from_16(node, ctx) if self._sizes(ctx) else None
        if name is not None and not warp.in_wave64_code(node, ctx):
            ctx.report(
                node, f"`{name}` with offset 16 starts a 32-lane reduction; a 64-lane wavefront needs offset 32 first"
            )

    # --- warps counted as 32 lanes (warning) ------------------------------------------------------------
    def visit_number_literal(self, node: Node, ctx: CudaContext) -> None:
        found = warp.warp_count_literal(node, ctx) if self._counts(ctx, on_warps=True) else None
        if found is not None:
            shown, what = found
            text = warp.shortened(ctx.text(shown))
            self._report_count(ctx, shown, f"`{text}` takes 32 for the warp size ({what}); {_HOST_SIZE}")

    def visit_static_assert_declaration(self, node: Node, ctx: CudaContext) -> None:
        condition = warp.asserted_warp_size_32(node, ctx) if self._counts(ctx) else None
        if condition is not None and not warp.in_wave_selector(ctx, node):
            self._report_count(
                ctx,
                condition,
                f"`{warp.shortened(ctx.text(condition))}` asserts a 32-lane warp; CDNA wavefronts "
                "have 64 lanes, so it fails (or the code after it is wrong) once the constant follows the wave size",
            )

    def visit_subscript_expression(self, node: Node, ctx: CudaContext) -> None:
        array = warp.warp_array_at_lane(node, ctx) if self._counts(ctx, on_warps=True) else None
        if array is not None:
            self._report_count(
                ctx,
                node,
                f"`{ctx.text(node)}` reads the per-warp array `{array}` at a lane index, as if a block had "
                "as many warps as a warp has lanes (32 x 32); with 64-lane wavefronts the upper lanes index past "
                "them: test the lane against the warp count first",
            )


# More examples, the warning-level warp counts among them, are in tests/test_warp_size_32.py.
WarpSize32.valid = (
    # Written for 64-lane waves already (`& 63`): the 32 picks the MFMA half-wave on purpose.
    Valid(
        """
        __device__ void store(float* o, const float* a) { int lane = threadIdx.x & 63; o[lane] = a[threadIdx.x / 32]; }
        """,
    ),
    # The constant is chosen per vendor; the 32 sits in the NVIDIA-only arm.
    Valid(
        "#ifdef USE_ROCM\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n"
        "__global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }\n"
    ),
    # A butterfly transform testing the thread's own bit of the counter (exllamav2's Hadamard): no warp total.
    Valid(
        "__device__ float hadamard(float v) {\n  int t = threadIdx.x;\n  for (int i = 1; i < 32; i <<= 1) {\n"
        "    float p = __shfl_xor_sync(0xffffffff, v, i);\n    v = ((t & i) ? -v : v) + p;\n  }\n  return v;\n}\n",
    ),
    # What the fix writes: a per-target selector behind the ROCm gate, the original in the NVIDIA arm.
    Valid(
        "struct Traits {\n#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
        "  #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n"
        "  static constexpr int kWarpSize = 64;\n  #else\n  static constexpr int kWarpSize = 32;\n  #endif\n"
        "#else\n  static constexpr int kWarpSize = 32;\n#endif\n  static constexpr int kWarps = 256 / kWarpSize;\n};\n"
    ),
    # A `void` function on 32-lane halves of its own: xor offsets below 32 stay in each half of a wavefront.
    Valid(
        "__device__ void block_sum(float v, float* s) {\n  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
        "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  if (lane == 0) s[w] = v;\n}\n"
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
    # A block of 32 warps: 1024 threads of 32 lanes, 2048 of 64.
    Invalid(
        """
        #define NUM_WARPS 32
        #define WARP_SIZE 32
        #define NUM_THREADS (NUM_WARPS * WARP_SIZE)
        __global__ void rms_norm(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[0], 1); }
        """,
        expect=("1:1-1:21", "2:1-2:21"),
        message="2048 threads",
    ),
    Invalid(
        """
        template <int THREADS>
        __global__ void gemv(const float* a, float* out, int ldb) {
          __shared__ float partial[THREADS / 32];
          const int row = (THREADS / 32) * blockIdx.x + threadIdx.x / warpSize;
          float v = a[row * ldb];
          v += __shfl_down(v, 1);
        }
        """,
        expect=("3:28-3:40", "4:20-4:32"),
        message="warps per block",
    ),
    Invalid(  # a warp per block row (`wid = threadIdx.y`): the x index is the lane
        "__global__ void k(const float* v, float* o, int n) {\n  int tid = threadIdx.x, wid = threadIdx.y;\n  float s = 0;\n"
        "  for (int i = tid; i < n; i += 32) s += v[i];\n  o[wid] = __shfl_down(s, 1);\n}\n",
        expect=("4:28-4:35",),
    ),
)
