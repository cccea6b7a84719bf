"""Building blocks of the Python fixes: the ROCm test a fix gates on, and statement/expression wrapping.

The safety model (hazard catalog 1.3): a fix never rewrites the original code. It adds a ROCm test
around it (`if not _IS_ROCM:`, `(not _IS_ROCM) and (...)`, `<rocm alternative> if _IS_ROCM else <orig>`),
so on NVIDIA, where the test is false, the original tokens run exactly as before.

The test is a guard name that the module already binds to a ROCm test (`IS_ROCM = torch.version.hip is
not None`, an imported `IS_HIP_EXTENSION`, ...) or one definition the fix inserts right after the
module's `import torch`. That definition is the same Edit (offsets and text) for every fix of the file,
so `apply_fixes` shares it and the file gets it once however many fixes use it.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rocmlint.diagnostics import Edit, Fix
from rocmlint.python.embedded import string_pieces
from rocmlint.python.frontend import PythonContext
from rocmlint.python.positions import CodePosition
from rocmlint.python.scopes import COMPOUND_STATEMENTS, nested_blocks
from rocmlint.python.tree import children
from rocmlint.vendor import ROCM

GUARD_NAME = "_IS_ROCM"
HIP_EXTENSION = "IS_HIP_EXTENSION"
_CPP_EXTENSION = "torch.utils.cpp_extension"
# What a statement binding a reusable ROCm guard names: gating's conventions (`IS_ROCM`, `on_gfx9`,
# `on_mi3xx`, `torch.version.hip`) and the configured rocm-guards.
_GUARD_WORDS = re.compile(r"hip|rocm|amd|gfx|mi\d", re.IGNORECASE)
# Statements on one logical line joined by `;` (`a; b`); a compound statement is a line of its own.
_StatementLine = tuple[ast.stmt, ...]
# Between two statements of one logical line when a backslash continues it onto the next physical line.
_JOINED_ACROSS_LINES = re.compile(r"(?:[ \t\f]|\\(?:\r\n|\r|\n))*;(?:[ \t\f]|\\(?:\r\n|\r|\n))*")
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+: f-strings are several tokens
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_DEFAULT_INDENT = "    "


@dataclass(frozen=True)
class Guard:
    """The ROCm test to write (`name`) and the edits that define it (empty when the module has it)."""

    name: str
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class _Binding:
    """A module-level name and the byte offset where its defining statement ends."""

    name: str
    end: int


class _ModuleFacts:
    """What the fixes of one file share: the module's statement lines, the reusable guards and where a
    new definition goes (kept per context, weakly: it must not hold the context itself)."""

    def __init__(self, ctx: PythonContext) -> None:
        self.lines = _module_lines(ctx)
        self.guards = [
            b
            for b in _module_bindings(ctx, self.lines, _may_be_rocm_guard(ctx))
            if ctx.gates.symbol_value(b.name) == ROCM
        ]
        self.torch_name, self.torch_end = _torch_import(ctx, self.lines)
        self.top = _top_insertion(ctx, self.lines)


_FACTS: weakref.WeakKeyDictionary[PythonContext, _ModuleFacts] = weakref.WeakKeyDictionary()
_INDENT_UNITS: weakref.WeakKeyDictionary[PythonContext, str] = weakref.WeakKeyDictionary()


def _facts(ctx: PythonContext) -> _ModuleFacts:
    facts = _FACTS.get(ctx)
    if facts is None:
        facts = _FACTS[ctx] = _ModuleFacts(ctx)
    return facts


# --- the ROCm guard ------------------------------------------------------------------------------------
def rocm_guard(ctx: PythonContext, site: ast.AST) -> Guard | None:
    """The ROCm test a fix at `site` can use: an existing module-level guard bound before `site` runs, or
    `_IS_ROCM` defined after the module's `import torch` (with `import torch` itself when the module
    has no torch binding). None when neither is possible: the code runs before the torch import, or
    `_IS_ROCM` is taken by something else."""
    facts = _facts(ctx)
    reused = _reusable_guard(ctx, facts, site)
    if reused is not None:
        return Guard(reused)
    if ctx.contains(GUARD_NAME.encode()) or (
        ctx.semantic.lookup("torch", site) is not None and facts.torch_name is None
    ):
        return None  # the name is taken, or torch is bound some other way (inside a try, from an import)
    return _defined_after_torch(
        ctx,
        facts,
        site,
        GUARD_NAME,
        'getattr({torch}.version, "hip", None) is not None',
    )


def module_definition(ctx: PythonContext, site: ast.AST, name: str, value: str) -> Guard | None:
    """A module-level `name = value` after the torch import (`{torch}` in `value` is the module's name
    for torch), reused when `name` is already defined; None when `site` runs before it could be."""
    facts = _facts(ctx)
    existing = _module_bindings(ctx, facts.lines, lambda bound, _line: bound == name)
    if existing:
        return Guard(name) if _runs_after(ctx, site, existing[0].end) else None
    if ctx.contains(name.encode()) or (ctx.semantic.lookup("torch", site) is not None and facts.torch_name is None):
        return None
    return _defined_after_torch(ctx, facts, site, name, value)


def torch_name(ctx: PythonContext) -> str:
    """How the module names torch (`import torch as T`), "torch" when a fix adds the import."""
    return _facts(ctx).torch_name or "torch"


def hip_extension_guard(ctx: PythonContext, site: ast.AST) -> Guard | None:
    """For build scripts: an existing ROCm guard, else `IS_HIP_EXTENSION` imported from
    torch.utils.cpp_extension after the module's first torch import. A script that does not import
    torch gets no guard: adding a torch import would add a build dependency on NVIDIA too."""
    facts = _facts(ctx)
    reused = _reusable_guard(ctx, facts, site)
    if reused is not None:
        return Guard(reused)
    if ctx.contains(HIP_EXTENSION.encode()):
        return None  # bound in a way we cannot prove (inside a try, a function): leave it to the user
    end = _first_torch_statement_end(ctx, facts.lines)
    if end is None or not _runs_after(ctx, site, end):
        return None
    text = f"from {_CPP_EXTENSION} import {HIP_EXTENSION}{ctx.source.newline}"
    return Guard(HIP_EXTENSION, (_insertion(ctx, end, text),))


def _reusable_guard(ctx: PythonContext, facts: _ModuleFacts, site: ast.AST) -> str | None:
    for guard in facts.guards:
        binding = ctx.semantic.lookup(guard.name, site)
        if binding is None or binding.scope.node is not ctx.semantic.module:
            continue  # shadowed where the fix goes
        if _runs_after(ctx, site, guard.end):
            return guard.name
    return None


def _defined_after_torch(ctx: PythonContext, facts: _ModuleFacts, site: ast.AST, name: str, value: str) -> Guard | None:
    newline = ctx.source.newline
    if facts.torch_name is not None and facts.torch_end is not None:
        at, prefix = facts.torch_end, ""
        torch = facts.torch_name
    else:
        at, prefix, torch = facts.top, f"import torch{newline}", "torch"
    if not _runs_after(ctx, site, at):
        return None
    definition = f"{prefix}{name} = {value.format(torch=torch)}{newline}"
    return Guard(name, (_insertion(ctx, at, definition),))


def _insertion(ctx: PythonContext, at: int, text: str) -> Edit:
    """Insert whole lines at `at` (a line start, or the end of a file whose last line has no newline)."""
    data = ctx.source.data
    if at == len(data) and data and not data.endswith((b"\n", b"\r")):
        text = ctx.source.newline + text
    return ctx.source.edit(at, at, text)


def _runs_after(ctx: PythonContext, site: ast.AST, offset: int) -> bool:
    """Whether `site` runs after the module's code up to `offset` has run: the line of its top-level
    statement (a def or class included: a function defined later cannot be called earlier) starts at or
    after it."""
    statement = top_level_statement(ctx, site)
    return statement is not None and ctx.top_level_start_byte(_statement_line(ctx, statement)[0]) >= offset


def top_level_statement(ctx: PythonContext, node: ast.AST) -> ast.stmt | None:
    module = ctx.semantic.module
    for current in (node, *ctx.ancestors(node)):
        if ctx.parent(current) is module and isinstance(current, ast.stmt):
            return current
    return None


def _module_lines(ctx: PythonContext) -> list[_StatementLine]:
    """The module's statements grouped by logical line, in file order."""
    lines: list[list[ast.stmt]] = []
    previous: ast.stmt | None = None
    for statement in ctx.semantic.module.body:
        if previous is not None and _shares_line(ctx, previous, statement):
            lines[-1].append(statement)
        else:
            lines.append([statement])
        previous = statement
    return [tuple(line) for line in lines]


