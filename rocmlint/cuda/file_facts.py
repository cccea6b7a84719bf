"""What one C/C++ file tells the C++ project model (rocmlint/cuda/project.py): its definitions and where they are
compiled, its includes, the macros its `#if`s test, and the `#if` chains whose arms are written for different
vendors. Read from the preprocessor's analysis and the bytes, never from tree-sitter.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from rocmlint.cuda.preprocessor import (
    NVCC_COMPILER_MACROS,
    Directive,
    Preprocessor,
    VendorMacros,
    analyse,
    call_arguments,
    is_amd_target_macro,
    names_in,
    unused_parameters,
)
from rocmlint.cuda.value_selectors import ValueVote, value_arms
from rocmlint.vendor import EVERYWHERE, Branch

# Tokens that show which vendor an `#if` arm is written for.
_ROCM_ARM = re.compile(
    rb"#\s*include\s*[<\"](?:hip|hipcub|rocprim|rocblas|hipblas|rocm_smi|amd_smi|rocrand|roctracer|rocprofiler)\w*/"
    rb"|\bhip[A-Z]\w*|\bhipcub::|\brocprim::|__builtin_amdgcn_"
    rb"|\broc(?:blas|sparse|solver|fft|rand)_\w+"  # a ROCm library's own names (`rocblas_double_complex`)
)
_NVIDIA_ARM = re.compile(
    rb"#\s*include\s*[<\"](?:cuda|cub/|cublas|cudnn|cusparse|curand|cufft|nvml|mma\.h|cooperative_groups)|\bcuda[A-Z]\w*|\bcub::|\bnvcuda::|\bcublas[A-Z]\w*"
)
_SINGLE_MACRO = re.compile(r"\s*(!?)\s*(?:defined\s*\(?\s*)?([A-Za-z_]\w*)\s*\)?\s*")
# A call of NVRTC's or hipRTC's API (`nvrtcCompileProgram(`), or of jitify, NVRTC's wrapper (`jitify::`).
_RUNTIME_COMPILE = re.compile(rb"\b(?:nvrtc|hiprtc)[A-Z]\w*\s*\(|\bjitify::")
# A compiler option defining a macro that opens a string literal, as a program compiling its kernels at run time
# passes it to nvcc, hipcc, NVRTC or hipRTC (`"--define-macro=XYZ_TARGET_ARCH=" + cc`, `"-DXYZ_USE_HIP"`): the name,
# then the value text up to the literal's end (empty where the program appends the value).
_OPTION_DEFINE = re.compile(rb'"\s*(?:-D[ \t]*|--define-macro[= ])([A-Za-z_]\w*)(?:=([^"\s]*))?')
# Integer constants a header declares at namespace or class scope: `constexpr` anywhere, `const` unindented.
_CONSTANT = re.compile(
    rb"^(?:[ \t]*(?:static\s+|inline\s+)*constexpr|(?:static\s+)?const)\s+(?:static\s+)?(?:const\s+)?"
    rb"(?:unsigned\s+|signed\s+)?(?:int|long|short|size_t|u?int(?:8|16|32|64)_t|unsigned|auto)\s+([A-Za-z_]\w*)"
    rb"\s*=\s*([^;{}\n]+);",
    re.MULTILINE,
)
_TYPE_ALIAS = re.compile(rb"[ \t]*(?:typedef\s+[\w:<>\s*]+?\s+([A-Za-z_]\w*)\s*;|using\s+([A-Za-z_]\w*)\s*=)")
_TYPE_KEYWORD = re.compile(rb"\b(?:typedef|using)\b")
# An enum's body and each enumerator's name in it (`enum CUresult { CUDA_SUCCESS = 0, CUDA_ERROR_X, ... }`).
_ENUM_BODY = re.compile(rb"\benum\b[^{;()]*\{([^{}]*)\}")
_ENUMERATOR = re.compile(rb"(?:^|,)\s*(?:(?://[^\n]*|/\*.*?\*/)\s*)*([A-Za-z_]\w*)", re.DOTALL)
# A device function under a reserved `__` name (`static __device__ __forceinline__ int __dp4a(int a, int b, int c)`):
# in a ROCm-only branch, the project's own version of a CUDA intrinsic HIP lacks, which the project's calls use.
_INTRINSIC_FUNCTION = re.compile(
    rb"^[ \t]*(?:[\w:<>]+[ \t]+)*?__device__[ \t]+(?:[\w:<>]+[ \t*&]+)+(__[A-Za-z]\w*)[ \t]*\(", re.M
)
# A device overload of a CUDA atomic on a pointer type (`__device__ __forceinline__ void atomicAdd(half2* address,
# half2 val)`): the project's own version of one HIP lacks (exllamav2's CAS-loop `half2` atomicAdd for ROCm).
_ATOMIC_OVERLOAD = re.compile(
    rb"__device__\b[^;{}()]*?\b(atomic[A-Z]\w*)[ \t]*\([ \t]*(?:const[ \t]+)?([A-Za-z_]\w*)[ \t]*\*"
)
# Files other files include: only their integer constants are ever looked up from elsewhere.
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".hu", ".inl", ".inc")


def is_header(path: str) -> bool:
    """Whether `path` names a header, whatever the case of its suffix (`Lib_Gpu.H`, as compilers read `.H`)."""
    return path.lower().endswith(HEADER_SUFFIXES)


# Translation units a host compiler builds on both vendors (torch's CUDAExtension hands `.cpp` files to the host
# compiler on ROCm as well; CMake's CXX language is the host compiler): nvcc's own macros are undefined there on
# NVIDIA too, unless the build hands them to a CUDA compiler (`build_files.compiles_host_sources_as_cuda`).
HOST_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx")


def is_host_source(path: str) -> bool:
    """Whether `path` names a source file a host compiler builds (`HOST_SOURCE_SUFFIXES`)."""
    return path.lower().endswith(HOST_SOURCE_SUFFIXES)


_AMD_BUILTIN = re.compile(rb"__builtin_amdgcn_\w+")
# The identifier parts `_WAVE64_CONSTANT` needs, lowercased (`WARP_SIZE`, `kWaveSize`, `wavefront_width`): one
# pattern with the literal prefix `wa`, which the regex engine skips to (one pass, not a substring test per name).
_WAVE_SIZE_NAME = re.compile(rb"wa(?:rp|ve(?:front)?)_?(?:size|width)")
# A warp or wave size defined as 64 (`#define WARP_SIZE 64`, `constexpr int kWaveSize = 64;`): no NVIDIA warp is.
_WAVE64_CONSTANT = re.compile(
    rb"(?:#[ \t]*define|\bconstexpr\b[^;=\n]*?)[ \t]+\w*(?:warp|wave|wavefront)_?(?:size|width)\w*[ \t]*=?[ \t]*\(?64\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Definition:
    """A name a file defines (`#define`, `constexpr`, `typedef`/`using`, a ROCm-only `__device__` function under an
    intrinsic's `__` name) and where that is compiled."""

    name: str
    value: str | None  # an object-like macro's or constant's text; None for function-like macros and types
    line: int
    branch: Branch
    parameters: int | None = None  # a function-like macro's parameter count
    # Decided by nvcc's own macros alone: the `#if`s around it test `__CUDA_ARCH__`, `__CUDACC__` or a CUDA
    # version and no ROCm macro (`#if __CUDA_ARCH__ >= 800 #define HAS_BF16`): NVIDIA-only because HIP lacks
    # those macros, not by the project's choice.
    compiler_decided: bool = False
    # A function-like macro's parameters its replacement never names, by position (`preprocessor.unused_parameters`).
    unused: frozenset[int] = frozenset()
    replacement: str = ""  # a macro's replacement text, a function-like one's too (empty for `#define __syncwarp()`)


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
    # Macros whose true arm holds an `#if` testing a ROCm macro (`#ifdef USE_CUDA` around `#ifdef
    # __HIP_PLATFORM_AMD__`): ROCm compiles code under them -> the line of that inner test
    rocm_compiled_under: tuple[tuple[str, int], ...]
    amd_builtins: bool  # `__builtin_amdgcn_*` outside any vendor branch, or a warp size of 64 defined there
    amd_targets_only: bool  # its `#if`s test AMD targets (`__gfx942__`, `__GFX9__`) and never the vendor
    hip_runtime: bool  # includes the HIP runtime header outside its own `#if`s (`Preprocessor.includes_hip_runtime`)
    guard: str | None
    # Device overloads of CUDA atomics it defines where ROCm compiles them: name, value = the pointee type.
    atomic_overloads: tuple[Definition, ...] = ()
    # (X, Y, line of X's arm) for each `#if` chain testing one macro X alone in an arm before an arm testing one
    # macro Y alone (`#if defined(X) ... #elif defined(Y)`): a build defining X never compiles Y's arm.
    tested_before: tuple[tuple[str, str, int], ...] = ()
    runtime_compiles: bool = False  # calls NVRTC or hipRTC (or jitify, NVRTC's wrapper): compiles at run time
    device_code: bool = False  # names `__global__` or `__device__`: code only a CUDA or HIP compiler compiles
    # (line, branch) of each `#error` inside a vendor-decided `#if` arm (`#if !defined(XYZ_ENABLE_CUDA) #error`).
    errors: tuple[tuple[int, Branch], ...] = ()
    # Function-like macros whose body, as ROCm sees it, is one lane exchange: value = `wrapped_call`'s form of it
    # (`#define SHFL_XOR(v, m) __shfl_xor(v, m)` -> `__shfl_xor(#0, #1)`).
    shuffle_wrappers: tuple[Definition, ...] = ()
    # (X, N, vendor, line) for each `#if X == N` / `#elif X == N` arm written for one vendor (`value_selectors`).
    value_votes: tuple[ValueVote, ...] = ()
    # The macros its string literals define as compiler options (`_OPTION_DEFINE`), where the program compiles
    # kernels at run time: value = the option's value text, None where the program appends it.
    option_defines: tuple[Definition, ...] = ()

    @property
    def conditional(self) -> bool:
        """Whether any definition or include depends on a vendor branch (worth reading again once more macros are
        known)."""
        return (
            any(d.branch != EVERYWHERE for d in (*self.defines, *self.constants, *self.types, *self.option_defines))
            or any(i.branch != EVERYWHERE for i in self.includes)
            or bool(self.errors)
        )

    @property
    def rocm_error_line(self) -> int:
        """The line of an `#error` every ROCm build reaches and an NVIDIA build may not (`#if
        !defined(XYZ_ENABLE_CUDA) #error "included without CUDA"`), 0 if none: no ROCm build compiles the file."""
        return next(
            (line for line, branch in self.errors if branch.on_rocm is True and branch.on_nvidia is not True), 0
        )


def read_facts(path: str, text: str, macros: VendorMacros, base: Branch = EVERYWHERE) -> FileFacts:
    preprocessor = analyse(text, macros, base)
    data = text.encode("utf-8", "surrogatepass")
    lines = _Lines(data)
    compiler_decided = _compiler_decided_defines(preprocessor, macros)
    defines = tuple(
        Definition(
            d.name,
            d.value if d.parameters is None else None,
            d.directive.line,
            d.directive.branch,
            None if d.parameters is None else len(d.parameters),
            d.directive.start_byte in compiler_decided,
            unused_parameters(d),
            d.value,
        )
        for found in preprocessor.defines.values()
        for d in found
    )
    return FileFacts(
        path=path,
        defines=defines,
        constants=tuple(_constants(data, lines, preprocessor)) if is_header(path) else (),
        types=tuple(_types(data, lines, preprocessor)),
        atomic_overloads=tuple(_atomic_overloads(data, lines, preprocessor)),
        includes=tuple(
            IncludeFact(i.header, i.system, i.directive.line, i.directive.branch) for i in preprocessor.includes
        ),
        tested=frozenset(name for d in preprocessor.directives if _is_test(d) for name in names_in(d.condition)),
        arm_votes=tuple(_arm_votes(data, preprocessor)),
        rocm_compiled_under=tuple(_rocm_compiled_under(preprocessor)),
        tested_before=tuple(_tested_before(preprocessor)),
        amd_builtins=_has_ungated_amd_builtin(data, preprocessor),
        amd_targets_only=_tests_only_amd_targets(preprocessor),
        hip_runtime=preprocessor.includes_hip_runtime,
        runtime_compiles=(b"rtc" in data or b"jitify" in data) and _RUNTIME_COMPILE.search(data) is not None,
        device_code=b"__global__" in data or b"__device__" in data,
        guard=_guard(preprocessor),
        shuffle_wrappers=tuple(_shuffle_wrappers(preprocessor)) if b"shfl" in data.lower() else (),
        errors=tuple(_build_option_errors(preprocessor)),
        value_votes=tuple(_value_votes(data, preprocessor)),
        option_defines=tuple(_option_defines(data, lines, preprocessor)),
    )


def _compiler_decided_defines(preprocessor: Preprocessor, macros: VendorMacros) -> frozenset[int]:
    """The start bytes of the `#define`s inside `#if` chains that test nvcc's own macros and none that tests a
    ROCm macro (see `Definition.compiler_decided`)."""
    found: set[int] = set()
    stack: list[tuple[bool, bool]] = []  # per open chain: (tests a compiler macro, tests a ROCm macro)
    for directive in preprocessor.directives:
        if _is_test(directive):
            names = set(names_in(directive.condition))
            tested = (bool(names & NVCC_COMPILER_MACROS), any(macros.is_rocm_side(name) for name in names))
            if directive.kind in ("if", "ifdef", "ifndef") or not stack:
                stack.append(tested)
            else:
                stack[-1] = (stack[-1][0] or tested[0], stack[-1][1] or tested[1])
        elif directive.kind == "endif" and stack:
            stack.pop()
        elif directive.kind == "define" and stack:
            if any(compiler for compiler, _ in stack) and not any(rocm for _, rocm in stack):
                found.add(directive.start_byte)
    return frozenset(found)


def _rocm_compiled_under(preprocessor: Preprocessor) -> Iterator[tuple[str, int]]:
    """(X, line) for each ROCm test (`#ifdef __HIP_PLATFORM_AMD__`, `#if !defined(USE_ROCM)`) inside the arm of an
    enclosing `#ifdef X` / `#if defined(X)` / `#if X` (or the `#else` of `#ifndef X`) where X holds: the author
    tells ROCm apart there, so ROCm compiles that arm and X is defined in its build too (PyTorch's
    `torch/csrc/Module.cpp` under `#ifdef USE_CUDA`)."""
    macros = preprocessor.macros
    chains: list[tuple[Directive, str | None]] = []  # per open chain: its opening, the macro its current arm holds
    for directive in preprocessor.directives:
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef"):
            if any(macros.is_rocm_side(name) for name in names_in(directive.condition)):
                yield from ((name, directive.line) for _, name in chains if name is not None)
            chains.append((directive, _holding_macro(directive, else_arm=False)))
        elif kind == "else" and chains:
            opening = chains[-1][0]
            chains[-1] = (opening, _holding_macro(opening, else_arm=True))
        elif kind in ("elif", "elifdef", "elifndef") and chains:
            chains[-1] = (chains[-1][0], None)
        elif kind == "endif" and chains:
            chains.pop()


def _tested_before(preprocessor: Preprocessor) -> Iterator[tuple[str, str, int]]:
    """(X, Y, line of X's arm) for the arms of one `#if` chain that each test one macro alone, X's before Y's
    (`#ifdef X` or `#if defined(X)`, then `#elif defined(Y)`)."""
    chains: list[list[tuple[str | None, int]]] = []  # per open chain: (the macro each arm tests alone, its line)
    for directive in preprocessor.directives:
        kind = directive.kind
        if kind in ("if", "ifdef", "elif", "elifdef"):
            if kind in ("if", "ifdef") or not chains:
                chains.append([])
            match = _SINGLE_MACRO.fullmatch(directive.condition)
            alone = match.group(2) if match is not None and not match.group(1) else None
            if alone is not None:
                yield from ((earlier, alone, line) for earlier, line in chains[-1] if earlier is not None)
            chains[-1].append((alone, directive.line))
        elif kind == "ifndef":
            chains.append([(None, directive.line)])
        elif kind == "endif" and chains:
            chains.pop()


def _holding_macro(opening: Directive, else_arm: bool) -> str | None:
    """The macro that is defined in the first arm of an `#if X` / `#ifdef X` chain (`else_arm`: in its `#else`,
    for `#ifndef X` / `#if !defined(X)`), None when the test is not one macro's."""
    match = _SINGLE_MACRO.fullmatch(opening.condition)
    if match is None:
        return None
    return match.group(2) if bool(match.group(1)) == else_arm else None


# The macros of a compiler pass: an `#error` under them refuses a compiler (`#ifdef __HIPCC__ #error "host code
# only"`), not a vendor's build, whose other compilers still read the file.
_PASS_MACROS = NVCC_COMPILER_MACROS | {
    "__HIPCC__",
    "__HIP__",
    "__HIP_DEVICE_COMPILE__",
    "__HIPCC_RTC__",
    "__CUDACC_RTC__",
}


def _build_option_errors(preprocessor: Preprocessor) -> Iterator[tuple[int, Branch]]:
    """(line, branch) of each `#error` inside a vendor-decided `#if` arm whose chains test no compiler pass
    (`#if !defined(XYZ_ENABLE_CUDA) #error`): the file belongs to the build option it demands."""
    open_chains: list[set[str]] = []  # names tested by each enclosing chain's arms so far
    for directive in preprocessor.directives:
        if directive.kind in ("if", "ifdef", "ifndef"):
            open_chains.append(set(names_in(directive.condition)))
        elif _is_test(directive) and open_chains:
            open_chains[-1].update(names_in(directive.condition))
        elif directive.kind == "endif" and open_chains:
            open_chains.pop()
        elif directive.kind == "error" and directive.branch != EVERYWHERE:
            if not any(chain & _PASS_MACROS for chain in open_chains):
                yield directive.line, directive.branch


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


# A lane exchange a macro body may call (`__shfl_xor_sync(...)`, PyTorch's `WARP_SHFL_XOR(...)`): the wrapper a
# project defines per vendor.
_SHUFFLE_NAME = re.compile(r"(?:__shfl|WARP_SHFL)\w*")
_PARAMETER_MARK = re.compile(r"#(\d+)")


def shuffle_wrapper_form(body: str, parameters: tuple[str, ...]) -> str | None:
    """`body` of a function-like macro taking `parameters`, when it is one lane-exchange call, maybe parenthesised:
    the call with every argument that is a parameter written `#i` (its position): `__shfl_xor_sync(uint32_t(-1),
    var, lane_mask)` with (var, lane_mask) -> `__shfl_xor_sync(uint32_t(-1), #0, #1)`. None for any other body."""
    body = body.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    call = call_arguments(body)
    if call is None or not _SHUFFLE_NAME.fullmatch(call[0]):
        return None
    marked = [f"#{parameters.index(a)}" if a in parameters else a for a in call[1]]
    return f"{call[0]}({', '.join(marked)})"


def wrapped_call(form: str) -> tuple[str, tuple[int | None, ...]]:
    """A `shuffle_wrapper_form` read back: the intrinsic, and for each of its arguments the position of the
    wrapper's argument passed there (None for a fixed expression such as a mask)."""
    name, arguments = call_arguments(form) or (form, [])
    marks = [_PARAMETER_MARK.fullmatch(a) for a in arguments]
    return name, tuple(int(m.group(1)) if m else None for m in marks)


def _shuffle_wrappers(preprocessor: Preprocessor) -> Iterator[Definition]:
    for found in preprocessor.defines.values():
        for define in found:
            if define.parameters is None or define.directive.branch.on_rocm is False:
                continue
            form = shuffle_wrapper_form(define.value, define.parameters)
            if form is not None:
                yield Definition(define.name, form, define.directive.line, define.directive.branch)


def _constants(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    if b"const" not in data:
        return
    for match in _CONSTANT.finditer(data):
        value = match.group(2).decode("utf-8", "replace").strip()
        yield Definition(
            match.group(1).decode(), value, lines.line(match.start()), preprocessor.branch_at(match.start())
        )


def _types(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    """The type aliases and enumerators a ROCm-only branch defines, and every device function under an intrinsic's name ROCm
    compiles (in a header only ROCm includes, such as llama.cpp's `vendors/hip.h`, the project model finds it
    ROCm-only): the remaps."""
    yield from _intrinsic_functions(data, lines, preprocessor)
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
    # The enumerators of an enum a ROCm-only branch defines (a stand-in `CUresult` where the build has no CUDA).
    for body in _ENUM_BODY.finditer(data):
        branch = preprocessor.branch_at(body.start())
        if branch.on_nvidia is False:
            for enumerator in _ENUMERATOR.finditer(body.group(1)):
                start = body.start(1) + enumerator.start(1)
                yield Definition(enumerator.group(1).decode(), None, lines.line(start), branch)


def _intrinsic_functions(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    if b"__device__" not in data:
        return
    for function in _INTRINSIC_FUNCTION.finditer(data):
        branch = preprocessor.branch_at(function.start(1))
        if branch.on_rocm is not False:
            yield Definition(function.group(1).decode(), None, lines.line(function.start(1)), branch)


def _option_defines(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    """The macros `_OPTION_DEFINE` finds in string literals, each in the branch of its literal (the vendor arm of
    the program's compile command)."""
    if b"-D" not in data and b"--define-macro" not in data:
        return
    for option in _OPTION_DEFINE.finditer(data):
        value = option.group(2)
        text = "1" if value is None else value.decode(errors="replace") or None
        branch = preprocessor.branch_at(option.start())
        yield Definition(option.group(1).decode(), text, lines.line(option.start()), branch)


def _atomic_overloads(data: bytes, lines: _Lines, preprocessor: Preprocessor) -> Iterator[Definition]:
    for overload, branch in rocm_atomic_overloads(data, preprocessor):
        yield Definition(overload.group(1).decode(), overload.group(2).decode(), lines.line(overload.start(1)), branch)


def rocm_atomic_overloads(data: bytes, preprocessor: Preprocessor) -> Iterator[tuple[re.Match[bytes], Branch]]:
    """The device overloads of CUDA atomics (`__device__ void atomicAdd(half2* address, ...)`: the atomic is group 1,
    the pointee type group 2) that ROCm compiles, with their branch."""
    if b"atomic" not in data:
        return
    for overload in _ATOMIC_OVERLOAD.finditer(data):
        branch = preprocessor.branch_at(overload.start(1))
        if branch.on_rocm is not False:
            yield overload, branch


def _has_ungated_amd_builtin(data: bytes, preprocessor: Preprocessor) -> bool:
    """Code only AMD targets compile, outside any vendor branch: an AMDGCN builtin, a 64-lane warp size."""
    patterns = (_AMD_BUILTIN, _WAVE64_CONSTANT) if _may_name_a_wave_size(data) else (_AMD_BUILTIN,)
    return any(preprocessor.branch_at(m.start()) == EVERYWHERE for pattern in patterns for m in pattern.finditer(data))


def _may_name_a_wave_size(data: bytes) -> bool:
    """Whether `_WAVE64_CONSTANT` can match at all: a case-insensitive regular expression with no literal
    prefix costs more over a project's sources than every substring test it needs (PyTorch: 0.56 s)."""
    return b"64" in data and _WAVE_SIZE_NAME.search(data.lower()) is not None  # lowered only when 64 is there


def _tests_only_amd_targets(preprocessor: Preprocessor) -> bool:
    """Whether the file's `#if`s tell AMD targets apart (`__gfx942__`, `__GFX9__`, `__AMDGCN_WAVEFRONT_SIZE`) and
    never ask whether the build is ROCm's or NVIDIA's: a file written for AMD GPUs alone, whose arms are per gfx
    target. A macro the project defines under such an arm (learned from a header) asks nothing more."""
    macros = preprocessor.macros
    asks_vendor = macros.rocm | macros.nvidia | macros.stale_gates
    tests_target = False
    for directive in preprocessor.directives:
        if not _is_test(directive):
            continue
        for name in names_in(directive.condition):
            learned = macros.learned.get(name)
            if name in asks_vendor or (learned is not None and learned.evidence.kind != "header"):
                return False
            tests_target = tests_target or is_amd_target_macro(name)
    return tests_target


def _arm_votes(data: bytes, preprocessor: Preprocessor) -> Iterator[tuple[str, str, int]]:
    """For each `#if X` / `#ifdef X` / `#ifndef X` chain whose arms are written for different vendors: (X, the
    vendor of the arm taken when X is true, line)."""
    if not _may_hold_rocm_arm(data):
        return  # no arm can be written for ROCm
    guard = _guard(preprocessor)
    known = preprocessor.macros.well_known
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


def _value_votes(data: bytes, preprocessor: Preprocessor) -> Iterator[ValueVote]:
    """(X, N, the vendor its arm is written for, line) of each arm comparing one macro with an integer
    (`value_selectors.value_arms`) whose code is one vendor's."""
    if b"==" not in data:
        return  # no arm compares a macro with a value
    for name, value, start, end, line in value_arms(preprocessor):
        vendor = arm_vendor(data[start:end])
        if vendor is not None:
            yield name, value, vendor, line


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
    first = arm_vendor(data[arms[0][0] : arms[0][1]])
    second = arm_vendor(data[arms[1][0] : arms[1][1]]) if len(arms) == 2 else None
    if first is None or second is None or second == first:
        return None  # one arm written for a vendor and a plain other one (`#ifndef NDEBUG`) decides nothing
    other = {"rocm": "nvidia", "nvidia": "rocm"}[first]
    return name, other if negated else first


def arm_vendor(arm: bytes) -> str | None:
    """The vendor an `#if` arm's code is written for, by the headers and API it names; None when it names both
    vendors' or neither."""
    rocm, nvidia = bool(_ROCM_ARM.search(arm)), bool(_NVIDIA_ARM.search(arm))
    if rocm == nvidia:
        return None
    return "rocm" if rocm else "nvidia"
