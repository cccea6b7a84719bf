"""Conditions around a node, by syntax: the `if` tests it sits under, the early exits before it, the tests
that decide whether it runs, the other tests of an `if`/`elif` chain, and the alternatives a branch chooses
between.

Vendor gating (rocmlint/python/gating.py) answers whether code runs on ROCm; these helpers serve rules
whose own kind of guard (`if is_flash_attn_available():`, `elif "HIP error" in msg:`) decides.

A statement's earlier exits are read from the statement list (block) that holds it, when the walk out
from a node steps from that statement to its owner: the def or class owning a block is where a walk stops,
after its block's exits are counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import (
    MAX_CALLER_LEVELS,
    called_only_here,
    caught_names,
    is_none,
    is_subscript_index,
    last_name,
    re_raises,
    statements_before,
)
from rocmlint.python.scopes import COMPOUND_STATEMENTS, FUNCTION_DEFS, last_line
from rocmlint.python.semantic import COMPREHENSIONS, DEFERRED_BODIES

Exits = Callable[[list[ast.stmt]], bool]
Holds = Callable[[ast.expr, bool], bool]
_IMPORT_OR_SKIP = "pytest.importorskip"


def earlier_exit_tests(
    block: list[ast.stmt], child: ast.stmt, exits: Exits, *, with_else: bool = True
) -> list[ast.expr]:
    """The tests of the `if test: <block>` statements of `block` before its statement `child` whose body
    `exits` (leaves early): `child` runs only when each was false. With `with_else` off, an `if` that has
    an `else` (or `elif`) does not count."""
    return [
        statement.test
        for statement in statements_before(block, child)
        if isinstance(statement, ast.If) and (with_else or not statement.orelse) and exits(statement.body)
    ]


def whole_condition(ctx: PythonContext, node: ast.AST) -> ast.AST:
    """The outermost `and`/`or`/`not` expression `node` is part of (itself when it stands alone)."""
    condition = node
    for ancestor in ctx.ancestors(node):
        if not isinstance(ancestor, (ast.BoolOp, ast.UnaryOp)):
            break
        condition = ancestor
    return condition


def enclosing_tests(ctx: PythonContext, node: ast.AST) -> Iterator[ast.expr]:
    """Innermost first, through enclosing defs: the test of every `if` whose body or `else` holds `node`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            yield ancestor.test
        child = ancestor


def exit_tests(ctx: PythonContext, node: ast.AST, exits: Exits) -> Iterator[ast.expr]:
    """Innermost first, through enclosing defs: the tests of the earlier `if test: <block>` statements of
    the blocks holding `node` whose block `exits` (`earlier_exit_tests`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(child, ast.stmt):
            yield from earlier_exit_tests(ctx.semantic.block_of(child), child, exits)
        child = ancestor


def requirements_before(ctx: PythonContext, node: ast.AST, pattern: re.Pattern[str]) -> list[ast.expr]:
    """Innermost first, through enclosing defs: the tests naming `pattern` of the earlier `if test: ... raise`
    statements of the blocks holding `node` (`if not is_pynvml_available(): raise ImportError(...)`). Each
    stops the code where the package is missing, before `node` runs: a requirement, not a fallback."""
    return [test for test in exit_tests(ctx, node, _raises) if test_mentions(ctx, test, pattern)]


def _raises(block: list[ast.stmt]) -> bool:
    return any(isinstance(statement, ast.Raise) for statement in last_line(block))


def probed_before(ctx: PythonContext, node: ast.AST) -> Iterator[str]:
    """Innermost first, through enclosing defs: the packages `pytest.importorskip("pkg")` statements (a call
    of its own, or assigned) probe before `node` in the blocks holding it. Where one is missing the test is
    skipped there, so `node` only runs where each imports."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(child, ast.stmt):
            for statement in statements_before(ctx.semantic.block_of(child), child):
                package = _skip_unless_importable(ctx, statement)
                if package is not None:
                    yield package
        child = ancestor


def _skip_unless_importable(ctx: PythonContext, statement: ast.stmt) -> str | None:
    """The package of `pytest.importorskip("pkg")` written as a statement (`mod = pytest.importorskip(...)`
    too), None for any other statement."""
    call = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if not isinstance(call, ast.Call) or not call.args or ctx.qualified_name(call.func) != _IMPORT_OR_SKIP:
        return None
    return ctx.semantic.string_value(call.args[0])


