"""Import statements: the modules they import, the names they bind, whether they run when the module is
imported, and whether the importing file belongs to the imported package.

Rules about optional dependencies (pynvml, flash-attn) ask here; which packages are a hazard stays in the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

import libcst as cst

from rocmlint.python.conditions import enclosing_tests
from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import dotted_name


@dataclass(frozen=True)
class ImportedModule:
    """One absolute module an import statement imports (`a.b` of `import a.b as c` or `from a.b import x`)."""

    module: str
    name: cst.BaseExpression  # the module's dotted name as written
    alias: cst.ImportAlias | None  # `a.b as c` of `import a.b as c`; None in a `from` import


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[ImportedModule]:
    """Every module of `import a, b.c` (one per alias), the module of `from a.b import x`, none for a
    relative import."""
    if isinstance(node, cst.Import):
        return [ImportedModule(dotted_name(alias.name) or "", alias.name, alias) for alias in node.names]
    if node.relative or node.module is None:
        return []
    return [ImportedModule(dotted_name(node.module) or "", node.module, None)]


def top_level(module: str) -> str:
    """The top-level package of a dotted module name (`a` of `a.b.c`)."""
    return module.split(".", 1)[0]


def bound_names(node: cst.Import | cst.ImportFrom) -> list[str] | None:
    """The names an import statement binds, in order: the `as` name, the top-level package of `import a.b`,
    `x` of `from m import x`; None for `from m import *`."""
    if isinstance(node.names, cst.ImportStar):
        return None
    names: list[str] = []
    for alias in node.names:
        if alias.asname is not None:
            bound = alias.asname.name
            names.append(bound.value if isinstance(bound, cst.Name) else "")
        elif isinstance(node, cst.Import):
            names.append(top_level(dotted_name(alias.name) or ""))
        else:
            names.append(dotted_name(alias.name) or "")
    return names


def sole_imported_name(node: cst.ImportFrom) -> tuple[str, cst.Name] | None:
    """For `from m import x` or `from m import x as y`: `x` and the name bound (`y`, else `x`); None when
    the statement imports several names or `*`."""
    names = node.names
    if isinstance(names, cst.ImportStar) or len(names) != 1:
        return None
    alias = names[0]
    bound = alias.asname.name if alias.asname is not None else alias.name
    if not isinstance(bound, cst.Name):
        return None
    return dotted_name(alias.name) or "", bound


def is_type_checking(ctx: PythonContext, test: cst.BaseExpression) -> bool:
    """`TYPE_CHECKING` (`typing.TYPE_CHECKING`, `typing_extensions.TYPE_CHECKING`, any alias of it)."""
    return (ctx.qualified_name(test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING"


def under_type_checking(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Inside an `if TYPE_CHECKING:` (either branch, counted as never run)."""
    return any(is_type_checking(ctx, test) for test in enclosing_tests(ctx, node))


def runs_at_import(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Executed when its module is imported: not inside a function or lambda, not under `if TYPE_CHECKING:`."""
    if any(isinstance(ancestor, (cst.FunctionDef, cst.Lambda)) for ancestor in ctx.ancestors(node)):
        return False
    return not under_type_checking(ctx, node)


def module_path_names(ctx: PythonContext) -> list[str]:
    """The names the checked file's own module path is made of: its package's parts and its file stem
    (`["flash_attn", "layers", "rotary"]` for `flash_attn/layers/rotary.py`)."""
    return [*(ctx.semantic.package or "").split("."), PurePath(ctx.source.path).stem]
