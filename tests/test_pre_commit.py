"""The pre-commit hooks (.pre-commit-hooks.yaml) installed and run by real `pre-commit` in a git repository.

pre-commit clones hook repositories at a commit, so this checkout is first copied into a temporary git
repository and committed there (the checkout itself may have uncommitted work). pre-commit then builds
the hooks' virtualenv with pip from that copy: this needs PyPI (or a pip cache) for rocmlint's
dependencies, once per test session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_tree

CHECKOUT = Path(__file__).resolve().parent.parent
# Not part of the package, and large or machine-specific.
_NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    "build",
    "dist",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".rocmlint_cache",
    "node_modules",
)
HAZARD_PY = 'import torch\nm = torch.compile(m, mode="reduce-overhead")\n'
HAZARD_CU = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 16); }\n"
UNUSED_NOQA = "x = 1  # noqa: ROC101\n"
PYPROJECT = """\
[tool.rocmlint]
extend-select = ["ROC002"]
extend-exclude = ["vendored"]
"""


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(
        [
            "git",
            "-c",
            "user.name=rocmlint test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd,
    )


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, env=os.environ.copy())


def pre_commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pre_commit", *args], cwd)


@pytest.fixture(scope="module", autouse=True)
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One hook environment for the module, kept away from the user's ~/.cache/pre-commit."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRE_COMMIT_HOME", str(tmp_path_factory.mktemp("pre-commit-home")))
        # The hooks run with the user's git settings otherwise (signing, hooks paths, templates).
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
        yield


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory, pre_commit_home: None) -> tuple[Path, str]:
    """This checkout, committed in a temporary repository: (its path, the commit)."""
    repo = tmp_path_factory.mktemp("hooks") / "rocmlint"
    shutil.copytree(CHECKOUT, repo, ignore=_NOT_COPIED)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    committed = git(repo, "commit", "-q", "-m", "rocmlint under test")
    assert committed.returncode == 0, committed.stderr
    return repo, git(repo, "rev-parse", "HEAD").stdout.strip()


def user_repo(root: Path, hooks: tuple[Path, str], hook_id: str, args: str = "") -> Path:
    """A project with rocmlint configuration and the hook installed as its git pre-commit hook."""
    repo_path, rev = hooks
    config = f"repos:\n  - repo: {repo_path.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: {hook_id}\n"
    if args:
        config += f"        args: {args}\n"
    write_tree(root, {"pyproject.toml": PYPROJECT, ".pre-commit-config.yaml": config})
    git(root, "init", "-q")
    installed = pre_commit(root, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    git(root, "add", "-A")
    return root


def commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    git(repo, "add", "-A")
    return git(repo, "commit", "-m", message)


def test_check_hook_blocks_a_commit_with_hazards_and_skips_excluded_paths(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    repo = user_repo(tmp_path, hooks_repo, "rocmlint")
    write_tree(repo, {"model.py": HAZARD_PY, "csrc/kernel.cu": HAZARD_CU})

    blocked = commit(repo, "add hazards")
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "model.py:2:22: ROC101" in output
    assert "csrc/kernel.cu:1:" in output and "ROC210" in output

    # Clean files commit; a hazard in an excluded folder does not block (--force-exclude in the entry).
    write_tree(repo, {"model.py": "import torch\nm = torch.compile(m)\n", "csrc/kernel.cu": "int x;\n"})
    write_tree(repo, {"vendored/lib.py": HAZARD_PY})
    passed = commit(repo, "fixed")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "ROC101" not in passed.stdout + passed.stderr
    assert "vendored/lib.py" in git(repo, "ls-files").stdout


def test_fix_hook_fixes_then_the_commit_passes_and_excluded_paths_stay_untouched(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    # ROC002's safe fix (remove an unused noqa) is the fix every rocmlint version has.
    repo = user_repo(tmp_path, hooks_repo, "rocmlint-fix")
    write_tree(repo, {"model.py": UNUSED_NOQA, "vendored/lib.py": UNUSED_NOQA})

    first = commit(repo, "unused noqa")
    assert first.returncode != 0, first.stdout + first.stderr  # pre-commit fails a hook that changed files
    assert (repo / "model.py").read_text() == "x = 1\n"
    assert (repo / "vendored/lib.py").read_text() == UNUSED_NOQA

    second = commit(repo, "unused noqa, fixed")
    assert second.returncode == 0, second.stdout + second.stderr
    assert git(repo, "status", "--porcelain").stdout == ""


def test_check_hook_with_since_head_blocks_only_the_lines_a_commit_changes(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    """`args: [--since, HEAD]` (docs/ci.md): a codebase with old hazards can turn the hook on today."""
    repo = user_repo(tmp_path, hooks_repo, "rocmlint", "[--since, HEAD]")
    write_tree(repo, {"model.py": HAZARD_PY})
    git(repo, "add", "-A")
    assert git(repo, "commit", "-q", "--no-verify", "-m", "the codebase as it is").returncode == 0

    write_tree(repo, {"model.py": HAZARD_PY + "x = 1\n"})
    passed = commit(repo, "a clean change next to an old hazard")
    assert passed.returncode == 0, passed.stdout + passed.stderr

    write_tree(repo, {"model.py": HAZARD_PY + "x = 1\n" + HAZARD_PY.splitlines()[1] + "\n"})
    blocked = commit(repo, "a new hazard")
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "model.py:4:22: ROC101" in output and "model.py:2:22" not in output


def test_try_repo_runs_the_check_hook(tmp_path: Path, hooks_repo: tuple[Path, str]) -> None:
    """`pre-commit try-repo`, as the README suggests for trying the hooks before adding them."""
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": HAZARD_PY, "vendored/lib.py": HAZARD_PY})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    tried = pre_commit(tmp_path, "try-repo", str(hooks_repo[0]), "rocmlint", "--all-files")
    output = tried.stdout + tried.stderr
    assert tried.returncode == 1, output
    assert "model.py:2:22: ROC101" in output
    assert "vendored" not in output
