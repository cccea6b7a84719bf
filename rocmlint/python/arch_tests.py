"""Tests of a GPU architecture name against gfx names, and what they are per vendor.

An NVIDIA GPU has no gfx name (torch reports its device name as `gcnArchName` there), so matching a string
against one (`"gfx94" in arch`, `arch == "gfx942"`, `arch.startswith(("gfx90a", "gfx942"))`, `arch in
SUPPORTED` of gfx names, `any(a in arch for a in ["gfx942", "gfx950"])`, `re.match("gfx9", arch)`) is false
on NVIDIA. On ROCm it depends on the GPU, like the `__GFX9__` macros in C++: unknown there. Only the family
prefix itself, `"gfx"` looked for in `gcnArchName`, holds on every AMD GPU: that one is a ROCm test.
"""

from __future__ import annotations

import ast

from rocmlint.python.semantic import MAX_DEPTH, Semantic
from rocmlint.python.values import return_values
from rocmlint.vendor import ROCM, Vendor

# Matches some AMD GPUs and no NVIDIA GPU.
ARCH_TEST = Vendor(None, False)
_PREFIX = "gfx"
_ARCH_ATTRIBUTE = "gcnArchName"
_REGEX_MATCHES = frozenset({"re.match", "re.search", "re.fullmatch"})
_QUANTIFIERS = frozenset({"any", "all"})
_COLLECTION_CALLS = frozenset({"set", "frozenset", "tuple", "list"})


def gfx_name_test(semantic: Semantic, expr: ast.expr) -> Vendor | None:
    """The vendor value of `expr` when it matches a string against gfx names, else None."""
    if isinstance(expr, ast.Compare):
        return _comparison(semantic, expr)
    if isinstance(expr, ast.Call):
        return _call(semantic, expr)
    return None


def _comparison(semantic: Semantic, expr: ast.Compare) -> Vendor | None:
    if len(expr.ops) != 1:
        return None
    operator, left, right = expr.ops[0], expr.left, expr.comparators[0]
    if isinstance(operator, (ast.In, ast.NotIn)):
        needles = _gfx_names(semantic, left)
        if needles is not None:
            value = _match(semantic, needles, right)
        elif _is_gfx_collection(semantic, right):
            value = ARCH_TEST
        else:
            return None
        return value.negate() if isinstance(operator, ast.NotIn) else value
    if isinstance(operator, (ast.Eq, ast.NotEq)):
        if _gfx_names(semantic, left) is None and _gfx_names(semantic, right) is None:
            return None
        return ARCH_TEST.negate() if isinstance(operator, ast.NotEq) else ARCH_TEST
    return None


