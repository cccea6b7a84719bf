"""NVML answering is an NVIDIA condition (rocmlint/python/gating.py `_nvml_probe`): `pynvml.nvmlInit()` in a `try:`
whose handler catches its failure is a probe, and what follows it in the body runs only on NVIDIA machines, so a flag
it sets or a def returning True after it decides a vendor dispatch; the classes only that dispatch makes are NVIDIA
code (their data read elsewhere, annotations and subclasses made there too make no instance on ROCm)."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine

BACKEND = """\
import pynvml


def nvml_is_available() -> bool:
    try:
        pynvml.nvmlInit()
        return True
    except pynvml.NVMLError:
        return False


def _handle_errors(method):
    def wrapper(*args):
        try:
            return method(*args)
        except pynvml.NVMLError as error:
            raise NVIDIAGPU._errors.get(error.value, RuntimeError)() from error

    return wrapper


class NVIDIAGPU:
    _errors = {}

    @_handle_errors
    def name(self):
        return pynvml.nvmlDeviceGetName(self.handle)


class ManagedNVIDIAGPU(NVIDIAGPU):
    def limit(self):
        return pynvml.nvmlDeviceGetPowerManagementLimit(self.handle)


class NVIDIAGPUs:
    def __init__(self, managed):
        count = pynvml.nvmlDeviceGetCount()
        self._gpus = [ManagedNVIDIAGPU() if managed else NVIDIAGPU() for _ in range(count)]

    def gpus(self) -> list[NVIDIAGPU]:
        return self._gpus
"""
DISPATCH = """\
from pkg.common import *
from pkg.nvidia import NVIDIAGPUs, nvml_is_available
from pkg.amd import AMDGPUs


def get_gpus():
    if nvml_is_available():
        return NVIDIAGPUs(False)
    return AMDGPUs()
"""


REPORTED = [("ROC117", 27), ("ROC117", 32), ("ROC117", 37)]  # the backend's calls when it is not NVIDIA code


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def _tree(tmp_path: Path, backend: str = BACKEND, dispatch: str = DISPATCH) -> Path:
    files = {
        "requirements.txt": "nvidia-ml-py\n",
        "pkg/__init__.py": "",
        "pkg/common.py": "class GPUs:\n    pass\n",
        "pkg/amd.py": "class AMDGPUs:\n    pass\n",
        "pkg/nvidia.py": backend,
        "pkg/gpus.py": dispatch,
    }
    return write_tree(tmp_path, files)


def test_a_backend_only_built_once_nvml_answered_is_nvidia_code(tmp_path: Path) -> None:
    assert _codes(_tree(tmp_path), "pkg/nvidia.py") == []


def test_a_backend_built_whatever_nvml_answered_is_reported(tmp_path: Path) -> None:
    dispatch = DISPATCH.replace("    if nvml_is_available():\n        return NVIDIAGPUs(False)\n", "")
    dispatch = dispatch.replace("return AMDGPUs()", "return NVIDIAGPUs(False)")
    assert _codes(_tree(tmp_path, dispatch=dispatch), "pkg/nvidia.py") == [
        ("ROC117", 27),
        ("ROC117", 32),
        ("ROC117", 37),
    ]


def test_an_unguarded_or_re_raised_initialisation_is_no_probe(tmp_path: Path) -> None:
    """Without a handler that swallows the failure, NVML's calls after it are each a hazard of their own."""
    unguarded = "import pynvml\n\n\ndef nvml_is_available():\n    pynvml.nvmlInit()\n    return True\n"
    backend = BACKEND.replace(BACKEND[: BACKEND.index("def _handle_errors")], unguarded + "\n\n")
    assert len(_codes(_tree(tmp_path / "unguarded", backend), "pkg/nvidia.py")) == 4  # the init and 3 calls
    re_raised = BACKEND.replace("        return False\n", "        raise\n", 1)
    assert _codes(_tree(tmp_path / "raised", re_raised), "pkg/nvidia.py") == [("ROC117", 6), *REPORTED]


def test_a_star_import_that_may_bind_the_name_decides_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "pkg/common.py").write_text("from pkg.nvidia import *\n")
    assert ("ROC117", 27) in _codes(root, "pkg/nvidia.py")


FLAG_BACKEND = """\
from dataclasses import dataclass

try:
    import pynvml

    pynvml.nvmlInit()
    NVML_AVAILABLE = True
except ImportError:
    NVML_AVAILABLE = False
except Exception:
    NVML_AVAILABLE = False


@dataclass
class NvidiaDevice:
    handle: object

    def name(self):
        return pynvml.nvmlDeviceGetName(self.handle)
"""
FLAG_DISPATCH = """\
from pkg import nvidia
from pkg.nvidia import NvidiaDevice

NVML_AVAILABLE = nvidia.NVML_AVAILABLE


def devices():
    if NVML_AVAILABLE:
        return [NvidiaDevice(0)]
    return []
"""


def test_a_flag_set_once_nvml_answered_is_true_only_on_nvidia(tmp_path: Path) -> None:
    root = _tree(tmp_path, FLAG_BACKEND, FLAG_DISPATCH)
    assert _codes(root, "pkg/nvidia.py") == []
    (root / "pkg/gpus.py").write_text(FLAG_DISPATCH.replace("if NVML_AVAILABLE:", "if True:"))
    assert _codes(root, "pkg/nvidia.py") == [("ROC117", 19)]
