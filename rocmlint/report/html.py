"""The report as one self-contained HTML page: inline CSS and SVG, no script, no network, printable.

Everything that comes from the checked project (paths, messages, names) goes through `esc`, since a path or
a message may hold `<`, `&` or quotes.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from rocmlint import __version__
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
    short_summary,
    targets_line,
    unchecked,
)

Linker = Callable[[str, int], str]  # (report-relative path, line) -> href

COLORS = {"error": "#c62828", "warning": "#e08600", "info": "#1e6fb8"}
CHART_BARS = 20
MIN_DIRECTORY_BARS = 8  # open the largest folder into its subfolders until the chart has this many bars
HTML_EVIDENCE_SHOWN = 5  # a table cell, not a list: fewer before "and N more"
CHART_WIDTH, LABEL_WIDTH, BAR_HEIGHT, BAR_GAP = 760, 250, 18, 6

CSS = """
:root { --fg: #1d232b; --muted: #5b6672; --line: #d8dde3; --bg-alt: #f5f7f9; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
p.lead { margin: 4px 0; color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { background: var(--bg-alt); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
a { color: #0b57b0; text-decoration: none; }
a:hover { text-decoration: underline; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 130px; }
.card b { display: block; font-size: 22px; }
.sev { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; font-size: 12px; }
.sev-error { background: #c62828; } .sev-warning { background: #e08600; } .sev-info { background: #1e6fb8; }
.yes { color: #b3261e; font-weight: 600; } .no { color: #2e7d32; font-weight: 600; }
.muted { color: var(--muted); }
ul.tree, ul.tree ul { list-style: none; padding-left: 18px; margin: 0; }
ul.tree > li { padding-left: 0; }
figure { margin: 8px 0 16px; } figcaption { color: var(--muted); font-size: 12px; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
table.rules td:first-child, table.findings td:nth-child(2) { white-space: nowrap; }
table.answers td:nth-child(1) { width: 24%; } table.answers td:nth-child(2) { width: 6%; }
table.answers td:nth-child(3) { width: 32%; } table.answers td:nth-child(4) { width: 38%; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  a { color: inherit; }
  h2 { break-after: avoid; }
  tr, figure, li { break-inside: avoid; }
  thead { display: table-header-group; }
  .sev { color: #000; border: 1px solid #000; background: none !important; }
}
"""


def esc(value: object) -> str:
    return html.escape(escape_control(str(value)), quote=True)


def prose(value: str) -> str:
    """Escaped text whose paired `backticks` become <code> (rule messages and summaries use them)."""
    pieces = value.split("`")
    if len(pieces) % 2 == 0:  # unpaired: show the backticks as they are
        return esc(value)
    return "".join(f"<code>{esc(p)}</code>" if i % 2 else esc(p) for i, p in enumerate(pieces))


def relative_linker(root: Path, output_dir: Path | None) -> Linker:
    """Links that work when the page is opened where it was written: relative from the page to the file."""
    base = Path(os.path.abspath(output_dir)) if output_dir is not None else Path(os.path.abspath("."))

    def link(path: str, line: int) -> str:
        target = Path(path) if Path(path).is_absolute() else root / path
        href = Path(os.path.relpath(target, base)).as_posix()
        return quote(href, safe="/.-_~") + f"#L{line}"

    return link


def template_linker(template: str) -> Linker:
    """`--source-url 'https://github.com/org/repo/blob/main/{path}#L{line}'`."""
    return lambda path, line: template.replace("{path}", quote(path, safe="/.-_~")).replace("{line}", str(line))


def render(model: ReportModel, link: Linker | None = None) -> str:
    link = link or (lambda path, line: quote(path, safe="/.-_~") + f"#L{line}")
    body = "\n".join(
        (
            _header(model),
            _decision_tree(model, link),
            _project_models(model, link),
            _phases(model),
            _charts(model),
            _rules(model),
            _rewrites(model, link),
            _targets(model),
            _directories(model),
            _top_files(model, link),
            _findings(model, link),
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ROCm porting readiness: {esc(model.project)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<footer>Generated by rocmlint {esc(__version__)}. Rule pages explain each hazard and its fix.</footer>\n"
        "</body>\n</html>\n"
    )


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Iterable[int] = (), cls: str = "") -> str:
    numeric = set(numeric)

    def cell(tag: str, i: int, content: str) -> str:
        attr = ' class="num"' if i in numeric else ""
        return f"<{tag}{attr}>{content}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    table_attr = f' class="{cls}"' if cls else ""
    return f"<table{table_attr}><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>"


def _sev(severity: str) -> str:
    return f'<span class="sev sev-{esc(severity)}">{esc(severity)}</span>'


def _a(href: str, label: str) -> str:
    return f'<a href="{esc(href)}">{label}</a>' if href else label


def _codes(pairs: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{esc(c)}&nbsp;({n})" for c, n in pairs)


def _header(model: ReportModel) -> str:
    fx = model.fixability
    cards = [
        (model.total, "findings"),
        (model.by_severity["error"], "errors"),
        (model.by_severity["warning"], "warnings"),
        (model.files_with_findings, "files with findings"),
        (fx.by_rule.get("safe", 0), "safely auto-fixable"),
        (fx.by_rule.get("unsafe", 0), "fix needs review"),
        *([(fx.by_rule["sometimes"], "fix safe for some forms")] if fx.by_rule.get("sometimes", 0) else []),
        (fx.by_rule.get("none", 0), "manual work"),
    ]
    card_html = "".join(f'<div class="card"><b>{n}</b>{esc(label)}</div>' for n, label in cards)
    return (
        f"<header><h1>ROCm porting readiness: {esc(model.project)}</h1>\n"
        f'<p class="lead">{esc(headline(model))}</p>\n<p class="lead">{esc(fix_summary(model))}</p>\n'
        f'<p class="lead">{esc(targets_line(model))}</p>\n<div class="cards">{card_html}</div></header>'
    )


def _evidence(items: Sequence[Evidence], total: int, link: Linker) -> str:
    shown = [
        _a(link(e.path, e.line), f"<code>{esc(e.path)}:{e.line}</code>")
        + ("" if e.source == "scan" else f" ({esc(e.source)})")
        for e in items[:HTML_EVIDENCE_SHOWN]
    ]
    more = total - len(shown)
    return "<br>".join(shown) + (f'<br><span class="muted">and {more} more</span>' if more > 0 else "")


def _decision_tree(model: ReportModel, link: Linker) -> str:
    rows = (
        (
            esc(a.question),
            f'<span class="{"yes" if a.answer else "no"}">{"Yes" if a.answer else "No"}</span>',
            esc(a.consequence),
            _evidence(a.evidence, a.evidence_total, link),
        )
        for a in model.answers
    )
    return (
        '<section id="decision-tree"><h2>Decision tree</h2>\n'
        + _table(("Question", "Answer", "What it means", "Evidence"), rows, cls="answers")
        + "</section>"
    )


def _project_models(model: ReportModel, link: Linker) -> str:
    title = '<section id="project-model"><h2>C++ project model</h2>\n'
    if not model.project_models:
        return title + "<p>No C/C++ files: nothing for the project model to learn.</p></section>"
    return title + "\n".join(_project_model(s, link) for s in model.project_models) + "</section>"


def _project_model(summary: ProjectSummary, link: Linker) -> str:
    def where(path: str, line: int | None) -> str:
        shown = in_report(summary, path)
        label = f"<code>{esc(shown)}{'' if line is None else f':{line}'}</code>"
        return _a(link(shown, line or 1), label) if path else ""

    rows = (
        (
            f"<code>{esc(m.name)}</code>",
            esc(VENDOR_NAMES.get(m.vendor, m.vendor)),
            esc(state_text(m.rocm)),
            esc(state_text(m.nvidia)),
            f"{where(m.path, m.line)} {esc(macro_evidence(m))}".strip(),
        )
        for m in summary.macros
    )
    macros = (
        _table(("Macro", "Set for", "On ROCm", "On NVIDIA", "Evidence"), rows)
        if summary.macros
        else "<p>No vendor macros learned.</p>"
    )
    remaps = [f"<code>{esc(r.name)}</code> ({where(r.path, r.line)})" for r in summary.remaps]
    items = (
        _file_notes("Files the ROCm build does not compile", summary.nvidia_only_files, where),
        _file_notes("Files written for AMD", summary.rocm_native_files, where),
        f"ROCm-only remaps ({len(remaps)}): {_listed(remaps)}",
        f"Header constants: {len(summary.constants)} (<code>rocmlint project</code> lists them)",
    )
    return (
        f'<p class="lead">{prose(project_model_line(summary))}</p>\n{macros}\n<ul>'
        + "".join(f"<li>{item}</li>" for item in items)
        + "</ul>"
    )


def _file_notes(title: str, files: Sequence[FileNote], where: Callable[[str, int | None], str]) -> str:
    shown = [f"{where(f.path, None)} ({esc(f.why)})" for f in files]
    return f"{esc(title)} ({len(shown)}): {_listed(shown)}"


def _listed(items: Sequence[str]) -> str:
    if not items:
        return "none"
    more = len(items) - EVIDENCE_SHOWN
    return ", ".join(items[:EVIDENCE_SHOWN]) + (f', <span class="muted">and {more} more</span>' if more > 0 else "")


def _phases(model: ReportModel) -> str:
    rows = (
        (
            str(p.number),
            f'<b>{esc(p.title)}</b><br><span class="muted">{esc(p.goal)}</span>',
            f'<span class="{"yes" if p.applies else "no"}">{"applies" if p.applies else "skip"}</span>',
            esc("; ".join(p.reasons)),
            str(p.findings),
            _codes(p.codes),
        )
        for p in model.phases
    )
    return (
        '<section id="phases"><h2>Porting phases</h2>\n'
        + _table(("#", "Phase", "", "Why", "Findings", "Rules"), rows, numeric=(4,))
        + "</section>"
    )


# -- charts ---------------------------------------------------------------------------------------

Bar = tuple[str, dict[str, int], str]  # label, counts by severity, tooltip


def bar_chart(bars: Sequence[Bar], title: str) -> str:
    """A horizontal bar chart, one stacked bar (error, warning, info) per row, as inline SVG."""
    height = len(bars) * (BAR_HEIGHT + BAR_GAP) + 30
    largest = max((sum(counts.values()) for _, counts, _ in bars), default=1) or 1
    scale = (CHART_WIDTH - LABEL_WIDTH - 60) / largest
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{CHART_WIDTH}" height="{height}" '
        f'viewBox="0 0 {CHART_WIDTH} {height}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
    ]
    for row, (label, counts, tooltip) in enumerate(bars):
        y = row * (BAR_HEIGHT + BAR_GAP)
        shown = label if len(label) <= 38 else "..." + label[-35:]
        parts.append(
            f'<g><title>{esc(tooltip)}</title><text x="{LABEL_WIDTH - 8}" y="{y + 13}" text-anchor="end">{esc(shown)}</text>'
        )
        x = float(LABEL_WIDTH)
        for severity in SEVERITIES:
            width = counts.get(severity, 0) * scale
            if width > 0:
                parts.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{max(width, 1.5):.1f}" height="{BAR_HEIGHT}" fill="{COLORS[severity]}"/>'
                )
                x += width
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 13}">{sum(counts.values())}</text></g>')
    legend_y = height - 12
    for i, severity in enumerate(SEVERITIES):
        lx = LABEL_WIDTH + i * 90
        parts.append(
            f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{COLORS[severity]}"/>'
            f'<text x="{lx + 16}" y="{legend_y}">{severity}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def rule_bars(model: ReportModel) -> list[Bar]:
    return [
        (
            f"{r.code} {r.name}",
            {r.severity: r.count},
            f"{r.code} {r.name}: {plural(r.count, 'finding')} in {plural(r.files, 'file')}",
        )
        for r in model.rules[:CHART_BARS]
    ]


def directory_bars(root: DirNode) -> list[Bar]:
    """Folders worth comparing: from the first level that splits (single-folder chains such as src/pkg/ are
    followed down), the largest folder is opened into its subfolders while there are few bars, so a
    project with two top-level folders still shows where inside them the work is."""
    node = root
    while len(node.children) == 1 and node.own == 0:
        node = node.children[0]
    frontier: list[DirNode] = list(node.children)
    loose: list[DirNode] = [node] if node.own else []  # folders whose own files get a "(files here)" bar
    while len(frontier) + len(loose) < MIN_DIRECTORY_BARS:
        openable = [n for n in frontier if n.children]
        if not openable:
            break
        largest = max(openable, key=lambda n: (n.total, n.path))
        frontier.remove(largest)
        frontier.extend(largest.children)
        if largest.own:
            loose.append(largest)
    bars: list[Bar] = [
        (f"{n.path}/", n.by_severity, f"{n.path}/: {plural(n.total, 'finding')} in {plural(n.files, 'file')}")
        for n in frontier
    ]
    for n in loose:
        label = "(top-level files)" if n.path == "." else f"{n.path}/ (files here)"
        bars.append((label, _own_counts(n), f"{label}: {plural(n.own, 'finding')}"))
    bars.sort(key=lambda bar: (-sum(bar[1].values()), bar[0]))
    return bars[:CHART_BARS]


def _own_counts(node: DirNode) -> dict[str, int]:
    return {s: node.by_severity[s] - sum(c.by_severity[s] for c in node.children) for s in SEVERITIES}


def _charts(model: ReportModel) -> str:
    if not model.total:
        return '<section id="charts"><h2>Charts</h2><p>No findings.</p></section>'
    return (
        '<section id="charts"><h2>Charts</h2>\n'
        f"<figure>{bar_chart(rule_bars(model), 'Findings by rule')}<figcaption>Findings by rule"
        f"{' (top ' + str(CHART_BARS) + ')' if len(model.rules) > CHART_BARS else ''}</figcaption></figure>\n"
        f"<figure>{bar_chart(directory_bars(model.directories), 'Findings by directory')}"
        "<figcaption>Findings by directory</figcaption></figure></section>"
    )


# -- tables ---------------------------------------------------------------------------------------


def _rules(model: ReportModel) -> str:
    rows = (
        (
            _a(r.url, f"<code>{esc(r.code)}</code>"),
            f'{esc(r.name)}<br><span class="muted">{prose(short_summary(r.summary))}</span>',
            _sev(r.severity),
            esc(r.fix),
            "" if r.phase is None else str(r.phase),
            str(r.count),
            str(r.files),
        )
        for r in model.rules
    )
    table = _table(("Rule", "Name", "Severity", "Fix", "Phase", "Findings", "Files"), rows, numeric=(5, 6), cls="rules")
    return (
        '<section id="rules"><h2>Findings by rule</h2>\n'
        + (table if model.rules else "<p>No findings.</p>")
        + "</section>"
    )


def _rewrites(model: ReportModel, link: Linker) -> str:
    rows = []
    for r in model.rewrites:
        where = "<br>".join(
            _a(link(path, 1), f"<code>{esc(path)}</code>") + f" ({n})" for path, n in r.files[:EVIDENCE_SHOWN]
        )
        if len(r.files) > EVIDENCE_SHOWN:
            where += f'<br><span class="muted">and {len(r.files) - EVIDENCE_SHOWN} more files</span>'
        if r.unchecked_codes and r.scanned_files:
            where += (
                f'<br><span class="muted">Not checked ({esc(unchecked(r))}); a text scan finds:</span><br>'
                + _evidence(r.scanned_files, len(r.scanned_files), link)
            )
        rows.append(
            (
                f'<b>{esc(r.title)}</b><br><span class="muted">{esc(", ".join(r.codes))}</span>',
                esc(r.action),
                str(r.findings),
                where or "none",
            )
        )
    return (
        '<section id="rewrites"><h2>What needs a rewrite</h2>\n'
        + _table(("Component", "Action", "Findings", "Where"), rows, numeric=(2,))
        + "</section>"
    )


def _targets(model: ReportModel) -> str:
    rows = [
        (
            f'<b>{esc(t.title)}</b><br><span class="muted">{esc(t.note)}</span>',
            esc(t.archs),
            str(t.findings),
            str(t.files),
            _codes(t.codes),
            esc(", ".join(t.configured)) if model.target_archs else '<span class="muted">none configured</span>',
        )
        for t in model.targets
    ]
    other = model.total - sum(t.findings for t in model.targets)
    rows.append(("<b>Every ROCm target</b>", "all", str(other), "", "", ""))
    table = _table(("Targets", "GPUs", "Findings", "Files", "Rules", "Your targets"), rows, numeric=(2, 3))
    return f'<section id="targets"><h2>ROCm targets affected</h2>\n<p class="lead">{esc(targets_line(model))}</p>\n{table}</section>'


def _directories(model: ReportModel) -> str:
    if not model.total:
        return '<section id="directories"><h2>By directory</h2><p>No findings.</p></section>'
    return f'<section id="directories"><h2>By directory</h2>\n<ul class="tree">{_tree(model.directories, 0)}</ul></section>'


def _tree(node: DirNode, depth: int) -> str:
    label = "." if node.path == "." else node.name + "/"
    item = f'<li><code>{esc(label)}</code> <b>{node.total}</b> <span class="muted">({esc(severity_parts(node.by_severity))}; {plural(node.files, "file")})</span>'
    if node.children and depth + 1 < TREE_DEPTH:
        item += "<ul>" + "".join(_tree(child, depth + 1) for child in node.children) + "</ul>"
    return item + "</li>"


def _top_files(model: ReportModel, link: Linker) -> str:
    rows = (
        (
            _a(link(f.path, 1), f"<code>{esc(f.path)}</code>"),
            str(f.total),
            *(str(f.by_severity[s]) for s in SEVERITIES),
            _codes(f.codes),
        )
        for f in model.top_files
    )
    table = _table(("File", "Findings", "Errors", "Warnings", "Info", "Rules"), rows, numeric=(1, 2, 3, 4))
    return (
        '<section id="top-files"><h2>Files with the most work</h2>\n'
        + (table if model.top_files else "<p>No findings.</p>")
        + "</section>"
    )


def _findings(model: ReportModel, link: Linker) -> str:
    rows = (
        (
            _a(link(f.path, f.line), f"<code>{esc(f.path)}:{f.line}:{f.column}</code>"),
            _a(f.url, f"<code>{esc(f.code)}</code>"),
            _sev(f.severity),
            esc(f.fix),
            prose(f.message),
        )
        for f in model.findings
    )
    table = _table(("Location", "Rule", "Severity", "Fix", "Message"), rows, cls="findings")
    return (
        '<section id="findings"><h2>All findings</h2>\n'
        + (table if model.findings else "<p>No findings.</p>")
        + "</section>"
    )
