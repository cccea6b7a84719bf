"""ROC216 cuda-api-call."""

from __future__ import annotations

from rocmlint.cuda.frontend import CudaContext, Node
from rocmlint.cuda.hip_gaps import renamed_api_call
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class CudaApiCall(Rule):
    """
    ## What it does
    Notes calls to CUDA runtime, driver and library functions (`cudaMalloc`, `cuModuleLoad`,
    `cublasGemmEx`, `curandGenerate`, ...) that HIP provides under another name, with that name.

    ## Why is this bad on ROCm?
    It is not a bug by itself: HIP mirrors these APIs (`cudaMalloc` -> `hipMalloc`, `cublasSgemm` ->
    `hipblasSgemm`) and hipify (torch's `CUDAExtension`, `hipify-perl`, `hipify-clang`) renames the calls.
    Code that is not hipified, or that wraps these calls in its own macros, needs the HIP names. The
    table is HIPIFY's published mapping (`docs/tables/*_supported_by_HIP.md`, regenerated into
    `rocmlint/data/cuda_api.toml` by `scripts/regenerate_hip_tables.py`); calls HIP lacks are ROC217.
    Off by default: a porting checklist, not a hazard.

    ## Example
    ```cuda
    void* buffer;
    cudaMalloc(&buffer, bytes);
    cudaMemsetAsync(buffer, 0, bytes, stream);
    ```

    ## Fix
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
    hipMalloc(&buffer, bytes);
    #else
    cudaMalloc(&buffer, bytes);
    #endif
    ```

    ## Fix safety
    No automatic fix: hipify does the renaming for the whole file at build time.
    """

    code = "ROC216"
    name = "cuda-api-call"
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    language = "cuda"
    enabled_by_default = False
    # Every mapped function starts with one of these; driver calls come with `cuda.h` or the driver's
    # types, cuComplex calls with `cuComplex.h`.
    triggers = (
        b"cuda",
        b"cublas",
        b"cusparse",
        b"cusolver",
        b"curand",
        b"cufft",
        b"nvrtc",
        b"cuComplex",
        b"CUresult",
        b"CUdevice",
        b"CUcontext",
        b"CUmodule",
        b"CUfunction",
        b"CUstream",
    )

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        call = renamed_api_call(node, ctx)
        if call is None:
            return
        name, hip, library = call
        ctx.report(
            node,
            f"`{name}` ({library} API) is `{hip}` in HIP; hipify renames it, hand-written HIP code must",
        )


CudaApiCall.valid = (
    Valid(
        """
        #ifdef USE_ROCM
        #define GPU_CHECK(x) C10_HIP_CHECK(x)
        static void* alloc(size_t n) { void* p; GPU_CHECK(hipMalloc(&p, n)); return p; }
        #else
        static void* alloc(size_t n) { void* p; C10_CUDA_CHECK(cudaMalloc(&p, n)); return p; }
        #endif
        """,
    ),
    Valid(
        """
        void gemm(cublasHandle_t h, int m, int n, int k, const float* a, const float* b, float* c) {
          const float one = 1.f, zero = 0.f;
        #if !defined(__HIP_PLATFORM_AMD__)
          cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
        #else
          hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
        #endif
        }
        """,
    ),
    # Types, enum values and comments are not calls; CUDA functions HIP lacks are ROC217's.
    Valid(
        """
        // cudaMalloc is called by the caching allocator, not here.
        void launch(cudaStream_t stream, cudaMemcpyKind kind);
        void copy_l2(cudaStream_t s, cudaStreamAttrValue* v) {
          cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, v);
        }
        """,
    ),
    Valid(
        """
        #include <hip/hip_runtime.h>
        void sync_all() { hipDeviceSynchronize(); cudaDeviceSynchronize(); }
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        static size_t free_bytes() { size_t f, t; cudaMemGetInfo(&f, &t); return f; }
        #endif
        """,
    ),
)
CudaApiCall.invalid = (
    Invalid(
        """
        torch::Tensor workspace(size_t bytes, cudaStream_t stream) {
          void* buffer = nullptr;
          C10_CUDA_CHECK(cudaMalloc(&buffer, bytes));
          C10_CUDA_CHECK(cudaMemsetAsync(buffer, 0, bytes, stream));
          return wrap(buffer);
        }
        """,
        expect=("3:18-3:44", "4:18-4:59"),
        message="`hipMalloc`",
    ),
    Invalid(
        """
        void gemm_ex(cublasHandle_t handle, int m, int n, int k, const void* a, const void* b, void* c) {
          float alpha = 1.f, beta = 0.f;
          cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16F, k, b, CUDA_R_16F,
                       k, &beta, c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
        }
        """,
        expect=("3:3-4:94",),
        message="hipblasGemmEx",
    ),
    Invalid(
        """
        void pin(void** host, size_t n) {
          if (::cudaMallocHost(host, n) != cudaSuccess) throw std::bad_alloc();
        }
        """,
        expect=("2:7-2:32",),
        message="`hipHostMalloc`",
    ),
    Invalid(
        """
        CUfunction load_kernel(CUmodule* module, const char* image) {
          CUfunction fn;
          cuModuleLoadData(module, image);
          cuModuleGetFunction(&fn, *module, "kernel");
          return fn;
        }
        """,
        expect=("3:3-3:34", "4:3-4:46"),
        message="CUDA driver API",
    ),
    Invalid(
        """
        void seed(curandGenerator_t* gen, unsigned long long s) {
          curandCreateGenerator(gen, CURAND_RNG_PSEUDO_DEFAULT);
          curandSetPseudoRandomGeneratorSeed(*gen, s);
        }
        """,
        expect=("2:3-2:56", "3:3-3:46"),
        message="hiprandCreateGenerator",
    ),
)
