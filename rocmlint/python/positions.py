"""Source positions of libcst nodes, computed only for the top-level statements that contain reported nodes.

libcst's PositionProvider regenerates the whole module with per-node bookkeeping (on a 290 KB file about
eight times the cost of plain code generation). A diagnostic needs the positions of a few nodes, so this
finds the line a top-level statement starts on from the plain text of the statements before it, and runs
the position-recording code generation on that one statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState


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

    def code_range(self, node: cst.CSTNode) -> CodeRange:
        found = self._recorder._computed.get(node)
        if found is not None:
            return found
        statement = self._top_level_statement(node)
        if statement is None or statement in self._done:
            raise KeyError(f"no position for {type(node).__name__}")
        self._record(statement)
        return self._recorder._computed[node]

    def statement_start_line(self, statement: cst.CSTNode) -> int:
        """The line a top-level statement's text begins on (its leading blank lines and comments
        included), from plain code generation of the statements before it: no per-node positions."""
        return self._start_line(self._index[statement])

    def _top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        current = node
        while current is not None and current not in self._index:
            current = self.parents.get(current)
        return current

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