def _statement_line(ctx: PythonContext, statement: ast.stmt) -> _StatementLine:
    """The statements on `statement`'s logical line (`a; b`), itself included, in order."""
    block = ctx.semantic.block_of(statement)
    index = next(i for i, item in enumerate(block) if item is statement)
    first = last = index
    while first > 0 and _shares_line(ctx, block[first - 1], block[first]):
        first -= 1
    while last + 1 < len(block) and _shares_line(ctx, block[last], block[last + 1]):
        last += 1
    return tuple(block[first : last + 1])


def _shares_line(ctx: PythonContext, earlier: ast.stmt, later: ast.stmt) -> bool:
    """Whether `later` follows `earlier` on one logical line (`a; b`), adjacent statements of a block."""
    if later.lineno == earlier.end_lineno:
        return True  # two statements of one block on one physical line: only `;` separates them
    if not ctx.source.line_text(earlier.end_lineno or earlier.lineno).endswith("\\"):
        return False
    end, start = ctx.code_range(earlier).end, ctx.code_range(later).start
    source = ctx.source
    between = source.text[source.char_offset(end.line, end.column) : source.char_offset(start.line, start.column)]
    return _JOINED_ACROSS_LINES.fullmatch(between) is not None


def _begins_line(ctx: PythonContext, statement: ast.stmt) -> bool:
    """Whether only indentation precedes `statement` on its line (not `if x: <statement>`, `a; <statement>`)."""
    start = ctx.code_range(statement).start
    return not ctx.source.line_text(start.line)[: start.column].strip()


