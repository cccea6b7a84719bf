"""ROC209 warpsize-constexpr."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node, Span
from rocmlint.cuda.syntax import constant_context, is_certainly_device, is_certainly_host, launches_kernels
from rocmlint.cuda.warp import (
    constant_warpsize_uses,
    device_wave_size_macros,
    enum_declaration,
    indent_of,
    is_builtin_warpsize,
    warpsize_macros,
    wave_selector,
)
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# PyTorch's C10_WARP_SIZE is a constant in the device pass but 1 in the ROCm host pass (c10/macros/Macros.h):
# only host-side constant uses of it are wrong.
_WARP_SIZE_NAMES = ("warpSize", "C10_WARP_SIZE")
_WARP_SIZE_WORDS = frozenset(name.encode() for name in _WARP_SIZE_NAMES)
# Host code is a function that launches kernels; a `__device__` lambda there is device code, and a macro's
# definition is read where the macro is used.
_NOT_HOST_CODE = ("lambda_expression", "preproc_def", "preproc_function_def")
_HOST_READ = (
    "{} read in host code, which has no wave size on ROCm (`warpSize` is device-side, an error since ROCm 7.0; the "
    "host pass has no target): query `hipDeviceAttributeWarpSize` or `at::cuda::warp_size()` at run time"
)
# Statements a device-code fix wraps whole; loops, `if`, `switch` and templates are too big to duplicate.
_FIXABLE_STATEMENTS = frozenset(
    {
        "declaration",
        "expression_statement",
        "return_statement",
        "static_assert_declaration",
        "alias_declaration",
        "type_definition",
    }
)


class WarpsizeConstexpr(Rule):
    """
    ## What it does
    Flags `warpSize` (or PyTorch's `C10_WARP_SIZE` in host code) used where C++ needs a constant expression:
    template arguments and template parameter defaults, array sizes, `static_assert`, `constexpr` initialisers, a
    `constexpr` function's lone `return`, `if constexpr`, `case` labels, enumerators and `__launch_bounds__`; and
    `warpSize` or the device pass's wave size (`__AMDGCN_WAVEFRONT_SIZE`, a macro of the file or its headers
    defined as it) read at all in host code, a function that launches kernels (`if (warpSize == 64)` sizing a grid).

    ## Why is this bad on ROCm?
    Since ROCm 7.0 `warpSize` is a device-side object with an implicit `int` conversion, not a `constexpr`
    (rocm-systems `amd_warp_functions.h`; `hip_cpp_language_extensions.rst`, "Prior to ROCm 7.0 ..."), so these
    uses stop compiling (ROCm/rocHPL#20, vllm-project/vllm#20330, turboderp-org/exllamav2#807, ROCm/apex#231).
    PyTorch's `C10_WARP_SIZE` is a constant in the ROCm device pass but 1 in the host pass, so host-side template
    arguments built from it instantiate a different kernel than the device pass compiled (ROCm/pytorch#2328).
    The host pass has no target, so no wave size: bitsandbytes' ports replaced host tests of `warpSize` and of a
    macro defined as `__AMDGCN_WAVEFRONT_SIZE` by a `hipDeviceGetAttribute` query.

    ## Example
    ```cuda
    template <int kWarp>
    __global__ void reduce(const float* x, float* out);

    __global__ void softmax(const float* x, float* out) {
      __shared__ float partial[1024 / warpSize];
      static_assert(warpSize == 32, "one float per lane");
    }
    ```

    ## Fix
    In device code (`__global__`/`__device__` functions, `__shared__` declarations) the unsafe fix puts
    the statement behind a ROCm gate twice, under a wave selector, with the target's wave size written
    as a literal for every constant-context `warpSize` in it:
    ```cuda
    __global__ void softmax(const float* x, float* out) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
      __shared__ float partial[1024 / 64];
      #else
      __shared__ float partial[1024 / 32];
      #endif
    #else
      __shared__ float partial[1024 / warpSize];
    #endif
    }
    ```
    Host code, file-scope constants, `case` labels, loops and `__launch_bounds__` get no fix: host code should
    query `hipDeviceAttributeWarpSize` (or `at::cuda::warp_size()`) at run time and dispatch to templated kernels.

    ## Fix safety
    Unsafe. The NVIDIA branch (`#else`) keeps the statement token for token, so `nvcc` compiles what it compiled
    before. On ROCm the device passes take 64 on GFX8/GFX9 (CDNA) and 32 on other targets, the HIP documentation's
    selector; the host pass, which also parses device functions but has no target macro, takes 64 like ROC208's
    fix. Whether the code is right with 64 needs review: `static_assert(warpSize == 32, ...)` becomes
    `static_assert(64 == 32, ...)` and fails on CDNA, which is what the assertion means, and sizes derived from the
    constant double.
    """

    code = "ROC209"
    name = "warpsize-constexpr"
    severity = Severity.ERROR
    fix_availability = FixAvailability.UNSAFE
    language = "cuda"
    applies_to_rocm_sources = True
    triggers = (b"warpSize", b"C10_WARP_SIZE", b"WARP", b"WAVE", b"Warp", b"Wave", b"warp", b"wave")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Only identifiers spelling a warp-size name (or a macro of this file standing for `warpSize`)."""
        aliases = (*warpsize_macros(ctx), *device_wave_size_macros(ctx))
        anchors = ctx.word_offsets(*(w.decode() for w in _WARP_SIZE_WORDS), *aliases)
        return {"identifier": anchors, "type_identifier": anchors} if anchors else {}

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        self._check(node, ctx)

    def visit_type_identifier(self, node: Node, ctx: CudaContext) -> None:
        # `foo<warpSize>` parses the argument as a type name.
        self._check(node, ctx)

    def _check(self, node: Node, ctx: CudaContext) -> None:
        text = ctx.text(node)
        if text in device_wave_size_macros(ctx):  # a constant of the device pass: only host reads are wrong
            if launches_kernels(node, ctx) and not ctx.enclosing(node, *_NOT_HOST_CODE):
                ctx.report(node, _HOST_READ.format(f"`{text}` (the device pass's wave size)"))
            return
        if text not in _WARP_SIZE_NAMES and text not in warpsize_macros(ctx):
            return
        if text == "C10_WARP_SIZE" and not is_certainly_host(node, ctx):
            return
        if text == "warpSize" and not is_builtin_warpsize(node, ctx):
            return  # the code's own: a class member (`Config::warpSize`), template parameter or variable
        context = constant_context(node, ctx)
        shown = text if text in _WARP_SIZE_NAMES else f"{text}` (`warpSize`)"
        if context is None:
            if text != "C10_WARP_SIZE" and launches_kernels(node, ctx) and not ctx.enclosing(node, *_NOT_HOST_CODE):
                ctx.report(node, _HOST_READ.format(f"`{text}`" + ("" if text == "warpSize" else " (`warpSize`)")))
            return
        ctx.report(
            node,
            f"`{shown}` used in {context}: it is not a constant expression on ROCm (`warpSize` is a run-time "
            "value since ROCm 7.0; `C10_WARP_SIZE` is 1 in the host pass)",
            fix=self._fix(node, ctx),
        )

    def _fix(self, node: Node, ctx: CudaContext) -> Fix | None:
        """Device code: the statement twice behind a ROCm-gated wave selector, with 64 and with 32 for every
        constant-context `warpSize` in it. Host code has no target to select on: no fix."""
        if ctx.text(node) == "C10_WARP_SIZE" or not is_certainly_device(node, ctx):
            return None
        enclosing = ctx.statement_of(node)
        statement: Span | None = enclosing
        if enclosing is None or enclosing.type not in _FIXABLE_STATEMENTS:
            enumerator = ctx.enclosing(node, "enumerator")
            statement = enum_declaration(ctx, enumerator) if enumerator is not None else None
        elif ctx.function_of(enclosing) is None:
            return None  # file scope: the host compiles it too
        if statement is None:
            return None
        uses = constant_warpsize_uses(ctx, statement)
        wave64 = ctx.rocm_variant(statement, [(n, "64") for n in uses])
        wave32 = ctx.rocm_variant(statement, [(n, "32") for n in uses])
        return ctx.gated_fix(
            "use the ROCm target's wave size as a constant (64 on GFX8/GFX9, 32 on RDNA)",
            statement,
            wave_selector(wave64, wave32, indent_of(ctx, statement)),
            safe=False,
        )


WarpsizeConstexpr.valid = (
    # A `constexpr` function whose `return` evaluates it on some paths only (a constant for architectures before 700).
    Valid("__host__ __device__ constexpr int scratch(int arch) { return arch < 700 ? 0 : 4 * (512 / warpSize); }\n"),
    # Run-time uses of warpSize are what HIP documents.
    Valid(
        """
        __global__ void block_sum(const float* x, float* out) {
          extern __shared__ float partial[];
          const int lane = threadIdx.x % warpSize;
          const int warps = blockDim.x / warpSize;
          for (int offset = warpSize / 2; offset > 0; offset /= 2) partial[lane] += __shfl_down(partial[lane], offset);
          if (lane == 0) out[threadIdx.x / warpSize] = partial[0] * warps;
        }
        """,
    ),
    # NVIDIA-only constant uses are gated.
    Valid(
        """
        #if !defined(USE_ROCM) && !defined(__HIP_PLATFORM_AMD__)
        __global__ void k(float* x) {
          __shared__ float buf[warpSize];
          static_assert(warpSize == 32, "");
        }
        #endif
        """,
    ),
    Valid(
        """
        __global__ void k(float* x) {
        #ifndef USE_ROCM
          constexpr int kLanes = warpSize;
        #else
          const int kLanes = warpSize;
        #endif
          x[threadIdx.x % kLanes] = 0.f;
        }
        """,
    ),
    # C10_WARP_SIZE is a constant in the device pass; only host-side constant uses are wrong.
    Valid(
        """
        template <typename T>
        __device__ T warp_reduce(T v) {
          __shared__ T shared[1024 / C10_WARP_SIZE];
          static_assert(C10_WARP_SIZE >= 32, "");
          return v + shared[threadIdx.x / C10_WARP_SIZE];
        }
        """,
    ),
    # The device-property field and a plain `const` copy are run-time values; a class member of the code's own
    # (`static constexpr int warpSize = 64;` under HIP in a header) is a constant, not HIP's `warpSize`.
    Valid(
        """
        void launch(const cudaDeviceProp& prop, float* x) {
          const int ws = prop.warpSize;
          int blocks = (1024 + ws - 1) / ws;
          std::vector<float> host(prop.warpSize);
          std::array<float, 2 * gpu::Config::warpSize> lanes;
        }
        """,
    ),
    # The code's own `warpSize`, a template parameter (aiter groupnorm.cu) or a constant, shadows HIP's.
    Valid(
        """
        template <typename T, uint32_t THREADS_PER_BLOCK, uint32_t warpSize>
        __device__ void groupnorm_up(const T* x, float* mean) {
          static_assert(THREADS_PER_BLOCK % warpSize == 0, "");
          constexpr uint32_t NUM_WARPS = THREADS_PER_BLOCK / warpSize;
          __shared__ float smem[NUM_WARPS];
        }
        """,
    ),
    Valid(
        """
        __device__ void tile_sum(float* x) {
          constexpr int warpSize = 64;
          __shared__ float partial[warpSize];
          partial[threadIdx.x % warpSize] = x[threadIdx.x];
        }
        """,
    ),
    # What the fix writes: literals per ROCm target, `warpSize` only in the NVIDIA arm.
    Valid(
        """
        __global__ void k(float* x) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          constexpr int kWarpsPerBlock = 256 / 64;
          #else
          constexpr int kWarpsPerBlock = 256 / 32;
          #endif
        #else
          constexpr int kWarpsPerBlock = 256 / warpSize;
        #endif
          x[threadIdx.x] *= kWarpsPerBlock;
        }
        """,
    ),
)
WarpsizeConstexpr.invalid = (
    # A `constexpr` function that only returns it (Composable Kernel's `get_warp_size()` before ROCm 7.0).
    Invalid(
        "__host__ __device__ constexpr int get_warp_size() {\n  return warpSize;\n}\n",
        expect=("2:10-2:18",),
        message="the `return` of a `constexpr` function",
    ),
    Invalid(
        """
        __global__ void softmax(const float* x, float* out) {
          __shared__ float partial[1024 / warpSize];
          out[threadIdx.x] = partial[0];
        }
        """,
        expect=("2:35-2:43",),
        message="an array size",
        fixed="""
        __global__ void softmax(const float* x, float* out) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          __shared__ float partial[1024 / 64];
          #else
          __shared__ float partial[1024 / 32];
          #endif
        #else
          __shared__ float partial[1024 / warpSize];
        #endif
          out[threadIdx.x] = partial[0];
        }
        """,
    ),
    Invalid(
        """
        template <int kWarp>
        __device__ float reduce(float v);
        __global__ void k(float* x) {
          x[0] = reduce<warpSize>(x[threadIdx.x]);
        }
        """,
        expect=("4:17-4:25",),
        message="a template argument",
        fixed="""
        template <int kWarp>
        __device__ float reduce(float v);
        __global__ void k(float* x) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          x[0] = reduce<64>(x[threadIdx.x]);
          #else
          x[0] = reduce<32>(x[threadIdx.x]);
          #endif
        #else
          x[0] = reduce<warpSize>(x[threadIdx.x]);
        #endif
        }
        """,
    ),
    Invalid(
        """
        __global__ void k(float* x) {
          static_assert(warpSize == 32, "one float per lane");
          constexpr int kWarpsPerBlock = 256 / warpSize;
          constexpr int kLanes = ::warpSize + 0 * Tile::warpSize;  // `::warpSize` is HIP's
        }
        """,
        expect=("2:17-2:25", "3:40-3:48", "4:28-4:36"),
        message="`static_assert`",
    ),
    Invalid(
        """
        __global__ void __launch_bounds__(8 * warpSize) attention(const float* q, float* o) {
          o[threadIdx.x] = q[threadIdx.x];
        }
        """,
        expect=("1:39-1:47",),
        message="`__launch_bounds__`",
    ),
    # Host code: C10_WARP_SIZE is 1 in the ROCm host pass.
    Invalid(
        """
        template <int kWarp>
        __global__ void layer_norm_kernel(const float* x, float* y);
        void layer_norm(const float* x, float* y, cudaStream_t stream) {
          layer_norm_kernel<C10_WARP_SIZE><<<1, 256, 0, stream>>>(x, y);
        }
        """,
        expect=("4:21-4:34",),
        message="`C10_WARP_SIZE` used in a template argument",
        no_fix=True,
    ),
    Invalid(
        """
        #define WARP_SIZE warpSize
        __global__ void k(int* flags) {
          __shared__ int votes[WARP_SIZE];
          switch (flags[0]) { case 64: votes[0] = 1; break; }
        }
        """,
        expect=("3:24-3:33",),
        message="(`warpSize`)",
        fixed="""
        #define WARP_SIZE warpSize
        __global__ void k(int* flags) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          __shared__ int votes[64];
          #else
          __shared__ int votes[32];
          #endif
        #else
          __shared__ int votes[WARP_SIZE];
        #endif
          switch (flags[0]) { case 64: votes[0] = 1; break; }
        }
        """,
    ),
    # A template's own `warpSize` parameter ends with the template: the kernel after it uses HIP's.
    Invalid(
        """
        template <int warpSize>
        __device__ float lane_sum(float v) { return v * warpSize; }
        __global__ void softmax(const float* x, float* out) {
          __shared__ float partial[1024 / warpSize];
          out[threadIdx.x] = lane_sum<32>(partial[0]);
        }
        """,
        expect=("4:35-4:43",),
        message="an array size",
    ),
)
