"""ROC240 warp-count-32."""

from __future__ import annotations

from rocmlint.cuda import warp
from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Node
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_WORKS_ON_WARPS = (b"shfl", b"ballot", b"warpreduce", b"warp_reduce")


class WarpCount32(Rule):
    """
    ## What it does
    Flags a literal `32` that stands for one warp outside lane arithmetic, in files that work on warps
    (shuffles, ballots, warp reductions): a block's thread count divided by or compared with 32
    (`THREADS / 32` warps per block, `if (blockSize > 32)` before a warp reduction), a warp size clamped
    to 32 (`warp_size = min(next_pow2, 32)`), a block's x-extent kept at least 32 threads
    (`block_x = max(32, ...)`), and two-dimensional blocks whose rows are 32 threads (`dim3 threads(32, 4)`);
    a block of 32 or more warps (`#define NUM_WARPS 32` multiplied by a warp size, `dim3 threads(kWarpSize,
    kWarpsPerBlock)` with 32 rows); and, in any file, a warp-size
    constant asserted to be 32 (`static_assert(kWarpSize == 32)`).

    ## Why is this bad on ROCm?
    CDNA GPUs (MI100 to MI355) run 64-lane wavefronts. A block of `THREADS` threads holds `THREADS / 64`
    of them, so per-warp scratch sized `THREADS / 32` is half unused and disagrees with warp indices taken
    from `warpSize`; a block row of 32 threads is half a wavefront, so a shuffle without a width (a
    `__shfl(v, 0)` broadcast, `__shfl_down` past lane 31) or a ballot reads the next row's lanes; a warp
    size clamped to 32 on the host splits the work for 32 lanes while the kernel's wavefronts have 64;
    a 1024-thread block has 16 wavefronts, so `sums[lane_id]` over 32 per-warp sums reads past them; a
    block of 32 warps is 2048 threads once a warp has 64 lanes, over HIP's 1024-thread limit (exllamav2's
    ROCm port sizes `NUM_WARPS` as `1024 / warpSize`); an assertion that the warp size is 32 stops the build
    once the constant is 64 on ROCm, and the code it guards (bitonic networks, lane masks) was written for
    32 lanes.
    Ports replace the 32 with the run-time warp size (apex `csrc/welford.cu` and
    `layer_norm_cuda_kernel.cu` use `at::cuda::warp_size()`, bitsandbytes uses `BNB_WARP_SIZE`).

    ## Example
    ```cuda
    template <int THREADS>
    __global__ void gemv(const float* a, float* out) {
      __shared__ float partial[THREADS / 32];
      float v = a[threadIdx.x];
      for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
      if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = v;
    }
    ```

    ## Fix
    Size from the wave: `warpSize` in device code (on ROCm 7 it is not a compile-time constant, ROC209,
    so compile-time sizes pick 64 on ROCm and 32 on NVIDIA behind a vendor gate), and the device's warp
    size in host code (`hipDeviceGetAttribute(&w, hipDeviceAttributeWarpSize, dev)`,
    `at::cuda::warp_size()`):
    ```cuda
    const int warp_size = at::cuda::warp_size();
    const dim3 threads(warp_size, 4, 1);
    ```

    ## Fix safety
    No autofix: what depends on the 32 (shared arrays, loop strides, launch grids) changes with it, and
    only the author knows which of them assume 32 lanes.
    """

    code = "ROC240"
    name = "warp-count-32"
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"32", b"lane", b"Lane")
    # The file works on warps: a 32 in it that counts threads is then a warp; a `static_assert` names its own.
    also_requires = (*_WORKS_ON_WARPS, b"static_assert")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """The 32s of a file that works on warps (the prefilter's `also_requires`, checked here as well); the
        `static_assert`s of any file, whose warp-size name is the evidence."""
        needed: dict[str, Anchors] = {}
        assertions = ctx.word_offsets("static_assert")
        if assertions:
            needed["static_assert_declaration"] = assertions
        if not _works_on_warps(ctx):
            return needed
        blocks = ctx.word_offsets("dim3")
        if blocks:
            needed.update(dict.fromkeys(("declaration", "call_expression"), blocks))
        numbers = ctx.offsets(b"32")
        if numbers:
            needed["number_literal"] = numbers
        lanes = ctx.offsets(b"lane", lowered=True)
        if lanes:
            needed["subscript_expression"] = lanes
        return needed

    def visit_number_literal(self, node: Node, ctx: CudaContext) -> None:
        what = warp.warp_of_32(node, ctx)
        if what is None or warp.in_wave_selector(ctx, node):
            return
        shown = node.parent or node  # the expression, clamp or `dim3` the 32 is part of
        if shown.type == "argument_list" and shown.parent is not None:
            shown = shown.parent
        ctx.report(
            shown,
            f"`{_short(ctx.text(shown))}` takes 32 for the warp size ({what}); CDNA wavefronts have 64 lanes: use "
            "`warpSize` in device code and the device's warp size (`hipDeviceAttributeWarpSize`, "
            "`at::cuda::warp_size()`) in host code",
        )

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        if define.parameters is not None or not _works_on_warps(ctx):
            return
        value = parse_int(ctx.resolve_text(define.value, define.directive))
        if value is None or not warp.block_of_32_warps(define.name, value, ctx):
            return
        if not warp.in_wave_selector(ctx, define.directive):
            ctx.report(
                define.directive,
                f"`{define.name}` puts {value} warps in a block: with 64-lane CDNA wavefronts that is {value * 64} "
                "threads, over HIP's 1024-thread block limit, so the launch fails; size it `1024 / warp size`",
            )

    # --- blocks of warps over the 1024-thread limit once a warp has 64 lanes --------------------------------
    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        if not _works_on_warps(ctx):
            return  # the plain walk visits every declaration; a block of warps needs a file that works on warps
        for arguments, extents in warp.dim3_arguments(node, ctx):
            self._check_block(arguments, extents, ctx)

    visit_call_expression = visit_declaration  # a `dim3(a, b)` value: dim3_arguments reads both

    def _check_block(self, arguments: Node, extents: list[Node], ctx: CudaContext) -> None:
        warps = warp.warps_in_dim3_block(extents, ctx)
        if warps is None or warp.in_wave_selector(ctx, arguments):
            return
        ctx.report(
            arguments,
            f"`{_short(ctx.text(arguments))}` is a block of {warps} warps: {warps * 64} threads once the warp size "
            "is CDNA's 64 lanes, over HIP's 1024-thread block limit; size the warp count `1024 / warp size`",
        )

    def visit_static_assert_declaration(self, node: Node, ctx: CudaContext) -> None:
        condition = warp.asserted_warp_size_32(node, ctx)
        if condition is not None and not warp.in_wave_selector(ctx, node):
            ctx.report(
                condition,
                f"`{_short(ctx.text(condition))}` asserts a 32-lane warp; CDNA wavefronts have 64 lanes, so the "
                "assertion fails (or the code after it is wrong) once the constant follows the wave size: assert the "
                "widths the code handles, or branch on the wave size",
            )

    def visit_subscript_expression(self, node: Node, ctx: CudaContext) -> None:
        array = warp.warp_array_at_lane(node, ctx)
        if array is not None:
            ctx.report(
                node,
                f"`{ctx.text(node)}` reads the per-warp array `{array}` at a lane index, as if a block had as many "
                "warps as a warp has lanes (32 x 32); with 64-lane wavefronts it has half as many warps and the "
                "upper lanes index past them: test the lane against the warp count first",
            )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _works_on_warps(ctx: CudaContext) -> bool:
    """The file shuffles, ballots or reduces across a warp: its 32s and warp counts are then about warps. The
    prefilter's `also_requires` also lets in files with only a `static_assert`, which assert their own."""
    return bool(ctx.offsets(*_WORKS_ON_WARPS, lowered=True))


