"""Sharper Python triggers change no result: ROC301's trigger_pattern and ROC110's quoted triggers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.engine import prefilter_for

from conftest import codes_with_prefilter

SETTINGS = Settings(root=Path.cwd())

_BUILD = "from torch.utils.cpp_extension import load\n\n"
# Spellings of nvcc-only flags ROC301 reports: each must still reach the rule through the pattern.
NVCC_FLAG_FORMS = [
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-arch=sm_80"])\n',
    _BUILD + "load('op', ['op.cu'], extra_cuda_cflags=['-O3', '--use_fast_math'])\n",
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags="-O3 -lineinfo".split())\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags="-O3\\t-Xptxas=-v".split())\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-O3\\x20-lineinfo"])\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-O3\\u00a0-lineinfo"])\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=[f"-gencode=arch=compute_{ARCH},code=sm_{ARCH}"])\n',
    _BUILD + 'NVCC_FLAGS = ["-O3",\n              "--expt-relaxed-constexpr"]\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-U__CUDA_NO_HALF_OPERATORS__"])\n',
]
# Files holding a flag's spelling only inside other words: ROC301 is not even run on them.
NOT_FLAGS = [
    'parser.add_argument("--trust-remote-code", action="store_true")\n',
    "# see https://example.org/bmvc/2016/papers/paper119/-archive/index.html\n",
    "x = f()  # type: ignore  # mypy: disable-error-code=attr-defined\n",
]
DEVICE_STRING_FORMS = [
    'import torch\nx = torch.zeros(2, device="hip")\n',
    "import torch\nx = torch.zeros(2, device='rocm:0')\n",
    'import torch\ndef f(rank):\n    return torch.device(f"hip:{rank}")\n',
    'import torch\ndef f(rank):\n    return torch.zeros(1, device="hip:" + str(rank))\n',
    "import torch\ndef f(t):\n    return t.device.type == '''hip'''\n",
]


def _codes(source: str, prefilter: bool) -> list[str]:
    return codes_with_prefilter("setup.py", source, SETTINGS, prefilter)


@pytest.mark.parametrize("source", NVCC_FLAG_FORMS)
def test_every_flag_spelling_reaches_roc301(source: str) -> None:
    assert "ROC301" in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


@pytest.mark.parametrize("source", NOT_FLAGS)
def test_flag_spellings_inside_words_do_not_run_roc301(source: str) -> None:
    rules = prefilter_for("python", SETTINGS.enabled_codes).rules_for(source.encode())
    assert "ROC301" not in {rule.code for rule in rules}


def test_roc301_runs_where_a_flag_and_a_lookalike_share_a_file() -> None:
    source = NOT_FLAGS[0] + NVCC_FLAG_FORMS[0]
    assert "ROC301" in _codes(source, prefilter=True)


@pytest.mark.parametrize("source", DEVICE_STRING_FORMS)
def test_every_device_string_form_reaches_roc110(source: str) -> None:
    assert "ROC110" in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


def test_hip_names_in_strings_do_not_run_roc110() -> None:
    source = b'MAP = {"cudaMalloc": ("hipMalloc", "API_RUNTIME")}\nBACKEND = "rocm_smi"\n'
    rules = prefilter_for("python", SETTINGS.enabled_codes).rules_for(source)
    assert "ROC110" not in {rule.code for rule in rules}
