"""The C++ syntax questions rules ask of tree-sitter's tree (rocmlint/cuda/syntax.py): operands through
parentheses, casts and signs, what an expression is assigned to, loop counters, `&&`/`||` chains, where C++
needs a constant, what a number decides, named constants, and the text patterns used before any parse."""

from __future__ import annotations

import pytest
from test_cuda_values import context, initial_value, node_at

from rocmlint.cuda import syntax


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


_FLAG_UNSET_ON_ROCM = """void f(P p, bool on) {
#ifndef USE_ROCM
  bool have = query(&p);
#else
  bool have = false;
#endif
  bool a = on && have && (p.major >= 12);
  bool b = on && (p.major >= 10);
}
"""


@pytest.mark.parametrize(
    ("change", "skipped"),
    [
        ("", True),  # ROCm's declaration sets it false and nothing ROCm compiles changes it
        ("  have = probe();\n", False),
        ("  have |= probe();\n", False),
        ("  probe(&have);\n", False),
        ("  probe(have);\n", False),  # a callee may bind it to a reference
        ("#ifndef USE_ROCM\n  have = probe();\n#endif\n", True),  # only NVIDIA's code sets it
    ],
)
def test_a_flag_false_wherever_rocm_compiles_it_short_circuits_what_follows(change: str, skipped: bool) -> None:
    ctx = context(_FLAG_UNSET_ON_ROCM.replace("#endif\n  bool a", f"#endif\n{change}  bool a"))
    assert syntax.short_circuited(node_at(ctx, "p.major", "field_expression", 0), ctx) is skipped
    assert not syntax.short_circuited(node_at(ctx, "p.major", "field_expression", 1), ctx)  # `on` may be true


@pytest.mark.parametrize(
    ("text", "matches"),
    [(b"x % 32", True), (b"x %/* lanes */ 0x20u", True), (b"x % 320", False), (b"x % 32.0f", False)],
)
def test_operator_with_literal(text: bytes, matches: bool) -> None:
    assert (syntax.operator_with_literal("%", 32).search(text) is not None) == matches


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
    assert [ctx.text(n) for n in ctx.local_uses(declarator) or []] == ["kMax", "kMax"]
    assert syntax.declares_void_pointer(node_at(ctx, "const void* k", "declaration"), "k", ctx)
    assert not syntax.declares_void_pointer(node_at(ctx, "constexpr float kMax", "declaration"), "kMax", ctx)


def test_number_use() -> None:
    ctx = context(
        "void f(P p) {\n"
        "  if (p.major >= 8) {}\n"
        "  int sm = p.major * 10 + p.minor;\n"
        "  switch (p.major) { default: break; }\n"
        "  g(p.major);\n"
        "}\n"
    )
    uses = [syntax.number_use(node_at(ctx, "p.major", "field_expression", i), ctx) for i in range(4)]
    assert [(use[0], ctx.text(use[1])) if use else None for use in uses] == [
        ("comparison", "p.major >= 8"),
        ("arithmetic", "p.major * 10 + p.minor"),
        ("switch", "switch (p.major) { default: break; }"),
        None,
    ]


def test_disabled_parenthesises_where_precedence_needs_it() -> None:
    ctx = context("bool f(P p, bool force) {\n  bool a = p.major >= 8;\n  return force || p.minor > 0;\n}\n")
    assert syntax.disabled(node_at(ctx, "p.major >= 8", "binary_expression"), ctx) == "false && (p.major >= 8)"
    assert syntax.disabled(node_at(ctx, "p.minor > 0", "binary_expression"), ctx) == "(false && (p.minor > 0))"


def test_named_constants() -> None:
    ctx = context(
        "struct T { static constexpr int kWarpSize = 32; int lanes = 32; };\n"
        "constexpr int A = 1, B = 2;\n"
        "int plain = 3;\n"
        "enum { THREADS_PER_WARP = 32, LAST };\n"
    )

    def names(node_type: str) -> list[tuple[str, str]]:
        found = [
            pair for n in ctx.descendants(ctx.tree.root_node, node_type) for pair in syntax.named_constants(n, ctx)
        ]
        return [(ctx.text(name), ctx.text(value)) for name, value in found]

    assert names("field_declaration") == [("kWarpSize", "32")]
    assert names("declaration") == [("A", "1"), ("B", "2")]
    assert names("enumerator") == [("THREADS_PER_WARP", "32")]


def test_field_types_are_the_member_declarations_rocm_compiles() -> None:
    ctx = context(
        "struct a { half2 ds; float2 dm; };\n"
        "struct b { const half2 ds; };\n"
        "#ifndef USE_ROCM\n"
        "struct c { float2 only_nvidia; };\n"
        "#endif\n"
        "void f(half2 ds) { half2 local; }\n"
    )
    assert ctx.field_types("ds") == {"half2"}  # `const` is a qualifier, not the type; the parameter is no member
    assert ctx.field_types("dm") == {"float2"}
    assert ctx.field_types("only_nvidia") == frozenset()
    assert ctx.field_types("local") == frozenset()


@pytest.mark.parametrize(
    ("code", "defined"),
    [
        ("struct half2 { half x, y; };\n", True),
        ("struct __half2 : base { };\n", True),
        ("typedef struct { short x, y; } half2;\n", True),
        ("namespace n { using __half2 = float2; }\n", True),
        ("struct half2;\n", False),  # declared, not defined: the members are someone else's
        ("typedef half2 pair_t;\nhalf2 v;\n", False),  # used, not defined
        ('// struct half2 { half x, y; };\nconst char* s = "using half2 = x;";\n', False),
        ("struct my_half2 { half x, y; };\n", False),  # a longer name
    ],
)
def test_defines_type(code: str, defined: bool) -> None:
    assert syntax.defines_type(context(code), "half2", "__half2") is defined


def test_launches_kernels_marks_host_functions_by_their_launches() -> None:
    ctx = context(
        "void a(float* x) { k<<<1, 64>>>(x); int w = 1; }\n"
        "void b(float* x) { hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, x); int w = 2; }\n"
        "DEVICE_INLINE int c() { int w = 3; return w; }\n"
    )
    assert [syntax.launches_kernels(initial_value(ctx, f"int w = {n}"), ctx) for n in (1, 2, 3)] == [True, True, False]
