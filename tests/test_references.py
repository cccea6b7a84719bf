"""The Python front end's name index and call-site finder (rocmlint/python/references.py)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

from snippets import in_order

from rocmlint.python.references import References
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import walk


def _index(code: str) -> tuple[str, ast.Module, References]:
    text = textwrap.dedent(code).lstrip("\n")
    module = ast.parse(text)
    semantic = Semantic(module, None, text)
    walk(module, semantic.parents, {}, semantic.mentions)
    return text, module, References(semantic)


def _lines(text: str, nodes: Sequence[ast.expr]) -> list[str]:
    """Each node's code, with the line it starts on: `3:flags`."""
    return [f"{node.lineno}:{ast.get_source_segment(text, node)}" for node in nodes]


def _function(module: ast.Module, name: str) -> ast.FunctionDef:
    found = [n for n in in_order(module) if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(found) == 1, name
    return found[0]


NAMES = """
import flags as imported
flags = ["-O3"]
flags += ["-g"]
def build(flags=flags, *, verbose=False):
    run(flags=flags)
    del flags
cfg.flags.append("-lineinfo")
print(imported.flags)
"""


def test_names_are_variable_references_in_source_order() -> None:
    text, _, index = _index(NAMES)
    assert _lines(text, index.names("flags")) == ["2:flags", "3:flags", "4:flags", "5:flags", "6:flags"]
    assert _lines(text, index.reads("flags")) == ["4:flags", "5:flags"]  # the default, the argument
    assert _lines(text, index.names("verbose")) == []  # a parameter's own name
    assert index.names("build") == []  # a def's own name
    assert _lines(text, index.names("imported")) == ["8:imported"]  # not the `as imported` of the import


def test_attributes_and_mentions() -> None:
    text, _, index = _index(NAMES)
    assert _lines(text, index.attributes("flags")) == ["7:cfg.flags", "8:imported.flags"]
    mentions = _lines(text, index.mentions("flags"))
    assert mentions == ["2:flags", "3:flags", "4:flags", "5:flags", "6:flags", "7:cfg.flags", "8:imported.flags"]
    assert index.mentions("missing") == []


def test_mention_reads_within_a_node() -> None:
    text, module, index = _index(NAMES)
    assert _lines(text, index.mention_reads("flags")) == ["4:flags", "5:flags", "7:cfg.flags", "8:imported.flags"]
    build = _function(module, "build")
    # ast has no node for a body: its one statement that reads stands for it (the default is left out).
    assert _lines(text, index.mention_reads("flags", within=build.body[0])) == ["5:flags"]


CALLS = """
import torch

def helper():
    return 1

class Builder:
    def nvcc_args(self):
        return helper()

    def build(self):
        return self.nvcc_args() + Builder.nvcc_args(self)

def shadowed():
    helper = lambda: 2
    return helper()

register(helper)
helper()
other.nvcc_args()
"""


def test_uses_of_a_function_are_its_calls_and_its_uses_as_a_value() -> None:
    text, module, index = _index(CALLS)
    helper = _function(module, "helper")
    assert _lines(text, index.uses_of(helper)) == ["8:helper()", "17:helper", "18:helper()"]
    assert _lines(text, index.calls_of(helper)) == ["8:helper()", "18:helper()"]


def test_a_method_is_called_through_its_own_class_only() -> None:
    text, module, index = _index(CALLS)
    method = _function(module, "nvcc_args")
    assert _lines(text, index.calls_of(method)) == ["11:self.nvcc_args()", "11:Builder.nvcc_args(self)"]
    # Any receiver, for a method whose object's class is not known here.
    assert _lines(text, index.method_calls("nvcc_args")) == [
        "11:self.nvcc_args()",
        "11:Builder.nvcc_args(self)",
        "19:other.nvcc_args()",
    ]
    # A method's loose calls are its method_calls; a plain function's, its own calls.
    assert index.loose_calls_of(method) == index.method_calls("nvcc_args")
    helper = _function(module, "helper")
    assert index.loose_calls_of(helper) == index.calls_of(helper)


def test_a_function_nobody_calls_has_no_uses() -> None:
    _, module, index = _index(CALLS)
    assert index.uses_of(_function(module, "shadowed")) == []
