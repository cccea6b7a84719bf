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

Everything is same-file and same-function: no headers are read, no type aliases are followed.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

from rocmlint.cuda.frontend import CudaContext, Node
from rocmlint.cuda.preprocessor import parse_int

# Intrinsics whose result is a wave-wide lane mask (64-bit on HIP).
WAVE_MASK_INTRINSICS = frozenset(
    {
        "__ballot", "__ballot_sync", "__activemask", "__match_any", "__match_any_sync", "__match_all",
        "__match_all_sync", "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge", "__lanemask_eq",
        # PyTorch's portable wrappers: the right intrinsic per vendor, so a 64-bit mask on ROCm.
        "WARP_BALLOT", "getLaneMaskLt", "getLaneMaskLe", "getLaneMaskGt", "getLaneMaskGe",
    }
)
# Cooperative-groups members that return a lane mask (`tile.ballot(p)`; 64-bit in HIP's cooperative groups).
WAVE_MASK_METHODS = frozenset({"ballot", "match_any", "match_all"})
# Intrinsics whose first argument is a lane mask; HIP's templates static_assert that it is 64-bit
# (`amd_warp_sync_functions.h`).
SYNC_MASK_INTRINSICS = frozenset(
    {
        "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
        "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync", "__syncwarp", "__reduce_add_sync",
        "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
    }
)
# 32-bit bit intrinsics and their 64-bit HIP counterparts (`amd_device_functions.h`).
BIT_INTRINSICS_64 = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll", "__brev": "__brevll", "__fns": "__fns64"}

