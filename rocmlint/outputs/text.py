"""`path:line:col: CODE [*] message` lines, then a summary (ruff's concise format)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rocmlint.diagnostics import Diagnostic
from rocmlint.outputs.paths import display_path, escape_control


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(line(d) + "\n" for d in diagnostics)


def line(diagnostic: Diagnostic) -> str:
    mark = " [*]" if diagnostic.fixable else ""
    location = diagnostic.location
    return (
        f"{display_path(diagnostic.path)}:{location.line}:{location.column}: "
        f"{diagnostic.code}{mark} {escape_control(diagnostic.message)}"
    )


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    if not diagnostics:
        return "All checks passed!\n"
    by_severity = Counter(d.severity.value for d in diagnostics)
    parts = [
        f"{by_severity[s]} {s}{'s' if by_severity[s] != 1 else ''}"
        for s in ("error", "warning", "info")
        if by_severity[s]
    ]
    total = len(diagnostics)
    text = f"Found {total} diagnostic{'s' if total != 1 else ''} ({', '.join(parts)})."
    fixable = sum(d.fixable for d in diagnostics)
    if fixable:
        text += f"\n[*] {fixable} fixable with `--fix`."
    hidden = sum(d.fix is not None and not d.fixable for d in diagnostics)
    if hidden:
        text += f"\n{hidden} more fixable with `--fix --unsafe-fixes` (review them)."
    return text + "\n"


def statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """One row per rule: count, code, fixable mark, name; most frequent first."""
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if d.fixable}
    width = max((len(str(n)) for n in counts.values()), default=1)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '   '} {names[code]}\n" for code, count in rows
    )
