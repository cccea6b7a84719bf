"""ROC111 torch-version-cuda."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.conditions import decided_test
from rocmlint.python.frontend import PythonContext
from rocmlint.python.torch_api import flag_from_test_of, names_that_may_hold, unguarded_fallback_to
from rocmlint.rule import Invalid, Rule, Valid

TORCH_VERSION_CUDA = "torch.version.cuda"
_GPU_TEST = "torch.cuda.is_available"
# Calls that parse a version string (`packaging.version.parse`, `Version`, `LooseVersion`, ...).
_PARSERS = frozenset({"int", "float", "parse_version", "Version", "LooseVersion", "StrictVersion", "TorchVersion"})
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Environment reads whose default stands in when the variable is unset (`os.getenv("CUDA_VERSION", torch.version.cuda)`).
_ENVIRONMENT_READS = frozenset({"os.getenv", "os.environ.get"})
# The "no GPU" side of a device choice: a "cpu" device string, or an error saying no GPU was found.
_NO_GPU_ERROR = re.compile(
    r"\bgpu\b|no (?:cuda|gpu|accelerator)|(?:cuda|gpu)\b[^\"']*\bnot (?:available|found|detected)", re.IGNORECASE
)


class TorchVersionCuda(Rule):
    """
    ## What it does
    Flags `torch.version.cuda` (or a name assigned from it once, or whose fallback it is: `V = os.getenv("CUDA_VERSION")
    or torch.version.cuda`) parsed with no None guard: passed to `int`, `float`, `packaging.version.parse`/`Version`,
    `LooseVersion`, `parse_version`; any attribute of it (`.split(".")`, `.startswith("12")`); subscripted; ordered
    against something (`torch.version.cuda >= "11.8"`); the right side of `in`; an operand of `+`/`%`; parsed as the default of
    `os.getenv`/`os.environ.get` (`os.getenv("CUDA_VERSION", torch.version.cuda).split(".")`). Also flags it (or a
    flag assigned once from a test of it) used as the GPU-present test: a test whose ROCm side falls
    back to the CPU (`device = "cuda" if torch.version.cuda else "cpu"`, an `else:` that assigns
    `"cpu"` or raises "no GPU"), and `assert torch.version.cuda`.

    Not flagged: `is not None`/truthiness tests that gate NVIDIA-only code (they are vendor gates), a CPU fallback
    of a test that also calls `torch.cuda.is_available()` (the author keeps non-NVIDIA GPUs on the CPU on purpose),
    parsing after such a test (`if torch.version.cuda: int(torch.version.cuda.split(".")[0])`,
    `torch.version.cuda and Version(torch.version.cuda)`), `torch.version.cuda or torch.version.hip`,
    `==`/`!=` comparisons with a version string, printing, logging and f-strings. In test files only
    parsing is reported: a test's device list or skip narrowed to NVIDIA builds
    (`["cpu", "cuda"] if torch.cuda.is_available() and torch.version.cuda else ["cpu"]`) scopes tests of
    CUDA-only code on purpose, while parsing crashes collection on ROCm.

    ## Why is this bad on ROCm?
    On ROCm builds `torch.version.cuda` is `None` and `torch.version.hip` holds the HIP version, so
    parsing it raises (`TypeError`/`AttributeError: 'NoneType' object has no attribute 'split'`), and a
    truthiness test classifies a working AMD GPU as "no GPU". Sources: pytorch/pytorch#97013
    (`verify_dynamo` crashed in `parse(torch.version.cuda)` on ROCm), Akegarasu/lora-scripts#332,
    PyTorch docs "HIP (ROCm) semantics", "Checking for HIP".

    ## Example
    ```python
    major = int(torch.version.cuda.split(".")[0])
    device = "cuda" if torch.version.cuda else "cpu"
    ```

    ## Fix
    ```python
    major = int(torch.version.cuda.split(".")[0]) if torch.version.cuda is not None else None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ```

    ## Fix safety
    No fix: what the ROCm side should get (no CUDA version, the HIP version, or the GPU path) depends
    on what the code does with the value.
    """

    code = "ROC111"
    name = "torch-version-cuda"
    severity = Severity.ERROR
    applies_to_tests = True  # parsing it in a skip condition crashes collection on ROCm (GPU tests aside: docstring)
    fix_availability = FixAvailability.NONE
    triggers = (b"version.cuda", b"torch.version import")

    def visit_Attribute(self, node: ast.Attribute, ctx: PythonContext) -> None:
        if node.attr == "cuda":
            self._check(node, ctx)

    def visit_Name(self, node: ast.Name, ctx: PythonContext) -> None:
        # A name bound once to `torch.version.cuda` (`v = torch.version.cuda`, `from torch.version import cuda`).
        if node.id in names_that_may_hold(ctx, TORCH_VERSION_CUDA):
            self._check(node, ctx)

    @staticmethod
    def _check(node: ast.Attribute | ast.Name, ctx: PythonContext) -> None:
        # Positions first (they only look at parents), the qualified name only for candidates.
        how = _parsed(node, ctx.parent(node), ctx)
        test = decided_test(ctx, node) if how is None else None
        if how is None and test is None:
            return
        is_version = ctx.qualified_name(node) == TORCH_VERSION_CUDA
        if how is not None and (is_version or unguarded_fallback_to(ctx, node, TORCH_VERSION_CUDA)):
            ctx.report(node, _parse_message(_subject(node, ctx), how))
        elif test is not None and not ctx.in_test_suite:
            if (is_version or flag_from_test_of(ctx, node, TORCH_VERSION_CUDA)) and _falls_back_to_cpu(test, ctx):
                ctx.report(node, _gpu_test_message(_subject(node, ctx), "None" if is_version else "false", test))


def _parsed(node: ast.expr, parent: ast.AST | None, ctx: PythonContext) -> str | None:
    """How `node` is parsed as a version string (None when it is not)."""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return f"`.{parent.attr}` on it"
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return "subscripting it"
    if isinstance(parent, ast.BinOp):
        return "string arithmetic with it"
    if isinstance(parent, ast.Compare):
        return _compared(parent, node)
    if isinstance(parent, ast.Call) and _is_environment_default(parent, node, ctx):
        how = _parsed(parent, ctx.parent(parent), ctx)
        return f"{how} (the default of an unset environment variable)" if how else None
    if isinstance(parent, ast.Call) and any(argument is node for argument in parent.args):
        name = ctx.qualified_name(parent.func) or ""
        if name.rsplit(".", 1)[-1] in _PARSERS or name.endswith("version.parse"):
            return f"`{name}()` of it"
    return None


def _is_environment_default(call: ast.Call, node: ast.expr, ctx: PythonContext) -> bool:
    """`node` is the default of an environment read, which is what the read gives when the variable is unset."""
    return len(call.args) > 1 and call.args[1] is node and ctx.qualified_name(call.func) in _ENVIRONMENT_READS


def _compared(comparison: ast.Compare, node: ast.expr) -> str | None:
    if len(comparison.ops) != 1:
        return None
    operator = comparison.ops[0]
    if isinstance(operator, _ORDERING):
        return "ordering it against a version"
    if comparison.left is not node and isinstance(operator, (ast.In, ast.NotIn)):
        return "an `in` test on it"  # `"12" in torch.version.cuda` iterates None
    return None


def _falls_back_to_cpu(test: ast.If | ast.IfExp | ast.Assert, ctx: PythonContext) -> bool:
    """On ROCm the test is false (or true for `not torch.version.cuda`) and that side picks the CPU."""
    on_rocm = ctx.vendor_test(test.test).rocm
    if isinstance(test, ast.Assert):
        return on_rocm is False
    if on_rocm is None:
        return False
    rocm_side = test.body if on_rocm else test.orelse
    # With `torch.cuda.is_available()` in the same test, the GPU is tested already: a CPU side is the author's
    # choice for non-NVIDIA GPUs (an NVIDIA-only test device list), only an error saying "no GPU" is wrong there.
    cpu_counts = not any(
        isinstance(part, ast.Call) and ctx.qualified_name(part.func) == _GPU_TEST
        for part in ctx.semantic.descendants(test.test)
    )
    # An `if` statement's branch is a list of statements, a conditional expression's one expression.
    sides = rocm_side if isinstance(rocm_side, list) else [rocm_side]
    return any(_picks_cpu(part, ctx, cpu_counts) for part in sides)


def _picks_cpu(branch: ast.AST, ctx: PythonContext, cpu_counts: bool) -> bool:
    for part in ctx.semantic.descendants(branch):
        if cpu_counts and _is_cpu_string(part, ctx):
            return True
        if isinstance(part, ast.Raise) and _is_no_gpu_error(ctx.code_of(part)):
            return True
    return False


def _is_cpu_string(node: ast.AST, ctx: PythonContext) -> bool:
    """A `"cpu"` string literal (an f-string's constant text is no literal of its own)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    return node.value.lower() == "cpu" and not isinstance(ctx.parent(node), ast.JoinedStr)


def _is_no_gpu_error(code: str) -> bool:
    """`raise RuntimeError("No GPU found")`, but not "requires an NVIDIA GPU" (a deliberate NVIDIA gate)."""
    return bool(_NO_GPU_ERROR.search(code)) and "nvidia" not in code.lower()


def _subject(node: ast.expr, ctx: PythonContext) -> str:
    """How the message names the value: `torch.version.cuda`, or `cuda_version (torch.version.cuda)`."""
    code = ctx.code_of(node)
    return code if code == TORCH_VERSION_CUDA else f"{code} (from {TORCH_VERSION_CUDA})"


def _parse_message(subject: str, how: str) -> str:
    return (
        f"{subject} is None on ROCm builds, so {how} raises there; check "
        "`torch.version.cuda is not None` first (ROCm sets torch.version.hip instead)"
    )


def _gpu_test_message(subject: str, value_on_rocm: str, test: ast.If | ast.IfExp | ast.Assert) -> str:
    if isinstance(test, ast.Assert):
        return (
            f"{subject} is {value_on_rocm} on ROCm builds, so this assert fails on AMD GPUs; accept "
            "torch.version.hip too, or test torch.cuda.is_available()"
        )
    return (
        f"{subject} is {value_on_rocm} on ROCm builds, so this GPU test sends AMD GPUs to the CPU path; "
        "test torch.cuda.is_available() (true on ROCm) instead"
    )


TorchVersionCuda.valid = (
    # An environment read defaulting to it, parsed only when set; a literal default.
    Valid(
        """
        import os, torch
        if torch.version.cuda is not None:
            CUDA_VERSION = os.environ.get("CUDA_VERSION", torch.version.cuda).split(".")
        ROCM_VERSION = os.getenv("ROCM_VERSION", "6.2").split(".")
        """,
    ),
    Valid(
        """
        import torch
        def get_cuda_version():
            return tuple(int(x) for x in torch.version.cuda.split("."))
        if torch.version.cuda is not None:
            if get_cuda_version() >= (11, 8):
                FUNCS = ["bmm"]
        """,
    ),
    # Explicit None guard, `and` short-circuit, early return.
    Valid(
        """
        import torch
        from packaging import version
        if torch.version.cuda is not None:
            CUDA_MAJOR = int(torch.version.cuda.split(".")[0])
        HAS_CUDA_12 = torch.version.cuda is not None and version.parse(torch.version.cuda) >= version.parse("12.0")
        def nvcc_flags():
            if torch.version.cuda is None:
                return []
            return [f"-DCUDA_VERSION_MAJOR={torch.version.cuda.split('.')[0]}"]
        """,
    ),
    # ROCm branch first, through an alias.
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            tag = "rocm" + torch.version.hip
        else:
            tag = "cu" + torch.version.cuda.replace(".", "")
        """,
    ),
    # Truthiness as an NVIDIA gate (the else branch is not a CPU fallback), `or torch.version.hip`, and conjoined
    # with `torch.cuda.is_available()` (the GPU is tested already: the CPU side is a choice for non-NVIDIA GPUs).
    Valid(
        """
        import torch
        if torch.version.cuda:
            from apex.contrib import fmha
        else:
            fmha = None
        gpu_build = bool(torch.version.cuda or torch.version.hip)
        device = "cuda" if (torch.version.cuda or torch.version.hip) else "cpu"
        DEVICES = ["cpu", "cuda"] if torch.cuda.is_available() and torch.version.cuda else ["cpu"]
        """,
    ),
    # Printing, logging, equality with a version string, docstrings and comments.
    Valid(
        """
        \"\"\"Reports torch.version.cuda.split(".") for the bug template.\"\"\"
        import logging, torch
        print(f"CUDA: {torch.version.cuda}, HIP: {torch.version.hip}")
        logging.info("built with CUDA %s", torch.version.cuda)
        IS_CU118 = torch.version.cuda == "11.8"
        # int(torch.version.cuda) would fail on ROCm
        """,
    ),
    # A test suite narrowing its devices to NVIDIA builds on purpose (the ops it tests are CUDA-only).
    Valid(
        """
        import torch
        _devices = ["cpu", "cuda"] if torch.cuda.is_available() and torch.version.cuda else ["cpu"]
        """,
        path="tests/test_sparse_ops.py",
    ),
    # A name assigned from the guarded value, checked before use; the `else` of the ROCm version a build is for.
    Valid(
        """
        import os, torch
        cuda_version = torch.version.cuda
        if cuda_version:
            major, minor = cuda_version.split(".")[:2]
        if not os.environ.get("ROCM_VERSION", False):
            tag = "".join(torch.version.cuda.split("."))
        """,
    ),
)
TorchVersionCuda.invalid = (
    # The fallback of a variable, read with no test of its truth (`if CUDA_VERSION:` guards the first read).
    Invalid(
        """
        import os, torch
        CUDA_VERSION = os.getenv("CUDA_VERSION") or torch.version.cuda
        if CUDA_VERSION:
            CUDA_VERSION = "".join(CUDA_VERSION.split("."))
        kernels = "cu12" if CUDA_VERSION.startswith("12") else "cu11"
        """,
        expect=("5:21-5:33",),
    ),
    # Parsing still crashes a test file's collection on ROCm.
    Invalid(
        """
        import pytest, torch
        requires_cuda12 = pytest.mark.skipif(int(torch.version.cuda.split(".")[0]) < 12, reason="needs CUDA 12")
        """,
        expect=("2:42-2:60",),
        path="tests/test_kernels.py",
    ),
    # The default of an environment read: what the read gives when the variable is unset.
    Invalid(
        """
        import os, torch
        if torch.cuda.is_available():
            CUDA_VERSION = "".join(os.environ.get("CUDA_VERSION", torch.version.cuda).split("."))[:3]
            tag = os.getenv("CUDA_TAG", torch.version.cuda).replace(".", "")
        """,
        expect=("3:59-3:77", "4:33-4:51"),
        message="default of an unset environment variable",
    ),
    Invalid(
        """
        import torch
        from packaging.version import Version

        if Version(torch.version.cuda) >= Version('11.8'):
            use_flash = True
        """,
        expect=("4:12-4:30",),
        message="Version()` of it",
    ),
    # apex setup.py style.
    Invalid(
        """
        import torch
        torch_binary_major = torch.version.cuda.split(".")[0]
        """,
        expect=("2:22-2:40",),
        message="`.split` on it",
    ),
    Invalid(
        """
        import torch
        cuda_version = torch.version.cuda
        cu_tag = "cu" + cuda_version.replace(".", "")
        """,
        expect=("3:17-3:29",),
    ),
    Invalid(
        """
        import torch
        device = "cuda" if torch.version.cuda else "cpu"
        """,
        expect=("2:20-2:38",),
        message="CPU path",
    ),
    Invalid(
        """
        import torch
        def pick_device():
            if torch.version.cuda is not None and torch.cuda.is_available():
                return torch.device("cuda")
            else:
                raise RuntimeError("No GPU found")
        """,
        expect=("3:8-3:26",),
    ),
    Invalid(
        """
        import torch
        assert torch.version.cuda, 'this script needs a GPU'
        """,
        expect=("2:8-2:26",),
        message="assert",
    ),
    # A flag derived from it.
    Invalid(
        """
        import torch
        USE_GPU = torch.version.cuda is not None
        DEVICE = torch.device("cuda" if USE_GPU else "cpu")
        """,
        expect=("3:33-3:40",),
        message="USE_GPU (from torch.version.cuda)",
    ),
    Invalid(
        """
        import torch
        if torch.version.cuda >= "12.1":
            BLOCK = 128
        """,
        expect=("2:4-2:22",),
    ),
)
