"""The other files a Python result depends on, recorded while checking it (for the result cache).

Python results can depend on other modules (ProjectIndex follows `from pkg.env import IS_ROCM`), so
the engine used for cache misses is given a DependencyRecorder: every module file it looked up or
read (found or not), and every `__init__.py` that decided a file's package, becomes a dependency of
the file being checked. Changing, adding or removing any of them invalidates just the files that
looked at them. Apart from rocmlint/cache.py because ProjectIndex imports the Python front end, which a run served
entirely from the cache never needs.

Each dependency is remembered with its stat as it was just before the index first looked at it: the
index keeps what it learnt from a file for the rest of the run, so a later stat could describe bytes
newer than those the results were computed from.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rocmlint.cache import Stat, stat_of
from rocmlint.python.project import ProjectIndex

if TYPE_CHECKING:
    from rocmlint.python.gating import Vendor
    from rocmlint.python.project import SymbolKey
    from rocmlint.python.vendor_values import VendorStrings


class DependencyRecorder(ProjectIndex):
    """A ProjectIndex that notes every file its answers depended on, per checked file.

    The index caches symbol values across files, so the files one symbol's value was computed from
    are remembered with it and credited again to every later file that asks for the same symbol.
    """

    def __init__(self, rocm_guards: frozenset[str] = frozenset()) -> None:
        super().__init__(rocm_guards)
        self._frames: list[set[str]] = []
        self._symbol_files: dict[SymbolKey, frozenset[str]] = {}
        self._first_seen: dict[str, Stat | None] = {}

    def start_file(self) -> None:
        self._frames = [set()]

    def finish_file(self) -> dict[str, Stat | None]:
        """The files the checked file's result depended on, each with its stat from before it was read."""
        found = self._frames[0] if self._frames else set()
        self._frames = []
        return {path: self._first_seen[path] for path in found}

    def note_files(self, paths: Iterable[str]) -> None:
        self._note(*paths)

    def _note(self, *paths: str) -> None:
        """Called before the index reads `paths`, so their first stats describe what it read."""
        for path in paths:
            if path not in self._first_seen:
                self._first_seen[path] = stat_of(path)
        if self._frames:
            self._frames[-1].update(paths)

    @contextmanager
    def _collecting(self) -> Iterator[set[str]]:
        self._frames.append(set())
        try:
            yield self._frames[-1]
        finally:
            self._note(*self._frames.pop())

    def _find_module(self, parts: tuple[str, ...], roots: tuple[Path, ...]) -> Path | None:
        # Every candidate, found or not: creating `pkg/env.py` later can change the answer.
        for root in roots:
            base = root.joinpath(*parts)
            self._note(str(base.with_suffix(".py")), str(base / "__init__.py"))
        return super()._find_module(parts, roots)

    def _symbol(self, key: SymbolKey) -> Vendor | VendorStrings | None:
        module_file = key[0]
        known = self._symbol_files.get(key)
        if known is not None:
            self._note(*known)
            return super()._symbol(key)
        if key in self._in_progress:  # an import cycle: the answer depends on that module too
            self._note(str(module_file))
            return super()._symbol(key)
        self._frames.append(set())
        self._note(str(module_file), *package_chain(str(module_file)))
        try:
            return super()._symbol(key)
        finally:
            files = self._frames.pop()
            self._symbol_files[key] = frozenset(files)
            self._note(*files)


def package_chain(path: str) -> list[str]:
    """The `__init__.py` files package_of() looks at for `path` (each one found, and the first
    missing one): they decide the file's package name and import roots."""
    found = []
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        marker = os.path.join(folder, "__init__.py")
        found.append(marker)
        if not os.path.isfile(marker) or os.path.dirname(folder) == folder:
            return found
        folder = os.path.dirname(folder)
