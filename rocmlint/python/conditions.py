"""Conditions around a node, by syntax: the `if` tests it sits under, the early exits before it, the other
tests of an `if`/`elif` chain, and the alternatives a branch chooses between.

Vendor gating (rocmlint/python/gating.py) answers whether code runs on ROCm; these helpers serve rules
whose own kind of guard (`if is_flash_attn_available():`, `elif "HIP error" in msg:`) decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_none, statements_before, whole_condition


def enclosing_tests(
    ctx: PythonContext, node: cst.CSTNode, exits: Callable[[cst.BaseSuite], bool] | None = None
) -> Iterator[cst.BaseExpression]:
    """Innermost first, through enclosing defs: the test of every `if` whose body or `else` holds `node`;
    with `exits`, instead the tests of the earlier `if test: <block>` statements of the blocks holding it
    whose block `exits` (leaves early)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if exits is None and isinstance(ancestor, cst.If) and child in (ancestor.body, ancestor.orelse):
            yield ancestor.test
        if exits is not None and isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            earlier = statements_before(ancestor, child)
            yield from (s.test for s in earlier if isinstance(s, cst.If) and exits(s.body))
        child = ancestor


def chain_tests(ctx: PythonContext, node: cst.CSTNode) -> list[cst.BaseExpression | cst.CSTNode]:
    """The whole `and`/`or`/`not` condition `node` is part of; when that is the test of an `if`/`elif`,
    every test of the chain instead (`if a in msg: ... elif b in msg: ...` tests both)."""
    condition = whole_condition(ctx, node)
    parent = ctx.parent(condition)
    if not isinstance(parent, cst.If) or parent.test is not condition:
        return [condition]
    head = parent
    while isinstance(outer := ctx.parent(head), cst.If) and outer.orelse is head:
        head = outer
    tests: list[cst.BaseExpression | cst.CSTNode] = []
    branch: cst.If | None = head
    while branch is not None:
        tests.append(branch.test)
        branch = branch.orelse if isinstance(branch.orelse, cst.If) else None
    return tests


def alternatives(ancestor: cst.CSTNode, child: cst.CSTNode) -> list[cst.CSTNode]:
    """The parts of an `if` statement or conditional expression `ancestor` that decide between its part
    `child` and something else: its test and the other branch (none when `child` is the test)."""
    if not isinstance(ancestor, (cst.If, cst.IfExp)):
        return []
    if child is ancestor.body:
        return [ancestor.test] + ([ancestor.orelse] if ancestor.orelse is not None else [])
    if child is ancestor.orelse:
        return [ancestor.test, ancestor.body]
    return []


def choices_around(ctx: PythonContext, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Innermost first, through enclosing defs: what `node` is chosen alongside or against. For each `if`
    statement or conditional expression around it, its test and other branch (`alternatives`); each tuple,
    list or dict literal around it, whole (a table or parameter list whose other entries are the choices)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.Tuple, cst.List, cst.Dict)):
            yield ancestor
        else:
            yield from alternatives(ancestor, child)
        child = ancestor


def test_codes(ctx: PythonContext, test: cst.CSTNode) -> Iterator[str]:
    """The code of a condition, then the code of the value of each once-assigned name in it
    (`if not HAS_FA:` where `HAS_FA = find_spec("flash_attn") is not None`)."""
    yield ctx.code_of(test)
    for name in ctx.semantic.descendants(test):
        if isinstance(name, cst.Name):
            value = ctx.single_value(name)
            if value is not None and value is not name:
                yield ctx.code_of(value)


def test_mentions(ctx: PythonContext, test: cst.CSTNode, pattern: re.Pattern[str]) -> bool:
    """`pattern` is found in the condition's code or in the value of a once-assigned name in it: a condition
    of the rule's own kind (`if is_flash_attn_2_available():`, `if not HAS_FA:`)."""
    return any(pattern.search(code) for code in test_codes(ctx, test))


def decided_test(ctx: PythonContext, node: cst.CSTNode) -> cst.If | cst.IfExp | cst.Assert | None:
    """The `if`, conditional expression or `assert` whose test `node`'s truth value decides, through
    `not`, `bool(...)`, `... is (not) None` and `and`/`or`; None when `node` is no part of such a test
    (`f(node)`, `node + 1`, a test that compares it with anything but None)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.Assert)):
            return ancestor if child is ancestor.test else None
        if not _keeps_truth(ctx, ancestor):
            return None
        child = ancestor
    return None


def _keeps_truth(ctx: PythonContext, ancestor: cst.CSTNode) -> bool:
    """`ancestor` keeps the truth value of its child as part of a condition."""
    if isinstance(ancestor, cst.BooleanOperation):
        return True
    if isinstance(ancestor, cst.UnaryOperation):
        return isinstance(ancestor.operator, cst.Not)
    if isinstance(ancestor, cst.Arg):
        return _is_bool_call(ctx, ctx.parent(ancestor))
    if isinstance(ancestor, cst.Call):
        return _is_bool_call(ctx, ancestor)
    if isinstance(ancestor, cst.Comparison):
        return len(ancestor.comparisons) == 1 and is_none(ancestor.comparisons[0].comparator)
    return False


def _is_bool_call(ctx: PythonContext, node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Call) and ctx.qualified_name(node.func) == "bool"


def outermost_conditional(ctx: PythonContext, node: cst.CSTNode) -> cst.IfExp | None:
    """The outermost conditional expression `node` is an arm of, through nested arms (`a` of
    `x if c else (a if d else b)`); None when `node` is no arm."""
    choice = None
    child, parent = node, ctx.parent(node)
    while isinstance(parent, cst.IfExp) and child in (parent.body, parent.orelse):
        choice = parent
        child, parent = parent, ctx.parent(parent)
    return choice
