"""The CUDA C++ front end: one preprocessor analysis, then at most one tree-sitter-cuda parse per file.

Rules define `visit_<tree-sitter node type>(self, node, ctx)` (for example `visit_call_expression`) and
may also define `visit_include(include, ctx)`, `visit_define(define, ctx)` and
`visit_directive(directive, ctx)` for preprocessor lines, which the front end reads from the text itself
so they survive the ERROR nodes macros leave in tree-sitter's tree. Once those have run, each rule may say
from the text which nodes it still needs (`visits_needed`, see `_RuleRun.needed_visits`): the file is
parsed only when some rule needs a node, and the nodes are found by one walk of the tree, or by queries
over the bytes of the rules' anchors, and visited in source order.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
import traceback
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Protocol

import tree_sitter
import tree_sitter_cuda

from rocmlint.cuda.file_facts import rocm_atomic_overloads, shuffle_wrapper_form, wrapped_call
from rocmlint.cuda.preprocessor import (
    DEVICE_PASS_MACRO,
    STALE_ROCM_MACROS,
    UNDEFINED_BY_HIP_CLANG,
    Define,
    Directive,
    Include,
    MacroShape,
    Preprocessor,
    VendorMacros,
    analyse,
    dropped_on_rocm,
    invocation_arguments,
    mentions,
    names_in,
    parse_int,
    unused_parameters,
)
from rocmlint.cuda.project import EMPTY_VIEW, FileView
from rocmlint.cuda.trace import START, Trace
from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from rocmlint.rule import Rule
from rocmlint.source import SourceFile
from rocmlint.vendor import DEFAULT_ROCM_CONDITION, Branch, and3, not3

Node = tree_sitter.Node
PREPROCESSOR_HOOKS = ("include", "define", "directive")
# Wrappers that already pick the right intrinsic per vendor (RULES.md, "What gated means").
PORTABLE_MACROS = frozenset(
    {
        "WARP_SHFL",
        "WARP_SHFL_XOR",
        "WARP_SHFL_UP",
        "WARP_SHFL_DOWN",
        "WARP_BALLOT",
        "WARP_ANY",
        "WARP_ALL",
        "C10_WARP_SIZE",
    }
)
_VENDOR_NAMES = {"rocm": "ROCm", "nvidia": "NVIDIA", "other": "another accelerator"}
_CONSTEXPR_BOOL = re.compile(rb"\bconstexpr\s+(?:static\s+)?bool\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);")
# `if (NAME)`, `if constexpr (!NAME)`: a test of one name, a candidate vendor constant.
_RUNTIME_TEST = re.compile(rb"\bif\s*(?:constexpr\s*)?\(\s*(!?)\s*([A-Za-z_]\w*)\s*\)")
# A statement a fix wraps whole (`statement_fix`) is this short at most: an `if` with a small body.
MAX_WRAPPED_LINES = 8
# Every byte that cannot be part of an ASCII identifier becomes a space: splitting the result gives the words.
_WORD_BYTES = bytes(
    byte if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) == "_") else 0x20 for byte in range(256)
)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# What a C++ fix wraps: the smallest of these around the hazard (the front end's `statement_of`).
STATEMENT_TYPES = frozenset(
    {
        "expression_statement",
        "declaration",
        "return_statement",
        "field_declaration",
        "if_statement",
        "for_statement",
        "while_statement",
        "do_statement",
        "switch_statement",
        "alias_declaration",
        "type_definition",
        "static_assert_declaration",
        "template_declaration",
    }
)


class Span(Protocol):
    """Anything with byte offsets into the file's content: a tree-sitter node, a Directive, an Include."""

    @property
    def start_byte(self) -> int: ...

    @property
    def end_byte(self) -> int: ...


# What a chain holding only macro definitions is made of, and how it opens.
_CHAIN_OPENERS = frozenset({"if", "ifdef", "ifndef"})
_CHAIN_DIRECTIVES = _CHAIN_OPENERS | {"elif", "elifdef", "elifndef", "else", "endif", "define"}
_CHAIN_NODES = frozenset({"preproc_if", "preproc_ifdef"})
_DEFINED_NAME = re.compile(r"\s*([A-Za-z_]\w*)")
_FILE_LOCAL_FUNCTION = re.compile(rb"\b(?:inline|__forceinline__|static)\b")
_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _is_arm_field(node: Node, item: Node) -> bool:
    """Whether `item` is the condition or name an `#if`/`#ifdef`/`#elif` node tests, not its arm's code."""
    return any(
        (tested := node.child_by_field_name(field)) is not None and tested.id == item.id
        for field in ("condition", "name")
    )


def _function_name(item: Node, ctx: CudaContext, template: bool = False) -> str | None:
    """The name a function definition defines that only the files seeing it can call (a template, or `inline`,
    `static` or device code, which another translation unit does not call without `-rdc`); None for any other item."""
    if item.type == "template_declaration":
        inner = next((c for c in item.named_children if c.type == "function_definition"), None)
        return _function_name(inner, ctx, template=True) if inner is not None else None
    if item.type != "function_definition":
        return None
    declarator = item.child_by_field_name("declarator")
    head = ctx.content[item.start_byte : declarator.start_byte] if declarator is not None else b""
    device_only = b"__device__" in head and b"__host__" not in head
    if not (template or device_only or _FILE_LOCAL_FUNCTION.search(head)):
        return None
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    named = declarator.child_by_field_name("declarator") if declarator is not None else None
    if named is None or named.type != "identifier":
        return None
    return ctx.text(named)


def _defined_name(directive: Directive) -> str:
    """The name a `#define` directive defines ("" for any other directive)."""
    found = _DEFINED_NAME.match(directive.text) if directive.kind == "define" else None
    return found.group(1) if found else ""


@dataclass(frozen=True)
class ByteSpan:
    """A span of the file's content that is no single tree-sitter node (`enum {...};`, one byte offset)."""

    start_byte: int
    end_byte: int


@dataclass(frozen=True)
class CudaOptions:
    rocm_macros: tuple[str, ...] = ()
    portable_macros: tuple[str, ...] = ()
    nvidia_macros: tuple[str, ...] = ()
    rocm_condition: str = DEFAULT_ROCM_CONDITION  # what fixes test: `#if <rocm_condition>`
    # Every CUDA rule rocmlint has, enabled or not, passed in by the engine (a front end never imports the
    # registry): the node query captures what any of them visits, so one compiled query serves every file,
    # and rocmlint/cuda/conditions.py reads their triggers to tell whether an arm may hold a hazard.
    known_rules: tuple[type[Rule], ...] = ()
    # What the project model (rocmlint/cuda/project.py) tells about this file: learned vendor macros, header
    # constants, remapped names, where the file is compiled.
    project: FileView = EMPTY_VIEW
    # Report what the build's hipify renames (at info) instead of leaving it out; None: only where the project has no
    # ROCm build yet (`FileView.hipify_ported`).
    show_hipified: bool | None = None

    def vendor_macros(self) -> VendorMacros:
        """The macros that tell the vendors apart for this file: well-known, configured and learned ones."""
        return (
            VendorMacros()
            .with_project_macros(self.rocm_macros, self.nvidia_macros)
            .with_learned(
                self.project.learned,
                self.project.defines,
                self.project.rocm_build_values,
                self.project.rocm_build_decided,
                hipified=bool(self.project.hipified),
                built_for_any_vendor=self.project.built_for_any_vendor,
                hip_compiled=bool(self.project.hip_compiled),
                rocm_refused=tuple(states for states, _ in self.project.rocm_refused),
            )
        )


@lru_cache(maxsize=1)
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@lru_cache(maxsize=64)
def _query(node_types: tuple[str, ...]) -> tree_sitter.Query:
    return tree_sitter.Query(_language(), "[" + " ".join(f"({t})" for t in node_types) + "] @node")


