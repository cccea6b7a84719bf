"""ROC115 gcn-arch-exact."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import subscript_key
from rocmlint.python.values import Follow
from rocmlint.rule import Invalid, Rule, Valid

_ATTRIBUTE = "gcnArchName"
_EQUALITY = (ast.Eq, ast.NotEq)
_MEMBERSHIP = (ast.In, ast.NotIn)
# A conditional is no arch name: `.split(":")[0]` appended to it would bind to its last arm only.
_NO_ARMS = Follow(arms=False)
# Targets that support xnack or sramecc, so gcnArchName has a `:feature` suffix (LLVM AMDGPU processor
# table): GCN gfx8 APUs, every gfx9 (Vega, MI50-MI355), and RDNA 1 (gfx1010-gfx1013).
_FEATURED_TARGET = re.compile(r"^gfx(?:8|9|101[0-3])")


class GcnArchExact(Rule):
    """
    ## What it does
    Flags `gcnArchName` (`torch.cuda.get_device_properties(0).gcnArchName`, or a name assigned from
    it) compared exactly with a gfx name (`==`/`!=`), tested for membership in a tuple/list/set/dict
    literal, or used as a lookup key (`TABLE[props.gcnArchName]`, `TABLE.get(arch)`) without
    `.split(":")[0]`.

    Substring tests (`"gfx94" in props.gcnArchName`), `.startswith("gfx9")`, regular expressions,
    `.split(":")[0] == "gfx942"`, comparisons with a full feature string (`"gfx90a:sramecc+:xnack-"`),
    comparisons with RDNA 2+ targets (`gfx1030`, `gfx1100`, `gfx1201`: no xnack/sramecc, so no
    suffix), and the `gcnArchName` of an arch record of the project's own (returned by a function of a
    package that declares the field and only ever gives it bare gfx names, `gcnArchName="gfx90a"`)
    are not flagged. This code usually runs only on ROCm, so it is reported inside ROCm branches
    too.

    ## Why is this bad on ROCm?
    `gcnArchName` carries the target features after the architecture on every target that supports
    xnack or sramecc (all gfx9: MI50 to MI355, RDNA 1): MI300X reports `gfx942:sramecc+:xnack-` (vLLM
    issue #14062 environment dump, pytorch/pytorch#107477 shows `gfx906:sramecc+:xnack-`). `== "gfx942"` is therefore always
    false and dict lookups miss, so the tuned path is silently skipped (or a `KeyError` is raised).
    ROCm's own code strips the suffix (ROCm/flash-attention `setup.py` splits on `:`) or uses
    substring tests (vLLM `vllm/platforms/rocm.py`: `"gfx94" in _GCN_ARCH`).

    ## In code written for ROCm
    Still flagged in code only ROCm runs and in projects written for AMD: `gcnArchName` carries its feature
    suffixes on every AMD GPU, so an exact comparison fails whoever wrote it.

    ## Example
    ```python
    if torch.cuda.get_device_properties(0).gcnArchName == "gfx942":
        block_size = 256
    ```

    ## Fix
    ```python
    if torch.cuda.get_device_properties(0).gcnArchName.split(":")[0] == "gfx942":
        block_size = 256
    ```

    ## Fix safety
    Safe: `gcnArchName` is only meaningful on ROCm, and `.split(":")[0]` returns the architecture
    unchanged when there is no feature suffix.

    The catalog also lists reading `gcnArchName` without a ROCm guard (the field is meaningless on CUDA
    builds); that part is not implemented because it is far too noisy.
    """

    code = "ROC115"
    name = "gcn-arch-exact"
    severity = Severity.ERROR
    applies_to_tests = True  # an exact gfx match in a skip misses the GPU the suite runs on
    fix_availability = FixAvailability.SAFE
    triggers = (b"gcnArchName",)
    # The hazard is ROCm code itself: a comparison under `if torch.version.hip:` is still wrong.
    reports_gated = True

    def visit_Compare(self, node: ast.Compare, ctx: PythonContext) -> None:
        for left, operator, right in ctx.semantic.comparison_pairs(node):
            if isinstance(operator, _EQUALITY):
                for arch, other in ((left, right), (right, left)):
                    if _is_arch_name(arch, ctx) and _bare_gfx_strings(other, ctx):
                        _report(arch, _EXACT_MESSAGE, ctx)
                        return
            elif isinstance(operator, _MEMBERSHIP):
                # `arch in ("gfx90a", "gfx942")`; `"gfx94" in arch` is a substring test and is correct.
                if _is_arch_name(left, ctx) and _collection_has_bare_gfx(right, ctx):
                    _report(left, _MEMBERSHIP_MESSAGE, ctx)
                    return

    def visit_Subscript(self, node: ast.Subscript, ctx: PythonContext) -> None:
        key = subscript_key(node)
        # `cache[arch] = x` / `del cache[arch]` write with the same full name they later read: consistent.
        if key is None or ctx.semantic.is_store(node) or not _is_arch_name(key, ctx):
            return
        _report(key, _KEY_MESSAGE, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "get" or not node.args:
            return
        key = node.args[0]
        if not isinstance(key, ast.Starred) and _is_arch_name(key, ctx):
            _report(key, _KEY_MESSAGE, ctx)


def _report(node: ast.expr, message: str, ctx: PythonContext) -> None:
    # Code that cannot run on ROCm never sees a real gcnArchName.
    if ctx.branch(node).on_rocm is False or _own_record(node, ctx):
        return
    ctx.report(node, message, fix=_fix(node, ctx))


def _fix(node: ast.expr, ctx: PythonContext) -> Fix | None:
    """`<arch>.split(":")[0]`. On NVIDIA the name has no `:` (or is ""), so the split returns it unchanged;
    a `getattr(..., "gcnArchName", None)` default would make the split raise, so it gets no fix."""
    if isinstance(node, ast.Call) and len(node.args) > 2 and not _is_string_literal(node.args[2]):
        return None
    return ctx.fix('Compare the bare gfx name: `.split(":")[0]`', ctx.insert_after(node, '.split(":")[0]'))


def _is_arch_name(expr: ast.expr, ctx: PythonContext) -> bool:
    """`x.gcnArchName`, `getattr(x, "gcnArchName", ...)`, or a name assigned exactly once from one (so
    `arch = props.gcnArchName; arch = arch.split(":")[0]` is normalised)."""
    return bool(ctx.values.trace(expr, lambda value: _arch_name_step(value, ctx), _NO_ARMS))


def _own_record(expr: ast.expr, ctx: PythonContext) -> bool:
    """Every `gcnArchName` `expr` reads is an arch record of the project's own (`PythonContext.own_arch_record`):
    returned by a function of the package that declares the field and only gives it bare gfx names
    (`mylib.hip.capability().gcnArchName`, also through a name assigned once), not HIP's device properties."""
    reads = ctx.values.trace(expr, lambda value: _arch_name_step(value, ctx), _NO_ARMS)
    return bool(reads) and all(_own_receiver(read, ctx) for read in reads)


def _own_receiver(read: ast.expr, ctx: PythonContext) -> bool:
    receiver = read.value if isinstance(read, ast.Attribute) else None
    if isinstance(receiver, ast.Name):
        receiver = ctx.single_value(receiver)
    return isinstance(receiver, ast.Call) and ctx.own_arch_record(receiver.func)


def _arch_name_step(expr: ast.expr, ctx: PythonContext) -> list[ast.expr] | None:
    if isinstance(expr, ast.Attribute):
        return [expr] if expr.attr == _ATTRIBUTE else []
    if not isinstance(expr, ast.Call):
        return None
    if ctx.qualified_name(expr.func) != "getattr" or len(expr.args) < 2:
        return []
    return [expr] if ctx.string_value(expr.args[1]) == _ATTRIBUTE else []


def _is_string_literal(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes))


