"""The C++ project model: what a project's own files say about its vendor gates, constants and build.

Built once per run for a project root, from every C/C++/CUDA file under it (their preprocessor directives only,
no tree-sitter) and its build files (rocmlint/cuda/build_files.py):

- **Vendor macros, learned from evidence**, strongest first: the build defines the macro only for one vendor
  (setup.py `-D` in a `torch.version.hip` branch, CMake definitions under `if(USE_ROCM)` or in a HIP-language
  file); the project's headers define it only under one vendor's condition (`#if defined(__HIP_PLATFORM_AMD__)
  #define XYZ_HIP 1 #else #define XYZ_HIP 0`); the arms of `#if X` split by vendor (one includes HIP headers or
  calls `hip*`, the other the CUDA counterparts); weakest, the macro's name carries one vendor's word (HIP, ROCM,
  AMD; CUDA, NVCC, NV) and no other accelerator's. A macro the build defines for both vendors is no vendor's.
- **Include graph**: quoted includes resolved next to the including file, then (as `-I` directories would) by
  the unique project file whose path ends with the included path; angle includes that name a folder too.
- **Per file** (`view`): the learned macros; what the headers it includes (transitively) define for ROCm
  (object-like macros and `constexpr` integer constants, for values such as `WARP_SIZE`); the CUDA names those
  headers or the file remap on ROCm only (`#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)` under
  `USE_ROCM`: uses of the name are portable); and where the file is compiled at all (a header included only from
  NVIDIA-only `#if` arms is NVIDIA-only).
- **ROCm-native code**: a project whose build only targets HIP, or a file that calls `__builtin_amdgcn_*`
  outside any vendor branch, is written for AMD: it is checked as a ROCm source (only the wave-size rules apply).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from rocmlint.cuda.build_files import (
    BuildDefine,
    BuildFacts,
    SourceSet,
    cmake_facts,
    setup_py_facts,
    vendor_of_words,
)
from rocmlint.cuda.preprocessor import (
    Directive,
    LearnedMacro,
    MacroEvidence,
    MacroState,
    Preprocessor,
    VendorMacros,
    analyse,
    names_in,
    parse_int,
)
from rocmlint.vendor import EVERYWHERE, Branch, Tri

SOURCE_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".cu", ".cpp", ".cc", ".cxx", ".c", ".hip", ".inl"})
# Folders a project model never reads: version control, virtual environments, build output.
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox"})
_MAX_FILES = 50_000
# How far up from a file outside the configured root its project's root is looked for.
MAX_ROOT_LEVELS = 8
_BUILD_MARKERS = ("setup.py", "CMakeLists.txt", "pyproject.toml")
# Python build helpers setup.py imports live in folders named so (`install/`, `cupy_builder/`, `build_tools/`).
_BUILD_FOLDER = re.compile(r"(?i)(?:^|[/\\_-])(?:build(?:er|ers|_tools)?|install|setup)(?:$|[/\\_-])")
_MAX_FILE_BYTES = 2_000_000

# Tokens that show which vendor an `#if` arm is written for.
_ROCM_ARM = re.compile(
    rb"#\s*include\s*[<\"](?:hip|hipcub|rocprim|rocblas|hipblas)\w*/|\bhip[A-Z]\w*|\bhipcub::|\brocprim::|__builtin_amdgcn_"
)
_NVIDIA_ARM = re.compile(
    rb"#\s*include\s*[<\"](?:cuda|cub/|cublas|cudnn|cusparse|curand|cufft|nvml|mma\.h|cooperative_groups)|\bcuda[A-Z]\w*|\bcub::|\bnvcuda::|\bcublas[A-Z]\w*"
)
_SINGLE_MACRO = re.compile(r"\s*(!?)\s*(?:defined\s*\(?\s*)?([A-Za-z_]\w*)\s*\)?\s*")
# Integer constants a header declares at namespace or class scope: `constexpr` anywhere, `const` unindented.
_CONSTANT = re.compile(
    rb"^(?:[ \t]*(?:static\s+|inline\s+)*constexpr|(?:static\s+)?const)\s+(?:static\s+)?(?:const\s+)?"
    rb"(?:unsigned\s+|signed\s+)?(?:int|long|short|size_t|u?int(?:8|16|32|64)_t|unsigned|auto)\s+([A-Za-z_]\w*)"
    rb"\s*=\s*([^;{}\n]+);",
    re.MULTILINE,
)
_TYPE_ALIAS = re.compile(rb"[ \t]*(?:typedef\s+[\w:<>\s*]+?\s+([A-Za-z_]\w*)\s*;|using\s+([A-Za-z_]\w*)\s*=)")
_TYPE_KEYWORD = re.compile(rb"\b(?:typedef|using)\b")
# Files other files include: only their integer constants are ever looked up from elsewhere.
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")
_STANDARD_MACROS = frozenset({"NDEBUG", "DEBUG", "_DEBUG"})
_AMD_BUILTIN = re.compile(rb"__builtin_amdgcn_\w+")
_INCLUDE_GUARD_SUFFIX = re.compile(r"_(?:H|HH|HPP|CUH|INL|INCLUDED|H_|HPP_|CUH_)$")


@dataclass(frozen=True)
class Definition:
    """A name a file defines (`#define`, `constexpr`, `typedef`/`using`) and where that is compiled."""

    name: str
    value: str | None  # an object-like macro's or constant's text; None for function-like macros and types
    line: int
    branch: Branch
    parameters: int | None = None  # a function-like macro's parameter count


@dataclass(frozen=True)
class IncludeFact:
    header: str
    system: bool
    line: int
    branch: Branch


@dataclass(frozen=True)
class FileFacts:
    """What one C/C++ file tells the project model, as read with the vendor macros known so far."""

    path: str
    defines: tuple[Definition, ...]
    constants: tuple[Definition, ...]
    types: tuple[Definition, ...]
    includes: tuple[IncludeFact, ...]
    tested: frozenset[str]  # macros its `#if`s test
    arm_votes: tuple[tuple[str, str, int], ...]  # (macro, vendor its true arm is written for, line)
    amd_builtins: bool  # `__builtin_amdgcn_*` outside any vendor branch
    guard: str | None

    @property
    def conditional(self) -> bool:
        """Whether any definition or include depends on a vendor branch (worth reading again once more macros are
        known)."""
        return any(d.branch != EVERYWHERE for d in (*self.defines, *self.constants, *self.types)) or any(
            i.branch != EVERYWHERE for i in self.includes
        )


def read_facts(path: str, text: str, macros: VendorMacros, base: Branch = EVERYWHERE) -> FileFacts:
    preprocessor = analyse(text, macros, base)
    data = text.encode("utf-8", "surrogatepass")
    lines = _Lines(data)
    defines = tuple(
        Definition(
            d.name,
            d.value if d.parameters is None else None,
            d.directive.line,
            d.directive.branch,
            None if d.parameters is None else len(d.parameters),
        )
        for found in preprocessor.defines.values()
        for d in found
    )
    return FileFacts(
        path=path,
        defines=defines,
        constants=tuple(_constants(data, lines, preprocessor)) if path.endswith(_HEADER_SUFFIXES) else (),
        types=tuple(_types(data, lines, preprocessor)),
        includes=tuple(
            IncludeFact(i.header, i.system, i.directive.line, i.directive.branch) for i in preprocessor.includes
        ),
        tested=frozenset(name for d in preprocessor.directives if _is_test(d) for name in names_in(d.condition)),
        arm_votes=tuple(_arm_votes(data, preprocessor)),
        amd_builtins=_has_ungated_amd_builtin(data, preprocessor),
        guard=_guard(preprocessor),
    )


def _is_test(directive: Directive) -> bool:
    return directive.kind in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef")


def _guard(preprocessor: Preprocessor) -> str | None:
    directives = preprocessor.directives
    if len(directives) >= 2 and directives[0].kind == "ifndef" and directives[1].kind == "define":
        name = directives[0].text.strip()
        return name if directives[1].text.split()[:1] == [name] else None
    return None


class _Lines:
    """Line numbers of byte offsets, by bisecting the newlines of the encoded file (found on first use: most
    files define no constant or remap)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._newlines: list[int] | None = None

    def line(self, offset: int) -> int:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer(rb"\n", self._data)]
        return bisect.bisect_left(self._newlines, offset) + 1


