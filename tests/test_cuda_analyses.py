"""Front-end questions the C++ rules used to answer themselves: word anchors and quoted macro values
(CudaContext), mask macros and the fix of a `*_sync` call (rocmlint/cuda/masks.py)."""

from __future__ import annotations

from test_cuda_values import context, node_at

from rocmlint.cuda import masks
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
