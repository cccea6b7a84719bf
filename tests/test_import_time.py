"""Where code runs on import (rocmlint/python/import_time.py): at module level, or through module-level
calls of module-level functions, up to a number of calls, pruned where the code is harmless."""

from __future__ import annotations

import ast

from snippets import parse

from rocmlint.python.frontend import PythonContext
from rocmlint.python.import_time import import_time_runs

_CODE = """
def probe():
    run("nvcc")
def check():
    probe()
def main():
    check()
def safe():
    try:
        probe()
    except OSError:
        pass
class Builder:
    def build(self):
        probe()
probe()
main()
safe()
if __name__ == "__main__":
    check()
"""


def _context(code: str) -> tuple[ast.Module, PythonContext]:
    snippet = parse(code, "setup.py")
    return snippet.module, snippet.ctx


def _runs(max_calls: int) -> list[tuple[int, list[str], int]]:
    """(line of the site, the functions on the way, how many nodes to gate on) for `run("nvcc")`."""
    module, ctx = _context(_CODE)
    target = next(
        n for n in ctx.semantic.descendants(module) if isinstance(n, ast.Call) and ctx.code_of(n) == 'run("nvcc")'
    )

    def harmless(site: ast.AST) -> bool:
        return any(isinstance(ancestor, ast.Try) for ancestor in ctx.ancestors(site))

    return [
        (ctx.code_range(run.site).start.line, [f.name for f in run.functions], len(run.through))
        for run in import_time_runs(ctx, target, max_calls, harmless)
    ]


def test_import_time_runs_follow_module_level_calls() -> None:
    # `safe()` catches the failure, `Builder.build` is a method: neither is followed.
    assert sorted(_runs(max_calls=3)) == [
        (15, ["probe"], 1),
        (16, ["main", "check", "probe"], 3),
        (19, ["check", "probe"], 2),
    ]


def test_import_time_runs_stop_after_max_calls() -> None:
    assert sorted(_runs(max_calls=2)) == [(15, ["probe"], 1), (19, ["check", "probe"], 2)]


def test_code_at_module_level_runs_where_it_stands() -> None:
    module, ctx = _context("run('nvcc')\n")
    call = next(n for n in ctx.semantic.descendants(module) if isinstance(n, ast.Call))
    assert [(run.site, run.functions, run.through) for run in import_time_runs(ctx, call, 3, lambda _: False)] == [
        (call, (), ())
    ]