def _is_bare_gfx(string: str) -> bool:
    """A gfx architecture whose gcnArchName carries target features, written without them: an exact
    comparison cannot match it. RDNA 2+ targets (gfx103x, gfx11xx, gfx12xx) support neither xnack nor
    sramecc and are reported bare, so comparing with them works."""
    return _FEATURED_TARGET.match(string) is not None and ":" not in string


def _bare_gfx_strings(expr: ast.expr, ctx: PythonContext) -> bool:
    return any(_is_bare_gfx(string) for string, _ in ctx.values.string_sources(expr))


def _collection_has_bare_gfx(expr: ast.expr, ctx: PythonContext) -> bool:
    """A tuple/list/set literal with a bare gfx element, a dict literal with a bare gfx key, or
    `frozenset({...})` of one; names assigned once are followed."""
    return any(_bare_gfx_strings(element, ctx) for element in ctx.values.collection_elements(expr))


_SUFFIX = "`gcnArchName` carries target features (`gfx942:sramecc+:xnack-`)"
_EXACT_MESSAGE = (
    f'{_SUFFIX}, so comparing it exactly with a gfx name never matches; compare `gcnArchName.split(":")[0]`'
)
_MEMBERSHIP_MESSAGE = f'{_SUFFIX}, so this membership test never matches; test `gcnArchName.split(":")[0]`'
_KEY_MESSAGE = f'{_SUFFIX}, so a lookup keyed by it misses the gfx entries; use `gcnArchName.split(":")[0]` as the key'


