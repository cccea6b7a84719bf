"""Where a node sits among the statements of its function: the `with` blocks around it and the method
calls made before it (`g.capture_begin()` ... `g.capture_end()`).

Only the node's own def, class or lambda counts: a nested def runs whenever it is called.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import statements_before
from rocmlint.python.semantic import DEFERRED_BODIES


def with_items_around(ctx: PythonContext, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """Innermost first: the context expressions of every `with` whose body holds `node`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return
        if isinstance(ancestor, cst.With) and child is ancestor.body:
            yield from (item.item for item in ancestor.items)
        child = ancestor


def after_open_call(ctx: PythonContext, node: cst.CSTNode, opening: str, closing: str) -> bool:
    """A statement before `node` in a block holding it is a call of the method `opening` (`x.opening(...)`)
    with no statement calling `closing` between them."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and _open_before(ancestor, child, opening, closing):
            return True
        child = ancestor
    return False


def _open_before(block: cst.IndentedBlock | cst.Module, statement: cst.CSTNode, opening: str, closing: str) -> bool:
    is_open = False
    for earlier in statements_before(block, statement):
        method = called_method(earlier)
        if method == opening:
            is_open = True
        elif method == closing:
            is_open = False
    return is_open


def called_method(statement: cst.CSTNode) -> str | None:
    """`m` of a statement that is just `x.m(...)`."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    func = small.value.func
    return func.attr.value if isinstance(func, cst.Attribute) else None
