"""The C++ front end's shared analyses: the value tracer and its one depth policy, the macro resolver, integer
constants (rocmlint/cuda/values.py), and the syntax and warp questions rules ask (rocmlint/cuda/syntax.py,
rocmlint/cuda/warp.py)."""

from __future__ import annotations

import itertools

import pytest

from rocmlint.cuda import syntax, values, warp
from rocmlint.cuda.conditions import chains_around
from rocmlint.cuda.frontend import CudaContext, CudaOptions, Node
from rocmlint.cuda.hip_gaps import asm_template, macro_asm_template, ptx_in
from rocmlint.cuda.preprocessor import VendorMacros, analyse, parse_int
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


# --- syntax ---------------------------------------------------------------------------------------------


def test_bare_assigned_name_and_loop_counter() -> None:
    ctx = context(
        "__global__ void k() {\n  int lane = (int)(threadIdx.x & 31);\n  for (int o = 16; o > 0; o /= 2) {}\n}\n"
    )
    split = node_at(ctx, "threadIdx.x & 31", "binary_expression")
    assert syntax.assigned_name(split, ctx) == "lane"
    assert ctx.text(syntax.bare(initial_value(ctx, "int lane"))) == "threadIdx.x & 31"
    counter = syntax.loop_counter(node_at(ctx, "for", "for_statement"), ctx)
    assert counter is not None and counter[0] == "o" and ctx.int_value(counter[1]) == 16


def test_outermost_and_without_parentheses() -> None:
    ctx = context("void f(int c) {\n  float a = -(448.f);\n  int b = ((int)(c /* why */));\n}\n")
    number = node_at(ctx, "448.f", "number_literal")
    assert ctx.text(syntax.outermost_signed(number)) == "-(448.f)"
    name = node_at(ctx, "(c /* why */)", "parenthesized_expression").named_children[0]
    assert ctx.text(syntax.outermost(name)) == "((int)(c /* why */))"
    assert syntax.without_parentheses(syntax.outermost(name)).type == "cast_expression"
    cast_value = syntax.without_parentheses(syntax.outermost(name)).child_by_field_name("value")
    assert cast_value is not None and syntax.without_parentheses(cast_value) == name


@pytest.mark.parametrize(
    ("code", "name", "expected"),
    [
        ("template <int N> struct S {};\nS<warpSize> s;\n", "warpSize", "a template argument"),
        ("__global__ void k() { __shared__ float b[warpSize]; }\n", "warpSize", "an array size"),
        ("constexpr int w = warpSize;\n", "warpSize", "a `constexpr` initialiser"),
        ("__global__ void k(int* o) { o[0] = warpSize; }\n", "warpSize", None),
    ],
)
def test_constant_context(code: str, name: str, expected: str | None) -> None:
    ctx = context(code)
    identifier = next(n for n in syntax.identifiers_in(ctx, ctx.tree.root_node) if ctx.text(n) == name)
    assert syntax.constant_context(identifier, ctx) == expected


def test_largest_terms_and_whole_condition() -> None:
    ctx = context("void f(P p, bool force) {\n  if (force || (p.major >= 8 && p.minor >= 0)) {}\n}\n")
    comparison = node_at(ctx, "p.major >= 8", "binary_expression")
    whole = syntax.whole_condition(comparison, ctx)
    assert ctx.text(whole) == "force || (p.major >= 8 && p.minor >= 0)"
    terms = syntax.largest_terms(whole, ctx, lambda test: "major" in ctx.text(test) or "minor" in ctx.text(test))
    assert [ctx.text(t) for t in terms] == ["(p.major >= 8 && p.minor >= 0)"]


def test_short_circuited() -> None:
    ctx = context("void f(P p) {\n  bool a = false && (p.major >= 8);\n  bool b = p.major >= 8;\n}\n")
    assert syntax.short_circuited(node_at(ctx, "p.major", "field_expression", 0), ctx)
    assert not syntax.short_circuited(node_at(ctx, "p.major", "field_expression", 1), ctx)


@pytest.mark.parametrize(
    ("text", "matches"),
    [(b"x % 32", True), (b"x %/* lanes */ 0x20u", True), (b"x % 320", False), (b"x % 32.0f", False)],
)
def test_operator_with_literal(text: bytes, matches: bool) -> None:
    assert (syntax.operator_with_literal("%", 32).search(text) is not None) == matches
    assert parse_int("0x20u") == 32


