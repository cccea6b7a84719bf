"""What HIP lacks: the CUDA features with no HIP equivalent (rocmlint/data/no_hip_equivalent.toml and the intrinsics
HIP's headers do not declare, rocmlint/data/hip_undeclared.toml: ROC217), inline
PTX, which HIP-Clang cannot assemble (ROC203), CUDA's FP8 API (ROC218), CUTLASS and CuTe (ROC206), `__nanosleep`
(ROC224), and `*_sync` calls with a 32-bit mask, which HIP's 64-bit-mask templates reject (ROC210).

Those rules report these where a ROCm build compiles them, from the syntax tree; `lacking_on_hip` answers a
coarser form of the question for code a fix is about to send ROCm into (ROC213/ROC214/ROC215 route ROCm into an
existing `#if` arm only when the arm holds none of them): from the text, with the same tables and PTX recognisers,
same-file macros expanded (asm templates, `*_sync` masks, the bodies of macros the code uses), but no value tracing
(a mask held in a variable is not seen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property

from rocmlint.cuda.frontend import ByteSpan, CudaContext, Node, Span
from rocmlint.cuda.masks import sync_call_with_32_bit_mask
from rocmlint.cuda.preprocessor import Define
from rocmlint.data import load

# How messages name each library of the CUDA API tables (rocmlint/data/cuda_api.toml, no_hip_equivalent.toml).
LIBRARY_NAMES = {
    "runtime": "CUDA runtime",
    "driver": "CUDA driver",
    "device": "CUDA device",
    "complex": "cuComplex",
    "rtc": "NVRTC",
    "blas": "cuBLAS",
    "rand": "cuRAND",
    "fft": "cuFFT",
    "sparse": "cuSPARSE",
    "solver": "cuSOLVER",
}


@dataclass(frozen=True)
class NoHipEquivalents:
    """The table of CUDA features HIP lacks, each with the reason shown to the user."""

    headers: dict[str, str]  # header -> message
    qualified: dict[tuple[str, ...], str]  # name segments prefix -> message
    names: dict[str, str]  # plain identifier -> message
    # Names a recent ROCm declares (`__syncwarp`) -> that ROCm version: a hazard for the older ROCm a project
    # still supports, not on every ROCm.
    declared_since: dict[str, str]

    @cached_property
    def name_words(self) -> frozenset[bytes]:
        return frozenset(name.encode() for name in self.names)

    @cached_property
    def qualified_words(self) -> tuple[tuple[bytes, ...], ...]:
        """Each qualified entry's segments: all of them are words of a file that names it."""
        return tuple(tuple(segment.encode() for segment in segments) for segments in self.qualified)

    @cached_property
    def qualified_pattern(self) -> re.Pattern[str]:
        """Where code names a qualified entry: its segments (`cg::memcpy_async`, spaces allowed around `::`)
        starting a qualified name, as ROC217 matches entries as prefixes; a one-segment entry (`wmma`) only as
        a scope (`wmma::fragment`). Group `name` (or `scope`, for a one-segment entry) is the entry as written."""
        spellings = sorted(
            (r"\s*::\s*".join(map(re.escape, segments)) for segments in self.qualified), key=len, reverse=True
        )
        # `(?!)` never matches: a table with no entries of one kind must not turn into a pattern matching any `::`.
        multiple = "|".join(s for s in spellings if "::" in s) or "(?!)"
        single = "|".join(s for s in spellings if "::" not in s) or "(?!)"
        return re.compile(r"(?<![\w:])(?:(?P<name>" + multiple + r")\b|(?P<scope>" + single + r")\s*::)")


@cache
def api_map() -> dict[str, tuple[str, str]]:
    """CUDA function -> (HIP function, library), expanded from `cuda_api.toml` (HIPIFY's tables)."""
    mapping: dict[str, tuple[str, str]] = {}
    for library, table in load("cuda_api").items():
        cuda_prefix, hip_prefix = table["cuda_prefix"], table["hip_prefix"]
        skip = len(cuda_prefix)
        for name in table["same_suffix"]:
            mapping[name] = (hip_prefix + name[skip:], library)
        for name, hip in table.get("renamed", {}).items():
            mapping[name] = (hip, library)
    return mapping


