"""Runs the enabled rules over files: prefilter, front end, suppressions, per-file ignores.

Tool diagnostics come from here: ROC001 (cannot read as source), ROC002 (unused noqa), ROC900 (a rule
crashed). A failure in one file or one rule never stops the run.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import ahocorasick_rs

from rocmlint.collector import collection_paused
from rocmlint.config import Settings
from rocmlint.cuda.conditions import cuda_triggers
from rocmlint.cuda.declared_requirements import declared_packages
from rocmlint.cuda.frontend import CudaOptions, InternalErrorReporter, check_cuda, compile_queries
from rocmlint.cuda.project import (
    EMPTY_VIEW,
    FileView,
    ProjectVerdict,
    amd_verdict_for,
    build_models_telling_verdicts,
    forget_projects,
    nvidia_only_natives_for,
    project_for,
    project_root,
    remember_amd_verdicts,
)
from rocmlint.diagnostics import Diagnostic, Location
from rocmlint.discovery import matches_any
from rocmlint.file_report import FileReport
from rocmlint.python.accelerators import other_accelerator_in_path
from rocmlint.python.config_fields import declared_off_by_default
from rocmlint.python.containers import rocm_image_packages
from rocmlint.python.device_kinds import own_device_kinds
from rocmlint.python.embedded import TRIGGERS as EMBEDDED_TRIGGERS
from rocmlint.python.embedded import EmbeddedSource, holds_jit_entry_word
from rocmlint.python.frontend import RuleOptions, check_python
from rocmlint.python.gating import ModuleBase, ReadElsewhere
from rocmlint.python.importers import ImportIndex, NvidiaOnlyNatives, names_consumer_gpu
from rocmlint.python.project import ProjectIndex, forget_import_indexes, import_index_for, is_test_file, package_of
from rocmlint.python.tree import PythonParseError
from rocmlint.registry import all_rules, rule_by_code
from rocmlint.rule import AnchoredPattern, Rule
from rocmlint.source import DecodeError, SourceFile, language_of
from rocmlint.suppression import Suppressions, find_suppressions, mentions_noqa, unused_noqa
from rocmlint.vendor import EVERYWHERE, NO_GPU, Branch

MAX_FILE_BYTES = 10 * 1024 * 1024
PARSE_ERROR, UNUSED_NOQA, INTERNAL_ERROR = "ROC001", "ROC002", "ROC900"


@dataclass(frozen=True)
class _FrontEndOutcome:
    diagnostics: list[Diagnostic]
    # Rules whose noqa codes cannot be judged unused (they crashed); None: the file was not analysed.
    unjudged: frozenset[str] | None = frozenset()


@dataclass(frozen=True)
class Prefilter:
    """Which rules could fire on a file, decided from its raw bytes."""

    rules_by_trigger: dict[bytes, tuple[type[Rule], ...]]
    always: tuple[type[Rule], ...]  # rules that declared no triggers
    triggers: tuple[bytes, ...]  # every trigger, in the order the matcher numbers them
    matcher: ahocorasick_rs.BytesAhoCorasick | None  # finds every trigger; None if there is none
    # Per rule with `also_requires`, a matcher of those words: one pass over the lowered bytes where a substring
    # test per word scanned a file without any of them once per word (ROC208's 14 words: PyTorch's C/C++ files
    # 0.22 -> 0.08 CPU-s with the lowering).
    context_matchers: dict[type[Rule], ahocorasick_rs.BytesAhoCorasick]

    def rules_for(self, data: bytes | None, present: set[bytes] | None = None) -> list[type[Rule]]:
        """The rules that could fire on `data`; every rule when `data` is None (prefilter off). `present`: the
        triggers `data` holds, when the caller has found them already (`triggers_in`)."""
        if data is None:
            every = {rule for rules in self.rules_by_trigger.values() for rule in rules}
            return sorted({*self.always, *every}, key=lambda rule: rule.code)
        chosen = list(self.always)
        present = self.triggers_in(data) if present is None else present
        lowered: bytes | None = None  # for also_requires, computed once and only when a rule has it
        for rule in {rule for trigger in present for rule in self.rules_by_trigger[trigger]}:
            if rule.also_requires:
                lowered = data.lower() if lowered is None else lowered
                if not self.context_matchers[rule].find_matches_as_indexes(lowered):
                    continue
            if rule.trigger_pattern is not None and not _trigger_matches(rule.trigger_pattern, data):
                continue
            chosen.append(rule)
        return sorted(chosen, key=lambda rule: rule.code)

    def triggers_in(self, data: bytes) -> set[bytes]:
        """The triggers `data` holds. One Aho-Corasick pass over the bytes finds them all: ten times faster than
        one `in` per trigger, and far faster than a regex alternating over a hundred of them. Overlapping
        matches, so a trigger inside or across another one's match (`hip` in `hipMalloc`) is found too."""
        if self.matcher is None:
            return set()
        triggers = self.triggers
        return {triggers[index] for index, _, _ in self.matcher.find_matches_as_indexes(data, overlapping=True)}


