"""`rocmlint check --add-noqa`: suppress every current diagnostic in place, as ruff's `--add-noqa` does.

Each diagnostic gets its code in a `noqa` comment on the line rocmlint/suppression.py reads for it: its
own line, or the first line after it that can end in a comment (`suppression.comment_lines`: never
inside a multi-line string). A line that already holds a directive with codes gets the new codes added
to its list; a bare `noqa` already covers everything. A C++ line ending in a backslash continuation (a
macro) gets a `/* noqa: ... */` before the backslash, which a `//` comment there would swallow.

Files are written as `--fix` writes them (rocmlint/fix.py: atomically, only if unchanged since read,
mode, encoding, BOM and line endings kept), and a second run finds nothing to add.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.diagnostics import Diagnostic, Edit
from rocmlint.fix import WriteRefused, splice, write_if_unchanged
from rocmlint.source import DecodeError, SourceFile, language_of
from rocmlint.suppression import comment_lines, find_suppressions

# A parse error is reported whatever the comments say (rocmlint/engine.py keeps it).
UNSUPPRESSIBLE = frozenset({"ROC001"})


@dataclass
class NoqaResult:
    comments: int = 0  # lines that got a new comment or new codes in an existing one
    files: int = 0
    problems: list[str] = field(default_factory=list)  # files not written, and why


def add_noqa(diagnostics: Iterable[Diagnostic]) -> NoqaResult:
    """Add the comments that suppress `diagnostics` to their files on disk."""
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in diagnostics:
        if diagnostic.code not in UNSUPPRESSIBLE:
            by_file[diagnostic.path].append(diagnostic)
    result = NoqaResult()
    for path, found in sorted(by_file.items()):
        _add_to_file(Path(path), found, result)
    return result


def _add_to_file(path: Path, diagnostics: list[Diagnostic], result: NoqaResult) -> None:
    language = language_of(str(path))
    try:
        original = path.read_bytes()
        source = SourceFile.from_bytes(str(path), original, language or "python")
    except (OSError, DecodeError) as error:
        result.problems.append(f"{path}: cannot add noqa comments: {error}")
        return
    edits = noqa_edits(source, diagnostics)
    if not edits:
        return
    try:
        write_if_unchanged(path, original, splice(original, edits, source.encoding))
    except WriteRefused as refused:
        result.problems.append(f"{path}: {refused}")
        return
    result.comments += len(edits)
    result.files += 1


def noqa_edits(source: SourceFile, diagnostics: Iterable[Diagnostic]) -> list[Edit]:
    """One edit per line that needs a comment or more codes in its comment, in file order."""
    moved = comment_lines(source)
    wanted: dict[int, set[str]] = defaultdict(set)
    for diagnostic in diagnostics:
        line = diagnostic.noqa_line or diagnostic.location.line
        wanted[moved.get(line, line)].add(diagnostic.code)
    directives = find_suppressions(source).lines
    edits = []
    for line, codes in sorted(wanted.items()):
        directive = directives.get(line)
        if directive is None:
            edits.append(_new_comment(source, line, sorted(codes)))
            continue
        if directive.codes is None or directive.codes_span is None:
            continue  # a bare `noqa` suppresses every code already
        missing = sorted(codes - set(directive.codes))
        if not missing:
            continue
        start, end = directive.codes_span
        listed = ", ".join([*directive.codes, *missing])
        edits.append(source.edit(source.byte_offset(line, start), source.byte_offset(line, end), listed))
    return edits


def _new_comment(source: SourceFile, line: int, codes: list[str]) -> Edit:
    text = source.line_text(line)
    listed = ", ".join(codes)
    if source.language == "python":
        return _insert(source, line, len(text.rstrip()), len(text), f"  # noqa: {listed}")
    if text.endswith("\\"):
        before_backslash = len(text) - 1
        kept = len(text[:before_backslash].rstrip())
        return _insert(source, line, kept, kept, f" /* noqa: {listed} */")
    return _insert(source, line, len(text.rstrip()), len(text), f"  // noqa: {listed}")


def _insert(source: SourceFile, line: int, start: int, end: int, content: str) -> Edit:
    """Replace columns [start, end) of `line` (its trailing blanks) with `content`."""
    return source.edit(source.byte_offset(line, start), source.byte_offset(line, end), content)
