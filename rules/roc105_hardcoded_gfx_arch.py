"""ROC105 hardcoded-gfx-arch."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.flow import Use, decides_support, is_tested, renames_tested_value, sets_up, value_uses
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import in_message, is_looked_for, literal_value, literals_in
from rocmlint.python.text_search import picked_by_text
from rocmlint.rule import Invalid, Rule, Valid

# A gfx target id: gfx + major (6-12) + minor + hex stepping (gfx90a, gfx1100), optional features
# (gfx90a:sramecc+:xnack-), or a generic target (gfx9-4-generic); not a prefix ("gfx94") code compares with.
_TARGET = r"(?:amdgcn-amd-amdhsa--)?gfx(?:(?:[6-9]|1[0-2])[0-9][0-9a-f](?::[a-z]+[+-])*|[0-9]{1,2}(?:-[0-9]+)?-generic)"
_TARGET_LIST = rf"{_TARGET}(?:\s*[;,]\s*{_TARGET}|\s+{_TARGET})*"
# The whole string is a target, a list ("gfx90a;gfx942"), or a flag carrying one (--offload-arch=gfx942).
_HARDCODED = re.compile(rf"^\s*(?P<flag>-{{0,2}}[A-Za-z][\w-]*=)?(?P<archs>{_TARGET_LIST})\s*$")
_ARCH_NAME = re.compile(r"gfx[0-9a-f]+(?:-[0-9]+)?(?:-generic)?")
_LISTS = (ast.List, ast.Tuple, ast.Set)
_ONE_OF = (ast.In, ast.NotIn, ast.Eq, ast.NotEq)
_TARGET_CONSUMERS = frozenset({"triton.backends.compiler.GPUTarget", "triton.compiler.GPUTarget"})
# Environment variables and CMake options that hold a ROCm arch list.
_ENVIRONMENT_ARCHS = frozenset({"PYTORCH_ROCM_ARCH", "GPU_ARCHS", "HCC_AMDGPU_TARGET", "ROCM_ARCH", "OFFLOAD_ARCH"})
_ARCH_VARIABLES = _ENVIRONMENT_ARCHS | {"GPU_TARGETS", "AMDGPU_TARGETS", "CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES"}
# What names the targets a user builds for (GPU_ARCH: a copy of GPU_ARCHS); and Triton's `GPUTarget`, which compiles a
# kernel for the one GPU it is given.
_USER_TARGET_WORDS = (*_ARCH_VARIABLES, "GPU_ARCH", "offload-arch", "amdgpu-target")
_BUILD_WORDS = (*_USER_TARGET_WORDS, "GPUTarget")


class HardcodedGfxArch(Rule):
    """
    ## What it does
    Flags a string literal naming an AMD GPU target (`"gfx942"`, `"gfx90a:sramecc+:xnack-"`), a target list
    (`"gfx90a;gfx942"`) or a flag carrying one (`"--offload-arch=gfx942"`) that is used as a value rather than compared
    with the GPU detected at runtime.

    Values are environment and config assignments, keyword arguments, parameter defaults, fallbacks
    (`os.getenv("GPU_ARCHS", "gfx942")`, `return "gfx942"`), command lines, flag lists, strings built from it
    (`f"--offload-arch={ARCH}"`), names or loops carrying it. Not reported: comparisons, matches, a target returned by
    one of several `if`s matching a detected name (`if "Strix Halo" in cpuinfo: return "gfx1151"`), sets, dict keys,
    subscripts, positional arguments of other functions (often registry keys), `choices`, a declaration's condition
    (`when="amdgpu_target=gfx942"`), a user's target renamed (`t if t != "gfx900:xnack-" else "gfx900"`), docstrings,
    messages, decorators, modules named for the target (`gen_instances_gfx942.py`). The message names the configured
    `target-archs` left out.

    Also flagged: an exact allow-list, targets of more than one family whose membership test (`arch in OK`, `all(a in OK
    for a in archs)`, `any(a in gpu_arch for a in [...])`) decides whether the code goes on: it is asserted, an arm of
    its `if` raises or returns False, or a function returns it (a predicate picking a fast path). Not one family
    (`gfx940`-`gfx942`, what the fnuz FP8 format is by spec), a family prefix (`startswith("gfx94")`), or a membership
    that only picks a setting or a message.

    Test files are not checked: tests name gfx targets as the expected values and parameters of what they
    test.

    ## Why is this bad on ROCm?
    HIP code objects run only on the gfx targets they were built for: a fixed list builds (or selects kernels, tuning
    tables, dtypes) for the author's GPUs only; other AMD GPUs get "no kernel image is available" /
    `hipErrorNoBinaryForGpu` silently a slow fallback. An allow-list refuses every GPU released after it was written:
    ports had to add gfx950 (MI350) and RDNA targets to such lists one release at a time. `gfx940`/`gfx941` are
    pre-release MI300 targets; production MI300A/X is `gfx942` (iree-org/iree#19206). `gcnArchName` carries feature
    suffixes (`gfx942:sramecc+:xnack-`, vLLM #14062): strip what follows `:` before comparing (ROC115). Builds should
    honour `PYTORCH_ROCM_ARCH` (read by `torch.utils.cpp_extension`) or `native`.

    ## In code written for ROCm
    In a project written for AMD (its C/C++ is AMD's, its build HIP-only, or its requirements need ROCm), one target
    handed to the project's own code (`shuffle_scale(w, arch="gfx950")`, a parameter's default, a fallback when
    detection fails) picks what was written for that GPU on purpose: not flagged. What builds for fixed targets (flags,
    `PYTORCH_ROCM_ARCH`/`GPU_ARCHS`, target lists) and allow-lists validating them still are: they refuse new GPUs
    whoever wrote them. An allow-list of the GPUs its kernels are written for (tested before dispatching to a kernel or
    compiling one for the GPU found, a Triton `GPUTarget`) is not. In a mixed project, ROCm-only code
    (`platforms/rocm.py`) is checked like any other.

    ## Example
    ```python
    os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"
    cc_flags.append("--offload-arch=gfx942")
    ```

    ## Fix
    ```python
    arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
    os.environ.setdefault("PYTORCH_ROCM_ARCH", arch)
    cc_flags.append(f"--offload-arch={arch}")
    ```

    ## Fix safety
    No automatic fix: which targets a project must support is a release decision.
    """

    code = "ROC105"
    name = "hardcoded-gfx-arch"
    severity = Severity.WARNING
    applies_to_tests = False
    fix_availability = FixAvailability.NONE
    triggers = (b"gfx",)

    def __init__(self) -> None:
        self._reported_carriers: set[ast.AST] = set()  # one report per list of targets, at its first literal

    def visit_Constant(self, node: ast.Constant, ctx: PythonContext) -> None:
        if isinstance(ctx.parent(node), ast.JoinedStr):
            return  # the text of an f-string is no literal of its own
        text = literal_value(ctx, node)
        match = _HARDCODED.match(text) if text else None
        if text is None or match is None or in_message(ctx, node) or _module_is_arch_specific(text, ctx):
            return
        if renames_tested_value(ctx, node):
            return
        carrier = ctx.values.collection_of(node)
        if carrier in self._reported_carriers:
            return
        is_flag = match.group("flag") is not None  # a compiler flag or an env assignment is never a lookup key
        uses = set(value_uses(ctx, carrier, lambda value: _use(value, ctx, is_flag=is_flag and value is carrier)))
        texts = [found for found in literals_in(ctx, carrier) if _HARDCODED.match(found)] or [text]
        if Use.SETS in uses and Use.TESTED not in uses:
            if not is_flag and _picks_amd_code(ctx, carrier, texts):
                return
            self._reported_carriers.add(carrier)
            ctx.report(node, _message(texts, ctx.options.target_archs))
        elif _is_allow_list(carrier, texts) and any(value_uses(ctx, carrier, lambda value: _support_use(value, ctx))):
            if _dispatches_amd_kernels(ctx, carrier):
                return
            self._reported_carriers.add(carrier)
            ctx.report(node, _allow_list_message(texts))


def _use(value: ast.AST, ctx: PythonContext, *, is_flag: bool) -> list[Use] | None:
    """What the use of `value` (the literal, its collection, a read of a name bound to it) says; None: follow
    it on. A positional argument of another function is as often a registry key (`register_kernels("gfx942")`)."""
    if in_message(ctx, value):
        return []
    if is_tested(ctx, value):
        return [Use.TESTED]
    if is_flag or sets_up(ctx, value, _TARGET_CONSUMERS):
        return [Use.SETS]
    parent = ctx.parent(value)
    if isinstance(parent, ast.Return):  # one arch returned guesses the current GPU; a list is a support table
        return [] if isinstance(value, (ast.List, ast.Tuple, ast.Set)) or picked_by_text(ctx, parent) else [Use.SETS]
    key = ctx.semantic.dict_key_of(value)
    if key is not None:  # {"PYTORCH_ROCM_ARCH": ...}
        return [Use.SETS] if ctx.string_value(key) in _ARCH_VARIABLES else []
    return [] if ctx.semantic.is_store(value) else None


def _picks_amd_code(ctx: PythonContext, carrier: ast.AST, texts: list[str]) -> bool:
    """In a project written for AMD, one target handed to code of the project (`arch="gfx950"`, a default, a fallback)
    picks the kernels, layouts or tuning written for that GPU on purpose; one that builds (a flag, an environment or
    arch variable, a command line: `_builds`) still builds for that GPU only."""
    if len({arch for text in texts for arch in _ARCH_NAME.findall(text)}) != 1 or not ctx.project_written_for_amd:
        return False
    return not any(value_uses(ctx, carrier, lambda value: _builds(value, ctx)))


def _dispatches_amd_kernels(ctx: PythonContext, carrier: ast.AST) -> bool:
    """In a project written for AMD, an allow-list no use of which sits in a def naming an arch variable or an offload
    flag is its table of the GPUs its kernels are written for (`if get_gfx() in ("gfx942", "gfx950")` before an
    assembly kernel, an assert before compiling a kernel for the GPU found, Triton's `GPUTarget("hip", arch, 64)`);
    one that validates what the user builds for (`GPU_ARCHS`) still refuses new GPUs."""
    if not ctx.project_written_for_amd:
        return False
    return not any(value_uses(ctx, carrier, lambda value: _builds(value, ctx, in_def=True)))


def _builds(value: ast.AST, ctx: PythonContext, *, in_def: bool = False) -> list[bool] | None:
    """Whether a use of the target builds for it: its statement names an arch variable, an offload flag or a Triton
    target; or its def names the targets a user builds for (`_USER_TARGET_WORDS`)."""
    scope = (ast.FunctionDef, ast.AsyncFunctionDef) if in_def else ast.stmt
    statement = next((node for node in ctx.ancestors(value) if isinstance(node, scope)), None)
    code = ctx.code_of(statement) if statement is not None else ""
    return [True] if any(word in code for word in (_USER_TARGET_WORDS if in_def else _BUILD_WORDS)) else None


def _is_allow_list(carrier: ast.AST, texts: list[str]) -> bool:
    """A list, tuple or set of exact targets of more than one family (gfx90a and gfx942; not gfx940-gfx942,
    which is one family written out, like `startswith("gfx94")`, and what the fnuz FP8 format is by spec)."""
    if not isinstance(carrier, _LISTS):
        return False
    names = [name for text in texts for name in _ARCH_NAME.findall(text) if not name.endswith("generic")]
    return len({name[:-1] for name in names}) > 1


def _support_use(value: ast.AST, ctx: PythonContext) -> list[bool] | None:
    """Whether a use of the list decides if the code goes on for a target (`flow.decides_support`): the list,
    or one of its elements, tested for membership or equality; None: follow it on. Other lookups (keys,
    `choices=`) and messages end the walk."""
    if in_message(ctx, value):
        return []
    parent = ctx.parent(value)
    if isinstance(parent, ast.Compare):
        one_of = len(parent.ops) == 1 and isinstance(parent.ops[0], _ONE_OF)
        return [one_of and decides_support(ctx, parent)]
    return [] if is_looked_for(ctx, value) else None


def _module_is_arch_specific(text: str, ctx: PythonContext) -> bool:
    """A module named for its target (`gen_instances_gfx942.py`, `fmha_gfx1250/`) names it on purpose."""
    closest = "/".join(ctx.source.path.lower().replace("\\", "/").split("/")[-2:])
    return all(arch in closest for arch in _ARCH_NAME.findall(text))  # `text` names at least one target


def _allow_list_message(texts: list[str]) -> str:
    shown = ", ".join(f'"{text}"' for text in texts)
    return (
        f"exact list of AMD GPU targets {shown if len(shown) <= 60 else shown[:57] + '...'} decides whether the "
        "code goes on: every GPU it does not name (a newer one, gfx950, RDNA) is refused or loses the path it "
        'selects; test the family (arch.startswith("gfx9")) or a capability, or let the user extend the list'
    )


def _message(texts: list[str], target_archs: tuple[str, ...]) -> str:
    archs = [arch for text in texts for arch in _ARCH_NAME.findall(text)]
    shown = ", ".join(f'"{text}"' for text in texts)
    pre_release = sorted({"gfx940", "gfx941"}.intersection(archs))
    missing = [a for a in target_archs if a.split(":", 1)[0] not in archs]
    verb = "is a pre-release MI300 target" if len(pre_release) == 1 else "are pre-release MI300 targets"
    return (
        f"hardcoded AMD GPU target {shown if len(shown) <= 60 else shown[:57] + '...'} builds or selects code "
        'for those GPUs only; detect the arch at runtime (gcnArchName.split(":")[0]) or let the user choose it '
        "(PYTORCH_ROCM_ARCH)"
        + (f" ({' and '.join(pre_release)} {verb}; production MI300 is gfx942)" if pre_release else "")
        + (f"; it leaves out configured target-archs {', '.join(missing)}" if missing else "")
    )


HardcodedGfxArch.valid = (
    # Comparisons against the detected arch, with exact names, prefixes and a tuple tested with `in`.
    Valid(
        """
        import torch
        def use_fnuz_fp8() -> bool:
            arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            if arch == "gfx942" or arch.startswith("gfx94"):
                return True
            return arch in ("gfx940", "gfx941", "gfx942")
        """,
    ),
    # Lists tested with `in` whose test refuses nothing: one family written out (it must be exact: fnuz FP8 is
    # gfx940-gfx942 by spec), a test that only picks a setting, one in a skip's message.
    Valid(
        """
        import os, torch
        def fp8_dtype():
            arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            if arch not in ["gfx940", "gfx941", "gfx942"]:
                raise ValueError("fnuz FP8 is the MI300 format")
            return torch.float8_e4m3fnuz
        def block_size(arch):
            size = 128
            if arch in ("gfx90a", "gfx942"):
                size = 256
            return size
        def check(arch):
            if arch.split(":")[0] in {"gfx90a", "gfx942"}:
                print("tuned for", arch)
        """,
    ),
    # Dict keys of a tuning table indexed by the detected arch, lookups by subscript; a table written as code that
    # translates a detected name to its target.
    Valid(
        """
        import re, torch
        BLOCK_SIZES = {"gfx90a": 128, "gfx942": 256, "gfx1100": 64}
        def block_size():
            arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            return BLOCK_SIZES.get(arch, 128)
        def apu_arch(cpuinfo):
            if re.search(r"Strix Halo|8060S", cpuinfo) or "Ryzen AI Max" in cpuinfo:
                return "gfx1151"
            if "890M" in cpuinfo:
                return "gfx1150"
        """,
    ),
    # Docstrings, comments, log and exception messages, argparse choices.
    Valid(
        """
        import argparse, logging
        def build(arch):
            \"\"\"Build the kernels, e.g. for "gfx942".\"\"\"
            # CI builds gfx90a;gfx942
            logging.info("building for %s (default %s)", arch, "gfx942")
            if arch not in {"gfx90a", "gfx942"}:  # a warning refuses nothing
                logging.warning("untested target %s", arch)
            if not arch:
                raise RuntimeError("gfx942")
        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", choices=["gfx90a", "gfx942", "gfx1100"])
        """,
    ),
)
HardcodedGfxArch.invalid = (
    Invalid(
        """
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"
        from torch.utils.cpp_extension import CUDAExtension
        """,
        expect=("2:35-2:50",),
        message='"gfx90a;gfx942"',
    ),
    Invalid(
        """
        cc_flag = []
        if IS_HIP_EXTENSION:
            cc_flag.append("--offload-arch=gfx942")
        """,
        expect=("3:20-3:43",),
        message="--offload-arch=gfx942",
    ),
    Invalid(
        """
        import torch

        torch._inductor.config.rocm.arch = ["gfx90a"]
        """,
        expect=("3:37-3:45",),
    ),
    Invalid(
        """
        import os
        def rocm_arch_list():
            return os.environ.get("PYTORCH_ROCM_ARCH", "gfx90a,gfx942").split(",")
        def default_arch(name):
            if "AMD" in name:  # one guess, not a table of names
                return "gfx942"
        """,
        expect=("3:48-3:63", "6:16-6:24"),
    ),
    Invalid(
        """
        import subprocess
        ROCM_TARGETS = ["gfx940", "gfx941", "gfx942"]

        def compile_kernel(src):
            cmd = ["hipcc", "-O3", *(f"--offload-arch={a}" for a in ROCM_TARGETS), src]
            subprocess.check_call(cmd)
        """,
        expect=("2:17-2:25",),
        message="pre-release",
    ),
    Invalid(
        """
        from torch.utils.cpp_extension import load
        ROCM_ARCH = "gfx942"

        def build_extension():
            return load("fused_ops", ["fused_ops.hip"], extra_cuda_cflags=[f"--offload-arch={ROCM_ARCH}", "-O3"])
        """,
        expect=("2:13-2:21",),
    ),
    Invalid(
        """
        from triton.backends.compiler import GPUTarget

        def aot_target(arch: str = "gfx942:sramecc+:xnack-"):
            return GPUTarget("hip", arch, 64)
        """,
        expect=("3:28-3:52",),
    ),
    # Exact allow-lists of several families: asserted, refused by `raise`, or returned by a predicate that picks
    # the fast path.
    Invalid(
        """
        import os
        ALLOWED_ARCHS = ["native", "gfx90a", "gfx942"]
        def rocm_archs():
            archs = os.getenv("GPU_ARCHS", "native").split(";")
            for arch in archs:
                if arch not in ALLOWED_ARCHS:
                    raise ValueError(f"unsupported GPU_ARCHS entry {arch}; expected one of {ALLOWED_ARCHS}")
            return archs
        """,
        expect=("2:28-2:36",),
        message="exact list of AMD GPU targets",
    ),
    Invalid(
        """
        def validate_archs(archs):
            allowed_archs = ["native", "gfx90a", "gfx940", "gfx941", "gfx942"]
            assert all(arch in allowed_archs for arch in archs), f"{archs} not supported"
        """,
        expect=("2:32-2:40",),
    ),
    Invalid(
        """
        import torch
        def on_gfx9() -> bool:
            gpu_arch = torch.cuda.get_device_properties('cuda').gcnArchName
            return any(arch in gpu_arch for arch in ["gfx90a", "gfx942", "gfx950"])
        def supported(arch) -> bool:
            if arch.split(":")[0] not in {"gfx908", "gfx1100"}:
                return False
            return True
        """,
        expect=("4:46-4:54", "6:35-6:43"),
    ),
)
