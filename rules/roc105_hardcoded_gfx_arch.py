"""ROC105 hardcoded-gfx-arch."""

from __future__ import annotations

import enum
import re

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import (
    in_message,
    is_display_call,
    is_looked_for,
    last_name,
)
from rocmlint.python.lists import ADDING_METHODS
from rocmlint.python.project import is_test_file
from rocmlint.rule import Invalid, Rule, Valid

# A gfx target id: gfx + major (6-12) + minor + hex stepping (gfx90a, gfx942, gfx1100), optional target
# features (gfx90a:sramecc+:xnack-), or a generic target (gfx9-4-generic). Prefixes such as "gfx94" or
# "gfx11" do not match: they are what code compares a detected arch against.
_TARGET = r"(?:amdgcn-amd-amdhsa--)?gfx(?:(?:[6-9]|1[0-2])[0-9][0-9a-f](?::[a-z]+[+-])*|[0-9]{1,2}(?:-[0-9]+)?-generic)"
_TARGET_LIST = rf"{_TARGET}(?:\s*[;,]\s*{_TARGET}|\s+{_TARGET})*"
# The whole string is a target, a list (PYTORCH_ROCM_ARCH="gfx90a;gfx942"), or a flag / assignment
# carrying one (--offload-arch=gfx942, PYTORCH_ROCM_ARCH=gfx942).
_HARDCODED = re.compile(rf"^\s*(?P<flag>-{{0,2}}[A-Za-z][\w-]*=)?(?P<archs>{_TARGET_LIST})\s*$")
_ARCH_NAME = re.compile(r"gfx[0-9a-f]+(?:-[0-9]+)?(?:-generic)?")
_PRE_RELEASE = frozenset({"gfx940", "gfx941"})

_SET_WRAPPERS = frozenset({"frozenset", "set"})
# Methods whose second positional argument is a value to store or a fallback (`os.getenv(k, "gfx942")`).
_VALUE_AFTER_KEY = frozenset({"get", "getenv", "setdefault", "putenv", "pop"})
# Methods that build a string out of their arguments.
_STRING_BUILDERS = frozenset({"join", "format"})
# Calls whose positional arguments are a command line or a compile target.
_COMMAND_SINKS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "os.system",
        "os.popen",
        "triton.backends.compiler.GPUTarget",
        "triton.compiler.GPUTarget",
    }
)
# Environment variables and CMake options that hold a ROCm arch list.
_ARCH_VARIABLES = frozenset(
    {
        "PYTORCH_ROCM_ARCH",
        "GPU_ARCHS",
        "GPU_TARGETS",
        "AMDGPU_TARGETS",
        "HCC_AMDGPU_TARGET",
        "CMAKE_HIP_ARCHITECTURES",
        "ROCM_ARCH",
        "HIP_ARCHITECTURES",
        "OFFLOAD_ARCH",
    }
)
_CONTAINERS = (cst.Element, cst.List, cst.Tuple, cst.Set)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# How far a value is followed through names and loops (`ARCHS` -> `for a in ARCHS` -> `a in name`).
_MAX_DEPTH = 3


class _Use(enum.Enum):
    HARDCODED = "hardcoded"  # configures a build or a compile target, or stands in for the current GPU
    TEST = "test"  # compared or matched with a detected arch, or a lookup key
    UNKNOWN = "unknown"


