"""What the `#if` rules (ROC207, ROC213, ROC214, ROC215) share: which conditions a ROCm build reads, and
whether a condition (or its `#if/#elif` chain) already says what ROCm should do.

A vendor-specific test is only a hazard when nobody thought about ROCm: `#if CUDA_VERSION >= 11000` is,
`#if CUDA_VERSION >= 11000 || defined(USE_ROCM)` and `#if CUDA_VERSION >= 11000 && !defined(USE_ROCM)`
are not (RULES.md, "What gated means"; PyTorch `hip.rst` recommends exactly these two forms). A chain
with an arm of its own for ROCm (`#if __CUDA_ARCH__ >= 800 ... #elif defined(__HIP_DEVICE_COMPILE__)`)
also made the decision. The preprocessor analysis (rocmlint/cuda/preprocessor.py) supplies the rest:
the vendor branch around each directive and the branch of the arm each directive opens.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocmlint.cuda.frontend import CudaContext
from rocmlint.cuda.preprocessor import Directive, VendorMacros, names_in
from rocmlint.vendor import Branch

CONDITION_KINDS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})
_OPENERS = frozenset({"if", "ifdef", "ifndef"})
_ARMS = frozenset({"elif", "elifdef", "elifndef", "else"})
# HIP-aware spellings the evaluator does not need but a reader does: a test naming them thought about ROCm
# (hipRTC's macro, and the deprecated platform macros that ROC215 reports on its own).
_HIP_AWARE = frozenset({"__HIPCC_RTC__", "__HCC__", "HIP_PLATFORM_HCC", "__HIP_PLATFORM_HCC__"})


# Translation units a host compiler builds on both vendors (torch's CUDAExtension hands `.cpp` files to
# the host compiler on ROCm as well): nvcc's own macros are undefined there on NVIDIA too.
_HOST_ONLY_SUFFIXES = (".c", ".cc", ".cpp", ".cxx")


def is_host_only_unit(ctx: CudaContext) -> bool:
    """A `.cpp`-style file: `__CUDA_ARCH__`/`__CUDACC__` tests give the same answer on both vendors."""
    return ctx.source.path.lower().endswith(_HOST_ONLY_SUFFIXES)


@dataclass(frozen=True)
class _At:
    """A zero-width span, for asking the front end about the code at one byte offset."""

    start_byte: int
    end_byte: int


def arm_branch(directive: Directive, ctx: CudaContext) -> Branch:
    """Where the arm this `#if`/`#elif` opens is compiled (`on_rocm` False: a ROCm build skips it)."""
    return ctx.branch(_At(directive.end_byte, directive.end_byte))


def is_rocm_macro(name: str, ctx: CudaContext) -> bool:
    """A macro that tells a ROCm build apart: HIP/ROCm macros, gfx arch macros, HIP/ROCm versions, the
    project's configured `rocm-macros`, and macros this file defines only in ROCm-only branches
    (`#ifdef USE_ROCM` / `#define IS_HIP 1`), as the preprocessor's evaluator counts them."""
    if name in _HIP_AWARE or VendorMacros().with_project_macros(ctx.options.rocm_macros, ctx.options.nvidia_macros).is_rocm_side(name):
        return True
    defines = ctx.preprocessor.defines.get(name)
    return bool(defines) and all(d.directive.branch.on_nvidia is False for d in defines)


class Chains:
    """The `#if ... #elif ... #endif` chains of one file, built once (per rule instance, i.e. per file)."""

    def __init__(self, ctx: CudaContext) -> None:
        # directive start byte -> start byte of its chain's `#if`; chain start -> its conditions
        self.opener_of: dict[int, int] = {}
        self.conditions: dict[int, list[str]] = {}
        stack: list[int] = []
        for directive in ctx.preprocessor.directives:
            if directive.kind in _OPENERS:
                stack.append(directive.start_byte)
                self.conditions[directive.start_byte] = [directive.condition]
                self.opener_of[directive.start_byte] = directive.start_byte
            elif directive.kind in _ARMS and stack:
                self.opener_of[directive.start_byte] = stack[-1]
                if directive.kind != "else":
                    self.conditions[stack[-1]].append(directive.condition)
            elif directive.kind == "endif" and stack:
                stack.pop()

    def opener(self, directive: Directive) -> int:
        return self.opener_of.get(directive.start_byte, directive.start_byte)

    def names_rocm(self, directive: Directive, ctx: CudaContext, *, ignore: frozenset[str] = frozenset()) -> bool:
        """Whether some arm of the directive's chain (its own condition included) tests a ROCm macro."""
        for condition in self.conditions.get(self.opener(directive), [directive.condition]):
            if any(is_rocm_macro(name, ctx) and name not in ignore for name in names_in(condition)):
                return True
        return False


class ConditionRule:
    """Mixin for rules that report `#if`/`#elif` conditions a ROCm build reads; at most one report per
    chain (the user decides the whole chain at once: `#if CUDA_VERSION >= 12000 / #elif >= 11000`).

    Such rules set `reports_gated = True` and gate here instead: `ctx.report` judges a directive by the
    code before it, which for an `#elif` is the previous arm, not whether ROCm reads the `#elif`. ROCm
    reads a condition when the code around the chain is compiled there (`directive.branch`) and no
    earlier arm is certainly taken on ROCm; an arm certainly taken on ROCm names a ROCm macro, and a
    chain naming one is never reported, so `directive.branch` is all that is left to check.
    """

    def __init__(self) -> None:
        self._chain_index: Chains | None = None
        self._reported: set[int] = set()  # chain openers already reported in this file

    def _candidate(self, directive: Directive, ctx: CudaContext, *, ignore: frozenset[str] = frozenset()) -> bool:
        """A condition ROCm's preprocessor reads, in a chain that nowhere names a ROCm macro (other than
        those in `ignore`) and has not been reported yet."""
        if directive.kind not in CONDITION_KINDS or directive.branch.on_rocm is False:
            return False
        chains = self._chains(ctx)
        return not chains.names_rocm(directive, ctx, ignore=ignore) and chains.opener(directive) not in self._reported

    def _report_condition(self, directive: Directive, ctx: CudaContext, message: str) -> None:
        if ctx.report(directive, message):
            self._reported.add(self._chains(ctx).opener(directive))

    def _chains(self, ctx: CudaContext) -> Chains:
        if self._chain_index is None:
            self._chain_index = Chains(ctx)
        return self._chain_index


__all__ = ["CONDITION_KINDS", "Chains", "ConditionRule", "arm_branch", "is_host_only_unit", "is_rocm_macro"]
