"""Cheaper scans of the Python front end give the answers the scans they replaced gave: the global/nonlocal text test
never misses a declaration, scopes built without the search it spares are the same, and a statement's always-made
calls come in the order the `ast.iter_child_nodes` walk found them (the gate analysis decides them in turn)."""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmlint.python.gating import _always_called
from rocmlint.python.scopes import DEFS, index_scope, may_declare_names

ROOT = Path(__file__).resolve().parent.parent
PYTHON_FILES = sorted([*ROOT.glob("fixtures/**/*.py"), *ROOT.glob("rules/*.py"), *ROOT.glob("rocmlint/python/*.py")])

DECLARING = [
    "def f():\n    global X\n    X = 1\n",
    "def f():\n\tglobal X, Y\n",
    "def f(): global X; X = 1\n",
    "def f():\n    x = 1; global Y\n",
    "def f():\n    x = 1 ;global Y\n",
    "def f():\n    if x: global Y\n",
    "def f():\n    x = 1; \\\n  global Y\n",
    "def f():\r    global X\r",
    "def f():\r\n    global X\r\n",
    "def f():\n  \f  global X\n",
    "global X\n",
    "def f():\n    def g():\n        nonlocal x\n    x = 1\n",
    "def f():\n    # the global scale\n    global SCALE\n",
    "x = global_rank()\ndef f():\n    global\\\n X\n",
    "def f():\n    global X  # global_rank\n",
]
NOT_DECLARING = [
    "global_rank = 0\n",
    "x = get_global_rank()\n",
    '"""the global scale"""\n',
    "# keep it global\nx = 1\n",
    "x.nonlocal_value = 1\n",
    "y = f(global_x)\n",
    "nonlocals = []\n",
]


@pytest.mark.parametrize("text", DECLARING)
def test_a_declaration_is_never_missed(text: str) -> None:
    assert _declares(ast.parse(text))
    assert may_declare_names(text)


@pytest.mark.parametrize("text", NOT_DECLARING)
def test_the_words_in_names_and_prose_declare_nothing(text: str) -> None:
    assert not _declares(ast.parse(text))
    assert not may_declare_names(text)


def test_random_texts_never_miss_a_declaration() -> None:
    pieces = ["global X", "nonlocal x", "x = 1", "global_x = 2", "#global", "'global'", "pass", "f(x)"]
    separators = ["\n        ", "; ", ";", "\r\n        ", " \\\n  ", "\n\f        ", ": "]
    generator = random.Random(39)
    checked = 0
    for _ in range(3000):
        body = generator.choice(pieces)
        for _ in range(generator.randrange(4)):
            body += generator.choice(separators) + generator.choice(pieces)
        text = f"def outer():\n    x = 0\n    def f():\n        {body}\n"
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        checked += 1
        assert may_declare_names(text) or not _declares(tree), text
    assert checked > 500


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_scopes_are_the_same_without_the_spared_search(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    declarations = may_declare_names(text)
    for node in [tree, *(node for node in ast.walk(tree) if isinstance(node, DEFS))]:
        assert index_scope(node, "pkg", declarations) == index_scope(node, "pkg", True)


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_always_called_keeps_the_walk_order(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            assert _always_called(node) == list(_always_called_as_walked(node))


def _declares(tree: ast.AST) -> bool:
    return any(isinstance(node, (ast.Global, ast.Nonlocal)) for node in ast.walk(tree))


def _always_called_as_walked(expr: ast.expr) -> Iterator[ast.Call]:
    """The walk `_always_called` replaced, with `ast.iter_child_nodes`."""
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.IfExp):
            stack.append(node.test)
            continue
        if isinstance(node, ast.BoolOp):
            stack.append(node.values[0])
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))