def guarded_by(ctx: PythonContext, node: ast.AST, holds: Holds, exits: Exits | None = None) -> bool:
    """Whether a condition around `node` (within its def, class or lambda) guards it, by a rule's own
    predicate: `holds(test, taken)` says whether `test` being `taken` (True where `node` runs under its
    if-body, conditional-expression body or `and`; False under an else, `or`, or after an earlier
    `if test: <exit>` without `else`) is the guard. `exits` decides what counts as leaving the block early
    (default: `ctx.gates.terminates`). The front end's vendor gating is the same walk with vendor tests."""
    leaves = exits or ctx.gates.terminates
    child = node
    for ancestor in ctx.ancestors(node):
        if any(holds(test, taken) for test, taken in _conditions_at(ctx, ancestor, child, leaves)):
            return True
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        child = ancestor
    return False


def _conditions_at(ctx: PythonContext, ancestor: ast.AST, child: ast.AST, leaves: Exits) -> list[tuple[ast.expr, bool]]:
    """The tests `ancestor` runs its part `child` under, each with whether it is true there: the earlier
    exits of the block holding a statement `child`, then the tests of `ancestor` itself."""
    conditions: list[tuple[ast.expr, bool]] = []
    if isinstance(child, ast.stmt):
        block = ctx.semantic.block_of(child)
        conditions.extend((test, False) for test in earlier_exit_tests(block, child, leaves, with_else=False))
    if isinstance(ancestor, (ast.If, ast.IfExp)) and child is not ancestor.test:
        conditions.append((ancestor.test, _in_body(ancestor, child)))
    elif isinstance(ancestor, ast.BoolOp):
        conditions.extend((operand, isinstance(ancestor.op, ast.And)) for operand in _operands_before(ancestor, child))
    return conditions


def _in_body(choice: ast.If | ast.IfExp, child: ast.AST) -> bool:
    """`child` is (in) the body of an `if` or conditional expression, rather than its `else`."""
    if isinstance(choice, ast.IfExp):
        return child is choice.body
    return any(statement is child for statement in choice.body)


def _operands_before(operation: ast.BoolOp, child: ast.AST) -> list[ast.expr]:
    """The operands of `and`/`or` evaluated before its operand `child`: `child` runs only after them."""
    for index, operand in enumerate(operation.values):
        if operand is child:
            return operation.values[:index]
    return []


def runs_right_under(ctx: PythonContext, node: ast.AST, holds: Holds) -> bool:
    """Whether the simple statement holding `node` is decided by a test right around it, by a rule's own
    predicate `holds(test, taken)`: it sits in the body of `if test:` (taken True), in the `else:` of one
    (False), or after an earlier `if test: <leave the block>` without `else` in its own block (False).
    A node in a compound statement's own header (an `if` or `while` test) is decided by nothing here."""
    statement = ctx.semantic.statement_of(node)
    if statement is None or isinstance(statement, COMPOUND_STATEMENTS):
        return False
    owner = ctx.parent(statement)
    if isinstance(owner, ast.If):
        return holds(owner.test, _in_body(owner, statement))
    if any(other is statement for other in getattr(owner, "orelse", ())):
        return False  # the `else:` of a loop or `try`
    earlier = earlier_exit_tests(ctx.semantic.block_of(statement), statement, ctx.gates.terminates, with_else=False)
    return any(holds(test, False) for test in earlier)


