"""A file's bytes, its decoded text, and conversions between (line, column) and byte offsets."""

from __future__ import annotations

import bisect
import codecs
import io
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property

from rocmlint.diagnostics import Edit, Location

# Python's tokenizer ends a line at \r\n, \r or \n; so do we, for every language.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
# `.hu`: a CUDA header suffix some projects use beside `.cuh` (LightGBM-style `cuda_utils.hu`, included from `.cu`).
CUDA_SUFFIXES = frozenset(
    {".cu", ".cuh", ".hu", ".cpp", ".cc", ".cxx", ".c++", ".h", ".hpp", ".hh", ".hxx", ".inl", ".hip"}
)


class DecodeError(Exception):
    """The file's bytes are not text in the encoding it declares."""


def split_lines(text: str) -> list[str]:
    """The text's lines, each with its line ending (\r\n, \r or \n, as Python's tokenizer reads them)."""
    return _LINE_RE.findall(text)


def language_of(path: str) -> str | None:
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in PYTHON_SUFFIXES:
        return "python"
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    return None


def detect_python_encoding(data: bytes) -> str:
    """PEP 263: a BOM or a coding cookie in the first two lines, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise DecodeError(str(error)) from error
    return encoding


@dataclass
class SourceFile:
    path: str
    data: bytes
    language: str
    encoding: str = "utf-8"
    _text: str | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, path: str, data: bytes, language: str) -> SourceFile:
        """Decode `data`; raises DecodeError for binary or undecodable content."""
        if b"\x00" in data:
            raise DecodeError("file contains NUL bytes (binary data?)")
        encoding = detect_python_encoding(data) if language == "python" else "utf-8-sig"
        try:
            text = data.decode(encoding)
        except (UnicodeDecodeError, LookupError) as error:
            raise DecodeError(f"cannot decode as {encoding}: {error}") from error
        if encoding == "utf-8-sig" and not data.startswith(codecs.BOM_UTF8):
            encoding = "utf-8"
        return cls(path=path, data=data, language=language, encoding=encoding, _text=text)

    @property
    def text(self) -> str:
        assert self._text is not None
        return self._text

    @property
    def bom_length(self) -> int:
        return len(codecs.BOM_UTF8) if self.encoding == "utf-8-sig" else 0

    @cached_property
    def lines(self) -> list[str]:
        """The text's lines, each with its line ending."""
        return split_lines(self.text)

    @cached_property
    def _line_start_bytes(self) -> list[int]:
        starts = [self.bom_length]
        codec = "utf-8" if self.encoding == "utf-8-sig" else self.encoding
        for line in self.lines:
            starts.append(starts[-1] + len(line.encode(codec)))
        return starts

    @cached_property
    def _line_start_chars(self) -> list[int]:
        starts = [0]
        for line in self.lines:
            starts.append(starts[-1] + len(line))
        return starts

    @property
    def _codec(self) -> str:
        return "utf-8" if self.encoding == "utf-8-sig" else self.encoding

    def line_text(self, line: int) -> str:
        """Line `line` (1-based) without its line ending; '' past the end."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r\n")
        return ""

    def byte_offset(self, line: int, column: int) -> int:
        """Byte offset of a 1-based line and 0-based code-point column."""
        if line > len(self.lines):
            return len(self.data)
        prefix = self.lines[line - 1][:column]
        return self._line_start_bytes[line - 1] + len(prefix.encode(self._codec))

    def char_offset(self, line: int, column: int) -> int:
        if line > len(self.lines):
            return len(self.text)
        return self._line_start_chars[line - 1] + column

    def location_of_char(self, offset: int) -> Location:
        """1-based line and 1-based column of a code-point offset into the text."""
        index = self._line_index(bisect.bisect_right(self._line_start_chars, offset) - 1)
        return Location(index + 1, offset - self._line_start_chars[index] + 1)

    def location_of_byte(self, offset: int) -> Location:
        """1-based line and 1-based column (in code points) of a byte offset into the raw data."""
        index = self._line_index(bisect.bisect_right(self._line_start_bytes, offset) - 1)
        line_bytes_before = self.data[self._line_start_bytes[index] : offset]
        column = len(line_bytes_before.decode(self._codec, errors="replace"))
        return Location(index + 1, column + 1)

    def _line_index(self, index: int) -> int:
        """A 0-based line index clamped to the text; the end of a text without a final line break is on its
        last line, not on a line after it."""
        index = max(0, min(index, len(self.lines)))
        if index == len(self.lines) and self.lines and not self.lines[-1].endswith(("\n", "\r")):
            return index - 1
        return index

    def edit(self, start: int, end: int, content: str) -> Edit:
        """An edit over byte range [start, end) with its positions filled in."""
        return Edit(start, end, content, self.location_of_byte(start), self.location_of_byte(end))

    @property
    def newline(self) -> str:
        """The file's dominant line ending, for inserted lines."""
        for line in self.lines:
            if line.endswith("\r\n"):
                return "\r\n"
            if line.endswith("\r"):
                return "\r"
            if line.endswith("\n"):
                return "\n"
        return "\n"
