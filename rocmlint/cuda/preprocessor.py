"""Preprocessor analysis of one C/C++/CUDA file: which vendor compiles each byte, and the file's macros.

The directives are read from the text itself, not from tree-sitter's tree, so a conditional that splits
an expression (and leaves ERROR nodes behind) is understood all the same. Every `#if/#ifdef/#ifndef/
#elif/#else/#endif` chain is evaluated twice with a small three-valued evaluator: once as a ROCm build
sees it and once as an NVIDIA build does (RULES.md, "What gated means"). An arm is compiled on a vendor
when its own condition may hold there and no earlier arm of the chain certainly did.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache

from rocmlint.cuda.build_files import names_another_accelerator, vendor_of_words
from rocmlint.data import load
from rocmlint.vendor import EVERYWHERE, Branch, Tri, and3, not3

# Macros each vendor's build defines (ROCm: HIP-Clang and PyTorch/vLLM extension builds).
ROCM_MACROS = frozenset({"USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIPCC__", "__HIP__", "HIP_PLATFORM_AMD"})
# The platform macros ROCm 6.0 removed (`hip_common.h` now defines only `__HIP_PLATFORM_AMD__` and
# `__HIP_PLATFORM_NVIDIA__`; `HIP_PLATFORM_*` were the build's spellings of them). ROC215 reports every test of
# one; the code such a test gates is analysed as its author gated it (`VendorMacros.stale_gates`: the ROCm
# spellings as defined on ROCm, so the `#else` of `#ifdef __HIP_PLATFORM_HCC__` is NVIDIA's), because fixing
# the gate, as ROC215's fix does, fixes that code on ROCm 6 too: its hazards are the gate's, reported once.
STALE_ROCM_MACROS = frozenset({"__HIP_PLATFORM_HCC__", "HIP_PLATFORM_HCC"})
STALE_NVIDIA_MACROS = frozenset({"__HIP_PLATFORM_NVCC__", "HIP_PLATFORM_NVCC"})
# Defined only on some ROCm compilation passes or targets: unknown on ROCm, never defined on NVIDIA. The stale
# ROCm spellings too, as ROCm < 6.0 defined them, where gating does not read them as the author meant them.
ROCM_PASS_MACROS = frozenset({"__HIP_DEVICE_COMPILE__", "__AMDGCN__", "__AMDGCN_WAVEFRONT_SIZE", *STALE_ROCM_MACROS})
# `__gfx942__`, `__GFX9__`; clang's generic targets spell their dashes as underscores (`gfx9-4-generic`:
# `__gfx9_4_generic__`, `gfx11-generic`: `__gfx11_generic__`).
_AMD_ARCH_MACRO = re.compile(r"__(?:GFX\d+|gfx[0-9a-f]+)__|__gfx[0-9a-f]+(?:_[0-9a-f]+)*_generic__")
# The headers a HIP source includes for the runtime and kernel language (what `.cu` files get from nvcc for free).
_HIP_RUNTIME_HEADERS = frozenset({"hip/hip_runtime.h", "hip/hip_runtime_api.h"})
# The macros a ROCm device pass holds its target's wave size in (32 or 64).
WAVE_SIZE_MACROS = frozenset({"__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"})


def is_amd_target_macro(name: str) -> bool:
    """A macro only a ROCm device pass for some AMD targets defines: `__gfx942__`, `__GFX9__`, the wave size."""
    return bool(_AMD_ARCH_MACRO.fullmatch(name)) or name in WAVE_SIZE_MACROS


ROCM_VERSION_MACROS = frozenset(
    {
        "HIP_VERSION",
        "HIP_VERSION_MAJOR",
        "HIP_VERSION_MINOR",
        "HIP_VERSION_PATCH",
        "ROCM_VERSION",
        "TORCH_HIP_VERSION",
        "ROCM_VERSION_MAJOR",
        "ROCM_VERSION_MINOR",
    }
)
# What the ROCm version macros are at least on the ROCm releases rocmlint targets (5.0 and later: MI200, MI300),
# in each macro's own encoding. A test against an older version (`HIP_VERSION > 305`, from HIP 3.5) is decided.
ROCM_VERSION_FLOORS = {
    "HIP_VERSION": 50_000_000,
    "HIP_VERSION_MAJOR": 5,
    "ROCM_VERSION": 50_000,
    "ROCM_VERSION_MAJOR": 5,
    "TORCH_HIP_VERSION": 500,
}


class AtLeast(int):
    """A macro's value known only from below (a ROCm version macro on ROCm): comparisons with a number under it
    are decided, anything else about it is unknown."""


# Version macros of the CUDA toolkit and of nvcc (`#if CUDA_VERSION >= 12000`, ROC207).
CUDA_VERSION_MACROS = frozenset(
    {
        "CUDA_VERSION",
        "CUDART_VERSION",
        "__CUDACC_VER_MAJOR__",
        "__CUDACC_VER_MINOR__",
        "__CUDACC_VER_BUILD__",
        "__CUDA_API_VERSION",
    }
)
# nvcc's own macros, which HIP-Clang never defines: the pass, the compiler, the toolkit version.
NVCC_COMPILER_MACROS = frozenset({"__CUDA_ARCH__", "__CUDACC__", "__NVCC__"}) | CUDA_VERSION_MACROS
# Never defined by HIP-Clang: a ROCm build sees them undefined (value 0 in arithmetic).
NVIDIA_MACROS = CUDA_VERSION_MACROS | frozenset(
    {
        "__NVCC__",
        "__CUDA_ARCH__",
        "__CUDA_ARCH_LIST__",
        # NVIDIA's HPC compilers (nvc++, whose CUDA mode defines `__CUDACC__` too).
        "__NVCOMPILER",
        "__HIP_PLATFORM_NVIDIA__",
        *STALE_NVIDIA_MACROS,
        "CUDNN_VERSION",
        "__CUDA_ARCH_FEAT_SM90_ALL",
        "CUBLAS_VERSION",
        "CUSPARSE_VERSION",
        "CUSOLVER_VERSION",
        "CUFFT_VERSION",
        "CURAND_VERSION",
        "CUTLASS_VERSION",
        # What `__has_include(<cuda_runtime.h>)` reads as (`_HAS_INCLUDE`): true at most where a CUDA toolkit is
        # on the include path, never in a ROCm build.
        "__has_cuda_toolkit_header__",
    }
)
# Not NVIDIA-only although they look it: RCCL defines NCCL_VERSION_CODE too.

# HIP spellings no HIP-Clang pass defines, host or device (only the `__HIP_ARCH_HAS_*__` feature macros exist): a
# test of one is false on ROCm unless the build defines it, whatever its author meant (`defined(__HIP_ARCH__) &&
# __HIP_ARCH__ < 600` around a double `atomicAdd` for old GPUs). What NVIDIA builds see is left to the build.
UNDEFINED_BY_HIP_CLANG = frozenset({"__HIP_ARCH__"})

# `#name` and the rest of its line with its backslash-continued lines: a directive when only blanks come
# before the `#` on its line. Searching for the `#` first is seven times faster than trying a multi-line
# `^[ \t]*#` at every line start.
_DIRECTIVE = re.compile(r"#[ \t]*([A-Za-z_]\w*)((?:[^\n\\]++|\\\r?\n|\\.)*+)")
_COMMENT_OR_STRING = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"", re.S)
_CONTINUATION = re.compile(r"\\\r?\n")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_TOKEN = re.compile(
    r"\s*(?:(?P<number>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<name>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!()~&|^?:,]))"
)


@dataclass(frozen=True)
class Directive:
    """One preprocessor line (continuations joined). Byte offsets cover the whole directive."""

    kind: str  # "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "define", "include", ...
    text: str  # everything after the directive name, comments removed, continuations joined
    start_byte: int
    end_byte: int  # end of the directive's last line, before its newline
    line: int  # 1-based
    branch: Branch = EVERYWHERE  # the code around the directive (for `#if` lines, outside the chain)

    @property
    def condition(self) -> str:
        """The tested expression, written as for `#if` (`#ifdef X` is `defined(X)`)."""
        if self.kind in ("ifdef", "elifdef"):
            return f"defined({self.text.strip()})"
        if self.kind in ("ifndef", "elifndef"):
            return f"!defined({self.text.strip()})"
        return self.text.strip()


@dataclass(frozen=True)
class Define:
    name: str
    value: str  # the replacement text, stripped; empty for `#define X`
    parameters: tuple[str, ...] | None  # None for an object-like macro
    directive: Directive


@dataclass(frozen=True)
class Include:
    header: str  # as written between the quotes or angle brackets
    system: bool  # <...> rather than "..."
    directive: Directive

    @property
    def start_byte(self) -> int:
        return self.directive.start_byte

    @property
    def end_byte(self) -> int:
        return self.directive.end_byte


@dataclass(frozen=True)
class MacroState:
    """What one vendor's build knows of a macro: whether it is defined, and its integer value."""

    defined: Tri
    value: int | None = None


