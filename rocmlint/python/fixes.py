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

import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from rocmlint.diagnostics import Edit, Fix
from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import dotted_name
from rocmlint.vendor import ROCM

GUARD_NAME = "_IS_ROCM"
HIP_EXTENSION = "IS_HIP_EXTENSION"
_CPP_EXTENSION = "torch.utils.cpp_extension"
# What a statement binding a reusable ROCm guard names: gating's conventions (`IS_ROCM`, `on_gfx9`,
# `on_mi3xx`, `torch.version.hip`) and the configured rocm-guards.
_GUARD_WORDS = re.compile(r"hip|rocm|amd|gfx|mi\d", re.IGNORECASE)

# Parents in which an `a if c else b` or `a and b` replacing a child needs no parentheses: the child is
# a whole argument, value, condition or element (every operator there binds looser than both forms).
_LOOSE_PARENTS = (
    cst.Arg,
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.Return,
    cst.Expr,
    cst.Element,
    cst.DictElement,
    cst.Index,
    cst.If,
    cst.While,
    cst.Assert,
)


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
    """What the fixes of one file share: the reusable guards and where a new definition goes (kept
    per context, weakly: it must not hold the context itself)."""

    def __init__(self, ctx: PythonContext) -> None:
        self.guards = [
            b for b in _module_bindings(ctx, _may_be_rocm_guard(ctx)) if ctx.gates.symbol_value(b.name) == ROCM
        ]
        self.torch_name, self.torch_end = _torch_import(ctx)
        self.top = _top_insertion(ctx)


_FACTS: weakref.WeakKeyDictionary[PythonContext, _ModuleFacts] = weakref.WeakKeyDictionary()


def _facts(ctx: PythonContext) -> _ModuleFacts:
    facts = _FACTS.get(ctx)
    if facts is None:
        facts = _FACTS[ctx] = _ModuleFacts(ctx)
    return facts


# --- the ROCm guard ------------------------------------------------------------------------------------
def rocm_guard(ctx: PythonContext, site: cst.CSTNode) -> Guard | None:
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


def module_definition(ctx: PythonContext, site: cst.CSTNode, name: str, value: str) -> Guard | None:
    """A module-level `name = value` after the torch import (`{torch}` in `value` is the module's name
    for torch), reused when `name` is already defined; None when `site` runs before it could be."""
    facts = _facts(ctx)
    existing = _module_bindings(ctx, lambda bound, _statement: bound == name)
    if existing:
        return Guard(name) if _runs_after(ctx, site, existing[0].end) else None
    if ctx.contains(name.encode()) or (ctx.semantic.lookup("torch", site) is not None and facts.torch_name is None):
        return None
    return _defined_after_torch(ctx, facts, site, name, value)


def torch_name(ctx: PythonContext) -> str:
    """How the module names torch (`import torch as T`), "torch" when a fix adds the import."""
    return _facts(ctx).torch_name or "torch"


def hip_extension_guard(ctx: PythonContext, site: cst.CSTNode) -> Guard | None:
    """For build scripts: an existing ROCm guard, else `IS_HIP_EXTENSION` imported from
    torch.utils.cpp_extension after the module's first torch import. A script that does not import
    torch gets no guard: adding a torch import would add a build dependency on NVIDIA too."""
    facts = _facts(ctx)
    reused = _reusable_guard(ctx, facts, site)
    if reused is not None:
        return Guard(reused)
    if ctx.contains(HIP_EXTENSION.encode()):
        return None  # bound in a way we cannot prove (inside a try, a function): leave it to the user
    end = _first_torch_statement_end(ctx)
    if end is None or not _runs_after(ctx, site, end):
        return None
    text = f"from {_CPP_EXTENSION} import {HIP_EXTENSION}{ctx.source.newline}"
    return Guard(HIP_EXTENSION, (_insertion(ctx, end, text),))


def _reusable_guard(ctx: PythonContext, facts: _ModuleFacts, site: cst.CSTNode) -> str | None:
    for guard in facts.guards:
        binding = ctx.semantic.lookup(guard.name, site)
        if binding is None or binding.scope.node is not ctx.semantic.module:
            continue  # shadowed where the fix goes
        if _runs_after(ctx, site, guard.end):
            return guard.name
    return None


