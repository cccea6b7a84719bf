"""Import statements: the modules they import, the names they bind, whether they run when the module is
imported, and whether the importing file belongs to the imported package.

Rules about optional dependencies (pynvml, flash-attn) ask here; which packages are a hazard stays in the rule.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePath

from rocmlint.python.frontend import PythonContext
from rocmlint.python.positions import CodePosition, CodeRange
from rocmlint.python.scopes import FUNCTION_DEFS

# Blanks inside a statement, line continuations included: what may separate `from` and a dotted name's parts.
_GAP = r"(?:[ \t\f]|\\(?:\r\n?|\n))*"
_FROM_KEYWORD = re.compile(rf"from{_GAP}")
_DOTTED_NAME = re.compile(rf"\w+(?:{_GAP}\.{_GAP}\w+)*")


@dataclass(frozen=True)
class ImportedModule:
    """One absolute module an import statement imports (`a.b` of `import a.b as c` or `from a.b import x`)."""

    module: str
    # Where the module's dotted name is written: the alias of `import a.b as c`, the `from a.b import x`
    # statement (the tree keeps the name as a string: `module_name_range` is its range).
    name: ast.alias | ast.ImportFrom
    alias: ast.alias | None  # `a.b as c` of `import a.b as c`; None in a `from` import


def imported_modules(node: ast.Import | ast.ImportFrom) -> list[ImportedModule]:
    """Every module of `import a, b.c` (one per alias), the module of `from a.b import x`, none for a
    relative import."""
    if isinstance(node, ast.Import):
        return [ImportedModule(alias.name, alias, alias) for alias in node.names]
    if node.level or node.module is None:
        return []
    return [ImportedModule(node.module, node, None)]


def module_name_range(ctx: PythonContext, imported: ImportedModule) -> CodeRange:
    """Where the module's dotted name is written: `a.b` of `import a.b as c` and of `from a.b import x`."""
    start = ctx.code_range(imported.name).start
    text, offset = ctx.source.text, ctx.source.char_offset(start.line, start.column)
    if isinstance(imported.name, ast.ImportFrom):
        keyword = _FROM_KEYWORD.match(text, offset)
        offset = keyword.end() if keyword is not None else offset
    written = _DOTTED_NAME.match(text, offset)
    end = written.end() if written is not None else offset
    return CodeRange(_position(ctx, offset), _position(ctx, end))


def _position(ctx: PythonContext, offset: int) -> CodePosition:
    location = ctx.source.location_of_char(offset)
    return CodePosition(location.line, location.column - 1)


def imports_package(ctx: PythonContext, package: str) -> bool:
    """Some import statement of the file, at any depth, imports `package` or one of its modules (`import torch`,
    `from torch.utils import cpp_extension`)."""
    return any(
        top_level(imported.module) == package
        for node in ast.walk(ctx.semantic.module)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for imported in imported_modules(node)
    )


def top_level(module: str) -> str:
    """The top-level package of a dotted module name (`a` of `a.b.c`)."""
    return module.split(".", 1)[0]


def bound_names(node: ast.Import | ast.ImportFrom) -> list[str] | None:
    """The names an import statement binds, in order: the `as` name, the top-level package of `import a.b`,
    `x` of `from m import x`; None for `from m import *`."""
    if _is_star_import(node):
        return None
    names: list[str] = []
    for alias in node.names:
        if alias.asname is not None:
            names.append(alias.asname)
        elif isinstance(node, ast.Import):
            names.append(top_level(alias.name))
        else:
            names.append(alias.name)
    return names


def sole_imported_name(node: ast.ImportFrom) -> tuple[str, str] | None:
    """For `from m import x` or `from m import x as y`: `x` and the name bound (`y`, else `x`); None when
    the statement imports several names or `*`."""
    if _is_star_import(node) or len(node.names) != 1:
        return None
    alias = node.names[0]
    return alias.name, alias.asname or alias.name


def _is_star_import(node: ast.Import | ast.ImportFrom) -> bool:
    return isinstance(node, ast.ImportFrom) and node.names[0].name == "*"


def is_type_checking(ctx: PythonContext, test: ast.AST) -> bool:
    """`TYPE_CHECKING` (`typing.TYPE_CHECKING`, `typing_extensions.TYPE_CHECKING`, any alias of it)."""
    return (ctx.qualified_name(test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING"


def under_type_checking(ctx: PythonContext, node: ast.AST) -> bool:
    """Inside the body of an `if TYPE_CHECKING:`, which never runs (its `else` is what runs)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and child in ancestor.body and is_type_checking(ctx, ancestor.test):
            return True
        child = ancestor
    return False


def runs_at_import(ctx: PythonContext, node: ast.AST) -> bool:
    """Executed when its module is imported: not inside a function or lambda, not under `if TYPE_CHECKING:`."""
    if any(isinstance(ancestor, (*FUNCTION_DEFS, ast.Lambda)) for ancestor in ctx.ancestors(node)):
        return False
    return not under_type_checking(ctx, node)


def module_path_names(ctx: PythonContext) -> list[str]:
    """The names the checked file's own module path is made of: its package's parts and its file stem
    (`["flash_attn", "layers", "rotary"]` for `flash_attn/layers/rotary.py`)."""
    return [*(ctx.semantic.package or "").split("."), PurePath(ctx.source.path).stem]
