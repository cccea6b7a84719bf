"""ROC114 arch-list-sm."""

from __future__ import annotations

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.fixes import gate_condition, is_truth_tested
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import fstring_prefix, only_displayed, whole_condition
from rocmlint.rule import Invalid, Rule, Valid

_ARCH_LIST_CALLS = frozenset({"torch.cuda.get_arch_list"})
_NVIDIA_PREFIXES = ("sm_", "compute_")
# Calls that keep the arch names: `list(...)`, `" ".join(...)`, `str(...)`.
_PASS_THROUGH = frozenset({"list", "tuple", "set", "frozenset", "sorted", "str"})
_REGEX_FUNCTIONS = frozenset({"re.match", "re.search", "re.fullmatch", "re.findall", "re.finditer"})
_REGEX_METHODS = frozenset({"match", "search", "fullmatch", "findall", "finditer"})
_MEMBERSHIP = (cst.In, cst.NotIn)
_EQUALITY = (cst.Equal, cst.NotEqual)
_MAX_DEPTH = 8


class ArchListSm(Rule):
    """
    ## What it does
    Flags searches of `torch.cuda.get_arch_list()` for NVIDIA targets that are not gated for ROCm:
    `"sm_90" in torch.cuda.get_arch_list()`, `f"sm_{major}{minor}" in arch_list` after
    `arch_list = torch.cuda.get_arch_list()`, `any(a.startswith("sm_") for a in ...)`, `==` on its
    elements, and regular expressions such as `re.match(r"sm_(\\d+)", arch)` over it.

    Printing the list and searching it for gfx targets are not flagged.

    ## Why is this bad on ROCm?
    On ROCm wheels `torch.cuda.get_arch_list()` returns the gfx targets PyTorch was built for
    (`gfx90a`, `gfx942`, `gfx1100`, ...), never `sm_XX`/`compute_XX`. A test for `sm_` never matches,
    so applications decide the AMD GPU is unsupported and fall back to the CPU or disable
    `torch.compile` (debpalash/VoiceStudio#1230).

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
    fix_availability = FixAvailability.SAFE
    triggers = (b"get_arch_list",)

    def visit_Comparison(self, node: cst.Comparison, ctx: PythonContext) -> None:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        for index, target in enumerate(node.comparisons):
            left, right = operands[index], operands[index + 1]
            if isinstance(target.operator, _MEMBERSHIP):
                pairs = [(left, right)]
            elif isinstance(target.operator, _EQUALITY):
                pairs = [(left, right), (right, left)]
            else:
                continue
            for needle, haystack in pairs:
                if _report(node, _nvidia_targets(needle, ctx), _arch_list_sources(haystack, ctx, 0), ctx):
                    return

    def visit_Call(self, node: cst.Call, ctx: PythonContext) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "startswith" and node.args:
            prefixes = _nvidia_targets(node.args[0].value, ctx)
            _report(node, prefixes, _arch_list_sources(func.value, ctx, 0), ctx)
            return
        pattern, subject = _regex_operands(node, ctx)
        if pattern is not None and subject is not None:
            # A match object is used for more than its truth (`.group(1)`): `False` cannot stand for it.
            fixable = is_truth_tested(ctx, node)
            _report(node, _nvidia_regexes(pattern, ctx), _arch_list_sources(subject, ctx, 0), ctx, fixable)


def _report(
    node: cst.CSTNode, targets: list[cst.CSTNode], sources: list[cst.CSTNode], ctx: PythonContext, fixable: bool = True
) -> bool:
    """Report `node` when an NVIDIA target string meets the arch list; True when the pair was found."""
    if not targets or not sources:
        return False
    if not only_displayed(ctx, node):
        fix = gate_condition(ctx, whole_condition(ctx, node), _FIX) if fixable else None
        ctx.report(node, _MESSAGE, gate_on=(*sources, *targets), fix=fix)
    return True


_FIX = "Search the arch list for sm_ targets only when not on ROCm"


# --- the arch list and its elements ------------------------------------------------------------------
def _arch_list_sources(expr: cst.CSTNode, ctx: PythonContext, depth: int) -> list[cst.CSTNode]:
    """The `get_arch_list()` calls `expr` is the result of, an element of, or a join of."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(expr, cst.Call):
        return _call_sources(expr, ctx, depth)
    if isinstance(expr, cst.Subscript):
        return _arch_list_sources(expr.value, ctx, depth + 1)
    if not isinstance(expr, cst.Name):
        return []
    loop = ctx.semantic.loop_target(expr)
    if loop is not None:
        # An element of the list itself; a tuple target's element (`for arch, n in ...`) is not followed.
        return _arch_list_sources(loop.iterable, ctx, depth + 1) if loop.position is None else []
    binding = ctx.semantic.lookup(expr.value, expr)
    if binding is None or binding.kind != "value":
        return []
    # Every assignment must be the arch list (or a literal default such as `[]`), else it may hold anything.
    found: list[cst.CSTNode] = []
    for value in binding.values:
        sources = _arch_list_sources(value, ctx, depth + 1)
        if not sources and not _is_literal_default(value):
            return []
        found += sources
    return found


