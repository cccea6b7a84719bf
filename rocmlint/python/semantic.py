"""What a Python file's names mean: parents, scopes, import aliases, qualified names, simple values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.scopes import Scope, ScopeNode, dotted_name, index_scope, parameter_names, target_names
from rocmlint.python.tree import children

# The one depth policy of the Python front end: how many steps (a name, an arm, an operand, an element)
# the value tracer (values.py) and this model's own lookups (qualified names, single values) follow.
MAX_DEPTH = 8
# Forward, where a value goes (flow.py, `Values.destination` walks): how many variables it is followed
# through. Each read may be another variable's value, so the walk fans out and stays short.
MAX_HOPS = 3

# The comprehensions and generator expressions (their own scope; the one tuple).
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Bodies that run later, in a scope of their own: a walk out from a node stops at them (the one tuple; what
# a loop variable holds there is not known).
DEFERRED_BODIES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


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


@dataclass(frozen=True)
class LoopTarget:
    """Where a loop variable gets its values: the iterable of the `for` (or comprehension clause) that
    binds it, and its index in a tuple target (`for block, warps in pairs`), None when the target is
    the name itself."""

    iterable: cst.BaseExpression
    position: int | None


class Semantic:
    def __init__(self, module: cst.Module, package: str | None) -> None:
        self.module = module
        self.package = package
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._scopes: dict[ScopeNode, Scope] = {}
        self._unpacked: dict[ScopeNode, dict[str, list[cst.BaseExpression | None]]] = {}

    # --- tree -----------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def descendants(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """`node` and every node below it (trivia left out), depth first."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(children(current))

    def is_within(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """Whether `node` is `container` or below it."""
        return node is container or any(ancestor is container for ancestor in self.ancestors(node))

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

    def is_reference(self, name: cst.Name) -> bool:
        """Whether `name` refers to a variable, rather than naming an attribute (`x.name`), a keyword
        argument, a def, class or parameter being defined, or an imported name."""
        parent = self.parent(name)
        if isinstance(parent, cst.Attribute):
            return parent.attr is not name
        if isinstance(parent, cst.Arg):
            return parent.keyword is not name
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            return parent.name is not name
        return not isinstance(parent, (cst.ImportAlias, cst.AsName))

    def is_store(self, node: cst.CSTNode) -> bool:
        """Whether `node` (a name, attribute or subscript) is written rather than read: the target of an
        assignment (`=`, `+=`, annotated), of a `for` or comprehension clause, or of `del`."""
        parent = self.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.Del)):
            return True
        return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is node

    def name_reads(self, root: cst.CSTNode, name: str) -> Iterator[cst.Name]:
        """The names spelled `name` under `root` that read a variable, whichever binding they resolve to."""
        for node in self.descendants(root):
            if isinstance(node, cst.Name) and node.value == name and self._is_read(node):
                yield node

    def _is_read(self, name: cst.Name) -> bool:
        return self.is_reference(name) and not self.is_store(name)

    def reads(self, name: str, binding: Binding) -> list[cst.Name]:
        """The reads of `name` that resolve to the scope of `binding` (nested scopes that do not rebind
        it included)."""
        scope_node = binding.scope.node
        return [read for read in self.name_reads(scope_node, name) if self._resolves_in(read, scope_node)]

    def _resolves_in(self, name: cst.Name, scope_node: ScopeNode) -> bool:
        binding = self.lookup(name.value, name)
        return binding is not None and binding.scope.node is scope_node

    def loop_target(self, name: cst.Name) -> LoopTarget | None:
        """The `for` statement or comprehension clause that binds the loop variable `name` reads, when
        `name` is in its body; None when `name` is no loop variable there or the loop is outside the
        def, class or lambda `name` is in."""
        child: cst.CSTNode = name
        for ancestor in self.ancestors(name):
            if isinstance(ancestor, COMPREHENSIONS):
                found = _comprehension_target(ancestor, name.value)
                if found is not None:
                    return found
            elif isinstance(ancestor, cst.For) and child is ancestor.body:
                found = _loop_target(ancestor.target, ancestor.iter, name.value)
                if found is not None:
                    return found
            elif isinstance(ancestor, DEFERRED_BODIES):
                return None
            child = ancestor
        return None

    def assigned_values(self, name: cst.Name) -> list[cst.BaseExpression | None]:
        """Every value the variable `name` reads is assigned in the scope that binds it: plain assignments,
        the matching element of tuple unpacking (`major, minor = cap`), and None for each binding whose
        value is unknown (a `for`/`with` target, a lambda parameter or comprehension variable). Empty when
        `name` is no variable (an import, def or class) or is bound nowhere; a parameter's own value is not
        listed, only what the body assigns it."""
        _, shadowed = self._scope_for(name.value, name)
        if shadowed:
            return [None]
        binding = self.lookup(name.value, name)
        if binding is None or binding.kind != "value":
            return []
        return [*binding.values, *self.unpacked_values(binding.scope.node, name.value)]

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
        if _depth > MAX_DEPTH:
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
        if dotted is None or _depth > MAX_DEPTH:
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
        for _ in range(MAX_DEPTH):
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

    def static_text(self, node: cst.CSTNode, placeholder: str = " ") -> str | None:
        """The text of a string literal (or a name assigned one once), of an f-string with `placeholder`
        for each `{...}` field, or of a concatenation of these; else None."""
        if isinstance(node, cst.FormattedString):
            parts = node.parts
            return "".join(part.value if isinstance(part, cst.FormattedStringText) else placeholder for part in parts)
        if isinstance(node, cst.ConcatenatedString):
            left, right = self.static_text(node.left, placeholder), self.static_text(node.right, placeholder)
            return left + right if left is not None and right is not None else None
        return self.string_value(node)

    def unpacked_values(self, scope_node: ScopeNode, name: str) -> list[cst.BaseExpression | None]:
        """What `name` receives in one scope where the scope index keeps no value: for each tuple-target
        assignment (`major, minor = cap`) the matching element of a tuple value, else the whole value (a
        call returning a tuple); None for each `for`/`with` target (unknown). Nested defs, classes and
        lambdas are not looked into."""
        table = self._unpacked.get(scope_node)
        if table is None:
            table = _index_unpacking(scope_node)
            self._unpacked[scope_node] = table
        return table.get(name, [])

    def loop_values(self, name: cst.Name) -> list[cst.BaseExpression] | None:
        """The values the loop variable `name` takes (see `iterated_values`); None when `name` is no loop
        variable there."""
        target = self.loop_target(name)
        if target is None:
            return None
        return self.iterated_values(target.iterable, target.position)

    def iterated_values(self, iterable: cst.CSTNode, position: int | None = None) -> list[cst.BaseExpression]:
        """The elements of the literal list, tuple or set a loop iterates (or a name assigned one once),
        with `position`, the element at that index of each tuple item; `itertools.product(a, b)` gives
        the elements of its `position`-th argument. Empty when they are not written out."""
        resolved = self.single_value(iterable)
        if isinstance(resolved, cst.Call) and position is not None and self.call_name(resolved) == "itertools.product":
            argument = self.positional(resolved, position)
            return self.iterated_values(argument.value) if argument is not None else []
        if not isinstance(resolved, (cst.List, cst.Tuple, cst.Set)):
            return []
        values: list[cst.BaseExpression] = []
        for element in resolved.elements:
            item = element.value
            if position is None:
                values.append(item)
            elif isinstance(item, (cst.Tuple, cst.List)) and position < len(item.elements):
                values.append(item.elements[position].value)
        return values

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

    def keyword(self, call: cst.Call, name: str) -> cst.Arg | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def positional(self, call: cst.Call, index: int) -> cst.Arg | None:
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        return positional[index] if index < len(positional) else None

    @staticmethod
    def comparison_pairs(
        node: cst.Comparison,
    ) -> Iterator[tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression]]:
        """(left, operator, right) of each comparison in a chain: `a < b <= c` is `(a, <, b), (b, <=, c)`."""
        left = node.left
        for target in node.comparisons:
            yield left, target.operator, target.comparator
            left = target.comparator

    def local_function(self, name: cst.CSTNode) -> cst.FunctionDef | None:
        """The def of this file a name refers to (`helper` in `helper(x)`), else None."""
        if not isinstance(name, cst.Name):
            return None
        binding = self.lookup(name.value, name)
        if binding is None or binding.kind != "function" or not isinstance(binding.definition, cst.FunctionDef):
            return None
        return binding.definition

    def argument(self, call: cst.Call, keyword: str | None, position: int | None) -> cst.Arg | None:
        """The argument passed as `keyword=`, else the one at `position` (either may be None: no such way)."""
        found = self.keyword(call, keyword) if keyword is not None else None
        if found is None and position is not None:
            found = self.positional(call, position)
        return found


