"""ROC130 inside xformers itself: `from . import cutlass` resolves against the package the file sits in."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine

DISPATCH = """
import torch
from . import ck, cutlass, flash
ALL_FW_OPS = [
    cutlass.FwOp,
    flash.FwOp,
]
ALL_BW_OPS = [cutlass.BwOp if torch.version.cuda else ck.BwOp, flash.BwOp]
"""


def _lines(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics if d.code == "ROC130"]


def test_a_relative_import_of_the_cutlass_module_is_xformers_own(tmp_path: Path) -> None:
    files = {
        "xformers/__init__.py": "",
        "xformers/ops/__init__.py": "",
        "xformers/ops/fmha/__init__.py": "",
        "xformers/ops/fmha/cutlass.py": "class FwOp: ...\nclass BwOp: ...\n",
        "xformers/ops/fmha/dispatch.py": DISPATCH,
    }
    root = write_tree(tmp_path, files)
    assert _lines(root, "xformers/ops/fmha/dispatch.py") == [("ROC130", 4)]


def test_a_relative_cutlass_module_of_another_package_is_not(tmp_path: Path) -> None:
    files = {
        "kernels/__init__.py": "",
        "kernels/cutlass.py": "class FwOp: ...\nclass BwOp: ...\n",
        "kernels/dispatch.py": DISPATCH,
    }
    root = write_tree(tmp_path, files)
    assert _lines(root, "kernels/dispatch.py") == []