@dataclass(frozen=True)
class MacroEvidence:
    """What decided a learned macro: its kind ("build", "header", "arms", "name", strongest first), where, why."""

    kind: str
    path: str
    line: int | None  # None for a macro learned from its name
    why: str
    # Every definition deciding it sits under tests of nvcc's own macros only (`Definition.compiler_decided`):
    # NVIDIA-only because HIP lacks `__CUDA_ARCH__`, not by the project's choice.
    compiler_decided: bool = False

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.why} ({self.kind})"


@dataclass(frozen=True)
class LearnedMacro:
    """A macro the project model found to tell the vendors apart (rocmlint/cuda/project.py), with its state on
    each vendor's build and the evidence that decided it."""

    name: str
    # "rocm" or "nvidia": the build that defines it (or gives it a true value); "other": another accelerator's build
    # (`XYZ_USE_SYCL`), undefined on ROCm
    vendor: str
    on_rocm: MacroState
    on_nvidia: MacroState
    evidence: MacroEvidence  # for `rocmlint project` and `check --verbose`

    def state(self, vendor: str) -> MacroState:
        return self.on_rocm if vendor == "rocm" else self.on_nvidia


@dataclass(frozen=True)
class VendorMacros:
    """Which macros tell the vendors apart: the well-known ones, the configured ones, and those the project model
    learned from the project's own files (`learned`)."""

    rocm: frozenset[str] = ROCM_MACROS
    rocm_pass: frozenset[str] = ROCM_PASS_MACROS
    nvidia: frozenset[str] = NVIDIA_MACROS
    learned: Mapping[str, LearnedMacro] = field(default_factory=dict, compare=False)
    # Object-like macros the included headers define (the project model's), for values in `#if`s.
    header_values: Mapping[str, str] = field(default_factory=dict, compare=False)
    # Read as defined exactly on ROCm (the gate their author meant) before `rocm_pass` is asked.
    stale_gates: frozenset[str] = STALE_ROCM_MACROS
    # What the project's ROCm build defines (`-DCUDA_VERSION=11000`) -> value text (None: unknown), read before
    # the tables: the build decides what a ROCm compile sees.
    rocm_build_values: Mapping[str, str | None] = field(default_factory=dict, compare=False)
    # Those of them no other build defines: a test of one is the ROCm build's decision, a ROCm-side test.
    rocm_build_decided: frozenset[str] = frozenset()
    # What a build file defines whatever the vendor (under a project option): maybe defined on ROCm.
    built_for_any_vendor: frozenset[str] = frozenset()
    # The project's build runs hipify over the file (a CMake hipify run, a torch extension): its `__CUDACC__` may
    # become `__HIPCC__`, even in a chain testing `__HIPCC__` as well.
    hipified: bool = False
    # The ROCm build compiles the file as written with HIP-Clang (a CMake HIP language build, a `.hip` source) and
    # no build step hipifies it: `__CUDACC__`, which HIP-Clang never defines, is undefined there.
    hip_compiled: bool = False
    # Switches the file turns off by commenting out their only `#define` (`//#define TEXTURE`) and nothing else
    # defines: undefined on every build (`disabled_switches`).
    disabled: frozenset[str] = frozenset()
    # Combinations of macro states (name, defined) the project's build refuses to configure with ROCm (`if(XYZ_UM AND
    # NOT ENABLE_CUDA AND NOT XYZ_THIN) message(FATAL_ERROR ...)`: `XYZ_UM` defined, `XYZ_THIN` not): no ROCm compile
    # sees one (`_rocm_scenarios`).
    rocm_refused: tuple[frozenset[tuple[str, bool]], ...] = ()

    def as_compiled(self) -> VendorMacros:
        """The same macros with the stale ROCm spellings read as a ROCm build compiles them: maybe defined
        (by ROCm < 6.0). For decisions about what a ROCm 6 build really enters, such as ROC215's fix routing."""
        return replace(self, stale_gates=frozenset())

    @property
    def well_known(self) -> frozenset[str]:
        """The macros these tables decide by name, whatever the project model learned."""
        return self.rocm | self.rocm_pass | self.nvidia | self.stale_gates

    def with_project_macros(self, rocm: tuple[str, ...], nvidia: tuple[str, ...]) -> VendorMacros:
        """Add the project's own macros: `rocm-macros` mean "compiled for ROCm", `nvidia-macros` are never
        defined on ROCm (a `PTX_AVAILABLE` another header defines only for NVIDIA)."""
        return replace(self, rocm=self.rocm | frozenset(rocm), nvidia=self.nvidia | frozenset(nvidia))

    def with_learned(
        self,
        learned: Mapping[str, LearnedMacro],
        header_values: Mapping[str, str] | None = None,
        rocm_build_values: Mapping[str, str | None] | None = None,
        rocm_build_decided: frozenset[str] = frozenset(),
        hipified: bool = False,
        built_for_any_vendor: frozenset[str] = frozenset(),
        hip_compiled: bool = False,
        rocm_refused: tuple[frozenset[tuple[str, bool]], ...] = (),
    ) -> VendorMacros:
        return replace(
            self,
            learned=learned,
            header_values={} if header_values is None else header_values,
            rocm_build_values={} if rocm_build_values is None else rocm_build_values,
            rocm_build_decided=rocm_build_decided,
            hipified=hipified,
            built_for_any_vendor=built_for_any_vendor,
            hip_compiled=hip_compiled,
            rocm_refused=rocm_refused,
        )

    def is_rocm_side(self, name: str) -> bool:
        """Whether testing `name` tells ROCm apart. Not a CUDA toolkit macro a project header gives a stand-in value
        where CUDA is off (`#if !XYZ_CUDA_ENABLED #define CUDA_VERSION 0`): learned as defined there only, it is
        still CUDA's own macro, which the project's other `#if CUDA_VERSION` tests mean."""
        learned = self.learned.get(name)
        return (
            name in self.rocm
            or name in self.rocm_pass
            or name in ROCM_VERSION_MACROS
            or bool(_AMD_ARCH_MACRO.fullmatch(name))
            or (learned is not None and learned.vendor == "rocm" and name not in self.nvidia)
            or name in self.rocm_build_decided
        )


