"""CPython's tree of a Python file: the parse, and one iterative pass that records parents, then the
rules' `visit_<Node>` calls.

The walk never recurses in Python, so deep nesting cannot overflow. It reads, per node type, only the
fields that can hold nodes: which those are comes from the signature CPython documents for each class
(`Attribute(expr value, identifier attr, expr_context ctx)`), so names, constants, expression contexts
and operators (shared singletons in CPython's tree) are never looked at.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable

Callback = Callable[[ast.AST], None]
# A field per entry: (name, holds a list).
Fields = tuple[tuple[str, bool], ...]

# The grammar's types whose values are nodes (not identifiers, constants, contexts or operators).
_NODE_TYPES = frozenset(
    {
        "mod",
        "stmt",
        "expr",
        "keyword",
        "arg",
        "arguments",
        "alias",
        "withitem",
        "comprehension",
        "excepthandler",
        "match_case",
        "pattern",
        "type_param",
    }
)
_FIELD = re.compile(r"(\w+)([?*]?) (\w+)")
_fields_by_type: dict[type, Fields] = {}


class PythonParseError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def parse_text(text: str) -> ast.Module:
    """CPython's tree of `text`; PythonParseError with CPython's own message and position when it is
    not valid Python (or nests deeper than CPython's parser goes: it raises, it never crashes)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to report
            return ast.parse(text)
    except SyntaxError as error:
        raise PythonParseError(f"SyntaxError: {error.msg}", error.lineno or 1, error.offset or 1) from None
    except (RecursionError, MemoryError):
        raise PythonParseError("nesting too deep to parse (CPython's parser gives up too)", 1, 1) from None
    except ValueError as error:  # NUL bytes and the like
        raise PythonParseError(f"SyntaxError: {error}", 1, 1) from None


def node_fields(node_type: type) -> Fields:
    """The fields of `node_type` that hold nodes, in order, each with whether it holds a list."""
    fields = _fields_by_type.get(node_type)
    if fields is None:
        signature = (node_type.__doc__ or "").partition("(")[2]
        found = {
            name: kind == "*" for grammar_type, kind, name in _FIELD.findall(signature) if grammar_type in _NODE_TYPES
        }
        # Fields in the class's own order; a class whose signature says nothing is read field by field.
        fields = tuple((name, found[name]) for name in node_type._fields if name in found)  # type: ignore[attr-defined]
        if not signature:
            fields = tuple((name, False) for name in node_type._fields if name != "ctx")  # type: ignore[attr-defined]
        _fields_by_type[node_type] = fields
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes, in the order they are written."""
    if type(node) is ast.Dict:
        return _dict_in_source_order(node)
    found: list[ast.AST] = []
    for name, many in node_fields(type(node)):
        value = getattr(node, name)
        if many:
            found.extend(item for item in value if item is not None)
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes in `ast.iter_child_nodes`' order (a Dict's keys, then its values), less the expression
    contexts and operators it also yields (leaves no walk looks into): for walks whose order must stay the one
    they had, at about a third of the cost."""
    found: list[ast.AST] = []
    for name, many in node_fields(type(node)):
        value = getattr(node, name)
        if many:
            found += [item for item in value if item is not None]
        elif value is not None:
            found.append(value)
    return found


def _dict_in_source_order(node: ast.Dict) -> list[ast.AST]:
    """`keys` then `values` is not the order they are written in: interleave them (`**x` has no key)."""
    found: list[ast.AST] = []
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None:
            found.append(key)
        found.append(value)
    return found


def walk(
    root: ast.AST,
    parents: dict[ast.AST, ast.AST],
    dispatch: dict[str, list[Callback]],
    mentions: list[ast.Name | ast.Attribute] | None = None,
) -> None:
    """Record every node's parent (and, in `mentions`, every Name and Attribute in the order they are
    written), then call `dispatch[type name]` on the nodes in source order.

    Callbacks run after the whole tree is known, so a rule may ask about any node's ancestors or
    gating, including nodes below the one it is visiting.
    """
    visits: list[tuple[ast.AST, list[Callback]]] = []
    seen: list[ast.Name | ast.Attribute] = [] if mentions is None else mentions
    # Per node type: its callbacks, whether it is a mention, and its node fields (the walk's hot loop
    # looks each up once per type).
    kinds: dict[type, tuple[list[Callback] | None, bool, Fields]] = {}
    stack: list[ast.AST] = [root]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        node_type = type(node)
        kind = kinds.get(node_type)
        if kind is None:
            mention = node_type is ast.Name or node_type is ast.Attribute
            kind = kinds[node_type] = (dispatch.get(node_type.__name__), mention, node_fields(node_type))
        callbacks, mention, fields = kind
        if callbacks:
            visits.append((node, callbacks))
        if mention:
            seen.append(node)  # type: ignore[arg-type]
        if not fields:
            continue
        kids = children(node) if node_type is ast.Dict or node_type is ast.arguments else _kids(node, fields)
        if kids:
            parents.update(dict.fromkeys(kids, node))
            kids.reverse()
            push(kids)
    for node, callbacks in visits:
        for callback in callbacks:
            callback(node)


def _kids(node: ast.AST, fields: Fields) -> list[ast.AST]:
    """`children` for the node types whose lists never hold None (all but Dict and arguments)."""
    found: list[ast.AST] = []
    for name, many in fields:
        value = getattr(node, name)
        if many:
            found += value
        elif value is not None:
            found.append(value)
    return found
