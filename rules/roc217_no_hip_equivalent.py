"""ROC217 no-hip-equivalent."""

from __future__ import annotations

from rocmlint.cuda.conditions import arch_arm_rocm_needs
from rocmlint.cuda.frontend import Anchors, CudaContext, Directive, Include, Node
from rocmlint.cuda.hip_gaps import UNDECLARED_INTRINSICS, is_libcudacxx_header, rocm_macro_of
from rocmlint.cuda.hip_gaps import no_hip_equivalents as _tables
from rocmlint.cuda.syntax import defines_name, is_own_name, qualified_segments
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_Span = Node | Include | Directive
# The rule's triggers: names HIP lacks or their prefixes (`_rd` of `__fadd_rd`), `<<<` of a device-side launch.
_TRIGGER_WORDS = (
    "cuda CUresult CUdevice CUtensorMap cublas cusparse cusolver curand cufft nvrtc mma.h wmma pipeline barrier "
    "memcpy_async cooperative_groups cluster <<< _rd _ru _rz __st __ld __pm __brkpt __prof_trigger"
)
_INTRINSICS = frozenset(name.decode() for name in UNDECLARED_INTRINSICS)
_DYNAMIC_PARALLELISM = "launching a kernel from device code (dynamic parallelism) is not supported by HIP"