class HardcodedGfxArch(Rule):
    """
    ## What it does
    Flags a string literal naming an AMD GPU target (`"gfx942"`, `"gfx90a:sramecc+:xnack-"`), a target
    list (`"gfx90a;gfx942"`) or a flag carrying one (`"--offload-arch=gfx942"`) that is used as a value
    rather than compared with the GPU detected at runtime.

    Values are: environment and config assignments (`os.environ["PYTORCH_ROCM_ARCH"] = ...`,
    `torch._inductor.config.rocm.arch = [...]`), keyword arguments (`arch="gfx942"`, `default=...`),
    parameter defaults, fallbacks (`os.getenv("GPU_ARCHS", "gfx942")`, `return "gfx942"`), command
    lines and compiler-flag lists, strings built from it (`f"--offload-arch={ARCH}"`, `";".join(...)`),
    and names or loops that carry it there. Not reported: comparisons and matches
    (`arch == "gfx942"`, `arch in ("gfx90a", "gfx942")`, `arch.startswith(...)`, a list only tested
    with `in`, a loop whose variable is compared), set literals, dict keys and subscripts, positional
    arguments of other functions (often registry keys), `argparse` `choices`, docstrings, comments,
    log/print/exception messages, decorators, test files, and modules named for the target
    (`gen_instances_gfx942.py`). With `target-archs` configured, the message names the configured
    targets the literal leaves out.

    ## Why is this bad on ROCm?
    A HIP code object runs only on the gfx targets it was built for, so a hardcoded list builds (or
    selects kernels, tuning tables and dtypes) for the author's GPUs only: any other AMD GPU gets
    "no kernel image is available" / `hipErrorNoBinaryForGpu` or silently takes a slow fallback.
    `gfx940` and `gfx941` are pre-release MI300 targets; production MI300A/MI300X is `gfx942`
    (iree-org/iree#19206). The runtime name from `torch.cuda.get_device_properties(i).gcnArchName`
    carries feature suffixes (`gfx942:sramecc+:xnack-`, vLLM issue #14062), so strip everything after
    `:` before comparing (ROC115). Build scripts should honour `PYTORCH_ROCM_ARCH` (PyTorch's
    `torch.utils.cpp_extension` reads it) or `native` instead of a fixed list.

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
    fix_availability = FixAvailability.NONE
    triggers = (b"gfx",)

    def __init__(self) -> None:
        self._ctx: PythonContext | None = None
        self._reported_carriers: set[cst.CSTNode] = set()  # one report per list of targets, at its first literal

    def visit_SimpleString(self, node: cst.SimpleString, ctx: PythonContext) -> None:
        if "gfx" in node.value and not isinstance(ctx.parent(node), cst.ConcatenatedString):
            if not is_test_file(ctx.source.path):
                self._check_literal(node, ctx)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString, ctx: PythonContext) -> None:
        if not isinstance(ctx.parent(node), cst.ConcatenatedString) and not is_test_file(ctx.source.path):
            self._check_literal(node, ctx)

    def _check_literal(self, node: cst.SimpleString | cst.ConcatenatedString, ctx: PythonContext) -> None:
        text = _text_of(node, ctx)
        match = _HARDCODED.match(text) if text else None
        if text is None or match is None or in_message(ctx, node) or _module_is_arch_specific(text, ctx):
            return
        carrier = ctx.values.collection_of(node)
        if self._ctx is not ctx:
            self._ctx, self._reported_carriers = ctx, set()
        if carrier in self._reported_carriers:
            return
        if self._use(carrier, ctx, is_flag=match.group("flag") is not None) is _Use.HARDCODED:
            self._reported_carriers.add(carrier)
            ctx.report(node, _message(_gfx_texts(carrier, ctx) or [text], ctx.options.target_archs))

    # --- how a value (the literal, the collection holding it, or a name bound to it) is used --------
    def _use(self, carrier: cst.CSTNode, ctx: PythonContext, *, is_flag: bool = False, depth: int = 0) -> _Use:
        if _is_membership_table(carrier, ctx):
            return _Use.TEST  # a set of targets only answers "is this arch in it"
        parent = ctx.parent(carrier)
        if parent is None:
            return _Use.UNKNOWN
        if is_looked_for(ctx, carrier):
            return _Use.TEST
        if is_flag:
            return _Use.HARDCODED  # a compiler flag or an env assignment is never a lookup key
        if isinstance(parent, cst.Arg):
            return self._argument_use(parent, ctx, depth)
        if isinstance(parent, cst.FormattedStringExpression):
            return _Use.HARDCODED  # f"--offload-arch={ARCH}"
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo):
            return _Use.HARDCODED if parent.right is carrier else _Use.UNKNOWN
        if isinstance(parent, cst.Param):
            return _Use.HARDCODED if parent.default is carrier else _Use.UNKNOWN
        if isinstance(parent, cst.Return):
            # one arch returned is a guess at the current GPU; a returned list is usually a support table
            return _Use.UNKNOWN if isinstance(carrier, _CONTAINERS) else _Use.HARDCODED
        if isinstance(parent, cst.DictElement):
            is_arch_variable = parent.value is carrier and ctx.string_value(parent.key) in _ARCH_VARIABLES
            return _Use.HARDCODED if is_arch_variable else _Use.UNKNOWN
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and parent.value is carrier:
            return self._binding_use(parent, ctx, depth)
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is carrier:
            return self._loop_use(parent, ctx, depth)
        return _Use.UNKNOWN

    def _argument_use(self, arg: cst.Arg, ctx: PythonContext, depth: int) -> _Use:
        call = ctx.parent(arg)
        if not isinstance(call, cst.Call) or is_display_call(ctx, call):
            return _Use.UNKNOWN
        if arg.keyword is not None:
            return _Use.HARDCODED  # arch="gfx942", default="gfx942", extra_cuda_cflags=[...]
        method = last_name(call.func)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if method in ADDING_METHODS and isinstance(receiver, (cst.Name, cst.Attribute)):
            return self._uses_of(receiver, ctx, depth, unused=_Use.UNKNOWN)
        if method in _VALUE_AFTER_KEY:
            return _Use.HARDCODED if ctx.semantic.positional(call, 0) is not arg else _Use.UNKNOWN
        if method in _STRING_BUILDERS or ctx.qualified_name(call.func) in _COMMAND_SINKS:
            return _Use.HARDCODED
        # A positional argument of an arbitrary function is as often a registry or table key
        # (`register_kernels("gfx942", ...)`) as a target choice.
        return _Use.UNKNOWN

    def _binding_use(
        self, statement: cst.Assign | cst.AnnAssign | cst.AugAssign, ctx: PythonContext, depth: int
    ) -> _Use:
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        uses = set()
        for target in targets:
            if isinstance(target, cst.Subscript):
                uses.add(_Use.HARDCODED)  # os.environ["PYTORCH_ROCM_ARCH"] = ..., cfg["arch"] = ...
            elif isinstance(target, cst.Attribute):
                # written here and never read here: it configures something else (`config.rocm.arch`)
                uses.add(self._uses_of(target, ctx, depth, unused=_Use.HARDCODED))
            elif isinstance(target, cst.Name):
                # never read here: a constant exported for other modules, whose use is unknown
                uses.add(self._uses_of(target, ctx, depth, unused=_Use.UNKNOWN))
        return _strongest(uses)

    def _loop_use(self, loop: cst.For | cst.CompFor, ctx: PythonContext, depth: int) -> _Use:
        """`for arch in ARCHS: if arch in name` is a test, `[f"--offload-arch={a}" for a in ARCHS]` is not."""
        if not isinstance(loop.target, cst.Name):
            return _Use.UNKNOWN
        scope = loop if isinstance(loop, cst.For) else _comprehension_of(loop, ctx)
        return self._uses_of(loop.target, ctx, depth, unused=_Use.UNKNOWN, scope=scope)

    def _uses_of(
        self,
        binding: cst.Name | cst.Attribute,
        ctx: PythonContext,
        depth: int,
        *,
        unused: _Use,
        scope: cst.CSTNode | None = None,
    ) -> _Use:
        """How the value bound to a name (or attribute) is used, from every read of that identifier.

        Any test use wins: the collection is a table of supported targets even if it is also printed.
        Reads are matched by identifier within the file (or within `scope`), without scope analysis.
        """
        if depth >= _MAX_DEPTH:
            return _Use.UNKNOWN
        identifier = binding.value if isinstance(binding, cst.Name) else binding.attr.value
        reads = ctx.references.mention_reads(identifier, within=scope)
        if not reads:
            return unused
        return _strongest({self._read_use(read, ctx, depth + 1) for read in reads})

    def _read_use(self, read: cst.CSTNode, ctx: PythonContext, depth: int) -> _Use:
        if in_message(ctx, read):
            return _Use.UNKNOWN
        return self._use(ctx.values.collection_of(read), ctx, depth=depth)


def _strongest(uses: set[_Use]) -> _Use:
    if _Use.TEST in uses:
        return _Use.TEST
    return _Use.HARDCODED if _Use.HARDCODED in uses else _Use.UNKNOWN


def _text_of(node: cst.SimpleString | cst.ConcatenatedString, ctx: PythonContext) -> str | None:
    """The literal's text; bytes literals count too (`b"--offload-arch=gfx942"` for hiprtc options)."""
    if isinstance(node, cst.SimpleString) and "b" in node.prefix.lower():
        value = node.evaluated_value
        return value.decode("latin-1") if isinstance(value, bytes) else None
    return ctx.string_value(node)


