"""A project's own device kinds (rocmlint/python/device_kinds.py), and ROC110, which takes "hip" given to that
project's own functions, or chosen in its own modules, as the project's vocabulary rather than a torch device."""

from __future__ import annotations

import ast
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.device_kinds import compared_kinds, own_device_kinds

DEVICE = """
class Device:
    def __init__(self, kind, index=None):
        self.kind = kind
        self.id = index

    def is_hip(self):
        return self.kind == "hip"

    def target(self):
        return "hip" if self.kind in ("hip", "vhip") else self.kind
"""
OPS = """
from mylib.device import Device
def randn(shape, device="cpu"):
    return Device(device)
"""
BUILDER = """
import torch
def attrs(kind, grid):
    device = "cuda" if kind == "cuda_kernel" else "hip"
    return {f"{device}.grid_dim": grid}

def launch(kind):
    device = "cuda" if kind == "cuda_kernel" else "hip"
    return torch.empty(4, device=device)
"""
TEST = """
import mylib
import torch
def test_randn():
    a = mylib.randn([4, 4], device="hip")
    b = torch.randn(4, device="hip")
    c = a.to("hip:0")
"""


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, select=("ROC110",)))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_a_class_comparing_its_own_kind_attribute_names_the_kind() -> None:
    module = ast.parse(DEVICE + "\nclass Other:\n    def f(self, d):\n        return d.type == 'rocm'\n")
    assert set(compared_kinds(module)) == {"hip"}  # `d.type` is no attribute of the class's own instance


def test_only_packages_count(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"mylib/__init__.py": "", "mylib/device.py": DEVICE, "scripts/device.py": DEVICE})
    assert own_device_kinds(root) == {("mylib", "hip"): (str(root / "mylib/device.py"),)}


def test_hip_given_to_the_projects_own_api_is_its_vocabulary(tmp_path: Path) -> None:
    files = {"mylib/__init__.py": "from mylib.ops import randn\n", "mylib/ops.py": OPS, "mylib/builder.py": BUILDER}
    own = write_tree(tmp_path / "own", {**files, "mylib/device.py": DEVICE, "tests/test_ops.py": TEST})
    # torch's own APIs, and a tensor's `.to`, still reject "hip"; the choice reaching torch is reported where it does.
    assert _codes(own, "tests/test_ops.py") == [("ROC110", 5), ("ROC110", 6)]
    assert _codes(own, "mylib/builder.py") == [("ROC110", 8)]
    torch_only = write_tree(tmp_path / "torch_only", {**files, "tests/test_ops.py": TEST})
    assert _codes(torch_only, "tests/test_ops.py") == [("ROC110", 4), ("ROC110", 5), ("ROC110", 6)]
    assert _codes(torch_only, "mylib/builder.py") == [("ROC110", 3), ("ROC110", 7)]
