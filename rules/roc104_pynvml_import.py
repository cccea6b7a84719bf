"""ROC104 pynvml-import."""

from __future__ import annotations

import libcst as cst

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import enclosing_statement, wrap_in_try
from rocmlint.python.frontend import PythonContext
from rocmlint.python.imports import bound_names, imported_modules, runs_at_import, top_level
from rocmlint.python.lexical import import_statement_pattern
from rocmlint.rule import Invalid, Rule, Valid

# Top-level modules of the NVML bindings: `nvidia-ml-py`/`pynvml` (incl. `pynvml.smi`) and
# `nvidia-ml-py3`'s `nvidia_smi`.
_NVML_MODULES = frozenset({"pynvml", "nvidia_smi"})

# The prefilter (Rule.trigger_pattern): an import statement naming `pynvml` or `nvidia_smi` as the
# top-level package, not the words' other uses (`import_pynvml()`, `vllm.third_party.pynvml`,
# `pynvml.nvmlInit()` calls, docstrings). The match lands in the import statement, so region parsing keeps
# the block holding it with the enclosing `if TYPE_CHECKING:` tests the rule reads.
_TRIGGER_PATTERN = import_statement_pattern(r"(?:pynvml|nvidia_smi)\b")


class PynvmlImport(Rule):
    """
    ## What it does
    Flags a module-level `import pynvml`, `from pynvml import ...`, `from pynvml.smi import nvidia_smi`
    or `import nvidia_smi` that is neither inside a `try:` catching `ImportError` nor behind a vendor
    gate. Imports inside functions (lazy imports) are left to ROC117, which checks the NVML calls.

    ## Why is this bad on ROCm?
    `pynvml` and `nvidia_smi` are Python bindings to NVIDIA's NVML (`libnvidia-ml`). ROCm builds of
    PyTorch do not depend on them, so on an AMD machine the package is usually missing and a
    module-level import raises `ModuleNotFoundError`, taking the whole module (often a utility that
    only reports GPU memory or utilisation) down with it. Where the package happens to be installed,
    `nvmlInit()` fails because `libnvidia-ml` is absent. PyTorch and vLLM use `amdsmi` for the same
    queries on ROCm (`torch/cuda/__init__.py` `_raw_device_count_amdsmi`, `vllm/platforms/rocm.py`).

    ## Example
    ```python
    import pynvml

    def gpu_memory_used(index: int) -> int:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        return pynvml.nvmlDeviceGetMemoryInfo(handle).used
    ```

    ## Fix
    ```python
    try:
        import pynvml
    except ImportError:
        pynvml = None
    ```
    Then check `pynvml is not None` (and use `amdsmi` or `torch.cuda.mem_get_info()` on ROCm) where
    NVML is called.

    ## Fix safety
    Safe: on NVIDIA machines with the package installed the import succeeds exactly as before; only
    a missing package now yields `None` instead of an import-time crash.
    """

    code = "ROC104"
    name = "pynvml-import"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    triggers = (b"pynvml", b"nvidia_smi")
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Import(self, node: cst.Import, ctx: PythonContext) -> None:
        self._check(node, ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx: PythonContext) -> None:
        self._check(node, ctx)

    @staticmethod
    def _check(node: cst.Import | cst.ImportFrom, ctx: PythonContext) -> None:
        for imported in imported_modules(node):
            if _is_nvml_module(imported.module) and runs_at_import(ctx, node):
                ctx.report(imported.alias or imported.name, _message(imported.module), fix=_fix(node, ctx))


def _fix(node: cst.Import | cst.ImportFrom, ctx: PythonContext) -> Fix | None:
    """`try: <import> except ImportError: <each bound name> = None`. No fix for `from pynvml import *`
    or an `import` that also imports other modules (their ImportError must not be swallowed)."""
    names = bound_names(node)
    imports_others = not all(_is_nvml_module(imported.module) for imported in imported_modules(node))
    statement = enclosing_statement(ctx, node)
    if not names or not all(names) or (isinstance(node, cst.Import) and imports_others) or statement is None:
        return None
    unbound = [f"{name} = None" for name in dict.fromkeys(names)]
    edit = wrap_in_try(ctx, statement, "ImportError", unbound)
    return ctx.fix("Import it inside try/except ImportError (None when missing)", edit) if edit else None


def _is_nvml_module(module: str) -> bool:
    return top_level(module) in _NVML_MODULES


def _message(module: str) -> str:
    return (
        f"module-level `{module}` import fails on ROCm machines, where the NVIDIA NVML bindings are usually "
        "not installed; import it inside try/except ImportError and use amdsmi when torch.version.hip is set"
    )


