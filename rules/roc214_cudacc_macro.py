"""ROC214 cudacc-macro."""

from __future__ import annotations

from rocmlint.cuda.conditions import (
    NO_SAFE_REWRITE,
    PASS_AND_COMPILER_ALTERNATIVES,
    ConditionRule,
    arm_outcomes_agree,
    hides_plain_cpp_from_nvcc,
    holds_only_pragmas,
    is_host_only_unit,
    nvcc_macros_change_no_rocm_code,
    nvidia_only_by_design,
    rocm_arm_written_for_rocm,
    with_complementary_chain,
)
from rocmlint.cuda.frontend import CudaContext
from rocmlint.cuda.preprocessor import Directive, names_in
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# nvcc's compiler macros and the HIP spelling each should be paired with.
_HIP_SPELLING = {"__CUDACC__": "__HIPCC__", "__NVCC__": "__HIPCC__", "__CUDACC_RTC__": "__HIPCC_RTC__"}
# A bare `#if __CUDA_ARCH__` (ROC213's, in the same chain) is a truth test; bare `__CUDACC__` is not rewritten.
_BARE_TRUTH = frozenset({"__CUDA_ARCH__"})


class CudaccMacro(ConditionRule, Rule):
    """
    ## What it does
    Flags `#if`/`#ifdef`/`#elif` conditions on `__CUDACC__`, `__NVCC__` or `__CUDACC_RTC__` that a ROCm build reads
    with no HIP alternative (`__HIPCC__`, `__HIP__`, `USE_ROCM`, `__HIP_PLATFORM_AMD__`). An arm only a Windows
    toolchain enters (`defined(__NVCC__) && defined(_MSC_VER)`, an nvcc-with-MSVC workaround), or a test inside one
    (`#ifdef _MSC_VER` around shims of GCC builtins), is not reported: neither Linux build takes it.

    ## Why is this bad on ROCm?
    HIP-Clang defines `__HIPCC__` and `__HIP__`, never `__CUDACC__` or `__NVCC__` (ROCm/HIP
    `docs/how-to/hip_porting_guide.md`, "Identifying the Compiler"); hipRTC defines `__HIPCC_RTC__`, not
    `__CUDACC_RTC__`. A header that adds `__host__ __device__`, includes device headers or declares kernels under
    `#ifdef __CUDACC__` therefore compiles them away on ROCm: host-only functions are then called from kernels, or
    identifiers are undeclared. PyTorch's hipify rewrites `__CUDACC__` to `__HIPCC__`
    (`torch/utils/hipify/cuda_to_hip_mappings.py`) for exactly this reason, and c10's own macros test both.

    ## Example
    ```cuda
    #ifdef __CUDACC__
    #define HOST_DEVICE __host__ __device__
    #else
    #define HOST_DEVICE
    #endif
    ```

    Not reported either when the code a ROCm build compiles would be the same if HIP-Clang defined nvcc's macros:
    the rest of the condition already leaves ROCm out (`!defined(__clang__)`, HIP-Clang being clang; a project macro
    NVIDIA's build alone defines, `defined(__CUDACC__) && defined(XYZ_USE_CUDA)`), or the arm ROCm takes instead
    holds the same code. Nor when the arm NVIDIA takes holds only what HIP lacks (a 32-bit-mask `__shfl_down_sync`)
    and ROCm takes an arm of its own (`#else __shfl_down`): the test is the author's vendor switch; also when the
    function writes that `#else` as a chain of its own testing the negation (`#if defined(__CUDACC__) __syncwarp();
    #endif` ... `#if !defined(__CUDACC__) __syncthreads(); #endif`). Nor `#ifdef __NVCC__ ... #else` whose `#else`
    names HIP's or a ROCm library's API (`rocblas_double_complex`): the arm ROCm takes is the one written for it.
    Nor an arm that could never build on ROCm by the project's design: it uses names its headers declare only under
    the project's NVIDIA macro, declares class members only such code names (CUDA Graph members called under
    `defined(__CUDACC__) && defined(XYZ_USE_CUDA)`), or, outside functions, holds only what HIP lacks (libcu++).
    Nor is a test of `__CUDACC_RTC__` alone in a project whose run-time compiles (its NVRTC, hipRTC or jitify calls)
    sit only in code the ROCm build does not compile: every ROCm compile takes the arm NVIDIA's ahead-of-time builds
    take. Nor in a host compiler's source (`.cpp`, `.cc`) or a header only such sources include, in a project whose
    build hands no `.cpp` to nvcc (a `LANGUAGE CUDA` source property, `-x cu`): nvcc's macros are undefined there on
    NVIDIA too. Nor a lone `#ifndef __CUDACC__` around plain C++ an old nvcc could not parse (`<filesystem>`):
    NVIDIA's arm is empty and HIP-Clang builds C++; unless it defines a macro or spells a reserved `__x__` word, a
    file's macro or a CUDA name.

    ## Fix
    Each `__CUDACC__` test gets `__HIPCC__` next to it (`__CUDACC_RTC__` gets `__HIPCC_RTC__`), in every arm of the
    chain at once:
    ```cuda
    #if defined(__CUDACC__) || defined(__HIPCC__)
    #define HOST_DEVICE __host__ __device__
    #else
    #define HOST_DEVICE
    #endif
    ```
    `#ifndef __CUDACC__` becomes `#if !defined(__CUDACC__) && !defined(__HIPCC__)`; inside a larger condition the
    widened test is parenthesised. A device-pass `__CUDA_ARCH__` test in the same chain gets `||
    defined(__HIP_DEVICE_COMPILE__)` in the same fix (ROC213's). `__NVCC__` gets no automatic fix: it means nvcc
    itself (nvcc-only pragmas and flags hip-clang rejects), and clang's CUDA mode with HIP's NVIDIA headers defines
    `__HIPCC__` without `__NVCC__`. No fix either for a chain that also compares `__CUDA_ARCH__` or tests a CUDA
    version: once the chain names a ROCm macro those tests would no longer be reported.

    ## Fix safety
    Safe: `__HIPCC__` never holds on a plain NVCC build, and where HIP's NVIDIA headers are used `hip_common.h`
    defines `__HIPCC__` only when `__CUDACC__` already is; nothing on NVIDIA defines `__HIPCC_RTC__`. Every
    rewritten test keeps its NVIDIA truth value, so nvcc compiles the same code; only the directive's own text
    changes. On ROCm, hipcc enters the arms the widened tests open (and those after a negated one): the fix is
    withheld when such an arm, or a macro of this file it uses, holds what HIP lacks (inline PTX, a 32-bit `*_sync`
    mask, an API with no HIP equivalent), and when a test is compared or selected on (`defined(__CUDACC__) == 0`)
    rather than used for its truth.
    """

    code = "ROC214"
    name = "cudacc-macro"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"__CUDACC__", b"__NVCC__", b"__CUDACC_RTC__")

    def visit_directive(self, directive: Directive, ctx: CudaContext) -> None:
        if "__" not in directive.text or is_host_only_unit(ctx):
            return  # a host-only `.cpp` file: nvcc's macros are undefined on NVIDIA as well, nothing diverges
        macro = next((name for name in names_in(directive.condition) if name in _HIP_SPELLING), None)
        if macro is None or not self._candidate(directive, ctx):
            return
        tested = {name for name in names_in(directive.condition) if name in _HIP_SPELLING}
        if tested == {"__CUDACC_RTC__"} and ctx.runtime_compiled_only_on_nvidia:
            return  # ROCm never compiles the project at run time: its compiles take the arm NVIDIA's offline ones do
        arms = self._chains(ctx).arms_of(directive)
        if nvcc_macros_change_no_rocm_code(arms, ctx) or nvidia_only_by_design(arms, ctx):
            return  # ROCm compiles the same code either way, or the arms it skips use what the project keeps off ROCm
        if "__CUDACC_RTC__" not in tested and arm_outcomes_agree(
            with_complementary_chain(arms, self._chains(ctx), ctx), ctx
        ):
            return  # ROCm takes its own arm where NVIDIA's holds only what HIP lacks (also a negated one-armed chain)
        if hides_plain_cpp_from_nvcc(arms, ctx) or rocm_arm_written_for_rocm(arms, ctx):
            return  # C++ hidden from an old nvcc (no arm lost), or `#ifdef __NVCC__ ... #else <rocBLAS types>`
        if all(holds_only_pragmas(arm, ctx) for arm in self._chains(ctx).arms_of(directive)):
            return  # compiler hints only (`#if !defined(__NVCC__)` + a pragma clang accepts): no code differs
        # The chain's tests (a device-pass `__CUDA_ARCH__` one too) gain their HIP test at once; `__NVCC__` none.
        fix = self._chain_rewrite(
            directive, ctx, PASS_AND_COMPILER_ALTERNATIVES, refuse=NO_SAFE_REWRITE, bare_truth=_BARE_TRUTH
        )
        self._report_condition(
            directive,
            ctx,
            f"HIP-Clang does not define `{macro}` (it defines `{_HIP_SPELLING[macro]}`), so a ROCm build evaluates "
            f"this test as a plain C++ compiler would and loses the CUDA-only arm; add `|| defined({_HIP_SPELLING[macro]})`",
            fix=fix,
        )


