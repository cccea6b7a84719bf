"""More VALID and INVALID examples of ROC208 warp-size-32 than its module has room for, checked the same way as
the module's own (tests/test_rule_examples.py): lane arithmetic, constants and reductions, and the warning-level
warp counts (a 32 that counts warps, blocks of 32 warps, per-warp arrays read at a lane, asserted warp sizes)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc208_warp_size_32 import WarpSize32

from rocmlint.diagnostics import Severity
from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid, run_example

VALID = (
    # A 32-valued macro whose uses are no warp (a row count clamp, a byte count), and no 32 in a file without warps.
    Valid(
        """
        #define ROWS 32
        #define BYTES 32
        __device__ float warp_sum(float v) { return v + __shfl_down_sync(0xffffffffu, v, 1); }
        void configure(int reduction, char* buffer, dim3& block) {
          int rows = std::min(reduction, ROWS);
          memset(buffer, 0, BYTES);
          block.y = rows;
        }
        """,
    ),
    # Loops striding by the real wave size, a 32 that is not what each lane's start is scaled by, a thread index.
    Valid(
        """
        __global__ void copy(const float* a, float* out, int K, int k) {
          float v = __shfl_xor(a[0], 1);
          const int lane = threadIdx.x % warpSize;
          for (int i = lane * k; i < K; i += warpSize * k) out[i] = a[i] + v;
          for (int i = lane * 4; i < K; i += 32) out[i] = a[i];
          for (int i = threadIdx.x; i < K; i += 32) out[i] = a[i];
        }
        """,
    ),
    # A warp per block row (`wid = threadIdx.y`): rows strided by 32 from the warp index, a column loop from 0 that
    # adds no lane, and an x index in a function that names no warp index.
    Valid(
        """
        __global__ void gemv(const float* a, float* out, int rows, int cols) {
          float v = __shfl_xor(a[0], 1);
          int tid = threadIdx.x, wid = threadIdx.y;
          for (int j = 0; j < rows; j += 32) out[j + wid] = v;
          for (int i = 0; i < cols; i += 32) out[i + 1] = a[tid];
        }
        __global__ void copy(const float* a, float* out, int n) {
          float v = __shfl_xor(a[0], 1);
          int row = threadIdx.y;
          for (int i = 0; i < n; i += 32) out[i + threadIdx.x] = a[row] + v;
        }
        """,
    ),
    # Warp-transposing collectives over whole 64-lane waves, or with the algorithm chosen per wave size; a 32 given
    # to a template parameter that neither sizes the collectives nor counts threads.
    Valid(
        """
        template <int kNThreads, int kNItems, typename T>
        struct Traits {
          using Load = cub::BlockLoad<T, kNThreads, kNItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
          using Store = cub::BlockStore<T, kNThreads, kNItems,
              (kNThreads >= WARP_SIZE) ? cub::BLOCK_STORE_WARP_TRANSPOSE : cub::BLOCK_STORE_DIRECT>;
        };
        template <int kNThreads, int kBits, typename T> void launch(T* x);
        template <int kBits, typename T> void pack(T* x);
        __global__ void k(float* x) {
          constexpr int THREADS = 64;
          constexpr int ROWS = 32;
          typedef cub::BlockLoad<float, THREADS, ROWS, cub::BLOCK_LOAD_DIRECT> Direct;
          typedef cub::BlockLoad<float, 128, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE> Whole;
        }
        void run(float* x) { launch<128, 32, float>(x); pack<32, float>(x); }
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
    # A per-warp array read at a lane only where the lane is below the warp count, and per-lane arrays (sized by the
    # warp size, here also a template parameter named `warpSize`).
    Valid(
        """
        template <int warpSize>
        __global__ void block_sum(const float* x, float* y) {
          __shared__ float partial[THREADS / WARP_SIZE];
          __shared__ float per_lane[WARP_SIZE];
          __shared__ float lane_sums[warpSize];
          int lane = threadIdx.x % warpSize;
          float v = __shfl_down(x[threadIdx.x], 1);
          v = (threadIdx.x < blockDim.x / warpSize) ? partial[lane] : 0.f;
          if (lane < THREADS / WARP_SIZE) {
            v += partial[lane];
          }
          y[threadIdx.x] = v + per_lane[lane] + lane_sums[lane];
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
        #define WARP_SIZE C10_WARP_SIZE
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
INVALID = (
    # apex welford.cu: a tile-width macro of 32 caps the block's x-extent at one warp (reported at its definition),
    # and the same cap written as a literal.
    Invalid(
        """
        #define OPTIMAL_TILE_W 32
        __device__ float warp_sum(float v) { return v + __shfl_down_sync(0xffffffffu, v, 1); }
        void configure(int stride, dim3& block) {
          int block_x = std::min(h_last_pow2(stride), OPTIMAL_TILE_W);
          int blockDimX = std::min(stride, 32);
          block.x = block_x + blockDimX;
        }
        """,
        expect=("1:1-1:26", "5:19-5:39"),
        message="a block row capped at one 32-lane warp",
    ),
    # bitsandbytes' 4-bit GEMV: lanes of `tid % 32` striding the K loop by 32 lanes (the split itself is an error).
    Invalid(
        """
        __global__ void gemv(const float* a, float* out, int K, int n, int lane_id) {
          typedef cub::WarpReduce<float> WarpReduce;
          const int warp_lane = threadIdx.x % 32;
          for (int i = warp_lane * n; i < K; i += 32 * n) out[i] = a[i];
          for (int j = lane_id; j < K; j += 32) out[j] = 0.f;
        }
        """,
        expect=("3:25-3:41", "4:38-4:49", "5:32-5:39"),
    ),
    # A warp per block row (`wid = threadIdx.y`): the x index is the lane, from which a loop strides 32 lanes, or
    # which a loop counting from 0 by 32 adds to its counter.
    Invalid(
        """
        __global__ void gemv(const float* a, float* out, int rows, int cols) {
          typedef cub::WarpReduce<float> WarpReduce;
          int tid = threadIdx.x;
          int wid = threadIdx.y;
          float sum = 0.f;
          for (int idx = tid; idx < cols; idx += 32) sum += a[idx];
          for (int i = 0; i < cols; i += 32) {
            int c = i + tid;
            out[c * rows + wid] = sum;
          }
        }
        """,
        expect=("6:35-6:44", "7:29-7:36"),
        message="strides a lane index by 32 lanes",
    ),
    # Blocks of 32-lane warps sizing warp-transposing collectives: a block-size constant, a literal size, and the
    # launch of a template whose block size sizes them (mamba's selective scan, bitsandbytes' blocksize-32 kernel).
    Invalid(
        """
        template <int kNThreads_, int kNItems_, typename T>
        struct Traits {
          static constexpr int kNThreads = kNThreads_;
          using Load = cub::BlockLoad<T, kNThreads, kNItems_, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
        };
        template <int kNThreads, int kNItems, typename T> void scan_launch(T* x) { using K = Traits<kNThreads, kNItems, T>; }
        __global__ void quantize32(float* x) {
          constexpr int THREADS = 32;
          typedef cub::BlockLoad<float, THREADS, 2, cub::BLOCK_LOAD_WARP_TRANSPOSE> LoadT;
          typedef cub::BlockStore<float, 96, 2, cub::BLOCK_STORE_WARP_TRANSPOSE> StoreT;
        }
        void run(float* x, int n) {
          if (n <= 128) scan_launch<32, 4, float>(x);
          else scan_launch<64, 16, float>(x);
        }
        """,
        expect=("8:17-8:24", "10:34-10:36", "13:29-13:31"),
        message="not whole 64-lane CDNA wavefronts",
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
        expect=("1:19-1:34", "5:15-5:48", "7:27-7:52"),
        message="`kThreadsPerWarp` hard-codes a 32-lane warp",
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
    # A file reading the builtin `warpSize` (a warp-synchronous reduction) works on warps without a shuffle: a
    # block of 32 by 32 launched there is rows of one warp each.
    Invalid(
        """
        __global__ void row_sum(const float* a, float* out) {
          __shared__ float s[1024];
          if (threadIdx.x < warpSize) s[threadIdx.x] += s[threadIdx.x + 16];
        }
        void launch(int n, const float* a, float* out) {
          dim3 threads(32, 32);
          row_sum<<<n, threads>>>(a, out);
        }
        """,
        expect=("6:8-6:23",),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid_example_is_not_reported(example: Valid) -> None:
    problems = check_valid(WarpSize32, example)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("example", INVALID)
def test_invalid_example_is_reported(example: Invalid) -> None:
    problems = check_invalid(WarpSize32, example)
    assert not problems, "\n".join(problems)


def test_warp_counts_are_warnings_and_warp_sizes_errors() -> None:
    code = (
        "#define NUM_WARPS 32\n#define WARP_SIZE 32\n"
        "__global__ void k(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[0], 1) * NUM_WARPS * WARP_SIZE; }\n"
    )
    found = {d.location.line: d.severity for d in run_example(WarpSize32, code)}
    assert found == {1: Severity.WARNING, 2: Severity.ERROR}


def test_warp_counts_are_not_reported_in_rocm_sources() -> None:
    code = (
        "template <int THREADS> __global__ void gemv(float* a) {\n"
        "  __shared__ float partial[THREADS / 32];\n  a[0] = __shfl_down(a[threadIdx.x], 1) + partial[0];\n}\n"
    )
    assert run_example(WarpSize32, code, path="k.hip") == []
    assert [d.location.line for d in run_example(WarpSize32, code, path="k.cu")] == [2]
