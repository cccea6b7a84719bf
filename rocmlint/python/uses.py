"""How code uses a value: only inspects it (compares it, looks it up, shows it, reads an attribute of it)
or uses it (passes it on, assigns it, computes with it).

A rule about a hazardous value (an FP8 dtype, a device name) reports its uses, not its inspections.
"""

from __future__ import annotations

import re

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import KEY_LOOKUPS, LOOKUP_METHODS, is_display_call, last_name

# Literals that only collect values: a value inside them is as used as the literal.
_COLLECTIONS = (cst.Tuple, cst.List, cst.Set, cst.Element, cst.StarredElement)
# Calls whose arguments are only matched against or turned into text: type checks, sets, `str`/`repr`.
_LOOKUP_CALLS = frozenset({"isinstance", "issubclass", "set", "frozenset", "str", "repr"})
# Comparisons (`==`, `in`), subscript keys, f-string fields.
_READING_PARENTS = (cst.Comparison, cst.ComparisonTarget, cst.Index, cst.FormattedStringExpression)
_NOT_A_VALUE = (cst.Comparison, cst.ComparisonTarget, cst.SubscriptElement, cst.Assert, cst.Raise)


def outermost_collection_member(ctx: PythonContext, node: cst.CSTNode) -> cst.CSTNode:
    """`node`, or the outermost tuple/list/set literal it is an element of (`x in (a, (b, c))`)."""
    current = node
    parent = ctx.parent(current)
    while isinstance(parent, _COLLECTIONS):
        current, parent = parent, ctx.parent(parent)
    return current


def is_inspected(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """`node` (or the collection literal it is in) is only inspected: compared (`x.dtype == node`,
    `x in (node, ...)`), a member of a set literal, a dict key or subscript key (`TABLE[node]`), an
    f-string field, the object of an attribute read (`node.itemsize`), or an argument of a type check,
    `set()`/`frozenset()`, `str()`/`repr()`, `print` or a logging call."""
    member = outermost_collection_member(ctx, node)
    parent = ctx.parent(member)
    if isinstance(member, cst.Set) or isinstance(parent, _READING_PARENTS):
        return True
    if isinstance(parent, cst.Attribute):
        return parent.value is member
    if isinstance(parent, cst.DictElement):
        return parent.key is member
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return False
    return ctx.qualified_name(call.func) in _LOOKUP_CALLS or is_display_call(ctx, call)


def is_string_value_use(ctx: PythonContext, node: cst.BaseExpression) -> bool:
    """A string used as a value (a flag, a list item, an assigned setting), not a docstring or bare string
    statement, a message (an argument of `print`, logging, `write`, an exception or warning class), a
    dict key, a comparison operand, a subscript, an f-string field, in an `assert` or `raise`, or the
    argument of a lookup such as `.startswith` or `re.search`."""
    child: cst.CSTNode = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.ConcatenatedString):
            child = ancestor
            continue
        if isinstance(ancestor, (cst.Expr, cst.FormattedStringExpression, *_NOT_A_VALUE)):
            return False
        if isinstance(ancestor, cst.DictElement):
            return child is not ancestor.key
        if isinstance(ancestor, cst.Call) and child is not ancestor.func:
            return not _is_message_or_lookup(ctx, ancestor)
        if isinstance(ancestor, cst.BaseStatement):
            return True
        child = ancestor
    return True


def _is_message_or_lookup(ctx: PythonContext, call: cst.Call) -> bool:
    name = last_name(call.func)
    if is_display_call(ctx, call) or name in LOOKUP_METHODS or name in KEY_LOOKUPS:
        return True
    return name.endswith(("Error", "Exception", "Warning", "Exit"))


# Names of collections that list accepted values rather than choose one.
_ALLOW_LIST_NAME = re.compile(r"allowed|supported|valid|accepted|known", re.IGNORECASE)


def in_allow_list(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """`node` is an element of a tuple or list literal assigned to a name that says it lists accepted values
    (`_ALLOWED_DTYPES = (...)`, `SUPPORTED_ELEM_DTYPES = [...]`): a table checked with `in`."""
    member = outermost_collection_member(ctx, node)
    assign = ctx.parent(member)
    if member is node or not isinstance(assign, cst.Assign):
        return False
    return any(_ALLOW_LIST_NAME.search(last_name(target.target)) for target in assign.targets)