CudaccMacro.valid = (
    Valid(
        """
        #if defined(__CUDACC__) || defined(__HIPCC__)
        #define HOST_DEVICE __host__ __device__
        #define DEVICE_INLINE __device__ __forceinline__
        #else
        #define HOST_DEVICE
        #define DEVICE_INLINE inline
        #endif
        """,
    ),
    Valid(
        """
        #if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
        #define STD_NS cuda::std
        #else
        #include <type_traits>
        #define STD_NS std
        #endif
        """,
    ),
    # NVIDIA-only region and explicitly excluded ROCm.
    Valid("#ifndef USE_ROCM\n#ifdef __NVCC__\n#pragma nv_diag_suppress 20012\n#endif\n#endif\n"),
    # Traits for libcu++'s complex, which ROCm lacks: declarations nothing ROCm compiles could use.
    Valid(
        "#if defined(__CUDACC__)\n#include <cuda/std/complex>\n"
        "template <> struct Traits<::cuda::std::complex<float>> { typedef float Real; };\n#endif\n"
    ),
    Valid(
        """
        #if defined(__NVCC__) && !defined(__HIP_PLATFORM_AMD__)
        #define LAUNCH_BOUNDS(t) __launch_bounds__(t)
        #else
        #define LAUNCH_BOUNDS(t) __launch_bounds__(t, 1)
        #endif
        """,
    ),
    # A workaround for nvcc with MSVC (kaldi's kaldi-matrix.h): neither Linux build enters the arm.
    Valid(
        """
        #if defined(__NVCC__) && defined(_MSC_VER)
        template <typename Real>
        #endif
        friend Real TraceMatMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B);
        """,
    ),
    # An old nvcc's workaround (C++17 `<filesystem>` hidden from nvcc): plain C++ HIP-Clang builds, no arm lost.
    Valid(
        """
        #ifndef __CUDACC__
        #include <filesystem>
        inline bool exists(const char* p) { return std::filesystem::exists(p); }
        #endif
        """,
    ),
    # A host-only translation unit: no vendor sees `__CUDACC__` there.
    Valid(
        """
        #ifdef __CUDACC__
        #include <cuda_runtime.h>
        #endif
        torch::Tensor pinned_like(const torch::Tensor& t) { return torch::empty_like(t).pin_memory(); }
        """,
        path="pinned.cpp",
    ),
    # Compiler hints only: whichever arm a compiler takes, no code differs (faiss Panorama.h shape).
    Valid(
        """
        #if !defined(__NVCC__)
        FAISS_PRAGMA_IMPRECISE_FUNCTION_BEGIN
        #endif
        template <bool AllActive>
        static inline void compute_level_dot_kernel(const float* query, float* dot_products, size_t n);
        #ifdef __NVCC__
        #pragma nv_diag_suppress 20012
        #else
        #pragma GCC diagnostic ignored "-Wunused-function"
        #endif
        """,
    ),
    # An inner chain choosing nvcc's own spelling of the hint is a hint too.
    Valid(
        """
        #if defined __NVCC__
        #ifdef __NVCC_DIAG_PRAGMA_SUPPORT__
        #pragma nv_diagnostic push
        #pragma nv_diag_suppress = implicit_return_from_non_void_function
        #else
        #pragma diag_suppress = implicit_return_from_non_void_function
        #endif
        #endif
        """,
    ),
    # HIP-Clang is clang: the condition is false on ROCm whether or not it defined `__CUDACC__` (amrex's
    # AMReX_Parser_Y.H shape).
    Valid(
        """
        #if defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__)
        #define XYZ_LIBM_CALL(f, x) std::f(x)
        #else
        #define XYZ_LIBM_CALL(f, x) xyz::math::f(x)
        #endif
        """,
    ),
    # The arm ROCm takes (as clang) holds the same code as the one it misses (amrex's AMReX_Extension.H).
    Valid(
        """
        #if defined(__CUDA_ARCH__) && defined(__CUDACC__)
        #define XYZ_ASSUME(cond) __builtin_assume(cond)
        #elif defined(__clang__)
        #define XYZ_ASSUME(cond) __builtin_assume(cond)
        #else
        #define XYZ_ASSUME(cond)
        #endif
        """,
    ),
    # The chain handles ROCm in its own arm.
    Valid(
        """
        #if defined(__HIPCC__)
        #include <hip/hip_runtime.h>
        #elif defined(__CUDACC__)
        #include <cuda_runtime.h>
        #endif
        """,
    ),
    # ROCm takes its own arm where NVIDIA's holds only what HIP lacks (a 32-bit-mask shuffle): a vendor switch.
    Valid(
        "__device__ float sum(float v) {\n  for (int o = 16; o > 0; o >>= 1) {\n#if defined(__CUDACC__)\n"
        "    v += __shfl_down_sync(0xffffffff, v, o);\n#else\n    v += __shfl_down(v, o);\n#endif\n  }\n  return v;\n}\n"
    ),
    # The arm the other compilers take is written for ROCm (rocBLAS's complex type): a vendor switch.
    Valid(
        "#ifdef __NVCC__\n__host__ __device__ inline double re(cuDoubleComplex x) { return x.x; }\n#else\n"
        "__host__ __device__ inline double re(rocblas_double_complex x) { return x.real(); }\n#endif\n"
    ),
    # The `#else` written as a chain of its own after the loop: ROCm gets `__syncthreads` where NVIDIA gets `__syncwarp`.
    Valid(
        "__device__ void step(float* s, int n) {\n  for (int i = 0; i < n; i++) {\n    s[i] += 1.f;\n"
        "#if defined(__CUDACC__)\n    __syncwarp();\n#endif\n  }\n\n#if !defined(__CUDACC__)\n  __syncthreads();\n#endif\n}\n"
    ),
)
CudaccMacro.invalid = (
    # The `#else` names no ROCm API: a plain C++ fallback ROCm takes by accident.
    Invalid(
        "#ifdef __NVCC__\n__host__ __device__ inline double re(cuDoubleComplex x) { return x.x; }\n#else\n"
        "inline double re(std::complex<double> x) { return x.real(); }\n#endif\n",
        expect=("1:1-1:16",),
        no_fix=True,
    ),
    # No chain of the function gives ROCm its own step: it loses the sync.
    Invalid(
        "__device__ void step(float* s, int n) {\n  for (int i = 0; i < n; i++) {\n    s[i] += 1.f;\n"
        "#if defined(__CUDACC__)\n    __syncwarp();\n#endif\n  }\n}\n",
        expect=("4:1-4:24",),
    ),
    Invalid(
        """
        #ifdef __CUDACC__
        #define HOST_DEVICE __host__ __device__
        #else
        #define HOST_DEVICE
        #endif
        HOST_DEVICE inline float gelu(float x) { return 0.5f * x * (1.f + tanhf(0.79788456f * x)); }
        """,
        expect=("1:1-1:18",),
        message="add `|| defined(__HIPCC__)`",
        fixed="""
        #if defined(__CUDACC__) || defined(__HIPCC__)
        #define HOST_DEVICE __host__ __device__
        #else
        #define HOST_DEVICE
        #endif
        HOST_DEVICE inline float gelu(float x) { return 0.5f * x * (1.f + tanhf(0.79788456f * x)); }
        """,
    ),
    Invalid(
        """
        struct OutputTileThreadMap {
        #if defined(__CUDACC_RTC__)
          static constexpr int kElements = 8;
        #else
          static constexpr int kElements = 4;
        #endif
        };
        """,
        expect=("2:1-2:28",),
        message="`__HIPCC_RTC__`",
        fixed="""
        struct OutputTileThreadMap {
        #if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
          static constexpr int kElements = 8;
        #else
          static constexpr int kElements = 4;
        #endif
        };
        """,
    ),
    Invalid(
        """
        #if !defined(__NVCC__)
        #include <cmath>
        inline float fast_exp(float x) { return std::exp(x); }
        #else
        __device__ inline float fast_exp(float x) { return __expf(x); }
        #endif
        """,
        expect=("1:1-1:23",),
        message="`__NVCC__`",
        # No fix: `__NVCC__` means nvcc itself.
        no_fix=True,
    ),
    Invalid(
        """
        #if defined(_MSC_VER)
        #define FORCE_INLINE __forceinline
        #elif defined(__CUDACC__)
        #define FORCE_INLINE __forceinline__
        #else
        #define FORCE_INLINE inline __attribute__((always_inline))
        #endif
        """,
        expect=("3:1-3:26",),
        fixed="""
        #if defined(_MSC_VER)
        #define FORCE_INLINE __forceinline
        #elif defined(__CUDACC__) || defined(__HIPCC__)
        #define FORCE_INLINE __forceinline__
        #else
        #define FORCE_INLINE inline __attribute__((always_inline))
        #endif
        """,
    ),
    # A lone macro this file defines as code is no hint.
    Invalid(
        """
        #define DEVICE_STUBS inline int device_count() { return 0; }
        #if !defined(__NVCC__)
        DEVICE_STUBS
        #endif
        """,
        expect=("2:1-2:23",),
        no_fix=True,
    ),
    Invalid(
        """
        #ifndef __CUDACC__
        #define __host__
        #define __device__
        #endif
        """,
        expect=("1:1-1:19",),
        fixed="""
        #if !defined(__CUDACC__) && !defined(__HIPCC__)
        #define __host__
        #define __device__
        #endif
        """,
    ),
)