_QUALIFIERS = re.compile(
    r"\b(?:const|volatile|constexpr|static|register|inline|__device__|__host__|__constant__|__shared__|"
    r"__forceinline__|__restrict__|__restrict|extern|mutable)\b|\bstd\s*::\s*|^::"
)
_TYPES_32 = frozenset(
    {
        "int", "signed", "signed int", "unsigned", "unsigned int", "uint32_t", "int32_t", "uint", "u32", "uint32",
        "__uint32_t", "__int32_t", "unsigned signed",
    }
)
_TYPES_64 = frozenset(
    {
        "long", "long int", "signed long", "unsigned long", "unsigned long int", "long unsigned int", "long long",
        "long long int", "unsigned long long", "unsigned long long int", "long long unsigned int", "uint64_t",
        "int64_t", "size_t", "u64", "uint64", "__uint64_t", "__int64_t", "unsigned __int64", "__int64",
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
    {"mask", "count", "num", "n", "size", "bits", "bit", "log", "width", "per", "total", "cnt", "group", "groups", "shift", "stride", "step"}
)
_WARP_SIZE_NAME = re.compile(r"(?i)^(?:warp_?size|wave_?size|k_?warp_?size|c10_warp_size|threads_per_warp|warp_threads|hw_warp_size|warp_sz)$")

_MAX_DEPTH = 6


def unwrap(node: Node) -> Node:
    """`x` for `(x)`, `((x))`."""
    while node.type == "parenthesized_expression" and node.named_child_count >= 1:
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def normalize_type(text: str) -> str:
    """`const std::uint32_t` -> `uint32_t`; `unsigned  int` -> `unsigned int`."""
    text = _QUALIFIERS.sub(" ", text)
    return " ".join(text.replace("&", " ").split())


def type_width(text: str | None) -> int | None:
    """32 or 64 for an integer type written out; None for anything else (aliases, templates, floats)."""
    if text is None:
        return None
    name = normalize_type(text)
    if name in _TYPES_32:
        return 32
    if name in _TYPES_64 or is_lane_mask_type(name):
        return 64
    return None


def is_lane_mask_type(text: str | None) -> bool:
    return text is not None and bool(_LANE_MASK_TYPE.search(normalize_type(text)))


def literal_width(text: str) -> int | None:
    """An integer literal's width: `l`/`ll` suffixes and values above 0xffffffff are 64-bit, the rest 32."""
    match = _LITERAL.fullmatch(text.strip())
    if match is None:
        return None
    if "l" in match.group(2).lower():
        return 64
    value = parse_int(match.group(1))
    return 64 if value is not None and value > 0xFFFFFFFF else 32


def text_width(text: str) -> int | None:
    """The width of a macro's replacement text: a literal, `~literal`, or a cast of one."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    if text.startswith("~"):
        return text_width(text[1:])
    width = literal_width(text)
    if width is not None:
        return width
    cast = re.fullmatch(r"\(\s*([A-Za-z_][\w\s:]*)\)\s*(.+)", text, re.DOTALL)
    if cast is not None:
        return type_width(cast.group(1))
    functional = re.fullmatch(r"(?:static_cast\s*<\s*([^<>]+)>|([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*))\s*[({].*[)}]", text, re.DOTALL)
    if functional is not None:
        return type_width(functional.group(1) or functional.group(2))
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


def cast_type(node: Node, ctx: CudaContext) -> tuple[str, Node] | None:
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
        function.type in ("identifier", "qualified_identifier") and type_width(ctx.text(function)) is not None
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


# --- widths -------------------------------------------------------------------------------------------


def value_width(expr: Node, ctx: CudaContext, depth: int = 0) -> int | None:
    """The integer width (32/64) of `expr` as HIP sees it, or None when it cannot be told from this file."""
    if depth > _MAX_DEPTH:
        return None
    expr = unwrap(expr)
    kind = expr.type
    if kind == "number_literal":
        return literal_width(ctx.text(expr))
    if kind == "unary_expression":
        operator, argument = expr.child_by_field_name("operator"), expr.child_by_field_name("argument")
        if operator is None or argument is None:
            return None
        if ctx.text(operator) == "!":
            return 32
        return value_width(argument, ctx, depth + 1)
    cast = cast_type(expr, ctx)
    if cast is not None:
        return type_width(cast[0])
    if kind == "call_expression":
        return 64 if is_wave_mask_call(expr, ctx) else None
    if kind == "identifier":
        return _identifier_width(expr, ctx, depth)
    if kind == "subscript_expression":
        base = unwrap(expr.child_by_field_name("argument") or expr)
        return type_width(ctx.declared_type(base)) if base.type == "identifier" else None
    if kind == "binary_expression":
        return _binary_width(expr, ctx, depth)
    if kind == "conditional_expression":
        arms = [expr.child_by_field_name(f) for f in ("consequence", "alternative")]
        widths = [value_width(arm, ctx, depth + 1) if arm is not None else None for arm in arms]
        return _combine(widths[0], widths[1])
    return None


def constant_width(expr: Node, ctx: CudaContext) -> int | None:
    """Like `value_width`, but only for constants: literals, casts of them, and same-file macros."""
    expr = unwrap(expr)
    if expr.type == "identifier":
        define = ctx.define(ctx.text(expr), expr)
        return text_width(ctx.resolve(expr)) if define is not None else None
    if expr.type in ("number_literal", "unary_expression"):
        return value_width(expr, ctx)
    cast = cast_type(expr, ctx)
    if cast is not None and unwrap(cast[1]).type in ("number_literal", "unary_expression"):
        return type_width(cast[0])
    return None


def _identifier_width(identifier: Node, ctx: CudaContext, depth: int) -> int | None:
    if ctx.define(ctx.text(identifier), identifier) is not None:
        return text_width(ctx.resolve(identifier))
    declared = ctx.declared_type(identifier)
    if declared is None:
        declared = _optional_parameter_type(identifier, ctx)
    width = type_width(declared)
    if width is not None or declared is None:
        return width
    if normalize_type(declared) == "auto":
        value = ctx.declared_value(identifier)
        return value_width(value, ctx, depth + 1) if value is not None else None
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


def _binary_width(expr: Node, ctx: CudaContext, depth: int) -> int | None:
    operator = expr.child_by_field_name("operator")
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return None
    op = ctx.text(operator)
    if op in ("<<", ">>"):
        return value_width(left, ctx, depth + 1)
    if op in ("&", "|", "^", "+", "-", "*", "/", "%"):
        return _combine(value_width(left, ctx, depth + 1), value_width(right, ctx, depth + 1))
    return None


def _combine(a: int | None, b: int | None) -> int | None:
    """The usual arithmetic conversions, as far as width goes: any 64-bit side wins."""
    if a == 64 or b == 64:
        return 64
    return 32 if a == 32 and b == 32 else None


# --- wave masks by same-function data flow ----------------------------------------------------------

_ASSIGNMENTS: weakref.WeakKeyDictionary[CudaContext, dict[int, dict[str, list[Node]]]] = weakref.WeakKeyDictionary()


def is_wave_mask(expr: Node, ctx: CudaContext, depth: int = 0, seen: frozenset[str] = frozenset()) -> bool:
    """A ballot-style call, bit operations on one, or a variable one flows into in the same function."""
    if depth > _MAX_DEPTH:
        return False
    expr = unwrap(expr)
    if is_wave_mask_call(expr, ctx):
        return True
    cast = cast_type(expr, ctx)
    if cast is not None:
        return is_wave_mask(cast[1], ctx, depth + 1, seen)
    if expr.type == "unary_expression":
        operator, argument = expr.child_by_field_name("operator"), expr.child_by_field_name("argument")
        return operator is not None and argument is not None and ctx.text(operator) == "~" and is_wave_mask(argument, ctx, depth + 1, seen)
    if expr.type == "binary_expression":
        return _binary_is_wave_mask(expr, ctx, depth, seen)
    if expr.type == "subscript_expression":
        base = unwrap(expr.child_by_field_name("argument") or expr)
        return base.type == "identifier" and _variable_is_wave_mask(base, ctx, depth, seen)
    if expr.type == "identifier":
        return _variable_is_wave_mask(expr, ctx, depth, seen)
    return False


def _binary_is_wave_mask(expr: Node, ctx: CudaContext, depth: int, seen: frozenset[str]) -> bool:
    operator = expr.child_by_field_name("operator")
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return False
    op = ctx.text(operator)
    if op in _MASK_OPS:
        return is_wave_mask(left, ctx, depth + 1, seen) or is_wave_mask(right, ctx, depth + 1, seen)
    if op in ("<<", ">>"):
        return is_wave_mask(left, ctx, depth + 1, seen)
    return False


def _variable_is_wave_mask(identifier: Node, ctx: CudaContext, depth: int, seen: frozenset[str]) -> bool:
    name = ctx.text(identifier)
    if name in seen:
        return False
    seen = seen | {name}
    if is_lane_mask_type(ctx.declared_type(identifier)):
        return True
    value = ctx.declared_value(identifier)
    if value is not None and is_wave_mask(value, ctx, depth + 1, seen):
        return True
    return any(is_wave_mask(v, ctx, depth + 1, seen) for v in _assigned_values(identifier, ctx))


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
    for node in _descendants_of_type(function, "assignment_expression"):
        operator, left, right = (node.child_by_field_name(f) for f in ("operator", "left", "right"))
        if operator is None or left is None or right is None or ctx.text(operator) not in _ASSIGN_OPS:
            continue
        left = unwrap(left)
        if left.type == "subscript_expression":
            left = unwrap(left.child_by_field_name("argument") or left)
        if left.type == "identifier":
            table.setdefault(ctx.text(left), []).append(right)
    return table


def _descendants_of_type(root: Node, node_type: str) -> Iterator[Node]:
    yield from tree_sitter.QueryCursor(_query(node_type)).captures(root).get("node", [])


@lru_cache(maxsize=8)
def _query(node_type: str) -> tree_sitter.Query:
    return tree_sitter.Query(tree_sitter.Language(tree_sitter_cuda.language()), f"({node_type}) @node")


# --- lane indices ---------------------------------------------------------------------------------------


def is_lane_index(expr: Node, ctx: CudaContext, depth: int = 0) -> bool:
    """`lane`, `lane_id`, `laneId`, `__lane_id()`, `threadIdx.x % warpSize`, `tid & 31`, `lane + 1`."""
    if depth > _MAX_DEPTH:
        return False
    expr = unwrap(expr)
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
    cast = cast_type(expr, ctx)
    if cast is not None:
        return is_lane_index(cast[1], ctx, depth + 1)
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
        return is_lane_index(left, ctx, depth + 1) or is_lane_index(right, ctx, depth + 1)
    return False


def is_lane_name(name: str) -> bool:
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    return any(w in _LANE_WORDS for w in words) and not any(w in _NOT_LANE_WORDS for w in words)


def _is_lane_reduction(op: str, left: Node, right: Node, ctx: CudaContext) -> bool:
    """`x % warpSize`, `x & (warpSize - 1)`, `x % WARP_SIZE`. A literal `% 32` / `& 31` keeps the shift
    below 32 and is as often a bit index into a 32-bit word (`bits[i / 32] |= 1u << (i % 32)`) as a lane;
    ROC208 reports the literal warp size itself."""
    right = unwrap(right)
    if op == "%":
        return _is_warp_size(right, ctx)
    if right.type == "binary_expression":
        operator, size, one = (right.child_by_field_name(f) for f in ("operator", "left", "right"))
        if operator is not None and size is not None and one is not None:
            return ctx.text(operator) == "-" and ctx.text(one).strip() == "1" and _is_warp_size(unwrap(size), ctx)
    return False


def _is_warp_size(node: Node, ctx: CudaContext) -> bool:
    return node.type == "identifier" and bool(_WARP_SIZE_NAME.match(ctx.text(node)))


__all__ = [
    "BIT_INTRINSICS_64",
    "SYNC_MASK_INTRINSICS",
    "WAVE_MASK_INTRINSICS",
    "cast_type",
    "constant_width",
    "is_lane_index",
    "is_lane_mask_type",
    "is_portable_wrapper_use",
    "is_wave_mask",
    "is_wave_mask_call",
    "literal_width",
    "normalize_type",
    "text_width",
    "type_width",
    "value_width",
]
