"""How code uses a value: only inspects it (compares it, looks it up, shows it, reads an attribute of it)
or uses it (passes it on, assigns it, computes with it).

A rule about a hazardous value (an FP8 dtype, a device name) reports its uses, not its inspections.
"""

from __future__ import annotations

import ast
import re

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import KEY_LOOKUPS, LOOKUP_METHODS, is_display_call, last_name, name_words
from rocmlint.python.values import argument_of, assignment_targets

# Literals that only collect values: a value inside them is as used as the literal.
_COLLECTIONS = (ast.Tuple, ast.List, ast.Set)
# Calls whose arguments are only matched against or turned into text: type checks, sets, `str`/`repr`.
_LOOKUP_CALLS = frozenset({"isinstance", "issubclass", "set", "frozenset", "str", "repr"})
# Comparisons (`==`, `in`) and f-string fields (subscript keys: `_is_subscript_key`).
_READING_PARENTS = (ast.Compare, ast.FormattedValue)
# unittest's assertions that compare their arguments (`self.assertEqual(w.dtype, torch.float8_e4m3fn)`): a
# comparison written as a call.
_COMPARING_ASSERTIONS = frozenset(
    {"assertEqual", "assertNotEqual", "assertIs", "assertIsNot", "assertIn", "assertNotIn", "assertEquals"}
)
_NOT_A_VALUE = (ast.Compare, ast.Assert, ast.Raise)
# Words of a call's name that ask whether its arguments are supported: `device_supports_dtype`, `is_dtype_supported`
# (last), not `supported_dtype` (which may give a dtype to compute in).
_SUPPORTS, _SUPPORTED = "supports", "supported"


def outermost_collection_member(ctx: PythonContext, node: ast.AST) -> ast.AST:
    """`node`, or the outermost tuple/list/set literal it is an element of (`x in (a, (b, c))`)."""
    current = node
    collection = _collection_around(ctx, current)
    while collection is not None:
        current = collection
        collection = _collection_around(ctx, current)
    return current


def _collection_around(ctx: PythonContext, node: ast.AST) -> ast.AST | None:
    """The tuple/list/set literal `node` is an element of (or the `*node` element it is in, or the
    `getattr(owner, "name", node)` it is the default of, which gives the value in its place)."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Call) and _is_getattr_default(parent, node):
        return _collection_around(ctx, parent)
    if isinstance(parent, ast.Starred):
        return parent if isinstance(ctx.parent(parent), _COLLECTIONS) else None
    return parent if isinstance(parent, _COLLECTIONS) else None


def _is_getattr_default(call: ast.Call, node: ast.AST) -> bool:
    return (
        isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) == 3 and call.args[2] is node
    )


def is_inspected(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` (or the collection literal it is in) is only inspected: compared (`x.dtype == node`,
    `x in (node, ...)`), a member of a set literal, a dict key or subscript key (`TABLE[node]`), an
    f-string field, the object of an attribute read (`node.itemsize`), or an argument of a type check,
    `set()`/`frozenset()`, `str()`/`repr()`, `print`, a logging call, a comparing unittest assertion
    (`self.assertEqual(w.dtype, node)`) or a call asking whether it is supported (`device_supports_dtype(d, node)`)."""
    member = outermost_collection_member(ctx, node)
    parent = ctx.parent(member)
    if isinstance(member, ast.Set) or isinstance(parent, _READING_PARENTS) or _is_subscript_key(parent, member):
        return True
    if isinstance(parent, ast.Attribute):
        return parent.value is member
    if isinstance(parent, ast.Dict):
        return _is_dict_key(parent, member)
    passed = argument_of(ctx.semantic, member)
    if passed is None:
        return False
    call = passed[0]
    if isinstance(call.func, ast.Attribute) and call.func.attr in _COMPARING_ASSERTIONS:
        return True
    if _asks_support(call):
        return True
    return ctx.qualified_name(call.func) in _LOOKUP_CALLS or is_display_call(ctx, call)


def _asks_support(call: ast.Call) -> bool:
    """A call whose name asks whether something is supported (`device_supports_dtype(device, dtype)`,
    `is_dtype_supported(dtype)`, not `supported_dtype(dtype)`): its arguments are what is asked about, matched against a support table or a
    capability, not values it computes with."""
    words = name_words(last_name(call.func))
    return _SUPPORTS in words or (bool(words) and words[-1] == _SUPPORTED)


