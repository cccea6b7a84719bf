"""Where a node sits among the statements of its function: the `with` blocks around it and the method
calls made before it (`g.capture_begin()` ... `g.capture_end()`).

Only the node's own def, class or lambda counts: a nested def runs whenever it is called.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from rocmlint.python.frontend import PythonContext
from rocmlint.python.semantic import DEFERRED_BODIES


def with_items_around(ctx: PythonContext, node: ast.AST) -> Iterator[ast.expr]:
    """Innermost first: the context expressions of every `with` whose body holds `node`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and isinstance(child, ast.stmt):
            yield from (item.context_expr for item in ancestor.items)
        child = ancestor


def after_open_call(ctx: PythonContext, node: ast.AST, opening: str, closing: str) -> bool:
    """A statement before `node` in a block holding it is a call of the method `opening` (`x.opening(...)`)
    with no statement calling `closing` between them. The blocks of the node's def or class count, not
    those around it."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(child, ast.stmt) and _open_before(ctx.semantic.block_of(child), child, opening, closing):
            return True
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        child = ancestor
    return False


def _open_before(block: list[ast.stmt], statement: ast.stmt, opening: str, closing: str) -> bool:
    is_open = False
    for line in _lines_before(block, statement):
        method = called_method(line[0]) if len(line) == 1 else None
        if method == opening:
            is_open = True
        elif method == closing:
            is_open = False
    return is_open


def _lines_before(block: list[ast.stmt], statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statements of `block` before the line holding `statement`, by line: statements sharing a line
    (`a; b`) are one step, a call there is no statement of its own."""
    lines: list[list[ast.stmt]] = []
    for current in block:
        if lines and lines[-1][-1].end_lineno == current.lineno:
            lines[-1].append(current)
        else:
            lines.append([current])
        if current is statement:
            return lines[:-1]
    return lines


def called_method(statement: ast.stmt) -> str | None:
    """`m` of a statement that is just `x.m(...)`."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    func = statement.value.func
    return func.attr if isinstance(func, ast.Attribute) else None
