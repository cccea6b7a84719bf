"""The compute capability as Python reads it (rocmlint/python/capability.py), and the trigger pattern helper
`lexical.value_word_pattern`."""

from __future__ import annotations

import ast
import re

import pytest
from snippets import parse

from rocmlint.python import capability
from rocmlint.python.lexical import value_word_pattern


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("x = torch.cuda.get_device_capability()[0]\n", 1, id="indexed"),
        pytest.param("props = torch.cuda.get_device_properties(0)\nx = props.major\n", 1, id="property"),
        pytest.param("major, minor = torch.cuda.get_device_capability()\nx = major * 10 + minor\n", 2, id="combined"),
        pytest.param(
            "from vllm.platforms import current_platform\nx = current_platform.get_device_capability().to_int()\n",
            1,
            id="vllm-to-int",
        ),
        pytest.param("x = int(torch.cuda.get_device_capability()[1])\n", 1, id="cast"),
        pytest.param("x = torch.cuda.get_device_properties(0).total_memory\n", 0, id="other-property"),
        pytest.param("x = read_capability()\n", 0, id="unknown-call"),
    ],
)
def test_capability_reads(code: str, expected: int) -> None:
    snippet = parse("import torch\n" + code)
    reads = capability.capability_reads(snippet.ctx, snippet.value("x"))
    assert len(reads) == expected
    assert all(isinstance(read, ast.Call) for read in reads)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("x = 8\n", 8, id="major"),
        pytest.param("x = (8, 9)\n", 8, id="tuple"),
        pytest.param("x = 8.9\n", 8.9, id="float"),
        pytest.param("x = 89\n", 8, id="sm-number"),
        pytest.param("T = (9, 0)\nx = T\n", 9, id="name-assigned-once"),
        pytest.param("x = limit\n", None, id="unknown"),
    ],
)
def test_threshold_major(code: str, expected: float | None) -> None:
    snippet = parse(code)
    assert capability.threshold_major(snippet.ctx, snippet.value("x")) == expected


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("ok = read(0).major >= 8", True),
        ("ok = read (f(g(0))) .minor", True),
        ("from torch.cuda import read", True),
        ("gb = read(0).total_memory", False),
        ('mock.patch("torch.cuda.read")', False),
        ("helper(9, 0)", True),
        ("platform.helper.return_value = True", False),
        ("x = unread(0)", False),
    ],
)
def test_value_word_pattern(text: str, matches: bool) -> None:
    pattern = re.compile(
        value_word_pattern("helper") + "|" + value_word_pattern("read", after_call=True, attributes=("major", "minor"))
    )
    assert (pattern.search(text) is not None) is matches
