"""The Python front end: parse once, walk once for every enabled rule, answer the rules' questions."""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from rocmlint.python.config_fields import class_field_defaults
from rocmlint.python.device_kinds import ARCH_FIELD, compared_kinds, own_arch_records
from rocmlint.python.embedded import EmbeddedSource, find_embedded_cuda
from rocmlint.python.gating import Branch, CrossModuleResolver, GateAnalyzer, ModuleBase, ReadElsewhere, Vendor
from rocmlint.python.positions import CodeRange, PositionIndex
from rocmlint.python.project import is_test_file, package_of
from rocmlint.python.references import References
from rocmlint.python.scopes import FUNCTION_DEFS
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import Callback, parse_text, walk
from rocmlint.python.values import Values
from rocmlint.rule import Rule
from rocmlint.source import SourceFile


@dataclass(frozen=True)
class RuleOptions:
    """The settings rules may read (never the whole configuration)."""

    rocm_guards: frozenset[str] = frozenset()
    target_archs: tuple[str, ...] = ()
    # Why the checked file's project is written for AMD GPUs ("" when it is not), asked only when a rule needs it:
    # the C++ project model's verdict (`CudaProject.written_for_amd`), which the engine hands over.
    project_written_for_amd: Callable[[], str] = lambda: ""
    # Why the checked file's project may run on AMD's consumer GPUs (RDNA, which report the capability 10.x-12.x),
    # "" when only on the CDNA GPUs of AMD's servers (9.0-9.5): the configured target-archs, else a file of the
    # project naming an RDNA gfx target (importers.ImportIndex.consumer_gpu_files); the engine hands it over.
    consumer_gpus: Callable[[], str] = lambda: ""
    # The packages the project's own ROCm container recipes install, each with the recipe installing it
    # (containers.rocm_image_packages); the engine hands it over.
    rocm_image_packages: Callable[[], dict[str, str]] = dict
    # Whether every class of the project declaring the field of that name gives it a false default
    # (config_fields.declared_off_by_default); the engine hands it over.
    project_field_off_by_default: Callable[[str], bool] = lambda name: False
    # For each top-level package of the project and word of AMD's stack it uses for things of its own (a device kind
    # "hip" its classes compare their kind with, an arch record's "gcnArchName"), the files that show it
    # (device_kinds.own_device_kinds); the engine hands it over.
    own_device_kinds: Callable[[], dict[tuple[str, str], tuple[str, ...]]] = dict
    # The packages the project's default install always installs (`[project] dependencies`, the root
    # requirements.txt; cuda.declared_requirements.declared_packages), each with the line declaring it; the engine
    # hands it over.
    declared_packages: Callable[[], dict[str, str]] = dict


