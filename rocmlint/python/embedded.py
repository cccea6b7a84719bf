"""CUDA C++ held in Python strings: the sources of JIT compile calls, with a map back into the Python file.

`load_inline(cuda_sources=...)`, `cupy.RawKernel(code)`, `cupy.ElementwiseKernel(..., operation)` and
friends compile at run time, so their kernels never meet a build-time check; the ROC2xx rules read them
here. A source may be a literal, an implicit concatenation, a `+` of literals, a list or tuple of them, or
a name bound once to any of these (typically a module-level constant). f-strings are skipped: their
text is not known before run time.

The Python front end runs this scan after its rules when the engine asks (`check_python(embedded_cuda=True)`)
and returns the sources as plain data; the engine runs the CUDA front end over them and maps the diagnostics
back. This module asks the front end's context only what `ScanContext` lists, so it does not import the
front end that calls it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from rocmlint.python.positions import CodeRange
from rocmlint.python.semantic import Semantic
from rocmlint.python.values import Follow, Values
from rocmlint.source import SourceFile

# Qualified name of the JIT entry point -> (positional index, keyword) of each argument holding CUDA text.
JIT_SOURCES: dict[str, tuple[tuple[int | None, str], ...]] = {
    "torch.utils.cpp_extension.load_inline": ((1, "cpp_sources"), (2, "cuda_sources")),
    "cupy.RawKernel": ((0, "code"),),
    "cupy.RawModule": ((None, "code"),),
    "cupy.ElementwiseKernel": ((2, "operation"), (None, "preamble")),
    "cupy.ReductionKernel": ((2, "map_expr"), (3, "reduce_expr"), (4, "post_map_expr"), (None, "preamble")),
    "torch.cuda.jiterator._create_jit_fn": ((0, "code_string"),),
    "torch.cuda.jiterator._create_multi_output_jit_fn": ((0, "code_string"),),
}
# The prefilter: a call resolves to an entry point only where the file writes the entry point's own name (the
# last part of its qualified name) as a whole word, in the call (`cp.RawKernel(...)`), in the import that binds it
# (`from torch.utils.cpp_extension import load_inline as li`) or in the assignment a name is followed through
# (`k = cupy.RawKernel`): the semantic model resolves nothing else. A file that writes none of them holds no
# source to check and is not parsed for one (`"jiterator"` in a test's op name, `@scoped_load_inline`).
TRIGGERS = tuple(sorted({name.rpartition(".")[2].encode() for name in JIT_SOURCES}))
_ENTRY_NAMES = frozenset(trigger.decode() for trigger in TRIGGERS)
_TRIGGER_WORD = re.compile(rb"(?<!\w)(?:" + b"|".join(re.escape(trigger) for trigger in TRIGGERS) + rb")(?!\w)")
# A list or tuple of sources gives one source per element; a conditional is not followed.
_SOURCES = Follow(arms=False, elements=True)


def holds_jit_entry_word(data: bytes) -> bool:
    """Whether a Python file's bytes write a JIT entry point's name as a whole word: every file in which
    `find_embedded_cuda` can find a source does. Asked only of files holding one of `TRIGGERS` as a substring (the
    engine's prefilter finds those in the pass it makes for the rules' triggers)."""
    return _TRIGGER_WORD.search(data) is not None


@dataclass(frozen=True)
class EmbeddedSource:
    """The CUDA text of some string literals and, for each of its characters, where it sits in the file."""

    text: str
    offsets: tuple[int, ...]  # code-point offset into the Python file's text of each character of `text`

    def file_offset(self, index: int) -> int:
        """The Python file offset of the snippet character at `index` (its end maps past the last one)."""
        if not self.offsets:
            return 0
        if index < len(self.offsets):
            return self.offsets[index]
        return self.offsets[-1] + 1


class ScanContext(Protocol):
    """What the scan asks of the Python front end's context (rocmlint.python.frontend.PythonContext)."""

    @property
    def source(self) -> SourceFile: ...

    @property
    def semantic(self) -> Semantic: ...

    def is_rocm_gated(self, node: ast.AST) -> bool: ...

    def qualified_name(self, node: ast.AST) -> str | None: ...

    @property
    def values(self) -> Values: ...

    def code_range(self, node: ast.AST) -> CodeRange: ...


def find_embedded_cuda(ctx: ScanContext) -> list[EmbeddedSource]:
    """Every CUDA source passed to a JIT compile call that ROCm can reach, in source order."""
    found: list[EmbeddedSource] = []
    seen: set[int] = set()
    for call in _jit_calls(ctx):
        if ctx.is_rocm_gated(call):
            continue
        for argument in _source_arguments(call, ctx):
            for literals in _literal_groups(argument, ctx):
                key = id(literals[0])
                if key in seen:  # a module constant used by several calls is scanned once
                    continue
                seen.add(key)
                source = _embedded(literals, ctx)
                if source is not None and source.text.strip():
                    found.append(source)
    return found


def _jit_calls(ctx: ScanContext) -> Iterator[ast.Call]:
    for node in ctx.semantic.parents:
        if not isinstance(node, ast.Call):
            continue
        # An attribute's qualified name ends in the attribute itself (`cp.RawKernel` -> `cupy.RawKernel`): one
        # that is no entry point's name is not resolved (most calls are method calls).
        if isinstance(node.func, ast.Attribute) and node.func.attr not in _ENTRY_NAMES:
            continue
        if ctx.qualified_name(node.func) in JIT_SOURCES:
            yield node


