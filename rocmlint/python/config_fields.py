"""Configuration fields that stay off unless the user turns them on: a field a class declares with a false default
(`allow_tf32: bool = False` in a dataclass or pydantic config, `tf32: Optional[bool] = None`, `field(default=False)`).
A test of such a field (`if self.config.allow_tf32:`) holds only where the user asked for the option."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from rocmlint.python.importers import read_small_file, tree_files
from rocmlint.python.tree import PythonParseError, parse_text


def declared_off_by_default(root: Path, name: str) -> tuple[str, ...]:
    """The files under `root` whose classes declare a field `name`, when every declaration of it in the project has
    a false default; () when none does or one defaults to something else (true, computed)."""
    return _declarations(str(root), name)


def class_field_defaults(module: ast.Module, name: str) -> Iterator[bool]:
    """For each declaration of the field `name` in a class body of `module`: whether its default is false."""
    for node in ast.walk(module):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            default = _default_of(statement, name)
            if default is not None:
                yield _is_false_default(default)


@lru_cache(maxsize=64)
def _declarations(root: str, name: str) -> tuple[str, ...]:
    word = name.encode()
    files: list[str] = []
    for path in _project_files(root):
        data = read_small_file(path)
        if data is None or word not in data:
            continue
        try:
            defaults = list(class_field_defaults(parse_text(data.decode("utf-8", "replace")), name))
        except PythonParseError:
            continue
        if not all(defaults):
            return ()
        if defaults:
            files.append(path)
    return tuple(files)


@lru_cache(maxsize=8)
def _project_files(root: str) -> tuple[str, ...]:
    return tuple(tree_files(Path(root)))


def _default_of(statement: ast.stmt, name: str) -> ast.expr | None:
    """The default value a class-body statement gives the field `name` (`name: T = value`, `name = value`)."""
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.value if statement.target.id == name and statement.value is not None else None
    if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
        return statement.value
    return None


def _is_false_default(value: ast.expr) -> bool:
    """`False`, `None`, `0`, or a dataclass / pydantic `field(default=...)` / `Field(False, ...)` of one."""
    if isinstance(value, ast.Constant):
        return value.value is None or value.value is False or (type(value.value) is int and value.value == 0)
    if not isinstance(value, ast.Call):
        return False
    default = next((keyword.value for keyword in value.keywords if keyword.arg == "default"), None)
    if default is None and value.args:
        default = value.args[0]
    return default is not None and isinstance(default, ast.Constant) and _is_false_default(default)
