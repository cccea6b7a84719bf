"""Checks the files for a report: the same discovery and Engine as `rocmlint check`, plus the text-scan facts."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmlint.config import ConfigResolver
from rocmlint.discovery import Candidate, discover
from rocmlint.engine import Engine
from rocmlint.file_report import FileReport
from rocmlint.report.facts import FileFacts, scan_file
from rocmlint.report.progress import Progress

Warn = Callable[[str], None]


@dataclass(frozen=True)
class RunResult:
    reports: list[FileReport]
    facts: list[FileFacts]
    enabled_codes: frozenset[str]  # every code enabled for at least one file
    target_archs: tuple[str, ...]  # every configured target-archs entry


def collect(paths: Sequence[Path], resolver: ConfigResolver, warn: Warn, progress: bool | None = None) -> RunResult:
    """Discover and check every file under `paths`. `progress` None: a bar only when stderr is a terminal."""
    candidates = list(discover(list(paths), resolver, warn))
    bar = Progress(len(candidates), enabled=progress)
    engine = Engine()
    reports: list[FileReport] = []
    facts: list[FileFacts] = []
    try:
        for done, candidate in enumerate(candidates, start=1):
            reports.append(engine.check_path(candidate.path, candidate.settings))
            facts.append(scan_file(candidate.path))
            bar.update(done, str(candidate.path))
    finally:
        bar.close()
    return RunResult(reports, facts, _enabled(candidates, resolver), _target_archs(candidates, resolver))


def _enabled(candidates: Sequence[Candidate], resolver: ConfigResolver) -> frozenset[str]:
    settings = {c.settings for c in candidates} or {resolver.default()}
    return frozenset(code for s in settings for code in s.enabled_codes)


def _target_archs(candidates: Sequence[Candidate], resolver: ConfigResolver) -> tuple[str, ...]:
    settings = {c.settings for c in candidates} or {resolver.default()}
    return tuple(sorted({arch for s in settings for arch in s.target_archs}))


def report_root(paths: Sequence[Path]) -> Path:
    """Paths in the report are relative to this: the one folder given, else the working directory."""
    if len(paths) == 1 and paths[0].is_dir():
        return Path(os.path.abspath(paths[0]))
    return Path(os.path.abspath("."))
