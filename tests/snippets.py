"""Python snippets for front-end tests: parsed and indexed the way `check_python` does, with nodes found by
their code (`node("x")` is the first node whose code is `x`) or as the value assigned to a name."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst

from rocmlint.python.frontend import PythonContext, RuleOptions
from rocmlint.python.gating import GateAnalyzer
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import walk
from rocmlint.source import SourceFile

N = TypeVar("N", bound=cst.CSTNode)


@dataclass
class Snippet:
    module: cst.Module
    semantic: Semantic
    ctx: PythonContext

    def code(self, node: cst.CSTNode | None) -> str:
        assert node is not None
        return self.module.code_for_node(node)

    def codes(self, nodes: Iterable[cst.CSTNode | None]) -> list[str]:
        return [self.code(n) for n in nodes]

    def node(self, code: str, kind: type[N], index: int = 0) -> N:
        """The `index`-th node (in source order) of type `kind` whose code is exactly `code`."""
        found = [n for n in in_order(self.module) if isinstance(n, kind) and self.code(n) == code]
        assert len(found) > index, f"no {kind.__name__} {code!r}"
        return found[index]

    def first(self, kind: type[N]) -> N:
        return next(n for n in in_order(self.module) if isinstance(n, kind))

    def imports(self) -> list[cst.Import | cst.ImportFrom]:
        return [n for n in in_order(self.module) if isinstance(n, (cst.Import, cst.ImportFrom))]

    def value(self, name: str) -> cst.BaseExpression:
        """The value of the (last) `name = ...` assignment."""
        found = None
        for node in in_order(self.module):
            if isinstance(node, cst.Assign) and self.code(node.targets[0].target) == name:
                found = node.value
        assert found is not None, f"no assignment to {name}"
        return found

    def value_as(self, name: str, kind: type[N]) -> N:
        value = self.value(name)
        assert isinstance(value, kind)
        return value

    def used(self) -> cst.Name:
        """The name passed to the first `use(...)`."""
        argument = self.all_used()[0]
        assert isinstance(argument, cst.Name)
        return argument

    def all_used(self) -> list[cst.BaseExpression]:
        """The arguments of the `use(...)` calls, in order."""
        calls = [n for n in in_order(self.module) if isinstance(n, cst.Call) and self.code(n.func) == "use"]
        return [call.args[0].value for call in calls]


def in_order(root: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node under `root` (itself included), in source order."""
    found: list[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


def parse(code: str, path: str = "example.py", package: str | None = None) -> Snippet:
    text = textwrap.dedent(code).lstrip("\n")
    module = cst.parse_module(text)
    semantic = Semantic(module, package)
    source = SourceFile.from_bytes(path, text.encode("utf-8"), "python")
    ctx = PythonContext(source, module, semantic, GateAnalyzer(semantic), RuleOptions())
    walk(module, semantic.parents, {})
    return Snippet(module, semantic, ctx)
