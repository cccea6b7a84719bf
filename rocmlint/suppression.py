"""`# noqa`, `# noqa: ROC101,ROC102`, file-level `# rocmlint: noqa[: codes]` (`//` comments in C++),
and the unused-noqa check (ROC002).

A line that cannot hold a comment at its end (it ends inside a multi-line string, or, in Python, with a
backslash continuation) is covered by the directive on the first line after it that can, as ruff reads a
`noqa` after a multi-line string: `comment_lines` says where, for this module and for `--add-noqa`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from rocmlint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from rocmlint.python.lexical import STRING_OR_COMMENT
from rocmlint.source import SourceFile

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:\s*,?\s*[A-Za-z]+[0-9]+)*)"
# The word right after a comment marker (a hash or `//`, with or without a space, any case), as ruff and
# flake8 read it: a comment that merely mentions the word further on is no directive.
_NOQA_TEXT = re.compile("noqa", re.IGNORECASE)
_LINE_NOQA = re.compile(r"(?:#|//|/\*)\s*noqa(?![^\s:#*])(?:\s*:\s*" + _CODES + r")?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*rocmlint\s*:\s*noqa(?::\s*" + _CODES + r")?", re.IGNORECASE)
# C/C++ tokens that can hold `//` or `/*` without starting a comment, then the comments themselves.
_CPP_TOKEN = re.compile(
    r"""(?P<raw>R"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)")"""
    r"""|"(?:\\.|[^"\\\r\n])*"|'(?:\\.|[^'\\\r\n])*'"""
    r"""|(?P<line>//[^\r\n]*)|(?P<block>/\*.*?(?:\*/|\Z))""",
    re.DOTALL,
)
_CODE_SPLIT = re.compile(r"[\s,]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_PYTHON_CONTINUATION = re.compile(r"\\(?:\r\n|\r|\n)")


def mentions_noqa(data: bytes) -> bool:
    """Whether the file could hold a noqa directive (any case), decided on the raw bytes."""
    return b"noqa" in data.lower()  # lower() then a substring test: 3x faster than a case-blind regex


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
    # A line that cannot end in a comment -> the line whose directive covers it (only lines with one).
    covered_by: dict[int, int] = field(default_factory=dict)

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        if self.file_codes is None or diagnostic.code in self.file_codes:
            return True
        line = diagnostic.noqa_line or diagnostic.location.line
        directive = self.lines.get(self.covered_by.get(line, line))
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
    if not mentions_noqa(source.data):
        return Suppressions()
    comments = _python_comments(source) if source.language == "python" else _cpp_comments(source)
    suppressions = Suppressions()
    for line, column, text in comments:
        body = text.strip(" \t#/*")  # also a ` * rocmlint: noqa` line inside a /* */ block
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
    if any(_may_cover_earlier_lines(source, d) for d in suppressions.lines.values()):
        suppressions.covered_by = {
            line: target for line, target in comment_lines(source).items() if target in suppressions.lines
        }
    return suppressions


def _may_cover_earlier_lines(source: SourceFile, directive: Directive) -> bool:
    """Whether the line before the directive's may be one it covers: the directive's line closes a
    multi-line string, or the line before ends in a backslash. A cheap test on two lines, so that the
    lexing pass of `comment_lines` runs only for the few files that need it."""
    if source.line_text(directive.line - 1).endswith("\\"):
        return True
    code = source.line_text(directive.line)[: directive.column]
    closers = ('"""', "'''") if source.language == "python" else (')"',)
    return any(closer in code for closer in closers)


def comment_lines(source: SourceFile) -> dict[int, int]:
    """Every line (1-based) whose end cannot take a comment, mapped to the first line after it that can:
    a line ending inside a multi-line string literal, or a Python line ending in a backslash continuation
    (C++ puts a `/* */` comment before its backslash instead)."""
    blocked: set[int] = set()
    for start, end in _multi_line_spans(source):
        # The lines whose line break lies inside the span: from the span's first line to the one before its last.
        blocked.update(range(source.location_of_char(start).line, source.location_of_char(end).line))
    if source.language == "python":
        blocked.update(_continued_python_lines(source))
    targets: dict[int, int] = {}
    for line in sorted(blocked, reverse=True):
        targets[line] = targets.get(line + 1, line + 1)
    return targets


def _multi_line_spans(source: SourceFile) -> Iterator[tuple[int, int]]:
    """The (start, end) character offsets of string literals that hold a line break."""
    if source.language == "python":
        for match in STRING_OR_COMMENT.finditer(source.text):
            if match.lastgroup == "string" and _LINE_BREAK.search(match.group("string")):
                yield match.start("string"), match.end("string")
        return
    for match in _CPP_TOKEN.finditer(source.text):
        if match.group("line") is None and match.group("block") is None and _LINE_BREAK.search(match.group()):
            yield match.start(), match.end()


def _continued_python_lines(source: SourceFile) -> Iterator[int]:
    """Lines ending in a backslash continuation outside strings and comments."""
    if "\\" not in source.text:
        return
    tokens = [
        (m.start(m.lastgroup), m.end(m.lastgroup)) for m in STRING_OR_COMMENT.finditer(source.text) if m.lastgroup
    ]
    token_starts = [start for start, _ in tokens]
    for match in _PYTHON_CONTINUATION.finditer(source.text):
        index = bisect.bisect_right(token_starts, match.start()) - 1
        if index >= 0 and tokens[index][0] <= match.start() < tokens[index][1]:
            continue
        yield source.location_of_char(match.start()).line


def _split(codes: str | None) -> tuple[str, ...] | None:
    if not codes:
        return None
    return tuple(code.upper() for code in _CODE_SPLIT.split(codes.strip()) if code)


def _python_comments(source: SourceFile) -> list[tuple[int, int, str]]:
    """The comments that mention noqa (1-based line, 0-based column, text), strings stepped over."""
    found = []
    for match in STRING_OR_COMMENT.finditer(source.text):
        if match.lastgroup == "comment" and _NOQA_TEXT.search(match.group("comment")):
            location = source.location_of_char(match.start("comment"))
            found.append((location.line, location.column - 1, match.group("comment")))
    return found


def _cpp_comments(source: SourceFile) -> list[tuple[int, int, str]]:
    """Every `//` comment, and each line of every `/* */` comment, skipping string and char literals."""
    found = []
    for match in _CPP_TOKEN.finditer(source.text):
        if match.group("line") is not None or match.group("block") is not None:
            found.extend(_comment_lines(source, match.start(), match.group()))
    return found


def _comment_lines(source: SourceFile, offset: int, comment: str) -> list[tuple[int, int, str]]:
    pieces = []
    for piece in re.finditer(r"[^\r\n]+", comment):
        location = source.location_of_char(offset + piece.start())
        pieces.append((location.line, location.column - 1, piece.group()))
    return pieces


def unused_noqa(
    source: SourceFile,
    suppressions: Suppressions,
    code: str,
    name: str,
    url: str,
    unjudged: Collection[str] = (),
) -> list[Diagnostic]:
    """ROC002: `noqa` directives naming ROC codes that suppressed nothing, with a fix that removes them.

    Codes in `unjudged` (rules that crashed on this file) are never called unused: they did not look.
    """
    diagnostics = []
    for directive in sorted(suppressions.lines.values(), key=lambda d: d.line):
        if directive.codes is None:
            continue  # a bare noqa may be meant for another tool
        unused = [c for c in directive.codes if c.startswith("ROC") and c not in directive.used and c not in unjudged]
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
                noqa_line=directive.line,
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