def _is_membership_table(carrier: cst.CSTNode, ctx: PythonContext) -> bool:
    if isinstance(carrier, cst.Set):
        return True
    return isinstance(carrier, cst.Call) and ctx.qualified_name(carrier.func) in _SET_WRAPPERS


def _module_is_arch_specific(text: str, ctx: PythonContext) -> bool:
    """A module named for its target (`gen_instances_gfx942.py`, `fmha_gfx1250/`) names it on purpose."""
    closest = "/".join(ctx.source.path.lower().replace("\\", "/").split("/")[-2:])
    archs = _ARCH_NAME.findall(text)
    return bool(archs) and all(arch in closest for arch in archs)


def _gfx_texts(carrier: cst.CSTNode, ctx: PythonContext) -> list[str]:
    """The gfx target strings in a literal or in the list/tuple/set/concatenation holding it."""
    found: list[str] = []
    stack: list[cst.CSTNode] = [carrier]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            text = _text_of(node, ctx)
            if text is not None and _HARDCODED.match(text):
                found.append(text)
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            stack.extend(element.value for element in reversed(node.elements))
        elif isinstance(node, cst.BinaryOperation):
            stack.extend((node.right, node.left))
        elif isinstance(node, cst.Call):
            stack.extend(arg.value for arg in reversed(node.args))
    return found


