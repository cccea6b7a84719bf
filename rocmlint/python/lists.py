"""How a list variable is built up in its scope: its plain assignments and in-place additions (`x += ...`,
`x.append(...)`, `.extend`, `.insert`), which of them reach a read of it on ROCm, and the reads that
consume it (flag lists handed to a compiler, command lines).

Reaching definitions here are those of straight-line build scripts: a definition reaches a read that
comes after it in the file unless a plain assignment in between replaces it on every path (it stands in
a block that holds the read), or replaces it on ROCm (it is made only on ROCm).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import TypeVar

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_display_call
from rocmlint.python.scopes import FunctionNode
from rocmlint.python.values import (
    ASSIGNMENTS,
    SEQUENCE_CALLS,
    Follow,
    Through,
    argument_of,
    assignment_targets,
    list_added_to,
    return_values,
)

T = TypeVar("T")
Addition = ast.Call | ast.AugAssign
# A leaf of a list's items, with the names and calls it flowed through (to gate a report on).
Item = tuple[T, tuple[ast.expr, ...]]
# What a list is built from besides names and calls: its elements, `a + b`, both arms of a conditional.
_ITEMS = Follow(operators=(ast.Add,), elements=True)


def addition(ctx: PythonContext, name: ast.Name) -> Addition | None:
    """The statement that adds to the list `name` holds, in place: `name.append(...)`, `name.extend(...)`,
    `name.insert(...)` (the call) or `name += ...`."""
    parent = ctx.parent(name)
    if isinstance(parent, ast.AugAssign):
        return parent if parent.target is name and isinstance(parent.op, ast.Add) else None
    call = ctx.parent(parent) if isinstance(parent, ast.Attribute) else None
    if not isinstance(call, ast.Call) or call.func is not parent:
        return None
    return call if list_added_to(call) is name else None


def added_values(definition: ast.AST) -> list[ast.expr]:
    """What a definition puts in the list: the assigned value itself, the right side of `+=`, the argument
    of `.append(x)` / `.extend(xs)` / `.insert(i, x)`."""
    if isinstance(definition, ast.AugAssign):
        return [definition.value]
    if isinstance(definition, ast.Call):
        return method_additions(definition)
    return [definition] if isinstance(definition, ast.expr) else []


def method_additions(call: ast.Call) -> list[ast.expr]:
    """What `.append(x)` / `.extend(xs)` / `.insert(i, x)` add to the list (empty for other calls' forms)."""
    if not isinstance(call.func, ast.Attribute):
        return []
    positional = _positional_arguments(call)
    return positional[1:2] if call.func.attr == "insert" else positional[:1]


def _positional_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments passed by position, `*args` left out."""
    return [argument for argument in call.args if not isinstance(argument, ast.Starred)]


def reached_reads(ctx: PythonContext, target: ast.Name, definition: ast.AST) -> list[ast.Name] | None:
    """The consuming reads (`consuming_reads`) of the variable `target` binds that its `definition` (an
    assigned value or an addition) reaches on ROCm: apex's `nvcc_args if not IS_ROCM else hipcc_args`
    never does; None when nothing here reads the variable (a module constant other files import)."""
    reads = consuming_reads(ctx, target)
    if not reads:
        return None
    return [read for read in reads if definition in reaching_definitions(ctx, read)]


def consuming_reads(ctx: PythonContext, target: ast.Name) -> list[ast.Name]:
    """The reads of the variable `target` binds (in its scope, nested scopes that do not rebind it
    included) that use the list: not its in-place additions (`x.append(...)`), not the right side of its
    own re-definitions (`x = x + [...]`, `x = helper(x)`), not a display (`print("flags:", x)`)."""
    scope = _binding_scope(ctx, target)
    return [
        read
        for read in ctx.references.reads(target.id)
        if _binding_scope(ctx, read) is scope
        and addition(ctx, read) is None
        and not _redefines(ctx, read)
        and not _displayed(ctx, read)
    ]


def reaching_definitions(ctx: PythonContext, use: ast.Name) -> list[ast.AST]:
    """The assigned values and in-place additions (the `Addition` statements) of the variable `use`
    reads that can reach it on ROCm (see the module's docstring). A read in a nested scope sees all of
    them."""
    binding = ctx.semantic.lookup(use.id, use)
    if binding is None or binding.kind != "value":
        return []
    scope = binding.scope.node
    found: list[ast.AST] = list(binding.values)
    for name in ctx.references.names(use.id):
        added = addition(ctx, name)
        if added is not None and _binding_scope(ctx, name) is scope:
            found.append(added)
    if ctx.semantic.enclosing_scope_node(use) is not scope:
        return found
    at = _start(ctx, use)
    kills = [_start(ctx, value) for value in binding.values if _replaces(ctx, value, use)]
    return [d for d in found if _start(ctx, d) <= at and not any(_start(ctx, d) < kill <= at for kill in kills)]


def _replaces(ctx: PythonContext, value: ast.expr, use: ast.Name) -> bool:
    """Whether the plain assignment of `value` replaces earlier definitions on every path to `use` on
    ROCm: it sits directly in a block that holds `use` (`cc_flag = []` opening a section), or it is made
    only on ROCm (`if IS_HIP_EXTENSION: nvcc_flags = [...]`). `x = x + [...]` keeps them."""
    assign = ctx.parent(value)
    if not isinstance(assign, ast.Assign) or _mentions(ctx, value, use.id):
        return False
    if _in_block(ctx, use, ctx.semantic.block_of(assign)):
        return True
    return ctx.is_nvidia_gated(value) and not ctx.is_rocm_gated(value)


def _in_block(ctx: PythonContext, node: ast.AST, block: list[ast.stmt]) -> bool:
    """`node` is in one of the statements of `block`."""
    statements = set(block)
    return any(ancestor in statements for ancestor in ctx.ancestors(node))


def _mentions(ctx: PythonContext, expr: ast.AST, name: str) -> bool:
    """`name` spelled anywhere in `expr`, even as an attribute's, keyword's or lambda parameter's name
    (`flags = cfg.flags` keeps earlier ones)."""
    return any(_spelled(node) == name for node in ctx.semantic.descendants(expr))


def _spelled(node: ast.AST) -> str | None:
    """The identifier a node spells: a name, an attribute's name, a keyword argument's, a parameter's."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.keyword):
        return node.arg
    return node.arg if isinstance(node, ast.arg) else None


def _binding_scope(ctx: PythonContext, name: ast.Name) -> ast.AST | None:
    binding = ctx.semantic.lookup(name.id, name)
    return binding.scope.node if binding is not None else None


def _redefines(ctx: PythonContext, read: ast.Name) -> bool:
    """`flags = flags + [...]` / `flags = helper(flags)`: the right side re-defines, it does not consume."""
    for ancestor in ctx.ancestors(read):
        if isinstance(ancestor, ASSIGNMENTS):
            targets = assignment_targets(ancestor)
            return any(isinstance(target, ast.Name) and target.id == read.id for target in targets)
        if isinstance(ancestor, ast.stmt):
            return False
    return False


def _displayed(ctx: PythonContext, read: ast.Name) -> bool:
    """An argument of `print(...)` or a logging call: shown, not used."""
    passed = argument_of(ctx.semantic, read)
    return passed is not None and is_display_call(ctx, passed[0])


def _start(ctx: PythonContext, node: ast.AST) -> tuple[int, int]:
    position = ctx.code_range(node).start
    return position.line, position.column


# --- what a list holds ------------------------------------------------------------------------------
def list_items(
    ctx: PythonContext,
    expr: ast.expr,
    visit: Callable[[ast.expr], Sequence[T] | Through | None],
    follows: Callable[[FunctionNode], bool],
) -> list[Item[T]]:
    """Every leaf `visit` finds in what the list `expr` may hold, with the names and calls it flowed
    through. `visit` is asked first at every expression (as by `Values.trace`: leaves, a dead end, the
    rule's own `Through` step, or None); elsewhere the trace follows elements, `+`, both arms of
    conditionals, names through the definitions and additions that reach them (`reaching_definitions`,
    each followed once) and calls that pass a list on (`passed_on`, a local function when `follows` it)."""
    return _items(ctx, expr, visit, follows, frozenset())


def _items(
    ctx: PythonContext,
    expr: ast.expr,
    visit: Callable[[ast.expr], Sequence[T] | Through | None],
    follows: Callable[[FunctionNode], bool],
    seen: frozenset[ast.AST],
) -> list[Item[T]]:
    def step(node: ast.expr) -> list[Item[T]] | Through | None:
        found = visit(node)
        if isinstance(found, Through):
            return found
        if found is not None:
            return [(leaf, ()) for leaf in found]
        if isinstance(node, ast.Call):
            parts = [(part, seen) for part in passed_on(ctx, node, follows)]
        elif isinstance(node, ast.Name):
            definitions = [d for d in reaching_definitions(ctx, node) if d not in seen]
            parts = [(source, seen | {d}) for d in definitions for source in added_values(d)]
        else:
            return None
        return [
            (leaf, (node, *path)) for part, known in parts for leaf, path in _items(ctx, part, visit, follows, known)
        ]

    return ctx.values.trace(expr, step, _ITEMS)


def passed_on(ctx: PythonContext, call: ast.Call, follows: Callable[[FunctionNode], bool]) -> list[ast.expr]:
    """The expressions whose items end up in the list a call returns: `"-O3 -lineinfo".split()`,
    `list(x)`, `tuple(x)`, `sorted(x)` (`SEQUENCE_CALLS`), and when `follows(def)` a local function's
    arguments and return values (flash-attention's `append_nvcc_threads(nvcc_flags + cc_flag)` returns
    `nvcc_extra_args + ["--threads", "4"]`)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "split":
        return [func.value]
    positional = _positional_arguments(call)
    # An argument list is a sequence: `set(flags)` (order lost) is not followed; following it would add
    # findings (PyTorch's `sorted(set(flags))` in `_get_cuda_arch_flags`).
    if ctx.qualified_name(func) in SEQUENCE_CALLS:
        return positional
    helper = ctx.semantic.local_function(func)
    if helper is None or not follows(helper):
        return []
    return positional + return_values(helper)
