"""Which files to check: walks folders, honours excludes and .gitignore, skips VCS, virtualenvs and caches."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from rocmlint.config import ConfigResolver, Settings
from rocmlint.source import language_of

# Never worth walking into, whatever the configuration says.
ALWAYS_SKIPPED = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".jj", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".rocmlint_cache", ".ipynb_checkpoints", ".idea",
        ".vscode", ".direnv", "__pypackages__",
    }
)

Warn = Callable[[str], None]


@dataclass(frozen=True)
class Candidate:
    path: Path
    settings: Settings


def matches_any(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """ruff-style globs: a pattern without '/' matches a file or folder name anywhere; one with '/'
    matches the path relative to the configuration's folder."""
    if not patterns:
        return False
    name = path.name
    relative: str | None = None  # computed only for patterns with a '/' (most have none)
    for pattern in patterns:
        if "/" not in pattern.rstrip("/"):
            if fnmatch.fnmatchcase(name, pattern.rstrip("/")):
                return True
            continue
        if relative is None:
            relative = _relative_to(path, root)
        if relative is not None and _match_relative(relative, pattern.lstrip("./")):
            return True
    return False


def _relative_to(path: Path, root: Path) -> str | None:
    """`path` relative to `root` as it was named (symlinks kept), else with symlinks resolved."""
    # resolve() costs a syscall per path component: only when the path as named is not below root.
    for candidate in (lambda: Path(os.path.abspath(path)), path.resolve):
        try:
            return candidate().relative_to(root).as_posix()
        except ValueError:
            continue
    return None


def _match_relative(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(relative, pattern):
        return True
    # A folder pattern also covers everything below it.
    return fnmatch.fnmatchcase(relative, pattern + "/*")


class GitIgnore:
    """The .gitignore files that apply below a folder, from the repository root down."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.PathSpec | None] = {}
        # Every file of a folder asks for the same chain of folders; without a .git it reaches `/`.
        self._chains: dict[Path, list[Path]] = {}

    def _spec(self, folder: Path) -> pathspec.PathSpec | None:
        if folder not in self._specs:
            spec = None
            ignore_file = folder / ".gitignore"
            try:
                if ignore_file.is_file():
                    lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                spec = None
            self._specs[folder] = spec
        return self._specs[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """As git decides: the deepest .gitignore with a matching pattern wins, and within one file
        the last matching pattern (so a nested `!name` re-includes what a parent ignored)."""
        path = Path(os.path.abspath(path))
        chain = self._chains.get(path.parent)
        if chain is None:
            chain = self._chains[path.parent] = _folders_up_to_repo_root(path.parent)
        for folder in chain:
            spec = self._spec(folder)
            if spec is None:
                continue
            relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            decision = _last_match(spec, relative)
            if decision is not None:
                return decision
        return False


def _last_match(spec: pathspec.PathSpec, relative: str) -> bool | None:
    """True (ignored), False (re-included by a `!` pattern) or None (no pattern matches)."""
    decision = None
    for pattern in spec.patterns:
        if pattern.include is not None and pattern.match_file(relative) is not None:
            decision = pattern.include
    return decision


def _folders_up_to_repo_root(folder: Path) -> list[Path]:
    folders = []
    current = folder
    while True:
        folders.append(current)
        if (current / ".git").exists() or current.parent == current:
            return folders
        current = current.parent


def is_excluded(path: Path, settings: Settings, gitignore: GitIgnore, is_dir: bool) -> bool:
    if matches_any(path, settings.exclude_patterns, settings.root):
        return True
    return settings.respect_gitignore and gitignore.ignored(path, is_dir)


def is_path_excluded(path: Path, settings: Settings, gitignore: GitIgnore, is_dir: bool) -> bool:
    """Whether `path`, or a folder above it up to the settings' root, is excluded (what --force-exclude
    applies to paths named on the command line: `build/x.py` is excluded by `build`)."""
    if is_excluded(path, settings, gitignore, is_dir):
        return True
    return any(is_excluded(folder, settings, gitignore, is_dir=True) for folder in _folders_below(path, settings.root))


def _folders_below(path: Path, root: Path) -> list[Path]:
    """The folders that hold `path`, from its parent up to (not including) `root`; none outside root."""
    parent = Path(os.path.abspath(path)).parent
    if parent != root and root not in parent.parents:
        return []
    folders = []
    while parent != root:
        folders.append(parent)
        parent = parent.parent
    return folders


def discover(paths: list[Path], resolver: ConfigResolver, warn: Warn) -> Iterator[Candidate]:
    """Yield every file to check under `paths`, in a stable (sorted) order."""
    gitignore = GitIgnore()
    seen: set[Path] = set()
    for path in paths:
        if not os.path.lexists(path):
            warn(f"{path}: no such file or directory")
            continue
        if path.is_dir():
            settings = resolver.for_folder(Path(os.path.abspath(path)))
            if settings.force_exclude and is_path_excluded(path, settings, gitignore, is_dir=True):
                continue
            yield from _walk(path, resolver, gitignore, warn, seen)
            continue
        settings = resolver.for_file(path)
        if settings.force_exclude and is_path_excluded(path, settings, gitignore, is_dir=False):
            continue
        if language_of(str(path)) is None:
            warn(f"{path}: not a Python or CUDA/C++ file, skipped")
            continue
        key = Path(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            yield Candidate(path, settings)


def _walk(top: Path, resolver: ConfigResolver, gitignore: GitIgnore, warn: Warn, seen: set[Path]) -> Iterator[Candidate]:
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listing = sorted(entries, key=lambda entry: entry.name)
        except OSError as error:
            warn(f"{folder}: cannot read folder: {error.strerror}")
            continue
        settings = resolver.for_folder(Path(os.path.abspath(folder)))
        subfolders = []
        for entry in listing:
            path = Path(entry.path)
            try:
                # Folder symlinks are not followed: they loop, and they lead out of the project.
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                if entry.name in ALWAYS_SKIPPED or _is_virtualenv(path):
                    continue
                if not is_excluded(path, settings, gitignore, is_dir=True):
                    subfolders.append(path)
            elif is_file and language_of(entry.name) is not None:
                if is_excluded(path, settings, gitignore, is_dir=False):
                    continue
                key = Path(os.path.abspath(path))
                if key not in seen:
                    seen.add(key)
                    yield Candidate(path, settings)
        stack.extend(reversed(subfolders))


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()