class NoHipEquivalent(Rule):
    """
    ## What it does
    Flags CUDA features HIP does not have, in code a ROCm build compiles: warp matrix functions (`nvcuda::wmma`,
    `<mma.h>`), async-copy pipelines (`cuda_pipeline.h`, `cuda::pipeline`, `cuda::memcpy_async`,
    `cg::memcpy_async`), libcu++ barriers (`cuda::barrier`), thread-block clusters and TMA, device-side kernel
    launches, the CUDA API functions, types and intrinsics HIPIFY's tables list without a HIP name, and device
    intrinsics HIP does not declare (`__vsubss4` and its SIMD family, `__dp4a`, `__trap`; `__syncwarp`, declared by
    recent ROCm only, is a warning). A function, typedef, enum, enumerator or struct the code defines under such a
    name (a project's own ROCm stub) is the project's name, its uses where ROCm compiles the definition too (`return
    cudaErrorStubLibrary;` after `enum cudaError_t { cudaErrorStubLibrary = 34 };`); so is a variable or parameter
    the code declares under one (`GaussClusterable *this_cluster` in CPU clustering code), and a name the file or a
    header it includes defines as a macro where ROCm uses it, spelled with names HIP has (`rocm_macro_of`: `#define
    __syncwarp()` in a header of code written for AMD's lockstep waves). Flagged too: such an intrinsic in a
    `#if __CUDA_ARCH__ >= N` arm whose `#else` (ROCm's) only traps: a port opens it. Includes of libcu++ headers
    (`<cuda/barrier>`, `<cuda/pipeline>`) are ROC205's: a library header ROCm does not ship; the uses of their APIs
    are this rule's.

    ## Why is this bad on ROCm?
    There is nothing to rename to, so hipify leaves the code as is and the ROCm build fails (or the
    feature has to be re-designed). HIP documents WMMA as unsupported (`kernel_language.rst`, "Warp
    matrix functions") and lists the cooperative-groups features it lacks (`cooperative_groups.rst`,
    "Unsupported NVIDIA CUDA features"); AMD GPUs have no clusters or TMA, and HIP no dynamic
    parallelism (HIP FAQ). The API list is HIPIFY's (`docs/tables/*_supported_by_HIP.md`, rows with no
    HIP column), regenerated into `rocmlint/data/no_hip_equivalent.toml`. The intrinsics of
    `rocmlint/data/hip_undeclared.toml` are undeclared for hipcc 5.2.3 and absent from the ROCm 6.3 and HIP 7.1
    headers (but `__syncwarp`, which 7.x defines); ports had to supply them (llama.cpp's `__dp4a`, `__vsubss4`).

    ## Example
    ```cuda
    #include <mma.h>
    using namespace nvcuda;
    __global__ void gemm_16x16(const half* a, const half* b, float* c) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
      wmma::load_matrix_sync(fa, a, 16);
    }
    ```

    ## Fix
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
    #include <rocwmma/rocwmma.hpp>  // rocWMMA: different fragment shapes, review the tiling
    #else
    #include <mma.h>
    #endif
    ```

    ## Fix safety
    No automatic fix: each feature needs a ROCm design (rocWMMA or MFMA builtins, LDS double-buffering,
    `__syncthreads()`), written by hand in a ROCm branch.
    """

    code = "ROC217"
    name = "no-hip-equivalent"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    # Runtime/driver names need `cuda.h`/`cuda_runtime.h` (or carry `cuda`); the rest are spelled here.
    triggers = (*(word.encode() for word in _TRIGGER_WORDS.split()), *UNDECLARED_INTRINSICS)

    def __init__(self) -> None:
        # One diagnostic per line, and per function for a namespace-wide feature: a WMMA kernel names
        # `wmma::` on every line, and the first one says it all.
        self._seen: set[object] = set()

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Names from the tables are whole words of the file (most files name none: visiting every identifier
        of them cost more than their parse); a qualified name holds its entry's last segment; a device-side
        launch its `<<<`, in a file with device code."""
        tables, words = _tables(), ctx.words
        needed: dict[str, Anchors] = {}
        names = ctx.offsets(*(tables.name_words & words))
        if names:
            needed.update({"identifier": names, "type_identifier": names})
        qualified = ctx.offsets(
            *{segments[-1] for segments in tables.qualified_words if all(s in words for s in segments)}
        )
        if qualified:
            needed["qualified_identifier"] = qualified
        launches = ctx.offsets(b"<<<") if ctx.may_hold_device_code else ()
        if launches:
            needed["kernel_call_syntax"] = launches
        return needed

    def _report(
        self, ctx: CudaContext, span: _Span, key: object, message: str, severity: Severity | None = None
    ) -> None:
        if key not in self._seen and ctx.report(span, message, severity=severity):
            self._seen.add(key)

    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        header = include.header.strip()
        reason = _tables().headers.get(header)
        if reason is not None and not is_libcudacxx_header(header):  # a libcu++ include is ROC205's
            self._report(ctx, include, include.directive.line, f"`{header}`: {reason}")

    def visit_qualified_identifier(self, node: Node, ctx: CudaContext) -> None:
        if node.parent is not None and node.parent.type == "qualified_identifier":
            return  # the outermost name is checked, once
        segments = qualified_segments(node, ctx)
        qualified = _tables().qualified
        for end in range(1, len(segments) + 1):
            reason = qualified.get(tuple(segments[:end]))
            if reason is not None:
                function = ctx.function_of(node)
                key = (function.start_byte, reason) if function is not None else node.start_point[0] + 1
                self._report(ctx, node, key, f"`{'::'.join(segments)}`: {reason}")
                self._seen.add(node.start_point[0] + 1)  # `this_cluster` in `cg::this_cluster()` is this finding
                return

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        self._check_name(node, ctx)

    def visit_type_identifier(self, node: Node, ctx: CudaContext) -> None:
        self._check_name(node, ctx)

    def _check_name(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.text(node)
        tables = _tables()
        reason = tables.names.get(name)
        if reason is None or is_own_name(node, ctx) or defines_name(ctx, name) or rocm_macro_of(name, node, ctx):
            return  # not an API HIP lacks, or the project's own (a ROCm stub, a variable, its own `__dp4a`, a macro)
        severity = Severity.WARNING if name in tables.declared_since else None  # only older ROCm lacks it
        message, line = f"`{name}`: {reason}", node.start_point[0] + 1
        opened = arch_arm_rocm_needs(ctx, node.start_byte) if name in _INTRINSICS and ctx.is_rocm_gated(node) else None
        if opened is None:
            self._report(ctx, node, line, message, severity)
        elif line not in self._seen and ctx.report(node, f"{message} ({opened})", severity=severity, arm_to_open=True):
            self._seen.add(line)  # ROCm skips it, but a ROCm port has to open the arm

    def visit_kernel_call_syntax(self, node: Node, ctx: CudaContext) -> None:
        if ctx.is_device_code(node):
            self._report(ctx, node.parent or node, node.start_point[0] + 1, _DYNAMIC_PARALLELISM)


NoHipEquivalent.valid = (
    # A local variable that happens to spell a CUDA API name (in CPU code) is the code's own.
    Valid(
        """
        void Cluster(std::vector<Clusterable*>& clusters) {
          for (size_t i = 0; i < clusters.size(); i++) {
            GaussClusterable *this_cluster = static_cast<GaussClusterable*>(clusters[i]);
            Accumulate(this_cluster->count(), this_cluster->x_stats());
          }
        }
        """,
        path="cluster.cc",
    ),
    # A project's own ROCm stubs of names HIP lacks define them; they do not use the API, nor do uses of its own
    # enumerator and stand-in type, defined where ROCm compiles them.
    Valid(
        """
        cudaError_t cudaArrayGetPlane(cudaArray_t* plane, cudaArray_t array, unsigned int index) {
          return cudaErrorNotSupported;
        }
        typedef enum libraryPropertyType_t { MAJOR_VERSION, MINOR_VERSION } libraryPropertyType;
        typedef enum { CUDA_SUCCESS = 0, CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_INVALID_PC } CUresult;
        enum cudaError_t { cudaErrorStubLibrary = 34 };
        cudaError_t cudaUserObjectCreate(...) { return cudaErrorStubLibrary; }
        #if CUDART_VERSION < 12030
        typedef struct { unsigned char d[64]; } CUmemFabricHandle;
        #endif
        typedef union { unsigned long long data; CUmemFabricHandle handle; } Descriptor;
        """,
    ),
    # DeepSpeed's cublas_wrappers.h: <mma.h> only when not building for AMD.
    Valid(
        "#pragma once\n#include <assert.h>\n#include <cublas_v2.h>\n#include <cuda.h>\n#ifndef __HIP_PLATFORM_AMD__\n"
        "#include <mma.h>\n#endif\n#ifdef __HIP_PLATFORM_AMD__\n#include <rocblas/rocblas.h>\n#endif\n"
    ),
    # A macro of the file stands for the name where ROCm uses it, spelled with names HIP has (magma's zilu.cpp).
    Valid(
        "#if CUDA_VERSION >= 11000 || defined(USE_ROCM)\n#define cusparseCreateSolveAnalysisInfo(i) "
        "cusparseCreateCsrsm2Info(i)\n#endif\nvoid setup(csrsm2Info_t* i) { cusparseCreateSolveAnalysisInfo(i); }\n"
    ),
    Valid(
        """
        #ifdef USE_ROCM
        #include <rocwmma/rocwmma.hpp>
        namespace wm = rocwmma;
        #else
        #include <mma.h>
        namespace wm = nvcuda::wmma;
        #endif
        __global__ void tile_mma(const half* a, const half* b, float* c) {
          wm::fragment<wm::matrix_a, 16, 16, 16, half, wm::row_major> fa;
          wm::load_matrix_sync(fa, a, 16);
        }
        """,
    ),
    Valid(
        """
        template <int kStages>
        __global__ void copy_tiles(const float4* src, float4* dst) {
          extern __shared__ float4 smem[];
        #if !defined(USE_ROCM) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
          __pipeline_memcpy_async(&smem[threadIdx.x], &src[threadIdx.x], sizeof(float4));
          __pipeline_commit();
          __pipeline_wait_prior(0);
        #else
          smem[threadIdx.x] = src[threadIdx.x];
        #endif
          __syncthreads();
          dst[threadIdx.x] = smem[threadIdx.x];
        }
        """,
    ),
    # HIP has these: cooperative groups' tiles and grid sync, `__shfl_xor_sync`, host-side launches,
    # and `wait` / `barrier` as the project's own names.
    Valid(
        """
        namespace cg = cooperative_groups;
        __global__ void reduce(float* x) {
          auto block = cg::this_thread_block();
          auto warp = cg::tiled_partition<32>(block);
          float v = x[threadIdx.x];
          v += warp.shfl_down(v, 1);
          block.sync();
          barrier(x); wait(1);
        }
        void run(float* x, cudaStream_t s) { reduce<<<1, 256, 0, s>>>(x); }
        """,
    ),
    Valid(
        "#ifndef USE_ROCM\n__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(float* out) {\n"
        "  auto cluster = cg::this_cluster();\n  cluster.sync();\n}\n#endif\n"
    ),
    # The project's own versions for HIP: a ROCm-only macro (its uses are remaps, left to the project model), and a
    # device function in a HIP branch (llama.cpp's `__dp4a` on an AMDGCN dot builtin), which the calls below use.
    Valid(
        """
        #if defined(USE_ROCM)
        #define __syncwarp() __builtin_amdgcn_wave_barrier()
        static __device__ __forceinline__ int __dp4a(const int a, const int b, int c) {
          return __builtin_amdgcn_sdot4(a, b, c, false);
        }
        #endif
        __global__ void dot(const int* a, const int* b, int* out) {
          out[threadIdx.x] = __dp4a(a[threadIdx.x], b[threadIdx.x], 0);
        }
        """,
    ),
)
NoHipEquivalent.invalid = (
    # ROCm skips the `__CUDA_ARCH__` arm for an `#else` that only traps: the port opens it (ROC207) and fails here.
    Invalid(
        """
        __device__ float vec_dot(int v, int u, float d) {
        #if __CUDA_ARCH__ >= 610
          const int vi = __vsubss4(v, 0x04040404);
          return d * __dp4a(vi, u, 0);
        #else
          assert(false);
          return 0.0f;  // only to satisfy the compiler
        #endif
        }
        """,
        expect=("3:18-3:27", "4:14-4:20"),
        message="its `#else` only traps",
    ),
    # Device intrinsics HIP's headers do not declare (llama.cpp's q8 dot products before its HIP port).
    Invalid(
        """
        __device__ int dot_q8(int a, int b, int acc, int d) {
          acc = __dp4a(a, b, acc);
          if (acc < 0) __trap();
          return __vsubss4(acc, d);
        }
        """,
        expect=("2:9-2:15", "3:16-3:22", "4:10-4:19"),
        message="`__dp4a`",
    ),
    Invalid(
        """
        __global__ void step(float* p, const float* g) {
          p[threadIdx.x] -= g[threadIdx.x];
          __syncwarp();
        }
        """,
        expect=("3:3-3:13",),
        message="recent ROCm",
    ),
    # A definition only NVIDIA compiles leaves ROCm's use to the API, which HIP lacks.
    Invalid(
        "#include <cuda.h>\n#ifndef USE_ROCM\ntypedef CUmemFabricHandle_v1 CUmemFabricHandle;\n#endif\nCUmemFabricHandle h;\n",
        expect=("5:1-5:18",),
    ),
    # The API's own name called unqualified: no declaration of the code's own names it.
    Invalid(
        """
        #include <cooperative_groups.h>
        using namespace cooperative_groups;
        __global__ void k(float* x) {
          auto cluster = this_cluster();
        }
        """,
        expect=("4:18-4:30",),
        message="clusters",
    ),
    Invalid(
        """
        #include <mma.h>
        using namespace nvcuda;
        __global__ void gemm_16x16(const half* a, const half* b, float* c) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
        }
        """,
        expect=("1:1-1:17", "4:3-4:68"),
        message="rocWMMA",
    ),
    Invalid(
        """
        __global__ void tile(const half* a, float* c) {
          nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
          nvcuda::wmma::fill_fragment(acc, 0.0f);
          nvcuda::wmma::store_matrix_sync(c, acc, 16, nvcuda::wmma::mem_row_major);
        }
        """,
        expect=("2:3-2:71",),
        message="`nvcuda::wmma::fragment`",
    ),
    Invalid(
        """
        #include <cooperative_groups.h>
        #include <cooperative_groups/memcpy_async.h>
        namespace cg = cooperative_groups;
        __global__ void stage(const float* g, int n) {
          extern __shared__ float s[];
          auto block = cg::this_thread_block();
          cg::memcpy_async(block, s, g, sizeof(float) * n);
          cg::wait(block);
        }
        """,
        expect=("2:1-2:45", "7:3-7:19"),
        message="memcpy_async",
    ),
    Invalid(
        """
        #include <cuda/pipeline>
        __global__ void pipelined(const int* in, int* out) {
          auto pipe = cuda::make_pipeline();
        }
        """,
        expect=("3:15-3:34",),
        message="pipelines",
    ),
    Invalid(
        """
        void launch_clustered(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream) {
          cudaLaunchConfig_t config = {grid, block, 0, stream};
          cudaLaunchAttribute attribute[1];
          attribute[0].id = cudaLaunchAttributeClusterDimension;
          cudaLaunchKernelExC(&config, kernel, nullptr);
        }
        """,
        expect=("2:3-2:21", "3:3-3:22", "4:21-4:56", "5:3-5:22"),
        message="`cudaLaunchConfig_t`",
    ),
    Invalid(
        """
        __global__ void child(float* x) { x[threadIdx.x] *= 2.f; }
        __global__ void parent(float* x, int n) {
          if (threadIdx.x == 0) child<<<n / 256, 256>>>(x);
        }
        """,
        expect=("3:25-3:51",),
        message="dynamic parallelism",
    ),
    Invalid(
        """
        __device__ float accumulate_down(float a, float b) {
          return __fadd_rd(a, b);
        }
        """,
        expect=("2:10-2:19",),
        message="CUDA device API",
    ),
)
