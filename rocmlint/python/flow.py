"""Where a value goes: forward from an expression (a literal, say) to the code that uses it.

The other direction from the value tracer (values.py walks back to where a value comes from). A walk starts
at a value and at every step asks the rule's `visit` what the use of the value there means to it: a list of
verdicts (possibly empty: a dead end, or a use that says nothing), or None to let the walk follow the
generic constructs, each to the whole value around the next use (`Values.collection_of`: the list, tuple,
set, `+` or `frozenset(...)` holding it):

- an assignment: every read of each assigned name or attribute;
- a list it is added to (`flags.append(value)`, `extend`, `insert`): every read of that list;
- a `for` loop or comprehension iterating it: every read of the loop variable inside the loop.

Reads are matched by identifier over the whole file, without scope analysis: a module constant may be read
in any function, an attribute through any object. An assignment target that is neither a name nor an
attribute (`table[key] = value`), and a name or attribute nothing reads (`config.arch = value`: it
configures something elsewhere), is handed to `visit` itself.

What a use means is the rule's; `is_tested` and `sets_up` say what most uses are (`Use`): the value is
looked for, or handed over as a setting.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Sequence
from typing import TypeVar

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import PROCESS_RUNNERS, is_display_call, is_looked_for, last_name
from rocmlint.python.semantic import COMPREHENSIONS, MAX_HOPS
from rocmlint.python.values import ASSIGNMENTS, Argument, argument_of, assignment_targets, list_added_to

T = TypeVar("T")
Visit = Callable[[ast.AST], "Sequence[T] | None"]
# The loops whose target takes the values of an iterable: the `for` statements and comprehension clauses.
_LOOPS = (ast.For, ast.AsyncFor, ast.comprehension)
_PAIR = 2
# Words enough for a sentence of advice shown to a user, not a label the code reads back (`"oom"`, `"retry"`).
_SENTENCE_WORDS = 4


class Use(enum.Enum):
    """The two verdicts most walks need: a rule that finds a value `TESTED` anywhere leaves it alone."""

    SETS = "sets"  # handed over as a setting (`sets_up`, or another use the rule counts as one)
    TESTED = "tested"  # looked for (`is_tested`): compared, matched, a key, a member of a set


_SET_CALLS = frozenset({"set", "frozenset"})
# Methods whose second positional argument is a value to store or a fallback (`os.getenv(key, default)`).
_VALUE_AFTER_KEY = frozenset({"get", "getenv", "setdefault", "putenv", "pop"})
# Methods that build a string out of their arguments.
_STRING_BUILDERS = frozenset({"join", "format"})
_QUANTIFIERS = frozenset({"any", "all"})


def value_uses(ctx: PythonContext, value: ast.AST, visit: Visit[T]) -> list[T]:
    """Every verdict `visit` gives on the uses `value` reaches, in the order the walk finds them."""
    return _uses(ctx, ctx.values.collection_of(value), visit, 0)


def _uses(ctx: PythonContext, value: ast.AST, visit: Visit[T], hops: int) -> list[T]:
    verdicts = visit(value)
    if verdicts is not None:
        return list(verdicts)
    parent = ctx.parent(value)
    passed = argument_of(ctx.semantic, value)
    if passed is not None:
        receiver = list_added_to(passed[0])
        return _read_uses(ctx, receiver, visit, hops) if isinstance(receiver, (ast.Name, ast.Attribute)) else []
    if isinstance(parent, ASSIGNMENTS) and parent.value is value:
        targets = assignment_targets(parent)
        return [verdict for target in targets for verdict in _target_uses(ctx, target, visit, hops)]
    if isinstance(parent, _LOOPS) and parent.iter is value and isinstance(parent.target, ast.Name):
        return _read_uses(ctx, parent.target, visit, hops, within=_loop_scope(ctx, parent))
    return []


def _target_uses(ctx: PythonContext, target: ast.expr, visit: Visit[T], hops: int) -> list[T]:
    if isinstance(target, (ast.Name, ast.Attribute)):
        return _read_uses(ctx, target, visit, hops)
    return list(visit(target) or ())


def _read_uses(
    ctx: PythonContext,
    binding: ast.Name | ast.Attribute,
    visit: Visit[T],
    hops: int,
    within: ast.AST | None = None,
) -> list[T]:
    """The verdicts on the uses of every read of the identifier `binding` stores (under `within`)."""
    if hops >= MAX_HOPS:
        return []
    identifier = binding.id if isinstance(binding, ast.Name) else binding.attr
    reads = ctx.references.mention_reads(identifier, within=within)
    if not reads:
        return list(visit(binding) or ())
    return [verdict for read in reads for verdict in _uses(ctx, ctx.values.collection_of(read), visit, hops + 1)]


def _loop_scope(ctx: PythonContext, loop: ast.For | ast.AsyncFor | ast.comprehension) -> ast.AST:
    """Where the loop variable of `loop` is read: the `for` statement, or the whole comprehension."""
    if not isinstance(loop, ast.comprehension):
        return loop
    return next((ancestor for ancestor in ctx.ancestors(loop) if isinstance(ancestor, COMPREHENSIONS)), loop)


def is_tested(ctx: PythonContext, value: ast.AST) -> bool:
    """`value` is something to look for (`idioms.is_looked_for`: compared, matched, a key), or a set (a set
    display, `set(...)`, `frozenset(...)`), which only answers whether something is in it."""
    if isinstance(value, ast.Set) or is_looked_for(ctx, value):
        return True
    return isinstance(value, ast.Call) and ctx.qualified_name(value.func) in _SET_CALLS


def renames_tested_value(ctx: PythonContext, value: ast.AST) -> bool:
    """`value` is the arm of a conditional expression taken when the other arm, a name, equals a literal its test
    compares it with (`tgt if tgt != "gfx900:xnack-" else "gfx900"`): it renames that one value of the name, which
    someone else chose; everything else passes through unchanged."""
    choice = ctx.parent(value)
    if not isinstance(choice, ast.IfExp) or value is choice.test:
        return False
    kept = choice.orelse if value is choice.body else choice.body
    test = choice.test
    if not isinstance(kept, ast.Name) or not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    operator = ast.NotEq if value is choice.orelse else ast.Eq  # the arm taken when the name equals the literal
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(side, ast.Name) and side.id == kept.id for side in sides)
    return named and isinstance(test.ops[0], operator) and any(ctx.string_value(side) is not None for side in sides)


def sets_up(ctx: PythonContext, value: ast.AST, consumers: frozenset[str] = frozenset()) -> bool:
    """`value` is handed over as a setting where it stands: a keyword argument, a parameter's default, the
    value or fallback of `get`/`getenv`/`setdefault`/`putenv`/`pop` (not the key), an argument of a command
    line (`PROCESS_RUNNERS`), of `consumers` (qualified names), of `sep.join(...)` or `"...".format(...)`,
    an f-string field, the right operand of `%`, or a subscript or attribute assigned to (as `value_uses`
    hands one over: nothing here reads it)."""
    parent = ctx.parent(value)
    if ctx.semantic.is_store(value):
        return isinstance(value, (ast.Subscript, ast.Attribute))
    passed = argument_of(ctx.semantic, value)
    if passed is not None:
        return _sets_up_argument(ctx, *passed, consumers)
    if isinstance(parent, ast.BinOp):
        return isinstance(parent.op, ast.Mod) and parent.right is value
    # A parameter's default is the only expression an `ast.arguments` holds directly.
    return isinstance(parent, (ast.arguments, ast.FormattedValue))


def _sets_up_argument(ctx: PythonContext, call: ast.Call, argument: Argument, consumers: frozenset[str]) -> bool:
    named = isinstance(argument, ast.keyword) and argument.arg is not None
    if named or last_name(call.func) in _STRING_BUILDERS:
        return True
    if last_name(call.func) in _VALUE_AFTER_KEY:
        return ctx.semantic.positional(call, 0) is not argument
    name = ctx.qualified_name(call.func)
    return name in PROCESS_RUNNERS or name in consumers


def only_picks_display(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`'s truth (through `and`/`or`/`not`, `any(...)`/`all(...)` of a generator whose element it is, and
    names assigned the result) only decides which message is shown: it is the test of `if`s whose arms do
    nothing but display (`is_display_call`, `pass`):

        is_cutlass_error = any(err in text for err in CUTLASS_ERRORS)
        if is_cutlass_error:
            print("cannot load FBGEMM")
        else:
            print(f"cannot load FBGEMM: {text}")
    """
    holder = truth_holder(ctx, node)
    parent = ctx.parent(holder)
    if isinstance(parent, ast.If) and parent.test is holder:
        return _only_displays(ctx, parent)
    if not (isinstance(parent, ast.Assign) and parent.value is holder):
        return False
    if not all(isinstance(target, ast.Name) for target in parent.targets):
        return False
    verdicts = value_uses(ctx, holder, lambda value: None if value is holder else [_read_picks_display(ctx, value)])
    return bool(verdicts) and all(verdicts)


