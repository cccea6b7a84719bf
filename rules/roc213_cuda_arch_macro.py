"""ROC213 cuda-arch-macro."""

from __future__ import annotations

from rocmlint.cuda.conditions import (
    NO_SAFE_REWRITE,
    PASS_AND_COMPILER_ALTERNATIVES,
    ConditionRule,
    is_version_test,
    only_toolkit_headers_differ,
)
from rocmlint.cuda.frontend import CudaContext
from rocmlint.cuda.preprocessor import Directive
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# nvcc defines `__CUDA_ARCH__` as the architecture number (never 0), so `#if __CUDA_ARCH__` is `defined()`.
_BARE_TRUTH = frozenset({"__CUDA_ARCH__"})


class CudaArchMacro(ConditionRule, Rule):
    """
    ## What it does
    Flags `#if`/`#ifdef`/`#elif` conditions that detect the device pass with `__CUDA_ARCH__` (`#ifdef
    __CUDA_ARCH__`, `#ifndef`, `defined(__CUDA_ARCH__)`, a bare `#if __CUDA_ARCH__`) that a ROCm build reads
    without a HIP alternative in the condition or its chain (`|| defined(__HIP_DEVICE_COMPILE__)`,
    `&& !defined(USE_ROCM)`). A condition comparing the architecture number (`__CUDA_ARCH__ >= 800`, with or
    without `defined(__CUDA_ARCH__) &&`) selects a feature by version: ROC207 reports it, and a condition that
    also tests a CUDA version is ROC207's too. Each chain is reported once, at its first `__CUDA_ARCH__` test. A
    chain whose ROCm code would be the same if HIP-Clang defined `__CUDA_ARCH__` is not reported: the rest of the
    condition already leaves ROCm out (`defined(__GNUC__) && !defined(__clang__)`: HIP-Clang is clang); nor one
    whose arms only give fallbacks, each under `#ifndef` of itself, of the names every HIP-Clang pass predefines
    (`#ifndef __host__` / `#define __host__` / `#endif`): whichever arm ROCm takes, it defines nothing. Nor one
    whose arms ROCm skips could never build on ROCm by the project's design: they use names the file and its headers
    declare only under the project's own NVIDIA macro, and ROCm takes the arm after them (see ROC207). Nor one whose
    arms only include CUDA toolkit headers (`#ifdef __CUDA_ARCH__ #include <cuda_fp16.h> #endif`, pragmas beside):
    HIP-Clang's device pass includes HIP's runtime, which declares what they do. Nor one whose arm ROCm takes
    computes portably, from the same inputs, what the arm nvcc's device pass takes computes with per-thread
    intrinsics HIP has (`__clz(x)` / `__builtin_clz(x)`, `__umulhi` / a 64-bit multiply, device `::expf`
    overloads / `using std::exp`): HIP-Clang compiles the twin for the GPU, with the same result. An arm reading
    `threadIdx`, calling a warp-wide intrinsic or a function of the project, or a host stub (`return 0;`) is no twin.

    Not where the project defines `__CUDA_ARCH__` for ROCm itself, in the file or in a header it includes (a
    compat header's `#define __CUDA_ARCH__ __HIP_DEVICE_COMPILE__` under `#if defined(__HIPCC__)`). Nor in a host
    compiler's source (`.cpp`, `.cc`) or a header only such sources include, in a project whose build hands no
    `.cpp` to nvcc: there is no device pass there on either vendor.

    ## Why is this bad on ROCm?
    HIP-Clang never defines `__CUDA_ARCH__`, so device-pass detection is false on every ROCm pass:
    device-only code disappears and host-only code is compiled for the GPU. The HIP porting guide (ROCm/HIP
    `docs/how-to/hip_porting_guide.md`, "Compiler Defines") names `__HIP_DEVICE_COMPILE__` for pass detection.
    Code inside such an arm is ROCm-excluded for the other rules; this rule reports the gate itself. A chain copying
    the number into a macro of the project (`#ifdef __CUDA_ARCH__` / `#define XYZ_ARCH __CUDA_ARCH__` / `#else` /
    `#define XYZ_ARCH 0`) is reported even where both ROCm passes agree on 0 (sizes the host computes from it then
    match the device's): whether 0 is right depends on every reader of the macro, which the rule does not follow;
    reviewed so, the finding is a note to suppress (`// noqa: ROC213`), and its readers' tests are ROC207's.

    ## Example
    ```cuda
    __host__ __device__ inline void report_error(const char* what) {
    #ifdef __CUDA_ARCH__
      printf("device error: %s", what);
    #else
      fprintf(stderr, "host error: %s", what);
    #endif
    }
    ```

    ## Fix
    Device-pass detection gets HIP's device-pass test next to it, in every arm of the chain at once:
    ```cuda
    #if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)    // was: #ifdef __CUDA_ARCH__
    #if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)  // was: #ifndef __CUDA_ARCH__
    #if (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)) && defined(USE_FAST_MATH)
    ```
    A `__CUDACC__` test in the same chain gets `|| defined(__HIPCC__)` in the same fix (ROC214's). No fix
    for a chain that also compares `__CUDA_ARCH__` or tests `__NVCC__` or a CUDA version: once the chain
    names a ROCm macro those tests would no longer be reported.

    ## Fix safety
    Safe: on an NVIDIA build `__HIP_DEVICE_COMPILE__` is either undefined or, with HIP's NVIDIA headers
    (`hip_common.h`), defined exactly when `__CUDA_ARCH__` is, so every rewritten test keeps its truth
    value and nvcc compiles the same code; only the directive's own text changes. A bare `#if
    __CUDA_ARCH__` is read as `defined(__CUDA_ARCH__)`, since nvcc never defines it as 0. On ROCm the
    HIP device pass enters the arms the widened tests open (and those after a negated one): the fix is
    withheld when such an arm, or a macro of this file it uses, holds what HIP lacks (inline PTX, a 32-bit
    `*_sync` mask, an API with no HIP equivalent), and when a test is selected on (`defined(__CUDA_ARCH__) == 0`)
    rather than used for its truth.
    """

    code = "ROC213"
    name = "cuda-arch-macro"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"__CUDA_ARCH__",)

    def visit_directive(self, directive: Directive, ctx: CudaContext) -> None:
        if "__CUDA_ARCH__" not in directive.condition or not self._reports_cuda_arch(directive, ctx):
            return
        if is_version_test(directive.condition) or not self._candidate(directive, ctx):
            return  # an architecture comparison (or a CUDA version test) is a version gate: ROC207's
        if self._rocm_outcome_intended(directive, ctx):
            return  # ROCm takes the arm a recent NVIDIA GPU takes, or the only one it can build
        if only_toolkit_headers_differ(self._chains(ctx).arms_of(directive), ctx):
            return  # `#include <cuda_fp16.h>` in the device pass: HIP's runtime, always included there, declares it
        # The chain's `__CUDA_ARCH__` tests (and any `__CUDACC__` test beside them, ROC214's) all gain their HIP
        # test at once; an architecture comparison anywhere in the chain, or a test with no safe rewrite
        # (`__NVCC__`, a CUDA version), leaves the whole chain to the user.
        fix = self._chain_rewrite(
            directive, ctx, PASS_AND_COMPILER_ALTERNATIVES, refuse=NO_SAFE_REWRITE, bare_truth=_BARE_TRUTH
        )
        condition = " ".join(directive.condition.split())
        shown = condition if len(condition) <= 60 else condition[:57] + "..."
        message = (
            f"`{shown}` detects the device compilation pass, but HIP-Clang never defines `__CUDA_ARCH__`: "
            "on ROCm the device pass looks like the host pass; add `|| defined(__HIP_DEVICE_COMPILE__)`"
        )
        self._report_condition(directive, ctx, message, fix=fix)


