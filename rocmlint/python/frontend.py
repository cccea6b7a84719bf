"""The Python front end: parse once, walk once for every enabled rule, answer the rules' questions."""

from __future__ import annotations

import ast
import threading
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from rocmlint.python.embedded import EmbeddedSource, find_embedded_cuda
from rocmlint.python.gating import Branch, CrossModuleResolver, GateAnalyzer, Vendor
from rocmlint.python.positions import PositionIndex
from rocmlint.python.references import References
from rocmlint.python.regions import reduce_source, without_bare_continuations
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import Callback, walk
from rocmlint.python.values import Values
from rocmlint.rule import Rule
from rocmlint.source import SourceFile


class PythonParseError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class RuleOptions:
    """The settings rules may read (never the whole configuration)."""

    rocm_guards: frozenset[str] = frozenset()
    target_archs: tuple[str, ...] = ()


def parse(source: SourceFile, hits: Sequence[int] | None = None, pinned: Iterable[str] = ()) -> cst.Module:
    """The file's module; with `hits` (offsets into `source.text` where the triggers of the rules that
    will run match) only the parts those rules need are parsed (rocmlint/python/regions.py), positions
    unchanged. `pinned`: names whose module-level definitions are always parsed (configured guards).
    Elements of large literals are kept: nothing here could notice that one was needed."""
    return _parse(source, hits, pinned, elide_literals=False)[0]


def _parse(
    source: SourceFile, hits: Sequence[int] | None, pinned: Iterable[str], elide_literals: bool = True
) -> tuple[cst.Module, tuple[tuple[int, int], ...]]:
    """parse(), and the 0-based line runs [first, end) of literal elements it left out."""
    text = without_bare_continuations(source.text)  # same length: `hits` stay valid
    try:
        if len(text) < _SCREEN_MIN_LENGTH or not _compiles(text):
            return parse_module_safely(text), ()
        if hits is not None:
            reduced = _parse_reduced(text, hits, pinned, elide_literals)
            if reduced is not None:
                return reduced
        return _on_large_stack(cst.parse_module, text), ()  # compile() screened the nesting
    except cst.ParserSyntaxError as error:
        raise _precise_error(source, error.message, error.editor_line) from None
    except cst.CSTValidationError as error:  # parsed, but not valid Python: `"" b""` mixes str and bytes
        raise _precise_error(source, str(error), 1) from None
    except RecursionError:
        raise PythonParseError("nesting too deep to parse", 1, 1) from None


# libcst's native parser recurses on the C stack and dies with SIGSEGV (no exception) past a few
# thousand levels: 1,200 nested parentheses, a 10,000-term `a and a and ...`. Two guards
# (docs/robustness.md): CPython's own parser screens deep nesting first (it raises instead of
# crashing), and libcst runs on a thread with a large stack for the long flat chains CPython accepts.
_SCREEN_MIN_LENGTH = 2048  # shorter code cannot nest deep enough to overflow libcst
PARSE_STACK_BYTES = 256 * 1024 * 1024  # address space reserved, not memory used
_stack_lock = threading.Lock()


def parse_module_safely(code: str | bytes) -> cst.Module:
    """cst.parse_module, with PythonParseError instead of a crash for code nested too deep."""
    _screen_nesting(code)
    return _on_large_stack(cst.parse_module, code)


def _screen_nesting(code: str | bytes) -> None:
    if len(code) < _SCREEN_MIN_LENGTH:
        return
    try:
        ast.parse(code)
    except (RecursionError, MemoryError):
        raise PythonParseError("nesting too deep to parse (CPython's parser gives up too)", 1, 1) from None
    except SyntaxError as error:
        # Other syntax errors are left to libcst, which may know a newer grammar than this CPython.
        if error.msg.startswith(("too many nested", "too many levels of indentation")):
            raise PythonParseError(f"SyntaxError: {error.msg}", error.lineno or 1, error.offset or 1) from None
    except ValueError:
        pass  # NUL bytes and the like: libcst reports them


