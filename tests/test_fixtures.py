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
