"""Which files to check: walks folders, honours excludes and .gitignore, skips VCS, virtualenvs and caches."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import pathspec

from rocmlint.config import ConfigResolver, Settings
from rocmlint.source import language_of

# Never worth walking into, whatever the configuration says.
ALWAYS_SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        ".jj",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".rocmlint_cache",
        ".ipynb_checkpoints",
        ".idea",
        ".vscode",
        ".direnv",
        "__pypackages__",
    }
)

Warn = Callable[[str], None]


@dataclass(frozen=True)
class Candidate:
    display: str  # the path as it is shown, as str() of its Path would show it
    settings: Settings
    absolute: str  # the path made absolute, once (the cache's key)

    @property
    def path(self) -> Path:
        # Built on demand: most candidates of a warm run are never opened, only looked up.
        return Path(self.display)


def matches_any(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """ruff-style globs: a pattern without '/' matches a file or folder name anywhere; one with '/'
    matches the path relative to the configuration's folder."""
    return _matches_any(path.name, os.path.abspath(path), patterns, root)


def _matches_any(name: str, absolute: str, patterns: tuple[str, ...], root: Path) -> bool:
    """matches_any for a path given as its name and its absolute form (the walk has both at hand)."""
    name_patterns, path_patterns = _split_patterns(patterns)
    if name_patterns is not None and name_patterns.match(name):
        return True
    if not path_patterns:
        return False
    relative = _relative_to(absolute, root)
    return relative is not None and any(_match_relative(relative, pattern.lstrip("./")) for pattern in path_patterns)


@lru_cache(maxsize=64)
def _split_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """One regex for the patterns that match a name (every file is tested against all of them), and
    the patterns that match a path relative to the root."""
    names = [pattern.rstrip("/") for pattern in patterns if "/" not in pattern.rstrip("/")]
    paths = tuple(pattern for pattern in patterns if "/" in pattern.rstrip("/"))
    # fnmatch.translate anchors each at the end, as fnmatchcase's full match does.
    regex = re.compile("|".join(f"(?:{fnmatch.translate(name)})" for name in names)) if names else None
    return regex, paths


def _relative_to(absolute: str, root: Path) -> str | None:
    """`absolute` relative to `root` as it was named (symlinks kept), else with symlinks resolved."""
    # resolve() costs a syscall per path component: only when the path as named is not below root.
    for candidate in (lambda: Path(absolute), Path(absolute).resolve):
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
    """One .gitignore: its folder (as a path prefix), its lines, and one regex any of them matches."""

    prefix: str  # the folder with a trailing separator
    lines: tuple[str, ...]
    any_pattern: re.Pattern[str] | None  # None: check pattern by pattern

    @cached_property
    def patterns(self) -> list[pathspec.Pattern]:
        # Compiled on the first path the combined regex matches: compiling every pattern of a long
        # .gitignore cost more than screening all the paths of the tree with the combined regex.
        return list(pathspec.GitIgnoreSpec.from_lines(self.lines).patterns)

    def decision(self, relative: str) -> bool | None:
        """True (ignored), False (re-included by a `!` pattern) or None (no pattern matches)."""
        # search, as pathspec's match_file does: `*/` compiles to an unanchored regex.
        if self.any_pattern is not None and self.any_pattern.search(relative) is None:
            return None  # most paths: one regex instead of every pattern of a long .gitignore
        decision = None
        for pattern in self.patterns:
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
        return self.ignored_in(os.path.dirname(absolute), absolute, is_dir)

    def ignored_in(self, folder: str, absolute: str, is_dir: bool) -> bool:
        """ignored() for `absolute`, a path in the absolute `folder` (the walk has both at hand)."""
        for ignore_file in self._chain(folder):
            decision = ignore_file.decision(
                absolute[len(ignore_file.prefix) :].replace(os.sep, "/") + ("/" if is_dir else "")
            )
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
        lines = _lines_git_reads(ignore_file.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None
    return _IgnoreFile(os.path.join(str(folder), ""), tuple(lines), _any_pattern(lines))


def _lines_git_reads(lines: list[str]) -> list[str]:
    """The lines of a .gitignore that are patterns at all: git drops a line it cannot read as one (`env\\`, a
    trailing backslash escaping nothing, from a file written on Windows) and matches nothing with it, where pathspec
    raises; one such line must not stop the run."""
    pattern_class = _gitignore_pattern_class()
    readable = []
    for line in lines:
        try:
            pattern_class.pattern_to_regex(line)
        except ValueError:
            continue
        readable.append(line)
    return readable


@lru_cache(maxsize=1)
def _gitignore_pattern_class() -> type[pathspec.RegexPattern]:
    """The pattern class GitIgnoreSpec builds (its name changed between pathspec 0.12 and 1.0)."""
    return type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])