@dataclass
class Preprocessor:
    """The directives of one file and the vendor branch of every byte."""

    directives: list[Directive]
    defines: dict[str, list[Define]]
    includes: list[Include]
    _starts: list[int] = field(repr=False)
    _branches: list[Branch] = field(repr=False)
    unterminated: int = 0  # `#if`s still open at the end of the file
    macros: VendorMacros = VendorMacros()  # what the branches were evaluated with
    # The macros the file was read once per ROCm compile over (`_rocm_scenarios`), and the branches a single reading
    # gave, when those readings decided more.
    scenario_macros: tuple[str, ...] = ()
    _undecided: list[Branch] | None = field(default=None, repr=False)

    def branch_at(self, offset: int) -> Branch:
        index = bisect.bisect_right(self._starts, offset) - 1
        return self._branches[max(index, 0)]

    def skipped_by_every_rocm_compile(self, offset: int) -> bool:
        """Whether `offset` is not compiled on ROCm only because no single ROCm compile (per pass, per configuration
        the build allows) enters it, where one reading of the file leaves it undecided."""
        if self._undecided is None:
            return False
        index = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        return self._undecided[index].on_rocm is None and self._branches[index].on_rocm is False

    @property
    def base(self) -> Branch:
        """Where the file itself is compiled: the branch of its code outside every `#if`."""
        return self._branches[0]

    @property
    def includes_hip_runtime(self) -> bool:
        """Whether the file includes the HIP runtime header outside its own `#if`s (in a header only ROCm reaches,
        `base`, that is still unconditional): HIP code, which hipcc alone compiles."""
        return any(i.header in _HIP_RUNTIME_HEADERS and i.directive.branch == self.base for i in self.includes)

    @property
    def excludes_nvidia_somewhere(self) -> bool:
        """Whether some code of the file is certainly not compiled by NVIDIA builds (a ROCm-only branch)."""
        return any(branch.on_nvidia is False for branch in self._branches)

    def evaluate(self, expression: str) -> tuple[Tri, Tri]:
        """The truth of an `#if`-style expression on a ROCm and on an NVIDIA build, with the file's macros as
        its end sees them (for C++ tests of vendor constants, `if (USE_ROCM)`)."""
        return _Evaluator(self.macros).evaluate(expression, self.defines)

    def open_chains(self, offset: int) -> list[list[str]]:
        """The conditions of each `#if` chain open at `offset`, outermost first, up to the arm holding it (what
        the code there was written knowing)."""
        return [earlier if own is None else [*earlier, own] for earlier, own in self.open_arms(offset)]

    def open_arms(self, offset: int) -> list[tuple[list[str], str | None]]:
        """For each `#if` chain open at `offset`, outermost first: the conditions of the arms before the one holding
        `offset`, and that arm's own condition (None for an `#else`). The arm is entered when none of the earlier
        conditions holds and its own does."""
        stack: list[tuple[list[str], bool]] = []  # per chain: its conditions so far, whether an `#else` was read
        for directive in self.directives:
            if directive.start_byte >= offset:
                break
            if directive.kind in ("if", "ifdef", "ifndef"):
                stack.append(([directive.condition], False))
            elif directive.kind in ("elif", "elifdef", "elifndef") and stack:
                stack[-1][0].append(directive.condition)
            elif directive.kind == "else" and stack:
                stack[-1] = (stack[-1][0], True)
            elif directive.kind == "endif" and stack:
                stack.pop()
        return [(conditions, None) if in_else else (conditions[:-1], conditions[-1]) for conditions, in_else in stack]

    def define_of(self, name: str, before: int) -> Define | None:
        """The object-like `#define` of `name` a ROCm build sees at byte `before`, if this file has one."""
        visible = [
            d
            for d in self.defines.get(name, ())
            if d.directive.start_byte < before and d.directive.branch.on_rocm is not False
        ]
        if not visible:
            return None
        # `#if WARP_SIZE == 64 / #define FULL_MASK 0xff..ff / #else / #define FULL_MASK 0xffffffff`, the warp size
        # set by the build per target: a ROCm build for a wave64 target takes the first arm, not the last one.
        if visible[-1].directive.branch.on_rocm is None:
            return next((d for d in visible if self._in_wave_64_arm(d)), visible[-1])
        return visible[-1]

    def _in_wave_64_arm(self, define: Define) -> bool:
        """Whether `define` sits right in an `#if` arm that holds on a wave64 target (`WARP_SIZE == 64`)."""
        arms = self.open_arms(define.directive.start_byte)
        own = arms[-1][1] if arms else None
        return own is not None and _WAVE_64_TEST.search(own) is not None

    def undecided_macro_call_test(self, offset: int) -> str | None:
        """The condition of an `#if` arm around `offset` that invokes a function-like macro (`#if
        !XYZ_USE_GENERIC_SPSV()`, a feature test the project computes from its toolkit's version) and that a ROCm
        build's view of the file cannot decide, else None: whether ROCm compiles the code there is unknown."""
        lookup = self.macro_lookup("rocm", offset)
        for earlier, own in self.open_arms(offset):
            for condition in (*earlier, *(() if own is None else (own,))):
                if _MACRO_CALL.search(condition) and evaluate_expression(condition, lookup) is None:
                    return condition
        return None

    def macro_lookup(self, vendor: str, before: int) -> MacroLookup:
        """What one vendor's build ("rocm" or "nvidia") knows of each macro at byte `before`, as this file's
        `#if` lines were evaluated: `lookup(name, "defined")` or `lookup(name, "value")`, None when unknown."""
        evaluator = _Evaluator(self.macros)
        evaluator.include_guard = _include_guard(self.directives)
        defines = {
            name: seen
            for name, all_seen in self.defines.items()
            if (seen := [d for d in all_seen if d.directive.start_byte < before])
        }
        return lambda name, asked: evaluator._macro(name, asked, vendor, defines)


def analyse(text: str, macros: VendorMacros, base: Branch = EVERYWHERE) -> Preprocessor:
    """Scan `text` (the decoded file) for directives; byte offsets assume UTF-8 encoding of `text`. `base` is
    where the file itself is compiled (a header the project includes only for NVIDIA is NVIDIA-only)."""
    found = list(_directives(text))
    elsewhere = _other_accelerators_before_rocm(found, macros)
    if elsewhere:
        macros = replace(macros, learned={**elsewhere, **macros.learned})
    disabled = disabled_switches(text, found)
    if disabled:
        macros = replace(macros, disabled=disabled)
    evaluator = _Evaluator(macros)
    guard = _include_guard(found)
    # A macro the builds set per vendor is a switch with a default (`#ifndef SWITCH` / `#define SWITCH 0`), no guard.
    evaluator.include_guard = None if guard in macros.learned else guard
    evaluator.compilers_apart_at = (
        set(range(len(found)))
        if _defines_compiler_twins(found) or _tests_both_compilers(found) or _includes_rocm_for_hip_clang(found)
        else _chains_testing_hipcc(found)
    )
    evaluator.before_rocm_arm_at = _arms_before_a_rocm_arm(found, macros)
    reading = _read(found, evaluator, base)
    scenarios = _rocm_scenarios(text, reading.defines, macros)
    narrowed = (
        _narrowed(reading, [_read(found, evaluator.assuming(scenario), base) for scenario in scenarios])
        if scenarios
        else reading
    )
    return Preprocessor(
        narrowed.directives,
        narrowed.defines,
        narrowed.includes,
        narrowed.starts,
        narrowed.branches,
        unterminated=narrowed.unterminated,
        macros=macros,
        scenario_macros=tuple(scenarios[0]) if scenarios else (),
        _undecided=reading.branches if narrowed.branches != reading.branches else None,
    )


@dataclass
class _Reading:
    """The directives of a file read once, with the vendor branch of each and of the code after each."""

    directives: list[Directive]
    defines: dict[str, list[Define]]
    includes: list[Include]
    starts: list[int]
    branches: list[Branch]
    unterminated: int


def _read(found: list[Directive], evaluator: _Evaluator, base: Branch) -> _Reading:
    """Evaluate every `#if` chain of the file's directives (`found`) with `evaluator`."""
    directives: list[Directive] = []
    defines: dict[str, list[Define]] = {}
    includes: list[Include] = []
    starts, branches = [0], [base]
    stack: list[_Chain] = []

    def current() -> Branch:
        return stack[-1].arm_branch if stack else base

    for index, directive in enumerate(found):
        kind = directive.kind
        evaluator.compilers_apart = index in evaluator.compilers_apart_at
        evaluator.before_rocm_arm = index in evaluator.before_rocm_arm_at
        if kind in ("if", "ifdef", "ifndef"):
            chain = _Chain(outer=current())
            directive = _with_branch(directive, chain.outer)
            chain.enter(evaluator.evaluate(directive.condition, defines))
            stack.append(chain)
        elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
            chain = stack[-1]
            directive = _with_branch(directive, chain.outer)
            chain.enter(_TRUE if kind == "else" else evaluator.evaluate(directive.condition, defines))
        elif kind == "endif" and stack:
            directive = _with_branch(directive, stack.pop().outer)
        else:
            directive = _with_branch(directive, current())
            if kind == "define":
                define = _parse_define(directive)
                if define is not None:
                    defines.setdefault(define.name, []).append(define)
            elif kind == "include":
                include = _parse_include(directive)
                if include is not None:
                    includes.append(include)
        directives.append(directive)
        # The directive's own line is read where the code around its chain is (an `#elif` is not in the
        # arm before it); the code after it, up to the next directive, where the innermost arm is.
        starts += [directive.start_byte, directive.end_byte]
        branches += [directive.branch, current()]
    return _Reading(directives, defines, includes, starts, branches, len(stack))


# --- what no ROCm compile sees: arms every pass and allowed configuration skips ----------------------------------
# HIP-Clang compiles each file in a host pass, which leaves `__HIP_DEVICE_COMPILE__` undefined, and device passes,
# which define it to 1; no pass of a ROCm build defines the AMD target macros (`__gfx90a__`) on the host.
DEVICE_PASS_MACRO = "__HIP_DEVICE_COMPILE__"
_HOST_PASS = MacroState(False, 0)
_DEVICE_PASS = MacroState(True, 1)
# More macros than this split a file into too many readings to be worth it; the file is read once then.
_MAX_SCENARIO_MACROS = 3


def _rocm_scenarios(text: str, defines: dict[str, list[Define]], macros: VendorMacros) -> list[dict[str, MacroState]]:
    """The ROCm compiles a file may see, as the states of the few macros a three-valued reading cannot correlate: the
    pass macro (`#if defined(XYZ_DEVICE_COMPILE)` around `#if !defined(NDEBUG) || defined(__HIP_DEVICE_COMPILE__)
    ... #else`, where `XYZ_DEVICE_COMPILE` stands for the device pass: its `#else` is no pass's), and those of a
    combination the project's build refuses with ROCm (`VendorMacros.rocm_refused`), without that combination. Empty
    when the file tests none of them (or defines one itself): one reading decides everything."""
    names = {DEVICE_PASS_MACRO} if _mentions(text, DEVICE_PASS_MACRO) else set()
    refusals = [refused for refused in macros.rocm_refused if all(_mentions(text, name) for name, _ in refused)]
    names.update(name for refused in refusals for name, _ in refused)
    if not names or len(names) > _MAX_SCENARIO_MACROS or any(name in defines for name in names):
        return []
    ordered = sorted(names)
    scenarios = []
    for values in itertools.product((False, True), repeat=len(ordered)):
        chosen = dict(zip(ordered, values, strict=True))
        if any(all(chosen[name] == on for name, on in refused) for refused in refusals):
            continue  # the build stops before compiling anything
        scenarios.append({name: _scenario_state(name, on) for name, on in chosen.items()})
    return scenarios


