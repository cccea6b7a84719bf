"""`rocmlint check | rule | rules`. Exit codes: 0 clean, 1 diagnostics found, 2 usage, config or internal error."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from rocmlint import __version__
from rocmlint.config import ConfigError, ConfigResolver, Overrides, check_selector
from rocmlint.diagnostics import Diagnostic
from rocmlint.discovery import GitIgnore, discover, is_path_excluded
from rocmlint.docs import LANGUAGE_LABEL, rule_page
from rocmlint.engine import Engine, FileReport
from rocmlint.outputs import FORMATS
from rocmlint.outputs import text as text_output
from rocmlint.registry import all_rules, rule_by_code
from rocmlint.source import language_of

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
STDIN_NAME = "-"


class UsageError(Exception):
    pass


def _codes(value: str) -> tuple[str, ...]:
    return tuple(part.strip().upper() for part in value.split(",") if part.strip())


def _per_file(value: str) -> tuple[str, tuple[str, ...]]:
    pattern, sep, codes = value.rpartition(":")
    if not sep or not pattern or not codes:
        raise argparse.ArgumentTypeError(f"expected GLOB:CODES, got {value!r}")
    return pattern, _codes(codes)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocmlint",
        description="Find what breaks, slows down or silently goes wrong when CUDA/PyTorch code moves to AMD ROCm.",
    )
    parser.add_argument("--version", action="version", version=f"rocmlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files and folders (default: .)")
    check.add_argument("paths", nargs="*", type=Path, help="files or folders; '-' reads stdin")
    check.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (replaces the configured set)")
    check.add_argument("--extend-select", type=_codes, default=(), help="rule codes or prefixes to enable in addition")
    check.add_argument("--ignore", type=_codes, default=(), help="rule codes or prefixes to disable")
    check.add_argument("--per-file-ignores", type=_per_file, action="append", default=[], metavar="GLOB:CODES")
    check.add_argument("--exclude", type=lambda v: tuple(p for p in v.split(",") if p), help="glob patterns to skip (replaces the configured list)")
    check.add_argument("--extend-exclude", type=lambda v: tuple(p for p in v.split(",") if p), default=())
    check.add_argument("--force-exclude", action="store_true", help="apply excludes to paths given on the command line too")
    check.add_argument("--output-format", choices=sorted(FORMATS), default="text")
    check.add_argument("--statistics", action="store_true", help="count diagnostics per rule instead of listing them")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics are found")
    check.add_argument("--config", type=Path, help="use this configuration file for every checked file")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--stdin-filename", help="the name of the file read from stdin (decides its language and config)")
    check.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only, no summary")
    check.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of internal errors")

    rule = commands.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", help="a rule code (ROC101) or name (reduce-overhead-compile)")

    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rule":
            return _show_rule(args.code)
        if args.command == "rules":
            return _list_rules(args.output_format)
        if args.command == "check":
            return _check(args)
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    except (ConfigError, UsageError) as error:
        print(f"rocmlint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - an internal error is exit 2, never a Python traceback's 1
        _report_internal_error(error, getattr(args, "verbose", False))
        return EXIT_ERROR


def _report_internal_error(error: Exception, verbose: bool) -> None:
    print(f"rocmlint: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    else:
        print("rocmlint: run again with --verbose for the traceback, and please report it", file=sys.stderr)


def _show_rule(code: str) -> int:
    rule = rule_by_code(code)
    if rule is None:
        raise UsageError(f"unknown rule {code!r} (see `rocmlint rules`)")
    sys.stdout.write(rule_page(rule))
    return EXIT_CLEAN


def _list_rules(output_format: str) -> int:
    rules = all_rules()
    if output_format == "json":
        rows = [
            {
                "code": r.code,
                "name": r.name,
                "language": r.language,
                "severity": r.severity.value,
                "fix": r.fix_availability.value,
                "enabled_by_default": r.enabled_by_default,
                "url": r.url(),
            }
            for r in rules
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_CLEAN
    header = ("code", "name", "language", "severity", "fix", "default")
    rows_text = [
        (r.code, r.name, LANGUAGE_LABEL[r.language], r.severity.value, r.fix_availability.value, "on" if r.enabled_by_default else "off")
        for r in rules
    ]
    widths = [max(len(row[i]) for row in [header, *rows_text]) for i in range(len(header))]
    for row in [header, *rows_text]:
        sys.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    return EXIT_CLEAN


def _overrides(args: argparse.Namespace) -> Overrides:
    for option in ("select", "extend_select", "ignore"):
        for selector in getattr(args, option) or ():
            check_selector(selector, f"--{option.replace('_', '-')}")
    for _, codes in args.per_file_ignores:
        for selector in codes:
            check_selector(selector, "--per-file-ignores")
    return Overrides(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        per_file_ignores=tuple(args.per_file_ignores),
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        force_exclude=args.force_exclude,
    )


def _check(args: argparse.Namespace) -> int:
    if args.config is not None and args.isolated:
        raise UsageError("--config and --isolated cannot be used together")
    resolver = ConfigResolver(_overrides(args), config_path=args.config, isolated=args.isolated)
    engine = Engine()
    reports = _check_stdin(args, engine, resolver) if _reads_stdin(args) else _check_paths(args, engine, resolver)
    for report in reports:
        for warning in report.warnings:
            _warn(warning)
        if args.verbose:
            for trace in report.tracebacks:
                sys.stderr.write(trace)
    diagnostics = sorted((d for r in reports for d in r.diagnostics), key=Diagnostic.sort_key)
    _print(diagnostics, args)
    return EXIT_FOUND if diagnostics and not args.exit_zero else EXIT_CLEAN


def _warn(message: str) -> None:
    print(f"rocmlint: warning: {message}", file=sys.stderr)


def _reads_stdin(args: argparse.Namespace) -> bool:
    """`-` among the paths, or `--stdin-filename` with no paths (as ruff does)."""
    if any(str(p) == "-" for p in args.paths):
        if len(args.paths) != 1:
            raise UsageError("'-' (stdin) cannot be combined with other paths")
        return True
    return not args.paths and args.stdin_filename is not None


def _check_paths(args: argparse.Namespace, engine: Engine, resolver: ConfigResolver) -> list[FileReport]:
    paths: list[Path] = args.paths or [Path(".")]
    return [engine.check_path(candidate.path, candidate.settings) for candidate in discover(paths, resolver, _warn)]


def _check_stdin(args: argparse.Namespace, engine: Engine, resolver: ConfigResolver) -> list[FileReport]:
    """Stdin is checked as `--stdin-filename` (its language, config and per-file-ignores), else as
    Python shown as `-`."""
    data = sys.stdin.buffer.read()
    name: str | None = args.stdin_filename
    if name is None:
        return [engine.check_bytes(STDIN_NAME, data, resolver.default(), language="python")]
    if language_of(name) is None:
        _warn(f"{name}: not a Python or CUDA/C++ file, nothing checked")
        return []
    settings = resolver.for_file(Path(name))
    if settings.force_exclude and is_path_excluded(Path(name), settings, GitIgnore(), is_dir=False):
        return []
    return [engine.check_bytes(name, data, settings)]


def _print(diagnostics: list[Diagnostic], args: argparse.Namespace) -> None:
    out = sys.stdout
    if args.output_format == "text":
        out.write(text_output.statistics(diagnostics) if args.statistics else text_output.render(diagnostics))
        if not args.quiet and not args.statistics:
            out.write(text_output.summary(diagnostics))
        return
    out.write(FORMATS[args.output_format](diagnostics))
