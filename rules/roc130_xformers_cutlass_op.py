"""ROC130 xformers-cutlass-op."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.rule import Invalid, Rule, Valid

# xformers' CUTLASS-backed attention operators: the `FwOp`/`BwOp` classes of `xformers.ops.fmha.cutlass` and the
# operator pairs built from them (`MemoryEfficientAttentionCutlassOp`, `MemoryEfficientAttentionCutlassFwdFlashBwOp`),
# exported by `xformers.ops` and `xformers.ops.fmha`.
_CUTLASS_MODULE_OP = re.compile(r"^xformers\.ops\.fmha\.cutlass\.(?:FwOp|BwOp)$")
_CUTLASS_PAIR = re.compile(r"^xformers\.ops(?:\.fmha)?\.MemoryEfficientAttentionCutlass\w*Op$")
# The decoding operator of `xformers.ops.fmha.decoder`, built from CUDA C++ too (`csrc/attention/cuda/fmha/decoder.cu`);
# ROCm builds have `xformers.ops.fmha.ck_decoder` in its place.
_DECODER_OP = re.compile(r"^xformers\.ops\.fmha\.decoder\.FwOp$")
# Calls that take an operator out of a collection or test what an object is: naming the CUTLASS operator there
# does not choose it.
_NOT_CHOOSING_CALLS = frozenset({"remove", "discard", "isinstance", "issubclass", "index", "count"})
_MESSAGE = (
    "`{}` is xformers' CUTLASS attention operator, which ROCm builds of xformers do not compile (they provide the "
    "Composable Kernel ops `xformers.ops.fmha.ck` instead), so choosing it for every GPU fails or finds no "
    "operator on AMD GPUs; choose it only when torch.version.cuda is set and the CK operator otherwise"
)
_DECODER_MESSAGE = (
    "`{}` is xformers' CUDA decoder operator, which ROCm builds of xformers do not compile (they provide "
    "`xformers.ops.fmha.ck_decoder.FwOp` instead), so choosing it for every GPU fails or finds no operator on AMD "
    "GPUs; choose it only when torch.version.cuda is set and the CK decoder otherwise"
)


class XformersCutlassOp(Rule):
    """
    ## What it does
    Flags xformers' CUTLASS attention operators chosen in code ROCm runs: `xformers.ops.fmha.cutlass.FwOp`/`BwOp`
    (also through `from xformers.ops.fmha import cutlass`, and inside xformers through `from . import cutlass`)
    and the operator pairs `xformers.ops.MemoryEfficientAttentionCutlassOp` and
    `MemoryEfficientAttentionCutlassFwdFlashBwOp`, and the CUDA decoding operator `xformers.ops.fmha.decoder.FwOp`
    (its ROCm twin is `ck_decoder.FwOp`), passed as `op=`, put in a priority list or a test's
    parametrization, or stored for later use. Not flagged: a choice only NVIDIA makes (`cutlass.FwOp if
    torch.version.cuda else ck.FwOp`, a branch on `torch.version.hip`), comparing an operator with it (`op is
    cutlass.FwOp`, `isinstance`), removing it from a list, reading its attributes (`cutlass.FwOp.ERROR_ATOL`), and
    defining operator pairs at module level (`MemoryEfficientAttentionCutlassOp = (cutlass.FwOp, cutlass.BwOp)`):
    their users choose.

    ## Why is this bad on ROCm?
    ROCm builds of xformers compile the Composable Kernel attention operators (`xformers.ops.fmha.ck`,
    `ck_decoder`, `ck_splitk`), not the CUTLASS ones, which are CUDA C++: the CUTLASS operator reports itself
    unsupported on AMD GPUs, so `memory_efficient_attention(..., op=MemoryEfficientAttentionCutlassOp)` raises
    and a priority list holding only it and other CUDA-only operators finds none (facebookresearch/xformers#978,
    #1175, #1365; xformers' own ROCm port keeps the CUTLASS operator under `if torch.version.cuda` and picks
    `ck.FwOp` otherwise).

    ## Example
    ```python
    import xformers.ops as xops

    out = xops.memory_efficient_attention(q, k, v, op=xops.MemoryEfficientAttentionCutlassOp)
    ```

    ## Fix
    ```python
    import torch
    import xformers.ops as xops

    op = xops.MemoryEfficientAttentionCutlassOp if torch.version.cuda else xops.MemoryEfficientAttentionCkOp
    out = xops.memory_efficient_attention(q, k, v, op=op)
    ```

    ## Fix safety
    No automatic fix: whether the CK operator supports the same inputs (dtypes, biases, head sizes) depends on
    the call.
    """

    code = "ROC130"
    name = "xformers-cutlass-op"
    severity = Severity.WARNING
    applies_to_tests = True  # a suite parametrized with the CUTLASS operator fails on every AMD GPU
    fix_availability = FixAvailability.NONE
    triggers = (b"cutlass", b"Cutlass", b"decoder")
    also_requires = (b"xformers", b"from . import", b"from .")

    def visit_Attribute(self, node: ast.Attribute, ctx: PythonContext) -> None:
        self._check(node, ctx)

    def visit_Name(self, node: ast.Name, ctx: PythonContext) -> None:
        binding = ctx.semantic.lookup(node.id, node)
        if binding is not None and binding.kind == "import":  # a variable holding it is reported where assigned
            self._check(node, ctx)

    def _check(self, node: ast.Attribute | ast.Name, ctx: PythonContext) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        name = ctx.qualified_name(node) or ""
        if _CUTLASS_MODULE_OP.match(name) or _CUTLASS_PAIR.match(name):
            message = _MESSAGE
        elif _DECODER_OP.match(name):
            message = _DECODER_MESSAGE
        else:
            return
        if _chooses(node, ctx):
            ctx.report(node, message.format(name))


def _chooses(node: ast.expr, ctx: PythonContext) -> bool:
    """Whether naming the operator here chooses it: not a comparison, a removal, an attribute read or a module-level
    definition of an operator pair."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Attribute):
        return False  # `cutlass.FwOp.ERROR_ATOL`, or `cutlass` as part of a longer name
    holder: ast.AST | None = node
    while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        holder, parent = parent, ctx.parent(parent)
    if isinstance(parent, ast.Compare):
        return False
    if isinstance(parent, ast.Call) and holder is not parent.func and last_name(parent.func) in _NOT_CHOOSING_CALLS:
        return False
    if isinstance(holder, ast.Tuple) and isinstance(parent, ast.Assign):
        return not ctx.semantic.is_module_level(parent)
    return True