@cache
def renamed_api_call(call: Node, ctx: CudaContext) -> tuple[str, str, str] | None:
    """(the callee as written, HIP's name for it, its library's name) of a call of a CUDA runtime or library
    function HIPIFY renames (`cufftDestroy` → `hipfftDestroy`, cuFFT); None for other calls."""
    name = ctx.call_name(call)
    if name is None:
        return None
    hit = api_map().get(name.removeprefix("::"))
    if hit is None:
        return None
    hip, library = hit
    return name.lstrip(":"), hip, LIBRARY_NAMES[library]


@cache
def hip_api_names() -> frozenset[str]:
    """The HIP functions HIPIFY maps CUDA runtime, driver and library functions to (`hipMalloc`, `hipfftDestroy`)."""
    return frozenset(hip for hip, _ in api_map().values())


@cache
def cuda_to_hip_names() -> dict[str, str]:
    """CUDA API functions, types, enum values and constants -> their HIP names (HIPIFY's tables)."""
    names = {name: hip for name, (hip, _) in _hip_names_of("cuda_api").items()}
    names.update({name: hip for name, (hip, _) in api_type_map().items()})
    return names


@cache
def api_type_map() -> dict[str, tuple[str, str]]:
    """CUDA data types, enum values and constants -> (HIP name, library), from `cuda_types.toml` (HIPIFY's tables)."""
    return _hip_names_of("cuda_types")


def _hip_names_of(table_name: str) -> dict[str, tuple[str, str]]:
    """CUDA name -> (HIP name, library) of one of HIPIFY's tables as rocmlint/data keeps them."""
    names: dict[str, tuple[str, str]] = {}
    for library, table in load(table_name).items():
        if not isinstance(table, dict):
            continue
        prefix, hip_prefix = table.get("cuda_prefix", ""), table.get("hip_prefix", "")
        for name in table.get("same_suffix", ()):
            names[name] = (hip_prefix + name[len(prefix) :] if prefix and name.startswith(prefix) else name, library)
        names.update({name: (hip, library) for name, hip in table.get("renamed", {}).items()})
    return names


@dataclass(frozen=True)
class HipCallForm:
    """What a CUDA function is called as on HIP: its HIP name, the argument counts HIP declares, what to call."""

    hip: str
    arguments: frozenset[int]
    instead: str


@cache
def hip_call_forms() -> dict[str, HipCallForm]:
    """CUDA functions whose HIP counterpart takes other argument counts (rocmlint/data/hip_call_arity.toml)."""
    return {
        name: HipCallForm(form["hip"], frozenset(form["arguments"]), form["instead"])
        for name, form in load("hip_call_arity")["functions"].items()
    }


# The intrinsics of rocmlint/data/hip_undeclared.toml, spelled out (ROC217's triggers: a prefix such as `__v` would
# also match `__volatile__`, and every rule's triggers keep ROC207's fix out of an arm holding one).
UNDECLARED_INTRINSICS = tuple(name.encode() for name in sorted(load("hip_undeclared")["names"]))


@cache
def no_hip_equivalents() -> NoHipEquivalents:
    data = load("no_hip_equivalent")
    reasons: dict[str, str] = data["reasons"]
    names = {name: reasons[reason] for name, reason in data["names"].items()}
    for library, listed in data["hipify"].items():
        reason = f"{LIBRARY_NAMES.get(library, library)} API without a HIP equivalent (HIPIFY lists no HIP name)"
        for name in listed:
            names.setdefault(name, reason)
    # Intrinsics checked against HIP's own headers (HIPIFY's device table lags them): rocmlint/data/hip_undeclared.toml.
    undeclared = load("hip_undeclared")
    names.update({name: undeclared["reasons"][reason] for name, reason in undeclared["names"].items()})
    return NoHipEquivalents(
        headers={header: reasons[reason] for header, reason in data["headers"].items()},
        qualified={tuple(name.split("::")): reasons[reason] for name, reason in data["qualified"].items()},
        names=names,
        declared_since=dict(undeclared["since"]),
    )