WarpCount32.valid = (
    # A per-warp array read at a lane only where the lane is below the warp count, and a per-lane array.
    Valid(
        """
        __global__ void block_sum(const float* x, float* y) {
          __shared__ float partial[THREADS / WARP_SIZE];
          __shared__ float per_lane[WARP_SIZE];
          int lane = threadIdx.x % warpSize;
          float v = __shfl_down(x[threadIdx.x], 1);
          v = (threadIdx.x < blockDim.x / warpSize) ? partial[lane] : 0.f;
          if (lane < THREADS / WARP_SIZE) {
            v += partial[lane];
          }
          y[threadIdx.x] = v + per_lane[lane];
        }
        """,
    ),
    # Counts from the real warp size, and 32s that count bytes, bits or elements.
    Valid(
        """
        template <int THREADS>
        __global__ void gemv(const float* a, float* out, int n) {
          __shared__ float partial[THREADS / warpSize];
          float v = a[threadIdx.x];
          v += __shfl_down(v, 1);
          int words = n / 32;
          size_t tiles = (n + 31) / 32;
          if (n > 32) out[0] = v;
          char buffer[32];
        }
        """,
    ),
    # A file with no warp primitives: a block of 32 by 8 is a tile, not a warp.
    Valid(
        """
        void transpose(const float* in, float* out, int n) {
          dim3 threads(32, 8);
          int block_size = 256;
          int tiles = block_size / 32;
          transpose_kernel<<<n / 32, threads>>>(in, out, tiles);
        }
        """,
    ),
    # Warp counts chosen per vendor, a count of 16, and a count of 32 that no warp size multiplies.
    Valid(
        """
        #ifdef USE_ROCM
        #define NUM_WARPS (1024 / warpSize)
        #else
        #define NUM_WARPS 32
        #endif
        #define WARPS_PER_BLOCK 16
        #define NUM_WARPS_TOTAL 32
        __global__ void k(float* x) { x[threadIdx.x] = __shfl_xor(x[0], 1) * NUM_WARPS * WARP_SIZE * WARPS_PER_BLOCK; }
        """,
    ),
    # A block of 32 warps in a file that does not work on warps: its `static_assert` lets the file in, not the define.
    Valid(
        """
        #define NUM_WARPS 32
        #define WARP_SIZE 32
        static_assert(sizeof(int) == 4, "int");
        __global__ void k(float* x) { x[threadIdx.x] = NUM_WARPS * WARP_SIZE; }
        """,
    ),
    # Blocks of warps that stay within 1024 threads at 64 lanes, and tiles that are no warps.
    Valid(
        """
        constexpr int kThreadsPerWarp = C10_WARP_SIZE;
        constexpr int kWarpsPerBlock = 16;
        void launch(int n) {
          dim3 threads(kThreadsPerWarp, kWarpsPerBlock);
          dim3 tiles(kTileWidth, 32);
          row_sum<<<n, dim3(warpSize, 8)>>>(__shfl_down(0, 1));
        }
        """,
    ),
    # Assertions that accept both widths, or whose 32 is not a warp size.
    Valid(
        """
        static_assert(kWarpSize == 32 || kWarpSize == 64, "wave32 or wave64");
        static_assert(kTileRows == 32, "one tile row per 32 elements");
        static_assert(sizeof(Vec) == 32);
        """,
    ),
    # The 32 sits in the NVIDIA arm of a wave-size selection, or in a 1-D `dim3`.
    Valid(
        """
        __device__ float warp_sum(float v) { return v + __shfl_xor(v, 1); }
        void launch(int n) {
        #if defined(__GFX9__)
          int warp_size = min(n, 64);
        #else
          int warp_size = min(n, 32);
        #endif
          dim3 threads(32);
        }
        """,
    ),
)
WarpCount32.invalid = (
    # A block of 32 warps: 1024 threads of 32 lanes, 2048 of 64.
    Invalid(
        """
        #define NUM_WARPS 32
        #define WARP_SIZE 32
        #define NUM_THREADS (NUM_WARPS * WARP_SIZE)
        __global__ void rms_norm(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[0], 1); }
        """,
        expect=("1:1-1:21",),
        message="2048 threads",
    ),
    # Rows of one warp, 32 rows: 1024 threads at 32 lanes, 2048 at 64.
    Invalid(
        """
        constexpr int32_t kThreadsPerWarp = 32;
        constexpr int32_t kWarpsPerBlock = 32;
        __device__ float warp_max(float v) { return fmaxf(v, __shfl_xor_sync(0xffffffff, v, 1, 32)); }
        void launch(int B, int H) {
          dim3 threads(kThreadsPerWarp, kWarpsPerBlock);
          decoder_kernel<<<B, threads>>>();
          decoder_kernel<<<B, dim3(kThreadsPerWarp, 2 * 16)>>>();
        }
        """,
        expect=("5:15-5:48", "7:27-7:52"),
        message="block of 32 warps: 2048 threads",
    ),
    # A warp-size constant asserted to be 32, in any file: the name is the evidence.
    Invalid(
        """
        template <typename K, typename V>
        struct BitonicSort {
          static __device__ void sort(K k[1], V v[1]) {
            static_assert(fbgemm_gpu::kWarpSize == 32, "unexpected warp size");
          }
        };
        """,
        expect=("4:19-4:46",),
        message="asserts a 32-lane warp",
    ),
    Invalid(
        """
        __global__ void layer_norm(const float* x, float* y) {
          __shared__ float sums[NUM_WARPS];
          int warp_id = threadIdx.x / warpSize;
          int lane_id = threadIdx.x % warpSize;
          float sum = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1);
          if (lane_id == 0) sums[warp_id] = sum;
          __syncthreads();
          sum = sums[lane_id];
          y[threadIdx.x] = sum;
        }
        """,
        expect=("8:9-8:22",),
        message="per-warp array `sums`",
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
    Invalid(
        """
        __device__ float warp_reduce_sum(float v) { return v + __shfl_down_sync(0xffffffffu, v, 1); }
        __device__ float reduce_block(float* x, float val) {
          int blockSize = blockDim.x * blockDim.y;
          if (blockSize > 32) {
            val = warp_reduce_sum(val);
          }
          return val;
        }
        """,
        expect=("4:7-4:21",),
        message="a block size against one warp",
    ),
    Invalid(
        """
        __device__ float warp_max(float v) { return max(v, __shfl_xor(v, 1)); }
        void dispatch(int log2_elements, int space_size) {
          int warp_size = (1 << log2_elements) < 32 ? (1 << log2_elements) : 32;
          warp_size = min(warp_size, 32);
          int block_x = max(32, min(512, space_size / 4));
          const dim3 threads(32, 4, 1);
        }
        """,
        expect=("3:19-3:72", "4:15-4:33", "5:17-5:50", "6:14-6:31"),
    ),
)