def project_root_of(path: str | Path, settings: Settings) -> Path:
    """`project_root` of a file checked with `settings`: their root counts as set by the user only when a
    configuration file gave it; otherwise it is the working directory, which makes no project by itself."""
    return project_root(Path(path), settings.root, configured=settings.config_path is not None)


def _trigger_matches(pattern: str | AnchoredPattern, data: bytes) -> bool:
    if isinstance(pattern, AnchoredPattern):
        return pattern.search(data)
    return _byte_pattern(pattern).search(data) is not None


@lru_cache(maxsize=64)
def _byte_pattern(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("ascii"))


@lru_cache(maxsize=64)
def prefilter_for(language: str, enabled: frozenset[str]) -> Prefilter:
    by_trigger: dict[bytes, list[type[Rule]]] = {}
    always: list[type[Rule]] = []
    for rule in all_rules():
        if rule.code not in enabled or rule.language != language:
            continue
        if not rule.triggers:
            always.append(rule)
        for trigger in rule.triggers:
            by_trigger.setdefault(trigger, []).append(rule)
    if language == "python":  # found in the same pass, for `_embedded_cuda_rules`; no Python rule of their own
        for trigger in EMBEDDED_TRIGGERS:
            by_trigger.setdefault(trigger, [])
    triggers = tuple(by_trigger)
    # A DFA: two to three times faster than the default NFA over a tree's bytes (PyTorch's C++ files 0.21 -> 0.09 CPU-s,
    # its Python files 0.29 -> 0.10), for about 10 MB per process with the C++ rules' 2,300 triggers.
    dfa = ahocorasick_rs.Implementation.DFA
    matcher = ahocorasick_rs.BytesAhoCorasick(list(triggers), implementation=dfa) if triggers else None
    context_matchers = {
        rule: ahocorasick_rs.BytesAhoCorasick(list(rule.also_requires), implementation=dfa)
        for rules in by_trigger.values()
        for rule in rules
        if rule.also_requires
    }
    return Prefilter(
        {trigger: tuple(rules) for trigger, rules in by_trigger.items()},
        tuple(always),
        triggers,
        matcher,
        context_matchers,
    )


def _import_index(root: Path, processes: int = 1) -> ImportIndex:
    """The import index of `root` (built by up to `processes` processes), knowing the extension modules its build
    builds for NVIDIA only (read from its build files by the C++ front end): a module importing one is NVIDIA
    code."""
    return import_index_for(root, processes, lambda: NvidiaOnlyNatives(*nvidia_only_natives_for(root)))


@dataclass(frozen=True)
class _ImporterReads:
    """The reads of a Python file's module-level names by the project's modules importing it (gating.ReadElsewhere)."""

    project: ProjectIndex
    path: str
    root: Path

    def __call__(self, name: str) -> bool:
        return self.project.read_elsewhere(_import_index(self.root), self.path, name)

    def only_off_rocm(self, name: str) -> bool:
        return self.project.read_only_off_rocm(_import_index(self.root), self.path, name)

    def key_registered_off_rocm(self, key: str, testers: frozenset[str], qualified: str | None) -> bool:
        return self.project.key_registered_off_rocm(_import_index(self.root), self.path, key, testers, qualified)

    def definitions_only_on_nvidia(self, name: str) -> bool:
        return self.project.definitions_only_on_nvidia(_import_index(self.root), self.path, name)