PynvmlImport.valid = (
    Valid(
        "try:\n"
        "    import pynvml\n"
        "except ImportError:\n"
        "    pynvml = None\n"
        "\n"
        "def gpu_count():\n"
        "    if pynvml is None:\n"
        "        return 0\n"
        "    pynvml.nvmlInit()\n"
        "    return pynvml.nvmlDeviceGetCount()\n"
    ),
    # A lazy import inside a function is ROC117's business (the calls), not a module-level import.
    Valid(
        "def gpu_memory_used(index: int) -> int:\n"
        "    import pynvml\n"
        "\n"
        "    pynvml.nvmlInit()\n"
        "    handle = pynvml.nvmlDeviceGetHandleByIndex(index)\n"
        "    return pynvml.nvmlDeviceGetMemoryInfo(handle).used\n"
    ),
    Valid(
        "import torch\n"
        "\n"
        "if torch.version.hip:\n"
        "    import amdsmi\n"
        "else:\n"
        "    from pynvml import nvmlInit, nvmlDeviceGetCount\n"
    ),
    Valid(
        "import torch\n"
        "IS_ROCM = torch.version.hip is not None\n"
        "if not IS_ROCM:\n"
        "    import pynvml\n"
    ),
    Valid(
        "from typing import TYPE_CHECKING\n"
        "\n"
        "if TYPE_CHECKING:\n"
        "    import pynvml\n"
    ),
    Valid(
        "import contextlib\n"
        "\n"
        "with contextlib.suppress(ImportError):\n"
        "    from pynvml.smi import nvidia_smi\n"
    ),
    # Look-alikes: vLLM's helper, a relative module, and the name in a docstring and a comment.
    Valid(
        '"""GPU telemetry; uses pynvml on NVIDIA and amdsmi on ROCm."""\n'
        "from vllm.utils import import_pynvml  # wraps `import pynvml`\n"
        "from .nvidia_smi import query_gpus\n"
        "\n"
        "pynvml = import_pynvml()\n"
    ),
    # Look-alikes the prefilter skips: vLLM's vendored copy, a module named after the package, calls.
    Valid(
        "import vllm.third_party.pynvml as pynvml\n"
        "from vllm.third_party import pynvml as nvml\n"
        "from tools.nvidia_smi_parser import parse\n"
        "\n"
        "def used(handle):\n"
        "    return pynvml.nvmlDeviceGetMemoryInfo(handle).used\n"
    ),
)
PynvmlImport.invalid = (
    Invalid(
        "import os\nimport pynvml\nimport torch\n",
        line=2,
        message="`pynvml` import",
        fixed=(
            "import os\n"
            "try:\n"
            "    import pynvml\n"
            "except ImportError:\n"
            "    pynvml = None\n"
            "import torch\n"
        ),
    ),
    Invalid(
        "import torch\n"
        "from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit\n",
        line=2,
        fixed=(
            "import torch\n"
            "try:\n"
            "    from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit\n"
            "except ImportError:\n"
            "    nvmlDeviceGetHandleByIndex = None\n"
            "    nvmlDeviceGetMemoryInfo = None\n"
            "    nvmlInit = None\n"
        ),
    ),
    Invalid("import nvidia_smi\n\nnvidia_smi.nvmlInit()\n", line=1, message="`nvidia_smi`"),
    Invalid("import sys\nfrom pynvml.smi import nvidia_smi\n", line=2, message="`pynvml.smi`"),
    # `torch.cuda.is_available()` is true on ROCm, so it is not a gate.
    Invalid(
        "import torch\n"
        "\n"
        "if torch.cuda.is_available():\n"
        "    import pynvml as nvml\n",
        line=4,
    ),
    # Catching only NVML errors does not catch the ImportError.
    Invalid(
        "try:\n"
        "    import pynvml\n"
        "\n"
        "    pynvml.nvmlInit()\n"
        "    HAS_NVML = True\n"
        "except pynvml.NVMLError:\n"
        "    HAS_NVML = False\n",
        line=2,
    ),
    # Odd but legal spellings: a module after others in one `import`, aliases, a non-ASCII name, tabs,
    # spaces around dots, backslash continuations, a parenthesised name list, `;`, a class body.
    Invalid("import os, pynvml\n", line=1),
    Invalid("import torch as t, nvidia_smi\n", line=1, message="`nvidia_smi`"),
    Invalid("import sys; import donn\u00e9es as d, pynvml as nv\n", line=1),
    Invalid("import\tpynvml . smi\n", line=1),
    Invalid("import os, \\\n    pynvml as nv\n", line=2),
    Invalid("from \\\n    pynvml import nvmlInit\n", line=2),
    Invalid("from pynvml import (\n    nvmlInit,\n    nvmlShutdown,\n)\n", line=1),
    Invalid("class Probe:\n    import pynvml\n", line=2),
)
