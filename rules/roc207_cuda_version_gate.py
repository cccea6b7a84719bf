"""ROC207 cuda-version-gate."""

from __future__ import annotations

from rocmlint.cuda.conditions import (
    CUDA_VERSION_MACROS,
    ConditionRule,
    architecture_test_message,
    compares_cuda_arch,
    compares_cuda_arch_for_rocm,
    toolkit_version_read,
    version_test_message,
)
from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.preprocessor import Define, Directive, names_in
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

__all__ = ["CUDA_VERSION_MACROS", "CudaVersionGate"]


class CudaVersionGate(ConditionRule, Rule):
    """
    ## What it does
    Flags `#if`/`#elif` tests on `CUDA_VERSION`, `CUDART_VERSION` or `__CUDACC_VER_MAJOR__`/`_MINOR__`, and
    comparisons of the architecture number (`__CUDA_ARCH__ >= 800`, `defined(__CUDA_ARCH__) && __CUDA_ARCH__ <
    700`), that a ROCm build reads without the condition (or its `#if/#elif` chain) saying anything about ROCm,
    and a macro standing for such a comparison (`#define HAS_BF16 (__CUDA_ARCH__ >= 800)`) where ROCm reads it; and
    a version macro read as a value in code ROCm compiles (`return CUDA_VERSION;`), which nothing defines there.
    Device-pass detection (`#ifdef __CUDA_ARCH__`) is ROC213's; a chain is reported once, at its first test. Not
    flagged: a macro the file defines itself; a chain where ROCm takes the arm a recent toolkit or GPU takes, or the
    only arm it can build; one no arm of which runs, each compiling on ROCm (after an `if`/`if constexpr` chain whose
    every arm, `else` included, returns: an old nvcc's missing-return workaround); one whose ROCm code nvcc's macros
    cannot change (the condition already leaves HIP-Clang out, `!defined(__clang__)`, or holds a project macro only
    NVIDIA's build defines; see ROC214); one whose arms only declare constants no project file names; one whose arm ROCm
    skips only opts kernels in to more dynamic shared memory (`cudaFuncAttributeMaxDynamicSharedMemorySize`, reading the
    opt-in cap where ROCm's arm reads the per-block maximum): an AMD GPU gives a kernel its whole LDS without an opt-in;
    one whose arm ROCm skips only re-creates CUDA library names a toolkit renamed (`#define CUSPARSE_CSRMV_ALG1
    CUSPARSE_SPMV_CSR_ALG1`), which HIP has under HIPIFY's names; one needing a switch the file turns off by commenting
    out its `#define` (`//#define TEXTURE`), which nothing else defines; one whose arms ROCm skips could never build on
    ROCm by the project's design (`nvidia_only_by_design`): they use names the file and its headers declare only in arms
    the project's own NVIDIA macro opens (`#if defined(XYZ_DEVICE_CUDA)` around multimem helpers), while ROCm takes the
    arm after them. An arm of portable code is still reported.

    ## Why is this bad on ROCm?
    HIP-Clang defines none of the CUDA toolkit's version macros, nor `__CUDA_ARCH__`, so the preprocessor evaluates
    them as 0: `#if CUDA_VERSION >= 11000` is silently false on ROCm and `#if __CUDA_ARCH__ < 700` silently true, so
    ROCm loses a specialisation or takes a legacy arm (state-spaces/mamba `selective_scan_common.h` hides its
    BFloat16 `Converter` behind `__CUDA_ARCH__ >= 800`). The HIP porting guide ("HIP_ARCH Defines") names
    `__HIP_ARCH_HAS_*__`/`__gfx*__` macros for architecture features. Which arm ROCm ends up compiling is an
    accident of how the test was written. PyTorch's HIP notes (`docs/source/notes/hip.rst`, "CUDA API to HIP API
    mappings in C++") recommend making the choice explicit with `|| defined(USE_ROCM)` or `&& !defined(USE_ROCM)`.
    The accident is sometimes the right answer: in NVIDIA/apex `csrc/megatron/scaled_masked_softmax.h` the `#else`
    of `#if CUDA_VERSION >= 9000` is the non-`_sync` `__shfl_xor`, which is what ROCm needs (the `_sync` arm passes
    a 32-bit mask, ROC210), so decide which arm ROCm needs before adding a term.

    ## Example
    ```cuda
    template <typename T>
    __device__ __forceinline__ T shfl_xor(T value, int lane_mask, unsigned mask = 0xffffffff) {
    #if CUDA_VERSION >= 9000
      return __shfl_xor_sync(mask, value, lane_mask);
    #else
      return __shfl_xor(value, lane_mask);
    #endif
    }
    ```

    ## Fix
    By hand, for the example above: `#if CUDA_VERSION >= 9000 && !defined(USE_ROCM)` keeps ROCm on the
    non-`_sync` arm it needs. The automatic fix only ever moves ROCm *into* the arm the test opens, by
    adding the ROCm test (`rocm-condition`, default shown):
    ```cuda
    #if CUDART_VERSION >= 11000 || defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #define HAS_BF16_TYPES 1
    #endif
    ```
    and only when that arm holds nothing a CUDA rule could report or that looks CUDA-only (any rule's trigger string
    such as `_sync`, `asm` or a CUDA header; an intrinsic call `__name(`; `cu*`/`CU_*` driver names; `nv_*` types), and
    when the chain tests no `__CUDA_ARCH__`, `__CUDACC__` or `__NVCC__` (the new ROCm term would hide those tests from
    ROC213/ROC214; so an architecture comparison gets no automatic fix). The example above gets no fix.

    ## Fix safety
    Unsafe: nothing in the added term is defined by an NVIDIA build, so NVIDIA keeps its arm, but ROCm now
    compiles this arm, and only a reviewer knows whether ROCm has what it enables (a
    `#define HAS_FEATURE 1` arm is free of CUDA code yet may switch on a CUDA-only feature elsewhere).
    """

    code = "ROC207"
    name = "cuda-version-gate"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    language = "cuda"
    triggers = (b"CUDA_VERSION", b"CUDART_VERSION", b"__CUDACC_VER_", b"__CUDA_API_VERSION", b"__CUDA_ARCH__")

    def visit_directive(self, directive: Directive, ctx: CudaContext) -> None:
        if not self._candidate(directive, ctx):
            return
        macro = next((name for name in names_in(directive.condition) if name in CUDA_VERSION_MACROS), None)
        if macro is None:
            if compares_cuda_arch(directive.condition) and self._reports_cuda_arch(directive, ctx):
                self._report_architecture(directive, ctx)
            return
        if ctx.define(macro, directive) is not None:
            return  # the file defines the macro itself where ROCm sees it
        if self._rocm_outcome_intended(directive, ctx) or self._written_for_no_toolkit(directive, ctx):
            return  # ROCm takes the arm a recent CUDA toolkit takes, the only one it can build, or one meant for it
        message = version_test_message(directive, macro, ctx)
        self._report_condition(directive, ctx, message, fix=self._rocm_term_fix(directive, ctx))

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """The toolkit's version macros read as values in code (`return CUDA_VERSION;`)."""
        reads = ctx.word_offsets(*CUDA_VERSION_MACROS)
        return {"identifier": reads} if reads else {}

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        if message := toolkit_version_read(node, ctx):
            ctx.report(node, message)

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        if compares_cuda_arch_for_rocm(define, ctx):
            ctx.report(
                define.directive,
                f"`{define.name}` stands for `{' '.join(define.value.split())}`, which HIP-Clang reads with "
                "`__CUDA_ARCH__` as 0: every test of it is false (or, for `<`, true) on ROCm; decide whether ROCm "
                "has the feature and define it for ROCm in a `USE_ROCM` arm",
            )

    def _report_architecture(self, directive: Directive, ctx: CudaContext) -> None:
        if self._rocm_outcome_intended(directive, ctx):
            return  # ROCm takes the arm a recent NVIDIA GPU takes, or the only one it can build
        message = architecture_test_message(directive, ctx)
        self._report_condition(directive, ctx, message, fix=self._rocm_term_fix(directive, ctx))