class CudaContext:
    """What a CUDA C++ rule sees: the tree, the preprocessor's view of each byte, macros, and `report`."""

    def __init__(
        self, source: SourceFile, preprocessor: Preprocessor, options: CudaOptions, tree: tree_sitter.Tree | None = None
    ) -> None:
        self.source = source
        self._tree = tree
        self.preprocessor = preprocessor
        self.options = options
        # What tree-sitter parsed; offsets are into this. A Jinja template's tags are blanked (see `without_jinja`).
        self.content, self.is_template = without_jinja(source.data[source.bom_length :])
        self.portable_macros = PORTABLE_MACROS | frozenset(options.portable_macros)
        self.rule: type[Rule] | None = None
        self.diagnostics: list[Diagnostic] = []
        self._declarations_by_name: dict[str, list[Node]] = {}
        self._offsets: dict[tuple[tuple[bytes, ...], bool], tuple[int, ...]] = {}
        self._mentioned: dict[tuple[tuple[bytes, ...], bool], bool] = {}
        self._rocm_spellings: dict[frozenset[str], str] = {}
        self.gated_notes: list[str] = []  # `check --verbose`: findings the project model's evidence gated away

    @property
    def tree(self) -> tree_sitter.Tree:
        """The syntax tree, parsed on first use: a file where no rule needs to visit a node (and no fix asks
        about ERROR regions) is never parsed."""
        if self._tree is None:
            self._tree = parse(self.content)
        return self._tree

    @cached_property
    def words(self) -> frozenset[bytes]:
        """Every run of ASCII letters, digits and `_` in the file: a superset of the ASCII identifiers tree-sitter
        finds, comments and strings included. An identifier is a whole run (the preprocessor reads `2x` as one
        token), so a rule whose node visits need `cudaFoo` as an identifier can skip them when
        `b"cudaFoo" not in ctx.words` (see `_RuleRun.needed_visits`)."""
        return frozenset(self.content.translate(_WORD_BYTES).split())

    def offsets(self, *texts: bytes, lowered: bool = False) -> tuple[int, ...]:
        """Where each of `texts` occurs in the content (in lower case with `lowered`): anchors for a rule's
        `visits_needed`, as a node holding one of these texts holds its first byte. Remembered per file: rules
        ask the same question from every node they visit (ROC208: does the file work on warps at all?)."""
        key = (texts, lowered)
        known = self._offsets.get(key)
        if known is not None:
            return known
        content = self._lowered_content if lowered else self.content
        found: set[int] = set()
        for text in texts:
            position = content.find(text)
            while position >= 0:
                found.add(position)
                position = content.find(text, position + 1)
        self._offsets[key] = result = tuple(sorted(found))
        return result

    def mentions(self, *texts: bytes, lowered: bool = False) -> bool:
        """Whether one of `texts` occurs in the content (in lower case with `lowered`), as `offsets` would find, without
        listing every place (`tx` and `tid` occur thousands of times in a large file). Remembered per file: a
        file-wide test rules ask from every node they visit."""
        key = (texts, lowered)
        known = self._mentioned.get(key)
        if known is None:
            content = self._lowered_content if lowered else self.content
            known = self._mentioned[key] = any(text in content for text in texts)
        return known

    def word_offsets(self, *names: str) -> tuple[int, ...]:
        """`offsets` of those `names` that are whole words of the file (`words`): anchors for nodes a rule
        finds by an identifier's name, without searching for names the file never spells as a word."""
        return self.offsets(*(word for word in (name.encode() for name in names) if word in self.words))

    @cached_property
    def _lowered_content(self) -> bytes:
        return self.content.lower()  # ASCII letters only: every offset stays

    # --- gating -----------------------------------------------------------------------------------
    def branch(self, span: Span) -> Branch:
        """Whether the code at `span` is compiled on ROCm and on NVIDIA (True, False, None = unknown), or, inside
        an `if` on a vendor constant (`if (USE_ROCM) {...} else {...}`, `if constexpr (kIsHip)`), run there."""
        branch = self.preprocessor.branch_at(span.start_byte)
        for runtime in self._runtime_branches(span):
            branch = Branch(and3(branch.on_rocm, runtime.on_rocm), and3(branch.on_nvidia, runtime.on_nvidia))
        if branch.on_rocm is not False and self._in_argument_rocm_drops(span):
            branch = Branch(False, branch.on_nvidia)
        return branch

    def _in_argument_rocm_drops(self, span: Span) -> bool:
        """Whether `span` starts inside an argument a vendor selector macro drops on ROCm (the CUDA argument of
        `XYZ_HIP_OR_CUDA(__shfl_down(v, 1), __shfl_down_sync(0xffffffff, v, 1))`): ROCm never compiles it."""
        ranges = self._arguments_rocm_drops
        if not ranges:
            return False
        index = bisect.bisect_right(ranges, (span.start_byte, len(self.content))) - 1
        return index >= 0 and ranges[index][0] <= span.start_byte < ranges[index][1]

    @cached_property
    def _arguments_rocm_drops(self) -> list[tuple[int, int]]:
        """The sorted byte ranges of the arguments ROCm never compiles, of every invocation of a vendor selector
        macro the file's project or the file itself defines (`FileView.selectors`, `preprocessor.dropped_on_rocm`)."""
        ranges: list[tuple[int, int]] = []
        for name, (count, positions) in self._selectors().items():
            for arguments in invocation_arguments(self.content, name):
                if len(arguments) == count:
                    ranges.extend(arguments[position] for position in positions)
        return sorted(ranges)

    def _selectors(self) -> dict[str, tuple[int, frozenset[int]]]:
        """The vendor selector macros this file invokes -> (parameter count, positions ROCm drops): the project's,
        else those the file defines itself."""
        project = self.options.project.selectors
        found = {
            name: (selector[1], selector[2])
            for name in project
            if name.encode() in self.words and (selector := project.get(name)) is not None
        }
        for name, defines in self.preprocessor.defines.items():
            if name in found or not any(unused_parameters(d) for d in defines):
                continue
            shapes = [
                MacroShape(
                    d.directive.branch, None if d.parameters is None else len(d.parameters), unused_parameters(d)
                )
                for d in defines
            ]
            dropped = dropped_on_rocm(shapes)
            if dropped is not None:
                found[name] = dropped
        return found

    def _runtime_branches(self, span: Span) -> Iterator[Branch]:
        """The vendor of each `if`/`else` arm around `span` whose test is a vendor constant."""
        for offset, taken in self._runtime_gates:
            if offset > span.start_byte:
                break
            node = self.tree.root_node.descendant_for_byte_range(offset, offset)
            while node is not None and not (node.type == "if_statement" and node.start_byte == offset):
                node = node.parent
            if node is None or not node.start_byte <= span.start_byte < node.end_byte:
                continue
            consequence, alternative = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
            if consequence is not None and consequence.start_byte <= span.start_byte < consequence.end_byte:
                yield taken
            elif alternative is not None and alternative.start_byte <= span.start_byte < alternative.end_byte:
                yield Branch(not3(taken.on_rocm), not3(taken.on_nvidia))

    @cached_property
    def _runtime_gates(self) -> list[tuple[int, Branch]]:
        """(offset, where the test holds) of each `if (NAME)` / `if constexpr (!NAME)` whose name is a vendor
        constant: a vendor macro, or a `constexpr bool` initialised from one. Found in the text, so a file without
        one is never parsed for it."""
        gates: list[tuple[int, Branch]] = []
        for match in _RUNTIME_TEST.finditer(self.content):
            negated, name = match.group(1), match.group(2).decode()
            expression = self._vendor_constant(name)
            if expression is None:
                continue
            on_rocm, on_nvidia = self.preprocessor.evaluate(("!" if negated else "") + f"({expression})")
            if on_rocm is not None and on_nvidia is not None and on_rocm != on_nvidia:
                gates.append((match.start(), Branch(on_rocm, on_nvidia)))
        return gates

    def _vendor_constant(self, name: str) -> str | None:
        """The vendor test `name` stands for: itself when it is a vendor macro, the initialiser of a
        `constexpr bool name = <vendor test>;` of this file; None otherwise."""
        macros = self.preprocessor.macros
        if macros.is_rocm_side(name) or name in macros.nvidia or name in macros.learned:
            return name
        return self._constexpr_bools.get(name)

    @cached_property
    def _constexpr_bools(self) -> dict[str, str]:
        """`name -> initialiser` of every `constexpr bool name = ...;` in the file."""
        return {
            match.group(1).decode(): match.group(2).decode("utf-8", "replace")
            for match in _CONSTEXPR_BOOL.finditer(self.content)
        }

    def is_rocm_gated(self, span: Span) -> bool:
        """True when a ROCm build never compiles `span` (it sits in an NVIDIA-only preprocessor branch)."""
        return self.branch(span).on_rocm is False

    def is_nvidia_gated(self, span: Span) -> bool:
        return self.branch(span).on_nvidia is False

    def written_for_rocm(self, span: Span) -> bool:
        """Whether only ROCm compiles `span` by an `#if` around it that tests a well-known ROCm macro (`#ifdef
        __HIP_PLATFORM_AMD__`, the `#else` of `#ifndef USE_ROCM`): code its author wrote for AMD knowingly. A
        project macro alone is not enough here: a build flag learned for the wrong vendor would pass for one."""
        if not self.is_nvidia_gated(span):
            return False
        macros = self.preprocessor.macros
        chains = self.preprocessor.open_chains(span.start_byte)
        tested = {name for chain in chains for condition in chain for name in names_in(condition)}
        return any(name in macros.rocm or name in macros.rocm_pass for name in tested)

    def rewritten_for_amd(self, node: Node) -> bool:
        """Whether `node` (a condition) is code the project rewrote for AMD: the file is the hand-written HIP twin of a
        CUDA file of the project, which spells no such code (`FileView.apart_from_cuda_twin`: `major >= 5` there,
        `major >= 10` here), so what it reads is what an AMD GPU reports."""
        return bool(self.options.project.apart_from_cuda_twin(self.text(node)))

    def branch_as_compiled(self, span: Span) -> Branch:
        """`branch`, but with the stale platform macros ROC215 reports read as a ROCm build compiles them (maybe
        defined, by ROCm < 6.0) rather than as the gates their authors meant: where a ROCm 6 build may really
        go, for decisions such as which arms a fix may route it into (rocmlint/cuda/conditions.py)."""
        return self._preprocessor_as_compiled.branch_at(span.start_byte)

    @cached_property
    def _preprocessor_as_compiled(self) -> Preprocessor:
        if not any(name.encode() in self.content for name in STALE_ROCM_MACROS):
            return self.preprocessor  # no stale test: both views are the same
        return analyse(analysed_text(self.source), self.preprocessor.macros.as_compiled(), self.options.project.base)

    @property
    def is_rocm_source(self) -> bool:
        """A `.hip` file, one that includes the HIP runtime header outside any vendor branch (itself or through
        project headers), or code written for AMD (`is_amd_code`)."""
        project = self.options.project
        return bool(project.rocm_native or project.hip_source) or is_rocm_source(self.source.path, self.preprocessor)

    @property
    def is_amd_code(self) -> bool:
        """Code the project model found written for AMD GPUs (`FileView.rocm_native`: a HIP-only build,
        `__builtin_amdgcn_*` outside vendor branches, `#if`s per gfx target, a path naming one), not ported CUDA."""
        return bool(self.options.project.rocm_native)

    @property
    def hipified_build(self) -> str:
        """Why the project's ROCm build renames CUDA names in this file (torch's `CUDAExtension` runs hipify),
        "" when it does not: a rename hipify performs is then no error (rules say so at `info`)."""
        return self.options.project.hipified

    def rocm_spelling(self, names: frozenset[str]) -> str:
        """Where the file or its headers define a macro, only for ROCm, as one of `names` ("path:line" of `#define
        gpuFree hipFree` under `USE_HIP`, asked with HIP's API functions), "" when they do not: a project porting
        by its own macros, whose ROCm build compiles the file as written. Found once per file and set of names."""
        if names not in self._rocm_spellings:
            self._rocm_spellings[names] = self._own_rocm_spelling(names) or self.options.project.rocm_spelling(names)
        return self._rocm_spellings[names]

    def _own_rocm_spelling(self, names: frozenset[str]) -> str:
        for defines in self.preprocessor.defines.values():
            for define in defines:
                branch = define.directive.branch
                if branch.on_rocm is True and branch.on_nvidia is False and define.parameters is None:
                    if define.value in names:
                        return f"{self.source.path}:{define.directive.line}"
        return ""

    @property
    def hipify_tool(self) -> str:
        """Where the project's build runs a hipify tool itself ("path:line"), "" when its only hipify is torch's
        extension build: a tool run may pass maps of its own, so it may rename any include the header table maps."""
        return self.options.project.hipify_tool

    def names_project_file(self, header: str, system: bool) -> bool:
        """Whether the file's `#include` of `header` (as written; `system` for angle brackets) names a file of the
        project rather than a library's header."""
        return self.options.project.names_project_file(header, system)

    def includes_through(self, header: str, system: bool) -> tuple[tuple[str, str], ...]:
        """(header as written, "path:line") of every `#include` ROCm reads through this file's `#include` of the
        project header `header` and the headers it pulls in; () when it names no project file."""
        return tuple(self.options.project.includes_through.get((header, system), ()))

    @property
    def runtime_compiled_only_on_nvidia(self) -> str:
        """Why only NVIDIA compiles the project's sources at run time (its NVRTC, hipRTC or jitify calls sit in files
        the ROCm build does not compile), "" otherwise: `__CUDACC_RTC__` is then undefined wherever ROCm compiles."""
        return self.options.project.runtime_compiled_only_on_nvidia

    def build_defines_for_rocm(self, macro: str) -> bool:
        """Whether the project's ROCm build defines `macro` itself (a `-D` of its HIP build files)."""
        return macro in self.options.project.rocm_build_values

    def build_defines_for_nvidia_only(self, macro: str) -> bool:
        """Whether the project's build defines `macro` for NVIDIA only (a `-D` of its NVIDIA build files)."""
        return macro in self.options.project.nvidia_build_defines

    def atomic_overloads(self) -> Set[tuple[str, str]]:
        """(atomic, pointee type) of the device overloads of CUDA atomics the project defines, in this file or the
        files around it, where ROCm compiles them (`("atomicAdd", "half2")`): its calls use them on ROCm. The file's
        own come from its text, so a buffer checked without a project has them too."""
        own = {
            (m.group(1).decode(), m.group(2).decode())
            for m, _ in rocm_atomic_overloads(self.content, self.preprocessor)
        }
        return own | self.options.project.atomic_overloads

    def project_alias(self, span: Span) -> str | None:
        """Where the project remaps, for ROCm only, the name a diagnostic at `span` is about (the callee of a
        call holding it, or the name itself): `#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)` under
        `USE_ROCM` in an included header makes every three-argument `__shfl_xor_sync(...)` portable (a call
        with another argument count does not build on ROCm: not covered). None when it does not."""
        aliases = self.options.project.aliases
        if self._tree is None or span.end_byte <= span.start_byte:
            return None  # no tree: only directives were visited, and no remap is about a directive
        node: Node | None = self.tree.root_node.descendant_for_byte_range(span.start_byte, span.end_byte)
        while node is not None and node.type not in STATEMENT_TYPES and node.type != "function_definition":
            if node.type == "call_expression":
                name = self.call_name(node)
                remap = aliases.get(name) if name is not None else None
                if remap is not None and remap[1] in (None, len(self.arguments(node))):
                    return remap[0]
            elif node.type in ("identifier", "type_identifier", "field_identifier") and self.text(node) in aliases:
                parent = node.parent
                if parent is None or parent.type != "call_expression":  # a callee: its call decides, above
                    return aliases[self.text(node)][0]
            node = node.parent
        return None

    def feeds_only_rocm_gated(self, span: Span) -> bool:
        """Whether `span` lies in the initialiser of a local variable whose every later use sits where a ROCm
        build never compiles (`int groupMask = 15 << (threadIdx.x & 31);` read only by `__shfl_xor_sync` in the
        `#else` arms of `#ifdef USE_ROCM`), or in a call the project remaps for ROCm (`project_alias`: a mask read
        only by `__shfl_down_sync`, which a header defines as `__shfl_down(val, offset)` there): ROCm computes a value
        only the NVIDIA code or the project's own ROCm spelling reads. An unused variable is not."""
        if self._tree is None or span.end_byte <= span.start_byte:
            return False
        node = self.tree.root_node.descendant_for_byte_range(span.start_byte, span.end_byte)
        declarator = self.enclosing(node, "init_declarator") if node is not None else None
        if declarator is None:
            return False
        value = declarator.child_by_field_name("value")
        if value is None or not value.start_byte <= span.start_byte < value.end_byte:
            return False
        uses = self.local_uses(declarator)
        if not uses:
            return False  # not a local of a block, or never read
        return all(self.is_rocm_gated(use) or self.project_alias(use) is not None for use in uses)

    def defines_read_only_off_rocm(self, span: Span) -> bool:
        """Whether `span` lies in an `#if` chain whose arms only define macros (`LD_NC_V1` as one PTX load or another by
        `__CUDA_ARCH__`) or functions (fp16 helpers under `__CUDA_ARCH__ >= 530`) that this file reads only where a
        ROCm build never compiles (the NVIDIA arm of `#ifdef USE_ROCM`), and the files around it (its headers, the
        files including it) too: whichever arm ROCm takes defines what it never reads. What nothing reads is not."""
        chain = self._chain_around(span)
        if chain is None:
            return False
        names = self._chain_definitions(chain, span)
        if not names:
            return False
        return self.read_only_off_rocm(frozenset(names), [ByteSpan(chain[0].start_byte, chain[-1].end_byte)])

    def read_only_off_rocm(self, names: frozenset[str], definitions: Sequence[Span]) -> bool:
        """Whether `names`, defined at `definitions`, are named somewhere else (this file outside `definitions` and
        its `#undef`s, or the files around it: its headers, the files including it), and only where a ROCm build
        never compiles. What nothing names is not (a header's macro may be for its users)."""
        word = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in sorted(names)) + rb")\b")
        skipped = [*definitions, *(d for d in self.preprocessor.directives if d.kind == "undef")]
        uses = [
            match.span()
            for match in word.finditer(self.content)
            if not any(span.start_byte <= match.start() < span.end_byte for span in skipped)
        ]
        if not all(self.is_rocm_gated(ByteSpan(*use)) for use in uses):
            return False
        around = self.options.project.named_around(names)
        return around is False or (around is None and bool(uses))

    def expanded_only_off_rocm(self, define: Define) -> bool:
        """Whether the macro is expanded somewhere, and only where a ROCm build never compiles (`read_only_off_rocm`),
        a use in the body of another macro of the file standing for that macro's expansions: a macro defining PTX
        specialisations that only an `#if __CUDA_ARCH__ >= 900` arm expands is NVIDIA code wherever it is written."""
        names, definitions = {define.name}, [define.directive]
        trace: Trace | None = START
        while trace is not None:
            word = re.compile(r"\b(?:" + "|".join(re.escape(name) for name in sorted(names)) + r")\b")
            using = [
                d
                for found in self.preprocessor.defines.values()
                for d in found
                if d.name not in names and word.search(d.value)
            ]
            if not using:
                break
            names.update(d.name for d in using)
            definitions.extend(d.directive for d in using)
            trace = trace.step()
        return trace is not None and self.read_only_off_rocm(frozenset(names), definitions)

    def _chain_around(self, span: Span) -> list[Directive] | None:
        """The directives of the innermost `#if` chain around `span`, its opener to its `#endif`; None outside any."""
        directives = self.preprocessor.directives
        opened: list[int] = []  # indexes of the openers of the chains open so far
        for index, directive in enumerate(directives):
            if directive.kind in _CHAIN_OPENERS:
                opened.append(index)
            elif directive.kind == "endif" and opened:
                opener = opened.pop()
                if directives[opener].start_byte <= span.start_byte < directive.end_byte:
                    return directives[opener : index + 1]
        return None

    def _chain_definitions(self, chain: list[Directive], span: Span) -> set[str]:
        """The names a chain's arms define when they hold nothing else: `#define`s alone (between them only comments),
        or, asked about one of the chain's own tests, functions alone (as the syntax tree reads them: a function
        ROCm compiles is compiled whether or not it is called, so only the choice of arm is decided); empty
        otherwise."""
        if all(d.kind in _CHAIN_DIRECTIVES for d in chain):
            pairs = itertools.pairwise(chain)
            if not any(_COMMENTS.sub(b"", self.content[a.end_byte : b.start_byte]).strip() for a, b in pairs):
                return {name for name in map(_defined_name, chain) if name}
        own_test = any(d.start_byte == span.start_byte and d.kind != "endif" for d in chain)
        nested = any(d.kind in _CHAIN_OPENERS or d.kind not in _CHAIN_DIRECTIVES for d in chain[1:])
        if not own_test or nested or any(d.kind == "define" for d in chain) or self._tree is None:
            return (
                set()
            )  # asked about code in an arm; arms holding `#if`s or `#define`s of their own (an include guard)
        node = self.tree.root_node.descendant_for_byte_range(chain[0].start_byte, chain[0].end_byte)
        while node is not None and not (node.type in _CHAIN_NODES and node.start_byte == chain[0].start_byte):
            node = node.parent
        names: set[str] = set()
        while node is not None:
            alternative = node.child_by_field_name("alternative")
            for item in node.named_children:
                if item.type == "comment" or _is_arm_field(node, item) or (alternative and item.id == alternative.id):
                    continue
                name = _function_name(item, self)
                if name is None:
                    return set()
                names.add(name)
            node = alternative
        return names

    def local_uses(self, declarator: Node) -> list[Node] | None:
        """The identifiers naming what the `init_declarator` declares, after it in its block (`kMax` in
        `constexpr float kMax = 448.f; ... fminf(x, kMax)`); None for a declaration outside a block."""
        name_node = declarator.child_by_field_name("declarator")
        scope = self.enclosing(declarator, "compound_statement")
        if name_node is None or name_node.type != "identifier" or scope is None:
            return None
        name = self.text(name_node)
        return [
            n
            for n in self.descendants(scope, "identifier")
            if n.start_byte > declarator.end_byte and self.text(n) == name
        ]

    def is_portable_macro(self, name: str) -> bool:
        return name in self.portable_macros

    # --- text, tree and macros -----------------------------------------------------------------------
    def text(self, span: Span) -> str:
        return self.content[span.start_byte : span.end_byte].decode("utf-8", "replace")

    def ancestors(self, node: Node) -> Iterator[Node]:
        parent = node.parent
        while parent is not None:
            yield parent
            parent = parent.parent

    def enclosing(self, node: Node, *types: str) -> Node | None:
        return next((a for a in self.ancestors(node) if a.type in types), None)

    def descendants(self, node: Node, *types: str) -> list[Node]:
        """The nodes of these types below `node` (one tree-sitter query, not a Python walk)."""
        return tree_sitter.QueryCursor(_query(tuple(sorted(types)))).captures(node).get("node", [])

    def function_of(self, node: Node) -> Node | None:
        return self.enclosing(node, "function_definition")

    @cached_property
    def may_hold_device_code(self) -> bool:
        """Whether `is_device_code` can hold anywhere in the file: it spells `__global__` or `__device__` as a word
        (a rule looking only for device code need not parse a file that does not)."""
        return b"__global__" in self.words or b"__device__" in self.words

    def is_device_code(self, node: Node) -> bool:
        """Inside a `__global__` or `__device__` function (by its declaration specifiers)."""
        function = self.function_of(node)
        if function is None:
            return False
        body = function.child_by_field_name("body")
        head = self.content[function.start_byte : body.start_byte if body is not None else function.end_byte]
        return bool(re.search(rb"\b__(?:global|device)__\b", head))

    def in_error(self, span: Span) -> bool:
        """Whether `span` lies inside a region tree-sitter could not parse (reported, never fixed)."""
        start, end = span.start_byte, span.end_byte
        root = self.tree.root_node
        if not root.has_error:  # most files parse cleanly: no need to look for ERROR nodes
            return False
        cursor = tree_sitter.QueryCursor(_query(("ERROR",)))
        # An ERROR node holding the span intersects it: a query over the span's bytes (one byte either
        # side, so an empty span has some) finds it without walking the whole tree.
        cursor.set_byte_range(max(start - 1, 0), end + 1)
        return any(n.start_byte <= start and end <= n.end_byte for n in cursor.captures(root).get("node", []))

    def define(self, name: str, before: Span) -> Define | None:
        """The object-like `#define name` a ROCm build sees before `before`: this file's, else one the headers it
        includes define, else one the ROCm build defines with a known value (`-DCUDA_VERSION=11000`): the
        project model's, its directive then at offset 0 of this file."""
        define = self.preprocessor.define_of(name, before.start_byte)
        if define is None and name in self.options.project.defines:
            return _header_define(name, self.options.project.defines[name])
        built = self.options.project.rocm_build_values.get(name) if define is None else None
        if built is not None:
            return _header_define(name, built)
        return define if define is not None and define.parameters is None else None

    def macro_replacement(self, name: str, before: Span) -> str | None:
        """The replacement text of the macro `name` (object- or function-like) a ROCm build sees at `before`: this
        file's, else, when the file never defines it, the one its headers define where ROCm certainly compiles them
        (`#define __syncwarp()` in a header the kernel file includes -> ""). None when there is none."""
        define = self.preprocessor.define_of(name, before.start_byte)
        if define is not None:
            return define.value if define.directive.branch.on_rocm is True else None
        if name in self.preprocessor.defines:
            return None  # the file's own definition comes later, or only where ROCm may not compile it
        return self.options.project.macros.get(name)

    def header_constant(self, name: str) -> str | None:
        """The initialiser text of a `constexpr`/`const` integer the included headers declare for ROCm."""
        return self.options.project.constants.get(name)

    def resolve(self, node: Node) -> str:
        """The node's text with a same-file object-like macro expanded (`FULL_MASK` -> `0xffffffff`)."""
        return self.resolve_text(self.text(node), node)

    def resolve_text(self, text: str, before: Span) -> str:
        """`text` with a same-file object-like macro it names expanded, as a ROCm build sees the macros before
        `before`: `FULL_MASK` -> `0xffffffff`, `(HW_WARP)` -> the value of `HW_WARP`, through macros naming
        macros (as deep as the tracing depth policy allows). Anything else (a literal, an expression, an
        unknown name) comes back stripped of surrounding spaces."""
        text = text.strip()
        trace: Trace | None = START
        while trace is not None:
            name = text.strip("()").strip()
            define = self.define(name, before) if _IDENTIFIER.fullmatch(name) else None
            trace = trace.into(name) if define is not None else None
            if define is None or trace is None:
                break
            text = define.value.strip()
        return text

    def quoted(self, node: Node) -> str:
        """The node's text as a message shows it: in backquotes, with what a same-file macro expands to
        (`` `FULL_MASK` (= `0xffffffff`) ``)."""
        text, resolved = self.text(node), self.resolve(node)
        return f"`{text}`" if resolved == text else f"`{text}` (= `{resolved}`)"

    def int_value(self, node: Node) -> int | None:
        """The integer a literal (or a same-file macro naming one) stands for."""
        return parse_int(self.resolve(node))

    def call_name(self, call: Node) -> str | None:
        """`f` for `f(...)`, `ns::f` for `ns::f(...)`, `f` for `f<T>(...)`; None for other callees."""
        function = call.child_by_field_name("function")
        if function is None:
            return None
        if function.type == "template_function":
            function = function.child_by_field_name("name") or function
        if function.type in ("identifier", "qualified_identifier", "field_identifier"):
            return self.text(function)
        return None

    def wrapped_shuffle(self, call: Node) -> tuple[str, list[Node | None]] | None:
        """The lane exchange a call of a project macro wrapping one runs on ROCm, with the call's arguments where
        the intrinsic takes them (None for what the macro fixes itself, such as the mask): `SHFL_XOR_W(v, o, 16)`
        of `#define SHFL_XOR_W(v, o, w) __shfl_xor(v, o, w)` -> (`__shfl_xor`, [v, o, 16]). From this file's
        `#define` before the call, else one its headers give; None for other calls."""
        name = self.call_name(call)
        if name is None:
            return None
        define = self.preprocessor.define_of(name, call.start_byte)
        if define is not None and define.parameters is not None:
            form = shuffle_wrapper_form(define.value, define.parameters)
        else:
            form = self.options.project.shuffle_wrappers.get(name)
        if form is None:
            return None
        intrinsic, positions = wrapped_call(form)
        arguments = self.arguments(call)
        return intrinsic, [arguments[i] if i is not None and i < len(arguments) else None for i in positions]

    def declaration_of(self, identifier: Node) -> Node | None:
        """The declaration, parameter or constant that introduces `identifier`'s name where it is used, as a
        ROCm build sees it: the last one before the use, compiled on ROCm, whose scope (block, function or
        file) contains the use."""
        name = self.text(identifier)
        best: Node | None = None
        for declaration in self._declarations_of(name):
            if declaration.start_byte >= identifier.start_byte:
                break
            if self.is_rocm_gated(declaration):
                continue  # an NVIDIA-only `#else` twin: ROCm sees the other declaration
            scope = self._scope_of(declaration)
            if scope.start_byte <= identifier.start_byte < scope.end_byte:
                best = declaration
        return best

    def declared_type(self, identifier: Node) -> str | None:
        """The type written in `identifier`'s declaration (`unsigned int`, `const uint64_t`, `auto`)."""
        declaration = self.declaration_of(identifier)
        if declaration is None:
            return None
        type_node = declaration.child_by_field_name("type")
        if type_node is None:
            return None
        qualifiers = [
            self.text(c)
            for c in declaration.children
            if c.type == "type_qualifier" and c.start_byte < type_node.start_byte
        ]
        return " ".join([*qualifiers, self.text(type_node)])

    def field_types(self, name: str) -> frozenset[str]:
        """The types written in this file's struct and class member declarations named `name` (`half2` for
        `struct block { half2 dm; }`), as a ROCm build sees them: a member access `s.dm` names one of
        them whatever `s` is."""
        return frozenset(
            self.text(type_node)
            for declaration in self.field_declarations(name)
            for type_node in [declaration.child_by_field_name("type")]
            if type_node is not None
        )

    def field_declarations(self, name: str) -> list[Node]:
        """This file's struct and class member declarations named `name` a ROCm build sees."""
        return [
            declaration
            for declaration in self._declarations_of(name)
            if declaration.type == "field_declaration" and not self.is_rocm_gated(declaration)
        ]

    def declared_value(self, identifier: Node) -> Node | None:
        """The initialiser of `identifier`'s declaration (`x` in `unsigned m = x;`), if it has one."""
        declaration = self.declaration_of(identifier)
        if declaration is None:
            return None
        if declaration.type == "optional_parameter_declaration":
            return declaration.child_by_field_name("default_value")
        name = self.text(identifier)
        for declarator in declaration.children_by_field_name("declarator"):
            if declarator.type == "init_declarator" and _declared_name(declarator, self) == name:
                return declarator.child_by_field_name("value")
        return None

    def _declarations_of(self, name: str) -> list[Node]:
        """The declarations, parameters and fields whose declarator introduces `name`, by position. Found from
        the name's occurrences in the text (each a leaf looked up in the tree, then its declarator chain
        followed up) rather than by walking the whole tree: rules ask about a few names per file. The empty
        name of an identifier tree-sitter made up to recover from an error has no occurrences to look for."""
        found = self._declarations_by_name.get(name)
        if found is None:
            found = self._declarations_at_occurrences(name) if name else self._declarations_walked(name)
            found.sort(key=_START_BYTE)
            self._declarations_by_name[name] = found
        return found

    def _declarations_at_occurrences(self, name: str) -> list[Node]:
        found: list[Node] = []
        root = self.tree.root_node
        for match in _occurrences(name).finditer(self.content):
            leaf = root.descendant_for_byte_range(match.start(), match.end())
            if (
                leaf is not None
                and leaf.type in _DECLARED_NAME_TYPES
                and (leaf.start_byte, leaf.end_byte) == match.span()
            ):
                found += _declarations_naming(leaf)
        return found

    def _declarations_walked(self, name: str) -> list[Node]:
        cursor = tree_sitter.QueryCursor(_query(tuple(sorted(_DECLARATION_TYPES))))
        return [
            declaration
            for declaration in cursor.captures(self.tree.root_node).get("node", [])
            for declarator in declaration.children_by_field_name("declarator")
            if _declared_name(declarator, self) == name
        ]

    def _scope_of(self, declaration: Node) -> Node:
        parent = declaration.parent
        if parent is not None and parent.type == "template_parameter_list":
            return parent.parent or self.tree.root_node  # the template declaration it parameterises
        if declaration.type in ("parameter_declaration", "optional_parameter_declaration"):
            return self.function_of(declaration) or self.tree.root_node
        return (
            self.enclosing(declaration, "compound_statement", "field_declaration_list", "for_statement")
            or self.tree.root_node
        )

    def arguments(self, call: Node) -> list[Node]:
        arguments = call.child_by_field_name("arguments")
        return [] if arguments is None else [a for a in arguments.named_children if a.type != "comment"]

    # --- reporting ------------------------------------------------------------------------------------
    def report(
        self,
        span: Span,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
        arm_to_open: bool = False,
    ) -> bool:
        """Report `span` for the running rule unless a ROCm build never compiles it.

        `arm_to_open`: the rule found that the `#if` keeping ROCm out of `span` is one a ROCm port has to open
        (`conditions.arch_arm_rocm_needs`), so that gate does not count. A fix is dropped inside regions
        tree-sitter could not parse: the tokens there are clear enough to report, not to rewrite. Returns True
        when the diagnostic was emitted.
        """
        rule = self.rule
        assert rule is not None, "report() called outside a rule callback"
        if not rule.reports_gated and self._unused_on_rocm(span, gate_counts=not arm_to_open):
            self._note_gated(span, rule)
            return False
        if fix is not None and (self.is_template or self.in_error(span)):
            fix = None  # a template's edits would be computed from its blanked tags
        base = self.source.bom_length
        start = self.source.location_of_byte(base + span.start_byte)
        end = self.source.location_of_byte(base + span.end_byte)
        self.diagnostics.append(
            Diagnostic(
                path=self.source.path,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=severity or rule.severity,
                location=start,
                end_location=end,
                fix=fix,
                url=rule.url(),
                noqa_line=start.line,
            )
        )
        return True

    def report_hipified(self, span: Span, message: str, *, fix: Fix | None = None) -> bool:
        """Report what the build's hipify renames on its own (`hipified_build` is non-empty): no hazard there, so
        it is reported at info with the build's evidence before a first port, and left out with a `check
        --verbose` note where the project already builds for ROCm through that hipify (`FileView.hipify_ported`:
        done) or the user asked (`show-hipified = false`, `--hide-hipified`); `show-hipified = true` reports it
        everywhere."""
        shown = self.options.show_hipified
        ported = self.options.project.hipify_ported() if shown is None else ""
        if shown or (shown is None and not ported):
            return self.report(span, f"{message} ({self.hipified_build})", fix=fix, severity=Severity.INFO)
        rule = self.rule
        assert rule is not None, "report_hipified() called outside a rule callback"
        if self._unused_on_rocm(span):
            self._note_gated(span, rule)  # the stronger reason: ROCm does not compile it at all
            return False
        line = self.source.location_of_byte(self.source.bom_length + span.start_byte).line
        why = f"the build hipifies it ({self.hipified_build})"
        if shown is None:
            why += f" and the project already builds it for ROCm ({ported})"
        self.gated_notes.append(f"{self.source.path}:{line}: {rule.code} not reported: {why}")
        return False

    def _unused_on_rocm(self, span: Span, *, gate_counts: bool = True) -> bool:
        """Whether a ROCm build never compiles `span` (gated out, or a name the project remaps for ROCm), or
        computes from it only a value nothing ROCm compiles reads: nothing there can go wrong on ROCm. Without
        `gate_counts` the arm holding `span` is taken as one ROCm compiles: only a project remap counts."""
        if not gate_counts:  # what the arm defines may still be read only where ROCm never compiles
            return self.project_alias(span) is not None or self.defines_read_only_off_rocm(span)
        return (
            self.is_rocm_gated(span)
            or self.project_alias(span) is not None
            or self.feeds_only_rocm_gated(span)
            or self.defines_read_only_off_rocm(span)
        )

    def _note_gated(self, span: Span, rule: type[Rule]) -> None:
        """For `check --verbose`: why a finding was not reported, when the project model's evidence decided it."""
        why = self._project_evidence(span)
        if why:
            line = self.source.location_of_byte(self.source.bom_length + span.start_byte).line
            self.gated_notes.append(f"{self.source.path}:{line}: {rule.code} not reported: {why}")

    def _project_evidence(self, span: Span) -> str:
        project = self.options.project
        alias = self.project_alias(span)
        if alias is not None:
            return f"the project remaps the name for ROCm ({alias})"
        if project.base.on_rocm is False:
            return f"ROCm does not compile this file ({project.base_evidence})"
        if not self.is_rocm_gated(span) and self.defines_read_only_off_rocm(span):
            return "the #if only defines macros read where ROCm does not compile"
        if self.preprocessor.skipped_by_every_rocm_compile(span.start_byte):
            return self._no_rocm_compile_note()
        known = self.preprocessor.macros.well_known  # decided without the model
        names = {
            name: None
            for chain in self.preprocessor.open_chains(span.start_byte)
            for condition in chain
            for name in names_in(condition)
            if name in project.learned and name not in known
        }
        learned = [project.learned[name] for name in names]
        notes = [f"`{m.name}` is {_VENDOR_NAMES[m.vendor]}'s ({m.evidence})" for m in learned]
        if any(
            mentions(c, UNDEFINED_BY_HIP_CLANG)
            for chain in self.preprocessor.open_chains(span.start_byte)
            for c in chain
        ):
            notes.append(f"no HIP-Clang pass defines {', '.join(f'`{n}`' for n in sorted(UNDEFINED_BY_HIP_CLANG))}")
        return "; ".join(notes)

    def _no_rocm_compile_note(self) -> str:
        """Why no ROCm compile enters code one reading of its `#if`s left undecided: the passes and the refusals."""
        split = self.preprocessor.scenario_macros
        reasons = ["HIP-Clang's host pass leaves `__HIP_DEVICE_COMPILE__` undefined, its device passes define it"]
        reasons = reasons if DEVICE_PASS_MACRO in split else []
        for states, where in self.options.project.rocm_refused:
            if all(name in split for name, _ in states):
                combination = " and ".join(f"`{name}` {'on' if on else 'off'}" for name, on in sorted(states))
                reasons.append(f"the build refuses {combination} with ROCm ({where})")
        return f"no ROCm compile enters it ({'; '.join(reasons)})"

    # --- fixes: ROCm text behind a gate, the NVIDIA text unchanged ------------------------------------
    def statement_of(self, node: Node) -> Node | None:
        """The smallest statement or declaration holding `node` (`node` itself when it is one)."""
        current: Node | None = node
        while current is not None and current.type not in STATEMENT_TYPES:
            current = current.parent
        return current

    def outer_statement(self, statement: Node) -> Node | None:
        """The statement around `statement` in the same function (`if (big) f(x);`: the `if`), None at
        a function or lambda boundary: where a fix may widen to when `statement` itself cannot be gated."""
        parent = statement.parent
        while parent is not None and parent.type not in STATEMENT_TYPES:
            if parent.type in ("function_definition", "lambda_expression"):
                return None
            parent = parent.parent
        return parent

    def rocm_variant(self, span: Span, replacements: Sequence[tuple[Span, str]]) -> str:
        """The text of `span` with each (inner span, new text) replaced: the ROCm side of a gated fix."""
        pieces: list[bytes] = []
        cursor = span.start_byte
        for inner, text in sorted(replacements, key=lambda r: r[0].start_byte):
            pieces += [self.content[cursor : inner.start_byte], text.encode("utf-8")]
            cursor = inner.end_byte
        pieces.append(self.content[cursor : span.end_byte])
        return b"".join(pieces).decode("utf-8", "replace")

    def gated_fix(self, message: str, span: Span, rocm_text: str, *, safe: bool = True) -> Fix | None:
        """Put `rocm_text` in front of `span` (a statement, declaration or directive) behind the ROCm test:

            #if <rocm condition>
            <rocm_text>
            #else
            <span, byte for byte>
            #endif

        The NVIDIA compiler sees exactly the original tokens. None when `span` shares its lines with other
        code (a directive must start its own line) or lies in a region tree-sitter could not parse.
        """
        if self.in_error(span):
            return None
        line_start = self.content.rfind(b"\n", 0, span.start_byte) + 1
        line_end = _line_end(self.content, span.end_byte)
        indent = self.content[line_start : span.start_byte]
        after = self.content[span.end_byte : line_end]
        if indent.strip() or (after.strip() and not after.strip().startswith((b"//", b"/*"))):
            return None
        newline = self.source.newline
        rocm_lines = rocm_text.replace("\r\n", "\n").replace("\n", newline)
        opening = f"#if {self.options.rocm_condition}{newline}{indent.decode('utf-8', 'replace')}{rocm_lines}{newline}#else{newline}"
        original = self.content[span.start_byte : span.end_byte].decode("utf-8", "replace")
        return self.fix(
            message,
            self.edit(line_start, line_start, opening),
            # Rewriting the span with its own text claims it: a fix inside it (a statement in a wrapped
            # loop) then overlaps and waits for the next pass instead of nesting a second #if in #else.
            self.edit(span.start_byte, span.end_byte, original),
            self.edit(line_end, line_end, f"{newline}#endif"),
            safe=safe,
        )

    def statement_fix(
        self, message: str, node: Node, replacements: Sequence[tuple[Span, str]], *, safe: bool = True
    ) -> Fix | None:
        """A gated fix (`gated_fix`) of the statement around `node`, its ROCm side with `replacements`: the
        smallest statement that can be gated, or the statement around it when that one shares its line
        (`if (big) f(x);`); None past a template or a statement of MAX_WRAPPED_LINES lines."""
        statement = self.statement_of(node)
        while statement is not None and statement.type != "template_declaration":
            if statement.end_point.row - statement.start_point.row >= MAX_WRAPPED_LINES:
                return None
            fix = self.gated_fix(message, statement, self.rocm_variant(statement, replacements), safe=safe)
            if fix is not None:
                return fix
            statement = self.outer_statement(statement)
        return None

    def edit(self, start: int, end: int, content: str) -> Edit:
        """An edit over the content's byte range [start, end)."""
        base = self.source.bom_length
        return self.source.edit(base + start, base + end, content)

    def fix(self, message: str, *edits: Edit, safe: bool = True) -> Fix:
        return Fix(message, tuple(edits), Applicability.SAFE if safe else Applicability.UNSAFE)


