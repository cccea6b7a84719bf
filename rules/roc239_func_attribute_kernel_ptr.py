"""ROC239 func-attribute-kernel-ptr."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.syntax import declares_void_pointer
from rocmlint.cuda.values import arms
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# The runtime call and the position of its kernel argument. HIP declares these with `const void*` only;
# CUDA's runtime adds `template <class T> ...(T* entry, ...)` overloads, so CUDA code passes typed kernels.
# (The occupancy calculators are not listed: hip_runtime_api.h has template overloads for
# hipOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags] and hipOccupancyMaxPotentialBlockSize[*].)
_KERNEL_ARGUMENT = {
    "cudaFuncSetAttribute": 0,
    "cudaFuncGetAttributes": 1,
    "hipFuncSetAttribute": 0,
    "hipFuncGetAttributes": 1,
}


def _typed_kernel(argument: Node, ctx: CudaContext) -> bool:
    """Whether `argument` is a typed kernel (function symbol or pointer) rather than a `const void*`: any arm
    of it (`auto kernel = is_training ? &fprop_kernel<true> : &fprop_kernel<false>;`)."""

    def value_decides(name: Node) -> bool:
        return _declared_kernel(name, ctx) is None

    return any(_is_typed_kernel(arm, ctx) for arm in arms(ctx, argument, value_decides))


def _is_typed_kernel(arm: Node, ctx: CudaContext) -> bool:
    kind = arm.type
    if kind in ("cast_expression", "call_expression"):
        return False  # reinterpret_cast<const void*>(k), or a helper returning the pointer
    if kind == "pointer_expression":
        operand = arm.child_by_field_name("argument")
        return (
            operand is not None
            and ctx.text(arm).startswith("&")
            and operand.type in ("identifier", "template_function", "qualified_identifier")
        )
    if kind in ("template_function", "qualified_identifier"):
        return True
    if kind != "identifier":
        return False
    declared = _declared_kernel(arm, ctx)
    return _has_function_pointer_type(arm, ctx) if declared is None else declared


def _declared_kernel(name: Node, ctx: CudaContext) -> bool | None:
    """Whether the declaration of `name` says it is a typed kernel; None when its value (the initialiser,
    `auto kernel = &ln_fwd_kernel<Traits>;`, else its type) decides."""
    declaration = ctx.declaration_of(name)
    if declaration is None:
        return True  # no variable or parameter of that name: the kernel function itself
    if declares_void_pointer(declaration, ctx.text(name), ctx):
        return False
    if any(d.type == "function_declarator" for d in declaration.children_by_field_name("declarator")):
        return True  # a forward-declared kernel: `__global__ void k(float*);`
    return None


def _has_function_pointer_type(name: Node, ctx: CudaContext) -> bool:
    """A function-pointer variable or parameter (`void (*k)(float*)`, `KernelFn k`, `F kernel`) whose
    initialiser, if any, the walk did not follow."""
    declaration = ctx.declaration_of(name)
    type_node = None if declaration is None else declaration.child_by_field_name("type")
    return type_node is not None and ctx.text(type_node) not in ("void", "auto", "hipFunction_t", "CUfunction")


class FuncAttributeKernelPtr(Rule):
    """
    ## What it does
    Flags `cudaFuncSetAttribute` and `cudaFuncGetAttributes` calls whose kernel argument is a typed
    kernel (a function name, `kernel<T, 128>`, `&kernel`, or a variable holding a kernel pointer)
    rather than a `(const void*)` / `reinterpret_cast<const void*>` cast.

    ## Why is this bad on ROCm?
    CUDA's runtime header adds template overloads (`template <class T> cudaFuncSetAttribute(T* entry,
    ...)`) that accept any kernel. HIP declares `hipFuncSetAttribute(const void* func, ...)` and
    `hipFuncGetAttributes(hipFuncAttributes*, const void* func)` only, and C++ has no implicit
    conversion from a function pointer to `const void*`, so the hipified call fails with "no matching
    function" (sgl-project/sglang#25237; projects such as DeepSpeed-Kernels wrap the call to add the
    cast). HIP does have template overloads for the occupancy calculators, which are therefore not flagged.

    ## Example
    ```cuda
    template <typename Traits>
    void launch(const Params& p, cudaStream_t stream) {
      auto kernel = &ln_fwd_kernel<Traits>;
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::SMEM_BYTES);
      kernel<<<p.ctas, Traits::THREADS, Traits::SMEM_BYTES, stream>>>(p);
    }
    ```

    ## Fix
    ```cuda
    template <typename Traits>
    void launch(const Params& p, cudaStream_t stream) {
      auto kernel = &ln_fwd_kernel<Traits>;
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::SMEM_BYTES);
    #else
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::SMEM_BYTES);
    #endif
      kernel<<<p.ctas, Traits::THREADS, Traits::SMEM_BYTES, stream>>>(p);
    }
    ```
    The ROCm branch keeps the `cuda*` name: hipify (or a CUDA-to-HIP rename header) turns it into the
    `hip*` call, which then finds its `const void*` overload. A call sharing its line with an `if` or
    `for` head is fixed by wrapping that statement when it is short.

    ## Fix safety
    Safe: the NVIDIA branch (`#else`) keeps the original call token for token, so `nvcc` compiles what it
    compiled before. The cast only changes which overload HIP's C API resolves to, not the kernel it
    names (CUDA's template overload performs the same cast).
    """

    code = "ROC239"
    name = "func-attribute-kernel-ptr"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"FuncSetAttribute", b"FuncGetAttributes")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported call holds the function's name."""
        anchors = ctx.offsets(*(name.encode() for name in _KERNEL_ARGUMENT))
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        index = _KERNEL_ARGUMENT.get(name or "")
        if index is None or name is None:
            return
        if ctx.preprocessor.define_of(name, node.start_byte) is not None:
            return  # the project wraps the call in a macro of its own (usually to add the cast)
        arguments = ctx.arguments(node)
        if len(arguments) <= index or not _typed_kernel(arguments[index], ctx):
            return
        kernel = ctx.text(arguments[index])
        ctx.report(
            arguments[index],
            f"`{name}` is given the typed kernel `{kernel}`; HIP's `{name.replace('cuda', 'hip')}` takes `const void*` "
            f"only, so pass `reinterpret_cast<const void*>({kernel})`",
            fix=_fix(arguments[index], ctx),
        )


def _fix(argument: Node, ctx: CudaContext) -> Fix | None:
    """The statement behind a ROCm gate, its kernel argument cast to `const void*` on the ROCm side.

    The call keeps its `cuda*` name: hipify, or the CUDA->HIP rename header of a ROCm build, maps it to the
    `hip*` function, whose only overload takes `const void*`."""
    cast = f"reinterpret_cast<const void*>({ctx.text(argument)})"
    return ctx.statement_fix("cast the kernel to `const void*` on ROCm", argument, [(argument, cast)])


FuncAttributeKernelPtr.valid = (
    # The cast HIP needs, in its common spellings.
    Valid(
        """
        template <typename T, int kBlock>
        __global__ void gemm_kernel(const T* a, T* c);
        void setup() {
          cudaFuncSetAttribute(reinterpret_cast<const void*>(&gemm_kernel<half, 128>),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);
          cudaFuncSetAttribute((const void*)gemm_kernel<float, 64>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
          cudaFuncAttributes attr;
          cudaFuncGetAttributes(&attr, (void*)gemm_kernel<float, 64>);
        }
        """,
    ),
    # The kernel is already held as `const void*`.
    Valid(
        """
        void set_smem(const void* kernel_ptr, int bytes) {
          cudaFuncSetAttribute(kernel_ptr, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        }
        void set_all(int bytes) {
          const void* fn = reinterpret_cast<const void*>(&attention_kernel);
          cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        }
        """,
    ),
    # The typed call only on NVIDIA builds.
    Valid(
        """
        void configure(int smem) {
        #ifdef USE_ROCM
          hipFuncSetAttribute((const void*)fwd_kernel, hipFuncAttributeMaxDynamicSharedMemorySize, smem);
        #else
          cudaFuncSetAttribute(fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        #endif
        }
        """,
    ),
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        void configure(int smem) { cudaFuncSetAttribute(fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); }
        #endif
        """,
    ),
    # A project macro that adds the cast, and occupancy calls (HIP has template overloads for those).
    Valid(
        """
        #define cudaFuncSetAttribute my_hip_func_set_attribute
        void configure(int smem, int* blocks) {
          cudaFuncSetAttribute(fwd_kernel<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, biasAdd_fprop<float>, 256, 0);
        }
        """,
    ),
)
FuncAttributeKernelPtr.invalid = (
    Invalid(
        """
        template <typename TilingConfig, typename OutputDataType>
        void quant_gemm(cudaStream_t stream, size_t smem) {
          cudaFuncSetAttribute(QUANT_GEMM_Kernel<TilingConfig, OutputDataType>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        }
        """,
        expect=("3:24-3:71",),
        message="reinterpret_cast<const void*>(QUANT_GEMM_Kernel<TilingConfig, OutputDataType>)",
        fixed="""
        template <typename TilingConfig, typename OutputDataType>
        void quant_gemm(cudaStream_t stream, size_t smem) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          cudaFuncSetAttribute(reinterpret_cast<const void*>(QUANT_GEMM_Kernel<TilingConfig, OutputDataType>),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        #else
          cudaFuncSetAttribute(QUANT_GEMM_Kernel<TilingConfig, OutputDataType>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        #endif
        }
        """,
    ),
    Invalid(
        """
        template <typename Kernel_traits>
        void launch_fwd(LaunchParams& p) {
          auto kernel = &ln_fwd_kernel<Kernel_traits>;
          if (Kernel_traits::SMEM_BYTES_FWD >= 48 * 1024) {
            CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Kernel_traits::SMEM_BYTES_FWD));
          }
        }
        """,
        expect=("5:37-5:43",),
    ),
    Invalid(
        """
        template <typename Attention>
        void run_attention(typename Attention::Params& p) {
          constexpr auto kernel_fn = attention_kernel_batched_impl<Attention>;
          int smem_bytes = sizeof(typename Attention::SharedStorage);
          if (smem_bytes > 0xc000) cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        }
        """,
        expect=("5:49-5:58",),
        fixed="""
        template <typename Attention>
        void run_attention(typename Attention::Params& p) {
          constexpr auto kernel_fn = attention_kernel_batched_impl<Attention>;
          int smem_bytes = sizeof(typename Attention::SharedStorage);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          if (smem_bytes > 0xc000) cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel_fn), cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        #else
          if (smem_bytes > 0xc000) cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        #endif
        }
        """,
    ),
    Invalid(
        """
        __global__ void reduce_kernel(const float* x, float* y);
        int max_threads() {
          cudaFuncAttributes attr;
          cudaFuncGetAttributes(&attr, reduce_kernel);
          return attr.maxThreadsPerBlock;
        }
        """,
        expect=("4:32-4:45",),
        message="`cudaFuncGetAttributes`",
        fixed="""
        __global__ void reduce_kernel(const float* x, float* y);
        int max_threads() {
          cudaFuncAttributes attr;
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(reduce_kernel));
        #else
          cudaFuncGetAttributes(&attr, reduce_kernel);
        #endif
          return attr.maxThreadsPerBlock;
        }
        """,
    ),
    Invalid(
        """
        void run_fmha(Launch_params& launch_params, int smem_size) {
          auto kernel = launch_params.is_training ? &fmha_fprop_kernel<true> : &fmha_fprop_kernel<false>;
          FMHA_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size));
        }
        """,
        expect=("3:40-3:46",),
    ),
    Invalid(
        """
        void set_carveout() {
          cudaFuncSetAttribute(&bn_fwd_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
        }
        """,
        expect=("2:24-2:38",),
    ),
)