def _read_picks_display(ctx: PythonContext, read: ast.AST) -> bool:
    holder = truth_holder(ctx, read)
    parent = ctx.parent(holder)
    return isinstance(parent, ast.If) and parent.test is holder and _only_displays(ctx, parent)


def truth_holder(ctx: PythonContext, node: ast.AST) -> ast.AST:
    """The outermost expression whose truth `node`'s truth decides, through `and`/`or`/`not` and the element of
    a generator `any(...)`/`all(...)` quantify."""
    current = node
    while True:
        parent = ctx.parent(current)
        if isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            current = parent
            continue
        quantifier = ctx.parent(parent) if isinstance(parent, ast.GeneratorExp) and parent.elt is current else None
        if quantifier is None or not _quantifies(ctx, quantifier):
            return current
        current = quantifier


def _quantifies(ctx: PythonContext, call: ast.AST | None) -> bool:
    return isinstance(call, ast.Call) and len(call.args) == 1 and ctx.qualified_name(call.func) in _QUANTIFIERS


def pairs_with_advice(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` (a pattern) is the first of a pair in a table of pairs, each pairing it with a sentence of advice:
    `[(re.compile(r"CUDA out of memory|OOM"), "Out of GPU memory. Try a smaller batch."), ...]`. A match picks the
    advice shown; it decides nothing else."""
    pair = ctx.parent(node)
    if not isinstance(pair, ast.Tuple) or len(pair.elts) != _PAIR or pair.elts[0] is not node:
        return False
    if not isinstance(ctx.parent(pair), (ast.List, ast.Tuple)):
        return False
    advice = ctx.string_value(pair.elts[1])
    return advice is not None and len(advice.split()) >= _SENTENCE_WORDS


def _only_displays(ctx: PythonContext, choice: ast.If) -> bool:
    """Every statement of the `if`'s arms (and of the `elif`s) only displays something or does nothing."""
    for statement in (*choice.body, *choice.orelse):
        if isinstance(statement, ast.If):
            if not _only_displays(ctx, statement):
                return False
        elif not isinstance(statement, ast.Pass) and not (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and is_display_call(ctx, statement.value)
        ):
            return False
    return True


def never_read(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`'s truth (as for `only_picks_display`) is the whole value of an assignment to names nothing reads:
    no read in this file, and for a public module-level name, none in the modules of the project that import
    this one (`is_ampere = major >= 8` in a script that never uses it)."""
    holder = truth_holder(ctx, node)
    assignment = ctx.parent(holder)
    if not (isinstance(assignment, ast.Assign) and assignment.value is holder):
        return False
    names = [target.id for target in assignment.targets if isinstance(target, ast.Name)]
    if len(names) != len(assignment.targets):
        return False
    module_level = ctx.is_module_level(assignment)
    for name in names:
        if ctx.references.mention_reads(name):
            return False
        if module_level and not ctx.gates.unread_by_importers(name):
            return False
    return True


def decides_support(ctx: PythonContext, test: ast.AST) -> bool:
    """`test`'s truth (through `and`/`or`/`not` and `any(...)`/`all(...)`, as `truth_holder`) decides whether
    the code goes on or refuses: it is asserted, it is the test of an `if` one of whose arms raises or returns
    False, or a function returns it (a predicate its callers choose a path with):

        assert all(arch in SUPPORTED for arch in archs)
        if arch not in SUPPORTED:
            raise RuntimeError(arch)
        return any(name in arch for name in FAST_ARCHS)
    """
    holder = truth_holder(ctx, test)
    parent = ctx.parent(holder)
    if isinstance(parent, ast.Assert):
        return parent.test is holder
    if isinstance(parent, ast.Return):
        return True
    if isinstance(parent, ast.If) and parent.test is holder:
        return _refuses(parent.body) or _refuses(parent.orelse)
    return False


def _refuses(block: Sequence[ast.stmt]) -> bool:
    """`block` ends by raising or by returning False."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Raise):
        return True
    return isinstance(last, ast.Return) and isinstance(last.value, ast.Constant) and last.value.value is False
