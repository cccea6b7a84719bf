"""ROC104 pynvml-import."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.conditions import enclosing_tests, requirements_before, test_mentions
from rocmlint.python.fixes import enclosing_statement, wrap_in_try
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import IMPORT_FAILURES, handled_by_callers
from rocmlint.python.imports import (
    bound_names,
    imported_modules,
    module_name_range,
    runs_at_import,
    top_level,
    under_type_checking,
)
from rocmlint.python.lexical import import_statement_pattern
from rocmlint.rule import Invalid, Rule, Valid

# Top-level modules of the NVML bindings (`pynvml.smi`, `py3nvml.py3nvml` too), each with the distributions installing
# it (normalised names), which a project may require: `nvidia-ml-py`/`pynvml`, `nvidia-ml-py3`, `py3nvml`.
_MODULES = {
    "pynvml": ("nvidia-ml-py", "pynvml", "nvidia-ml-py3"),
    "nvidia_smi": ("nvidia-ml-py3",),
    "py3nvml": ("py3nvml",),
}

# The prefilter (Rule.trigger_pattern): an import statement naming `pynvml` or `nvidia_smi` as the
# top-level package, not the words' other uses (`import_pynvml()`, `vllm.third_party.pynvml`,
# `pynvml.nvmlInit()` calls, docstrings). The match lands in the import statement, so region parsing keeps
# the block holding it with the enclosing `if TYPE_CHECKING:` tests the rule reads.
_TRIGGER_PATTERN = import_statement_pattern(r"(?:pynvml|py3nvml|nvidia_smi)\b")
# A condition naming the bindings (`is_pynvml_available()`, `_nvidia_smi_found`).
_NVML_NAME = re.compile(r"pynvml|py3nvml|nvidia_smi", re.IGNORECASE)


class PynvmlImport(Rule):
    """
    ## What it does
    Flags an `import pynvml`, `from pynvml import ...`, `from pynvml.smi import nvidia_smi`, `import nvidia_smi`
    or `import py3nvml.py3nvml` that is neither inside a `try:` catching `ImportError` nor behind a vendor
    gate, nor under an `if` naming the bindings (`if is_pynvml_available():`, a `find_spec("pynvml")` flag).
    An import inside a def (a lazy import) too, unless every call of the def is in such a `try:` (a private def,
    `idioms.handled_by_callers`): it stops the def on ROCm with `ModuleNotFoundError`, which a handler of NVML
    errors around its calls (ROC117's fallback) does not catch. A reported import's earlier requirement check (`if not
    is_pynvml_available(): raise ImportError(...)`) is reported too: on ROCm the code stops there first. Not where the
    project's default install (`[project] dependencies`, else the root requirements.txt; not an optional extra) requires
    the bindings: pure Python, they import on ROCm too and `nvmlInit()` fails instead (ROC117), except in a def named
    as a CUDA probe (`has_cuda_device()`), which then answers "no GPU" where HIP has AMD GPUs.

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
    applies_to_tests = True  # a test helper importing pynvml stops the suite's collection on ROCm
    fix_availability = FixAvailability.SAFE
    triggers = (b"pynvml", b"py3nvml", b"nvidia_smi")
    trigger_pattern = _TRIGGER_PATTERN

    def __init__(self) -> None:
        self._reported_requirements: set[ast.expr] = set()

    def visit_Import(self, node: ast.Import, ctx: PythonContext) -> None:
        self._check(node, ctx)

    def visit_ImportFrom(self, node: ast.ImportFrom, ctx: PythonContext) -> None:
        self._check(node, ctx)

    def _check(self, node: ast.Import | ast.ImportFrom, ctx: PythonContext) -> None:
        for imported in imported_modules(node):
            if not _is_nvml_module(imported.module) or _availability_checked(node, ctx):
                continue
            # `a.b as c` of an `import` is a node; the module of a `from` import is only text.
            span = None if imported.alias is not None else module_name_range(ctx, imported)
            if ctx.project_requires(*_MODULES[top_level(imported.module)]):
                # Installed with the project, on ROCm too: only `nvmlInit()` fails there (ROC117), unless the def
                # importing them is a CUDA probe, which then answers "no CUDA device" where ROCm has GPUs.
                if (lazy := _lazy(ctx, node)) and "cuda" in lazy.name.lower():
                    ctx.report(imported.name, _PROBE_MESSAGE.format(imported.module), span=span)
                continue
            if runs_at_import(ctx, node):
                ctx.report(imported.name, _message(imported.module), fix=_fix(node, ctx), span=span)
            elif _lazy(ctx, node) and not handled_by_callers(ctx, node, IMPORT_FAILURES):
                ctx.report(imported.name, _LAZY_MESSAGE.format(imported.module), span=span)
            else:
                continue
            self._report_requirements(node, ctx)

    def _report_requirements(self, node: ast.Import | ast.ImportFrom, ctx: PythonContext) -> None:
        """The `if not is_pynvml_available(): raise ...` before the import is where ROCm stops first."""
        for test in requirements_before(ctx, node, _NVML_NAME):
            if test not in self._reported_requirements:
                self._reported_requirements.add(test)
                ctx.report(test, _REQUIREMENT_MESSAGE)


def _fix(node: ast.Import | ast.ImportFrom, ctx: PythonContext) -> Fix | None:
    """`try: <import> except ImportError: <each bound name> = None`. No fix for `from pynvml import *`
    or an `import` that also imports other modules (their ImportError must not be swallowed)."""
    names = bound_names(node)
    imports_others = not all(_is_nvml_module(imported.module) for imported in imported_modules(node))
    statement = enclosing_statement(ctx, node)
    if not names or not all(names) or (isinstance(node, ast.Import) and imports_others) or statement is None:
        return None
    unbound = [f"{name} = None" for name in dict.fromkeys(names)]
    edit = wrap_in_try(ctx, statement, "ImportError", unbound)
    return ctx.fix("Import it inside try/except ImportError (None when missing)", edit) if edit else None


def _lazy(ctx: PythonContext, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def whose body imports it (not a lambda's, not under `if TYPE_CHECKING:`): run when the def is called."""
    scope = ctx.semantic.enclosing_scope_node(node)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and not under_type_checking(ctx, node):
        return scope
    return None


def _availability_checked(node: ast.AST, ctx: PythonContext) -> bool:
    """Under an `if` whose test names the bindings (`if is_pynvml_available():`, a `find_spec("pynvml")` flag): a
    check that the package is there, which holds on ROCm only where it is installed and imports."""
    return any(test_mentions(ctx, test, _NVML_NAME) for test in enclosing_tests(ctx, node))


def _is_nvml_module(module: str) -> bool:
    return top_level(module) in _MODULES


_PROBE_MESSAGE = (
    "`{}` imports where the project installs it, but NVML sees no GPU on ROCm, so this CUDA probe answers none where "
    "HIP has AMD GPUs; use torch.cuda.device_count() or amdsmi when torch.version.hip is set"
)
_REQUIREMENT_MESSAGE = (
    "this check raises where the NVIDIA NVML bindings are missing, as they usually are on ROCm machines, so the code "
    "stops here on AMD GPUs; query the GPU through amdsmi when torch.version.hip is set"
)
_LAZY_MESSAGE = (
    "`{}` import in this def fails on ROCm machines, where the NVIDIA NVML bindings are usually not installed, with "
    "ModuleNotFoundError (not an NVML error); query the GPU through amdsmi when torch.version.hip is set, or catch "
    "ImportError with a fallback"
)


def _message(module: str) -> str:
    return (
        f"module-level `{module}` import fails on ROCm machines, where the NVIDIA NVML bindings are usually "
        "not installed; import it inside try/except ImportError and use amdsmi when torch.version.hip is set"
    )


PynvmlImport.valid = (
    Valid(
        """
        try:
            import pynvml
        except ImportError:
            pynvml = None

        def gpu_count():
            if pynvml is None:
                return 0
            pynvml.nvmlInit()
            return pynvml.nvmlDeviceGetCount()
        """,
    ),
    # Lazy imports in a `try:` catching ImportError, in a private def only called so, in the NVIDIA arm.
    Valid(
        """
        import torch
        def _gpu_memory_used(index: int) -> int:
            import pynvml
            pynvml.nvmlInit()
            return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index)).used
        def memory(index):
            try:
                return _gpu_memory_used(index)
            except Exception:
                return torch.cuda.mem_get_info(index)[1]
        def names():
            if torch.version.hip:
                return []
            try:
                import py3nvml.py3nvml as nvml
            except ImportError:
                return []
        """,
    ),
    # The NVIDIA arm of a vendor gate, a requirement check there too.
    Valid(
        """
        import torch
        if torch.version.hip:
            import amdsmi
        else:
            from pynvml import nvmlInit, nvmlDeviceGetCount
        IS_ROCM = torch.version.hip is not None
        if not IS_ROCM:
            if not is_pynvml_available():
                raise ImportError("install nvidia-ml-py")
            import pynvml
        """,
    ),
    # Behind a check that the package is installed, for type checkers only, with ImportError suppressed.
    Valid(
        """
        import importlib.util
        _pynvml_available = importlib.util.find_spec("pynvml") is not None
        def is_pynvml_available():
            return _pynvml_available
        if is_pynvml_available():
            import pynvml
        import contextlib
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import pynvml
        with contextlib.suppress(ImportError):
            from pynvml.smi import nvidia_smi
        """,
    ),
    # Look-alikes: vLLM's helper, a relative module, and the name in a docstring and a comment.
    Valid(
        """
        \"\"\"GPU telemetry; uses pynvml on NVIDIA and amdsmi on ROCm.\"\"\"
        from vllm.utils import import_pynvml  # wraps `import pynvml`
        from .nvidia_smi import query_gpus

        pynvml = import_pynvml()
        """,
    ),
    # Look-alikes the prefilter skips: vLLM's vendored copy, a module named after the package, calls.
    Valid(
        """
        import vllm.third_party.pynvml as pynvml
        from vllm.third_party import pynvml as nvml
        from tools.nvidia_smi_parser import parse

        def used(handle):
            return pynvml.nvmlDeviceGetMemoryInfo(handle).used
        """,
    ),
)
PynvmlImport.invalid = (
    # A GPU check is no check that the bindings are installed (it is true on ROCm); a check that raises without
    # them is where ROCm stops first.
    Invalid(
        """
        import torch
        if torch.cuda.is_available():
            import pynvml
        def set_affinity(index):
            if torch.cuda.is_available():
                if not is_pynvml_available():
                    raise ImportError("CPU affinity on GPUs needs nvidia-ml-py")
                import pynvml as nvml
        """,
        expect=("3:12-3:18", "6:12-6:37", "8:16-8:30"),
    ),
    Invalid(
        """
        import os
        import pynvml
        import torch
        """,
        expect=("2:8-2:14",),
        message="`pynvml` import",
        fixed="""
        import os
        try:
            import pynvml
        except ImportError:
            pynvml = None
        import torch
        """,
    ),
    Invalid(
        """
        import torch
        from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit
        """,
        expect=("2:6-2:12",),
        fixed="""
        import torch
        try:
            from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit
        except ImportError:
            nvmlDeviceGetHandleByIndex = None
            nvmlDeviceGetMemoryInfo = None
            nvmlInit = None
        """,
    ),
    Invalid(
        """
        import nvidia_smi
        from pynvml.smi import nvidia_smi as smi
        nvidia_smi.nvmlInit()
        """,
        expect=("1:8-1:18", "2:6-2:16"),
        message="`nvidia_smi`",
    ),
    # A lazy import: calling the def on ROCm raises ModuleNotFoundError, which `except NVMLError` does not catch.
    Invalid(
        """
        def gpu_memory_used(index: int) -> int:
            from pynvml import NVMLError, nvmlInit
            import py3nvml.py3nvml as nvml
            try:
                nvmlInit()
            except NVMLError:
                return 0
        """,
        expect=("2:10-2:16", "3:12-3:35"),
        message="`pynvml` import in this def fails",
    ),
    # The `else` of `if TYPE_CHECKING:` is the branch that runs.
    Invalid(
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from pynvml import nvmlInit
        else:
            import pynvml
        """,
        expect=("6:12-6:18",),
    ),
    # Catching only NVML errors does not catch the ImportError.
    Invalid(
        """
        try:
            import pynvml

            pynvml.nvmlInit()
            HAS_NVML = True
        except pynvml.NVMLError:
            HAS_NVML = False
        """,
        expect=("2:12-2:18",),
    ),
    # Odd but legal spellings: a module after others in one `import`, aliases, a non-ASCII name, tabs,
    # spaces around dots, backslash continuations, a parenthesised name list, `;`, a class body.
    Invalid(
        """
        import os, pynvml
        import torch as t, nvidia_smi
        import sys; import données as d, pynvml as nv
        import\tpynvml . smi
        """,
        expect=("1:12-1:18", "2:20-2:30", "3:34-3:46", "4:8-4:20"),
    ),
    Invalid(
        r"""
        import os, \
            pynvml as nv
        from \
            pynvml import nvmlInit
        from pynvml import (
            nvmlInit,
        )
        class Probe:
            import pynvml
        """,
        expect=("2:5-2:17", "4:5-4:11", "5:6-5:12", "9:12-9:18"),
    ),
)