class PythonContext:
    """What a Python rule sees: the semantic model, gating, values, and `report`."""

    def __init__(
        self,
        source: SourceFile,
        module: ast.Module,
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
        self.gated_notes: list[str] = []  # `check --verbose`: findings gating dropped, and the gate that did

    @cached_property
    def in_test_suite(self) -> bool:
        """The file is a test suite's (`project.is_test_file`): rules whose every form is noise there say
        so with `Rule.applies_to_tests`; this is for a rule with one form that is."""
        return is_test_file(self.source.path)

    @cached_property
    def positions(self) -> PositionIndex:
        """Node ranges in code points; built on the first question (most files report nothing)."""
        return PositionIndex(self.source.text, self.source.lines)

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
    def branch(self, node: ast.AST) -> Branch:
        """Whether `node` can run on ROCm and on NVIDIA, from the tests around it."""
        return self.gates.branch(node)

    def is_rocm_gated(self, node: ast.AST) -> bool:
        """True when ROCm is already protected from `node`: it never runs on ROCm, or it is an import
        inside a `try:` that catches ImportError."""
        if self.gates.never_on_rocm(node):
            return True
        return self._is_import(node) and self.gates.in_import_guard(node)

    def is_nvidia_gated(self, node: ast.AST) -> bool:
        """True when `node` never runs on NVIDIA (it sits in a ROCm-only branch)."""
        return self.gates.branch(node).on_nvidia is False

    @cached_property
    def project_written_for_amd(self) -> str:
        """Why the file's project is written for AMD GPUs, "" when it is not (`RuleOptions.project_written_for_amd`:
        its C/C++ code is AMD's and none is NVIDIA's, or its build compiles HIP only). Its Python is then AMD's
        authors' code too: not CUDA code to port, though what is wrong on AMD hardware whoever wrote it still is."""
        return self.options.project_written_for_amd()

    @cached_property
    def consumer_gpus(self) -> str:
        """Why the file's project may run on AMD's consumer GPUs (RDNA: capability 10.x-12.x, NVIDIA's Blackwell
        numbers), "" when only on CDNA's 9.0-9.5 (`RuleOptions.consumer_gpus`)."""
        return self.options.consumer_gpus()

    def off_by_default(self, name: str) -> bool:
        """Whether the option `name` stays off unless the user asks for it: a `store_true` switch of this file
        (`Semantic.switches_off_by_default`), or a config field every class declaring it (in this file, else in
        the project) gives a false default (`allow_tf32: bool = False`)."""
        if name in self.semantic.switches_off_by_default():
            return True
        here = list(class_field_defaults(self.module, name))
        return all(here) if here else self.options.project_field_off_by_default(name)

    def own_device_kind(self, kind: str, callee: ast.expr | None = None) -> bool:
        """Whether `kind` ("hip") is a device kind of the project's own rather than a torch device string, for the
        function `callee` names (None: for this file's own code): a class of the callee's top-level package (of this
        file's, for a def of this file) compares its own kind attribute with it (`self.kind == "hip"`,
        device_kinds.py), in this file or in another module of the project."""
        return self._owns(kind, callee, lambda: kind in self._kinds_here)

    def own_arch_record(self, callee: ast.expr) -> bool:
        """Whether what the function `callee` names returns is an arch record of the project's own: its top-level
        package (this file's, for a def of this file) declares a `gcnArchName` field and only ever gives it bare gfx
        names (device_kinds.arch_record_values), in this file or in other modules of the project."""
        return self._owns(ARCH_FIELD, callee, lambda: self._arch_records_here)

    def _owns(self, word: str, callee: ast.expr | None, here: Callable[[], bool]) -> bool:
        """`word` is the project's own for `callee` (None: this file's code): shown in this file (`here`) for its own
        code, or by the project's facts for the callee's top-level package (device_kinds.own_device_kinds)."""
        local = callee is None or self.semantic.called_def(callee) is not None
        if local and here():
            return True
        owner = package_of(self.source.path)[0] if local or callee is None else self.qualified_name(callee)
        package = (owner or "").split(".", 1)[0]
        return bool(package) and package != "torch" and (package, word) in self._project_words

    @cached_property
    def _kinds_here(self) -> frozenset[str]:
        return frozenset(compared_kinds(self.module))

    @cached_property
    def _arch_records_here(self) -> bool:
        return own_arch_records(self.module)

    @cached_property
    def _project_words(self) -> dict[tuple[str, str], tuple[str, ...]]:
        return self.options.own_device_kinds()

    def rocm_image_installs(self, *names: str) -> str:
        """The project's ROCm container recipe installing one of the packages `names` (distribution or repository
        names, `containers.normalise`d), "" when none does: where the project runs on ROCm, the package is there."""
        installed = self._rocm_image_packages
        return next((installed[name] for name in names if name in installed), "")

    @cached_property
    def _rocm_image_packages(self) -> dict[str, str]:
        return self.options.rocm_image_packages()

    def project_requires(self, *names: str) -> str:
        """The "path:line: name" of the project's declaration requiring one of the packages `names` (normalised
        distribution names) in its default install, "" when none does: wherever the project is installed, on ROCm
        too, the package is there (an optional extra is not its default install)."""
        declared = self._declared_packages
        return next((declared[name] for name in names if name in declared), "")

    @cached_property
    def _declared_packages(self) -> dict[str, str]:
        return self.options.declared_packages()

    def written_for_rocm(self, node: ast.AST) -> bool:
        """Whether only ROCm runs `node`: it sits in a ROCm-only branch, after an import of a ROCm-only package
        (rocmlint/data/vendor_packages.toml: `import flydsl`), or in a module that can only be imported on ROCm
        (importers.py): code its authors wrote for AMD GPUs knowingly, not CUDA code to port."""
        branch = self.gates.branch(node)
        return branch.on_nvidia is False and branch.on_rocm is not False

    def vendor_test(self, expr: ast.AST) -> Vendor:
        return self.gates.value(expr)

    def _is_import(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return True
        return any(isinstance(a, (ast.Import, ast.ImportFrom)) for a in self.semantic.ancestors(node))

    # --- names and values (delegated to the semantic model) ----------------------------------------
    def qualified_name(self, node: ast.AST) -> str | None:
        return self.semantic.qualified_name(node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.semantic.parent(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        return self.semantic.ancestors(node)

    def string_value(self, node: ast.AST) -> str | None:
        return self.semantic.string_value(node)

    def single_value(self, node: ast.AST) -> ast.expr | None:
        return self.semantic.single_value(node)

    def is_module_level(self, node: ast.AST) -> bool:
        return self.semantic.is_module_level(node)

    def contains(self, token: bytes) -> bool:
        """Whether the file's raw bytes contain `token` (for file-level context such as a ROCm arch list)."""
        return token in self.source.data

    # --- positions and edits ------------------------------------------------------------------------
    def code_range(self, node: ast.AST) -> CodeRange:
        return self.positions.code_range(node)

    def attribute_range(self, node: ast.Attribute) -> CodeRange:
        """Where `.attr`'s name is written (the tree keeps it as a string)."""
        return self.positions.attribute_range(node)

    def name_range(self, node: ast.AST) -> CodeRange:
        """Where the name of a def, class, alias, keyword argument or parameter is written."""
        return self.positions.name_range(node)

    def top_level_start_byte(self, statement: ast.stmt) -> int:
        """Where a top-level statement's text begins: the line after the statement before it, so the
        comments and blank lines above it count as its own (the first statement begins at its first line,
        decorators included)."""
        block = self.semantic.block_of(statement)
        index = next(i for i, item in enumerate(block) if item is statement)
        if index == 0:
            first_line = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
            return self.source.byte_offset(first_line, 0)
        return self.source.byte_offset((block[index - 1].end_lineno or 1) + 1, 0)

    def top_level_end_byte(self, statement: ast.stmt) -> int:
        """Where the line after a simple statement begins (end of file after the last one)."""
        return self.source.byte_offset((statement.end_lineno or statement.lineno) + 1, 0)

    def byte_range(self, node: ast.AST) -> tuple[int, int]:
        return self.span_bytes(self.code_range(node))

    def span_bytes(self, span: CodeRange) -> tuple[int, int]:
        start = self.source.byte_offset(span.start.line, span.start.column)
        end = self.source.byte_offset(span.end.line, span.end.column)
        return start, end

    def replace(self, node: ast.AST, content: str) -> Edit:
        start, end = self.byte_range(node)
        return self.source.edit(start, end, content)

    def insert_before(self, node: ast.AST, content: str) -> Edit:
        start, _ = self.byte_range(node)
        return self.source.edit(start, start, content)

    def insert_after(self, node: ast.AST, content: str) -> Edit:
        _, end = self.byte_range(node)
        return self.source.edit(end, end, content)

    def code_of(self, node: ast.AST) -> str:
        """The node's exact source text."""
        return self.positions.text_of(node)

    # --- reporting ------------------------------------------------------------------------------------
    def report(
        self,
        node: ast.AST,
        message: str,
        *,
        fix: Fix | Callable[[], Fix | None] | None = None,
        gate_on: Sequence[ast.AST] = (),
        span: CodeRange | None = None,
    ) -> bool:
        """Report `node` for the running rule, unless the code is gated away from ROCm.

        The hazard is gated when `node` or any node of `gate_on` is: report a call's argument but also
        gate on the string literal it came from (`mode = "x" if IS_ROCM else "reduce-overhead"`).
        `fix` may be a function building it, called only when the diagnostic is emitted: a fix looks for a guard
        to reuse and words a condition, work lost on a hazard found gated (a third of ROC113's on vLLM).
        `span`: where the diagnostic points when that is not `node`'s own range (an attribute's name).
        Returns True when the diagnostic was emitted, False when it was dropped as gated (for rules that
        report one literal once, however many uses reach it).
        """
        rule = self.rule
        assert rule is not None, "report() called outside a rule callback"
        if not rule.reports_gated:
            gated = next((n for n in (node, *gate_on) if self.is_rocm_gated(n)), None)
            if gated is not None:
                self.note_not_reported(node, self.gate_evidence(gated))
                return False
        if callable(fix):
            fix = fix()
        where = span if span is not None else self.code_range(node)
        self.diagnostics.append(
            Diagnostic(
                path=self.source.path,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                location=Location(where.start.line, where.start.column + 1),
                end_location=Location(where.end.line, where.end.column + 1),
                fix=fix,
                url=rule.url(),
                noqa_line=where.start.line,
            )
        )
        return True

    def note_not_reported(self, node: ast.AST, reading: str) -> None:
        """For `check --verbose`: the running rule left out its finding at `node`, and `reading` says what in the code
        (a gate, what a test decides) made it harmless on ROCm."""
        rule = self.rule
        assert rule is not None, "note_not_reported() called outside a rule callback"
        where = self.code_range(node).start.line
        self.gated_notes.append(f"{self.source.path}:{where}: {rule.code} not reported: {reading}")

    def gate_evidence(self, gated: ast.AST) -> str:
        """What keeps `gated`, a node `is_rocm_gated` holds for, off ROCm, in words for `check --verbose`."""
        gate = self.gates.gate_off_rocm(gated)
        if gate is None:
            return "an import inside a `try:` that catches ImportError"
        if gate is self.module:
            return _MODULE_OFF_ROCM
        line = getattr(gate, "lineno", 0)
        text = self.source.lines[line - 1].strip() if 0 < line <= len(self.source.lines) else ""
        if isinstance(gate, (*FUNCTION_DEFS, ast.ClassDef)):
            return f"`{text}` (line {line}) only runs off ROCm: its skip decorators, or where it is called or used"
        return f"it runs only off ROCm under `{text}` (line {line})"

    def fix(self, message: str, *edits: Edit, safe: bool = True) -> Fix:
        return Fix(message, tuple(edits), Applicability.SAFE if safe else Applicability.UNSAFE)


_MODULE_OFF_ROCM = "the module only runs off ROCm (where the project imports it, what it imports, or its folder)"
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
    embedded_cuda: bool = False,
    module_base: ModuleBase | None = None,
    read_elsewhere: ReadElsewhere | None = None,
    tree: ast.Module | None = None,
    gated_notes: list[str] | None = None,
) -> PythonResult:
    """Run `rules` over one Python file. Raises PythonParseError when the file does not parse.

    `embedded_cuda`: also return the CUDA sources held in strings (rocmlint/python/embedded.py).
    `module_base`: where the module itself can run, from its importers (asked when first needed).
    `read_elsewhere`: whether a module importing this one may read one of its module-level names.
    `tree`: the file's tree when it is parsed already (`ProjectIndex.tree_of`: read as another module's neighbour);
    nothing changes it, and the semantic model and walk of this check are its own.
    `gated_notes`: gets, for `check --verbose`, each finding gating dropped and the gate that did."""
    module = tree if tree is not None else parse_text(source.text)
    semantic = Semantic(module, package, source.text)
    gates = GateAnalyzer(
        semantic, options.rocm_guards, resolve_external, module_base, read_elsewhere, is_test_file(source.path)
    )
    context = PythonContext(source, module, semantic, gates, options)
    walk(module, semantic.parents, _dispatch_table(rules, context, on_internal_error), semantic.mentions)
    if gated_notes is not None:
        gated_notes += context.gated_notes
        if gates.module_branch_off_rocm():  # rules that ask `is_rocm_gated` before reporting say nothing themselves
            gated_notes.append(f"{source.path}: findings not reported: {_MODULE_OFF_ROCM}")
    return PythonResult(context.diagnostics, find_embedded_cuda(context) if embedded_cuda else [])


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
    method: Callable[[ast.AST, PythonContext], None],
    context: PythonContext,
    state: dict[str, bool],
    on_internal_error: InternalErrorReporter,
) -> Callback:
    """Call a rule's visit method; a crash disables that rule for the rest of the file and is reported once."""

    def callback(node: ast.AST) -> None:
        if state["failed"]:
            return
        context.rule = rule_class
        try:
            method(node, context)
        except Exception as error:  # noqa: BLE001 - one broken rule must not stop the others
            state["failed"] = True
            on_internal_error(rule_class, error, traceback.format_exc())

    return callback