def _mentions(text: str, name: str) -> bool:
    return name in text and re.search(rf"\b{name}\b", text) is not None


def _scenario_state(name: str, on: bool) -> MacroState:
    if name == DEVICE_PASS_MACRO:
        return _DEVICE_PASS if on else _HOST_PASS
    return MacroState(True) if on else MacroState(False, 0)


def _narrowed(reading: _Reading, scenarios: list[_Reading]) -> _Reading:
    """`reading` with the code it leaves undecided on ROCm, which no scenario's reading compiles there, not compiled on
    ROCm."""
    branches = [
        replace(branch, on_rocm=False) if _skipped_by_all(branch, [s.branches[i] for s in scenarios]) else branch
        for i, branch in enumerate(reading.branches)
    ]
    narrowed: dict[int, Directive] = {}
    for i, directive in enumerate(reading.directives):
        if _skipped_by_all(directive.branch, [s.directives[i].branch for s in scenarios]):
            narrowed[id(directive)] = _with_branch(directive, replace(directive.branch, on_rocm=False))
    if not narrowed:
        return replace(reading, branches=branches)
    directives = [narrowed.get(id(d), d) for d in reading.directives]
    defines = {
        name: [replace(d, directive=narrowed.get(id(d.directive), d.directive)) for d in seen]
        for name, seen in reading.defines.items()
    }
    includes = [replace(i, directive=narrowed.get(id(i.directive), i.directive)) for i in reading.includes]
    return _Reading(directives, defines, includes, reading.starts, branches, reading.unterminated)


def _skipped_by_all(branch: Branch, in_scenarios: list[Branch]) -> bool:
    return branch.on_rocm is None and all(s.on_rocm is False for s in in_scenarios)


# A test that holds where the warp (wave) size is 64: `WARP_SIZE == 64`, `64 == kWaveSize`, `WAVEFRONT_SIZE >= 64`.
# A function-like macro's invocation in an `#if` condition: not `defined`, nor a compiler query (`__has_include`).
_MACRO_CALL = re.compile(r"\b(?!defined\b|__has_\w+\b)[A-Za-z_]\w*\s*\(")
_WAVE_64_TEST = re.compile(r"(?i)\b\w*(?:WARP|WAVE)\w*\s*(?:==|>=)\s*64\b|\b64\s*(?:==|<=)\s*\w*(?:WARP|WAVE)\w*")
_HIPCC_WORD = re.compile(r"\b__HIPCC__\b")
# An `#if`/`#elif` condition testing one macro alone: `defined(X)`, `defined X`, `X`.
_ONE_MACRO = re.compile(r"\s*(?:defined\s*\(?\s*)?([A-Za-z_]\w*)\s*\)?\s*")


def _other_accelerators_before_rocm(directives: list[Directive], macros: VendorMacros) -> dict[str, LearnedMacro]:
    """The macros naming another accelerator (`XYZ_USE_SYCL`) an `#if` chain of the file tests alone before an arm
    testing a ROCm macro alone (`#if defined(XYZ_USE_SYCL) ... #elif defined(XYZ_USE_HIP)`), as learned.py's
    `_learn_from_order` learns them over a project: a ROCm build defining one would never compile its own arm, so
    the design leaves it undefined there (vendor "other"). Neither a macro already learned nor a ROCm macro known
    only by its name counts."""
    found: dict[str, LearnedMacro] = {}
    chains: list[list[tuple[str, int]]] = []  # per open chain: (another accelerator's macro, line) of its arms
    for directive in directives:
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef") or (kind.startswith("elif") and not chains):
            chains.append([])
        elif kind == "endif" and chains:
            chains.pop()
        if kind not in ("if", "ifdef", "elif", "elifdef"):
            continue
        match = _ONE_MACRO.fullmatch(directive.condition)
        name = match.group(1) if match is not None else None
        if name is None:
            continue
        if _rocm_by_evidence(name, macros):
            why = f"an #if chain tests it before the ROCm macro {name}"
            for earlier, line in chains[-1]:
                evidence = MacroEvidence("arms", "", line, why)
                found.setdefault(
                    earlier, LearnedMacro(earlier, "other", MacroState(False, 0), MacroState(None), evidence)
                )
        elif name not in macros.learned and name not in macros.well_known and names_another_accelerator(name):
            chains[-1].append((name, directive.line))
    return found


def _rocm_by_evidence(name: str, macros: VendorMacros) -> bool:
    """A ROCm macro by rocmlint's tables or by stronger evidence than its name."""
    learned = macros.learned.get(name)
    if learned is not None:
        return learned.vendor == "rocm" and learned.evidence.kind != "name"
    return macros.is_rocm_side(name)


def _chains_testing_hipcc(directives: list[Directive]) -> set[int]:
    """The indices of the conditions of every `#if` chain an arm of which tests `__HIPCC__`: a chain telling the
    compilers apart (`#ifdef __CUDACC__ ... #elif defined(__HIPCC__)`, `defined(__HIPCC__) && !defined(__CUDACC__)`)
    means nvcc by `__CUDACC__`, which HIP-Clang never defines; not in a file the build hipifies
    (`VendorMacros.hipified`), where hipify renames it `__HIPCC__`."""
    found: set[int] = set()
    stack: list[tuple[list[int], bool]] = []  # per open chain: the indices of its conditions, whether one tests it
    for index, directive in enumerate(directives):
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(([index], _HIPCC_WORD.search(directive.text) is not None))
        elif kind in ("elif", "elifdef", "elifndef") and stack:
            members, tests = stack[-1]
            stack[-1] = ([*members, index], tests or _HIPCC_WORD.search(directive.text) is not None)
        elif kind == "endif" and stack:
            members, tests = stack.pop()
            if tests:
                found.update(members)
    return found


def _tests_both_compilers(directives: list[Directive]) -> bool:
    """Whether one condition of the file tests `__CUDACC__` and `__HIPCC__` both (`#if defined(__CUDACC__) ||
    defined(__HIPCC__)`: device code for either compiler): its author holds them to be different compilers, so
    `__CUDACC__` alone means nvcc in every chain of the file (`#ifdef __CUDACC__ #include "x.cuh" #else #include
    "x.hip"` inside that arm, or in a chain of its own); not in a file the build hipifies."""
    return any(
        directive.kind in _CONDITIONAL_KINDS
        and _HIPCC_WORD.search(directive.text) is not None
        and _CUDACC_WORD.search(directive.text) is not None
        for directive in directives
    )


_CONDITIONAL_KINDS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})
_CUDACC_WORD = re.compile(r"\b__CUDACC__\b")


# HIP-Clang's own compiler macros: defined by every HIP compile (`__HIPCC__`, `__HIP__`) or its device pass.
_HIP_COMPILER_MACROS = frozenset({"__HIPCC__", "__HIP__", "__HIP_DEVICE_COMPILE__"})
# The word of an NVIDIA backend flag its ROCm twin spells with a ROCm word (`LIBX_ENABLE_CUDA`, `LIBX_ENABLE_HIP`).
_NVIDIA_BACKEND_WORDS = frozenset({"CUDA", "NVIDIA"})
_ROCM_BACKEND_WORDS = ("HIP", "ROCM", "AMD")


def rocm_twins(name: str) -> Iterator[str]:
    """`name` with its one NVIDIA backend word spelled the ROCm ways (`X_USE_CUDA` -> `X_USE_HIP`, `X_USE_ROCM`, ...),
    in the word's case; nothing when it has no such word or several."""
    words = name.split("_")
    found = [index for index, word in enumerate(words) if word.upper() in _NVIDIA_BACKEND_WORDS]
    if len(found) != 1:
        return
    index = found[0]
    for rocm in _ROCM_BACKEND_WORDS:
        spelled = rocm if words[index].isupper() else rocm.lower()
        yield "_".join([*words[:index], spelled, *words[index + 1 :]])


