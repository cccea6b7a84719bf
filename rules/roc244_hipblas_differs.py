"""ROC244 hipblas-differs."""

from __future__ import annotations

from collections.abc import Callable

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# cuBLAS GEMMs taking `cudaDataType` arguments whose hipBLAS counterparts take `hipblasDatatype_t` unless compiled
# with `-DHIPBLAS_V2` (library/include/hipblas.h, hipBLAS 2.x: "With HIPBLAS_V2 define, hipblasGemmEx accepts
# hipDataType").
_EX_GEMMS = frozenset({"cublasGemmEx", "cublasGemmBatchedEx", "cublasGemmStridedBatchedEx"})
_CUDA_DATATYPE_PREFIXES = ("CUDA_R_", "CUDA_C_")
_V2_MACRO = "HIPBLAS_V2"
# The math modes hipBLAS's rocBLAS backend accepts (library/src/amd_detail/hipblas.cpp `hipblasGetRocblasMathMode`:
# default and XF32-XDL; any other mode throws HIPBLAS_STATUS_NOT_SUPPORTED).
_MATH_MODE_CALL = "cublasSetMathMode"
# Half-precision GEMMs: hipBLAS declares them on `hipblasHalf`, a `uint16_t` unless the code is compiled with
# `-DHIPBLAS_USE_HIP_HALF` (hipblas.h, since hipBLAS's November 2022 opt-in), so `__half*` arguments do not convert.
_HALF_GEMMS = frozenset({"cublasHgemm", "cublasHgemmBatched", "cublasHgemmStridedBatched"})
_HIP_HALF_MACRO = "HIPBLAS_USE_HIP_HALF"
_DEFAULT_MATH = "CUBLAS_DEFAULT_MATH"


