"""ROC101 reduce-overhead-compile."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import choose_on_rocm, rocm_guard
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import called_function, literal_token, unpacked_keyword
from rocmlint.rule import Invalid, Rule, Valid

_COMPILERS = frozenset({"torch.compile", "torch._dynamo.optimize", "torch.compiler.compile"})


class ReduceOverheadCompile(Rule):
    """
    ## What it does
    Flags `torch.compile(..., mode="reduce-overhead")` (also `@torch.compile(mode=...)`,
    `torch._dynamo.optimize`, `functools.partial(torch.compile, ...)`, the mode given through a
    variable or a `**options` dict) that is not gated for ROCm.

    Test files are not checked: a test that compiles with `mode="reduce-overhead"` exercises CUDA-graph
    capture itself; gating it only drops that coverage on ROCm, where a hang or failure shows in the run.
    Nor is code under a module flag hard-wired off (`COMPILE = False` assigned once, never rebound, read by no
    module importing it; then `if COMPILE:`): it never runs.

    ## Why is this bad on ROCm?
    `reduce-overhead` captures the compiled graph with CUDA graphs. On ROCm, HIP graph capture through
    Inductor is slow or hangs: porting guides measure a 65x slowdown against `mode="default"`, and
    ROCm 7 makes capture stricter so some models fail instead.

    ## Example
    ```python
    model = torch.compile(model, mode="reduce-overhead")
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    model = torch.compile(model, mode="default" if _IS_ROCM else "reduce-overhead")
    ```
    The literal is replaced where it is written (also in a `MODE = ...` constant or an options dict).
    A ROCm flag the module already defines (`IS_ROCM = torch.version.hip is not None`) is reused.

    ## Fix safety
    Safe: on NVIDIA `_IS_ROCM` is false and the original mode string is kept verbatim. No fix when the
    literal runs before the module imports torch.
    """

    code = "ROC101"
    name = "reduce-overhead-compile"
    severity = Severity.WARNING
    applies_to_tests = False
    fix_availability = FixAvailability.SAFE
    triggers = (b"reduce-overhead",)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if called_function(ctx, node) not in _COMPILERS:
            return
        mode = ctx.semantic.keyword(node, "mode")
        if mode is not None:
            self._check_mode(mode, mode.value, ctx)
            return
        for arg, value in unpacked_keyword(ctx, node, "mode"):
            self._check_mode(arg, value, ctx)

    @staticmethod
    def _check_mode(reported: ast.AST, value: ast.expr, ctx: PythonContext) -> None:
        for string, literal in ctx.values.string_sources(value):
            if string == "reduce-overhead":
                ctx.report(reported, _message(), gate_on=(literal,), fix=_fix(literal, ctx))


def _fix(literal: ast.AST, ctx: PythonContext) -> Fix | None:
    """`"default" if IS_ROCM else "reduce-overhead"` in place of the literal (kept verbatim for NVIDIA); only
    for one string token (an implicit concatenation is left alone)."""
    token = literal_token(ctx, literal)
    if token is None:
        return None
    guard = rocm_guard(ctx, literal)
    if guard is None:
        return None
    default = f"{token.prefix}{token.quote}default{token.quote}"
    return ctx.fix('Use mode="default" on ROCm', choose_on_rocm(ctx, literal, default, guard.name), *guard.edits)


def _message() -> str:
    return (
        'torch.compile mode "reduce-overhead" uses CUDA graphs, which are slow or hang on ROCm; '
        'use mode="default" when torch.version.hip is set'
    )


ReduceOverheadCompile.valid = (
    Valid(
        """
        import torch
        model = torch.compile(model, mode="default")
        """,
    ),
    Valid(
        """
        import torch
        if torch.version.hip:
            model = torch.compile(model)
        else:
            model = torch.compile(model, mode="reduce-overhead")
        """,
    ),
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        mode = "default" if IS_ROCM else "reduce-overhead"
        model = torch.compile(model, mode="default" if IS_ROCM else "reduce-overhead")
        """,
    ),
    Valid(
        """
        print("try mode=reduce-overhead for small batches")
        """,
    ),
    # A module flag hard-wired off (assigned False once, never rebound, read by no importer): a dead branch.
    Valid(
        """
        import torch
        _COMPILE_FLAG = False
        try:
            if _COMPILE_FLAG:
                step = torch.compile(step, mode="reduce-overhead")
        except Exception:
            pass
        """,
    ),
    # TVM's CUDA test mark skips unless TVM finds an NVIDIA device.
    Valid(
        """
        import torch, tvm.testing
        @tvm.testing.requires_cuda
        def test_graphs():
            model = torch.compile(model, mode="reduce-overhead")
        """,
    ),
    # A platform switch whose values name each platform: the arms around the one naming ROCm are other platforms'.
    Valid(
        """
        import os, torch
        PLATFORM = os.getenv("PLATFORM")
        if PLATFORM == "vendor_npu":
            model = torch.compile(model, mode="reduce-overhead")
        elif PLATFORM == "amd_rocm":
            model = torch.compile(model)
        elif PLATFORM == "other_gpu":
            model = torch.compile(model, mode="reduce-overhead")
        """,
    ),
)
ReduceOverheadCompile.invalid = (
    Invalid(
        """
        import torch
        model = torch.compile(model, mode="reduce-overhead")
        """,
        expect=("2:30-2:52",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        model = torch.compile(model, mode="default" if _IS_ROCM else "reduce-overhead")
        """,
    ),
    Invalid(
        """
        import torch as T

        @T.compile(mode="reduce-overhead")
        def step(x):
            return x * 2
        """,
        expect=("3:12-3:34",),
    ),
    Invalid(
        """
        import torch
        MODE = "reduce-overhead"
        model = torch.compile(model, mode=MODE)
        """,
        expect=("3:30-3:39",),
    ),
    Invalid(
        """
        import torch
        opts = {"mode": "reduce-overhead", "fullgraph": True}
        m = torch.compile(m, **opts)
        """,
        expect=("3:22-3:28",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        opts = {"mode": "default" if _IS_ROCM else "reduce-overhead", "fullgraph": True}
        m = torch.compile(m, **opts)
        """,
    ),
    Invalid(
        """
        import functools, torch
        compile_fn = functools.partial(torch.compile, mode="reduce-overhead")
        """,
        expect=("2:47-2:69",),
    ),
    # The same switch without a value naming ROCm: ROCm may take any arm.
    Invalid(
        """
        import os, torch
        PLATFORM = os.getenv("PLATFORM")
        if PLATFORM == "vendor_npu":
            model = torch.compile(model, mode="reduce-overhead")
        """,
        expect=("4:34-4:56",),
    ),
)