def _line_end(content: bytes, offset: int) -> int:
    """The offset of the line ending after `offset` (or the end of the content)."""
    ends = [i for i in (content.find(b"\n", offset), content.find(b"\r", offset)) if i >= 0]
    return min(ends) if ends else len(content)


_DECLARATION_TYPES = frozenset(
    {"declaration", "parameter_declaration", "optional_parameter_declaration", "field_declaration"}
)
_DECLARED_NAME_TYPES = frozenset({"identifier", "field_identifier"})


@lru_cache(maxsize=256)
def _occurrences(name: str) -> re.Pattern[bytes]:
    """Where `name` may be an identifier: not inside a longer word. A letter or `_` before it, or a letter,
    digit or `_` after it, would belong to the same token (the preprocessor reads a number glued to letters
    as one token, so code a compiler accepts has no identifier right after one ending in a letter). The
    name comes first, for re's fast search of a literal prefix; the look-behind checks the byte before it."""
    spelled = re.escape(name.encode("utf-8", "surrogatepass"))
    return re.compile(spelled + rb"(?<![A-Za-z_]" + spelled + rb")(?![A-Za-z0-9_])")


def _declarations_naming(leaf: Node) -> list[Node]:
    """The declarations whose declarator chain (`declarator` fields, as _declared_name follows them down)
    ends at `leaf`."""
    found: list[Node] = []
    child, parent = leaf, leaf.parent
    while parent is not None:
        if parent.type in _DECLARATION_TYPES and child in parent.children_by_field_name("declarator"):
            found.append(parent)
        if parent.child_by_field_name("declarator") != child:
            break
        child, parent = parent, parent.parent
    return found