def rocm_macro_of(name: str, node: Node, ctx: CudaContext) -> bool:
    """Whether the file, or a header it includes, defines `name` as a macro a ROCm build certainly sees where `node`
    uses it, whose replacement names nothing HIP lacks (`#if CUDA_VERSION >= 11000 || defined(USE_ROCM)` / `#define
    cusparseCreateSolveAnalysisInfo(info) cusparseCreateCsrsm2Info(info)`; `#define __syncwarp()` in a header of code
    written for AMD's lockstep waves): ROCm compiles the replacement, not the CUDA name. A replacement naming an API
    HIP lacks is no way around it (nothing would report that name)."""
    replacement = ctx.macro_replacement(name, node)
    if replacement is None:
        return False
    lacking = no_hip_equivalents().names
    return not any(word in lacking for word in _WORD.findall(replacement))


# libcu++, CUDA's C++ library (`<cuda/atomic>`, `<cuda/barrier>`, `<cuda/std/type_traits>`), names its headers
# `cuda/...` with no extension, as the C++ standard library does; a project's own `cuda/` folder holds files with
# one (`cuda/q_gemm.cuh`). ROCm does not ship libcu++: the include is a library header missing there (ROC205).
def is_libcudacxx_header(header: str) -> bool:
    return header.startswith("cuda/") and "." not in header.rsplit("/", 1)[-1]


# --- CUDA libraries and intrinsics the ROC2xx rules know HIP lacks, beyond the table -------------------------
# CUDA's FP8 header and API (ROC218): hipify has no mapping for them.
FP8_HEADERS = frozenset({"cuda_fp8.h", "cuda_fp8.hpp"})
FP8_INTERPRETATIONS = frozenset({"__NV_E4M3", "__NV_E5M2"})
# `cutlass/gemm/device/gemm.h`, `cute/tensor.hpp`, `third_party/cutlass/include/cutlass/numeric_types.h`, and the
# `cutlass_extensions/` headers projects layer on top of CUTLASS (ROC206): NVIDIA-only, no ROCm build.
CUTLASS_HEADER = re.compile(r"(?:^|/)(cutlass|cute)(?:/|_extensions/)")
# Device intrinsics HIP's headers do not declare (ROC224).
_UNDECLARED_INTRINSICS = {"__nanosleep": "HIP does not declare `__nanosleep`"}


def is_cuda_fp8_name(name: str) -> bool:
    """`__nv_fp8_e4m3`, `__nv_cvt_float_to_fp8`, `__NV_E4M3`: CUDA's FP8 API."""
    return (
        name.startswith("__nv_fp8") or name in FP8_INTERPRETATIONS or (name.startswith("__nv_cvt_") and "fp8" in name)
    )


# --- inline PTX -----------------------------------------------------------------------------------------
# PTX instruction names (PTX ISA 8.x). A PTX instruction is the name followed by dotted modifiers
# (`mov.u32`, `ld.global.cs.v4.u32`, `cp.async.cg.shared.global`); GCN/AMDGPU mnemonics use underscores
# (`v_add_f32`, `ds_read_b128`, `buffer_load_dword`) and x86/Arm ones carry no dotted suffix, so the
# dotted form is what tells PTX apart.
_OPCODES = (
    "abs",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "call",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypeof",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "tensormap",
    "testp",
    "tex",
    "tld4",
    "txq",
    "vabsdiff",
    "vadd",
    "vmad",
    "vmax",
    "vmin",
    "vote",
    "vset",
    "vshl",
    "vshr",
    "vsub",
    "wgmma",
    "wmma",
    "xor",
)
_INSTRUCTION = re.compile(
    r"(?<![\w.%$])(" + "|".join(sorted(_OPCODES, key=len, reverse=True)) + r")(?:\.[A-Za-z0-9_]+)+"
)
# PTX's scalar video instructions name three operand types (`vadd.s32.s32.s32`); ARM NEON's of the same names one
# (`vadd.f16 %0, %1, %2`, `vsub.s32 q0, q1, q2`): CPU assembly, not PTX.
_VIDEO_OPCODES = frozenset({"vabsdiff", "vadd", "vmad", "vmax", "vmin", "vset", "vshl", "vshr", "vsub"})


