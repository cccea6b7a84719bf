"""A project's own words of AMD's stack: the device kinds its own device abstraction compares its kind with, and the
`gcnArchName` of an arch record of its own.

Some projects address GPUs through a device class of their own rather than torch's (a compiler with its own runtime
per vendor): `class Device` whose methods test `self.kind == "hip"` (`is_hip()`), or `self.kind in ("hip", "vhip")`.
There `"hip"` is a word of the project's own vocabulary: the package's own functions take it as a device
(`mylib.randn(shape, device="hip")`) and build its own names from it (`f"{device}.grid_dim"`); it is not a torch
device string. Only the package whose class compares it counts (its top-level package), and only the ROCm words
ROC110 knows as device strings ("hip", "rocm"): torch's own APIs still reject them, and still get reported.

Likewise a class of the project may declare a `gcnArchName` field of its own (a table of known GPUs' properties,
`gcnArchName="gfx90a"`): when every value the package gives that field is a bare gfx name, the records its own
functions return hold no feature suffix, unlike HIP's device properties.
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
_BARE_GFX = re.compile(r"gfx[0-9a-f]+")
# The field of HIP's device properties an arch record of the project's own may declare too.
ARCH_FIELD = "gcnArchName"


def own_device_kinds(root: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """For each top-level package under `root` and word of its own: a ROCm device kind one of its classes compares one
    of its own kind attributes with, or `ARCH_FIELD` when it keeps arch records of its own (`arch_record_values`), the
    files that show it (the evidence); {} when there is none."""
    return _packages(str(root))


def arch_record_values(module: ast.Module) -> tuple[bool, list[ast.expr | None]] | None:
    """Whether a class body of `module` declares the field `ARCH_FIELD`, and every value the module gives it: a class
    body's default, `gcnArchName=` of a call, `x.gcnArchName = ...`, and None for a call of a declaring class that does
    not give it by keyword (positionally: a value not known). None when the module names the field nowhere."""
    classes = {node.name for node in ast.walk(module) if isinstance(node, ast.ClassDef) and _declares_field(node)}
    values: list[ast.expr | None] = []
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef) and node.name in classes:
            values += [s.value for s in node.body if _field_target(s) and isinstance(s, ast.AnnAssign) and s.value]
        elif isinstance(node, ast.Call):
            given = next((keyword.value for keyword in node.keywords if keyword.arg == ARCH_FIELD), None)
            constructs = isinstance(node.func, ast.Name) and node.func.id in classes
            if given is not None or constructs:
                values.append(given)
        elif isinstance(node, ast.Assign) and any(_field_target(target) for target in node.targets):
            values.append(node.value)
    return (bool(classes), values) if classes or values else None


def own_arch_records(module: ast.Module) -> bool:
    """A class of `module` declares `ARCH_FIELD`, and every value the module gives it is a bare gfx name."""
    found = arch_record_values(module)
    return found is not None and found[0] and bool(found[1]) and all(bare_gfx_name(value) for value in found[1])


def _declares_field(cls: ast.ClassDef) -> bool:
    return any(isinstance(statement, ast.AnnAssign) and _field_target(statement.target) for statement in cls.body)


def _field_target(node: ast.AST) -> bool:
    """`gcnArchName` (a class body's field) or `x.gcnArchName` (an attribute set)."""
    if isinstance(node, ast.AnnAssign):
        node = node.target
    return (isinstance(node, ast.Name) and node.id == ARCH_FIELD) or (
        isinstance(node, ast.Attribute) and node.attr == ARCH_FIELD
    )


def bare_gfx_name(value: ast.expr | None) -> bool:
    """A gfx name written out without target features (`"gfx90a"`, not `"gfx90a:xnack-"` nor a value read elsewhere)."""
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and _BARE_GFX.fullmatch(value.value) is not None
    )


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
    records: dict[str, list[str]] = {}
    unknown_arch: set[str] = set()  # packages giving their arch field a value that may carry features
    declaring: set[str] = set()  # packages with a class declaring the arch field
    for path in tree_files(Path(root)):
        data = read_small_file(path)
        if data is None or not (ARCH_FIELD.encode() in data or any(kind in data for kind in _QUOTED_KINDS)):
            continue
        package = (package_of(path)[0] or "").split(".", 1)[0]
        if not package:
            continue  # a script's classes are no package's vocabulary
        try:
            module = parse_text(data.decode("utf-8", "replace"))
        except PythonParseError:
            continue
        for kind in sorted(set(compared_kinds(module))):
            found.setdefault((package, kind), []).append(path)
        arch = arch_record_values(module)
        if arch is not None:
            declared, values = arch
            if not all(bare_gfx_name(value) for value in values):
                unknown_arch.add(package)
            elif values:
                records.setdefault(package, []).append(path)
            if declared:
                declaring.add(package)
    for package, files in records.items():
        if package in declaring and package not in unknown_arch:
            found[(package, ARCH_FIELD)] = files
    return {key: tuple(files) for key, files in found.items()}
