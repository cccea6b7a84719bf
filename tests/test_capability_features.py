"""Capability tests that only pick a feature every AMD GPU has (rocmlint/python/capability_features.py)."""

from __future__ import annotations

import ast

import pytest
from snippets import parse

from rocmlint.python.capability_features import only_picks_an_ampere_feature

_CAP = "import torch\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\nmajor, minor = torch.cuda.get_device_capability()\n"


@pytest.mark.parametrize(
    ("code", "test", "feature"),
    [
        pytest.param("if major >= 8:\n    dtype = torch.bfloat16\n", "major >= 8", True, id="bf16-dtype"),
        pytest.param(
            "def should_use_bf16():\n    if major >= 8:\n        return True\n    return False\n",
            "major >= 8",
            True,
            id="bf16-def-answer",
        ),
        pytest.param("def is_bf16_supported():\n    return major >= 8\n", "major >= 8", True, id="bf16-def-returns"),
        pytest.param("BF16_AVAILABLE = major >= 8\n", "major >= 8", True, id="bf16-flag"),
        pytest.param("ampere = major >= 8\nif ampere:\n    dtype = 'bf16'\n", "major >= 8", True, id="flag-read-so"),
        pytest.param(
            "if not major < 8:\n    backend = SDPBackend.FLASH_ATTENTION\nelse:\n    backend = SDPBackend.MATH\n",
            "major < 8",
            True,
            id="negated-sdpa-backend",
        ),
        pytest.param(
            "with (sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]) if major >= 8 else sdpa_kernel(SDPBackend.MATH)):\n"
            "    pass\n",
            "major >= 8",
            True,
            id="sdpa-context",
        ),
        pytest.param("torch.backends.cuda.enable_flash_sdp(major >= 8)\n", "major >= 8", True, id="sdpa-switch"),
        pytest.param("args = dict(bf16=(major, minor) >= (8, 0))\n", "(major, minor) >= (8, 0)", True, id="keyword"),
        # Later architectures (MI250 reports 9.0 without FP8), other choices, narrower bf16 features.
        pytest.param("if major >= 9:\n    dtype = torch.bfloat16\n", "major >= 9", False, id="hopper-threshold"),
        pytest.param(
            "if (major, minor) >= (8, 9):\n    dtype = torch.bfloat16\n", "(major, minor) >= (8, 9)", False, id="sm89"
        ),
        pytest.param("if major == 8:\n    dtype = torch.bfloat16\n", "major == 8", False, id="ampere-only"),
        pytest.param(
            "if major >= 8:\n    dtype = torch.bfloat16\n    num_stages = 4\n", "major >= 8", False, id="does-more"
        ),
        pytest.param("if major >= 8:\n    kernel = 'cp_async'\n", "major >= 8", False, id="a-kernel"),
        pytest.param("bf16_atomic_add = major >= 8\n", "major >= 8", False, id="narrower-bf16-feature"),
        pytest.param(
            "def should_use_bf16():\n    if major >= 8:\n        return load_kernels()\n",
            "major >= 8",
            False,
            id="bf16-def-doing-more",
        ),
        pytest.param(
            "ampere = major >= 8\nif ampere:\n    dtype = torch.bfloat16\nstages = 4 if ampere else 2\n",
            "major >= 8",
            False,
            id="flag-read-otherwise-too",
        ),
        pytest.param("if major >= 8:\n    use_bf16 = False\n", "major >= 8", False, id="bf16-refused"),
    ],
)
def test_only_picks_an_ampere_feature(code: str, test: str, feature: bool) -> None:
    snippet = parse(_CAP + code)
    assert only_picks_an_ampere_feature(snippet.ctx, snippet.node(test, ast.Compare)) is feature