def _defined_after_torch(
    ctx: PythonContext, facts: _ModuleFacts, site: cst.CSTNode, name: str, value: str
) -> Guard | None:
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


def _runs_after(ctx: PythonContext, site: cst.CSTNode, offset: int) -> bool:
    """Whether `site` runs after the module's code up to `offset` has run: its top-level statement (a
    def or class included: a function defined later cannot be called earlier) starts at or after it."""
    statement = top_level_statement(ctx, site)
    return statement is not None and ctx.top_level_start_byte(statement) >= offset


def top_level_statement(ctx: PythonContext, node: cst.CSTNode) -> cst.CSTNode | None:
    module = ctx.semantic.module
    if ctx.parent(node) is module:
        return node
    for ancestor in ctx.ancestors(node):
        if ctx.parent(ancestor) is module:
            return ancestor
    return None


def _module_bindings(ctx: PythonContext, wanted: Callable[[str, cst.SimpleStatementLine], bool]) -> list[_Binding]:
    """Names bound by top-level simple statements (`X = ...`, `from m import X`), in file order; only
    those `wanted(name, statement)` accepts (where a statement ends costs a position lookup)."""
    found: list[_Binding] = []
    for statement in ctx.semantic.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        names = [name for small in statement.body for name in _bound_names(small) if wanted(name, statement)]
        if names:
            end = _line_end_offset(ctx, statement)
            found.extend(_Binding(name, end) for name in names)
    return found


def _may_be_rocm_guard(ctx: PythonContext) -> Callable[[str, cst.SimpleStatementLine], bool]:
    """A statement whose names and strings match neither _GUARD_WORDS nor a configured guard cannot bind
    a ROCm test worth reusing; skipping the rest spares evaluating every module-level name, imports from
    other modules included."""
    configured = {guard.rsplit(".", 1)[-1] for guard in ctx.options.rocm_guards}
    verdicts: dict[cst.SimpleStatementLine, bool] = {}

    def says_rocm(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and node.value in configured:
            return True
        return isinstance(node, (cst.Name, cst.SimpleString)) and _GUARD_WORDS.search(node.value) is not None

    def wanted(_name: str, statement: cst.SimpleStatementLine) -> bool:
        if statement not in verdicts:
            verdicts[statement] = any(says_rocm(node) for node in ctx.semantic.descendants(statement))
        return verdicts[statement]

    return wanted


def _bound_names(small: cst.BaseSmallStatement) -> Iterator[str]:
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value
    elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
        yield small.target.value
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name):
                yield bound.value


def _torch_import(ctx: PythonContext) -> tuple[str | None, int | None]:
    """The name of the first top-level `import torch[.x] [as t]` that binds torch, and where the run of
    import lines it belongs to ends (a definition goes after the import block, not inside it)."""
    body = ctx.semantic.module.body
    for index, statement in enumerate(body):
        name = _torch_binding(statement)
        if name is not None:
            last = index
            while last + 1 < len(body) and _is_import_line(body[last + 1]):
                last += 1
            return name, _line_end_offset(ctx, body[last])
    return None, None


def _torch_binding(statement: cst.CSTNode) -> str | None:
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        if not isinstance(small, cst.Import):
            continue
        for alias in small.names:
            module = dotted_name(alias.name) or ""
            if alias.asname is not None and module == "torch" and isinstance(alias.asname.name, cst.Name):
                return alias.asname.name.value
            if alias.asname is None and (module == "torch" or module.startswith("torch.")):
                return "torch"
    return None


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _first_torch_statement_end(ctx: PythonContext) -> int | None:
    """Where the import block holding the first top-level import of torch (or a submodule) ends."""
    body = ctx.semantic.module.body
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            modules: list[str] = []
            if isinstance(small, cst.Import):
                modules = [dotted_name(alias.name) or "" for alias in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                modules = [dotted_name(small.module) or ""]
            if any(m == "torch" or m.startswith("torch.") for m in modules):
                last = index
                while last + 1 < len(body) and _is_import_line(body[last + 1]):
                    last += 1
                return _line_end_offset(ctx, body[last])
    return None


def _top_insertion(ctx: PythonContext) -> int:
    """Where `import torch` goes in a module without one: after the docstring, `__future__` imports and
    the import block that follows them."""
    body = ctx.semantic.module.body
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    while index < len(body) and _is_import_line(body[index]):  # after the module's import block
        index += 1
    if index > 0:
        return _line_end_offset(ctx, body[index - 1])
    if body:
        # libcst's range of a decorated def/class starts at `def`/`class`: insert above its decorators.
        decorators = getattr(body[0], "decorators", ())
        line = ctx.code_range(decorators[0] if decorators else body[0]).start.line
        return ctx.source.byte_offset(line, 0)
    return len(ctx.source.data)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom) and dotted_name(small.module or cst.Name("x")) == "__future__"
        for small in statement.body
    )


