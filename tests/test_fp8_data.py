"""FP8 dtypes handled as data (rocmlint/python/fp8_data.py): name-to-dtype tables and feature probes."""

from __future__ import annotations

import ast

import pytest
from snippets import in_order, parse

from rocmlint.python import fp8_data


def _as_data(code: str) -> list[bool]:
    """For each `torch.float8_e4m3fn`/`float8_e5m2` mention (or getattr of one), in order: whether it is only data."""
    snippet = parse(code)
    found: list[bool] = []
    for node in in_order(snippet.module):
        if isinstance(node, ast.Attribute) and node.attr in ("float8_e4m3fn", "float8_e5m2"):
            found.append(fp8_data.fp8_as_data(snippet.ctx, node, node.attr))
        elif isinstance(node, ast.Call) and snippet.code(node.func) == "getattr":
            found.append(fp8_data.fp8_as_data(snippet.ctx, node, snippet.ctx.string_value(node.args[1]) or ""))
    return found


@pytest.mark.parametrize(
    ("code", "data"),
    [
        pytest.param(
            """
            import torch
            DTYPE_MAP = {"bfloat16": torch.bfloat16, "float8_e4m3fn": torch.float8_e4m3fn}
            def parse(s):
                return {"torch.float8_e5m2": torch.float8_e5m2, "torch.int32": torch.int32}[s]
            """,
            [True, True],
            id="parse-tables",
        ),
        pytest.param(
            """
            import torch
            DTYPES = {}
            DTYPES["float8_e4m3fn"] = torch.float8_e4m3fn
            cases = [("FLOAT8_E5M2", torch.float8_e5m2)]
            def decode(dt):
                if dt == "F8_E4M3": return torch.float8_e4m3fn, None, 1
            def unet_dtype():
                if args.unet_in_fp8_e4m3fn: return torch.float8_e4m3fn
                if args.unet_in_fp8_e5m2: return torch.float8_e5m2
                if args.unet_in_fp8: return torch.float8_e4m3fn
            """,
            [True, True, True, True, False, False],
            id="store-tuple-decoder",
        ),
        pytest.param(
            """
            import torch
            OPTIONS = {
                "float8-e4m3fn (fp16 LoRA)": (torch.float8_e4m3fn, True),
                "float8-e5m2": (torch.float8_e5m2, False),
                "low bits": (torch.float8_e5m2, False),
            }
            """,
            [True, True, False],
            id="option-labels",
        ),
        pytest.param(
            """
            import torch
            DTYPE_MAP = {"float8_e4m3fn": torch.float8_e4m3fn}
            def run(a, b):
                return torch.matmul(a.to(DTYPE_MAP["float8_e4m3fn"]), b)
            """,
            [False],
            id="gemm-file",
        ),
        pytest.param(
            """
            import torch
            KV = {"fp8": torch.float8_e4m3fn, "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
            class Quantizer:
                def __init__(self, bits):
                    if bits == "e4m3":
                        self.fp_dtype = torch.float8_e4m3fn
            """,
            [False, False, False, False],
            id="format-not-named-or-computed-with",
        ),
    ],
)
def test_named_by_text(code: str, data: list[bool]) -> None:
    assert _as_data(code) == data


@pytest.mark.parametrize(
    ("code", "data"),
    [
        pytest.param(
            """
            import torch
            def _has_fp8():
                return getattr(torch, "float8_e4m3fn", None) and getattr(torch, "float8_e5m2", None)
            if _has_fp8():
                pass
            assert not getattr(torch, "float8_e4m3fn", None) or ok
            """,
            [True, True, True],
            id="probes",
        ),
        pytest.param(
            """
            import torch
            def fp8_dtype():
                return getattr(torch, "float8_e4m3fn", None) or torch.float16
            x = w.to(fp8_dtype())
            y = w.to(getattr(torch, "float8_e4m3fn"))
            """,
            [False, False],
            id="values",
        ),
    ],
)
def test_feature_probe(code: str, data: list[bool]) -> None:
    assert _as_data(code) == data


@pytest.mark.parametrize(
    ("code", "data"),
    [
        pytest.param(
            """
            import torch
            bits = torch.tensor(x, dtype=torch.float8_e4m3fn).view(torch.uint8).item()
            value = torch.tensor(b, dtype=torch.uint8).view(torch.float8_e5m2).float().item()
            values = t.to(torch.float8_e4m3fn).cpu().numpy()
            rounded = t.to(dtype=torch.float8_e5m2).to(torch.float32).tolist()
            """,
            [True, True, True, True],
            id="read-back",
        ),
        pytest.param(
            """
            import torch
            w8 = t.to(torch.float8_e4m3fn)
            total = t.to(torch.float8_e4m3fn).sum().item()
            out = torch._scaled_mm(a.to(torch.float8_e4m3fn), b, scale_a=s, scale_b=s).item()
            x = torch.tensor(v, dtype=torch.float8_e5m2).float()
            y = torch.sum(t, dtype=torch.float8_e5m2).item()
            """,
            [False, False, False, False, False],
            id="kept-or-computed-with",
        ),
    ],
)
def test_read_back(code: str, data: list[bool]) -> None:
    assert _as_data(code) == data