def _source_arguments(call: ast.Call, ctx: ScanContext) -> Iterator[ast.expr]:
    slots = JIT_SOURCES[ctx.qualified_name(call.func) or ""]
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    for index, keyword in slots:
        chosen = next((k.value for k in call.keywords if k.arg == keyword), None)
        if chosen is None and index is not None and index < len(positional):
            chosen = positional[index]
        if chosen is not None:
            yield chosen


def _literal_groups(node: ast.expr, ctx: ScanContext) -> list[list[ast.Constant]]:
    """Groups of literals that form one source each (a list of sources gives several groups), through names
    assigned once."""

    def visit(expr: ast.expr) -> list[list[ast.Constant]] | None:
        literals = _concatenated(expr)
        return [literals] if literals else None

    return ctx.values.trace(node, visit, _SOURCES)


def _concatenated(node: ast.expr) -> list[ast.Constant]:
    """The literals of `"a" + "b"` (`"a" "b"` is one literal in the tree); empty when any part is not a
    plain string literal (an f-string, a name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _concatenated(node.left), _concatenated(node.right)
        return left + right if left and right else []
    return []


def _embedded(literals: list[ast.Constant], ctx: ScanContext) -> EmbeddedSource | None:
    text: list[str] = []
    offsets: list[int] = []
    source = ctx.source
    for literal in literals:
        if isinstance(literal.value, bytes):
            return None
        span = ctx.code_range(literal)
        start = source.char_offset(span.start.line, span.start.column)
        written = source.text[start : source.char_offset(span.end.line, span.end.column)]
        for piece_start, piece_end in string_pieces(written):
            for character, offset in _characters(written[piece_start:piece_end]):
                text.append(character)
                offsets.append(start + piece_start + offset)
    return EmbeddedSource("".join(text), tuple(offsets))


# What may stand between the literals of an implicit concatenation: blanks, line breaks, backslash
# continuations and comments (the node's range starts at its first literal and ends with its last).
_BETWEEN_LITERALS = re.compile(r"(?:[ \t\f\r\n\\]|#[^\r\n]*)*")
_LITERAL_START = re.compile("[rRbBuU]{0,2}('''|\"\"\"|'|\")")


@dataclass(frozen=True)
class StringToken:
    """A string literal written as one token: its prefix (`r`, `b`, ""), its quote and the source text
    between the quotes."""

    prefix: str
    quote: str
    body: str


def string_token(code: str) -> StringToken | None:
    """`code` as one string literal; None for an implicit concatenation (`"a" "b"`, one node in the
    tree), whose pieces a new text cannot be put back into, or for anything else."""
    pieces = string_pieces(code)
    if len(pieces) != 1 or pieces[0] != (0, len(code)):
        return None
    opening = _LITERAL_START.match(code)
    if opening is None:
        return None
    quote = opening.group(1)
    prefix = code[: opening.start(1)]
    if len(code) < opening.end() + len(quote) or not code.endswith(quote):
        return None
    return StringToken(prefix, quote, code[opening.end() : len(code) - len(quote)])


def string_pieces(text: str) -> list[tuple[int, int]]:
    """Where each literal of a plain (not f-) string node's source text begins and ends: one literal, or
    several for an implicit concatenation (`"a" "b"`, which the tree holds as one node)."""
    pieces: list[tuple[int, int]] = []
    position = _after_blanks(text, 0)
    while position < len(text):
        end = _literal_end(text, position)
        pieces.append((position, end))
        position = _after_blanks(text, end)
    return pieces


def _after_blanks(text: str, position: int) -> int:
    between = _BETWEEN_LITERALS.match(text, position)
    return position if between is None else between.end()


def _literal_end(text: str, start: int) -> int:
    """Where the literal starting at `start` ends: after its closing quote (a backslash escapes the
    character after it, in raw literals too, as the tokenizer reads them)."""
    match = _LITERAL_START.match(text, start)
    if match is None:
        return len(text)  # not a literal: nothing more to split
    quote = match.group(1)
    position = match.end()
    while position < len(text):
        if text[position] == "\\":
            position += 2
        elif text.startswith(quote, position):
            return position + len(quote)
        else:
            position += 1
    return len(text)


def _prefix(literal: str) -> str:
    return literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))]


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|\r\n|[\s\S])")
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}


def _characters(literal: str) -> Iterator[tuple[str, int]]:
    """Each character of a string literal's value with its offset in the literal's source text."""
    prefix = _prefix(literal)
    quote = literal[len(prefix) : len(prefix) + 3]
    if quote not in ('"""', "'''"):
        quote = quote[0]
    body_start = len(prefix) + len(quote)
    body = literal[body_start : len(literal) - len(quote)]
    raw = "r" in prefix.lower()
    position = 0
    while position < len(body):
        if body[position] == "\\" and not raw:
            match = _ESCAPE.match(body, position)
            if match is not None:
                for character in _unescape(match.group(1)):
                    yield character, body_start + position
                position = match.end()
                continue
        yield body[position], body_start + position
        position += 1


def _unescape(escape: str) -> str:
    if escape in ("\n", "\r\n"):
        return ""  # a backslash-newline continues the line
    if escape in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[escape]
    if escape[0] in "xuU":
        return chr(int(escape[1:], 16))
    if escape[0] in "01234567":
        return chr(int(escape, 8))
    if escape.startswith("N{"):
        return "?"  # a named character: never part of CUDA syntax
    return "\\" + escape