def _line_end_offset(ctx: PythonContext, statement: cst.CSTNode) -> int:
    """The byte offset of the start of the line after `statement` (end of file on the last line)."""
    if isinstance(statement, cst.SimpleStatementLine) and ctx.parent(statement) is ctx.module:
        return ctx.top_level_end_byte(statement)
    last_line = ctx.code_range(statement).end.line
    return ctx.source.byte_offset(last_line + 1, 0)


# --- text of the original code --------------------------------------------------------------------------
def original_text(ctx: PythonContext, node: cst.CSTNode) -> str:
    """The node's source text, byte for byte (without parentheses that belong to it)."""
    start, end = ctx.byte_range(node)
    return ctx.source.data[start:end].decode(ctx.source.encoding)


def needs_parens(ctx: PythonContext, node: cst.CSTNode, boolean: bool = False) -> bool:
    """Whether replacing `node` with a conditional expression (or, `boolean`, an `and`) needs parentheses
    to keep its place in the surrounding expression."""
    if getattr(node, "lpar", ()):
        return False  # its own parentheses stay around the replacement
    parent = ctx.parent(node)
    if isinstance(parent, (cst.If, cst.While)):
        return parent.test is not node
    if isinstance(parent, _LOOSE_PARENTS):
        return False
    return not (boolean and isinstance(parent, cst.BooleanOperation))


def also_searched(ctx: PythonContext, comparison: cst.Comparison, needle: str) -> Edit:
    """`(<comparison> or <needle> in <text>)` for `x in <text>`, `(<comparison> and <needle> not in <text>)`
    for `x not in <text>` (parenthesised only where needed). `<text>` is repeated verbatim: only for text
    that evaluating twice changes nothing (a name, `str(e)`)."""
    target = comparison.comparisons[0]
    searched = original_text(ctx, target.comparator)
    joiner, operator = ("or", "in") if isinstance(target.operator, cst.In) else ("and", "not in")
    new = f"{original_text(ctx, comparison)} {joiner} {needle} {operator} {searched}"
    return ctx.replace(comparison, f"({new})" if needs_parens(ctx, comparison) else new)


def is_truth_tested(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Only the truth of `node` is used (an `if`/`while`/conditional/comprehension test, or an operand of
    `and`/`or`/`not` there), so `False` may stand for whatever falsy value it had (`re.search` -> None)."""
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
            return parent.test is child
        if isinstance(parent, cst.CompIf):
            return True
        if not isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
            return False
        child = parent
    return False


def gate_expression(ctx: PythonContext, node: cst.CSTNode, guard: str) -> Edit:
    """`(not <guard>) and (<node>)`: false on ROCm, the original value (the same object) on NVIDIA."""
    text = original_text(ctx, node)
    inner = text if getattr(node, "lpar", ()) else f"({text})"
    new = f"(not {guard}) and {inner}"
    return ctx.replace(node, f"({new})" if needs_parens(ctx, node, boolean=True) else new)


def choose_on_rocm(ctx: PythonContext, node: cst.CSTNode, rocm_text: str, guard: str) -> Edit:
    """`<rocm_text> if <guard> else <node>`: the original kept verbatim in the NVIDIA arm."""
    new = f"{rocm_text} if {guard} else {original_text(ctx, node)}"
    return ctx.replace(node, f"({new})" if needs_parens(ctx, node) else new)


def keep_on_nvidia(ctx: PythonContext, node: cst.CSTNode, rocm_text: str, guard: str) -> Edit:
    """`<node> if not <guard> else <rocm_text>`: the original first, as build scripts split flag lists."""
    new = f"{original_text(ctx, node)} if not {guard} else {rocm_text}"
    return ctx.replace(node, f"({new})" if needs_parens(ctx, node) else new)


# --- statements ------------------------------------------------------------------------------------------
def enclosing_statement(ctx: PythonContext, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
    if isinstance(node, cst.SimpleStatementLine):
        return node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            return ancestor
        if isinstance(ancestor, (cst.BaseCompoundStatement, cst.SimpleStatementSuite)):
            return None
    return None


@dataclass(frozen=True)
class _Lines:
    """The whole lines a statement occupies: byte range (without the last newline), indentation, text."""

    start: int
    end: int
    indent: str
    text: list[str]  # each line with its own line ending, the last one without


def _statement_lines(ctx: PythonContext, statement: cst.SimpleStatementLine) -> _Lines | None:
    """None when the statement cannot be re-indented safely: it shares its line (`a; b`), or a string in
    it spans lines (indenting would change the string's content)."""
    if len(statement.body) != 1:
        return None
    for node in ctx.semantic.descendants(statement):
        if isinstance(node, (cst.SimpleString, cst.FormattedString)):
            span = ctx.code_range(node)
            if span.start.line != span.end.line:
                return None
    first = ctx.code_range(statement.body[0]).start.line
    last = ctx.code_range(statement.body[-1]).end.line
    source = ctx.source
    lines = source.lines[first - 1 : last]
    lines[-1] = lines[-1].rstrip("\r\n")
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))]
    start = source.byte_offset(first, 0)
    end = source.byte_offset(last, len(lines[-1]))
    return _Lines(start, end, indent, lines)