class Engine:
    def __init__(self, project: ProjectIndex | None = None, prefilter: bool = True) -> None:
        self.project = project or ProjectIndex()
        # prefilter=False runs every enabled rule on every file: only for checking that the
        # byte-level triggers never change a result (tests/test_speed_equivalence.py).
        self.prefilter = prefilter

    def check_path(self, path: Path, settings: Settings) -> FileReport:
        """Read and check one file from disk."""
        report = FileReport(str(path))
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                report.diagnostics = self._filter(
                    [
                        self._tool(
                            PARSE_ERROR, str(path), f"file is too large to check ({size:,} bytes > {MAX_FILE_BYTES:,})"
                        )
                    ],
                    settings,
                    str(path),
                    None,
                )
                return report
            data = path.read_bytes()
        except OSError as error:
            report.warnings.append(f"{path}: cannot read: {error.strerror or error}")
            return report
        return self.check_bytes(str(path), data, settings)

    def check_bytes(
        self, path: str, data: bytes, settings: Settings, language: str | None = None, apply_noqa: bool = True
    ) -> FileReport:
        """Check one file's content (from disk, stdin, or an editor buffer).

        `language` ("python" or "cuda") defaults to what the path's extension says. `apply_noqa=False`
        keeps noqa-suppressed diagnostics (flake8 applies its own noqa to what a plugin reports).
        """
        with collection_paused():  # one file's syntax trees would be rescanned by every collection
            return self._check_bytes(path, data, settings, language, apply_noqa)

    def _check_bytes(
        self, path: str, data: bytes, settings: Settings, language: str | None, apply_noqa: bool
    ) -> FileReport:
        report = FileReport(path)
        language = language or language_of(path)
        if language is None:
            return report
        enabled = settings.enabled_codes
        prefilter = prefilter_for(language, enabled)
        present = prefilter.triggers_in(data) if self.prefilter else None
        rules = _in_scope(prefilter.rules_for(data if self.prefilter else None, present), path, language)
        embedded_rules = _embedded_cuda_rules(data, enabled, present) if language == "python" else []
        wants_noqa_check = UNUSED_NOQA in enabled and (not self.prefilter or mentions_noqa(data))
        if not rules and not embedded_rules and not wants_noqa_check:
            report.skipped = True
            return report
        try:
            source = SourceFile.from_bytes(path, data, language)
        except DecodeError as error:
            report.diagnostics = self._filter(
                [self._tool(PARSE_ERROR, path, f"cannot decode file: {error}")], settings, path, None
            )
            return report
        outcome = _FrontEndOutcome([])
        if rules or embedded_rules:
            outcome = self._run_front_end(source, rules, settings, report, embedded_rules)
        report.diagnostics = self._filter(outcome.diagnostics, settings, path, source, outcome.unjudged, apply_noqa)
        return report

    def _run_front_end(
        self,
        source: SourceFile,
        rules: list[type[Rule]],
        settings: Settings,
        report: FileReport,
        embedded_rules: list[type[Rule]],
    ) -> _FrontEndOutcome:
        crashes: list[Diagnostic] = []
        crashed: set[str] = set()

        def on_internal_error(rule: type[Rule], error: BaseException, trace: str) -> None:
            message = f"rule {rule.code} ({rule.name}) crashed on this file: {type(error).__name__}: {error}"
            if isinstance(error, RecursionError):  # the input's fault, not the rule's: see _too_deep
                message = _too_deep(f"rule {rule.code} ({rule.name})")
            crashes.append(self._tool(_crash_code(error), source.path, message))
            crashed.add(rule.code)
            report.tracebacks.append(f"{source.path}: {rule.code} crashed:\n{trace}")

        if source.language == "cuda":
            return self._run_cuda(source, rules, settings, report, crashes, crashed, on_internal_error)
        options = RuleOptions(
            frozenset(settings.rocm_guards),
            settings.target_archs,
            self._written_for_amd(source.path, settings),
            self._consumer_gpus(source, settings),
            self._rocm_image_packages(source.path, settings),
            self._field_off_by_default(source.path, settings),
            self._own_device_kinds(source.path, settings),
            self._declared_packages(source.path, settings),
        )
        try:
            package, _ = package_of(source.path)
            result = check_python(
                source,
                rules,
                options,
                self.project.resolver_for(source.path, options.rocm_guards, project_root_of(source.path, settings)),
                package,
                on_internal_error,
                embedded_cuda=bool(embedded_rules),
                module_base=self._module_base(source.path, settings, options.rocm_guards),
                read_elsewhere=self._read_elsewhere(source.path, settings),
                tree=self.project.tree_of(source.path, source.text),
                gated_notes=report.gated_notes,
            )
            found = result.diagnostics
            if embedded_rules:
                found += _check_embedded_cuda(source, result.embedded_cuda, embedded_rules, settings, on_internal_error)
        except PythonParseError as error:
            return _FrontEndOutcome(
                [self._tool(PARSE_ERROR, source.path, str(error), Location(error.line, error.column))], None
            )
        except Exception as error:  # noqa: BLE001 - a front-end bug must not stop the run
            message = f"the Python front end crashed on this file: {type(error).__name__}: {error}"
            if isinstance(error, RecursionError):
                message = _too_deep("the Python front end")
            report.tracebacks.append(f"{source.path}: the Python front end crashed:\n{traceback.format_exc()}")
            return _FrontEndOutcome([self._tool(_crash_code(error), source.path, message)], None)
        return _FrontEndOutcome(found + crashes, frozenset(crashed))

    def _run_cuda(
        self,
        source: SourceFile,
        rules: list[type[Rule]],
        settings: Settings,
        report: FileReport,
        crashes: list[Diagnostic],
        crashed: set[str],
        on_internal_error: InternalErrorReporter,
    ) -> _FrontEndOutcome:
        try:
            options = replace(cuda_options(settings), project=self._project_view(source.path, settings))
            found = check_cuda(source, rules, options, on_internal_error, report.gated_notes)
        except Exception as error:  # noqa: BLE001 - a front-end bug must not stop the run
            message = f"the CUDA C++ front end crashed on this file: {type(error).__name__}: {error}"
            if isinstance(error, RecursionError):
                message = _too_deep("the CUDA C++ front end")
            report.tracebacks.append(f"{source.path}: the CUDA C++ front end crashed:\n{traceback.format_exc()}")
            return _FrontEndOutcome([self._tool(_crash_code(error), source.path, message)], None)
        return _FrontEndOutcome(found + crashes, frozenset(crashed))

    def _project_view(self, path: str, settings: Settings) -> FileView:
        """What the C++ project model tells about a file on disk (a buffer with no file gets no model); the files
        it was learned from become the result's cache dependencies."""
        if not settings.project_model or not Path(path).is_file():
            return EMPTY_VIEW
        view = project_for(project_root_of(path, settings)).view(path)
        self.project.note_files(view.dependencies)
        return view

    def _module_base(self, path: str, settings: Settings, rocm_guards: frozenset[str]) -> ModuleBase | None:
        """Where a Python file can run at all: nowhere on a GPU when its path names another accelerator, else as the
        modules of its project that import it say; asked only when a branch needs it (a buffer with no file on
        disk runs everywhere)."""
        if not settings.project_model:
            return None

        def base() -> Branch:
            root = project_root_of(path, settings)
            if other_accelerator_in_path(path, str(root)) is not None:
                return NO_GPU  # `backends/gaudi/...`, `platforms/xpu.py`: another accelerator's code
            if not os.path.isfile(path):
                return EVERYWHERE
            return self.project.module_base(_import_index(root), path, rocm_guards)

        return base

    def _written_for_amd(self, path: str, settings: Settings) -> Callable[[], str]:
        """Why a Python file's project is written for AMD GPUs (`amd_verdict_for`: from its build files when they
        settle it, else from the C++ project model; decided when a rule first asks, or before the pool forks), ""
        when it is not or without the project model. The files it was decided from (the build files, the AMD file it
        names) become the result's cache dependencies; a C/C++ file added later is not seen."""
        if not settings.project_model:
            return lambda: ""

        def verdict() -> str:
            if not os.path.isfile(path):
                return ""  # a buffer with no file on disk
            why, evidence = amd_verdict_for(project_root_of(path, settings))
            self.project.note_files(evidence)
            return why

        return verdict

    def _consumer_gpus(self, source: SourceFile, settings: Settings) -> Callable[[], str]:
        """Why a Python file's project may run on AMD's consumer GPUs (RDNA), "" when only on CDNA ones: the
        configured target-archs when there are any, else the first file of the project naming an RDNA gfx target
        (its text alone for a buffer with no file on disk, or without the project model). That file becomes the
        result's cache dependency; a file naming one added later is not seen."""
        if settings.target_archs:
            consumer = ", ".join(arch for arch in settings.target_archs if names_consumer_gpu(arch.encode()))
            return lambda: f"target-archs {consumer}" if consumer else ""
        if not settings.project_model or not os.path.isfile(source.path):
            return lambda: "this file names an RDNA gfx target" if names_consumer_gpu(source.data) else ""

        def verdict() -> str:
            files = _import_index(project_root_of(source.path, settings)).consumer_gpu_files
            if not files:
                return ""
            self.project.note_files(files[:1])
            return f"{files[0]} names an RDNA gfx target"

        return verdict

    def _rocm_image_packages(self, path: str, settings: Settings) -> Callable[[], dict[str, str]]:
        """The packages the project's ROCm container recipes install (`rocm_image_packages`; none without the
        project model or for a buffer with no file on disk). The recipes become the result's cache dependencies."""
        if not settings.project_model or not os.path.isfile(path):
            return dict

        def installed() -> dict[str, str]:
            root = project_root_of(path, settings)
            packages = rocm_image_packages(root)
            self.project.note_files(sorted({str(root / recipe) for recipe in packages.values()}))
            return packages

        return installed

    def _declared_packages(self, path: str, settings: Settings) -> Callable[[], dict[str, str]]:
        """The packages the project's default install declares (`declared_packages`; none without the project model
        or for a buffer with no file on disk). The declaring files become the result's cache dependencies."""
        if not settings.project_model or not os.path.isfile(path):
            return dict

        def declared() -> dict[str, str]:
            packages, files = declared_packages(str(project_root_of(path, settings)))
            self.project.note_files(list(files))
            return packages

        return declared

    def _field_off_by_default(self, path: str, settings: Settings) -> Callable[[str], bool]:
        """Whether every class of the project declaring a field gives it a false default (`declared_off_by_default`;
        never without the project model or for a buffer with no file on disk). The declaring files become the
        result's cache dependencies; a declaration added in another file later is not seen."""
        if not settings.project_model or not os.path.isfile(path):
            return lambda name: False

        def off_by_default(name: str) -> bool:
            files = declared_off_by_default(project_root_of(path, settings), name)
            self.project.note_files(files)
            return bool(files)

        return off_by_default

    def _own_device_kinds(self, path: str, settings: Settings) -> Callable[[], dict[tuple[str, str], tuple[str, ...]]]:
        """The words of AMD's stack the project's packages use for things of their own: device kinds of their device
        classes, arch records (`own_device_kinds`; none without the project model or for a buffer with no file on
        disk). The files showing them become the result's cache dependencies; one added later is not seen."""
        if not settings.project_model or not os.path.isfile(path):
            return dict

        def kinds() -> dict[tuple[str, str], tuple[str, ...]]:
            found = own_device_kinds(project_root_of(path, settings))
            self.project.note_files(sorted({file for files in found.values() for file in files}))
            return found

        return kinds

    def _read_elsewhere(self, path: str, settings: Settings) -> ReadElsewhere | None:
        """Whether the project's modules that import this file may read one of its module-level names (None:
        not known, for a buffer with no file on disk or without the project model)."""
        if not settings.project_model or not os.path.isfile(path):
            return None

        return _ImporterReads(self.project, path, project_root_of(path, settings))

    def _filter(
        self,
        diagnostics: Iterable[Diagnostic],
        settings: Settings,
        path: str,
        source: SourceFile | None,
        unjudged: frozenset[str] | None = frozenset(),
        apply_noqa: bool = True,
    ) -> list[Diagnostic]:
        """Drop disabled, per-file-ignored and noqa-suppressed diagnostics; add ROC002.

        `unjudged` names the rules whose noqa codes cannot be called unused (they crashed); None means
        no rule looked at the file (it did not parse), so ROC002 stays silent.
        """
        enabled = settings.enabled_codes
        ignored_here = _per_file_ignored(path, settings)
        kept = [d for d in diagnostics if d.code in enabled and not _ignored(d.code, ignored_here)]
        if source is None:
            return sorted(kept, key=Diagnostic.sort_key)
        suppressions = find_suppressions(source)

        def hidden(diagnostic: Diagnostic) -> bool:
            # `suppresses` also records which directives were used, which ROC002 needs either way.
            # Without apply_noqa only the file-wide `rocmlint: noqa` (no other tool reads it) hides.
            suppressed = suppressions.suppresses(diagnostic)
            return suppressed and (apply_noqa or _file_suppressed(diagnostic, suppressions))

        kept = [d for d in kept if d.code == PARSE_ERROR or not hidden(d)]
        if unjudged is not None and UNUSED_NOQA in enabled and not _ignored(UNUSED_NOQA, ignored_here):
            rule = rule_by_code(UNUSED_NOQA)
            assert rule is not None
            unused = unused_noqa(source, suppressions, rule.code, rule.name, rule.url(), unjudged)
            kept += [d for d in unused if not hidden(d)]
        return sorted(kept, key=Diagnostic.sort_key)

    @staticmethod
    def _tool(code: str, path: str, message: str, location: Location | None = None) -> Diagnostic:
        rule = rule_by_code(code)
        assert rule is not None, code
        location = location or Location(1, 1)
        return Diagnostic(
            path=path,
            code=rule.code,
            name=rule.name,
            message=message,
            severity=rule.severity,
            location=location,
            end_location=location,
            url=rule.url(),
            noqa_line=location.line,
        )