CudaVersionGate.valid = (
    # A version read where ROCm never compiles it, or which the file defines for ROCm.
    Valid(
        "#ifndef USE_ROCM\nint v() { return CUDART_VERSION; }\n#endif\n#define CUDA_VERSION 12000\nint w = CUDA_VERSION;\n"
    ),
    # The PyTorch-recommended explicit forms.
    Valid(
        "template <typename T>\n__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {\n"
        "#if CUDA_VERSION >= 9000 && !defined(USE_ROCM)\n  return __shfl_xor_sync(0xffffffff, value, lane_mask);\n"
        "#else\n  return __shfl_xor(value, lane_mask);\n#endif\n}\n"
    ),
    Valid(
        "#if defined(USE_ROCM) || CUDART_VERSION >= 11000\n#define HAS_BF16_TYPES 1\n#endif\n"
        "__global__ void scale(float* out, const float* in, float s, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = in[i] * s;\n}\n"
    ),
    # A chain with an arm of HIP-Clang's own (`__HIPCC__`): its `__CUDACC__` arm is nvcc's.
    Valid("#ifdef __CUDACC__\n#if __CUDACC_VER_MAJOR__ >= 9\n#define SA 1\n#endif\n#elif defined(__HIPCC__)\n#endif\n"),
    # Inside an NVIDIA-only region: ROCm never reads the test.
    Valid("#ifndef USE_ROCM\n#include <cuda.h>\n#if CUDA_VERSION >= 12000\n#include <cuda/barrier>\n#endif\n#endif\n"),
    Valid(
        "__device__ __forceinline__ unsigned to_shared(const void* ptr) {\n"
        "#if !defined(__HIP_PLATFORM_AMD__) && __CUDACC_VER_MAJOR__ >= 11\n  return __cvta_generic_to_shared(ptr);\n"
        "#else\n  return static_cast<unsigned>(reinterpret_cast<size_t>(ptr));\n#endif\n}\n"
    ),
    # The chain has an arm of its own for ROCm.
    Valid(
        "#if defined(__HIP_PLATFORM_AMD__)\n#define FP8_AVAILABLE (HIP_VERSION >= 60000000)\n#elif CUDA_VERSION >= 11080\n"
        "#define FP8_AVAILABLE 1\n#else\n#define FP8_AVAILABLE 0\n#endif\n"
    ),
    # An architecture-comparison macro defined only for NVIDIA, or deciding for ROCm in its own replacement.
    Valid(
        "#if defined(USE_ROCM)\n#define BF16_AVAILABLE 1\n#else\n#define BF16_AVAILABLE (__CUDA_ARCH__ >= 800)\n#endif\n"
        "#define FP8_AVAILABLE (defined(USE_ROCM) || __CUDA_ARCH__ >= 890)\n"
    ),
    # ROCm takes the `#else` of an arm it could never build (a 32-bit-mask `_sync` shuffle).
    Valid(
        "template <typename T>\ninline __device__ T shfl_xor(const T val, int laneMask, int width = kWarpSize) {\n"
        "#if CUDA_VERSION >= 9000\n  return __shfl_xor_sync(0xffffffff, val, laneMask, width);\n"
        "#else\n  return __shfl_xor(val, laneMask, width);\n#endif\n}\n"
    ),
    # Workarounds for one toolkit: no recent CUDA toolkit takes them either (cupy, ginkgo shapes); inside an arm only
    # MSVC enters (shims of GCC builtins), no Linux build reads the test.
    Valid(
        "#if (defined(_MSC_VER) && (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ == 2))\n"
        "  #define __builtin_unreachable() __assume(false)\n#endif\n#ifdef _MSC_VER\n"
        "#if !defined(__CUDACC__) || __CUDACC_VER_MAJOR__ < 11\nint __builtin_ctz(unsigned x);\n#endif\n#endif\n"
    ),
    # ROCm takes the arm the newest toolkit takes; an older nvcc's workaround is NVIDIA's alone.
    Valid("#if !defined(__CUDACC_VER_MAJOR__) || __CUDACC_VER_MAJOR__ >= 12\nint no_workaround;\n#endif\n"),
    # `!defined(CUDA_VERSION)`: "no CUDA toolkit", the arm the project writes for ROCm (ginkgo coo_kernels.cpp).
    Valid(
        "#if !defined(CUDA_VERSION)\n    if constexpr (sizeof(ValueType) == sizeof(int16)) {\n        GKO_NOT_SUPPORTED(c);\n"
        "    } else\n#else\n    if (exec->get_compute_capability() < 70 && sizeof(ValueType) == sizeof(int16)) {\n"
        "        GKO_NOT_SUPPORTED(c);\n    } else\n#endif\n    {\n        launch_spmv(exec, a, b, c);\n    }\n"
    ),
    # The no-toolkit arm ROCm takes tells ROCm apart itself (its `#error` is another build's); what later arms compare
    # is NVIDIA's choice alone.
    Valid(
        "#ifndef CUDART_VERSION\n#ifdef USE_ROCM\n#include <hipcub/hipcub.hpp>\n#else\n#error no CUDA toolkit\n#endif\n"
        '#elif CUDART_VERSION >= 11050\n#include <cub/cub.cuh>\n#else\n#include "third_party/cub/cub.cuh"\n#endif\n'
    ),
    # An arm that only opts a kernel in to more dynamic shared memory: an AMD GPU gives it its whole LDS without.
    Valid(
        "void launch(size_t shmem, int dev, int* cap) {\n#if CUDA_VERSION >= 9000\n"
        "  cudaDeviceGetAttribute(cap, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);\n"
        "  if (shmem > 49152) { cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shmem); }\n"
        "#else\n  cudaDeviceGetAttribute(cap, cudaDevAttrMaxSharedMemoryPerBlock, dev);\n#endif\n}\n"
    ),
    # HIP-on-NVIDIA code (a managed-memory hint): an AMD build skips it by its author's choice.
    Valid("#if defined(__HIP_PLATFORM_NVCC__) && (CUDART_VERSION >= 8000)\nvoid advise();\n#endif\n"),
    # The macro in a comment is not a test.
    Valid("// requires CUDA_VERSION >= 11000 on NVIDIA\n#define MAX_THREADS 1024\n"),
    # A shim re-creating library names CUDA 12 renamed (magma): HIP has them under their HIPIFY names.
    Valid("#if CUDA_VERSION >= 12000\n#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1  // renamed\n#endif\n"),
    # A switch the author turned off (`//#define`): no build takes the arm, on either vendor.
    Valid("//#define TEXTURE\n#if defined(TEXTURE) && (__CUDA_ARCH__ >= 300)\nint texture_path;\n#endif\n"),
    # Unreachable after an `if constexpr` chain whose every arm returns (celeritas Algorithms.hh `ipow`).
    Valid("int f() {\n  if constexpr (N) return 0; else return 1;\n#if CUDA_VERSION < 11000\n  return 2;\n#endif\n}\n"),
)
CudaVersionGate.invalid = (
    Invalid(  # a version op: HIP defines no CUDA_VERSION (hipify renames it TORCH_HIP_VERSION, defined by no extension)
        "#include <torch/extension.h>\n#include <cuda.h>\nint64_t cuda_version() { return CUDA_VERSION; }\n",
        expect=("3:33-3:45",),
    ),
    Invalid(
        """
        template <typename T>
        __device__ __forceinline__ T WARP_SHFL_XOR_NATIVE(T value, int laneMask, int width = warpSize,
                                                          unsigned int mask = 0xffffffff) {
        #if CUDA_VERSION >= 9000
          return __shfl_xor_sync(mask, value, laneMask, width);
        #else
          return __shfl_xor(value, laneMask, width);
        #endif
        }
        """,
        expect=("4:1-4:25",),
        message="false there and ROCm silently skips this arm; decide which arm ROCm needs",
        # No fix: the arm is the 32-bit-mask `_sync` call ROCm must not compile (ROC210).
        no_fix=True,
    ),
    Invalid(
        """
        namespace internal {
        __device__ __forceinline__ unsigned convert_to_shared(const void* ptr) {
        #if __CUDACC_VER_MAJOR__ >= 11
          return __cvta_generic_to_shared(ptr);
        #else
          unsigned ret;
          asm volatile("{ .reg .u64 p1; cvta.to.shared.u64 p1, %1; cvt.u32.u64 %0, p1; }" : "=r"(ret) : "l"(ptr));
          return ret;
        #endif
        }
        }  // namespace internal
        """,
        expect=("3:1-3:31",),
        message="`__CUDACC_VER_MAJOR__`",
        # No fix: `__cvta_generic_to_shared` is a CUDA intrinsic HIP does not declare.
        no_fix=True,
    ),
    # `<` is true on ROCm: ROCm lands in the legacy arm.
    Invalid(
        """
        #if CUDART_VERSION < 11000
        #define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)
        #endif
        """,
        expect=("1:1-1:27",),
        message="true there and ROCm silently compiles this arm",
    ),
    # One report per chain, at its first version test (the `#elif` is read on ROCm too).
    Invalid(
        """
        #if defined(ENABLE_NVTX)
        #include <nvtx3/nvToolsExt.h>
        #elif CUDA_VERSION >= 12000
        #define USE_GRAPH_CONDITIONAL_NODES 1
        #elif CUDA_VERSION >= 11000
        #define USE_GRAPH_CONDITIONAL_NODES 0
        #endif
        """,
        expect=("3:1-3:28",),
    ),
    Invalid(
        """
        #ifdef CUDA_VERSION
        #define DEVICE_SUPPORTS_MEMPOOL 1
        #endif
        """,
        expect=("1:1-1:20",),
        fixed="""
        #if defined(CUDA_VERSION) || defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
        #define DEVICE_SUPPORTS_MEMPOOL 1
        #endif
        """,
    ),
    # A feature switch with no CUDA code in its arm: the fix moves ROCm into it.
    Invalid(
        """
        #if CUDART_VERSION >= 11000  // bf16 types
        #define HAS_BF16_TYPES 1
        #else
        #define HAS_BF16_TYPES 0
        #endif
        """,
        expect=("1:1-1:43",),
        message="ROCm silently skips this arm",
        fixed="""
        #if CUDART_VERSION >= 11000 || defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)  // bf16 types
        #define HAS_BF16_TYPES 1
        #else
        #define HAS_BF16_TYPES 0
        #endif
        """,
    ),
    # An `#else` after `#ifdef CUDA_VERSION` is a fallback, not an arm written for ROCm.
    Invalid(
        """
        #ifdef CUDART_VERSION
        #define DEVICE_SUPPORTS_MEMPOOL 1
        #else
        #define DEVICE_SUPPORTS_MEMPOOL 0
        #endif
        """,
        expect=("1:1-1:22",),
        message="false there and ROCm silently skips this arm",
    ),
    # "No CUDA toolkit" stops the build: ROCm is not meant to take it.
    Invalid(
        """
        #ifndef CUDA_VERSION
        #error "this file needs the CUDA toolkit headers"
        #endif
        """,
        expect=("1:1-1:21",),
        message="true there and ROCm silently compiles this arm",
    ),
    # state-spaces/mamba selective_scan_common.h: an architecture comparison, whether ROCm has it is the user's call.
    Invalid(
        """
        #if __CUDA_ARCH__ >= 800
        template <int N>
        struct Converter<at::BFloat16, N> {
          static inline __device__ void to_float(const at::BFloat16 (&src)[N], float (&dst)[N]);
        };
        #endif
        """,
        expect=("1:1-1:25",),
        message="selects an NVIDIA architecture feature",
        no_fix=True,
    ),
    # A host-pass fallback ROCm's device pass also takes; a recent GPU's arm with what HIP lacks; an option OR a
    # comparison (DeepSpeed normalize_kernels.cu).
    Invalid(
        """
        #if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ < 700)
        #define USE_LEGACY_WARP_SYNC 1
        #endif
        __device__ void backoff(unsigned ns) {
        #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
          __nanosleep(ns);
        #endif
        #if !defined(__STOCHASTIC_MODE__) || __CUDA_ARCH__ < 700
          __shared__ float shr[32];
        #endif
        }
        """,
        expect=("1:1-1:53", "5:1-5:52", "8:1-8:57"),
        message="ROCm silently compiles this arm",
    ),
    # One report per chain, at its first `__CUDA_ARCH__` test.
    Invalid(
        """
        template <typename T>
        __device__ __forceinline__ T warp_max(T v) {
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
          return __reduce_max_sync(0xffffffff, v);
        #elif defined(__CUDA_ARCH__)
          for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffff, v, o));
          return v;
        #endif
        }
        """,
        expect=("3:1-3:51",),
        message="fallback arm",
    ),
    # A macro standing for an architecture comparison: each `#if` of it is one ROCm reads as false.
    Invalid(
        "#define BF16_AVAILABLE (__CUDA_ARCH__ >= 800)\n__device__ float widen(float v) {\n#if BF16_AVAILABLE\n"
        "  return v;\n#else\n  return 0.f;\n#endif\n}\n",
        expect=("1:1-1:46",),
        message="`BF16_AVAILABLE` stands for `(__CUDA_ARCH__ >= 800)`, which HIP-Clang reads with",
    ),
    # The chain also tests `__CUDA_ARCH__`: adding a ROCm term would hide that test from ROC213.
    Invalid(
        """
        #if defined(__CUDA_ARCH__) && CUDA_VERSION >= 11000
        #define HAS_FAST_PATH 1
        #endif
        """,
        expect=("1:1-1:52",),
        no_fix=True,
    ),
)
