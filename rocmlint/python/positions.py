"""Source ranges of `ast` nodes in lines and code-point columns.

CPython records each node's start and end as a line and a UTF-8 byte column. Diagnostics and editors count
columns in code points, so a column is converted only on the (non-ASCII) lines that need it. Names that
the tree keeps as plain strings (a def's name, an attribute's `.attr`, a keyword argument's name) get their
range from the source text around the node.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_DEF_OR_CLASS = re.compile(r"(?:async\s+)?(?:def|class)\s+")


@dataclass(frozen=True)
class CodePosition:
    line: int  # 1-based
    column: int  # 0-based, in code points


@dataclass(frozen=True)
class CodeRange:
    start: CodePosition
    end: CodePosition


class PositionIndex:
    """Ranges of the nodes of one module, over `lines` (the module's text split as the tokenizer does)."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.text = text
        self.lines = lines
        self._line_starts: list[int] | None = None

    # --- nodes --------------------------------------------------------------------------------------
    def code_range(self, node: ast.AST) -> CodeRange:
        if isinstance(node, ast.Module):
            return CodeRange(CodePosition(1, 0), self._end_of_text())
        if isinstance(node, (ast.arguments, ast.withitem, ast.comprehension, ast.match_case)):
            return self._range_of_parts(node)
        start_line = getattr(node, "lineno", None)
        if start_line is None:
            raise KeyError(f"no position for {type(node).__name__}")
        start = self.position(start_line, node.col_offset)  # type: ignore[attr-defined]
        end = self.position(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return CodeRange(start, end)

    def attribute_range(self, node: ast.Attribute) -> CodeRange:
        """The range of `.attr`'s name: it ends where the attribute expression ends."""
        end = self.position(node.end_lineno or node.lineno, node.end_col_offset or 0)
        return CodeRange(CodePosition(end.line, end.column - len(node.attr)), end)

    def name_range(self, node: ast.AST) -> CodeRange:
        """The range of the name a def, class, alias, keyword argument or parameter is written with."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = self.position(node.lineno, node.col_offset)
            keyword = _DEF_OR_CLASS.match(self.lines[start.line - 1], start.column)
            column = keyword.end() if keyword is not None else start.column
            return CodeRange(CodePosition(start.line, column), CodePosition(start.line, column + len(node.name)))
        name = _written_name(node)
        start = self.code_range(node).start
        return CodeRange(start, CodePosition(start.line, start.column + len(name)))

    def text_of(self, node: ast.AST) -> str:
        """The node's exact source text."""
        span = self.code_range(node)
        return self.text[self.offset(span.start.line, span.start.column) : self.offset(span.end.line, span.end.column)]

    # --- lines and columns --------------------------------------------------------------------------
    def position(self, line: int, byte_column: int) -> CodePosition:
        """A tree position (UTF-8 byte column) as a code-point position."""
        if line < 1 or line > len(self.lines):
            return CodePosition(line, byte_column)
        text = self.lines[line - 1]
        if text.isascii():
            return CodePosition(line, byte_column)
        return CodePosition(line, len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="replace")))

    def offset(self, line: int, column: int) -> int:
        """The character offset into the text of a 1-based line and code-point column."""
        starts = self._starts()
        if line > len(starts):
            return len(self.text)
        return starts[line - 1] + column

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            starts, total = [], 0
            for line in self.lines:
                starts.append(total)
                total += len(line)
            self._line_starts = starts
        return self._line_starts

    def _end_of_text(self) -> CodePosition:
        if not self.lines:
            return CodePosition(1, 0)
        last = self.lines[-1]
        if last.endswith(("\n", "\r")):
            return CodePosition(len(self.lines) + 1, 0)
        return CodePosition(len(self.lines), len(last))

    def _range_of_parts(self, node: ast.AST) -> CodeRange:
        """Nodes CPython gives no position (parameters, `with` items, comprehension clauses, match cases):
        from their first part to their last."""
        parts = [part for part in ast.iter_child_nodes(node) if getattr(part, "lineno", None) is not None]
        if not parts:
            raise KeyError(f"no position for {type(node).__name__}")
        first = min(parts, key=lambda part: (part.lineno, part.col_offset))  # type: ignore[attr-defined]
        last = max(parts, key=lambda part: (part.end_lineno, part.end_col_offset))  # type: ignore[attr-defined]
        return CodeRange(self.code_range(first).start, self.code_range(last).end)


def _written_name(node: ast.AST) -> str:
    if isinstance(node, ast.alias):
        return node.name
    if isinstance(node, ast.keyword):
        return node.arg or ""
    if isinstance(node, ast.arg):
        return node.arg
    raise KeyError(f"no name range for {type(node).__name__}")