# How pathspec starts the regex of a pattern that matches at any depth (`*.so`, `build/`, `name`).
_ANY_DEPTH = "^(?:.+/)?"


def _any_pattern(lines: list[str]) -> re.Pattern[str] | None:
    """One regex matching where any line's pattern matches (pathspec's named group made plain, so the
    names do not clash); None when the patterns' regexes cannot be combined.

    The patterns that match at any depth share one `^(?:.+/)?` prefix: tried once per path rather than
    once per pattern (most of a long .gitignore is such names: 4x faster on vLLM's)."""
    anchored, any_depth = [], []
    pattern_class = _gitignore_pattern_class()
    for line in lines:
        source, include = pattern_class.pattern_to_regex(line)
        if include is None:
            continue
        if not isinstance(source, str):
            return None
        source = source.replace("(?P<ps_d>", "(?:")
        if source.startswith(_ANY_DEPTH):
            any_depth.append(f"(?:{source[len(_ANY_DEPTH) :]})")
        else:
            anchored.append(f"(?:{source})")
    if any_depth:
        anchored.append(f"{_ANY_DEPTH}(?:{'|'.join(any_depth)})")
    try:
        return re.compile("|".join(anchored)) if anchored else None
    except re.error:
        return None


def is_excluded(path: Path, settings: Settings, gitignore: GitIgnore, is_dir: bool) -> bool:
    absolute = os.path.abspath(path)
    return _excluded(path.name, os.path.dirname(absolute), absolute, settings, gitignore, is_dir)


def _excluded(name: str, folder: str, absolute: str, settings: Settings, gitignore: GitIgnore, is_dir: bool) -> bool:
    """is_excluded for `name` in the absolute `folder`, `absolute` being their join."""
    if _matches_any(name, absolute, settings.exclude_patterns, settings.root):
        return True
    return settings.respect_gitignore and gitignore.ignored_in(folder, absolute, is_dir)


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
    seen: set[str] = set()  # absolute paths
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
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            yield Candidate(str(path), settings, key)


def _walk(top: Path, resolver: ConfigResolver, gitignore: GitIgnore, warn: Warn, seen: set[str]) -> Iterator[Candidate]:
    # Paths stay strings: building a Path for each of the tens of thousands of entries of a large
    # tree cost more than the rest of the walk.
    stack = [str(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listing = sorted(entries, key=lambda entry: entry.name)
        except OSError as error:
            warn(f"{folder}: cannot read folder: {error.strerror}")
            continue
        absolute_folder = os.path.abspath(folder)
        settings = resolver.for_folder(Path(absolute_folder), {entry.name for entry in listing})
        subfolders = []
        for entry in listing:
            try:
                # Folder symlinks are not followed: they loop, and they lead out of the project.
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            name = entry.name
            if not is_dir and not (is_file and language_of(name) is not None):
                continue
            if is_dir and (name in ALWAYS_SKIPPED or _is_virtualenv(entry.path)):
                continue
            absolute = os.path.join(absolute_folder, name)
            if _excluded(name, absolute_folder, absolute, settings, gitignore, is_dir):
                continue
            if is_dir:
                subfolders.append(_shown_child(folder, name))
            elif absolute not in seen:
                seen.add(absolute)
                yield Candidate(_shown_child(folder, name), settings, absolute)
        stack.extend(reversed(subfolders))


def _shown_child(folder: str, name: str) -> str:
    """str(Path(folder) / name) for a `folder` shown as pathlib shows paths (no trailing separator
    but the root's, `.` for the current folder), without building the Path."""
    return name if folder == "." else os.path.join(folder, name)


def _is_virtualenv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))
