"""ROC218 cuda-fp8-type."""

from __future__ import annotations

import re

from rocmlint.cuda.conditions import chains_around
from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Directive, Include, Node
from rocmlint.cuda.hip_gaps import FP8_HEADERS, FP8_INTERPRETATIONS, is_cuda_fp8_name
from rocmlint.cuda.syntax import outermost_signed
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_INTERPRETATION_WORDS = frozenset(name.encode() for name in FP8_INTERPRETATIONS)
# A file, function or name that deals with FP8 (the context that makes a 448 an e4m3 bound).
_FP8_TEXT = re.compile(rb"fp8|e4m3|e5m2|float8", re.IGNORECASE)
# GPU code: CPU-only fp8 emulation (`float_to_fp8e4m3_scalar` on x86) runs on no GPU.
_GPU_TEXT = re.compile(rb"__global__|__device__")
_FP8_NAME = re.compile(r"fp8|f8|e4m3|float8", re.IGNORECASE)
_SCALE_NAME = re.compile(r"max|scale|clamp|clip|sat|limit|bound|range|divisor", re.IGNORECASE)


def _float_literal(value: int) -> re.Pattern[str]:
    """`value` written as a float literal: `448.0f`, `448.f`, `448.`, `448`, `4.48e2f`."""
    digits = str(value)
    mantissa = f"{digits[0]}\\.{digits[1:].rstrip('0')}"
    return re.compile(rf"{digits}(?:\.0*)?[fFlL]?|{digits}\.0*|{mantissa}[eE]\+?0*{len(digits) - 1}[fF]?")


# 448 (the OCP e4m3 maximum) as a float literal or an integer one; 240, the FNUZ e4m3 maximum.
_FLOAT_448 = _float_literal(448)
_INT_448 = re.compile(r"448[uUlL]*")
_FNUZ_BOUND = _float_literal(240)
# `#if` tests that select by AMD target or FP8 flavour: a 448 in such a chain is the port's OCP arm.
_ARCH_TEST = re.compile(r"gfx|GFX|fnuz|FNUZ|HIP_FP8")
_E4M3_MESSAGE = "448 is the OCP e4m3 max; gfx942 (MI300) FP8 is e4m3 FNUZ with max 240: choose the bound per target"