def _constants(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    if b"const" not in data:
        return
    for match in _CONSTANT.finditer(data):
        value = match.group(2).decode("utf-8", "replace").strip()
        yield Definition(
            match.group(1).decode(), value, lines.line(match.start()), preprocessor.branch_at(match.start())
        )


def _types(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    if not preprocessor.excludes_nvidia_somewhere:
        return  # only ROCm-only type names can be remaps
    for keyword in _TYPE_KEYWORD.finditer(data):
        branch = preprocessor.branch_at(keyword.start())
        if branch.on_nvidia is not False:
            continue  # only ROCm-only type names can be remaps; the rest are not needed
        line_start = data.rfind(b"\n", 0, keyword.start()) + 1
        match = _TYPE_ALIAS.match(data, line_start)
        if match is not None and match.end() > keyword.start():
            name = (match.group(1) or match.group(2)).decode()
            yield Definition(name, None, lines.line(keyword.start()), branch)


def _has_ungated_amd_builtin(data: bytes, preprocessor: Preprocessor) -> bool:
    return any(preprocessor.branch_at(m.start()) == EVERYWHERE for m in _AMD_BUILTIN.finditer(data))


def _arm_votes(data: bytes, preprocessor: Preprocessor) -> Iterator[tuple[str, str, int]]:
    """For each `#if X` / `#ifdef X` / `#ifndef X` chain whose arms are written for different vendors: (X, the
    vendor of the arm taken when X is true, line)."""
    if not _may_hold_rocm_arm(data):
        return  # no arm can be written for ROCm
    guard = _guard(preprocessor)
    macros = preprocessor.macros
    known = macros.rocm | macros.rocm_pass | macros.nvidia | macros.stale_gates
    stack: list[tuple[Directive, list[tuple[int, int]]]] = []
    for directive in preprocessor.directives:
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef"):
            stack.append((directive, [(directive.end_byte, -1)]))
        elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
            arms = stack[-1][1]
            arms[-1] = (arms[-1][0], directive.start_byte)
            arms.append((directive.end_byte, -1) if kind == "else" else (directive.end_byte, -2))
        elif kind == "endif" and stack:
            opening, arms = stack.pop()
            arms[-1] = (arms[-1][0], directive.start_byte)
            if opening.kind == "ifndef" and opening.text.strip() == guard:
                continue  # the include guard: its one arm is the whole file
            if _tested_macro(opening) in known:
                continue  # a macro rocmlint knows already (`USE_ROCM`): nothing to learn from its arms
            vote = _vote(opening, arms, data)
            if vote is not None:
                yield vote[0], vote[1], opening.line


def _tested_macro(opening: Directive) -> str | None:
    match = _SINGLE_MACRO.fullmatch(opening.condition)
    return None if match is None else match.group(2)


def _may_hold_rocm_arm(data: bytes) -> bool:
    """Whether `data` holds what every _ROCM_ARM token starts with: `hip` at a word start, `rocprim`, an AMD
    builtin. Found with `bytes.find` (a regex with a word boundary scans far slower)."""
    if b"rocprim" in data or b"__builtin_amdgcn_" in data:
        return True
    position = data.find(b"hip")
    while position >= 0:
        if position == 0 or not (chr(data[position - 1]).isalnum() or data[position - 1] == 0x5F):
            return True
        position = data.find(b"hip", position + 3)
    return False


def _vote(opening: Directive, arms: list[tuple[int, int]], data: bytes) -> tuple[str, str] | None:
    match = _SINGLE_MACRO.fullmatch(opening.condition)
    if match is None or len(arms) > 2 or any(end < 0 for _, end in arms[:-1]):
        return None
    negated, name = bool(match.group(1)), match.group(2)
    first = _arm_vendor(data[arms[0][0] : arms[0][1]])
    second = _arm_vendor(data[arms[1][0] : arms[1][1]]) if len(arms) == 2 else None
    if first is None or second is None or second == first:
        return None  # one arm written for a vendor and a plain other one (`#ifndef NDEBUG`) decides nothing
    other = {"rocm": "nvidia", "nvidia": "rocm"}[first]
    return name, other if negated else first


def _arm_vendor(arm: bytes) -> str | None:
    rocm, nvidia = bool(_ROCM_ARM.search(arm)), bool(_NVIDIA_ARM.search(arm))
    if rocm == nvidia:
        return None
    return "rocm" if rocm else "nvidia"


# --- the model --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileView:
    """What the project tells the check of one file."""

    learned: Mapping[str, LearnedMacro] = field(default_factory=dict)
    base: Branch = EVERYWHERE  # where the file is compiled at all (from the #ifs its includers put it in)
    base_evidence: str = ""
    defines: Mapping[str, str] = field(default_factory=dict)  # object-like macros of its headers, as ROCm sees them
    constants: Mapping[str, str] = field(default_factory=dict)  # constexpr/const integers of its headers
    # A name the project remaps for ROCm only -> ("path:line" of the remap, its parameter count if function-like)
    aliases: Mapping[str, tuple[str, int | None]] = field(default_factory=dict)
    rocm_native: str = ""  # why the file is written for AMD ("" when it is not)
    hipified: str = ""  # why the ROCm build renames CUDA names in the file (hipify), "" when it does not
    rocm_build_defines: frozenset[str] = frozenset()  # every macro the build defines for ROCm (`__HIP_*__` too)
    dependencies: tuple[str, ...] = ()  # files the view was read from


EMPTY_VIEW = FileView()

# name -> (file defining it, its value or "path:line", its parameter count) of every definition in the project
_Index = dict[str, list[tuple[str, str, int | None]]]


class _Visible(Mapping[str, str]):
    """The values some files (a file's include closure) give names, looked up in a project-wide index when asked:
    a name they give two different values is not there."""

    def __init__(self, index: _Index, files: frozenset[str]) -> None:
        self._index = index
        self._files = files

    def __getitem__(self, name: str) -> str:
        values = {value for path, value, _ in self._index.get(name, ()) if path in self._files}
        if len(values) != 1:
            raise KeyError(name)
        return values.pop()

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._index if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Remaps(Mapping[str, tuple[str, int | None]]):
    """Names some files define only for ROCm -> ("path:line", parameter count), from a project-wide index."""

    def __init__(self, index: _Index, files: frozenset[str]) -> None:
        self._index = index
        self._files = files

    def __getitem__(self, name: str) -> tuple[str, int | None]:
        found = next(((where, count) for path, where, count in self._index.get(name, ()) if path in self._files), None)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._index if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class CudaProject:
    """The project model of one root folder (see the module's docstring)."""

    root: Path
    files: dict[str, FileFacts]  # by absolute path
    build_facts: BuildFacts
    learned: dict[str, LearnedMacro]
    _includers: dict[str, list[tuple[str, IncludeFact]]] = field(default_factory=dict)
    _resolved: dict[tuple[str, str, bool], str | None] = field(default_factory=dict)
    _bases: dict[str, tuple[Branch, str]] = field(default_factory=dict)
    _closures: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _by_name: dict[str, list[str]] = field(default_factory=dict)
    _edges: dict[str, list[tuple[str, IncludeFact]]] = field(default_factory=dict)  # includer -> resolved includes
    _values: dict[str, _Index] = field(default_factory=dict)  # "defines" / "constants" / "remaps" -> index
    _set_vendors: dict[SourceSet, str | None] = field(default_factory=dict)

    # --- building ---------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, root: Path) -> CudaProject:
        texts, build = _read_tree(root)
        learned = _learn_from_build(build)
        macros = VendorMacros().with_learned(learned)
        files = {path: read_facts(path, text, macros) for path, text in texts.items()}
        learned = _learn(files, build, learned)
        # Read again the files whose definitions and includes depend on branches, now that more macros are
        # known (`#if !defined(XYZ_HIP) && __CUDA_ARCH__ >= 700 #define MMA_AVAILABLE` needs XYZ_HIP first).
        macros = VendorMacros().with_learned(learned)
        # Only macros the well-known tables do not already decide change how a file reads.
        deciding = set(learned) - (macros.rocm | macros.rocm_pass | macros.nvidia | macros.stale_gates)
        for path, facts in files.items():
            if facts.conditional and not facts.tested.isdisjoint(deciding):
                files[path] = read_facts(path, texts[path], macros)
        learned = _learn(files, build, learned)
        project = cls(root, files, build, learned)
        project.learned = {
            name: replace(m, evidence=replace(m.evidence, path=project._relative(m.evidence.path)))
            for name, m in learned.items()
        }
        project._index()
        return project

    def _index(self) -> None:
        for path in self.files:
            self._by_name.setdefault(os.path.basename(path), []).append(path)
        for path, facts in self.files.items():
            for include in facts.includes:
                target = self.resolve(path, include.header, include.system)
                if target is not None:
                    self._includers.setdefault(target, []).append((path, include))
                    self._edges.setdefault(path, []).append((target, include))
        for kind in ("defines", "constants"):
            index: _Index = self._values.setdefault(kind, {})
            for path, facts in self.files.items():
                for definition in getattr(facts, kind):
                    if definition.value and definition.branch.on_rocm is not False:
                        index.setdefault(definition.name, []).append((path, definition.value, None))
        remaps: _Index = self._values.setdefault("remaps", {})
        for path, facts in self.files.items():
            if not facts.defines and not facts.types:
                continue
            base, _ = self._base(path, frozenset())  # a header only ROCm includes (`vendors/hip.h`) is ROCm's
            for definition in (*facts.defines, *facts.types):
                only_rocm = definition.branch.on_nvidia is False or base.on_nvidia is False
                if only_rocm and definition.branch.on_rocm is not False and base.on_rocm is not False:
                    where = f"{self._relative(path)}:{definition.line}"
                    remaps.setdefault(definition.name, []).append((path, where, definition.parameters))

    # --- queries ----------------------------------------------------------------------------------------------
    def resolve(self, includer: str, header: str, system: bool) -> str | None:
        """The project file an `#include` names: next to the includer (quoted), else the one project file whose
        path ends with the included path (as the build's `-I` folders would find it); None outside the tree."""
        key = (os.path.dirname(includer), header, system)
        if key in self._resolved:
            return self._resolved[key]
        found: str | None = None
        if not system:
            candidate = os.path.normpath(os.path.join(key[0], header))
            found = candidate if candidate in self.files else None
        if found is None and (not system or "/" in header):
            suffix = "/" + header.lstrip("./")
            matches = [p for p in self._by_name.get(os.path.basename(header), ()) if p.endswith(suffix)]
            found = matches[0] if len(matches) == 1 else None
        self._resolved[key] = found
        return found

    def view(self, path: str) -> FileView:
        path = os.path.abspath(path)
        closure = frozenset(self._closure(path))
        around = frozenset((path, *closure, *self._includers_closures(path)))
        base, base_evidence = self._base(path, frozenset())
        return FileView(
            learned=self.learned,
            base=base,
            base_evidence=base_evidence,
            defines=_Visible(self._values["defines"], closure),
            constants=_Visible(self._values["constants"], closure),
            aliases=_Remaps(self._values["remaps"], around),
            rocm_native=self._rocm_native(path),
            hipified=self._relative_evidence(self.build_facts.hipify),
            rocm_build_defines=self._rocm_build_defines,
            dependencies=tuple(sorted(around)),
        )

    def _closure(self, path: str) -> tuple[str, ...]:
        """Every project header `path` includes, directly or through others (not `path` itself)."""
        if path in self._closures:
            return self._closures[path]
        seen: dict[str, None] = {}
        pending = [path]
        while pending:
            current = pending.pop()
            for target, include in self._edges.get(current, ()):
                if include.branch.on_rocm is False:
                    continue  # an NVIDIA-only include: ROCm never sees what that header defines
                if target != path and target not in seen:
                    seen[target] = None
                    pending.append(target)
        self._closures[path] = tuple(seen)
        return self._closures[path]

    def _base(self, path: str, visiting: frozenset[str]) -> tuple[Branch, str]:
        """Where a file is compiled at all: not on a vendor whose build reaches none of the `#include`s of it (they
        sit in that vendor's excluded branches, or in files it does not compile), nor on ROCm when the build lists
        it for NVIDIA only; else wherever its own `#if`s say."""
        if path in self._bases:
            return self._bases[path]
        includers = self._includers.get(path, [])
        if path in visiting:
            return EVERYWHERE, ""
        if not includers:
            built_for = self._built_only_for_nvidia(path)
            self._bases[path] = (Branch(False, None), built_for) if built_for else (EVERYWHERE, "")
            return self._bases[path]
        reaches_rocm: list[Tri] = []
        reaches_nvidia: list[Tri] = []
        for includer, include in includers:
            outer, _ = self._base(includer, visiting | {path})
            reaches_rocm.append(False if outer.on_rocm is False else include.branch.on_rocm)
            reaches_nvidia.append(False if outer.on_nvidia is False else include.branch.on_nvidia)
        no_rocm = all(value is False for value in reaches_rocm)
        no_nvidia = all(value is False for value in reaches_nvidia)
        first = f"{self._relative(includers[0][0])}:{includers[0][1].line}"
        if no_rocm:
            result = Branch(False, False if no_nvidia else None), f"{first}: included only where ROCm does not compile"
        elif no_nvidia:
            result = Branch(None, False), f"{first}: included only where NVIDIA does not compile"
        else:
            result = EVERYWHERE, ""
        self._bases[path] = result
        return result

    @cached_property
    def _has_rocm_build(self) -> bool:
        """Whether the build files build for ROCm at all (a HIP language, hipify, a ROCm-only definition or source)."""
        facts = self.build_facts
        return (
            facts.hip_language
            or bool(facts.hipify)
            or any(d.vendor == "rocm" for d in facts.defines)
            or any(s.vendor == "rocm" for s in facts.sources)
        )

    @cached_property
    def _rocm_build_defines(self) -> frozenset[str]:
        return frozenset(d.name for d in self.build_facts.defines if d.vendor == "rocm")

    def _built_only_for_nvidia(self, path: str) -> str:
        """Evidence that the build compiles `path` for NVIDIA only: the most specific source sets of the build files
        naming it (`add_subdirectory(cuda)` inside `if(BUILD_CUDA)`, `sources += cuda_sources` under `if use_cuda:`)
        are all NVIDIA's. "" otherwise."""
        if not self._has_rocm_build:
            return ""  # nothing is built for ROCm yet: every CUDA source is one to port
        matching = self._sources_naming(path)
        if not matching or all(self._vendor_of(s) != "nvidia" for _, s in matching):
            return ""
        most_specific = max(length for length, _ in matching)
        deciding = [s for length, s in matching if length == most_specific]
        if any(self._vendor_of(s) != "nvidia" for s in deciding):
            return ""
        first = deciding[0]
        return f"{self._relative(first.path)}:{first.line}: the build compiles it for NVIDIA only"

    def _vendor_of(self, sources: SourceSet, depth: int = 0) -> str | None:
        """The vendor a source set is built for: its own, else that of the `add_subdirectory` that brings its CMake
        file's folder into the build (`cuda/CMakeLists.txt` lists its files whatever the vendor, but the top
        file adds `cuda/` inside `if(BUILD_CUDA)`)."""
        if sources.vendor is not None or not sources.path.endswith(("CMakeLists.txt", ".cmake")) or depth > 16:
            return sources.vendor
        if sources in self._set_vendors:
            return self._set_vendors[sources]
        self._set_vendors[sources] = self._inherited_vendor(sources, depth)
        return self._set_vendors[sources]

    def _inherited_vendor(self, sources: SourceSet, depth: int) -> str | None:
        folder = os.path.dirname(os.path.abspath(sources.path))
        adding = [
            (length, s)
            for length, s in self._sources_naming(os.path.join(folder, "CMakeLists.txt"))
            if s is not sources
        ]
        if not adding:
            return None
        most_specific = max(length for length, _ in adding)
        vendors = {self._vendor_of(s, depth + 1) for length, s in adding if length == most_specific}
        return vendors.pop() if len(vendors) == 1 else None

    def _sources_naming(self, path: str) -> list[tuple[int, SourceSet]]:
        """(specificity: the length of the named path before any wildcard, set) of every source set naming `path`."""
        exact, folders, globs = self._source_index
        found = [(len(path), s) for s in exact.get(path, ())]
        folder = os.path.dirname(path)
        while True:
            found += [(len(folder), s) for s in folders.get(folder, ())]
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        found += [(prefix, s) for pattern, prefix, s in globs if pattern.fullmatch(path)]
        return found

    @cached_property
    def _source_index(
        self,
    ) -> tuple[dict[str, list[SourceSet]], dict[str, list[SourceSet]], list[tuple[re.Pattern[str], int, SourceSet]]]:
        """The build's source sets by absolute path: exact files, whole folders (`dir/**`), other globs."""
        exact: dict[str, list[SourceSet]] = {}
        folders: dict[str, list[SourceSet]] = {}
        globs: list[tuple[re.Pattern[str], int, SourceSet]] = []
        for sources in self.build_facts.sources:
            named = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(sources.path)), sources.pattern))
            if "*" not in named:
                exact.setdefault(named, []).append(sources)
            elif named.endswith(os.sep + "**") and "*" not in named[:-3]:
                folders.setdefault(named[:-3], []).append(sources)
            else:
                globs.append((_pattern(named), len(named.split("*")[0]), sources))
        return exact, folders, globs

    def _includers_closures(self, path: str) -> list[str]:
        """The files that include `path` and everything they include: a header's code is compiled after what its
        includers included before it (`compat.cuh` remapping `__stwb` for the `cache.cuh` a kernel includes
        next)."""
        found: list[str] = []
        for includer in self._includer_files(path):
            found += [includer, *self._closure(includer)]
        return found

    def _includer_files(self, path: str) -> list[str]:
        return [includer for includer, _ in self._includers.get(path, [])]

    def _rocm_native(self, path: str) -> str:
        if self.builds_hip_only():
            return "the project's build compiles HIP only"
        facts = self.files.get(path)
        if facts is not None and facts.amd_builtins:
            return "the file calls __builtin_amdgcn_* outside any vendor branch"
        return ""

    def _relative_evidence(self, evidence: str) -> str:
        path, colon, rest = evidence.partition(":")
        return f"{self._relative(path)}{colon}{rest}" if colon else evidence

    def _relative(self, path: str) -> str:
        try:
            return os.path.relpath(path, self.root)
        except ValueError:
            return path

    # --- queries for `rocmlint project` and the report (read-only, over the whole project) ---------------------
    def builds_hip_only(self) -> bool:
        """The build compiles the HIP language and neither CUDA nor torch extensions: a ROCm-native project."""
        build = self.build_facts
        return build.hip_language and not build.cuda_language and not build.torch_extension

    def header_constants(self) -> Iterator[tuple[str, Definition, str]]:
        """(path, definition, "macro" or "constant") of each object-like macro and integer constant with a value
        that a header (a file some project file includes) defines where ROCm compiles: what views offer as
        `defines` and `constants`."""
        for path in sorted(self._includers):
            facts = self.files[path]
            for kind, definitions in (("macro", facts.defines), ("constant", facts.constants)):
                for definition in definitions:
                    if definition.value and definition.branch.on_rocm is not False:
                        yield path, definition, kind

    def rocm_remaps(self) -> dict[str, tuple[str, int | None]]:
        """The names the project defines only for ROCm (what views offer as `aliases`, over every file) and nowhere
        NVIDIA compiles -> ("path:line" of the first, parameter count). Neither a name with one value per vendor
        (`#if HIP #define WARP 64 #else #define WARP 32`) nor a learned vendor macro (a flag, not a spelling of a
        CUDA name) is one."""
        on_nvidia = {
            d.name for f in self.files.values() for d in (*f.defines, *f.types) if d.branch.on_nvidia is not False
        }
        return {
            name: (found[0][1], found[0][2])
            for name, found in sorted(self._values["remaps"].items())
            if name not in on_nvidia and name not in self.learned
        }

    def nvidia_only_files(self) -> dict[str, str]:
        """Files the ROCm build never compiles (included only from NVIDIA-only branches, or built for NVIDIA only)
        -> the evidence."""
        found: dict[str, str] = {}
        for path in sorted(self.files):
            base, evidence = self._base(path, frozenset())
            if base.on_rocm is False:
                found[path] = evidence
        return found

    def rocm_native_files(self) -> dict[str, str]:
        """Files written for AMD -> why (see `FileView.rocm_native`)."""
        return {path: why for path in sorted(self.files) if (why := self._rocm_native(path))}


