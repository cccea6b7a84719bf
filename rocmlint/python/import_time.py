"""Where code runs when its module is imported: at module level, or in a module-level function that a
module-level call runs (directly or through other such functions).

A rule about code that fails at import time (a setup script that needs the CUDA toolkit) reports it at the
module-level statement or call that runs it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import FUNCTION_DEFS, FunctionNode


@dataclass(frozen=True)
class ImportTimeRun:
    """One place at module level that runs a piece of code on import."""

    site: ast.AST  # the code itself at module level, or the module-level call that runs it
    functions: tuple[FunctionNode, ...] = ()  # the functions called on the way, the outermost first
    through: tuple[ast.AST, ...] = ()  # the code and the calls on the way, innermost first (to gate on)


def import_time_runs(
    ctx: PythonContext, node: ast.AST, max_calls: int, harmless: Callable[[ast.AST], bool]
) -> Iterator[ImportTimeRun]:
    """The places at module level that run `node` on import: `node` itself when it is at module level, else
    the module-level calls of the module-level function holding it, through at most `max_calls` calls.
    `harmless(site)`: running the code at `site` (`node`, or a call on the way) cannot fail there (a
    handler catches the failure, a check around it skips it), so nothing is reached through it."""
    yield from _runs(ctx, ImportTimeRun(node), max_calls, harmless)


def _runs(
    ctx: PythonContext, run: ImportTimeRun, max_calls: int, harmless: Callable[[ast.AST], bool]
) -> Iterator[ImportTimeRun]:
    if harmless(run.site):
        return
    scope = ctx.semantic.enclosing_scope_node(run.site)
    if scope is ctx.module:
        yield run
        return
    if len(run.functions) >= max_calls or not isinstance(scope, FUNCTION_DEFS) or not ctx.is_module_level(scope):
        return
    for call in ctx.references.calls_of(scope):
        caller = ImportTimeRun(call, (scope, *run.functions), (*run.through, run.site))
        yield from _runs(ctx, caller, max_calls, harmless)
