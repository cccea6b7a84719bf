"""The report as GitHub-flavoured Markdown (for a pull request, an issue or a wiki page)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rocmlint.outputs.paths import escape_control
from rocmlint.project_summary import VENDOR_NAMES, FileNote, ProjectSummary, state_text
from rocmlint.report.model import SEVERITIES, DirNode, Evidence, ReportModel
from rocmlint.report.text import (
    EVIDENCE_SHOWN,
    TREE_DEPTH,
    fix_summary,
    headline,
    in_report,
    macro_evidence,
    plural,
    project_model_line,
    severity_parts,
    targets_line,
    unchecked,
)

# Characters that start Markdown syntax (or raw HTML) anywhere in a line. `_` is handled apart: GFM does not
# treat an underscore between two alphanumerics as emphasis, so `max_split_size_mb` stays readable.
_SPECIAL = re.compile(r"([\\`*\[\]<>&|~#!])")
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def text(value: str) -> str:
    """Plain text that renders as itself in a paragraph or a table cell."""
    value = escape_control(value).replace("\n", " ")
    value = _SPECIAL.sub(lambda m: _ENTITIES.get(m.group(1), "\\" + m.group(1)), value)
    return _UNDERSCORE.sub(r"\\_", value)


def code(value: str) -> str:
    """A code span that survives backticks and, inside tables, pipes (GFM unescapes `\\|` in code spans)."""
    value = escape_control(value).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def message(value: str) -> str:
    """A diagnostic message: its `code` spans kept as code spans when the backticks pair up, the rest as text."""
    pieces = value.split("`")
    if len(pieces) % 2 == 0:  # an odd number of backticks: no safe pairing, show them literally
        return text(value)
    return "".join(code(piece) if i % 2 else text(piece) for i, piece in enumerate(pieces))


def link(label: str, url: str) -> str:
    return f"[{text(label)}](<{url.replace('<', '%3C').replace('>', '%3E')}>)" if url else text(label)


def render(model: ReportModel) -> str:
    sections = (
        _summary(model),
        _decision_tree(model),
        _project_models(model),
        _phases(model),
        _rules(model),
        _rewrites(model),
        _targets(model),
        _directories(model),
        _top_files(model),
        _findings(model),
    )
    return "\n".join("\n".join(section) + "\n" for section in sections)


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _summary(model: ReportModel) -> list[str]:
    return [
        f"# ROCm porting readiness: {text(model.project)}",
        "",
        text(headline(model)),
        "",
        text(fix_summary(model)),
        "",
        text(targets_line(model)),
    ]


def _evidence(items: Iterable[Evidence], total: int) -> str:
    shown = [code(f"{e.path}:{e.line}") + ("" if e.source == "scan" else f" ({e.source})") for e in items]
    shown = shown[:EVIDENCE_SHOWN]
    more = total - len(shown)
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def _decision_tree(model: ReportModel) -> list[str]:
    lines = ["## Decision tree", ""]
    for a in model.answers:
        verdict = "Yes" if a.answer else "No"
        lines.append(f"- **{text(a.question)}** {verdict}. {text(a.consequence)}")
        if a.evidence:
            lines.append(
                f"  - Evidence ({plural(a.evidence_total, 'file')}): {_evidence(a.evidence, a.evidence_total)}"
            )
    return lines


def _project_models(model: ReportModel) -> list[str]:
    lines = ["## C++ project model", ""]
    if not model.project_models:
        return [*lines, "No C/C++ files: nothing for the project model to learn."]
    for summary in model.project_models:
        lines += [message(project_model_line(summary)), "", *_learned_macros(summary), ""]
        lines += _project_files("Files the ROCm build does not compile", summary, summary.nvidia_only_files)
        lines += _project_files("Files written for AMD", summary, summary.rocm_native_files)
        remaps = [code(r.name) + f" ({code(f'{in_report(summary, r.path)}:{r.line}')})" for r in summary.remaps]
        lines.append(f"- ROCm-only remaps ({len(remaps)}): {_shown(remaps)}")
        lines.append(f"- Header constants: {len(summary.constants)} (`rocmlint project` lists them)")
    return lines


def _learned_macros(summary: ProjectSummary) -> list[str]:
    if not summary.macros:
        return ["No vendor macros learned."]
    rows = (
        (
            code(m.name),
            VENDOR_NAMES.get(m.vendor, m.vendor),
            text(state_text(m.rocm)),
            text(state_text(m.nvidia)),
            (code(f"{in_report(summary, m.path)}{'' if m.line is None else f':{m.line}'}") + " " if m.path else "")
            + text(macro_evidence(m)),
        )
        for m in summary.macros
    )
    return _table(("Macro", "Set for", "On ROCm", "On NVIDIA", "Evidence"), rows)


def _project_files(title: str, summary: ProjectSummary, files: Iterable[FileNote]) -> list[str]:
    shown = [f"{code(in_report(summary, f.path))} ({text(f.why)})" for f in files]
    return [f"- {title} ({len(shown)}): {_shown(shown)}"]


def _shown(items: list[str]) -> str:
    if not items:
        return "none"
    more = len(items) - EVIDENCE_SHOWN
    return ", ".join(items[:EVIDENCE_SHOWN]) + (f", and {more} more" if more > 0 else "")


def _phases(model: ReportModel) -> list[str]:
    rows = (
        (
            str(p.number),
            text(p.title),
            "yes" if p.applies else "no",
            text("; ".join(p.reasons)),
            str(p.findings),
            ", ".join(f"{c} ({n})" for c, n in p.codes),
        )
        for p in model.phases
    )
    return ["## Porting phases", "", *_table(("Phase", "Title", "Applies", "Why", "Findings", "Rules"), rows)]


def _rules(model: ReportModel) -> list[str]:
    lines = ["## Findings by rule", ""]
    if not model.rules:
        return [*lines, "No findings."]
    rows = (
        (
            link(r.code, r.url),
            text(r.name),
            r.severity,
            r.fix,
            "" if r.phase is None else str(r.phase),
            str(r.count),
            str(r.files),
        )
        for r in model.rules
    )
    lines += _table(("Rule", "Name", "Severity", "Fix", "Phase", "Findings", "Files"), rows)
    totals = ", ".join(f"{model.by_severity[s]} {s}" for s in SEVERITIES)
    return [*lines, "", f"By severity: {totals}."]


def _rewrites(model: ReportModel) -> list[str]:
    lines = ["## What needs a rewrite", ""]
    for r in model.rewrites:
        count = f"{plural(r.findings, 'finding')} in {plural(len(r.files), 'file')}" if r.findings else "no findings"
        lines.append(f"- **{text(r.title)}** ({', '.join(r.codes)}): {count}. {text(r.action)}")
        for path, n in r.files[:EVIDENCE_SHOWN]:
            lines.append(f"  - {code(path)}: {n}")
        if len(r.files) > EVIDENCE_SHOWN:
            lines.append(f"  - and {len(r.files) - EVIDENCE_SHOWN} more files")
        if r.unchecked_codes and r.scanned_files:
            lines.append(
                f"  - Not checked ({text(unchecked(r))}); a text scan finds it in "
                f"{plural(len(r.scanned_files), 'file')}: {_evidence(r.scanned_files, len(r.scanned_files))}"
            )
    return lines


def _targets(model: ReportModel) -> list[str]:
    rows = (
        (
            text(t.title),
            text(t.archs),
            str(t.findings),
            str(t.files),
            ", ".join(f"{c} ({n})" for c, n in t.codes),
            text(", ".join(t.configured)) if model.target_archs else "(none configured)",
        )
        for t in model.targets
    )
    lines = [
        "## ROCm targets affected",
        "",
        *_table(("Targets", "GPUs", "Findings", "Files", "Rules", "Your targets"), rows),
        "",
    ]
    lines += [f"- **{text(t.title)}**: {text(t.note)}" for t in model.targets]
    other = model.total - sum(t.findings for t in model.targets)
    return [*lines, f"- **Every ROCm target**: the other {plural(other, 'finding')}."]


def _directories(model: ReportModel) -> list[str]:
    lines = ["## By directory", ""]
    if not model.total:
        return [*lines, "No findings."]
    return [*lines, *_tree_lines(model.directories, 0)]


def _tree_lines(node: DirNode, depth: int) -> Iterator[str]:
    label = "." if node.path == "." else node.name + "/"
    parts = severity_parts(node.by_severity)
    yield f"{'  ' * depth}- {code(label)} {node.total} ({parts}; {plural(node.files, 'file')})"
    if depth + 1 >= TREE_DEPTH:
        return
    for child in node.children:
        yield from _tree_lines(child, depth + 1)


def _top_files(model: ReportModel) -> list[str]:
    lines = ["## Files with the most work", ""]
    if not model.top_files:
        return [*lines, "No findings."]
    rows = (
        (
            code(f.path),
            str(f.total),
            *(str(f.by_severity[s]) for s in SEVERITIES),
            ", ".join(f"{c} ({n})" for c, n in f.codes),
        )
        for f in model.top_files
    )
    return lines + _table(("File", "Findings", "Errors", "Warnings", "Info", "Rules"), rows)


def _findings(model: ReportModel) -> list[str]:
    lines = ["## All findings", ""]
    if not model.findings:
        return [*lines, "No findings."]
    rows = (
        (code(f"{f.path}:{f.line}:{f.column}"), link(f.code, f.url), f.severity, f.fix, message(f.message))
        for f in model.findings
    )
    return lines + _table(("Location", "Rule", "Severity", "Fix", "Message"), rows)
