"""One iterative pass over an `ast` tree that records parents, then the rules' `visit_<Node>` calls.

The walk never recurses in Python, so deep nesting cannot overflow. Expression contexts (`Load`, `Store`)
and operators are shared singletons in CPython's tree: they are neither children nor visited.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

Callback = Callable[[ast.AST], None]

_SINGLETONS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_child_fields_cache: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type[ast.AST]) -> tuple[str, ...]:
    fields = _child_fields_cache.get(node_type)
    if fields is None:
        fields = tuple(name for name in node_type._fields if name != "ctx")
        _child_fields_cache[node_type] = fields
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes, in field order (source order for every node type rules ask about)."""
    found: list[ast.AST] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST) and not isinstance(item, _SINGLETONS))
        elif isinstance(value, ast.AST) and not isinstance(value, _SINGLETONS):
            found.append(value)
    if type(node) is ast.Dict:
        found = _dict_in_source_order(node)
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
) -> None:
    """Record every node's parent, then call `dispatch[type name]` on the nodes in source order.

    Callbacks run after the whole tree is known, so a rule may ask about any node's ancestors or
    gating, including nodes below the one it is visiting.
    """
    visits: list[tuple[ast.AST, list[Callback]]] = []
    stack: list[ast.AST] = [root]
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