def _neon_like(match: re.Match[str]) -> bool:
    """Whether an instruction match is a video mnemonic with fewer type suffixes than PTX gives it (ARM NEON)."""
    opcode, _, suffixes = match.group(0).strip().partition(".")
    return opcode in _VIDEO_OPCODES and suffixes.count(".") < 2


# PTX special registers, written `%%laneid` in an asm template with operands and `%laneid` without.
_SPECIAL_REGISTER = re.compile(
    r"%%?(laneid|warpid|nwarpid|smid|nsmid|gridid|clock64|clock|globaltimer(?:_lo|_hi)?|lanemask_(?:eq|le|lt|ge|gt)"
    r"|n?tid\.[xyz]|n?ctaid\.[xyz]|dynamic_smem_size|total_smem_size|envreg\d+|pm\d+)\b"
)
# PTX declarations inside `{ ... }` scopes (`.reg .pred p;`, `.reg .b64 addr;`) and operand-less instructions.
_DECLARATION = re.compile(r"(?<![\w.])\.(?:reg|shared|local|param)\s+\.(?:pred|[bsuf]\d+|v[248])\b")
_STANDALONE = re.compile(r"(?:^|[;{}\s])(trap|exit|pmevent\s+\d+)\s*;")
# An asm statement's head, in code or in a macro body: `asm(`, `asm volatile (`, `__asm__ __volatile__(`.
ASM_STATEMENT = re.compile(r"\b(?:asm|__asm__|__asm)\b\s*(?:(?:volatile|__volatile__|__volatile|inline|goto)\s*)*\(")
STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def string_contents(text: str) -> list[str]:
    """The contents of the string literals in `text`. C escapes (`\\n`, `\\t`, `\\"`) become spaces so
    instructions after them are seen at a word start."""
    return [re.sub(r"\\.", " ", content) for content in STRING_LITERAL.findall(text)]


def asm_template(ctx: CudaContext, text: str, where: Span) -> str:
    """The assembly text in `text` (an asm statement's operands, or what follows `asm(` in a macro body):
    string literals joined, with same-file `#define`d string pieces (`asm(LOAD_PREFIX ".u32 ...")`,
    `asm(LANE_ID_ASM : ...)`) as a ROCm build sees them before `where` expanded."""
    pieces = string_contents(text)
    for name in _IDENTIFIER.findall(STRING_LITERAL.sub(" ", text)):
        define = ctx.define(name, where)
        if define is not None:
            pieces.extend(string_contents(define.value))
    return " ".join(pieces)


def macro_asm_template(ctx: CudaContext, define: Define) -> str | None:
    """The assembly text of the asm statement in a macro body, None when it has none. The body is expanded
    where the macro is used, so any string macro of the file may complete it."""
    match = ASM_STATEMENT.search(define.value) if "asm" in define.value else None
    if match is None:
        return None
    end_of_file = ByteSpan(len(ctx.content), len(ctx.content))
    return asm_template(ctx, define.value[match.end() :], end_of_file)


def ptx_in(template: str) -> tuple[str, str] | None:
    """(the PTX found, its instruction or register name) in an assembly template, or None for text that is
    not recognisably PTX."""
    for pattern in (_SPECIAL_REGISTER, _INSTRUCTION, _STANDALONE):
        match = next((m for m in pattern.finditer(template) if not _neon_like(m)), None)
        if match is not None:
            return match.group(0).strip(" ;{}\t"), match.group(1).split(".")[0]
    match = _DECLARATION.search(template)
    if match is not None:
        return match.group(0), "reg"
    return None


