"""The runtime requirements a Python project declares at its root, and which of them exist for one GPU vendor only.

A project's default install is what `[project] dependencies` of its pyproject.toml and its root requirements.txt
name (not the optional extras, nor per-platform files such as `requirements-rocm.txt`). One of them that exists for
ROCm only (`pyrsmi`, `hip-python`: rocmlint/data/vendor_packages.toml) means the project installs where ROCm is, and
one that exists for NVIDIA only (`nvidia-ml-py`, `cupy-cuda12x`) that it has an NVIDIA side too. Read as text, never
installed or run.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from rocmlint.data import load

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_PACKAGES = load("vendor_packages")
_ROCM_ONLY = frozenset(_PACKAGES["rocm_only_distributions"])
_NVIDIA_ONLY = frozenset(_PACKAGES["nvidia_only_distributions"])
_NVIDIA_PREFIXES = tuple(_PACKAGES["nvidia_only_distribution_prefixes"])
# A PEP 508 requirement's name: what comes before its extras, version, marker or URL (`pyrsmi>=1.0; ...`).
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class DeclaredRequirements:
    """What the root's declarations say: "path:line: name" (relative to the root) of the first ROCm-only requirement
    and of the first NVIDIA-only one ("" when none), and the files read (absolute)."""

    rocm_only: str = ""
    nvidia_only: str = ""
    files: tuple[str, ...] = ()


def declared_requirements(root: str) -> DeclaredRequirements:
    """The vendor-only requirements declared by pyproject.toml's `[project] dependencies` and requirements.txt
    directly under `root`."""
    found, files = _declarations(root)
    rocm = next((where for where, name in found if name in _ROCM_ONLY), "")
    nvidia = next((where for where, name in found if _nvidia_only(name)), "")
    return DeclaredRequirements(rocm, nvidia, files)


def declared_packages(root: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """Each package of the default install declared directly under `root` (its normalised name) with the first
    "path:line: name" declaring it, and the files read (absolute): what installing the project always installs.
    Where pyproject.toml lists `[project] dependencies`, those are what `pip install` of the project installs, and a
    requirements.txt beside it is an environment for working on it (one the list does not name is not installed)."""
    found, files = _declarations(root)
    pyproject = _text(os.path.join(root, "pyproject.toml"))
    if pyproject is not None and _lists_dependencies(pyproject):
        found = [(where, name) for where, name in found if where.startswith("pyproject.toml:")]
    packages: dict[str, str] = {}
    for where, name in found:
        packages.setdefault(name, where)
    return packages, files


def _declarations(root: str) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """("path:line: name", normalised name) of each requirement the root's pyproject.toml and requirements.txt
    declare, in declaration order, and the files read (absolute)."""
    found: list[tuple[str, str]] = []
    files: list[str] = []
    for name, read in (("pyproject.toml", _pyproject_requirements), ("requirements.txt", _requirements_lines)):
        path = os.path.join(root, name)
        text = _text(path)
        if text is None:
            continue
        files.append(path)
        found += [(f"{name}:{line}: {requirement}", requirement) for line, requirement in read(text)]
    return found, tuple(files)


def normalise(name: str) -> str:
    """A distribution name as PyPI compares them: lower case, runs of `-`, `_` and `.` read as one `-`."""
    return re.sub(r"[-_.]+", "-", name.lower())


def _nvidia_only(name: str) -> bool:
    return name in _NVIDIA_ONLY or name.startswith(_NVIDIA_PREFIXES)


def _pyproject_requirements(text: str) -> list[tuple[int, str]]:
    """(line, normalised name) of each `[project] dependencies` entry; the line is the first one quoting it."""
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError:
        return []
    dependencies = project.get("dependencies") if isinstance(project, dict) else None
    if not isinstance(dependencies, list):
        return []
    found: list[tuple[int, str]] = []
    for requirement in dependencies:
        match = _NAME.match(requirement) if isinstance(requirement, str) else None
        if match is None:
            continue
        at = max(text.find(f'"{requirement}"'), text.find(f"'{requirement}'"))
        found.append((text.count("\n", 0, at) + 1 if at >= 0 else 1, normalise(match.group(1))))
    return found


def _lists_dependencies(text: str) -> bool:
    """Whether `[project]` lists its dependencies itself (not `dynamic`, read from a requirements file)."""
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(project, dict) and isinstance(project.get("dependencies"), list)


def _requirements_lines(text: str) -> list[tuple[int, str]]:
    """(line, normalised name) of each requirement line: not comments, options (`-r other.txt`, `--index-url`) nor
    bare URLs or paths."""
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped or stripped.startswith(("-", ".", "/")) or "://" in stripped.split("@", 1)[0]:
            continue
        match = _NAME.match(stripped)
        if match is not None:
            found.append((number, normalise(match.group(1))))
    return found


def _text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > _MAX_BYTES else data.decode("utf-8", "replace")
