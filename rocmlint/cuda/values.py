"""What a C++ value stands for, as far as one file tells: the front end's one value tracer and its depth policy.

Rules ask what an expression is (a 64-bit mask, a thread index, a typed kernel, a byte count) by following it
through operands, casts, the initialisers of the names it reads and the object-like macros it names. Every such
walk is a `Trace`: each step into a name's initialiser or a macro's value, or into an operand, costs one level
of MAX_TRACE_DEPTH, and a name already followed on the walk is not followed again (`m = m | b` in a loop).
Deeper chains are unknown: real code names a constant through two or three levels, not seven.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rocmlint.cuda.frontend import CudaContext, Node, Span
from rocmlint.cuda.preprocessor import evaluate_integer, parse_int
from rocmlint.cuda.trace import MAX_TRACE_DEPTH, START, Trace


def initialiser(ctx: CudaContext, identifier: Node, trace: Trace) -> tuple[Node, Trace] | None:
    """The initialiser of the declaration ROCm compiles for `identifier` (`x` in `unsigned m = x;`), with the
    walk one step into it; None when it has none or the walk may not go further."""
    deeper = trace.into(ctx.text(identifier))
    value = ctx.declared_value(identifier) if deeper is not None else None
    return None if value is None or deeper is None else (value, deeper)


def arms(
    ctx: CudaContext, node: Node, follow: Callable[[Node], bool] = lambda _name: True, trace: Trace | None = START
) -> list[Node]:
    """Every expression `node` may evaluate to: through parentheses, each arm of a conditional its own node
    (`training ? &kernel<true> : &kernel<false>`), and the initialisers of the names `follow` accepts (a name
    without one, or past the walk's depth, stays itself). An arm past the walk's depth is left out."""
    if trace is None:
        return []
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return arms(ctx, node.named_children[0], follow, trace)
    if node.type == "conditional_expression":
        branches = (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
        return [arm for branch in branches if branch is not None for arm in arms(ctx, branch, follow, trace.step())]
    found = initialiser(ctx, node, trace) if node.type == "identifier" and follow(node) else None
    return [node] if found is None else arms(ctx, found[0], follow, found[1])


# --- integer constants -------------------------------------------------------------------------------------
# Bytes of the element types kernels size shared memory and buffers with.
_TYPE_BYTES = {
    "char": 1,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "int8_t": 1,
    "uint8_t": 1,
    "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1,
    "short": 2,
    "unsigned short": 2,
    "int16_t": 2,
    "uint16_t": 2,
    "half": 2,
    "__half": 2,
    "at::Half": 2,
    "c10::Half": 2,
    "__nv_bfloat16": 2,
    "nv_bfloat16": 2,
    "bf16": 2,
    "__hip_bfloat16": 2,
    "hip_bfloat16": 2,
    "at::BFloat16": 2,
    "c10::BFloat16": 2,
    "float": 4,
    "int": 4,
    "unsigned": 4,
    "unsigned int": 4,
    "signed int": 4,
    "int32_t": 4,
    "uint32_t": 4,
    "half2": 4,
    "__half2": 4,
    "__nv_bfloat162": 4,
    "double": 8,
    "long long": 8,
    "unsigned long long": 8,
    "long long int": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "size_t": 8,
    "float2": 8,
    "int2": 8,
    "uint2": 8,
    "float4": 16,
    "int4": 16,
    "uint4": 16,
    "double2": 16,
}
_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(sizeof\s*\(\s*[\w:\s]+?\s*\))|([A-Za-z_]\w*)|(<<|>>|[-+*/%()]))"
)
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "<<", ">>"})


def size_of(type_name: str) -> int | None:
    """`sizeof(type_name)` for the element types in _TYPE_BYTES (`const` ignored); None for others."""
    return _TYPE_BYTES.get(" ".join(type_name.replace("const", " ").split()))


def constant_value(ctx: CudaContext, node: Node, trace: Trace | None = START) -> int | None:
    """An integer constant expression made of literals, `sizeof` of known types, same-file macros and
    initialised variables (`constexpr int kSmem = 96 * 1024;`) as a ROCm build sees them; None when any part
    is unknown."""
    if trace is None:
        return None
    kind = node.type
    if kind == "number_literal":
        return parse_int(ctx.text(node))
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return constant_value(ctx, node.named_children[0], trace.step())
    if kind == "cast_expression":
        value = node.child_by_field_name("value")
        return None if value is None else constant_value(ctx, value, trace.step())
    if kind == "sizeof_expression":
        type_node = node.child_by_field_name("type")
        return None if type_node is None else size_of(ctx.text(type_node))
    if kind == "identifier":
        return _name_value(ctx, node, trace)
    if kind == "binary_expression":
        operator = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator is None or left is None or right is None or ctx.text(operator) not in _ARITHMETIC:
            return None
        a, b = constant_value(ctx, left, trace.step()), constant_value(ctx, right, trace.step())
        return None if a is None or b is None else evaluate_integer(f"({a}) {ctx.text(operator)} ({b})")
    return None


def _name_value(ctx: CudaContext, identifier: Node, trace: Trace) -> int | None:
    define = ctx.define(ctx.text(identifier), identifier)
    if define is not None:
        return macro_value(ctx, define.value, identifier, trace.step())
    declaration = ctx.declaration_of(identifier)
    if declaration is None:
        constant = ctx.header_constant(ctx.text(identifier))  # `constexpr int kWarpSize = 32;` in a header
        return None if constant is None else macro_value(ctx, constant, identifier, trace.step())
    if ctx.is_rocm_gated(declaration):
        return None  # a declaration in NVIDIA-only code sizes nothing on ROCm
    value = ctx.declared_value(identifier)
    return None if value is None else constant_value(ctx, value, trace.step())


def macro_value(ctx: CudaContext, text: str, before: Span, trace: Trace | None = START) -> int | None:
    """The value of a macro's replacement text (`(32 * 1024 + 16)`, `TILE * sizeof(float)`), or None."""
    if trace is None:
        return None
    pieces: list[str] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        number, size, name, operator = match.groups()
        if number is not None:
            pieces.append(str(parse_int(number)))
        elif size is not None:
            element = size_of(size[size.index("(") + 1 : -1])
            if element is None:
                return None
            pieces.append(str(element))
        elif name is not None:
            define = ctx.define(name, before)
            value = None if define is None else macro_value(ctx, define.value, before, trace.step())
            if value is None:
                return None
            pieces.append(f"({value})")
        else:
            pieces.append(operator)
        position = match.end()
    return evaluate_integer(" ".join(pieces)) if pieces else None


__all__ = [
    "MAX_TRACE_DEPTH",
    "START",
    "Trace",
    "arms",
    "constant_value",
    "initialiser",
    "macro_value",
    "size_of",
]
