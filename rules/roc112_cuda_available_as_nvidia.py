"""ROC112 cuda-available-as-nvidia."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.conditions import rocm_arm_after
from rocmlint.python.fixes import gate_condition
from rocmlint.python.frontend import PythonContext
from rocmlint.rule import Invalid, Rule, Valid

_MESSAGE = (
    "`torch.cuda.is_available()` is also true on ROCm builds, so AMD GPUs take this branch and never reach the "
    "ROCm branch of line {}; test `torch.version.cuda is not None` here for the NVIDIA build"
)
_FIX = "Take this branch only when not on ROCm: `(not IS_ROCM) and (...)`"


class CudaAvailableAsNvidia(Rule):
    """
    ## What it does
    Flags `torch.cuda.is_available()` (or a flag assigned from it once) deciding an `if` whose chain has a later
    `elif` only a ROCm build takes (`elif torch.version.hip:`, `elif IS_ROCM and ...:`): the project's own ROCm
    branch shows the earlier one is meant for NVIDIA, yet the GPU-presence test lets AMD GPUs in first.

    Not flagged: a presence test negated (`if not torch.cuda.is_available():` leaves GPUs to the later
    branches), conjoined with an NVIDIA-only test (`and torch.version.cuda is not None`), or a chain without a
    ROCm branch (where "a GPU is present" may be all it asks).

    ## Why is this bad on ROCm?
    PyTorch's ROCm builds answer through `torch.cuda`: `torch.cuda.is_available()` is true on an AMD GPU
    (PyTorch "HIP (ROCm) semantics", "Checking for HIP"). A chain written `if is_available(): <CUDA build> elif
    torch.version.hip: <HIP build>` builds the CUDA sources with nvcc flags on a ROCm machine that has a CUDA
    toolkit too, and the ROCm branch never runs (a real port's fix added `torch.version.cuda is not None`
    there).

    ## Example
    ```python
    if torch.cuda.is_available() and CUDA_HOME is not None:
        extension = CUDAExtension
    elif torch.version.hip:
        extension = HIPExtension
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if (not _IS_ROCM) and (torch.cuda.is_available() and CUDA_HOME is not None):
        extension = CUDAExtension
    elif torch.version.hip:
        extension = HIPExtension
    ```

    ## Fix safety
    Safe: on NVIDIA `_IS_ROCM` is false and the original test is kept verbatim; ROCm goes on to the project's own
    ROCm branch."""

    code = "ROC112"
    name = "cuda-available-as-nvidia"
    severity = Severity.ERROR
    applies_to_tests = True  # a suite's own device choice sends AMD GPUs down its CUDA-only arm the same way
    fix_availability = FixAvailability.SAFE
    triggers = (b"is_available",)
    # The ROCm arm that makes the earlier one NVIDIA's is an `elif`, and a ROCm test names its platform (`hip`,
    # `rocm`, `amd`): without both, the rule cannot fire, and most files that only ask for a GPU are never analysed.
    trigger_pattern = r"\belif\b"
    also_requires = (b"hip", b"rocm", b"amd")

    def visit_If(self, node: ast.If, ctx: PythonContext) -> None:
        # Cheapest first: most `if`s have no `elif`, and a vendor test may start the file's gate analysis.
        if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
            return
        presence = next(_presence_tests(node.test, ctx), None)
        if presence is None:
            return
        rocm_arm = rocm_arm_after(ctx, node)
        if rocm_arm is None or ctx.vendor_test(node.test).rocm is False:
            return
        ctx.report(presence, _MESSAGE.format(rocm_arm.lineno), fix=lambda: gate_condition(ctx, node.test, _FIX))


def _presence_tests(test: ast.expr, ctx: PythonContext) -> Iterator[ast.expr]:
    """The GPU-presence tests whose truth makes `test` true (under no `not`, in no `and` an NVIDIA-only test
    decides): calls, and names assigned one once."""
    pending: list[ast.expr] = [test]
    while pending:
        expr = pending.pop(0)
        if isinstance(expr, ast.BoolOp) and ctx.vendor_test(expr).rocm is not False:
            pending.extend(expr.values)
        elif _is_presence(expr, ctx):
            yield expr


def _is_presence(expr: ast.expr, ctx: PythonContext) -> bool:
    if ctx.gates.is_gpu_presence_test(expr):
        return True
    if not isinstance(expr, ast.Name):
        return False
    value = ctx.single_value(expr)
    return value is not None and ctx.gates.is_gpu_presence_test(value)


CudaAvailableAsNvidia.valid = (
    # No ROCm branch in the chain; the presence test negated.
    Valid(
        """
        import torch
        if torch.cuda.is_available():
            device = "cuda"
        elif torch.backends.mps.is_available():
            device = "mps"
        if not torch.cuda.is_available():
            device = "cpu"
        elif torch.version.hip:
            device = "cuda"
        """,
    ),
    # Conjoined with an NVIDIA-only test, or an is-ROCm alias.
    Valid(
        """
        import os, torch
        IS_ROCM = torch.version.hip is not None
        if torch.cuda.is_available() and torch.version.cuda is not None:
            backend = "nvcc"
        elif torch.version.hip:
            backend = "hipcc"
        if torch.cuda.is_available() and not IS_ROCM:
            flags = ["--use_fast_math"]
        elif IS_ROCM:
            flags = ["-O3"]
        if (torch.cuda.is_available() and torch.version.cuda is not None) or os.getenv("FORCE_CUDA") == "1":
            sources = ["kernels.cu"]
        elif torch.version.hip:
            sources = ["kernels.hip"]
        """,
    ),
    # The whole chain only runs on NVIDIA; the ROCm test first.
    Valid(
        """
        import torch
        if torch.version.cuda:
            if torch.cuda.is_available():
                kernels = "cuda"
            elif torch.version.hip:
                kernels = "hip"
        if torch.version.hip:
            kernels = "hip"
        elif torch.cuda.is_available():
            kernels = "cuda"
        """,
    ),
)
CudaAvailableAsNvidia.invalid = (
    Invalid(
        """
        import os, torch
        from torch.utils.cpp_extension import CUDA_HOME
        if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA") == "1":
            extension = "CUDAExtension"
        elif torch.version.hip and os.getenv("FORCE_HIP", "1") == "1":
            extension = "HIPExtension"
        """,
        expect=("3:5-3:30",),
        message="never reach the ROCm branch of line 5",
        fixed="""
        import os, torch
        from torch.utils.cpp_extension import CUDA_HOME
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        if (not _IS_ROCM) and ((torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA") == "1"):
            extension = "CUDAExtension"
        elif torch.version.hip and os.getenv("FORCE_HIP", "1") == "1":
            extension = "HIPExtension"
        """,
    ),
    # A flag assigned from the presence test once; the ROCm branch after another one.
    Invalid(
        """
        import torch
        HAS_GPU = torch.cuda.is_available()
        IS_ROCM = torch.version.hip is not None
        def wheel_tag():
            if HAS_GPU:
                return "+cu" + "".join(torch.version.cuda.split("."))
            elif torch.backends.mps.is_available():
                return "+mps"
            elif IS_ROCM:
                return "+rocm"
            return ""
        """,
        expect=("5:8-5:15",),
    ),
    # In an `elif`, an alias of torch.
    Invalid(
        """
        import torch as T
        def pick(x):
            if x.device.type == "cpu":
                return "cpu"
            elif T.cuda.is_available():
                return "cuda_kernels"
            elif T.version.hip is not None:
                return "hip_kernels"
        """,
        expect=("5:10-5:31",),
        fixed="""
        import torch as T
        _IS_ROCM = getattr(T.version, "hip", None) is not None
        def pick(x):
            if x.device.type == "cpu":
                return "cpu"
            elif (not _IS_ROCM) and (T.cuda.is_available()):
                return "cuda_kernels"
            elif T.version.hip is not None:
                return "hip_kernels"
        """,
    ),
)
