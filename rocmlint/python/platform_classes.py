"""Per-vendor platform classes, and the code only the NVIDIA platform class chooses.

A project that supports several accelerators may describe each one by a platform class in a module named for the
vendor, beside the others, and pick one by its qualified name in the package's `__init__.py`:

    pkg/platforms/__init__.py:  return "pkg.platforms.rocm.RocmPlatform" if is_rocm else None
                                return "pkg.platforms.cuda.CudaPlatform" if is_cuda else None
    pkg/platforms/cuda.py:      class CudaPlatform(Platform):
                                    def get_attn_backend_cls(cls, ...):
                                        if selected == SPARSE: return "pkg.backends.sparse.SparseBackend"
                                        return "pkg.backends.flash.FlashBackend"
    pkg/platforms/rocm.py:      class RocmPlatform(Platform):
                                    def get_attn_backend_cls(cls, ...): return "pkg.backends.flash.FlashBackend"

A ROCm machine runs the ROCm module's class, so the NVIDIA module's defs never run there; and the classes a method
of the NVIDIA class returns by qualified name that the same method of the ROCm class never returns (`sparse` above)
are NVIDIA's choice only: the defs of their modules run only on NVIDIA. The ROCm method is read only when every
value it returns is a string constant (a computed value, `selected.get_path()`, or a call of the base class's method
may be any backend, and then the method proves nothing); a module the ROCm module names in any string or imports
stays ROCm's. Which names of such a module other modules use anyway is decided by rocmlint/python/importers.py
(`ImportIndex.definitions_base`): it has the importers.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator
from typing import TypeGuard

from rocmlint.data import load

_WORDS = load("vendor_packages")
_ROCM_WORDS = frozenset(_WORDS["rocm_backend_words"])
_NVIDIA_WORDS = frozenset(_WORDS["nvidia_backend_words"])
_PACKAGE_FILE = "__init__.py"
# A qualified class name: dotted module path, then a class (`pkg.backends.sparse.SparseBackend`).
_CLASS_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.[A-Z]\w*")
# Comparisons that run none of a class's code, and the calls that test an object against a class.
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
_CLASS_TESTS = frozenset({"isinstance", "issubclass"})


def platform_modules(files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each module of a package named for NVIDIA (`cuda.py`) with sibling modules named for ROCm (`rocm.py`)
    (absolute paths) -> those siblings."""
    modules: dict[str, list[str]] = {}
    for path in files:
        name = os.path.basename(path)
        if name.endswith(".py") and name[:-3].lower() in _NVIDIA_WORDS | _ROCM_WORDS:
            modules.setdefault(os.path.dirname(path), []).append(path)
    found: dict[str, tuple[str, ...]] = {}
    for _folder, paths in sorted(modules.items()):
        rocm = tuple(sorted(path for path in paths if _stem(path) in _ROCM_WORDS))
        for path in sorted(paths):
            if rocm and _stem(path) in _NVIDIA_WORDS:
                found[path] = rocm
    return found


def chosen_by_name(package_init: bytes, module: str) -> bool:
    """The package's `__init__.py` names a class of the module `module` (a file's path) by its qualified name, as a
    string (`"pkg.platforms.cuda.CudaPlatform"`): the package picks its platform class by name."""
    stem = _stem(module).encode()
    return re.search(rb"[\"'][\w.]*\." + re.escape(stem) + rb"\.[A-Z]\w*[\"']", package_init, re.IGNORECASE) is not None


def paths_chosen_off_rocm(nvidia: ast.Module, rocm: Iterable[ast.Module]) -> frozenset[str]:
    """The qualified class names a method of the NVIDIA platform module's classes returns that the ROCm modules never
    name in a string, for the methods a ROCm class defines too whose every return there is a string constant."""
    rocm_trees = list(rocm)
    rocm_returns = _returns_by_method(rocm_trees)
    rocm_strings = {node.value for tree in rocm_trees for node in ast.walk(tree) if _is_string(node)}
    chosen: set[str] = set()
    for method, values in _returns_by_method([nvidia]).items():
        if rocm_returns.get(method, None) is None:
            continue  # the ROCm class lacks the method, or returns a computed value there: any backend
        chosen.update(value for value in values or () if _CLASS_PATH.fullmatch(value))
    return frozenset(path for path in chosen if path not in rocm_strings)


def _returns_by_method(trees: Iterable[ast.Module]) -> dict[str, list[str] | None]:
    """The string constants each method of the modules' classes returns, by method name (None when a return there
    is anything else: a name, a call, an f-string)."""
    returns: dict[str, list[str] | None] = {}
    for tree in trees:
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    known = returns.setdefault(method.name, [])
                    values = _returned_strings(method)
                    returns[method.name] = None if known is None or values is None else known + values
    return returns


def _returned_strings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str] | None:
    """The strings `function` returns (`return "a.B"`, `return "a.B" if x else "a.C"`), None when a return holds
    anything else; a bare `return`, `return None` and `return ""` return no class."""
    values: list[str] = []
    for node in _own_returns(function):
        for value in _arms(node.value):
            if value is None or (isinstance(value, ast.Constant) and value.value in (None, "")):
                continue
            if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
                return None
            values.append(value.value)
    return values


def _own_returns(function: ast.AST) -> Iterator[ast.Return]:
    """The return statements of `function`, not of the defs and lambdas inside it."""
    for child in ast.iter_child_nodes(function):
        if isinstance(child, ast.Return):
            yield child
        elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_returns(child)


def _arms(value: ast.expr | None) -> list[ast.expr | None]:
    """The values a returned expression may take: each arm of a conditional expression."""
    if isinstance(value, ast.IfExp):
        return [*_arms(value.body), *_arms(value.orelse)]
    return [value]


def _is_string(node: ast.AST) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _stem(path: str) -> str:
    return os.path.basename(path)[:-3].lower()


def used_beyond_comparison(tree: ast.Module, parents: dict[ast.AST, ast.AST], name: str) -> bool:
    """`tree` reads `name` other than as an operand of an `==`/`is`/`in` comparison or the class argument of
    `isinstance`/`issubclass`: comparing with a class runs none of its code."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if not _compared(node, parents.get(node)):
                return True
    return False


def _compared(node: ast.Name, parent: ast.AST | None) -> bool:
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, _COMPARISONS) for op in parent.ops)
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        return False
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
        return parent.func.id in _CLASS_TESTS and len(parent.args) == 2 and parent.args[1] is node
    return False


def unreached_definitions(tree: ast.Module, used: set[str], imported: bool) -> frozenset[str]:
    """The top-level defs and classes of `tree` that neither `used` nor, when the module is `imported` where they are
    used, its own module-level code reaches, through the names each def, class or module-level assignment reads
    (`get_impl_cls` returning `SparseImpl` reaches `SparseImpl`). A module-level assignment's value is only followed
    from its target, unless it calls something."""
    definitions = {
        node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    reads: dict[str, set[str]] = {name: _names_read(node) for name, node in definitions.items()}
    reached = set(used)
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        names = _names_read(statement)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if targets and all(isinstance(target, ast.Name) for target in targets) and not _calls(statement):
            for target in targets:
                if isinstance(target, ast.Name):
                    reads.setdefault(target.id, set()).update(names)
            continue
        if imported:
            reached |= names  # run at import
    pending = list(reached)
    while pending:
        for name in reads.get(pending.pop(), ()):
            if name not in reached:
                reached.add(name)
                pending.append(name)
    return frozenset(name for name in definitions if name not in reached)


def _names_read(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)}


def _calls(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Call) for child in ast.walk(node))