# --- reading the tree ---------------------------------------------------------------------------------------------


def _read_tree(root: Path) -> tuple[dict[str, str], BuildFacts]:
    texts: dict[str, str] = {}
    build_facts: list[BuildFacts] = []
    for path in _walk(root):
        name = os.path.basename(path)
        suffix = os.path.splitext(name)[1]
        python_build = name == "setup.py" or (
            suffix == ".py" and _BUILD_FOLDER.search(os.path.relpath(os.path.dirname(path), root))
        )
        is_build = bool(python_build) or name == "CMakeLists.txt" or suffix == ".cmake"
        if suffix not in SOURCE_SUFFIXES and not is_build:
            continue
        try:
            if os.path.getsize(path) > _MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        if python_build:
            build_facts.append(setup_py_facts(path, text))
        elif is_build:
            build_facts.append(cmake_facts(path, text))
        else:
            texts[path] = text.removeprefix("\ufeff")  # every file: one without directives is still included
    return texts, _merge(build_facts)


def _walk(root: Path) -> Iterator[str]:
    count = 0
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s not in _SKIPPED_FOLDERS and not s.startswith("."))
        for name in sorted(names):
            count += 1
            if count > _MAX_FILES:
                return
            yield os.path.join(folder, name)


@lru_cache(maxsize=4096)
def _pattern(glob: str) -> re.Pattern[str]:
    parts = re.split(r"(\*\*/|\*\*|\*)", glob.replace(os.sep, "/").removeprefix("./"))
    wildcards = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*"}
    return re.compile("".join(wildcards.get(part, re.escape(part)) for part in parts))


