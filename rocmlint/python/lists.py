"""How a list variable is built up in its scope: its plain assignments and in-place additions (`x += ...`,
`x.append(...)`, `.extend`, `.insert`), which of them reach a read of it on ROCm, and the reads that
consume it (flag lists handed to a compiler, command lines).

Reaching definitions here are those of straight-line build scripts: a definition reaches a read that
comes after it in the file unless a plain assignment in between replaces it on every path (it stands in
a block that holds the read), or replaces it on ROCm (it is made only on ROCm).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_display_call
from rocmlint.python.values import (
    ASSIGNMENTS,
    SEQUENCE_CALLS,
    Follow,
    Through,
    assignment_targets,
    list_added_to,
    return_values,
)

T = TypeVar("T")
Addition = cst.Call | cst.AugAssign
# A leaf of a list's items, with the names and calls it flowed through (to gate a report on).
Item = tuple[T, tuple[cst.CSTNode, ...]]
# What a list is built from besides names and calls: its elements, `a + b`, both arms of a conditional.
_ITEMS = Follow(operators=(cst.Add,), elements=True)


def addition(ctx: PythonContext, name: cst.Name) -> Addition | None:
    """The statement that adds to the list `name` holds, in place: `name.append(...)`, `name.extend(...)`,
    `name.insert(...)` (the call) or `name += ...`."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.AugAssign):
        return parent if parent.target is name and isinstance(parent.operator, cst.AddAssign) else None
    call = ctx.parent(parent) if isinstance(parent, cst.Attribute) else None
    if not isinstance(call, cst.Call) or call.func is not parent:
        return None
    return call if list_added_to(call) is name else None


def added_values(definition: cst.CSTNode) -> list[cst.BaseExpression]:
    """What a definition puts in the list: the assigned value itself, the right side of `+=`, the argument
    of `.append(x)` / `.extend(xs)` / `.insert(i, x)`."""
    if isinstance(definition, cst.AugAssign):
        return [definition.value]
    if isinstance(definition, cst.Call):
        return method_additions(definition)
    return [definition] if isinstance(definition, cst.BaseExpression) else []


def method_additions(call: cst.Call) -> list[cst.BaseExpression]:
    """What `.append(x)` / `.extend(xs)` / `.insert(i, x)` add to the list (empty for other calls' forms)."""
    if not isinstance(call.func, cst.Attribute):
        return []
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return positional[1:2] if call.func.attr.value == "insert" else positional[:1]


def reached_reads(ctx: PythonContext, target: cst.Name, definition: cst.CSTNode) -> list[cst.Name] | None:
    """The consuming reads (`consuming_reads`) of the variable `target` binds that its `definition` (an
    assigned value or an addition) reaches on ROCm: apex's `nvcc_args if not IS_ROCM else hipcc_args`
    never does; None when nothing here reads the variable (a module constant other files import)."""
    reads = consuming_reads(ctx, target)
    if not reads:
        return None
    return [read for read in reads if definition in reaching_definitions(ctx, read)]


def consuming_reads(ctx: PythonContext, target: cst.Name) -> list[cst.Name]:
    """The reads of the variable `target` binds (in its scope, nested scopes that do not rebind it
    included) that use the list: not its in-place additions (`x.append(...)`), not the right side of its
    own re-definitions (`x = x + [...]`, `x = helper(x)`), not a display (`print("flags:", x)`)."""
    scope = _binding_scope(ctx, target)
    return [
        read
        for read in ctx.references.reads(target.value)
        if _binding_scope(ctx, read) is scope
        and addition(ctx, read) is None
        and not _redefines(ctx, read)
        and not _displayed(ctx, read)
    ]


def reaching_definitions(ctx: PythonContext, use: cst.Name) -> list[cst.CSTNode]:
    """The assigned values and in-place additions (the `Addition` statements) of the variable `use`
    reads that can reach it on ROCm (see the module's docstring). A read in a nested scope sees all of
    them."""
    binding = ctx.semantic.lookup(use.value, use)
    if binding is None or binding.kind != "value":
        return []
    scope = binding.scope.node
    found: list[cst.CSTNode] = list(binding.values)
    for name in ctx.references.names(use.value):
        added = addition(ctx, name)
        if added is not None and _binding_scope(ctx, name) is scope:
            found.append(added)
    if ctx.semantic.enclosing_scope_node(use) is not scope:
        return found
    at = _start(ctx, use)
    kills = [_start(ctx, value) for value in binding.values if _replaces(ctx, value, use)]
    return [d for d in found if _start(ctx, d) <= at and not any(_start(ctx, d) < kill <= at for kill in kills)]