def _is_subscript_key(parent: ast.AST | None, child: ast.AST) -> bool:
    """`child` is what `parent` subscripts with (`TABLE[child]`, not a slice's bound)."""
    return isinstance(parent, ast.Subscript) and parent.slice is child and not isinstance(child, ast.Slice)


def _is_dict_key(display: ast.Dict, child: ast.AST) -> bool:
    return any(key is child for key in display.keys)


def is_string_value_use(ctx: PythonContext, node: ast.expr) -> bool:
    """A string used as a value (a flag, a list item, an assigned setting), not a docstring or bare string
    statement, a message (an argument of `print`, logging, `write`, an exception or warning class), a
    dict key, a comparison operand, a subscript, an f-string field, in an `assert` or `raise`, or the
    argument of a lookup such as `.startswith` or `re.search`."""
    child: ast.AST = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (ast.Expr, ast.FormattedValue, *_NOT_A_VALUE)):
            return False
        if isinstance(ancestor, ast.Subscript) and child is not ancestor.value:
            return False
        if isinstance(ancestor, ast.Dict):
            return not _is_dict_key(ancestor, child)
        if isinstance(ancestor, ast.Call) and child is not ancestor.func:
            return not _is_message_or_lookup(ctx, ancestor)
        if isinstance(ancestor, ast.stmt):
            return True
        child = ancestor
    return True


def _is_message_or_lookup(ctx: PythonContext, call: ast.Call) -> bool:
    name = last_name(call.func)
    if is_display_call(ctx, call) or name in LOOKUP_METHODS or name in KEY_LOOKUPS:
        return True
    return name.endswith(("Error", "Exception", "Warning", "Exit"))


# Names of collections that list accepted values rather than choose one.
_ALLOW_LIST_NAME = re.compile(r"allowed|supported|valid|accepted|known", re.IGNORECASE)
# Calls that collect what a generator yields: `tuple(d for d in (a, b) if d is not None)` is a filtered literal.
_COLLECTING_CALLS = frozenset({"tuple", "list", "set", "frozenset"})


def in_allow_list(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is an element of a tuple or list literal (also filtered through `tuple(x for x in (...) if ...)`)
    assigned to a name that says it lists accepted values (`_ALLOWED_DTYPES = (...)`, `SUPPORTED_ELEM_DTYPES =
    [...]`), or to a name every read of which only looks values up in it (`x.dtype in _FP8_DTYPES`): a table."""
    member = outermost_collection_member(ctx, node)
    if member is node:
        return False
    assign = _assignment_of(ctx, member)
    if assign is None:
        return False
    targets = assignment_targets(assign)
    if any(_ALLOW_LIST_NAME.search(last_name(target)) for target in targets):
        return True
    return len(targets) == 1 and _only_looked_up(ctx, targets[0])


def _assignment_of(ctx: PythonContext, collection: ast.AST) -> ast.Assign | ast.AnnAssign | None:
    """The assignment (annotated too: `DTYPES: tuple[torch.dtype, ...] = (...)`) whose value is `collection`, or a
    collecting call filtering it (`tuple(x for x in <it>)`)."""
    value = collection
    parent = ctx.parent(value)
    if isinstance(parent, ast.comprehension) and parent.iter is value:
        generator = ctx.parent(parent)
        call = ctx.parent(generator) if generator is not None else None
        if (
            isinstance(generator, ast.GeneratorExp)
            and isinstance(call, ast.Call)
            and len(call.args) == 1
            and call.args[0] is generator
            and ctx.qualified_name(call.func) in _COLLECTING_CALLS
        ):
            value, parent = call, ctx.parent(call)
    return parent if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is value else None


def _only_looked_up(ctx: PythonContext, target: ast.expr) -> bool:
    """`target` names a variable that is read, and every read of it only inspects it (`in`, a type check)."""
    if not isinstance(target, ast.Name):
        return False
    binding = ctx.semantic.lookup(target.id, target)
    if binding is None:
        return False
    reads = ctx.semantic.reads(target.id, binding)
    return bool(reads) and all(is_inspected(ctx, read) or _tested_for_truth(ctx, read) for read in reads)


def _tested_for_truth(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is only tested for being empty: `not node`, an operand of `and`/`or`, the test of an `if`,
    `while`, conditional expression or `assert`."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is node
    return isinstance(parent, ast.BoolOp)