def deciding_tests(ctx: PythonContext, node: ast.AST) -> Iterator[ast.expr]:
    """The tests that decide whether `node` runs, within its def, class or lambda, innermost first: of the
    `if`/`while`/conditional expression around it, the operands before it of `and`/`or`, comprehension
    filters, and earlier `if test: <leave the block>` statements of its blocks (not the module's). Any test
    counts, including one that only partly depends on the vendor (`if IS_ROCM and w > 16: continue`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        yield from _tests_deciding(ctx, ancestor, child)
        if isinstance(ancestor, DEFERRED_BODIES):
            return
        child = ancestor


def _tests_deciding(ctx: PythonContext, ancestor: ast.AST, child: ast.AST) -> list[ast.expr]:
    """The tests of `ancestor` that decide whether its part `child` runs: the earlier exits of the block
    holding a statement `child` (unless the module's), then the tests of `ancestor` itself."""
    tests: list[ast.expr] = []
    if isinstance(child, ast.stmt) and not isinstance(ancestor, ast.Module):
        tests.extend(earlier_exit_tests(ctx.semantic.block_of(child), child, ctx.gates.terminates))
    if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)) and child is not ancestor.test:
        tests.append(ancestor.test)
    elif isinstance(ancestor, ast.BoolOp):
        tests.extend(_operands_before(ancestor, child))
    elif isinstance(ancestor, COMPREHENSIONS):
        tests.extend(test for clause in ancestor.generators for test in clause.ifs)
    return tests


def chain_tests(ctx: PythonContext, node: ast.AST) -> list[ast.AST]:
    """The whole `and`/`or`/`not` condition `node` is part of; when that is the test of an `if`/`elif`,
    every test of the chain instead (`if a in msg: ... elif b in msg: ...` tests both), as for the test of a
    conditional expression nested in another's `else` (`x if a in msg else y if b in msg else z`)."""
    condition = whole_condition(ctx, node)
    parent = ctx.parent(condition)
    if isinstance(parent, ast.IfExp) and parent.test is condition:
        return _conditional_expression_tests(ctx, parent)
    if not isinstance(parent, ast.If) or parent.test is not condition:
        return [condition]
    head = parent
    while ctx.semantic.is_elif(head) and isinstance(outer := ctx.parent(head), ast.If):
        head = outer
    tests: list[ast.AST] = []
    branch: ast.If | None = head
    while branch is not None:
        tests.append(branch.test)
        branch = _elif_of(ctx, branch)
    return tests


def _conditional_expression_tests(ctx: PythonContext, expression: ast.IfExp) -> list[ast.AST]:
    """The tests of the chain of conditional expressions, each the `else` of the one before, that `expression` is
    part of."""
    head = expression
    while isinstance(outer := ctx.parent(head), ast.IfExp) and outer.orelse is head:
        head = outer
    tests: list[ast.AST] = []
    arm: ast.expr = head
    while isinstance(arm, ast.IfExp):
        tests.append(arm.test)
        arm = arm.orelse
    return tests


def rocm_arm_after(ctx: PythonContext, branch: ast.If) -> ast.If | None:
    """The first `elif` after `branch` in its chain whose test only a ROCm build passes (`elif torch.version.hip:`,
    `elif IS_ROCM and x:`): the project's own evidence that the arms before it are meant for NVIDIA."""
    arm = _elif_of(ctx, branch)
    while arm is not None:
        value = ctx.vendor_test(arm.test)
        if value.nvidia is False and value.rocm is not False:
            return arm
        arm = _elif_of(ctx, arm)
    return None


def _elif_of(ctx: PythonContext, branch: ast.If) -> ast.If | None:
    """The `elif` that continues an `if` (none for an `else:` holding only an `if`)."""
    following = branch.orelse[0] if len(branch.orelse) == 1 else None
    return following if isinstance(following, ast.If) and ctx.semantic.is_elif(following) else None


def alternatives(ancestor: ast.AST, child: ast.AST) -> list[ast.AST]:
    """The parts of an `if` statement or conditional expression `ancestor` that decide between its part
    `child` and something else: its test and the other branch (its statements; none when `child` is the
    test)."""
    if not isinstance(ancestor, (ast.If, ast.IfExp)) or child is ancestor.test:
        return []
    if isinstance(ancestor, ast.IfExp):
        other = ancestor.orelse if child is ancestor.body else ancestor.body
        return [ancestor.test, other]
    return [ancestor.test, *(ancestor.orelse if _in_body(ancestor, child) else ancestor.body)]


