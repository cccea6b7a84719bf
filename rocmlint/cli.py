"""`rocmlint check | rule | rules`. Exit codes: 0 clean, 1 diagnostics found, 2 usage, config or internal error."""

from __future__ import annotations

import argparse
import codecs
import difflib
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rocmlint import __version__, adoption, project_command
from rocmlint.arguments import UsageError, add_configuration_options, add_selection_options, config_resolver, patterns
from rocmlint.cache import Cache, cache_dir_for
from rocmlint.cache import clean as clean_cache
from rocmlint.collector import collection_paused
from rocmlint.config import ConfigError, ConfigResolver, Overrides, Settings, check_selector
from rocmlint.diagnostics import Applicability, Diagnostic
from rocmlint.discovery import GitIgnore, discover, is_path_excluded
from rocmlint.docs import LANGUAGE_LABEL, rule_page
from rocmlint.file_report import FileReport
from rocmlint.fix import FileFix, WriteRefused, fix_content, fix_file, write_if_unchanged
from rocmlint.outputs import FORMATS
from rocmlint.outputs import text as text_output
from rocmlint.outputs.paths import escape_control
from rocmlint.parallel import check_candidates, default_jobs
from rocmlint.registry import rule_by_code, rule_infos
from rocmlint.report import command as report_command
from rocmlint.source import DecodeError, detect_python_encoding, language_of

