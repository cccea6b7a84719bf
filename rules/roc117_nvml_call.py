"""ROC117 nvml-call."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.conditions import behind_failed_probe
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import handled_by_callers
from rocmlint.python.native import library_names, loaded_library
from rocmlint.rule import Invalid, Rule, Valid

# Modules whose `nvml*` functions are NVML bindings (nvidia-ml-py, its old `nvidia_smi` helper, py3nvml).
_NVML_MODULES = frozenset({"pynvml", "nvidia_smi", "py3nvml", "py3nvml.py3nvml"})
# Everything in these modules talks to NVML (`nvidia_smi.getInstance()`, `pynvml.smi.nvidia_smi...`).
_NVML_PACKAGES = ("pynvml.smi.", "nvidia_smi.")
_NVML_LIBRARY = re.compile(r"^(?:lib)?nvidia-ml(?:\.so(?:\.\d+)*)?$|^nvml\.dll$", re.IGNORECASE)
# What a missing libnvidia-ml turns into: pynvml raises NVMLError_LibraryNotFound from nvmlInit and
# NVMLError_Uninitialized from every later call; ctypes raises OSError.
_NVML_FAILURES = frozenset(
    {"NVMLError", "NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded", "NVMLError_Uninitialized"}
)
_BROAD_FAILURES = frozenset({"Exception", "BaseException", "OSError", "EnvironmentError"})


class NvmlCall(Rule):
    """
    ## What it does
    Flags NVML calls that are not gated for ROCm: any `pynvml.nvml*(...)` call (also through
    `import pynvml as nv` or `from pynvml import nvmlInit`), `nvidia_smi.getInstance()` and other
    `nvidia_smi` / `pynvml.smi` calls, py3nvml's `nvml*`, and loading the library with
    `ctypes.CDLL("libnvidia-ml.so.1")` / `ctypes.cdll.LoadLibrary("libnvidia-ml.so")`.

    A call inside a `try:` whose handler catches the failure (`pynvml.NVMLError`,
    `NVMLError_LibraryNotFound`, `Exception`, `OSError`) and does not re-raise is a fallback and is not
    flagged; so is one in a def no other module may call (private, or read by no importer; a private method) whose
    every call is so caught, a few defs up, and one in the constructor of such a class every construction of which is
    caught (`cls()` in a loop trying a list of backends in turn: `except Exception: continue` tries the next one), and
    one behind a flag such a handler clears (`ok = True`, `try: pynvml.nvmlInit()`, `except Exception: ok = False`,
    then `if not ok: return 0`). Imports, lazy ones too, are ROC104's business; `torch.cuda.*` is not flagged.

    ## Why is this bad on ROCm?
    NVML lives in `libnvidia-ml.so`, which AMD systems do not have: `pynvml.nvmlInit()` raises
    `NVMLError_LibraryNotFound`, every later `nvml*` call raises `NVMLError_Uninitialized`, and
    `ctypes.CDLL` raises `OSError`. PyTorch and vLLM query AMD GPUs through `amdsmi` instead
    (`torch/cuda/__init__.py` `_raw_device_count_amdsmi`, `vllm/platforms/rocm.py`). Note that NVML
    and AMD SMI indices are physical and ignore `*_VISIBLE_DEVICES`.

    ## Example
    ```python
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    used = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    ```

    ## Fix
    ```python
    if torch.version.hip:
        free, total = torch.cuda.mem_get_info(0)
        used = total - free
    else:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        used = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    ```

    ## Fix safety
    No fix: the `amdsmi` API differs from NVML, and the right replacement depends on the query.
    """

    code = "ROC117"
    name = "nvml-call"
    severity = Severity.ERROR
    applies_to_tests = True  # suites read GPU processes and memory through NVML
    fix_availability = FixAvailability.NONE
    triggers = (b"nvml", b"nvidia_smi", b"nvidia-ml")

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        name = ctx.qualified_name(node.func)
        if name is None:
            return
        if _is_nvml_function(name):
            # A `try:` whose handler catches the NVML failure and does not re-raise is a fallback, and so is a flag
            # such a handler clears.
            caught = _NVML_FAILURES | _BROAD_FAILURES
            if not (handled_by_callers(ctx, node, caught) or behind_failed_probe(ctx, node, caught)):
                ctx.report(node, _message(name.rsplit(".", 1)[-1]))
            return
        library = loaded_library(ctx, node)
        if library is None:
            return
        # `ctypes.util.find_library("nvidia-ml")` is None on AMD systems: `CDLL(None)` loads no NVML symbols.
        literals = [literal for file, literal in library_names(ctx, library) if _NVML_LIBRARY.match(file)]
        if not literals or handled_by_callers(ctx, node, _BROAD_FAILURES):
            return
        # A name assigned per vendor branch has several literals; report through one that reaches ROCm.
        for literal in literals:
            if not ctx.is_rocm_gated(literal):
                ctx.report(library, _LIBRARY_MESSAGE, gate_on=(literal,))
                return


def _is_nvml_function(name: str) -> bool:
    if name.startswith(_NVML_PACKAGES):
        return True
    module, _, function = name.rpartition(".")
    return module in _NVML_MODULES and function.startswith("nvml")


def _message(function: str) -> str:
    return (
        f"NVML needs libnvidia-ml, which AMD systems lack, so `{function}` raises NVMLError on ROCm; "
        "query the GPU through `amdsmi` (or torch.cuda APIs) when torch.version.hip is set, or catch "
        "pynvml.NVMLError with a fallback"
    )


_LIBRARY_MESSAGE = (
    "libnvidia-ml does not exist on AMD systems, so loading it fails (or finds no NVML symbols) on ROCm; "
    "use the `amdsmi` package (libamd_smi.so) when torch.version.hip is set"
)


NvmlCall.valid = (
    # Only where NVIDIA's driver program ran: the helper's answer is an NVIDIA test.
    Valid(
        """
        import subprocess, pynvml
        def is_nvidia_system():
            return subprocess.call("nvidia-smi", shell=True) == 0
        if is_nvidia_system():
            pynvml.nvmlInit()
        """,
    ),
    # Private helpers only called inside a `try:` whose handler returns "unavailable".
    Valid(
        """
        import pynvml
        def _device_snapshot(index):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            return pynvml.nvmlDeviceGetName(handle)
        def get_gpu_snapshot():
            try:
                pynvml.nvmlInit()
                return {"available": True, "gpus": [_device_snapshot(i) for i in range(pynvml.nvmlDeviceGetCount())]}
            except Exception:
                return {"available": False, "gpus": []}
        """,
    ),
    Valid(  # backends tried in turn: the NVML backend's constructor fails over to the next (AMD) one
        """
        import pynvml
        class _NvmlBackend:
            def __init__(self):
                pynvml.nvmlInit()
                self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        def init_backend():
            for name, backend in [("NVML", _NvmlBackend), ("sysfs", SysfsBackend)]:
                try:
                    return backend()
                except pynvml.NVMLError:
                    continue
        """,
    ),
    # Vendor branches: amdsmi on ROCm, NVML elsewhere; an IS_ROCM alias with early return.
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        if torch.version.hip:
            import amdsmi
            amdsmi.amdsmi_init()
        else:
            import pynvml
            pynvml.nvmlInit()
        def device_count():
            if IS_ROCM:
                return torch.cuda.device_count()
            from pynvml import nvmlDeviceGetCount
            return nvmlDeviceGetCount()
        """,
    ),
    # The import alone (ROC104's business), torch.cuda helpers, names in messages and except clauses.
    Valid(
        """
        import logging, torch
        try:
            import pynvml
        except ImportError:
            pynvml = None
        util = torch.cuda.utilization()
        logging.info("nvmlInit() failed, falling back to torch.cuda.mem_get_info")
        errors = (pynvml.NVMLError,) if pynvml else ()
        """,
    ),
    # Other shared libraries; an `and` short-circuit on an NVIDIA-only test; a load inside try/except OSError.
    Valid(
        """
        import ctypes, torch
        hip = ctypes.CDLL("libamdhip64.so")
        nvml = torch.version.cuda is not None and ctypes.CDLL("libnvidia-ml.so.1")
        try:
            _nvml = ctypes.cdll.LoadLibrary("libnvidia-ml.so")
        except OSError:
            _nvml = None
        """,
    ),
    # The `else` of "a ROCm GPU?" (`is_available() and torch.version.hip is not None`): NVIDIA GPUs, or none.
    Valid(
        """
        import torch
        def is_rocm_available():
            return torch.cuda.is_available() and torch.version.hip is not None
        def affinity(index):
            if is_rocm_available():
                import amdsmi
                amdsmi.amdsmi_init()
            else:
                import pynvml
                pynvml.nvmlInit()
        """,
    ),
    # PyTorch's own NVML-named helpers and settings: no NVML library is called.
    Valid(
        """
        import os
        def _raw_device_count_nvml() -> int:
            return int(os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK", "0"))
        _nvml_based_avail = _raw_device_count_nvml() > 0
        """,
    ),
    Valid(  # registered only where the switch, a vendor test, holds
        """
        import pynvml, torch
        class Operator:
            @register_benchmark(enabled=torch.version.cuda is not None)
            def clocks(self):
                pynvml.nvmlInit()
        """,
    ),
    Valid(  # a skip decorator of the project, recognised by what it does: the test never runs on ROCm
        """
        import pynvml, pytest, torch
        requires_nvidia = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA only")
        @requires_nvidia
        def test_clocks():
            pynvml.nvmlInit()
        """,
    ),
    Valid(  # the NVIDIA record of a device registry that lists the ROCm record first: never chosen on ROCm
        """
        import pynvml, torch
        def nvidia_info():
            pynvml.nvmlInit()
            return pynvml.nvmlDeviceGetCount()
        def rocm_info():
            return torch.cuda.device_count()
        REGISTRY = [
            DeviceSpec(name="rocm", available=lambda: torch.version.hip is not None, info=rocm_info),
            DeviceSpec(name="cuda", available=torch.cuda.is_available, info=nvidia_info),
        ]
        """,
    ),
)
NvmlCall.invalid = (
    Invalid(  # the NVIDIA record comes first: `torch.cuda.is_available()` also holds on ROCm, so ROCm takes it
        """
        import pynvml, torch
        def nvidia_info():
            pynvml.nvmlInit()
        def rocm_info():
            return torch.cuda.device_count()
        REGISTRY = [
            DeviceSpec(name="cuda", available=torch.cuda.is_available, info=nvidia_info),
            DeviceSpec(name="rocm", available=lambda: torch.version.hip is not None, info=rocm_info),
        ]
        """,
        expect=("3:5-3:22",),
    ),
    Invalid(  # the look-alike registers the benchmark wherever a GPU is found, ROCm's included
        """
        import pynvml, torch
        class Operator:
            @register_benchmark(enabled=torch.cuda.is_available())
            def clocks(self):
                pynvml.nvmlInit()
        """,
        expect=("5:9-5:26",),
    ),
    Invalid(  # the look-alike skips where no GPU is found, and ROCm has one
        """
        import pynvml, pytest, torch
        requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU")
        @requires_gpu
        def test_clocks():
            pynvml.nvmlInit()
        """,
        expect=("5:5-5:22",),
    ),
    Invalid(
        """
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        """,
        expect=("2:1-2:18", "3:10-3:46"),
        message="amdsmi",
    ),
    Invalid(
        """
        from pynvml import nvmlInit, nvmlDeviceGetCount
        nvmlInit()
        n = nvmlDeviceGetCount()
        """,
        expect=("2:1-2:11", "3:5-3:25"),
    ),
    Invalid(
        """
        import pynvml as nv
        def gpu_memory(i):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            return nv.nvmlDeviceGetMemoryInfo(h).total
        """,
        expect=("3:9-3:41", "4:12-4:41"),
    ),
    Invalid(
        """
        import ctypes
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        """,
        expect=("2:20-2:39",),
        message="libnvidia-ml",
    ),
    # An ImportError guard covers the import, not the NVML failure of an installed pynvml.
    Invalid(
        """
        try:
            import pynvml
            pynvml.nvmlInit()
        except ImportError:
            pynvml = None
        """,
        expect=("3:5-3:22",),
    ),
    Invalid(
        """
        from pynvml.smi import nvidia_smi
        nvsmi = nvidia_smi.getInstance()
        """,
        expect=("2:9-2:33",),
    ),
    # A handler that re-raises is no fallback.
    Invalid(
        """
        import logging, pynvml
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError:
            logging.error("NVML unavailable")
            raise
        """,
        expect=("3:5-3:22",),
    ),
    # Callees spelled away from the call: an aliased loader, a module alias, a name assigned once.
    Invalid(
        """
        from ctypes import CDLL as load
        lib = load("nvml.dll")
        """,
        expect=("2:12-2:22",),
        message="libnvidia-ml",
    ),
    Invalid(
        r"""
        import ctypes
        lib = ctypes.windll.LoadLibrary("C:\\Windows\\System32\\nvml.dll")
        """,
        expect=("2:33-2:66",),
    ),
    Invalid(
        """
        from py3nvml import py3nvml as nv
        nv.nvmlInit()
        """,
        expect=("2:1-2:14",),
    ),
    Invalid(
        """
        import pynvml
        init = pynvml.nvmlInit

        def start():
            init()
        """,
        expect=("5:5-5:11",),
    ),
)