class HipblasDiffers(Rule):
    """
    ## What it does
    Flags cuBLAS calls whose hipBLAS counterpart takes them differently, in code a ROCm build compiles:
    `cublasSetMathMode` with a mode other than `CUBLAS_DEFAULT_MATH` (TF32, tensor-op, pedantic),
    `cublasHgemm` (and its batched forms) unless the ROCm build defines `HIPBLAS_USE_HIP_HALF`, and
    `cublasGemmEx`, `cublasGemmBatchedEx` and `cublasGemmStridedBatchedEx` calls given CUDA data types
    (`CUDA_R_16F`, `CUDA_R_8I`, directly or through a local variable) in code a ROCm build compiles, unless that
    build defines `HIPBLAS_V2`. A torch extension build (hipified) passes `-DHIPBLAS_V2` itself on ROCm 6 and
    later: there the call is noted at info, and left out in code hipify reaches of a project that already
    builds for ROCm through that hipify (as ROC204's hipified includes; `show-hipified` decides otherwise).

    ## Why is this bad on ROCm?
    hipify renames the call to `hipblasGemmEx` and `CUDA_R_16F` to `HIP_R_16F`, an `hipDataType`. But hipBLAS's
    `hipblasGemmEx` (and its batched forms) takes `hipblasDatatype_t` (`HIPBLAS_R_16F`) for the matrix and
    compute types unless the code is compiled with `-DHIPBLAS_V2` (hipBLAS 2.x, ROCm 6.x:
    `library/include/hipblas.h`), and older hipBLAS has only that form: the hipified call does not compile.
    bitsandbytes and FBGEMM added `hipblasGemmEx` branches with hipBLAS's own types.

    hipBLAS's `hipblasHgemm` takes `hipblasHalf`, which is `uint16_t` unless `HIPBLAS_USE_HIP_HALF` is
    defined (`hipblas.h`): the hipified call passing `__half*` does not compile (exllamav2 cast every argument
    in a ROCm wrapper, later built with `-DHIPBLAS_USE_HIP_HALF`).

    `hipblasSetMathMode` exists only in hipBLAS from 2024 (ROCm 6.1 and later), and with the rocBLAS backend it
    accepts only `HIPBLAS_DEFAULT_MATH` and `HIPBLAS_XF32_XDL_MATH`: TF32 tensor-op math returns
    `HIPBLAS_STATUS_NOT_SUPPORTED` (`library/src/amd_detail/hipblas.cpp`), which a status check turns into an
    abort. llama.cpp made it a no-op for HIP.

    ## Example
    ```cuda
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_8I, lda, B, CUDA_R_8I, ldb,
                 &beta, C, CUDA_R_32I, ldc, CUDA_R_32I, CUBLAS_GEMM_DEFAULT);
    ```

    ## Fix
    Build for ROCm with `-DHIPBLAS_V2` (hipBLAS 2.0 and later), or call `hipblasGemmEx` with `HIPBLAS_R_8I` /
    `HIPBLAS_R_32I` in a ROCm branch.

    ## Fix safety
    No automatic fix: the choice is the build's (a compile flag) or a ROCm branch with another type set.
    """

    code = "ROC244"
    name = "hipblas-differs"
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"cublasGemm", b"cublasHgemm", b"cublasSetMathMode")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported call holds the function's name."""
        calls = ctx.word_offsets(*_EX_GEMMS, *_HALF_GEMMS, _MATH_MODE_CALL)
        return {"call_expression": calls} if calls else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        if name == _MATH_MODE_CALL:
            self._check_math_mode(node, ctx)
            return
        if name is not None and ctx.define("hipblas" + name.removeprefix("cublas"), node) is not None:
            return  # the code wraps the HIP function hipify turns the call into (vLLM's `__compat_hipblasHgemm`)
        if name in _HALF_GEMMS:
            if ctx.define(_HIP_HALF_MACRO, node) is None:
                ctx.report(
                    node,
                    f"`{name}`: hipBLAS declares it on `hipblasHalf`, a `uint16_t` unless compiled with "
                    "`-DHIPBLAS_USE_HIP_HALF`: the hipified call's `__half*` arguments do not convert",
                )
            return
        if name not in _EX_GEMMS or ctx.define(_V2_MACRO, node) is not None:
            return  # not a GEMM of the table, or the ROCm build selects the hipDataType API
        datatype = next((t for a in ctx.arguments(node) if (t := _cuda_datatype(a, ctx))), None)
        if datatype is None:
            return
        message = (
            f"`{name}` with `{datatype}`: hipify renames the type to an `hipDataType` (`HIP_R_*`), which hipBLAS's "
            "GEMMs take only with `-DHIPBLAS_V2` (hipBLAS 2.x, ROCm 6); without it, and on older ROCm, they take "
            "`hipblasDatatype_t` (`HIPBLAS_R_*`) and the call does not compile"
        )
        if ctx.hipified_build:
            ctx.report_hipified(node, message + "; torch's extension build passes `-DHIPBLAS_V2` on ROCm 6+")
            return
        ctx.report(node, message)

    def _check_math_mode(self, node: Node, ctx: CudaContext) -> None:
        arguments = ctx.arguments(node)
        mode = _math_mode(arguments[1], ctx) if len(arguments) == 2 else None
        if mode is None or mode == _DEFAULT_MATH:
            return  # not a mode named here (a variable of flags), or the default one hipBLAS accepts
        ctx.report(
            node,
            f"`cublasSetMathMode` with `{mode}`: hipBLAS's rocBLAS backend accepts only the default and XF32 math "
            "modes (others return HIPBLAS_STATUS_NOT_SUPPORTED), and hipBLAS before ROCm 6.1 has no "
            "`hipblasSetMathMode`: skip the call on ROCm",
        )


def _math_mode(argument: Node, ctx: CudaContext) -> str | None:
    """`CUBLAS_TF32_TENSOR_OP_MATH` for an argument naming a cuBLAS math mode, or a local it initialises."""
    return _named_constant(argument, ctx, lambda name: name.startswith("CUBLAS_") and name.endswith("_MATH"))


def _cuda_datatype(argument: Node, ctx: CudaContext) -> str | None:
    """`CUDA_R_16F` for an argument naming it, or a local variable it initialises (`auto Ctype = CUDA_R_16F;`)."""
    return _named_constant(argument, ctx, lambda name: name.startswith(_CUDA_DATATYPE_PREFIXES))


def _named_constant(argument: Node, ctx: CudaContext, is_constant: Callable[[str], bool]) -> str | None:
    """The constant an identifier argument names, directly or through the local variable it initialises."""
    if argument.type != "identifier":
        return None
    if is_constant(ctx.text(argument)):
        return ctx.text(argument)
    value = ctx.declared_value(argument)
    if value is not None and value.type == "identifier" and is_constant(ctx.text(value)):
        return ctx.text(value)
    return None


