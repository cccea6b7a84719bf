"""What HIP lacks: the CUDA features with no HIP equivalent (rocmlint/data/no_hip_equivalent.toml) and inline
PTX, which HIP-Clang cannot assemble.

ROC217 and ROC203 report these where a ROCm build compiles them; `lacking_on_hip` answers the same question for
code a fix is about to send ROCm into (ROC213/ROC214/ROC215 route ROCm into an existing `#if` arm only when the
arm holds none of them), from the same tables and the same PTX recognition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property

from rocmlint.cuda.frontend import CudaContext, Span
from rocmlint.data import load

_LIBRARY_NAMES = {
    "runtime": "CUDA runtime", "driver": "CUDA driver", "device": "CUDA device", "rtc": "NVRTC", "blas": "cuBLAS",
    "rand": "cuRAND", "fft": "cuFFT", "sparse": "cuSPARSE", "solver": "cuSOLVER",
}


@dataclass(frozen=True)
class NoHipEquivalents:
    """The table of CUDA features HIP lacks, each with the reason shown to the user."""

    headers: dict[str, str]  # header -> message
    qualified: dict[tuple[str, ...], str]  # name segments prefix -> message
    names: dict[str, str]  # plain identifier -> message

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
        spellings = sorted((r"\s*::\s*".join(map(re.escape, segments)) for segments in self.qualified), key=len, reverse=True)
        # `(?!)` never matches: a table with no entries of one kind must not turn into a pattern matching any `::`.
        multiple = "|".join(s for s in spellings if "::" in s) or "(?!)"
        single = "|".join(s for s in spellings if "::" not in s) or "(?!)"
        return re.compile(r"(?<![\w:])(?:(?P<name>" + multiple + r")\b|(?P<scope>" + single + r")\s*::)")


@cache
def no_hip_equivalents() -> NoHipEquivalents:
    data = load("no_hip_equivalent")
    reasons: dict[str, str] = data["reasons"]
    names = {name: reasons[reason] for name, reason in data["names"].items()}
    for library, listed in data["hipify"].items():
        reason = f"{_LIBRARY_NAMES.get(library, library)} API without a HIP equivalent (HIPIFY lists no HIP name)"
        for name in listed:
            names.setdefault(name, reason)
    return NoHipEquivalents(
        headers={header: reasons[reason] for header, reason in data["headers"].items()},
        qualified={tuple(name.split("::")): reasons[reason] for name, reason in data["qualified"].items()},
        names=names,
    )


# --- inline PTX -----------------------------------------------------------------------------------------
# PTX instruction names (PTX ISA 8.x). A PTX instruction is the name followed by dotted modifiers
# (`mov.u32`, `ld.global.cs.v4.u32`, `cp.async.cg.shared.global`); GCN/AMDGPU mnemonics use underscores
# (`v_add_f32`, `ds_read_b128`, `buffer_load_dword`) and x86/Arm ones carry no dotted suffix, so the
# dotted form is what tells PTX apart.
_OPCODES = (
    "abs", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "barrier", "bfe", "bfi", "bfind",
    "bmsk", "bra", "brev", "brkpt", "call", "clz", "cnot", "copysign", "cos", "cp", "createpolicy", "cvt",
    "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2", "fence", "fma", "fns", "getctarank",
    "griddepcontrol", "isspacep", "istypeof", "ld", "ldmatrix", "ldu", "lg2", "lop3", "mad", "mad24", "madc",
    "mapa", "match", "max", "mbarrier", "membar", "min", "mma", "mov", "movmatrix", "mul", "mul24",
    "multimem", "nanosleep", "neg", "not", "or", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red",
    "redux", "rem", "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin",
    "slct", "sqrt", "st", "stmatrix", "sub", "subc", "suld", "sured", "sust", "szext", "tanh", "tcgen05",
    "tensormap", "testp", "tex", "tld4", "txq", "vabsdiff", "vadd", "vmad", "vmax", "vmin", "vote", "vset",
    "vshl", "vshr", "vsub", "wgmma", "wmma", "xor",
)
_INSTRUCTION = re.compile(r"(?<![\w.%$])(" + "|".join(sorted(_OPCODES, key=len, reverse=True)) + r")(?:\.[A-Za-z0-9_]+)+")
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


def ptx_in(template: str) -> tuple[str, str] | None:
    """(the PTX found, its instruction or register name) in an assembly template, or None for text that is
    not recognisably PTX."""
    for pattern in (_SPECIAL_REGISTER, _INSTRUCTION, _STANDALONE):
        match = pattern.search(template)
        if match is not None:
            return match.group(0).strip(" ;{}\t"), match.group(1).split(".")[0]
    match = _DECLARATION.search(template)
    if match is not None:
        return match.group(0), "reg"
    return None


# --- a piece of code ------------------------------------------------------------------------------------
_COMMENT = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_]\w*")


def lacking_on_hip(code: str) -> str | None:
    """What `code` (C++ text, comments allowed) uses that HIP lacks, as `` `name`: reason ``, or None: an
    include of a header, a name or a qualified name of the no-HIP-equivalent table (ROC217's), or an asm
    statement holding PTX (ROC203's). Read from the text, macro bodies included, whatever the preprocessor
    would keep of it: code that is only there on NVIDIA counts too."""
    code = _COMMENT.sub(" ", code)
    table = no_hip_equivalents()
    for include in _INCLUDE.finditer(code):
        reason = table.headers.get(include.group(1).strip())
        if reason is not None:
            return f"`{include.group(1).strip()}`: {reason}"
    name = next((word for word in _WORD.findall(code) if word in table.names), None)
    if name is not None:
        return f"`{name}`: {table.names[name]}"
    qualified = table.qualified_pattern.search(code)
    if qualified is not None:
        segments = tuple(re.split(r"\s*::\s*", qualified.group("name") or qualified.group("scope")))
        return f"`{'::'.join(segments)}`: {table.qualified[segments]}"
    if ASM_STATEMENT.search(code) is not None:
        found = ptx_in(" ".join(string_contents(code)))
        if found is not None:
            return f"inline PTX `{found[0]}`: HIP-Clang cannot assemble PTX"
    return None


__all__ = ["ASM_STATEMENT", "NoHipEquivalents", "asm_template", "lacking_on_hip", "no_hip_equivalents", "ptx_in", "string_contents"]
