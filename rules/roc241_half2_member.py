"""ROC241 half2-member."""

from __future__ import annotations

import re

from rocmlint.cuda.conditions import chains_around
from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.preprocessor import ROCM_VERSION_MACROS
from rocmlint.cuda.syntax import defines_type, outermost, without_parentheses
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_HALF2_TYPES = frozenset({"half2", "__half2"})
_HALF2_WORDS = frozenset(name.encode() for name in _HALF2_TYPES)
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"})
_EXTRACTORS = {"x": "__low2half", "y": "__high2half"}
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*")


class Half2Member(Rule):
    """
    ## What it does
    Flags reads and writes of the `.x` / `.y` members of a CUDA `half2` / `__half2` value (a variable,
    parameter, array element, dereferenced pointer, or a struct member declared `half2` in every struct of
    the file that declares it) in code a ROCm build compiles.

    Not flagged: code written for HIP (a ROCm-only arm or header, an arm chosen by a ROCm version macro such
    as `ROCM_VERSION` or `TORCH_HIP_VERSION`), a member whose bytes are taken as they are
    (`reinterpret_cast<half&>(v.x)`, `&v.x`), an inline-asm operand, and files that define their own `half2`
    (a CPU stand-in, a HIP shim), whose members are what they declare.

    ## Why is this bad on ROCm?
    CUDA's `__half2` holds two `__half` members `x` and `y`. HIP's `__half2` (`amd_hip_fp16.h`) declared
    them as `unsigned short` raw bits for years: `__half2float(v.x)` or `float f = v.x` then converts the
    bit pattern as an integer (15360 for 1.0), and `v.x = d` stores the integer part of `d` as bits. It
    compiles and computes garbage (ROCm/hip#3290, ROCm/hip#3280, turboderp/exllama#146; llama.cpp#5105 on
    ROCm 5.7.1). HIPIFY's clang
    tool inserts a `reinterpret_cast` on every such member (ROCm/HIPIFY#801); torch's build-time hipify
    does not. Newer HIP headers declare `__half x, y`, but llama.cpp still replaced every member access
    with `__low2half` in 2025 (ggml-org/llama.cpp#15529) because users build against older ROCm. A library that
    builds only against the ROCm release it ships with (AMD's own, built from the same release) meets the current
    headers, where the member is a `__half`: the finding still stands there, as the read's meaning depends on the
    headers' version while `__low2half` is right on all of them; where the build pins the release, suppress it.

    ## Example
    ```cuda
    __device__ float scale_of(half2 dm) {
      return __half2float(dm.x);
    }
    ```

    ## Fix
    ```cuda
    __device__ float scale_of(half2 dm) {
      return __half2float(__low2half(dm));
    }
    ```

    ## Fix safety
    Safe for reads in device code: `__low2half(v)` / `__high2half(v)` return `v.x` / `v.y` on CUDA and
    the right halves on every HIP version. Writes (`v.x = d`, `v.x++`) and host code get no fix:
    a write needs `v = __halves2half2(d, __high2half(v))`, and the extractors are device functions on
    older CUDA.
    """

    code = "ROC241"
    name = "half2-member"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"half2",)

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported access ends in its member's name, in a file that writes the type as a word (`_names_half2`; the
        trigger also lets through `half2float`)."""
        if _HALF2_WORDS.isdisjoint(ctx.words):
            return {}
        members = ctx.word_offsets(*_EXTRACTORS)
        return {"field_expression": members} if members else {}

    def visit_field_expression(self, node: Node, ctx: CudaContext) -> None:
        member = node.child_by_field_name("field")
        argument = node.child_by_field_name("argument")
        if member is None or argument is None or ctx.text(member) not in _EXTRACTORS:
            return
        if _reinterpreted(node, ctx) or ctx.enclosing(node, "gnu_asm_expression") is not None:
            return  # bytes taken as they are; an asm operand is ROC203's (PTX)
        if not _is_half2(argument, ctx):
            return
        if defines_type(ctx, *_HALF2_TYPES) or _written_for_rocm(node, ctx):
            return  # the project's own `half2` (a CPU stand-in, a HIP shim) has the members it declares
        extractor = _EXTRACTORS[ctx.text(member)]
        ctx.report(
            node,
            f"`{ctx.text(node)}` is raw `unsigned short` bits in HIP's `__half2` on older ROCm, not a `__half`: "
            f"the value is converted as an integer; use `{extractor}(...)`",
            fix=_fix(node, argument, extractor, ctx),
        )


def _is_half2(expression: Node, ctx: CudaContext) -> bool:
    """`expression` is declared `half2` at its root: a variable, parameter, member or C cast of that type,
    through subscripts, dereferences and parentheses. A member access only compiles on the `half2` itself,
    so the array and pointer levels in between need not be counted."""
    expression = without_parentheses(expression)
    if expression.type in ("subscript_expression", "pointer_expression"):
        inner = expression.child_by_field_name("argument")
        return inner is not None and _is_half2(inner, ctx)
    if expression.type == "cast_expression":
        cast_type = expression.child_by_field_name("type")
        return cast_type is not None and _names_half2(ctx.text(cast_type).replace("*", " "))
    if expression.type == "identifier":
        return _names_half2(ctx.declared_type(expression) or "")
    if expression.type == "field_expression":
        member = expression.child_by_field_name("field")
        types = ctx.field_types(ctx.text(member)) if member is not None else frozenset()
        return bool(types) and all(_names_half2(written) for written in types)
    return False


def _reinterpreted(node: Node, ctx: CudaContext) -> bool:
    """`reinterpret_cast<half&>(v.x)` or `&v.x`: the member's bytes are taken as they are, not converted (the
    port's own fix, as HIPIFY writes it)."""
    parent = outermost(node).parent
    if parent is None:
        return False
    if parent.type == "pointer_expression":
        operator = parent.child_by_field_name("operator")
        return operator is not None and ctx.text(operator) == "&"
    call = parent.parent if parent.type == "argument_list" else None
    return call is not None and call.type == "call_expression" and ctx.call_name(call) == "reinterpret_cast"


