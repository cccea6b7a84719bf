"""ROC120 cufft-plan-cache."""

from __future__ import annotations

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.fixes import gate_statement
from rocmlint.python.frontend import PythonContext
from rocmlint.rule import Invalid, Rule, Valid

_PLAN_CACHE = "torch.backends.cuda.cufft_plan_cache"
# Enough to see through `cache = torch.backends.cuda.cufft_plan_cache[0]` chains without looping.
_MAX_ALIAS_DEPTH = 4


class CufftPlanCache(Rule):
    """
    ## What it does
    Flags setting the cuFFT plan cache size (`torch.backends.cuda.cufft_plan_cache.max_size = n`)
    outside code gated for ROCm.

    Covers the per-device form `cufft_plan_cache[i].max_size`, import aliases, a name bound to the
    cache, `setattr(..., "max_size", n)` and augmented assignment. Reading `max_size` or `size` and
    calling `.clear()` are fine.

    ## Why is this bad on ROCm?
    On ROCm the FFT plans come from hipFFT/rocFFT, and PyTorch documents that setting the size of that
    plan cache is not supported (PyTorch "HIP (ROCm) semantics", section "hipFFT/rocFFT plan cache");
    older builds raised "cuFFT with HIP is not supported" from `CUDAHooks`. A tuning line copied from
    NVIDIA code becomes an error at startup.

    ## Example
    ```python
    import torch

    torch.backends.cuda.cufft_plan_cache[0].max_size = 32
    ```

    ## Fix
    ```python
    import torch
    _IS_ROCM = getattr(torch.version, "hip", None) is not None

    if not _IS_ROCM:
        torch.backends.cuda.cufft_plan_cache[0].max_size = 32
    ```

    ## Fix safety
    Safe: the statement is only wrapped in `if not _IS_ROCM:`, so on NVIDIA it runs exactly as
    before; on ROCm the default cache is kept, which only changes memory use of cached plans.
    """

    code = "ROC120"
    name = "cufft-plan-cache"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    triggers = (b"cufft_plan_cache",)

    def visit_Assign(self, node: cst.Assign, ctx: PythonContext) -> None:
        for target in node.targets:
            self._check_target(target.target, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx: PythonContext) -> None:
        self._check_target(node.target, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign, ctx: PythonContext) -> None:
        if node.value is not None:
            self._check_target(node.target, ctx)

    def visit_Call(self, node: cst.Call, ctx: PythonContext) -> None:
        """`setattr(torch.backends.cuda.cufft_plan_cache, "max_size", 32)`."""
        if not isinstance(node.func, cst.Name) or node.func.value != "setattr" or len(node.args) != 3:
            return
        owner, attribute = node.args[0].value, node.args[1].value
        if ctx.string_value(attribute) == "max_size" and _is_plan_cache(owner, ctx):
            ctx.report(node, _message(), fix=gate_statement(ctx, node, _FIX))

    @staticmethod
    def _check_target(target: cst.BaseExpression, ctx: PythonContext) -> None:
        if not isinstance(target, cst.Attribute) or target.attr.value != "max_size":
            return
        if _is_plan_cache(target.value, ctx):
            ctx.report(target, _message(), fix=gate_statement(ctx, target, _FIX))


_FIX = "Set the plan cache size only when not on ROCm"


def _is_plan_cache(owner: cst.BaseExpression, ctx: PythonContext) -> bool:
    """Whether `owner` is the cuFFT plan cache or one device's entry of it (`...cufft_plan_cache[i]`),
    directly or through a name assigned once."""
    current: cst.BaseExpression | None = owner
    for _ in range(_MAX_ALIAS_DEPTH):
        if current is None:
            return False
        if isinstance(current, cst.Subscript):
            current = current.value
        if ctx.qualified_name(current) == _PLAN_CACHE:
            return True
        if not isinstance(current, cst.Name):
            return False
        followed = ctx.single_value(current)
        if followed is current:
            return False
        current = followed
    return False


def _message() -> str:
    return (
        "setting the cuFFT plan cache size is not supported on ROCm (hipFFT/rocFFT plan cache) and fails "
        "there; set it only when torch.version.hip is None"
    )


CufftPlanCache.valid = (
    # Reading the size and clearing the cache work on ROCm.
    Valid(
        "import torch\n"
        "\n"
        "def report_fft_cache():\n"
        "    cache = torch.backends.cuda.cufft_plan_cache\n"
        '    print(f"cuFFT plans cached: {cache.size} / {cache.max_size}")\n'
        "    cache.clear()\n"
    ),
    Valid(
        "import torch\n"
        "\n"
        "if torch.version.hip:\n"
        "    pass  # rocFFT plan cache size is fixed\n"
        "else:\n"
        "    torch.backends.cuda.cufft_plan_cache.max_size = 64\n"
    ),
    Valid(
        "import torch\n"
        "\n"
        "IS_ROCM = torch.version.hip is not None\n"
        "\n"
        "def configure_fft(device_index: int, plans: int) -> None:\n"
        "    if IS_ROCM:\n"
        "        return\n"
        "    torch.backends.cuda.cufft_plan_cache[device_index].max_size = plans\n"
    ),
    Valid(
        "import torch\n"
        "\n"
        "if not torch.version.hip and torch.cuda.is_available():\n"
        "    torch.backends.cuda.cufft_plan_cache.max_size = 16\n"
    ),
    # A different object's `max_size` and the token in a comment/docstring.
    Valid(
        "import torch\n"
        "\n"
        "def tune(pool):\n"
        '    """Mirror torch.backends.cuda.cufft_plan_cache.max_size = 32 for our own pool."""\n'
        "    # torch.backends.cuda.cufft_plan_cache.max_size = 32\n"
        "    pool.max_size = 32\n"
        '    limits = {"cufft_plan_cache.max_size": 32}\n'
        "    return limits\n"
    ),
)
CufftPlanCache.invalid = (
    Invalid(
        "import torch\ntorch.backends.cuda.cufft_plan_cache.max_size = 32\n",
        line=2,
        message="hipFFT/rocFFT",
        fixed=(
            "import torch\n"
            '_IS_ROCM = getattr(torch.version, "hip", None) is not None\n'
            "if not _IS_ROCM:\n"
            "    torch.backends.cuda.cufft_plan_cache.max_size = 32\n"
        ),
    ),
    Invalid(
        "import torch\n"
        "\n"
        "def setup_spectral_loss(device: torch.device) -> None:\n"
        "    if torch.cuda.is_available():\n"
        "        torch.backends.cuda.cufft_plan_cache[device.index].max_size = 8\n",
        line=5,
    ),
    Invalid(
        "from torch.backends import cuda as backends_cuda\n"
        "\n"
        "backends_cuda.cufft_plan_cache.max_size = 0  # disable caching\n",
        line=3,
    ),
    Invalid(
        "import torch\n"
        "\n"
        "plan_cache = torch.backends.cuda.cufft_plan_cache[0]\n"
        "plan_cache.max_size = 1024\n",
        line=4,
    ),
    Invalid(
        "import torch\n"
        "\n"
        "for device_index in range(torch.cuda.device_count()):\n"
        '    setattr(torch.backends.cuda.cufft_plan_cache[device_index], "max_size", 128)\n',
        line=4,
        fixed=(
            "import torch\n"
            '_IS_ROCM = getattr(torch.version, "hip", None) is not None\n'
            "\n"
            "for device_index in range(torch.cuda.device_count()):\n"
            "    if not _IS_ROCM:\n"
            '        setattr(torch.backends.cuda.cufft_plan_cache[device_index], "max_size", 128)\n'
        ),
    ),
)