def _replaces(ctx: PythonContext, value: cst.BaseExpression, use: cst.Name) -> bool:
    """Whether the plain assignment of `value` replaces earlier definitions on every path to `use` on
    ROCm: it sits directly in a block that holds `use` (`cc_flag = []` opening a section), or it is made
    only on ROCm (`if IS_HIP_EXTENSION: nvcc_flags = [...]`). `x = x + [...]` keeps them."""
    assign = ctx.parent(value)
    if not isinstance(assign, cst.Assign) or _mentions(ctx, value, use.value):
        return False
    statement = ctx.parent(assign)
    block = ctx.parent(statement) if statement is not None else None
    if block is not None and any(ancestor is block for ancestor in ctx.ancestors(use)):
        return True
    return ctx.is_nvidia_gated(value) and not ctx.is_rocm_gated(value)


def _mentions(ctx: PythonContext, expr: cst.CSTNode, name: str) -> bool:
    """Any Name spelled `name` in `expr`, even an attribute's (`flags = cfg.flags` keeps earlier ones)."""
    return any(isinstance(node, cst.Name) and node.value == name for node in ctx.semantic.descendants(expr))


def _binding_scope(ctx: PythonContext, name: cst.Name) -> cst.CSTNode | None:
    binding = ctx.semantic.lookup(name.value, name)
    return binding.scope.node if binding is not None else None


def _redefines(ctx: PythonContext, read: cst.Name) -> bool:
    """`flags = flags + [...]` / `flags = helper(flags)`: the right side re-defines, it does not consume."""
    for ancestor in ctx.ancestors(read):
        if isinstance(ancestor, ASSIGNMENTS):
            targets = assignment_targets(ancestor)
            return any(isinstance(target, cst.Name) and target.value == read.value for target in targets)
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False


def _displayed(ctx: PythonContext, read: cst.Name) -> bool:
    """An argument of `print(...)` or a logging call: shown, not used."""
    argument = ctx.parent(read)
    call = ctx.parent(argument) if isinstance(argument, cst.Arg) else None
    return isinstance(call, cst.Call) and is_display_call(ctx, call)


def _start(ctx: PythonContext, node: cst.CSTNode) -> tuple[int, int]:
    position = ctx.code_range(node).start
    return position.line, position.column


# --- what a list holds ------------------------------------------------------------------------------
def list_items(
    ctx: PythonContext,
    expr: cst.BaseExpression,
    visit: Callable[[cst.BaseExpression], Sequence[T] | Through | None],
    follows: Callable[[cst.FunctionDef], bool],
) -> list[Item[T]]:
    """Every leaf `visit` finds in what the list `expr` may hold, with the names and calls it flowed
    through. `visit` is asked first at every expression (as by `Values.trace`: leaves, a dead end, the
    rule's own `Through` step, or None); elsewhere the trace follows elements, `+`, both arms of
    conditionals, names through the definitions and additions that reach them (`reaching_definitions`,
    each followed once) and calls that pass a list on (`passed_on`, a local function when `follows` it)."""
    return _items(ctx, expr, visit, follows, frozenset())


def _items(
    ctx: PythonContext,
    expr: cst.BaseExpression,
    visit: Callable[[cst.BaseExpression], Sequence[T] | Through | None],
    follows: Callable[[cst.FunctionDef], bool],
    seen: frozenset[cst.CSTNode],
) -> list[Item[T]]:
    def step(node: cst.BaseExpression) -> list[Item[T]] | Through | None:
        found = visit(node)
        if isinstance(found, Through):
            return found
        if found is not None:
            return [(leaf, ()) for leaf in found]
        if isinstance(node, cst.Call):
            parts = [(part, seen) for part in passed_on(ctx, node, follows)]
        elif isinstance(node, cst.Name):
            definitions = [d for d in reaching_definitions(ctx, node) if d not in seen]
            parts = [(source, seen | {d}) for d in definitions for source in added_values(d)]
        else:
            return None
        return [
            (leaf, (node, *path)) for part, known in parts for leaf, path in _items(ctx, part, visit, follows, known)
        ]

    return ctx.values.trace(expr, step, _ITEMS)


def passed_on(
    ctx: PythonContext, call: cst.Call, follows: Callable[[cst.FunctionDef], bool]
) -> list[cst.BaseExpression]:
    """The expressions whose items end up in the list a call returns: `"-O3 -lineinfo".split()`,
    `list(x)`, `tuple(x)`, `sorted(x)` (`SEQUENCE_CALLS`), and when `follows(def)` a local function's
    arguments and return values (flash-attention's `append_nvcc_threads(nvcc_flags + cc_flag)` returns
    `nvcc_extra_args + ["--threads", "4"]`)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "split":
        return [func.value]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    # An argument list is a sequence: `set(flags)` (order lost) is not followed; following it would add
    # findings (PyTorch's `sorted(set(flags))` in `_get_cuda_arch_flags`).
    if ctx.qualified_name(func) in SEQUENCE_CALLS:
        return positional
    helper = ctx.semantic.local_function(func)
    if helper is None or not follows(helper):
        return []
    return positional + return_values(helper)
