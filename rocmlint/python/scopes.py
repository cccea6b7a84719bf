"""Bindings per scope (imports, simple assignments, defs) and qualified names through import aliases.

Scopes are indexed lazily, statement by statement (expressions are never scanned), so a file that no
rule asks about pays nothing.
"""

from __future__ import annotations

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
    body = node.body.body if not isinstance(node, cst.Module) else node.body
    _index_block(scope, body, package)
    return scope


def _index_block(scope: Scope, statements: object, package: str | None) -> None:
    for statement in statements:  # type: ignore[attr-defined]
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                _index_small(scope, small, package)
        elif isinstance(statement, cst.FunctionDef):
            scope.functions[statement.name.value] = statement
        elif isinstance(statement, cst.ClassDef):
            scope.classes[statement.name.value] = statement
        else:
            for block in _nested_blocks(statement):
                _index_block(scope, block, package)


def _nested_blocks(statement: cst.CSTNode) -> list[object]:
    """The statement lists inside a compound statement (if/try/with/for/while), in order."""
    blocks: list[object] = []
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock):
        blocks.append(body.body)
    elif isinstance(body, cst.SimpleStatementSuite):
        blocks.append([cst.SimpleStatementLine(body=body.body)])
    for handler in getattr(statement, "handlers", ()) or ():
        blocks.extend(_nested_blocks(handler))
    for name in ("orelse", "finalbody"):
        nested = getattr(statement, name, None)
        if nested is not None:
            blocks.extend(_nested_blocks(nested) if not isinstance(nested, cst.If) else [[nested]])
    return blocks


def _index_small(scope: Scope, small: cst.BaseSmallStatement, package: str | None) -> None:
    if isinstance(small, cst.Import):
        for alias in small.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                scope.imports[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                scope.imports[top] = top
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        base = absolute_module(small, package)
        for alias in small.names:
            imported = dotted_name(alias.name) or ""
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            scope.imports[local] = f"{base}.{imported}" if base else imported
    elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        value = small.value
        if value is None:
            return
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        for target in targets:
            if isinstance(target, cst.Name):
                scope.values.setdefault(target.value, []).append(value)


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
