"""The Python front end's name index and call-site finder (rocmlint/python/references.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import PositionProvider
from snippets import in_order

from rocmlint.python.references import References
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import walk


def _index(code: str) -> tuple[cst.Module, References]:
    module = cst.parse_module(textwrap.dedent(code).lstrip("\n"))
    semantic = Semantic(module, None)
    walk(module, semantic.parents, {})
    return module, References(semantic)


def _lines(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> list[str]:
    """Each node's code, with the line it starts on: `3:flags`."""
    positions = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return [f"{positions[node].start.line}:{module.code_for_node(node)}" for node in nodes]


def _function(module: cst.Module, name: str) -> cst.FunctionDef:
    found = [n for n in in_order(module) if isinstance(n, cst.FunctionDef) and n.name.value == name]
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
    module, index = _index(NAMES)
    assert _lines(module, index.names("flags")) == ["2:flags", "3:flags", "4:flags", "5:flags", "6:flags"]
    assert _lines(module, index.reads("flags")) == ["4:flags", "5:flags"]  # the default, the argument
    assert _lines(module, index.names("verbose")) == []  # a parameter's own name
    assert index.names("build") == []  # a def's own name
    assert _lines(module, index.names("imported")) == ["8:imported"]  # not the `as imported` of the import


def test_attributes_and_mentions() -> None:
    module, index = _index(NAMES)
    assert _lines(module, index.attributes("flags")) == ["7:cfg.flags", "8:imported.flags"]
    mentions = _lines(module, index.mentions("flags"))
    assert mentions == ["2:flags", "3:flags", "4:flags", "5:flags", "6:flags", "7:cfg.flags", "8:imported.flags"]
    assert index.mentions("missing") == []


def test_mention_reads_within_a_node() -> None:
    module, index = _index(NAMES)
    assert _lines(module, index.mention_reads("flags")) == ["4:flags", "5:flags", "7:cfg.flags", "8:imported.flags"]
    build = _function(module, "build")
    assert _lines(module, index.mention_reads("flags", within=build.body)) == ["5:flags"]


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
    module, index = _index(CALLS)
    helper = _function(module, "helper")
    assert _lines(module, index.uses_of(helper)) == ["8:helper()", "17:helper", "18:helper()"]
    assert _lines(module, index.calls_of(helper)) == ["8:helper()", "18:helper()"]


def test_a_method_is_called_through_its_own_class_only() -> None:
    module, index = _index(CALLS)
    method = _function(module, "nvcc_args")
    assert _lines(module, index.calls_of(method)) == ["11:self.nvcc_args()", "11:Builder.nvcc_args(self)"]
    # Any receiver, for a method whose object's class is not known here.
    assert _lines(module, index.method_calls("nvcc_args")) == [
        "11:self.nvcc_args()",
        "11:Builder.nvcc_args(self)",
        "19:other.nvcc_args()",
    ]
    # A method's loose calls are its method_calls; a plain function's, its own calls.
    assert index.loose_calls_of(method) == index.method_calls("nvcc_args")
    helper = _function(module, "helper")
    assert index.loose_calls_of(helper) == index.calls_of(helper)


def test_a_function_nobody_calls_has_no_uses() -> None:
    module, index = _index(CALLS)
    assert index.uses_of(_function(module, "shadowed")) == []
