"""Applying fixes to a file's bytes: non-overlapping edits in one pass (the `--fix` CLI builds on this)."""

from __future__ import annotations

from collections.abc import Iterable

from rocmlint.diagnostics import Applicability, Fix


def apply_fixes(data: bytes, fixes: Iterable[Fix], encoding: str = "utf-8", unsafe: bool = False) -> tuple[bytes, int]:
    """Apply every fix whose edits do not overlap an earlier-applied one; returns (new bytes, fixes applied).

    Overlapping fixes are left for a later pass, as ruff does.
    """
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    chosen: list[Fix] = []
    taken: list[tuple[int, int]] = []
    for fix in sorted(fixes, key=lambda f: min((e.start for e in f.edits), default=0)):
        if fix.applicability is Applicability.UNSAFE and not unsafe:
            continue
        spans = [(e.start, e.end) for e in fix.edits]
        if any(_overlaps(span, other) for span in spans for other in taken):
            continue
        chosen.append(fix)
        taken.extend(spans)
    edits = sorted((e for f in chosen for e in f.edits), key=lambda e: (e.start, e.end))
    out = bytearray()
    cursor = 0
    for edit in edits:
        out += data[cursor : edit.start]
        out += edit.content.encode(codec)
        cursor = edit.end
    out += data[cursor:]
    return bytes(out), len(chosen)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    # Two insertions at the same point conflict too: their order would be arbitrary.
    return a[0] < b[1] and b[0] < a[1] or a == b
