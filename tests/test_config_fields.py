"""Config fields the project declares off by default (rocmlint/python/config_fields.py), and ROC102, which takes TF32
turned on under such a field named for it as the user's choice."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.config_fields import declared_off_by_default

BACKEND = """
import torch
class Backend:
    def __init__(self, config):
        self.config = config
        if self.config.allow_tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
"""
CONFIG = "from dataclasses import dataclass\n@dataclass\nclass BackendConfig:\n    allow_tf32: bool = {}\n"


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, extend_select=("ROC102",)))  # off by default
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_every_declaration_of_the_field_must_default_to_false(tmp_path: Path) -> None:
    off = write_tree(tmp_path / "off", {"pkg/config.py": CONFIG.format("False"), "pkg/other.py": "allow_tf32 = True\n"})
    assert declared_off_by_default(off, "allow_tf32") == (str(off / "pkg/config.py"),)
    both = write_tree(
        tmp_path / "both", {"a.py": CONFIG.format("False"), "b.py": "class Other:\n    allow_tf32 = True\n"}
    )
    assert declared_off_by_default(both, "allow_tf32") == ()
    assert declared_off_by_default(off, "allow_fp16") == ()  # declared nowhere


def test_tf32_under_a_config_field_off_by_default_elsewhere_is_the_users_choice(tmp_path: Path) -> None:
    chosen = write_tree(tmp_path / "off", {"pkg/config.py": CONFIG.format("False"), "pkg/backend.py": BACKEND})
    assert _codes(chosen, "pkg/backend.py") == []
    default_on = write_tree(tmp_path / "on", {"pkg/config.py": CONFIG.format("True"), "pkg/backend.py": BACKEND})
    assert _codes(default_on, "pkg/backend.py") == [("ROC102", 6)]