def _is_literal_default(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Name):
        return value.value == "None"
    if isinstance(value, (cst.List, cst.Tuple)):
        return all(isinstance(element.value, cst.SimpleString) for element in value.elements)
    return False


def _call_sources(call: cst.Call, ctx: PythonContext, depth: int) -> list[cst.CSTNode]:
    name = ctx.qualified_name(call.func) or ""
    if name in _ARCH_LIST_CALLS:
        return [call]
    if name in _PASS_THROUGH and len(call.args) == 1:
        return _arch_list_sources(call.args[0].value, ctx, depth + 1)
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "join" or len(call.args) != 1:
        return []
    if ctx.string_value(func.value) is None:
        return []
    return _arch_list_sources(call.args[0].value, ctx, depth + 1)  # `" ".join(arch_list)`


# --- NVIDIA target strings ---------------------------------------------------------------------------
def _nvidia_targets(expr: cst.CSTNode, ctx: PythonContext) -> list[cst.CSTNode]:
    """Literals `expr` may be that name an NVIDIA target: `"sm_90"`, `f"sm_{major}{minor}"`,
    `"compute_" + cc`, or a tuple of prefixes for `startswith`."""
    value = ctx.single_value(expr)
    if isinstance(value, cst.Tuple):
        found: list[cst.CSTNode] = []
        for element in value.elements:
            found += _nvidia_targets(element.value, ctx)
        return found
    if isinstance(value, cst.FormattedString):
        return [value] if fstring_prefix(value).startswith(_NVIDIA_PREFIXES) else []
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        return _nvidia_targets(value.left, ctx)
    return [literal for string, literal in ctx.semantic.string_sources(expr) if string.startswith(_NVIDIA_PREFIXES)]


def _regex_operands(call: cst.Call, ctx: PythonContext) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """(pattern, searched string) of `re.search(p, s)` or `compiled.search(s)` after `compiled = re.compile(p)`."""
    name = ctx.qualified_name(call.func) or ""
    if name in _REGEX_FUNCTIONS and len(call.args) >= 2:
        return call.args[0].value, call.args[1].value
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _REGEX_METHODS or not call.args:
        return None, None
    compiled = ctx.single_value(func.value)
    if isinstance(compiled, cst.Call) and ctx.qualified_name(compiled.func) == "re.compile" and compiled.args:
        return compiled.args[0].value, call.args[0].value
    return None, None


def _nvidia_regexes(pattern: cst.CSTNode, ctx: PythonContext) -> list[cst.CSTNode]:
    sources = ctx.semantic.string_sources(pattern)
    return [literal for string, literal in sources if any(prefix in string for prefix in _NVIDIA_PREFIXES)]


_MESSAGE = (
    "`torch.cuda.get_arch_list()` lists gfx targets (gfx90a, gfx942) on ROCm builds, so this `sm_`/`compute_` "
    "search never matches on AMD GPUs; gate it with `not torch.version.hip` and compare "
    '`gcnArchName.split(":")[0]` with the list on ROCm'
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
