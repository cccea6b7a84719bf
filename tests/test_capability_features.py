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
        # FlashAttention 2 (ROCm's flash-attn build has it) and the TF32 switches (ROCm ignores them unless asked).
        pytest.param("use_flash_attn = major >= 8\n", "major >= 8", True, id="fa2-flag"),
        pytest.param(
            "def backend(packed):\n    if packed and major >= 8:\n        return 'flash2-hub'\n",
            "major >= 8",
            True,
            id="fa2-text-under-and",
        ),
        pytest.param(
            "impl = 'flash_attention_2' if major >= 8 else 'sdpa'\n", "major >= 8", True, id="fa2-attn-implementation"
        ),
        pytest.param(
            "if major >= 8:\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
            "    torch.backends.cudnn.allow_tf32 = True\n",
            "major >= 8",
            True,
            id="tf32-flags",
        ),
        pytest.param(
            "if major >= 8:\n    torch.set_float32_matmul_precision('high')\n", "major >= 8", True, id="tf32-precision"
        ),
        pytest.param(
            "def is_flash_attn_available():\n    cc = major + minor * 0.1\n    if cc < 8.0:\n"
            "        logger.debug('too old')\n        return False\n    import flash_attn\n    return True\n",
            "cc < 8.0",
            True,
            id="fa2-predicate-refuses-turing",
        ),
        # A list of dtypes to try that only gains bf16 or fp16 on an A100 (every AMD GPU has both), or the same list.
        pytest.param(
            "dtypes = [torch.float32, torch.bfloat16, torch.float16] if major >= 8 else [torch.float32]\n",
            "major >= 8",
            True,
            id="dtypes-gain-half",
        ),
        pytest.param(
            "dtypes = (torch.float32,) if major < 8 else (torch.bfloat16, torch.float32)\n",
            "major < 8",
            True,
            id="dtypes-gain-bf16-false-arm",
        ),
        pytest.param(
            "dtypes = [torch.float32] if major >= 8 else [torch.float32]\n", "major >= 8", True, id="same-dtypes"
        ),
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
        pytest.param(
            "def kernels_compatible():\n    if major < 8:\n        return False\n    return True\n",
            "major < 8",
            False,
            id="refusal-in-other-predicate",
        ),
        pytest.param(
            "def is_flash_attn_available():\n    if major < 8:\n        load_fallback()\n        return False\n",
            "major < 8",
            False,
            id="refusal-doing-more",
        ),
        pytest.param(
            "def is_flash_attn_available():\n    if major < 9:\n        return False\n    return True\n",
            "major < 9",
            False,
            id="refusal-below-hopper",
        ),
        pytest.param(
            "dtypes = [torch.float32, torch.float8_e4m3fn] if major >= 8 else [torch.float32]\n",
            "major >= 8",
            False,
            id="dtypes-gain-fp8",
        ),
        pytest.param(
            "dtypes = [torch.bfloat16, torch.float16] if major >= 8 else [torch.float32]\n",
            "major >= 8",
            False,
            id="dtypes-drop-fp32",
        ),
        pytest.param(
            "dtypes = [torch.float32, torch.bfloat16] if major >= 9 else [torch.float32]\n",
            "major >= 9",
            False,
            id="dtypes-gain-bf16-hopper",
        ),
        pytest.param(
            "dtypes = [torch.float16] if (major, minor) == (7, 5) else [torch.float16, torch.bfloat16]\n",
            "(major, minor) == (7, 5)",
            False,
            id="dtypes-by-equality-with-one-nvidia-gpu",
        ),
        pytest.param("use_flash_attn_3 = major >= 8\n", "major >= 8", False, id="fa3-flag"),
        pytest.param("if major >= 9:\n    attention = 'flash_attn_3'\n", "major >= 9", False, id="fa3-text"),
        pytest.param("if major >= 8:\n    attention = 'flash-attn-3-hub'\n", "major >= 8", False, id="fa3-text-ampere"),
        pytest.param(
            "if major >= 8:\n    torch.backends.cuda.matmul.allow_tf32 = True\n    num_stages = 4\n",
            "major >= 8",
            False,
            id="tf32-and-more",
        ),
    ],
)
def test_only_picks_an_ampere_feature(code: str, test: str, feature: bool) -> None:
    snippet = parse(_CAP + code)
    assert only_picks_an_ampere_feature(snippet.ctx, snippet.node(test, ast.Compare)) is feature