def _defines_compiler_twins(directives: list[Directive]) -> bool:
    """Whether the file gives each compiler a flag of its own: an arm testing `__CUDACC__` defines a macro (`#if
    defined(__CUDACC__) #define XYZ_COMPILE_CUDA`) whose ROCm twin an arm testing HIP-Clang's macros defines (`#if
    defined(__HIPCC__) #define XYZ_COMPILE_HIP`). Its author means nvcc by `__CUDACC__` in every chain of the file, as
    a chain testing `__HIPCC__` too does (`_chains_testing_hipcc`); not in a file the build hipifies."""
    under_cuda: set[str] = set()
    under_hip: set[str] = set()
    for directive, arm in _with_arm_macro(directives):
        if directive.kind == "define" and arm is not None and (match := _DEFINE.match(directive.text)) is not None:
            if arm == "__CUDACC__":
                under_cuda.add(match.group(1))
            elif arm in _HIP_COMPILER_MACROS:
                under_hip.add(match.group(1))
    return any(twin in under_hip for name in under_cuda for twin in rocm_twins(name))


def _includes_rocm_for_hip_clang(directives: list[Directive]) -> bool:
    """Whether an arm testing HIP-Clang's compiler macro to hold (`#if defined(__HIPCC__)`, `#ifdef __HIP__`)
    includes a header only ROCm ships (`hipcub/hipcub.hpp`, `hip/hip_runtime.h`, `rocm_smi/rocm_smi.h`): its
    author gives HIP-Clang code of its own, beside `#if defined(__CUDACC__) #include "cub/cub.cuh"`, and means nvcc
    by `__CUDACC__` in every chain of the file; not in a file the build hipifies (`VendorMacros.hipified`), where a
    renamed `__CUDACC__` would hand ROCm both arms. A HIP arm setting a flag of its own says no more than its chain."""
    return any(
        directive.kind == "include" and arm in _HIP_COMPILER_MACROS and _ROCM_ONLY_HEADER.match(directive.text)
        for directive, arm in _with_arm_macro(directives)
    )


def _with_arm_macro(directives: list[Directive]) -> Iterator[tuple[Directive, str | None]]:
    """Each directive with the one macro the innermost arm around it tests to hold (`#ifdef X`, `#elif defined(X)`),
    None when that arm tests something else or there is none."""
    arms: list[str | None] = []  # per open chain: the one macro its current arm tests to hold, if it tests one
    for directive in directives:
        kind = directive.kind
        tested = _ONE_MACRO.fullmatch(directive.condition) if kind in ("if", "ifdef", "elif", "elifdef") else None
        arm = tested.group(1) if tested is not None else None
        if kind in ("if", "ifdef", "ifndef"):
            arms.append(arm)
        elif kind in ("elif", "elifdef", "elifndef", "else") and arms:
            arms[-1] = arm
        elif kind == "endif" and arms:
            arms.pop()
        else:
            yield directive, arms[-1] if arms else None


# A header only ROCm ships: HIP's runtime and libraries, rocPRIM, rocRAND, ROCm SMI, the tracers.
_ROCM_ONLY_HEADER = re.compile(
    r"\s*[<\"](?:hip\w*|rocprim|rocrand|rocblas|rocfft|rocm_smi|amd_smi|roctracer|rocprofiler)/"
)


def _arms_before_a_rocm_arm(directives: list[Directive], macros: VendorMacros) -> set[int]:
    """The indices of the conditions of every `#if` chain that come before an arm testing only a ROCm macro the
    build or rocmlint decides (`#if defined(ENABLE_CUDA) ... #elif defined(BUILD_X_HIP)`, `BUILD_X_HIP` defined
    by the ROCm build): the ROCm build takes that arm, so a macro named for NVIDIA before it is not defined there
    (see `_Evaluator._defined`), whatever other configurations define it for; unless a build file defines it under
    an option whatever the vendor (`if(X_BRIDGE) add_compile_definitions(X_CUDA_BRIDGE)`)."""
    found: set[int] = set()
    stack: list[list[int]] = []  # per open chain: the indices of its conditions so far
    for index, directive in enumerate(directives):
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([index])
        elif kind in ("elif", "elifdef", "elifndef") and stack:
            if _tests_only_a_rocm_macro(directive.condition, macros):
                found.update(stack[-1])
            stack[-1].append(index)
        elif kind == "endif" and stack:
            stack.pop()
    return found


def _tests_only_a_rocm_macro(condition: str, macros: VendorMacros) -> bool:
    name = re.sub(r"\bdefined\b|[()\s]", "", condition)
    learned = macros.learned.get(name)
    return name in macros.rocm or (learned is not None and learned.vendor == "rocm" and learned.evidence.kind != "name")


def _include_guard(directives: list[Directive]) -> str | None:
    """`X` for a header opening with `#ifndef X` / `#define X`: that test always holds when it is read."""
    if len(directives) >= 2 and directives[0].kind == "ifndef" and directives[1].kind == "define":
        name = directives[0].text.strip()
        if directives[1].text.split()[:1] == [name]:
            return name
    return None


def _with_branch(directive: Directive, branch: Branch) -> Directive:
    return Directive(directive.kind, directive.text, directive.start_byte, directive.end_byte, directive.line, branch)


_TRUE = (True, True)


@dataclass
class _Chain:
    """One `#if ... #endif` chain while it is being read."""

    outer: Branch
    # Whether some earlier arm was certainly taken (False) / may have been (None), per vendor.
    rocm_none_taken: Tri = True
    nvidia_none_taken: Tri = True
    arm_branch: Branch = EVERYWHERE

    def enter(self, value: tuple[Tri, Tri]) -> None:
        rocm, nvidia = value
        self.arm_branch = Branch(
            _compiled(self.outer.on_rocm, self.rocm_none_taken, rocm),
            _compiled(self.outer.on_nvidia, self.nvidia_none_taken, nvidia),
        )
        self.rocm_none_taken = and3(self.rocm_none_taken, not3(rocm))
        self.nvidia_none_taken = and3(self.nvidia_none_taken, not3(nvidia))


def _compiled(outer: Tri, none_taken_before: Tri, condition: Tri) -> Tri:
    """An arm is compiled unless the code around it is not, an earlier arm surely was, or its test fails."""
    if outer is False or none_taken_before is False or condition is False:
        return False
    if outer is True and none_taken_before is True and condition is True:
        return True
    return None


def _directives(text: str) -> Iterator[Directive]:
    """Every directive of `text` (continuation lines joined), skipping those inside block comments."""
    comments = _block_comments(text) if "/*" in text else []
    comment_starts = [start for start, _ in comments]
    ascii_only = text.isascii()
    line, char, byte = 1, 0, 0  # where the previous directive started, to count incrementally
    position = 0
    while (match := _DIRECTIVE.search(text, position)) is not None:
        start = _line_start_if_first(text, match.start())
        if start is None:
            position = match.start() + 1  # a `#` inside a line: what follows it may still hold directives
            continue
        position = match.end()
        index = bisect.bisect_right(comment_starts, start) - 1
        if index >= 0 and start < comments[index][1]:
            continue
        line += text.count("\n", char, start)
        byte += start - char if ascii_only else len(text[char:start].encode("utf-8", "surrogatepass"))
        char = start
        body = text[start : match.end()].rstrip("\r\n")
        end = byte + (len(body) if ascii_only else len(body.encode("utf-8", "surrogatepass")))
        joined = _COMMENT.sub(" ", _CONTINUATION.sub("", match.group(2)))
        yield Directive(match.group(1), joined.split("/*")[0].rstrip("\r"), byte, end, line)


def _line_start_if_first(text: str, hash_at: int) -> int | None:
    """The start of the line when only spaces and tabs come before `hash_at` on it, else None. Reads back
    over the blanks only, so a long line with many `#` costs no more than once."""
    start = hash_at
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return start if start == 0 or text[start - 1] == "\n" else None


def _block_comments(text: str) -> list[tuple[int, int]]:
    """The spans of `/* ... */` comments, as a scan of the whole text for comments and string literals
    finds them (so that a `/*` inside a `//` comment or a string opens nothing). Only the lines holding a
    `/*` are scanned, from a point where that scan is in step (_in_step_before)."""
    spans: list[tuple[int, int]] = []
    resume = 0  # the whole-text scan is in step here: the end of the last comment or string read
    while (opening := text.find("/*", resume)) >= 0:
        for match in _COMMENT_OR_STRING.finditer(text, _in_step_before(text, opening, resume)):
            if match.end() <= opening:
                continue
            if match.start() == opening:
                spans.append((opening, match.end()))
            resume = match.end()  # the comment, or the `//` comment or string the `/*` sits in
            break
    return spans


def _in_step_before(text: str, offset: int, resume: int) -> int:
    """A point at or before `offset`, not before `resume`, where a scan for comments and strings from
    `resume` is in step: the start of `offset`'s line, as no `//` comment or string runs past a line end
    and no block comment starts between `resume` and `offset`; an earlier line start when the line
    before ends in a backslash (a string literal may continue there)."""
    newline = text.rfind("\n", resume, offset)
    while newline > resume and text[newline - 1] == "\\":
        newline = text.rfind("\n", resume, newline)
    return newline + 1 if newline >= 0 else resume