# --- a piece of code ------------------------------------------------------------------------------------
# A string or character literal (kept: `//` and `/*` inside one are text) or a comment (group 1, removed).
_LITERAL_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|(//[^\n]*|/\*.*?(?:\*/|\Z))', re.DOTALL)
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINED = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_STRING_OR_PARENTHESIS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[()]')


def without_comments(code: str) -> str:
    """`code` with each comment replaced by a space; string and character literals kept whole
    (`asm("mov.u32 %0, %%laneid; // lane" : ...)` keeps its PTX)."""
    return _LITERAL_OR_COMMENT.sub(lambda match: " " if match.group(1) else match.group(0), code)


def lacking_on_hip(ctx: CudaContext, span: ByteSpan) -> str | None:
    """What the code in `span` uses that HIP lacks, as `` `name`: reason ``, or None: an include, a name or a
    qualified name of the no-HIP-equivalent table (ROC217's), CUDA's FP8 header or API (ROC218), a CUTLASS/CuTe
    header (ROC206), `__nanosleep` (ROC224), a `*_sync` call whose mask is 32 bits wide (ROC210: a literal, or a
    same-file macro of one) or an asm statement whose template (same-file string macros included) holds PTX
    (ROC203). Read from the text, macro bodies included, whatever the preprocessor would keep of it: code that is
    only there on NVIDIA counts too; so do the bodies of this file's macros the code uses (`TRAP()` defined above
    as `__brkpt()`), through the macros they use."""
    code = without_comments(ctx.content[span.start_byte : span.end_byte].decode("utf-8", "replace"))
    where = ByteSpan(span.end_byte, span.end_byte)
    found = _header(code) or _lacking_in(ctx, code, where)
    for define in () if found else _macros_used(ctx, code, span.end_byte):
        found = _lacking_in(ctx, define.value, where)
        if found:
            return found
    return found


# What splits a piece of code into statements: literals (skipped whole), a directive line, brackets, `;`.
_STATEMENT_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|^[ \t]*#(?:[^\n\\]|\\\r?\n|\\.)*|[(){}\[\];]', re.MULTILINE
)
_CONDITIONAL_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


def only_lacking_on_hip(ctx: CudaContext, span: ByteSpan, *, libcudacxx: bool = False) -> bool:
    """Whether every statement of the code in `span` (each `;`-ended statement, `{...}` block or directive line
    at its top level; the lines of nested conditionals aside) uses something HIP lacks (`lacking_on_hip`): a
    ROCm build could compile none of it, so skipping it loses nothing. False for code with no statement, or
    with a piece that is no whole statement (`} else`). With `libcudacxx`, libcu++ counts as lacking too (an
    include of `<cuda/std/complex>`, a use of `cuda::std::`): ROCm ships none of it."""
    # latin-1 keeps one character per byte, so offsets in the text are byte offsets; comments become blanks.
    text = ctx.content[span.start_byte : span.end_byte].decode("latin-1")
    text = _LITERAL_OR_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(1) else m.group(0), text)
    pieces: list[tuple[int, int]] = []
    depth, start = 0, 0
    for token in _STATEMENT_TOKEN.finditer(text):
        kind = token.group(0).lstrip()[:1]
        if kind == "#" and depth == 0:
            pieces.append((start, token.start()))
            if not _CONDITIONAL_DIRECTIVE.match(token.group(0)):
                pieces.append((token.start(), token.end()))
            start = token.end()
        elif kind in "([{":
            depth += 1
        elif kind in ")]}":
            depth -= 1
            if kind == "}" and depth == 0:
                pieces.append((start, token.end()))
                start = token.end()
        elif kind == ";" and depth == 0:
            pieces.append((start, token.end()))
            start = token.end()
    pieces.append((start, len(text)))
    # A lone `;` (the end of `struct X {...};`) is no statement of its own.
    statements = [(a, b) for a, b in pieces if text[a:b].strip().strip(";").strip()]
    return bool(statements) and all(
        (libcudacxx and _names_libcudacxx(text[a:b]))
        or lacking_on_hip(ctx, ByteSpan(span.start_byte + a, span.start_byte + b)) is not None
        for a, b in statements
    )


# libcu++'s namespace as code names it (`::cuda::std::complex<float>`, `cuda::atomic_ref`).
_LIBCUDACXX_NAME = re.compile(r"(?<![\w:])(?:::\s*)?cuda\s*::\s*(?:std\s*::\s*)?[A-Za-z_]")


