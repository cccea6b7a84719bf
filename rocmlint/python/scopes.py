"""Bindings per scope (imports, simple assignments, defs) and qualified names through import aliases.

Scopes are indexed lazily, statement by statement (expressions are never scanned), so a file that no
rule asks about pays nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from rocmlint.python.tree import children

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
TRY_STATEMENTS: tuple[type[ast.stmt], ...] = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


@dataclass
class Scope:
    node: ScopeNode
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    values: dict[str, list[ast.expr]] = field(default_factory=dict)
    functions: dict[str, FunctionNode] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    # Names bound in ways whose value is not known (parameters, loop/with/except targets, unpacking,
    # `+=`): a name here is never "assigned once", and it hides same-named bindings of outer scopes.
    opaque: set[str] = field(default_factory=set)
    # Why names are opaque: tuple unpacking binds them (`IS_ROCM, NAME = True, "rocm"`, whose parts
    # `Semantic.unpacked_values` knows), or they are bound where their value is unknown.
    unpacked: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    # Names imported from different places in this scope (`try: import a as x` / `except: import b as x`).
    ambiguous_imports: set[str] = field(default_factory=set)
    # Classes only: `self.<attr> = value` in the class's methods (attr -> values), and attrs set otherwise.
    attributes: dict[str, list[ast.expr]] = field(default_factory=dict)
    opaque_attributes: set[str] = field(default_factory=set)


def tests_main_module(test: ast.expr) -> bool:
    """`__name__ == "__main__"`: true when the file runs as a script, not imported."""
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    operands = (test.left, test.comparators[0])
    named = any(isinstance(operand, ast.Name) and operand.id == "__name__" for operand in operands)
    return named and any(isinstance(operand, ast.Constant) and operand.value == "__main__" for operand in operands)


def is_none(node: ast.AST) -> bool:
    """The literal `None`."""
    return isinstance(node, ast.Constant) and node.value is None


def dotted_name(node: ast.AST | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def index_scope(node: ScopeNode, package: str | None, declarations: bool = True) -> Scope:
    """Collect the bindings made directly in `node`'s body (not in nested defs or classes). `declarations`: the
    file may hold `global` or `nonlocal` statements (False when `may_declare_names` says its text cannot: then no
    def's body needs searching for them)."""
    scope = Scope(node)
    if isinstance(node, ast.Module):
        _index_block(scope, node.body, package)
        if declarations:
            _add_global_assignments(scope, node, package)
        return scope
    if isinstance(node, FUNCTION_DEFS):
        _add_unknown(scope, parameter_names(node.args))
    _index_block(scope, node.body, package)
    if isinstance(node, FUNCTION_DEFS):
        if declarations:
            _drop_names(scope, declared_names(node, (ast.Global, ast.Nonlocal)))
    else:
        _index_instance_attributes(scope, node)
    return scope


def may_declare_names(text: str) -> bool:
    """Whether `text`, a module that parses, may hold a `global` or `nonlocal` statement: one of the words where a
    statement starts (at the start of a line after its indentation, after a `;` or a compound statement's `:`)
    and not the start of a longer name. Most files that spell the word do so in names and prose (`global_rank`,
    "the global scale"), and then no def's body needs searching."""
    return any(_statement_word_at(text, word) for word in ("global", "nonlocal"))


def _statement_word_at(text: str, word: str) -> bool:
    position = text.find(word)
    while position != -1:
        after = text[position + len(word) : position + len(word) + 1]
        if not (after.isalnum() or after == "_") and _starts_a_statement(text, position):
            return True
        position = text.find(word, position + 1)
    return False


def _starts_a_statement(text: str, position: int) -> bool:
    """Whether only spaces separate `position` from the text's start, a line break (a continued line's too), a `;`
    or a `:` before it."""
    position -= 1
    while position >= 0 and text[position] in " \t\f":
        position -= 1
    return position < 0 or text[position] in "\n\r;:"


def parameter_names(params: ast.arguments) -> list[str]:
    found = [p.arg for p in (*params.posonlyargs, *params.args, *params.kwonlyargs)]
    for star in (params.vararg, params.kwarg):
        if star is not None:
            found.append(star.arg)
    return found


def positional_parameters(params: ast.arguments) -> list[ast.arg]:
    return [*params.posonlyargs, *params.args]


def _index_block(scope: Scope, statements: Iterable[ast.stmt], package: str | None) -> None:
    for statement in statements:
        if isinstance(statement, FUNCTION_DEFS):
            scope.functions[statement.name] = statement
        elif isinstance(statement, ast.ClassDef):
            scope.classes[statement.name] = statement
        elif isinstance(statement, BLOCK_STATEMENTS):
            _add_unknown(scope, _compound_targets(statement))
            for block in nested_blocks(statement):
                _index_block(scope, block, package)
        else:
            _index_small(scope, statement, package)


# Statements that hold blocks of statements (a def or class holds a scope of its own: COMPOUND_STATEMENTS
# counts them too). Neither kind shares its line with another statement of its block.
BLOCK_STATEMENTS: tuple[type[ast.stmt], ...] = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Match,
    *TRY_STATEMENTS,
)
COMPOUND_STATEMENTS: tuple[type[ast.stmt], ...] = (*BLOCK_STATEMENTS, *DEFS)


