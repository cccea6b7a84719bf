"""What a Python file's names mean: parents, scopes, import aliases, qualified names, simple values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.scopes import Scope, ScopeNode, dotted_name, index_scope, parameter_names, target_names

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass(frozen=True)
class Binding:
    """What a name is bound to in the scope that defines it."""

    kind: str  # "import", "value", "function", "class"
    scope: Scope
    qualified: str | None = None  # for imports
    values: tuple[cst.BaseExpression, ...] = ()
    definition: cst.FunctionDef | cst.ClassDef | None = None
    # Also bound where the value is unknown (a parameter, loop target, `+=`, unpacking): a "value"
    # binding with `opaque` set never stands for one expression.
    opaque: bool = False

    @property
    def single(self) -> cst.BaseExpression | None:
        """The one expression a value binding stands for, if it has exactly one and nothing else."""
        if self.kind == "value" and not self.opaque and len(self.values) == 1:
            return self.values[0]
        return None


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

    def _scope_for(self, name: str, at: cst.CSTNode) -> tuple[ScopeNode, bool]:
        """`enclosing_scope_node(at)`, and whether a lambda or comprehension on the way binds `name`."""
        child = at
        for ancestor in self.ancestors(at):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) and child is ancestor.body:
                return ancestor, False
            if _binds_in_expression(ancestor, child, name):
                return self.enclosing_scope_node(ancestor), True
            child = ancestor
        return self.module, False

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

        Class bodies are only searched when `at` is directly inside them (methods do not see them). A
        lambda parameter or comprehension variable is a binding whose value is unknown.
        """
        scope_node, shadowed = self._scope_for(name, at)
        if shadowed:
            return Binding("value", self.scope(scope_node), opaque=True)
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

    def lookup_in(self, scope_node: ScopeNode, name: str) -> Binding | None:
        """`name` as bound directly in one scope (a module, def or class body), ignoring outer scopes."""
        return self._lookup_in(self.scope(scope_node), name)

    @staticmethod
    def _lookup_in(scope: Scope, name: str) -> Binding | None:
        if name in scope.imports:
            qualified = None if name in scope.ambiguous_imports else scope.imports[name]
            return Binding("import", scope, qualified=qualified)
        if name in scope.values:
            return Binding("value", scope, values=tuple(scope.values[name]), opaque=name in scope.opaque)
        if name in scope.functions:
            return Binding("function", scope, definition=scope.functions[name])
        if name in scope.classes:
            return Binding("class", scope, definition=scope.classes[name])
        if name in scope.opaque:
            return Binding("value", scope, opaque=True)
        return None

    # --- classes --------------------------------------------------------------------------------
    def receiver_class(self, expr: cst.Attribute) -> cst.ClassDef | None:
        """The class `expr` reads an attribute of: `self.x`/`cls.x` (a method's first parameter) or
        `Name.x` for a class defined in this file."""
        owner = expr.value
        if not isinstance(owner, cst.Name):
            return None
        binding = self.lookup(owner.value, expr)
        if binding is not None and binding.kind == "class" and isinstance(binding.definition, cst.ClassDef):
            return binding.definition
        method = self._binding_function(owner.value, expr)
        if method is None:
            return None
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional or positional[0].name.value != owner.value:
            return None
        cls = self.enclosing_scope_node(method)
        return cls if isinstance(cls, cst.ClassDef) else None

    def _binding_function(self, name: str, at: cst.CSTNode) -> cst.FunctionDef | None:
        """The def whose parameter `name` is, seen from `at` (closures inside a method see its `self`)."""
        scope_node = self.enclosing_scope_node(at)
        while isinstance(scope_node, cst.FunctionDef):
            if name in parameter_names(scope_node.params):
                return scope_node
            if self._lookup_in(self.scope(scope_node), name) is not None:
                return None  # rebound locally
            scope_node = self.enclosing_scope_node(scope_node)
        return None

    def member(self, cls: cst.ClassDef, name: str, _depth: int = 0) -> Binding | None:
        """A class attribute, method or `self.name = ...` instance attribute of `cls`, else of its bases
        defined in this file."""
        scope = self.scope(cls)
        binding = self._lookup_in(scope, name)
        if binding is not None:
            return binding
        if name in scope.attributes or name in scope.opaque_attributes:
            values = tuple(scope.attributes.get(name, ()))
            return Binding("value", scope, values=values, opaque=name in scope.opaque_attributes)
        if _depth > 8:
            return None
        for base in cls.bases:
            if base.keyword is None and isinstance(base.value, cst.Name):
                found = self.lookup(base.value.value, cls)
                if found is not None and found.kind == "class" and isinstance(found.definition, cst.ClassDef):
                    inherited = self.member(found.definition, name, _depth + 1)
                    if inherited is not None:
                        return inherited
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
            base = binding.qualified  # None when imported from different places (`try:`/`except ImportError:`)
        elif binding.kind == "value":
            base = self._value_qualified_name(binding, head, _depth)
        else:
            base = head  # a def or class of this file is named by itself
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def _value_qualified_name(self, binding: Binding, head: str, depth: int) -> str | None:
        if binding.single is not None:
            return self.qualified_name(binding.single, depth + 1)
        if binding.opaque and not binding.values:
            return head  # a parameter or loop variable: nothing known, so taken literally like unbound names
        return None  # assigned several times: it could be any of them

    def call_name(self, call: cst.Call) -> str | None:
        return self.qualified_name(call.func)

    def single_value(self, node: cst.CSTNode, _depth: int = 0) -> cst.BaseExpression | None:
        """The expression a Name stands for when it is assigned exactly once in its scope; else the node."""
        current = node
        for _ in range(8):
            if not isinstance(current, cst.Name):
                break
            binding = self.lookup(current.value, current)
            if binding is None or binding.single is None:
                return current
            current = binding.single
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


def _binds_in_expression(node: cst.CSTNode, child: cst.CSTNode, name: str) -> bool:
    """Does `node` (a lambda or comprehension) bind `name` for its part `child`?"""
    if isinstance(node, cst.Lambda):
        return child is node.body and name in parameter_names(node.params)
    if isinstance(node, _COMPREHENSIONS):
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            if name in target_names(comp.target):
                return True
            comp = comp.inner_for_in
    return False