if TYPE_CHECKING:
    from rocmlint.engine import Engine

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
_CONFIG_HELP = "use this configuration file for every checked file"
_ISOLATED_HELP = "ignore every configuration file"
STDIN_NAME = "-"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocmlint",
        description="Find what breaks, slows down or silently goes wrong when CUDA/PyTorch code moves to AMD ROCm.",
    )
    parser.add_argument("--version", action="version", version=f"rocmlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files and folders (default: .)")
    check.add_argument("paths", nargs="*", type=Path, help="files or folders; '-' reads stdin")
    add_selection_options(check)
    check.add_argument("--output-format", choices=sorted(FORMATS), default="text")
    check.add_argument("--statistics", action="store_true", help="count diagnostics per rule instead of listing them")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics are found")
    add_configuration_options(check, _CONFIG_HELP, _ISOLATED_HELP)
    check.add_argument(
        "--stdin-filename", help="the name of the file read from stdin (decides its language and config)"
    )
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--show-fixes", action="store_true", help="list the fixes applied per file")
    check.add_argument("--fix-only", action="store_true", help="apply fixes and report nothing else")
    check.add_argument(
        "--verify", action="store_true", help="with --fix: keep a fixed CUDA file only if it passes `rocmlint verify`"
    )
    check.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only, no summary")
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print tracebacks of internal errors, and why the project model gated findings away",
    )
    check.add_argument(
        "-j", "--jobs", type=_jobs, default=None, help="worker processes (default: all cores; 1 checks in this process)"
    )
    check.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the result cache (.rocmlint_cache/)"
    )
    adoption.add_options(check)

    verify = commands.add_parser(
        "verify", help="compile CUDA files with hipcc; check NVIDIA's view is unchanged (nvcc -E)"
    )
    verify.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    verify.add_argument(
        "--offload-arch",
        type=patterns,
        default=(),
        help="AMD targets, e.g. gfx90a,gfx942 (default: config target-archs, else the GPUs found, else gfx90a)",
    )
    verify.add_argument(
        "-I", dest="include_dirs", type=Path, action="append", default=[], help="an include folder (repeatable)"
    )
    verify.add_argument("--compile-commands", type=Path, help="take -I/-D/-std flags from this compile_commands.json")
    verify.add_argument(
        "--against",
        default="HEAD",
        help="git revision holding the originals for the NVIDIA identity check (default: HEAD)",
    )
    verify.add_argument("--output-format", choices=sorted(FORMATS), default="text")
    add_configuration_options(verify, "use this configuration file", _ISOLATED_HELP)
    verify.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only, no summary")

    rule = commands.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", help="a rule code (ROC101) or name (reduce-overhead-compile)")

    clean = commands.add_parser(
        "clean", help="remove the result cache (.rocmlint_cache/) that `check` run in FOLDER uses"
    )
    clean.add_argument("folder", nargs="?", type=Path, default=Path("."), help="where `check` was run (default: .)")
    add_configuration_options(
        clean, "the configuration file `check --config` was given", "the cache of `check --isolated`"
    )

    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")

    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout (needs `pip install rocmlint[lsp]`)")
    lsp.add_argument("--debounce", type=float, default=0.3, metavar="SECONDS", help="pause after typing before linting")
    lsp.add_argument("--log-file", help="write the server's log here (stdout is the protocol)")

    report_command.add_parser(commands)
    project_command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rule":
            return _show_rule(args.code)
        if args.command == "rules":
            return _list_rules(args.output_format)
        if args.command == "report":
            return report_command.run(args, _overrides(args), _warn)
        if args.command == "check":
            return _check(args)
        if args.command == "project":
            return project_command.run(args)
        if args.command == "clean":
            return _clean(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "lsp":
            return _serve_lsp(args)
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


def run() -> None:
    """The `rocmlint` command: `main`, then the process ends without tearing the interpreter down. The teardown frees
    every object a run keeps (the import index, the rule modules, what the C++ front end compiled) one by one, and
    collects garbage once more: about 0.1 CPU-s after the output is written, on vLLM and PyTorch alike. Nothing is
    left to do then: the cache is saved and the worker processes are joined before `main` returns."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away, a closed stream: the usual exit reports it
        raise SystemExit(code) from None
    os._exit(code)


def _serve_lsp(args: argparse.Namespace) -> int:
    try:
        from rocmlint.lsp.server import serve
    except ImportError as error:  # pygls is an optional extra
        raise UsageError(f"the language server needs pygls ({error}): pip install 'rocmlint[lsp]'") from None
    serve(args.debounce, args.log_file)
    return EXIT_CLEAN


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
    rules = rule_infos()
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
        (
            r.code,
            r.name,
            LANGUAGE_LABEL[r.language],
            r.severity.value,
            r.fix_availability.value,
            "on" if r.enabled_by_default else "off",
        )
        for r in rules
    ]
    widths = [max(len(row[i]) for row in [header, *rows_text]) for i in range(len(header))]
    for row in [header, *rows_text]:
        sys.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n")
    return EXIT_CLEAN


def _overrides(args: argparse.Namespace) -> Overrides:
    for option in ("select", "extend_select", "ignore"):
        for selector in getattr(args, option) or ():
            check_selector(selector, f"--{option.replace('_', '-')}")
    for _, selectors in args.per_file_ignores:
        for selector in selectors:
            check_selector(selector, "--per-file-ignores")
    return Overrides(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        per_file_ignores=tuple(args.per_file_ignores),
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        force_exclude=args.force_exclude,
        show_hipified=args.show_hipified,
        hide_hipified=args.hide_hipified,
    )


def _check(args: argparse.Namespace) -> int:
    resolver = config_resolver(args, _overrides(args))
    fixing = args.fix or args.fix_only or args.diff
    adopting = adoption.prepare(args, _reads_stdin(args), resolver)
    if _reads_stdin(args) and fixing:
        return _fix_stdin(args, _new_engine(), resolver)
    reports = _check_stdin(args, _new_engine(), resolver) if _reads_stdin(args) else _check_paths(args, resolver)
    for report in reports:
        for warning in report.warnings:
            _warn(warning)
        if args.verbose:
            for trace in report.tracebacks:
                sys.stderr.write(trace)
            for note in report.gated_notes:
                print(f"rocmlint: {note}", file=sys.stderr)
    fixes = _fix_reports(args, reports, resolver) if fixing else []
    if args.diff:
        return _print_diffs(fixes, args)
    fixed = sum(sum(f.outcome.applied.values()) for f in fixes)
    if args.show_fixes and fixes:
        sys.stderr.write(_fix_listing(fixes))
    diagnostics = sorted((d for r in reports for d in r.diagnostics), key=Diagnostic.sort_key)
    if args.update_baseline:
        print(adoption.update_baseline(diagnostics, adopting, reports, resolver), file=sys.stderr)
        return EXIT_CLEAN
    diagnostics = adoption.narrow(diagnostics, adopting, reports, resolver, args.quiet)
    if args.add_noqa:
        status, message = adoption.add_noqa_comments(diagnostics, _warn)
        print(message, file=sys.stderr)
        return EXIT_FOUND if status and not args.exit_zero else EXIT_CLEAN
    if args.fix_only:
        if not args.quiet and fixed:
            print(f"Fixed {fixed} diagnostic{'s' if fixed != 1 else ''}.")
        return EXIT_CLEAN
    _print(diagnostics, args)
    if fixed and args.output_format == "text" and not args.quiet:
        print(f"Fixed {fixed} diagnostic{'s' if fixed != 1 else ''}; {len(diagnostics)} remaining.")
    return EXIT_FOUND if diagnostics and not args.exit_zero else EXIT_CLEAN


def _new_engine() -> Engine:
    """The engine imports tree-sitter and every rule module: built only to check or fix for
    real, never for results served from the cache."""
    from rocmlint.engine import Engine

    return Engine()


def _fix_reports(args: argparse.Namespace, reports: list[FileReport], resolver: ConfigResolver) -> list[FileFix]:
    """Fix every file with an applicable fix; its report then holds what the fixed file still reports."""
    fixable = [r for r in reports if any(_applicable(d, args.unsafe_fixes) for d in r.diagnostics)]
    if not fixable:
        return []
    engine = _new_engine()
    done: list[FileFix] = []
    for report in fixable:
        path = Path(report.path)
        settings = resolver.for_file(path)

        def check(data: bytes, path: Path = path, settings: Settings = settings) -> tuple[list[Diagnostic], str]:
            return engine.check_bytes(str(path), data, settings).diagnostics, _encoding_of(str(path), data)

        verifying = args.verify and language_of(str(path)) == "cuda"
        result = fix_file(path, check, args.unsafe_fixes, write=not args.diff and not verifying)
        if result is None:
            continue
        if verifying and result.outcome.changed and not args.diff:
            _verify_then_write(result, report, settings)
        if result.refused is not None:
            report.warnings.append(f"{path}: {result.refused}")
            _warn(f"{path}: {result.refused}")
        elif not args.diff:
            report.diagnostics = result.outcome.remaining
        done.append(result)
    return done


def _verify_then_write(result: FileFix, report: FileReport, settings: Settings) -> None:
    """`--fix --verify`: write the fixed file only if hipcc is not worse off and NVIDIA sees the same
    tokens; otherwise the file keeps its original bytes and the verdict is reported."""
    from rocmlint.verify import Toolchain, VerifyOptions, verify_file

    toolchain = Toolchain.detect(settings.target_archs)
    before = verify_file(result.path, result.original, None, toolchain, VerifyOptions())
    after = verify_file(result.path, result.outcome.data, result.original, toolchain, VerifyOptions())
    worse = len(after.hip_errors) > len(before.hip_errors) or (before.hip_compiled and not after.hip_compiled)
    if worse or after.nvidia_identical is False:
        result.refused = "fixes failed verification; the file keeps its original content"
        result.outcome.applied.clear()
        report.diagnostics = report.diagnostics + after.diagnostics
        return
    try:
        write_if_unchanged(result.path, result.original, result.outcome.data)
    except WriteRefused as refused:
        result.refused = str(refused)


def _applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    return diagnostic.fix is not None and (unsafe or diagnostic.fix.applicability is Applicability.SAFE)


def _encoding_of(path: str, data: bytes) -> str:
    if language_of(path) == "python":
        try:
            return detect_python_encoding(data)
        except DecodeError:
            return "utf-8"
    return "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"


def _print_diffs(fixes: list[FileFix], args: argparse.Namespace) -> int:
    """Unified diffs of the files fixing would change; exit 1 when there is one (like ruff --diff)."""
    changed = [f for f in fixes if f.outcome.changed]
    for result in changed:
        sys.stdout.write(_unified_diff(str(result.path), result.original, result.outcome.data))
    if not args.quiet:
        count = sum(sum(f.outcome.applied.values()) for f in changed)
        print(f"Would fix {count} diagnostic{'s' if count != 1 else ''}.", file=sys.stderr)
    return EXIT_FOUND if changed and not args.exit_zero else EXIT_CLEAN


def _unified_diff(name: str, before: bytes, after: bytes) -> str:
    encoding = _encoding_of(name, before)
    old = before.decode(encoding, "replace").splitlines(keepends=True)
    new = after.decode(encoding, "replace").splitlines(keepends=True)
    shown = escape_control(name)  # a newline in a file name would forge diff headers
    return "".join(difflib.unified_diff(old, new, f"a/{shown}", f"b/{shown}"))


def _fix_listing(fixes: list[FileFix]) -> str:
    lines = []
    for result in fixes:
        for code, count in sorted(result.outcome.applied.items()):
            rule = rule_by_code(code)
            lines.append(
                f"{escape_control(str(result.path))}: fixed {count} x {code} ({rule.name if rule else code})\n"
            )
    return "".join(lines)


def _fix_stdin(args: argparse.Namespace, engine: Engine, resolver: ConfigResolver) -> int:
    """Fixing stdin writes the fixed content (or its diff) to stdout, as editors expect."""
    data = sys.stdin.buffer.read()
    name = args.stdin_filename or STDIN_NAME
    settings = resolver.for_file(Path(name)) if args.stdin_filename else resolver.default()
    language = language_of(name) or "python"

    def check(content: bytes) -> tuple[list[Diagnostic], str]:
        return engine.check_bytes(name, content, settings, language=language).diagnostics, _encoding_of(name, content)

    outcome = fix_content(data, check, args.unsafe_fixes)
    if args.diff:
        sys.stdout.write(_unified_diff(name, data, outcome.data))
        return EXIT_FOUND if outcome.changed and not args.exit_zero else EXIT_CLEAN
    sys.stdout.buffer.write(outcome.data)
    sys.stdout.flush()
    if not args.fix_only and not args.quiet:
        sys.stderr.write(text_output.render(outcome.remaining))
    return EXIT_FOUND if outcome.remaining and not args.fix_only and not args.exit_zero else EXIT_CLEAN


def _verify(args: argparse.Namespace) -> int:
    # Imported here, as by --fix --verify: the toolchain machinery is no part of a plain check.
    from rocmlint.verify import Toolchain, VerifyOptions, compile_flags, git_original, verify_many, verify_summary

    resolver = config_resolver(args, Overrides())
    candidates = [c for c in discover(args.paths or [Path(".")], resolver, _warn) if language_of(str(c.path)) == "cuda"]
    archs = args.offload_arch or (candidates[0].settings.target_archs if candidates else ())
    toolchain = Toolchain.detect(archs)
    if toolchain.hipcc is None:
        raise UsageError("hipcc was not found on PATH (Debian: apt-get install hipcc)")
    jobs = []
    for candidate in candidates:
        flags = compile_flags(candidate.path, args.compile_commands) if args.compile_commands else ()
        jobs.append((candidate.path, candidate.path.read_bytes(), git_original(candidate.path, args.against), flags))
    options = VerifyOptions(tuple(args.include_dirs))
    verdicts = verify_many(
        ((path, content, original) for path, content, original, _ in jobs),
        toolchain,
        options,
        flags_by_path={p: f for p, _, _, f in jobs},
    )
    diagnostics = sorted((d for v in verdicts for d in v.diagnostics), key=Diagnostic.sort_key)
    out = sys.stdout
    out.write(
        FORMATS[args.output_format](diagnostics) if args.output_format != "text" else text_output.render(diagnostics)
    )
    if args.output_format == "text" and not args.quiet:
        out.write(verify_summary(verdicts, toolchain))
    return EXIT_FOUND if diagnostics else EXIT_CLEAN


def _warn(message: str) -> None:
    # Warnings name files, and a file name can carry ANSI escapes or newlines.
    print(f"rocmlint: warning: {escape_control(message)}", file=sys.stderr)


def _reads_stdin(args: argparse.Namespace) -> bool:
    """`-` among the paths, or `--stdin-filename` with no paths (as ruff does)."""
    if any(str(p) == "-" for p in args.paths):
        if len(args.paths) != 1:
            raise UsageError("'-' (stdin) cannot be combined with other paths")
        return True
    return not args.paths and args.stdin_filename is not None


def _check_paths(args: argparse.Namespace, resolver: ConfigResolver) -> list[FileReport]:
    """Discovery, then cache lookups and a process pool for the rest (rocmlint/parallel.py)."""
    paths: list[Path] = args.paths or [Path(".")]
    with collection_paused():
        candidates = list(discover(paths, resolver, _warn))
        cache = None
        if not args.no_cache and candidates:
            cache = Cache.open(_cache_dir(resolver), _warn)
    jobs = args.jobs or default_jobs()
    fixing = bool(args.fix or args.fix_only or args.diff)  # checks again after, with the models this run builds
    return check_candidates(candidates, jobs, cache, _warn, keep_models=fixing)


def _cache_dir(resolver: ConfigResolver) -> Path:
    """Next to the configuration in use (`--config`, else the one found from the working directory up),
    else in the working directory."""
    return cache_dir_for(resolver.default().config_path, resolver.cwd)


def _clean(args: argparse.Namespace) -> int:
    resolver = config_resolver(args, Overrides(), cwd=args.folder)
    folder = _cache_dir(resolver)
    try:
        removed = clean_cache(folder)
    except OSError as error:
        raise UsageError(str(error)) from None
    print(f"removed {folder}" if removed else f"no cache at {folder}")
    return EXIT_CLEAN


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {value!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be 1 or more, got {jobs}")
    return jobs


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