def _crash_code(error: BaseException) -> str:
    """A RecursionError means code nested deeper than Python's stack allows (hostile or generated
    input), which is a property of the file (ROC001), not a bug in rocmlint (ROC900)."""
    return PARSE_ERROR if isinstance(error, RecursionError) else INTERNAL_ERROR


def _too_deep(who: str) -> str:
    return f"code nested too deep to analyse: {who} ran out of stack (RecursionError)"


def _in_scope(rules: list[type[Rule]], path: str, language: str) -> list[type[Rule]]:
    """The rules whose scope includes the file: a test suite's Python files only get the rules that apply
    to tests (`Rule.applies_to_tests`)."""
    if language != "python" or not is_test_file(path):
        return rules
    return [rule for rule in rules if rule.applies_to_tests]


def _embedded_cuda_rules(data: bytes, enabled: frozenset[str], present: set[bytes] | None) -> list[type[Rule]]:
    """The CUDA rules that could fire on CUDA source held in a Python file's strings. `present`: the Python
    prefilter's triggers in `data`, which include the JIT entry points' names; None with the prefilter off."""
    if present is None:
        return prefilter_for("cuda", enabled).rules_for(None)
    if present.isdisjoint(EMBEDDED_TRIGGERS) or not holds_jit_entry_word(data):
        return []
    return prefilter_for("cuda", enabled).rules_for(data)


