"""What a Python file's names mean: parents, scopes, import aliases, qualified names, simple values."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from rocmlint.python.scopes import (
    DEFS,
    FUNCTION_DEFS,
    FunctionNode,
    Scope,
    ScopeNode,
    dotted_name,
    index_scope,
    may_declare_names,
    parameter_names,
    positional_parameters,
    target_names,
)
from rocmlint.python.tree import children
from rocmlint.source import split_lines

# The one depth policy of the Python front end: how many steps (a name, an arm, an operand, an element)
# the value tracer (values.py) and this model's own lookups (qualified names, single values) follow.
MAX_DEPTH = 8
# Forward, where a value goes (flow.py, `Values.destination` walks): how many variables it is followed
# through. Each read may be another variable's value, so the walk fans out and stays short.
MAX_HOPS = 3

# The comprehensions and generator expressions (their own scope; the one tuple).
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Bodies that run later, in a scope of their own: a walk out from a node stops at them (the one tuple; what
# a loop variable holds there is not known).
DEFERRED_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")


@dataclass(frozen=True)
class Binding:
    """What a name is bound to in the scope that defines it."""

    kind: str  # "import", "value", "function", "class"
    scope: Scope
    qualified: str | None = None  # for imports
    values: tuple[ast.expr, ...] = ()
    definition: FunctionNode | ast.ClassDef | None = None
    # Also bound where the value is unknown (a parameter, loop target, `+=`, unpacking): a "value"
    # binding with `opaque` set never stands for one expression.
    opaque: bool = False

    @property
    def single(self) -> ast.expr | None:
        """The one expression a value binding stands for, if it has exactly one and nothing else."""
        if self.kind == "value" and not self.opaque and len(self.values) == 1:
            return self.values[0]
        return None


@dataclass(frozen=True)
class LoopTarget:
    """Where a loop variable gets its values: the iterable of the `for` (or comprehension clause) that
    binds it, and its index in a tuple target (`for block, warps in pairs`), None when the target is
    the name itself."""

    iterable: ast.expr
    position: int | None


class Semantic:
    def __init__(self, module: ast.Module, package: str | None, source_text: str = "") -> None:
        self.module = module
        self.package = package
        self.source_text = source_text
        self.parents: dict[ast.AST, ast.AST] = {}
        # Every Name and Attribute in the order they are written, recorded by the walk (tree.walk).
        self.mentions: list[ast.Name | ast.Attribute] = []
        self._scopes: dict[ScopeNode, Scope] = {}
        self._unpacked: dict[ScopeNode, dict[str, list[ast.expr | None]]] = {}
        self._line_starts: list[int] | None = None
        self._qualified_names: dict[ast.AST, str | None] = {}
        self._switches_off_by_default: frozenset[str] | None = None
        self._statement_scopes: dict[ast.stmt, ScopeNode] = {}  # `_statement_scope`
        # Whether the text may hold `global`/`nonlocal` statements (no text: it may).
        self._declarations = not source_text or may_declare_names(source_text)

    # --- tree -----------------------------------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def descendants(self, node: ast.AST) -> Iterator[ast.AST]:
        """`node` and every node below it, depth first."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(children(current))

    def is_within(self, node: ast.AST, container: ast.AST) -> bool:
        """Whether `node` is `container` or below it."""
        return node is container or any(ancestor is container for ancestor in self.ancestors(node))

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding `node` (itself when it is one)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(current)
        return current

    def block_of(self, statement: ast.stmt) -> list[ast.stmt]:
        """The statement list that holds `statement` (its parent's body, orelse, finalbody or handlers)."""
        owner = self.parents.get(statement)
        if owner is None:
            return self.module.body
        for field_name in _BLOCK_FIELDS:
            block = getattr(owner, field_name, None)
            if isinstance(block, list) and any(item is statement for item in block):
                return block
        return [statement]

    def if_tests_taken(self, node: ast.AST) -> Iterator[ast.expr]:
        """The tests of the `if` statements `node` runs under because they held (it sits in their body,
        not their `else`), innermost first."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.If) and _in_list(ancestor.body, child):
                yield ancestor.test
            child = ancestor

    def switches_off_by_default(self) -> frozenset[str]:
        """The destinations of this file's `add_argument("--x", action="store_true")` command-line switches
        that stay off unless given (no truthy `default=`): options a user has to ask for."""
        if self._switches_off_by_default is None:
            self._switches_off_by_default = frozenset(_switch_destinations(self.module))
        return self._switches_off_by_default

    def is_elif(self, node: ast.If) -> bool:
        """Whether an `if` node is written `elif` (the only statement of its parent's `orelse`)."""
        owner = self.parents.get(node)
        if not isinstance(owner, ast.If) or len(owner.orelse) != 1 or owner.orelse[0] is not node:
            return False
        return self._text_at(node.lineno, node.col_offset, 4) == "elif"

    def _text_at(self, line: int, byte_column: int, length: int) -> str:
        if self._line_starts is None:
            starts, total = [0], 0
            for text_line in split_lines(self.source_text):
                total += len(text_line)
                starts.append(total)
            self._line_starts = starts
        if line > len(self._line_starts) - 1:
            return ""
        start = self._line_starts[line - 1]
        text_line = self.source_text[start : self._line_starts[line]]
        prefix = text_line.encode("utf-8")[:byte_column].decode("utf-8", errors="replace")
        return text_line[len(prefix) : len(prefix) + length]

    def enclosing_scope_node(self, node: ast.AST) -> ScopeNode:
        """The def, class or module whose body contains `node` (a def's decorators, parameters and bases
        belong outside)."""
        child = node
        while not isinstance(child, ast.stmt):  # no def's body holds it directly: only a statement can be there
            parent = self.parents.get(child)
            if parent is None:
                return self.module
            child = parent
        return self._statement_scope(child)

    def _statement_scope(self, statement: ast.stmt) -> ScopeNode:
        """`enclosing_scope_node` of a statement, remembered: every name looked up below it asks the same walk up
        (above a statement lie only statements, handlers, defs and classes, no lambda or comprehension)."""
        scope = self._statement_scopes.get(statement)
        if scope is None:
            scope = self.module
            child: ast.AST = statement
            for ancestor in self.ancestors(statement):
                if isinstance(ancestor, DEFS) and _in_body(ancestor, child):
                    scope = ancestor
                    break
                child = ancestor
            self._statement_scopes[statement] = scope
        return scope

    def _scope_for(self, name: str, at: ast.AST) -> tuple[ScopeNode, bool]:
        """`enclosing_scope_node(at)`, and whether a lambda or comprehension on the way binds `name` (one can only
        be below the innermost statement holding `at`)."""
        child = at
        while not isinstance(child, ast.stmt):
            ancestor = self.parents.get(child)
            if ancestor is None:
                return self.module, False
            if _binds_in_expression(ancestor, child, name):
                return self.enclosing_scope_node(ancestor), True
            child = ancestor
        return self._statement_scope(child), False

    def is_module_level(self, node: ast.AST) -> bool:
        return self.enclosing_scope_node(node) is self.module

    def scope(self, node: ScopeNode) -> Scope:
        scope = self._scopes.get(node)
        if scope is None:
            scope = index_scope(node, self.package, self._declarations)
            self._scopes[node] = scope
        return scope

    # --- names ----------------------------------------------------------------------------------
    def lookup(self, name: str, at: ast.AST) -> Binding | None:
        """Resolve `name` as Python would from `at`: enclosing functions, then the module.

        Class bodies are only searched when `at` is directly inside them (methods do not see them). A
        lambda parameter or comprehension variable is a binding whose value is unknown.
        """
        scope_node, shadowed = self._scope_for(name, at)
        if shadowed:
            return Binding("value", self.scope(scope_node), opaque=True)
        first = True
        while True:
            if first or not isinstance(scope_node, ast.ClassDef):
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

    def is_reference(self, name: ast.AST) -> bool:
        """Whether `name` refers to a variable. In the tree only `ast.Name` nodes do: attribute names,
        keyword arguments, defined names and imported names are plain strings."""
        return isinstance(name, ast.Name)

    def is_store(self, node: ast.AST) -> bool:
        """Whether `node` (a name, attribute or subscript) is written rather than read: the target of an
        assignment (`=`, `+=`, annotated), of a `for` or comprehension clause, or of `del`."""
        return isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))

    def name_reads(self, root: ast.AST, name: str) -> Iterator[ast.Name]:
        """The names spelled `name` under `root` that read a variable, whichever binding they resolve to."""
        for node in self.descendants(root):
            if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load:
                yield node

    def reads(self, name: str, binding: Binding) -> list[ast.Name]:
        """The reads of `name` that resolve to the scope of `binding` (nested scopes that do not rebind
        it included)."""
        scope_node = binding.scope.node
        return [read for read in self.name_reads(scope_node, name) if self._resolves_in(read, scope_node)]

    def _resolves_in(self, name: ast.Name, scope_node: ScopeNode) -> bool:
        binding = self.lookup(name.id, name)
        return binding is not None and binding.scope.node is scope_node

    def loop_target(self, name: ast.Name) -> LoopTarget | None:
        """The `for` statement or comprehension clause that binds the loop variable `name` reads, when
        `name` is in its body; None when `name` is no loop variable there or the loop is outside the
        def, class or lambda `name` is in."""
        child: ast.AST = name
        for ancestor in self.ancestors(name):
            if isinstance(ancestor, COMPREHENSIONS):
                found = _comprehension_target(ancestor, name.id)
                if found is not None:
                    return found
            elif isinstance(ancestor, (ast.For, ast.AsyncFor)) and _in_list(ancestor.body, child):
                found = _loop_target(ancestor.target, ancestor.iter, name.id)
                if found is not None:
                    return found
            elif isinstance(ancestor, DEFERRED_BODIES):
                return None
            child = ancestor
        return None

    def assigned_values(self, name: ast.Name) -> list[ast.expr | None]:
        """Every value the variable `name` reads is assigned in the scope that binds it: plain assignments,
        the matching element of tuple unpacking (`major, minor = cap`), and None for each binding whose
        value is unknown (a `for`/`with` target, a lambda parameter or comprehension variable). Empty when
        `name` is no variable (an import, def or class) or is bound nowhere; a parameter's own value is not
        listed, only what the body assigns it."""
        _, shadowed = self._scope_for(name.id, name)
        if shadowed:
            return [None]
        binding = self.lookup(name.id, name)
        if binding is None or binding.kind != "value":
            return []
        return [*binding.values, *self.unpacked_values(binding.scope.node, name.id)]

    # --- classes --------------------------------------------------------------------------------
    def receiver_class(self, expr: ast.Attribute) -> ast.ClassDef | None:
        """The class `expr` reads an attribute of: `self.x`/`cls.x` (a method's first parameter) or
        `Name.x` for a class defined in this file."""
        owner = expr.value
        if not isinstance(owner, ast.Name):
            return None
        binding = self.lookup(owner.id, expr)
        if binding is not None and binding.kind == "class" and isinstance(binding.definition, ast.ClassDef):
            return binding.definition
        method = self._binding_function(owner.id, expr)
        if method is None:
            return None
        positional = positional_parameters(method.args)
        if not positional or positional[0].arg != owner.id:
            return None
        cls = self.enclosing_scope_node(method)
        return cls if isinstance(cls, ast.ClassDef) else None

    def _binding_function(self, name: str, at: ast.AST) -> FunctionNode | None:
        """The def whose parameter `name` is, seen from `at` (closures inside a method see its `self`)."""
        scope_node = self.enclosing_scope_node(at)
        while isinstance(scope_node, FUNCTION_DEFS):
            if name in parameter_names(scope_node.args):
                return scope_node
            if self._lookup_in(self.scope(scope_node), name) is not None:
                return None  # rebound locally
            scope_node = self.enclosing_scope_node(scope_node)
        return None

    def member(self, cls: ast.ClassDef, name: str, _depth: int = 0) -> Binding | None:
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
            if isinstance(base, ast.Name):
                found = self.lookup(base.id, cls)
                if found is not None and found.kind == "class" and isinstance(found.definition, ast.ClassDef):
                    inherited = self.member(found.definition, name, _depth + 1)
                    if inherited is not None:
                        return inherited
        return None

    def attribute_binding(self, cls: ast.ClassDef, name: str) -> Binding | None:
        """`member` of `cls`, with a class attribute's value and the `self.name = ...` of its methods together
        (a class default an instance overrides has both)."""
        binding = self.member(cls, name)
        scope = binding.scope if binding is not None else None
        if binding is None or binding.kind != "value" or scope is None or name not in scope.values:
            return binding
        overrides = tuple(scope.attributes.get(name, ()))
        opaque = binding.opaque or name in scope.opaque_attributes
        return replace(binding, values=(*binding.values, *overrides), opaque=opaque)

    def qualified_name(self, node: ast.AST, _depth: int = 0) -> str | None:
        """`torch.backends.cuda.matmul.allow_tf32` for `c.matmul.allow_tf32` after
        `from torch.backends import cuda as c`; names bound to a dotted value are followed too.

        A name that is bound nowhere is taken literally (`torch.compile` without `import torch`).
        Remembered per node: several rules ask about the same callee.
        """
        if _depth == 0:
            if node not in self._qualified_names:
                self._qualified_names[node] = self._qualified_name(node, 0)
            return self._qualified_names[node]
        return self._qualified_name(node, _depth)

    def _qualified_name(self, node: ast.AST, _depth: int) -> str | None:
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

    def call_name(self, call: ast.Call) -> str | None:
        return self.qualified_name(call.func)

    def single_value(self, node: ast.AST, _depth: int = 0) -> ast.expr | None:
        """The expression a Name stands for when it is assigned exactly once in its scope; else the node."""
        current = node
        for _ in range(MAX_DEPTH):
            if not isinstance(current, ast.Name):
                break
            binding = self.lookup(current.id, current)
            if binding is None or binding.single is None:
                return current
            current = binding.single
        return current if isinstance(current, ast.expr) else None

    def string_value(self, node: ast.AST) -> str | None:
        """The value of a string literal (or a name assigned one once), else None."""
        value = self.single_value(node)
        if isinstance(value, ast.Constant) and type(value.value) is str:
            return value.value
        return None

    def static_text(self, node: ast.AST, placeholder: str = " ") -> str | None:
        """The text of a string literal (or a name assigned one once), of an f-string with `placeholder`
        for each `{...}` field, or of a concatenation of these; else None."""
        if isinstance(node, ast.JoinedStr):
            return "".join(
                part.value if isinstance(part, ast.Constant) and type(part.value) is str else placeholder
                for part in node.values
            )
        return self.string_value(node)

    def known_values(self, binding: Binding, name: str) -> tuple[ast.expr, ...] | None:
        """Every value a variable binding is assigned when all are known: its plain assignments and its parts
        of written-out tuple assignments (`IS_ROCM, BACKEND = True, "rocm"`); None when it is also bound
        where its value is unknown (a parameter, a loop target, `+=`, `a, b = f()`)."""
        if not binding.opaque:
            return binding.values
        scope = binding.scope
        if name not in scope.unpacked or name in scope.unknown:
            return None
        parts = self.unpacked_values(scope.node, name)
        known = tuple(part for part in parts if part is not None and isinstance(self.parent(part), ast.Tuple))
        return (*binding.values, *known) if parts and len(known) == len(parts) else None

    def unpacked_values(self, scope_node: ScopeNode, name: str) -> list[ast.expr | None]:
        """What `name` receives in one scope where the scope index keeps no value: for each tuple-target
        assignment (`major, minor = cap`) the matching element of a tuple value, else the whole value (a
        call returning a tuple); None for each `for`/`with` target (unknown). Nested defs, classes and
        lambdas are not looked into."""
        table = self._unpacked.get(scope_node)
        if table is None:
            table = _index_unpacking(scope_node)
            self._unpacked[scope_node] = table
        return table.get(name, [])

    def loop_values(self, name: ast.Name) -> list[ast.expr] | None:
        """The values the loop variable `name` takes (see `iterated_values`); None when `name` is no loop
        variable there."""
        target = self.loop_target(name)
        if target is None:
            return None
        return self.iterated_values(target.iterable, target.position)

    def iterated_values(self, iterable: ast.AST, position: int | None = None) -> list[ast.expr]:
        """The elements of the literal list, tuple or set a loop iterates (or a name assigned one once),
        with `position`, the element at that index of each tuple item; `itertools.product(a, b)` gives
        the elements of its `position`-th argument. Empty when they are not written out."""
        resolved = self.single_value(iterable)
        if isinstance(resolved, ast.Call) and position is not None and self.call_name(resolved) == "itertools.product":
            argument = self.positional(resolved, position)
            return self.iterated_values(argument) if argument is not None else []
        if not isinstance(resolved, (ast.List, ast.Tuple, ast.Set)):
            return []
        values: list[ast.expr] = []
        for item in resolved.elts:
            if position is None:
                values.append(item.value if isinstance(item, ast.Starred) else item)
            elif isinstance(item, (ast.Tuple, ast.List)) and position < len(item.elts):
                element = item.elts[position]
                values.append(element.value if isinstance(element, ast.Starred) else element)
        return values

    def dict_entries(self, node: ast.AST) -> dict[str, ast.expr]:
        """String-keyed entries of a dict literal or `dict(k=v)` call (or a name assigned one once)."""
        value = self.single_value(node)
        entries: dict[str, ast.expr] = {}
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if key is not None:
                    text = self.string_value(key)
                    if text is not None:
                        entries[text] = item
        elif isinstance(value, ast.Call) and self.qualified_name(value.func) == "dict":
            for keyword in value.keywords:
                if keyword.arg is not None:
                    entries[keyword.arg] = keyword.value
        return entries

    def dict_key_of(self, value: ast.AST) -> ast.expr | None:
        """The key `value` is written under in the dict literal holding it (None: no dict holds it, or it is
        unpacked there as `**value`)."""
        owner = self.parents.get(value)
        if not isinstance(owner, ast.Dict):
            return None
        return next((key for key, item in zip(owner.keys, owner.values, strict=True) if item is value), None)

    def keyword(self, call: ast.Call, name: str) -> ast.keyword | None:
        for keyword in call.keywords:
            if keyword.arg == name:
                return keyword
        return None

    def positional(self, call: ast.Call, index: int) -> ast.expr | None:
        positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        return positional[index] if index < len(positional) else None

    @staticmethod
    def comparison_pairs(node: ast.Compare) -> Iterator[tuple[ast.expr, ast.cmpop, ast.expr]]:
        """(left, operator, right) of each comparison in a chain: `a < b <= c` is `(a, <, b), (b, <=, c)`."""
        left = node.left
        for operator, right in zip(node.ops, node.comparators, strict=True):
            yield left, operator, right
            left = right

    def local_function(self, name: ast.AST) -> FunctionNode | None:
        """The def of this file a name refers to (`helper` in `helper(x)`), else None."""
        if not isinstance(name, ast.Name):
            return None
        binding = self.lookup(name.id, name)
        if binding is None or binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
            return None
        return binding.definition

    def called_def(self, func: ast.AST) -> FunctionNode | None:
        """The def of this file a call's callee names: a function (`helper`, see `local_function`) or a method
        of a class of this file called on its instance or class (`self.helper`, `cls.helper`, `Class.helper`)."""
        if not isinstance(func, ast.Attribute):
            return self.local_function(func)
        cls = self.receiver_class(func)
        binding = self.member(cls, func.attr) if cls is not None else None
        if binding is None or binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
            return None
        return binding.definition

    def argument(self, call: ast.Call, keyword: str | None, position: int | None) -> ast.expr | None:
        """The value passed as `keyword=`, else the one at `position` (either may be None: no such way)."""
        found = self.keyword(call, keyword) if keyword is not None else None
        if found is not None:
            return found.value
        return self.positional(call, position) if position is not None else None


