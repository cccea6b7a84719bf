"""What the `#if` rules (ROC207, ROC213, ROC214, ROC215) share: which conditions a ROCm build reads, and
whether a condition (or its `#if/#elif` chain) already says what ROCm should do.

A vendor-specific test is only a hazard when nobody thought about ROCm: `#if CUDA_VERSION >= 11000` is,
`#if CUDA_VERSION >= 11000 || defined(USE_ROCM)` and `#if CUDA_VERSION >= 11000 && !defined(USE_ROCM)`
are not (RULES.md, "What gated means"; PyTorch `hip.rst` recommends exactly these two forms). A chain
with an arm of its own for ROCm (`#if __CUDA_ARCH__ >= 800 ... #elif defined(__HIP_DEVICE_COMPILE__)`)
also made the decision. The preprocessor analysis (rocmlint/cuda/preprocessor.py) supplies the rest:
the vendor branch around each directive and the branch of the arm each directive opens.

Fixes are plain edits of the condition text (`condition_edit`): ROC213/ROC214/ROC215 add the HIP macro
next to each CUDA test used for its truth (`condition_tests`) in every arm of the chain at once
(`ConditionRule._chain_rewrite`), unless an arm the widened tests may route ROCm into, and ROCm does not
certainly compile today, holds what HIP lacks (`hip_gaps.lacking_on_hip`): the arm of a test that holds
positively, and every later arm after one that is negated, counting only alternatives ROCm defines. ROC207
adds the ROCm test to one condition when the arm it opens looks free of CUDA-only code (`arm_may_hold_hazards`).
Once a chain names a ROCm macro it is no longer reported, so no fix may leave another reported test of
the chain behind.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from rocmlint.cuda.arm_twins import portable_twin
from rocmlint.cuda.file_facts import arm_vendor, is_host_source
from rocmlint.cuda.frontend import ByteSpan, CudaContext, Node, Span
from rocmlint.cuda.hip_gaps import (
    cuda_to_hip_names,
    lacking_on_hip,
    only_lacking_on_hip,
    reads_per_block_shared_memory,
    shared_memory_opt_in,
    without_comments,
)
from rocmlint.cuda.nvidia_only import code_words, declares, off_rocm_by_project, word_pattern
from rocmlint.cuda.preprocessor import (
    CUDA_VERSION_MACROS,
    NVCC_COMPILER_MACROS,
    WINDOWS_ONLY_MACROS,
    Define,
    Directive,
    MacroLookup,
    evaluate_expression,
    holds_only_on_windows,
    is_cuda_toolkit_header,
    names_in,
    names_nvcc_version,
)
from rocmlint.cuda.syntax import definitions_of
from rocmlint.cuda.unused_arms import declares_only_unnamed
from rocmlint.diagnostics import Edit, Fix
from rocmlint.rule import Rule
from rocmlint.vendor import Branch

CONDITION_KINDS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})
_OPENERS = frozenset({"if", "ifdef", "ifndef"})
_ARMS = frozenset({"elif", "elifdef", "elifndef", "else"})
# HIP-aware spellings the evaluator does not need but a reader does: a test naming them thought about ROCm
# (hipRTC's macro, and the deprecated platform macros that ROC215 reports on its own).
_HIP_AWARE = frozenset({"__HIPCC_RTC__", "__HCC__", "HIP_PLATFORM_HCC", "__HIP_PLATFORM_HCC__"})
# HIP's NVIDIA platform macros: a chain testing one was written with HIP in mind too (`defined(__HIP_PLATFORM_NVCC__)
# && CUDART_VERSION >= 8000` is HIP-on-NVIDIA code an AMD build skips by design), though no ROCm build defines them
# (so they are no ROCm macros when a fix's routing asks).
_HIP_NVIDIA_PLATFORM = frozenset({"HIP_PLATFORM_NVCC", "__HIP_PLATFORM_NVCC__", "__HIP_PLATFORM_NVIDIA__"})

# Safe condition rewrites (ROC213, ROC214): each test gains the HIP macro that is defined exactly when it
# would be on NVIDIA. `__HIP_DEVICE_COMPILE__` is undefined on NVIDIA, or (HIP headers on NVIDIA,
# `hip_common.h`) defined exactly when `__CUDA_ARCH__` is; `__HIPCC__` is undefined on NVIDIA, or defined
# there only when `__CUDACC__` is; nothing on NVIDIA defines `__HIPCC_RTC__`.
PASS_AND_COMPILER_ALTERNATIVES: Mapping[str, str] = {
    "__CUDA_ARCH__": "__HIP_DEVICE_COMPILE__",
    "__CUDACC__": "__HIPCC__",
    "__CUDACC_RTC__": "__HIPCC_RTC__",
}
# Names whose tests have no safe rewrite: a chain testing one of them gets no safe fix from ROC213/ROC214
# (fixing the rest would make the chain name a ROCm macro and hide the remaining test from its rule).
# `__NVCC__` means nvcc itself (nvcc-only pragmas and flags), and clang's CUDA mode with HIP's NVIDIA
# headers defines `__HIPCC__` without `__NVCC__`.
NO_SAFE_REWRITE = frozenset({"__NVCC__"}) | CUDA_VERSION_MACROS
# ROC215: the removed platform macros, kept, next to their current names.
PLATFORM_ALTERNATIVES: Mapping[str, str] = {
    "__HIP_PLATFORM_HCC__": "__HIP_PLATFORM_AMD__",
    "HIP_PLATFORM_HCC": "__HIP_PLATFORM_AMD__",
    "__HIP_PLATFORM_NVCC__": "__HIP_PLATFORM_NVIDIA__",
    "HIP_PLATFORM_NVCC": "__HIP_PLATFORM_NVIDIA__",
}


# `__CUDA_ARCH__ >= 800`, `800 <= __CUDA_ARCH__`, `__CUDA_ARCH__ == 700`: an architecture version test (ROC207),
# unlike `defined(__CUDA_ARCH__)`, `#ifdef __CUDA_ARCH__`, `#if __CUDA_ARCH__`: device-pass detection (ROC213).
_COMPARED_ARCH = re.compile(r"\b__CUDA_ARCH__\s*(?:[<>]=?|[=!]=)|(?:[<>]=?|[=!]=)\s*\(?\s*__CUDA_ARCH__\b")
_CUDA_ARCH_WORD = re.compile(r"\b__CUDA_ARCH__\b")


# Other vendor tests ROC207's `|| <ROCm test>` rewrite would hide from their rules (ROC213, ROC214): once the
# ROCm test is in the chain, no rule reports it any more.
_OTHER_VENDOR_TESTS = frozenset(PASS_AND_COMPILER_ALTERNATIVES) | {"__NVCC__"}
# `!defined(CUDA_VERSION)`, `!defined CUDART_VERSION`, `(!defined(CUDA_VERSION))`: the test of "no CUDA toolkit".
_NO_TOOLKIT = re.compile(
    r"\(?\s*!\s*defined\s*(?:\(\s*(?:{names})\s*\)|\s(?:{names}))\s*\)?".format(
        names="|".join(sorted(CUDA_VERSION_MACROS))
    )
)


def compares_cuda_arch(condition: str) -> bool:
    return _COMPARED_ARCH.search(condition) is not None


def is_version_test(condition: str) -> bool:
    """A condition testing a CUDA toolkit version or comparing the architecture number: ROC207's, whatever else it
    tests (one diagnostic per condition; ROC213 reports conditions whose only CUDA test is pass detection)."""
    return compares_cuda_arch(condition) or not CUDA_VERSION_MACROS.isdisjoint(names_in(condition))


def compares_cuda_arch_for_rocm(define: Define, ctx: CudaContext) -> bool:
    """An object-like macro standing for an architecture comparison (`#define HAS_BF16 (__CUDA_ARCH__ >= 800)`),
    defined where a ROCm build reads it: every `#if HAS_BF16` and `if (HAS_BF16)` is a hidden `__CUDA_ARCH__`
    test, which HIP-Clang reads with `__CUDA_ARCH__` as 0. Not one whose replacement also names a ROCm macro
    (`defined(USE_ROCM) || __CUDA_ARCH__ >= 800` decides for ROCm), nor in a host-only unit or after the project
    defines an architecture number for ROCm itself (as `ConditionRule._reports_cuda_arch`)."""
    if define.parameters is not None or not compares_cuda_arch(define.value):
        return False
    if ctx.branch(define.directive).on_rocm is False or is_host_only_unit(ctx):
        return False
    if any(is_rocm_macro(name, ctx) for name in names_in(define.value)):
        return False
    return (
        ctx.preprocessor.define_of("__CUDA_ARCH__", define.directive.start_byte) is None
        and ctx.define("__CUDA_ARCH__", define.directive) is None
        and _differs_from_recent_gpus(define, ctx)
    )


def _differs_from_recent_gpus(define: Define, ctx: CudaContext) -> bool:
    """Whether ROCm reads the macro's comparison otherwise than the device passes of recent NVIDIA GPUs (sm_80,
    sm_90) do: `!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700` holds on ROCm as on them, so ROCm gets the
    feature a recent GPU gets. False when a build cannot evaluate it."""
    rocm = ctx.preprocessor.macro_lookup("rocm", define.directive.start_byte)
    nvidia = ctx.preprocessor.macro_lookup("nvidia", define.directive.start_byte)
    on_rocm = evaluate_expression(define.value, _build_lookup(rocm, _ROCM_BUILD, {}))
    recent = [
        evaluate_expression(define.value, _build_lookup(nvidia, {**_NVIDIA_TOOLKITS[-1], **build}, {}))
        for build in _NVCC_PASSES
        if build["__CUDA_ARCH__"] is not None
    ]
    if on_rocm is None or None in recent:
        return False
    return any(bool(value) != bool(on_rocm) for value in recent)


def is_host_only_unit(ctx: CudaContext) -> bool:
    """A `.cpp`-style file, or a header only such files include (`FileView.host_compiled_only`): its
    `__CUDA_ARCH__`/`__CUDACC__` tests give the same answer on both vendors."""
    return is_host_source(ctx.source.path) or bool(ctx.options.project.host_compiled_only)


def arm_branch(directive: Directive, ctx: CudaContext, *, as_compiled: bool = False) -> Branch:
    """Where the arm this `#if`/`#elif` opens is compiled (`on_rocm` False: a ROCm build skips it); with
    `as_compiled`, where a ROCm build really goes, stale platform macros read as maybe defined
    (`CudaContext.branch_as_compiled`)."""
    span = ByteSpan(directive.end_byte, directive.end_byte)
    return ctx.branch_as_compiled(span) if as_compiled else ctx.branch(span)


def chains_around(ctx: CudaContext, offset: int, *, later_arms: bool) -> list[list[str]]:
    """The conditions of each `#if` chain around `offset`: of every arm (`later_arms`), or only of the arms
    opened before `offset` (what the code there was written knowing)."""
    if not later_arms:
        return ctx.preprocessor.open_chains(offset)
    stack: list[tuple[int, list[str]]] = []
    found: list[list[str]] = []
    for directive in ctx.preprocessor.directives:
        if directive.kind in _OPENERS:
            stack.append((directive.start_byte, [directive.condition]))
        elif directive.kind in CONDITION_KINDS and stack:
            stack[-1][1].append(directive.condition)
        elif directive.kind == "endif" and stack:
            start, conditions = stack.pop()
            if start < offset < directive.start_byte:
                found.append(conditions)
        elif directive.start_byte > offset and not stack:
            break
    return found


def is_rocm_macro(name: str, ctx: CudaContext) -> bool:
    """A macro that tells a ROCm build apart: HIP/ROCm macros, gfx arch macros, HIP/ROCm versions, the
    project's configured `rocm-macros`, and macros this file defines only in ROCm-only branches
    (`#ifdef USE_ROCM` / `#define IS_HIP 1`), as the preprocessor's evaluator counts them."""
    if name in _HIP_AWARE or ctx.options.vendor_macros().is_rocm_side(name):
        return True
    defines = ctx.preprocessor.defines.get(name)
    return defines is not None and len(defines) > 0 and all(d.directive.branch.on_nvidia is False for d in defines)


def _windows_arm(directive: Directive, ctx: CudaContext) -> bool:
    """An `#if`/`#ifdef` arm only a Windows toolchain enters (`defined(__NVCC__) && defined(_MSC_VER)`)."""
    return directive.kind not in ("ifndef", "elifndef") and _only_on_windows(directive.condition, ctx)


def _only_on_windows(condition: str, ctx: CudaContext) -> bool:
    """`holds_only_on_windows`, a macro the project's headers define as a Windows toolchain's (`#define XYZ_MSVC
    _MSC_VER`) counted as one: it names that compiler, whose test it stands for."""
    values = ctx.preprocessor.macros.header_values
    aliases = {name for name in names_in(condition) if values.get(name) in WINDOWS_ONLY_MACROS}
    return holds_only_on_windows(condition, WINDOWS_ONLY_MACROS | aliases)


def _inside_windows_arm(directive: Directive, ctx: CudaContext) -> bool:
    """A condition read only inside an arm a Windows toolchain alone enters (`#ifdef _MSC_VER` around MSVC shims of
    GCC builtins): no Linux build reads it. The directive's own chain is not around it."""
    arms = ctx.preprocessor.open_arms(directive.start_byte)
    if directive.kind not in _OPENERS:
        arms = arms[:-1]
    return any(own is not None and _only_on_windows(own, ctx) for _, own in arms)


