"""ROC214 cudacc-macro."""

from __future__ import annotations

from rocmlint.cuda.conditions import (
    NO_SAFE_REWRITE,
    PASS_AND_COMPILER_ALTERNATIVES,
    ConditionRule,
    arm_outcomes_agree,
    holds_only_pragmas,
    is_host_only_unit,
    nvcc_macros_change_no_rocm_code,
    nvidia_only_by_design,
    rocm_arm_written_for_rocm,
    with_complementary_chain,
    works_around_nvcc,
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
    Flags `#if`/`#ifdef`/`#elif` conditions on `__CUDACC__`, `__NVCC__` or `__CUDACC_RTC__` that a ROCm build reads with
    no HIP alternative (`__HIPCC__`, `__HIP__`, `USE_ROCM`, `__HIP_PLATFORM_AMD__`). An arm only a Windows toolchain
    enters (`defined(__NVCC__) && defined(_MSC_VER)`, an nvcc-with-MSVC workaround), or a test inside one (`#ifdef
    _MSC_VER` around shims of GCC builtins), is not reported: neither Linux build takes it.

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

    Not reported either when the code a ROCm build compiles would be the same if HIP-Clang defined nvcc's macros: the
    rest of the condition already leaves ROCm out (`!defined(__clang__)`, HIP-Clang being clang; a project macro
    NVIDIA's build alone defines, `defined(__CUDACC__) && defined(XYZ_USE_CUDA)`), or the arm ROCm takes instead holds
    the same code. Nor when the arm NVIDIA takes holds only what HIP lacks (a 32-bit-mask `__shfl_down_sync`) and ROCm
    takes an arm of its own (`#else __shfl_down`): the test is the author's vendor switch; also when the function writes
    that `#else` as a chain of its own testing the negation (`#if defined(__CUDACC__) __syncwarp(); #endif` ... `#if
    !defined(__CUDACC__) __syncthreads(); #endif`). Nor `#ifdef __NVCC__ ... #else` (or a lone `#if !defined(__NVCC__)`)
    whose arm for other compilers names HIP's, a ROCm library's or ROCm's HSA runtime API (`rocblas_double_complex`,
    `hsa_agent_t`), what the file defines only in such arms, or opens with a comment saying it is for HIP (`// For HIP,
    ...`; `#else // or HIP`): it is written for ROCm. Nor `#ifdef __CUDACC__` in a header whose HIP twin testing
    `__HIPCC__` (`impl/rocm.hpp` beside `impl/cuda.hpp`) every file including it includes too, and an `#ifdef
    __CUDACC__` or `__NVCC__` in a file giving HIP-Clang an arm of its own that includes ROCm headers (`#ifdef __HIP__
    #include <rocm_smi/rocm_smi.h>`). Nor an arm that could never build on ROCm by the project's design: it uses names
    its headers declare only under the project's NVIDIA macro, declares class members only such code names (CUDA Graph
    members called under `defined(__CUDACC__) && defined(XYZ_USE_CUDA)`), or, outside functions, holds only what HIP
    lacks (libcu++). Nor is a test of `__CUDACC_RTC__` alone in a project whose run-time compiles (its NVRTC, hipRTC or
    jitify calls) sit only in code the ROCm build does not compile: every ROCm compile takes the arm NVIDIA's
    ahead-of-time builds take. Nor in a host compiler's source (`.cpp`, `.cc`) or a header only such sources include, in
    a project whose build hands no `.cpp` to nvcc (a `LANGUAGE CUDA` source property, `-x cu`; a tool's Makefile naming
    nothing outside its folder hands over only that folder's): nvcc's macros are undefined there on NVIDIA too. Nor a
    lone `#ifndef __CUDACC__` around plain C++ an old nvcc could not parse (`<filesystem>`): NVIDIA's arm is empty and
    HIP-Clang builds C++; unless it defines a macro or spells a reserved `__x__` word, a file's macro or a CUDA name.
    Nor an old nvcc's workaround: an `#if`/`#else` on `__NVCC__` handing nvcc the other arm's code with plain C++ left
    out (`[[no_unique_address]]`), a dummy `return` after a statement that returns, nvcc's version recorded in a macro
    (`#ifdef __NVCC__ #define XYZ_NVCC_VERSION __CUDACC_VER_MAJOR__ #endif`, maybe with an `#else` defining it as 0), a
    test only an old toolkit passes (`defined(__NVCC__) && XYZ_CUDA_VERSION < 1102`, the project's macro for nvcc's
    version read as the toolkit's), an arm nvcc alone enters holding the later arms' code with GNU attributes left out
    (`#define XYZ_FORCEINLINE inline` before `inline __attribute__((always_inline))`), copy and move members written out
    `__host__ __device__` for nvcc and `= default` for the others (clang infers their execution space), `__device__`
    constexpr functions for nvcc alone (clang's are both), GCC builtins defined for nvcc (`#define
    __builtin_ia32_prefetch(...)`). A project macro standing for `_MSC_VER` (`#define XYZ_MSVC _MSC_VER`) is a Windows
    toolchain's test.

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
    defined(__HIP_DEVICE_COMPILE__)` in the same fix (ROC213's). `__NVCC__` gets no automatic fix: it means nvcc itself
    (nvcc-only pragmas and flags hip-clang rejects), and clang's CUDA mode with HIP's NVIDIA headers defines `__HIPCC__`
    without `__NVCC__`. No fix either for a chain that also compares `__CUDA_ARCH__` or tests a CUDA version: once the
    chain names a ROCm macro those tests would no longer be reported.

    ## Fix safety
    Safe: `__HIPCC__` never holds on a plain NVCC build, and where HIP's NVIDIA headers are used `hip_common.h` defines
    `__HIPCC__` only when `__CUDACC__` already is; nothing on NVIDIA defines `__HIPCC_RTC__`. Every rewritten test keeps
    its NVIDIA truth value, so nvcc compiles the same code; only the directive's own text changes. On ROCm, hipcc enters
    the arms the widened tests open (and those after a negated one): the fix is withheld when such an arm, or a macro of
    this file it uses, holds what HIP lacks (inline PTX, a 32-bit `*_sync` mask, an API with no HIP equivalent), and
    when a test is compared or selected on (`defined(__CUDACC__) == 0`) rather than used for its truth.
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
        if works_around_nvcc(arms, ctx) or rocm_arm_written_for_rocm(arms, ctx):
            return  # an nvcc workaround (C++ hidden from it, a dummy `return`), or `#else <rocBLAS types>`
        if all(holds_only_pragmas(arm, ctx) for arm in arms):
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
        "#if defined(__CUDACC__) || defined(__HIPCC__)\n#define HOST_DEVICE __host__ __device__\n"
        "#define DEVICE_INLINE __device__ __forceinline__\n#else\n#define HOST_DEVICE\n#define DEVICE_INLINE inline\n#endif\n"
    ),
    Valid(
        "#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)\n#define STD_NS cuda::std\n#else\n"
        "#include <type_traits>\n#define STD_NS std\n#endif\n"
    ),
    # NVIDIA-only region and explicitly excluded ROCm.
    Valid("#ifndef USE_ROCM\n#ifdef __NVCC__\n#pragma nv_diag_suppress 20012\n#endif\n#endif\n"),
    # An old nvcc's copy of the same code, an attribute left out: HIP-Clang takes what every other compiler does.
    Valid("struct Holder {\n#ifndef __NVCC__\n  [[no_unique_address]] Mapping m;\n#else\n  Mapping m;\n#endif\n};\n"),
    # A dummy `return` after an `if constexpr` chain that always returns: only there for nvcc's missing-return warning.
    Valid(
        "template <int R> constexpr int pad() {\n  if constexpr (R > 1) {\n    return R;\n  } else {\n    return 1;\n  }\n"
        "#if defined(__NVCC__) || defined(__INTEL_COMPILER)\n  return 0;\n#endif\n}\n"
    ),
    # Traits for libcu++'s complex, which ROCm lacks: declarations nothing ROCm compiles could use.
    Valid(
        "#if defined(__CUDACC__)\n#include <cuda/std/complex>\n"
        "template <> struct Traits<::cuda::std::complex<float>> { typedef float Real; };\n#endif\n"
    ),
    Valid(
        "#if defined(__NVCC__) && !defined(__HIP_PLATFORM_AMD__)\n#define LAUNCH_BOUNDS(t) __launch_bounds__(t)\n#else\n"
        "#define LAUNCH_BOUNDS(t) __launch_bounds__(t, 1)\n#endif\n"
    ),
    # A workaround for nvcc with MSVC (kaldi's kaldi-matrix.h): neither Linux build enters the arm.
    Valid(
        "#if defined(__NVCC__) && defined(_MSC_VER)\ntemplate <typename Real>\n#endif\n"
        "friend Real TraceMatMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B);\n"
    ),
    # An old nvcc's workaround (C++17 `<filesystem>` hidden from nvcc): plain C++ HIP-Clang builds, no arm lost.
    Valid(
        "#ifndef __CUDACC__\n#include <filesystem>\n"
        "inline bool exists(const char* p) { return std::filesystem::exists(p); }\n#endif\n"
    ),
    # Compiler identification: nvcc's version recorded in a macro, which every other compiler leaves undefined.
    Valid(
        "#if defined(__NVCC__)\n#define XYZ_COMPILER_NVCC __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ * 10\n#endif\n"
    ),
    # Clang makes constexpr functions host and device: only nvcc needs `__device__` spelled.
    Valid("#ifdef __NVCC__\n__device__ constexpr int\n#else\nconstexpr int\n#endif\nw(int d) { return d; }\n"),
    # A host-only translation unit: no vendor sees `__CUDACC__` there.
    Valid(
        "#ifdef __CUDACC__\n#include <cuda_runtime.h>\n#endif\n"
        "torch::Tensor pinned_like(const torch::Tensor& t) { return torch::empty_like(t).pin_memory(); }\n",
        path="pinned.cpp",
    ),
    # Compiler hints only: whichever arm a compiler takes, no code differs.
    Valid(
        """
        #if !defined(__NVCC__)
        XYZ_PRAGMA_IMPRECISE_FUNCTION_BEGIN
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
    # An inner chain choosing nvcc's own spelling of the hint is a hint too, and so are macros spelling hints.
    Valid(
        "#if defined __NVCC__\n#define XYZ_STR(x) #x\n#ifdef __NVCC_DIAG_PRAGMA_SUPPORT__\n#pragma nv_diagnostic push\n"
        "#define XYZ_SUPPRESS(x) _Pragma(XYZ_STR(nv_diag_suppress x))\n#else\n#pragma diag_suppress = implicit_return\n"
        "#define XYZ_SUPPRESS(x) _Pragma(XYZ_STR(diag_suppress = x))\n#endif\n#else\n#define XYZ_SUPPRESS(x)\n#endif\n"
    ),
    # HIP-Clang is clang: the condition is false on ROCm whether or not it defined `__CUDACC__`.
    Valid(
        "#if defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__)\n#define XYZ_LIBM_CALL(f, x) std::f(x)\n#else\n"
        "#define XYZ_LIBM_CALL(f, x) xyz::math::f(x)\n#endif\n"
    ),
    # The arm ROCm takes (as clang) holds the same code as the one it misses.
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
        "#if defined(__HIPCC__)\n#include <hip/hip_runtime.h>\n#elif defined(__CUDACC__)\n#include <cuda_runtime.h>\n#endif\n"
    ),
    # ROCm takes its own arm where NVIDIA's holds only what HIP lacks (a 32-bit-mask shuffle): a vendor switch.
    Valid(
        "__device__ float sum(float v) {\n  for (int o = 16; o > 0; o >>= 1) {\n#if defined(__CUDACC__)\n"
        "    v += __shfl_down_sync(0xffffffff, v, o);\n#else\n    v += __shfl_down(v, o);\n#endif\n  }\n  return v;\n}\n"
    ),
    # The arm the other compilers take is written for ROCm (rocBLAS's complex type; its author's comment): a switch.
    Valid(
        "#ifdef __NVCC__\n__host__ __device__ inline double re(cuDoubleComplex x) { return x.x; }\n#else\n"
        "__host__ __device__ inline double re(rocblas_double_complex x) { return x.real(); }\n#endif\n"
    ),
    Valid(
        "float mag(cuFloatComplex x) {\n#ifdef __NVCC__\n  return cuCabsf(x);\n#else\n  // For HIP, our own\n  return 0;\n#endif\n}\n"
    ),
    Valid("#ifdef __NVCC__\n#define DEV __device__\n#else // clang or HIP\n#define DEV __host__ __device__\n#endif\n"),
    # The arm nvcc skips calls ROCm's HSA runtime, and the `#else` of the next switch names what only it defines.
    Valid(
        "#if !defined(__NVCC__)\nstruct Agents { std::vector<hsa_agent_t> gpus; };\n__attribute__((weak)) Agents& agents();\n"
        "#endif\n"
        "int count() {\n#if defined(__NVCC__)\n  return -1;\n#else\n  return agents().gpus.size();\n#endif\n}\n"
    ),
    # The `#else` written as a chain of its own after the loop: ROCm gets `__syncthreads` where NVIDIA gets `__syncwarp`.
    Valid(
        "__device__ void step(float* s, int n) {\n  for (int i = 0; i < n; i++) {\n    s[i] += 1.f;\n"
        "#if defined(__CUDACC__)\n    __syncwarp();\n#endif\n  }\n\n#if !defined(__CUDACC__)\n  __syncthreads();\n#endif\n}\n"
    ),
)
CudaccMacro.invalid = (
    # Without ROCm's runtime the arm nvcc skips is a host fallback, and so is the `#else` naming what it defines.
    Invalid(
        "#if !defined(__NVCC__)\nstruct Agents { std::vector<int> gpus; };\n__attribute__((weak)) Agents& agents();\n"
        "#endif\nint count() {\n#if defined(__NVCC__)\n  return -1;\n#else\n  return agents().gpus.size();\n#endif\n}\n",
        expect=("1:1-1:23", "6:1-6:22"),
        no_fix=True,
    ),
    # The `#else` names no ROCm API (its comment excludes HIP): a plain C++ fallback ROCm takes by accident.
    Invalid(
        "#ifdef __NVCC__\n__host__ __device__ inline double re(cuDoubleComplex x) { return x.x; }\n#else // not HIP\n"
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
        no_fix=True,  # `__NVCC__` means nvcc itself
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
        "#define DEVICE_STUBS inline int device_count() { return 0; }\n#if !defined(__NVCC__)\nDEVICE_STUBS\n#endif\n",
        expect=("2:1-2:23",),
        no_fix=True,
    ),
    # The arm only nvcc gets adds CUDA's qualifiers (through a macro): the vendor split, not an nvcc workaround.
    Invalid(
        "#define XYZ_HD __host__ __device__\n#ifdef __NVCC__\n#define XYZ_FN XYZ_HD inline\n#else\n#define XYZ_FN inline\n"
        "#endif\n",
        expect=("2:1-2:16",),
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