def _switch_destinations(module: ast.Module) -> Iterator[str]:
    for node in ast.walk(module):
        if (
            not isinstance(node, ast.Call)
            or not isinstance(node.func, ast.Attribute)
            or node.func.attr != "add_argument"
        ):
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        action, default, dest = keywords.get("action"), keywords.get("default"), keywords.get("dest")
        if not isinstance(action, ast.Constant) or action.value != "store_true":
            continue
        if default is not None and not (isinstance(default, ast.Constant) and not default.value):
            continue
        if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
            yield dest.value
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long_flag = next((flag for flag in flags if flag.startswith("--")), None)
        if long_flag is not None:
            yield long_flag[2:].replace("-", "_")


def _in_list(items: list[ast.stmt], node: ast.AST) -> bool:
    return any(item is node for item in items)


def _in_body(definition: ast.AST, child: ast.AST) -> bool:
    """Whether `child` (a direct child of a def or class) is one of its body's statements: the body is the
    only field of a def or class that holds statements."""
    return isinstance(child, ast.stmt)


def _binds_in_expression(node: ast.AST, child: ast.AST, name: str) -> bool:
    """Does `node` (a lambda or comprehension) bind `name` for its part `child`?"""
    if isinstance(node, ast.Lambda):
        return child is node.body and name in parameter_names(node.args)
    if isinstance(node, COMPREHENSIONS):
        return any(name in target_names(clause.target) for clause in node.generators)
    return False


