"""Wave-mask facts shared by the mask rules (ROC201 ballot-mask-32bit, ROC202 mask-bit-intrinsic-32,
ROC210 sync-mask-32bit, ROC211 lane-shift-32bit).

On ROCm a wave has 64 lanes on GCN/CDNA and HIP's `__ballot`/`__activemask`/`__match_any` return 64-bit
masks (`amd_warp_functions.h`), while CUDA code was written for 32-bit ones. These helpers answer, from
the tree and the file's own macros only:

- is this call a wave-mask intrinsic (`__ballot*`, `__activemask`, `__match_any*`, `__match_all*`,
  `__lanemask_*`)?
- is this expression a wave mask (such a call, or a variable that one flows into within the same
  function, or a variable declared with a lane-mask type)?
- how wide is this integer value: 32 bits, 64 bits, or unknown (None)? Unknown is never reported.
- is this shift amount a lane index (`lane`, `lane_id`, `threadIdx.x % warpSize`, `__lane_id()`)?
- is this mask argument a full-warp mask (`0xffffffff`, `~0u`, `FULL_MASK`, `__activemask()`)?

It also builds the rules' fixes (`mask_fix`): the ROCm branch of a gated statement gets every mask hazard
in that statement rewritten at once (64-bit storage, non-sync intrinsics for full-warp masks, `ll`/`64`
bit intrinsics, `1ull <<`), so whichever of the four rules fixes a statement, it writes the same ROCm
text, the other rules' identical fixes share its edits, and the ROCm branch is quiet for all of them.

Everything is same-file and same-function: no headers are read, no type aliases are followed.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from rocmlint.cuda.frontend import ByteSpan, CudaContext, Define, Node, Span
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.cuda.syntax import definitions_of, is_builtin_warpsize, without_parentheses
from rocmlint.cuda.values import START, Trace
from rocmlint.diagnostics import Fix

# Intrinsics whose result is a wave-wide lane mask (64-bit on HIP).
WAVE_MASK_INTRINSICS = frozenset(
    {
        "__ballot",
        "__ballot_sync",
        "__activemask",
        "__match_any",
        "__match_any_sync",
        "__match_all",
        "__match_all_sync",
        "__lanemask_lt",
        "__lanemask_le",
        "__lanemask_gt",
        "__lanemask_ge",
        "__lanemask_eq",
        # PyTorch's portable wrappers: the right intrinsic per vendor, so a 64-bit mask on ROCm.
        "WARP_BALLOT",
        "getLaneMaskLt",
        "getLaneMaskLe",
        "getLaneMaskGt",
        "getLaneMaskGe",
    }
)
# Cooperative-groups members that return a lane mask (`tile.ballot(p)`; 64-bit in HIP's cooperative groups).
WAVE_MASK_METHODS = frozenset({"ballot", "match_any", "match_all"})
# Intrinsics whose first argument is a lane mask; HIP's templates static_assert that it is 64-bit
# (`amd_warp_sync_functions.h`).
SYNC_MASK_INTRINSICS = frozenset(
    {
        "__shfl_sync",
        "__shfl_up_sync",
        "__shfl_down_sync",
        "__shfl_xor_sync",
        "__ballot_sync",
        "__any_sync",
        "__all_sync",
        "__uni_sync",
        "__match_any_sync",
        "__match_all_sync",
        "__syncwarp",
        "__reduce_add_sync",
        "__reduce_min_sync",
        "__reduce_max_sync",
        "__reduce_and_sync",
        "__reduce_or_sync",
        "__reduce_xor_sync",
    }
)
# 32-bit bit intrinsics and their 64-bit HIP counterparts (`amd_device_functions.h`).
BIT_INTRINSICS_64 = {
    "__popc": "__popcll",
    "__ffs": "__ffsll",
    "__clz": "__clzll",
    "__brev": "__brevll",
    "__fns": "__fns64",
}

_QUALIFIERS = re.compile(
    r"\b(?:const|volatile|constexpr|static|register|inline|__device__|__host__|__constant__|__shared__|"
    r"__forceinline__|__restrict__|__restrict|extern|mutable)\b|\bstd\s*::\s*|^::"
)
_TYPES_32 = frozenset(
    {
        "int",
        "signed",
        "signed int",
        "unsigned",
        "unsigned int",
        "uint32_t",
        "int32_t",
        "uint",
        "u32",
        "uint32",
        "__uint32_t",
        "__int32_t",
        "unsigned signed",
    }
)
_TYPES_64 = frozenset(
    {
        "long",
        "long int",
        "signed long",
        "unsigned long",
        "unsigned long int",
        "long unsigned int",
        "long long",
        "long long int",
        "unsigned long long",
        "unsigned long long int",
        "long long unsigned int",
        "uint64_t",
        "int64_t",
        "size_t",
        "u64",
        "uint64",
        "__uint64_t",
        "__int64_t",
        "unsigned __int64",
        "__int64",
    }
)
# A type named as a lane mask: HIP's porting guide recommends a 64-bit `lane_mask_t` typedef.
_LANE_MASK_TYPE = re.compile(r"(?i)(?:^|_|\b)(?:lane|warp|wave)_?mask(?:_t|_type|t)?$")
_LITERAL = re.compile(r"-?\s*(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)")
_MASK_OPS = frozenset({"&", "|", "^"})
_ASSIGN_OPS = frozenset({"=", "|=", "&=", "^="})
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_LANE_WORDS = frozenset({"lane", "laneid", "laneidx"})
# Words that turn a lane-named variable into something that is not one lane's index.
_NOT_LANE_WORDS = frozenset(
    {
        "mask",
        "count",
        "num",
        "n",
        "size",
        "bits",
        "bit",
        "log",
        "width",
        "per",
        "total",
        "cnt",
        "group",
        "groups",
        "shift",
        "stride",
        "step",
    }
)
_WARP_SIZE_NAME = re.compile(
    r"(?i)^(?:warp_?size|wave_?size|k_?warp_?size|c10_warp_size|threads_per_warp|warp_threads|hw_warp_size|warp_sz)$"
)


def _normalize_type(text: str) -> str:
    """`const std::uint32_t` -> `uint32_t`; `unsigned  int` -> `unsigned int`."""
    text = _QUALIFIERS.sub(" ", text)
    return " ".join(text.replace("&", " ").split())


def _type_width(text: str | None) -> int | None:
    """32 or 64 for an integer type written out; None for anything else (aliases, templates, floats)."""
    if text is None:
        return None
    name = _normalize_type(text)
    if name in _TYPES_32:
        return 32
    if name in _TYPES_64 or _is_lane_mask_type(name):
        return 64
    return None


def _is_lane_mask_type(text: str | None) -> bool:
    return text is not None and bool(_LANE_MASK_TYPE.search(_normalize_type(text)))


def _literal_width(text: str) -> int | None:
    """An integer literal's width: `l`/`ll` suffixes and values above 0xffffffff are 64-bit, the rest 32."""
    match = _LITERAL.fullmatch(text.strip())
    if match is None:
        return None
    if "l" in match.group(2).lower():
        return 64
    value = parse_int(match.group(1))
    return 64 if value is not None and value > 0xFFFFFFFF else 32


