"""The `rocmlint report` subcommand: its options and its run. rocmlint/cli.py only registers and calls it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmlint.adoption import add_since_option, only_changed, since
from rocmlint.arguments import UsageError, add_configuration_options, add_selection_options, config_resolver
from rocmlint.config import ConfigResolver, Overrides

if TYPE_CHECKING:
    from rocmlint.project_summary import ProjectSummary
    from rocmlint.report.model import ReportModel

Warn = Callable[[str], None]
FORMAT_NAMES = ("markdown", "html", "json")


def add_parser(commands: Any) -> None:
    """Register `report` on the CLI's subparsers. Option names match `check`, so `_overrides` reads both."""
    report = commands.add_parser("report", help="write a porting-readiness report (markdown, html or json)")
    report.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    report.add_argument("--format", choices=FORMAT_NAMES, default="markdown")
    report.add_argument("-o", "--output", type=Path, help="write the report to this file instead of stdout")
    report.add_argument(
        "--source-url",
        metavar="TEMPLATE",
        help="HTML: link findings here, e.g. 'https://github.com/org/repo/blob/main/{path}#L{line}'",
    )
    report.add_argument("--no-progress", action="store_true", help="no progress bar (it is drawn only on a terminal)")
    add_selection_options(report)
    add_since_option(report)
    add_configuration_options(
        report, "use this configuration file for every checked file", "ignore every configuration file"
    )
    report.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of internal errors")


def run(args: argparse.Namespace, overrides: Overrides, warn: Warn) -> int:
    """Exit 0 when the report is written, whatever it found: a report is not a gate (`check` is)."""
    # Late: registering `report` on every command line must not import the model and the run (they
    # import the engine, tree-sitter and every rule module).
    from rocmlint.report.model import build_model
    from rocmlint.report.run import collect, report_root

    paths: list[Path] = args.paths or [Path(".")]
    if any(str(p) == "-" for p in paths):
        raise UsageError("report reads files and folders, not stdin")
    resolver = config_resolver(args, overrides)
    changes = since(args.since, paths) if args.since is not None else None
    result = collect(paths, resolver, warn, progress=False if args.no_progress else None)
    for file_report in result.reports:
        file_report.diagnostics = only_changed(file_report.diagnostics, changes)
        for message in file_report.warnings:
            warn(message)
        if args.verbose:
            for trace in file_report.tracebacks:
                sys.stderr.write(trace)
    root = report_root(paths)
    model = build_model(
        result.reports,
        result.facts,
        root,
        result.enabled_codes,
        result.target_archs,
        _project_models(paths, resolver, root),
    )
    text = _render(args, model, root)
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"{args.output}: cannot write the report: {error.strerror or error}") from error
    return 0


def _project_models(paths: list[Path], resolver: ConfigResolver, root: Path) -> list[ProjectSummary]:
    """What the C++ project model learned about each project the paths are in (the models `check` built for
    their C++ files, or built now), its root shown relative to the report's."""
    from rocmlint.cuda.project import project_for
    from rocmlint.project_command import project_roots
    from rocmlint.project_summary import summarize
    from rocmlint.report.model import relative

    existing = [p for p in paths if p.exists()]  # `collect` has warned about the others
    summaries = [summarize(project_for(r), relative(str(r), root)) for r in project_roots(existing, resolver)]
    return [s for s in summaries if s.files]


def _render(args: argparse.Namespace, model: ReportModel, root: Path) -> str:
    from rocmlint.report import html, json_report, markdown

    if args.format == "html":
        linker = (
            html.template_linker(args.source_url)
            if args.source_url
            else html.relative_linker(root, Path(os.path.abspath(args.output)).parent if args.output else None)
        )
        return html.render(model, linker)
    if args.format == "json":
        return json_report.render(model)
    return markdown.render(model)