def _module_bindings(
    ctx: PythonContext, lines: list[_StatementLine], wanted: Callable[[str, _StatementLine], bool]
) -> list[_Binding]:
    """Names bound by top-level simple statements (`X = ...`, `from m import X`), in file order; only
    those `wanted(name, line)` accepts (where a line ends costs a position lookup)."""
    found: list[_Binding] = []
    for line in lines:
        names = [name for statement in line for name in _bound_names(statement) if wanted(name, line)]
        if names:
            end = _line_end_offset(ctx, line)
            found.extend(_Binding(name, end) for name in names)
    return found


def _may_be_rocm_guard(ctx: PythonContext) -> Callable[[str, _StatementLine], bool]:
    """A statement line whose names and strings match neither _GUARD_WORDS nor a configured guard cannot
    bind a ROCm test worth reusing; skipping the rest spares evaluating every module-level name, imports
    from other modules included."""
    configured = {guard.rsplit(".", 1)[-1] for guard in ctx.options.rocm_guards}
    verdicts: dict[_StatementLine, bool] = {}

    def says_rocm(node: ast.AST) -> bool:
        names = list(_written_names(node))
        if any(name in configured for name in names):
            return True
        return any(_GUARD_WORDS.search(text) is not None for text in (*names, *_string_text(ctx, node)))

    def wanted(_name: str, line: _StatementLine) -> bool:
        if line not in verdicts:
            verdicts[line] = any(says_rocm(node) for statement in line for node in ctx.semantic.descendants(statement))
        return verdicts[line]

    return wanted