def _declared_name(declarator: Node, ctx: CudaContext) -> str | None:
    """The name a declarator introduces: `m` in `m`, `m = 0`, `*m`, `m[32]`, `&m`."""
    current: Node | None = declarator
    while current is not None and current.type not in ("identifier", "field_identifier"):
        current = current.child_by_field_name("declarator")
    return ctx.text(current) if current is not None else None


def is_rocm_source(path: str, preprocessor: Preprocessor) -> bool:
    return path.lower().endswith(".hip") or preprocessor.includes_hip_runtime


@lru_cache(maxsize=1024)
def _header_define(name: str, value: str) -> Define:
    return Define(name, value, None, Directive("define", f"{name} {value}", 0, 0, 0))


def analysed_text(source: SourceFile) -> str:
    """The file's text as the preprocessor analysis reads it: without a byte-order mark, as tree-sitter, and with
    the contents of raw string literals blanked (a `R"(#if ...)"` is text a program emits, not a directive)."""
    text = source.text[1:] if source.text.startswith("\ufeff") else source.text
    return _RAW_STRING.sub(_blank_raw_string, text) if 'R"' in text else text


# A C++ raw string literal: `R"(...)"`, `u8R"tag(...)tag"`.
_RAW_STRING = re.compile(r'(?<![\w"\'])(?:u8|u|U|L)?R"([^()\\\s"]{0,16})\((.*?)\)\1"', re.DOTALL)
_ASCII_BUT_LINE_BREAK = re.compile(r"[^\n\x80-\U0010ffff]")