class Chains:
    """The `#if ... #elif ... #endif` chains of one file, built once (per rule instance, i.e. per file)."""

    def __init__(self, ctx: CudaContext) -> None:
        # directive start byte -> start byte of its chain's `#if`; chain start -> its conditional directives
        self.opener_of: dict[int, int] = {}
        self.members: dict[int, list[Directive]] = {}
        self.arms: dict[int, list[Directive]] = {}  # chain start -> the directives opening its arms, `#else` too
        stack: list[int] = []
        for directive in ctx.preprocessor.directives:
            if directive.kind in _OPENERS:
                stack.append(directive.start_byte)
                self.members[directive.start_byte] = [directive]
                self.arms[directive.start_byte] = [directive]
                self.opener_of[directive.start_byte] = directive.start_byte
            elif directive.kind in _ARMS and stack:
                self.opener_of[directive.start_byte] = stack[-1]
                self.arms[stack[-1]].append(directive)
                if directive.kind != "else":
                    self.members[stack[-1]].append(directive)
            elif directive.kind == "endif" and stack:
                stack.pop()

    def opener(self, directive: Directive) -> int:
        return self.opener_of.get(directive.start_byte, directive.start_byte)

    def chain(self, directive: Directive) -> list[Directive]:
        """The `#if`/`#elif` directives of the directive's chain, in order (the directive alone if none)."""
        return self.members.get(self.opener(directive), [directive])

    def arms_of(self, directive: Directive) -> list[Directive]:
        """The directives opening the arms of the directive's chain (`#if`, each `#elif`, `#else`), in order."""
        return self.arms.get(self.opener(directive), [directive])

    def names_rocm(
        self,
        directive: Directive,
        ctx: CudaContext,
        *,
        ignore: frozenset[str] = frozenset(),
        also: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether some arm of the directive's chain (its own condition included) tests a ROCm macro (or
        one of `also`, names a rule counts as an alternative of its own)."""
        for member in self.chain(directive):
            if any(
                (is_rocm_macro(name, ctx) or name in also or name in _HIP_NVIDIA_PLATFORM) and name not in ignore
                for name in names_in(member.condition)
            ):
                return True
        return False

    def names(self, directive: Directive) -> set[str]:
        """Every name the conditions of the directive's chain mention."""
        return {name for member in self.chain(directive) for name in names_in(member.condition)}


class ConditionRule:
    """Mixin for rules that report `#if`/`#elif` conditions a ROCm build reads; at most one report per
    chain (the user decides the whole chain at once: `#if CUDA_VERSION >= 12000 / #elif >= 11000`).

    ROCm reads a condition when the code around its chain is compiled there (the front end reads an
    `#elif` line where its chain is, so `ctx.is_rocm_gated(directive)` answers it) and no earlier arm is
    certainly taken on ROCm; an arm certainly taken on ROCm names a ROCm macro, and a chain naming one
    is never reported.
    """

    def __init__(self) -> None:
        self._chain_index: Chains | None = None
        self._reported: set[int] = set()  # chain openers already reported in this file
        self._intended: dict[int, bool] = {}  # chain opener -> `_rocm_outcome_intended`

    def _candidate(
        self,
        directive: Directive,
        ctx: CudaContext,
        *,
        ignore: frozenset[str] = frozenset(),
        also: frozenset[str] = frozenset(),
        as_compiled: bool = False,
    ) -> bool:
        """A condition ROCm's preprocessor reads, in a chain that nowhere names a ROCm macro (other than
        those in `ignore`; names in `also` count as ROCm macros) and has not been reported yet. With
        `as_compiled`, read where a ROCm build really goes (`CudaContext.branch_as_compiled`), not as the stale
        gates around it meant: ROC215 reports a stale test inside another one's NVIDIA arm too."""
        if directive.kind not in CONDITION_KINDS or _windows_arm(directive, ctx) or _inside_windows_arm(directive, ctx):
            return False  # not a condition, or an arm for a Windows toolchain: no Linux build takes it
        branch = ctx.branch_as_compiled(directive) if as_compiled else ctx.branch(directive)
        if branch.on_rocm is False:
            return False
        chains = self._chains(ctx)
        return (
            not chains.names_rocm(directive, ctx, ignore=ignore, also=also)
            and chains.opener(directive) not in self._reported
        )

    def _report_condition(
        self, directive: Directive, ctx: CudaContext, message: str, *, fix: Fix | None = None
    ) -> None:
        if ctx.report(directive, message, fix=fix):
            self._reported.add(self._chains(ctx).opener(directive))

    def _chain_rewrite(
        self,
        directive: Directive,
        ctx: CudaContext,
        alternatives: Mapping[str, str],
        *,
        refuse: frozenset[str] = frozenset(),
        bare_truth: frozenset[str] = frozenset(),
    ) -> Fix | None:
        """A safe fix adding the HIP alternative next to every test of a name in `alternatives` in every
        condition of the directive's chain (all at once: once one arm names a ROCm macro the chain is
        no longer reported, so an arm left alone would be hidden). None when a condition of the chain
        names something in `refuse`, uses a name in a way with no safe rewrite (a comparison), or its
        text cannot be located in the line (a comment or continuation inside the condition), and when an
        arm the rewrite may send ROCm into holds what HIP lacks (`_lacking_arm`)."""
        edits: list[Edit] = []
        widened: dict[str, str] = {}
        tests_of: dict[int, list[WidenedTest]] = {}  # directive start byte -> the tests its condition widens
        for member in self._chains(ctx).chain(directive):
            names = set(names_in(member.condition))
            if names & refuse:
                return None
            if not names & set(alternatives):
                continue
            tests = condition_tests(member.condition, alternatives, bare_truth=bare_truth)
            edit = (
                None if tests is None else condition_edit(member, ctx, _widened(member.condition, tests, alternatives))
            )
            if tests is None or edit is None:
                return None
            edits.append(edit)
            tests_of[member.start_byte] = tests
            widened.update((name, alternatives[name]) for name in sorted(names & set(alternatives)))
        if not edits or self._lacking_arm(directive, ctx, tests_of, alternatives) is not None:
            return None
        added = ", ".join(f"`defined({alternative})` next to `{name}`" for name, alternative in widened.items())
        return ctx.fix(f"also test {added}", *edits)

    def _lacking_arm(
        self,
        directive: Directive,
        ctx: CudaContext,
        tests_of: Mapping[int, list[WidenedTest]],
        alternatives: Mapping[str, str],
    ) -> str | None:
        """What HIP lacks in an arm of the directive's chain that widening its tests (`tests_of`) may send a ROCm
        build into, or None: a fix must not route ROCm into code it cannot build (`#ifdef __CUDA_ARCH__` gaining
        the HIP device pass over `#define RUNTIME_ASSERT(x) __brkpt()`). An arm ROCm certainly compiles today
        keeps what it holds whatever the fix does; "today" as a ROCm build really compiles the file, not as the
        stale platform tests around the arm meant (`arm_branch(as_compiled=True)`)."""
        for arm in self._routed_arms(directive, ctx, tests_of, alternatives):
            if arm_branch(arm, ctx, as_compiled=True).on_rocm is not True:
                lacking = lacking_on_hip(ctx, arm_span(arm, ctx))
                if lacking is not None:
                    return lacking
        return None

    def _routed_arms(
        self,
        directive: Directive,
        ctx: CudaContext,
        tests_of: Mapping[int, list[WidenedTest]],
        alternatives: Mapping[str, str],
    ) -> list[Directive]:
        """The arms of the directive's chain a ROCm build may newly enter once its tests are widened: the arm of
        a condition where a test holds positively (`defined(X)` becomes `defined(X) || defined(ALT)`: the
        condition can only turn true), and every later arm after a condition where one is negated
        (`!defined(X) && !defined(ALT)` can turn the condition false; ROCm falls through to them). Only tests
        whose alternative is a ROCm macro move a ROCm build (`__HIP_PLATFORM_NVIDIA__` does not)."""
        arms = self._chains(ctx).arms_of(directive)
        routed: list[Directive] = []
        for index, arm in enumerate(arms):
            tests = [test for test in tests_of.get(arm.start_byte, ()) if is_rocm_macro(alternatives[test.name], ctx)]
            if any(not test.negated for test in tests):
                routed.append(arm)
            if any(test.negated for test in tests):
                routed.extend(later for later in arms[index + 1 :] if later not in routed)
        return routed

    def _reports_cuda_arch(self, directive: Directive, ctx: CudaContext) -> bool:
        """Whether the directive is where its chain's `__CUDA_ARCH__` tests are reported (the first condition naming
        it; ROC213 or ROC207, by what that condition is) and they can diverge: not in a host-only unit, where
        `__CUDA_ARCH__` is undefined on NVIDIA as well, nor after the project defines an architecture number
        for ROCm builds itself (`#define __CUDA_ARCH__ 1300`), in the file or in a header it includes (a compat
        header's `#define __CUDA_ARCH__ __HIP_DEVICE_COMPILE__` under `__HIPCC__`)."""
        first = next(
            (
                member
                for member in self._chains(ctx).chain(directive)
                if member.kind in CONDITION_KINDS
                and not _windows_arm(member, ctx)
                and _CUDA_ARCH_WORD.search(member.condition) is not None
            ),
            None,
        )
        return (
            first is directive
            and not is_host_only_unit(ctx)
            and ctx.preprocessor.define_of("__CUDA_ARCH__", directive.start_byte) is None
            and ctx.define("__CUDA_ARCH__", directive) is None
        )

    def _written_for_no_toolkit(self, directive: Directive, ctx: CudaContext) -> bool:
        """The chain tests only whether version macros are defined, and the arm ROCm certainly takes is the one
        it opens with `#ifndef CUDA_VERSION` / `#if !defined(CUDA_VERSION)`: "no CUDA toolkit here", which a ROCm
        build answers by construction, not by reading 0 (a HIP branch of shared CUDA/HIP code). No arm
        before it compares a version (what later arms compare is NVIDIA's choice alone), and it holds nothing HIP
        lacks and no `#error` ROCm may reach. An `#else` after `#ifdef CUDA_VERSION` is no such arm: it may be a
        fallback nobody wrote for ROCm."""
        arms = self._chains(ctx).arms_of(directive)
        taken = next((arm for arm in arms if arm_branch(arm, ctx).on_rocm is True), None)
        if taken is None or taken.kind == "else" or _NO_TOOLKIT.fullmatch(taken.condition) is None:
            return False
        version_tests = dict.fromkeys(CUDA_VERSION_MACROS, "")
        if any(condition_tests(arm.condition, version_tests) is None for arm in arms[: arms.index(taken)]):
            return False
        return lacking_on_hip(ctx, arm_span(taken, ctx)) is None and not _stops_rocm(taken, ctx)

    def _rocm_term_fix(self, directive: Directive, ctx: CudaContext) -> Fix | None:
        """ROC207's unsafe fix, `<condition> || <ROCm test>`: ROCm compiles this arm. Offered only when the arm
        holds nothing any CUDA rule could report (no `*_sync`, PTX, CUDA header or API...), so ROCm is not moved
        into code that cannot work there, and when the chain tests no `__CUDA_ARCH__`/`__CUDACC__`/`__NVCC__`
        (the new ROCm term would silence ROC213/ROC214 on it)."""
        rocm = ctx.options.rocm_condition.strip()
        if self._chains(ctx).names(directive) & _OTHER_VENDOR_TESTS or arm_may_hold_hazards(directive, ctx):
            return None
        if not any(is_rocm_macro(name, ctx) for name in names_in(rocm)):
            return None  # a configured ROCm test this rule would not recognise: the fix would not settle it
        condition = directive.condition
        if any(operator in condition for operator in ("&&", "||", "?", ",")):
            condition = f"({condition})"
        if "?" in rocm or "," in rocm:
            rocm = f"({rocm})"
        edit = condition_edit(directive, ctx, f"{condition} || {rocm}")
        if edit is None:
            return None
        return ctx.fix(
            f"compile this arm on ROCm too (`|| {rocm}`); check ROCm supports what it enables", edit, safe=False
        )

    def _rocm_outcome_intended(self, directive: Directive, ctx: CudaContext) -> bool:
        """Whether the arm a ROCm build takes in the directive's chain is one it can use, by construction
        (`arm_outcomes_agree`), or one the project's own macros choose whatever the NVIDIA compiler's macros
        would be (`decided_by_project_macros`), or the code ROCm compiles would be the same if HIP-Clang defined
        nvcc's macros (`nvcc_macros_change_no_rocm_code`), or the arms it skips could never build on ROCm by the
        project's design (`nvidia_only_by_design`), or its arms only declare what nothing in the project names
        (`declares_only_unnamed`): nothing to decide, so nothing to report."""
        opener = self._chains(ctx).opener(directive)
        if opener not in self._intended:
            arms = self._chains(ctx).arms_of(directive)
            self._intended[opener] = (
                arm_outcomes_agree(arms, ctx)
                or decided_by_project_macros(arms, ctx)
                or nvcc_macros_change_no_rocm_code(arms, ctx)
                or unreachable_chain(arms, ctx)
                or only_fallbacks_hip_predefines(arms, ctx)
                or nvidia_only_by_design(arms, ctx)
                or declares_only_unnamed([arm_span(arm, ctx) for arm in arms], ctx)
            )
        return self._intended[opener]

    def _chains(self, ctx: CudaContext) -> Chains:
        if self._chain_index is None:
            self._chain_index = Chains(ctx)
        return self._chain_index


