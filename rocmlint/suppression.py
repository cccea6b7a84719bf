"""`# noqa`, `# noqa: ROC101,ROC102`, file-level `# rocmlint: noqa[: codes]` (`//` comments in C++),
and the unused-noqa check (ROC002)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from rocmlint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from rocmlint.source import SourceFile

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:\s*,?\s*[A-Za-z]+[0-9]+)*)"
_LINE_NOQA = re.compile(r"\bnoqa(?::\s*" + _CODES + r")?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*rocmlint\s*:\s*noqa(?::\s*" + _CODES + r")?", re.IGNORECASE)
_CPP_COMMENT = re.compile(r"//[^\n\r]*|/\*.*?\*/")
_CODE_SPLIT = re.compile(r"[\s,]+")


@dataclass
class Directive:
    line: int
    column: int  # 0-based code-point column where the comment starts
    comment: str
    codes: tuple[str, ...] | None  # None: every code
    codes_span: tuple[int, int] | None = None  # code-point columns of the code list within the line
    used: set[str] = field(default_factory=set)
    used_bare: bool = False


@dataclass
class Suppressions:
    lines: dict[int, Directive] = field(default_factory=dict)
    file_codes: tuple[str, ...] | None = ()  # () nothing file-wide; None: everything

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        if self.file_codes is None or diagnostic.code in self.file_codes:
            return True
        directive = self.lines.get(diagnostic.noqa_line or diagnostic.location.line)
        if directive is None:
            return False
        if directive.codes is None:
            directive.used_bare = True
            return True
        if diagnostic.code in directive.codes:
            directive.used.add(diagnostic.code)
            return True
        return False


def find_suppressions(source: SourceFile) -> Suppressions:
    if b"noqa" not in source.data and b"NOQA" not in source.data:
        return Suppressions()
    comments = _python_comments(source) if source.language == "python" else _cpp_comments(source)
    suppressions = Suppressions()
    for line, column, text in comments:
        body = text.lstrip("#/*").strip()
        file_match = _FILE_NOQA.match(body)
        if file_match:
            codes = _split(file_match.group("codes"))
            if codes is None:
                suppressions.file_codes = None
            elif suppressions.file_codes is not None:
                suppressions.file_codes = suppressions.file_codes + codes
            continue
        match = _LINE_NOQA.search(text)
        if match is None:
            continue
        span = None
        if match.group("codes"):
            span = (column + match.start("codes"), column + match.end("codes"))
        suppressions.lines[line] = Directive(line, column, text, _split(match.group("codes")), span)
    return suppressions


def _split(codes: str | None) -> tuple[str, ...] | None:
    if not codes:
        return None
    return tuple(code.upper() for code in _CODE_SPLIT.split(codes.strip()) if code)


def _python_comments(source: SourceFile) -> list[tuple[int, int, str]]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source.text).readline)
        return [(t.start[0], t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        found = []
        for number, line in enumerate(source.lines, start=1):
            index = line.find("#")
            if index >= 0:
                found.append((number, index, line[index:].rstrip("\r\n")))
        return found


def _cpp_comments(source: SourceFile) -> list[tuple[int, int, str]]:
    found = []
    for number, line in enumerate(source.lines, start=1):
        for match in _CPP_COMMENT.finditer(line):
            found.append((number, match.start(), match.group()))
    return found


def unused_noqa(source: SourceFile, suppressions: Suppressions, code: str, name: str, url: str) -> list[Diagnostic]:
    """ROC002: `noqa` directives naming ROC codes that suppressed nothing, with a fix that removes them."""
    diagnostics = []
    for directive in suppressions.lines.values():
        if directive.codes is None:
            continue  # a bare noqa may be meant for another tool
        unused = [c for c in directive.codes if c.startswith("ROC") and c not in directive.used]
        if not unused:
            continue
        start = Location(directive.line, directive.column + 1)
        end = Location(directive.line, directive.column + len(directive.comment) + 1)
        diagnostics.append(
            Diagnostic(
                path=source.path,
                code=code,
                name=name,
                message=f"Unused `noqa` directive (unused: {', '.join(unused)})",
                severity=Severity.INFO,
                location=start,
                end_location=end,
                fix=_removal_fix(source, directive, unused),
                url=url,
                noqa_line=None,
            )
        )
    return diagnostics


def _removal_fix(source: SourceFile, directive: Directive, unused: list[str]) -> Fix:
    assert directive.codes is not None
    kept = [c for c in directive.codes if c not in unused]
    line_text = source.line_text(directive.line)
    if kept and directive.codes_span is not None:
        start_col, end_col = directive.codes_span
        content = ", ".join(kept)
        message = f"Remove unused code{'s' if len(unused) > 1 else ''} {', '.join(unused)}"
    else:
        # The whole comment goes, with the blanks before it.
        start_col = len(line_text[: directive.column].rstrip())
        end_col = directive.column + len(directive.comment)
        content = ""
        message = "Remove unused `noqa` directive"
    start = source.byte_offset(directive.line, start_col)
    end = source.byte_offset(directive.line, end_col)
    return Fix(message, (source.edit(start, end, content),), Applicability.SAFE)
