"""The fixture projects: real-looking code whose expected diagnostics are checked in (snapshot style).

Regenerate after a reviewed change with `ROCMLINT_UPDATE_FIXTURES=1 python -m pytest tests/test_fixtures.py`,
then read the diff of `fixtures/*/expected.txt` line by line: every line must be a real hazard.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def run_check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", "check", "--quiet", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_fixture_project_diagnostics(project: Path) -> None:
    result = run_check(project)
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == ""
    expected_file = project / "expected.txt"
    if os.environ.get("ROCMLINT_UPDATE_FIXTURES"):
        expected_file.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == expected_file.read_text(encoding="utf-8")
    assert result.returncode == (1 if result.stdout else 0)


def test_fixtures_exist() -> None:
    assert {p.name for p in PROJECTS} >= {"train_pkg", "ext_build", "mixed_project"}


def test_output_does_not_depend_on_hash_seed_or_workers() -> None:
    """Set order and memory addresses must never decide a diagnostic: the same tree under other hash seeds
    and worker counts gives byte-identical JSON (a cache keyed by `id()` of short-lived objects once made
    three diagnostics come and go between identical runs)."""
    command = [sys.executable, "-m", "rocmlint", "check", "--isolated", "--no-cache", "--exit-zero"]
    outputs = set()
    for seed, jobs in (("0", "1"), ("1", "2"), ("12345", "1"), ("random", "2")):
        result = subprocess.run(
            [*command, "-j", jobs, "--output-format", "json", "."],
            cwd=FIXTURES,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.count('"code"') > 50  # every fixture project's diagnostics, not an empty run
        outputs.add(result.stdout)
    assert len(outputs) == 1