# --- what each build takes ------------------------------------------------------------------------------
# The NVIDIA builds a ROCm build stands in for: nvcc's host pass and its device passes for the GPUs AMD's are
# compared with (sm_80, sm_90), each with a CUDA 11.8 or 12.8 toolkit; None: undefined. A host-only unit
# (`.cpp`) is compiled by the host compiler alone.
_NVIDIA_TOOLKITS: tuple[Mapping[str, int | None], ...] = tuple(
    {
        "CUDA_VERSION": major * 1000 + minor * 10,
        "CUDART_VERSION": major * 1000 + minor * 10,
        "__CUDACC_VER_MAJOR__": major,
        "__CUDACC_VER_MINOR__": minor,
        "__CUDACC_VER_BUILD__": 0,
    }
    for major, minor in ((11, 8), (12, 8))
)
_NVCC_PASSES: tuple[Mapping[str, int | None], ...] = tuple(
    {"__CUDACC__": 1, "__NVCC__": 1, "__CUDA_ARCH__": arch} for arch in (None, 800, 900)
)
_HOST_COMPILER: Mapping[str, int | None] = {"__CUDACC__": None, "__NVCC__": None, "__CUDA_ARCH__": None}
# HIP-Clang defines none of nvcc's macros, on either pass.
_ROCM_BUILD: Mapping[str, int | None] = dict.fromkeys((*_NVCC_PASSES[0], *_NVIDIA_TOOLKITS[0]))
# How many assignments of the project's own macros a comparison may try before it gives up.
_MAX_ASSIGNMENTS = 1024
_NOT_MACROS = frozenset({"defined", "true", "false"})