GcnArchExact.valid = (
    # Substring and prefix tests (vLLM, mamba), a regular expression.
    Valid(
        """
        import re, torch
        props = torch.cuda.get_device_properties(0)
        on_mi3xx = any(arch in props.gcnArchName for arch in ("gfx940", "gfx941", "gfx942"))
        is_gfx9 = props.gcnArchName.startswith("gfx9")
        wave32 = re.match(r"gfx1[01]", props.gcnArchName) is not None
        """,
    ),
    # Normalised with split(":")[0], inline or by reassignment.
    Valid(
        """
        import torch
        arch = torch.cuda.get_device_properties(0).gcnArchName
        arch = arch.split(":")[0]
        if arch == "gfx942":
            block_size = 256
        _TUNED = {"gfx90a": 64, "gfx942": 128}
        bs = _TUNED[torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]]
        """,
    ),
    # Compared with a full feature string on purpose; an RDNA 3 target (never suffixed); an emptiness test.
    Valid(
        """
        import torch
        name = torch.cuda.get_device_properties(0).gcnArchName
        xnack_off = name == "gfx90a:sramecc+:xnack-"
        wave32 = name in ("gfx1100", "gfx1101", "gfx1201")
        if name == "":
            raise RuntimeError("not a ROCm device")
        """,
    ),
    # Stored as a key and read back with the same full name.
    Valid(
        """
        import torch
        _cache = {}
        def tuned(props):
            _cache[props.gcnArchName] = compute_config()
        """,
    ),
    # Only in a comment, a docstring and a log message; an NVIDIA-only branch.
    Valid(
        """
        import torch
        def describe(props):
            \"\"\"props.gcnArchName == "gfx942" on MI300X (plus feature flags).\"\"\"
            # gcnArchName == "gfx942" would miss the :sramecc+ suffix
            print("arch:", props.gcnArchName)
            if torch.version.cuda:
                return props.gcnArchName == "gfx942"
        """,
    ),
    # The project's own arch record, only given bare gfx names (not HIP's device properties).
    Valid(
        """
        from dataclasses import dataclass
        @dataclass
        class Capability:
            warp_size: int
            gcnArchName: str
        _KNOWN = {"gfx90a": Capability(warp_size=64, gcnArchName="gfx90a")}
        def capability(arch):
            return _KNOWN[arch]
        use_mfma = capability(option.arch).gcnArchName == "gfx90a"
        """,
    ),
)
GcnArchExact.invalid = (
    Invalid(
        """
        import torch
        props = torch.cuda.get_device_properties(0)
        if props.gcnArchName == "gfx942":
            block_size = 256
        """,
        expect=("3:4-3:21",),
        message='split(":")[0]',
        fixed="""
        import torch
        props = torch.cuda.get_device_properties(0)
        if props.gcnArchName.split(":")[0] == "gfx942":
            block_size = 256
        """,
    ),
    # Inside a ROCm branch: still wrong.
    Invalid(
        """
        import torch
        if torch.version.hip:
            arch = torch.cuda.get_device_properties(0).gcnArchName
            if arch in ("gfx90a", "gfx942"):
                use_ck = True
        """,
        expect=("4:8-4:12",),
        message="membership",
    ),
    Invalid(
        """
        import torch
        _BLOCK = {"gfx90a": 64, "gfx942": 128}
        block = _BLOCK[torch.cuda.get_device_properties(0).gcnArchName]
        """,
        expect=("3:16-3:63",),
        fixed="""
        import torch
        _BLOCK = {"gfx90a": 64, "gfx942": 128}
        block = _BLOCK[torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]]
        """,
    ),
    Invalid(
        """
        import torch
        def num_warps(device):
            props = torch.cuda.get_device_properties(device)
            return _TUNED_WARPS.get(props.gcnArchName, 4)
        """,
        expect=("4:29-4:46",),
    ),
    Invalid(
        """
        import torch
        _MI300 = frozenset({"gfx940", "gfx941", "gfx942"})
        arch = getattr(torch.cuda.get_device_properties(0), 'gcnArchName', '')
        if arch not in _MI300:
            raise RuntimeError("MI300 only")
        """,
        expect=("4:4-4:8",),
    ),
    Invalid(
        """
        import torch
        skip = torch.cuda.get_device_properties(0).gcnArchName != 'gfx90a'
        """,
        expect=("2:8-2:55",),
    ),
)