def _comprehension_of(loop: cst.CompFor, ctx: PythonContext) -> cst.CSTNode:
    for ancestor in ctx.ancestors(loop):
        if isinstance(ancestor, _COMPREHENSIONS):
            return ancestor
    return loop


def _message(texts: list[str], target_archs: tuple[str, ...]) -> str:
    archs = [arch for text in texts for arch in _ARCH_NAME.findall(text)]
    shown = ", ".join(f'"{text}"' for text in texts)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    message = (
        f"hardcoded AMD GPU target {shown} builds or selects code for those GPUs only; detect the arch at "
        'runtime (gcnArchName.split(":")[0]) or let the user choose it (PYTORCH_ROCM_ARCH)'
    )
    pre_release = sorted(_PRE_RELEASE.intersection(archs))
    if pre_release:
        verb = "is a pre-release MI300 target" if len(pre_release) == 1 else "are pre-release MI300 targets"
        message += f" ({' and '.join(pre_release)} {verb}; production MI300 is gfx942)"
    missing = [a for a in target_archs if a.split(":", 1)[0] not in archs]
    if missing:
        message += f"; it leaves out configured target-archs {', '.join(missing)}"
    return message


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
    # vLLM-style: a list iterated by a generator whose variable is compared.
    Valid(
        """
        import torch

        def on_gfx9() -> bool:
            gpu_arch = torch.cuda.get_device_properties('cuda').gcnArchName
            return any(arch in gpu_arch for arch in ["gfx90a", "gfx942", "gfx950"])
        """,
    ),
    # flash-attention-style allow-list: a module constant only tested with `not in`.
    Valid(
        """
        import os
        ALLOWED_ARCHS = ["native", "gfx90a", "gfx942", "gfx950"]

        def rocm_archs():
            archs = os.getenv("GPU_ARCHS", "native").split(";")
            for arch in archs:
                if arch not in ALLOWED_ARCHS:
                    raise ValueError(f"unsupported GPU_ARCHS entry {arch}; expected one of gfx90a, gfx942")
            return archs
        """,
    ),
    # Dict keys of a tuning table indexed by the detected arch, and lookups by subscript.
    Valid(
        """
        import torch
        BLOCK_SIZES = {
            "gfx90a": 128,
            "gfx942": 256,
            "gfx1100": 64,
        }

        def block_size():
            arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            return BLOCK_SIZES.get(arch, 128)
        """,
    ),
    # Docstrings, comments, log and exception messages, argparse choices.
    Valid(
        """
        import argparse
        import logging

        def build(arch):
            \"\"\"Build the kernels, e.g. for "gfx942".\"\"\"
            # CI builds gfx90a;gfx942
            logging.info("building for %s (default %s)", arch, "gfx942")
            if arch not in {"gfx90a", "gfx942"}:
                raise RuntimeError("gfx942")

        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", choices=["gfx90a", "gfx942", "gfx1100"])
        """,
    ),
    # Registry keys passed positionally, a set of supported targets, and a family prefix.
    Valid(
        """
        from .registry import detect_arch, register_kernels
        from .configs import GEMM_CONFIGS_942

        register_kernels("gfx942", GEMM_CONFIGS_942)
        ARCH_OK, DETECTED_ARCH = detect_arch({"gfx950", "gfx942"})
        FAMILY_PREFIX = "gfx9"
        """,
    ),
    # The arch comes from the user or the device; the literals only document it.
    Valid(
        """
        import os
        import torch

        def offload_flags():
            \"\"\"Returns e.g. ["--offload-arch=gfx942"].\"\"\"
            archs = os.environ.get("PYTORCH_ROCM_ARCH")
            if not archs:
                archs = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            return [f"--offload-arch={arch}" for arch in archs.split(";")]
        """,
    ),
    # Normalising the runtime name is string manipulation, not a target choice.
    Valid(
        """
        def base_arch(name: str) -> str:
            return name.replace("gfx90a:sramecc+:xnack-", "gfx90a").removesuffix(":xnack-")
        """,
    ),
    # "gfx" only in names, family prefixes, file names, a regex and upper case: no target spelled.
    Valid(
        r"""
        import re
        import torch

        def _gfx942_default_tile_fits_lds(on_gfx9: bool) -> bool:
            arch = torch.cuda.get_device_properties(0).gcnArchName
            version = re.match(r"gfx(\d+)", arch)
            table = "configs/gfx942_fp8.json" if arch.startswith("gfx94") else "GFX950"
            return on_gfx9 and version is not None and bool(table)
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
        """,
        expect=("4:48-4:63",),
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
    # Spellings the trigger_pattern must still find: implicit concatenation, a target split across the
    # pieces (with a comment between them), a line continuation inside the literal, escapes before,
    # inside and after a target (`\x3d` is "=", `\t` and U+00A0 are spaces), a bytes flag, a
    # generic target.
    Invalid(
        """
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;" "gfx942"
        """,
        expect=("2:35-2:53",),
        message='"gfx90a;gfx942"',
    ),
    Invalid(
        """
        import os
        os.environ['GPU_ARCHS'] = (
            'gfx9'  # MI300
            '42'
        )
        """,
        expect=("3:5-4:9",),
        message='"gfx942"',
    ),
    Invalid(
        r"""
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;\
        gfx942"
        """,
        expect=("2:35-3:8",),
    ),
    Invalid(
        r"""
        cc_flag = []
        cc_flag.append("--offload-arch\x3dgfx942")
        """,
        expect=("2:16-2:42",),
        message="--offload-arch=gfx942",
    ),
    Invalid(
        r"""
        import os
        os.environ["HIP_ARCHITECTURES"] = "gfx94\x32"
        """,
        expect=("2:35-2:46",),
        message='"gfx942"',
    ),
    Invalid(
        r"""
        from triton.backends.compiler import GPUTarget

        def aot_target(arch="\tgfx950"):
            return GPUTarget("hip", arch, 64)
        """,
        expect=("3:21-3:31",),
    ),
    Invalid(
        """
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a,gfx942\xa0"
        """,
        expect=("2:35-2:51",),
    ),
    Invalid(
        """
        from hip import hiprtc

        def compile_program(prog):
            return hiprtc.hiprtcCompileProgram(prog, 2, [b"--offload-arch=gfx90a", b"-O3"])
        """,
        expect=("4:50-4:74",),
    ),
    Invalid(
        """
        from .aot import compile_kernel

        compile_kernel("attn.hip", target="gfx9-4-generic")
        """,
        expect=("3:35-3:51",),
        message="gfx9-4-generic",
    ),
)
