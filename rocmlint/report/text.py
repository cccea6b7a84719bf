"""Sentences shared by the Markdown and HTML views, so both say the same thing in the same words."""

from __future__ import annotations

from rocmlint.project_summary import Macro, ProjectSummary, build_mode
from rocmlint.report.model import SEVERITIES, ReportModel, RewriteRow

EVIDENCE_SHOWN = 10  # evidence items and files listed per question or rewrite before "and N more"
TREE_DEPTH = 4  # directory levels shown (totals below are folded into their ancestors)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def severity_parts(counts: dict[str, int]) -> str:
    parts = [plural(counts[s], s) for s in SEVERITIES if counts.get(s)]
    return ", ".join(parts) or "none"


def headline(model: ReportModel) -> str:
    languages = model.files_by_language
    checked = (
        f"{plural(model.files_checked, 'file')} checked ({languages.get('python', 0)} Python, "
        f"{languages.get('cuda', 0)} CUDA/C++)"
    )
    if not model.total:
        return f"No findings: {checked}."
    return (
        f"{plural(model.total, 'finding')} ({severity_parts(model.by_severity)}) in "
        f"{plural(model.files_with_findings, 'file')}; {checked}."
    )


def fix_summary(model: ReportModel) -> str:
    fx = model.fixability
    safe, unsafe, none = fx.by_rule.get("safe", 0), fx.by_rule.get("unsafe", 0), fx.by_rule.get("none", 0)
    sometimes = fx.by_rule.get("sometimes", 0)
    mixed = f", {sometimes} from rules whose fix is safe for some forms only" if sometimes else ""
    return (
        f"Fixes: {safe} from rules with a safe fix (NVIDIA path unchanged), {unsafe} from rules whose fix needs "
        f"review{mixed}, {none} report-only; {fx.attached_safe} safe and {fx.attached_unsafe} unsafe fixes are "
        f"attached to findings now."
    )


def targets_line(model: ReportModel) -> str:
    if model.target_archs:
        return f"Configured ROCm targets (target-archs): {', '.join(model.target_archs)}."
    return "No ROCm targets configured (set target-archs in [tool.rocmlint] to see which of yours are affected)."


def short_summary(summary: str, limit: int = 160) -> str:
    """The first sentence of a rule's summary, cut at `limit` characters: a table cell, not the rule page."""
    end = summary.find(". ")
    sentence = summary if end < 0 else summary[: end + 1]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 3].rsplit(" ", 1)[0]
    if cut.count("`") % 2:  # never end inside a `code span`: it would show as a stray backtick
        cut = cut[: cut.rindex("`")].rstrip()
    return cut + " ..."


def unchecked(row: RewriteRow) -> str:
    """Why the text scan stands in: "ROC219 is not in this version of rocmlint; ROC206 is not enabled"."""
    missing = [c for c in row.unchecked_codes if c in row.unavailable_codes]
    disabled = [c for c in row.unchecked_codes if c not in row.unavailable_codes]
    parts = []
    if missing:
        parts.append(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in this version of rocmlint")
    if disabled:
        parts.append(f"{', '.join(disabled)} {'is' if len(disabled) == 1 else 'are'} not enabled")
    return "; ".join(parts)


def project_model_line(summary: ProjectSummary) -> str:
    """ "Project `.`: 5 C/C++/CUDA files read; build: CMake HIP; HIP only: no." """
    hip_only = "yes (every file is ROCm-native code)" if summary.build.hip_only else "no"
    return (
        f"Project `{summary.root}`: {plural(summary.files, 'C/C++/CUDA file')} read; build: "
        f"{build_mode(summary.build)}; HIP only: {hip_only}."
    )


def in_report(summary: ProjectSummary, path: str) -> str:
    """A path of the project model (relative to its root) relative to the report's root, as findings are."""
    if not path or summary.root == "." or path.startswith("/"):
        return path
    return f"{summary.root}/{path}"


def macro_evidence(macro: Macro) -> str:
    """ "the ROCm build defines it (build)": the location is apart, as a link."""
    return f"{macro.why} ({macro.kind})" if macro.kind else macro.why