def _parse_reduced(
    text: str, hits: Sequence[int], pinned: Iterable[str], elide_literals: bool
) -> tuple[cst.Module, tuple[tuple[int, int], ...]] | None:
    reduced = reduce_source(text, hits, pinned, elide_literals)
    if reduced is None:
        return None
    try:
        return _on_large_stack(cst.parse_module, reduced.text), reduced.elided
    except (cst.ParserSyntaxError, cst.CSTValidationError):
        return None  # the region scan misread the file: parse it whole


def _compiles(code: str) -> bool:
    """Whether CPython compiles `code` (which also screens nesting too deep for libcst, raising
    PythonParseError). False for other syntax errors: libcst, which may know a newer grammar than this
    CPython, decides those. compile() is twice as fast as ast.parse, which builds Python objects."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to report
            compile(code, "<rocmlint>", "exec", dont_inherit=True)
    except SyntaxError as error:
        if error.msg.startswith(("too many nested", "too many levels of indentation")):
            raise PythonParseError(f"SyntaxError: {error.msg}", error.lineno or 1, error.offset or 1) from None
        return False
    except (RecursionError, MemoryError):
        _screen_nesting(code)  # the compiler's own limits are lower than the parser's: ask the parser
        return False
    except ValueError:
        return False
    return True


_T = TypeVar("_T")


def _on_large_stack(function: Callable[[str | bytes], _T], code: str | bytes) -> _T:
    """Run `function(code)` on a fresh thread with a PARSE_STACK_BYTES stack; in this thread when the
    platform refuses such a thread."""
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(function(code))
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread
            failure.append(error)

    with _stack_lock:  # stack_size is process-wide: set, start, restore
        try:
            previous = threading.stack_size(PARSE_STACK_BYTES)
        except (ValueError, RuntimeError):
            return function(code)
        try:
            thread = threading.Thread(target=run, name="rocmlint-parse", daemon=True)
            thread.start()
        except RuntimeError:
            thread = None
        finally:
            threading.stack_size(previous)
    if thread is None:
        return function(code)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


def _precise_error(source: SourceFile, message: str, line: int) -> PythonParseError:
    """libcst's native parser reports rough positions; CPython's compiler says exactly where and why."""
    try:
        ast.parse(source.text)
    except SyntaxError as error:
        return PythonParseError(f"SyntaxError: {error.msg}", error.lineno or line, error.offset or 1)
    except (RecursionError, MemoryError, ValueError):
        pass
    return PythonParseError(f"SyntaxError: {message}", line, 1)


class PythonContext:
    """What a Python rule sees: the semantic model, gating, values, and `report`."""

    def __init__(
        self,
        source: SourceFile,
        module: cst.Module,
        semantic: Semantic,
        gates: GateAnalyzer,
        options: RuleOptions,
    ) -> None:
        self.source = source
        self.module = module
        self.semantic = semantic
        self.gates = gates
        self.options = options
        self.rule: type[Rule] | None = None
        self.diagnostics: list[Diagnostic] = []
        self._positions: PositionIndex | None = None

    # --- names and values -------------------------------------------------------------------------
    @property
    def references(self) -> References:
        """Where the file uses each name, and the call sites of its functions (rocmlint.python.references)."""
        return self.gates.references

    @cached_property
    def values(self) -> Values:
        """The value tracer: what an expression may evaluate to (rocmlint.python.values)."""
        return Values(self.semantic, self.references)

    # --- gating -----------------------------------------------------------------------------------
    def branch(self, node: cst.CSTNode) -> Branch:
        """Whether `node` can run on ROCm and on NVIDIA, from the tests around it."""
        return self.gates.branch(node)

    def is_rocm_gated(self, node: cst.CSTNode) -> bool:
        """True when ROCm is already protected from `node`: it never runs on ROCm, or it is an import
        inside a `try:` that catches ImportError."""
        if self.gates.branch(node).on_rocm is False:
            return True
        return self._is_import(node) and self.gates.in_import_guard(node)

    def is_nvidia_gated(self, node: cst.CSTNode) -> bool:
        """True when `node` never runs on NVIDIA (it sits in a ROCm-only branch)."""
        return self.gates.branch(node).on_nvidia is False

    def vendor_test(self, expr: cst.CSTNode) -> Vendor:
        return self.gates.value(expr)

    def _is_import(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return True
        return any(isinstance(a, (cst.Import, cst.ImportFrom)) for a in self.semantic.ancestors(node))

    # --- names and values (delegated to the semantic model) ----------------------------------------
    def qualified_name(self, node: cst.CSTNode) -> str | None:
        return self.semantic.qualified_name(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.semantic.parent(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        return self.semantic.ancestors(node)

    def string_value(self, node: cst.CSTNode) -> str | None:
        return self.semantic.string_value(node)

    def single_value(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        return self.semantic.single_value(node)

    def is_module_level(self, node: cst.CSTNode) -> bool:
        return self.semantic.is_module_level(node)

    def contains(self, token: bytes) -> bool:
        """Whether the file's raw bytes contain `token` (for file-level context such as a ROCm arch list)."""
        return token in self.source.data

    # --- positions and edits ------------------------------------------------------------------------
    def code_range(self, node: cst.CSTNode) -> CodeRange:
        return self._position_index().code_range(node)

    def _position_index(self) -> PositionIndex:
        if self._positions is None:
            self._positions = PositionIndex(self.module, self.semantic.parents)
        return self._positions

    def top_level_start_byte(self, statement: cst.CSTNode) -> int:
        """Where a top-level statement's text begins (leading comments included). Cheap: it needs no
        per-node positions, so order checks (`does this run after that import?`) stay fast."""
        return self.source.byte_offset(self._position_index().statement_start_line(statement), 0)

    def top_level_end_byte(self, statement: cst.SimpleStatementLine) -> int:
        """Where the line after a top-level simple statement begins (end of file after the last one).
        Cheap like top_level_start_byte: a 10,000-line `op_db = [...]` needs no per-node positions."""
        return self.source.byte_offset(self._position_index().line_after(statement), 0)

    def byte_range(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self.code_range(node)
        start = self.source.byte_offset(span.start.line, span.start.column)
        end = self.source.byte_offset(span.end.line, span.end.column)
        return start, end

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        start, end = self.byte_range(node)
        return self.source.edit(start, end, content)

    def insert_before(self, node: cst.CSTNode, content: str) -> Edit:
        start, _ = self.byte_range(node)
        return self.source.edit(start, start, content)

    def insert_after(self, node: cst.CSTNode, content: str) -> Edit:
        _, end = self.byte_range(node)
        return self.source.edit(end, end, content)

    def code_of(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # --- reporting ------------------------------------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Fix | None = None,
        gate_on: Sequence[cst.CSTNode] = (),
    ) -> bool:
        """Report `node` for the running rule, unless the code is gated away from ROCm.

        The hazard is gated when `node` or any node of `gate_on` is: report a call's argument but also
        gate on the string literal it came from (`mode = "x" if IS_ROCM else "reduce-overhead"`).
        Returns True when the diagnostic was emitted, False when it was dropped as gated (for rules that
        report one literal once, however many uses reach it).
        """
        rule = self.rule
        assert rule is not None, "report() called outside a rule callback"
        if not rule.reports_gated and any(self.is_rocm_gated(n) for n in (node, *gate_on)):
            return False
        span = self.code_range(node)
        self.diagnostics.append(
            Diagnostic(
                path=self.source.path,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                location=Location(span.start.line, span.start.column + 1),
                end_location=Location(span.end.line, span.end.column + 1),
                fix=fix,
                url=rule.url(),
                noqa_line=span.start.line,
            )
        )
        return True

    def fix(self, message: str, *edits: Edit, safe: bool = True) -> Fix:
        return Fix(message, tuple(edits), Applicability.SAFE if safe else Applicability.UNSAFE)


InternalErrorReporter = Callable[[type[Rule], BaseException, str], None]


@dataclass
class PythonResult:
    diagnostics: list[Diagnostic]
    # The CUDA sources the file's JIT compile calls hold, when the engine asked for them (it runs the CUDA
    # front end over them): plain data, so nothing of this front end's context leaves it.
    embedded_cuda: list[EmbeddedSource]


def check_python(
    source: SourceFile,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    resolve_external: CrossModuleResolver | None,
    package: str | None,
    on_internal_error: InternalErrorReporter,
    hits: Sequence[int] | None = None,
    embedded_cuda: bool = False,
) -> PythonResult:
    """Run `rules` over one Python file. Raises PythonParseError when the file does not parse.

    `hits`: where the rules' triggers match (character offsets); code far from them is not parsed.
    None parses the whole file (the prefilter is off, or CUDA embedded in strings needs every string).
    `embedded_cuda`: also return the CUDA sources held in strings (rocmlint/python/embedded.py)."""
    context = _checked_context(source, rules, options, resolve_external, package, on_internal_error, hits)
    return PythonResult(context.diagnostics, find_embedded_cuda(context) if embedded_cuda else [])


def _checked_context(
    source: SourceFile,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    resolve_external: CrossModuleResolver | None,
    package: str | None,
    on_internal_error: InternalErrorReporter,
    hits: Sequence[int] | None,
) -> PythonContext:
    """The context `rules` ran in, holding their diagnostics."""
    pinned = {guard.rsplit(".", 1)[-1] for guard in options.rocm_guards}
    module, elided = _parse(source, hits, pinned)
    if not elided:
        return _run_rules(source, module, rules, options, resolve_external, package, on_internal_error)
    errors: list[tuple[type[Rule], BaseException, str]] = []
    context = _run_rules(source, module, rules, options, resolve_external, package, lambda *error: errors.append(error))
    if any(_reaches(diagnostic, elided) for diagnostic in context.diagnostics):
        # A diagnostic or fix spans left-out elements (a fix copying the whole literal): redo it whole.
        module, _ = _parse(source, hits, pinned, elide_literals=False)
        return _run_rules(source, module, rules, options, resolve_external, package, on_internal_error)
    for error in errors:
        on_internal_error(*error)
    return context


def _run_rules(
    source: SourceFile,
    module: cst.Module,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    resolve_external: CrossModuleResolver | None,
    package: str | None,
    on_internal_error: InternalErrorReporter,
) -> PythonContext:
    semantic = Semantic(module, package)
    gates = GateAnalyzer(semantic, options.rocm_guards, resolve_external)
    context = PythonContext(source, module, semantic, gates, options)
    walk(module, semantic.parents, _dispatch_table(rules, context, on_internal_error))
    return context


def _reaches(diagnostic: Diagnostic, elided: tuple[tuple[int, int], ...]) -> bool:
    """Whether the diagnostic's range or one of its fix's edits touches an elided line run."""
    spans = [(diagnostic.location.line, diagnostic.end_location.line)]
    if diagnostic.fix is not None:
        spans += [(edit.location.line, edit.end_location.line) for edit in diagnostic.fix.edits]
    # A run [first, end) of 0-based lines is 1-based lines first + 1 .. end; spans are 1-based, inclusive.
    return any(start <= end and first < last for start, last in spans for first, end in elided)


def _dispatch_table(
    rules: Sequence[type[Rule]], context: PythonContext, on_internal_error: InternalErrorReporter
) -> dict[str, list[Callback]]:
    table: dict[str, list[Callback]] = {}
    for rule_class in rules:
        rule = rule_class()
        state = {"failed": False}
        for attribute in dir(rule_class):
            if attribute.startswith("visit_"):
                method = getattr(rule, attribute)
                table.setdefault(attribute[len("visit_") :], []).append(
                    _guarded(rule_class, method, context, state, on_internal_error)
                )
    return table


def _guarded(
    rule_class: type[Rule],
    method: Callable[[cst.CSTNode, PythonContext], None],
    context: PythonContext,
    state: dict[str, bool],
    on_internal_error: InternalErrorReporter,
) -> Callback:
    """Call a rule's visit method; a crash disables that rule for the rest of the file and is reported once."""

    def callback(node: cst.CSTNode) -> None:
        if state["failed"]:
            return
        context.rule = rule_class
        try:
            method(node, context)
        except Exception as error:  # noqa: BLE001 - one broken rule must not stop the others
            state["failed"] = True
            on_internal_error(rule_class, error, traceback.format_exc())

    return callback