def _written_for_rocm(node: Node, ctx: CudaContext) -> bool:
    """Code only ROCm compiles (a `USE_ROCM` arm, a header reached only under one) or an arm chosen by the ROCm
    version (a macro the preprocessor knows as one): its author wrote the members for the HIP headers it meets
    (vLLM's `__ushort_as_half(v.x)`)."""
    if ctx.is_nvidia_gated(node):
        return True
    chains = chains_around(ctx, node.start_byte, later_arms=False)
    return any(
        not ROCM_VERSION_MACROS.isdisjoint(_MACRO_NAME.findall(condition)) for chain in chains for condition in chain
    )


def _names_half2(written: str) -> bool:
    words = [word for word in written.split() if word not in _QUALIFIERS]
    return len(words) == 1 and words[0] in _HALF2_TYPES


def _fix(node: Node, argument: Node, extractor: str, ctx: CudaContext) -> Fix | None:
    parent = node.parent
    if parent is None or parent.type == "update_expression" or not ctx.is_device_code(node):
        return None  # `v.x++` writes the member: no extractor call can stand there (`&v.x` is not reported)
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
        return None
    operator = node.child_by_field_name("operator")
    pointer = operator is not None and ctx.text(operator) == "->"
    value = f"*{ctx.text(argument)}" if pointer else ctx.text(argument)
    return ctx.fix(f"read it with `{extractor}`", ctx.edit(node.start_byte, node.end_byte, f"{extractor}({value})"))