def _names_libcudacxx(code: str) -> bool:
    """Whether a statement includes a libcu++ header or names libcu++'s `cuda::` namespace."""
    if any(is_libcudacxx_header(include.group(1).strip()) for include in _INCLUDE.finditer(code)):
        return True
    return _LIBCUDACXX_NAME.search(code) is not None


# NVIDIA caps a kernel's dynamic shared memory at 48 KiB until the host opts it in to more
# (`cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)`, up to the device's
# `cudaDevAttrMaxSharedMemoryPerBlockOptin`); an AMD GPU gives every kernel its whole LDS with no opt-in, and its
# per-block maximum (`cudaDevAttrMaxSharedMemoryPerBlock`, hipified `hipDeviceAttributeMaxSharedMemoryPerBlock`) is
# that LDS. An argument list here: no `;`, parentheses nested one deep (`(size_t)shmem_max`).
_ARGUMENTS = r"(?:[^;()]|\((?:[^;()]|\([^;()]*\))*\))*"
_OPT_IN = re.compile(
    rf"\b(?:cuda|hip)FuncSetAttribute\s*\({_ARGUMENTS}\b(?:cuda|hip)FuncAttributeMaxDynamicSharedMemorySize\b"
    rf"{_ARGUMENTS}\)\s*;"
)
_OPT_IN_CAP_QUERY = re.compile(
    rf"\b(?:cuda|hip)DeviceGetAttribute\s*\({_ARGUMENTS}\bcudaDevAttrMaxSharedMemoryPerBlockOptin\b{_ARGUMENTS}\)\s*;"
)
# What may remain of an arm once its opt-ins are taken out: `if (shmem > 49152) { }`, `if (shmem <= max)`.
_EMPTY_GUARDS = re.compile(rf"\s*(?:if\s*\({_ARGUMENTS}\)\s*(?:\{{\s*\}}\s*)?)*")


@dataclass(frozen=True)
class SharedMemoryOptIn:
    """Code that only opts kernels in to more dynamic shared memory than NVIDIA's default (see
    `shared_memory_opt_in`)."""

    queries_cap: bool  # it reads the opt-in cap too (`cudaDevAttrMaxSharedMemoryPerBlockOptin`) into a variable


def shared_memory_opt_in(ctx: CudaContext, span: ByteSpan) -> SharedMemoryOptIn | None:
    """Whether the code in `span` does nothing but opt kernels in to more dynamic shared memory
    (`cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, shmem)`, possibly under an `if` on the
    size), and maybe read the opt-in cap first: needless on an AMD GPU, whose kernels get the whole LDS without
    it. One reading the cap leaves a variable the code after it uses: ROCm needs an arm of its own setting it (the
    `#else` reading `cudaDevAttrMaxSharedMemoryPerBlock`, the same value there). None for any other code, or none
    at all, or with a nested conditional."""
    text = ctx.content[span.start_byte : span.end_byte].decode("latin-1")
    text = _LITERAL_OR_COMMENT.sub(lambda m: " " if m.group(1) else m.group(0), text)
    if "#" in text:
        return None
    calls = _OPT_IN.subn(" ", text)
    rest = _OPT_IN_CAP_QUERY.subn(" ", calls[0])
    if not calls[1] or _EMPTY_GUARDS.fullmatch(rest[0]) is None:
        return None
    return SharedMemoryOptIn(queries_cap=bool(rest[1]))


_PER_BLOCK_CAP = re.compile(
    rb"\b(?:cuda|hip)DevAttrMaxSharedMemoryPerBlock\b|\bhipDeviceAttributeMaxSharedMemoryPerBlock\b"
)


def reads_per_block_shared_memory(ctx: CudaContext, span: ByteSpan) -> bool:
    """Whether the code in `span` reads the device's per-block shared memory maximum, which on an AMD GPU is the
    cap an NVIDIA opt-in reads (see `shared_memory_opt_in`)."""
    return _PER_BLOCK_CAP.search(ctx.content, span.start_byte, span.end_byte) is not None