def _merge(facts: list[BuildFacts]) -> BuildFacts:
    return BuildFacts(
        defines=tuple(d for f in facts for d in f.defines),
        sources=tuple(s for f in facts for s in f.sources),
        torch_extension=any(f.torch_extension for f in facts),
        hipify=next((f.hipify for f in facts if f.hipify), ""),
        hip_language=any(f.hip_language for f in facts),
        cuda_language=any(f.cuda_language for f in facts),
    )


# --- learning vendor macros ---------------------------------------------------------------------------------------


def _learn_from_build(build: BuildFacts) -> dict[str, LearnedMacro]:
    """Macros the build defines for one vendor only. One it defines for both, or whatever the vendor, is no
    vendor's (it is left out here and blocks the weaker evidence, see `_learn`)."""
    by_name: dict[str, list[BuildDefine]] = {}
    for define in build.defines:
        by_name.setdefault(define.name, []).append(define)
    learned: dict[str, LearnedMacro] = {}
    for name, defines in by_name.items():
        vendors = {d.vendor for d in defines}
        if len(vendors) != 1 or None in vendors:
            continue
        vendor = vendors.pop()
        assert vendor is not None
        first = defines[0]
        value = parse_int(first.value) if first.value is not None else 1
        defined = MacroState(True, value)
        learned[name] = LearnedMacro(
            name,
            vendor,
            defined if vendor == "rocm" else MacroState(False, 0),
            defined if vendor == "nvidia" else MacroState(False, 0),
            MacroEvidence("build", first.path, first.line, f"the {_vendor_name(vendor)} build defines it"),
        )
    return learned


