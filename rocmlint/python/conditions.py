"""Conditions around a node, by syntax: the `if` tests it sits under, the early exits before it, the tests
that decide whether it runs, the other tests of an `if`/`elif` chain, and the alternatives a branch chooses
between.

Vendor gating (rocmlint/python/gating.py) answers whether code runs on ROCm; these helpers serve rules
whose own kind of guard (`if is_flash_attn_available():`, `elif "HIP error" in msg:`) decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_none, statements_before
from rocmlint.python.semantic import COMPREHENSIONS, DEFERRED_BODIES

Exits = Callable[[cst.BaseSuite], bool]
Holds = Callable[[cst.BaseExpression, bool], bool]


def earlier_exit_tests(
    block: cst.IndentedBlock | cst.Module, child: cst.CSTNode, exits: Exits, *, with_else: bool = True
) -> list[cst.BaseExpression]:
    """The tests of the `if test: <block>` statements of `block` before its statement `child` whose body
    `exits` (leaves early): `child` runs only when each was false. With `with_else` off, an `if` that has
    an `else` (or `elif`) does not count."""
    return [
        statement.test
        for statement in statements_before(block, child)
        if isinstance(statement, cst.If) and (with_else or statement.orelse is None) and exits(statement.body)
    ]


def whole_condition(ctx: PythonContext, node: cst.CSTNode) -> cst.CSTNode:
    """The outermost `and`/`or`/`not` expression `node` is part of (itself when it stands alone)."""
    condition = node
    for ancestor in ctx.ancestors(node):
        if not isinstance(ancestor, (cst.BooleanOperation, cst.UnaryOperation)):
            break
        condition = ancestor
    return condition


def enclosing_tests(ctx: PythonContext, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """Innermost first, through enclosing defs: the test of every `if` whose body or `else` holds `node`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and child in (ancestor.body, ancestor.orelse):
            yield ancestor.test
        child = ancestor


def exit_tests(ctx: PythonContext, node: cst.CSTNode, exits: Exits) -> Iterator[cst.BaseExpression]:
    """Innermost first, through enclosing defs: the tests of the earlier `if test: <block>` statements of
    the blocks holding `node` whose block `exits` (`earlier_exit_tests`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            yield from earlier_exit_tests(ancestor, child, exits)
        child = ancestor


def guarded_by(ctx: PythonContext, node: cst.CSTNode, holds: Holds, exits: Exits | None = None) -> bool:
    """Whether a condition around `node` (within its def, class or lambda) guards it, by a rule's own
    predicate: `holds(test, taken)` says whether `test` being `taken` (True where `node` runs under its
    if-body, conditional-expression body or `and`; False under an else, `or`, or after an earlier
    `if test: <exit>` without `else`) is the guard. `exits` decides what counts as leaving the block early
    (default: `ctx.gates.terminates`). The front end's vendor gating is the same walk with vendor tests."""
    leaves = exits or ctx.gates.terminates
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        if any(holds(test, taken) for test, taken in _conditions_at(ancestor, child, leaves)):
            return True
        child = ancestor
    return False


def _conditions_at(ancestor: cst.CSTNode, child: cst.CSTNode, leaves: Exits) -> list[tuple[cst.BaseExpression, bool]]:
    """The tests `ancestor` runs its part `child` under, each with whether it is true there."""
    if isinstance(ancestor, (cst.If, cst.IfExp)):
        if child is ancestor.body:
            return [(ancestor.test, True)]
        return [(ancestor.test, False)] if child is ancestor.orelse else []
    if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
        return [(ancestor.left, isinstance(ancestor.operator, cst.And))]
    if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
        return [(test, False) for test in earlier_exit_tests(ancestor, child, leaves, with_else=False)]
    return []


def runs_right_under(ctx: PythonContext, node: cst.CSTNode, holds: Holds) -> bool:
    """Whether the simple statement holding `node` is decided by a test right around it, by a rule's own
    predicate `holds(test, taken)`: it sits in the body of `if test:` (taken True), in the `else:` of one
    (False), or after an earlier `if test: <leave the block>` without `else` in its own block (False).
    A node in a compound statement's own header (an `if` or `while` test) is decided by nothing here."""
    statement = ctx.parent(node)
    while statement is not None and not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        if isinstance(statement, cst.BaseCompoundStatement):
            return False
        statement = ctx.parent(statement)
    if statement is None:
        return False
    suite = ctx.parent(statement) if isinstance(statement, cst.SimpleStatementLine) else statement
    owner = ctx.parent(suite) if isinstance(suite, cst.IndentedBlock) else ctx.parent(statement)
    if isinstance(owner, cst.If) and suite is owner.body:
        return holds(owner.test, True)
    if isinstance(owner, cst.Else):
        branch = ctx.parent(owner)
        return isinstance(branch, cst.If) and holds(branch.test, False)
    if not isinstance(suite, (cst.IndentedBlock, cst.Module)):
        return False
    earlier = earlier_exit_tests(suite, statement, ctx.gates.terminates, with_else=False)
    return any(holds(test, False) for test in earlier)


def deciding_tests(ctx: PythonContext, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The tests that decide whether `node` runs, within its def, class or lambda, innermost first: of the
    `if`/`while`/conditional expression around it, the left side of `and`/`or`, comprehension filters,
    and earlier `if test: <leave the block>` statements of its blocks (not the module's). Any test counts,
    including one that only partly depends on the vendor (`if IS_ROCM and w > 16: continue`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return
        yield from _tests_deciding(ctx, ancestor, child)
        child = ancestor


def _tests_deciding(ctx: PythonContext, ancestor: cst.CSTNode, child: cst.CSTNode) -> list[cst.BaseExpression]:
    """The tests of `ancestor` that decide whether its part `child` runs."""
    if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is not ancestor.test:
        return [ancestor.test]
    if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
        return [ancestor.left]
    if isinstance(ancestor, COMPREHENSIONS):
        return _comprehension_filters(ancestor)
    if isinstance(ancestor, cst.IndentedBlock):
        return earlier_exit_tests(ancestor, child, ctx.gates.terminates)
    return []


def _comprehension_filters(comprehension: cst.CSTNode) -> list[cst.BaseExpression]:
    tests: list[cst.BaseExpression] = []
    clause: cst.CompFor | None = comprehension.for_in  # type: ignore[attr-defined]
    while clause is not None:
        tests.extend(comp_if.test for comp_if in clause.ifs)
        clause = clause.inner_for_in
    return tests


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
