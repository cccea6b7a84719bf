"""Source positions of libcst nodes, computed only around the nodes asked about.

libcst's PositionProvider regenerates the whole module with per-node bookkeeping (on a 290 KB file about
eight times the cost of plain code generation). A diagnostic needs the positions of a few nodes, so this
finds the line a top-level statement starts on from the plain text of the statements before it, then
generates that statement's code plainly up to the innermost statement holding the node, and records
positions only inside that one (a test class of 5,000 lines costs a plain code generation up to the
method asked about, not a position-recording one of the whole class). A top-level statement asked
about more than eight times is recorded whole once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

# After this many targeted passes over one top-level statement, recording it whole is cheaper.
_MAX_TARGETED_PASSES = 8


@dataclass
class _Recorder:
    """Stands in for the metadata provider the codegen state writes its ranges into."""

    _computed: dict[cst.CSTNode, CodeRange] = field(default_factory=dict)


class PositionIndex:
    def __init__(self, module: cst.Module, parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self.module = module
        self.parents = parents
        self._recorder = _Recorder()
        self._start_lines: list[int] = []  # start line of each top-level statement computed so far
        self._next_line = 1 + _newlines(self._code_of(module.header))
        self._index: dict[cst.CSTNode, int] = {stmt: i for i, stmt in enumerate(module.body)}
        self._done: set[cst.CSTNode] = set()
        self._passes: dict[cst.CSTNode, int] = {}  # targeted passes per top-level statement

    def code_range(self, node: cst.CSTNode) -> CodeRange:
        found = self._recorder._computed.get(node)
        if found is not None:
            return found
        statement = self._top_level_statement(node)
        if statement is None or statement in self._done:
            raise KeyError(f"no position for {type(node).__name__}")
        target = self._innermost_statement(node)
        passes = self._passes.get(statement, 0)
        if target is statement or passes >= _MAX_TARGETED_PASSES:
            self._record(statement)
        else:
            self._passes[statement] = passes + 1
            self._record_within(statement, target)
        return self._recorder._computed[node]

    def statement_start_line(self, statement: cst.CSTNode) -> int:
        """The line a top-level statement's text begins on (its leading blank lines and comments
        included), from plain code generation of the statements before it: no per-node positions."""
        return self._start_line(self._index[statement])

    def line_after(self, statement: cst.SimpleStatementLine) -> int:
        """The line after a top-level simple statement: where the next one's text begins (its blank
        lines and comments included), from plain code generation only."""
        index = self._index[statement]
        if index + 1 < len(self.module.body):
            return self._start_line(index + 1)
        return self._start_line(index) + _newlines(self._code_of([statement]))

    def _top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        current = node
        while current is not None and current not in self._index:
            current = self.parents.get(current)
        return current

    def _innermost_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """Where to record: the innermost statement holding `node`, or `node` itself when that is a
        top-level statement (one `op_db = [...]` of 10,000 lines)."""
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = self.parents.get(current)
        if current is None or current in self._index:
            return node
        return current

    def _record_within(self, statement: cst.CSTNode, target: cst.CSTNode) -> None:
        state = _TargetedCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=self._recorder,  # type: ignore[arg-type]  # only its _computed dict is used
        )
        state.line = self._start_line(self._index[statement])
        state.target = target
        try:
            statement._codegen(state)
        except _TargetDone:
            pass

    def _record(self, statement: cst.CSTNode) -> None:
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=self._recorder,  # type: ignore[arg-type]  # only its _computed dict is used
        )
        state.line = self._start_line(self._index[statement])
        statement._codegen(state)
        self._done.add(statement)

    def _start_line(self, index: int) -> int:
        body = self.module.body
        while len(self._start_lines) <= index:
            self._start_lines.append(self._next_line)
            self._next_line += _newlines(self._code_of([body[len(self._start_lines) - 1]]))
        return self._start_lines[index]

    def _code_of(self, nodes: object) -> str:
        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        for node in nodes:  # type: ignore[attr-defined]
            node._codegen(state)
        return "".join(state.tokens)


def _newlines(text: str) -> int:
    return len(NEWLINE_RE.findall(text))


class _TargetDone(Exception):
    """Ends a targeted code generation once the target's positions are recorded."""


class _TargetedCodegenState(PositionProvidingCodegenState):
    """Plain code generation until `target`, position recording inside it, then stop."""

    target: cst.CSTNode | None = None
    _inside: bool = False
    _synced: int = 0  # tokens already counted into line and column

    def add_token(self, value: str) -> None:
        if self._inside:
            super().add_token(value)
        else:
            self.tokens.append(value)

    def add_indent_tokens(self) -> None:
        if self._inside:
            super().add_indent_tokens()
        else:
            self.tokens.extend(self.indent_tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self.target:
            self._catch_up()
            self._inside = True
        if self._inside:
            super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self._inside:
            super().after_codegen(node)
        if node is self.target:
            raise _TargetDone

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> Iterator[None]:
        if not self._inside:
            yield  # an ancestor of the target: nothing to record (and it may end by _TargetDone)
            return
        with super().record_syntactic_position(node, start_node=start_node, end_node=end_node):
            yield

    def _catch_up(self) -> None:
        """Line and column after the tokens generated so far."""
        self._update_position("".join(self.tokens[self._synced :]))
        self._synced = len(self.tokens)