def _learn(
    files: Mapping[str, FileFacts], build: BuildFacts, from_build: Mapping[str, LearnedMacro]
) -> dict[str, LearnedMacro]:
    learned = dict(from_build)
    built_everywhere = {d.name for d in build.defines} - set(from_build)
    guards = {f.guard for f in files.values() if f.guard}
    decided = set(learned) | built_everywhere | guards
    for macro in _learn_from_headers(files, guards):
        if macro.name not in decided:
            learned[macro.name] = macro
    decided |= set(learned) | _defined_everywhere(files)
    for macro in _learn_from_arms(files):
        if macro.name not in decided:
            learned[macro.name] = macro
    decided |= set(learned)
    for macro in _learn_from_names(files):
        if macro.name not in decided:
            learned[macro.name] = macro
    return {name: macro for name, macro in learned.items() if not _reserved(name)}


def _reserved(name: str) -> bool:
    """Names of the compiler and the standard library (`__CUDA_ARCH__`, `_WIN32`, `NDEBUG`): rocmlint knows
    the vendors' own (rocmlint/cuda/preprocessor.py); a project defining one does not make it a gate."""
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper()) or name in _STANDARD_MACROS


def _definitions_by_name(files: Mapping[str, FileFacts], guards: set[str]) -> dict[str, list[tuple[str, Definition]]]:
    found: dict[str, list[tuple[str, Definition]]] = {}
    for path, facts in files.items():
        for definition in facts.defines:
            if definition.name not in guards:
                found.setdefault(definition.name, []).append((path, definition))
    return found


