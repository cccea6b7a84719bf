"""Repository tooling in hidden folders at the root runs on the project's own machines (rocmlint/python/importers.py,
ImportIndex.tooling_base, ModuleReach.base)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cuda_project import write_tree
from test_module_gates import _codes

CI_HELPER = """import subprocess
def gpus():
    return subprocess.check_output(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv"])
"""
WORKFLOW = """jobs:
  test:
    runs-on: [self-hosted, gpu, amd64]
    steps:
      - run: python .github/scripts/ci_gpu.py allocate
"""


def tooling_tree(**extra: str) -> dict[str, str]:
    files = {
        "pkg/__init__.py": "",
        ".github/scripts/ci_gpu.py": CI_HELPER,
        ".github/workflows/tests.yml": WORKFLOW,
        "scripts/gpu_check.py": CI_HELPER,
    }
    files.update(extra)
    return files


def test_tooling_naming_no_rocm_runs_on_the_projects_nvidia_machines(tmp_path: Path) -> None:
    """`amd64` is the x86-64 architecture, not an AMD GPU; caches say nothing; a script outside the hidden folders is
    still checked."""
    root = write_tree(tmp_path, tooling_tree(**{".mypy_cache/rocm.json": "{}"}))
    assert _codes(root, ".github/scripts/ci_gpu.py") == []
    assert _codes(root, "scripts/gpu_check.py") == [("ROC116", 3)]


@pytest.mark.parametrize(
    "named",
    [
        pytest.param({".github/workflows/rocm.yml": "runs-on: [self-hosted, mi300]\n"}, id="runner-label"),
        pytest.param({".github/workflows/tests.yml": WORKFLOW + "    container: rocm/pytorch\n"}, id="container"),
        pytest.param({".github/scripts/arch.txt": "gfx942\n"}, id="gfx-target"),
        pytest.param({".github/scripts/amd/run.sh": "python ci_gpu.py\n"}, id="folder-name"),
        pytest.param({".gitlab-ci.yml": "image: rocm/dev-ubuntu-22.04\n"}, id="other-ci-configuration"),
        pytest.param({".jenkins/common.groovy": "platform = 'rocm'\n"}, id="other-hidden-folder"),
    ],
)
def test_tooling_that_names_rocm_is_checked(tmp_path: Path, named: dict[str, str]) -> None:
    root = write_tree(tmp_path, tooling_tree(**named))
    assert _codes(root, ".github/scripts/ci_gpu.py") == [("ROC116", 3)]


def test_only_a_hidden_folder_at_the_root_is_tooling(tmp_path: Path) -> None:
    root = write_tree(tmp_path, tooling_tree(**{"pkg/.cache/helper.py": CI_HELPER}))
    assert _codes(root, "pkg/.cache/helper.py") == [("ROC116", 3)]
