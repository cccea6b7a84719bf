"""A project's own words of AMD's stack (rocmlint/python/device_kinds.py): ROC110 takes "hip" given to the functions
of a project with a device kind "hip" of its own, or chosen in its modules, as the project's vocabulary rather than a
torch device; ROC115 takes the `gcnArchName` of an arch record of the project's own, only given bare gfx names, as
bare."""

from __future__ import annotations

import ast
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python import device_kinds
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


def _codes(root: Path, name: str, code: str = "ROC110") -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, select=(code,)))
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


CAPABILITY = """
from dataclasses import dataclass
@dataclass
class Capability:
    warp_size: int
    gcnArchName: str
_KNOWN = {{"gfx90a": Capability(warp_size=64, gcnArchName={value})}}
def capability(arch="gfx90a"):
    return _KNOWN[arch]
"""
KERNEL = """
import torch
import mylib.hip
def use_mfma():
    return mylib.hip.capability().gcnArchName == "gfx90a"
def tuned():
    cap = mylib.hip.capability()
    return cap.gcnArchName == "gfx942"
def hip_props():
    return torch.cuda.get_device_properties(0).gcnArchName == "gfx90a"
"""


def test_an_arch_record_of_the_projects_own_only_given_bare_names() -> None:
    records = [
        device_kinds.own_arch_records(ast.parse(CAPABILITY.format(value=value)))
        for value in ('"gfx90a"', '"gfx90a:sramecc+:xnack-"', "props.gcnArchName")
    ]
    assert records == [True, False, False]
    positional = CAPABILITY.format(value='"gfx90a"') + "OTHER = Capability(32, props.gcnArchName)\n"
    assert not device_kinds.own_arch_records(ast.parse(positional))  # a value given positionally is not known


def test_gcn_arch_name_of_the_projects_own_record_is_bare(tmp_path: Path) -> None:
    files = {"mylib/__init__.py": "", "mylib/hip/__init__.py": "from mylib.hip.capability import capability\n"}
    files["mylib/kernel.py"] = KERNEL
    own = write_tree(tmp_path / "own", {**files, "mylib/hip/capability.py": CAPABILITY.format(value='"gfx90a"')})
    # HIP's device properties still carry the feature suffix.
    assert _codes(own, "mylib/kernel.py", "ROC115") == [("ROC115", 9)]
    read = write_tree(tmp_path / "read", {**files, "mylib/hip/capability.py": CAPABILITY.format(value="props.name")})
    assert _codes(read, "mylib/kernel.py", "ROC115") == [("ROC115", 4), ("ROC115", 7), ("ROC115", 9)]