def choices_around(ctx: PythonContext, node: ast.AST) -> Iterator[ast.AST]:
    """Innermost first, through enclosing defs: what `node` is chosen alongside or against. For each `if`
    statement or conditional expression around it, its test and other branch (`alternatives`); each tuple,
    list or dict literal around it, whole (a table or parameter list whose other entries are the choices).
    The indices of `x[a, b]` are no tuple literal."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (ast.Tuple, ast.List, ast.Dict)):
            if not is_subscript_index(ctx, ancestor):
                yield ancestor
        else:
            yield from alternatives(ancestor, child)
        child = ancestor


def test_codes(ctx: PythonContext, test: ast.AST) -> Iterator[str]:
    """The code of a condition, then the code of the value of each once-assigned name in it
    (`if not HAS_FA:` where `HAS_FA = find_spec("flash_attn") is not None`)."""
    yield ctx.code_of(test)
    for name in ctx.semantic.descendants(test):
        if isinstance(name, ast.Name):
            value = ctx.single_value(name)
            if value is not None and value is not name:
                yield ctx.code_of(value)


def test_mentions(ctx: PythonContext, test: ast.AST, pattern: re.Pattern[str]) -> bool:
    """`pattern` is found in the condition's code or in the value of a once-assigned name in it: a condition
    of the rule's own kind (`if is_flash_attn_2_available():`, `if not HAS_FA:`)."""
    return any(pattern.search(code) for code in test_codes(ctx, test))