def _macros_used(ctx: CudaContext, code: str, before: int) -> list[Define]:
    """Every `#define` before byte `before` of a name `code` uses, and of the names those bodies use: the
    definition a build routed into `code` sees is one of them. A name `code` defines itself is its own (an
    `#else` redefining `TRAP()` does not use the `#if` arm's)."""
    seen = set(_DEFINED.findall(code))
    pending = _WORD.findall(code)
    used: list[Define] = []
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for define in ctx.preprocessor.defines.get(name, ()):
            if define.directive.start_byte < before:
                used.append(define)
                pending.extend(_WORD.findall(define.value))
    return used


def _lacking_in(ctx: CudaContext, code: str, where: Span) -> str | None:
    """What code (or a macro body) uses that HIP lacks, includes aside, same-file macros expanded before `where`."""
    return _name(code) or _qualified(code) or _sync_mask(ctx, code, where) or _ptx(ctx, code, where)


def _header(code: str) -> str | None:
    table = no_hip_equivalents()
    for include in _INCLUDE.finditer(code):
        header = include.group(1).strip()
        if header in table.headers:
            return f"`{header}`: {table.headers[header]}"
        if header in FP8_HEADERS:
            return f"`{header}`: CUDA's FP8 header has no hipify mapping"
        if CUTLASS_HEADER.search(header):
            return f"`{header}`: CUTLASS and CuTe have no ROCm build"
    return None


def _name(code: str) -> str | None:
    table = no_hip_equivalents()
    for word in _WORD.findall(code):
        if word in table.names:
            return f"`{word}`: {table.names[word]}"
        if word in _UNDECLARED_INTRINSICS:
            return f"`{word}`: {_UNDECLARED_INTRINSICS[word]}"
        if word.startswith("__") and is_cuda_fp8_name(word):
            return f"`{word}`: CUDA's FP8 API has no hipify mapping"
    return None


def _qualified(code: str) -> str | None:
    table = no_hip_equivalents()
    qualified = table.qualified_pattern.search(code)
    if qualified is None:
        return None
    segments = tuple(re.split(r"\s*::\s*", qualified.group("name") or qualified.group("scope")))
    return f"`{'::'.join(segments)}`: {table.qualified[segments]}"


def _sync_mask(ctx: CudaContext, code: str, where: Span) -> str | None:
    found = sync_call_with_32_bit_mask(ctx, code, where) if "sync" in code else None
    return (
        None
        if found is None
        else f"`{found[0]}({found[1]}, ...)`: HIP's `*_sync` intrinsics static_assert a 64-bit mask"
    )


def _ptx(ctx: CudaContext, code: str, where: Span) -> str | None:
    """Inline PTX in the template of an asm statement of `code` (only templates: `printf("ld.global failed")`
    next to an asm statement is not assembly)."""
    for statement in ASM_STATEMENT.finditer(code) if "asm" in code else ():
        found = ptx_in(asm_template(ctx, _operands(code, statement.end()), where))
        if found is not None:
            return f"inline PTX `{found[0]}`: HIP-Clang cannot assemble PTX"
    return None


def _operands(code: str, start: int) -> str:
    """The text from `start` (just after an asm statement's `(`) to its closing parenthesis, or to the end
    of `code` when it has none (a macro body completed where it is used)."""
    depth = 0
    for token in _STRING_OR_PARENTHESIS.finditer(code, start):
        if token.group(0) == "(":
            depth += 1
        elif token.group(0) == ")":
            if depth == 0:
                return code[start : token.start()]
            depth -= 1
    return code[start:]


# --- runtime calls HIP declares with `const void*` only (ROC239) -------------------------------------------------
# The call and the position of its kernel argument. CUDA's runtime adds `template <class T> ...(T* entry, ...)`
# overloads, so CUDA code passes typed kernels; C++ has no implicit conversion from a function pointer to
# `const void*`. (The occupancy calculators are not listed: hip_runtime_api.h has template overloads for them.)
KERNEL_POINTER_CALLS = {
    "cudaFuncSetAttribute": 0,
    "cudaFuncGetAttributes": 1,
    "hipFuncSetAttribute": 0,
    "hipFuncGetAttributes": 1,
}
_KERNEL_POINTER_CALL = re.compile(r"\b(" + "|".join(KERNEL_POINTER_CALLS) + r")\s*\(")
_CONTINUATION = re.compile(r"\\\r?\n")
# A kernel named directly: `&k`, `ns::k`, `k<T, 128>`, `k` (no cast, no call, no arithmetic).
_KERNEL_NAME = re.compile(r"(?P<address>&\s*)?(?P<name>[A-Za-z_][\w:]*)\s*(?P<template><.*>)?", re.DOTALL)
_BLANK = re.compile(r"(?:\s|\\\r?\n)*")  # white space and line continuations
_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">"}


