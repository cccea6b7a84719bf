"""Applying fixes: non-overlapping edits per pass, passes until nothing changes, and safe file writes.

A pass applies every fix whose edits do not overlap an already chosen one (as ruff does); the file is then
checked again, so overlapping fixes get their turn on the next pass. Writing is atomic (a temporary file
in the same folder, renamed over the original) and only happens when the file still holds the bytes
that were read; the file's mode is kept, and encoding, BOM and line endings are kept because edits are
byte ranges whose new text uses the file's own encoding and newline.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix

MAX_PASSES = 10


def apply_fixes(data: bytes, fixes: Iterable[Fix], encoding: str = "utf-8", unsafe: bool = False) -> tuple[bytes, int]:
    """Apply every fix whose edits do not overlap an earlier-chosen one; returns (new bytes, fixes applied).

    An edit identical to one already chosen is shared, not a conflict: two fixes that both insert the
    same `_IS_ROCM = ...` definition get it once.
    """
    chosen = choose_fixes(fixes, unsafe)
    edits = sorted(
        {(e.start, e.end, e.content): e for f in chosen for e in f.edits}.values(), key=lambda e: (e.start, e.end)
    )
    return splice(data, edits, encoding), len(chosen)


def choose_fixes(fixes: Iterable[Fix], unsafe: bool = False) -> list[Fix]:
    chosen: list[Fix] = []
    taken: dict[tuple[int, int], str] = {}
    for fix in sorted(fixes, key=lambda f: min((e.start for e in f.edits), default=0)):
        if fix.applicability is Applicability.UNSAFE and not unsafe:
            continue
        if any(_conflicts(edit, taken) for edit in fix.edits):
            continue
        chosen.append(fix)
        taken.update(((e.start, e.end), e.content) for e in fix.edits)
    return chosen


def splice(data: bytes, edits: list[Edit], encoding: str = "utf-8") -> bytes:
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    out = bytearray()
    cursor = 0
    for edit in edits:
        out += data[cursor : edit.start]
        out += edit.content.encode(codec)
        cursor = edit.end
    out += data[cursor:]
    return bytes(out)


def _conflicts(edit: Edit, taken: dict[tuple[int, int], str]) -> bool:
    span = (edit.start, edit.end)
    if taken.get(span) == edit.content:
        return False
    # Two insertions at the same point conflict too: their order would be arbitrary.
    return any((edit.start < end and start < edit.end) or span == (start, end) for start, end in taken)


@dataclass
class FixOutcome:
    data: bytes  # the fixed content
    applied: Counter[str] = field(default_factory=Counter)  # fixes applied per rule code
    remaining: list[Diagnostic] = field(default_factory=list)  # what the fixed content still reports

    @property
    def changed(self) -> bool:
        return sum(self.applied.values()) > 0


def fix_content(
    data: bytes, check: Callable[[bytes], tuple[list[Diagnostic], str]], unsafe: bool = False
) -> FixOutcome:
    """Fix `data` pass after pass; `check(data)` gives the diagnostics of some content and its encoding."""
    outcome = FixOutcome(data)
    for _ in range(MAX_PASSES):
        diagnostics, encoding = check(outcome.data)
        outcome.remaining = diagnostics
        fixable = [
            d for d in diagnostics if d.fix is not None and (unsafe or d.fix.applicability is Applicability.SAFE)
        ]
        chosen = choose_fixes([d.fix for d in fixable if d.fix is not None], unsafe)
        if not chosen:
            break
        fixed, _ = apply_fixes(outcome.data, chosen, encoding, unsafe)
        if fixed == outcome.data:
            break
        outcome.applied.update(d.code for d in fixable if d.fix in chosen)
        outcome.data = fixed
    return outcome


class WriteRefused(Exception):
    """The file was not written (it changed since it was read, or it is read-only); the reason says which."""


def write_if_unchanged(path: Path, original: bytes, new: bytes) -> None:
    """Replace `path`'s content with `new` atomically, only if it still holds `original`.

    Raises WriteRefused (nothing written) when the file changed under us or cannot be written; a read-only
    file is reported, never chmod-ed.
    """
    try:
        info = path.stat()
        if not os.access(path, os.W_OK):
            raise WriteRefused("file is read-only; not fixed")
        _unchanged_or_refuse(path, original)
        remove_stale_temporaries(path)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=_temporary_prefix(path), suffix=TEMP_SUFFIX)
    except OSError as error:
        raise WriteRefused(f"cannot write: {error.strerror or error}") from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        # Again, right before the rename: an editor may have saved while the temporary was written.
        _unchanged_or_refuse(path, original)
        os.replace(temporary, path)
    except OSError as error:  # a full disk, a vanished folder: this file is not fixed, the run goes on
        Path(temporary).unlink(missing_ok=True)
        raise WriteRefused(f"cannot write: {error.strerror or error}") from error
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# `.<name>.<pid>.<random>.rocmlint-tmp`, next to the file. Discovery never picks these up (unknown
# suffix); one is left behind only if the process is killed between writing it and renaming it.
TEMP_SUFFIX = ".rocmlint-tmp"


def _temporary_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _unchanged_or_refuse(path: Path, original: bytes) -> None:
    if path.read_bytes() != original:
        raise WriteRefused("file changed while it was being fixed; left as it is")


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete temporaries a killed rocmlint left next to `path`: those whose writer process is gone.

    A live writer's temporary (another rocmlint fixing the same file right now) is kept; a reused pid
    only means a leftover survives until a later run.
    """
    removed: list[Path] = []
    prefix = f".{path.name}."
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(TEMP_SUFFIX)]
    except OSError:
        return removed
    for name in names:
        pid_text = name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit() or _process_alive(int(pid_text)):
            continue
        stale = path.parent / name
        try:
            stale.unlink()
            removed.append(stale)
        except OSError:
            pass
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # exists (another user's), or cannot tell: keep the file
    return True


@dataclass
class FileFix:
    path: Path
    original: bytes
    outcome: FixOutcome
    refused: str | None = None  # why the fixed content was not written


def fix_file(
    path: Path, check: Callable[[bytes], tuple[list[Diagnostic], str]], unsafe: bool, write: bool
) -> FileFix | None:
    """Fix one file on disk (`write`) or only compute its fixed content; None when it cannot be read."""
    try:
        original = path.read_bytes()
    except OSError:
        return None
    outcome = fix_content(original, check, unsafe)
    result = FileFix(path, original, outcome)
    if write and outcome.changed:
        try:
            write_if_unchanged(path, original, outcome.data)
        except WriteRefused as refused:
            result.refused = str(refused)
    return result
