"""Front-end questions the C++ rules used to answer themselves: word anchors and quoted macro values
(CudaContext), mask macros and the fix of a `*_sync` call (rocmlint/cuda/masks.py), device-property fields and
device attributes (rocmlint/cuda/device_query.py), what a number decides, a disabled test and named constants
(rocmlint/cuda/syntax.py), lane splits and unrolled butterflies (rocmlint/cuda/warp.py)."""

from __future__ import annotations

import re

from test_cuda_values import context, node_at

from rocmlint.cuda import device_query, masks, syntax, warp
from rocmlint.cuda.frontend import CudaContext, Define


def _defines(ctx: CudaContext) -> list[Define]:
    return sorted(
        (d for defines in ctx.preprocessor.defines.values() for d in defines), key=lambda d: d.directive.start_byte
    )


# --- the context ---------------------------------------------------------------------------------------------
def test_word_offsets_skip_names_never_spelled_as_a_word() -> None:
    ctx = context("void f() { __shfl_sync(m, v, 0); g(__syncwarp_all); }\n")
    assert ctx.word_offsets("__shfl_sync", "__syncwarp") == [ctx.content.index(b"__shfl_sync")]
    assert ctx.word_offsets("__ballot_sync") == []


def test_quoted_shows_what_a_macro_stands_for() -> None:
    ctx = context("#define FULL_MASK 0xffffffff\nvoid f() { g(FULL_MASK, 0xff); }\n")
    assert ctx.quoted(node_at(ctx, "FULL_MASK", "identifier", 1)) == "`FULL_MASK` (= `0xffffffff`)"
    assert ctx.quoted(node_at(ctx, "0xff", "number_literal", 1)) == "`0xff`"


# --- masks ---------------------------------------------------------------------------------------------------
def test_mask_macro_used_elsewhere() -> None:
    header = context("#define FINAL_MASK 0xffffffff\n#define LOW_MASK 0xffffffff\n#define HALF_MASK 0xffff\n")
    assert [d.name for d in _defines(header) if masks.mask_macro_used_elsewhere(d, header)] == ["FINAL_MASK"]
    used = context("#define FINAL_MASK 0xffffffff\n__device__ void f() { __syncwarp(FINAL_MASK); }\n")
    assert not any(masks.mask_macro_used_elsewhere(d, used) for d in _defines(used))


def test_sync_fix_only_for_full_warp_masks() -> None:
    ctx = context(
        "__device__ float f(float v, unsigned m) {\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n  return v;\n}\n"
    )
    fix = masks.sync_fix(node_at(ctx, "__shfl_xor_sync", "call_expression"), ctx)
    assert fix is not None and fix.message == "call `__shfl_xor` without the mask on ROCm"
    assert "v += __shfl_xor(v, 1);" in "".join(edit.content for edit in fix.edits)
    partial = context("__device__ float f(float v, unsigned m) {\n  return __shfl_xor_sync(m & 3, v, 1);\n}\n")
    assert masks.sync_fix(node_at(partial, "__shfl_xor_sync", "call_expression"), partial) is None


# --- device queries ------------------------------------------------------------------------------------------
def test_property_fields_of_device_properties_only() -> None:
    ctx = context(
        "struct Version { int major; };\n"
        "void f(const cudaDeviceProp* p, Version v, Params params) {\n"
        "  auto dprops = at::cuda::getCurrentDeviceProperties();\n"
        "  g(p->major, v.major, dprops->minor, params.props->major, at::cuda::getCurrentDeviceProperties()->major);\n"
        "}\n"
    )
    fields = [n for n in ctx.descendants(ctx.tree.root_node, "field_expression") if ctx.text(n).endswith("major")]
    fields += [node_at(ctx, "dprops->minor", "field_expression")]
    found = {ctx.text(n): device_query.is_property_field(n, ctx, ("major", "minor")) for n in fields}
    assert found == {
        "p->major": True,
        "v.major": False,
        "params.props->major": True,
        "at::cuda::getCurrentDeviceProperties()->major": True,
        "dprops->minor": True,
    }


def test_holds_attribute_after_the_getter_in_the_same_function() -> None:
    ctx = context(
        "int f(int dev) {\n"
        "  int major = 0, count = 0;\n"
        "  g(major);\n"
        "  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);\n"
        "  cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev);\n"
        "  return major + count;\n"
        "}\n"
        "int h(int major) { return major; }\n"
    )
    capability = re.compile(r"ComputeCapability")

    def holds(text: str, occurrence: int) -> bool:
        return device_query.holds_attribute(node_at(ctx, text, "identifier", occurrence), ctx, capability)

    assert [holds("major", i) for i in (1, 3, 4, 5)] == [False, True, False, False]
    assert not holds("count", 2)


# --- syntax --------------------------------------------------------------------------------------------------
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


# --- warps ---------------------------------------------------------------------------------------------------
def test_lane_splits_and_their_anchors() -> None:
    ctx = context("__global__ void k(int n) {\n  int a = threadIdx.x >> 5, b = n & 0x1f, c = n % 320, d = n / 32;\n}\n")
    splits = [warp.lane_split(n, ctx) for n in ctx.descendants(ctx.tree.root_node, "binary_expression")]
    assert sorted((ctx.text(left), operator) for left, operator in filter(None, splits)) == [
        ("n", "&"),
        ("n", "/"),
        ("threadIdx.x", ">>"),
    ]
    assert sorted(warp.split_offsets(ctx)) == [ctx.content.index(text) for text in (b">> 5", b"& 0x1f", b"/ 32")]


def test_is_lane_or_warp_name() -> None:
    assert [warp.is_lane_or_warp_name(name) for name in ("lane_id", "wid", "warp", "offset", None)] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_unrolled_from_16() -> None:
    ctx = context(
        "__device__ float f(float v) {\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16);\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16, 32);\n"
        "  v += __shfl_up_sync(0xffffffff, v, 16);\n"
        "  return v + __shfl_xor(v, 8);\n"
        "}\n"
    )
    calls = ctx.descendants(ctx.tree.root_node, "call_expression")
    assert [warp.unrolled_from_16(call, ctx) for call in sorted(calls, key=lambda n: n.start_byte)] == [
        "__shfl_xor_sync",
        None,
        None,
        None,
    ]
