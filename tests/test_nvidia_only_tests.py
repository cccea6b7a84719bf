"""Tests that only run on NVIDIA, proven by the project's own code: a skip on a probe of the project that asks about
each runtime by name (`_device_usable("cuda")` beside `_device_usable("rocm")`), found in the package the root's
pyproject.toml builds from a folder below the root (rocmlint/python/gating.py `_runtime_name_probe`,
rocmlint/python/project.py `_declared_package_roots`)."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine

# A testing module asking the compiler's runtime for a device by name; a test skipped unless the CUDA device is
# there; a helper only that test calls; a test with no skip. ROC107 (OCP FP8 dtype) on lines 7, 13 and 17.
PROBES = """
import pkg


def _device_usable(kind):
    return pkg.device(kind).exist


def has_cuda():
    return _device_usable("cuda")


def has_rocm():
    return _device_usable("rocm")


def has_cuda_compute(major, minor=0):
    if not has_cuda():
        return False
    return pkg.compute_version() >= (major, minor)
"""
TESTS = """
import pytest
import torch
from pkg.testing import env


def quantize(x):
    return x.to(torch.float8_e4m3fn)


@pytest.mark.skipif(not env.has_cuda_compute(10), reason="need cuda compute >= 10.0")
def test_gemm(x):
    quantize(x)
    return x.to(torch.float8_e4m3fn)


def test_everywhere(x):
    return x.to(torch.float8_e4m3fn)
"""
TREE = {
    "pyproject.toml": '[tool.scikit-build]\nwheel.packages = ["python/pkg"]\n',
    "python/pkg/__init__.py": "",
    "python/pkg/testing/__init__.py": "",
    "python/pkg/testing/env.py": PROBES,
    "tests/python/test_gemm.py": TESTS,
}


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_a_test_skipped_unless_the_project_finds_the_cuda_runtime_by_name_runs_only_on_nvidia(tmp_path: Path) -> None:
    root = write_tree(tmp_path, TREE)
    assert _codes(root, "tests/python/test_gemm.py") == [("ROC107", 17)]


def test_a_probe_never_asked_about_rocm_by_name_decides_nothing(tmp_path: Path) -> None:
    """Without `_device_usable("rocm")`, "cuda" may be any GPU the framework drives (PyTorch's name for both)."""
    probes = PROBES.replace('_device_usable("rocm")', "False")
    root = write_tree(tmp_path, {**TREE, "python/pkg/testing/env.py": probes})
    assert _codes(root, "tests/python/test_gemm.py") == [("ROC107", 7), ("ROC107", 13), ("ROC107", 17)]


def test_a_package_the_pyproject_does_not_name_is_not_found_below_the_root(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {**TREE, "pyproject.toml": "[project]\nname = 'pkg'\n"})
    assert _codes(root, "tests/python/test_gemm.py") == [("ROC107", 7), ("ROC107", 13), ("ROC107", 17)]


def test_verbose_notes_name_the_gate_that_hid_a_finding(tmp_path: Path) -> None:
    root = write_tree(tmp_path, TREE)
    report = Engine().check_path(root / "tests/python/test_gemm.py", Settings(root=root))
    notes = [note.split(": ", 1)[1] for note in report.gated_notes]
    assert notes == [
        "ROC107 not reported: `def quantize(x):` (line 6) only runs off ROCm: its skip decorators, or where it is "
        "called or used",
        "ROC107 not reported: `def test_gemm(x):` (line 11) only runs off ROCm: its skip decorators, or where it is "
        "called or used",
    ]
