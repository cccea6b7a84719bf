"""Source positions of libcst nodes, computed only around the nodes asked about.

libcst's PositionProvider regenerates the whole module with per-node bookkeeping (on a 290 KB file about
eight times the cost of plain code generation). A diagnostic needs the positions of a few nodes, so this
records positions only inside the innermost statement holding the node asked about, and starts that
recording on the statement's own line: the line each statement of a block begins on is found from the
plain text of the statements before it (and of its compound statement's header) and remembered, so
asking about many nodes of one 5,000-line test class generates the class's text about once, not once per
question. A node that is a top-level statement itself (one `op_db = [...]`) is recorded whole.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

_Block = cst.Module | cst.IndentedBlock  # what holds statements on lines of their own
_BLOCKS = (cst.Module, cst.IndentedBlock)


@dataclass
class _Recorder:
    """Stands in for the metadata provider the codegen state writes its ranges into."""

    _computed: dict[cst.CSTNode, CodeRange] = field(default_factory=dict)


class PositionIndex:
    def __init__(self, module: cst.Module, parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self.module = module
        self.parents = parents
        self._recorder = _Recorder()
        # Per block, the line each of its statements begins on (up to the last one asked about), and
        # each statement's index in its block.
        self._block_lines: dict[_Block, list[int]] = {module: [1 + _newlines(self._code_of(module.header))]}
        self._slots: dict[_Block, dict[cst.CSTNode, int]] = {}
        self._recorded: set[cst.CSTNode] = set()

    def code_range(self, node: cst.CSTNode) -> CodeRange:
        found = self._recorder._computed.get(node)
        if found is not None:
            return found
        statement = self._innermost_statement(node)
        if statement is None or statement in self._recorded:
            raise KeyError(f"no position for {type(node).__name__}")
        self._record(statement)
        return self._recorder._computed[node]

    def statement_start_line(self, statement: cst.CSTNode) -> int:
        """The line a statement's text begins on (its leading blank lines and comments included), from
        plain code generation of what comes before it: no per-node positions."""
        return self._line_of(statement)

    def line_after(self, statement: cst.SimpleStatementLine) -> int:
        """The line after a simple statement: where the next one's text begins (its blank lines and
        comments included), from plain code generation only."""
        return self._line_of(statement) + _newlines(self._code_of([statement]))

    def _innermost_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement of a block holding `node` (itself when it is one; an `elif` is part
        of its `if`); None outside the module."""
        current: cst.CSTNode | None = node
        while current is not None and not (
            isinstance(current, cst.BaseStatement) and isinstance(self.parents.get(current), _BLOCKS)
        ):
            current = self.parents.get(current)
        return current

    def _record(self, statement: cst.CSTNode) -> None:
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=self._recorder,  # type: ignore[arg-type]  # only its _computed dict is used
        )
        state.line = self._line_of(statement)
        state.indent_tokens = self._enclosing_indents(statement)
        statement._codegen(state)
        self._recorded.add(statement)

    def _line_of(self, statement: cst.CSTNode) -> int:
        """The line the code generation of `statement` begins on (its leading lines included)."""
        block = self.parents.get(statement)
        if not isinstance(block, _BLOCKS):
            raise KeyError(f"no position for {type(statement).__name__}")
        index = self._slot(block, statement)
        lines = self._block_lines.get(block)
        if lines is None:
            assert isinstance(block, cst.IndentedBlock)  # the module's lines are seeded in __init__
            lines = self._block_lines[block] = [self._first_line(block)]
        while len(lines) <= index:
            lines.append(lines[-1] + _newlines(self._code_of([block.body[len(lines) - 1]])))
        return lines[index]

    def _first_line(self, block: cst.IndentedBlock) -> int:
        """The line a block's first statement begins on: its compound statement's line plus the lines of
        that statement's text in front of it (decorators, header, earlier clauses)."""
        owner = self._innermost_statement(self.parents[block])
        if owner is None:
            raise KeyError("an indented block outside any statement")
        state = _PrefixCodegenState(
            default_indent=self.module.default_indent, default_newline=self.module.default_newline
        )
        state.stop_at = block.body[0]
        with contextlib.suppress(_PrefixDone):
            owner._codegen(state)
        return self._line_of(owner) + _newlines("".join(state.tokens))

    def _slot(self, block: _Block, statement: cst.CSTNode) -> int:
        slots = self._slots.get(block)
        if slots is None:
            slots = self._slots[block] = {child: index for index, child in enumerate(block.body)}
        return slots[statement]

    def _enclosing_indents(self, statement: cst.CSTNode) -> list[str]:
        """The indentation `statement` is written at, outermost first: one level per indented block
        around it and per `match` (whose cases are indented too)."""
        indents: list[str] = []
        current = self.parents.get(statement)
        while current is not None:
            if isinstance(current, (cst.IndentedBlock, cst.Match)):
                indents.append(self.module.default_indent if current.indent is None else current.indent)
            current = self.parents.get(current)
        return indents[::-1]

    def _code_of(self, nodes: object) -> str:
        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        for node in nodes:  # type: ignore[attr-defined]
            node._codegen(state)
        return "".join(state.tokens)


def _newlines(text: str) -> int:
    return len(NEWLINE_RE.findall(text))


class _PrefixDone(Exception):
    """Ends a code generation where the statement it stops at would begin."""


class _PrefixCodegenState(CodegenState):
    """Plain code generation that stops before `stop_at`: the text in front of a block's first statement
    (only its newlines are counted, so the indentation it is generated at does not matter)."""

    stop_at: cst.CSTNode | None = None

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self.stop_at:
            raise _PrefixDone
        super().before_codegen(node)
