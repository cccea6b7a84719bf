"""The flake8 plugin (`ROC` entry point) run through real `flake8`, compared with `rocmlint check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Line 5: non-ASCII text before the hazard, so the column is counted in code points (31, not 32).
MODEL = """\
import torch
from pkg.platform import vendor_x

# \u201csmart quotes\u201d before the hazard: columns count code points
s = "\u00e9"; m = torch.compile(m, mode="reduce-overhead")
m2 = torch.compile(m, mode="reduce-overhead")  # noqa: ROC101
import pynvml
if not vendor_x():
    m3 = torch.compile(m, mode="reduce-overhead")
"""
# rocmlint's own configuration: makes line 9 NVIDIA-only, hence not reported.
PYPROJECT = '[tool.rocmlint]\nrocm-guards = ["pkg.platform.vendor_x"]\n'


def flake8(cwd: Path, *args: str) -> list[str]:
    # --isolated: no flake8 configuration from above the temporary folder; rocmlint's is still read.
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "ROC", *args, "."],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return sorted(completed.stdout.splitlines())


def rocmlint_as_flake8(cwd: Path) -> list[str]:
    """`rocmlint check`'s diagnostics in flake8's format (flake8 prints the 0-based column + 1)."""
    completed = subprocess.run(
        [sys.executable, "-m", "rocmlint", "check", "--output-format", "json", "."],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert completed.returncode in (0, 1), completed.stderr
    lines = []
    for item in json.loads(completed.stdout):
        path = "./" + Path(item["filename"]).relative_to(cwd.resolve()).as_posix()
        lines.append(f"{path}:{item['location']['row']}:{item['location']['column']}: {item['code']} {item['message']}")
    return sorted(lines)


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", "pkg/model.py": MODEL})
    return tmp_path


def codes_at(lines: list[str]) -> list[tuple[str, str, str]]:
    """(line, column, code) of each flake8 output line."""
    found = []
    for line in lines:
        location, _, message = line.partition(": ")
        _, row, column = location.rsplit(":", 2)
        found.append((row, column, message.split()[0]))
    return found


def test_flake8_reports_what_rocmlint_check_reports_on_the_fixture_project() -> None:
    project = FIXTURES / "train_pkg"
    expected = rocmlint_as_flake8(project)
    assert len(expected) >= 10  # the fixture's hazards (their exact list is tests/test_fixtures.py's job)
    assert flake8(project) == expected


def test_flake8_columns_noqa_and_rocmlint_config(pkg: Path) -> None:
    # Line 6's `# noqa: ROC101` is applied by flake8; line 9 is gated by the configured rocm-guards.
    assert codes_at(flake8(pkg)) == [("5", "31", "ROC101"), ("7", "8", "ROC104")]
    # rocmlint check agrees, column for column (it applies the same noqa itself).
    assert flake8(pkg) == rocmlint_as_flake8(pkg)


def test_flake8_noqa_is_flake8s_own(pkg: Path) -> None:
    # `--disable-noqa` shows that the plugin reports line 6 and flake8, not rocmlint, hides it.
    assert ("6", "23", "ROC101") in codes_at(flake8(pkg, "--disable-noqa"))


def test_flake8_extend_ignore_and_select_filter_rocmlint_codes(pkg: Path) -> None:
    assert codes_at(flake8(pkg, "--extend-ignore", "ROC104")) == [("5", "31", "ROC101")]
    assert codes_at(flake8(pkg, "--extend-ignore", "ROC1")) == []
    # `--select` on the command line replaces the one in flake8() above: only ROC104 is left.
    assert codes_at(flake8(pkg, "--select", "ROC104")) == [("7", "8", "ROC104")]


def test_flake8_without_rocmlint_config_reports_the_ungated_hazard(pkg: Path) -> None:
    (pkg / "pyproject.toml").unlink()
    assert ("9", "27", "ROC101") in codes_at(flake8(pkg))