def _check_embedded_cuda(
    python_source: SourceFile,
    sources: list[EmbeddedSource],
    rules: list[type[Rule]],
    settings: Settings,
    on_internal_error: InternalErrorReporter,
) -> list[Diagnostic]:
    """Run the CUDA rules over each JIT-compiled source the Python front end found in a Python file and map
    the diagnostics back.

    A `// noqa` inside the CUDA text works as in a .cu file. Fixes are dropped: editing code inside a
    string literal (escapes, quotes) is left to the user.
    """
    found: list[Diagnostic] = []
    for embedded in sources:
        snippet = SourceFile.from_bytes(python_source.path, embedded.text.encode("utf-8", "surrogatepass"), "cuda")
        suppressions = find_suppressions(snippet)
        for diagnostic in check_cuda(snippet, rules, cuda_options(settings), on_internal_error):
            if suppressions.suppresses(diagnostic):
                continue
            start = _map_back(diagnostic.location, snippet, embedded, python_source)
            end = _map_back(diagnostic.end_location, snippet, embedded, python_source)
            found.append(replace(diagnostic, location=start, end_location=end, fix=None, noqa_line=start.line))
    return found


def _map_back(location: Location, snippet: SourceFile, embedded: EmbeddedSource, python_source: SourceFile) -> Location:
    index = snippet.char_offset(location.line, location.column - 1)
    return python_source.location_of_char(embedded.file_offset(index))


