"""`rocmlint project [PATHS]`: what the C++ project model learned about each path's project, and from where
(rocmlint/project_summary.py as data, rocmlint/project_text.py as text). rocmlint/cli.py only registers and
calls it."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocmlint.arguments import UsageError, add_configuration_options, config_resolver
from rocmlint.config import ConfigResolver, Overrides


def add_parser(commands: Any) -> None:
    """Register `project` on the CLI's subparsers."""
    project = commands.add_parser(
        "project", help="show what rocmlint learned from the project's own files (build, vendor macros, headers)"
    )
    project.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    project.add_argument("--output-format", choices=("text", "json"), default="text")
    add_configuration_options(
        project, "use this configuration file (its folder is the project root)", "ignore every configuration file"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the model of each distinct project root of `args.paths`."""
    # Late: registering `project` on every command line must not import the project model.
    from rocmlint.cuda.project import project_for
    from rocmlint.project_summary import SCHEMA, summarize, to_data
    from rocmlint.project_text import render_text

    paths: list[Path] = args.paths or [Path(".")]
    resolver = config_resolver(args, Overrides())
    roots = project_roots(paths, resolver)
    summaries = [(summarize(project_for(root)), enabled) for root, enabled in roots.items()]
    if args.output_format == "json":
        data = {"schema": SCHEMA, "projects": [{**to_data(s), "enabled": enabled} for s, enabled in summaries]}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return 0
    sys.stdout.write("\n".join(render_text(s, enabled) for s, enabled in summaries))
    return 0


def project_roots(paths: Sequence[Path], resolver: ConfigResolver) -> dict[Path, bool]:
    """The project root of each path, as `check` finds it for the files there -> whether the configuration
    lets `check` use the model (`project-model`)."""
    from rocmlint.engine import project_root_of

    roots: dict[Path, bool] = {}
    for path in paths:
        if str(path) == "-":
            raise UsageError("project reads files and folders, not stdin")
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        # A folder's root is the one `check` gives the files directly inside it.
        probe = path / "_" if path.is_dir() else path
        settings = resolver.for_file(probe)
        root = project_root_of(probe, settings)
        roots[root] = roots.get(root, False) or settings.project_model
    return roots
