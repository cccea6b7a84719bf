"""Bindings per scope (imports, simple assignments, defs) and qualified names through import aliases.

Scopes are indexed lazily, statement by statement (expressions are never scanned), so a file that no
rule asks about pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import libcst as cst

ScopeNode = cst.Module | cst.FunctionDef | cst.ClassDef


@dataclass
class Scope:
    node: ScopeNode
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    values: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    # Names bound in ways whose value is not known (parameters, loop/with/except targets, unpacking,
    # `+=`): a name here is never "assigned once", and it hides same-named bindings of outer scopes.
    opaque: set[str] = field(default_factory=set)
    # Names imported from different places in this scope (`try: import a as x` / `except: import b as x`).
    ambiguous_imports: set[str] = field(default_factory=set)
    # Classes only: `self.<attr> = value` in the class's methods (attr -> values), and attrs set otherwise.
    attributes: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    opaque_attributes: set[str] = field(default_factory=set)


def dotted_name(node: cst.CSTNode) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def module_name_of(node: cst.CSTNode) -> str:
    """`a.b` of an ImportFrom's module expression (Name or Attribute)."""
    return dotted_name(node) or ""


def index_scope(node: ScopeNode, package: str | None) -> Scope:
    """Collect the bindings made directly in `node`'s body (not in nested defs or classes)."""
    scope = Scope(node)
    if isinstance(node, cst.Module):
        _index_block(scope, node.body, package)
        _add_global_assignments(scope, node, package)
        return scope
    if isinstance(node, cst.FunctionDef):
        scope.opaque.update(parameter_names(node.params))
    _index_block(scope, body_statements(node), package)
    if isinstance(node, cst.FunctionDef):
        _drop_names(scope, declared_names(node, cst.Global) | declared_names(node, cst.Nonlocal))
    else:
        _index_instance_attributes(scope, node)
    return scope


def body_statements(node: cst.FunctionDef | cst.ClassDef) -> list[cst.CSTNode]:
    """The statements of a def's or class's body (a one-line body is one statement)."""
    return list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else [node.body]


def parameter_names(params: cst.Parameters) -> list[str]:
    found = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star.name.value)
    return found


def _index_block(scope: Scope, statements: Iterable[cst.CSTNode], package: str | None) -> None:
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                _index_small(scope, small, package)
        elif isinstance(statement, cst.FunctionDef):
            scope.functions[statement.name.value] = statement
        elif isinstance(statement, cst.ClassDef):
            scope.classes[statement.name.value] = statement
        else:
            scope.opaque.update(_compound_targets(statement))
            for block in nested_blocks(statement):
                _index_block(scope, block, package)


def nested_blocks(statement: cst.CSTNode) -> list[list[cst.CSTNode]]:
    """The statement lists inside a compound statement (if/try/with/for/while/match), in order."""
    blocks: list[list[cst.CSTNode]] = []
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock):
        blocks.append(list(body.body))
    elif isinstance(body, cst.SimpleStatementSuite):
        blocks.append([body])
    for handler in (*(getattr(statement, "handlers", ()) or ()), *(getattr(statement, "cases", ()) or ())):
        blocks.extend(nested_blocks(handler))
    for name in ("orelse", "finalbody"):
        nested = getattr(statement, name, None)
        if isinstance(nested, cst.If):
            blocks.append([nested])
        elif nested is not None:
            blocks.extend(nested_blocks(nested))
    return blocks


def _compound_targets(statement: cst.CSTNode) -> Iterator[str]:
    """Names a compound statement binds to values the analysis cannot know (`for x in`, `with ... as x`)."""
    if isinstance(statement, cst.For):
        yield from target_names(statement.target)
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None:
                yield from target_names(item.asname.name)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        for handler in statement.handlers:
            if handler.name is not None:
                yield from target_names(handler.name.name)