def build_project_models(
    files: Iterable[tuple[Path, Settings]],
    language: str = "cuda",
    verdicts_to: Callable[[dict[Path, ProjectVerdict]], None] | None = None,
    verdicts_from: Callable[[], dict[Path, ProjectVerdict]] | None = None,
    index_processes: int = 1,
) -> None:
    """Build the project models these files need now, in this process (before a pool forks, so that every
    worker inherits them instead of building its own): the C++ project models of CUDA files, telling `verdicts_to`
    whether their projects are written for AMD as soon as that is known; the import indexes
    (rocmlint/python/importers.py) of Python files, read by up to `index_processes` processes (forked: only where
    pools fork), and whether their projects are written for AMD, taken from `verdicts_from` (the process building
    the C++ models) or decided here (`amd_verdict_for`: a mixed project's build files settle it without the C++
    model)."""
    roots = sorted(
        {
            project_root_of(path, settings)
            for path, settings in files
            if settings.project_model and language_of(str(path)) == language
        }
    )
    if language == "cuda" and verdicts_to is not None:
        build_models_telling_verdicts(roots, verdicts_to)
    for root in roots:
        if language == "cuda":
            project_for(root)
        else:
            _import_index(root, index_processes)
    if language == "python" and roots:
        remember_amd_verdicts(verdicts_from() if verdicts_from is not None else {})
        for root in roots:
            amd_verdict_for(root)
            nvidia_only_natives_for(root)  # before the pool forks: the workers working out requirements ask