def _text_width(text: str) -> int | None:
    """The width of a macro's replacement text: a literal, `~literal`, or a cast of one."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    if text.startswith("~"):
        return _text_width(text[1:])
    width = _literal_width(text)
    if width is not None:
        return width
    cast = re.fullmatch(r"\(\s*([A-Za-z_][\w\s:]*)\)\s*(.+)", text, re.DOTALL)
    if cast is not None:
        return _type_width(cast.group(1))
    functional = re.fullmatch(
        r"(?:static_cast\s*<\s*([^<>]+)>|([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*))\s*[({].*[)}]", text, re.DOTALL
    )
    if functional is not None:
        return _type_width(functional.group(1) or functional.group(2))
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


# --- calls --------------------------------------------------------------------------------------------


def is_wave_mask_call(call: Node, ctx: CudaContext) -> bool:
    """`__ballot_sync(...)`, `__activemask()`, `__match_any_sync(...)`, `tile.ballot(...)`."""
    if call.type != "call_expression":
        return False
    name = ctx.call_name(call)
    if name is not None:
        return name.rsplit("::", 1)[-1] in WAVE_MASK_INTRINSICS
    function = call.child_by_field_name("function")
    if function is not None and function.type == "field_expression":
        field = function.child_by_field_name("field")
        return field is not None and ctx.text(field) in WAVE_MASK_METHODS
    return False


def _cast_type(node: Node, ctx: CudaContext) -> tuple[str, Node] | None:
    """(type text, operand) for `(T)x`, `T(x)`, `T{x}`, `static_cast<T>(x)`; None for other nodes."""
    if node.type == "cast_expression":
        type_node, value = node.child_by_field_name("type"), node.child_by_field_name("value")
        if type_node is not None and value is not None:
            return ctx.text(type_node), value
        return None
    if node.type == "compound_literal_expression":
        type_node, value = node.child_by_field_name("type"), node.child_by_field_name("value")
        items = [] if value is None else [c for c in value.named_children if c.type != "comment"]
        if type_node is not None and len(items) == 1:
            return ctx.text(type_node), items[0]
        return None
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    arguments = ctx.arguments(node)
    if function is None or len(arguments) != 1:
        return None
    if function.type == "template_function":
        name = function.child_by_field_name("name")
        targs = function.child_by_field_name("arguments")
        if name is not None and targs is not None and ctx.text(name) in ("static_cast", "reinterpret_cast"):
            return ctx.text(targs)[1:-1], arguments[0]
        return None
    if function.type in ("primitive_type", "sized_type_specifier") or (
        function.type in ("identifier", "qualified_identifier") and _type_width(ctx.text(function)) is not None
    ):
        return ctx.text(function), arguments[0]
    return None


def is_portable_wrapper_use(node: Node, ctx: CudaContext) -> bool:
    """Inside the arguments of a known portable macro (`WARP_SHFL_XOR(...)`, `WARP_BALLOT(...)`)."""
    for ancestor in ctx.ancestors(node):
        if ancestor.type == "call_expression":
            name = ctx.call_name(ancestor)
            if name is not None and ctx.is_portable_macro(name):
                return True
        if ancestor.type in ("expression_statement", "declaration", "return_statement", "function_definition"):
            return False
    return False


def calls_maskless_shim(node: Node, ctx: CudaContext) -> bool:
    """Whether a `*_sync` call names the file's own function of that name, defined where ROCm compiles it and never
    reading its mask (`#if defined(XYZ_USING_HIP) ... T __shfl_down_sync(unsigned mask, T val, unsigned delta) {
    return __shfl_down(val, delta); }`, a project's stand-in for HIPs without the `*_sync` intrinsics): on ROCm the
    call is the project's, whatever the mask's width."""
    name = ctx.call_name(node)
    if name is None:
        return False
    return any(ctx.branch(leaf).on_rocm is not False and _mask_unread(leaf, ctx) for leaf in definitions_of(ctx, name))


def _mask_unread(name: Node, ctx: CudaContext) -> bool:
    """Whether the function `name` defines has a body that never names its first parameter (the mask)."""
    declarator = name.parent
    definition = declarator.parent if declarator is not None else None
    body = definition.child_by_field_name("body") if definition is not None else None
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    if definition is None or definition.type != "function_definition" or body is None or parameters is None:
        return False
    first = next((p for p in parameters.named_children if p.type == "parameter_declaration"), None)
    mask = _declared_name(first, ctx) if first is not None else None
    return mask is not None and not any(ctx.text(n) == mask for n in _identifiers(body))


def _declared_name(parameter: Node, ctx: CudaContext) -> str | None:
    declarator = parameter.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "identifier":
        declarator = declarator.child_by_field_name("declarator")
    return ctx.text(declarator) if declarator is not None else None


def _identifiers(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            yield current
        stack.extend(current.children)


# --- widths -------------------------------------------------------------------------------------------


def value_width(expr: Node, ctx: CudaContext, trace: Trace | None = START) -> int | None:
    """The integer width (32/64) of `expr` as HIP sees it, or None when it cannot be told from this file."""
    if trace is None:
        return None
    expr = without_parentheses(expr)
    kind = expr.type
    if kind == "number_literal":
        return _literal_width(ctx.text(expr))
    if kind == "unary_expression":
        operator, argument = expr.child_by_field_name("operator"), expr.child_by_field_name("argument")
        if operator is None or argument is None:
            return None
        if ctx.text(operator) == "!":
            return 32
        return value_width(argument, ctx, trace.step())
    cast = _cast_type(expr, ctx)
    if cast is not None:
        return _type_width(cast[0])
    if kind == "call_expression":
        return 64 if is_wave_mask_call(expr, ctx) else None
    if kind == "identifier":
        return _identifier_width(expr, ctx, trace)
    if kind == "subscript_expression":
        base = without_parentheses(expr.child_by_field_name("argument") or expr)
        return _type_width(ctx.declared_type(base)) if base.type == "identifier" else None
    if kind == "binary_expression":
        return _binary_width(expr, ctx, trace)
    if kind == "conditional_expression":
        arms = [expr.child_by_field_name(f) for f in ("consequence", "alternative")]
        widths = [value_width(arm, ctx, trace.step()) if arm is not None else None for arm in arms]
        return _combine(widths[0], widths[1])
    return None


def _constant_width(expr: Node, ctx: CudaContext) -> int | None:
    """Like `value_width`, but only for constants: literals, casts of them, and same-file macros."""
    expr = without_parentheses(expr)
    if expr.type == "identifier":
        define = ctx.define(ctx.text(expr), expr)
        return _text_width(ctx.resolve(expr)) if define is not None else None
    if expr.type in ("number_literal", "unary_expression"):
        return value_width(expr, ctx)
    cast = _cast_type(expr, ctx)
    if cast is not None and without_parentheses(cast[1]).type in ("number_literal", "unary_expression"):
        return _type_width(cast[0])
    return None


def _identifier_width(identifier: Node, ctx: CudaContext, trace: Trace) -> int | None:
    if ctx.define(ctx.text(identifier), identifier) is not None:
        return _text_width(ctx.resolve(identifier))
    declared = ctx.declared_type(identifier)
    if declared is None:
        declared = _optional_parameter_type(identifier, ctx)
    width = _type_width(declared)
    if width is not None or declared is None:
        return width
    if _normalize_type(declared) == "auto":
        value = ctx.declared_value(identifier)
        return value_width(value, ctx, trace.step()) if value is not None else None
    return None


def _optional_parameter_type(identifier: Node, ctx: CudaContext) -> str | None:
    """The type of a defaulted parameter (`unsigned mask = 0xffffffff`), which `declaration_of` skips."""
    function = ctx.function_of(identifier)
    declarator = function.child_by_field_name("declarator") if function is not None else None
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    if parameters is None:
        return None
    name = ctx.text(identifier)
    for parameter in parameters.named_children:
        if parameter.type != "optional_parameter_declaration":
            continue
        declared = parameter.child_by_field_name("declarator")
        type_node = parameter.child_by_field_name("type")
        if declared is not None and type_node is not None and ctx.text(declared) == name:
            return ctx.text(type_node)
    return None


def _binary_width(expr: Node, ctx: CudaContext, trace: Trace) -> int | None:
    operator = expr.child_by_field_name("operator")
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return None
    op = ctx.text(operator)
    if op in ("<<", ">>"):
        return value_width(left, ctx, trace.step())
    if op in ("&", "|", "^", "+", "-", "*", "/", "%"):
        return _combine(value_width(left, ctx, trace.step()), value_width(right, ctx, trace.step()))
    return None


def _combine(a: int | None, b: int | None) -> int | None:
    """The usual arithmetic conversions, as far as width goes: any 64-bit side wins."""
    if a == 64 or b == 64:
        return 64
    return 32 if a == 32 and b == 32 else None


# --- wave masks by same-function data flow ----------------------------------------------------------

_ASSIGNMENTS: weakref.WeakKeyDictionary[CudaContext, dict[int, dict[str, list[Node]]]] = weakref.WeakKeyDictionary()


def is_wave_mask(expr: Node, ctx: CudaContext, trace: Trace | None = START) -> bool:
    """A ballot-style call, bit operations on one, or a variable one flows into in the same function."""
    if trace is None:
        return False
    expr = without_parentheses(expr)
    if is_wave_mask_call(expr, ctx):
        return True
    cast = _cast_type(expr, ctx)
    if cast is not None:
        return is_wave_mask(cast[1], ctx, trace.step())
    if expr.type == "unary_expression":
        operator, argument = expr.child_by_field_name("operator"), expr.child_by_field_name("argument")
        return (
            operator is not None
            and argument is not None
            and ctx.text(operator) == "~"
            and is_wave_mask(argument, ctx, trace.step())
        )
    if expr.type == "binary_expression":
        return _binary_is_wave_mask(expr, ctx, trace)
    if expr.type == "subscript_expression":
        base = without_parentheses(expr.child_by_field_name("argument") or expr)
        return base.type == "identifier" and _variable_is_wave_mask(base, ctx, trace)
    if expr.type == "identifier":
        return _variable_is_wave_mask(expr, ctx, trace)
    return False


def _binary_is_wave_mask(expr: Node, ctx: CudaContext, trace: Trace) -> bool:
    operator = expr.child_by_field_name("operator")
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return False
    op = ctx.text(operator)
    if op in _MASK_OPS:
        return is_wave_mask(left, ctx, trace.step()) or is_wave_mask(right, ctx, trace.step())
    if op in ("<<", ">>"):
        return is_wave_mask(left, ctx, trace.step())
    return False


def _variable_is_wave_mask(identifier: Node, ctx: CudaContext, trace: Trace) -> bool:
    name = ctx.text(identifier)
    if name in trace.names:
        return False  # `m |= __ballot_sync(...)` in a loop: `m` is what is being decided
    if _is_lane_mask_type(ctx.declared_type(identifier)):
        return True
    deeper = trace.into(name)
    value = ctx.declared_value(identifier)
    if value is not None and is_wave_mask(value, ctx, deeper):
        return True
    return any(is_wave_mask(v, ctx, deeper) for v in _assigned_values(identifier, ctx))


def _assigned_values(identifier: Node, ctx: CudaContext) -> list[Node]:
    """Right-hand sides of `name = ...`, `name |= ...`, `name[i] = ...` in the function around `identifier`."""
    function = ctx.function_of(identifier)
    if function is None:
        return []
    per_function = _ASSIGNMENTS.setdefault(ctx, {})
    table = per_function.get(function.id)
    if table is None:
        table = per_function[function.id] = _collect_assignments(function, ctx)
    return table.get(ctx.text(identifier), [])


def _collect_assignments(function: Node, ctx: CudaContext) -> dict[str, list[Node]]:
    table: dict[str, list[Node]] = {}
    for node in ctx.descendants(function, "assignment_expression"):
        operator, left, right = (node.child_by_field_name(f) for f in ("operator", "left", "right"))
        if operator is None or left is None or right is None or ctx.text(operator) not in _ASSIGN_OPS:
            continue
        left = without_parentheses(left)
        if left.type == "subscript_expression":
            left = without_parentheses(left.child_by_field_name("argument") or left)
        if left.type == "identifier":
            table.setdefault(ctx.text(left), []).append(right)
    return table


# --- lane indices ---------------------------------------------------------------------------------------


def _is_lane_index(expr: Node, ctx: CudaContext, trace: Trace | None = START) -> bool:
    """`lane`, `lane_id`, `laneId`, `__lane_id()`, `threadIdx.x % warpSize`, `tid & 31`, `lane + 1`."""
    if trace is None:
        return False
    expr = without_parentheses(expr)
    if expr.type == "identifier" and ctx.define(ctx.text(expr), expr) is not None:
        return False  # a macro constant (`1 << LANE_BITS`), not a lane computed at run time
    if expr.type in ("identifier", "field_identifier"):
        return is_lane_name(ctx.text(expr))
    if expr.type == "field_expression":
        field = expr.child_by_field_name("field")
        return field is not None and is_lane_name(ctx.text(field))
    if expr.type == "call_expression":
        name = ctx.call_name(expr)
        return name is not None and not ctx.arguments(expr) and is_lane_name(name.rsplit("::", 1)[-1])
    cast = _cast_type(expr, ctx)
    if cast is not None:
        return _is_lane_index(cast[1], ctx, trace.step())
    if expr.type != "binary_expression":
        return False
    operator = expr.child_by_field_name("operator")
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return False
    op = ctx.text(operator)
    if op in ("%", "&"):
        return _is_lane_reduction(op, left, right, ctx)
    if op in ("+", "-", "^", "|"):
        return _is_lane_index(left, ctx, trace.step()) or _is_lane_index(right, ctx, trace.step())
    return False


def is_lane_name(name: str) -> bool:
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    return any(w in _LANE_WORDS for w in words) and not any(w in _NOT_LANE_WORDS for w in words)


def _is_lane_reduction(op: str, left: Node, right: Node, ctx: CudaContext) -> bool:
    """`x % warpSize`, `x & (warpSize - 1)`, `x % WARP_SIZE`. A literal `% 32` / `& 31` keeps the shift
    below 32 and is as often a bit index into a 32-bit word (`bits[i / 32] |= 1u << (i % 32)`) as a lane;
    ROC208 reports the literal warp size itself."""
    right = without_parentheses(right)
    if op == "%":
        return _is_warp_size(right, ctx)
    if right.type == "binary_expression":
        operator, size, one = (right.child_by_field_name(f) for f in ("operator", "left", "right"))
        if operator is not None and size is not None and one is not None:
            return (
                ctx.text(operator) == "-"
                and ctx.text(one).strip() == "1"
                and _is_warp_size(without_parentheses(size), ctx)
            )
    return False


def _is_warp_size(node: Node, ctx: CudaContext) -> bool:
    return node.type == "identifier" and bool(_WARP_SIZE_NAME.match(ctx.text(node)))


# --- where a mask is narrowed (ROC201) -----------------------------------------------------------------

# Operators through which a mask stays a mask on its way to where it is stored.
_PASS_THROUGH_OPS = frozenset({"&", "|", "^", "~"})


@dataclass(frozen=True)
class _Narrowing:
    """A wave mask ending up in a 32-bit type: how (`stored in`, `cast to`, ...), the type, and the ROCm
    rewrites that widen it (empty when the widening would have to edit another statement)."""

    where: str
    type_text: str
    widen: tuple[Rewrite, ...]


def narrowing(call: Node, ctx: CudaContext) -> _Narrowing | None:
    """How the mask produced by `call` ends up in a 32-bit type, or None when it keeps 64 bits."""
    node, parent = _mask_destination(call, ctx)
    if parent is None:
        return None
    cast = _cast_type(parent, ctx)
    if cast is not None:
        if _type_width(cast[0]) != 32:
            return None
        type_node = _cast_type_node(parent, ctx)
        widen = [] if type_node is None else [_widened_type(type_node, ctx)]
        outer, holder = _mask_destination(parent, ctx)
        stored = _declaration_type(outer, holder)
        if stored is not None and _type_width(ctx.text(stored)) == 32:
            # `int v = (int)__ballot(p);`: the declaration that keeps the cast value is widened too.
            widen = [*widen, _widened_type(stored, ctx)] if _single_declarator(stored) else []
        elif (
            holder is not None
            and holder.type == "assignment_expression"
            and holder.child_by_field_name("right") == outer
        ):
            if _if_32(_target_type(holder.child_by_field_name("left"), ctx)) is not None:
                widen = []  # a wider cast would only move the truncation to the assignment
        elif holder is not None and holder.type == "return_statement" and _if_32(_return_type(holder, ctx)) is not None:
            widen = []
        return _Narrowing("cast to", _normalize_type(cast[0]), tuple(widen))
    declared = _declaration_type(node, parent)
    if declared is not None:
        if _type_width(ctx.text(declared)) != 32:
            return None
        kept = (_widened_type(declared, ctx),) if _single_declarator(declared) else ()
        return _Narrowing("stored in", _normalize_type(ctx.text(declared)), kept)
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        found = _if_32(_target_type(parent.child_by_field_name("left"), ctx))
        return _Narrowing("assigned to", found, ()) if found is not None else None
    if parent.type == "return_statement":
        found = _if_32(_return_type(parent, ctx))
        return _Narrowing("returned as", found, ()) if found is not None else None
    return None


def copies_into_32_bits(call: Node, ctx: CudaContext) -> list[tuple[Node, Node]]:
    """The 32-bit variables the mask of `call` is copied into once a variable holds it: `m = __ballot(p); ...
    kept = m;` with `kept` declared `unsigned` elsewhere in the function (the first store is `narrowing`'s), each
    as (its declaration, the copy). The copy truncates to 32 bits again after the first store is widened."""
    holding = _holder(call, ctx)
    function = ctx.function_of(call)
    if holding is None or function is None:
        return []
    holder, held = holding  # the variable itself: a same-named one elsewhere is another
    found: list[tuple[Node, Node]] = []
    for copy, left, right in _plain_assignments(function, ctx):
        if right.type != "identifier" or ctx.text(right) != ctx.text(holder) or left.type != "identifier":
            continue
        if ctx.declaration_of(right) != held:
            continue
        declaration = ctx.declaration_of(left)
        if declaration is not None and declaration.type == "declaration" and _if_32(ctx.declared_type(left)):
            found.append((declaration, copy))
    return found


def _plain_assignments(function: Node, ctx: CudaContext) -> Iterator[tuple[Node, Node, Node]]:
    """(assignment, left side, right side) of each plain `=` in `function`, both sides without parentheses."""
    for assignment in ctx.descendants(function, "assignment_expression"):
        operator, left, right = (assignment.child_by_field_name(f) for f in ("operator", "left", "right"))
        if operator is not None and left is not None and right is not None and ctx.text(operator) == "=":
            yield assignment, without_parentheses(left), without_parentheses(right)


def buffers_of_32_bits(call: Node, ctx: CudaContext) -> list[tuple[Node, Node]]:
    """The 32-bit buffers the mask of `call` is stored into through a variable holding it (`bits[i] = m;`, `*bits =
    kept;` with `bits` a pointer to or an array of 32-bit words), each as (the declaration deciding the buffer's
    type, the store): a local pointer initialised from a struct member (`unsigned *bits = params.bitmask + i`) has
    its type decided by the member's declarations in this file, which are what a port widens (apex's relu
    bitmask); another buffer only when the variable stored holds 64 bits (a 32-bit one is reported itself, and
    the buffer is the next step of the same fix). A store of the call itself (`out[i] = __ballot(p)`) is
    `narrowing`'s."""
    holder = _holder(call, ctx)
    function = ctx.function_of(call)
    if holder is None or function is None:
        return []
    holders = {holder[1]} | {declaration for declaration, _ in copies_into_32_bits(call, ctx)}
    found: list[tuple[Node, Node]] = []
    for store, left, right in _plain_assignments(function, ctx):
        if right.type != "identifier" or ctx.declaration_of(right) not in holders:
            continue
        buffer = _stored_through(left)
        declaration = ctx.declaration_of(buffer) if buffer is not None else None
        if buffer is None or declaration is None or _if_32(ctx.declared_type(buffer)) is None:
            continue
        if not _points_or_indexes(declaration, ctx.text(buffer), ctx):
            continue
        members = _member_origins(declaration, ctx)
        if members:
            found.extend((member, store) for member in members)
        elif _if_32(ctx.declared_type(right)) is None:
            found.append((declaration, store))  # the store is where the 64-bit mask is cut
    return found


def _holder(call: Node, ctx: CudaContext) -> tuple[Node, Node] | None:
    """(the variable the mask of `call` is stored in, its declaration) for `m = __ballot(p)` and `T m = ...`."""
    node, parent = _mask_destination(call, ctx)
    holder: Node | None = None
    if parent is not None and parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
        holder = parent.child_by_field_name("declarator")
    elif parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        holder = without_parentheses(parent.child_by_field_name("left") or parent)
    if holder is None or holder.type != "identifier":
        return None
    held = ctx.enclosing(holder, "declaration") if parent is not None and parent.type == "init_declarator" else None
    held = held or ctx.declaration_of(holder)
    return (holder, held) if held is not None else None


def _stored_through(left: Node) -> Node | None:
    """`bits` of `bits[i] = ...` and `*bits = ...`."""
    dereferenced = left.type == "pointer_expression" and bool(left.children) and left.children[0].type == "*"
    if left.type != "subscript_expression" and not dereferenced:
        return None
    argument = left.child_by_field_name("argument")
    argument = without_parentheses(argument) if argument is not None else None
    return argument if argument is not None and argument.type == "identifier" else None


def _points_or_indexes(declaration: Node, name: str, ctx: CudaContext) -> bool:
    """Whether `declaration` declares `name` as a pointer or an array (its elements are the declared type)."""
    for identifier in ctx.descendants(declaration, "identifier", "field_identifier"):
        if ctx.text(identifier) != name:
            continue
        parent = identifier.parent
        while parent is not None and parent != declaration and parent.type.endswith("declarator"):
            if parent.type in ("pointer_declarator", "array_declarator"):
                return True
            parent = parent.parent
    return False


def _member_origins(declaration: Node, ctx: CudaContext) -> list[Node]:
    """The member declarations of this file a local pointer is initialised from (`= params.bitmask + offset`) that
    declare 32-bit pointers or arrays."""
    values = [d.child_by_field_name("value") for d in ctx.descendants(declaration, "init_declarator")]
    member = next((m for v in values if v is not None for m in _members_in(v)), None)
    if member is None:
        return []
    return [
        field
        for field in ctx.field_declarations(ctx.text(member))
        if _if_32(ctx.text(field.child_by_field_name("type") or field)) is not None
        and _points_or_indexes(field, ctx.text(member), ctx)
    ]


def _members_in(value: Node) -> list[Node]:
    """The member of `s.m`, `s->m`, `s.m + offset` as the whole initialiser or its pointer operand."""
    value = without_parentheses(value)
    if value.type == "binary_expression":
        value = without_parentheses(value.child_by_field_name("left") or value)
    member = value.child_by_field_name("field") if value.type == "field_expression" else None
    return [member] if member is not None else []


def _mask_destination(node: Node, ctx: CudaContext) -> tuple[Node, Node | None]:
    """(the outermost expression the mask flows through unchanged, the node that receives it)."""
    parent = node.parent
    while parent is not None and _passes_mask_through(parent, ctx):
        node, parent = parent, parent.parent
    if (
        parent is not None
        and parent.type == "initializer_list"
        and parent.parent is not None
        and parent.parent.type == "init_declarator"
    ):
        node, parent = parent, parent.parent
    if parent is not None and parent.type == "argument_list":
        parent = parent.parent  # `uint32_t(__ballot(p))`, `static_cast<unsigned>(...)`
    return node, parent


def _declaration_type(node: Node, parent: Node | None) -> Node | None:
    """The type node of the declaration whose initialiser is `node` (`parent` being its init_declarator)."""
    if parent is None or parent.type != "init_declarator" or parent.child_by_field_name("declarator") == node:
        return None
    declaration = parent.parent
    return declaration.child_by_field_name("type") if declaration is not None else None


def _single_declarator(type_node: Node) -> bool:
    """Widening `unsigned a = __ballot(p), b = 0;` would widen `b` too: only one-variable declarations."""
    declaration = type_node.parent
    return (
        declaration is not None
        and declaration.type == "declaration"
        and len(declaration.children_by_field_name("declarator")) == 1
    )


def _passes_mask_through(node: Node, ctx: CudaContext) -> bool:
    if node.type == "parenthesized_expression":
        return True
    if node.type in ("binary_expression", "unary_expression"):
        operator = node.child_by_field_name("operator")
        return operator is not None and ctx.text(operator) in _PASS_THROUGH_OPS
    return False


def _cast_type_node(node: Node, ctx: CudaContext) -> Node | None:
    """The node naming the target type of a cast (`(T)x`, `T(x)`, `T{x}`, `static_cast<T>(x)`)."""
    if _cast_type(node, ctx) is None:
        return None
    if node.type in ("cast_expression", "compound_literal_expression"):
        return node.child_by_field_name("type")
    function = node.child_by_field_name("function")
    if function is not None and function.type == "template_function":
        targs = function.child_by_field_name("arguments")
        inner = [c for c in targs.named_children if c.type != "comment"] if targs is not None else []
        return inner[0] if len(inner) == 1 else None
    return function


def _widened_type(type_node: Node, ctx: CudaContext) -> Rewrite:
    """Replace a 32-bit type name with its 64-bit unsigned counterpart (`uint32_t` -> `uint64_t`)."""
    text = ctx.text(type_node)
    if re.search(r"\bu?int32_t\b", text):
        wide = re.sub(r"\bu?int32_t\b", "uint64_t", text)
    elif type_node.parent is not None and type_node.parent.type in ("call_expression", "compound_literal_expression"):
        # `unsigned(x)` / `unsigned{x}`: a functional cast needs a one-word type.
        wide = "uint64_t"
    else:
        wide = "unsigned long long"
    return Rewrite(type_node.start_byte, type_node.end_byte, wide)


def _if_32(type_text: str | None) -> str | None:
    return _normalize_type(type_text) if type_text is not None and _type_width(type_text) == 32 else None


def _target_type(left: Node | None, ctx: CudaContext) -> str | None:
    if left is None:
        return None
    left = without_parentheses(left)
    if left.type == "subscript_expression":
        left = without_parentheses(left.child_by_field_name("argument") or left)
    return ctx.declared_type(left) if left.type == "identifier" else None


def _return_type(statement: Node, ctx: CudaContext) -> str | None:
    """The declared return type of the function `statement` returns from (not through a lambda)."""
    owner = ctx.enclosing(statement, "function_definition", "lambda_expression")
    if owner is None or owner.type != "function_definition":
        return None
    type_node = owner.child_by_field_name("type")
    return ctx.text(type_node) if type_node is not None else None


# --- full-warp masks (what a non-sync intrinsic may replace) -----------------------------------------

# A mask constant named for the whole warp, whose definition lives in another file (`FULL_MASK` from a
# shared header): `FINAL_MASK`, `kFullMask`, `FULL_WARP_MASK`, `WARP_FULL_MASK`, `MASK_ALL`.
_FULL_MASK_NAME = re.compile(
    r"(?i)^k?_?(?:full|final|all)_?(?:warp_?|wave_?|lane_?)?mask$|^(?:warp|wave|lane)_?(?:full|all)_?mask$|^mask_?(?:full|all)$"
)
_ALL_ONES = (0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF)


def _is_full_warp_mask(expr: Node, ctx: CudaContext, trace: Trace | None = START) -> bool:
    """Every lane of a 32-lane warp: `0xffffffff`, `0xFFFFFFFFU`, `~0u`, `uint32_t(-1)`, `-1`, the
    all-ones 64-bit literal, `__activemask()`, a same-file macro or const variable holding one, or a
    macro named for the full mask (`FULL_MASK`, `FINAL_MASK`) that this file does not define."""
    if trace is None:
        return False
    expr = without_parentheses(expr)
    if expr.type == "call_expression" and ctx.call_name(expr) == "__activemask":
        return not ctx.arguments(expr)
    cast = _cast_type(expr, ctx)
    if cast is not None:
        return _type_width(cast[0]) is not None and _is_full_warp_mask(cast[1], ctx, trace.step())
    if expr.type == "identifier":
        name = ctx.text(expr)
        if ctx.define(name, expr) is not None:
            resolved = ctx.resolve(expr)
            if re.fullmatch(r"[A-Za-z_]\w*", resolved):
                return bool(_FULL_MASK_NAME.match(resolved)) and ctx.define(resolved, expr) is None
            return _is_all_ones_text(resolved)
        declaration = ctx.declaration_of(expr)
        if declaration is None:
            return _optional_parameter_type(expr, ctx) is None and bool(_FULL_MASK_NAME.match(name))
        if declaration.type == "declaration" and _is_constant(declaration, ctx):
            value = ctx.declared_value(expr)
            return value is not None and _is_full_warp_mask(value, ctx, trace.step())
        return False
    return expr.type in ("number_literal", "unary_expression") and _is_all_ones_text(ctx.text(expr))


def _is_all_ones_text(text: str) -> bool:
    """`0xffffffff`, `0xFFFFFFFFFFFFFFFFULL`, `~0u`, `-1`, `(unsigned)-1`, `uint32_t(-1)`, `(0xffffffff)`."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    if re.fullmatch(r"~\s*(?:0[xX]0*|0+)[uUlL]*|-\s*1[uUlL]*", text):
        return True
    match = _LITERAL.fullmatch(text)
    if match is not None:
        return not text.startswith("-") and parse_int(match.group(1)) in _ALL_ONES
    cast = re.fullmatch(r"\(\s*([A-Za-z_][\w\s:]*)\)\s*(.+)", text, re.DOTALL)
    if cast is not None:
        return _type_width(cast.group(1)) is not None and _is_all_ones_text(cast.group(2))
    functional = re.fullmatch(
        r"(?:static_cast\s*<\s*([^<>]+)>|([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*))\s*[({](.*)[)}]", text, re.DOTALL
    )
    if functional is not None:
        return _type_width(functional.group(1) or functional.group(2)) is not None and _is_all_ones_text(
            functional.group(3)
        )
    return False


def _is_constant(declaration: Node, ctx: CudaContext) -> bool:
    return any(c.type == "type_qualifier" and ctx.text(c) in ("const", "constexpr") for c in declaration.children)


# --- ROCm rewrites of each hazard ------------------------------------------------------------------------

# The non-sync intrinsic HIP has for each `*_sync` one (HIP 5.x has no `*_sync` warp functions at all).
_NON_SYNC_INTRINSICS = {
    "__shfl_sync": "__shfl",
    "__shfl_up_sync": "__shfl_up",
    "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor",
    "__ballot_sync": "__ballot",
    "__any_sync": "__any",
    "__all_sync": "__all",
}
# `__syncwarp(mask)`: a wave executes in lockstep on AMD GPUs, so only the compiler needs a barrier.
_WAVE_BARRIER = "__builtin_amdgcn_wave_barrier()"


@dataclass(frozen=True)
class Rewrite:
    """Replace content bytes [start, end) with `text` in the ROCm branch; `safe` as a fix would be."""

    start: int
    end: int
    text: str
    safe: bool = True


def _sync_rewrites(call: Node, ctx: CudaContext) -> list[Rewrite]:
    """`__shfl_xor_sync(FULL, v, o[, w])` -> `__shfl_xor(v, o[, w])`, `__ballot_sync(FULL, p)` -> `__ballot(p)`,
    `__syncwarp(FULL)` -> `__builtin_amdgcn_wave_barrier()`; nothing for a partial mask."""
    name = ctx.call_name(call)
    arguments = ctx.arguments(call)
    function = call.child_by_field_name("function")
    if function is None or not arguments or not _is_full_warp_mask(arguments[0], ctx):
        return []
    if name == "__syncwarp":
        return [Rewrite(call.start_byte, call.end_byte, _WAVE_BARRIER)] if len(arguments) == 1 else []
    plain = _NON_SYNC_INTRINSICS.get(name or "")
    if plain is None or len(arguments) < 2:
        return []
    return [
        Rewrite(function.start_byte, function.end_byte, plain),
        Rewrite(arguments[0].start_byte, arguments[1].start_byte, ""),
    ]


def sync_fix(call: Node, ctx: CudaContext) -> Fix | None:
    """The fix of a `*_sync` call's 32-bit mask: `mask_fix` with `_sync_rewrites` (none for a partial mask)."""
    return mask_fix(call, ctx, _non_sync_message(ctx.call_name(call)), _sync_rewrites(call, ctx))


def bit_intrinsic_rewrites(call: Node, ctx: CudaContext) -> list[Rewrite]:
    """`__popc(m)` -> `__popcll(m)`, `__ffs(m)` -> `__ffsll(m)`, `__fns(m, b, n)` -> `__fns64(m, b, n)` (safe: the
    result means the same at any width); `__clz(m)` -> `(__clzll(m) - 32)` and `__brev(m)` -> `__brevll(m)`
    (unsafe: their results count from the top bit, so the code around them needs a look)."""
    name = ctx.call_name(call)
    wide = BIT_INTRINSICS_64.get(name or "")
    arguments = ctx.arguments(call)
    function = call.child_by_field_name("function")
    if wide is None or function is None or not arguments or not is_wave_mask(arguments[0], ctx):
        return []
    if name == "__clz":
        return [
            Rewrite(function.start_byte, function.end_byte, f"({wide}", safe=False),
            Rewrite(call.end_byte, call.end_byte, " - 32)", safe=False),
        ]
    rewrites = [Rewrite(function.start_byte, function.end_byte, wide, safe=name != "__brev")]
    if name == "__ffs" and value_width(arguments[0], ctx) != 64:
        # HIP overloads `__ffsll` for `long long` and `unsigned long long`: a 32-bit argument is ambiguous.
        argument = arguments[0]
        rewrites += [
            Rewrite(argument.start_byte, argument.start_byte, "static_cast<unsigned long long>("),
            Rewrite(argument.end_byte, argument.end_byte, ")"),
        ]
    return rewrites


def is_lane_shift_32(shift: Node, ctx: CudaContext) -> bool:
    """`1 << lane`, `1u << (threadIdx.x % warpSize)`, `0xffffffff >> (warpSize - len)`: a 32-bit constant shifted by
    a lane index, or by an amount counted from the built-in `warpSize` (`shifts_by_warp_size`)."""
    operator = shift.child_by_field_name("operator")
    if shift.type != "binary_expression" or operator is None or ctx.text(operator) not in ("<<", ">>"):
        return False
    left, right = shift.child_by_field_name("left"), shift.child_by_field_name("right")
    if left is None or right is None or _constant_width(left, ctx) != 32:
        return False
    return _is_lane_index(right, ctx) or _counted_from_warp_size(right, ctx)


def shifts_by_warp_size(shift: Node, ctx: CudaContext) -> bool:
    """The lane shift's amount is counted from the built-in `warpSize` (`0xffffffff >> (warpSize - len)`, a mask of
    the low `len` lanes): 64 on CDNA, so the amount reaches 63 and a 32-bit mask cannot hold the lanes."""
    right = shift.child_by_field_name("right")
    return right is not None and _counted_from_warp_size(right, ctx)


def _counted_from_warp_size(amount: Node, ctx: CudaContext) -> bool:
    """`warpSize`, `warpSize - len`, `(warpSize - 1) - lane`: the built-in `warpSize` less something."""
    amount = without_parentheses(amount)
    if amount.type == "identifier":
        return is_builtin_warpsize(amount, ctx)
    operator, left = amount.child_by_field_name("operator"), amount.child_by_field_name("left")
    if amount.type != "binary_expression" or operator is None or left is None or ctx.text(operator) != "-":
        return False
    return _counted_from_warp_size(left, ctx)


def lane_shift_offsets(ctx: CudaContext) -> list[int]:
    """The `<<` or `>>` that may shift by a lane index (`is_lane_shift_32`): its shift amount names a lane (`lane`,
    `laneId`, `__lane_id()`) or a warp size (`% warpSize`, `& (WAVE_SIZE - 1)`, `warpSize - len`), so the text from it to the
    statement's `;` spells `lane`, `warp` or `wave` in some case (`std::cout << x;` needs no parse)."""
    content = ctx.content
    found = []
    for start in sorted(ctx.offsets(b"<<", b">>")):
        end = content.find(b";", start)
        amount = content[start : end if end >= 0 else len(content)].lower()
        if b"lane" in amount or b"warp" in amount or b"wave" in amount:
            found.append(start)
    return found


def lane_shift_rewrites(shift: Node, ctx: CudaContext) -> list[Rewrite]:
    """`1 << lane` -> `1ull << lane` when the shifted constant is 1 (the same bit for lanes 0-31)."""
    left = shift.child_by_field_name("left")
    if left is None or not is_lane_shift_32(shift, ctx):
        return []
    value = without_parentheses(left)
    cast = _cast_type(value, ctx)
    if cast is not None:
        value = without_parentheses(cast[1])
    if value.type not in ("number_literal", "identifier") or ctx.int_value(value) != 1:
        return []
    return [Rewrite(left.start_byte, left.end_byte, "1ull")]


def _hazard_rewrites(node: Node, ctx: CudaContext) -> list[Rewrite]:
    """Every mask rewrite this node itself needs on ROCm (a call or a shift)."""
    if node.type == "binary_expression":
        return lane_shift_rewrites(node, ctx)
    if node.type != "call_expression":
        return []
    rewrites = _sync_rewrites(node, ctx) + bit_intrinsic_rewrites(node, ctx)
    if is_wave_mask_call(node, ctx):
        found = narrowing(node, ctx)
        if found is not None:
            rewrites += found.widen
    return rewrites


# --- the fix ------------------------------------------------------------------------------------------------

_COMPOUND_STATEMENTS = frozenset(
    {"if_statement", "for_statement", "while_statement", "do_statement", "switch_statement", "template_declaration"}
)
# How many lines a compound statement (or one reached because the hazard's own statement shares its line)
# may span before duplicating it behind a gate is more than a fix should do.
_MAX_WRAPPED_LINES = 6


def mask_fix(hazard: Node, ctx: CudaContext, message: str, own: list[Rewrite]) -> Fix | None:
    """The fix for one hazard whose own ROCm rewrites are `own` (None when there are none).

    ROCm-only code (a ROCm branch, one an earlier fix wrote too) is edited in place. Elsewhere the
    smallest statement holding the hazard that stands on its own lines is wrapped by `ctx.gated_fix`, its
    ROCm text having every mask hazard of the statement rewritten (only the safe rewrites unless the
    hazard's own are unsafe, which makes the fix unsafe).
    """
    if not own:
        return None
    safe = all(r.safe for r in own)
    if ctx.branch(hazard).on_nvidia is False:
        in_place = _disjoint(own)
        return (
            None
            if in_place is None
            else ctx.fix(message, *(ctx.edit(r.start, r.end, r.text) for r in in_place), safe=safe)
        )
    statement = ctx.statement_of(hazard)
    climbed = False
    while statement is not None:
        lines = ctx.content.count(b"\n", statement.start_byte, statement.end_byte) + 1
        if (climbed or statement.type in _COMPOUND_STATEMENTS) and lines > _MAX_WRAPPED_LINES:
            return None
        if statement.has_error or re.search(rb"(?m)^[ \t]*#", ctx.content[statement.start_byte : statement.end_byte]):
            return None  # a statement split by directives or not parsed: leave it to a person
        rewrites = _rocm_rewrites(statement, ctx, unsafe=not safe)
        if rewrites is None:
            return None
        text = ctx.rocm_variant(statement, [(ByteSpan(r.start, r.end), r.text) for r in rewrites])
        fix = ctx.gated_fix(message, statement, text, safe=safe)
        if fix is not None:
            return _covering(fix, statement, ctx)
        parent = statement.parent
        statement = ctx.statement_of(parent) if parent is not None else None
        climbed = True
    return None


def _covering(fix: Fix, statement: Node, ctx: CudaContext) -> Fix:
    """`fix` plus an edit that rewrites `statement` with its own bytes. A gated fix only inserts lines
    around the statement, so without it the fix of a statement nested inside (a loop body) would land in
    the same pass, gating it again inside the NVIDIA branch; the no-op edit overlaps such a fix, which
    then waits for the next pass, where the NVIDIA copy is gated and the ROCm copy already fixed."""
    try:
        original = ctx.content[statement.start_byte : statement.end_byte].decode("utf-8")
    except UnicodeDecodeError:
        return fix
    cover = ctx.edit(statement.start_byte, statement.end_byte, original)
    return Fix(fix.message, (*fix.edits, cover), fix.applicability)


def _rocm_rewrites(root: Node, ctx: CudaContext, unsafe: bool = False) -> list[Rewrite] | None:
    """Every mask rewrite inside `root` (safe ones only unless `unsafe`); None when two of them clash."""
    found: list[Rewrite] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("call_expression", "binary_expression"):
            found += [r for r in _hazard_rewrites(node, ctx) if unsafe or r.safe]
        stack.extend(reversed(node.children))
    return _disjoint(found)


def _disjoint(rewrites: list[Rewrite]) -> list[Rewrite] | None:
    """Sorted, duplicates dropped, rewrites inside a replaced range dropped; None for a partial overlap."""
    ordered = sorted(dict.fromkeys(rewrites), key=lambda r: (r.start, r.end))
    kept: list[Rewrite] = []
    for rewrite in ordered:
        covering = next(
            (k for k in kept if k.start < k.end and k.start <= rewrite.start and rewrite.end <= k.end and k != rewrite),
            None,
        )
        if covering is not None and (rewrite.start < rewrite.end or covering.start < rewrite.start < covering.end):
            continue  # inside a range that is replaced whole (`__syncwarp(...)`)
        if any(k.start < rewrite.end and rewrite.start < k.end for k in kept):
            return None
        kept.append(rewrite)
    return kept


# --- masks in macro bodies, which tree-sitter does not parse ---------------------------------------------
# A `*_sync` call inside a macro body, with a 32-bit literal mask: `__shfl_down_sync(0xffffffff, v, o)`.
_SYNC_INTRINSIC = (
    r"__(?:shfl|shfl_up|shfl_down|shfl_xor|ballot|any|all|uni|match_any|match_all|reduce_\w+)_sync|__syncwarp"
)
_SYNC_CALL_IN_MACRO = re.compile(r"\b(" + _SYNC_INTRINSIC + r")\s*\(\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)\s*[,)]")
# The same call with a literal or a macro (`FULL_MASK`, `(FINAL_MASK)`) as its mask.
_SYNC_CALL_WITH_MASK = re.compile(r"\b(" + _SYNC_INTRINSIC + r")\s*\(\s*(\(?\s*\w+\s*\)?)\s*[,)]")
# The same call with a literal or macro mask, to rewrite inside a macro body for ROCm.
_SYNC_CALL_TO_REWRITE = re.compile(
    r"\b(?P<name>__(?:shfl|shfl_up|shfl_down|shfl_xor|ballot|any|all)_sync)\s*\(\s*(?P<mask>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*)\s*,\s*"
    r"|\b__syncwarp\s*\(\s*(?P<barrier_mask>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*)\s*\)"
)
# A full-warp mask constant: `#define FINAL_MASK 0xffffffff` (not `LOW_MASK`, which splits 64-bit words).
_MASK_MACRO_NAME = re.compile(r"(?i)(?:full|final|warp|wave|lane|all|active|sync|shfl)_?mask|mask_?(?:full|all)")


def sync_call_in_macro(value: str) -> tuple[str, str] | None:
    """(intrinsic, mask) of a `*_sync` call with a 32-bit literal mask in a macro body."""
    match = _SYNC_CALL_IN_MACRO.search(value) if "sync" in value else None
    return (match.group(1), match.group(2)) if match is not None and _literal_width(match.group(2)) == 32 else None


def sync_call_with_32_bit_mask(ctx: CudaContext, code: str, where: Span) -> tuple[str, str] | None:
    """(intrinsic, mask as written) of the first `*_sync` call in `code` (text, not parsed) whose mask is a 32-bit
    literal, or a same-file macro of one as a ROCm build sees it before `where` (`FULL_MASK`)."""
    for match in _SYNC_CALL_WITH_MASK.finditer(code):
        if _literal_width(ctx.resolve_text(match.group(2), where).strip("()").strip()) == 32:
            return match.group(1), match.group(2)
    return None


def mask_macro_used_elsewhere(define: Define, ctx: CudaContext) -> bool:
    """`#define FINAL_MASK 0xffffffff`: an object-like macro named for a full-warp mask whose value is all 32
    lanes, which this file never passes to a `*_sync` call (its uses live in other files), nor uses only where
    ROCm never compiles it (`SHFL_DOWN_SYNC(FULL_MASK, v, 1)`, whose ROCm definition drops the mask)."""
    return (
        define.parameters is None
        and bool(_MASK_MACRO_NAME.search(define.name))
        and _is_full_warp_32(define.value)
        and not _passed_to_sync_call(define.name, ctx)
        and not _used_here_only_off_rocm(define, ctx)
        and not _named_nowhere_else(define, ctx)
    )


def _named_nowhere_else(define: Define, ctx: CudaContext) -> bool:
    """No file of the project names the macro but at its definition: neither this one nor the files around it (its
    headers, the files including it): a mask nothing passes anywhere (a project read; unknown without one)."""
    spelled = re.compile(rb"\b" + re.escape(define.name.encode()) + rb"\b")
    directive = define.directive
    if any(not directive.start_byte <= found.start() < directive.end_byte for found in spelled.finditer(ctx.content)):
        return False
    return ctx.options.project.named_around(frozenset({define.name})) is None


def _used_here_only_off_rocm(define: Define, ctx: CudaContext) -> bool:
    """This file spells the macro after its definition, and ROCm compiles none of those uses: each is an argument a
    vendor selector macro drops on ROCm (see `CudaContext.branch`) or sits in NVIDIA-only code."""
    spelled = re.compile(rb"\b" + re.escape(define.name.encode()) + rb"\b")
    end = define.directive.end_byte
    uses = [found.start() for found in spelled.finditer(ctx.content, end)]
    return bool(uses) and all(ctx.is_rocm_gated(ByteSpan(use, use + len(define.name))) for use in uses)


def _passed_to_sync_call(name: str, ctx: CudaContext) -> bool:
    """Whether this file passes the macro `name` as the mask of a `*_sync` call or `__syncwarp`."""
    spelled = re.escape(name.encode())
    return (
        re.search(rb"\b__\w+_sync\s*\(\s*" + spelled + rb"\b|__syncwarp\s*\(\s*" + spelled + rb"\b", ctx.content)
        is not None
    )


def _non_sync_message(name: str | None) -> str:
    """What a fix of a `*_sync` call (None: of a macro body) does on ROCm."""
    if name == "__syncwarp":
        return f"use `{_WAVE_BARRIER}` on ROCm"
    return f"call `{_NON_SYNC_INTRINSICS.get(name or '', name)}` without the mask on ROCm"


def sync_macro_fix(define: Define, ctx: CudaContext) -> Fix | None:
    """A ROCm `#define` whose body calls the non-sync intrinsics where the original passes a full-warp mask."""
    original = ctx.text(define.directive)

    def full(mask: str) -> bool:
        if re.fullmatch(r"[A-Za-z_]\w*", mask):
            if define.parameters is not None and mask in define.parameters:
                return False  # the caller's mask
            known = ctx.define(mask, define.directive)
            return known is not None and _is_all_ones_text(known.value)
        return _is_all_ones_text(mask)

    def rewrite(match: re.Match[str]) -> str:
        if match.group("name") is not None:
            return f"{_NON_SYNC_INTRINSICS[match.group('name')]}(" if full(match.group("mask")) else match.group(0)
        return _WAVE_BARRIER if full(match.group("barrier_mask")) else match.group(0)

    rocm = _SYNC_CALL_TO_REWRITE.sub(rewrite, original)
    remaining = _SYNC_CALL_IN_MACRO.search(rocm)
    if rocm == original or (remaining is not None and _literal_width(remaining.group(2)) == 32):
        return None  # a partial mask: the ROCm body needs a person
    return ctx.gated_fix(_non_sync_message(None), define.directive, rocm)


def _is_full_warp_32(value: str) -> bool:
    """`0xffffffff`, `0xFFFFFFFFU`, `(0xffffffff)`: all 32 lanes, as a 32-bit value."""
    text = value.strip().strip("()").strip()
    return _text_width(text) == 32 and text.lower().rstrip("u").endswith("ffffffff")


__all__ = [
    "BIT_INTRINSICS_64",
    "SYNC_MASK_INTRINSICS",
    "WAVE_MASK_INTRINSICS",
    "Rewrite",
    "bit_intrinsic_rewrites",
    "is_lane_shift_32",
    "is_portable_wrapper_use",
    "is_wave_mask",
    "is_wave_mask_call",
    "lane_shift_offsets",
    "lane_shift_rewrites",
    "mask_fix",
    "mask_macro_used_elsewhere",
    "narrowing",
    "sync_call_in_macro",
    "sync_call_with_32_bit_mask",
    "sync_fix",
    "sync_macro_fix",
    "value_width",
]