def _written_names(node: ast.AST) -> Iterator[str]:
    """The identifiers a node itself is written with (a dotted module name gives each part)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.alias):
        yield from node.name.split(".")
        if node.asname is not None:
            yield node.asname
    elif isinstance(node, ast.ImportFrom) and node.module is not None:
        yield from node.module.split(".")
    elif isinstance(node, (ast.keyword, ast.arg)) and node.arg is not None:
        yield node.arg
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names


def _string_text(ctx: PythonContext, node: ast.AST) -> Iterator[str]:
    """The value of a string literal (not the text parts of an f-string)."""
    if not isinstance(node, ast.Constant) or isinstance(ctx.parent(node), ast.JoinedStr):
        return
    if isinstance(node.value, str):
        yield node.value
    elif isinstance(node.value, bytes):
        yield node.value.decode("latin-1")


def _bound_names(statement: ast.stmt) -> Iterator[str]:
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            if isinstance(target, ast.Name):
                yield target.id
    elif (
        isinstance(statement, ast.AnnAssign) and statement.value is not None and isinstance(statement.target, ast.Name)
    ):
        yield statement.target.id
    elif isinstance(statement, ast.ImportFrom):
        for alias in statement.names:
            if alias.name != "*":
                yield alias.asname if alias.asname is not None else alias.name


def _torch_import(ctx: PythonContext, lines: list[_StatementLine]) -> tuple[str | None, int | None]:
    """The name of the first top-level `import torch[.x] [as t]` that binds torch, and where the run of
    import lines it belongs to ends (a definition goes after the import block, not inside it)."""
    for index, line in enumerate(lines):
        name = _torch_binding(line)
        if name is not None:
            return name, _import_block_end(ctx, lines, index)
    return None, None


def _torch_binding(line: _StatementLine) -> str | None:
    for statement in line:
        if not isinstance(statement, ast.Import):
            continue
        for alias in statement.names:
            if alias.asname is not None and alias.name == "torch":
                return alias.asname
            if alias.asname is None and (alias.name == "torch" or alias.name.startswith("torch.")):
                return "torch"
    return None


def _is_import_line(line: _StatementLine) -> bool:
    return all(isinstance(statement, (ast.Import, ast.ImportFrom)) for statement in line)


def _import_block_end(ctx: PythonContext, lines: list[_StatementLine], index: int) -> int:
    """Where the run of import lines from `lines[index]` on ends."""
    last = index
    while last + 1 < len(lines) and _is_import_line(lines[last + 1]):
        last += 1
    return _line_end_offset(ctx, lines[last])


def _first_torch_statement_end(ctx: PythonContext, lines: list[_StatementLine]) -> int | None:
    """Where the import block holding the first top-level import of torch (or a submodule) ends."""
    for index, line in enumerate(lines):
        for statement in line:
            modules: list[str] = []
            if isinstance(statement, ast.Import):
                modules = [alias.name for alias in statement.names]
            elif isinstance(statement, ast.ImportFrom) and statement.module is not None and not statement.level:
                modules = [statement.module]
            if any(m == "torch" or m.startswith("torch.") for m in modules):
                return _import_block_end(ctx, lines, index)
    return None


def _top_insertion(ctx: PythonContext, lines: list[_StatementLine]) -> int:
    """Where `import torch` goes in a module without one: after the docstring, `__future__` imports and
    the import block that follows them."""
    index = 0
    if lines and _is_docstring(ctx, lines[0]):
        index = 1
    while index < len(lines) and _is_future_import(lines[index]):
        index += 1
    while index < len(lines) and _is_import_line(lines[index]):  # after the module's import block
        index += 1
    if index > 0:
        return _line_end_offset(ctx, lines[index - 1])
    if lines:
        # A decorated def/class starts at `def`/`class`: insert above its decorators.
        first = lines[0][0]
        decorators = getattr(first, "decorator_list", ())
        line = ctx.code_range(decorators[0] if decorators else first).start.line
        return ctx.source.byte_offset(line, 0)
    return len(ctx.source.data)


def _is_docstring(ctx: PythonContext, line: _StatementLine) -> bool:
    """A line that is one string expression: a literal, or an implicit concatenation even with f-string
    parts (`"a" f"{b}"`, which the tree holds as one f-string)."""
    if len(line) != 1 or not isinstance(line[0], ast.Expr):
        return False
    value = line[0].value
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (str, bytes))
    return isinstance(value, ast.JoinedStr) and len(_formatted_literal_rows(ctx.code_of(value))) > 1


def _is_future_import(line: _StatementLine) -> bool:
    return any(isinstance(statement, ast.ImportFrom) and statement.module == "__future__" for statement in line)


def _line_end_offset(ctx: PythonContext, line: _StatementLine) -> int:
    """The byte offset of the start of the line after a statement line (end of file on the last line)."""
    return ctx.top_level_end_byte(line[-1])


# --- text of the original code --------------------------------------------------------------------------
def original_text(ctx: PythonContext, node: ast.AST) -> str:
    """The node's source text, byte for byte (without parentheses that belong to it)."""
    start, end = ctx.byte_range(node)
    return ctx.source.data[start:end].decode(ctx.source.encoding)