def arm_outcomes_agree(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether a ROCm build takes an arm of this chain (`arms`: `#if`, each `#elif`, `#else`) it can use by
    construction, whatever the project's own macros are: the arm every recent NVIDIA build takes too, in each
    of its passes (`!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800` holds on nvcc's host pass, on sm_80 and
    sm_90, and on ROCm; `defined(_MSC_VER) && CUDA_VERSION == 11020` holds on none), or at least the newest
    toolkit does (`!defined(__CUDACC_VER_MAJOR__) || __CUDACC_VER_MAJOR__ > 12`: the arm an older nvcc skips is
    kept from that nvcc's bug, its workaround is NVIDIA's alone), or where an NVIDIA build
    takes another arm in all its passes, one whose every statement HIP lacks (a 32-bit-mask `*_sync` shuffle,
    inline PTX: ROCm could not compile it anyway) while ROCm takes an arm of its own (the `#else` with the
    non-`_sync` shuffle of `#if CUDA_VERSION >= 9000`; not the host arm of `#ifdef __CUDA_ARCH__`).
    And the arm ROCm takes holds nothing HIP lacks. False when a condition cannot
    be evaluated, or the project's macros are too many to try."""
    lookups = [
        (ctx.preprocessor.macro_lookup("rocm", arm.start_byte), ctx.preprocessor.macro_lookup("nvidia", arm.start_byte))
        for arm in arms
    ]
    conditions = ["1" if arm.kind == "else" else arm.condition for arm in arms]
    passes = (_HOST_COMPILER,) if is_host_only_unit(ctx) else _NVCC_PASSES
    aliases = _toolkit_version_aliases(conditions, arms, ctx)
    nvidia_builds = [
        [{**toolkit, **build, **_alias_values(aliases, toolkit)} for build in passes] for toolkit in _NVIDIA_TOOLKITS
    ]
    fixed = set(_ROCM_BUILD)
    free = sorted(
        {
            name
            for condition, (rocm, nvidia) in zip(conditions, lookups, strict=True)
            for name in names_in(condition)
            if name not in _NOT_MACROS and name not in fixed and _unknown(name, rocm, nvidia)
        }
    )
    domain = _assignment_domain(conditions)
    if len(domain) ** len(free) > _MAX_ASSIGNMENTS:
        return False
    usable: dict[int, bool] = {}  # arm index -> whether ROCm could take it / NVIDIA-only
    for values in itertools.product(domain, repeat=len(free)):
        assigned = dict(zip(free, values, strict=True))
        rocm = _taken_arm(conditions, [_build_lookup(r, _ROCM_BUILD, assigned) for r, _ in lookups])
        if rocm is None or not _arm_usable(rocm, arms, ctx, usable, on_rocm=True):
            return False
        for age, toolkit_passes in enumerate(reversed(nvidia_builds)):  # the newest toolkit first
            taken = [
                _taken_arm(conditions, [_build_lookup(n, build, assigned) for _, n in lookups])
                for build in toolkit_passes
            ]
            nvidia = {arm for arm in taken if arm is not None}
            if len(nvidia) < len(set(taken)):
                return False  # a condition NVIDIA cannot evaluate
            if nvidia == {rocm} and age == 0:
                break  # what an older toolkit takes instead is a workaround of its own
            if nvidia == {rocm}:
                continue
            # Another arm on NVIDIA is fine only when it is NVIDIA-only, ROCm has an arm of its own to take
            # instead, and the chain does not tell nvcc's passes apart (else ROCm's device pass would take a host arm);
            # or when it only opts kernels in to shared memory an AMD GPU gives them anyway.
            if len(nvidia) > 1:
                return False
            other = nvidia.pop()
            if _needless_on_rocm(other, rocm, arms, ctx):
                continue
            if rocm == len(arms) or not _arm_usable(other, arms, ctx, usable, on_rocm=False):
                return False
    return True


def _toolkit_version_aliases(conditions: list[str], arms: list[Directive], ctx: CudaContext) -> dict[str, str]:
    """The project's macros these conditions test that stand for nvcc's version (`#define XYZ_CUDA_VERSION
    (__CUDACC_VER_MAJOR__*100 + __CUDACC_VER_MINOR__)`, in this file or a header), name -> that expression. An NVIDIA
    build's value of them is its toolkit's, so `defined(__NVCC__) && XYZ_CUDA_VERSION < 1102` is an old nvcc's
    workaround, not a free switch; a ROCm build still tries each state."""
    aliases: dict[str, str] = {}
    for name in {name for condition in conditions for name in names_in(condition)} - _NOT_MACROS:
        before = [d for d in ctx.preprocessor.defines.get(name, []) if d.directive.start_byte < arms[0].start_byte]
        texts = {d.value for d in before if d.parameters is None} if before else set()
        header = ctx.options.project.toolkit_versions.get(name)
        versions = {text for text in texts or ([header] if header else []) if names_nvcc_version(text)}
        if len(versions) == 1:
            aliases[name] = versions.pop()
    return aliases


def _alias_values(aliases: Mapping[str, str], toolkit: Mapping[str, int | None]) -> dict[str, int | None]:
    """Each toolkit version alias's value under one NVIDIA toolkit (`toolkit`: its version macros)."""
    versions = _build_lookup(lambda name, asked: None, toolkit, {})
    return {name: evaluate_expression(text, versions) for name, text in aliases.items()}


def decided_by_project_macros(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether the arm a ROCm build takes in this chain is chosen by the project's own vendor macros alone: it
    would be the same whatever nvcc's macros were (`__CUDA_ARCH__` of any pass, a CUDA version), for every
    state of the macros ROCm's view does not know. `#if defined(PROJ_DEVICE_CUDA) && __CUDA_ARCH__ >= 900`,
    where the project's shared header defines `PROJ_DEVICE_CUDA` for NVIDIA only, is false on ROCm by the
    project's design, not because HIP lacks `__CUDA_ARCH__`. Only the project's vendor macros count as known:
    one learned from its name alone (`USE_CUDA_GRAPHS` may be defined on ROCm too), one defined only under
    `__CUDA_ARCH__` tests (`ARCH_SUPPORTS_FLASH`: NVIDIA-only because HIP lacks the macro) and a library's
    (`CUSPARSE_VERSION`) are tried in every state."""
    conditions, names = _chain_conditions(arms)
    compiler = names & set(_ROCM_BUILD)
    if not compiler or names == compiler:
        return False  # no compiler test to look past, or no project macro to decide
    states = _chain_states(arms, ctx, conditions, names, _ROCM_BUILD)
    if states is None:
        return False
    lookups, assignments = states
    compilers = [_ROCM_BUILD, *({**toolkit, **build} for toolkit in _NVIDIA_TOOLKITS for build in _NVCC_PASSES)]
    for assigned in assignments:
        taken = {
            _taken_arm(conditions, [_build_lookup(rocm, fixed, assigned) for rocm in lookups]) for fixed in compilers
        }
        if len(taken) != 1 or None in taken:
            return False
    return True


def _project_vendor_macros(names: set[str], ctx: CudaContext) -> frozenset[str]:
    """The names that are the project's own vendor macros, known by more than their name and not NVIDIA-only merely
    because HIP lacks nvcc's macros (see `decided_by_project_macros`)."""
    learned = ctx.options.vendor_macros().learned
    return frozenset(
        name
        for name in names
        if (macro := learned.get(name)) is not None
        and macro.evidence.kind != "name"
        and not macro.evidence.compiler_decided
    )


# HIP-Clang is clang: a test excluding clang (`defined(__GNUC__) && !defined(__clang__)`) excludes ROCm too.
_HIP_CLANG: Mapping[str, int | None] = {**_ROCM_BUILD, "__clang__": 1}


def nvcc_macros_change_no_rocm_code(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether a ROCm build compiles the same code in this chain (`arms`) whether or not HIP-Clang defined nvcc's
    own macros as nvcc does (`__CUDACC__`, `__CUDA_ARCH__` in each pass, a CUDA version): then the chain's tests of
    them decide nothing there. `defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)` is false on
    ROCm either way; `defined(__CUDACC__) && defined(XYZ_USE_CUDA)` too where `XYZ_USE_CUDA` is NVIDIA's; and an
    arm ROCm takes instead that holds the same code as the one it misses (`#elif defined(__clang__)` defining the
    same `__builtin_assume`) loses nothing; nor does one computing portably, from the same inputs, what the arm an
    nvcc device pass takes computes with per-thread intrinsics HIP has (`__builtin_clz(x)` for `__clz(x)`:
    `arm_twins.portable_twin`). And the arm ROCm takes holds nothing HIP lacks (`__nanosleep` under
    `!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700` is a feature ROCm enters by accident, whichever it is). Only
    the project's vendor macros are known (`_project_vendor_macros`); every other name is tried in every state."""
    conditions, names = _chain_conditions(arms)
    if not names & set(_ROCM_BUILD):
        return False
    if _nvcc_terms_agree(arms, ctx):
        return True
    states = _chain_states(arms, ctx, conditions, names, _HIP_CLANG)
    if states is None:
        return False
    lookups, assignments = states
    as_nvcc = [{**_HIP_CLANG, **toolkit, **build} for toolkit in _NVIDIA_TOOLKITS for build in _NVCC_PASSES]
    codes: dict[int, str] = {}
    usable: dict[int, bool] = {}
    twins: dict[tuple[int, int], bool] = {}
    for assigned in assignments:
        taken = _taken_arm(conditions, [_build_lookup(lookup, _HIP_CLANG, assigned) for lookup in lookups])
        if taken is None or not _arm_usable(taken, arms, ctx, usable, on_rocm=True):
            return False
        for build in as_nvcc:
            instead = _taken_arm(conditions, [_build_lookup(lookup, build, assigned) for lookup in lookups])
            if instead is None:
                return False
            if instead == taken or _arm_code(instead, arms, ctx, codes) == _arm_code(taken, arms, ctx, codes):
                continue
            if build["__CUDA_ARCH__"] is None or not _device_twins(instead, taken, arms, ctx, twins):
                return False
    return True


def _device_twins(
    device: int, rocm: int, arms: list[Directive], ctx: CudaContext, twins: dict[tuple[int, int], bool]
) -> bool:
    """Whether the arm ROCm takes (`rocm`) computes portably what the arm an nvcc device pass takes instead (`device`)
    computes with per-thread intrinsics HIP has (`arm_twins.portable_twin`), remembered in `twins`."""
    if len(arms) in (device, rocm):
        return False
    if (device, rocm) not in twins:
        twins[device, rocm] = portable_twin(arm_span(arms[device], ctx), arm_span(arms[rocm], ctx), ctx)
    return twins[device, rocm]


def _nvcc_terms_agree(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether each `&&` operand of this chain's conditions that tests nvcc's macros has one value on ROCm and on every
    recent NVIDIA build, whatever the other macros (`(!defined(__NVCC__) || !XYZ_ARM || XYZ_NVCC_VERSION >= 80000)`
    holds on both: an nvcc older than 8.0 on ARM is worked around), and no arm holds what HIP lacks: the tests
    decide nothing between the vendors."""
    aliases = _toolkit_version_aliases(_chain_conditions(arms)[0], arms, ctx)
    builds = [
        {**toolkit, **build, **_alias_values(aliases, toolkit)}
        for toolkit in _NVIDIA_TOOLKITS
        for build in _NVCC_PASSES
    ]
    for arm in arms:
        if arm.kind == "else":
            continue
        rocm = _build_lookup(ctx.preprocessor.macro_lookup("rocm", arm.start_byte), _ROCM_BUILD, {})
        nvidia = ctx.preprocessor.macro_lookup("nvidia", arm.start_byte)
        for term in _conjuncts(arm.condition):
            if not set(names_in(term)) & NVCC_COMPILER_MACROS:
                continue
            value = evaluate_expression(term, rocm)
            if value is None or any(
                evaluate_expression(term, _build_lookup(nvidia, build, {})) != value for build in builds
            ):
                return False
    return all(lacking_on_hip(ctx, arm_span(arm, ctx)) is None for arm in arms)


def _conjuncts(condition: str) -> list[str]:
    """The operands of a condition's top-level `&&` (the whole condition when it has none, or a top-level `||` or `?`
    binds looser)."""
    terms, depth, start = [], 0, 0
    for index, char in enumerate(condition):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and (condition.startswith("||", index) or char == "?"):
            return [condition]
        if depth == 0 and condition.startswith("&&", index):
            terms.append(condition[start:index])
            start = index + 2
    return [*terms, condition[start:]]


# A reserved `__x__` word in an arm's code (not its directives): CUDA's qualifiers and stand-ins for them
# (`#define __host__`, `struct __align__`), which HIP's headers declare too.
_RESERVED_WORD = re.compile(r"\b__\w+__\b")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def hides_plain_cpp_from_nvcc(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this chain (`arms`) is a lone arm every nvcc pass skips and HIP-Clang enters (`#ifndef __CUDACC__` ...
    `#endif`, no `#else`) holding plain host C++: standard headers, a namespace alias, a host function an old nvcc
    could not parse (`<filesystem>`). NVIDIA's arm is empty, so ROCm loses nothing, and clang compiles such C++.
    Not when the arm defines or undefines a macro, spells a reserved `__x__` word or a macro of the file outside its
    directives, or holds what a CUDA rule triggers on or a CUDA spelling (`arm_may_hold_hazards`): a stand-in for
    CUDA (`#define __host__`, a macro expanding to stubs) clashes with HIP's own."""
    if len(arms) != 1 or arms[0].kind == "else":
        return False
    arm = arms[0]
    lookup = ctx.preprocessor.macro_lookup("rocm", arm.start_byte)
    if not evaluate_expression(arm.condition, _build_lookup(lookup, _HIP_CLANG, {})):
        return False
    nvidia = ctx.preprocessor.macro_lookup("nvidia", arm.start_byte)
    passes = [{**toolkit, **build} for toolkit in _NVIDIA_TOOLKITS for build in _NVCC_PASSES]
    if any(evaluate_expression(arm.condition, _build_lookup(nvidia, build, {})) != 0 for build in passes):
        return False
    span = arm_span(arm, ctx)
    if any(
        d.kind in ("define", "undef") and span.start_byte <= d.start_byte < span.end_byte
        for d in ctx.preprocessor.directives
    ):
        return False
    code = "\n".join(line for line in arm_text(arm, ctx).splitlines() if not line.lstrip().startswith("#"))
    if _RESERVED_WORD.search(code) is not None or any(word in ctx.preprocessor.defines for word in _WORD.findall(code)):
        return False  # a reserved word, or a macro of the file whose expansion may stand in for CUDA
    return not arm_may_hold_hazards(arm, ctx)


def works_around_nvcc(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this chain tests nvcc's macros only to work around nvcc, which HIP-Clang is right to skip as every other
    compiler does: plain C++ hidden from an old nvcc (`hides_plain_cpp_from_nvcc`), a dummy statement after one that
    returns, there for nvcc's missing-return warning (`unreachable_chain`), nvcc handed a reduced copy of the other
    arm (`gives_nvcc_a_reduced_copy`), nvcc's version recorded in a macro (`records_nvcc_version`)."""
    return (
        hides_plain_cpp_from_nvcc(arms, ctx)
        or unreachable_chain(arms, ctx)
        or gives_nvcc_a_reduced_copy(arms, ctx)
        or records_nvcc_version(arms, ctx)
        or withholds_attributes_from_nvcc(arms, ctx)
        or defaults_what_nvcc_spells_out(arms, ctx)
        or shims_builtins_for_nvcc(arms, ctx)
        or marks_constexpr_function_for_nvcc(arms, ctx)
    )


def records_nvcc_version(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this chain only defines macros holding nvcc's version (`#if defined(__NVCC__) #define XYZ_COMPILER_NVCC
    __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ #endif`), maybe choosing among nvcc's version macros by an
    inner chain (one arm an `#error`), its `#else` defining them as 0: compiler identification. HIP-Clang is not nvcc,
    and the macro undefined (or 0) is what every other compiler gets; the project model reads the tests of it as
    NVIDIA-only gates."""
    if arms[0].kind == "else" or len(arms) > 2 or (len(arms) == 2 and arms[1].kind != "else"):
        return False
    recorded = _defined_only(
        arms[0], ctx, lambda value: bool(names_in(value)) and _NVCC_VERSIONS.issuperset(names_in(value))
    )
    if not recorded:
        return False
    return len(arms) == 1 or _defined_only(arms[1], ctx, lambda value: value in ("", "0")) == recorded


# nvcc's version macros, its combined one before CUDA 9 too (`__CUDACC_VER__`, 80044 for 8.0.44).
_NVCC_VERSIONS = CUDA_VERSION_MACROS | {"__CUDACC_VER__"}


def shims_builtins_for_nvcc(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this lone arm only nvcc enters (`#if defined(__NVCC__) && !defined(__builtin_ia32_prefetch)`) only
    defines GCC builtins as macros (`#define __builtin_ia32_prefetch(p, rw, l, c) __builtin_prefetch(p, rw, l)`): a
    stand-in for what the system headers call and nvcc lacks. HIP-Clang is clang, which has GCC's builtins."""
    if len(arms) != 1 or arms[0].kind == "else" or _NOT_NVCC_TEST.fullmatch(arms[0].condition) is not None:
        return False
    if not set(names_in(arms[0].condition)) & _NVCC_COMPILER_MACROS:
        return False
    span = arm_span(arms[0], ctx)
    inside = [d for d in ctx.preprocessor.directives if span.start_byte <= d.start_byte < span.end_byte]
    if not inside or any(d.kind != "define" or not d.text.lstrip().startswith("__builtin_") for d in inside):
        return False
    return not without_comments(_between_directives(span, inside, ctx)).strip()


def _between_directives(span: ByteSpan, inside: list[Directive], ctx: CudaContext) -> str:
    """The text of an arm outside its own directives."""
    bounds = [span.start_byte, *(byte for d in inside for byte in (d.start_byte, d.end_byte)), span.end_byte]
    return b"".join(ctx.content[start:end] for start, end in zip(bounds[::2], bounds[1::2], strict=True)).decode(
        "utf-8", "replace"
    )


def _defined_only(arm: Directive, ctx: CudaContext, fits: Callable[[str], bool]) -> set[str] | None:
    """The object-like macros the arm this directive opens defines, when it holds nothing else (conditionals choosing
    among them and `#error`s aside) and each value `fits`; None otherwise."""
    span = arm_span(arm, ctx)
    inside = [d for d in ctx.preprocessor.directives if span.start_byte <= d.start_byte < span.end_byte]
    if without_comments(_between_directives(span, inside, ctx)).strip():
        return None  # code beside the definitions
    defined: set[str] = set()
    for directive in inside:
        if directive.kind in CONDITION_KINDS or directive.kind in ("else", "endif", "error"):
            continue
        match = _OBJECT_DEFINE.fullmatch(directive.text) if directive.kind == "define" else None
        if match is None or not fits(match.group(2).strip()):
            return None
        defined.add(match.group(1))
    return defined or None


# An object-like macro's `#define` text: its name, then its value (`XYZ_NVCC (__CUDACC_VER_MAJOR__ * 100)`).
_OBJECT_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(?![\w(])(.*)", re.DOTALL)


def gives_nvcc_a_reduced_copy(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this `#if`/`#else` pair tests nvcc itself (`__NVCC__`, not the CUDA language's `__CUDACC__`) to hand it
    the other arm's code with plain C++ left out or spelled out: `#ifndef __NVCC__ [[no_unique_address]] T m;
    #else T m; #endif`, `static_cast<int64_t>(R) > r` beside `R > r`. An old nvcc's workaround: both arms are the
    same code, and HIP-Clang takes the one every other compiler does. Not when the tokens only one arm has spell a
    reserved `__x__` word, a CUDA name or a CUDA rule's trigger, nor name a macro whose value does: `#define HD
    __host__ __device__` beside `#define HD` is the vendor split, not a workaround."""
    if len(arms) != 2 or arms[1].kind != "else":
        return False
    tested = set(names_in(arms[0].condition))
    if "__NVCC__" not in tested or "__CUDACC__" in tested:
        return False
    shorter, longer = sorted((_TOKENS.findall(arm_text(arm, ctx)) for arm in arms), key=len)
    extra = _left_over(shorter, longer) if shorter else None
    if extra is None:
        return False
    text = " ".join(extra)
    for _ in range(_EXPANSIONS):  # macros naming macros: `XYZ_INLINE` -> `inline XYZ_HOST_DEVICE` -> ...
        text = " ".join(ctx.resolve_text(t, arms[0]) if _WORD.fullmatch(t) else t for t in _TOKENS.findall(text))
    triggers = cuda_triggers(ctx.options.known_rules)
    return not (
        _RESERVED_WORD.search(text) or _CUDA_SPELLING.search(text) or (triggers is not None and triggers.search(text))
    )


def withholds_attributes_from_nvcc(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether an arm of this chain that nvcc alone enters (`#elif defined(__NVCC__) || defined(__CUDACC__)`) holds
    the code of each later arm a Linux compiler may take, with only GNU attributes left out (`#define XYZ_FORCEINLINE
    inline` before `#elif defined(__GNUC__)` / `inline __attribute__((always_inline))`, visibility macros defined
    empty before the ELF visibility arm): nvcc's workaround for attributes it rejects. HIP-Clang takes the arm every
    other compiler does. Not when a left-out attribute is one of CUDA's (`__attribute__((device))`), nor when the
    nvcc arm has code the later arm lacks (`__forceinline__`, `__host__ __device__`)."""
    index = next((i for i, arm in enumerate(arms) if _only_nvcc_enters(arm)), None)
    if index is None:
        return False
    later = [arm for arm in arms[index + 1 :] if not _windows_arm(arm, ctx)]
    nvcc = _TOKENS.findall(arm_text(arms[index], ctx))
    if not later or not nvcc:
        return False
    for arm in later:
        extra = _left_over(nvcc, _TOKENS.findall(arm_text(arm, ctx)))
        if extra is None or not _only_gnu_attributes(extra):
            return False
    return True


def _nvcc_and_other_arm(arms: list[Directive]) -> tuple[Directive, Directive] | None:
    """(nvcc's arm, the other compilers' arm) of an `#if`/`#else` pair testing nvcc's compiler macros either way
    round; None for any other chain."""
    if len(arms) != 2 or arms[1].kind != "else":
        return None
    if _NVCC_ONLY_TEST.fullmatch(arms[0].condition) is not None:
        return arms[0], arms[1]
    if _NOT_NVCC_TEST.fullmatch(arms[0].condition) is not None:
        return arms[1], arms[0]
    return None


def defaults_what_nvcc_spells_out(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this `#if`/`#else` pair on nvcc's compiler macros gives other compilers only defaulted copy and move
    members of a class (`bound(bound const&) = default;`) where nvcc's arm writes those members out (`constexpr
    __host__ __device__ bound(bound const& other) : _f(other._f) {}`): nvcc wants the execution space spelled, while
    clang infers a defaulted member's from the members it copies (HIP-Clang's device code may call it)."""
    split = _nvcc_and_other_arm(arms)
    if split is None:
        return False
    nvcc, others = split
    defaulted = _DEFAULTED_MEMBER.findall(arm_text(others, ctx))
    if not defaulted or _DEFAULTED_MEMBER.sub("", arm_text(others, ctx)).strip():
        return False
    names = {name for pair in defaulted for name in pair if name}
    written_out = arm_text(nvcc, ctx)
    return len(names) == 1 and all(
        re.search(rf"\b{name}\s*\(\s*(?:const\s+)?{name}\b", written_out) is not None for name in names
    )


def marks_constexpr_function_for_nvcc(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether this `#if`/`#else` pair on nvcc's compiler macros only spells a `constexpr` function's declaration
    specifiers, nvcc's arm adding CUDA's execution spaces (`__device__ static constexpr int` beside `static constexpr
    int`, the function's name right after the chain): clang makes every constexpr function host and device
    (`-fcuda-host-device-constexpr`, its default), so HIP-Clang's device code may call the `#else` arm's function as
    nvcc's calls its own. Not for a function that is not constexpr, which the `#else` arm leaves host-only."""
    split = _nvcc_and_other_arm(arms)
    if split is None:
        return False
    nvcc, others = split
    specifiers = _TOKENS.findall(arm_text(others, ctx))
    if "constexpr" not in specifiers or not all(token.isidentifier() for token in specifiers):
        return False
    added = _left_over(specifiers, _TOKENS.findall(arm_text(nvcc, ctx)))
    if not added or not set(added) <= _EXECUTION_SPACES:
        return False
    end = arm_span(arms[1], ctx).end_byte
    endif = next((d for d in ctx.preprocessor.directives if d.start_byte == end and d.kind == "endif"), None)
    after = ctx.content[endif.end_byte : endif.end_byte + 400].decode("utf-8", "replace") if endif else ""
    return _FUNCTION_NAME_FIRST.match(without_comments(after)) is not None


_EXECUTION_SPACES = frozenset({"__device__", "__host__"})
# A function's declarator opening the code after the chain: `getWidth( int d )`, `Grid::width(`.
_FUNCTION_NAME_FIRST = re.compile(r"\s*(?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*\s*\(")
# `C(C const&) = default;`, `C(const C&) = default;`, `C(C&&) = default;`, `C& operator=(C const&) = default;`.
_DEFAULTED_MEMBER = re.compile(
    r"\s*(?:constexpr\s+)?(?:(\w+)|(\w+)\s*&\s*operator\s*=)\s*\(\s*(?:const\s+)?\w+\s*(?:const\s*)?&&?\s*\w*\s*\)"
    r"\s*(?:noexcept\s*)?=\s*default\s*;"
)
# nvcc's compiler macros both undefined: `!defined(__NVCC__) && !defined(__CUDACC__)`, `#ifndef __CUDACC__`.
_NOT_NVCC_TEST = re.compile(
    r"\s*(?:(?:&&\s*)?!\s*(?:defined\s*\(\s*(?:__NVCC__|__CUDACC__)\s*\)|defined\s+(?:__NVCC__|__CUDACC__))\s*)+"
)


# nvcc's own compiler macros, as an arm only nvcc enters tests them (`defined(__NVCC__) || defined(__CUDACC__)`).
_NVCC_ONLY_TEST = re.compile(
    r"\s*(?:(?:\|\|\s*)?(?:defined\s*\(\s*(?:__NVCC__|__CUDACC__)\s*\)|defined\s+(?:__NVCC__|__CUDACC__))\s*)+"
)
# CUDA's execution-space and memory attributes as GNU attributes spell them (HIP's `__device__` is
# `__attribute__((device))`): leaving one out changes where code runs, no mere hint.
_CUDA_ATTRIBUTES = frozenset({"device", "host", "global", "shared", "constant", "managed", "launch_bounds"})


def _only_nvcc_enters(arm: Directive) -> bool:
    """An `#if`/`#elif`/`#ifdef` testing only that nvcc's compiler macros are defined."""
    return arm.kind in ("if", "ifdef", "elif", "elifdef") and _NVCC_ONLY_TEST.fullmatch(arm.condition) is not None


def _only_gnu_attributes(tokens: list[str]) -> bool:
    """Whether `tokens` are nothing but GNU attribute groups (`__attribute__ ( ( always_inline ) )`), none of CUDA's."""
    position = 0
    while position < len(tokens):
        if tokens[position] != "__attribute__" or tokens[position + 1 : position + 3] != ["(", "("]:
            return False
        depth, position = 0, position + 1
        while position < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[position], 0)
            if tokens[position].strip("_") in _CUDA_ATTRIBUTES:
                return False
            position += 1
            if depth == 0:
                break
        if depth != 0:
            return False
    return True


_TOKENS = re.compile(r"[A-Za-z_]\w*|\d\w*|\S")
_EXPANSIONS = 3  # how many times the words of the extra tokens are expanded as macros


def _left_over(shorter: list[str], longer: list[str]) -> list[str] | None:
    """The tokens of `longer` left once `shorter` is matched in order inside it, None when it is not."""
    extra: list[str] = []
    position = 0
    for token in shorter:
        while position < len(longer) and longer[position] != token:
            extra.append(longer[position])
            position += 1
        if position == len(longer):
            return None
        position += 1
    return extra + longer[position:]


def unreachable_chain(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether no arm of this chain can run, and ROCm can compile each: it sits in a function body right after a
    statement control never leaves normally (an `if`/`if constexpr` chain whose every arm, its `else` included,
    returns or throws), as an old nvcc's missing-return workaround does (`#if __CUDACC_VER_MAJOR__ < 11 return
    T{}; #endif`). Whichever arm ROCm takes, nothing of it runs."""
    opener = ctx.tree.root_node.descendant_for_byte_range(arms[0].start_byte, arms[0].start_byte)
    conditional = opener.parent if opener is not None else None
    if conditional is None or conditional.type not in _CONDITIONAL_NODES:
        return False
    if conditional.parent is None or conditional.parent.type != "compound_statement":
        return False
    before = conditional.prev_named_sibling
    while before is not None and before.type == "comment":
        before = before.prev_named_sibling
    if before is None or not _never_falls_through(before):
        return False
    return all(lacking_on_hip(ctx, arm_span(arm, ctx)) is None for arm in arms)


_CONDITIONAL_NODES = frozenset({"preproc_if", "preproc_ifdef"})
_ARM_FIELDS = frozenset({"condition", "name", "alternative"})  # the parts of an `#if` node that are not its arm
_LEAVING_STATEMENTS = frozenset({"return_statement", "throw_statement"})


def _never_falls_through(statement: Node) -> bool:
    """Whether control never leaves `statement` to the next one: a `return` or `throw`, a block ending in one, an
    `if` whose every arm (an `else` included) never falls through, an `#if` chain with an `#else` whose every arm
    ends in such a statement (`#if THRUST_VERSION < 16 return par; #else return par_nosync; #endif`)."""
    if statement.type in _LEAVING_STATEMENTS:
        return True
    if statement.type == "expression_statement":
        return any(child.type == "throw_expression" for child in statement.named_children)
    if statement.type == "compound_statement":
        return _ends_leaving(statement.named_children)
    if statement.type in (*_CONDITIONAL_NODES, "preproc_elif", "preproc_else"):
        arm = [c for i, c in enumerate(statement.children) if statement.field_name_for_child(i) not in _ARM_FIELDS]
        otherwise = statement.child_by_field_name("alternative")
        closed = statement.type == "preproc_else" or (otherwise is not None and _never_falls_through(otherwise))
        return closed and _ends_leaving([c for c in arm if c.is_named])
    if statement.type != "if_statement":
        return False
    consequence = statement.child_by_field_name("consequence")
    alternative = statement.child_by_field_name("alternative")
    if consequence is None or alternative is None:
        return False
    otherwise = next((c for c in alternative.named_children if c.type != "comment"), None)
    return _never_falls_through(consequence) and otherwise is not None and _never_falls_through(otherwise)


def _ends_leaving(statements: list[Node]) -> bool:
    """Whether the last of `statements` (comments aside) never falls through."""
    last = next((c for c in reversed(statements) if c.type != "comment"), None)
    return last is not None and _never_falls_through(last)


def _chain_conditions(arms: list[Directive]) -> tuple[list[str], set[str]]:
    """Each arm's condition (`1` for `#else`) and the macro names they test."""
    conditions = ["1" if arm.kind == "else" else arm.condition for arm in arms]
    return conditions, {name for condition in conditions for name in names_in(condition)} - _NOT_MACROS


def _chain_states(
    arms: list[Directive], ctx: CudaContext, conditions: list[str], names: set[str], fixed: Mapping[str, int | None]
) -> tuple[list[MacroLookup], list[dict[str, int | None]]] | None:
    """Each arm's ROCm view knowing only the project's vendor macros, and every assignment of the names neither that
    view nor `fixed` (the compiler's macros) decides; None when there are more than `_MAX_ASSIGNMENTS`."""
    projects = _project_vendor_macros(names, ctx)
    lookups = [_knowing_only(ctx.preprocessor.macro_lookup("rocm", arm.start_byte), projects) for arm in arms]
    free = sorted(name for name in names - set(fixed) if any(_unknown(name, lookup) for lookup in lookups))
    domain = _assignment_domain(conditions)
    if len(domain) ** len(free) > _MAX_ASSIGNMENTS:
        return None
    return lookups, [dict(zip(free, values, strict=True)) for values in itertools.product(domain, repeat=len(free))]


def _arm_code(index: int, arms: list[Directive], ctx: CudaContext, codes: dict[int, str]) -> str:
    """The code of the arm at `index` (none past the last), comments and spacing left out, remembered in `codes`."""
    if index not in codes:
        codes[index] = " ".join(arm_text(arms[index], ctx).split()) if index < len(arms) else ""
    return codes[index]


def _knowing_only(lookup: MacroLookup, names: frozenset[str]) -> MacroLookup:
    """`lookup`, with every name but `names` unknown."""
    return lambda name, asked: lookup(name, asked) if name in names else None


def _unknown(name: str, *lookups: MacroLookup) -> bool:
    return any(lookup(name, asked) is None for lookup in lookups for asked in ("defined", "value"))


def _assignment_domain(conditions: list[str]) -> list[int | None]:
    """The states tried for each of the project's macros: undefined (None), 0, 1, and each number the
    conditions compare with and the one after it."""
    numbers = {int(token) for condition in conditions for token in re.findall(r"\b\d+\b", condition)}
    return [None, 0, 1, *sorted((numbers | {n + 1 for n in numbers}) - {0, 1})]


def _build_lookup(
    base: MacroLookup, fixed: Mapping[str, int | None], assigned: Mapping[str, int | None]
) -> MacroLookup:
    """A build's view of each macro: `fixed` (None: undefined) first, then what the file tells, then `assigned`."""

    def lookup(name: str, asked: str) -> int | None:
        if name in fixed or (base(name, asked) is None and name in assigned):
            value = fixed[name] if name in fixed else assigned[name]
            return int(value is not None) if asked == "defined" else (value or 0)
        return base(name, asked)

    return lookup


def _taken_arm(conditions: list[str], lookups: list[MacroLookup]) -> int | None:
    """The index of the arm a build takes (`len(conditions)`: none), None when a condition is unknown."""
    for index, (condition, lookup) in enumerate(zip(conditions, lookups, strict=True)):
        value = evaluate_expression(condition, lookup)
        if value is None:
            return None
        if value:
            return index
    return len(conditions)


def _needless_on_rocm(index: int, rocm: int, arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether the arm NVIDIA takes (`index`) only opts kernels in to more dynamic shared memory
    (`shared_memory_opt_in`), which an AMD GPU gives without it; when it reads the opt-in cap too, the arm ROCm
    takes (`rocm`) reads the per-block maximum in its stead (magma's `#if CUDA_VERSION >= 9000` arm reading
    `cudaDevAttrMaxSharedMemoryPerBlockOptin`, its `#else` reading `cudaDevAttrMaxSharedMemoryPerBlock`). Or
    it only re-creates CUDA library names a newer toolkit renamed (`aliases_only_hip_mapped_names`)."""
    if index == len(arms):
        return False
    if aliases_only_hip_mapped_names(arms[index], ctx):
        return True
    opt_in = shared_memory_opt_in(ctx, arm_span(arms[index], ctx))
    if opt_in is None or not opt_in.queries_cap:
        return opt_in is not None
    return rocm < len(arms) and reads_per_block_shared_memory(ctx, arm_span(arms[rocm], ctx))


def aliases_only_hip_mapped_names(directive: Directive, ctx: CudaContext) -> bool:
    """Whether the arm this directive opens holds nothing but `#define`s of CUDA library names HIPIFY maps to HIP
    ones as other names (`_aliases_mapped_name`): a shim for a toolkit that renamed them (`#if CUDA_VERSION >=
    12000` / `#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1`). A build skipping it reads the library's own
    name, which HIP has under its mapped name: ROCm needs no shim."""
    span = arm_span(directive, ctx)
    inside = [d for d in ctx.preprocessor.directives if span.start_byte <= d.start_byte < span.end_byte]
    if not inside or any(d.kind != "define" for d in inside):
        return False
    mapped = cuda_to_hip_names()
    if any(not _aliases_mapped_name(d, mapped, ctx) for d in inside):
        return False
    pieces, start = [], span.start_byte
    for define in inside:
        pieces.append(ctx.content[start : define.start_byte])
        start = define.end_byte
    pieces.append(ctx.content[start : span.end_byte])
    return not without_comments(b"".join(pieces).decode("utf-8", "replace")).strip()


def _aliases_mapped_name(directive: Directive, mapped: Mapping[str, str], ctx: CudaContext) -> bool:
    """The `#define` gives a name HIPIFY maps another spelling (`#define OLD_ENUM NEW_ENUM`). Not a function-like
    macro rebuilding a routine on a newer API: HIPIFY's tables keep names ROCm has since dropped, and the old
    routine may be gone on ROCm too (or stubbed by the project)."""
    name = _WORD.match(directive.text.lstrip())
    defines = ctx.preprocessor.defines.get(name.group(), []) if name is not None else []
    define = next((d for d in defines if d.directive.start_byte == directive.start_byte), None)
    return (
        define is not None
        and define.name in mapped
        and define.parameters is None
        and _WORD.fullmatch(define.value) is not None
    )


def _arm_usable(index: int, arms: list[Directive], ctx: CudaContext, cache: dict[int, bool], *, on_rocm: bool) -> bool:
    """For the arm ROCm takes (`on_rocm`): it holds nothing HIP lacks. For an arm an NVIDIA build takes instead:
    every statement of it is something HIP lacks. No arm taken: ROCm loses nothing, NVIDIA compiles something
    ROCm does not."""
    if index == len(arms):
        return on_rocm
    key = index if on_rocm else -1 - index
    if key not in cache:
        span = arm_span(arms[index], ctx)
        cache[key] = lacking_on_hip(ctx, span) is None if on_rocm else only_lacking_on_hip(ctx, span)
    return cache[key]


def nvidia_only_by_design(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether the arms of this chain a ROCm build skips, before the one it takes, could never build on ROCm by the
    project's own design (`nvidia_only_evidence`), for every state of the macros ROCm's view does not know, and the
    arm ROCm takes (if any) holds nothing HIP lacks: ROCm lands where its author sent it (mscclpp-like multimem arms
    under `__CUDA_ARCH__ >= 900` whose device helpers the project declares only for its NVIDIA build). An arm of
    portable code (arithmetic, a shuffle HIP has) is no such arm: ROCm silently dropping it stays a hazard."""
    return _skipped_by_design(arms, ctx) > 0


def _skipped_by_design(arms: list[Directive], ctx: CudaContext) -> int:
    """How many leading arms of the chain ROCm skips by the project's design (see `nvidia_only_by_design`): the
    fewest over every state of the macros ROCm's view does not know; 0 when ROCm may take the first, or an arm it
    skips could build on ROCm."""
    conditions, names = _chain_conditions(arms)
    lookups = [ctx.preprocessor.macro_lookup("rocm", arm.start_byte) for arm in arms]
    free = sorted(name for name in names - set(_ROCM_BUILD) if any(_unknown(name, lookup) for lookup in lookups))
    domain = _assignment_domain(conditions)
    if len(domain) ** len(free) > _MAX_ASSIGNMENTS:
        return 0
    judged: dict[int, bool] = {}
    skipped = len(arms)
    for values in itertools.product(domain, repeat=len(free)):
        assigned = dict(zip(free, values, strict=True))
        rocm = _taken_arm(conditions, [_build_lookup(lookup, _ROCM_BUILD, assigned) for lookup in lookups])
        if rocm is None or rocm == 0:
            return 0
        if rocm < len(arms) and lacking_on_hip(ctx, arm_span(arms[rocm], ctx)) is not None:
            return 0
        for index in range(rocm):
            if index not in judged:
                judged[index] = nvidia_only_evidence(arms[index], ctx) is not None
            if not judged[index]:
                return 0
        skipped = min(skipped, rocm)
    return skipped


def in_nvidia_only_arm(span: Span, ctx: CudaContext) -> bool:
    """Whether `span` lies in an arm of the innermost `#if` chain around it that ROCm skips by the project's design
    (`nvidia_only_by_design`): what a ROCm port would never compile there is no hazard (a libcu++ include)."""
    if ctx.branch(span).on_rocm is False:
        return False  # ROCm never compiles it anyway
    arms = _arms_around(span, ctx)
    if not arms:
        return False
    holding = max(index for index, arm in enumerate(arms) if arm.start_byte <= span.start_byte)
    return holding < _skipped_by_design(arms, ctx)


def _arms_around(span: Span, ctx: CudaContext) -> list[Directive]:
    """The arms (`#if`, each `#elif`, `#else`) of the innermost chain whose arm holds `span`; [] outside any."""
    stack: list[list[Directive]] = []
    for directive in ctx.preprocessor.directives:
        if directive.start_byte >= span.start_byte:
            break
        if directive.kind in _OPENERS:
            stack.append([directive])
        elif directive.kind in _ARMS and stack:
            stack[-1].append(directive)
        elif directive.kind == "endif" and stack:
            stack.pop()
    return stack[-1] if stack else []


def nvidia_only_evidence(arm: Directive, ctx: CudaContext) -> str | None:
    """Why the arm this directive opens could never build on ROCm by the project's own design, or None: it names an
    identifier the file and its headers declare only in `#if` arms ROCm skips by the project's macros (`XYZ_DEVICE_CUDA`
    defined for NVIDIA only; `FileView.declared_only_off_rocm`); or it declares names the files around it, and this
    file outside the arm, name only in such arms (members only NVIDIA-only code defines and calls); or it sits outside
    any function and holds only what HIP lacks, code beside its includes (traits for libcu++'s `cuda::std::complex`):
    declarations ROCm could not compile and nothing ROCm compiles could use. Declared names count only as a class's members: only code seeing the
    class calls them, while another translation unit may declare a free function itself."""
    span = arm_span(arm, ctx)
    code = ctx.content[span.start_byte : span.end_byte]
    project = ctx.options.project
    used = code_words(code)
    declared_off_rocm = project.declared_only_off_rocm(frozenset(used)) if used else None
    if declared_off_rocm is not None:
        return f"`{declared_off_rocm}` is declared only where the project's ROCm build never compiles"
    declared = {
        match.group().decode() for match in _IDENTIFIER.finditer(code) if declares(code, match.start(), match.end())
    }
    if declared and _in_class_body(ctx, arm.start_byte) and project.named_only_off_rocm(frozenset(declared)):
        pattern = word_pattern(declared)
        outside = [
            match.start()
            for match in pattern.finditer(ctx.content)
            if not span.start_byte <= match.start() < span.end_byte
        ]
        if all(off_rocm_by_project(ctx.preprocessor, offset) for offset in outside):
            return f"`{min(declared)}` is named only where the project's ROCm build never compiles"
    if used and _outside_functions(ctx, arm.start_byte) and only_lacking_on_hip(ctx, span, libcudacxx=True):
        return "it holds only what HIP lacks (libcu++ included), outside any function"
    return None


def _in_class_body(ctx: CudaContext, offset: int) -> bool:
    """Whether a byte of the file (a directive) sits in a class's member list, outside its member functions."""
    heads = _open_brace_heads(ctx, offset)
    return bool(heads) and _CLASS_HEAD.search(heads[-1]) is not None


def _outside_functions(ctx: CudaContext, offset: int) -> bool:
    """Whether a byte of the file sits outside every function body: each brace open before it opens a namespace,
    an `extern "C"` block or a class."""
    return all(_CLASS_HEAD.search(head) or _NAMESPACE_HEAD.search(head) for head in _open_brace_heads(ctx, offset))


def _open_brace_heads(ctx: CudaContext, offset: int) -> list[str]:
    """The text before each brace still open at a byte of the file, outermost first. Read from the text (comments,
    literals and directive lines left out), not the syntax tree: a project's macros may leave a whole header one
    parse error."""
    text = _LITERAL_OR_DIRECTIVE.sub(" ", without_comments(ctx.content[:offset].decode("utf-8", "replace")))
    opened: list[str] = []
    start = 0
    for token in _BRACE_OR_END.finditer(text):
        if token.group() == "{":
            opened.append(text[start : token.start()])
        elif token.group() == "}" and opened:
            opened.pop()
        start = token.end()
    return opened


_BRACE_OR_END = re.compile(r"[{};]")
_CLASS_HEAD = re.compile(r"\b(?:class|struct|union)\s+[A-Za-z_][\w:]*[^()=]*$")
# (`extern "C"` has lost its literal to `_LITERAL_OR_DIRECTIVE`.)
_NAMESPACE_HEAD = re.compile(r"\b(?:namespace(?:\s+[\w:]+)?|extern)\s*$")


_IDENTIFIER = re.compile(rb"\b[A-Za-z_]\w*\b")
_LITERAL_OR_DIRECTIVE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|^[ \t]*#.*$', re.MULTILINE)


# --- condition rewrites ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WidenedTest:
    """One test of a name a rewrite widens, in a condition: `defined(X)`, `defined X`, a bare `X` (`match`),
    `!` included when one is written right before it; `negated` when an odd number of `!` apply to it (its
    own and those before the parenthesised groups around it)."""

    match: re.Match[str]
    negated: bool

    @property
    def name(self) -> str:
        return self.match.group("paren") or self.match.group("spaced") or self.match.group("bare")


@cache
def _term_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(
        rf"(?P<neg>!\s*)?(?:\bdefined\s*\(\s*(?P<paren>{alternation})\s*\)|\bdefined\s+(?P<spaced>{alternation})\b"
        rf"|\b(?P<bare>{alternation})\b)"
    )


def _truth_context(before: str, after: str) -> bool:
    """Whether a term sits where only its truth value counts (`#if X`, `!X && Y`, `(X)`), not compared
    (`defined(X) == 0`), selected on (`defined(X) ? 1 : 0`) or passed to a macro (`F(defined(X))`)."""
    before, after = before.rstrip(), after.lstrip()
    return (not before or (before.endswith(("(", "!", "&&", "||")) and not _MACRO_CALL.search(before))) and (
        not after or after.startswith((")", "&&", "||"))
    )


# A parenthesis opening a function-like macro's arguments, not a group.
_MACRO_CALL = re.compile(r"\w\s*\($")


def _groups(condition: str) -> list[tuple[int, int]] | None:
    """(open, close) offsets of each pair of parentheses in `condition`; None when they do not balance."""
    opened: list[int] = []
    pairs: list[tuple[int, int]] = []
    for index, char in enumerate(condition):
        if char == "(":
            opened.append(index)
        elif char == ")":
            if not opened:
                return None
            pairs.append((opened.pop(), index))
    return None if opened else pairs


def _bangs(before: str) -> int:
    """How many `!` end `before` (spaces between them allowed)."""
    stripped = before.rstrip()
    count = 0
    while stripped.endswith("!"):
        count += 1
        stripped = stripped[:-1].rstrip()
    return count


def condition_tests(
    condition: str, alternatives: Mapping[str, str], *, bare_truth: frozenset[str] = frozenset()
) -> list[WidenedTest] | None:
    """The tests of names in `alternatives` in `condition`, each with whether it is negated; None when one sits
    outside a truth context (`defined(X) == 0`, `0 == defined(X)`, `defined(X) ? A : B`, also through the
    groups around it), and for a bare name not in `bare_truth` (macros never defined as 0): its value counts."""
    condition = condition.strip()
    groups = _groups(condition)
    if groups is None:
        return None
    tests: list[WidenedTest] = []
    for match in _term_pattern(tuple(alternatives)).finditer(condition):
        if match.group("bare") and match.group("bare") not in bare_truth:
            return None
        start = match.start() + len(match.group("neg") or "")
        if not _truth_context(condition[:start], condition[match.end() :]):
            return None
        around = [(o, c) for o, c in groups if o < match.start() and c >= match.end()]
        if not all(_truth_context(condition[:o], condition[c + 1 :]) for o, c in around):
            return None
        negations = _bangs(condition[:start]) + sum(_bangs(condition[:o]) for o, _ in around)
        tests.append(WidenedTest(match, negations % 2 == 1))
    return tests


def _widened(condition: str, tests: list[WidenedTest], alternatives: Mapping[str, str]) -> str:
    """`condition` with each test widened by its alternative (see `with_alternatives`)."""
    condition = condition.strip()
    pieces: list[str] = []
    last = 0
    for test in tests:
        match, name = test.match, test.name
        alternative = alternatives[name]
        if match.group("neg"):
            text = f"!defined({name}) && !defined({alternative})"
        else:
            text = f"defined({name}) || defined({alternative})"
        enclosed = condition[: match.start()].rstrip().endswith("(") and condition[match.end() :].lstrip().startswith(
            ")"
        )
        pieces += [condition[last : match.start()], text if match.group(0) == condition or enclosed else f"({text})"]
        last = match.end()
    return "".join(pieces) + condition[last:]


def with_alternatives(
    condition: str, alternatives: Mapping[str, str], *, bare_truth: frozenset[str] = frozenset()
) -> str | None:
    """`condition` with every test of a name in `alternatives` widened by its alternative:
    `defined(X)` -> `(defined(X) || defined(ALT))`, `!defined(X)` -> `(!defined(X) && !defined(ALT))`
    (parentheses left out when the term is the whole condition or already parenthesised). A bare `X` counts
    as `defined(X)` only for names in `bare_truth` (macros never defined as 0). None when a test is not in a
    truth context (`__CUDA_ARCH__ >= 800`, `defined(__CUDA_ARCH__) == 0`: `condition_tests`)."""
    tests = condition_tests(condition, alternatives, bare_truth=bare_truth)
    return None if tests is None else _widened(condition, tests, alternatives)


_CONDITION_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef)\b")
_OPERAND = re.compile(r"[ \t]+([A-Za-z_]\w*)")


def condition_edit(directive: Directive, ctx: CudaContext, condition: str) -> Edit | None:
    """An edit replacing the directive's condition by `condition` (written as for `#if`): `#ifdef X`
    becomes `#if <condition>`, `#elifdef X` `#elif <condition>`; the rest of the line (a trailing comment)
    stays. None when the condition cannot be located verbatim in the line (a comment or a line
    continuation inside it)."""
    raw = ctx.content[directive.start_byte : directive.end_byte].decode("utf-8", "replace")
    opening = _CONDITION_DIRECTIVE.match(raw)
    if opening is None:
        return None
    kind = opening.group(1)
    if kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
        operand = _OPERAND.match(raw, opening.end())
        if operand is None or operand.group(1) != directive.text.strip():
            return None
        start, end = opening.start(1), operand.end(1)
        text = ("if " if kind in ("ifdef", "ifndef") else "elif ") + condition
    else:
        written = directive.text.strip()
        start = raw.find(written, opening.end()) if written else -1
        if start < 0:
            return None
        end, text = start + len(written), condition
    return ctx.edit(
        directive.start_byte + len(raw[:start].encode("utf-8")),
        directive.start_byte + len(raw[:end].encode("utf-8")),
        text,
    )


# --- what an arm holds ---------------------------------------------------------------------------------


# A condition testing one macro's definition, negated or not: `defined(X)`, `!defined X` (`#ifdef X` reads so).
_ONE_DEFINED_TEST = re.compile(r"\s*(!?)\s*defined\s*(?:\(\s*(\w+)\s*\)|\s(\w+))\s*")


def with_complementary_chain(arms: list[Directive], chains: Chains, ctx: CudaContext) -> list[Directive]:
    """The arms of a one-armed chain testing one macro's definition (`#if defined(__CUDACC__) __syncwarp(); #endif`)
    and, after them, the arm of a one-armed chain of the same function testing its negation (`#if
    !defined(__CUDACC__) __syncthreads(); #endif`, maybe after the loop the first one ends): the two are an `#if` and
    its `#else`, written apart, the second holding what the first one's compilers do not get. `arms` unchanged when
    there is no such chain, or more than one."""
    test = _defined_test(arms[0]) if len(arms) == 1 else None
    function = _function_at(ctx, arms[0].start_byte) if test is not None else None
    if test is None or function is None:
        return arms
    name, negated = test
    own = arm_span(arms[0], ctx)
    found = [
        other
        for other in ctx.preprocessor.directives
        if other.kind in _OPENERS
        and function.start_byte <= other.start_byte < function.end_byte
        and _defined_test(other) == (name, not negated)
        and len(chains.arms_of(other)) == 1
        and not own.start_byte <= other.start_byte < own.end_byte
        and not arm_span(other, ctx).start_byte <= arms[0].start_byte < arm_span(other, ctx).end_byte
    ]
    return [*arms, found[0]] if len(found) == 1 else arms


# nvcc's compiler macros: a chain testing one of them alone tells nvcc from the other compilers.
_NVCC_COMPILER_MACROS = frozenset({"__CUDACC__", "__NVCC__"})
# ROCm's HSA runtime (ROCr, `hsa/hsa.h`), below HIP: `hsa_agent_t`, `hsa_iterate_agents`, `hsa_amd_memory_pool_t`.
_HSA_API = re.compile(rb"\bhsa_(?:amd_)?[a-z]\w*")
_IDENTIFIER = re.compile(rb"\b[A-Za-z_]\w*")


def rocm_arm_written_for_rocm(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether a chain testing only whether nvcc's compiler macro is defined gives the other compilers an arm written
    for ROCm (`#ifdef __NVCC__ ... #else ... #endif`, or a lone `#if !defined(__NVCC__)`): one naming HIP's, a ROCm
    library's or ROCm's HSA runtime API (`rocblas_double_complex`, `hsa_agent_t`, `arm_vendor`), or a type or function
    the file defines only in such arms of its own (`AgentData` of an HSA-only struct): a vendor switch whose ROCm
    side its author wrote. Or, in a header whose HIP twin is included wherever it is (`FileView.hip_twin_beside`:
    `impl/rocm.hpp` beside `impl/cuda.hpp`), an `#ifdef __CUDACC__`: the twin's `#ifdef __HIPCC__` holds ROCm's side;
    so does a block of HIP-Clang's own in the same file (`_hip_clang_block_in_file`)."""
    test = _defined_test(arms[0])
    twin_test = test is not None and test[0] in _NVCC_COMPILER_MACROS and not test[1]
    if twin_test and (ctx.options.project.hip_twin_beside() or _hip_clang_block_in_file(ctx)):
        return True
    arm = _non_nvcc_arm(arms)
    if arm is None:
        return False
    if _written_for_rocm(arm, ctx):
        return True
    others = [
        other
        for chain in Chains(ctx).arms.values()
        if (other := _non_nvcc_arm(chain)) is not None and other != arm and _written_for_rocm(other, ctx)
    ]
    return bool(others) and _names_definitions_only_in(arm, others, ctx)


def _hip_clang_block_in_file(ctx: CudaContext) -> bool:
    """Whether the file gives HIP-Clang a block of its own: an arm testing only that one of HIP-Clang's compiler
    macros is defined (`#ifdef __HIP__`, `#elif defined(__HIPCC__)`) written for ROCm (`#include
    <rocm_smi/rocm_smi.h>`, `hipcub`). Its author tells nvcc from HIP-Clang and put ROCm's code there, so the file's
    `#ifdef __NVCC__` / `#ifdef __CUDACC__` arms are nvcc's by design (`rocm_arm_written_for_rocm`)."""
    return any(
        directive.kind in _POSITIVE_TESTS
        and (test := _defined_test(directive)) is not None
        and test[0] in _HIP_CLANG_COMPILER_MACROS
        and not test[1]
        and _written_for_rocm(directive, ctx)
        for directive in ctx.preprocessor.directives
    )


# The directives opening an arm by a condition of their own, and HIP-Clang's compiler macros (every compile; its
# device pass), which an author tests to give it a block of its own.
_POSITIVE_TESTS = frozenset({"if", "ifdef", "elif", "elifdef"})
_HIP_CLANG_COMPILER_MACROS = frozenset({"__HIPCC__", "__HIP__", "__HIP_DEVICE_COMPILE__"})


def _non_nvcc_arm(arms: list[Directive]) -> Directive | None:
    """The directive opening the arm other compilers take of a chain testing only whether nvcc's compiler macro is
    defined (`#else` of `#ifdef __NVCC__`, `#if !defined(__NVCC__)` with or without one), None for another chain."""
    test = _defined_test(arms[0])
    if test is None or test[0] not in _NVCC_COMPILER_MACROS:
        return None
    two_armed = len(arms) == 2 and arms[1].kind == "else"
    if test[1]:
        return arms[0] if len(arms) == 1 or two_armed else None
    return arms[1] if two_armed else None


def _arm_text(arm: Directive, ctx: CudaContext) -> bytes:
    span = arm_span(arm, ctx)
    return ctx.content[span.start_byte : span.end_byte]


def _written_for_rocm(arm: Directive, ctx: CudaContext) -> bool:
    """An arm naming ROCm's API (`arm_vendor`), or the HSA runtime's and no NVIDIA API, or one its author's opening
    comment says is for HIP (`// For HIP, use our implementation`), or whose directive's own comment names it (`#else
    // Clang CUDA or HIP compilation`)."""
    text = _arm_text(arm, ctx)
    if _SAID_FOR_ROCM.match(text) is not None or _names_rocm_in_comment(ctx.content[arm.start_byte : arm.end_byte]):
        return True
    return arm_vendor(text) == "rocm" or (_HSA_API.search(text) is not None and arm_vendor(text) is None)


# An arm opening with a comment that says what it is for: `// For HIP, use our implementation ...`, `/* on ROCm */`.
_SAID_FOR_ROCM = re.compile(rb"\s*(?://|/\*)[^\n]*?\b(?:[Ff]or|[Oo]n) (?:HIP|ROCm|AMD)\b")


# A comment on a directive's line naming ROCm's compiler or platform, and one naming no exception to it (`// not HIP`).
_ROCM_IN_COMMENT = re.compile(rb"(?://|/\*)[^\n]*?\b(?:HIP|ROCm|AMD)\b")
_NEGATION = re.compile(rb"\b(?:[Nn]ot?|[Nn]on|[Ww]ithout|[Ee]xcept|[Uu]nless)\b|n't\b")


def _names_rocm_in_comment(directive: bytes) -> bool:
    comment = _ROCM_IN_COMMENT.search(directive)
    return comment is not None and _NEGATION.search(directive, comment.start()) is None


def _names_definitions_only_in(arm: Directive, others: list[Directive], ctx: CudaContext) -> bool:
    """Whether the arm names a type or function the file defines, each definition inside one of the `others` arms."""
    spans = [arm_span(other, ctx) for other in others]
    for word in sorted(set(_IDENTIFIER.findall(_arm_text(arm, ctx)))):
        definitions = [leaf.start_byte for leaf in definitions_of(ctx, word.decode())]
        if definitions and all(any(s.start_byte <= d < s.end_byte for s in spans) for d in definitions):
            return True
    return False


def _defined_test(directive: Directive) -> tuple[str, bool] | None:
    """(macro, negated) of an `#if`/`#ifdef`/`#ifndef` testing only whether one macro is defined, else None."""
    match = _ONE_DEFINED_TEST.fullmatch(directive.condition)
    return None if match is None else (match.group(2) or match.group(3), bool(match.group(1)))


def _function_at(ctx: CudaContext, offset: int) -> Node | None:
    """The function definition around a byte of the file (a directive in its body), None outside any."""
    return ctx.function_of(ctx.tree.root_node.descendant_for_byte_range(offset, offset) or ctx.tree.root_node)


def arm_span(directive: Directive, ctx: CudaContext) -> ByteSpan:
    """The code of the arm this `#if`/`#elif` opens, up to the chain's next `#elif`/`#else`/`#endif` (nested
    conditionals included)."""
    directives = ctx.preprocessor.directives
    index = next((i for i, d in enumerate(directives) if d.start_byte == directive.start_byte), len(directives))
    depth = 0
    for following in directives[index + 1 :]:
        if following.kind in _OPENERS:
            depth += 1
        elif following.kind == "endif":
            if depth == 0:
                return ByteSpan(directive.end_byte, following.start_byte)
            depth -= 1
        elif following.kind in _ARMS and depth == 0:
            return ByteSpan(directive.end_byte, following.start_byte)
    return ByteSpan(directive.end_byte, len(ctx.content))


def _stops_rocm(directive: Directive, ctx: CudaContext) -> bool:
    """Whether the arm this `#if`/`#elif` opens holds an `#error` a ROCm build may reach: one in a nested arm only
    another build takes (`#if USING_ROCM ... #else #error ... #endif`) says nothing about ROCm."""
    span = arm_span(directive, ctx)
    return any(
        d.kind == "error" and span.start_byte <= d.start_byte < span.end_byte and d.branch.on_rocm is not False
        for d in ctx.preprocessor.directives
    )


def arm_text(directive: Directive, ctx: CudaContext) -> str:
    """The code of the arm this `#if`/`#elif` opens (`arm_span`), comments removed."""
    span = arm_span(directive, ctx)
    return without_comments(ctx.content[span.start_byte : span.end_byte].decode("utf-8", "replace"))


# A `#warning` (a message the compiler prints; `#error` stops the build and is no hint).
_WARNING_LINE = re.compile(r"\s*#\s*warning\b.*")
# A line that only passes a hint to the compiler: a `#pragma`, `_Pragma("...")`/`__pragma(...)`, or a lone
# macro use (how a project spells a pragma it defines per compiler: `XYZ_PRAGMA_IMPRECISE_BEGIN`); or a
# line of an inner `#if` chain choosing between such hints (`#ifdef __NVCC_DIAG_PRAGMA_SUPPORT__`, nvcc's spellings).
_PRAGMA_LINE = re.compile(
    r"\s*(?:#\s*(?:pragma|if|ifdef|ifndef|elif|else|endif)\b.*|(?:_Pragma|__pragma)\s*\(.*\)\s*"
    r"|(?P<macro>[A-Za-z_]\w*)\s*)"
)


def holds_only_pragmas(directive: Directive, ctx: CudaContext) -> bool:
    """Whether the arm this directive opens holds only compiler hints (`#pragma` lines, `_Pragma(...)`, lone macro
    uses whose definitions in this file are such hints too, `#define`s of hints, `_hint_definition`), compiler
    messages (`#warning`), or nothing: whichever compiler takes it, only its warnings or optimisation change, no
    code."""
    for line in arm_text(directive, ctx).replace("\\\n", " ").splitlines():
        if not line.strip() or _WARNING_LINE.fullmatch(line) or _hint_definition(line, directive, ctx):
            continue
        match = _PRAGMA_LINE.fullmatch(line)
        if match is None or not _macro_is_pragma(match.group("macro"), directive, ctx):
            return False
    return True


# A `#define` of a macro: its name, its parameters if function-like, then its replacement (`#define XYZ_DIAG_POP
# _Pragma("nv_diagnostic pop")`).
_DEFINE_LINE = re.compile(r"\s*#\s*define\s+(?P<name>[A-Za-z_]\w*)(?P<parameters>\([^()]*\))?(?P<body>.*)")
# A replacement of `_Pragma(...)` operators only (an argument may hold one call: `_Pragma(XYZ_STR(x))`).
_HINTS_ONLY = re.compile(r"(?:\s*(?:_Pragma|__pragma)\s*\((?:[^()]|\([^()]*\))*\))+\s*")
# A replacement that stringizes a parameter (`#x`).
_STRINGIZER = re.compile(r"\s*#\s*[A-Za-z_]\w*\s*")


def _hint_definition(line: str, directive: Directive, ctx: CudaContext) -> bool:
    """Whether the line defines a hint (`#define XYZ_DIAG_PUSH _Pragma("nv_diagnostic push")`, or the empty
    function-like `#define XYZ_SUPPRESS(x)` another arm gives other compilers; an empty object-like one may be a flag
    an `#ifdef` tests), or a stringizing helper no code of the file outside the arm names (`#define XYZ_STR(x) #x`,
    which only the arm's hints spell their text with)."""
    define = _DEFINE_LINE.fullmatch(line)
    if define is None:
        return False
    body = define.group("body")
    if _HINTS_ONLY.fullmatch(body) or (define.group("parameters") and not body.strip()):
        return True
    if not define.group("parameters") or _STRINGIZER.fullmatch(body) is None:
        return False
    span = arm_span(directive, ctx)
    name = re.compile(rb"\b" + re.escape(define.group("name").encode()) + rb"\b")
    return not (name.search(ctx.content, 0, span.start_byte) or name.search(ctx.content, span.end_byte))


# A line of an arm that includes a header or passes a hint: `#include <cuda_fp16.h>`, `#pragma GCC diagnostic push`,
# and the inner `#if` chains around them.
_HEADER_LINE = re.compile(
    r"\s*#\s*(?:include\s*[<\"](?P<header>[^>\"]+)[>\"]|(?:pragma|if|ifdef|ifndef|elif|else|endif)\b.*)\s*"
)


def only_toolkit_headers_differ(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether every arm of this chain holds only includes of CUDA toolkit headers (and pragmas): `#ifdef
    __CUDA_ARCH__ #include <cuda_fp16.h> #endif`. HIP-Clang's device pass includes HIP's runtime, which declares
    what they do; no code differs between the arms."""
    for arm in arms:
        for line in arm_text(arm, ctx).splitlines():
            if not line.strip():
                continue
            match = _HEADER_LINE.fullmatch(line)
            header = None if match is None else match.group("header")
            if match is None or (header is not None and not is_cuda_toolkit_header(header)):
                return False
    return True


# An arm holding only static assertions (`static_assert(std::is_empty<T>::value, "...");`), or nothing: checks made
# at compile time, no code.
_ASSERTIONS_ONLY = re.compile(r"(?:\s*static_assert\s*\([^;]*\)\s*;)*\s*")


def only_assertions_lost(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether the arms the chain's tests mean for ROCm hold only static assertions and every other arm holds
    nothing (comments only): a test that no longer picks ROCm's arm (a stale `__HIP_PLATFORM_HCC__`) then makes ROCm
    skip a compile-time check and compile no other code. A non-empty arm left to NVIDIA would be new code on ROCm,
    an assertion written for NVIDIA among it."""
    for arm in arms:
        text = arm_text(arm, ctx)
        meant_for_rocm = arm_branch(arm, ctx).on_rocm is True
        if text.strip() if not meant_for_rocm else not _ASSERTIONS_ONLY.fullmatch(text):
            return False
    return True


# The attribute macros every HIP-Clang compile predefines, host and device passes alike (clang's
# `__clang_hip_runtime_wrapper.h`, which `-x hip` includes first).
_HIP_PREDEFINED = frozenset({"__host__", "__device__", "__global__", "__shared__", "__constant__", "__managed__"})
# `#ifndef __host__` / `#define __host__` / `#endif`: a fallback for compilers that do not define the name.
_FALLBACK = re.compile(r"\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b[^\n]*\n\s*#\s*endif\b[^\n]*")


def only_fallbacks_hip_predefines(arms: list[Directive], ctx: CudaContext) -> bool:
    """Whether every arm of the chain holds only fallbacks, each under `#ifndef` of itself, of names every HIP-Clang
    pass predefines (`#if !__CUDA_ARCH__` / `#ifndef __host__` / `#define __host__` / `#endif`): whichever arm ROCm
    takes, in either pass, it defines nothing."""
    found = False
    for arm in arms:
        text = arm_text(arm, ctx)
        position = 0
        while (match := _FALLBACK.match(text, position)) is not None and match.group(1) in _HIP_PREDEFINED:
            position, found = match.end(), True
        if text[position:].strip():
            return False
    return found


def holds_only_its_definition(directive: Directive, macro: str, ctx: CudaContext) -> bool:
    """Whether the arm this directive opens holds nothing but `#define`s of `macro` (`#ifndef OLD_NAME` /
    `#define OLD_NAME` / `#endif`): a shim giving code that still reads the name a value, which chooses nothing."""
    lines = [line.strip() for line in arm_text(directive, ctx).splitlines() if line.strip()]
    span = arm_span(directive, ctx)
    defined = [
        d for d in ctx.preprocessor.defines.get(macro, []) if span.start_byte <= d.directive.start_byte < span.end_byte
    ]
    return bool(lines) and len(defined) == len(lines)


def _macro_is_pragma(name: str | None, directive: Directive, ctx: CudaContext) -> bool:
    """A lone macro use is a hint unless this file defines it, before the arm, as anything but a hint or nothing."""
    for define in ctx.preprocessor.defines.get(name, []) if name else []:
        value = define.value.strip()
        match = _PRAGMA_LINE.fullmatch(value) if value else None
        if define.directive.start_byte < directive.start_byte and value and (match is None or match.group("macro")):
            return False
    return True


@cache
def cuda_triggers(rules: tuple[type[Rule], ...]) -> re.Pattern[str] | None:
    """Any of `rules`' triggers; a numeric one (ROC208's `32`) only as a number, not inside `BF16`/`int32_t`."""
    triggers = sorted({t.decode("utf-8", "replace") for rule in rules for t in rule.triggers})
    if not triggers:
        return None
    return re.compile("|".join((r"(?<![\w.])" if t[:1].isdigit() else "") + re.escape(t) for t in triggers))


# CUDA spellings no rule covers but a version-gated arm typically holds: intrinsic calls (`__cvta_generic_to_shared(`,
# `__hmax2(`: HIP has some, not all), driver API names (`cuMemMap`, `CU_MEM_...`) and NVIDIA types (`nv_bfloat162`).
_CUDA_SPELLING = re.compile(r"\b__\w+\s*\(|\bcu[A-Z]\w*|\bCU_\w+|\b(?:__)?nv_\w+|\bnvcuda\b")


def arm_may_hold_hazards(directive: Directive, ctx: CudaContext) -> bool:
    """Whether the arm this directive opens may hold code that cannot work on ROCm: a trigger of any CUDA
    rule (the strings without which a rule never fires; inside an identifier too, except numbers; the
    engine passes every CUDA rule in `ctx.options.known_rules`), or a CUDA intrinsic, driver API or NVIDIA
    type spelling no rule covers. Conservative: moving ROCm into an arm with none of them cannot bring in a
    hazard a rule knows of."""
    text = arm_text(directive, ctx)
    triggers = cuda_triggers(ctx.options.known_rules)
    return (triggers is not None and triggers.search(text) is not None) or _CUDA_SPELLING.search(text) is not None


__all__ = [
    "CONDITION_KINDS",
    "CUDA_VERSION_MACROS",
    "NO_SAFE_REWRITE",
    "PASS_AND_COMPILER_ALTERNATIVES",
    "PLATFORM_ALTERNATIVES",
    "Chains",
    "ConditionRule",
    "WidenedTest",
    "arm_branch",
    "arm_may_hold_hazards",
    "arm_outcomes_agree",
    "arm_span",
    "arm_text",
    "chains_around",
    "compares_cuda_arch",
    "condition_edit",
    "condition_tests",
    "cuda_triggers",
    "decided_by_project_macros",
    "hides_plain_cpp_from_nvcc",
    "holds_only_its_definition",
    "holds_only_pragmas",
    "is_host_only_unit",
    "is_rocm_macro",
    "is_version_test",
    "nvcc_macros_change_no_rocm_code",
    "only_toolkit_headers_differ",
    "with_alternatives",
    "works_around_nvcc",
]


# What an arm holds when it is only there to satisfy the compiler: a trap (`assert(false)`, `__trap()`), then
# at most a dummy `return` and `(void)` casts of the parameters.
_TRAP = r"(?:assert\s*\(\s*(?:false|0)\s*\)|__trap\s*\(\s*\)|__builtin_trap\s*\(\s*\)|abort\s*\(\s*\))\s*;"
_FILLER = r"(?:return\b[^;{}]*;|\(\s*void\s*\)\s*\w+\s*;)"
_TRAP_ONLY = re.compile(rf"\s*(?:{_FILLER}\s*)*{_TRAP}\s*(?:(?:{_TRAP}|{_FILLER})\s*)*")


def arch_arm_rocm_needs(ctx: CudaContext, offset: int) -> str | None:
    """Why ROCm will compile `offset` after all, when a `#if`/`#elif` comparing `__CUDA_ARCH__` opens the arm holding
    it (no `#if` of its own in between), that comparison is all that keeps ROCm out (HIP-Clang leaves
    `__CUDA_ARCH__` undefined: ROC207; no arm of the chain tests a ROCm macro) and the chain's `#else`, which ROCm
    takes instead, only traps (llama.cpp's `#if __CUDA_ARCH__ >= MIN_CC_DP4A` dot products, `#else assert(false);
    return 0.0f;`): the arm is the only implementation a ROCm port has, so it will open it. None otherwise."""
    chains: list[list[Directive]] = []  # the arms of each chain open at `offset`, then of the innermost one's rest
    depth = 0
    for directive in ctx.preprocessor.directives:
        if directive.start_byte < offset:
            if directive.kind in _OPENERS:
                chains.append([directive])
            elif directive.kind in _ARMS and chains:
                chains[-1].append(directive)
            elif directive.kind == "endif" and chains:
                chains.pop()
            continue
        if not chains:
            return None
        depth += 1 if directive.kind in _OPENERS else -1 if directive.kind == "endif" else 0
        if depth < 0:
            break
        if depth == 0 and directive.kind in _ARMS:
            chains[-1].append(directive)
    if not chains:
        return None
    arms = chains[-1]
    arm = next(a for a in reversed(arms) if a.start_byte < offset)
    if arm.kind == "else" or not compares_cuda_arch(arm.condition) or arms[-1].kind != "else":
        return None
    if ctx.is_rocm_gated(ByteSpan(arms[0].start_byte, arms[0].start_byte)) or any(
        is_rocm_macro(name, ctx) for member in arms for name in names_in(member.condition)
    ):
        return None  # an outer gate keeps ROCm out as well, or the chain decides for ROCm on purpose
    if _TRAP_ONLY.fullmatch(arm_text(arms[-1], ctx)) is None:
        return None
    line = ctx.source.location_of_byte(ctx.source.bom_length + arm.start_byte).line
    return f"this `#if {arm.condition}` arm, line {line}, is all ROCm can run: its `#else` only traps, so a ROCm port opens it"


def version_test_message(directive: Directive, macro: str, ctx: CudaContext) -> str:
    """ROC207's message for an `#if` testing the toolkit's version macro `macro`: which arm ROCm takes by accident."""
    on_rocm = arm_branch(directive, ctx).on_rocm
    if on_rocm is False:
        outcome = "so this test is false there and ROCm silently skips this arm"
    elif on_rocm is True:
        outcome = "so this test is true there and ROCm silently compiles this arm"
    else:
        outcome = "so ROCm's outcome of this test is an accident"
    return (
        f"`{macro}` is not defined by HIP-Clang (it evaluates as 0), {outcome}; decide which arm ROCm needs "
        "and say so with `|| defined(USE_ROCM)` or `&& !defined(USE_ROCM)`"
    )


def architecture_test_message(directive: Directive, ctx: CudaContext) -> str:
    """ROC207's message for an `#if` comparing `__CUDA_ARCH__`: which arm ROCm takes by accident."""
    condition = " ".join(directive.condition.split())
    shown = condition if len(condition) <= 60 else condition[:57] + "..."
    outcome = "compiles this arm" if arm_branch(directive, ctx).on_rocm else "takes the fallback arm"
    return (
        f"`{shown}` selects an NVIDIA architecture feature, but HIP-Clang never defines `__CUDA_ARCH__` "
        f"(it evaluates as 0), so ROCm silently {outcome}; decide whether ROCm has the feature: "
        "`|| defined(USE_ROCM)` (or a `__gfx*__`/`__HIP_ARCH_HAS_*__` test) or `&& !defined(USE_ROCM)`"
    )


def toolkit_version_read(node: Node, ctx: CudaContext) -> str:
    """ROC207's message for the CUDA toolkit's version macro `node` read in code (not in an `#if`: `return
    CUDA_VERSION;`) where it is undeclared on ROCm, "" when it is not such a read: HIP-Clang defines none of them, and
    torch's hipify renames `CUDA_VERSION` to `TORCH_HIP_VERSION`, which no torch extension build defines (see
    `learning.HIPIFY_RENAMED_MACROS`). Not when the file, its headers or the ROCm build define the name."""
    name = ctx.text(node)
    if name not in CUDA_VERSION_MACROS or _in_directive_test(node, ctx) or ctx.define(name, node) is not None:
        return ""
    if not ctx.hipified_build:
        why = "HIP-Clang does not define it"
    elif name == "CUDA_VERSION":
        why = "torch's hipify renames it `TORCH_HIP_VERSION`, which no extension build defines"
    else:
        return ""  # hipify may rename the others to a HIP macro HIP-Clang defines
    return (
        f"`{name}` is read as a value where ROCm compiles it, but {why}: an undeclared identifier there; read "
        "`HIP_VERSION` (hip/hip_version.h) in a `USE_ROCM` arm"
    )


def _in_directive_test(node: Node, ctx: CudaContext) -> bool:
    """`node` is in the test of an `#if`/`#ifdef`/`#elif` (the directives' own business), not in the code they hold."""
    for ancestor in ctx.ancestors(node):
        tested = ancestor.child_by_field_name("condition") or ancestor.child_by_field_name("name")
        if ancestor.type.startswith("preproc_") and tested is not None:
            return tested.start_byte <= node.start_byte < tested.end_byte
    return False