def _blank_raw_string(match: re.Match[str]) -> str:
    """The literal with its contents' ASCII characters but line breaks turned to spaces: byte and line offsets
    stay those of the file."""
    start, end = match.span(2)
    whole = match.group(0)
    base = match.start()
    return (
        whole[: start - base] + _ASCII_BUT_LINE_BREAK.sub(" ", whole[start - base : end - base]) + whole[end - base :]
    )


# A Jinja statement tag (`{% if not dense %}`, `{%- for arg in args %}`): C++ never spells `{%`, so a file holding
# one is a template a code generator renders (FBGEMM's `codegen/*.cu`), checked as the C++ it mostly is.
_JINJA_STATEMENT = re.compile(rb"\{%-?\s*(?:if|for|set|macro|call|filter|block|include|import|from|raw|with)\b")
_JINJA_TAG = re.compile(rb"\{%.*?%\}|\{#.*?#\}|\{\{.*?\}\}", re.DOTALL)


def without_jinja(content: bytes) -> tuple[bytes, bool]:
    """`content` with its Jinja tags blanked, byte for byte and line for line, and whether it is a template: a
    statement or comment tag becomes spaces, an expression (`{{ optimizer }}`) underscores, so that
    `split_embedding{{ suffix }}_kernel<{{ kMaxVecsPerThread }}>` parses as one identifier with a template argument.
    Every arm of a `{% if %}` stays: the C++ of all renderings, read at once."""
    if _JINJA_STATEMENT.search(content) is None:
        return content, False

    def blank(match: re.Match[bytes]) -> bytes:
        fill = b"_" if match.group(0).startswith(b"{{") else b" "
        return bytes(byte if byte == 0x0A else fill[0] for byte in match.group(0))

    return _JINJA_TAG.sub(blank, content), True


