"""The porting-readiness report as data, built once from the FileReports and the text-scan facts.

Every renderer (markdown, HTML, JSON) is a view over `ReportModel`; none of them counts or decides anything.
The model is deterministic: paths are relative to the report root and every list is sorted, so the same
tree always gives the same report (golden tests depend on it).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.diagnostics import Applicability, Diagnostic, FixAvailability
from rocmlint.file_report import FileReport
from rocmlint.project_summary import ProjectSummary
from rocmlint.registry import rule_by_code
from rocmlint.report.facts import FACT_BY_KEY, FileFacts
from rocmlint.report.knowledge import PHASES, REWRITES, TARGET_GROUPS, Phase, RewriteKind, TargetGroup, phase_of

SEVERITIES = ("error", "warning", "info")
TOP_FILES = 15
EVIDENCE_LIMIT = 20  # per decision-tree question; the total is kept, so renderers can say "and N more"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    name: str
    severity: str
    message: str
    url: str
    fix: str  # the rule's fix availability: safe, unsafe, sometimes or none
    fix_attached: bool  # this diagnostic carries a fix now


@dataclass(frozen=True)
class RuleRow:
    code: str
    name: str
    severity: str
    language: str
    fix: str
    count: int
    files: int
    phase: int | None
    url: str
    summary: str


@dataclass
class DirNode:
    """A folder with the totals of everything below it; `own` counts findings in files directly inside."""

    path: str
    name: str
    total: int = 0
    own: int = 0
    files: int = 0
    by_severity: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEVERITIES, 0))
    children: list[DirNode] = field(default_factory=list)


@dataclass(frozen=True)
class FileRow:
    path: str
    total: int
    by_severity: dict[str, int]
    codes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Evidence:
    path: str
    line: int
    source: str  # a rule code, or "scan" for a text-scan fact


@dataclass(frozen=True)
class Answer:
    """One question of the checklist's decision tree, answered from the code."""

    key: str
    question: str
    answer: bool
    consequence: str
    evidence: tuple[Evidence, ...]
    evidence_total: int


@dataclass(frozen=True)
class PhaseRow:
    number: int
    title: str
    goal: str
    applies: bool
    reasons: tuple[str, ...]
    findings: int
    codes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class RewriteRow:
    key: str
    title: str
    action: str
    codes: tuple[str, ...]
    findings: int
    files: tuple[tuple[str, int], ...]  # from diagnostics
    unchecked_codes: tuple[str, ...]  # codes that did not run (not enabled or not written yet)
    unavailable_codes: tuple[str, ...]  # of those, the ones this rocmlint does not have at all
    scanned_files: tuple[Evidence, ...]  # text-scan evidence, only when some codes did not run


@dataclass(frozen=True)
class TargetRow:
    key: str
    title: str
    archs: str
    note: str
    findings: int
    files: int
    codes: tuple[tuple[str, int], ...]
    configured: tuple[str, ...]  # configured target-archs in this group


@dataclass(frozen=True)
class Fixability:
    by_rule: dict[str, int]  # diagnostics counted by their rule's fix availability (every FixAvailability value)
    attached_safe: int
    attached_unsafe: int


@dataclass(frozen=True)
class ReportModel:
    project: str
    files_checked: int
    files_by_language: dict[str, int]
    files_with_findings: int
    total: int
    by_severity: dict[str, int]
    fixability: Fixability
    answers: tuple[Answer, ...]
    phases: tuple[PhaseRow, ...]
    rules: tuple[RuleRow, ...]
    directories: DirNode
    top_files: tuple[FileRow, ...]
    rewrites: tuple[RewriteRow, ...]
    targets: tuple[TargetRow, ...]
    target_archs: tuple[str, ...]
    project_models: tuple[ProjectSummary, ...]  # what the C++ project model learned, per project root
    findings: tuple[Finding, ...]


