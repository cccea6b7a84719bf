"""Where code runs when its module is imported: at module level, or in a module-level function that a
module-level call runs (directly or through other such functions).

A rule about code that fails at import time (a setup script that needs the CUDA toolkit) reports it at the
module-level statement or call that runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.frontend import PythonContext


@dataclass(frozen=True)
class ImportTimeRun:
    """One place at module level that runs a piece of code on import."""

    site: cst.CSTNode  # the code itself at module level, or the module-level call that runs it
    functions: tuple[cst.FunctionDef, ...] = ()  # the functions called on the way, the outermost first
    through: tuple[cst.CSTNode, ...] = ()  # the code and the calls on the way, innermost first (to gate on)


def import_time_runs(
    ctx: PythonContext, node: cst.CSTNode, max_calls: int, harmless: Callable[[cst.CSTNode], bool]
) -> Iterator[ImportTimeRun]:
    """The places at module level that run `node` on import: `node` itself when it is at module level, else
    the module-level calls of the module-level function holding it, through at most `max_calls` calls.
    `harmless(site)`: running the code at `site` (`node`, or a call on the way) cannot fail there (a
    handler catches the failure, a check around it skips it), so nothing is reached through it."""
    yield from _runs(ctx, ImportTimeRun(node), max_calls, harmless)


def _runs(
    ctx: PythonContext, run: ImportTimeRun, max_calls: int, harmless: Callable[[cst.CSTNode], bool]
) -> Iterator[ImportTimeRun]:
    if harmless(run.site):
        return
    scope = ctx.semantic.enclosing_scope_node(run.site)
    if scope is ctx.module:
        yield run
        return
    if len(run.functions) >= max_calls or not isinstance(scope, cst.FunctionDef) or not ctx.is_module_level(scope):
        return
    for call in ctx.references.calls_of(scope):
        caller = ImportTimeRun(call, (scope, *run.functions), (*run.through, run.site))
        yield from _runs(ctx, caller, max_calls, harmless)
