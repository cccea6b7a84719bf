"""Source lists a CMake build takes from a Starlark (`.bzl`) file it shares with a Bazel or Buck build.

Some projects keep their source lists once, in a `.bzl` file, and have CMake read them: a CMake function runs
Python on the file and prints one list (`function(get_filelist name outputvar)` whose `execute_process` runs
`exec(open('xyz_defs.bzl').read());print(';'.join(${name}))` in `${CMAKE_CURRENT_SOURCE_DIR}`), and each call
(`get_filelist("get_xyz_cuda_srcs(with_api=False)" XYZ_SRCS)`, inside `if(XYZ_BACKEND STREQUAL "cuda")`) names
the list. Read, never run: the `.bzl` file is parsed with CPython's `ast` and the named expression evaluated here
over string lists, their sums, the module's list variables and its functions returning them (keyword defaults and
`x if flag else []` included). Only functions printing the list as it is, from the calling file's folder, are read:
their paths are relative to that folder.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping

# `exec(open('xyz_defs.bzl').read()); print(';'.join(${name}))`: the file and the parameter naming the expression.
_READS_BZL = re.compile(
    r"""exec\(\s*open\(\s*['"]([\w./-]+\.bzl)['"]\s*\)\.read\(\)\s*\)\s*;\s*print\(\s*['"];['"]\s*"""
    r"""\.join\(\s*\$\{(\w+)\}\s*\)\s*\)"""
)
_IN_CALLERS_FOLDER = re.compile(r"\bWORKING_DIRECTORY\s+\"?\$\{CMAKE_CURRENT_SOURCE_DIR\}\"?")
_MAX_DEPTH = 16  # variables and calls followed, one in another, before a value counts as unknown

_Value = list[str] | bool


def bzl_list_read(body: str) -> tuple[str, str] | None:
    """(`.bzl` file as written, the parameter naming the printed expression) when a CMake function's `body` (its
    commands' text) runs Python printing a list of a `.bzl` file as it is, in the calling file's folder."""
    reads = _READS_BZL.search(body)
    if reads is None or not _IN_CALLERS_FOLDER.search(body):
        return None
    return reads.group(1), reads.group(2)


def bzl_text(name: str, bzl_texts: Mapping[str, str]) -> str | None:
    """The text of the one project `.bzl` file whose path ends with `name`."""
    matches = [text for path, text in bzl_texts.items() if path.endswith(os.sep + name.lstrip("./"))]
    return matches[0] if len(matches) == 1 else None


def bzl_strings(text: str, expression: str) -> tuple[str, ...]:
    """The strings `expression` (a list variable or a function call of the `.bzl` module `text`) evaluates to; ()
    when it cannot be evaluated here."""
    try:
        module = ast.parse(text)
        node = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        return ()
    evaluator = _Evaluator(module.body)
    value = evaluator.evaluate(node, {}, 0)
    return tuple(value) if isinstance(value, list) else ()


class _Evaluator:
    def __init__(self, statements: Iterable[ast.stmt]) -> None:
        self.variables: dict[str, ast.expr] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for statement in statements:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    self.variables[target.id] = statement.value
            elif isinstance(statement, ast.FunctionDef):
                self.functions[statement.name] = statement

    def evaluate(self, node: ast.expr, scope: dict[str, _Value], depth: int) -> _Value | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else node.value if isinstance(node.value, bool) else None
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._concatenated(node.elts, scope, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._concatenated([node.left, node.right], scope, depth)
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            known = self.variables.get(node.id)
            return None if known is None else self.evaluate(known, {}, depth + 1)
        if isinstance(node, ast.IfExp):
            test = self.evaluate(node.test, scope, depth)
            if not isinstance(test, bool):
                return None
            return self.evaluate(node.body if test else node.orelse, scope, depth)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
            return self._called(self.functions[node.func.id], node, scope, depth)
        return None

    def _concatenated(self, parts: list[ast.expr], scope: dict[str, _Value], depth: int) -> list[str] | None:
        found: list[str] = []
        for part in parts:
            value = self.evaluate(part, scope, depth)
            if not isinstance(value, list):
                return None
            found += value
        return found

    def _called(self, function: ast.FunctionDef, call: ast.Call, scope: dict[str, _Value], depth: int) -> _Value | None:
        """What `function` returns for `call`'s arguments (its defaults for the others), when its body is one
        `return` (after a docstring)."""
        body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        names = [argument.arg for argument in function.args.args]
        defaults = function.args.defaults
        bound: dict[str, _Value] = {}
        for name, default in zip(names[len(names) - len(defaults) :], defaults, strict=True):
            value = self.evaluate(default, {}, depth + 1)
            if value is not None:
                bound[name] = value
        passed = [*zip(names, call.args, strict=False), *((k.arg, k.value) for k in call.keywords if k.arg)]
        for name, node in passed:
            value = self.evaluate(node, scope, depth + 1)
            if value is None:
                return None
            bound[name] = value
        return self.evaluate(body[0].value, bound, depth + 1)
