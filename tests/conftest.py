"""Shared fixtures: a project folder, the CLI in-process (fast) and as a real subprocess."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocmlint.cli import main
from rocmlint.config import Settings

# One ROC101 hazard: the `mode=` argument on line 2 starts at column 22.
HAZARD = 'import torch\nm = torch.compile(m, mode="reduce-overhead")\n'
HAZARD_LINE, HAZARD_COLUMN = 2, 22
CLEAN = "import torch\nm = torch.compile(m)\n"


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create `files` (relative path -> text or bytes) below `root`; text is written byte-exact."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty git-like project folder (a `.git` folder bounds the .gitignore search) as the cwd."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def cli(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """`rocmlint ARGS` run in-process in `project`; `stdin=` gives the bytes on standard input."""

    def run(*args: str, stdin: bytes | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse usage errors
            code = exit_.code if isinstance(exit_.code, int) else 2
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def run_cli(project: Path) -> Callable[..., Result]:
    """`python -m rocmlint ARGS` as a real process in `project`, for what needs one (exit status, pipes)."""

    def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        completed = subprocess.run(
            [sys.executable, "-m", "rocmlint", *args],
            cwd=cwd or project,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            env=env,
            timeout=120,
        )
        return Result(completed.returncode, completed.stdout.decode("utf-8"), completed.stderr.decode("utf-8"))

    return run


@pytest.fixture
def settings(project: Path) -> Settings:
    return Settings(root=project)


def codes_with_prefilter(path: str, source: str, settings: Settings, prefilter: bool) -> list[str]:
    """The codes Engine reports on `source` (as the file `path`), with the byte prefilter on or off:
    speed tests compare the two."""
    from rocmlint.engine import Engine

    report = Engine(prefilter=prefilter).check_bytes(path, source.encode(), settings)
    return [d.code for d in report.diagnostics]


def require_tool(name: str) -> str:
    """The path of an external tool a test needs. In CI (CI is set) a missing tool fails the test;
    elsewhere the test is skipped with the reason printed in pytest's summary (-ra)."""
    import shutil

    path = shutil.which(name)
    if path is not None:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{name} is required in CI (scripts/test.sh installs it) but is not on PATH")
    pytest.skip(f"{name} is not installed here (Debian: apt-get install {name}); this test runs in CI")


@pytest.fixture(autouse=True, scope="session")
def _cache_outside_the_repository(tmp_path_factory: pytest.TempPathFactory) -> None:
    """CLI runs in the tests (in-process and subprocesses) keep their result cache out of fixtures/."""
    if "ROCMLINT_CACHE_DIR" not in os.environ:
        os.environ["ROCMLINT_CACHE_DIR"] = str(tmp_path_factory.mktemp("rocmlint-cache"))


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with a fixed identity and none of the user's configuration; its stdout."""
    completed = subprocess.run(
        ["git", "-c", "user.name=rocmlint test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull},
    )
    return completed.stdout


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", message)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real, empty git repository on branch main as the cwd; git looks no higher than tmp_path."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    return root