def _call(semantic: Semantic, call: ast.Call) -> Vendor | None:
    """`arch.startswith("gfx9")`, `re.match(r"gfx9\\d", arch)`, `any(<arch test> for ...)`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "startswith" and len(call.args) == 1 and not call.keywords:
        prefixes = _gfx_names(semantic, call.args[0])
        if prefixes is None:
            prefixes = _gfx_elements(semantic, call.args[0])
        return _match(semantic, prefixes, func.value) if prefixes is not None else None
    name = semantic.qualified_name(func) or ""
    if name in _REGEX_MATCHES and call.args and _gfx_names(semantic, call.args[0]) is not None:
        return ARCH_TEST
    if name in _QUANTIFIERS and len(call.args) == 1 and not call.keywords:
        return _quantified(semantic, call.args[0])
    return None


def _quantified(semantic: Semantic, argument: ast.expr) -> Vendor | None:
    """`any(a in arch for a in GFX_NAMES)`: one element's value when every element is an arch test (the
    names iterated are written out, so there is at least one)."""
    if not isinstance(argument, (ast.GeneratorExp, ast.ListComp)):
        return None
    if len(argument.generators) != 1 or argument.generators[0].ifs:
        return None
    return gfx_name_test(semantic, argument.elt)


def _match(semantic: Semantic, needles: list[str], subject: ast.expr) -> Vendor:
    """A positive match of `needles` in (or at the start of) `subject`."""
    if all(needle.lower() == _PREFIX for needle in needles) and _reads_arch_name(semantic, subject):
        return ROCM
    return ARCH_TEST


def _gfx_names(semantic: Semantic, node: ast.expr) -> list[str] | None:
    """The gfx names `node` may hold: a string literal (or a name assigned one once), or a loop variable
    over written-out strings; None unless every one is a gfx name."""
    text = semantic.string_value(node)
    if text is not None:
        return [text] if _is_gfx_name(text) else None
    if isinstance(node, ast.Name):
        values = semantic.loop_values(node)
        if values:
            return _all_gfx(semantic, values)
    return None


def _gfx_elements(semantic: Semantic, node: ast.expr) -> list[str] | None:
    """The gfx names of a written-out tuple, list or set (or a name assigned one once)."""
    resolved = semantic.single_value(node)
    if isinstance(resolved, (ast.List, ast.Tuple, ast.Set)) and resolved.elts:
        return _all_gfx(semantic, resolved.elts)
    return None


def _is_gfx_collection(semantic: Semantic, node: ast.expr) -> bool:
    """A collection of gfx names, written out (`("gfx942", "gfx950")`, `frozenset({...})`, a dict keyed by
    them) or assigned once to a name."""
    resolved = semantic.single_value(node)
    if isinstance(resolved, ast.Call) and (semantic.qualified_name(resolved.func) or "") in _COLLECTION_CALLS:
        resolved = resolved.args[0] if len(resolved.args) == 1 and not resolved.keywords else None
    if isinstance(resolved, ast.Dict):
        keys = [key for key in resolved.keys if key is not None]
        return len(keys) == len(resolved.keys) and bool(keys) and _all_gfx(semantic, keys) is not None
    return resolved is not None and _gfx_elements(semantic, resolved) is not None


def _all_gfx(semantic: Semantic, nodes: list[ast.expr]) -> list[str] | None:
    texts = [semantic.string_value(node) for node in nodes]
    names = [text for text in texts if text is not None and _is_gfx_name(text)]
    return names if len(names) == len(nodes) else None


def arch_name_truth(semantic: Semantic, expr: ast.expr) -> Vendor | None:
    """The truth of `gcnArchName` as torch reports it, read as is (`props.gcnArchName`, or a name assigned
    `getattr(props, "gcnArchName", "")` once): every AMD GPU has a gfx name, so it is true on ROCm; NVIDIA
    reports its device name there or lacks the attribute, so it is unknown on NVIDIA. None for anything else
    (a part of the name, split or indexed, may be empty)."""
    current = semantic.single_value(expr) if isinstance(expr, ast.Name) else expr
    if isinstance(current, ast.Attribute) and current.attr == _ARCH_ATTRIBUTE:
        return Vendor(True, None)
    if isinstance(current, ast.Call) and (semantic.qualified_name(current.func) or "") == "getattr":
        if len(current.args) >= 2 and semantic.string_value(current.args[1]) == _ARCH_ATTRIBUTE:
            return Vendor(True, None)
    return None


def _is_gfx_name(text: str) -> bool:
    return text.lower().startswith(_PREFIX)


def _reads_arch_name(semantic: Semantic, node: ast.expr, depth: int = 0) -> bool:
    """`node` is `gcnArchName` as torch reports it, possibly split, cased or indexed
    (`props.gcnArchName.split(":")[0]`, `getattr(props, "gcnArchName", "")`), a name assigned that once, or
    a call of a def of this file that returns it."""
    current: ast.expr | None = node
    for _ in range(depth, MAX_DEPTH):
        function = semantic.local_function(current.func) if isinstance(current, ast.Call) else None
        if function is not None:
            returned = return_values(function)
            return bool(returned) and all(_reads_arch_name(semantic, value, depth + 1) for value in returned)
        if isinstance(current, ast.Name):
            resolved = semantic.single_value(current)
            if resolved is current:
                return False
            current = resolved
        elif isinstance(current, ast.Attribute):
            return current.attr == _ARCH_ATTRIBUTE
        elif isinstance(current, ast.Subscript):
            current = current.value
        elif isinstance(current, ast.Call):
            if (semantic.qualified_name(current.func) or "") == "getattr" and len(current.args) >= 2:
                return semantic.string_value(current.args[1]) == _ARCH_ATTRIBUTE
            func = current.func
            current = func.value if isinstance(func, ast.Attribute) else None
        else:
            return False
    return False