def needs_parens(ctx: PythonContext, node: ast.AST, boolean: bool = False) -> bool:
    """Whether replacing `node` with a conditional expression (or, `boolean`, an `and`) needs parentheses
    to keep its place in the surrounding expression."""
    return _needs_parens(ctx, node, boolean, _has_own_parentheses(ctx, node))


def _needs_parens(ctx: PythonContext, node: ast.AST, boolean: bool, parenthesized: bool) -> bool:
    if parenthesized:
        return False  # its own parentheses stay around the replacement
    parent = ctx.parent(node)
    if isinstance(parent, (ast.If, ast.While)):
        return parent.test is not node
    if parent is not None and _holds_whole_expression(ctx, parent, node):
        return False
    return not (boolean and isinstance(parent, ast.BoolOp))


def _holds_whole_expression(ctx: PythonContext, parent: ast.AST, node: ast.AST) -> bool:
    """Whether `node` is a whole argument, value, condition or element of `parent`, where every operator
    binds looser than both `a if c else b` and `a and b`."""
    if isinstance(parent, ast.Call):
        return any(argument is node for argument in parent.args)  # not the function called
    if isinstance(parent, ast.ClassDef):
        return any(base is node for base in parent.bases)
    if isinstance(parent, ast.Starred):
        return isinstance(ctx.parent(parent), (ast.Call, ast.ClassDef))  # `f(*x)`, not `[*x]`
    if isinstance(parent, ast.Assign):
        return parent.value is node
    if isinstance(parent, ast.AnnAssign):
        return parent.annotation is not node
    if isinstance(parent, ast.Dict):
        return any(
            node is key or (node is value and key is not None)
            for key, value in zip(parent.keys, parent.values, strict=True)
        )
    if isinstance(parent, ast.Subscript):
        return parent.slice is node and not isinstance(node, ast.Slice)
    return isinstance(
        parent, (ast.keyword, ast.AugAssign, ast.Return, ast.Expr, ast.List, ast.Tuple, ast.Set, ast.Assert)
    )


def _has_own_parentheses(ctx: PythonContext, node: ast.AST) -> bool:
    """Whether parentheses of its own enclose `node`: `(a)`, not the call's in `f(a)`. The tree keeps no
    trace of them, so the text around it tells."""
    if not isinstance(node, ast.expr):
        return False
    if any(isinstance(ancestor, ast.FormattedValue) for ancestor in ctx.ancestors(node)):
        opened, closed = _parentheses_in_replacement_field(ctx, node)
    else:
        opened, closed = _parentheses_around(ctx, node)
    # The parent's own pair opens the run; it encloses `node` only when every parenthesis of the run closes.
    parents = _parentheses_of_parent(ctx, node) if closed == opened else 0
    return min(opened, closed) > parents


def _parentheses_around(ctx: PythonContext, node: ast.expr) -> tuple[int, int]:
    """How many `(` right before `node` and `)` right after it (at most as many), comments and line breaks
    between them skipped."""
    span = ctx.code_range(node)
    start, end = (span.start.line, span.start.column), (span.end.line, span.end.column)
    opened = closed = 0
    for kind, text, at in _tokens_from(ctx, _scan_start(ctx, node)):
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if at < start:
            opened = opened + 1 if text == "(" else 0  # only the run right before it can enclose it
        elif at >= end:
            if text != ")" or closed == opened:
                break
            closed += 1
    return opened, closed


def _parentheses_in_replacement_field(ctx: PythonContext, node: ast.expr) -> tuple[int, int]:
    """_parentheses_around for a node inside an f-string's `{...}`, which the tokenizer of Python 3.11 reads
    as part of one string token: there only blanks can stand between the parentheses and the node."""
    span, source = ctx.code_range(node), ctx.source
    text = source.text
    position = source.char_offset(span.start.line, span.start.column)
    opened = 0
    while position > 0 and (text[position - 1] == "(" or text[position - 1].isspace()):
        opened += text[position - 1] == "("
        position -= 1
    position = source.char_offset(span.end.line, span.end.column)
    closed = 0
    while position < len(text) and closed < opened and (text[position] == ")" or text[position].isspace()):
        closed += text[position] == ")"
        position += 1
    return opened, closed


