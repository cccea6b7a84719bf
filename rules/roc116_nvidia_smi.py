"""ROC116 nvidia-smi."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.commands import (
    HelperRun,
    command_of,
    copes_with_missing_program,
    helper_run,
    program_name,
    split_command,
    tries_another_when_empty,
)
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import fstring_prefix
from rocmlint.python.values import Follow, Names
from rocmlint.rule import Invalid, Rule, Valid

_PROGRAM_NAMES = frozenset({"nvidia-smi", "nvidia-smi.exe"})
# A name set per vendor branch holds one command per branch.
_ALL_ASSIGNMENTS = Follow(names=Names.ALL)


class NvidiaSmi(Rule):
    """
    ## What it does
    Flags `nvidia-smi` run through `subprocess` (`run`, `call`, `check_call`, `check_output`,
    `Popen`, `getoutput`, `getstatusoutput`), `os.system`, `os.popen`, `asyncio.create_subprocess_*`
    or `sh.Command`: an argv list whose first element is `"nvidia-smi"` (or a path ending in it), or a
    command string starting with it, directly or through a variable; also a command line given to a
    helper of the file that runs its argument (through a runner call in its body, or a runner it was
    handed: `run_and_read_all(run_lambda, "nvidia-smi topo -m")`).

    It is not flagged when gated for ROCm, inside `if shutil.which("nvidia-smi"):` (or after `if not
    shutil.which("nvidia-smi"): return ...`), or inside a `try:` whose handler catches the failure (`FileNotFoundError`,
    `OSError`, `Exception`; `CalledProcessError` when the command runs through a shell) and falls back instead of
    re-raising, also when that `try:` is around every call of the module-level def that runs it (a public def only when
    no importer calls it), or, through a helper whose failure cannot raise, when the caller tries another program if the
    result is empty (`if output is None: output = ...`), nor a shell run a def returns the success of (`return
    subprocess.call("nvidia-smi", shell=True) == 0`: False on AMD), leaves on the failure of (`status, out =
    subprocess.getstatusoutput(...)` then `if status != 0: return None`) or whose output is only shown, nor one in a
    callback made in such a `try:` after a run of `nvidia-smi` there. Help texts and log messages are not.

    ## Why is this bad on ROCm?
    AMD systems have no `nvidia-smi`: the call raises `FileNotFoundError` (or a shell prints "command
    not found" and the parser sees no GPUs), so tools crash or report zero GPUs
    (bytedance/xpu-perf#194, ostris/ai-toolkit#931). The ROCm equivalents are the `amd-smi` CLI
    (`--json` output) and the `amdsmi` Python library; `rocm-smi` is deprecated and its text output
    changes between releases (NordicHPC/sonar#206, Genesis-Embodied-AI/genesis-world#2680).

    ## Example
    ```python
    output = subprocess.check_output(["nvidia-smi", "-L"]).decode()
    num_gpus = len(output.strip().splitlines())
    ```

    ## Fix
    ```python
    num_gpus = torch.cuda.device_count()
    ```
    When more than counts or memory (`torch.cuda.mem_get_info()`) is needed, branch on
    `torch.version.hip` and run `amd-smi ... --json` on ROCm.

    ## Fix safety
    No fix: the replacement depends on what the output is parsed for, and `amd-smi` prints a
    different format.
    """

    code = "ROC116"
    name = "nvidia-smi"
    severity = Severity.ERROR
    applies_to_tests = True  # suites count GPUs and read their memory with nvidia-smi
    fix_availability = FixAvailability.NONE
    triggers = (b"nvidia-smi",)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        command = command_of(ctx, node)
        helper = helper_run(ctx, node) if command is None else None
        if helper is not None:
            command = helper.command
        if command is None:
            return
        literals = _program_literals(command.argument, ctx, command.program_alone)
        if not literals or copes_with_missing_program(ctx, command, _PROGRAM_NAMES):
            return
        if helper is not None and _helper_copes(helper, ctx):
            return
        # A name assigned per vendor branch has several literals; report through one that reaches ROCm.
        for literal in literals:
            if not ctx.is_rocm_gated(literal):
                ctx.report(command.argument, _MESSAGE, gate_on=(literal,))
                return


def _helper_copes(helper: HelperRun, ctx: PythonContext) -> bool:
    """The helper copes around its own runner; or a failure cannot raise (a shell, a runner it was handed that
    reports a status) and the caller tries another program when the result is empty."""
    if helper.inner is not None and copes_with_missing_program(ctx, helper.inner, _PROGRAM_NAMES):
        return True
    quiet = helper.inner is None or helper.inner.through_shell
    return quiet and tries_another_when_empty(ctx, helper.command.call)


# --- is the command nvidia-smi? ------------------------------------------------------------------------
def _program_literals(expr: ast.expr, ctx: PythonContext, alone: bool) -> list[ast.expr]:
    """The literals that make `expr` run nvidia-smi: an argv list's first element, a command string's
    first word (the whole string when `alone`), through every assignment of a name."""
    return ctx.values.trace(expr, lambda value: _program_step(value, ctx, alone), _ALL_ASSIGNMENTS)


def _program_step(expr: ast.expr, ctx: PythonContext, alone: bool) -> list[ast.expr] | None:
    if isinstance(expr, (ast.List, ast.Tuple)):
        first = expr.elts[0] if expr.elts else None
        if first is None or isinstance(first, ast.Starred):
            return []
        return _program_literals(first, ctx, True)
    if isinstance(expr, ast.Name):
        # `SMI = ["nvidia-smi"]` then `if IS_ROCM: SMI = ["amd-smi", ...]`: ROCm gets its own command.
        binding = ctx.semantic.lookup(expr.id, expr)
        return [] if binding is not None and any(ctx.is_nvidia_gated(v) for v in binding.values) else None
    if isinstance(expr, ast.Call):
        split_string = split_command(ctx, expr)
        return _program_literals(split_string, ctx, False) if split_string is not None else []
    if isinstance(expr, ast.JoinedStr):
        return [expr] if _names_nvidia_smi(fstring_prefix(expr), alone=False) else []
    if not (isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes))):
        return None
    string = ctx.string_value(expr)
    return [expr] if string is not None and _names_nvidia_smi(string, alone) else []


def _names_nvidia_smi(text: str, alone: bool) -> bool:
    return program_name(text, alone) in _PROGRAM_NAMES


_MESSAGE = (
    "`nvidia-smi` does not exist on AMD systems, so this command fails (FileNotFoundError or no GPUs) on "
    "ROCm; use `torch.cuda.device_count()`/`torch.cuda.mem_get_info()`, or run `amd-smi ... --json` "
    "when torch.version.hip is set"
)


NvidiaSmi.valid = (
    # Guarded by shutil.which, inline and with an early return.
    Valid(
        """
        import shutil, subprocess
        def gpu_names():
            if shutil.which("nvidia-smi"):
                out = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
                return out.decode().splitlines()
            return []
        def gpu_count():
            if shutil.which("nvidia-smi") is None:
                return 0
            return len(subprocess.check_output(["nvidia-smi", "-L"]).splitlines())
        """,
    ),
    # try/except with a fallback.
    Valid(
        """
        import subprocess
        def driver_version():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, check=True)
            except (FileNotFoundError, subprocess.CalledProcessError):
                return None
            return out.stdout.strip()
        """,
    ),
    # A private reader whose every call is tried, the AMD reader next (exllamav2's get_all_gpu_memory).
    Valid(
        """
        import subprocess
        def _nvidia_memory():
            return subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
        def gpu_memory():
            try:
                return _nvidia_memory()
            except Exception:
                return subprocess.check_output(["amd-smi", "static", "--vram", "--json"])
        """,
    ),
    # Vendor branches, an IS_ROCM alias with early return, and a conditional command.
    Valid(
        """
        import subprocess, torch
        IS_ROCM = torch.version.hip is not None
        if torch.version.hip:
            out = subprocess.run(["amd-smi", "list", "--json"], capture_output=True)
        else:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True)
        def memory():
            if IS_ROCM:
                return torch.cuda.mem_get_info()
            return subprocess.getoutput("nvidia-smi --query-gpu=memory.used --format=csv")
        cmd = ["amd-smi", "list"] if IS_ROCM else ["nvidia-smi", "-L"]
        subprocess.run(cmd)
        SMI = ["nvidia-smi", "-L"]
        if IS_ROCM:
            SMI = ["amd-smi", "list"]
        subprocess.run(SMI)
        """,
    ),
    # A helper whose result is decided by the vendor test: "hip" on ROCm.
    Valid(
        """
        import subprocess
        import torch

        def device_kind() -> str:
            return "hip" if torch.version.hip else "cuda"

        def list_gpus() -> str:
            if device_kind() == "cuda":
                command = ["nvidia-smi", "-L"]
            else:
                command = ["amd-smi", "list"]
            return subprocess.run(command, capture_output=True, text=True).stdout
        """,
    ),
    # Through a helper that runs the runner it is handed and reports failure as None: rocm-smi is tried then.
    Valid(
        """
        def run_and_read_all(run_lambda, command):
            rc, out, _ = run_lambda(command)
            return out if rc == 0 else None

        def get_gpu_topo(run_lambda):
            output = run_and_read_all(run_lambda, "nvidia-smi topo -m")
            if output is None:
                output = run_and_read_all(run_lambda, "rocm-smi --showtopo")
            return output
        """,
    ),
    # Through a shell a missing program is exit status 127: the def answers False, or the output (empty) is only shown.
    Valid(
        """
        import subprocess
        def is_nvidia_system():
            return subprocess.call("nvidia-smi", shell=True, stdout=subprocess.DEVNULL) == 0
        print(subprocess.getoutput("nvidia-smi -L"))
        """,
    ),
    # Help texts, log messages, other programs.
    Valid(
        """
        import argparse, logging, subprocess
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu", help="GPU index as shown by nvidia-smi")
        logging.warning("nvidia-smi not found, assuming no GPU")
        subprocess.run(["echo", "nvidia-smi"])
        subprocess.run(["rocm-smi", "--showuse"])
        """,
    ),
    # The platform named by Triton's backend ("hip" on ROCm, "cuda" on NVIDIA).
    Valid(
        """
        import subprocess
        import triton
        def available_device():
            try:
                return triton.runtime.driver.active.get_current_target().backend
            except Exception:
                return "cpu"
        platform = available_device()
        if platform == "cuda":
            used = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
        """,
    ),
)
NvidiaSmi.invalid = (
    # The same test of a device type, which is "cuda" on ROCm too.
    Invalid(
        """
        import subprocess, torch
        platform = "cuda" if torch.cuda.is_available() else "cpu"
        if platform == "cuda":
            used = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
        """,
        expect=("4:36-4:93",),
    ),
    # A reader called once outside a `try:`.
    Invalid(
        """
        import subprocess
        def _nvidia_memory():
            return subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
        def gpu_memory(safe):
            if safe:
                try:
                    return _nvidia_memory()
                except Exception:
                    return None
            return _nvidia_memory()
        """,
        expect=("3:36-3:93",),
    ),
    # apex permutation_utilities: counts GPUs from `nvidia-smi -L`.
    Invalid(
        r"""
        import subprocess
        def get_num_gpus():
            output = subprocess.check_output(["nvidia-smi", "-L"]).decode()
            return len(output.strip().split('\n'))
        """,
        expect=("3:38-3:58",),
        message="amd-smi",
    ),
    Invalid(
        """
        import os
        os.system("nvidia-smi")
        """,
        expect=("2:11-2:23",),
    ),
    Invalid(
        """
        import os
        used = os.popen("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits").read()
        """,
        expect=("2:17-2:83",),
    ),
    Invalid(
        """
        import subprocess
        NVSMI_CMD = ["/usr/bin/nvidia-smi", "--query-gpu=name,memory.total", "--format=csv"]
        def query():
            return subprocess.run(NVSMI_CMD, capture_output=True, text=True).stdout
        """,
        expect=("4:27-4:36",),
    ),
    Invalid(
        """
        import subprocess
        def utilization(rank):
            return subprocess.getoutput(f"nvidia-smi -i {rank} --query-gpu=utilization.gpu --format=csv")
        """,
        expect=("3:33-3:97",),
    ),
    # CalledProcessError does not catch the FileNotFoundError of a missing program run directly.
    Invalid(
        """
        import subprocess
        try:
            out = subprocess.check_output(["nvidia-smi", "topo", "-m"])
        except subprocess.CalledProcessError:
            out = b''
        """,
        expect=("3:35-3:63",),
    ),
    # A handler that re-raises is no fallback.
    Invalid(
        """
        import shlex, subprocess
        try:
            subprocess.check_call(shlex.split("nvidia-smi -pm 1"))
        except OSError:
            print("failed")
            raise
        """,
        expect=("3:27-3:58",),
    ),
    # Through helpers of the file: one runs it itself, one runs the runner it is handed (no fallback).
    Invalid(
        """
        import shlex, subprocess

        def run_checked(cmd):
            proc = subprocess.run(shlex.split(cmd), capture_output=True)
            assert proc.returncode == 0
            return proc.stdout.decode()

        def run_and_read_all(run_lambda, command):
            rc, out, _ = run_lambda(command)
            return out if rc == 0 else None

        topology = run_checked("nvidia-smi topo -m")
        def get_gpu_topo(run_lambda):
            return run_and_read_all(run_lambda, "nvidia-smi topo -m")
        """,
        expect=("12:24-12:44", "14:41-14:61"),
    ),
    # A device name the user chooses is no vendor test: ROCm builds of PyTorch call their GPUs "cuda" too.
    Invalid(
        """
        import os
        import subprocess

        DEVICE = os.environ.get("DEVICE", "cuda")
        if DEVICE == "cuda":
            subprocess.run(["nvidia-smi", "-L"])
        """,
        expect=("6:20-6:40",),
    ),
)
