"""What a Python file's names mean: parents, scopes, import aliases, qualified names, simple values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.scopes import Scope, ScopeNode, dotted_name, index_scope


@dataclass(frozen=True)
class Binding:
    """What a name is bound to in the scope that defines it."""

    kind: str  # "import", "value", "function", "class"
    scope: Scope
    qualified: str | None = None  # for imports
    values: tuple[cst.BaseExpression, ...] = ()
    definition: cst.FunctionDef | cst.ClassDef | None = None


class Semantic:
    def __init__(self, module: cst.Module, package: str | None) -> None:
        self.module = module
        self.package = package
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._scopes: dict[ScopeNode, Scope] = {}

    # --- tree -----------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def enclosing_scope_node(self, node: cst.CSTNode) -> ScopeNode:
        """The def, class or module whose body contains `node` (a def's own decorators belong outside)."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) and child is ancestor.body:
                return ancestor
            child = ancestor
        return self.module

    def is_module_level(self, node: cst.CSTNode) -> bool:
        return self.enclosing_scope_node(node) is self.module

    def scope(self, node: ScopeNode) -> Scope:
        scope = self._scopes.get(node)
        if scope is None:
            scope = index_scope(node, self.package)
            self._scopes[node] = scope
        return scope

    # --- names ----------------------------------------------------------------------------------
    def lookup(self, name: str, at: cst.CSTNode) -> Binding | None:
        """Resolve `name` as Python would from `at`: enclosing functions, then the module.

        Class bodies are only searched when `at` is directly inside them (methods do not see them).
        """
        scope_node = self.enclosing_scope_node(at)
        first = True
        while True:
            if first or not isinstance(scope_node, cst.ClassDef):
                binding = self._lookup_in(self.scope(scope_node), name)
                if binding is not None:
                    return binding
            if scope_node is self.module:
                return None
            scope_node = self.enclosing_scope_node(scope_node)
            first = False

    @staticmethod
    def _lookup_in(scope: Scope, name: str) -> Binding | None:
        if name in scope.imports:
            return Binding("import", scope, qualified=scope.imports[name])
        if name in scope.values:
            return Binding("value", scope, values=tuple(scope.values[name]))
        if name in scope.functions:
            return Binding("function", scope, definition=scope.functions[name])
        if name in scope.classes:
            return Binding("class", scope, definition=scope.classes[name])
        return None

    def qualified_name(self, node: cst.CSTNode, _depth: int = 0) -> str | None:
        """`torch.backends.cuda.matmul.allow_tf32` for `c.matmul.allow_tf32` after
        `from torch.backends import cuda as c`; names bound to a dotted value are followed too.

        A name that is bound nowhere is taken literally (`torch.compile` without `import torch`).
        """
        dotted = dotted_name(node)
        if dotted is None or _depth > 8:
            return None
        head, _, rest = dotted.partition(".")
        binding = self.lookup(head, node)
        if binding is None:
            return dotted
        if binding.kind == "import":
            base = binding.qualified
        elif binding.kind == "value" and len(binding.values) == 1:
            base = self.qualified_name(binding.values[0], _depth + 1)
        else:
            base = head if binding.kind in ("function", "class") else None
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def call_name(self, call: cst.Call) -> str | None:
        return self.qualified_name(call.func)

    def single_value(self, node: cst.CSTNode, _depth: int = 0) -> cst.BaseExpression | None:
        """The expression a Name stands for when it is assigned exactly once in its scope; else the node."""
        current = node
        for _ in range(8):
            if not isinstance(current, cst.Name):
                break
            binding = self.lookup(current.value, current)
            if binding is None or binding.kind != "value" or len(binding.values) != 1:
                return current
            current = binding.values[0]
        return current if isinstance(current, cst.BaseExpression) else None

    def string_value(self, node: cst.CSTNode) -> str | None:
        """The value of a string literal (or a name assigned one once), else None."""
        value = self.single_value(node)
        if isinstance(value, cst.SimpleString):
            try:
                evaluated = value.evaluated_value
            except Exception:  # noqa: BLE001 - libcst raises several types for odd literals
                return None
            return evaluated if isinstance(evaluated, str) else None
        if isinstance(value, cst.ConcatenatedString):
            left, right = self.string_value(value.left), self.string_value(value.right)
            return left + right if left is not None and right is not None else None
        return None

    def string_sources(self, node: cst.CSTNode) -> list[tuple[str, cst.CSTNode]]:
        """Every string an expression may evaluate to, with the literal it comes from: a literal, a name
        assigned once, or either arm of a conditional expression."""
        value = self.single_value(node)
        if isinstance(value, cst.IfExp):
            return self.string_sources(value.body) + self.string_sources(value.orelse)
        string = self.string_value(value) if value is not None else None
        return [(string, value)] if string is not None and value is not None else []

    def dict_entries(self, node: cst.CSTNode) -> dict[str, cst.BaseExpression]:
        """String-keyed entries of a dict literal or `dict(k=v)` call (or a name assigned one once)."""
        value = self.single_value(node)
        entries: dict[str, cst.BaseExpression] = {}
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement):
                    key = self.string_value(element.key)
                    if key is not None:
                        entries[key] = element.value
        elif isinstance(value, cst.Call) and self.qualified_name(value.func) == "dict":
            for arg in value.args:
                if arg.keyword is not None:
                    entries[arg.keyword.value] = arg.value
        return entries

    def int_value(self, node: cst.CSTNode) -> int | None:
        value = self.single_value(node)
        if isinstance(value, cst.Integer):
            return int(value.evaluated_value)
        return None

    def keyword(self, call: cst.Call, name: str) -> cst.Arg | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def positional(self, call: cst.Call, index: int) -> cst.Arg | None:
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        return positional[index] if index < len(positional) else None
