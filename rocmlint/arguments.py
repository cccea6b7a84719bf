"""What the subcommands' parsers share (rocmlint/cli.py, rocmlint/report/command.py): the rule-selection and
configuration options, their value types, and the error a command line that cannot run raises. Below both, so
neither imports the other."""

from __future__ import annotations

import argparse
from pathlib import Path

from rocmlint.config import ConfigResolver, Overrides


class UsageError(Exception):
    """The command line asks for something that cannot be done (exit 2 with the message)."""


def codes(value: str) -> tuple[str, ...]:
    """`--select ROC1,roc201` -> ("ROC1", "ROC201")."""
    return tuple(part.strip().upper() for part in value.split(",") if part.strip())


def patterns(value: str) -> tuple[str, ...]:
    """`--exclude a,b/*` -> ("a", "b/*")."""
    return tuple(p for p in value.split(",") if p)


def per_file_ignore(value: str) -> tuple[str, tuple[str, ...]]:
    """`--per-file-ignores GLOB:CODES` -> (GLOB, CODES); the glob may hold colons itself."""
    pattern, sep, selected = value.rpartition(":")
    if not sep or not pattern or not selected:
        raise argparse.ArgumentTypeError(f"expected GLOB:CODES, got {value!r}")
    return pattern, codes(selected)


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose rules and files, the same for `check` and `report`."""
    parser.add_argument("--select", type=codes, help="rule codes or prefixes to enable (replaces the configured set)")
    parser.add_argument("--extend-select", type=codes, default=(), help="rule codes or prefixes to enable in addition")
    parser.add_argument("--ignore", type=codes, default=(), help="rule codes or prefixes to disable")
    parser.add_argument("--per-file-ignores", type=per_file_ignore, action="append", default=[], metavar="GLOB:CODES")
    parser.add_argument("--exclude", type=patterns, help="glob patterns to skip (replaces the configured list)")
    parser.add_argument("--extend-exclude", type=patterns, default=())
    parser.add_argument(
        "--force-exclude", action="store_true", help="apply excludes to paths given on the command line too"
    )
    hipified = parser.add_mutually_exclusive_group()
    hipified.add_argument(
        "--show-hipified",
        action="store_true",
        help="report, at info, the CUDA includes a build that hipifies its sources swaps itself, even in a project"
        " that already builds for ROCm (where they are left out by default)",
    )
    hipified.add_argument(
        "--hide-hipified",
        action="store_true",
        help="leave out the CUDA includes a build that hipifies its sources swaps itself, even before a first port"
        " (where they are reported at info by default)",
    )


def add_configuration_options(parser: argparse.ArgumentParser, config_help: str, isolated_help: str) -> None:
    """`--config FILE` and `--isolated`, which cannot go together (`config_resolver` says so)."""
    parser.add_argument("--config", type=Path, help=config_help)
    parser.add_argument("--isolated", action="store_true", help=isolated_help)


def config_resolver(args: argparse.Namespace, overrides: Overrides, cwd: Path | None = None) -> ConfigResolver:
    """The configuration the command line asks for (`--config`, `--isolated`, else the files found)."""
    if args.config is not None and args.isolated:
        raise UsageError("--config and --isolated cannot be used together")
    if cwd is None:
        return ConfigResolver(overrides, config_path=args.config, isolated=args.isolated)
    return ConfigResolver(overrides, config_path=args.config, isolated=args.isolated, cwd=cwd)
