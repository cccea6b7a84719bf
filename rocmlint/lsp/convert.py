"""rocmlint's diagnostics, fixes and noqa edits as LSP types (no server state here).

Each LSP diagnostic carries what its code actions need in `data` (as ruff's server does), so a quick
fix needs no second lint: the fix's edits as LSP ranges of the text that was linted, and the line whose
`noqa` comment would suppress it.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from rocmlint.lsp.text import Encoding, code_units, split_lines, to_lsp
from rocmlint.source import SourceFile
from rocmlint.suppression import find_suppressions

SOURCE = "rocmlint"
FIX_ALL_KIND = "source.fixAll.rocmlint"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# A `noqa: CODES` list, to find the code under the cursor for hover.
_NOQA_CODES = re.compile(r"noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def lsp_range(start: Location, end: Location, lines: list[str], encoding: Encoding) -> types.Range:
    return types.Range(_position(start, lines, encoding), _position(end, lines, encoding))


def _position(location: Location, lines: list[str], encoding: Encoding) -> types.Position:
    line, character = to_lsp(location, lines, encoding)
    return types.Position(line=line, character=character)


def text_edits(edits: tuple[Edit, ...], lines: list[str], encoding: Encoding) -> list[types.TextEdit]:
    return [types.TextEdit(lsp_range(e.location, e.end_location, lines, encoding), e.content) for e in edits]


def to_lsp_diagnostic(diagnostic: Diagnostic, lines: list[str], encoding: Encoding) -> types.Diagnostic:
    href = types.CodeDescription(href=diagnostic.url) if diagnostic.url else None
    return types.Diagnostic(
        range=lsp_range(diagnostic.location, diagnostic.end_location, lines, encoding),
        message=diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=href,
        source=SOURCE,
        data={
            "name": diagnostic.name,
            "fix": _fix_data(diagnostic.fix, lines, encoding),
            "noqa_line": (diagnostic.noqa_line or diagnostic.location.line) - 1,
        },
    )


def _fix_data(fix: Fix | None, lines: list[str], encoding: Encoding) -> dict[str, Any] | None:
    if fix is None:
        return None
    edits = [
        {"range": _range_json(edit.range), "newText": edit.new_text} for edit in text_edits(fix.edits, lines, encoding)
    ]
    return {"message": fix.message, "applicability": fix.applicability.value, "edits": edits}


def _range_json(value: types.Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def fix_from_data(data: Any) -> tuple[str, bool, list[types.TextEdit]] | None:
    """(title, is unsafe, edits) of the fix stored in a diagnostic's `data`, if it has one."""
    fix = data.get("fix") if isinstance(data, dict) else None
    if not isinstance(fix, dict):
        return None
    edits = [
        types.TextEdit(
            types.Range(types.Position(**edit["range"]["start"]), types.Position(**edit["range"]["end"])),
            edit["newText"],
        )
        for edit in fix.get("edits", ())
    ]
    return str(fix.get("message", "Fix")), fix.get("applicability") == Applicability.UNSAFE.value, edits


def noqa_edit(source: SourceFile, line: int, code: str, encoding: Encoding) -> types.TextEdit | None:
    """The edit that adds `code` to the `noqa` of 0-based `line`: to its code list if it has one, else a
    new comment at the end of the line. None when no comment can go there."""
    text = source.line_text(line + 1)
    directive = find_suppressions(source).lines.get(line + 1)
    if directive is not None:
        if directive.codes is None or code in directive.codes:
            return None  # a bare noqa already suppresses everything
        if directive.codes_span is not None:
            return _insert(line, text, directive.codes_span[1], f", {code}", encoding)
    if source.language == "python":
        if text.rstrip().endswith("\\"):
            return None  # no comment can follow a line continuation
        return _insert(line, text, len(text.rstrip()), f"  # noqa: {code}", encoding)
    if text.rstrip().endswith("\\"):
        # A `//` comment would swallow the macro's line continuation; a block comment before it does not.
        column = len(text.rstrip()[:-1].rstrip())
        return _insert(line, text, column, f" /* noqa: {code} */", encoding)
    return _insert(line, text, len(text.rstrip()), f"  // noqa: {code}", encoding)


def _insert(line: int, text: str, column: int, content: str, encoding: Encoding) -> types.TextEdit:
    position = types.Position(line=line, character=code_units(text[:column], encoding))
    return types.TextEdit(types.Range(position, position), content)


def noqa_code_at(line_text: str, column: int) -> str | None:
    """The rule code under code-point `column` inside a `noqa: CODES` list on this line."""
    for match in _NOQA_CODES.finditer(line_text):
        for code in _CODE.finditer(match.group("codes")):
            start, end = match.start("codes") + code.start(), match.start("codes") + code.end()
            if start <= column <= end:
                return code.group().upper()
    return None


def whole_text_edit(old: str, new: str, encoding: Encoding) -> types.TextEdit:
    """One edit that turns `old` into `new`, trimmed to the changed middle so the cursor stays put."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    # Never split a \r\n: LSP positions cannot point between its two characters.
    if prefix and old[prefix - 1 : prefix + 1] == "\r\n":
        prefix -= 1
    if suffix and old[len(old) - suffix - 1 : len(old) - suffix + 1] == "\r\n":
        suffix -= 1
    start = _offset_position(old, prefix, encoding)
    end = _offset_position(old, len(old) - suffix, encoding)
    return types.TextEdit(types.Range(start, end), new[prefix : len(new) - suffix])


def _offset_position(text: str, offset: int, encoding: Encoding) -> types.Position:
    before = split_lines(text[:offset])
    return types.Position(line=len(before) - 1, character=code_units(before[-1], encoding))
