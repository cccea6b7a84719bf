"""What changed since a git revision, line by line: for `--since REV` (report only what a change introduces).

The changes are those of the work tree against the merge-base of REV and HEAD (what a pull request
against REV shows): `git diff -U0 --find-renames` gives the added or changed lines of every tracked file,
a file renamed since the base is compared with its old name, and untracked files (not ignored) are new as
a whole. Deleted lines leave nothing to report on, so they count for nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# `@@ -12,3 +14,2 @@`: the new side starts at line 14 and spans 2 lines (no count: 1; 0: a deletion).
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")
_NEW_FILE = b"+++ "
_C_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}
# Whatever the user's git configuration says (external diff tools, colours, prefixes, a default
# --relative), the diff is parsed as plain `a/` `b/` patches over the whole repository.
_DIFF_OPTIONS = (
    "diff",
    "-U0",
    "--find-renames",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--ignore-submodules",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


class ChangesError(Exception):
    """git cannot say what changed (no git, not a repository, an unknown revision); one line for the user."""


@dataclass
class ChangedLines:
    """Per file (absolute, symlinks resolved): the changed lines, or None for a file new as a whole."""

    files: dict[str, frozenset[int] | None] = field(default_factory=dict)
    _resolved: dict[str, str] = field(default_factory=dict, repr=False)

    def contains(self, path: str, line: int) -> bool:
        key = self._resolved.get(path)
        if key is None:
            key = self._resolved[path] = os.path.realpath(path)
        if key not in self.files:
            return False
        lines = self.files[key]
        return lines is None or line in lines


def changed_lines(revision: str, paths: Sequence[Path]) -> ChangedLines:
    """The lines changed since the merge-base of `revision` and HEAD, in every repository `paths` are in."""
    if shutil.which("git") is None:
        raise ChangesError("--since needs git, which was not found on PATH")
    changes = ChangedLines()
    for root in _repositories(paths or [Path(".")]):
        base = _merge_base(root, revision)
        changes.files.update(_diff(root, base))
        changes.files.update(dict.fromkeys(_untracked(root)))
    return changes


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    # GIT_OPTIONAL_LOCKS=0: a diff must not take the index lock a concurrent git command may need.
    environment = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, env=environment, check=False)
    except OSError as error:
        raise ChangesError(f"--since: cannot run git: {error.strerror or error}") from None


def _repositories(paths: Sequence[Path]) -> list[Path]:
    """The top-level folders of the repositories `paths` are in; git is asked once per repository, not
    once per path (pre-commit passes hundreds of files)."""
    roots: list[Path] = []
    for path in paths:
        folder = Path(os.path.realpath(path if path.is_dir() else path.parent))
        while not folder.is_dir():  # a path that does not exist: discovery warns about it
            folder = folder.parent
        if not any(folder == root or root in folder.parents for root in roots):
            roots.append(_top_level(folder))
    return roots


def _top_level(absolute: Path) -> Path:
    result = _git(absolute, "rev-parse", "--show-toplevel")
    top = os.fsdecode(result.stdout).rstrip("\n")
    if result.returncode != 0 or not top:
        raise ChangesError(f"--since needs a git repository, and {absolute} is not inside one")
    return Path(os.path.realpath(top))


def _merge_base(root: Path, revision: str) -> str:
    resolved = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    if resolved.returncode != 0:
        raise ChangesError(f"--since: unknown revision {revision!r} in the repository at {root}")
    commit = resolved.stdout.decode("ascii").strip()
    base = _git(root, "merge-base", commit, "HEAD")
    if base.returncode != 0:
        raise ChangesError(f"--since: {revision!r} and HEAD have no common ancestor in the repository at {root}")
    return base.stdout.decode("ascii").strip()


def _diff(root: Path, base: str) -> dict[str, frozenset[int] | None]:
    result = _git(root, *_DIFF_OPTIONS, base, "--")
    if result.returncode != 0:
        message = os.fsdecode(result.stderr).strip().splitlines()
        raise ChangesError(f"--since: git diff failed: {message[0] if message else result.returncode}")
    return {os.path.join(root, name): lines for name, lines in parse_diff(result.stdout).items()}


def parse_diff(patch: bytes) -> dict[str, frozenset[int]]:
    """The new side's added or changed lines per file of a `git diff -U0` patch, by the file's new name
    (relative to the repository). A deleted file has no new name and is left out; a file whose only
    change is a rename or a mode has no lines."""
    found: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in patch.split(b"\n"):
        if line.startswith(_NEW_FILE):
            name = _new_name(line[len(_NEW_FILE) :])
            current = None if name is None else found.setdefault(name, set())
            continue
        hunk = _HUNK.match(line)
        if hunk is not None and current is not None:
            start = int(hunk.group("start"))
            count = 1 if hunk.group("count") is None else int(hunk.group("count"))
            current.update(range(start, start + count))
    return {name: frozenset(lines) for name, lines in found.items()}


def _new_name(text: bytes) -> str | None:
    """`b/src/a.py`, `b/with space.py<TAB>` (git ends a name holding a space with a tab) or
    `"b/odd\\tname.py"` (git quotes names with control characters, quotes or backslashes); None for
    /dev/null."""
    text = text.rstrip(b"\r")
    if text.endswith(b"\t"):
        text = text[:-1]
    if text.startswith(b'"') and text.endswith(b'"'):
        text = _unquote(text[1:-1])
    if not text.startswith(b"b/"):
        return None
    return os.fsdecode(text[2:])


def _unquote(text: bytes) -> bytes:
    out = bytearray()
    index = 0
    while index < len(text):
        byte = text[index : index + 1]
        index += 1
        if byte != b"\\":
            out += byte
            continue
        escape = text[index : index + 1]
        if escape.isdigit():  # three octal digits: one byte of a UTF-8 (or other) name
            out.append(int(text[index : index + 3], 8))
            index += 3
            continue
        out.append(_C_ESCAPES.get(escape, escape[0] if escape else 92))
        index += 1
    return bytes(out)


def _untracked(root: Path) -> Iterable[str]:
    result = _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--full-name")
    if result.returncode != 0:
        return []
    return [os.path.join(root, os.fsdecode(name)) for name in result.stdout.split(b"\0") if name]