# --- warp ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("int t = threadIdx.x;\nint v = t + 1;\n", True),
        ("int t = blockIdx.x * blockDim.x + threadIdx.x;\nint v = t;\n", False),
        ("int lane_id;\nint v = lane_id;\n", True),
        ("int count;\nint v = count;\n", False),
    ],
)
def test_is_thread_index(code: str, expected: bool) -> None:
    ctx = context("__global__ void k() {\n" + code + "}\n")
    assert warp.is_thread_index(initial_value(ctx, "int v"), ctx) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("WARP_SIZE", True),
        ("kWarpSize", True),
        ("THREADS_PER_WARP", True),
        ("C10_WARP_SIZE", False),
        ("warp_id", False),
    ],
)
def test_is_warp_constant_name(name: str, expected: bool) -> None:
    assert warp.is_warp_constant_name(name) == expected


def test_reduction_over_32_lanes() -> None:
    loop = "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o{width});\n"
    for width, expected in (("", "o"), (", 32", None)):
        ctx = context("__device__ float r(float v) {\n" + loop.format(width=width) + "  return v;\n}\n")
        assert warp.reduction_over_32_lanes(node_at(ctx, "for", "for_statement"), ctx) == expected


def test_in_wave_selector() -> None:
    ctx = context("#if defined(__GFX9__)\n#define W 64\n#else\nint a;\n#endif\nint b;\n")
    assert warp.in_wave_selector(ctx, node_at(ctx, "a", "identifier"))
    assert not warp.in_wave_selector(ctx, node_at(ctx, "b", "identifier"))


def test_chains_around_with_and_without_later_arms() -> None:
    ctx = context("#if defined(A)\nint a;\n#elif defined(__gfx942__)\nint b;\n#endif\nint c;\n")
    at_a = node_at(ctx, "a", "identifier").start_byte
    assert chains_around(ctx, at_a, later_arms=True) == [["defined(A)", "defined(__gfx942__)"]]
    assert chains_around(ctx, at_a, later_arms=False) == [["defined(A)"]]
    assert chains_around(ctx, node_at(ctx, "c", "identifier").start_byte, later_arms=True) == []


def test_asm_template_expands_string_macros() -> None:
    ctx = context(
        '#define LANE_ASM "mov.u32 %0, %%laneid;"\n__device__ unsigned f() { unsigned r; asm(LANE_ASM : "=r"(r)); return r; }\n'
    )
    asm = node_at(ctx, "asm(", "gnu_asm_expression")
    template = asm_template(ctx, ctx.text(asm), asm)
    assert "%%laneid" in template and ptx_in(template) == ("%%laneid", "laneid")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param('asm volatile("bar.sync 0;")', "bar.sync 0;", id="asm-volatile"),
        # The literals written, then the string macros they name (enough to recognise the instruction).
        pytest.param('__asm__ __volatile__(PREFIX ".u32 %0;" : "=r"(r))', ".u32 %0; =r ld.global", id="string-macro"),
        pytest.param("do { x = 1; } while (0)", None, id="no-asm"),
        pytest.param("asm_helper(x)", None, id="asm-word-only"),
    ],
)
def test_macro_asm_template(body: str, expected: str | None) -> None:
    """The asm template of a macro body, completed by the file's string macros (the body expands later)."""
    ctx = context(f'#define PREFIX "ld.global"\n#define BODY(r) {body}\nint anchor;\n')
    define = ctx.preprocessor.defines["BODY"][0]
    assert macro_asm_template(ctx, define) == expected


def test_qualified_segments_drop_template_arguments() -> None:
    ctx = context("nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half> a;\n")
    outer = node_at(ctx, "nvcuda::wmma::fragment", "qualified_identifier")
    while outer.parent is not None and outer.parent.type == "qualified_identifier":
        outer = outer.parent
    assert syntax.qualified_segments(outer, ctx) == ["nvcuda", "wmma", "fragment"]


def test_local_uses_and_void_pointers() -> None:
    ctx = context(
        "void f(float x) {\n  constexpr float kMax = 448.f;\n  const void* k = nullptr;\n  x = fminf(x, kMax) + kMax;\n}\n"
    )
    declarator = node_at(ctx, "kMax = 448.f", "init_declarator")
    assert [ctx.text(n) for n in syntax.local_uses(declarator, ctx) or []] == ["kMax", "kMax"]
    assert syntax.declares_void_pointer(node_at(ctx, "const void* k", "declaration"), "k", ctx)
    assert not syntax.declares_void_pointer(node_at(ctx, "constexpr float kMax", "declaration"), "kMax", ctx)