def _scan_start(ctx: PythonContext, node: ast.expr) -> CodePosition:
    """Where reading tokens may start to see every parenthesis around `node`: the end of the closest part
    of an enclosing node written before it, else the start of the closest enclosing node with a position."""
    start = (node.lineno, node.col_offset)
    for ancestor in ctx.ancestors(node):
        before = [part for part in children(ancestor) if _ends_by(part, start)]
        if before:
            last = max(before, key=lambda part: (part.end_lineno, part.end_col_offset))  # type: ignore[attr-defined]
            return ctx.code_range(last).end
        if getattr(ancestor, "lineno", None) is not None and (ancestor.lineno, ancestor.col_offset) <= start:  # type: ignore[attr-defined]
            return ctx.code_range(ancestor).start
    return CodePosition(1, 0)


def _ends_by(part: ast.AST, start: tuple[int, int]) -> bool:
    end_line = getattr(part, "end_lineno", None)
    return end_line is not None and (end_line, part.end_col_offset) <= start  # type: ignore[attr-defined]


def _tokens_from(ctx: PythonContext, at: CodePosition) -> Iterator[tuple[int, str, tuple[int, int]]]:
    """The file's tokens from `at` on (type, text, start line and column), read as if inside parentheses
    so that line breaks and indentation are no statement structure; ends early on a tokenizer error."""
    lines = ctx.source.lines
    first = "(" + lines[at.line - 1][at.column :] if at.line <= len(lines) else ""
    readline = itertools.chain([first], itertools.islice(lines, at.line, None)).__next__
    try:
        for token in tokenize.generate_tokens(readline):
            line, column = token.start
            if line == 1 and column == 0:
                continue  # the parenthesis added in front
            if line == 1:
                yield token.type, token.string, (at.line, at.column + column - 1)
            else:
                yield token.type, token.string, (at.line + line - 1, column)
    except (tokenize.TokenError, SyntaxError):
        return


def _parentheses_of_parent(ctx: PythonContext, node: ast.expr) -> int:
    """1 when the parentheses right around `node` are its parent's own syntax: the sole argument of a call
    (`f(a)`) or base of a class, the sole item of a parenthesised `with (a):`."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Call):
        sole = not parent.keywords and len(parent.args) == 1 and parent.args[0] is node
    elif isinstance(parent, ast.ClassDef):
        sole = not parent.keywords and len(parent.bases) == 1 and parent.bases[0] is node
    elif isinstance(parent, ast.withitem):
        statement = ctx.parent(parent)
        sole = parent.optional_vars is None and isinstance(statement, (ast.With, ast.AsyncWith))
        sole = sole and len(statement.items) == 1  # type: ignore[union-attr]
    else:
        sole = False
    return 1 if sole else 0


def also_searched(ctx: PythonContext, comparison: ast.Compare, needle: str) -> Edit:
    """`(<comparison> or <needle> in <text>)` for `x in <text>`, `(<comparison> and <needle> not in <text>)`
    for `x not in <text>` (parenthesised only where needed). `<text>` is repeated verbatim: only for text
    that evaluating twice changes nothing (a name, `str(e)`)."""
    searched = original_text(ctx, comparison.comparators[0])
    joiner, operator = ("or", "in") if isinstance(comparison.ops[0], ast.In) else ("and", "not in")
    new = f"{original_text(ctx, comparison)} {joiner} {needle} {operator} {searched}"
    return ctx.replace(comparison, f"({new})" if needs_parens(ctx, comparison) else new)


def is_truth_tested(ctx: PythonContext, node: ast.AST) -> bool:
    """Only the truth of `node` is used (an `if`/`while`/conditional/comprehension test, or an operand of
    `and`/`or`/`not` there), so `False` may stand for whatever falsy value it had (`re.search` -> None)."""
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, (ast.If, ast.While, ast.IfExp)):
            return parent.test is child
        if isinstance(parent, ast.comprehension):
            return any(test is child for test in parent.ifs)
        if not isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
            return False
        child = parent
    return False


def _looser_than_and(node: ast.AST) -> bool:
    """Whether `node` binds looser than `and`: `(not G) and a or b` would not gate `b`."""
    if isinstance(node, ast.BoolOp):
        return isinstance(node.op, ast.Or)
    return isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr))


def gate_expression(ctx: PythonContext, node: ast.AST, guard: str) -> Edit:
    """`(not <guard>) and (<node>)`: false on ROCm, the original value (the same object) on NVIDIA."""
    text = original_text(ctx, node)
    parenthesized = _has_own_parentheses(ctx, node)
    # Its own parentheses enclose the whole replacement, so an operand binding looser than `and` needs new ones.
    inner = text if parenthesized and not _looser_than_and(node) else f"({text})"
    new = f"(not {guard}) and {inner}"
    return ctx.replace(node, f"({new})" if _needs_parens(ctx, node, True, parenthesized) else new)


def choose_on_rocm(ctx: PythonContext, node: ast.AST, rocm_text: str, guard: str) -> Edit:
    """`<rocm_text> if <guard> else <node>`: the original kept verbatim in the NVIDIA arm."""
    new = f"{rocm_text} if {guard} else {original_text(ctx, node)}"
    return ctx.replace(node, f"({new})" if needs_parens(ctx, node) else new)


def keep_on_nvidia(ctx: PythonContext, node: ast.AST, rocm_text: str, guard: str) -> Edit:
    """`<node> if not <guard> else <rocm_text>`: the original first, as build scripts split flag lists."""
    new = f"{original_text(ctx, node)} if not {guard} else {rocm_text}"
    return ctx.replace(node, f"({new})" if needs_parens(ctx, node) else new)


# --- statements ------------------------------------------------------------------------------------------
def enclosing_statement(ctx: PythonContext, node: ast.AST) -> ast.stmt | None:
    """The simple statement holding `node` (itself when it is one) when it starts a line or follows a `;`;
    None inside a compound statement's header or a one-line body (`if x: <statement>`)."""
    statement = ctx.semantic.statement_of(node)
    if statement is None or isinstance(statement, COMPOUND_STATEMENTS):
        return None
    return statement if _begins_line(ctx, _statement_line(ctx, statement)[0]) else None


