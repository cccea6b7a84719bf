"""The CUDA compute capability's reads and what a comparison of it is worth on a given GPU, from the semantic model
and the value tracer alone: the part of capability.py that gating.py asks too (a test suite runs on AMD's CDNA GPUs,
where `major in (10, 12)` is false on every one of them: a skip of every ROCm GPU there).

`torch.cuda.get_device_capability()`, `torch.cuda.get_device_properties(d).major`/`.minor` and vLLM's
`current_platform.get_device_capability()` are the reads; the values computed from them are followed as
capability.py describes. Whether a test is a hazard stays in the rules.
"""

from __future__ import annotations

import ast
import operator as op
from collections.abc import Callable
from typing import Any

from rocmlint.python.semantic import Semantic
from rocmlint.python.values import ALL_OPERATORS, Follow, Names, Through, Values, only_argument

# The properties object is only compared through `.major`/`.minor`: its other fields lead nowhere.
READS = frozenset({"torch.cuda.get_device_capability", "torch.cuda.get_device_properties"})
# vLLM's `current_platform.get_device_capability()` answers the same question with the same numbers
# (`RocmPlatform` returns the gfx IP version too).
PLATFORM_READ = ["current_platform", "get_device_capability"]
# Conversions that keep the capability's value: numbers, and text (`str(major)`, `"sm{}{}".format(...)`); and the
# calls that keep the capabilities of every GPU, or pick one of them (`sorted(get_device_capability(i) for i in
# range(n))[-1]`, `max(...)`: the highest).
_CONVERSIONS = frozenset({"int", "float", "str", "sorted", "list", "tuple", "max", "min"})
# The capabilities of every GPU, one element per device (`[get_device_capability(i) for i in range(n)]`).
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)
# A capability value may be unpacked, indexed, combined (`major * 10 + minor`, `"sm_%d%d" % cap`), put in a
# tuple or an f-string, kept in an attribute (`self.capability`) or returned by a helper of this file; a name
# or attribute counts when all its assignments are capability values or constant fallbacks.
_CAPABILITY_VALUES = Follow(
    names=Names.AGREEING,
    operators=ALL_OPERATORS,
    subscripts=True,
    elements=True,
    fields=True,
    returns=True,
    attributes=True,
)
# What AMD's CDNA GPUs report, where test suites run (AMD's CI and servers): MI200 (gfx90a, 9.0), MI300X (9.4),
# MI355X (9.5).
CDNA_CAPABILITIES = ((9, 0), (9, 4), (9, 5))
_OPERATORS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: op.lt,
    ast.LtE: op.le,
    ast.Gt: op.gt,
    ast.GtE: op.ge,
    ast.Eq: op.eq,
    ast.NotEq: op.ne,
}


def reads_of(semantic: Semantic, values: Values, expr: ast.expr) -> list[ast.AST]:
    """The capability reads an expression is computed from (capability.capability_reads)."""
    return values.trace(expr, lambda value: capability_step(value, semantic), _CAPABILITY_VALUES)


def capability_step(expr: ast.expr, semantic: Semantic) -> list[ast.AST] | Through | None:
    if isinstance(expr, ast.Attribute):
        # `props.major` reads the properties' field; `self.major` of a class of this file is its own attribute, which
        # the tracer follows to what the class assigns it (`self.major = torch.cuda.get_device_capability()[0]`).
        if expr.attr not in ("major", "minor") or semantic.receiver_class(expr) is not None:
            return None
        return Through((expr.value,))
    if isinstance(expr, _COMPREHENSIONS):
        return Through((expr.elt,))
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    name = semantic.qualified_name(func) or ""
    if name in READS or (isinstance(func, ast.Attribute) and name.split(".")[-2:] == PLATFORM_READ):
        return [expr]
    converted = only_argument(expr) if name in _CONVERSIONS else None
    if converted is not None:
        return Through((converted,))
    if isinstance(func, ast.Attribute) and func.attr == "to_int" and not (expr.args or expr.keywords):
        return Through((func.value,))
    if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant):
        return Through((*expr.args, *(keyword.value for keyword in expr.keywords)))
    return None