def relative(path: str, root: Path) -> str:
    """`path` relative to the report root in POSIX form; absolute when outside it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()


def build_model(
    reports: Sequence[FileReport],
    facts: Sequence[FileFacts],
    root: Path,
    enabled_codes: frozenset[str],
    target_archs: Iterable[str] = (),
    project_models: Iterable[ProjectSummary] = (),
) -> ReportModel:
    root = Path(os.path.abspath(root))
    findings = tuple(sorted((_finding(d, root) for r in reports for d in r.diagnostics), key=_finding_key))
    rel_facts = [FileFacts(relative(f.path, root), f.language, f.lines) for f in facts]
    answers = _answers(findings, rel_facts)
    archs = tuple(sorted(set(target_archs)))
    return ReportModel(
        project=root.name or root.as_posix(),
        files_checked=len(reports),
        files_by_language=_files_by_language(rel_facts),
        files_with_findings=len({f.path for f in findings}),
        total=len(findings),
        by_severity=_by_severity(findings),
        fixability=_fixability(findings, (d for r in reports for d in r.diagnostics)),
        answers=answers,
        phases=tuple(_phase_row(p, findings, {a.key: a for a in answers}) for p in PHASES),
        rules=_rule_rows(findings),
        directories=_directory_tree(findings),
        top_files=_top_files(findings),
        rewrites=tuple(_rewrite_row(kind, findings, rel_facts, enabled_codes) for kind in REWRITES),
        targets=tuple(_target_row(group, findings, archs) for group in TARGET_GROUPS),
        target_archs=archs,
        project_models=tuple(project_models),
        findings=findings,
    )


def _finding(d: Diagnostic, root: Path) -> Finding:
    rule = rule_by_code(d.code)
    fix = rule.fix_availability.value if rule is not None else FixAvailability.NONE.value
    return Finding(
        path=relative(d.path, root),
        line=d.location.line,
        column=d.location.column,
        code=d.code,
        name=d.name,
        severity=d.severity.value,
        message=d.message,
        url=d.url or (rule.url() if rule is not None else ""),
        fix=fix,
        fix_attached=d.fix is not None,
    )


def _finding_key(f: Finding) -> tuple[str, int, int, str, str]:
    return (f.path, f.line, f.column, f.code, f.message)


def _by_severity(findings: Iterable[Finding]) -> dict[str, int]:
    counts = Counter(f.severity for f in findings)
    return {s: counts[s] for s in SEVERITIES}


def _files_by_language(facts: Sequence[FileFacts]) -> dict[str, int]:
    counts = Counter(f.language for f in facts)
    return {language: counts[language] for language in ("python", "cuda")}


def _fixability(findings: Sequence[Finding], diagnostics: Iterable[Diagnostic]) -> Fixability:
    counts = Counter(f.fix for f in findings)
    # Counted from the fixes themselves: a rule whose availability is `sometimes` attaches either kind.
    attached = [d.fix for d in diagnostics if d.fix is not None]
    safe = sum(1 for fix in attached if fix.applicability is Applicability.SAFE)
    return Fixability(
        by_rule={a.value: counts[a.value] for a in FixAvailability},
        attached_safe=safe,
        attached_unsafe=len(attached) - safe,
    )


def _rule_rows(findings: Sequence[Finding]) -> tuple[RuleRow, ...]:
    by_code: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_code[f.code].append(f)
    rows = [_rule_row(code, group) for code, group in by_code.items()]
    return tuple(sorted(rows, key=lambda r: (-r.count, r.code)))


def _rule_row(code: str, group: list[Finding]) -> RuleRow:
    rule = rule_by_code(code)
    first = group[0]
    return RuleRow(
        code=code,
        name=first.name,
        severity=rule.severity.value if rule is not None else first.severity,
        language=rule.language if rule is not None else "",
        fix=first.fix,
        count=len(group),
        files=len({f.path for f in group}),
        phase=phase_of(code),
        url=first.url,
        summary=rule.summary() if rule is not None else "",
    )


def _directory_tree(findings: Sequence[Finding]) -> DirNode:
    root = DirNode(".", ".")
    index: dict[str, DirNode] = {".": root}
    per_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        per_file[f.path].append(f)
    for path, group in per_file.items():
        chain = [root] + [_node(index, parts) for parts in _folder_prefixes(path)]
        for node in chain:
            node.total += len(group)
            node.files += 1
            for f in group:
                node.by_severity[f.severity] += 1
        chain[-1].own += len(group)
    _sort_tree(root)
    return root


def _folder_prefixes(path: str) -> list[tuple[str, ...]]:
    parts = tuple(p for p in path.split("/")[:-1] if p)
    return [parts[: i + 1] for i in range(len(parts))]


def _node(index: dict[str, DirNode], parts: tuple[str, ...]) -> DirNode:
    key = "/".join(parts)
    if key not in index:
        node = DirNode(key, parts[-1])
        index[key] = node
        parent = index["/".join(parts[:-1])] if len(parts) > 1 else index["."]
        parent.children.append(node)
    return index[key]


def _sort_tree(node: DirNode) -> None:
    node.children.sort(key=lambda child: child.name)
    for child in node.children:
        _sort_tree(child)


def _top_files(findings: Sequence[Finding]) -> tuple[FileRow, ...]:
    per_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        per_file[f.path].append(f)
    rows = [FileRow(path, len(group), _by_severity(group), _code_counts(group)) for path, group in per_file.items()]
    rows.sort(key=lambda r: (-r.total, r.path))
    return tuple(rows[:TOP_FILES])


def _code_counts(findings: Iterable[Finding]) -> tuple[tuple[str, int], ...]:
    counts = Counter(f.code for f in findings)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


# -- the decision tree -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Question:
    key: str
    question: str
    facts: tuple[str, ...]
    codes: tuple[str, ...]  # diagnostics that are evidence too (a code prefix such as "ROC2" counts)
    yes: str
    no: str


QUESTIONS: tuple[_Question, ...] = (
    _Question(
        "cuda_kernels",
        "Does the repository have CUDA C++ kernels (.cu/.cuh files)?",
        ("cuda_kernels",),
        ("ROC2",),
        "Run all eight phases: source translation, architecture adaptation and build system (Phases 2-4) apply.",
        "Pure Python/PyTorch: skip Phases 2, 3 and 4; run Phases 1 and 5-8.",
    ),
    _Question(
        "custom_extension",
        "Does it build custom CUDA extensions (setup.py CUDAExtension, load_inline)?",
        ("custom_extension",),
        ("ROC301", "ROC302", "ROC303"),
        "Custom kernels: the full Phase 2 + 3 HIPIFY workflow, and Phase 4 for the build (hipcc flags, gfx targets).",
        "No custom extension build found.",
    ),
    _Question(
        "flash_attn",
        "Does it use flash-attn?",
        ("flash_attn",),
        ("ROC109",),
        "Phase 5: replace with aiter (CDNA) or the Triton build behind a three-tier fallback (aiter, SDPA, eager).",
        "No flash-attn import found.",
    ),
    _Question(
        "cutlass",
        "Does it use CUTLASS / CuTe?",
        ("cutlass",),
        ("ROC206",),
        "Phase 3 plus a manual Composable Kernel (CK) rewrite of the CUTLASS kernels.",
        "No CUTLASS found.",
    ),
    _Question(
        "torch_compile",
        "Does it use torch.compile / Inductor?",
        ("torch_compile",),
        ("ROC101", "ROC106"),
        'Phase 6: mode="default" on ROCm, Inductor cudagraphs/memory_planning/max_autotune off on ROCm.',
        "No torch.compile found: Phase 6 has nothing to adapt.",
    ),
    _Question(
        "triton",
        "Does it have Triton kernels?",
        ("triton",),
        ("ROC124", "ROC125"),
        "Wave64 applies to Triton too: num_warps x 64 <= 1024 threads on CDNA, and no PTX in inline asm.",
        "No Triton kernels found.",
    ),
    _Question(
        "cuda_graphs",
        "Does it capture CUDA graphs?",
        ("cuda_graphs",),
        ("ROC108",),
        "Phase 7: HIP graph capture does not raise on illegal operations; validate replays against eager.",
        "No CUDA graph capture found: Phase 7 is optional.",
    ),
    _Question(
        "rocm_aware",
        "Is some code already gated for ROCm?",
        ("rocm_aware",),
        (),
        "Partly ported: follow the existing gates' pattern (code under them is not reported).",
        "No ROCm gate found: the port starts from scratch.",
    ),
)


def _answers(findings: Sequence[Finding], facts: Sequence[FileFacts]) -> tuple[Answer, ...]:
    return tuple(_answer(q, findings, facts) for q in QUESTIONS)


def _answer(q: _Question, findings: Sequence[Finding], facts: Sequence[FileFacts]) -> Answer:
    first: dict[str, Evidence] = {}
    for ff in facts:
        for key, line in ff.lines:
            if key in q.facts:
                _keep_first(first, Evidence(ff.path, line, "scan"))
    for f in findings:
        if any(f.code.startswith(code) for code in q.codes):
            _keep_first(first, Evidence(f.path, f.line, f.code))
    evidence = sorted(first.values(), key=lambda e: (e.path, e.line))
    found = bool(evidence)
    return Answer(q.key, q.question, found, q.yes if found else q.no, tuple(evidence[:EVIDENCE_LIMIT]), len(evidence))


def _keep_first(first: dict[str, Evidence], candidate: Evidence) -> None:
    """One piece of evidence per file: its earliest line (a diagnostic wins a tie over a text scan)."""
    current = first.get(candidate.path)
    if current is None or (candidate.line, candidate.source == "scan") < (current.line, current.source == "scan"):
        first[candidate.path] = candidate


def _phase_row(phase: Phase, findings: Sequence[Finding], answers: dict[str, Answer]) -> PhaseRow:
    mine = [f for f in findings if phase_of(f.code) == phase.number]
    reasons = list(_phase_reasons(phase.number, answers))
    if mine:
        reasons.append(f"{len(mine)} finding{'s' if len(mine) != 1 else ''} in this phase")
    applies = bool(reasons) if phase.number not in (0, 1, 8) else True
    if not reasons:
        reasons.append(_skip_reason(phase.number))
    return PhaseRow(phase.number, phase.title, phase.goal, applies, tuple(reasons), len(mine), _code_counts(mine))


def _phase_reasons(number: int, answers: dict[str, Answer]) -> Iterable[str]:
    def files(key: str) -> str:
        n = answers[key].evidence_total
        return f"{n} file{'s' if n != 1 else ''}"

    if number in (0, 1, 8):
        yield "every port"
    triggers = {
        2: ("cuda_kernels", "custom_extension", "cutlass"),
        3: ("cuda_kernels", "custom_extension", "cutlass", "triton"),
        4: ("cuda_kernels", "custom_extension"),
        5: ("flash_attn",),
        6: ("torch_compile",),
        7: ("cuda_graphs",),
    }.get(number, ())
    for key in triggers:
        if answers[key].answer:
            yield f"{FACT_BY_KEY[key].label}: {files(key)}"


def _skip_reason(number: int) -> str:
    return {
        2: "no CUDA C++ sources or custom extensions: skip",
        3: "no CUDA C++ or Triton kernels: skip",
        4: "no CUDA extension build: skip",
        5: "no library that needs replacing was found",
        6: "no torch.compile found",
        7: "optional: no CUDA graph capture found",
    }.get(number, "")


# -- rewrites and targets --------------------------------------------------------------------------


def _rewrite_row(
    kind: RewriteKind, findings: Sequence[Finding], facts: Sequence[FileFacts], enabled: frozenset[str]
) -> RewriteRow:
    mine = [f for f in findings if f.code in kind.codes]
    per_file = Counter(f.path for f in mine)
    unchecked = tuple(code for code in kind.codes if code not in enabled)
    scanned: list[Evidence] = []
    if unchecked:
        # The rule did not run (not selected, or not written yet): say what a text scan sees instead.
        scanned = [Evidence(ff.path, line, "scan") for ff in facts for key, line in ff.lines if key == kind.fact]
    return RewriteRow(
        key=kind.key,
        title=kind.title,
        action=kind.action,
        codes=kind.codes,
        findings=len(mine),
        files=tuple(sorted(per_file.items(), key=lambda item: (-item[1], item[0]))),
        unchecked_codes=unchecked,
        unavailable_codes=tuple(code for code in unchecked if rule_by_code(code) is None),
        scanned_files=tuple(sorted(scanned, key=lambda e: (e.path, e.line))),
    )


def _target_row(group: TargetGroup, findings: Sequence[Finding], archs: tuple[str, ...]) -> TargetRow:
    mine = [f for f in findings if f.code in group.codes]
    return TargetRow(
        key=group.key,
        title=group.title,
        archs=group.archs,
        note=group.note,
        findings=len(mine),
        files=len({f.path for f in mine}),
        codes=_code_counts(mine),
        configured=tuple(a for a in archs if group.matches(a.split(":", 1)[0])),
    )
