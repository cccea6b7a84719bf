"""The C++ value tracer and its one depth policy (rocmlint/cuda/trace.py, rocmlint/cuda/values.py), the macro
resolver (CudaContext.resolve_text) and integer constants. Also the helpers the other C++ front-end tests build
contexts and find nodes with."""

from __future__ import annotations

import itertools

import pytest

from rocmlint.cuda import values
from rocmlint.cuda.frontend import CudaContext, CudaOptions, Node
from rocmlint.cuda.preprocessor import VendorMacros, analyse
from rocmlint.cuda.trace import MAX_TRACE_DEPTH, START, Trace
from rocmlint.cuda.values import constant_value, initialiser, macro_value
from rocmlint.source import SourceFile


def context(code: str) -> CudaContext:
    source = SourceFile.from_bytes("k.cu", code.encode("utf-8"), "cuda")
    return CudaContext(source, analyse(code, VendorMacros()), CudaOptions())


def node_at(ctx: CudaContext, text: str, node_type: str, occurrence: int = 0) -> Node:
    """The smallest node of `node_type` holding the `occurrence`-th `text` in the file."""
    start = -1
    for _ in range(occurrence + 1):
        start = ctx.content.index(text.encode(), start + 1)
    node = ctx.tree.root_node.descendant_for_byte_range(start, start + len(text))
    while node is not None and node.type != node_type:
        node = node.parent
    assert node is not None, f"no {node_type} at {text!r}"
    return node


def initial_value(ctx: CudaContext, declaration_text: str) -> Node:
    """The initialiser of the declaration starting with `declaration_text`."""
    declarator = node_at(ctx, declaration_text, "declaration").child_by_field_name("declarator")
    value = declarator.child_by_field_name("value") if declarator is not None else None
    assert value is not None
    return value


# --- Trace: one depth policy, no name followed twice ----------------------------------------------------


def test_trace_steps_until_the_depth_limit() -> None:
    trace: Trace | None = START
    for _ in range(MAX_TRACE_DEPTH):
        assert trace is not None
        trace = trace.step()
    assert trace is not None and trace.depth == MAX_TRACE_DEPTH
    assert trace.step() is None and trace.into("x") is None


def test_trace_never_follows_a_name_twice() -> None:
    into_m = START.into("m")
    assert into_m is not None and into_m.into("m") is None
    assert into_m.step() is not None and into_m.step().into("m") is None  # type: ignore[union-attr]


def test_initialiser_follows_a_chain_up_to_the_limit() -> None:
    names = [f"v{i}" for i in range(MAX_TRACE_DEPTH + 2)]
    lines = ["  int v0 = threadIdx.x;"] + [f"  int {b} = {a};" for a, b in itertools.pairwise(names)]
    ctx = context("__global__ void k(int* out) {\n" + "\n".join(lines) + f"\n  out[0] = {names[-1]};\n}}\n")
    trace: Trace | None = START
    node = node_at(ctx, names[-1], "identifier", occurrence=1)
    followed = 0
    while trace is not None and node.type == "identifier":
        found = initialiser(ctx, node, trace)
        if found is None:
            break
        node, trace = found
        followed += 1
    assert followed == MAX_TRACE_DEPTH  # `v1` is as far as the walk goes


def test_arms_walk_parentheses_conditionals_and_followed_initialisers() -> None:
    ctx = context(
        "__global__ void k(bool t, int p) {\n"
        "  auto a = t ? &f<true> : (g);\n"
        "  auto b = (a);\n"
        "  int c;\n"
        "  use(b, c, p ? 1 : 2);\n"
        "}\n"
    )
    call = node_at(ctx, "use(b", "call_expression").child_by_field_name("arguments")
    assert call is not None
    b, c, conditional = call.named_children
    assert [ctx.text(arm) for arm in values.arms(ctx, b)] == ["&f<true>", "g"]
    assert [ctx.text(arm) for arm in values.arms(ctx, b, follow=lambda name: ctx.text(name) != "a")] == ["a"]
    assert [ctx.text(arm) for arm in values.arms(ctx, c)] == ["c"]  # no initialiser: the name itself
    assert [ctx.text(arm) for arm in values.arms(ctx, conditional)] == ["1", "2"]
    assert values.arms(ctx, conditional, trace=Trace(MAX_TRACE_DEPTH)) == []  # each arm a step past the limit


def test_arms_keep_a_name_the_walk_may_not_follow_further() -> None:
    names = [f"v{i}" for i in range(MAX_TRACE_DEPTH + 2)]
    lines = ["  int v0 = 1;"] + [f"  int {b} = {a};" for a, b in itertools.pairwise(names)]
    ctx = context("__global__ void k(int* out) {\n" + "\n".join(lines) + f"\n  out[0] = {names[-1]};\n}}\n")
    arm = values.arms(ctx, node_at(ctx, names[-1], "identifier", occurrence=1))
    assert [ctx.text(node) for node in arm] == ["v1"]


# --- the macro resolver -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "text", "expected"),
    [
        ("#define FULL 0xffffffff\n#define MASK FULL\nint anchor;\n", "MASK", "0xffffffff"),
        ("#define HW 32\n#define WARP (HW)\nint anchor;\n", "WARP", "32"),  # through parentheses
        ("#define A B\n#define B A\nint anchor;\n", "A", "A"),  # a cycle stops where it started
        ("#define F(x) x\nint anchor;\n", "F", "F"),  # function-like macros are not expanded
        ("#define N 4\nint anchor;\n", "N * 2", "N * 2"),  # an expression is left alone
    ],
)
def test_resolve_text(code: str, text: str, expected: str) -> None:
    ctx = context(code)
    assert ctx.resolve_text(text, node_at(ctx, "anchor", "identifier")) == expected


def test_resolve_sees_macros_as_rocm_does() -> None:
    code = "#ifdef USE_ROCM\n#define WS 64\n#else\n#define WS 32\n#endif\nint v = WS;\n"
    ctx = context(code)
    assert ctx.int_value(node_at(ctx, "WS", "identifier", occurrence=2)) == 64


# --- integer constants -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("constexpr int kSmem = 96 * 1024;\nint s = kSmem;\n", 96 * 1024),
        ("#define TILE 64\n#define BYTES (TILE * sizeof(float) + 16)\nint s = BYTES;\n", 64 * 4 + 16),
        ("int s = sizeof(float) << 3;\n", 32),
        ("int n;\nint s = n * 2;\n", None),
        ("#ifdef USE_ROCM\nconstexpr int k = 1;\n#else\nconstexpr int k = 2;\n#endif\nint s = k;\n", 1),
    ],
)
def test_constant_value(code: str, expected: int | None) -> None:
    ctx = context(code)
    assert constant_value(ctx, initial_value(ctx, "int s")) == expected


def test_macro_value_stops_at_the_depth_limit() -> None:
    chain = (
        "".join(f"#define M{i} (M{i + 1} + 1)\n" for i in range(MAX_TRACE_DEPTH + 1))
        + f"#define M{MAX_TRACE_DEPTH + 1} 0\n"
    )
    ctx = context(chain + "int anchor;\n")
    at = node_at(ctx, "anchor", "identifier")
    # Each name costs a step: from `M2` the walk reaches `M7`'s value at the limit, from `M1` one step past it.
    assert macro_value(ctx, "M2", at) == MAX_TRACE_DEPTH - 1
    assert macro_value(ctx, "M1", at) is None
