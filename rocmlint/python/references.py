"""Where a file uses its names: one index of every reference by identifier, and the call sites of each
function defined in the file (its callers in this file).

Built once per file, on the first question (`PythonContext.references`, shared with gate analysis). The index follows the file's
order, so answers come in source order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from rocmlint.python.scopes import FunctionNode
from rocmlint.python.semantic import Semantic

Reference = ast.Name | ast.Attribute


@dataclass
class _Index:
    names: dict[str, list[ast.Name]] = field(default_factory=dict)
    attributes: dict[str, list[ast.Attribute]] = field(default_factory=dict)
    mentions: dict[str, list[Reference]] = field(default_factory=dict)


class References:
    def __init__(self, semantic: Semantic) -> None:
        self.semantic = semantic

    @cached_property
    def _index(self) -> _Index:
        index = _Index()
        # The walk records only Names and Attributes, and every Name refers to a variable (`is_reference`). No
        # `setdefault(key, [])`: it builds a list for every mention.
        attributes, names, mentions = index.attributes, index.names, index.mentions
        for node in self.semantic.mentions:
            if type(node) is ast.Attribute:
                identifier = node.attr
                same_attributes = attributes.get(identifier)
                if same_attributes is None:
                    attributes[identifier] = [node]
                else:
                    same_attributes.append(node)
            else:
                assert type(node) is ast.Name
                identifier = node.id
                same_names = names.get(identifier)
                if same_names is None:
                    names[identifier] = [node]
                else:
                    same_names.append(node)
            same_mentions = mentions.get(identifier)
            if same_mentions is None:
                mentions[identifier] = [node]
            else:
                same_mentions.append(node)
        return index

    # --- the name index ---------------------------------------------------------------------------
    def names(self, identifier: str) -> list[ast.Name]:
        """The names spelled `identifier` that refer to a variable, read or written (`Semantic.is_reference`:
        attributes, keywords, parameters, defs, classes and imports name theirs without a Name node),
        whatever they bind to."""
        return self._index.names.get(identifier, [])

    def reads(self, identifier: str) -> list[ast.Name]:
        """The names spelled `identifier` that read a variable (not assignment, loop or `del` targets)."""
        return [name for name in self.names(identifier) if not self.semantic.is_store(name)]

    def attributes(self, identifier: str) -> list[ast.Attribute]:
        """Every `<x>.identifier` in the file, whatever `x` is."""
        return self._index.attributes.get(identifier, [])

    def mentions(self, identifier: str) -> list[Reference]:
        """`names(identifier)` and `attributes(identifier)` together, in source order: where a value stored
        under that identifier (a variable or any object's attribute) may be used, without scope analysis."""
        return self._index.mentions.get(identifier, [])

    def mention_reads(self, identifier: str, within: ast.AST | None = None) -> list[Reference]:
        """`mentions(identifier)` that read (not assignment, loop or `del` targets), only those under
        `within` when it is given."""
        mentions = self.mentions(identifier)
        reads = [mention for mention in mentions if not self.semantic.is_store(mention)]
        return reads if within is None else [read for read in reads if self.semantic.is_within(read, within)]

    # --- call sites -------------------------------------------------------------------------------
    def uses_of(self, function: FunctionNode | ast.ClassDef) -> list[ast.expr]:
        """The uses of `function` (or of a class: its calls construct it) in this file: the `Call` for each call,
        the bare reference for each use as a value (`register(callback)`). A plain function is used by the names that resolve to it; a
        method by `self.name`, `cls.name` and `Class.name` of its own class."""
        owner = self.semantic.enclosing_scope_node(function)
        mentions = self.mentions(function.name)
        return [_call_of(use, self.semantic) or use for use in mentions if self._refers_to(use, function, owner)]

    def calls_of(self, function: FunctionNode | ast.ClassDef) -> list[ast.Call]:
        """The calls of `function` in this file (`uses_of` without its uses as a value)."""
        return [use for use in self.uses_of(function) if isinstance(use, ast.Call)]

    def method_calls(self, name: str) -> list[ast.Call]:
        """Every `<x>.name(...)` call, whatever `x` is (a method of an object whose class is unknown here)."""
        found = (_call_of(attribute, self.semantic) for attribute in self.attributes(name))
        return [call for call in found if call is not None]

    def loose_calls_of(self, function: FunctionNode) -> list[ast.Call]:
        """The calls of a def in this file, a method's on any object: a plain function's `calls_of`, a
        method's `method_calls` (DeepSpeed's builders call `builder.nvcc_args()`, whose class is not known
        here)."""
        if isinstance(self.semantic.enclosing_scope_node(function), ast.ClassDef):
            return self.method_calls(function.name)
        return self.calls_of(function)

    def _refers_to(self, reference: Reference, function: FunctionNode | ast.ClassDef, owner: ast.AST) -> bool:
        if isinstance(reference, ast.Name):
            binding = self.semantic.lookup(reference.id, reference)
            return binding is not None and binding.definition is function
        return isinstance(owner, ast.ClassDef) and self.semantic.receiver_class(reference) is owner


def _call_of(reference: Reference, semantic: Semantic) -> ast.Call | None:
    """The call whose callee `reference` is."""
    parent = semantic.parent(reference)
    return parent if isinstance(parent, ast.Call) and parent.func is reference else None