CudaArchMacro.valid = (
    # Only the device pass's CUDA headers differ: HIP's runtime, which HIP-Clang always includes, declares them.
    Valid("#ifdef __CUDA_ARCH__\n#include <cuda.h>\n#pragma GCC diagnostic push\n#include <cuda_fp16.h>\n#endif\n"),
    # Fallbacks for host compilers of names HIP-Clang predefines in both passes: no-ops on ROCm.
    Valid(
        "#if !__CUDA_ARCH__\n  #ifndef __host__\n    #define __host__\n  #endif\n  #ifndef __device__\n"
        "    #define __device__\n  #endif\n#endif\n__host__ __device__ inline int one() { return 1; }\n"
    ),
    # A per-thread intrinsic and its portable twin: ROCm's device pass takes the builtin, which AMDGPU compiles.
    Valid(
        "__host__ __device__ inline int clz(unsigned x) {\n#ifdef __CUDA_ARCH__\n  return __clz(x);\n#else\n"
        "  return x == 0 ? 32 : __builtin_clz(x);\n#endif\n}\n"
    ),
    # The project gives ROCm builds an architecture number of its own, so the comparison is meant for them too.
    # CUDA source held in a raw string literal, for a code generator to emit: text, not directives.
    Valid(
        r"""
        static constexpr const char* int8_intrinsics = R"(
        #ifndef __CUDA_ARCH__
        #define DEF_IF_HOST { }
        #else
        #define DEF_IF_HOST ;
        #endif
        )";
        """,
    ),
    Valid(
        """
        #if defined(PROJECT_USE_HIP)
        #define __CUDA_ARCH__ 1300
        #endif
        __device__ int dot(int a, int b, int c) {
        #if __CUDA_ARCH__ >= 610
          return __dp4a(a, b, c);
        #else
          return c;
        #endif
        }
        """,
    ),
    # NVIDIA-only region (DeepSpeed ds_kernel_utils.h shape): ROCm never reads the tests.
    Valid(
        """
        #ifdef __HIP_PLATFORM_AMD__
        constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;
        #define HALF_PRECISION_AVAILABLE = 1
        #include <hip/hip_fp16.h>
        #else  // !__HIP_PLATFORM_AMD__
        constexpr int hw_warp_size = 32;
        #if __CUDA_ARCH__ >= 530
        #define HALF_PRECISION_AVAILABLE = 1
        #define PTX_AVAILABLE
        #endif
        #if __CUDA_ARCH__ >= 800
        #define ASYNC_COPY_AVAILABLE
        #endif
        #include <cuda_fp16.h>
        #endif  // __HIP_PLATFORM_AMD__
        """,
    ),
    # The ROCm alternative in the condition itself.
    Valid(
        """
        #if __CUDA_ARCH__ >= 800 || defined(USE_ROCM)
        template <int N>
        struct Converter<at::BFloat16, N> {
          static inline __device__ void to_float(const at::BFloat16 (&src)[N], float (&dst)[N]) {
            auto& src2 = reinterpret_cast<const nv_bfloat162 (&)[N / 2]>(src);
            auto& dst2 = reinterpret_cast<float2 (&)[N / 2]>(dst);
            for (int i = 0; i < N / 2; ++i) { dst2[i] = __bfloat1622float2(src2[i]); }
          }
        };
        #endif
        """,
    ),
    Valid(
        """
        __host__ __device__ inline int lane_count() {
        #if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
          return warpSize;
        #else
          return 0;
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ __forceinline__ __half2 hmax2(__half2 a, __half2 b) {
        #if !defined(__HIP_PLATFORM_AMD__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
          return __hmax2(a, b);
        #else
          return __halves2half2(__hgt(a.x, b.x) ? a.x : b.x, __hgt(a.y, b.y) ? a.y : b.y);
        #endif
        }
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        #if __CUDA_ARCH__ >= 900
        #define HAS_TMA 1
        #endif
        #endif
        """,
    ),
    # A host-only translation unit: no device pass on either vendor (DeepSpeed aio `.cpp` shape).
    Valid(
        """
        void BounceBuffer::alloc(int64_t numel, const torch::TensorOptions& options) {
        #if defined(__CUDA_ARCH__)
          buffer_ = torch::empty(numel, options).pin_memory();
        #else
          buffer_ = pinned_pool_->alloc(numel, options);
        #endif
        }
        """,
        path="deepspeed_cpu_op.cpp",
    ),
    # ROCm takes the arm nvcc's host pass and every recent GPU's device pass take (aiter custom_all_reduce.cu,
    # vLLM dtype_bfloat16.cuh shapes): nothing diverges.
    Valid(
        """
        switch (dtype) {
          case DTYPE_fp16: allreduce<half>(stream, inp, out, numel); break;
        #if (__CUDA_ARCH__ >= 800 || !defined(__CUDA_ARCH__))
          case DTYPE_bf16: allreduce<bf16_t>(stream, inp, out, numel); break;
        #endif
          default: throw std::runtime_error("unsupported dtype");
        }
        """,
    ),
    Valid(
        """
        inline __device__ float2 bf1622float2(const __nv_bfloat162 val) {
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
          assert(false);
        #else
          return __bfloat1622float2(val);
        #endif
          __builtin_unreachable();
        }
        """,
    ),
    # Architecture comparisons are version gates, ROC207's; so is a condition that also tests a CUDA version.
    Valid(
        """
        #if __CUDA_ARCH__ >= 800
        #define HAS_BF16_MATH 1
        #endif
        #if defined(__CUDA_ARCH__) && CUDA_VERSION >= 11000
        #define HAS_FAST_PATH 1
        #endif
        """,
    ),
    # The chain has a ROCm arm of its own.
    Valid(
        """
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        #define HAS_BF16_MATH 1
        #elif defined(__gfx90a__) || defined(__gfx942__)
        #define HAS_BF16_MATH 1
        #else
        #define HAS_BF16_MATH 0
        #endif
        """,
    ),
    # GCC's host pass only: HIP-Clang is clang, so ROCm takes the portable arm in both passes whatever it defined.
    Valid(
        """
        template <typename T>
        __host__ __device__ T comp_ellint_1(T k) {
        #if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)
          return std::comp_ellint_1(k);
        #else
          return xyz::math::comp_ellint_1<T>(k);
        #endif
        }
        """,
    ),
)
CudaArchMacro.invalid = (
    # Unguarded, or of a name HIP-Clang does not predefine in every pass: ROCm's device pass meets the definition.
    Invalid(
        "#if !__CUDA_ARCH__\n  #define __host__\n#endif\n#ifndef __CUDA_ARCH__\n  #ifndef __forceinline__\n"
        "  #define __forceinline__ inline\n  #endif\n#endif\n",
        expect=("1:1-1:19", "4:1-4:22"),
    ),
    Invalid(
        r"""
        #include <cstdio>
        __host__ __device__ inline void report_error(const char* what) {
        #ifdef __CUDA_ARCH__
          printf("device error: %s\n", what);
        #else
          fprintf(stderr, "host error: %s\n", what);
        #endif
        }
        """,
        expect=("3:1-3:21",),
        message="`defined(__CUDA_ARCH__)` detects the device compilation pass",
        fixed=r"""
        #include <cstdio>
        __host__ __device__ inline void report_error(const char* what) {
        #if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
          printf("device error: %s\n", what);
        #else
          fprintf(stderr, "host error: %s\n", what);
        #endif
        }
        """,
    ),
    Invalid(
        """
        template <typename T>
        __host__ __device__ inline T clamp01(T x) {
        #ifndef __CUDA_ARCH__  // host: std::
          return std::min(std::max(x, T(0)), T(1));
        #else
          return fminf(fmaxf(x, 0.f), 1.f);
        #endif
        }
        """,
        expect=("3:1-3:38",),
        fixed="""
        template <typename T>
        __host__ __device__ inline T clamp01(T x) {
        #if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)  // host: std::
          return std::min(std::max(x, T(0)), T(1));
        #else
          return fminf(fmaxf(x, 0.f), 1.f);
        #endif
        }
        """,
    ),
    # Every arm of the chain at once, with ROC214's `__CUDACC__` beside it.
    Invalid(
        """
        #if defined(__CUDACC__) && !defined(__CUDA_ARCH__)
        #define PASS_NAME "host"
        #elif __CUDA_ARCH__
        #define PASS_NAME "device"
        #endif
        """,
        expect=("1:1-1:51",),
        message="detects the device compilation pass",
        fixed="""
        #if (defined(__CUDACC__) || defined(__HIPCC__)) && (!defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__))
        #define PASS_NAME "host"
        #elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
        #define PASS_NAME "device"
        #endif
        """,
    ),
)
