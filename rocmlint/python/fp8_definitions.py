"""FP8 dtypes that only define or describe a format, never reaching an FP8 computation from where they are written:
an entry of a table translating integer type codes into dtypes (the codes a native backend passes), a type
system's own type for the dtype, named as it (a catalog: `float8_e4m3fn = typeclass(ml_dtypes.float8_e4m3fn)`),
the dtype a class of constants describing that format holds (`class FP8_E4M3_DATA: exponent = 4; mantissa = 3;
dtype = torch.float8_e4m3fn`), and tensors made on the `meta` device, which have a shape and a dtype and no data.

`fp8.encoding_neutral_use` asks these; whether a mention is a hazard stays in ROC107.
"""

from __future__ import annotations

import ast
import re

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name

# The device whose tensors hold no data: shapes and dtypes only (test fixtures, deferred initialisation).
_META = "meta"
# Materialising a meta tensor on a real device keeps its dtype: a file doing it may compute with the FP8 tensor.
_MATERIALISE = b"to_empty"
# The exponent and mantissa widths of an FP8 dtype's name (`float8_e4m3fn` -> 4, 3).
_WIDTHS = re.compile(r"e(\d)m(\d)")
# Class attributes that give a floating-point format's exponent and mantissa widths.
_EXPONENT_NAMES, _MANTISSA_NAMES = (
    frozenset({"exponent", "exponent_bits", "e_bits"}),
    frozenset({"mantissa", "mantissa_bits", "m_bits"}),
)


def on_meta_device(ctx: PythonContext, call: ast.Call | None) -> bool:
    """`call` (the factory or conversion making a tensor in the dtype) places it on the `meta` device: a
    `device="meta"` (or `torch.device("meta")`) argument, or a `with torch.device("meta"):` around it, in a file that
    never materialises meta tensors (`to_empty`). A meta tensor has no data: nothing computes with it."""
    if call is None or ctx.contains(_MATERIALISE):
        return False
    if any(keyword.arg == "device" and _names_meta(ctx, keyword.value) for keyword in call.keywords):
        return True
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(
            _names_meta(ctx, item.context_expr) for item in ancestor.items
        ):
            return True
    return False


def _names_meta(ctx: PythonContext, device: ast.expr) -> bool:
    """`"meta"`, `torch.device("meta")`."""
    if isinstance(device, ast.Call) and ctx.qualified_name(device.func) == "torch.device" and device.args:
        device = device.args[0]
    return ctx.string_value(device) == _META


def integer_code_table(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is a value of a dict literal whose keys are all integer literals and whose values are all dtypes of
    `node`'s library (`{0: torch.float32, 5: torch.float8_e4m3fn}`): the dtype codes a native backend reads and
    writes, translated. The code a caller passes picks the format; the table only names each one."""
    table = ctx.parent(node)
    if not isinstance(table, ast.Dict) or not any(value is node for value in table.values) or len(table.keys) < 2:
        return False
    if not all(isinstance(key, ast.Constant) and type(key.value) is int for key in table.keys):
        return False
    library = (ctx.qualified_name(node) or "").rpartition(".")[0]
    return all((ctx.qualified_name(value) or "").rpartition(".")[0] == library for value in table.values)


def defined_under_own_name(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """`node`, the dtype `name`, is the one argument of a call whose result defines a name spelled as the dtype
    (`float8_e4m3fn = typeclass(ml_dtypes.float8_e4m3fn)`): another type system's own type for the format, which
    users of that type system pick; no choice is made here. Not a bare alias (`float8_e4m3fn = torch.float8_e4m3fn`,
    a shim whose reads are the library's dtype itself)."""
    call = ctx.parent(node)
    if not isinstance(call, ast.Call) or call.args != [node] or call.keywords:
        return False
    statement = ctx.parent(call)
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not call:
        return False
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return len(targets) == 1 and isinstance(targets[0], (ast.Name, ast.Attribute)) and last_name(targets[0]) == name


def format_constant(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """`node`, the dtype `name`, is (or is the `finfo` of) a constant in the body of a class that holds only
    constants and describes the format the dtype's name spells: integer exponent and mantissa widths equal to its
    own (`class FP8_E4M3_DATA(FloatArgs): exponent = 4; mantissa = 3; max = torch.finfo(...).max; dtype = ...`).
    The class is the format's definition, a value users pick by picking the class. Not an instance's attributes set
    by a quantizer's `__init__` (`self.fp_dtype = ...` beside `self.e_bits = 4`), which is such a pick."""
    widths = _WIDTHS.search(name)
    statement = ctx.semantic.statement_of(node)
    owner = ctx.parent(statement) if statement is not None else None
    if widths is None or not isinstance(owner, ast.ClassDef) or not isinstance(statement, ast.Assign):
        return False
    constants: dict[str, object] = {}
    for member in owner.body:
        if isinstance(member, ast.Expr) and isinstance(member.value, ast.Constant):
            continue  # the docstring
        if (
            not isinstance(member, ast.Assign)
            or len(member.targets) != 1
            or not isinstance(member.targets[0], ast.Name)
        ):
            return False
        if isinstance(member.value, ast.Constant):
            constants[member.targets[0].id] = member.value.value
    exponent = next((constants[key] for key in _EXPONENT_NAMES if key in constants), None)
    mantissa = next((constants[key] for key in _MANTISSA_NAMES if key in constants), None)
    return (exponent, mantissa) == (int(widths.group(1)), int(widths.group(2)))


def defines_the_format(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """`node`, the dtype `name`, only defines its format: a code table's entry, a type system's own type for it, or
    the dtype of a class describing the format (`integer_code_table`, `defined_under_own_name`, `format_constant`)."""
    return integer_code_table(ctx, node) or defined_under_own_name(ctx, node, name) or format_constant(ctx, node, name)