Half2Member.valid = (
    # The portable extractors, and members of other vector types.
    Valid(
        """
        __device__ float sum(half2 v, float2 f) {
          return __low2float(v) + __high2float(v) + f.x + f.y;
        }
        """,
    ),
    # The member access only in the NVIDIA arm.
    Valid(
        """
        __device__ half first(half2 v) {
        #ifdef USE_ROCM
          return __low2half(v);
        #else
          return v.x;
        #endif
        }
        """,
    ),
    # Written for HIP: a ROCm-only arm reading the raw members on purpose, and arms chosen by the ROCm version.
    Valid(
        """
        __device__ half sum(half2 v) {
        #ifndef USE_ROCM
          return __hadd(__low2half(v), __high2half(v));
        #else
          return __hadd(__ushort_as_half(v.x), __ushort_as_half(v.y));
        #endif
        }
        __device__ void store(half2* out, half h) {
        #if defined(USE_ROCM) && ROCM_VERSION < 60201
          *out = __halves2half2(h, h);
        #else
          out->x = h;
        #endif
        }
        __device__ void store_low(half2* out, half h) {
        #if defined(USE_ROCM) && TORCH_HIP_VERSION < 602
          *out = __halves2half2(h, __high2half(*out));
        #else
          out->x = h;
        #endif
        }
        """,
    ),
    # The member's bytes reinterpreted as a half: the fix HIPIFY writes.
    Valid(
        """
        __global__ void quantize(half2* ds, float d, float sum) {
          reinterpret_cast<half&>(ds[blockIdx.x].x) = d;
          *reinterpret_cast<half*>(&ds[blockIdx.x].y) = sum;
        }
        """,
    ),
    # An inline-asm operand: the register holds the bits (the PTX itself is ROC203's).
    Valid(
        """
        struct Half4 { half2 a; half2 b; };
        __device__ void store(Half4 out, void* p) {
          asm("st.v2.u32 [%0], {%1, %2};" : : "l"(p), "r"(out.a.x), "r"(out.b.x));
        }
        """,
    ),
    # A project's own `half2` (a CPU stand-in) has the members it declares.
    Valid(
        """
        struct half2 { half x, y; };
        float first(half2 v) { return v.x; }
        """,
    ),
    # `x` of a struct member that is not `half2` everywhere it is declared, and of a `__half2_raw`.
    Valid(
        """
        struct block_a { half2 d; };
        struct block_b { float2 d; };
        __device__ float f(const block_b* b, __half2_raw r) { return b[0].d.x + r.x; }
        """,
    ),
)
Half2Member.invalid = (
    Invalid(
        """
        __device__ float scale_of(half2 dm) {
          return __half2float(dm.x);
        }
        """,
        expect=("2:23-2:27",),
        message="raw `unsigned short` bits",
        fixed="""
        __device__ float scale_of(half2 dm) {
          return __half2float(__low2half(dm));
        }
        """,
    ),
    # A struct member declared `half2`, read through an array of blocks and written.
    Invalid(
        """
        struct block_q8_1 { half2 ds; int8_t qs[32]; };
        __device__ float dot(const block_q8_1* bq, int i) {
          return (float)bq[i].ds.x * 0.25f;
        }
        __global__ void quantize(block_q8_1* y, float d) {
          y[blockIdx.x].ds.x = d;
        }
        """,
        expect=("3:17-3:27", "6:3-6:21"),
        fixed="""
        struct block_q8_1 { half2 ds; int8_t qs[32]; };
        __device__ float dot(const block_q8_1* bq, int i) {
          return (float)__low2half(bq[i].ds) * 0.25f;
        }
        __global__ void quantize(block_q8_1* y, float d) {
          y[blockIdx.x].ds.x = d;
        }
        """,
    ),
    # Local arrays and pointers of `half2`.
    Invalid(
        """
        __global__ void reduce(const half2* p, half* out) {
          half2 acc[4][2];
          out[0] = __hadd(acc[threadIdx.x][0].x, acc[threadIdx.x][0].y);
          out[1] = p->y;
        }
        """,
        expect=("3:19-3:40", "3:42-3:63", "4:12-4:16"),
        fixed="""
        __global__ void reduce(const half2* p, half* out) {
          half2 acc[4][2];
          out[0] = __hadd(__low2half(acc[threadIdx.x][0]), __high2half(acc[threadIdx.x][0]));
          out[1] = __high2half(*p);
        }
        """,
    ),
)