HipblasDiffers.valid = (
    # The ROCm branch calls hipBLAS with its own types.
    Valid(
        """
        void igemm(cublasHandle_t h, int m, int n, int k, const void* a, const void* b, void* c, const int* one) {
        #if defined(USE_ROCM)
          hipblasGemmEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, one, a, HIPBLAS_R_8I, m, b, HIPBLAS_R_8I, k,
                        one, c, HIPBLAS_R_32I, m, HIPBLAS_R_32I, HIPBLAS_GEMM_DEFAULT);
        #else
          cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, one, a, CUDA_R_8I, m, b, CUDA_R_8I, k,
                       one, c, CUDA_R_32I, m, CUDA_R_32I, CUBLAS_GEMM_DEFAULT);
        #endif
        }
        """,
    ),
    # vLLM's ROCm wrapper of the HIP function hipify turns the call into.
    Valid(
        """
        #if defined(USE_ROCM)
        __host__ hipblasStatus_t __compat_hipblasHgemm(hipblasHandle_t h, int n, const half* a, half* c);
        #define hipblasHgemm __compat_hipblasHgemm
        #endif
        void hgemm(cublasHandle_t h, const half* a, half* c, const half* one, int n) {
          cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, one, a, n, a, n, one, c, n);
        }
        """,
    ),
    # The file selects hipBLAS's hipDataType API and `__half` for hipblasHalf itself.
    Valid(
        """
        #define HIPBLAS_V2
        #define HIPBLAS_USE_HIP_HALF
        void hgemm(cublasHandle_t h, const half* a, half* c, const half* one, int n) {
          cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, one, a, n, a, n, one, c, n);
        }
        void hgemm(cublasHandle_t h, int m, int n, int k, const void* a, const void* b, void* c, const float* s) {
          cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, s, a, CUDA_R_16F, m, b, CUDA_R_16F, k,
                       s, c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
        """,
    ),
    # The default math mode is what hipBLAS's backend accepts; flags computed at run time are not traced.
    Valid(
        """
        void init(cublasHandle_t h, bool reduced) {
          cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
          cublasMath_t flags = CUBLAS_DEFAULT_MATH;
          cublasSetMathMode(h, flags);
          cublasSetMathMode(h, reduced ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH);
        }
        """,
    ),
    # Types held in variables of another kind (a parameter) are not traced.
    Valid(
        """
        void gemm(cublasHandle_t h, cudaDataType t, int m, const void* a, void* c, const float* s) {
          cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, s, a, t, m, a, t, m, s, c, t, m, t,
                       CUBLAS_GEMM_DEFAULT);
        }
        """,
    ),
)
HipblasDiffers.invalid = (
    # exllamav2's half GEMM, hipified as is.
    Invalid(
        """
        void hgemm(cublasHandle_t h, const half* a, const half* b, half* c, const half* one, int n) {
          cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, one, a, n, b, n, one, c, n);
        }
        """,
        expect=("2:3-2:80",),
        message="`hipblasHalf`",
    ),
    # llama.cpp's TF32 opt-in, checked: the ROCm build aborts on the status.
    Invalid(
        """
        void init(cublasHandle_t h) {
          CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
        }
        """,
        expect=("2:16-2:64",),
        message="`CUBLAS_TF32_TENSOR_OP_MATH`",
    ),
    # bitsandbytes' int8 GEMM.
    Invalid(
        """
        int igemm(cublasHandle_t h, int m, int n, int k, const void* a, const void* b, void* c, const int* one) {
          return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, one, a, CUDA_R_8I, m, b, CUDA_R_8I, k,
                              one, c, CUDA_R_32I, m, CUDA_R_32I, CUBLAS_GEMM_DEFAULT);
        }
        """,
        expect=("2:10-3:78",),
        message="`CUDA_R_8I`",
    ),
    # FBGEMM's batched half GEMM: the types held in locals.
    Invalid(
        """
        void bmm(cublasHandle_t h, int m, int n, int k, const void* a, const void* b, void* c, const float* s) {
          auto Atype = CUDA_R_16F;
          auto computeType = CUBLAS_COMPUTE_32F;
          auto result = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, s, b, Atype, n, k,
                                                   a, Atype, k, m, s, c, Atype, n, n, 4, computeType,
                                                   CUBLAS_GEMM_DEFAULT);
        }
        """,
        expect=("4:17-6:64",),
        message="`CUDA_R_16F`",
    ),
    Invalid(
        """
        void bgemm(cublasHandle_t h, const void** a, void** c, const float* s, int n, int count) {
          cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, s, a, CUDA_R_32F, n, a, CUDA_R_32F, n, s,
                              c, CUDA_R_32F, n, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
        """,
        expect=("2:3-3:88",),
        message="`cublasGemmBatchedEx`",
    ),
)