_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)", re.DOTALL)
_INCLUDE = re.compile(r"\s*(?:<([^>]+)>|\"([^\"]+)\")")


def _parse_define(directive: Directive) -> Define | None:
    match = _DEFINE.match(directive.text)
    if match is None:
        return None
    name, parameters, value = match.groups()
    params = tuple(p.strip() for p in parameters[1:-1].split(",") if p.strip()) if parameters else None
    return Define(name, value.strip(), params, directive)


def _parse_include(directive: Directive) -> Include | None:
    match = _INCLUDE.match(directive.text)
    if match is None:
        return None
    system_header, quoted_header = match.groups()
    return Include(system_header or quoted_header, system_header is not None, directive)


# --- the #if expression evaluator --------------------------------------------------------------------
# A value is an int, or None for "unknown" (a macro the file cannot know, such as a project option).


class _Evaluator:
    def __init__(self, macros: VendorMacros) -> None:
        self.macros = macros
        self.include_guard: str | None = None
        self.compilers_apart = False  # the condition's chain tests `__HIPCC__` (`_chains_testing_hipcc`)
        self.before_rocm_arm = False  # a later arm of the condition's chain tests a ROCm macro (`_arms_before_...`)
        # The indices of the directives whose conditions are read so (`analyse` sets them per file).
        self.compilers_apart_at: set[int] = set()
        self.before_rocm_arm_at: set[int] = set()
        # What one ROCm compile of the file knows of a few macros it tests (`_rocm_scenarios`): read before anything.
        self.rocm_assumed: Mapping[str, MacroState] = {}

    def assuming(self, states: Mapping[str, MacroState]) -> _Evaluator:
        """The same evaluator for the one ROCm compile that sees these macros so."""
        evaluator = _Evaluator(self.macros)
        evaluator.include_guard = self.include_guard
        evaluator.compilers_apart_at = self.compilers_apart_at
        evaluator.before_rocm_arm_at = self.before_rocm_arm_at
        evaluator.rocm_assumed = states
        return evaluator

    def evaluate(self, expression: str, defines: dict[str, list[Define]]) -> tuple[Tri, Tri]:
        """The truth of `expression` on a ROCm build and on an NVIDIA build."""
        tokens = _tokenize(expression)
        if tokens is None:
            return None, None
        return (
            _truth(_Parser(tokens, lambda name, asked: self._macro(name, asked, "rocm", defines)).parse()),
            _truth(_Parser(tokens, lambda name, asked: self._macro(name, asked, "nvidia", defines)).parse()),
        )

    def _macro(
        self, name: str, asked: str, vendor: str, defines: dict[str, list[Define]], depth: int = 0
    ) -> int | None:
        """`defined(name)` (asked="defined") or the value of `name` in an expression, on one vendor's build. A
        macro standing for an expression (`#define MMA_AVAILABLE !defined(XYZ_HIP) && __CUDA_ARCH__ >= 700`, in
        this file or an included header) has the value of that expression, as the preprocessor expands it."""
        defined = self._defined(name, vendor, defines)
        if asked == "defined":
            return None if defined is None else int(defined)
        if defined is False:
            return 0
        if vendor == "rocm" and name in self.rocm_assumed:
            return self.rocm_assumed[name].value
        if vendor == "rocm" and name not in defines and name in self.macros.rocm_build_values:
            built = self.macros.rocm_build_values[name]
            return None if built is None else parse_int(built)
        if vendor == "rocm" and name in self.macros.rocm:
            return 1
        if name in self.macros.learned and _unreached_here(name, vendor, defines):
            return self.macros.learned[name].state(vendor).value
        if vendor == "rocm" and name not in defines and name in ROCM_VERSION_FLOORS:
            return AtLeast(ROCM_VERSION_FLOORS[name])
        value = _local_value(name, vendor, defines)
        text = _expression_text(name, vendor, defines) if name in defines else self.macros.header_values.get(name)
        if value is not None or text is None or depth >= _MAX_EXPANSION_DEPTH:
            return value
        tokens = _tokenize(text)
        if not tokens:
            return None
        return _Parser(tokens, lambda inner, kind: self._macro(inner, kind, vendor, defines, depth + 1)).parse()

    def _defined(self, name: str, vendor: str, defines: dict[str, list[Define]]) -> Tri:
        macros = self.macros
        if name == self.include_guard:
            return False
        if vendor == "rocm" and self.rocm_assumed:
            if name in self.rocm_assumed:
                return self.rocm_assumed[name].defined
            if self.rocm_assumed.get(DEVICE_PASS_MACRO) == _HOST_PASS and is_amd_target_macro(name):
                return False  # the host pass has no target
        if vendor == "rocm" and name not in defines and name in macros.rocm_build_values:
            return True
        if name in macros.rocm or name in macros.stale_gates:
            return vendor == "rocm"
        if name in macros.rocm_pass or _AMD_ARCH_MACRO.fullmatch(name) or name in ROCM_VERSION_MACROS:
            return None if vendor == "rocm" else False
        if name in macros.nvidia:
            return False if vendor == "rocm" else None
        if name in UNDEFINED_BY_HIP_CLANG and name not in defines:
            return False if vendor == "rocm" else None
        if name in macros.learned and _unreached_here(name, vendor, defines):
            return macros.learned[name].state(vendor).defined
        if name in macros.disabled and not _set_elsewhere(name, macros):
            return False
        if (
            name == "__CUDACC__"
            and vendor == "rocm"
            and (self.compilers_apart or macros.hip_compiled)
            and not (name in defines or macros.hipified)
        ):
            # A chain testing `__HIPCC__` too means nvcc by it, as does a file HIP-Clang compiles as written;
            # unless hipify renames it.
            return False
        if (
            vendor == "rocm"
            and self.before_rocm_arm
            and name not in defines
            and name not in macros.built_for_any_vendor
            and _project_nvidia_flag(name)
        ):
            return False
        return _locally_defined(name, vendor, defines)


# A `#define` the author commented out, alone on its line, matched from the line's start: `//#define TEXTURE`,
# `/* #define USE_TEX 1 */`.
_COMMENTED_DEFINE = re.compile(r"[ \t]*(?://|/\*)[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")


def disabled_switches(text: str, directives: list[Directive]) -> frozenset[str]:
    """Macros whose every `#define` in the file is commented out (`//#define TEXTURE`): a switch its author turns
    on by editing the source, off as shipped. Whether something else defines them is `_set_elsewhere`'s."""
    commented = _commented_defines(text)
    if not commented:
        return frozenset()
    defined = {match.group(1) for d in directives if d.kind == "define" and (match := _DEFINE.match(d.text))}
    return frozenset(commented - defined)


def _commented_defines(text: str) -> set[str]:
    """The names of `_COMMENTED_DEFINE` lines. Only the lines holding the word `define` are tried (found with
    `str.find`): scanning every line start of every file with the pattern cost more than the rest of the check."""
    names: set[str] = set()
    position = text.find("define")
    while position != -1:
        match = _COMMENTED_DEFINE.match(text, text.rfind("\n", 0, position) + 1)
        if match is not None:
            names.add(match.group(1))
        position = text.find("define", position + len("define"))
    return names


def _set_elsewhere(name: str, macros: VendorMacros) -> bool:
    """Whether the project may define the macro outside the file: a build file, its headers, a learned vendor
    macro."""
    return (
        name in macros.learned
        or name in macros.header_values
        or name in macros.rocm_build_values
        or name in macros.built_for_any_vendor
        or name in macros.well_known
    )


def _project_nvidia_flag(name: str) -> bool:
    """A project macro (not the compiler's) whose name says NVIDIA and no version or architecture: `ENABLE_CUDA`."""
    upper = name.upper()
    return (
        not name.startswith("__")
        and "VERSION" not in upper
        and "ARCH" not in upper
        and vendor_of_words(name) == "nvidia"
    )


# How many macros deep an `#if` follows macros that stand for expressions.
_MAX_EXPANSION_DEPTH = 4


def _expression_text(name: str, vendor: str, defines: dict[str, list[Define]]) -> str | None:
    """The replacement text of the file's one object-like `#define name` a vendor's build may see."""
    seen = [d for d in defines.get(name, ()) if _reached(d, vendor) is not False]
    return seen[0].value if len(seen) == 1 and seen[0].parameters is None and seen[0].value else None


def _unreached_here(name: str, vendor: str, defines: dict[str, list[Define]]) -> bool:
    """The file defines `name` nowhere a vendor's build reaches: not at all, or only as the default of an `#ifndef
    name` the build's own definition skips (`#ifndef SWITCH` / `#define SWITCH 0`, the build passing `-DSWITCH=1`)."""
    return all(_reached(define, vendor) is False for define in defines.get(name, ()))


