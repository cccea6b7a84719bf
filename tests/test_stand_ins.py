"""PyTorch stand-ins a fix defines when an optional CUDA package's import fails (rocmlint/python/stand_ins.py)."""

from __future__ import annotations

import ast

import pytest
from snippets import parse

from rocmlint.python.stand_ins import define_on_import_error


def _fixed(code: str) -> str | None:
    """The file after the stand-in edit for its first `from` import, None when there is none."""
    snippet = parse(code)
    edit = define_on_import_error(snippet.ctx, snippet.first(ast.ImportFrom))
    if edit is None:
        return None
    data = snippet.ctx.source.data
    return (data[: edit.start] + edit.content.encode("utf-8") + data[edit.end :]).decode("utf-8")


def test_defines_the_stand_in_under_the_bound_name() -> None:
    fixed = _fixed("if ok:\n    from flash_attn import flash_attn_func as fa\n")
    assert fixed is not None
    lines = fixed.splitlines()
    assert lines[:4] == [
        "if ok:",
        "    try:",
        "        from flash_attn import flash_attn_func as fa",
        "    except ImportError:",
    ]
    assert "        def fa(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):" in lines
    assert lines[-1] == "            return out.transpose(1, 2)"
    ast.parse(fixed)  # valid Python


@pytest.mark.parametrize(
    "code",
    [
        "from flash_attn import flash_attn_varlen_func\n",  # no stand-in
        "from flash_attn import flash_attn_func, flash_attn_varlen_func\n",  # several names
        "from flash_attn import *\n",
        "from flash_attn.flash_attn_interface import flash_attn_func\n",  # FA3's has other return values
        "from .flash_attn import flash_attn_func\n",  # relative: a local module
        "import os; from flash_attn import flash_attn_func\n",  # shares its line: cannot be re-indented
    ],
)
def test_no_stand_in(code: str) -> None:
    assert _fixed(code) is None
