"""ROC120 cufft-plan-cache."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.fixes import gate_statement
from rocmlint.python.frontend import PythonContext
from rocmlint.python.values import Follow
from rocmlint.rule import Invalid, Rule, Valid

_PLAN_CACHE = "torch.backends.cuda.cufft_plan_cache"
# A device's entry (`cache[0]`) and names assigned once; a conditional alias is not followed.
_THROUGH_ALIASES = Follow(arms=False, subscripts=True)


class CufftPlanCache(Rule):
    """
    ## What it does
    Flags setting the cuFFT plan cache size (`torch.backends.cuda.cufft_plan_cache.max_size = n`)
    outside code gated for ROCm.

    Covers the per-device form `cufft_plan_cache[i].max_size`, import aliases, a name bound to the
    cache, `setattr(..., "max_size", n)` and augmented assignment. Reading `max_size` or `size` and
    calling `.clear()` are fine.

    Test files are not checked: tests set the plan cache size to test the cache itself (and assert the
    errors it raises).

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
    applies_to_tests = False
    fix_availability = FixAvailability.SAFE
    triggers = (b"cufft_plan_cache",)

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        for target in node.targets:
            self._check_target(target, ctx)

    def visit_AugAssign(self, node: ast.AugAssign, ctx: PythonContext) -> None:
        self._check_target(node.target, ctx)

    def visit_AnnAssign(self, node: ast.AnnAssign, ctx: PythonContext) -> None:
        if node.value is not None:
            self._check_target(node.target, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        """`setattr(torch.backends.cuda.cufft_plan_cache, "max_size", 32)`."""
        if not isinstance(node.func, ast.Name) or node.func.id != "setattr":
            return
        arguments = [arg.value if isinstance(arg, ast.Starred) else arg for arg in node.args]
        arguments += [keyword.value for keyword in node.keywords]
        if len(arguments) != 3:
            return
        owner, attribute = arguments[0], arguments[1]
        if ctx.string_value(attribute) == "max_size" and _is_plan_cache(owner, ctx):
            ctx.report(node, _message(), fix=gate_statement(ctx, node, _FIX))

    @staticmethod
    def _check_target(target: ast.expr, ctx: PythonContext) -> None:
        if not isinstance(target, ast.Attribute) or target.attr != "max_size":
            return
        if _is_plan_cache(target.value, ctx):
            ctx.report(target, _message(), fix=gate_statement(ctx, target, _FIX))


_FIX = "Set the plan cache size only when not on ROCm"


def _is_plan_cache(owner: ast.expr, ctx: PythonContext) -> bool:
    """Whether `owner` is the cuFFT plan cache or one device's entry of it (`...cufft_plan_cache[i]`),
    directly or through names assigned once."""

    def visit(expr: ast.expr) -> list[bool] | None:
        return [True] if ctx.qualified_name(expr) == _PLAN_CACHE else None

    return any(ctx.values.trace(owner, visit, _THROUGH_ALIASES))


def _message() -> str:
    return (
        "setting the cuFFT plan cache size is not supported on ROCm (hipFFT/rocFFT plan cache) and fails "
        "there; set it only when torch.version.hip is None"
    )


CufftPlanCache.valid = (
    # Every AMD GPU has a gfx name: ROCm returns before the NVIDIA setting.
    Valid(
        """
        import torch

        def tune_fft(device):
            arch = getattr(torch.cuda.get_device_properties(device), "gcnArchName", "")
            if arch:
                return
            torch.backends.cuda.cufft_plan_cache[device].max_size = 32
        """,
    ),
    # A class only made where a detector that names the machine's vendor says "nvidia": its methods never
    # run on ROCm (`gpu_vendor()` returns only vendor names, so a ROCm machine sees "amd" or None).
    Valid(
        """
        import os
        import torch

        def gpu_vendor():
            if os.path.exists("/dev/nvidiactl"):
                return "nvidia"
            if os.path.exists("/dev/kfd"):
                return "amd"
            return None

        class CudaSpectralSetup:
            def __init__(self):
                torch.backends.cuda.cufft_plan_cache.max_size = 32

        if gpu_vendor() == "nvidia":
            setup = CudaSpectralSetup()
        """,
    ),
    # Reading the size and clearing the cache work on ROCm.
    Valid(
        """
        import torch

        def report_fft_cache():
            cache = torch.backends.cuda.cufft_plan_cache
            print(f"cuFFT plans cached: {cache.size} / {cache.max_size}")
            cache.clear()
        """,
    ),
    Valid(
        """
        import torch

        if torch.version.hip:
            pass  # rocFFT plan cache size is fixed
        else:
            torch.backends.cuda.cufft_plan_cache.max_size = 64
        """,
    ),
    Valid(
        """
        import torch

        IS_ROCM = torch.version.hip is not None

        def configure_fft(device_index: int, plans: int) -> None:
            if IS_ROCM:
                return
            torch.backends.cuda.cufft_plan_cache[device_index].max_size = plans
        """,
    ),
    Valid(
        """
        import torch

        if not torch.version.hip and torch.cuda.is_available():
            torch.backends.cuda.cufft_plan_cache.max_size = 16
        """,
    ),
    # A platform name decided by the vendor test: ROCm holds "rocm", so it returns first.
    Valid(
        """
        import torch

        if torch.version.hip:
            ACCELERATOR = "rocm"
        elif hasattr(torch, "xpu") and torch.xpu.is_available():
            ACCELERATOR = "xpu"
        else:
            ACCELERATOR = "cuda"

        def configure_fft(plans: int) -> None:
            if ACCELERATOR in ("rocm", "xpu"):
                return
            torch.backends.cuda.cufft_plan_cache.max_size = plans
        """,
    ),
    # A different object's `max_size` and the token in a comment/docstring.
    Valid(
        """
        import torch

        def tune(pool):
            \"\"\"Mirror torch.backends.cuda.cufft_plan_cache.max_size = 32 for our own pool.\"\"\"
            # torch.backends.cuda.cufft_plan_cache.max_size = 32
            pool.max_size = 32
            limits = {"cufft_plan_cache.max_size": 32}
            return limits
        """,
    ),
)
CufftPlanCache.invalid = (
    Invalid(  # the look-alike returns for some AMD GPUs only
        """
        import torch

        def tune_fft(device):
            arch = getattr(torch.cuda.get_device_properties(device), "gcnArchName", "")
            if arch.startswith("gfx94"):
                return
            torch.backends.cuda.cufft_plan_cache[device].max_size = 32
        """,
        expect=("7:5-7:58",),
    ),
    Invalid(  # the look-alike's other answer names no vendor: a ROCm machine may see "nvidia" for all it knows
        """
        import os
        import torch

        def gpu_vendor():
            return "nvidia" if os.path.exists("/dev/nvidiactl") else "intel"

        class CudaSpectralSetup:
            def __init__(self):
                torch.backends.cuda.cufft_plan_cache.max_size = 32

        if gpu_vendor() == "nvidia":
            setup = CudaSpectralSetup()
        """,
        expect=("9:9-9:54",),
    ),
    Invalid(
        """
        import torch
        torch.backends.cuda.cufft_plan_cache.max_size = 32
        """,
        expect=("2:1-2:46",),
        message="hipFFT/rocFFT",
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        if not _IS_ROCM:
            torch.backends.cuda.cufft_plan_cache.max_size = 32
        """,
    ),
    Invalid(
        """
        import torch

        def setup_spectral_loss(device: torch.device) -> None:
            if torch.cuda.is_available():
                torch.backends.cuda.cufft_plan_cache[device.index].max_size = 8
        """,
        expect=("5:9-5:68",),
    ),
    Invalid(
        """
        from torch.backends import cuda as backends_cuda

        backends_cuda.cufft_plan_cache.max_size = 0  # disable caching
        """,
        expect=("3:1-3:40",),
    ),
    Invalid(
        """
        import torch

        plan_cache = torch.backends.cuda.cufft_plan_cache[0]
        plan_cache.max_size = 1024
        """,
        expect=("4:1-4:20",),
    ),
    Invalid(
        """
        import torch

        for device_index in range(torch.cuda.device_count()):
            setattr(torch.backends.cuda.cufft_plan_cache[device_index], "max_size", 128)
        """,
        expect=("4:5-4:81",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        for device_index in range(torch.cuda.device_count()):
            if not _IS_ROCM:
                setattr(torch.backends.cuda.cufft_plan_cache[device_index], "max_size", 128)
        """,
    ),
    # Not another accelerator's: ROCm, which holds "rocm", takes this branch too.
    Invalid(
        """
        import torch

        PLATFORM = "rocm" if torch.version.hip else "cuda"
        if PLATFORM != "xpu":
            torch.backends.cuda.cufft_plan_cache.max_size = 32
        """,
        expect=("5:5-5:50",),
    ),
)
