"""The CUDA compute capability as Python code reads it: `torch.cuda.get_device_capability()`,
`torch.cuda.get_device_properties(d).major`/`.minor`, vLLM's `current_platform.get_device_capability()`, the
values computed from them, the helpers that compare it themselves, and the major version of a threshold it is
compared with.

Whether a comparison is a hazard (ROCm reports the gfx IP version there) stays in the rule.
"""

from __future__ import annotations

import ast

from rocmlint.python.frontend import PythonContext
from rocmlint.python.values import ALL_OPERATORS, Follow, Names, Through, only_argument

# The properties object is only compared through `.major`/`.minor`: its other fields lead nowhere.
_READS = frozenset({"torch.cuda.get_device_capability", "torch.cuda.get_device_properties"})
# vLLM's `current_platform.get_device_capability()` answers the same question with the same numbers
# (`RocmPlatform` returns the gfx IP version too).
_PLATFORM_READ = ["current_platform", "get_device_capability"]
# Helpers that compare the capability themselves: vLLM's `Platform` methods, torchtitan's
# `has_cuda_capability(9, 0)`.
CAPABILITY_HELPERS = frozenset(
    {"has_device_capability", "is_device_capability", "is_device_capability_family", "has_cuda_capability"}
)
_NUMBER_CASTS = frozenset({"int", "float"})
# A capability value may be unpacked, indexed, combined (`major * 10 + minor`), put in a tuple or an
# f-string; a name counts when all its assignments are capability values or constant fallbacks.
_CAPABILITY_VALUES = Follow(names=Names.AGREEING, operators=ALL_OPERATORS, subscripts=True, elements=True, fields=True)


def capability_reads(ctx: PythonContext, expr: ast.expr) -> list[ast.AST]:
    """The capability reads (`get_device_capability()`, `get_device_properties()` calls) an expression is
    computed from (`cap[0]`, `props.major`, `major * 10 + minor`, `(major, minor)`, `f"{major}"`, `int(x)`,
    vLLM's `DeviceCapability.to_int()`, names assigned from them); empty when it is not a capability value."""
    return ctx.values.trace(expr, lambda value: _capability_step(value, ctx), _CAPABILITY_VALUES)


def _capability_step(expr: ast.expr, ctx: PythonContext) -> list[ast.AST] | Through | None:
    if isinstance(expr, ast.Attribute):
        return Through((expr.value,)) if expr.attr in ("major", "minor") else []
    if not isinstance(expr, ast.Call):
        return None
    name = ctx.qualified_name(expr.func) or ""
    if name in _READS or (isinstance(expr.func, ast.Attribute) and name.split(".")[-2:] == _PLATFORM_READ):
        return [expr]
    cast = only_argument(expr) if name in _NUMBER_CASTS else None
    if cast is not None:
        return Through((cast,))
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to_int" and not (expr.args or expr.keywords):
        return Through((expr.func.value,))
    return []


def threshold_major(ctx: PythonContext, threshold: ast.AST) -> float | None:
    """The version a constant threshold compared with the capability stands for, on the scale of the major
    version: `8` of `8`, of `(8, 9)` and of `89` (compared with `major * 10 + minor`); a float keeps its
    minor (`8.9` of `8.9`). None when it is no constant number."""
    value = ctx.single_value(threshold)
    if isinstance(value, ast.Tuple) and value.elts:
        value = value.elts[0]
    number = value.value if isinstance(value, ast.Constant) else None
    # `bool` is a subclass of `int`: `True` is no threshold.
    if type(number) is not int and type(number) is not float:
        return None
    number = float(number)
    return number // 10 if number >= 20 else number