def _defined_everywhere(files: Mapping[str, FileFacts]) -> set[str]:
    """Macros some file defines outside any vendor branch: a value, not a vendor test."""
    return {
        d.name
        for f in files.values()
        for d in f.defines
        if d.branch.on_rocm is not False and d.branch.on_nvidia is not False
    }


def _learn_from_headers(files: Mapping[str, FileFacts], guards: set[str]) -> Iterator[LearnedMacro]:
    """A macro every definition of which sits in vendor-decided branches: defined only for one vendor, or with a
    true value on one and a false value on the other."""
    tested = {name for facts in files.values() for name in facts.tested}
    for name, definitions in _definitions_by_name(files, guards).items():
        if name not in tested:
            continue  # a macro no `#if` tests gates nothing (a remap is an alias, see FileView.aliases)
        rocm = _state([d for _, d in definitions], "rocm")
        nvidia = _state([d for _, d in definitions], "nvidia")
        vendor = _deciding_vendor(rocm, nvidia)
        if vendor is None:
            continue
        path, definition = next(
            (
                (p, d)
                for p, d in definitions
                if (d.branch.on_rocm if vendor == "rocm" else d.branch.on_nvidia) is not False
            ),
            definitions[0],
        )
        condition = "ROCm" if vendor == "rocm" else "NVIDIA"
        why = f"defined under a {condition}-only condition"
        yield LearnedMacro(name, vendor, rocm, nvidia, MacroEvidence("header", path, definition.line, why))