def _binds_in_expression(node: cst.CSTNode, child: cst.CSTNode, name: str) -> bool:
    """Does `node` (a lambda or comprehension) bind `name` for its part `child`?"""
    if isinstance(node, cst.Lambda):
        return child is node.body and name in parameter_names(node.params)
    if isinstance(node, COMPREHENSIONS):
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            if name in target_names(comp.target):
                return True
            comp = comp.inner_for_in
    return False


def _comprehension_target(comprehension: cst.CSTNode, name: str) -> LoopTarget | None:
    """The clause of a comprehension whose target binds `name`."""
    clause: cst.CompFor | None = comprehension.for_in  # type: ignore[attr-defined]
    while clause is not None:
        found = _loop_target(clause.target, clause.iter, name)
        if found is not None:
            return found
        clause = clause.inner_for_in
    return None


def _loop_target(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> LoopTarget | None:
    """`target` binds `name` itself or as one element of a flat tuple (`for a, name in ...`)."""
    if isinstance(target, cst.Name):
        return LoopTarget(iterable, None) if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for position, element in enumerate(target.elements):
            if isinstance(element.value, cst.Name) and element.value.value == name:
                return LoopTarget(iterable, position)
    return None


def _index_unpacking(scope_node: ScopeNode) -> dict[str, list[cst.BaseExpression | None]]:
    """`Semantic.unpacked_values` for every name of one scope."""
    table: dict[str, list[cst.BaseExpression | None]] = {}
    stack: list[cst.CSTNode] = [scope_node if isinstance(scope_node, cst.Module) else scope_node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                _record_unpacking(table, target.target, node.value)
            continue
        if isinstance(node, cst.For):
            _record_unknown(table, node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            _record_unknown(table, node.asname.name)
        if isinstance(node, (*DEFERRED_BODIES, cst.BaseExpression)):
            continue
        stack.extend(children(node))
    return table


def _record_unpacking(
    table: dict[str, list[cst.BaseExpression | None]], target: cst.BaseExpression, value: cst.BaseExpression
) -> None:
    if not isinstance(target, (cst.Tuple, cst.List)):
        return
    elements = target.elements
    parts = [part.value for part in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else None
    if parts is not None and len(parts) != len(elements):
        parts = None
    for index, element in enumerate(elements):
        if isinstance(element, cst.StarredElement) or not isinstance(element.value, cst.Name):
            _record_unknown(table, element.value)
            continue
        table.setdefault(element.value.value, []).append(parts[index] if parts is not None else value)


def _record_unknown(table: dict[str, list[cst.BaseExpression | None]], target: cst.BaseExpression) -> None:
    """Every name in a target whose value cannot be followed (`for (major, minor), ptx in archs:`)."""
    for name in target_names(target):
        table.setdefault(name, []).append(None)
