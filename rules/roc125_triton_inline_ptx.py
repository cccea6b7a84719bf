"""ROC125 triton-inline-ptx."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from rocmlint.cuda.hip_gaps import ptx_in
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, report_site
from rocmlint.rule import Invalid, Rule, Valid


@dataclass(frozen=True)
class _AsmApi:
    """Where an inline-asm API takes its asm text and constraints (keyword, position or None)."""

    asm_keyword: str
    asm_position: int | None
    constraints_position: int | None


_TRITON_STYLE = _AsmApi("asm", 0, 1)  # inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)
# torch's higher-order op takes the tensors positionally: inline_asm_elementwise(*inputs, asm_str=..., constraints=...)
_TORCH_HOP = _AsmApi("asm_str", None, None)
_APIS = {
    "triton.language.inline_asm_elementwise": _TRITON_STYLE,
    "triton.language.core.inline_asm_elementwise": _TRITON_STYLE,
    "helion.language.inline_asm_elementwise": _TRITON_STYLE,
    "torch._higher_order_ops.inline_asm_elementwise": _TORCH_HOP,
    "torch._higher_order_ops.inline_asm_elementwise.inline_asm_elementwise": _TORCH_HOP,
}

# NVPTX register constraint letters (h: 16-bit, r: 32-bit, l: 64-bit, f: f32, d: f64, b/c: predicates,
# q: 128-bit); AMDGPU uses v/s/a, and immediates (i, n) and ties (0) are shared.
_PTX_CONSTRAINT_LETTERS = frozenset("bchrlfdq")


class TritonInlinePtx(Rule):
    """
    ## What it does
    Flags Triton `tl.inline_asm_elementwise(...)` calls whose asm is PTX, outside code gated for ROCm.

    Covers any alias of `triton.language`, Helion's `hl.inline_asm_elementwise` and torch's
    `inline_asm_elementwise` higher-order op. PTX means dotted PTX instructions (`cvt.rn.f16x2.f32`,
    `mov.b32`, `ex2.approx.f32`, `lop3.b32`), `.reg` declarations or PTX special registers (`%smid`).
    When the asm text cannot be read, NVPTX register constraints (`"=f,f"`, `"=r,r,r"`, `"=h"`, `"=l"`)
    are flagged instead. AMDGCN asm (`v_cvt_f32_f16 $0, $1` with `"=v,v"`) and code gated for ROCm
    (`torch.version.hip`, `get_current_target().backend == "hip"`) or under Triton's `target_info.
    cuda_capability_geq(...)`, false for a HIP target, are not flagged; nor are modules that only run on
    NVIDIA (README, "What gated means"): one importing `nvshmem` at module level, or a `language/extra/cuda/`
    folder beside `language/extra/hip/` when the project imports one or the other by vendor.

    ## Why is this bad on ROCm?
    The asm text is pasted into the LLVM IR that the AMDGPU backend compiles: PTX instructions and the
    NVPTX constraint letters mean nothing there, so compilation fails with "couldn't allocate output
    register for constraint 'f'", and some builds abort the process inside LLVM instead of raising.
    Sources: state-spaces/mamba#1018, sgl-project/sglang#34351, triton-lang/triton-windows#45;
    pytorch/pytorch#180257 added AMDGCN equivalents behind `torch.version.hip`.

    ## Example
    ```python
    @triton.jit
    def fast_cos(x):
        return tl.inline_asm_elementwise(
            "cos.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    ```

    ## Fix
    ```python
    @triton.jit
    def fast_cos(x, IS_HIP: tl.constexpr):
        if IS_HIP:
            return tl.cos(x)
        return tl.inline_asm_elementwise(
            "cos.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    ```

    ## Fix safety
    No automatic fix: the ROCm replacement (`tl.math`/libdevice function, or AMDGCN asm with `v`
    constraints) has to be chosen per instruction and checked for accuracy.
    """

    code = "ROC125"
    name = "triton-inline-ptx"
    severity = Severity.ERROR
    applies_to_tests = True  # PTX in a test's Triton kernel fails to compile on ROCm
    fix_availability = FixAvailability.NONE
    triggers = (b"inline_asm_elementwise",)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if last_name(node.func) != "inline_asm_elementwise":
            return
        api = _APIS.get(ctx.qualified_name(node.func) or "")
        if api is None:
            return
        asm = ctx.semantic.argument(node, api.asm_keyword, api.asm_position)
        if asm is not None and _report_ptx(asm, _has_ptx, ctx):
            return  # the asm text is known: its constraints say nothing more
        constraints = ctx.semantic.argument(node, "constraints", api.constraints_position)
        if constraints is not None:
            _report_ptx(constraints, _has_ptx_constraints, ctx)


def _report_ptx(value: ast.expr, is_ptx: Callable[[str], bool], ctx: PythonContext) -> bool:
    """Report each text `value` may be that `is_ptx`; True when any of its texts is known."""
    texts = ctx.values.texts(value)
    for text, literal in texts:
        if is_ptx(text):
            ctx.report(report_site(ctx, literal, value), _message(), gate_on=(literal,))
    return bool(texts)


def _has_ptx(asm: str) -> bool:
    """PTX instructions, declarations or special registers: the C++ front end's recogniser (ROC203's)."""
    return ptx_in(asm) is not None


def _has_ptx_constraints(constraints: str) -> bool:
    for constraint in constraints.split(","):
        letters = constraint.strip().lstrip("=+&*")
        if len(letters) == 1 and letters in _PTX_CONSTRAINT_LETTERS:
            return True
    return False


def _message() -> str:
    return (
        "PTX in inline_asm_elementwise cannot be compiled for AMD GPUs (the AMDGPU backend rejects PTX and "
        'NVPTX constraints like "=f"); on ROCm use a tl.math/libdevice function or AMDGCN asm with "v" '
        "constraints under torch.version.hip"
    )


TritonInlinePtx.valid = (
    Valid(  # TYPE_CHECKING is False at run time: the PTX helper is defined off ROCm only
        """
        from typing import TYPE_CHECKING
        import torch, triton
        import triton.language as tl

        if TYPE_CHECKING or torch.version.hip is None:
            @triton.jit
            def fast_cos(x):
                return tl.inline_asm_elementwise("cos.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
        """
    ),
    Valid(  # a module importing NVSHMEM's Python bindings at module level cannot be imported on ROCm at all
        """
        import nvshmem.core
        import triton
        import triton.language as tl

        @triton.jit
        def ld_acquire(ptr):
            return tl.inline_asm_elementwise(
                "ld.global.acquire.gpu.b32 $0, [$1];", "=r,l", [ptr], dtype=tl.int32, is_pure=False, pack=1
            )
        """
    ),
    Valid(  # the PTX helper only feeds the NVIDIA arm of a vendor selection
        """
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def _tid():
            return tl.inline_asm_elementwise("mov.u32 $0, %tid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)

        @triton.jit
        def _sync_cuda(flag):
            tid = _tid()

        @triton.jit
        def _sync_rocm(flag):
            pass

        symm_mem_sync = _sync_rocm if torch.version.hip is not None else _sync_cuda
        """,
    ),
    # Triton's target helper is false for a HIP target: the branch is pruned when the kernel is compiled for ROCm.
    Valid(
        """
        import triton
        import triton.language as tl
        from triton.language.target_info import cuda_capability_geq

        @triton.jit
        def _to_e2m1(x, is_fp4: tl.constexpr):
            if is_fp4 and cuda_capability_geq(10, 0):
                return tl.inline_asm_elementwise("cvt.rn.f16.f32 $0, $1;", "=h,r", [x], dtype=tl.float16, is_pure=True, pack=1)
            return x.to(tl.float16)
        """,
    ),
    # AMDGCN asm with VGPR constraints is what ROCm needs.
    Valid(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def _materialize(x):
            return tl.inline_asm_elementwise("v_mov_b32 $0, $1", "=v,v", [x], dtype=tl.float32, is_pure=True, pack=1)

        @triton.jit
        def _log2e_scale(x):
            return tl.inline_asm_elementwise(
                "v_mul_f32_e32 $0, 0x3fb8aa3b, $1;", "=v,v", [x], dtype=tl.float32, is_pure=True, pack=1
            )
        """,
    ),
    Valid(
        """
        import torch
        import triton
        import triton.language as tl

        IS_HIP = torch.version.hip is not None

        @triton.jit
        def fast_rsqrt(x):
            if IS_HIP:
                return tl.math.rsqrt(x)
            return tl.inline_asm_elementwise(
                "rsqrt.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
            )
        """,
    ),
    Valid(
        """
        import triton
        import triton.language as tl
        from triton.runtime import driver

        if driver.active.get_current_target().backend == "hip":
            CVT_ASM, CVT_CONSTRAINTS = "v_cvt_pk_f32_bf16 $0, $1", "=v,v"
        else:
            @triton.jit
            def cvt(x):
                return tl.inline_asm_elementwise(
                    "cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [x, x], dtype=tl.bfloat16, is_pure=True, pack=2
                )
        """,
    ),
    Valid(
        """
        import torch
        import triton.language as tl

        ON_ROCM = bool(torch.version.hip)
        TANH_ASM = "v_tanh_f32 $0, $1" if ON_ROCM else "tanh.approx.f32 $0, $1;"
        TANH_CONSTRAINTS = "=v,v" if ON_ROCM else "=f,f"

        def tanh(x):
            return tl.inline_asm_elementwise(TANH_ASM, TANH_CONSTRAINTS, [x], dtype=tl.float32, is_pure=True, pack=1)
        """,
    ),
    # PTX in a docstring, a comment and a log message; a different asm API.
    Valid(
        """
        import logging
        import triton.language as tl

        def sigmoid(x):
            \"\"\"Was tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", ...) before ROCm support.\"\"\"
            # tanh_half = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", constraints="=f,f", args=[x])
            logging.debug("skipping tanh.approx.f32 on this target")
            return tl.sigmoid(x)
        """,
    ),
)
TritonInlinePtx.invalid = (
    Invalid(  # the look-alike picks the PTX arm on ROCm too
        """
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def _tid():
            return tl.inline_asm_elementwise("mov.u32 $0, %tid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)

        @triton.jit
        def _sync_cuda(flag):
            tid = _tid()

        @triton.jit
        def _sync_rocm(flag):
            pass

        symm_mem_sync = _sync_cuda
        """,
        expect=("7:38-7:59",),
    ),
    Invalid(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def cos_approx(x):
            return tl.inline_asm_elementwise(
                "cos.approx.f32 $0, $1;",
                "=f,f",
                [x],
                dtype=tl.float32,
                is_pure=True,
                pack=1,
            )
        """,
        expect=("7:9-7:33",),
        message="PTX",
    ),
    Invalid(
        """
        import triton
        from triton import language as tlang

        @triton.jit
        def fp32_to_e2m1(x):
            return tlang.inline_asm_elementwise(
                asm=\"\"\"
                {
                .reg .b8 t;
                cvt.rn.satfinite.e2m1x2.f32 t, $1, $2;
                cvt.u32.u8 $0, t;
                }
                \"\"\",
                constraints="=r,r,r",
                args=[x, x],
                dtype=tlang.uint8,
                is_pure=True,
                pack=1,
            )
        """,
        expect=("7:13-13:12",),
    ),
    Invalid(
        """
        import triton
        import triton.language as tl

        DIV_RN = "div.rn.f32 $0, $1, $2;"

        @triton.jit
        def _ieee_div(x, y):
            return tl.inline_asm_elementwise(DIV_RN, "=r,r,r", [x, y], dtype=tl.float32, is_pure=True, pack=1)
        """,
        expect=("8:38-8:44",),
    ),
    Invalid(
        """
        import triton
        from triton.language import inline_asm_elementwise, int32

        @triton.jit
        def smid():
            return inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=int32, is_pure=True, pack=1)
        """,
        expect=("6:35-6:55",),
    ),
    # The asm text is built elsewhere: the NVPTX constraints give it away.
    Invalid(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def apply(x, ASM: tl.constexpr):
            return tl.inline_asm_elementwise(ASM, constraints="=f,f", args=[x], dtype=tl.float32, is_pure=True, pack=1)
        """,
        expect=("6:55-6:61",),
    ),
    Invalid(
        """
        import torch
        from torch._higher_order_ops.inline_asm_elementwise import inline_asm_elementwise

        def fast_rsqrt(x):
            return inline_asm_elementwise(x, asm_str="rsqrt.approx.f32 $0, $1;", constraints="=f,f", dtype=torch.float32)
        """,
        expect=("5:46-5:72",),
    ),
)