def indent_unit(ctx: PythonContext) -> str:
    """One level of the file's indentation: that of its first indented line (four spaces when none is)."""
    unit = _INDENT_UNITS.get(ctx)
    if unit is None:
        unit = _INDENT_UNITS[ctx] = _first_indentation(ctx)
    return unit


def _first_indentation(ctx: PythonContext) -> str:
    for line, column in _line_starts(ctx, ctx.semantic.module.body):
        text = ctx.source.line_text(line)
        indentation = text[: len(text) - len(text.lstrip(" \t"))]
        if indentation and (column is None or column == len(indentation)):
            return indentation
    return _DEFAULT_INDENT


def _line_starts(ctx: PythonContext, block: list[ast.stmt]) -> Iterator[tuple[int, int | None]]:
    """Where each logical line of `block` and of the blocks inside it begins (line, byte column), in file
    order; a `case` clause gives its line (its column is not recorded)."""
    previous: ast.stmt | None = None
    for statement in block:
        if previous is None or not _shares_line(ctx, previous, statement):
            yield statement.lineno, statement.col_offset
        previous = statement
        if isinstance(statement, ast.Match):
            for case in statement.cases:
                yield case.pattern.lineno, None
                yield from _line_starts(ctx, case.body)
        else:
            for nested in nested_blocks(statement):
                yield from _line_starts(ctx, nested)


@dataclass(frozen=True)
class _Lines:
    """The whole lines a statement occupies: byte range (without the last newline), indentation, text."""

    start: int
    end: int
    indent: str
    text: list[str]  # each line with its own line ending, the last one without


def _statement_lines(ctx: PythonContext, statement: ast.stmt) -> _Lines | None:
    """None when the statement cannot be re-indented safely: it shares its line (`a; b`, `if x: a`), or a
    string in it spans lines (indenting would change the string's content)."""
    if len(_statement_line(ctx, statement)) != 1 or not _begins_line(ctx, statement):
        return None
    if any(_literal_spans_lines(ctx, node) for node in ctx.semantic.descendants(statement)):
        return None
    span = ctx.code_range(statement)
    first, last = span.start.line, span.end.line
    source = ctx.source
    lines = source.lines[first - 1 : last]
    lines[-1] = lines[-1].rstrip("\r\n")
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))]
    start = source.byte_offset(first, 0)
    end = source.byte_offset(last, len(lines[-1]))
    return _Lines(start, end, indent, lines)


