"""The text form of `rocmlint project` (rocmlint/project_command.py): one `# Section` per kind of fact, items as
aligned columns, long lists cut at TEXT_LIMIT (the JSON form lists everything)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rocmlint.project_summary import VENDOR_NAMES, Macro, ProjectSummary, build_mode, state_text

# Text mode lists this many items per section; JSON lists them all.
TEXT_LIMIT = 40
# Header constants text mode shows: the ones whose names look like warp sizes, lane counts or lane masks.
_WARP_LIKE = re.compile(r"warp|wave|lane|mask", re.IGNORECASE)
_VENDOR_TITLES = {
    "rocm": "ROCm-only macros",
    "nvidia": "NVIDIA-only macros",
    "other": "Other accelerators' macros (undefined on ROCm)",
}


def render_text(summary: ProjectSummary, enabled: bool = True) -> str:
    lines = [f"Project root: {summary.root}", f"C/C++/CUDA files read: {summary.files}"]
    if not enabled:
        lines.append("project-model = false in the configuration: `check` does not use this model")
    lines += ["", "# Build", *_build_lines(summary)]
    for vendor, title in _VENDOR_TITLES.items():
        macros = summary.macros_of(vendor)
        lines += ["", f"# {title} ({len(macros)})", *_macro_lines(macros)]
    lines += ["", *_constant_lines(summary)]
    lines += ["", f"# ROCm-only remaps ({len(summary.remaps)})"]
    lines += _limited(_columns([(_remap_name(r.name, r.parameters), f"{r.path}:{r.line}") for r in summary.remaps]))
    lines += ["", f"# Files the ROCm build does not compile ({len(summary.nvidia_only_files)})"]
    lines += _limited(_columns([(f.path, f.why) for f in summary.nvidia_only_files]))
    lines += ["", *_rocm_native_lines(summary)]
    return "\n".join(lines) + "\n"


def _build_lines(summary: ProjectSummary) -> list[str]:
    build = summary.build
    lines = [
        f"mode = {build_mode(build)}",
        f"hip_only = {'yes: every file is checked as ROCm-native code' if build.hip_only else 'no'}",
        f"hipify = {build.hipify or 'no'}",
        f"rocm_build = {build.rocm_build or 'none found'}",
    ]
    if build.hipify:
        lines.append(f"hipify's renames = {_hipified_renames(build.rocm_build)}")
    by_vendor = [d for d in build.defines if d.vendor is not None]
    if by_vendor:
        lines.append("vendor defines:")
        rows = [(_define(d.name, d.value), _vendor_name(d.vendor), f"{d.path}:{d.line}") for d in by_vendor]
        lines += _limited(_columns(rows))
    return lines


def _hipified_renames(rocm_build: str) -> str:
    """What `check` does, by default, with what the build's hipify renames (ROC204/ROC205 includes)."""
    if rocm_build:
        return (
            "left out where hipify reaches, notes where a HIP twin shows the port left the file to NVIDIA"
            " (show-hipified = true reports them all)"
        )
    return "reported at info: no ROCm build yet (show-hipified = false leaves them out)"


def _macro_lines(macros: Sequence[Macro]) -> list[str]:
    rows = [
        (
            m.name,
            f"rocm: {state_text(m.rocm)}",
            f"nvidia: {state_text(m.nvidia)}",
            f"({m.kind})" if m.kind else "",
            f"{m.path}{'' if m.line is None else f':{m.line}'}: {m.why}" if m.path else m.why,
        )
        for m in macros
    ]
    return _columns(rows) or ["  none"]


def _constant_lines(summary: ProjectSummary) -> list[str]:
    shown = [c for c in summary.constants if _WARP_LIKE.search(c.name)]
    title = f"# Header constants ({len(shown)} warp, lane or mask of {len(summary.constants)}; JSON lists all)"
    rows = [(f"{c.name} = {c.value}", f"{c.path}:{c.line}", "ROCm only" if c.rocm_only else "", c.kind) for c in shown]
    return [title, *_limited(_columns(rows))]


def _rocm_native_lines(summary: ProjectSummary) -> list[str]:
    files = summary.rocm_native_files
    title = f"# Files written for AMD ({len(files)})"
    if summary.build.hip_only:
        return [title, "  every file: the project's build compiles HIP only"]
    return [title, *_limited(_columns([(f.path, f.why) for f in files]))]


def _columns(rows: Iterable[Sequence[str]]) -> list[str]:
    """Rows as aligned columns, indented (the last column is not padded)."""
    rows = list(rows)
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  " + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip() for row in rows
    ]


def _limited(lines: list[str]) -> list[str]:
    if not lines:
        return ["  none"]
    if len(lines) <= TEXT_LIMIT:
        return lines
    return [*lines[:TEXT_LIMIT], f"  ... and {len(lines) - TEXT_LIMIT} more (--output-format json lists them all)"]


def _remap_name(name: str, parameters: int | None) -> str:
    return name if parameters is None else f"{name}({', '.join(['_'] * parameters)})"


def _define(name: str, value: str | None) -> str:
    return name if value is None else f"{name}={value}"


def _vendor_name(vendor: str | None) -> str:
    return VENDOR_NAMES.get(vendor or "", "both")
