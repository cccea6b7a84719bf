"""Between text that another program already decoded (an editor buffer, flake8's `lines`) and rocmlint.

rocmlint reads bytes and reports 1-based lines and 1-based code-point columns; LSP counts 0-based lines
and columns in UTF-16 code units unless the client negotiated UTF-8 or UTF-32.
"""

from __future__ import annotations

import re
from typing import Literal

from rocmlint.diagnostics import Location
from rocmlint.source import DecodeError, detect_python_encoding

Encoding = Literal["utf-8", "utf-16", "utf-32"]
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # rocmlint and LSP both end lines at \r\n, \r and \n


def encode_text(text: str, language: str) -> bytes:
    """The bytes rocmlint would have read from disk for `text`.

    A Python file with a coding cookie (`# -*- coding: latin-1 -*-`) is decoded by rocmlint with that
    codec, so encoding the text as UTF-8 would shift every column after a non-ASCII character.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    if language != "python":
        return data
    try:
        encoding = detect_python_encoding(data)
    except DecodeError:
        return data
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return data  # rocmlint will report ROC001 for the mismatch, as it would on disk


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their line endings (a final empty line when it ends with one)."""
    return _LINE_BREAK.split(text)


def code_units(text: str, encoding: Encoding) -> int:
    """How many code units `text` takes in the client's position encoding."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    return len(text.encode("utf-8", errors="surrogatepass"))


def to_lsp(location: Location, lines: list[str], encoding: Encoding) -> tuple[int, int]:
    """rocmlint's (1-based line, 1-based code-point column) as LSP's 0-based (line, character)."""
    if not lines:
        return 0, 0
    if location.line > len(lines):  # past the end: the end of the last line
        return len(lines) - 1, code_units(lines[-1], encoding)
    line = max(location.line - 1, 0)
    return line, code_units(lines[line][: max(location.column - 1, 0)], encoding)


def from_lsp(line: int, character: int, lines: list[str], encoding: Encoding) -> Location:
    """LSP's 0-based (line, character in code units) as rocmlint's 1-based code-point Location.

    A character in the middle of a surrogate pair or a UTF-8 sequence counts as the start of it.
    """
    if line >= len(lines):
        return Location(line + 1, 1)
    text = lines[line]
    units = 0
    for index, char in enumerate(text):
        units += code_units(char, encoding)
        if units > character:
            return Location(line + 1, index + 1)
    return Location(line + 1, len(text) + 1)


def source_encoding(data: bytes, language: str) -> str:
    """The codec rocmlint decodes `data` with (what the fixer needs to encode replacement text)."""
    if language != "python":
        return "utf-8"
    try:
        return detect_python_encoding(data)
    except DecodeError:
        return "utf-8"
