"""ROC239 func-attribute-kernel-ptr."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, ByteSpan, CudaContext, Node
from rocmlint.cuda.hip_gaps import KERNEL_POINTER_CALLS, typed_kernel_calls_in_macro
from rocmlint.cuda.preprocessor import Define
from rocmlint.cuda.syntax import declares_void_pointer
from rocmlint.cuda.values import arms
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


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
    if declared is not None:
        return declared
    return _has_function_pointer_type(arm, ctx) or _launched(arm, ctx)


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


def _launched(name: Node, ctx: CudaContext) -> bool:
    """Whether the function or lambda around `name` launches it with `<<<...>>>`: only a typed kernel can be
    launched, so an `auto` parameter or variable the walk could not follow (`[&](auto kernel_fn) {...}`)
    holds one."""
    scope = ctx.enclosing(name, "lambda_expression", "function_definition")
    if scope is None:
        return False
    spelled = ctx.text(name)
    return any(
        (launched := launch.parent.child_by_field_name("function")) is not None and ctx.text(launched) == spelled
        for launch in ctx.descendants(scope, "kernel_call_syntax")
        if launch.parent is not None
    )


class FuncAttributeKernelPtr(Rule):
    """
    ## What it does
    Flags `cudaFuncSetAttribute` and `cudaFuncGetAttributes` calls whose kernel argument is a typed
    kernel (a function name, `kernel<T, 128>`, `&kernel`, a variable holding a kernel pointer, or an
    `auto` variable or parameter the same function launches with `<<<...>>>`) rather than a
    `(const void*)` / `reinterpret_cast<const void*>` cast. Calls in macro bodies are read from the text:
    a template id, `&kernel`, a qualified name, or a name the same body assigns a kernel to or launches.

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
        anchors = ctx.offsets(*(name.encode() for name in KERNEL_POINTER_CALLS))
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        index = KERNEL_POINTER_CALLS.get(name or "")
        if index is None or name is None:
            return
        if ctx.preprocessor.define_of(name, node.start_byte) is not None:
            return  # the project wraps the call in a macro of its own (usually to add the cast)
        arguments = ctx.arguments(node)
        if len(arguments) <= index or not _typed_kernel(arguments[index], ctx):
            return
        ctx.report(
            ByteSpan(node.start_byte, arguments[index].end_byte),  # from the call's name, where readers look
            _message(name, ctx.text(arguments[index])),
            fix=_fix(arguments[index], ctx),
        )

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        # Macro bodies are not parsed by tree-sitter: the front end reads the calls from the text (no fix).
        for call in typed_kernel_calls_in_macro(ctx, define):
            if ctx.preprocessor.define_of(call.function, define.directive.start_byte) is None:
                ctx.report(call.span, f"macro `{define.name}`: {_message(call.function, call.kernel)}")


def _message(name: str, kernel: str) -> str:
    kernel = " ".join(kernel.split())  # one line, however the argument was wrapped
    return (
        f"`{name}` is given the typed kernel `{kernel}`; HIP's `{name.replace('cuda', 'hip')}` takes `const void*` "
        f"only, so pass `reinterpret_cast<const void*>({kernel})`"
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
    # In a macro body: the cast, a rename macro adding it, and a name the body does not show to be a kernel.
    Valid(
        """
        #define SET_SMEM(kernel, bytes) \\
          cudaFuncSetAttribute((const void*)kernel<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
        #define hipFuncSetAttribute(fn, attr, value) hipFuncSetAttribute((const void*)fn, attr, value)
        #define OPT_IN(fn, bytes) cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
        """,
    ),
    # An `auto` parameter that is never launched: nothing says it holds a typed kernel.
    Valid(
        """
        void configure(int smem) {
          auto opt_in = [&](auto fn) { cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); };
          opt_in(reinterpret_cast<const void*>(&fwd_kernel));
        }
        """,
    ),
)
FuncAttributeKernelPtr.invalid = (
    # A Jinja template (FBGEMM's `codegen/*.cu`) is checked with its tags blanked, and never fixed.
    Invalid(
        """
        void backward_{{ optimizer }}(int smem) {
          cudaFuncSetAttribute(backward_{{ optimizer }}_kernel<
              {% if not dense %}emb_t{% else %}scalar_t{% endif %}, {{ kMaxVecsPerThread }}>,
              cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        }
        """,
        expect=("2:3-3:85",),
        message="`backward_________________kernel< emb_t scalar_t , _______________________>`",
        no_fix=True,
    ),
    Invalid(
        """
        template <typename TilingConfig, typename OutputDataType>
        void quant_gemm(cudaStream_t stream, size_t smem) {
          cudaFuncSetAttribute(QUANT_GEMM_Kernel<TilingConfig, OutputDataType>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        }
        """,
        expect=("3:3-3:71",),
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
        expect=("5:16-5:43",),
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
        expect=("5:28-5:58",),
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
        expect=("4:3-4:45",),
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
        expect=("3:19-3:46",),
    ),
    Invalid(
        """
        void set_carveout() {
          cudaFuncSetAttribute(&bn_fwd_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
        }
        """,
        expect=("2:3-2:38",),
    ),
    # An `auto` parameter the lambda launches: only a typed kernel can be launched.
    Invalid(
        """
        void run(Params p, int smem, cudaStream_t stream) {
          auto launch = [&](auto kernel_fn) {
            cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
            kernel_fn<<<p.blocks, 128, smem, stream>>>(p);
          };
          launch(attention_kernel<float>);
        }
        """,
        expect=("3:5-3:35",),
    ),
    # In macro bodies, which tree-sitter does not parse: a template id, and a name the body assigns one to.
    Invalid(
        """
        #define LAUNCH_PAGED_ATTENTION(HEAD_SIZE)                            \\
          cudaFuncSetAttribute(                                              \\
            paged_attention_kernel<T, HEAD_SIZE, BLOCK_SIZE, NUM_THREADS>,  \\
            cudaFuncAttributeMaxDynamicSharedMemorySize, shared_mem_size);
        #define LAUNCH_FWD(OCCUPANCY)                                                      \\
          auto fwd_func = bn_fwd<StorageType, OCCUPANCY>;                                  \\
          cudaFuncSetAttribute(fwd_func, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
        """,
        expect=("2:3-3:66", "7:3-7:32"),
        message="macro",
    ),
)