def forget_project_models() -> None:
    """Drop the project models built so far: a long-running process (the LSP server) does when a file they
    were learned from is saved."""
    forget_projects()
    forget_import_indexes()


def compile_cuda_queries() -> None:
    """Compile the C++ front end's tree-sitter queries in this process, before a pool forks, so that every
    worker shares them instead of compiling its own; and the pattern of every C++ rule's triggers the condition
    rules search arms with (`cuda_triggers`: about 60 ms, which each worker paid on its first arm)."""
    rules = _cuda_rules()
    compile_queries(rules)
    cuda_triggers(rules)


def cuda_options(settings: Settings) -> CudaOptions:
    return CudaOptions(
        settings.rocm_macros,
        settings.portable_macros,
        settings.nvidia_macros,
        settings.rocm_condition,
        _cuda_rules(),
        show_hipified=settings.show_hipified,
    )


@lru_cache(maxsize=1)
def _cuda_rules() -> tuple[type[Rule], ...]:
    """Every CUDA rule, enabled or not: what the CUDA front end knows of rules comes from here."""
    return tuple(rule for rule in all_rules() if rule.language == "cuda")


def _file_suppressed(diagnostic: Diagnostic, suppressions: Suppressions) -> bool:
    return suppressions.file_codes is None or diagnostic.code in suppressions.file_codes


def _per_file_ignored(path: str, settings: Settings) -> tuple[str, ...]:
    codes: list[str] = []
    for pattern, pattern_codes in settings.per_file_ignores:
        if matches_any(Path(path), (pattern,), settings.root):
            codes.extend(pattern_codes)
    return tuple(codes)


def _ignored(code: str, selectors: tuple[str, ...]) -> bool:
    return any(selector == "ALL" or code.startswith(selector) for selector in selectors)