XformersCutlassOp.valid = (
    # Chosen only on NVIDIA: a conditional expression, a branch, an early return for ROCm.
    Valid(
        """
        import torch
        import xformers.ops as xops
        from xformers.ops.fmha import ck, cutlass
        ALL_FW_OPS = [cutlass.FwOp if torch.version.cuda else ck.FwOp]
        def attention(q, k, v):
            if torch.version.hip:
                return xops.memory_efficient_attention(q, k, v, op=xops.MemoryEfficientAttentionCkOp)
            return xops.memory_efficient_attention(q, k, v, op=xops.MemoryEfficientAttentionCutlassOp)
        """,
    ),
    # Comparing with it, removing it, reading its attributes, defining an operator pair.
    Valid(
        """
        from xformers.ops import fmha
        from xformers.ops.fmha import cutlass, flash
        MemoryEfficientAttentionCutlassFwdFlashBwOp = (cutlass.FwOp, flash.BwOp)
        def check(op, ops, out, ref):
            if op is fmha.cutlass.FwOp or op in (cutlass.FwOp, cutlass.BwOp) or isinstance(op, cutlass.FwOp):
                ops.remove(cutlass.FwOp)
            assert (out - ref).abs().max() < fmha.cutlass.FwOp.ERROR_ATOL[out.dtype]
        """,
    ),
    # Other operators; a name that only looks like it.
    Valid(
        """
        import xformers.ops as xops
        from vllm import _custom_ops as ops
        out = xops.memory_efficient_attention(q, k, v, op=xops.fmha.ck.FwOp)
        y = ops.cutlass_scaled_mm(a, b, scale_a, scale_b, out_dtype)
        cutlass = None
        """,
    ),
    # The decoder chosen only on NVIDIA, its ROCm twin otherwise.
    Valid(
        """
        import torch
        from xformers.ops.fmha import ck_decoder, decoder
        DECODER_OP = decoder.FwOp if torch.version.cuda else ck_decoder.FwOp
        """,
    ),
)
XformersCutlassOp.invalid = (
    Invalid(
        """
        import xformers.ops as xops
        out = xops.memory_efficient_attention(q, k, v, op=xops.MemoryEfficientAttentionCutlassOp)
        """,
        expect=("2:51-2:89",),
        message="ROCm builds of xformers do not compile",
    ),
    # A priority list and a list of every operator, the operators imported by name; appended at the front.
    Invalid(
        """
        from collections import deque
        from xformers.ops.fmha import flash, small_k, triton
        from xformers.ops.fmha.cutlass import FwOp as CutlassFwOp
        ALL_FW_OPS = [
            CutlassFwOp,
            flash.FwOp,
        ]
        def _dispatch_fw_priority_list(inp):
            priority_list_ops = deque([flash.FwOp, triton.FwOp, small_k.FwOp])
            if inp.fast_cutlass:
                priority_list_ops.remove(CutlassFwOp)
                priority_list_ops.appendleft(CutlassFwOp)
            return priority_list_ops
        """,
        expect=("5:5-5:16", "12:38-12:49"),
    ),
    # The CUDA decoder put first for every GPU (inside xformers: `from . import decoder`).
    Invalid(
        """
        from collections import deque
        from xformers.ops.fmha import decoder, flash
        def _dispatch_fw_priority_list(inp, needs_gradient):
            priority_list_ops = deque([flash.FwOp])
            if not needs_gradient:
                priority_list_ops.appendleft(decoder.FwOp)
            return priority_list_ops
        """,
        expect=("6:38-6:50",),
        message="CUDA decoder operator",
    ),
    # A test parametrized with the CUTLASS operators; one stored for a benchmark.
    Invalid(
        """
        import pytest
        import xformers.ops
        from xformers.ops import fmha
        @pytest.mark.parametrize(
            "op",
            [
                xformers.ops.MemoryEfficientAttentionFlashAttentionOp,
                xformers.ops.MemoryEfficientAttentionCutlassOp,
            ],
        )
        def test_checkpoint_attention(op):
            run(op)
        def bench():
            fwd_op = fmha.cutlass.FwOp
            return fwd_op
        """,
        expect=("8:9-8:55", "14:14-14:31"),
        path="tests/test_checkpoint.py",
    ),
)
