"""ROC303 cuda-home-required."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.commands import (
    BROAD_ERRORS,
    MISSING_PROGRAM_ERRORS,
    NVCC_PROGRAMS,
    Presence,
    command_of,
    command_programs,
    is_cuda_home,
    presence,
)
from rocmlint.python.conditions import guarded_by, runs_right_under
from rocmlint.python.extensions import gpu_build_switch
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import handled_by_try, name_words, raised_name
from rocmlint.python.import_time import ImportTimeRun, import_time_runs
from rocmlint.rule import Invalid, Rule, Valid

_EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
# A helper that receives CUDA_HOME and whose name says it reads the toolkit version.
_VERSION_HELPER_WORDS = frozenset({"version", "nvcc", "bare"})
# What a failing nvcc run raises: a missing executable, or `None + "/bin/nvcc"`; or any error.
_PROBE_ERRORS = MISSING_PROGRAM_ERRORS | {"TypeError"} | BROAD_ERRORS
_ROCM_WORDS = frozenset({"rocm", "hip", "hipcc"})
_MAX_CALL_DEPTH = 3  # functions between a module-level call and the requirement

_ABORT_ADVICE = (
    "; CUDA_HOME is normally None on ROCm (there is no nvcc), so check it only when not IS_HIP_EXTENSION "
    "and look for ROCM_HOME/hipcc there"
)
_SWITCH_ADVICE = (
    "; CUDA_HOME is normally None on ROCm, so the ROCm build silently leaves the GPU extension out: accept "
    "torch.version.hip (or ROCM_HOME) there too"
)
_PROBE_ADVICE = (
    "; this fails on ROCm, where CUDA_HOME is normally None and there is no nvcc, so run it only when not "
    "IS_HIP_EXTENSION (torch.version.hip or hipcc --version give the ROCm version)"
)


@dataclass(frozen=True)
class _Requirement:
    """Code that fails on ROCm because CUDA_HOME/nvcc is missing there."""

    node: ast.AST
    what: str  # "runs nvcc", "raises when CUDA_HOME is None", ...
    advice: str
    errors: frozenset[str]  # exception names that, caught around it, make the failure harmless

    def message(self, run: ImportTimeRun, ctx: PythonContext) -> str:
        """Where it runs at module level itself, or the chain of calls from there to it."""
        if not run.functions:
            return f"{self.what}{self.advice}"
        chain = " -> ".join(f"{function.name}()" for function in run.functions)
        line = ctx.code_range(self.node).start.line
        return f"calls {chain}, which {self.what} (line {line}){self.advice}"


class CudaHomeRequired(Rule):
    """
    ## What it does
    Flags build code that needs the CUDA toolkit unconditionally: a `raise`, `sys.exit(...)` or `assert`
    when CUDA_HOME is missing (`if CUDA_HOME is None:`, `if not CUDA_HOME:`, after `if CUDA_HOME is not
    None: return`), running nvcc (`[CUDA_HOME + "/bin/nvcc", "-V"]`, `[os.path.join(CUDA_HOME, "bin",
    "nvcc"), "-V"]`, `["nvcc", "--version"]`, `f"{CUDA_HOME}/bin/nvcc -V"`), and `CUDA_HOME` passed to a
    version helper (`get_cuda_bare_metal_version(CUDA_HOME)`), and a build switch set once from a test that
    requires CUDA_HOME (`WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None` in a script building a
    `CUDAExtension`; a switch named `WITH_CUDA`, `USE_CUDA`, `BUILD_CUDA`). Module-level code is reported where it
    stands, code in a module-level function at the module-level calls that run it (up to three calls
    deep). Not reported: code gated off ROCm (`if not IS_HIP_EXTENSION:`, the `else` of `if
    torch.version.hip:`, `BUILD_TARGET != "rocm"`, the CUDA arm of an if/elif chain whose later arm is the
    ROCm one), code behind a `CUDA_HOME is not None` check, nvcc runs inside `try/except
    (FileNotFoundError, OSError)`, `CUDA_HOME` merely printed, and `ROCM_HOME` checks.

    ## Why is this bad on ROCm?
    On ROCm `torch.utils.cpp_extension.CUDA_HOME` is normally `None` and there is no nvcc, so a setup
    script that runs `nvcc -V` at module level or raises when `CUDA_HOME is None` aborts before any ROCm
    branch is reached: `pip install` fails on AMD machines even though the extension itself would build
    with hipcc; a build switch that needs CUDA_HOME quietly builds only the CPU extension there
    (rusty1s/pytorch_cluster's port accepted `torch.version.hip` too). Examples: NVIDIA/apex `setup.py` runs `<CUDA_HOME>/bin/nvcc -V` from module level;
    DeepSpeed `op_builder/builder.py` and ROCm/flash-attention `setup.py` reach the same probe only on
    the CUDA path.

    ## Example
    ```python
    from torch.utils.cpp_extension import CUDA_HOME

    if CUDA_HOME is None:
        raise RuntimeError("nvcc not found: install the CUDA toolkit")
    _, cuda_version = get_cuda_bare_metal_version(CUDA_HOME)
    ```

    ## Fix
    ```python
    from torch.utils.cpp_extension import CUDA_HOME, IS_HIP_EXTENSION

    if not IS_HIP_EXTENSION:
        if CUDA_HOME is None:
            raise RuntimeError("nvcc not found: install the CUDA toolkit")
        _, cuda_version = get_cuda_bare_metal_version(CUDA_HOME)
    ```
    On ROCm, check `ROCM_HOME` and read the version from `torch.version.hip` or `hipcc --version`.

    ## Fix safety
    No automatic fix: the ROCm side of the check (which toolkit to require, which version to compare)
    is the project's decision.
    """

    code = "ROC303"
    name = "cuda-home-required"
    severity = Severity.ERROR
    applies_to_tests = True  # a suite that refuses to run without CUDA_HOME never runs on ROCm
    fix_availability = FixAvailability.NONE
    triggers = (b"CUDA_HOME", b"cuda_home", b"nvcc")

    def __init__(self) -> None:
        self._reported: set[ast.AST] = set()  # one instance per file

    # --- requirement sites ---------------------------------------------------------------------------
    def visit_Raise(self, node: ast.Raise, ctx: PythonContext) -> None:
        if _aborts_when_cuda_missing(node, ctx):
            errors = frozenset({raised_name(node)}) | BROAD_ERRORS
            self._check(_Requirement(node, "raises when CUDA_HOME is None", _ABORT_ADVICE, errors), ctx)

    def visit_Assert(self, node: ast.Assert, ctx: PythonContext) -> None:
        if _cuda_presence(node.test, ctx).implied:
            errors = frozenset({"AssertionError"}) | BROAD_ERRORS
            self._check(_Requirement(node, "asserts that CUDA_HOME is set", _ABORT_ADVICE, errors), ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        callee = ctx.qualified_name(node.func) or ""
        if callee in _EXIT_CALLS:
            if _aborts_when_cuda_missing(node, ctx):
                errors = frozenset({"SystemExit", "BaseException"})
                self._check(_Requirement(node, "exits when CUDA_HOME is None", _ABORT_ADVICE, errors), ctx)
        elif (command := command_of(ctx, node)) is not None:
            if NVCC_PROGRAMS.intersection(command_programs(ctx, command.argument)):
                self._check(_Requirement(node, "runs nvcc", _PROBE_ADVICE, _PROBE_ERRORS), ctx)
        elif _is_version_helper(node, callee, ctx):
            what = f"passes CUDA_HOME to {callee.rsplit('.', 1)[-1]}()"
            self._check(_Requirement(node, what, _PROBE_ADVICE, _PROBE_ERRORS), ctx)

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        switch = gpu_build_switch(ctx, node)
        if switch is not None and _cuda_presence(node.value, ctx).implied:
            what = f"turns the GPU build off when CUDA_HOME is None ({switch.id})"
            self._check(_Requirement(node.value, what, _SWITCH_ADVICE, frozenset()), ctx)

    # --- where a requirement runs ---------------------------------------------------------------------
    def _check(self, requirement: _Requirement, ctx: PythonContext) -> None:
        """Report a requirement that runs at import time on ROCm: where it stands at module level, else at
        the module-level calls of the function that holds it."""

        def harmless(site: ast.AST) -> bool:
            return handled_by_try(ctx, site, requirement.errors) or _cuda_guarded(site, ctx)

        for run in import_time_runs(ctx, requirement.node, _MAX_CALL_DEPTH, harmless):
            if run.site not in self._reported:
                self._reported.add(run.site)
                ctx.report(run.site, requirement.message(run, ctx), gate_on=run.through)


# --- what the code checks -----------------------------------------------------------------------------
def _cuda_presence(test: ast.expr, ctx: PythonContext) -> Presence:
    """What a test says about CUDA_HOME: `CUDA_HOME is None` / `not CUDA_HOME` is true when it is missing,
    `CUDA_HOME is not None` implies it is there (`CUDA_HOME is None and ROCM_HOME is None` asks for either
    toolkit: neither)."""
    return presence(ctx, test, lambda expr: is_cuda_home(ctx, expr))


def _aborts_when_cuda_missing(node: ast.AST, ctx: PythonContext) -> bool:
    """`node` (a raise or exit) runs exactly when CUDA_HOME is missing: in the body of a test true when it
    is missing, the else of a test implying it is there, or after `if <that test>: return` in the block."""
    return runs_right_under(ctx, node, lambda test, taken: _cuda_presence(test, ctx).guards(not taken))


def _cuda_guarded(node: ast.AST, ctx: PythonContext) -> bool:
    """Already behind a CUDA_HOME check: `if CUDA_HOME is not None:`, the else of `if CUDA_HOME is None`,
    `CUDA_HOME and ...`, or after `if CUDA_HOME is None: return` (up to the enclosing def)."""
    return guarded_by(ctx, node, lambda test, taken: _cuda_presence(test, ctx).guards(taken))


def _is_version_helper(call: ast.Call, callee: str, ctx: PythonContext) -> bool:
    """`get_cuda_bare_metal_version(CUDA_HOME)` with the helper imported from elsewhere (a helper defined
    in this file is judged by what its body does)."""
    words = name_words(callee.rsplit(".", 1)[-1])
    if not _VERSION_HELPER_WORDS.intersection(words) or _ROCM_WORDS.intersection(words):
        return False
    if ctx.semantic.local_function(call.func) is not None:
        return False
    positional = (arg for arg in call.args if not isinstance(arg, ast.Starred))
    by_keyword = (keyword.value for keyword in call.keywords if keyword.arg is not None)
    return any(is_cuda_home(ctx, value) for value in (*positional, *by_keyword))


CudaHomeRequired.valid = (
    # Gated: only the CUDA branch probes nvcc, and the ROCm branch uses hipcc.
    Valid(
        """
        import subprocess
        from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, IS_HIP_EXTENSION
        if IS_HIP_EXTENSION:
            out = subprocess.check_output([ROCM_HOME + "/bin/hipcc", "--version"], text=True)
        else:
            if CUDA_HOME is None:
                raise RuntimeError("CUDA_HOME is not set")
            out = subprocess.check_output([CUDA_HOME + "/bin/nvcc", "-V"], text=True)
        """,
    ),
    # flash-attention style: the helper is only called behind `not IS_ROCM` and a CUDA_HOME check.
    Valid(
        """
        import subprocess, torch
        from torch.utils.cpp_extension import CUDA_HOME
        IS_ROCM = torch.version.hip is not None
        def get_cuda_bare_metal_version(cuda_dir):
            raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
            return raw_output.split()
        if not IS_ROCM:
            if CUDA_HOME is not None:
                version = get_cuda_bare_metal_version(CUDA_HOME)
        """,
    ),
    # DeepSpeed style: the raising helper is only used from op-builder methods that catch it.
    Valid(
        """
        import subprocess
        import torch.utils.cpp_extension
        class MissingCUDAException(Exception):
            pass
        def installed_cuda_version():
            cuda_home = torch.utils.cpp_extension.CUDA_HOME
            if cuda_home is None:
                raise MissingCUDAException("CUDA_HOME does not exist, unable to compile CUDA op(s)")
            return subprocess.check_output([cuda_home + "/bin/nvcc", "-V"], universal_newlines=True)
        class CUDAOpBuilder:
            def builder(self):
                try:
                    installed_cuda_version()
                except MissingCUDAException:
                    self.build_for_cpu = True
        """,
    ),
    # Look-alikes: CUDA_HOME printed, a ROCM_HOME check, either toolkit accepted, a caught probe.
    Valid(
        """
        import subprocess
        from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME
        print(f"CUDA_HOME={CUDA_HOME}, ROCM_HOME={ROCM_HOME}")
        if ROCM_HOME is None:
            raise RuntimeError("hipcc not found")
        if CUDA_HOME is None and ROCM_HOME is None:
            raise RuntimeError("neither nvcc nor hipcc was found")
        try:
            nvcc_version = subprocess.check_output(["nvcc", "--version"], text=True)
        except (FileNotFoundError, subprocess.CalledProcessError):
            nvcc_version = None
        """,
    ),
    # A BUILD_TARGET switch, and xformers style: the CUDA arm of an if/elif chain whose next arm is the
    # ROCm one (it reaches ROCm only through FORCE_CUDA).
    Valid(
        """
        import os, subprocess, torch
        from torch.utils.cpp_extension import CUDA_HOME
        BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
        if BUILD_TARGET != "rocm":
            if CUDA_HOME is None:
                raise RuntimeError("CUDA_HOME is not set")
        def get_cuda_version(cuda_dir):
            nvcc_bin = "nvcc" if cuda_dir is None else cuda_dir + "/bin/nvcc"
            return subprocess.check_output([nvcc_bin, "-V"], universal_newlines=True)
        if (torch.version.cuda is not None and CUDA_HOME is not None) or os.getenv("FORCE_CUDA") == "1":
            cuda_version = get_cuda_version(CUDA_HOME)
        elif torch.version.hip:
            hip_version = torch.version.hip
        """,
    ),
    # An early exit on ROCm, a conditional expression, and an apex-style suffixed flag.
    Valid(
        """
        import subprocess, sys, torch
        from torch.utils.cpp_extension import CUDA_HOME
        from build_utils import detect_rocm_pytorch
        IS_ROCM_PYTORCH = detect_rocm_pytorch()
        def nvcc_version():
            if torch.version.hip:
                return None
            return subprocess.check_output(["nvcc", "-V"], text=True)
        VERSION = nvcc_version()
        NVCC_OUT = None if IS_ROCM_PYTORCH else subprocess.check_output([f"{CUDA_HOME}/bin/nvcc", "-V"])
        if not IS_ROCM_PYTORCH and CUDA_HOME is None:
            sys.exit(1)
        """,
    ),
    # A build switch that accepts ROCm too, one set twice, and a name that switches no build.
    Valid(
        """
        import os, torch
        from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension
        WITH_CUDA = False
        if torch.cuda.is_available():
            WITH_CUDA = CUDA_HOME is not None or torch.version.hip
        USE_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
        if torch.version.hip:
            USE_CUDA = True
        has_nvcc = CUDA_HOME is not None and os.path.exists(CUDA_HOME)
        """,
    ),
)
CudaHomeRequired.invalid = (
    Invalid(
        """
        from torch.utils.cpp_extension import CUDA_HOME
        if CUDA_HOME is None:
            raise RuntimeError("nvcc was not found; is the CUDA toolkit installed?")
        """,
        expect=("3:5-3:77",),
        message="raises when CUDA_HOME is None",
    ),
    # apex style: a helper probing nvcc, called from module level (`is_available` is not a gate).
    Invalid(
        """
        import subprocess, torch
        from torch.utils.cpp_extension import CUDA_HOME
        def get_cuda_bare_metal_version(cuda_dir):
            raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
            release = raw_output.split()[raw_output.split().index("release") + 1].split(".")
            return raw_output, release[0], release[1][0]
        if not torch.cuda.is_available():
            _, bare_metal_major, _ = get_cuda_bare_metal_version(CUDA_HOME)
        """,
        expect=("8:30-8:68",),
        message="calls get_cuda_bare_metal_version(), which runs nvcc (line 4)",
    ),
    Invalid(
        """
        import os, subprocess
        from torch.utils.cpp_extension import CUDA_HOME
        NVCC = os.path.join(CUDA_HOME, "bin", "nvcc")
        nvcc_out = subprocess.run([NVCC, "--version"], capture_output=True, text=True).stdout
        """,
        expect=("4:12-4:79",),
        message="runs nvcc",
    ),
    # A `main()` that checks for the toolkit, called under `__main__`.
    Invalid(
        """
        import sys
        import torch.utils.cpp_extension as cpp
        def check_toolkit():
            if not cpp.CUDA_HOME:
                sys.exit("error: CUDA_HOME is not set, cannot build the kernels")
        def main():
            check_toolkit()
        if __name__ == "__main__":
            main()
        """,
        expect=("9:5-9:11",),
        message="calls main() -> check_toolkit(), which exits when CUDA_HOME is None (line 5)",
    ),
    Invalid(
        """
        import os
        assert os.environ.get("CUDA_HOME") is not None, "set CUDA_HOME to build the extension"
        """,
        expect=("2:1-2:87",),
    ),
    # An early return when the toolkit is there, then the raise (vLLM-style helper).
    Invalid(
        """
        from torch.utils.cpp_extension import CUDA_HOME
        def check_cuda_home():
            if CUDA_HOME is not None:
                return
            raise RuntimeError("Cannot find CUDA_HOME. CUDA must be available to build the package.")
        check_cuda_home()
        """,
        expect=("6:1-6:18",),
    ),
    # A setup script that builds its GPU extension only when the CUDA toolkit is found.
    Invalid(
        """
        import torch
        from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension
        WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
        suffices = ["cpu", "cuda"] if WITH_CUDA else ["cpu"]
        """,
        expect=("3:13-3:64",),
        message="turns the GPU build off when CUDA_HOME is None (WITH_CUDA)",
    ),
)