def _state(definitions: list[Definition], vendor: str) -> MacroState:
    reached = [(d.branch.on_rocm if vendor == "rocm" else d.branch.on_nvidia, d) for d in definitions]
    seen = [d for r, d in reached if r is not False]
    if not seen:
        return MacroState(False, 0)
    values = {parse_int(d.value) if d.value is not None else None for d in seen}
    value = values.pop() if len(values) == 1 else None
    defined: Tri = True if any(r is True for r, _ in reached) else None
    return MacroState(defined, value)


def _deciding_vendor(rocm: MacroState, nvidia: MacroState) -> str | None:
    if rocm.defined is False and nvidia.defined is not False:
        return "nvidia"
    if nvidia.defined is False and rocm.defined is not False:
        return "rocm"
    if rocm.defined is True and nvidia.defined is True and rocm.value is not None and nvidia.value is not None:
        if bool(rocm.value) != bool(nvidia.value):
            return "rocm" if rocm.value else "nvidia"
    return None


def _learn_from_arms(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    votes: dict[str, dict[str, tuple[str, int]]] = {}
    for path, facts in files.items():
        for name, vendor, line in facts.arm_votes:
            votes.setdefault(name, {}).setdefault(vendor, (path, line))
    for name, by_vendor in votes.items():
        if len(by_vendor) != 1:
            continue  # arms disagree: not decided by its uses
        vendor, (path, line) = next(iter(by_vendor.items()))
        why = f"its #if arms are written for {_vendor_name(vendor)}"
        yield _flag(name, vendor, MacroEvidence("arms", path, line, why))


def _learn_from_names(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    tested = {name for facts in files.values() for name in facts.tested}
    first_use: dict[str, str] = {}
    for path, facts in files.items():
        for name in facts.tested:
            first_use.setdefault(name, path)
    for name in sorted(tested):
        if _INCLUDE_GUARD_SUFFIX.search(name) or "VERSION" in name.upper() or "ARCH" in name:
            continue  # version and arch macros are values, not vendor tests; guards are no gates
        vendor = vendor_of_words(name)
        if vendor is not None:
            yield _flag(
                name, vendor, MacroEvidence("name", first_use[name], None, f"its name says {_vendor_name(vendor)}")
            )


def _flag(name: str, vendor: str, evidence: MacroEvidence) -> LearnedMacro:
    """A macro defined (as `-DNAME`, value 1) on `vendor`'s build only."""
    on = MacroState(True, 1)
    off = MacroState(False, 0)
    return LearnedMacro(name, vendor, on if vendor == "rocm" else off, on if vendor == "nvidia" else off, evidence)


def _vendor_name(vendor: str) -> str:
    return "ROCm" if vendor == "rocm" else "NVIDIA"


def project_root(path: Path, configured_root: Path) -> Path:
    """The folder whose files make a file's project: the configuration's root (or the working directory) when the
    file is inside it; else the repository holding it (the closest folder with `.git`), or the outermost folder
    with a build file (setup.py, CMakeLists.txt, pyproject.toml) within MAX_ROOT_LEVELS; else its own folder."""
    absolute = Path(os.path.abspath(path))
    root = Path(os.path.abspath(configured_root))
    if absolute.is_relative_to(root):
        return root
    found = absolute.parent
    for level, folder in enumerate(absolute.parents):
        if level >= MAX_ROOT_LEVELS:
            break
        if any((folder / marker).exists() for marker in _BUILD_MARKERS):
            found = folder
        if (folder / ".git").exists():
            return folder
    return found


# --- one model per root per process ---------------------------------------------------------------------------------
_MODELS: dict[Path, CudaProject] = {}


def project_for(root: Path) -> CudaProject:
    """The model of `root`, built on first use in this process (a pool's forked workers inherit the parent's)."""
    root = Path(os.path.abspath(root))
    model = _MODELS.get(root)
    if model is None:
        model = _MODELS[root] = CudaProject.build(root)
    return model


def forget_projects() -> None:
    """Drop every model built so far (a long-running server does when files are saved)."""
    _MODELS.clear()
