"""ROC102 tf32-toggle."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.fixes import gate_statement
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_truthy_constant, last_name, opted_in_by_switch, rocm_arm
from rocmlint.python.lexical import assigned_attribute_pattern, called_name_pattern
from rocmlint.rule import Invalid, Rule, Valid

_ALLOW_TF32 = frozenset({"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"})
# The fp32_precision knobs that reach the GPU (`torch.backends.mkldnn.*` is the CPU backend).
_GPU_PRECISION_PREFIXES = ("torch.backends.cuda.", "torch.backends.cudnn.")
_GLOBAL_PRECISION = "torch.backends.fp32_precision"
# Values that keep full fp32: everything else asks for a reduced-precision (TF32) path.
_FULL_FP32_PRECISIONS = frozenset({"ieee", "none"})
_TF32_MATMUL_PRECISIONS = frozenset({"high", "medium"})
# A choice naming TF32 (lower-case): `allow_tf32`, `enable_tf`, `use_tensorfloat32`, a tensor-core switch.
_TF32_CHOICE = re.compile(r"(?<![a-z])tf(?:loat)?_?32(?![0-9])|(?<![a-z])tf$|tensorfloat|tensor_?cores?")
_SET_MATMUL_PRECISION = "torch.set_float32_matmul_precision"
# Where the rule could report or read: the attributes `visit_Assign` reads as assigned, and the callee
# `visit_Call` reads.
_TRIGGER_PATTERN = "|".join(
    (assigned_attribute_pattern("allow_tf32", "fp32_precision"), called_name_pattern("set_float32_matmul_precision"))
)


class Tf32Toggle(Rule):
    """
    ## What it does
    Flags code that turns TF32 on without a ROCm gate: assigning `True` to `torch.backends.cuda.matmul.allow_tf32` or
    `torch.backends.cudnn.allow_tf32`, `torch.set_float32_matmul_precision("high")` / `("medium")`, and setting an
    `fp32_precision` knob (`torch.backends.fp32_precision`, `torch.backends.cuda.matmul.fp32_precision`,
    `torch.backends.cudnn.conv.fp32_precision`, ...) to `"tf32"`. Reading the flags, turning TF32 off (`False`,
    `"highest"`, `"ieee"`) and values the linter cannot resolve are not reported.

    Nor is TF32 the user chose: under an off-by-default switch or config field named for it (`if args.allow_tf32:`,
    `--use_tensorcore`, `allow_tf32: bool = False`) or a picked data type asked whether it is TF32 (`if config.train_dtype.enable_tf():`). Test files are not checked: a suite turns TF32 on to set the precision its assertions run at (or to
    test both modes); where ROCm ignores the flag the results are only more precise, and no test takes
    another path because of it.

    ## Why is this bad on ROCm?
    TF32 is an NVIDIA Ampere+ tensor-core mode; a script that enables it for speed does not get the same behaviour on
    AMD GPUs. The current HIP notes (`docs/source/notes/hip.rst`) say TF32 runs on MI300 (gfx942) through hipBLASLt,
    but PyTorch only honours the toggle there when the environment variable `HIPBLASLT_ALLOW_TF32=1` is set
    (pytorch/pytorch#139869, ROCm/pytorch#1803: `setAllowTF32CuBLAS` returns early and logs that TF32 is "not
    supported on ROCm by default"), and MI300 TF32 results differ numerically from NVIDIA's (pytorch/pytorch#172465,
    #188168). So the line is a no-op on most AMD GPUs: the fp32 matmuls it meant to speed up run at fp32 speed.
    Off by default: nothing fails and no result gets worse on ROCm. Without the variable the matmuls are only more
    precise than on NVIDIA (a tolerance tuned for TF32 still holds); with it, MI300 uses TF32 as asked. Reviews of
    real projects judged 11 of 12 reported toggles harmless, the twelfth a lost speed-up of low impact. Select
    ROC102 to find where an fp32 workload loses its TF32 speed-up on AMD GPUs.

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if not _IS_ROCM:
        torch.backends.cuda.matmul.allow_tf32 = True
    if not _IS_ROCM:
        torch.backends.cudnn.allow_tf32 = True
    if not _IS_ROCM:
        torch.set_float32_matmul_precision("high")
    ```
    Each statement is wrapped on its own (merge the blocks by hand if you like); a ROCm flag the module already
    defines is reused. To use TF32 on MI300 deliberately, enable it in a ROCm branch, set `HIPBLASLT_ALLOW_TF32=1`,
    and review numerical tolerances.

    ## Fix safety
    Safe: the statement is wrapped in `if not _IS_ROCM:`, so NVIDIA runs exactly the original code.
    No fix for a statement that shares its line (`a; b`), binds a name, or spans a multi-line string.
    """

    code = "ROC102"
    name = "tf32-toggle"
    severity = Severity.WARNING
    enabled_by_default = False  # a lost speed-up, not a hazard (see "Why is this bad on ROCm?")
    applies_to_tests = False
    fix_availability = FixAvailability.SAFE
    triggers = (b"allow_tf32", b"set_float32_matmul_precision", b"fp32_precision")
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        for target in node.targets:
            if not isinstance(target, ast.Attribute):
                continue
            attribute = target.attr
            if attribute == "allow_tf32":
                self._check_allow_tf32(target, node.value, ctx)
            elif attribute == "fp32_precision":
                self._check_fp32_precision(target, node.value, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if last_name(node.func) != "set_float32_matmul_precision":
            return
        if ctx.qualified_name(node.func) != _SET_MATMUL_PRECISION or _is_deliberate_rocm_setting(node, ctx):
            return
        argument = _precision_argument(node, ctx)
        if argument is None:
            return
        reported, value = argument
        arm = rocm_arm(ctx, value, lambda a: ctx.string_value(a) in _TF32_MATMUL_PRECISIONS)
        if arm is not None:
            what = f'set_float32_matmul_precision("{ctx.string_value(arm)}")'
            ctx.report(reported, _message(what), gate_on=(arm,), fix=gate_statement(ctx, node, _FIX))

    @staticmethod
    def _check_allow_tf32(target: ast.Attribute, value: ast.expr, ctx: PythonContext) -> None:
        name = ctx.qualified_name(target)
        if name not in _ALLOW_TF32 or _is_deliberate_rocm_setting(target, ctx):
            return
        arm = rocm_arm(ctx, value, is_truthy_constant)
        if arm is not None:
            ctx.report(target, _message(f"{name} = True"), gate_on=(arm,), fix=gate_statement(ctx, target, _FIX))

    @staticmethod
    def _check_fp32_precision(target: ast.Attribute, value: ast.expr, ctx: PythonContext) -> None:
        name = ctx.qualified_name(target) or ""
        if name != _GLOBAL_PRECISION and not name.startswith(_GPU_PRECISION_PREFIXES):
            return
        if _is_deliberate_rocm_setting(target, ctx):
            return
        arm = rocm_arm(ctx, value, lambda a: ctx.string_value(a) not in (None, *_FULL_FP32_PRECISIONS))
        if arm is not None:
            what = f'{name} = "{ctx.string_value(arm)}"'
            ctx.report(target, _message(what), gate_on=(arm,), fix=gate_statement(ctx, target, _FIX))


_FIX = "Set it only when not on ROCm (`if not IS_ROCM:`)"


def _precision_argument(call: ast.Call, ctx: PythonContext) -> tuple[ast.AST, ast.expr] | None:
    """Where the precision is written (the value, or the whole `precision=...` keyword) and its value."""
    positional = ctx.semantic.positional(call, 0)
    if positional is not None:
        return positional, positional
    keyword = ctx.semantic.keyword(call, "precision")
    return (keyword, keyword.value) if keyword is not None else None


def _is_deliberate_rocm_setting(node: ast.AST, ctx: PythonContext) -> bool:
    """TF32 enabled in a ROCm-only branch is a deliberate MI300 choice, not a ported NVIDIA default; TF32
    enabled because the user picked it (an off-by-default `--allow_tf32`, `train_dtype.enable_tf()`) is the user's."""
    return ctx.is_nvidia_gated(node) or any(
        opted_in_by_switch(test, _TF32_CHOICE, ctx.off_by_default) for test in ctx.semantic.if_tests_taken(node)
    )


def _message(what: str) -> str:
    return (
        f"{what} does not carry over to ROCm: TF32 is a no-op on most AMD GPUs (fp32 matmuls run at full fp32 "
        "speed) and on MI300 (gfx942) needs HIPBLASLT_ALLOW_TF32=1; to choose per vendor, "
        "set it under `if not torch.version.hip:`"
    )


Tf32Toggle.valid = (
    # Reading the flags (saving and restoring state) is fine.
    Valid(
        """
        import torch
        prev_matmul = torch.backends.cuda.matmul.allow_tf32
        prev_cudnn = torch.backends.cudnn.allow_tf32
        print(f"tf32 matmul={prev_matmul} cudnn={prev_cudnn}")
        """,
    ),
    # Turning TF32 off for exact fp32 comparisons is fine on every vendor; the CPU (oneDNN) backend is no GPU toggle.
    Valid(
        """
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.mkldnn.matmul.fp32_precision = "bf16"
        """,
    ),
    Valid(
        """
        import torch
        if torch.version.hip:
            torch.set_float32_matmul_precision("highest")
        else:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        """,
    ),
    Valid(
        """
        import torch

        def enable_tf32():
            if torch.version.hip is not None:
                return
            torch.backends.cuda.matmul.fp32_precision = "tf32"
            torch.backends.cudnn.conv.fp32_precision = "tf32"
        """,
    ),
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        torch.backends.cuda.matmul.allow_tf32 = False if IS_ROCM else True
        torch.set_float32_matmul_precision("highest" if IS_ROCM else "high")
        def setup_precision(args):
            if not IS_ROCM:
                torch.set_float32_matmul_precision("high")
        """,
    ),
    # Enabling TF32 in a ROCm-only branch (MI300 via hipBLASLt) is a deliberate choice.
    Valid(
        """
        import os
        import torch
        if torch.version.hip and 'gfx94' in torch.cuda.get_device_properties(0).gcnArchName:
            os.environ["HIPBLASLT_ALLOW_TF32"] = "1"
            torch.backends.cuda.matmul.allow_tf32 = True
        """,
    ),
    # The token in a docstring, a comment and a log message.
    Valid(
        """
        import logging
        import torch

        def report_precision():
            \"\"\"Logs torch.backends.cuda.matmul.allow_tf32 = True style settings.\"\"\"
            # torch.set_float32_matmul_precision('high') is decided by the launcher
            logging.info("allow_tf32=%s", torch.backends.cuda.matmul.allow_tf32)
        """,
    ),
    # A value the linter cannot resolve (a CLI flag) is not reported, nor TF32 the user picked: an off-by-default
    # switch or config field (named for TF32 or tensor cores), a picked data type asked whether it is TF32.
    Valid(
        """
        import torch
        class BackendConfig:
            allow_tf32: bool = False
        def setup(self):
            if self.config.allow_tf32:
                torch.backends.cuda.matmul.allow_tf32 = True
        def configure(args, config):
            torch.backends.cuda.matmul.allow_tf32 = args.tf32
            if args.allow_tf32 and torch.cuda.is_available():
                torch.backends.cudnn.allow_tf32 = True
            if args.use_tensorcore:
                torch.backends.cuda.matmul.allow_tf32 = True
            if config.train_dtype.enable_tf():
                torch.backends.cudnn.allow_tf32 = True
        parser.add_argument("--allow-tf32", action="store_true")
        parser.add_argument("--use_tensorcore", default=False, action="store_true")
        """,
    ),
    # Mentions that are no assignment or call (the trigger pattern leaves them out): keyword arguments,
    # reads, a key, a reference to the function, a longer name.
    Valid(
        """
        import torch
        def conv(x, allow_tf32=True):
            with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
                return x
        KEY = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.fp32_precision, 1)
        OPTIONS = {"allow_tf32": torch._C._get_cublas_allow_tf32()}
        OVERRIDES = {torch.set_float32_matmul_precision: lambda precision: -1}
        if torch.backends.cuda.matmul.allow_tf32 == True:
            print(torch.set_float32_matmul_precision.__doc__, "torch.set_float32_matmul_precision")
        """,
    ),
)
Tf32Toggle.invalid = (
    Invalid(
        """
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        """,
        expect=("3:1-3:38", "4:1-4:32"),
        message="cuda.matmul.allow_tf32 = True",
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        if not _IS_ROCM:
            torch.backends.cuda.matmul.allow_tf32 = True
        if not _IS_ROCM:
            torch.backends.cudnn.allow_tf32 = True
        """,
    ),
    Invalid(
        """
        import torch

        def main():
            if torch.cuda.is_available():
                torch.set_float32_matmul_precision("high")
        """,
        expect=("5:44-5:50",),
        message='set_float32_matmul_precision("high")',
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        def main():
            if torch.cuda.is_available():
                if not _IS_ROCM:
                    torch.set_float32_matmul_precision("high")
        """,
    ),
    Invalid(
        """
        from torch.backends import cudnn

        cudnn.allow_tf32 = True
        cudnn.benchmark = True
        if args.precision == "tf32" and model.enable_tf():  # an option compared; no data type
            cudnn.allow_tf32 = True
        """,
        expect=("3:1-3:17", "6:5-6:21"),
        message="cudnn.allow_tf32 = True",
    ),
    Invalid(
        """
        import torch
        if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
            torch.backends.cuda.matmul.fp32_precision = "tf32"
            torch.backends.cudnn.conv.fp32_precision = "tf32"
        """,
        expect=("3:5-3:46", "4:5-4:45"),
        message='cuda.matmul.fp32_precision = "tf32"',
    ),
    Invalid(
        """
        import torch
        MATMUL_PRECISION = "medium"

        def setup():
            torch.set_float32_matmul_precision(MATMUL_PRECISION)
        """,
        expect=("5:40-5:56",),
    ),
    Invalid(
        """
        import torch
        torch.backends.fp32_precision = "tf32"
        """,
        expect=("2:1-2:30",),
    ),
    # Spellings the trigger pattern must still reach: a target wrapped over lines (a comment between
    # the dot and the name), a line continuation, a form feed before `=`, a chained assignment, a
    # parenthesised callee.
    Invalid(
        """
        import torch
        (torch.backends.cudnn.  # Ampere and newer
            allow_tf32) = True
        """,
        expect=("2:2-3:15",),
    ),
    Invalid(
        r"""
        import torch
        torch.backends.cuda.matmul . allow_tf32 \
            = True
        """,
        expect=("2:1-2:40",),
    ),
    Invalid(
        """
        import torch
        torch.backends.cuda.matmul.fp32_precision\x0c= "tf32"
        """,
        expect=("2:1-2:42",),
    ),
    Invalid(
        """
        import torch
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        """,
        expect=("2:1-2:32", "2:35-2:72"),
    ),
    Invalid(
        """
        import torch
        (torch.set_float32_matmul_precision)(
            "high")
        """,
        expect=("3:5-3:11",),
    ),
)
