"""Which files to check: walks folders, honours excludes and .gitignore, skips VCS, virtualenvs and caches."""

from __future__ import annotations

import fnmatch
import os
import re
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


@dataclass(frozen=True)
class _IgnoreFile:
    """One .gitignore: its folder (as a path prefix), its patterns, and one regex any of them matches."""

    prefix: str  # the folder with a trailing separator
    spec: pathspec.PathSpec
    any_pattern: re.Pattern[str] | None  # None: check pattern by pattern

    def decision(self, relative: str) -> bool | None:
        """True (ignored), False (re-included by a `!` pattern) or None (no pattern matches)."""
        # search, as pathspec's match_file does: `*/` compiles to an unanchored regex.
        if self.any_pattern is not None and self.any_pattern.search(relative) is None:
            return None  # most paths: one regex instead of every pattern of a long .gitignore
        decision = None
        for pattern in self.spec.patterns:
            if pattern.include is not None and pattern.match_file(relative) is not None:
                decision = pattern.include
        return decision


class GitIgnore:
    """The .gitignore files that apply below a folder, from the repository root down."""

    def __init__(self) -> None:
        self._files: dict[str, _IgnoreFile | None] = {}
        # Every file of a folder asks for the same chain of folders; without a .git it reaches `/`.
        self._chains: dict[str, list[_IgnoreFile]] = {}

    def _ignore_file(self, folder: Path) -> _IgnoreFile | None:
        key = str(folder)
        if key not in self._files:
            self._files[key] = _read_ignore_file(folder)
        return self._files[key]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """As git decides: the deepest .gitignore with a matching pattern wins, and within one file
        the last matching pattern (so a nested `!name` re-includes what a parent ignored)."""
        absolute = os.path.abspath(path)
        parent = os.path.dirname(absolute)
        for ignore_file in self._chain(parent):
            decision = ignore_file.decision(absolute[len(ignore_file.prefix) :].replace(os.sep, "/") + ("/" if is_dir else ""))
            if decision is not None:
                return decision
        return False

    def _chain(self, folder: str) -> list[_IgnoreFile]:
        """The .gitignore files from `folder` up to its repository root (or `/`), deepest first;
        built from the parent's chain, so each folder costs one `.git` check."""
        chain = self._chains.get(folder)
        if chain is None:
            own = self._ignore_file(Path(folder))
            parent = os.path.dirname(folder)
            at_root = parent == folder or os.path.exists(os.path.join(folder, ".git"))
            chain = ([own] if own is not None else []) + ([] if at_root else self._chain(parent))
            self._chains[folder] = chain
        return chain


def _read_ignore_file(folder: Path) -> _IgnoreFile | None:
    ignore_file = folder / ".gitignore"
    try:
        if not ignore_file.is_file():
            return None
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return _IgnoreFile(os.path.join(str(folder), ""), spec, _any_pattern(spec))


def _any_pattern(spec: pathspec.PathSpec) -> re.Pattern[str] | None:
    """One alternation of every pattern's regex (pathspec's named group made plain, so the names do not
    clash); None when a pattern has no plain regex to combine."""
    regexes = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str) or regex.flags & ~re.UNICODE:
            return None
        regexes.append("(?:" + regex.pattern.replace("(?P<ps_d>", "(?:") + ")")
    try:
        return re.compile("|".join(regexes)) if regexes else None
    except re.error:
        return None


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
