"""One iterative pass over a libcst tree that records parents, then the rules' `visit_<Node>` calls.

libcst's own visitor rebuilds every node on the way back up; this walk only reads fields, skips pure
trivia (whitespace, parentheses, commas), and never recurses in Python, so deep nesting cannot overflow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

Callback = Callable[[cst.CSTNode], None]

_TRIVIA_PREFIXES = (
    "whitespace",
    "lpar",
    "rpar",
    "lbracket",
    "rbracket",
    "lbrace",
    "rbrace",
    "comma",
    "semicolon",
    "leading_lines",
    "lines_after",
    "header",
    "footer",
    "trailing_whitespace",
    "equal",
    "colon",
    "dot",
    "newline",
    "operator",
    "star",
    "asynchronous",
)
_child_fields_cache: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _child_fields_cache.get(node_type)
    if fields is None:
        fields = tuple(
            field.name for field in dataclasses.fields(node_type) if not field.name.startswith(_TRIVIA_PREFIXES)
        )
        _child_fields_cache[node_type] = fields
    return fields


# Whether a type is a libcst node, by exact type: `isinstance(x, cst.CSTNode)` goes through the ABC
# machinery, and the walk asks it for every field of every node.
_is_node_type: dict[type, bool] = {}


def _is_node(value: object) -> bool:
    kind = type(value)
    known = _is_node_type.get(kind)
    if known is None:
        known = _is_node_type[kind] = issubclass(kind, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Direct non-trivia children, in field order."""
    found: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            found.extend(item for item in value if _is_node(item))
        elif _is_node(value):
            found.append(value)
    return found


def walk(
    root: cst.Module,
    parents: dict[cst.CSTNode, cst.CSTNode],
    dispatch: dict[str, list[Callback]],
) -> None:
    """Record every node's parent, then call `dispatch[type name]` on the nodes in source order.

    Callbacks run after the whole tree is known, so a rule may ask about any node's ancestors or
    gating, including nodes below the one it is visiting.
    """
    visits: list[tuple[cst.CSTNode, list[Callback]]] = []
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        callbacks = dispatch.get(type(node).__name__)
        if callbacks:
            visits.append((node, callbacks))
        kids = children(node)
        for kid in kids:
            parents[kid] = node
        kids.reverse()
        stack.extend(kids)
    for node, callbacks in visits:
        for callback in callbacks:
            callback(node)
