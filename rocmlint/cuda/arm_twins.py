"""Arms of an `#ifdef __CUDA_ARCH__` chain that compute the same thing two ways: a per-thread CUDA intrinsic in the
arm nvcc's device pass takes, a portable twin in the arm HIP-Clang's device pass takes instead.

    #ifdef __CUDA_ARCH__
        return __clz(x);
    #else
        if (x == 0) return 32;
        return __builtin_clz(x);
    #endif

HIP-Clang never defines `__CUDA_ARCH__`, so ROCm's device pass compiles the `#else`. When the skipped arm only calls
intrinsics that one thread computes from its arguments (rocmlint/data/per_thread_intrinsics.toml: `__clz`, `__umulhi`,
`__expf`, `__ldg`, C math) and the arm ROCm takes computes from the same inputs with what a HIP-Clang device pass
compiles (generic clang builtins, `std::` math and `<bit>`, arithmetic), ROCm loses nothing: the twin is valid device
code with the same result. Not a twin: an arm reading CUDA's built-in variables (`threadIdx`: the result depends on
the thread's position), an arm with inline assembly or a call outside the table (a warp-wide intrinsic, `printf`, a
project function whose device use nobody checked), a ROCm arm that is empty or ignores the intrinsic's inputs (`return
0;`: a host stub), and one throwing, allocating or writing to the host's streams. An arm defining functions (`float
exp(float x) { return ::expf(x); }`) is a twin of one declaring the same names (`using std::exp;`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from rocmlint.cuda.frontend import ByteSpan, CudaContext, Node
from rocmlint.cuda.hip_gaps import ASM_STATEMENT, without_comments
from rocmlint.data import load


@dataclass(frozen=True)
class _Table:
    intrinsics: frozenset[str]  # per-thread CUDA intrinsics HIP has, and C math
    portable: frozenset[str]  # unqualified names a HIP-Clang device pass can call: C math, casts
    standard: frozenset[str]  # `std::` names it can call
    builtin_targets: re.Pattern[str]  # `__builtin_<target>_...` for one CPU or NVIDIA target
    device_state: frozenset[str]
    host_only: frozenset[str]


@cache
def _table() -> _Table:
    data = load("per_thread_intrinsics")
    math = frozenset(data["math"])
    return _Table(
        intrinsics=frozenset(data["intrinsics"]) | math,
        portable=math | frozenset(data["casts"]),
        standard=frozenset(data["std"]) | frozenset(data["casts"]),
        builtin_targets=re.compile(r"__builtin_(?:" + "|".join(data["builtin_targets"]) + r")_"),
        device_state=frozenset(data["device_state"]),
        host_only=frozenset(data["host_only"]),
    )


# Code no device pass of HIP-Clang compiles: exceptions and the heap.
_HOST_ONLY_NODES = ("throw_statement", "throw_expression", "try_statement", "new_expression", "delete_expression")
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class _Arm:
    calls: list[tuple[str, Node]]  # callee (template arguments and a leading `::` left out), call node
    identifiers: frozenset[str]
    declared: frozenset[str]  # functions it defines, names it brings in with `using`
    hides_calls: bool  # a parse error with a call in it
    host_only: bool  # it throws, catches or allocates


_WORD = re.compile(r"[A-Za-z_]\w*")


def portable_twin(nvidia: ByteSpan, rocm: ByteSpan, ctx: CudaContext) -> bool:
    """Whether `rocm`, the arm a ROCm build takes, computes portably what `nvidia`, the arm nvcc's device pass takes
    instead, computes with per-thread intrinsics HIP has (see the module docstring)."""
    table = _table()
    device_code, twin_code = _code(nvidia, ctx), _code(rocm, ctx)
    if not twin_code.strip() or not table.intrinsics.intersection(_WORD.findall(device_code)):
        return False  # decided from the text alone: the tree is parsed only for a likely pair
    if ASM_STATEMENT.search(device_code) or ASM_STATEMENT.search(twin_code):
        return False
    device, twin = _read(nvidia, ctx), _read(rocm, ctx)
    if device.hides_calls or twin.hides_calls or not device.calls:
        return False
    if any(name not in table.intrinsics for name, _ in device.calls) or device.identifiers & table.device_state:
        return False
    if not all(_portable(name) for name, _ in twin.calls) or twin.host_only or twin.identifiers & table.host_only:
        return False
    if device.declared:
        return device.declared <= twin.declared
    return _inputs(device, ctx) <= twin.identifiers


def _portable(name: str) -> bool:
    table = _table()
    if name.startswith("std::"):
        return name.removeprefix("std::") in table.standard
    if name.startswith("__builtin_"):
        return table.builtin_targets.match(name) is None
    return name in table.portable


def _code(span: ByteSpan, ctx: CudaContext) -> str:
    """The arm's text without comments and directives (`#pragma unroll` is no code)."""
    text = without_comments(ctx.text(span))
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _read(span: ByteSpan, ctx: CudaContext) -> _Arm:
    nodes = _nodes_in(span, ctx)
    declared = {
        name
        for node in nodes
        if node.type in ("function_definition", "using_declaration") and (name := _declared_name(node, ctx)) is not None
    }
    return _Arm(
        calls=[(_callee(node, ctx), node) for node in nodes if node.type == "call_expression"],
        identifiers=frozenset(ctx.text(node) for node in nodes if node.type == "identifier"),
        declared=frozenset(declared),
        hides_calls=any(
            node.type == "ERROR" and b"(" in ctx.content[node.start_byte : node.end_byte] for node in nodes
        ),
        host_only=any(node.type in _HOST_ONLY_NODES for node in nodes),
    )


def _nodes_in(span: ByteSpan, ctx: CudaContext) -> list[Node]:
    """Every node lying wholly inside `span`."""
    found: list[Node] = []
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.end_byte <= span.start_byte or node.start_byte >= span.end_byte:
            continue
        if span.start_byte <= node.start_byte and node.end_byte <= span.end_byte:
            found.append(node)
        stack.extend(node.children)
    return found


def _callee(call: Node, ctx: CudaContext) -> str:
    """`std::countl_zero` for `std::countl_zero<T>(x)`, `expf` for `::expf(x)`; the callee's text otherwise."""
    function = _function(call)
    if function is None:
        return ""
    if function.type == "template_function":
        function = function.child_by_field_name("name") or function
    name = "".join(ctx.text(function).split())
    while _TEMPLATE_ARGUMENTS.search(name):
        name = _TEMPLATE_ARGUMENTS.sub("", name)
    return name.removeprefix("::")


def _declared_name(node: Node, ctx: CudaContext) -> str | None:
    """The name a function definition defines, or the last name a `using` declaration brings in."""
    if node.type == "using_declaration":
        return ctx.text(node).rstrip(" ;").rsplit("::", 1)[-1].strip() or None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return None if name is None else ctx.text(name).rsplit("::", 1)[-1]


def _inputs(arm: _Arm, ctx: CudaContext) -> frozenset[str]:
    """The variables the arm's intrinsic calls read: the identifiers in their arguments, callees left out."""
    callees = {(function.start_byte, function.end_byte) for _, call in arm.calls if (function := _function(call))}
    names: set[str] = set()
    for _, call in arm.calls:
        arguments = call.child_by_field_name("arguments")
        stack = list(arguments.children) if arguments is not None else []
        while stack:
            node = stack.pop()
            if node.type == "identifier" and (node.start_byte, node.end_byte) not in callees:
                names.add(ctx.text(node))
            stack.extend(node.children)
    return frozenset(names)


def _function(call: Node) -> Node | None:
    return call.child_by_field_name("function")


__all__ = ["portable_twin"]
