"""PositionIndex: CPython's byte columns become code-point columns, and names the tree keeps as strings
(a def's name, `.attr`, a keyword argument) get the range they are written at."""

from __future__ import annotations

import ast

import pytest

from rocmlint.python.positions import CodePosition, CodeRange, PositionIndex
from rocmlint.python.tree import parse_text
from rocmlint.source import split_lines


def _index(text: str) -> tuple[ast.Module, PositionIndex]:
    return parse_text(text), PositionIndex(text, split_lines(text))


def _span(line: int, column: int, end_line: int, end_column: int) -> CodeRange:
    return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_columns_are_code_points_on_non_ascii_lines(newline: str) -> None:
    text = f"x = 1{newline}s = 'é€😀' + torch.cuda{newline}"
    module, index = _index(text)
    value = module.body[1].value  # type: ignore[attr-defined]
    assert index.code_range(value.right) == _span(2, 12, 2, 22)
    assert index.text_of(value.left) == "'é€😀'"
    assert index.text_of(value.right) == "torch.cuda"


def test_every_node_text_is_its_source_segment() -> None:
    text = "import os\nif a and (b or c):\n    f(x, *y, k=1, **z)[0].attr = [i for i in r if i]\n"
    module, index = _index(text)
    for node in ast.walk(module):
        if getattr(node, "lineno", None) is None or isinstance(node, ast.Module):
            continue
        assert index.text_of(node) == ast.get_source_segment(text, node), ast.dump(node)


def test_attribute_name_range_is_where_attr_is_written() -> None:
    text = "v = torch.backends.cuda.matmul.allow_tf32\nw = (a\n  .b)\n"
    module, index = _index(text)
    first = module.body[0].value  # type: ignore[attr-defined]
    assert index.attribute_range(first) == _span(1, 31, 1, 41)
    second = module.body[1].value  # type: ignore[attr-defined]
    assert index.attribute_range(second) == _span(3, 3, 3, 4)


def test_names_of_defs_classes_keywords_aliases_and_parameters() -> None:
    text = "@dec\nasync  def  run(self, depth):\n    pass\nclass Box: pass\nf(key=1)\nimport a.b as c\n"
    module, index = _index(text)
    run, box, call, imported = module.body
    assert index.name_range(run) == _span(2, 12, 2, 15)
    assert index.name_range(box) == _span(4, 6, 4, 9)
    assert index.name_range(call.value.keywords[0]) == _span(5, 2, 5, 5)  # type: ignore[attr-defined]
    assert index.name_range(imported.names[0]) == _span(6, 7, 6, 10)  # type: ignore[attr-defined]
    assert index.name_range(run.args.args[1]) == _span(2, 22, 2, 27)  # type: ignore[attr-defined]


def test_nodes_without_positions_span_their_parts() -> None:
    text = "with open(p) as f:\n    pass\nxs = [i * 2 for i in range(3) if i]\n"
    module, index = _index(text)
    item = module.body[0].items[0]  # type: ignore[attr-defined]
    assert index.text_of(item) == "open(p) as f"
    clause = module.body[1].value.generators[0]  # type: ignore[attr-defined]
    assert index.text_of(clause) == "i in range(3) if i"
    assert index.code_range(module) == _span(1, 0, 4, 0)


def test_a_synthetic_node_has_no_position() -> None:
    _, index = _index("x = 1\n")
    with pytest.raises(KeyError):
        index.code_range(ast.Name("elsewhere"))
