"""Python snippets for front-end tests: parsed and indexed the way `check_python` does, with nodes found by
their code (`node("x")` is the first node whose code is `x`) or as the value assigned to a name."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from rocmlint.python.frontend import PythonContext, RuleOptions
from rocmlint.python.gating import GateAnalyzer
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import children, parse_text, walk
from rocmlint.source import SourceFile

N = TypeVar("N", bound=ast.AST)


@dataclass
class Snippet:
    module: ast.Module
    semantic: Semantic
    ctx: PythonContext

    def code(self, node: ast.AST | None) -> str:
        assert node is not None
        return self.ctx.code_of(node)

    def codes(self, nodes: Iterable[ast.AST | None]) -> list[str]:
        return [self.code(n) for n in nodes]

    def node(self, code: str, kind: type[N], index: int = 0) -> N:
        """The `index`-th node (in source order) of type `kind` whose code is exactly `code`."""
        found = [n for n in in_order(self.module) if isinstance(n, kind) and self.code(n) == code]
        assert len(found) > index, f"no {kind.__name__} {code!r}"
        return found[index]

    def first(self, kind: type[N]) -> N:
        return next(n for n in in_order(self.module) if isinstance(n, kind))

    def imports(self) -> list[ast.Import | ast.ImportFrom]:
        return [n for n in in_order(self.module) if isinstance(n, (ast.Import, ast.ImportFrom))]

    def value(self, name: str) -> ast.expr:
        """The value of the (last) `name = ...` assignment."""
        found = None
        for node in in_order(self.module):
            if isinstance(node, ast.Assign) and self.code(node.targets[0]) == name:
                found = node.value
        assert found is not None, f"no assignment to {name}"
        return found

    def value_as(self, name: str, kind: type[N]) -> N:
        value = self.value(name)
        assert isinstance(value, kind)
        return value

    def used(self) -> ast.Name:
        """The name passed to the first `use(...)`."""
        argument = self.all_used()[0]
        assert isinstance(argument, ast.Name)
        return argument

    def all_used(self) -> list[ast.expr]:
        """The arguments of the `use(...)` calls, in order."""
        calls = [n for n in in_order(self.module) if isinstance(n, ast.Call) and self.code(n.func) == "use"]
        return [call.args[0] for call in calls]


def in_order(root: ast.AST) -> list[ast.AST]:
    """Every node under `root` (itself included), in source order."""
    found: list[ast.AST] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(children(node)))
    return found


def parse(code: str, path: str = "example.py", package: str | None = None) -> Snippet:
    text = textwrap.dedent(code).lstrip("\n")
    module = parse_text(text)
    semantic = Semantic(module, package, text)
    source = SourceFile.from_bytes(path, text.encode("utf-8"), "python")
    ctx = PythonContext(source, module, semantic, GateAnalyzer(semantic), RuleOptions())
    walk(module, semantic.parents, {}, semantic.mentions)
    return Snippet(module, semantic, ctx)
