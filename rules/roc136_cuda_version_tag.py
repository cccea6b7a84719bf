"""ROC136 cuda-version-tag."""

from __future__ import annotations

import ast
import itertools

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import only_displayed
from rocmlint.python.imports import imports_package
from rocmlint.rule import Invalid, Rule, Valid

# PEP 440's local version label of a CUDA build, as PyTorch and the wheels built against it spell it: `+cu121`.
_TAG = "+cu"

_MESSAGE = (
    "`+cu<version>` tags this build as a CUDA build, and ROCm runs this code too: a ROCm build is versioned as a "
    "CUDA wheel, or the CUDA wheel is fetched for it; tag it `+rocm<version>` from torch.version.hip there"
)


class CudaVersionTag(Rule):
    """
    ## What it does
    Flags a version or wheel file name tagged with the CUDA version it is built against, made from a value
    at build time, in code ROCm runs: an f-string `f"+cu{cuda_version}"` (also inside a longer name,
    `f"{name}-{version}+cu{cuda}torch{torch_version}-....whl"`), a concatenation `"+cu" + cuda_version`, and
    the `%`/`.format` forms (`"+cu%s" % v`, `"+cu{}".format(v)`). Not flagged: a tag only NVIDIA builds make
    (the `else:` of a `torch.version.hip` test that tags `+rocm`), a written-out pin (`"torch==2.1.0+cu118"`,
    an installer's choice), a test of a version (`"+cu" in torch.__version__`), a tag that is only printed, a file
    that imports no PyTorch (another framework's CUDA build, a TensorFlow `--config=cuda`, never builds for ROCm).

    Test files are not checked: a suite asserts version strings, it does not name the wheels it builds.

    ## Why is this bad on ROCm?
    PyTorch's ROCm builds answer through `torch.cuda` and `CUDAExtension` hipifies the sources, so a setup.py
    written for CUDA builds on ROCm and stamps the ROCm wheel `+cu...` (with `None` or the toolkit a ROCm
    machine happens to have), and a setup.py that downloads a prebuilt wheel by that name fetches the CUDA one
    (or none). Real ports branch on it: flash-attention names its prebuilt wheel `+rocm{hip_version}` when
    `torch.version.hip` is set, AutoGPTQ's port tags `+rocm` when `ROCM_VERSION` is set (63da0cd).

    ## Example
    ```python
    version = "0.3.2"
    if CUDA_VERSION:
        version += f"+cu{CUDA_VERSION}"
    ```

    ## Fix
    ```python
    version = "0.3.2"
    if torch.version.hip:
        version += f"+rocm{torch.version.hip.replace('.', '')[:3]}"
    elif CUDA_VERSION:
        version += f"+cu{CUDA_VERSION}"
    ```

    ## Fix safety
    No automatic fix: how a project numbers its ROCm builds (and whether it publishes prebuilt ROCm wheels at all)
    is its own choice.
    """

    code = "ROC136"
    name = "cuda-version-tag"
    severity = Severity.WARNING
    applies_to_tests = False
    fix_availability = FixAvailability.NONE
    triggers = (_TAG.encode(),)
    # The tag is followed by a field, a closing quote (a concatenation), `%s` or `{}`: a pin such as `+cu118` is not.
    trigger_pattern = r"\+cu[{\"'%]"
    also_requires = (b"torch",)

    def visit_JoinedStr(self, node: ast.JoinedStr, ctx: PythonContext) -> None:
        for part, following in itertools.pairwise(node.values):
            if _text(part).endswith(_TAG) and isinstance(following, ast.FormattedValue):
                _report(node, ctx)
                return

    def visit_BinOp(self, node: ast.BinOp, ctx: PythonContext) -> None:
        if not isinstance(node.op, (ast.Add, ast.Mod)):
            return
        left = _last_text(node.left, ctx)
        if (isinstance(node.op, ast.Add) and left.endswith(_TAG)) or (
            isinstance(node.op, ast.Mod) and f"{_TAG}%" in left
        ):
            _report(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format" and f"{_TAG}{{" in _text(func.value):
            _report(node, ctx)


def _text(expr: ast.expr) -> str:
    """The text of a string literal; "" for anything else."""
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else ""


def _last_text(expr: ast.expr, ctx: PythonContext) -> str:
    """The text a string expression ends with: its last operand's in a concatenation (`"1.0" + "+cu"`)."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        expr = expr.right
    return ctx.semantic.static_text(expr) or ""


def _report(node: ast.expr, ctx: PythonContext) -> None:
    # Only a PyTorch build is also a ROCm build unchanged: another framework's CUDA build never runs there.
    if not only_displayed(ctx, node) and imports_package(ctx, "torch"):
        ctx.report(node, _MESSAGE)


CudaVersionTag.valid = (
    # The tag only the NVIDIA build makes: ROCm takes its own branch.
    Valid(
        """
        import torch
        version = "0.3.2"
        if torch.version.hip:
            version += f"+rocm{torch.version.hip[:3]}"
        else:
            version += f"+cu{torch.version.cuda.replace('.', '')}"
        """,
    ),
    # Written-out pins and tests of a version string name no build of this project.
    Valid(
        """
        import torch
        TORCH_COMMAND = "torch==2.1.0+cu118 --index-url https://download.pytorch.org/whl/cu118"
        if "+cu" in torch.__version__:
            print("CUDA build of PyTorch")
        """,
    ),
    # Another framework's CUDA build: nothing hipifies it, it never builds for ROCm.
    Valid(
        """
        import tensorflow as tf
        def local_version(cuda_version):
            return f"+cu{cuda_version}.{tf.__version__}"
        """,
    ),
    # A tag only printed; an NVIDIA-only early exit before the tag.
    Valid(
        """
        import torch
        def wheel_name(name, version, cuda_version):
            print(f"looking for {name}-{version}+cu{cuda_version}")
            if torch.version.hip is not None:
                return None
            return f"{name}-{version}+cu{cuda_version}.whl"
        """,
    ),
)
CudaVersionTag.invalid = (
    Invalid(
        """
        import torch
        CUDA_VERSION = "".join(torch.version.cuda.split(".")) if torch.version.cuda else ""
        common_setup_kwargs = {"version": "0.3.2"}
        if CUDA_VERSION:
            common_setup_kwargs["version"] += f"+cu{CUDA_VERSION}"
        """,
        expect=("5:39-5:59",),
        message="+rocm",
    ),
    # A prebuilt wheel's file name, fetched by it.
    Invalid(
        """
        import urllib.request
        import torch
        def get_wheel_url(name, version, cuda_version, torch_version, python_version, platform_name):
            wheel_filename = f"{name}-{version}+cu{cuda_version}torch{torch_version}-{python_version}-{platform_name}.whl"
            return f"https://github.com/org/{name}/releases/download/v{version}/{wheel_filename}", wheel_filename
        url, filename = get_wheel_url("pkg", "1.0", "122", "2.3", "cp311", "linux_x86_64")
        urllib.request.urlretrieve(url, filename)
        """,
        expect=("4:22-4:115",),
    ),
    # Concatenated, %-formatted and `.format`ted.
    Invalid(
        """
        from torch.utils.cpp_extension import CUDA_HOME
        def local_version(cuda, torch_version):
            if torch_version:
                return "+cu%s.torch%s" % (cuda, torch_version)
            if cuda == "100":
                return "+cu{}".format(cuda)
            return "+cu" + cuda
        """,
        expect=("4:16-4:55", "6:16-6:36", "7:12-7:24"),
    ),
)
