"""PositionIndex must give exactly libcst's PositionProvider ranges, for any node, in any statement."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from rocmlint.python.positions import PositionIndex
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import walk

SOURCES = [
    pytest.param("import torch\nx = torch.compile(m, mode='reduce-overhead')\n", id="simple"),
    pytest.param(
        "# header comment\n\n\nimport os  # trailing\n\n\ndef f(a,\n      b):\n    return a + b\n",
        id="header-and-blank-lines",
    ),
    pytest.param("x = 1\r\ny = f(\r\n    2,\r\n)\r\n", id="crlf"),
    pytest.param("a = 1\rb = [1,\r 2]\r", id="lone-cr"),
    pytest.param("s = 'é漢字😀'; t = s + 'x'\nu = t\n", id="non-ascii-and-semicolons"),
    pytest.param(
        "@decorator(\n    'x'\n)\nclass C(Base):\n    '''doc'''\n\n    def m(self):\n        if x:\n            return [i for i in y if i]\n        else:\n            raise E('no')\n",
        id="decorated-class",
    ),
    pytest.param("if a:\n\tb = 1\n\tif c:\n\t\td = 2\n", id="tabs"),
    pytest.param(
        "try:\n    a = 1\nexcept E as e:\n    if x:\n        b = 2\n    elif y:\n        c = 3\n    else:\n        d = 4\n"
        "else:\n    for i in r:\n        while j:\n            e = 5\n        else:\n            f = 6\n"
        "finally:\n    with m as n:  # c\n\n        # lead\n        g = 7\n"
        "match v:\n    case 1:\n        h = 8\n    case _:\n        pass\n",
        id="every-kind-of-block",
    ),
    pytest.param("x = '''multi\nline\nstring'''; y = f'{x!r:>{w}}'\nz = (1 +\n     2)\n", id="multiline-strings"),
]


def _parsed(source: str) -> tuple[cst.Module, Semantic, Mapping[cst.CSTNode, CodeRange]]:
    """The module, its parents (walked as the front end walks), and libcst's own positions."""
    module = cst.parse_module(source)
    semantic = Semantic(module, None)
    walk(module, semantic.parents, {})
    return module, semantic, MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


@pytest.mark.parametrize("source", SOURCES)
def test_positions_match_libcst(source: str) -> None:
    module, semantic, expected = _parsed(source)
    index = PositionIndex(module, semantic.parents)
    assert semantic.parents, "the snippet must have nodes to compare"
    # Ask in reverse order: statements must not depend on earlier ones having been asked first.
    for node in reversed(list(semantic.parents)):
        assert index.code_range(node) == expected[node], type(node).__name__


def test_unknown_node_is_a_key_error() -> None:
    module = cst.parse_module("x = 1\n")
    index = PositionIndex(module, {})
    with pytest.raises(KeyError):
        index.code_range(cst.Name("elsewhere"))


_REAL_MODULE = pytest.param(
    (Path(__file__).resolve().parent.parent / "rocmlint" / "python" / "gating.py").read_text(),
    id="rocmlint-gating-module",
)


@pytest.mark.parametrize("source", [*SOURCES, _REAL_MODULE])
def test_each_node_asked_alone_matches_libcst(source: str) -> None:
    """A fresh index per node: every range comes from recording only the node's innermost statement,
    started at the line found from the plain text before it, with nothing remembered from other nodes."""
    module, semantic, expected = _parsed(source)
    nodes = [node for node in semantic.parents if node in expected]
    for node in nodes[:: max(1, len(nodes) // 300)]:
        assert PositionIndex(module, semantic.parents).code_range(node) == expected[node], type(node).__name__


@pytest.mark.parametrize("source", [*SOURCES, _REAL_MODULE])
def test_line_after_a_top_level_statement_matches_its_range(source: str) -> None:
    module, semantic, expected = _parsed(source)
    index = PositionIndex(module, semantic.parents)
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            assert index.line_after(statement) == expected[statement].end.line + 1