@dataclass(frozen=True)
class MacroKernelCall:
    """A call of `KERNEL_POINTER_CALLS` in a macro body whose kernel argument is a typed kernel."""

    function: str
    kernel: str  # as written, continuations removed
    span: ByteSpan  # the call's name to the end of its kernel argument


def typed_kernel_calls_in_macro(ctx: CudaContext, define: Define) -> list[MacroKernelCall]:
    """The calls in `define`'s body (which tree-sitter does not parse) that pass a typed kernel: `&k`, `k<T>`,
    `ns::k`, or a name the same body assigns such a kernel to (`auto fn = k<T>;`) or launches (`fn<<<...>>>`)."""
    start = define.directive.start_byte
    body = ctx.content[start : define.directive.end_byte].decode("utf-8", "replace")
    found = []
    for call in _KERNEL_POINTER_CALL.finditer(body, body.find(define.name) + len(define.name)):
        argument = _nth_argument(body, call.end(), KERNEL_POINTER_CALLS[call.group(1)])
        if argument is None:
            continue
        kernel = " ".join(_CONTINUATION.sub(" ", body[argument[0] : argument[1]]).split())
        if _names_typed_kernel(kernel, body):
            span = ByteSpan(start + len(body[: call.start()].encode()), start + len(body[: argument[1]].encode()))
            found.append(MacroKernelCall(call.group(1), kernel, span))
    return found


def _nth_argument(body: str, start: int, index: int) -> tuple[int, int] | None:
    """(start, end) in `body` of the argument `index` of the call whose arguments start at `start`; `<...>` counts
    as brackets, as the kernel arguments of these calls are template ids, not comparisons."""
    closing: list[str] = []
    begin = start
    for position in range(start, len(body)):
        character = body[position]
        if character in _OPENING:
            closing.append(_OPENING[character])
        elif closing and character == closing[-1]:
            closing.pop()
        elif not closing and character in ",)":
            if index == 0:
                leading = _BLANK.match(body, begin)
                first = leading.end() if leading is not None else begin
                text = body[first:position].rstrip("\\ \t\r\n")
                return (first, first + len(text)) if text else None
            if character == ")":
                return None
            index -= 1
            begin = position + 1
    return None


def _names_typed_kernel(kernel: str, body: str) -> bool:
    named = _KERNEL_NAME.fullmatch(kernel.strip())
    if named is None:
        return False  # a cast, a call, a conditional...
    if named.group("address") or named.group("template") or "::" in named.group("name"):
        return True
    name = re.escape(named.group("name"))
    assigned_kernel = rf"\b{name}\s*=\s*&?\s*[A-Za-z_][\w:]*\s*<"
    return re.search(assigned_kernel + rf"|\b{name}\s*<<<", _CONTINUATION.sub(" ", body)) is not None


__all__ = [
    "ASM_STATEMENT",
    "CUTLASS_HEADER",
    "FP8_HEADERS",
    "FP8_INTERPRETATIONS",
    "KERNEL_POINTER_CALLS",
    "LIBRARY_NAMES",
    "MacroKernelCall",
    "NoHipEquivalents",
    "api_map",
    "asm_template",
    "cuda_to_hip_names",
    "is_cuda_fp8_name",
    "lacking_on_hip",
    "macro_asm_template",
    "no_hip_equivalents",
    "only_lacking_on_hip",
    "ptx_in",
    "rocm_macro_of",
    "string_contents",
    "typed_kernel_calls_in_macro",
    "without_comments",
]