def parse(content: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(_language()).parse(content)


InternalErrorReporter = Callable[[type[Rule], BaseException, str], None]
# How deep in the syntax tree rules look (docs/robustness.md): real code stays in the low hundreds;
# the query cursor slows down sharply past 65,535 levels.
MAX_VISIT_DEPTH = 50_000
Callback = Callable[[object], None]
# Which nodes of a type a rule visits: None for every one, else byte offsets each node worth visiting holds.
Anchors = Sequence[int] | None


def check_cuda(
    source: SourceFile,
    rules: Sequence[type[Rule]],
    options: CudaOptions,
    on_internal_error: InternalErrorReporter,
    gated_notes: list[str] | None = None,
) -> list[Diagnostic]:
    """Run `rules` over one C/C++/CUDA file (or a CUDA snippet taken from a Python string). `gated_notes`, when
    given, receives why findings the project model's evidence gated away were not reported."""
    preprocessor = analyse(analysed_text(source), options.vendor_macros(), options.project.base)
    context = CudaContext(source, preprocessor, options)
    if context.is_rocm_source:
        # A ROCm source only meets ROCm hardware: the wave size is all that can still be wrong there; in code
        # written for AMD, not where a 32 would be a CUDA habit (`Rule.reports_a_cuda_habit`).
        amd_code = context.is_amd_code
        rules = [r for r in rules if r.applies_to_rocm_sources and not (amd_code and r.reports_a_cuda_habit)]
    runs = [_RuleRun(rule, context, on_internal_error) for rule in rules]
    for hook, items in (
        ("directive", preprocessor.directives),
        ("define", [d for defines in preprocessor.defines.values() for d in defines]),
        ("include", preprocessor.includes),
    ):
        callbacks = [c for run in runs if (c := run.callback(hook)) is not None]
        if not callbacks:
            continue
        for item in items:
            for callback in callbacks:
                callback(item)
    table, anchors = _node_table(runs)
    if table:
        # By kind id: `node.type` builds a new string on every call, half as costly again.
        by_kind = {kind: callbacks for node_type, callbacks in table.items() for kind in _kind_ids(node_type)}
        for node in _source_order(_visited_nodes(context, anchors)):
            for callback in by_kind[node.kind_id]:
                callback(node)
    if gated_notes is not None:
        gated_notes += context.gated_notes
    return context.diagnostics


def _visited_nodes(context: CudaContext, anchors: dict[str, list[int] | None]) -> list[Node]:
    """The nodes of each needed type (in no order): every one, from one walk of the tree, or, for a type
    whose rules gave anchors, those holding an anchor, from a query over each anchor's byte. A node holding
    several anchors is found once. Anchors cost a query each: where a type has more than a walk costs,
    the walk finds its nodes."""
    limit = _anchor_limit(len(context.content))
    walked = frozenset(t for t, offsets in anchors.items() if offsets is None or len(offsets) > limit)
    anchored = {t: offsets for t, offsets in anchors.items() if t not in walked and offsets}
    if sum(len(offsets) for offsets in anchored.values()) > limit:
        walked, anchored = frozenset(anchors), {}
    if not walked and not anchored:
        return []  # the file need not even be parsed
    root = context.tree.root_node
    nodes: list[Node] = []
    captured: tuple[str, ...] = ()
    if walked:
        captured = _captured_types(walked, context.options.known_rules)
        cursor = _cursor(captured)
        nodes += _of_kinds(cursor.captures(root).get("node", []), [t for t in anchors if t in captured])
    anchored = {t: offsets for t, offsets in anchored.items() if t not in captured}
    if anchored:
        cursor = _cursor(_captured_types(frozenset(anchored), context.options.known_rules))
        found: set[Node] = set()
        for start, end in _anchor_ranges(sorted({o for offsets in anchored.values() for o in offsets})):
            cursor.set_byte_range(start, end)
            found.update(cursor.captures(root).get("node", []))
        nodes += _of_kinds(found, anchored)
    return nodes


def _anchor_limit(content_length: int) -> int:
    """How many anchors a file may have before walking its tree is cheaper. A walk costs about what a query
    over one anchor's byte costs for every 130 bytes of the file; anchors are kept while sparser than one
    per 256 bytes (and up to 16 in any file)."""
    return content_length // 256 + 16


def _cursor(node_types: tuple[str, ...]) -> tree_sitter.QueryCursor:
    cursor = tree_sitter.QueryCursor(_query(node_types))
    # tree-sitter's query cursor turns quadratic below ~65,000 levels (a 1,000,000-character
    # `1+1+...` line took minutes); no real code nests this deep, so deeper nodes are not visited.
    cursor.set_max_start_depth(MAX_VISIT_DEPTH)
    return cursor


def _of_kinds(nodes: Iterable[Node], node_types: Collection[str]) -> list[Node]:
    kinds = {kind for node_type in node_types for kind in _kind_ids(node_type)}
    return [node for node in nodes if node.kind_id in kinds]


_ANCHOR_GAP = 16


def _anchor_ranges(offsets: Sequence[int]) -> list[tuple[int, int]]:
    """Byte ranges covering sorted anchors, neighbours a few bytes apart in one (`<<<` holds two `<<`): a
    query over a range finds every node intersecting it, a superset of those holding its anchors."""
    ranges: list[tuple[int, int]] = []
    for offset in offsets:
        if ranges and offset - ranges[-1][1] < _ANCHOR_GAP:
            ranges[-1] = (ranges[-1][0], offset + 1)
        else:
            ranges.append((offset, offset + 1))
    return ranges


# Node types files hold by the thousand, in groups: a file's query leaves out each group no rule needs there
# and captures every other visited type, needed or not. Compiling a query costs ~15 ms, as much as
# capturing ~25,000 nodes nobody asked for: one query per exact set of needed types compiled dozens.
_COSTLY_GROUPS = (
    frozenset({"identifier", "type_identifier", "qualified_identifier", "namespace_identifier", "number_literal"}),
    frozenset({"call_expression"}),
)


def compile_queries(known_rules: tuple[type[Rule], ...]) -> None:
    """Compile the queries files' visits use (one per combination of _COSTLY_GROUPS a file may need) and the one
    fixes ask about ERROR regions with: workers a process pool forks after this share them instead of each
    compiling its own (~10 ms each)."""
    for count in range(len(_COSTLY_GROUPS) + 1):
        for groups in itertools.combinations(_COSTLY_GROUPS, count):
            _query(_captured_types(frozenset[str]().union(*groups), known_rules))
    _query(("ERROR",))


def _captured_types(needed: frozenset[str], known_rules: tuple[type[Rule], ...]) -> tuple[str, ...]:
    """What the query captures for a file whose rules visit `needed`: those, the types `known_rules` visit
    outside _COSTLY_GROUPS, and the groups `needed` touches."""
    captured = set(needed).union(visited_types(known_rules)).difference(*_COSTLY_GROUPS)
    for group in _COSTLY_GROUPS:
        if needed & group:
            captured |= group
    return tuple(sorted(captured))


_START_BYTE = operator.attrgetter("start_byte")
_END_BYTE = operator.attrgetter("end_byte")


def _source_order(nodes: list[Node]) -> list[Node]:
    """The captured nodes by start, an outer node before the inner ones that start with it: the order
    (start, -end) in two stable sorts keyed in C. The query cursor returns captures in no useful order,
    and a Python key function building a tuple per node cost as much as the query itself."""
    ordered = sorted(nodes, key=_END_BYTE, reverse=True)
    ordered.sort(key=_START_BYTE)
    return ordered


class _RuleRun:
    """One rule on one file: its instance, its visit methods, and whether it crashed (then it is reported
    once and visits nothing more)."""

    def __init__(self, rule_class: type[Rule], context: CudaContext, on_internal_error: InternalErrorReporter) -> None:
        self.rule_class = rule_class
        self.visits = _visit_methods(rule_class)
        self.rule = rule_class()
        self.context = context
        self.on_internal_error = on_internal_error
        self.failed = False

    def callback(self, hook: str) -> Callback | None:
        """The guarded call of the rule's `visit_<hook>`, if it has one."""
        attribute = self.visits.get(hook)
        if attribute is None:
            return None
        method = getattr(self.rule, attribute)
        context, rule_class = self.context, self.rule_class

        def call(item: object) -> None:
            if self.failed:
                return
            context.rule = rule_class
            try:
                method(item, context)
            except Exception as error:  # noqa: BLE001 - one broken rule must not stop the others
                self._crashed(error)

        return call

    def needed_visits(self) -> Mapping[str, Anchors]:
        """Node type -> which of its nodes the rule visits in this file: every one (None) of every type it
        has a method for, unless it defines `visits_needed` (the contract is in docs/writing-rules.md,
        "C++ rules"). When no rule visits a node the file is never parsed; visiting only the nodes around
        anchors saves walking the whole tree."""
        if self.failed:
            return {}
        every: dict[str, Anchors] = {t: None for t in self.visits if t not in PREPROCESSOR_HOOKS}
        hook = getattr(self.rule, "visits_needed", None)
        if hook is None or not every:
            return every
        self.context.rule = self.rule_class
        try:
            needed = hook(self.context)
        except Exception as error:  # noqa: BLE001 - one broken rule must not stop the others
            self._crashed(error)
            return {}
        return {t: anchors for t, anchors in needed.items() if t in every}

    def _crashed(self, error: Exception) -> None:
        self.failed = True
        self.on_internal_error(self.rule_class, error, traceback.format_exc())


def _visit_methods(rule_class: type[Rule]) -> dict[str, str]:
    """Node type or preprocessor hook -> the rule's method for it; a method naming neither is a rule bug."""
    visits: dict[str, str] = {}
    known_types = _node_types()
    # The class dictionaries themselves: dir() builds and sorts every attribute name, object's included.
    names = {name for klass in rule_class.__mro__ for name in vars(klass) if name.startswith("visit_")}
    for attribute in sorted(names):
        node_type = attribute[len("visit_") :]
        if node_type not in known_types and node_type not in PREPROCESSOR_HOOKS:
            raise ValueError(f"{rule_class.code}: {attribute} names no tree-sitter-cuda node type")
        visits[node_type] = attribute
    return visits


def _node_table(runs: Sequence[_RuleRun]) -> tuple[dict[str, list[Callback]], dict[str, list[int] | None]]:
    """Node type -> the callbacks of the rules that visit it in this file (asked once their preprocessor
    hooks have run), and node type -> the anchors of all of them (None when one visits every node)."""
    table: dict[str, list[Callback]] = {}
    anchors: dict[str, list[int] | None] = {}
    for run in runs:
        for node_type, offsets in run.needed_visits().items():
            callback = run.callback(node_type)
            if callback is None:
                continue
            table.setdefault(node_type, []).append(callback)
            known = anchors.get(node_type, [])
            anchors[node_type] = None if offsets is None or known is None else known + list(offsets)
    return table, anchors


@lru_cache(maxsize=4)
def visited_types(rules: tuple[type[Rule], ...]) -> tuple[str, ...]:
    """The tree-sitter node types `rules` have a visit method for."""
    visited = {
        attribute[len("visit_") :] for rule in rules for attribute in dir(rule) if attribute.startswith("visit_")
    }
    return tuple(sorted(visited & _node_types()))


@cache
def _kind_ids(node_type: str) -> tuple[int, ...]:
    """The ids of the named node kinds called `node_type` (an alias has an id of its own)."""
    language = _language()
    return tuple(
        i
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and language.node_kind_for_id(i) == node_type
    )


@lru_cache(maxsize=1)
def _node_types() -> frozenset[str]:
    language = _language()
    return frozenset(language.node_kind_for_id(i) or "" for i in range(language.node_kind_count))


__all__ = ["Anchors", "ByteSpan", "CudaContext", "CudaOptions", "Define", "Directive", "Include", "Node", "check_cuda"]
