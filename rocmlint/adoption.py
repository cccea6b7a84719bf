"""`check`'s options for adopting rocmlint on a codebase that already has diagnostics: `--since REV` (only
lines changed since REV, rocmlint/changes.py), `--baseline FILE` / `--update-baseline` (hide known
diagnostics, rocmlint/baseline.py) and `--add-noqa` (suppress them in place, rocmlint/add_noqa.py).

The diagnostics are narrowed once, before any output, so every format, `--statistics` and the exit code
see the same list.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint import baseline
from rocmlint.arguments import UsageError
from rocmlint.changes import ChangedLines, ChangesError, changed_lines
from rocmlint.config import ConfigResolver
from rocmlint.diagnostics import Diagnostic
from rocmlint.file_report import FileReport
from rocmlint.outputs.paths import escape_control

Warn = Callable[[str], None]
STALE_SHOWN = 5  # stale entries named in the note; the rest are counted


def add_since_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        metavar="REV",
        help="only diagnostics on lines added or changed since the merge-base of REV and HEAD (git)",
    )


def add_options(check: argparse.ArgumentParser) -> None:
    add_since_option(check)
    check.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="hide the diagnostics this baseline file lists (default: the configured `baseline`)",
    )
    check.add_argument(
        "--update-baseline", action="store_true", help="write the current diagnostics to the baseline file"
    )
    check.add_argument(
        "--add-noqa", action="store_true", help="add a `noqa` comment for every diagnostic found, in place"
    )


@dataclass
class Adoption:
    """What the adoption options asked for, resolved before the files are checked (so a bad revision or
    baseline fails fast)."""

    changes: ChangedLines | None = None
    baseline_path: Path | None = None
    baseline_entries: list[baseline.Entry] = field(default_factory=list)


def prepare(args: argparse.Namespace, reads_stdin: bool, resolver: ConfigResolver) -> Adoption:
    _refuse_combinations(args, reads_stdin)
    adoption = Adoption(baseline_path=_baseline_path(args, resolver))
    if args.update_baseline and adoption.baseline_path is None:
        raise UsageError("--update-baseline needs --baseline FILE or `baseline` in the configuration")
    if args.since is not None:
        adoption.changes = since(args.since, args.paths)
    if adoption.baseline_path is not None and not (args.update_baseline and not adoption.baseline_path.exists()):
        try:
            adoption.baseline_entries = baseline.load(adoption.baseline_path)
        except baseline.BaselineError as error:
            hint = "; create it with --update-baseline" if not adoption.baseline_path.exists() else ""
            raise UsageError(f"{error}{hint}") from None
    return adoption


def since(revision: str, paths: Sequence[Path]) -> ChangedLines:
    try:
        return changed_lines(revision, list(paths))
    except ChangesError as error:
        raise UsageError(str(error)) from None


def only_changed(diagnostics: list[Diagnostic], changes: ChangedLines | None) -> list[Diagnostic]:
    """A diagnostic counts when its first line was added or changed (one spanning several lines too)."""
    if changes is None:
        return diagnostics
    return [d for d in diagnostics if changes.contains(d.path, d.location.line)]


def _refuse_combinations(args: argparse.Namespace, reads_stdin: bool) -> None:
    fixing = args.fix or args.fix_only or args.diff
    if args.since is not None and reads_stdin:
        raise UsageError("--since compares files on disk with git; it cannot check stdin")
    if args.since is not None and fixing:
        raise UsageError("--since cannot be combined with --fix, --fix-only or --diff: fixes apply to whole files")
    if args.since is not None and args.update_baseline:
        raise UsageError("--since cannot be combined with --update-baseline: the baseline would lose older entries")
    if args.add_noqa and (fixing or reads_stdin):
        raise UsageError("--add-noqa edits files on disk and cannot be combined with --fix, --diff or stdin")
    if args.add_noqa and args.update_baseline:
        raise UsageError("--add-noqa and --update-baseline are two ways to accept diagnostics: choose one")
    if (args.baseline is not None or args.update_baseline) and reads_stdin:
        raise UsageError("--baseline reads files on disk; it cannot check stdin")


def _baseline_path(args: argparse.Namespace, resolver: ConfigResolver) -> Path | None:
    if args.baseline is not None:
        return Path(args.baseline)
    settings = resolver.default()
    return settings.root / settings.baseline if settings.baseline is not None else None


def narrow(
    diagnostics: list[Diagnostic],
    adoption: Adoption,
    reports: Sequence[FileReport],
    resolver: ConfigResolver,
    quiet: bool,
) -> list[Diagnostic]:
    """What the run reports: the changed lines' diagnostics (`--since`) the baseline does not know.
    The baseline is compared with every diagnostic first, so an entry is stale only when its diagnostic
    is gone, not when `--since` leaves its line out."""
    if adoption.baseline_path is not None:
        folder = adoption.baseline_path.resolve().parent
        checked = _checked(reports, resolver, folder)
        comparison = baseline.compare(diagnostics, adoption.baseline_entries, folder, checked)
        if comparison.stale and not quiet:
            _note_stale(comparison.stale, adoption.baseline_path)
        if comparison.known and not quiet:
            known = comparison.known
            print(f"rocmlint: {known} diagnostic{'s' if known != 1 else ''} hidden by the baseline", file=sys.stderr)
        diagnostics = comparison.new
    return only_changed(diagnostics, adoption.changes)


def update_baseline(
    diagnostics: list[Diagnostic], adoption: Adoption, reports: Sequence[FileReport], resolver: ConfigResolver
) -> str:
    """Write the baseline file; returns the line that says so."""
    assert adoption.baseline_path is not None
    folder = adoption.baseline_path.resolve().parent
    checked = _checked(reports, resolver, folder)
    entries = baseline.updated(diagnostics, adoption.baseline_entries, folder, checked)
    try:
        baseline.save(adoption.baseline_path, entries)
    except baseline.BaselineError as error:
        raise UsageError(str(error)) from None
    dropped = len({e.fingerprint for e in adoption.baseline_entries} - {e.fingerprint for e in entries})
    shown = escape_control(str(adoption.baseline_path))
    return f"Wrote {len(entries)} baseline entr{'ies' if len(entries) != 1 else 'y'} to {shown} ({dropped} dropped)."


def add_noqa_comments(diagnostics: list[Diagnostic], warn: Warn) -> tuple[int, str]:
    """`--add-noqa`: (exit status, the line that says how many comments were added)."""
    # Late: it reads comments with the Python front end's lexer, which a run served from the cache never loads.
    from rocmlint.add_noqa import add_noqa

    result = add_noqa(diagnostics)
    for problem in result.problems:
        warn(problem)
    files = f" in {result.files} file{'s' if result.files != 1 else ''}" if result.files else ""
    message = f"Added {result.comments} noqa comment{'s' if result.comments != 1 else ''}{files}."
    return (1 if result.problems else 0), message


def _checked(reports: Sequence[FileReport], resolver: ConfigResolver, folder: Path) -> Callable[[baseline.Entry], bool]:
    """Whether this run looked for an entry: its file was checked with its rule enabled."""
    enabled = {baseline.relative_path(r.path, folder): resolver.for_file(Path(r.path)).enabled_codes for r in reports}
    return lambda entry: entry.code in enabled.get(entry.path, ())


def _note_stale(stale: list[baseline.Entry], path: Path) -> None:
    named = ", ".join(f"{e.path} {e.code}" for e in stale[:STALE_SHOWN])
    more = f" and {len(stale) - STALE_SHOWN} more" if len(stale) > STALE_SHOWN else ""
    print(
        escape_control(
            f"rocmlint: {len(stale)} baseline {'entries' if len(stale) != 1 else 'entry'} of {path} "
            f"match{'' if len(stale) != 1 else 'es'} nothing any more (fixed, or the line changed): {named}{more}; "
            "`--update-baseline` drops them"
        ),
        file=sys.stderr,
    )
