"""A project's own device kinds named for AMD's stack: the values its own device abstraction compares its kind with.

Some projects address GPUs through a device class of their own rather than torch's (a compiler with its own runtime
per vendor): `class Device` whose methods test `self.kind == "hip"` (`is_hip()`), or `self.kind in ("hip", "vhip")`.
There `"hip"` is a word of the project's own vocabulary: the package's own functions take it as a device
(`mylib.randn(shape, device="hip")`) and build its own names from it (`f"{device}.grid_dim"`); it is not a torch
device string. Only the package whose class compares it counts (its top-level package), and only the ROCm words
ROC110 knows as device strings ("hip", "rocm"): torch's own APIs still reject them, and still get reported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from rocmlint.python.importers import read_small_file, tree_files
from rocmlint.python.project import package_of
from rocmlint.python.tree import PythonParseError, parse_text

# The device kinds of AMD's stack a device string may name (ROC110's "hip", "rocm").
ROCM_DEVICE_KINDS = frozenset({"hip", "rocm"})
# Quoted, as the text of a module comparing one must hold it.
_QUOTED_KINDS = tuple(quote + kind.encode() + quote for kind in ROCM_DEVICE_KINDS for quote in (b'"', b"'"))
# An attribute holding a device's kind: `self.kind`, `self.device_type`, `self.dev`.
_KIND_ATTRIBUTE = re.compile(r"kind|type|device|(?:^|_)dev(?:$|_)", re.IGNORECASE)
_SELF = "self"


def own_device_kinds(root: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """For each top-level package under `root` and ROCm device kind one of its classes compares one of its own kind
    attributes with, the files that do (the evidence); {} when none does."""
    return _packages(str(root))


def compared_kinds(module: ast.Module) -> Iterator[str]:
    """The ROCm device kinds a class body of `module` compares an attribute of its own instance with (`self.kind ==
    "hip"`, `self.kind in ("hip", "vhip")`)."""
    for cls in ast.walk(module):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in ast.walk(cls):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _KIND_TESTS):
                yield from _kinds_compared(node.left, node.comparators[0])


_KIND_TESTS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _kinds_compared(left: ast.expr, right: ast.expr) -> Iterator[str]:
    for own, other in ((left, right), (right, left)):
        if not _own_kind_attribute(own):
            continue
        values = other.elts if isinstance(other, (ast.Tuple, ast.List, ast.Set)) else [other]
        for value in values:
            if isinstance(value, ast.Constant) and value.value in ROCM_DEVICE_KINDS:
                yield value.value


def _own_kind_attribute(node: ast.expr) -> bool:
    """`self.kind`, `self.device_type`: an attribute of the instance a method runs on, named for a device's kind."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == _SELF
        and _KIND_ATTRIBUTE.search(node.attr) is not None
    )


@lru_cache(maxsize=8)
def _packages(root: str) -> dict[tuple[str, str], tuple[str, ...]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in tree_files(Path(root)):
        data = read_small_file(path)
        if data is None or not any(kind in data for kind in _QUOTED_KINDS):
            continue
        package = package_of(path)[0]
        if not package:
            continue  # a script's classes are no package's vocabulary
        try:
            kinds = set(compared_kinds(parse_text(data.decode("utf-8", "replace"))))
        except PythonParseError:
            continue
        for kind in sorted(kinds):
            found.setdefault((package.split(".", 1)[0], kind), []).append(path)
    return {key: tuple(files) for key, files in found.items()}
