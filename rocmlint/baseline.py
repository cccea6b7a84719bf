"""A baseline file: the diagnostics a codebase already had, hidden from later runs (`--baseline FILE`).

Each entry is keyed by a fingerprint that holds no line number, as GitLab's code-quality fingerprints:
a hash of the file's path (relative to the baseline file's folder), the rule code, the stripped text of
the diagnostic's line(s), and its occurrence among diagnostics with the same path, code and text. A
diagnostic keeps its fingerprint when lines above it are added or removed, and loses it when its own line
changes, which is when a reviewer should look at it again.

An entry that matches no diagnostic of a file the run checked (with the entry's rule enabled) is stale:
the hazard was fixed or its line changed. `--update-baseline` writes the current diagnostics and drops
stale entries, so a baseline only shrinks unless it is regenerated on purpose.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmlint.cache import atomic_write
from rocmlint.diagnostics import Diagnostic
from rocmlint.outputs.paths import unicode_path
from rocmlint.source import DecodeError, SourceFile, language_of, split_lines

VERSION = 1
_TOOL = "rocmlint"


class BaselineError(Exception):
    """The baseline file cannot be read or written; the message names it."""


@dataclass(frozen=True, order=True)
class Entry:
    path: str  # relative to the baseline file's folder, `/`-separated
    code: str
    fingerprint: str


@dataclass
class Comparison:
    new: list[Diagnostic]  # not in the baseline: what the run reports
    known: int  # diagnostics the baseline hides
    stale: list[Entry]  # entries of checked files that match nothing


def load(path: Path) -> list[Entry]:
    try:
        document = json.loads(path.read_bytes())
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error}") from None
    except ValueError as error:
        raise BaselineError(f"{path}: not a rocmlint baseline (invalid JSON: {error})") from None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        version = document.get("version") if isinstance(document, dict) else None
        raise BaselineError(f"{path}: not a rocmlint baseline of version {VERSION} (version: {version!r})")
    entries = document.get("entries")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: the baseline has no 'entries' list")
    return [_entry(item, path) for item in entries]


def _entry(item: Any, path: Path) -> Entry:
    if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("path", "code", "fingerprint")):
        raise BaselineError(f"{path}: a baseline entry needs 'path', 'code' and 'fingerprint' strings, got {item!r}")
    return Entry(item["path"], item["code"], item["fingerprint"])


def save(path: Path, entries: Iterable[Entry]) -> None:
    """Sorted and indented, so that a regenerated baseline diffs line by line; written atomically."""
    document = {
        "tool": _TOOL,
        "version": VERSION,
        "entries": [{"path": e.path, "code": e.code, "fingerprint": e.fingerprint} for e in sorted(set(entries))],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8"))
    except OSError as error:
        raise BaselineError(f"{path}: cannot write the baseline: {error.strerror or error}") from None


def fingerprints(diagnostics: Sequence[Diagnostic], folder: Path) -> list[Entry]:
    """One entry per diagnostic, in the order given (which decides occurrence indexes: sort them first)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    texts = _LineTexts()
    entries = []
    for diagnostic in diagnostics:
        path = relative_path(diagnostic.path, folder)
        identity = (path, diagnostic.code, texts.of(diagnostic))
        occurrence = seen[identity]
        seen[identity] += 1
        digest = hashlib.sha256("\0".join((*identity, str(occurrence))).encode("utf-8", "surrogatepass"))
        entries.append(Entry(path, diagnostic.code, digest.hexdigest()))
    return entries


def relative_path(path: str, folder: Path) -> str:
    return unicode_path(Path(os.path.relpath(os.path.abspath(path), folder)).as_posix())


def compare(
    diagnostics: Sequence[Diagnostic], baseline: Sequence[Entry], folder: Path, checked: Callable[[Entry], bool]
) -> Comparison:
    """Split `diagnostics` into those the baseline does not know and a count of those it does; `checked`
    tells whether this run looked for an entry at all (its file checked, its rule enabled)."""
    known = {entry.fingerprint for entry in baseline}
    entries = fingerprints(diagnostics, folder)
    new = [d for d, entry in zip(diagnostics, entries, strict=True) if entry.fingerprint not in known]
    matched = {entry.fingerprint for entry in entries}
    stale = [entry for entry in baseline if entry.fingerprint not in matched and checked(entry)]
    return Comparison(new, len(diagnostics) - len(new), stale)


def updated(
    diagnostics: Sequence[Diagnostic], baseline: Sequence[Entry], folder: Path, checked: Callable[[Entry], bool]
) -> list[Entry]:
    """The current diagnostics' entries, plus the old entries this run did not look at (files not given,
    rules not enabled), so a run over part of a codebase updates only that part."""
    kept = [entry for entry in baseline if not checked(entry)]
    return sorted(set(fingerprints(diagnostics, folder)) | set(kept))


class _LineTexts:
    """The stripped text of a diagnostic's lines, each file read once."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def of(self, diagnostic: Diagnostic) -> str:
        lines = self._file_lines(diagnostic.path)
        last = diagnostic.end_location.line
        if last > diagnostic.location.line and diagnostic.end_location.column == 1:
            last -= 1  # the span ends at the start of a line: that line holds none of it
        chosen = lines[diagnostic.location.line - 1 : last]
        return "\n".join(line.strip() for line in chosen)

    def _file_lines(self, path: str) -> list[str]:
        cached = self._lines.get(path)
        if cached is not None:
            return cached
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b""
        try:
            text = SourceFile.from_bytes(path, data, language_of(path) or "python").text
        except DecodeError:
            text = data.decode("utf-8", "replace")
        lines = [line.rstrip("\r\n") for line in split_lines(text)]
        self._lines[path] = lines
        return lines