def _reached(define: Define, vendor: str) -> Tri:
    branch = define.directive.branch
    return branch.on_rocm if vendor == "rocm" else branch.on_nvidia


def _locally_defined(name: str, vendor: str, defines: dict[str, list[Define]]) -> Tri:
    """A macro this file defines before the test: defined on a vendor's build when one of its `#define`s is
    certainly compiled there, undefined when none is (`#ifdef USE_ROCM #define IS_HIP 1` makes IS_HIP ROCm's);
    a macro the file does not define may come from the build."""
    seen = defines.get(name)
    if not seen:
        return None
    reached = [_reached(d, vendor) for d in seen]
    if all(r is False for r in reached):
        return False
    return True if any(r is True for r in reached) else None


def _local_value(name: str, vendor: str, defines: dict[str, list[Define]]) -> int | None:
    """The value of the file's object-like `#define`s of `name` a vendor's build may see, when they agree
    (`#if HIP #define IS_HIP 1 #else #define IS_HIP 0 #endif` is 1 on ROCm, 0 on NVIDIA)."""
    seen = [d for d in defines.get(name, ()) if _reached(d, vendor) is not False]
    if not seen or any(d.parameters is not None for d in seen):
        return None
    values = {parse_int(d.value) for d in seen}
    return values.pop() if len(values) == 1 else None


