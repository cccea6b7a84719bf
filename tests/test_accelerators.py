"""Folders and files named for another accelerator hold that accelerator's code."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.accelerators import other_accelerator_in_path


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("/p/backends/gaudi/server/layers/fp8.py", "gaudi"),
        ("/p/vllm/platforms/xpu.py", "xpu"),
        ("/p/vllm/worker/hpu_worker.py", "hpu"),
        ("/p/test/xpu/test_gemm.py", "xpu"),
        ("/p/torch/backends/mps/__init__.py", "mps"),
        ("/p/ext/vllm_hpu_extension/ops.py", "hpu"),
        ("/p/Ascend/kernels.py", "ascend"),
        ("/p/platform/ops/mm/mthreads_musa/fp8_scaled_mm.py", "musa"),  # Moore Threads MUSA
        ("/p/platform/ops/mm/iluvatar_cuda/mm_weight.py", "iluvatar"),  # Iluvatar CoreX
    ],
)
def test_a_path_naming_another_accelerator(path: str, word: str) -> None:
    assert other_accelerator_in_path(path, "/p") == word


@pytest.mark.parametrize(
    "path",
    [
        "/p/vllm/platforms/rocm.py",
        "/p/vllm/worker/cpu_worker.py",  # CPU code runs on a GPU machine too
        "/p/torch/_dynamo/backends/xla.py",  # XLA also targets GPUs
        "/p/utils/dumps.py",  # a word, not a piece of one
        "/p/HPUWorker.py",  # one word: not split on case
        "/elsewhere/xpu/project.py",  # outside the root
    ],
)
def test_a_path_naming_no_other_accelerator(path: str) -> None:
    assert other_accelerator_in_path(path, "/p") is None


def test_only_the_path_below_the_root_counts() -> None:
    assert other_accelerator_in_path("/home/me/xpu/project/model.py", "/home/me/xpu/project") is None


HAZARDS = 'import torch\ndtype = torch.float8_e4m3fn\nok = torch.cuda.get_device_capability() >= (9, 0)\nkernel = "fa3" if ok else "fa2"\n'


def _codes(root: Path, name: str, **settings: object) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, **settings))  # type: ignore[arg-type]
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_hazards_in_another_accelerators_code_are_not_reported(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path, {"backends/gaudi/server/fp8.py": HAZARDS, "platforms/xpu.py": HAZARDS, "common.py": HAZARDS}
    )
    assert _codes(root, "backends/gaudi/server/fp8.py") == []
    assert _codes(root, "platforms/xpu.py") == []
    assert _codes(root, "common.py") == [("ROC107", 2), ("ROC113", 3)]


def test_project_model_false_turns_the_path_evidence_off(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"platforms/xpu.py": HAZARDS})
    assert _codes(root, "platforms/xpu.py", project_model=False) == [("ROC107", 2), ("ROC113", 3)]
