"""ROC114 arch-list-sm."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.capability import BUILT_ARCHITECTURE_WORDS, built_architecture, is_capability_read
from rocmlint.python.conditions import whole_condition
from rocmlint.python.fixes import gate_condition, is_truth_tested
from rocmlint.python.flow import value_uses
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import fstring_prefix, last_name, only_displayed
from rocmlint.python.text_search import regex_operands
from rocmlint.python.values import Follow, Names, Through
from rocmlint.rule import Invalid, Rule, Valid

_ARCH_LIST_CALLS = frozenset({"torch.cuda.get_arch_list"})
_NVIDIA_PREFIXES = ("sm_", "compute_")
_MEMBERSHIP = (ast.In, ast.NotIn)
_EQUALITY = (ast.Eq, ast.NotEq)
# An element (`for arch in ...`, `[0]`), a join or a copy of the arch list is searched like the list itself.
_ARCH_LIST_VALUES = Follow(names=Names.AGREEING, subscripts=True, joins=True, loops=True, conversions=True)


class ArchListSm(Rule):
    """
    ## What it does
    Flags searches of `torch.cuda.get_arch_list()` for NVIDIA targets that are not gated for ROCm:
    `"sm_90" in torch.cuda.get_arch_list()`, `f"sm_{major}{minor}" in arch_list` after
    `arch_list = torch.cuda.get_arch_list()`, `any(a.startswith("sm_") for a in ...)`, `==` on its
    elements, and regular expressions such as `re.match(r"sm_(\\d+)", arch)` over it.

    When the search filters a comprehension whose result goes to `max()`/`min()` (no `default=`), the
    diagnostic is at that call: it raises on ROCm, where no element passes.

    Also flags a compute capability read that becomes the NVIDIA architectures a build compiles for: written
    as text (`f"{major}.{minor}"`, joined) to `TORCH_CUDA_ARCH_LIST`, or put in an nvcc option
    (`f"arch=compute_{num},code=sm_{num}"`), through names, lists, loops, `min`/`sorted`/`join`.

    Printing the list and searching it for gfx targets are not flagged, nor a capability only compared
    (ROC113).

    ## Why is this bad on ROCm?
    On ROCm wheels `torch.cuda.get_arch_list()` returns the gfx targets PyTorch was built for
    (`gfx90a`, `gfx942`, `gfx1100`, ...), never `sm_XX`/`compute_XX`. A test for `sm_` never matches,
    so applications decide the AMD GPU is unsupported and fall back to the CPU or disable
    `torch.compile` (debpalash/VoiceStudio#1230). Likewise HIP reports the gfx IP version as the compute
    capability (MI300X is 9.4): an arch list built from it names NVIDIA architectures no AMD GPU has, and
    the CUDA build path it belongs to runs on ROCm (ROCm builds read `PYTORCH_ROCM_ARCH`).

    ## Example
    ```python
    major, minor = torch.cuda.get_device_capability()
    if f"sm_{major}{minor}" not in torch.cuda.get_arch_list():
        device = "cpu"
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if (not _IS_ROCM) and (f"sm_{major}{minor}" not in torch.cuda.get_arch_list()):
        device = "cpu"
    ```
    On ROCm, compare `torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]` with the list.

    ## Fix safety
    Safe: on NVIDIA `_IS_ROCM` is false and the original search runs unchanged; ROCm skips the
    NVIDIA-only check. No fix for a regex match whose result is used beyond its truth (`.group(1)`).
    """

    code = "ROC114"
    name = "arch-list-sm"
    severity = Severity.ERROR
    applies_to_tests = True  # arch-list skips let NVIDIA-only tests run on ROCm builds
    fix_availability = FixAvailability.SAFE
    triggers = (b"get_arch_list", b"get_device_capability", b"get_device_properties")
    also_requires = tuple(dict.fromkeys((*(p.encode() for p in _NVIDIA_PREFIXES), *BUILT_ARCHITECTURE_WORDS)))

    def visit_Compare(self, node: ast.Compare, ctx: PythonContext) -> None:
        for left, operator, right in ctx.semantic.comparison_pairs(node):
            if isinstance(operator, _MEMBERSHIP):
                pairs = [(left, right)]
            elif isinstance(operator, _EQUALITY):
                pairs = [(left, right), (right, left)]
            else:
                continue
            for needle, haystack in pairs:
                if _report(node, _nvidia_targets(needle, ctx), _arch_list_sources(haystack, ctx), ctx):
                    return

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if is_capability_read(ctx, node):
            build_option = built_architecture(ctx, node)
            if build_option is not None:
                ctx.report(node, _BUILD_MESSAGE, gate_on=(build_option,))
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "startswith" and node.args:
            prefixes = _nvidia_targets(node.args[0], ctx)
            _report(node, prefixes, _arch_list_sources(func.value, ctx), ctx)
            return
        pattern, subject = regex_operands(ctx, node)
        if pattern is not None and subject is not None:
            # A match object is used for more than its truth (`.group(1)`): `False` cannot stand for it.
            fixable = is_truth_tested(ctx, node)
            _report(node, _nvidia_regexes(pattern, ctx), _arch_list_sources(subject, ctx), ctx, fixable)


def _report(
    node: ast.expr, targets: list[ast.expr], sources: list[ast.expr], ctx: PythonContext, fixable: bool = True
) -> bool:
    """Report `node` when an NVIDIA target string meets the arch list; True when the pair was found."""
    if not targets or not sources:
        return False
    if only_displayed(ctx, node):
        return True
    empty_failure = _fails_when_empty(node, ctx)
    if empty_failure is not None:
        # Gating the filter would leave the list as empty on ROCm: the failure is where it is consumed.
        ctx.report(empty_failure, _EMPTY_MESSAGE.format(last_name(empty_failure.func)), gate_on=(node, *sources))
        return True
    fix = gate_condition(ctx, whole_condition(ctx, node), _FIX) if fixable else None
    ctx.report(node, _MESSAGE, gate_on=(*sources, *targets), fix=fix)
    return True


def _fails_when_empty(search: ast.expr, ctx: PythonContext) -> ast.Call | None:
    """`max(...)`/`min(...)` without `default=` of what a comprehension filtered by `search` builds, directly
    or through a name or a comprehension over it: on ROCm no element passes, and they raise ValueError."""
    clause = ctx.parent(search)
    built = ctx.parent(clause) if isinstance(clause, ast.comprehension) and search in clause.ifs else None
    failures = value_uses(ctx, built, lambda value: _empty_failure(value, ctx)) if built is not None else []
    return failures[0] if failures else None


def _empty_failure(value: ast.AST, ctx: PythonContext) -> list[ast.Call] | None:
    parent = ctx.parent(value)
    if isinstance(parent, ast.comprehension) and parent.iter is value:
        value = ctx.parent(parent) or value  # a comprehension over the list has no more elements than it
        parent = ctx.parent(value)
    if not (isinstance(parent, ast.Call) and ctx.qualified_name(parent.func) in _FAILS_WHEN_EMPTY):
        return None
    if parent.args != [value] or any(keyword.arg == "default" for keyword in parent.keywords):
        return []
    return [parent]


_FIX = "Search the arch list for sm_ targets only when not on ROCm"
_FAILS_WHEN_EMPTY = frozenset({"max", "min"})


# --- the arch list and NVIDIA target strings ---------------------------------------------------------
def _arch_list_sources(expr: ast.expr, ctx: PythonContext) -> list[ast.expr]:
    """The `get_arch_list()` calls `expr` is the result of, an element of, or a join of; a name counts when
    every assignment is the arch list (or a literal default such as `[]`)."""
    return ctx.values.trace(expr, lambda value: _arch_list_step(value, ctx), _ARCH_LIST_VALUES)


def _arch_list_step(expr: ast.expr, ctx: PythonContext) -> list[ast.expr] | None:
    if not isinstance(expr, ast.Call) or ctx.qualified_name(expr.func) not in _ARCH_LIST_CALLS:
        return None
    return [expr]


def _nvidia_targets(expr: ast.expr, ctx: PythonContext) -> list[ast.expr]:
    """Literals `expr` may be that name an NVIDIA target: `"sm_90"`, `f"sm_{major}{minor}"`,
    `"compute_" + cc`, or a tuple of prefixes for `startswith`."""
    return ctx.values.trace(expr, lambda value: _target_step(value, ctx), Follow(elements=True))


def _target_step(expr: ast.expr, ctx: PythonContext) -> list[ast.expr] | Through | None:
    if isinstance(expr, ast.JoinedStr):
        return [expr] if fstring_prefix(expr).startswith(_NVIDIA_PREFIXES) else []
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return Through((expr.left,))
    if not (isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes))):
        return None
    return [expr] if (ctx.string_value(expr) or "").startswith(_NVIDIA_PREFIXES) else []


def _nvidia_regexes(pattern: ast.expr, ctx: PythonContext) -> list[ast.expr]:
    sources = ctx.values.string_sources(pattern)
    return [literal for string, literal in sources if any(prefix in string for prefix in _NVIDIA_PREFIXES)]


_MESSAGE = (
    "`torch.cuda.get_arch_list()` lists gfx targets (gfx90a, gfx942) on ROCm builds, so this `sm_`/`compute_` "
    "search never matches on AMD GPUs; gate it with `not torch.version.hip` and compare "
    '`gcnArchName.split(":")[0]` with the list on ROCm'
)

_BUILD_MESSAGE = (
    "ROCm reports the gfx IP version as the CUDA compute capability (MI250 is 9.0, MI300X 9.4), so the NVIDIA "
    "architecture list built from it here names a GPU AMD does not have; build it only when not "
    "torch.version.hip (ROCm builds take their targets from PYTORCH_ROCM_ARCH)"
)

_EMPTY_MESSAGE = (
    "`torch.cuda.get_arch_list()` lists gfx targets on ROCm builds, so no element passes the `sm_`/`compute_` "
    "filter there and `{}()` of the empty result raises ValueError; return before it unless torch.version.cuda "
    "(or pass `default=`)"
)


ArchListSm.valid = (
    # Printing / logging the list.
    Valid(
        """
        import torch
        print("built for:", torch.cuda.get_arch_list())
        print("sm_90 support:", "sm_90" in torch.cuda.get_arch_list())
        """,
    ),
    # A gfx search is the ROCm way; a search of an unrelated list or env var.
    Valid(
        """
        import os, torch
        has_mi300 = "gfx942" in torch.cuda.get_arch_list()
        rdna = any(a.startswith("gfx11") for a in torch.cuda.get_arch_list())
        wants_hopper = "sm_90" in os.environ.get("TORCH_CUDA_ARCH_LIST", "")
        """,
    ),
    # The NVIDIA-only branch of an is-ROCm test.
    Valid(
        """
        import torch
        if torch.version.hip:
            supported = True
        else:
            supported = "sm_90" in torch.cuda.get_arch_list()
        """,
    ),
    # Early return for ROCm, with an IS_ROCM alias (VoiceStudio after the fix).
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        def check_device_compatibility() -> bool:
            if IS_ROCM:
                return True
            major, minor = torch.cuda.get_device_capability()
            arch_list = torch.cuda.get_arch_list()
            return f"sm_{major}{minor}" in arch_list
        """,
    ),
    # `and` short-circuit and a conditional expression.
    Valid(
        """
        import torch
        ok = torch.version.cuda is not None and "sm_80" in torch.cuda.get_arch_list()
        ok = True if torch.version.hip else "sm_80" in torch.cuda.get_arch_list()
        """,
    ),
    # The capability only compared or logged, or built into the arch list on NVIDIA builds only.
    Valid(
        """
        import logging, os, torch
        def set_arch_list():
            if torch.version.hip:
                return
            major, minor = torch.cuda.get_device_capability()
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"

        major, minor = torch.cuda.get_device_capability()
        logging.info("building for %s", f"{major}.{minor}")
        if (major, minor) < (7, 0):
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0"
        """,
    ),
    # Only in a docstring and a comment.
    Valid(
        """
        import torch
        def archs():
            \"\"\"Returns e.g. ["sm_80", "sm_90"] on CUDA builds.\"\"\"
            # sm_ entries only exist on CUDA wheels
            return torch.cuda.get_arch_list()
        """,
    ),
)
ArchListSm.invalid = (
    Invalid(
        """
        import torch
        if "sm_90" in torch.cuda.get_arch_list():
            use_fp8 = True
        """,
        expect=("2:4-2:41",),
        message="gfx",
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        if (not _IS_ROCM) and ("sm_90" in torch.cuda.get_arch_list()):
            use_fp8 = True
        """,
    ),
    Invalid(
        """
        import torch
        def check_device_compatibility():
            major, minor = torch.cuda.get_device_capability()
            arch_list = torch.cuda.get_arch_list()
            if f"sm_{major}{minor}" not in arch_list:
                return "cpu"
            return "cuda"
        """,
        expect=("5:8-5:45",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        def check_device_compatibility():
            major, minor = torch.cuda.get_device_capability()
            arch_list = torch.cuda.get_arch_list()
            if (not _IS_ROCM) and (f"sm_{major}{minor}" not in arch_list):
                return "cpu"
            return "cuda"
        """,
    ),
    # The capability of each visible GPU as TORCH_CUDA_ARCH_LIST, and as nvcc options.
    Invalid(
        """
        import os, torch
        def set_arch_list():
            arch_list = []
            for i in range(torch.cuda.device_count()):
                capability = torch.cuda.get_device_capability(i)
                arch = f"{capability[0]}.{capability[1]}"
                if arch not in arch_list:
                    arch_list.append(arch)
            os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(sorted(arch_list))
        """,
        expect=("5:22-5:57",),
        message="PYTORCH_ROCM_ARCH",
    ),
    Invalid(
        """
        import torch
        compute_capabilities = set()
        major, minor = torch.cuda.get_device_capability(0)
        compute_capabilities.add(f"{major}.{minor}")
        NVCC_FLAGS = []
        for capability in compute_capabilities:
            num = capability[0] + capability[2]
            NVCC_FLAGS += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
        """,
        expect=("3:16-3:51",),
    ),
    # The filtered list is empty on ROCm: max() raises where it is consumed.
    Invalid(
        """
        import torch
        supported_sm = [int(arch.split("_")[1]) for arch in torch.cuda.get_arch_list() if "sm_" in arch]
        max_supported_sm = max((sm // 10, sm % 10) for sm in supported_sm)
        """,
        expect=("3:20-3:67",),
        message="ValueError",
        no_fix=True,
    ),
    # With `default=` nothing raises: the search is what is reported.
    Invalid(
        """
        import torch
        newest = max((int(a[3:]) for a in torch.cuda.get_arch_list() if a.startswith("sm_")), default=0)
        """,
        expect=("2:65-2:84",),
        message="never matches",
    ),
    Invalid(
        """
        import torch
        has_sm = any(a.startswith("sm_") for a in torch.cuda.get_arch_list())
        """,
        expect=("2:14-2:33",),
    ),
    Invalid(
        r"""
        import re, torch
        sms = [int(re.search(r"sm_(\d+)", a).group(1)) for a in torch.cuda.get_arch_list()]
        """,
        expect=("2:12-2:37",),
    ),
    Invalid(
        """
        import torch
        for arch in torch.cuda.get_arch_list():
            if arch.startswith(("sm_", "compute_")):
                print(arch)
        """,
        expect=("3:8-3:44",),
    ),
    Invalid(
        """
        import torch
        supported = " ".join(torch.cuda.get_arch_list())
        has_hopper = "sm_90" in supported
        """,
        expect=("3:14-3:34",),
    ),
)
