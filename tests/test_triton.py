"""Triton configs and launches as Python writes them (rocmlint/python/triton.py)."""

from __future__ import annotations

import ast

import pytest
from snippets import parse

from rocmlint.python import triton
from rocmlint.python.values import IntValue


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import triton\nx = triton.Config({'B': 64}, num_warps=W)\n", "W"),
        ("from triton import Config\nx = Config({'B': 64}, W)\n", "W"),
        ("x = kernel[grid](a, num_warps=W)\n", "W"),
        ("x = kernel[grid](a)\n", None),
        ("x = Config({'B': 64}, num_warps=W)\n", None),  # not Triton's Config
        ("x = launch(a, num_warps=W)\n", None),
    ],
)
def test_num_warps_argument(code: str, expected: str | None) -> None:
    snippet = parse(code)
    call = snippet.value("x")
    assert isinstance(call, ast.Call)
    argument = triton.num_warps_argument(snippet.ctx, call)
    assert (snippet.code(argument) if argument is not None else None) == expected


@pytest.mark.parametrize(
    ("code", "handled"),
    [
        pytest.param(
            "for w in ws:\n    if IS_ROCM and w > 16:\n        continue\n    c = Config(w)\n", True, id="rocm-condition"
        ),
        pytest.param(
            "def prune(configs):\n    return [c for c in configs if c.num_warps * warp_size <= 1024]\n"
            "configs = prune([Config(32)])\n",
            True,
            id="pruned-by-warp-size",
        ),
        pytest.param("CONFIGS = [Config(32)]\nif torch.version.cuda:\n    use(CONFIGS)\n", True, id="only-nvidia"),
        pytest.param("configs = [Config(32)]\nuse(configs)\n", False, id="plain"),
        pytest.param(
            "size = getattr(torch.cuda.get_device_properties(0), 'warp_size', 32)\n"
            "configs = [Config(w) for w in [8, 32] if w * size <= 1024]\n",
            True,
            id="filtered-by-device-warp-size",
        ),
        pytest.param(
            "configs = [Config(w) for w in [8, 32] if w * props.warp_size <= 1024]\n", True, id="warp-size-attribute"
        ),
        # A filter that reads no warp size, through a name assigned something else, keeps 32 warps on ROCm.
        pytest.param(
            "size = get_limit()\nconfigs = [Config(w) for w in [8, 32] if w * size <= 1024]\n",
            False,
            id="filtered-by-another-value",
        ),
    ],
)
def test_handled_for_rocm(code: str, handled: bool) -> None:
    snippet = parse("import torch\nIS_ROCM = torch.version.hip is not None\n" + code)
    call = next(n for n in ast.walk(snippet.module) if isinstance(n, ast.Call) and snippet.code(n.func) == "Config")
    assert triton.handled_for_rocm(snippet.ctx, call) is handled


@pytest.mark.parametrize(
    ("body", "on_rocm"),
    [
        pytest.param("    if torch.version.hip:\n        w //= 2\n", 16, id="halved-on-rocm"),
        pytest.param("    if IS_ROCM:\n        w >>= 2\n", 8, id="shifted-on-rocm"),
        pytest.param("    if torch.version.cuda:\n        w //= 2\n", 32, id="halved-on-nvidia"),
        pytest.param("    if big:\n        w //= 2\n", 32, id="not-a-vendor-test"),
        pytest.param("    use(w)\n    if torch.version.hip:\n        w //= 2\n", 32, id="read-before"),
        pytest.param("    if torch.version.hip:\n        w -= 16\n", 32, id="not-a-division"),
        pytest.param("    if torch.version.hip:\n        w //= 2\n    else:\n        w = 8\n", 32, id="with-else"),
    ],
)
def test_warps_on_rocm(body: str, on_rocm: int) -> None:
    """A warp count its def divides in a branch every ROCm build takes, before anything reads it."""
    snippet = parse(
        "import torch\nIS_ROCM = torch.version.hip is not None\ndef f():\n    w = 32\n" + body + "    return w\n"
    )
    literal = next(n for n in ast.walk(snippet.module) if isinstance(n, ast.Constant) and n.value == 32)
    found = IntValue(32, literal)
    assert triton.warps_on_rocm(snippet.ctx, found) == on_rocm
