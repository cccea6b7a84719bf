"""The NVML bindings a project's default install requires (ROC104): declared in `[project] dependencies` or the root
requirements.txt, the pure-Python bindings import on ROCm too, so only their `nvmlInit()` is a hazard (ROC117); an
optional extra is not the default install."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine

MONITOR = "import pynvml\n\n\ndef start():\n    pynvml.nvmlInit()\n"


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_bindings_the_project_requires_import_on_rocm(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "monitor"\ndependencies = ["torch", "nvidia-ml-py>=12"]\n'
    required = write_tree(tmp_path / "pyproject", {"pyproject.toml": pyproject, "monitor.py": MONITOR})
    assert _codes(required, "monitor.py") == [("ROC117", 5)]
    listed = write_tree(tmp_path / "requirements", {"requirements.txt": "pynvml\n", "monitor.py": MONITOR})
    assert _codes(listed, "monitor.py") == [("ROC117", 5)]


def test_bindings_of_an_optional_extra_or_of_no_declaration_are_missing_on_rocm(tmp_path: Path) -> None:
    extra = '[project]\nname = "monitor"\ndependencies = ["torch"]\n[project.optional-dependencies]\nnvidia = ["nvidia-ml-py"]\n'
    optional = write_tree(tmp_path / "extra", {"pyproject.toml": extra, "monitor.py": MONITOR})
    assert _codes(optional, "monitor.py") == [("ROC104", 1), ("ROC117", 5)]
    undeclared = write_tree(tmp_path / "none", {"monitor.py": MONITOR})
    assert _codes(undeclared, "monitor.py") == [("ROC104", 1), ("ROC117", 5)]


def test_a_requirement_on_other_bindings_does_not_install_these(tmp_path: Path) -> None:
    smi = MONITOR.replace("import pynvml", "import pynvml\nimport nvidia_smi")
    root = write_tree(tmp_path, {"requirements.txt": "nvidia-ml-py\n", "monitor.py": smi})
    assert [code for code, _ in _codes(root, "monitor.py")] == ["ROC104", "ROC117"]


def test_a_requirements_file_beside_listed_dependencies_is_not_the_default_install(tmp_path: Path) -> None:
    listed = '[project]\nname = "bench"\ndependencies = ["torch"]\n'
    files = {"pyproject.toml": listed, "requirements.txt": "pynvml\n", "monitor.py": MONITOR}
    assert _codes(write_tree(tmp_path / "listed", files), "monitor.py") == [("ROC104", 1), ("ROC117", 5)]
    dynamic = '[project]\nname = "bench"\ndynamic = ["dependencies"]\n'
    files = {**files, "pyproject.toml": dynamic}
    assert _codes(write_tree(tmp_path / "dynamic", files), "monitor.py") == [("ROC117", 5)]


def test_a_cuda_probe_on_required_bindings_answers_no_on_rocm(tmp_path: Path) -> None:
    """The import works, but NVML sees no GPU on ROCm: the probe's handler turns that into "no CUDA device"."""
    probe = (
        "def has_cuda_device():\n"
        "    from pynvml import nvmlDeviceGetCount, nvmlInit\n"
        "\n"
        "    try:\n"
        "        nvmlInit()\n"
        "        return nvmlDeviceGetCount() > 0\n"
        "    except Exception:\n"
        "        return False\n"
    )
    root = write_tree(tmp_path, {"requirements.txt": "nvidia-ml-py\n", "probe.py": probe})
    assert _codes(root, "probe.py") == [("ROC104", 2)]
