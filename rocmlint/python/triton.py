"""Triton as Python code drives it: the `num_warps` a `triton.Config` (or Helion's) or a kernel launch
`kernel[grid](...)` gets, and configs the author keeps from ROCm in ways plain gating does not see: a condition
mentioning ROCm or the device's warp size decides whether the config is made (`[... for w in ws if w * warp_size
<= 1024]` with `warp_size` read from the device's properties: 64 on CDNA, so 32 warps is dropped there), the
config list goes through a pruning function (or the
autotuner's `prune_configs_by`) that consults ROCm or the warp size, or it is only used on NVIDIA.

Which values are a hazard stays in the rule.
"""

from __future__ import annotations

import ast

from rocmlint.python.conditions import deciding_tests
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.semantic import FUNCTION_DEFS, MAX_HOPS
from rocmlint.python.values import Argument, IntValue

_CONFIG_CLASSES = frozenset(
    {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config", "helion.Config"}
)
_AUTOTUNERS = frozenset({"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"})
_VENDOR_TEST_FORMS = (ast.Name, ast.Attribute, ast.Call, ast.Compare)
_WARP_SIZE = "warp_size"
# Divisions a ROCm branch applies to a warp count (`num_warps //= 2`, `num_warps >>= 1`).
_DIVISIONS = {ast.FloorDiv: lambda value, by: value // by, ast.RShift: lambda value, by: value >> by}


def num_warps_argument(ctx: PythonContext, call: ast.Call) -> ast.expr | None:
    """The `num_warps` value of a `triton.Config(...)` or of a `kernel[grid](...)` launch."""
    keyword = ctx.semantic.keyword(call, "num_warps")
    if isinstance(call.func, ast.Subscript):
        return keyword.value if keyword is not None else None
    if last_name(call.func) != "Config" or ctx.qualified_name(call.func) not in _CONFIG_CLASSES:
        return None
    return keyword.value if keyword is not None else ctx.semantic.positional(call, 1)


def num_warps_above(limit: int) -> str:
    """A regular expression (for `Rule.trigger_pattern`) matching in every file where a `num_warps` may be above
    `limit`: a value (`Values.int_values`: this file's literals, names, returns, loops, arithmetic) of a `num_warps`
    keyword, of a `Config`'s second argument, or of a name `num_warps` a def returns. A file whose every `num_warps` is a
    keyword set to a literal of at most `limit` (`num_warps=4)`, `num_warps = 16,`) and that calls no `Config` has
    none; anything else (a name, an expression, a comment or line break after the `=`, a string key, a parameter, a
    longer name) matches. vLLM: 38 of its 130 files with `num_warps` hold none above 16."""
    small = "|".join(str(value) for value in range(limit, -1, -1))
    return rf"num_warps(?!\s*=\s*(?:{small})\s*[,)])|(?<!\w)Config(?!\w)"


def warps_above(ctx: PythonContext, found: list[IntValue], limit: int) -> list[IntValue]:
    """The warp counts of `found` above `limit` as ROCm sees them (`warps_on_rocm`)."""
    return [value for value in found if warps_on_rocm(ctx, value) > limit]


def warps_on_rocm(ctx: PythonContext, found: IntValue) -> int:
    """The warp count `found` becomes on ROCm: its def may divide the variable it assigns in a branch every ROCm
    build takes, after the assignment and before anything reads it (`num_warps = 32`, then `if torch.version.hip:
    num_warps //= 2`: 16 on ROCm). Anything else is the value as found."""
    statement = ctx.semantic.statement_of(found.node)
    function = next((a for a in ctx.ancestors(found.node) if isinstance(a, FUNCTION_DEFS)), None)
    if not isinstance(statement, ast.Assign) or function is None or found.looped:
        return found.value
    target = statement.targets[0] if len(statement.targets) == 1 else None
    outer = next((a for a in [statement, *ctx.ancestors(statement)] if a in function.body), None)
    if not isinstance(target, ast.Name) or outer is None:
        return found.value
    value = found.value
    for later in function.body[function.body.index(outer) + 1 :]:
        divided = _rocm_division(ctx, later, target.id, value)
        if divided is None:
            return value  # read (or changed otherwise) before any ROCm division
        value = divided
    return value


def _rocm_division(ctx: PythonContext, statement: ast.stmt, name: str, value: int) -> int | None:
    """`value` after `statement`: divided by `if <ROCm test>: name //= k`, kept by a statement not naming `name`,
    None when the statement reads or assigns `name` otherwise."""
    names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
    if name not in names:
        return value
    if not isinstance(statement, ast.If) or statement.orelse or ctx.vendor_test(statement.test).rocm is not True:
        return None
    if len(statement.body) != 1 or not isinstance(statement.body[0], ast.AugAssign):
        return None
    update = statement.body[0]
    divide = _DIVISIONS.get(type(update.op))
    by = update.value.value if isinstance(update.value, ast.Constant) else None
    if divide is None or not isinstance(update.target, ast.Name) or update.target.id != name or type(by) is not int:
        return None
    return divide(value, by) if by > 0 else None


def handled_for_rocm(ctx: PythonContext, call: ast.Call) -> bool:
    """A config the author already keeps from ROCm in a way plain gating cannot see."""
    return _under_rocm_aware_condition(call, ctx) or _flows_away_from_rocm(call, ctx, 0)


def _under_rocm_aware_condition(node: ast.AST, ctx: PythonContext) -> bool:
    """A condition mentioning ROCm decides whether `node` runs (`if IS_ROCM and w > 16: continue`,
    `[... for w in ws if not (IS_HIP and w > 16)]`, `not IS_ROCM or small`), even if not fully, or one reading
    the device's warp size (`if w * warp_size <= 1024`): it holds 64 on CDNA GPUs, so the limit is ROCm's."""
    return any(
        ctx.vendor_test(test).is_vendor_test or _reads_device_warp_size(test, ctx) for test in deciding_tests(ctx, node)
    )


def _reads_device_warp_size(test: ast.expr, ctx: PythonContext) -> bool:
    """`test` reads the device's warp size: directly (`props.warp_size`, `getattr(props, "warp_size", 32)`) or
    through a name assigned such a read once."""
    for node in ctx.semantic.descendants(test):
        if _is_warp_size_read(node, ctx):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            value = ctx.semantic.single_value(node)
            if (
                value is not None
                and value is not node
                and any(_is_warp_size_read(part, ctx) for part in ctx.semantic.descendants(value))
            ):
                return True
    return False


def _is_warp_size_read(node: ast.AST, ctx: PythonContext) -> bool:
    """`<properties>.warp_size` or `getattr(<properties>, "warp_size", ...)`."""
    if isinstance(node, ast.Attribute):
        return node.attr == _WARP_SIZE
    if not isinstance(node, ast.Call) or ctx.qualified_name(node.func) != "getattr" or len(node.args) < 2:
        return False
    name = node.args[1]
    return isinstance(name, ast.Constant) and name.value == _WARP_SIZE


def _flows_away_from_rocm(expr: ast.AST, ctx: PythonContext, depth: int) -> bool:
    """Whether the config list holding `expr` is pruned for ROCm or only used on NVIDIA: passed to a call
    that prunes it, read in ROCm-only code (pruning it), or every read of it (every call of the def
    returning it) gated away from ROCm or flowing into pruning."""
    destination = ctx.values.destination(expr) if depth <= MAX_HOPS else None
    if destination is None:
        return False
    if destination.call is not None and destination.argument is not None:
        return _call_prunes(destination.call, destination.argument, ctx)
    if any(ctx.is_nvidia_gated(read) for read in destination.reads):
        return True
    uses = destination.reads or destination.calls
    return bool(uses) and all(ctx.is_rocm_gated(use) or _flows_away_from_rocm(use, ctx, depth + 1) for use in uses)


def _call_prunes(call: ast.Call, argument: Argument, ctx: PythonContext) -> bool:
    """The config list is an argument of an autotuner that prunes for ROCm, or an argument not passed by
    name to a local function that consults ROCm (`config_prune(configs)`)."""
    if ctx.qualified_name(call.func) in _AUTOTUNERS:
        return _prune_consults_rocm(call, ctx)
    by_name = isinstance(argument, ast.keyword) and argument.arg is not None
    return not by_name and _consults_rocm(call.func, ctx)


def _prune_consults_rocm(autotune: ast.Call, ctx: PythonContext) -> bool:
    prune = ctx.semantic.keyword(autotune, "prune_configs_by")
    if prune is None:
        return False
    return any(_consults_rocm(function, ctx) for function in ctx.semantic.dict_entries(prune.value).values())


def _consults_rocm(function: ast.expr, ctx: PythonContext) -> bool:
    """Whether a local function (or lambda) reads a ROCm test or the device warp size in its body."""
    if isinstance(function, ast.Lambda):
        return _reads_rocm_test(function.body, ctx)
    definition = ctx.semantic.local_function(function)
    if definition is None:
        return False
    return any(_reads_rocm_test(statement, ctx) for statement in definition.body)


def _reads_rocm_test(root: ast.AST, ctx: PythonContext) -> bool:
    for node in ctx.semantic.descendants(root):
        if isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) == _WARP_SIZE:
            return True
        if isinstance(node, _VENDOR_TEST_FORMS) and ctx.vendor_test(node).is_vendor_test:
            return True
    return False
