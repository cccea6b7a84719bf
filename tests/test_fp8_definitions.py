"""FP8 dtypes that only define a format (rocmlint/python/fp8_definitions.py): code tables, a type system's own
names, classes describing the format, tensors on the meta device."""

from __future__ import annotations

import ast

import pytest
from snippets import Snippet, in_order, parse

from rocmlint.python import fp8_definitions


def _fp8_mentions(code: str) -> tuple[Snippet, list[ast.Attribute]]:
    snippet = parse(code)
    found = [
        node
        for node in in_order(snippet.module)
        if isinstance(node, ast.Attribute) and node.attr.startswith("float8_e") and isinstance(node.ctx, ast.Load)
    ]
    return snippet, found


def _defines(code: str) -> list[bool]:
    """For each OCP FP8 mention, in order: whether it only defines its format."""
    snippet, found = _fp8_mentions(code)
    return [fp8_definitions.defines_the_format(snippet.ctx, node, node.attr) for node in found]


def _on_meta(code: str) -> list[bool]:
    """For each OCP FP8 mention given as `dtype=`, in order: whether the call places the tensor on the meta device."""
    snippet, found = _fp8_mentions(code)
    ctx = snippet.ctx
    keywords = [ctx.parent(node) for node in found]
    calls = [ctx.parent(keyword) if isinstance(keyword, ast.keyword) else None for keyword in keywords]
    return [fp8_definitions.on_meta_device(ctx, call if isinstance(call, ast.Call) else None) for call in calls]


@pytest.mark.parametrize(
    ("code", "defines"),
    [
        pytest.param(
            """
            import torch
            CODES = {0: torch.float32, 5: torch.float8_e4m3fn}
            NAMES = {"f32": torch.float32, "fp8": torch.float8_e4m3fn}
            ONE = {5: torch.float8_e4m3fn}
            MIXED = {0: numpy.float32, 5: torch.float8_e4m3fn}
            """,
            [True, False, False, False],
            id="integer-code-tables",
        ),
        pytest.param(
            """
            import ml_dtypes, torch
            float8_e4m3fn = typeclass(ml_dtypes.float8_e4m3fn)
            types.float8_e5m2 = typeclass(torch.float8_e5m2)
            fp8 = typeclass(ml_dtypes.float8_e4m3fn)
            float8_e5m2 = typeclass(torch.float8_e5m2, "e5m2")
            float8_e4m3fn = torch.float8_e4m3fn
            """,
            [True, True, False, False, False],
            id="own-names",
        ),
        pytest.param(
            """
            import torch
            class FP8_E4M3_DATA(FloatArgs):
                exponent = 4
                mantissa = 3
                max = torch.finfo(torch.float8_e4m3fn).max
                dtype = torch.float8_e4m3fn
            class E5M2:
                exponent_bits = 5
                mantissa_bits = 2
                dtype = torch.float8_e5m2
            class Wrong:
                exponent = 5
                mantissa = 2
                dtype = torch.float8_e4m3fn
            class WithMethod:
                exponent = 4
                mantissa = 3
                dtype = torch.float8_e4m3fn
                def quantize(self, x): return x.to(self.dtype)
            class Quantizer:
                def __init__(self):
                    self.e_bits, self.m_bits = 4, 3
                    self.dtype = torch.float8_e4m3fn
            """,
            [True, True, True, False, False, False],
            id="format-classes",
        ),
    ],
)
def test_defines_the_format(code: str, defines: list[bool]) -> None:
    assert _defines(code) == defines


@pytest.mark.parametrize(
    ("code", "meta"),
    [
        pytest.param(
            """
            import torch
            a = torch.empty(4, dtype=torch.float8_e4m3fn, device="meta")
            b = torch.empty(4, dtype=torch.float8_e4m3fn, device=torch.device("meta"))
            with torch.device("meta"):
                c = torch.empty(4, dtype=torch.float8_e4m3fn)
            d = torch.empty(4, dtype=torch.float8_e4m3fn, device="cuda")
            with torch.device("cuda"):
                e = torch.empty(4, dtype=torch.float8_e4m3fn)
            """,
            [True, True, True, False, False],
            id="meta-placements",
        ),
        pytest.param(
            """
            import torch
            w = torch.empty(4, dtype=torch.float8_e4m3fn, device="meta")
            w = w.to_empty(device="cuda")
            """,
            [False],
            id="materialised-in-the-file",
        ),
    ],
)
def test_on_meta_device(code: str, meta: list[bool]) -> None:
    assert _on_meta(code) == meta