class CudaFp8Type(Rule):
    """
    ## What it does
    Flags CUDA's FP8 API in code a ROCm build compiles: `cuda_fp8.h`, the `__nv_fp8_*` types, the
    `__nv_cvt_*fp8*` conversions, `__NV_E4M3`/`__NV_E5M2`, and `448` (the OCP e4m3 maximum) used as
    an FP8 scale or clamp bound in code that deals with FP8.

    ## Why is this bad on ROCm?
    hipify has no mapping for CUDA's FP8 header or types. HIP's `hip/hip_fp8.h` has both encodings, and
    which one the hardware uses depends on the target: gfx940-gfx942 (MI300) support only the FNUZ
    variants (`__hip_fp8_e4m3_fnuz`, max finite 240, no infinities, a different NaN), gfx950 and gfx12
    the OCP ones (max 448). Bit-level reinterpretation, saturation and `amax / 448` scales silently
    compute something else on MI300 (HIP docs `reference/fp8_numbers.rst`; vLLM
    `RocmPlatform.is_fp8_fnuz()`). The Python counterpart is ROC107.

    ## Example
    ```cuda
    #include <cuda_fp8.h>
    constexpr float kFp8Max = 448.0f;
    __device__ __nv_fp8_e4m3 quantize(float x, float scale) {
      return __nv_fp8_e4m3(fminf(fmaxf(x * scale, -kFp8Max), kFp8Max));
    }
    ```

    ## Fix
    ```cuda
    #if defined(USE_ROCM)
    #include <hip/hip_fp8.h>
    #if defined(__gfx942__)
    using fp8_e4m3 = __hip_fp8_e4m3_fnuz;
    constexpr float kFp8Max = 240.0f;
    #else
    using fp8_e4m3 = __hip_fp8_e4m3;
    constexpr float kFp8Max = 448.0f;
    #endif
    #else
    #include <cuda_fp8.h>
    using fp8_e4m3 = __nv_fp8_e4m3;
    constexpr float kFp8Max = 448.0f;
    #endif
    ```

    ## Fix safety
    No automatic fix: the FP8 flavour (FNUZ or OCP) must be chosen per target and the scales reviewed.
    """

    code = "ROC218"
    name = "cuda-fp8-type"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"fp8", b"FP8", b"Fp8", b"e4m3", b"E4M3", b"e5m2", b"E5M2", b"float8")

    def __init__(self) -> None:
        self._lines: set[int] = set()  # one diagnostic per line
        self._fp8_file: bool | None = None

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Names hold `__nv_fp8`, `__nv_cvt_` or an interpretation (is_cuda_fp8_name); the bound `448` or
        `4.48` (_FLOAT_448, _INT_448)."""
        needed: dict[str, Anchors] = {}
        names = ctx.offsets(b"__nv_fp8", b"__nv_cvt_", *_INTERPRETATION_WORDS)
        if names:
            needed.update({"identifier": names, "type_identifier": names})
        bounds = ctx.offsets(b"448", b"4.48")
        if bounds:
            needed["number_literal"] = bounds
        return needed

    # --- the FP8 API -----------------------------------------------------------------------------------
    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        header = include.header.strip()
        if header in FP8_HEADERS:
            self._report(
                ctx,
                include,
                include.directive.line,
                f"`{header}` has no hipify mapping; use `hip/hip_fp8.h` and pick FNUZ (gfx942) or OCP types per target",
            )

    def visit_type_identifier(self, node: Node, ctx: CudaContext) -> None:
        self._check_name(node, ctx)

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        self._check_name(node, ctx)

    def _check_name(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.text(node)
        if not name.startswith("__") or not is_cuda_fp8_name(name):
            return
        self._report(
            ctx,
            node,
            node.start_point[0] + 1,
            f"`{name}` is CUDA's OCP FP8 API; HIP's FP8 is FNUZ on gfx942 and OCP on gfx950/gfx12 (`hip/hip_fp8.h`)",
        )

    # --- 448 as the e4m3 bound -----------------------------------------------------------------------------
    def visit_number_literal(self, node: Node, ctx: CudaContext) -> None:
        text = ctx.text(node)
        is_float = bool(_FLOAT_448.fullmatch(text)) and text != "448"
        if not (is_float or _INT_448.fullmatch(text)) or not self._in_fp8_file(ctx):
            return
        if not _is_fp8_bound(node, ctx, is_float) or _arch_selected(ctx, node.start_byte):
            return
        if _chosen_per_format(node, ctx):
            return
        if _only_used_where_rocm_never_compiles(node, ctx):
            return
        self._report(ctx, node, node.start_point[0] + 1, _E4M3_MESSAGE)

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        value = define.value.strip().strip("()").strip()
        if define.parameters is not None or not (_FLOAT_448.fullmatch(value) or _INT_448.fullmatch(value)):
            return
        named_fp8 = bool(_FP8_NAME.search(define.name))
        if not (named_fp8 or (_SCALE_NAME.search(define.name) and self._in_fp8_file(ctx))):
            return
        if not _arch_selected(ctx, define.directive.start_byte):
            self._report(ctx, define.directive, define.directive.line, _E4M3_MESSAGE)

    # --- helpers ---------------------------------------------------------------------------------------------
    def _in_fp8_file(self, ctx: CudaContext) -> bool:
        """The file handles FP8 and is GPU code (448 elsewhere is no e4m3 bound we care about)."""
        if self._fp8_file is None:
            gpu = ctx.source.path.endswith((".cu", ".cuh", ".hu")) or bool(_GPU_TEXT.search(ctx.content))
            self._fp8_file = gpu and bool(_FP8_TEXT.search(ctx.content))
        return self._fp8_file

    def _report(self, ctx: CudaContext, span: Node | Include | Directive, line: int, message: str) -> None:
        if line not in self._lines and ctx.report(span, message):
            self._lines.add(line)


def _is_fp8_bound(node: Node, ctx: CudaContext, is_float: bool) -> bool:
    """Whether this 448 is used as an FP8 bound: the value of an FP8/scale-named constant, or (a float
    448) an operand or argument in a function that handles FP8."""
    parent = outermost_signed(node).parent
    if parent is None:
        return False
    if parent.type == "init_declarator":
        declarator = parent.child_by_field_name("declarator")
        name = ctx.text(declarator) if declarator is not None else ""
        if _FP8_NAME.search(name):
            return True
        return is_float and bool(_SCALE_NAME.search(name)) and _in_fp8_function(node, ctx, outside=True)
    if not is_float or parent.type not in (
        "binary_expression",
        "argument_list",
        "conditional_expression",
        "return_statement",
        "assignment_expression",
    ):
        return False
    return _in_fp8_function(node, ctx, outside=False)


def _in_fp8_function(node: Node, ctx: CudaContext, outside: bool) -> bool:
    """Whether the function around `node` mentions FP8; `outside` for a `node` in no function."""
    function = ctx.function_of(node)
    if function is None:
        return outside
    return bool(_FP8_TEXT.search(ctx.content[function.start_byte : function.end_byte]))


def _chosen_per_format(node: Node, ctx: CudaContext) -> bool:
    """The 448 is one arm of `?:` whose other arm is the FNUZ bound 240, or whose test names FNUZ
    (`is_e4m3_fnuz ? 240.0f : 448.0f`): the bound is already chosen per FP8 format."""
    arm = outermost_signed(node)
    choice = arm.parent
    if choice is None or choice.type != "conditional_expression":
        return False
    condition = choice.child_by_field_name("condition")
    if condition is not None and "fnuz" in ctx.text(condition).lower():
        return True
    other = choice.child_by_field_name(
        "alternative" if choice.child_by_field_name("consequence") == arm else "consequence"
    )
    return other is not None and _FNUZ_BOUND.fullmatch(ctx.text(other).lstrip("-").strip()) is not None


def _arch_selected(ctx: CudaContext, offset: int) -> bool:
    """Whether `offset` sits in an `#if` chain that tests the AMD target or FP8 flavour (the 448 there is
    the OCP arm of a port that already tells FNUZ and OCP apart)."""
    return any(_ARCH_TEST.search(c) for chain in chains_around(ctx, offset, later_arms=True) for c in chain)


def _only_used_where_rocm_never_compiles(node: Node, ctx: CudaContext) -> bool:
    """A function-local `constexpr float kMax = 448.f;` whose every use sits in NVIDIA-only code."""
    declarator = outermost_signed(node).parent
    if declarator is None or declarator.type != "init_declarator":
        return False
    uses = ctx.local_uses(declarator)
    return uses is not None and all(ctx.is_rocm_gated(use) for use in uses)


CudaFp8Type.valid = (
    # The clamp bound is chosen per FP8 format at compile time: 240 for FNUZ (gfx942), 448 for OCP.
    Valid(
        """
        template <typename Fp8>
        __device__ float clamp_to_fp8(float x) {
          constexpr float bound = fp8_traits<Fp8>::is_fnuz ? 240.0f : 448.0f;
          return fminf(fmaxf(x, -bound), bound);
        }
        __device__ float clamp_e4m3(float x, bool on_mi300) { return fminf(x, on_mi300 ? 240.f : 448.f); }
        """,
    ),
    # vLLM style: CUDA's FP8 only on NVIDIA, HIP's FP8 on ROCm.
    Valid(
        """
        #ifndef USE_ROCM
        #include <cuda_fp8.h>
        using fp8_storage = __nv_fp8_storage_t;
        #else
        #include <hip/hip_fp8.h>
        using fp8_storage = __hip_fp8_storage_t;
        #endif
        """,
    ),
    # The 448 sits in the OCP arm of a chain that already picks FNUZ on gfx942.
    Valid(
        """
        #include "quant_utils.cuh"  // fp8 helpers
        #if defined(USE_ROCM) && defined(__gfx942__)
        constexpr float kFp8Max = 224.0f;
        #else
        constexpr float kFp8Max = 448.0f;
        #endif
        __device__ float to_fp8_range(float v, float s) { return fminf(fmaxf(v * s, -kFp8Max), kFp8Max); }
        """,
    ),
    # CPU-side FP8 emulation: no GPU, no FNUZ.
    Valid(
        """
        inline uint8_t float_to_fp8e4m3_scalar(float v, float inv_scale) noexcept {
          constexpr float fp8_max = 448.0f;
          v = std::max(-fp8_max, std::min(fp8_max, v * inv_scale));
          return pack_e4m3(v);
        }
        """,
        path="cpu_attn_fp8.hpp",
    ),
    # A function-local bound used only in the NVIDIA branch.
    Valid(
        """
        __device__ void store_fp8(uint8_t* dst, const float* v) {
          constexpr float kFp8Max = 448.0f;
        #ifndef USE_ROCM
          float2 x = make_float2(fminf(fmaxf(v[0], -kFp8Max), kFp8Max), v[1]);
          *reinterpret_cast<__nv_fp8x2_storage_t*>(dst) = __nv_cvt_float2_to_fp8x2(x, __NV_SATFINITE, __NV_E4M3);
        #else
          dst[0] = fp8::cvt(v[0]); dst[1] = fp8::cvt(v[1]);
        #endif
        }
        """,
    ),
    # 448 as a channel count or launch width is not an FP8 bound, even in a file that handles fp8.
    Valid(
        """
        // fp8 weights are dequantized before this kernel
        void launch_group_norm(Params& p, cudaStream_t s) {
          if (p.c % 448 == 0) p.channels_per_block = 448;
          switch (p.cols) { case 448: run<448><<<p.blocks, 224, 0, s>>>(p); break; }
          float widths[] = {0.448f, 12.448f};
        }
        """,
    ),
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        #include <cuda_fp8.h>
        __device__ __nv_fp8_e4m3 q(float x) { return __nv_fp8_e4m3(x); }
        #endif
        """,
    ),
)
CudaFp8Type.invalid = (
    Invalid(
        """
        #include <cuda_fp8.h>
        __device__ __nv_fp8_e4m3 quantize(float x, float scale) { return __nv_fp8_e4m3(x * scale); }
        """,
        expect=("1:1-1:22", "2:12-2:25"),
        message="hip/hip_fp8.h",
    ),
    Invalid(
        """
        template <typename T>
        __global__ void to_fp8(const T* in, __nv_fp8_storage_t* out, float scale, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) out[i] = __nv_cvt_float_to_fp8(float(in[i]) * scale, __NV_SATFINITE, __NV_E4M3);
        }
        """,
        expect=("2:37-2:55", "4:23-4:44"),
        message="`__nv_fp8_storage_t`",
    ),
    Invalid(
        """
        #include "fp8_utils.h"
        constexpr float kFp8ScaleDivisor = 448.f;
        """,
        expect=("2:36-2:41",),
        message="FNUZ",
    ),
    Invalid(
        """
        #define FP8_E4M3_MAX 448.0f
        __device__ float clamp_fp8(float v) { return fminf(fmaxf(v, -FP8_E4M3_MAX), FP8_E4M3_MAX); }
        """,
        expect=("1:1-1:28",),
        message="240",
    ),
    Invalid(
        """
        __global__ void compute_scale(const float* amax, float* scale, int n) {
          // per-tensor scale for fp8 e4m3 output
          int i = threadIdx.x;
          if (i < n) scale[i] = amax[i] / 448.0f;
        }
        """,
        expect=("4:35-4:41",),
        message="448",
    ),
)