def value_at(semantic: Semantic, values: Values, compare: ast.Compare, capability: tuple[int, int]) -> bool | None:
    """The comparison's value on a GPU of `capability`, from the threshold's form: a tuple compares the
    capability, an integer below 20 its major version, one from 20 to 99 `major * 10 + minor`, a float
    `major.minor`; None for any other form, or when the capability side is the minor version alone."""
    if len(compare.ops) != 1:
        return None
    left, right = compare.left, compare.comparators[0]
    if isinstance(compare.ops[0], (ast.In, ast.NotIn)):
        found = _membership_at(semantic, values, left, right, capability)
        return None if found is None else found != isinstance(compare.ops[0], ast.NotIn)
    compared = _OPERATORS.get(type(compare.ops[0]))
    if compared is None:
        return None
    left_reads = bool(reads_of(semantic, values, left))
    if left_reads == bool(reads_of(semantic, values, right)):
        return None
    side, threshold = (left, right) if left_reads else (right, left)
    value = at(side, semantic.single_value(threshold), capability)
    if value is None:
        return None
    number, limit = value
    return compared(number, limit) if left_reads else compared(limit, number)


def minor_value_at(semantic: Semantic, values: Values, compare: ast.Compare, minor: int) -> bool | None:
    """A comparison of the capability's minor version alone with an integer (`props.minor == 5`, `minor >= 4`) on a
    GPU whose minor version is `minor`; None for any other comparison."""
    compared = _OPERATORS.get(type(compare.ops[0])) if len(compare.ops) == 1 else None
    if compared is None:
        return None
    left, right = compare.left, compare.comparators[0]
    minor_left = _is_minor(left) and bool(reads_of(semantic, values, left))
    if minor_left == (_is_minor(right) and bool(reads_of(semantic, values, right))):
        return None
    limit = semantic.single_value(right if minor_left else left)
    number = limit.value if isinstance(limit, ast.Constant) else None
    if type(number) is not int:
        return None
    return compared(minor, number) if minor_left else compared(number, minor)


def on_every_cdna_gpu(semantic: Semantic, values: Values, compare: ast.Compare) -> bool | None:
    """The comparison's value where a test suite runs on ROCm, when it is the same on every CDNA GPU; else None."""
    found = {value_at(semantic, values, compare, gpu) for gpu in CDNA_CAPABILITIES}
    return found.pop() if len(found) == 1 else None


def _membership_at(
    semantic: Semantic, values: Values, side: ast.expr, collection: ast.expr, capability: tuple[int, int]
) -> bool | None:
    """Whether the capability side is among the architectures a literal collection lists (`cap in [(10, 0), (10,
    3)]`, `major not in (10, 12)`) on a GPU of `capability`; None when the side reads no capability or an element
    is not a constant architecture."""
    listed = semantic.single_value(collection)
    if not isinstance(listed, (ast.Tuple, ast.List, ast.Set)) or not listed.elts:
        return None
    if not reads_of(semantic, values, side):
        return None
    found = [at(side, element, capability) for element in listed.elts]
    if any(value is None for value in found):
        return None
    return any(number == limit for number, limit in filter(None, found))


def at(side: ast.expr, threshold: ast.expr | None, capability: tuple[int, int]) -> tuple[object, object] | None:
    """(the capability side's value, the threshold's) on a GPU of `capability`."""
    major, minor = capability
    if isinstance(threshold, ast.Tuple):
        limit = tuple(element.value for element in threshold.elts if isinstance(element, ast.Constant))
        if len(limit) != len(threshold.elts) or not all(type(part) is int for part in limit):
            return None
        return capability[: len(limit)], limit
    number = threshold.value if isinstance(threshold, ast.Constant) else None
    if _is_minor(side) or isinstance(number, bool) or not isinstance(number, (int, float)):
        return None
    if isinstance(number, float):
        return major + minor / 10, number
    return (major, number) if number < 20 else (major * 10 + minor, number) if number < 100 else None


def _is_minor(side: ast.expr) -> bool:
    """`props.minor`, `cap[1]`, a name `minor`: the minor version alone."""
    if isinstance(side, ast.Subscript):
        return not (isinstance(side.slice, ast.Constant) and side.slice.value == 0)
    name = side.attr if isinstance(side, ast.Attribute) else side.id if isinstance(side, ast.Name) else ""
    return name == "minor"