def _indented(ctx: PythonContext, lines: _Lines) -> str:
    unit = ctx.module.default_indent
    return "".join(unit + line if line.strip() else line for line in lines.text)


def wrap_in_if(ctx: PythonContext, node: cst.CSTNode, test: str) -> Edit | None:
    """Put the statement holding `node` under `if <test>:`, indented one level; None when it cannot be,
    or when the statement binds a name (skipped on ROCm, the name would be unbound there)."""
    statement = enclosing_statement(ctx, node)
    if statement is None or _binds_names(statement.body[0]):
        return None
    lines = _statement_lines(ctx, statement)
    if lines is None:
        return None
    newline = ctx.source.newline
    text = f"{lines.indent}if {test}:{newline}{_indented(ctx, lines)}"
    return ctx.source.edit(lines.start, lines.end, text)


def _binds_names(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        targets = [small.target]
    else:
        # An expression statement binds nothing; imports, del, global, ...: not what a gate fix wraps.
        return not isinstance(small, cst.Expr)
    return not all(isinstance(t, (cst.Attribute, cst.Subscript)) for t in targets)


def wrap_in_try(
    ctx: PythonContext,
    statement: cst.SimpleStatementLine,
    exception: str,
    handler: list[str],
) -> Edit | None:
    """`try: <statement> except <exception>: <handler lines>`; None when the statement cannot be indented."""
    lines = _statement_lines(ctx, statement)
    if lines is None:
        return None
    newline = ctx.source.newline
    unit = ctx.module.default_indent
    body = newline.join(f"{lines.indent}{unit}{line}" if line else "" for line in handler)
    text = (
        f"{lines.indent}try:{newline}{_indented(ctx, lines)}{newline}{lines.indent}except {exception}:{newline}{body}"
    )
    return ctx.source.edit(lines.start, lines.end, text)


# --- whole fixes ----------------------------------------------------------------------------------------
def gate_statement(ctx: PythonContext, node: cst.CSTNode, message: str) -> Fix | None:
    """The safe fix `if not <guard>:` around the statement holding `node`."""
    guard = rocm_guard(ctx, node)
    edit = wrap_in_if(ctx, node, f"not {guard.name}") if guard is not None else None
    if guard is None or edit is None:
        return None
    return ctx.fix(message, edit, *guard.edits)


def gate_condition(ctx: PythonContext, node: cst.CSTNode, message: str) -> Fix | None:
    """The safe fix `(not <guard>) and (<node>)`; none for an `assert` test, which would then always fail
    on ROCm."""
    if isinstance(ctx.parent(node), cst.Assert):
        return None
    guard = rocm_guard(ctx, node)
    if guard is None:
        return None
    return ctx.fix(message, gate_expression(ctx, node, guard.name), *guard.edits)
