"""Native libraries Python code loads through `ctypes`: the loader calls and the library names they get.

Which libraries are a hazard stays in the rule.
"""

from __future__ import annotations

import ast
import re

from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import argument_values

_LIBRARY_LOADERS = frozenset(
    {"ctypes.CDLL", "ctypes.PyDLL", "ctypes.WinDLL", "ctypes.cdll.LoadLibrary", "ctypes.windll.LoadLibrary"}
)
_FIND_LIBRARY = "ctypes.util.find_library"


def loaded_library(ctx: PythonContext, call: ast.Call) -> ast.expr | None:
    """The library argument of a `ctypes` loader call (`ctypes.CDLL(name)`, `cdll.LoadLibrary(name)`), else None."""
    arguments = argument_values(call)
    if not arguments or ctx.qualified_name(call.func) not in _LIBRARY_LOADERS:
        return None
    return arguments[0]


def library_names(ctx: PythonContext, expr: ast.AST) -> list[tuple[str, ast.AST]]:
    """The file names (the last path component) a library argument may be, each with the literal it comes
    from; through names assigned once, conditional arms and `ctypes.util.find_library("name")` (whose
    argument is the name searched for)."""
    value = ctx.single_value(expr)
    if isinstance(value, ast.Call) and ctx.qualified_name(value.func) == _FIND_LIBRARY:
        searched = argument_values(value)
        if searched:
            return library_names(ctx, searched[0])
    return [(re.split(r"[\\/]", path)[-1], literal) for path, literal in ctx.values.string_sources(expr)]