def parse_int(text: str) -> int | None:
    """The value of a C integer literal such as `0xffffffffu` or `(32)`; None for anything else."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)([uUlL]*)", text)
    if match is None:
        return None
    digits = match.group(1)
    if digits.lower().startswith("0x"):
        return int(digits, 16)
    if digits.startswith("0") and len(digits) > 1:
        return int(digits, 8)
    return int(digits)


def evaluate_integer(expression: str) -> int | None:
    """The value of a C integer constant expression of literals (`(32 * 1024 + 16) / 2`), with C's
    operators and precedence; None when it names anything or does not parse."""
    tokens = _tokenize(expression)
    if not tokens or any(kind == "name" for kind, _ in tokens):
        return None
    return _Parser(tokens, lambda name, asked: None).parse()


def names_nvcc_version(text: str) -> bool:
    """Whether a macro's value is an expression of the CUDA toolkit's version macros alone (`(__CUDACC_VER_MAJOR__*100
    + __CUDACC_VER_MINOR__)`): the project's spelling of nvcc's version."""
    names = names_in(text)
    return bool(names) and CUDA_VERSION_MACROS.issuperset(names)


def evaluate_expression(expression: str, lookup: MacroLookup) -> int | None:
    """The value of an `#if` expression with macros as `lookup` knows them; None when unknown or unparsable."""
    tokens = _tokenize(expression)
    return None if tokens is None else _Parser(tokens, lookup).parse()


def _truth(value: int | None) -> Tri:
    return None if value is None else value != 0


# `__has_include("cudnn.h")` / `__has_include(<cuda_fp8.h>)`: a header name is no token of an expression; the call
# is unknown (what the include path holds), which `&&` with a false operand still decides. A header of the CUDA
# toolkit or its libraries (rocmlint/data/cuda_headers.toml) is on no ROCm include path: its test is an NVIDIA-only
# macro's.
_HAS_INCLUDE = re.compile(r"\b(__has_include(?:_next)?)\s*\(\s*(?:\"([^\"\n]*)\"|<([^>\n]*)>)\s*\)")


def _has_include_value(match: re.Match[str]) -> str:
    header = match.group(2) or match.group(3)
    return "defined(__has_cuda_toolkit_header__)" if is_cuda_toolkit_header(header) else f"{match.group(1)}(0)"


def is_cuda_toolkit_header(header: str) -> bool:
    """Whether a header is the CUDA toolkit's or one of its libraries' (`cuda_fp8.h`, `nvml.h`, `cub/cub.cuh`)."""
    tables = _cuda_header_tables()
    return header in tables[0] or header.startswith(tables[1])


@cache
def _cuda_header_tables() -> tuple[frozenset[str], tuple[str, ...]]:
    """The toolkit's headers: those hipify maps, its FP8 header, and those with no HIP equivalent named for CUDA
    (not `mma.h`, a name a project may give its own header)."""
    table = load("cuda_headers")
    lacking = {header for header in load("no_hip_equivalent")["headers"] if header.startswith(("cuda", "cooperative"))}
    headers = frozenset(table["runtime"]) | frozenset(table["library"]) | {"cuda_fp8.h", "cuda_fp8.hpp"} | lacking
    return headers, tuple(table["library_prefixes"])


def _tokenize(expression: str) -> list[tuple[str, str]] | None:
    tokens: list[tuple[str, str]] = []
    position = 0
    expression = expression.rstrip()
    if "__has_include" in expression:
        expression = _HAS_INCLUDE.sub(_has_include_value, expression)
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None or match.end() == position:
            return None  # something the evaluator does not know (a string, a character literal)
        kind = match.lastgroup
        assert kind is not None
        text = match.group(kind)
        operator = _ALTERNATIVE_TOKENS.get(text) if kind == "name" else None
        tokens.append(("op", operator) if operator else (kind, text))
        position = match.end()
    return tokens


# C++'s alternative spellings of the logical operators, which `#if` reads as the operators (`#if not defined(X)`).
_ALTERNATIVE_TOKENS = {"not": "!", "and": "&&", "or": "||"}


# (macro name, "defined" or "value") -> its value on one vendor's build, None when unknown
MacroLookup = Callable[[str, str], "int | None"]

_BINARY = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}


class _Parser:
    """Precedence climbing over `#if` tokens; unknown operands make a result unknown, except where
    `&&`/`||` short-circuit on a known side."""

    def __init__(self, tokens: list[tuple[str, str]], macro: MacroLookup) -> None:
        self.tokens = tokens
        self.position = 0
        self.macro = macro

    def parse(self) -> int | None:
        try:
            value = self._ternary()
        except (IndexError, ValueError, ZeroDivisionError):
            return None
        return value if self.position == len(self.tokens) else None

    def _peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _ternary(self) -> int | None:
        condition = self._binary(1)
        if self._peek() != "?":
            return condition
        self._take()
        then = self._ternary()
        if self._take()[1] != ":":
            raise ValueError("expected ':'")
        otherwise = self._ternary()
        if condition is None:
            return then if then == otherwise else None
        return then if condition else otherwise

    def _binary(self, minimum: int) -> int | None:
        left = self._unary()
        while (op := self._peek()) in _BINARY and _BINARY[op] >= minimum:
            self._take()
            right = self._binary(_BINARY[op] + 1)
            left = _apply(op, left, right)
        return left

    def _unary(self) -> int | None:
        kind, text = self._take()
        if text == "(":
            value = self._ternary()
            if self._take()[1] != ")":
                raise ValueError("expected ')'")
            return value
        if text in ("!", "-", "+", "~"):
            operand = self._unary()
            if operand is None:
                return None
            return {"!": int(not operand), "-": -operand, "+": operand, "~": ~operand}[text]
        if kind == "number":
            return parse_int(text)
        if kind == "name":
            if text == "defined":
                return self._defined()
            if self._peek() == "(":  # a function-like macro call (`__has_include(...)`, `CHECK_VERSION(1,2)`)
                self._skip_call()
                return None
            if text in ("true", "false"):
                return int(text == "true")
            return self.macro(text, "value")
        raise ValueError(f"unexpected {text!r}")

    def _defined(self) -> int | None:
        parenthesised = self._peek() == "("
        if parenthesised:
            self._take()
        kind, name = self._take()
        if kind != "name":
            raise ValueError("defined needs a name")
        if parenthesised and self._take()[1] != ")":
            raise ValueError("expected ')'")
        return self.macro(name, "defined")

    def _skip_call(self) -> None:
        depth = 0
        while True:
            text = self._take()[1]
            depth += text == "("
            depth -= text == ")"
            if depth == 0:
                return


def _apply(op: str, left: int | None, right: int | None) -> int | None:
    if op == "&&":
        return int(bool(left) and bool(right)) if None not in (left, right) else (0 if 0 in (left, right) else None)
    if op == "||":
        if (left is not None and left != 0) or (right is not None and right != 0):
            return 1
        return 0 if (left == 0 and right == 0) else None
    if left is None or right is None:
        return None
    if isinstance(left, AtLeast) or isinstance(right, AtLeast):
        return _against_floor(op, left, right)
    if op in ("/", "%") and right == 0:
        return None
    return {
        "|": lambda: left | right,
        "^": lambda: left ^ right,
        "&": lambda: left & right,
        "==": lambda: int(left == right),
        "!=": lambda: int(left != right),
        "<": lambda: int(left < right),
        ">": lambda: int(left > right),
        "<=": lambda: int(left <= right),
        ">=": lambda: int(left >= right),
        "<<": lambda: left << right if 0 <= right < 64 else None,
        ">>": lambda: left >> right if 0 <= right < 64 else None,
        "+": lambda: left + right,
        "-": lambda: left - right,
        "*": lambda: left * right,
        # C truncates toward zero (Python's // and % floor).
        "/": lambda: abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1),
        "%": lambda: left - right * (abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)),
    }[op]()


def _against_floor(op: str, left: int, right: int) -> int | None:
    """`version OP number` (or `number OP version`) where the version is only known to be at least its floor:
    decided when the number is below the floor, unknown otherwise (and for arithmetic on it)."""
    floor, number, version_left = (left, right, True) if isinstance(left, AtLeast) else (right, left, False)
    if isinstance(number, AtLeast) or number >= floor:
        return None
    # The version exceeds `number`: `version > n`, `version >= n`, `version != n` hold, the others do not.
    holds_when_version_left = {">": 1, ">=": 1, "!=": 1, "<": 0, "<=": 0, "==": 0}
    holds_when_version_right = {"<": 1, "<=": 1, "!=": 1, ">": 0, ">=": 0, "==": 0}
    table = holds_when_version_left if version_left else holds_when_version_right
    return table.get(op)


def mentions(expression: str, names: frozenset[str] | set[str]) -> bool:
    """Whether an `#if` expression names any of `names`."""
    return any(match.group("name") in names for match in _TOKEN.finditer(expression) if match.group("name"))


def names_in(expression: str) -> list[str]:
    """The identifiers an `#if` expression names (not the words of a header `__has_include` names)."""
    if "__has_include" in expression:
        expression = _HAS_INCLUDE.sub(r"\1(0)", expression)
    return [
        match.group("name")
        for match in _TOKEN.finditer(expression)
        if match.group("name") and match.group("name") not in _ALTERNATIVE_TOKENS
    ]


# Macros only a Windows toolchain defines (MSVC, the Windows targets): neither Linux build rocmlint compares, NVIDIA's
# nor ROCm's, defines them.
WINDOWS_ONLY_MACROS = frozenset({"_MSC_VER", "_WIN32", "_WIN64", "__MINGW32__", "__MINGW64__", "__CYGWIN__"})


def holds_only_on_windows(expression: str, windows: frozenset[str] = WINDOWS_ONLY_MACROS) -> bool:
    """Whether an `#if` expression is false wherever the Windows-only macros are undefined, whatever the other
    macros: `defined(__NVCC__) && defined(_MSC_VER)` is a workaround for nvcc with MSVC, an arm neither Linux build
    takes (so no divergence between NVIDIA and ROCm there). `windows`: the macros only Windows toolchains define."""
    tokens = _tokenize(expression)
    if tokens is None or not mentions(expression, windows):
        return False
    value = _Parser(tokens, lambda name, asked: 0 if name in windows else None).parse()
    return _truth(value) is False


# --- function-like macros whose ROCm definition drops an argument ------------------------------------------------
_WORD = re.compile(r"[A-Za-z_]\w*")
# How far an invocation's closing parenthesis is looked for: a macro call spans a few lines, not a file.
_MAX_INVOCATION_BYTES = 20_000


def unused_parameters(define: Define) -> frozenset[int]:
    """The positions of a function-like macro's named parameters its replacement never names: the arguments given
    there are dropped (`#define XYZ_HIP_OR_CUDA(h, c) h` drops position 1), as is a variadic one's whose
    replacement names neither it nor `__VA_ARGS__` (`#define XYZ_IF_CUDA(...)`; an invocation passing it one
    argument drops that). Empty for an object-like macro."""
    if define.parameters is None:
        return frozenset()
    named = set(_WORD.findall(define.value))
    return frozenset(
        position
        for position, parameter in enumerate(define.parameters)
        if named.isdisjoint(_parameter_names(parameter))
    )


def _parameter_names(parameter: str) -> frozenset[str]:
    """The names a replacement may use a parameter by: a variadic one's (`...`, `args...`) are `__VA_ARGS__`,
    `__VA_OPT__` and its own."""
    if not parameter.endswith("..."):
        return frozenset({parameter})
    return frozenset({"__VA_ARGS__", "__VA_OPT__", parameter[:-3].strip()})


@dataclass(frozen=True)
class MacroShape:
    """One definition of a function-like macro, as far as dropping arguments goes: where it is compiled, its
    parameter count (None: object-like), the positions of the parameters it never names."""

    branch: Branch
    parameters: int | None
    unused: frozenset[int]


def dropped_on_rocm(definitions: list[MacroShape]) -> tuple[int, frozenset[int]] | None:
    """(parameter count, positions) of the arguments a ROCm build never compiles in any invocation of a vendor
    selector: a macro whose every definition ROCm may compile has the same parameter count and drops those
    positions, which an NVIDIA-only definition uses (`#define XYZ_HIP_OR_CUDA(h, c) h` under the ROCm macro, `... c`
    in the NVIDIA arm, or an object-like alias of the intrinsic there). The definition ROCm takes may be a host
    pass's too (`#if XYZ_DEVICE_PASS_CUDA #define XYZ_IF_CUDA(...) __VA_ARGS__ #else #define XYZ_IF_CUDA(...)`):
    what matters is that no ROCm compile uses the argument. None for any other macro."""
    rocm = [d for d in definitions if d.branch.on_rocm is not False]
    if not rocm or all(d.branch.on_rocm is not False for d in definitions):
        return None
    counts = {d.parameters for d in rocm}
    count = counts.pop()
    if counts or count is None:
        return None
    dropped = frozenset.intersection(*(d.unused for d in rocm))
    # An object-like NVIDIA definition naming the function to call (`#define SHFL_DOWN_SYNC __shfl_down_sync`) passes
    # every argument on.
    nvidia = [d for d in definitions if d.branch.on_nvidia is not False and d.parameters in (count, None)]
    used_on_nvidia = frozenset(p for p in dropped if any(p not in d.unused for d in nvidia))
    return (count, used_on_nvidia) if used_on_nvidia else None


def invocation_arguments(content: bytes, name: str) -> Iterator[list[tuple[int, int]]]:
    """The (start, end) byte ranges of the arguments of each invocation `name(...)` in `content`, split as the
    preprocessor splits them: at the commas outside nested parentheses, brackets, braces, strings, character
    literals and comments (not at those inside `<...>`). An invocation left open is skipped."""
    for match in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\s*\(", content):
        arguments = _split_arguments(content, match.end())
        if arguments is not None:
            yield arguments


def call_arguments(text: str) -> tuple[str, list[str]] | None:
    """`text` when it is one call `name(...)` and nothing more: the name and its arguments, stripped, split as
    `invocation_arguments` splits them; None for anything else (`f(a) + 1`, an empty argument)."""
    match = re.match(r"\s*([A-Za-z_]\w*)\s*\(", text)
    if match is None:
        return None
    content = text.encode("utf-8", "surrogatepass")
    opened = len(text[: match.end()].encode("utf-8", "surrogatepass"))
    ranges = _split_arguments(content, opened)
    if ranges is None or content[ranges[-1][1] + 1 :].strip():
        return None
    arguments = [content[start:end].decode("utf-8", "surrogatepass").strip() for start, end in ranges]
    return (match.group(1), arguments) if all(arguments) else None


def _split_arguments(content: bytes, start: int) -> list[tuple[int, int]] | None:
    arguments: list[tuple[int, int]] = []
    depth, begin, position = 0, start, start
    end = min(len(content), start + _MAX_INVOCATION_BYTES)
    while position < end:
        byte = content[position : position + 1]
        if byte in (b'"', b"'") or content.startswith((b"//", b"/*"), position):
            position = _after_literal_or_comment(content, position)
            continue
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            if depth == 0:
                arguments.append((begin, position))
                return arguments if byte == b")" else None
            depth -= 1
        elif byte == b"," and depth == 0:
            arguments.append((begin, position))
            begin = position + 1
        position += 1
    return None


def _after_literal_or_comment(content: bytes, position: int) -> int:
    """The offset just past the string, character literal or comment starting at `position`."""
    if content.startswith(b"//", position):
        newline = content.find(b"\n", position)
        return len(content) if newline < 0 else newline
    if content.startswith(b"/*", position):
        close = content.find(b"*/", position + 2)
        return len(content) if close < 0 else close + 2
    quote = content[position : position + 1]
    position += 1
    while position < len(content):
        byte = content[position : position + 1]
        if byte == b"\\":
            position += 2
            continue
        if byte in (quote, b"\n"):
            return position + 1
        position += 1
    return position