def target_names(target: cst.CSTNode) -> Iterator[str]:
    """Every name bound by an assignment target (`a`, `a, (b, *c)`), attributes and subscripts excluded."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _index_small(scope: Scope, small: cst.BaseSmallStatement, package: str | None) -> None:
    if isinstance(small, cst.Import):
        for alias in small.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                _add_import(scope, alias.asname.name.value, full)
            else:
                top = full.split(".")[0]
                _add_import(scope, top, top)
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        base = absolute_module(small, package)
        for alias in small.names:
            imported = dotted_name(alias.name) or ""
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            _add_import(scope, local, f"{base}.{imported}" if base else imported)
    elif isinstance(small, (cst.Assign, cst.AnnAssign)):
        if small.value is None:
            return  # `x: int` declares, it does not bind
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        for target in targets:
            if isinstance(target, cst.Name):
                scope.values.setdefault(target.value, []).append(small.value)
            else:
                scope.opaque.update(target_names(target))  # unpacking: each name gets an unknown part
    elif isinstance(small, cst.AugAssign):
        scope.opaque.update(target_names(small.target))  # `x += v` is not `x = v`


def _add_import(scope: Scope, local: str, qualified: str) -> None:
    previous = scope.imports.get(local)
    if previous is not None and previous != qualified:
        scope.ambiguous_imports.add(local)
    scope.imports[local] = qualified


def _drop_names(scope: Scope, names: set[str]) -> None:
    """`global x` / `nonlocal x`: assignments in this function bind the outer name, not a local one."""
    for name in names:
        for table in (scope.imports, scope.values, scope.functions, scope.classes):
            table.pop(name, None)
        scope.opaque.discard(name)
        scope.ambiguous_imports.discard(name)


def declared_names(function: cst.FunctionDef, kind: type[cst.Global] | type[cst.Nonlocal]) -> set[str]:
    """Names a function declares `global` (or `nonlocal`), anywhere in its own body."""
    found: set[str] = set()
    for small in _own_small_statements(function.body):
        if isinstance(small, kind):
            found.update(item.name.value for item in small.names)
    return found


def _own_small_statements(body: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement]:
    """The small statements of a def's or class's body, nested blocks included, nested defs excluded."""
    stack: list[cst.CSTNode] = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from statement.body
        elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            for block in nested_blocks(statement):
                stack.extend(block)


def _all_functions(statements: Iterable[cst.CSTNode]) -> Iterator[cst.FunctionDef]:
    """Every def in a module, at any depth (methods and nested defs included)."""
    stack = list(statements)
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(statement, cst.FunctionDef):
                yield statement
            if isinstance(statement.body, cst.IndentedBlock):
                stack.extend(statement.body.body)
        elif not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for block in nested_blocks(statement):
                stack.extend(block)


def _add_global_assignments(scope: Scope, module: cst.Module, package: str | None) -> None:
    """`def init(): global MODE; MODE = ...` assigns the module's MODE too."""
    for function in _all_functions(module.body):
        names = declared_names(function, cst.Global)
        if not names:
            continue
        local = Scope(function)
        _index_block(local, body_statements(function), package)
        for name in names:
            scope.values.setdefault(name, []).extend(local.values.get(name, []))
            if name in local.opaque or name in local.imports or name in local.functions or name in local.classes:
                scope.opaque.add(name)
            if not scope.values[name]:
                del scope.values[name]


def _index_instance_attributes(scope: Scope, cls: cst.ClassDef) -> None:
    """`self.attr = value` in the class's methods, so `self.attr` can be read like a class attribute."""
    for method in scope.functions.values():
        params = [*method.params.posonly_params, *method.params.params]
        if not params:
            continue
        receiver = params[0].name.value
        for small in _own_small_statements(method.body):
            _index_attribute_assignment(scope, small, receiver)


def _index_attribute_assignment(scope: Scope, small: cst.BaseSmallStatement, receiver: str) -> None:
    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        for target in targets:
            attribute = _receiver_attribute(target, receiver)
            if attribute is not None:
                scope.attributes.setdefault(attribute, []).append(small.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                scope.opaque_attributes.update(_receiver_attributes(target, receiver))
    elif isinstance(small, cst.AugAssign):
        attribute = _receiver_attribute(small.target, receiver)
        if attribute is not None:
            scope.opaque_attributes.add(attribute)


def _receiver_attribute(target: cst.CSTNode, receiver: str) -> str | None:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == receiver:
        return target.attr.value
    return None


def _receiver_attributes(target: cst.Tuple | cst.List, receiver: str) -> Iterator[str]:
    for element in target.elements:
        attribute = _receiver_attribute(element.value, receiver)
        if attribute is not None:
            yield attribute


def absolute_module(node: cst.ImportFrom, package: str | None) -> str:
    """The absolute module an ImportFrom reads from (relative imports resolved against `package`)."""
    module = module_name_of(node.module) if node.module is not None else ""
    level = len(node.relative)
    if level == 0:
        return module
    if package is None:
        return "." * level + module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return "." * level + module
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))