def _comprehension_target(comprehension: ast.AST, name: str) -> LoopTarget | None:
    """The clause of a comprehension whose target binds `name`."""
    for clause in comprehension.generators:  # type: ignore[attr-defined]
        found = _loop_target(clause.target, clause.iter, name)
        if found is not None:
            return found
    return None


def _loop_target(target: ast.expr, iterable: ast.expr, name: str) -> LoopTarget | None:
    """`target` binds `name` itself or as one element of a flat tuple (`for a, name in ...`)."""
    if isinstance(target, ast.Name):
        return LoopTarget(iterable, None) if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for position, element in enumerate(target.elts):
            if isinstance(element, ast.Name) and element.id == name:
                return LoopTarget(iterable, position)
    return None


def _index_unpacking(scope_node: ScopeNode) -> dict[str, list[ast.expr | None]]:
    """`Semantic.unpacked_values` for every name of one scope."""
    table: dict[str, list[ast.expr | None]] = {}
    stack: list[ast.AST] = list(scope_node.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _record_unpacking(table, target, node.value)
            continue
        if isinstance(node, (ast.For, ast.AsyncFor)):
            _record_unknown(table, node.target)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _record_unknown(table, node.optional_vars)
        if isinstance(node, (*DEFERRED_BODIES, ast.expr)):
            continue
        stack.extend(children(node))
    return table


def _record_unpacking(table: dict[str, list[ast.expr | None]], target: ast.expr, value: ast.expr) -> None:
    if not isinstance(target, (ast.Tuple, ast.List)):
        return
    elements = target.elts
    parts = list(value.elts) if isinstance(value, (ast.Tuple, ast.List)) else None
    if parts is not None and len(parts) != len(elements):
        parts = None
    for index, element in enumerate(elements):
        if not isinstance(element, ast.Name):
            _record_unknown(table, element.value if isinstance(element, ast.Starred) else element)
            continue
        table.setdefault(element.id, []).append(parts[index] if parts is not None else value)


def _record_unknown(table: dict[str, list[ast.expr | None]], target: ast.AST) -> None:
    """Every name in a target whose value cannot be followed (`for (major, minor), ptx in archs:`)."""
    for name in target_names(target):
        table.setdefault(name, []).append(None)