def _literal_spans_lines(ctx: PythonContext, node: ast.AST) -> bool:
    """Whether one literal of a string node spans lines (not merely an implicit concatenation written
    over several lines)."""
    if not isinstance(node, (ast.Constant, ast.JoinedStr)) or node.lineno == node.end_lineno:
        return False
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (str, bytes)) or isinstance(ctx.parent(node), ast.JoinedStr):
            return False
        text = ctx.code_of(node)
        return any(_has_line_break(text[start:end]) for start, end in string_pieces(text))
    if isinstance(ctx.parent(node), ast.FormattedValue):
        return False  # an f-string inside another one's replacement field: that one's literal holds it
    return any(first != last for first, last in _formatted_literal_rows(ctx.code_of(node)))


def _has_line_break(text: str) -> bool:
    return "\n" in text or "\r" in text


def _formatted_literal_rows(text: str) -> list[tuple[int, int]]:
    """The first and last line of each literal of an f-string node's text (`f"a" "b"` is one node), read
    by the tokenizer: an f-string's replacement fields may hold strings of their own."""
    rows: list[tuple[int, int]] = []
    depth = first = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(f"({text})").readline):
            if token.type == tokenize.STRING and depth == 0:
                rows.append((token.start[0], token.end[0]))
            elif token.type == _FSTRING_START:
                first = token.start[0] if depth == 0 else first
                depth += 1
            elif token.type == _FSTRING_END:
                depth -= 1
                if depth == 0:
                    rows.append((first, token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return [(0, 1)]  # unreadable: taken as spanning lines, so nothing re-indents it
    return rows


def _indented(ctx: PythonContext, lines: _Lines) -> str:
    unit = indent_unit(ctx)
    return "".join(unit + line if line.strip() else line for line in lines.text)


def wrap_in_if(ctx: PythonContext, node: ast.AST, test: str) -> Edit | None:
    """Put the statement holding `node` under `if <test>:`, indented one level; None when it cannot be,
    or when the statement binds a name (skipped on ROCm, the name would be unbound there)."""
    statement = enclosing_statement(ctx, node)
    if statement is None or _binds_names(_statement_line(ctx, statement)[0]):
        return None
    lines = _statement_lines(ctx, statement)
    if lines is None:
        return None
    newline = ctx.source.newline
    text = f"{lines.indent}if {test}:{newline}{_indented(ctx, lines)}"
    return ctx.source.edit(lines.start, lines.end, text)


def _binds_names(statement: ast.stmt) -> bool:
    targets: Sequence[ast.expr]
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    else:
        # An expression statement binds nothing; imports, del, global, ...: not what a gate fix wraps.
        return not isinstance(statement, ast.Expr)
    return not all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets)


def wrap_in_try(
    ctx: PythonContext,
    statement: ast.stmt,
    exception: str,
    handler: list[str],
) -> Edit | None:
    """`try: <statement> except <exception>: <handler lines>`; None when the statement cannot be indented."""
    lines = _statement_lines(ctx, statement)
    if lines is None:
        return None
    newline = ctx.source.newline
    unit = indent_unit(ctx)
    body = newline.join(f"{lines.indent}{unit}{line}" if line else "" for line in handler)
    text = (
        f"{lines.indent}try:{newline}{_indented(ctx, lines)}{newline}{lines.indent}except {exception}:{newline}{body}"
    )
    return ctx.source.edit(lines.start, lines.end, text)


# --- whole fixes ----------------------------------------------------------------------------------------
def gate_statement(ctx: PythonContext, node: ast.AST, message: str) -> Fix | None:
    """The safe fix `if not <guard>:` around the statement holding `node`."""
    guard = rocm_guard(ctx, node)
    edit = wrap_in_if(ctx, node, f"not {guard.name}") if guard is not None else None
    if guard is None or edit is None:
        return None
    return ctx.fix(message, edit, *guard.edits)


def gate_condition(ctx: PythonContext, node: ast.AST, message: str) -> Fix | None:
    """The safe fix `(not <guard>) and (<node>)`; none for an `assert` test, which would then always fail
    on ROCm."""
    if isinstance(ctx.parent(node), ast.Assert):
        return None
    guard = rocm_guard(ctx, node)
    if guard is None:
        return None
    return ctx.fix(message, gate_expression(ctx, node, guard.name), *guard.edits)
