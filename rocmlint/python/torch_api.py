"""Where PyTorch APIs take a device or a distributed backend: the arguments a device-taking call interprets
as a device (`torch.device(...)`, `.to(...)`, `device=`, `map_location=`, `device_type=`), and the backend a
process-group factory gets (`torch.distributed.init_process_group(backend=...)`, DeepSpeed's too). And the names
a build attribute such as `torch.version.cuda` (None on the other vendor's builds) reaches: a flag assigned once
from a test of it (`flag_from_test_of`), a variable it is the fallback of (`unguarded_fallback_to`).

Which devices or backends are a hazard stays in the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from rocmlint.python.conditions import guarded_by
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, unpacked_keyword
from rocmlint.python.scopes import is_none
from rocmlint.python.semantic import Semantic
from rocmlint.python.values import Follow, Names, Through

# Keyword arguments that take a device on any call (torch.load's `map_location` included).
_DEVICE_KEYWORDS = frozenset({"device", "map_location"})
# Calls whose first positional argument is a device.
_DEVICE_CALLS = frozenset(
    {
        "torch.device",
        "torch.set_default_device",
        "torch.cuda.set_device",
        "torch.cuda.device",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.GradScaler",
    }
)


def device_arguments(ctx: PythonContext, call: ast.Call) -> list[ast.expr]:
    """The argument expressions of `call` a device-taking API interprets as a device: `device=` and
    `map_location=` of any call, every positional argument of `.to(...)`, `device_type=` of a torch API,
    and the first positional argument of `torch.device`, `torch.cuda.set_device`, `torch.autocast`, ..."""
    values = [keyword.value for keyword in call.keywords if keyword.arg in _DEVICE_KEYWORDS]
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if method == "to":
        values.extend(arg for arg in call.args if not isinstance(arg, ast.Starred))
        return values
    device_type = ctx.semantic.keyword(call, "device_type")
    first = ctx.semantic.positional(call, 0)
    if device_type is None and first is None:
        return values
    name = ctx.qualified_name(call.func) or ""
    if device_type is not None and name.startswith("torch."):
        values.append(device_type.value)  # torch.autocast(device_type=...), torch.amp.GradScaler(...)
    if first is not None and name in _DEVICE_CALLS:
        values.append(first)
    return values


# Process-group factories -> the backend parameter's keyword and position.
_PROCESS_GROUP_FACTORIES = {
    f"{module}.{function}": parameter
    for module in ("torch.distributed", "torch.distributed.distributed_c10d")
    for function, parameter in (
        ("init_process_group", ("backend", 0)),
        ("new_group", ("backend", 2)),
        ("new_subgroups", ("backend", 3)),
        ("new_subgroups_by_enumeration", ("backend", 2)),
    )
} | {
    f"{module}.init_distributed": ("dist_backend", 0)
    for module in ("deepspeed", "deepspeed.comm", "deepspeed.comm.comm")
}
_FACTORY_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _PROCESS_GROUP_FACTORIES)
_BACKEND_ENUM_OWNERS = ("torch.distributed.Backend", "torch.distributed.distributed_c10d.Backend")


def backend_arguments(ctx: PythonContext, call: ast.Call) -> list[tuple[ast.AST, ast.expr]]:
    """The backend a process-group factory call gets, with where it is written: the argument's value (by
    keyword or position), else each value the keyword gets through `**{...}` with its `**` argument."""
    if last_name(call.func) not in _FACTORY_NAMES:
        return []  # the cheap test before resolving names
    parameter = _PROCESS_GROUP_FACTORIES.get(ctx.qualified_name(call.func) or "")
    if parameter is None:
        return []
    keyword, position = parameter
    argument = ctx.semantic.argument(call, keyword, position)
    if argument is not None:
        return [(argument, argument)]
    return [(site, value) for site, value in unpacked_keyword(ctx, call, keyword)]


def backend_names(ctx: PythonContext, expr: ast.expr) -> list[str]:
    """The backends one expression names, lower-cased: a `torch.distributed.Backend.MPI` member (through
    aliases) or a backend string (`"mpi"`; `"cpu:gloo,cuda:mpi"` names gloo and mpi)."""
    if isinstance(expr, ast.Attribute):
        owner, _, member = (ctx.qualified_name(expr) or "").rpartition(".")
        if owner in _BACKEND_ENUM_OWNERS:
            return [member.lower()]
    string = ctx.string_value(expr)
    if string is None:
        return []
    backends = (part.rpartition(":")[2].strip() for part in string.lower().split(","))
    return [backend for backend in backends if backend]


# Every assignment of a variable, each conditional's arms.
_EVERY_ASSIGNMENT = Follow(names=Names.ALL)


# Per file (its semantic model, alive while it is checked): `qualified` -> `names_that_may_hold`.
_MAY_HOLD: WeakKeyDictionary[Semantic, dict[str, frozenset[str]]] = WeakKeyDictionary()


def names_that_may_hold(ctx: PythonContext, qualified: str) -> frozenset[str]:
    """The identifiers a Name of this file needs for `ctx.qualified_name(name) == qualified`, `flag_from_test_of`
    or `unguarded_fallback_to` to hold (a cheap test before them): those it binds as a variable (an assignment, loop,
    `with`, `except`, `match` or `global` target, a parameter) and those it imports `qualified`'s last part as. A
    name bound only by imports of other names, or nowhere, is that import's name or itself (no dotted name), and
    has no assigned value to follow. Found once per file."""
    known = _MAY_HOLD.setdefault(ctx.semantic, {})
    if qualified not in known:
        known[qualified] = _names_that_may_hold(ctx.semantic, qualified)
    return known[qualified]


def _names_that_may_hold(semantic: Semantic, qualified: str) -> frozenset[str]:
    last = qualified.rpartition(".")[2]
    found: set[str] = set()
    for node in semantic.parents:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                found.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.arg:
            found.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
            found.add(node.name or "")  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping:
            found.add(node.rest or "")  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            found.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.alias and node.name.rpartition(".")[2] == last:  # type: ignore[attr-defined]
            found.update((node.asname or "", node.name.partition(".")[0]))  # type: ignore[attr-defined]
    return frozenset(found)


def flag_from_test_of(ctx: PythonContext, node: ast.expr, qualified: str) -> bool:
    """A name assigned once from a test of `qualified` (`use_cuda = torch.version.cuda is not None`)."""
    if not isinstance(node, ast.Name):
        return False
    value = ctx.single_value(node)
    if value is None or value is node:
        return False
    return any(
        isinstance(part, ast.Attribute) and ctx.qualified_name(part) == qualified
        for part in ctx.semantic.descendants(value)
    )


def unguarded_fallback_to(ctx: PythonContext, node: ast.expr, qualified: str) -> bool:
    """`node`, a variable read, may hold `qualified` as the fallback of one of its assignments (the last operand
    of an `or`: `CUDA_VERSION = os.getenv("CUDA_VERSION") or torch.version.cuda`, or a conditional's arm) that
    may run on ROCm (not one under `if torch.version.cuda:`), and no test of the variable's truth guards the read
    (`if CUDA_VERSION:`, `CUDA_VERSION and ...`, `is not None`, an earlier `if not CUDA_VERSION: return`, or an
    earlier `if not CUDA_VERSION: CUDA_VERSION = <default>`, after which it is set)."""
    if not isinstance(node, ast.Name) or ctx.qualified_name(node) == qualified:
        return False
    name = node.id

    def fallback(value: ast.expr) -> list[ast.expr] | Through | None:
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            return Through((value.values[-1],))
        return [value] if ctx.qualified_name(value) == qualified else None

    found = ctx.values.trace(node, fallback, _EVERY_ASSIGNMENT)
    if not any(ctx.branch(value).on_rocm is not False for value in found):
        return False

    def sets_it(block: list[ast.stmt]) -> bool:
        return ctx.gates.terminates(block) or _assigns_a_value(block, name)

    return not guarded_by(ctx, node, lambda test, taken: _truth_of(test, name) is taken, sets_it)


def _assigns_a_value(block: Sequence[ast.stmt], name: str) -> bool:
    """The block ends assigning `name` something other than None (`CUDA_VERSION = DEFAULT_VERSION`)."""
    last = block[-1] if block else None
    if not isinstance(last, ast.Assign) or is_none(last.value):
        return False
    return any(isinstance(target, ast.Name) and target.id == name for target in last.targets)


def _truth_of(test: ast.expr, name: str) -> bool | None:
    """The truth of variable `name` wherever `test` is true: True for `name`, `name is not None`, `name and x`;
    False for `not name`, `name is None`, `not name or x` (where false); None when `test` does not say."""
    if isinstance(test, ast.Name):
        return True if test.id == name else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth_of(test.operand, name)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
        compared_with_none = isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
        if test.left.id == name and compared_with_none and isinstance(test.ops[0], (ast.IsNot, ast.NotEq)):
            return True
        if test.left.id == name and compared_with_none and isinstance(test.ops[0], (ast.Is, ast.Eq)):
            return False
        return None
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(_truth_of(operand, name) is True for operand in test.values) else None
    return None