def decided_test(ctx: PythonContext, node: ast.AST) -> ast.If | ast.IfExp | ast.Assert | None:
    """The `if`, conditional expression or `assert` whose test `node`'s truth value decides, through
    `not`, `bool(...)`, `... is (not) None` and `and`/`or`; None when `node` is no part of such a test
    (`f(node)`, `node + 1`, a test that compares it with anything but None)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (ast.If, ast.IfExp, ast.Assert)):
            return ancestor if child is ancestor.test else None
        if not _keeps_truth(ctx, ancestor):
            return None
        child = ancestor
    return None


def _keeps_truth(ctx: PythonContext, ancestor: ast.AST) -> bool:
    """`ancestor` keeps the truth value of its child as part of a condition."""
    if isinstance(ancestor, ast.BoolOp):
        return True
    if isinstance(ancestor, ast.UnaryOp):
        return isinstance(ancestor.op, ast.Not)
    if isinstance(ancestor, (ast.keyword, ast.Starred)):
        return _is_bool_call(ctx, ctx.parent(ancestor))
    if isinstance(ancestor, ast.Call):
        return _is_bool_call(ctx, ancestor)
    if isinstance(ancestor, ast.Compare):
        return len(ancestor.ops) == 1 and is_none(ancestor.comparators[0])
    return False


def _is_bool_call(ctx: PythonContext, node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and ctx.qualified_name(node.func) == "bool"


def outermost_conditional(ctx: PythonContext, node: ast.AST) -> ast.IfExp | None:
    """The outermost conditional expression `node` is an arm of, through nested arms (`a` of
    `x if c else (a if d else b)`); None when `node` is no arm."""
    choice = None
    child, parent = node, ctx.parent(node)
    while isinstance(parent, ast.IfExp) and child in (parent.body, parent.orelse):
        choice = parent
        child, parent = parent, ctx.parent(parent)
    return choice


# `pytest.mark.skipif(c, ...)`, `unittest.skipIf(c, ...)` skip when `c` holds, `unittest.skipUnless(c, ...)`
# when it does not (matched on the lower-cased last name without underscores, as decorators are bound).
_SKIP_MARKS = {"skipif": True, "skipunless": False}


def skip_polarity(ctx: PythonContext, condition: ast.AST) -> bool | None:
    """When the whole condition `condition` (see `whole_condition`) only decides whether a test is
    skipped: True when its truth skips the test (`pytest.mark.skipif(c, ...)`, `unittest.skipIf`, `if c:
    pytest.skip(...)` whose body does nothing else, also `self.skipTest(...)` and `raise SkipTest(...)`),
    False when its truth runs the test (`unittest.skipUnless(c, ...)`); None for any other condition."""
    parent = ctx.parent(condition)
    if isinstance(parent, ast.If) and condition is parent.test:
        return True if parent.body and all(_only_skips(ctx, statement) for statement in parent.body) else None
    argument = parent if isinstance(parent, ast.keyword) else condition
    call = ctx.parent(argument)
    if not isinstance(call, ast.Call) or argument is call.func:
        return None
    key = last_name(call.func).replace("_", "").lower()
    if key not in _SKIP_MARKS or ctx.semantic.argument(call, "condition", 0) is not condition:
        return None
    return _SKIP_MARKS[key]


def _only_skips(ctx: PythonContext, statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Raise):
        return statement.exc is not None and last_name(
            statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        ) in ("SkipTest", "Skipped")
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    return ctx.qualified_name(func) == "pytest.skip" or last_name(func) == "skipTest"


def in_def_named(ctx: PythonContext, node: ast.AST, pattern: re.Pattern[str], levels: int = 0) -> bool:
    """`node` runs only when a def whose name matches `pattern` is called (`def flash_attn_no_pad(...)` holding an
    import of flash-attn): the def is the path its name says, and calling it is its callers' choice of that path.
    So is a module-level def no other module may call (`idioms.called_only_here`) whose every use is a call so
    placed, a few defs up (`forward(...)` called only by `ring_flash_attn_forward`)."""
    defs = [ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)]
    if any(pattern.search(definition.name) is not None for definition in defs):
        return True
    outermost = defs[-1] if defs else None
    if outermost is None or levels >= MAX_CALLER_LEVELS or ctx.parent(outermost) is not ctx.semantic.module:
        return False
    if not called_only_here(ctx, outermost.name):
        return False
    uses = ctx.references.uses_of(outermost)
    return bool(uses) and all(isinstance(use, ast.Call) and in_def_named(ctx, use, pattern, levels + 1) for use in uses)


def behind_failed_probe(ctx: PythonContext, node: ast.Call, caught: frozenset[str]) -> bool:
    """`node`, a call into a module (`pynvml.nvmlDeviceGetHandleByIndex(...)`), runs only while a module-level flag
    is true (`if ok:`, after `if not ok: return 0`) that is set True before a module-level `try:` calling into the
    same module and False in a handler of it catching one of `caught` (`ok = True`, `try: pynvml.nvmlInit()`,
    `except Exception: ok = False`): where that first call fails, the flag keeps the later ones from running."""
    module = (ctx.qualified_name(node.func) or "").rpartition(".")[0]
    if not module:
        return False

    def holds(test: ast.expr, taken: bool) -> bool:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, taken = test.operand, not taken
        return taken and isinstance(test, ast.Name) and _probe_flag(ctx, test.id, module, caught)

    return guarded_by(ctx, node, holds)


def _probe_flag(ctx: PythonContext, name: str, module: str, caught: frozenset[str]) -> bool:
    """Every assignment to `name` in the file is `True` before or in a module-level `try:` calling into `module`, or
    `False` in a handler of such a `try` that catches one of `caught` and does not re-raise; one is."""
    assignments = [
        node
        for node in ast.walk(ctx.module)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        and any(isinstance(target, ast.Name) and target.id == name for target in _targets(node))
    ]
    probes = [
        statement
        for statement in ctx.module.body
        if isinstance(statement, ast.Try) and _calls_into(ctx, statement, module)
    ]
    turned_off = False
    for assignment in assignments:
        value = assignment.value if isinstance(assignment, ast.Assign) else None
        if not (isinstance(value, ast.Constant) and isinstance(value.value, bool)):
            return False
        handler = ctx.parent(assignment)
        if value.value is False:
            if not (isinstance(handler, ast.ExceptHandler) and ctx.parent(handler) in probes):
                return False
            if re_raises(handler) or not (handler.type is None or set(caught_names(handler)) & caught):
                return False
            turned_off = True
        elif not any(_before_or_in(ctx, assignment, probe) for probe in probes):
            return False
    return turned_off


def _targets(statement: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def _calls_into(ctx: PythonContext, probe: ast.Try, module: str) -> bool:
    calls = (node for statement in probe.body for node in ast.walk(statement) if isinstance(node, ast.Call))
    return any((ctx.qualified_name(call.func) or "").startswith(module + ".") for call in calls)


def _before_or_in(ctx: PythonContext, statement: ast.stmt, probe: ast.Try) -> bool:
    """`statement` is one of the module's statements before `probe`, or one of `probe`'s body."""
    body = ctx.module.body
    if statement in probe.body:
        return True
    return statement in body and body.index(statement) < body.index(probe)