def last_line(block: Sequence[ast.stmt]) -> Sequence[ast.stmt]:
    """The statements on a block's last line: the last statement and those `;` joins to it (`log(); return`),
    its last step, decided together."""
    start = len(block) - 1
    while start > 0 and block[start - 1].end_lineno == block[start].lineno:
        start -= 1
    return block[max(start, 0) :]


def nested_blocks(statement: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists inside a compound statement (if/try/with/for/while/match), in order."""
    blocks: list[list[ast.stmt]] = []
    body = getattr(statement, "body", None)
    if isinstance(body, list):
        blocks.append(body)
    for handler in (*(getattr(statement, "handlers", ()) or ()), *(getattr(statement, "cases", ()) or ())):
        blocks.extend(nested_blocks(handler))
    for name in ("orelse", "finalbody"):
        nested = getattr(statement, name, None)
        if nested:
            blocks.append(nested)
    return blocks


def _compound_targets(statement: ast.stmt) -> Iterator[str]:
    """Names a compound statement binds to values the analysis cannot know (`for x in`, `with ... as x`)."""
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        yield from target_names(statement.target)
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                yield from target_names(item.optional_vars)
    elif isinstance(statement, TRY_STATEMENTS):
        for handler in statement.handlers:  # type: ignore[attr-defined]
            if handler.name is not None:
                yield handler.name


def target_names(target: ast.AST | None) -> Iterator[str]:
    """Every name bound by an assignment target (`a`, `a, (b, *c)`), attributes and subscripts excluded."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def _index_small(scope: Scope, small: ast.stmt, package: str | None) -> None:
    if isinstance(small, ast.Import):
        for alias in small.names:
            if alias.asname is not None:
                _add_import(scope, alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                _add_import(scope, top, top)
    elif isinstance(small, ast.ImportFrom):
        base = absolute_module(small, package)
        for alias in small.names:
            if alias.name == "*":
                continue
            local = alias.asname if alias.asname is not None else alias.name
            _add_import(scope, local, f"{base}.{alias.name}" if base else alias.name)
    elif isinstance(small, (ast.Assign, ast.AnnAssign)):
        if small.value is None:
            return  # `x: int` declares, it does not bind
        targets = small.targets if isinstance(small, ast.Assign) else [small.target]
        for target in targets:
            if isinstance(target, ast.Name):
                scope.values.setdefault(target.id, []).append(small.value)
            else:
                _add_unpacked(scope, target_names(target))  # unpacking: each name gets a part
    elif isinstance(small, ast.AugAssign):
        _add_unknown(scope, target_names(small.target))  # `x += v` is not `x = v`


def _add_unknown(scope: Scope, names: Iterable[str]) -> None:
    """Names bound where their value is unknown (a parameter, a loop target, `+=`)."""
    known = set(names)
    scope.opaque |= known
    scope.unknown |= known


def _add_unpacked(scope: Scope, names: Iterable[str]) -> None:
    unpacked = set(names)
    scope.opaque |= unpacked
    scope.unpacked |= unpacked


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


def declared_names(
    function: FunctionNode, kind: type[ast.Global | ast.Nonlocal] | tuple[type[ast.Global | ast.Nonlocal], ...]
) -> set[str]:
    """Names a function declares `global` (or `nonlocal`, or either), anywhere in its own body."""
    found: set[str] = set()
    for small in own_small_statements(function.body):
        if isinstance(small, kind):
            found.update(small.names)
    return found


def own_small_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The simple statements of a def's or class's body, nested blocks included, nested defs excluded."""
    stack: list[ast.stmt] = list(body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, DEFS):
            continue
        if isinstance(statement, BLOCK_STATEMENTS):
            for block in nested_blocks(statement):
                stack.extend(block)
        else:
            yield statement


def _all_functions(statements: Iterable[ast.stmt]) -> Iterator[FunctionNode]:
    """Every def in a module, at any depth (methods and nested defs included)."""
    stack = list(statements)
    while stack:
        statement = stack.pop()
        if isinstance(statement, DEFS):
            if isinstance(statement, FUNCTION_DEFS):
                yield statement
            stack.extend(statement.body)
        elif isinstance(statement, BLOCK_STATEMENTS):
            for block in nested_blocks(statement):
                stack.extend(block)


def _add_global_assignments(scope: Scope, module: ast.Module, package: str | None) -> None:
    """`def init(): global MODE; MODE = ...` assigns the module's MODE too."""
    for function in _all_functions(module.body):
        names = declared_names(function, ast.Global)
        if not names:
            continue
        local = Scope(function)
        _index_block(local, function.body, package)
        for name in names:
            scope.values.setdefault(name, []).extend(local.values.get(name, []))
            if name in local.opaque or name in local.imports or name in local.functions or name in local.classes:
                _add_unknown(scope, {name})
            if not scope.values[name]:
                del scope.values[name]


def _index_instance_attributes(scope: Scope, cls: ast.ClassDef) -> None:
    """`self.attr = value` in the class's methods, so `self.attr` can be read like a class attribute."""
    for method in scope.functions.values():
        params = positional_parameters(method.args)
        if not params:
            continue
        receiver = params[0].arg
        for small in own_small_statements(method.body):
            _index_attribute_assignment(scope, small, receiver)


def _index_attribute_assignment(scope: Scope, small: ast.stmt, receiver: str) -> None:
    if isinstance(small, (ast.Assign, ast.AnnAssign)) and small.value is not None:
        targets = small.targets if isinstance(small, ast.Assign) else [small.target]
        for target in targets:
            attribute = _receiver_attribute(target, receiver)
            if attribute is not None:
                scope.attributes.setdefault(attribute, []).append(small.value)
            elif isinstance(target, (ast.Tuple, ast.List)):
                scope.opaque_attributes.update(_receiver_attributes(target, receiver))
    elif isinstance(small, ast.AugAssign):
        attribute = _receiver_attribute(small.target, receiver)
        if attribute is not None:
            scope.opaque_attributes.add(attribute)


def _receiver_attribute(target: ast.AST, receiver: str) -> str | None:
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == receiver:
        return target.attr
    return None


def _receiver_attributes(target: ast.Tuple | ast.List, receiver: str) -> Iterator[str]:
    for element in target.elts:
        attribute = _receiver_attribute(element, receiver)
        if attribute is not None:
            yield attribute


def absolute_module(node: ast.ImportFrom, package: str | None) -> str:
    """The absolute module an ImportFrom reads from (relative imports resolved against `package`)."""
    module = node.module or ""
    level = node.level or 0
    if level == 0:
        return module
    if package is None:
        return "." * level + module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return "." * level + module
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def own_returns(function: FunctionNode) -> list[ast.Return]:
    """The `return` statements of the function itself (not of defs, classes or lambdas in it), in source order."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (*DEFS, ast.expr)):
            stack.extend(reversed(children(node)))
    return found


def tests_membership_of_its_parameter(function: FunctionNode) -> bool:
    """A registry lookup: the def's body (after a docstring) is `return <its first parameter> in <a name>`
    (`def is_extension_available(name): return name in _extensions`)."""
    body = function.body[1:] if _is_docstring(function.body[0]) else function.body
    parameters = positional_parameters(function.args)
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not parameters:
        return False
    test = body[0].value
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.In):
        return False
    subject, registry = test.left, test.comparators[0]
    return isinstance(subject, ast.Name) and subject.id == parameters[0].arg and dotted_name(registry) is not None


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def unstarred(expr: ast.expr) -> ast.expr:
    """What a `*x` element or argument unpacks (`x`); any other expression itself."""
    return expr.value if isinstance(expr, ast.Starred) else expr


def argument_values(call: ast.Call) -> list[ast.expr]:
    """The values of a call's arguments: the positional ones (what a `*args` unpacks), then the keyword
    ones (`**kwargs` too)."""
    return [*(unstarred(arg) for arg in call.args), *(keyword.value for keyword in call.keywords)]
