"""Code a project keeps from ROCm by its own design: the `#if` arms ROCm skips because of the project's own vendor
macros (`#if defined(XYZ_DEVICE_CUDA)`, where the project defines `XYZ_DEVICE_CUDA` for NVIDIA builds only), not
merely because HIP-Clang lacks nvcc's macros (`#if __CUDA_ARCH__ >= 900`, which a port may need to open), and the
names a file declares there. The project model (rocmlint/cuda/project.py) scans the files around a file with these;
`conditions.nvidia_only_by_design` asks it whether an arm testing nvcc's macros needs such names, which would make
it an arm ROCm could never build, kept from it on purpose.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from rocmlint.cuda.preprocessor import (
    NVCC_COMPILER_MACROS,
    MacroLookup,
    Preprocessor,
    evaluate_expression,
    names_in,
)

# The states tried for each of nvcc's own macros (`NVCC_COMPILER_MACROS`): undefined, and the
# values an nvcc build gives them (a pass, an architecture, a toolkit version).
_COMPILER_STATES: tuple[int | None, ...] = (None, 1, 800, 900, 1000, 11080, 12080)
_MAX_STATES = 4096
_STATEMENT_WORDS = frozenset(
    {"return", "else", "case", "new", "delete", "throw", "goto", "co_return", "sizeof", "do", "if", "while", "for"}
)
# What comes before a name on its line when that line declares it: `#define X`, `struct X`, `using X =`, or a
# function declarator's type (`static __device__ int X(`, `template <class T> T X(`).
_DEFINE_BEFORE = re.compile(rb"#\s*define\s+$")
_TYPE_KEYWORD_BEFORE = re.compile(rb"\b(?:struct|class|union|enum(?:\s+class)?)\s+$")
_USING_BEFORE = re.compile(rb"\busing\s+$")
_FUNCTION_TYPE_BEFORE = re.compile(rb"^\s*(?:template\s*<[^;{}]*>\s*)?(?:[A-Za-z_][\w:]*(?:\s*<[^;(){}=]*>)?[\s*&]+)+$")


def off_rocm_by_project(preprocessor: Preprocessor, offset: int) -> bool:
    """Whether a ROCm build never compiles the code at `offset` because of the project's own macros: some `#if` arm
    around it is not entered on ROCm whatever nvcc's macros were (HIP-Clang defining `__CUDA_ARCH__` or a CUDA
    version would not change it), the other macros as ROCm's view of the file knows them. Unknown macros fail, and so
    do those the project model learned from their name alone or from `__CUDA_ARCH__` tests."""
    if preprocessor.branch_at(offset).on_rocm is not False:
        return False
    known = preprocessor.macro_lookup("rocm", offset)
    learned = preprocessor.macros.learned

    # A macro learned from its name alone, or NVIDIA-only only because HIP lacks nvcc's macros, is no evidence of
    # the project's design: unknown here.
    def lookup(name: str, asked: str) -> int | None:
        macro = learned.get(name)
        if macro is not None and (macro.evidence.kind == "name" or macro.evidence.compiler_decided):
            return None
        return known(name, asked)

    return any(
        _never_entered(earlier, own, lookup)
        for earlier, own in preprocessor.open_arms(offset)
        if own is not None or earlier
    )


def _never_entered(earlier: list[str], own: str | None, lookup: MacroLookup) -> bool:
    """Whether the arm (`own`: its condition, None for `#else`) after conditions `earlier` is not entered on ROCm for
    any state of nvcc's macros."""
    conditions = [*earlier, "1" if own is None else own]
    compiler = sorted({name for condition in conditions for name in names_in(condition)} & NVCC_COMPILER_MACROS)
    if len(_COMPILER_STATES) ** len(compiler) > _MAX_STATES:
        return False
    for values in itertools.product(_COMPILER_STATES, repeat=len(compiler)):
        assigned = dict(zip(compiler, values, strict=True))

        def state(name: str, asked: str, assigned: dict[str, int | None] = assigned) -> int | None:
            if name in assigned:
                value = assigned[name]
                return int(value is not None) if asked == "defined" else (value or 0)
            return lookup(name, asked)

        truths = [evaluate_expression(condition, state) for condition in conditions]
        if any(truth is None for truth in truths):
            return False
        if not any(truths[:-1]) and truths[-1]:
            return False
    return True


def declares(data: bytes, start: int, end: int) -> bool:
    """Whether the word at `data[start:end]` is declared there: `#define X`, `struct X`, `using X =`, `typedef ... X;`
    or a function declarator with its type before it on the line (`static __device__ void X(`), not a call."""
    line_start = data.rfind(b"\n", 0, start) + 1
    before = data[line_start:start]
    after = data[end : end + 80].lstrip(b" \t")
    if _DEFINE_BEFORE.search(before) or _TYPE_KEYWORD_BEFORE.search(before):
        return True
    if _USING_BEFORE.search(before):
        return after.startswith(b"=")
    if b"typedef" in before and after.startswith(b";"):
        return True
    if not after.startswith(b"(") or _FUNCTION_TYPE_BEFORE.match(before) is None:
        return False
    words = set(re.findall(rb"[A-Za-z_]\w*", before))
    return not words & {word.encode() for word in _STATEMENT_WORDS}


def word_pattern(names: Iterable[str]) -> re.Pattern[bytes]:
    """One pattern matching each of `names` as a whole word."""
    return re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in sorted(names)) + rb")\b")


_OPENERS = frozenset({"if", "ifdef", "ifndef"})
_ARMS = frozenset({"elif", "elifdef", "elifndef", "else"})


def arm_around(preprocessor: Preprocessor, offset: int) -> tuple[int, int] | None:
    """The byte span of the innermost `#if` arm holding `offset` (its directive's end to the chain's next arm or
    `#endif`, nested conditionals included), None outside every arm."""
    opened: list[int] = []  # the end byte of the directive opening each arm still open
    for directive in preprocessor.directives:
        if directive.start_byte >= offset:
            break
        if directive.kind in _OPENERS:
            opened.append(directive.end_byte)
        elif directive.kind in _ARMS and opened:
            opened[-1] = directive.end_byte
        elif directive.kind == "endif" and opened:
            opened.pop()
    if not opened:
        return None
    depth = 0
    for directive in preprocessor.directives:
        if directive.start_byte < offset:
            continue
        if directive.kind in _OPENERS:
            depth += 1
        elif directive.kind == "endif" and depth:
            depth -= 1
        elif depth == 0 and (directive.kind in _ARMS or directive.kind == "endif"):
            return opened[-1], directive.start_byte
    return None  # an arm never closed


def code_words(code: bytes) -> set[str]:
    """The identifiers of a piece of code that may be a project's own names: its comments, literals and directive
    lines left out, and C++'s keywords and reserved `__x` names."""
    text = _COMMENT_LITERAL_OR_DIRECTIVE.sub(" ", code.decode("utf-8", "replace"))
    return {word for word in _WORD.findall(text) if not word.startswith("__") and word not in CPP_KEYWORDS}


_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_COMMENT_LITERAL_OR_DIRECTIVE = re.compile(
    r'//[^\n]*|/\*(?s:.*?)\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|^[ \t]*#[^\n]*$', re.MULTILINE
)
# C++'s keywords and the names every compiler declares: never a project's own name.
CPP_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "const_cast",
        "continue",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "nullptr",
        "operator",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "std",
        "size_t",
    ]
)


def function_bodies(data: bytes) -> list[tuple[int, int]]:
    """The byte spans of the outermost function bodies in `data`: braces whose head (the text since the last `;`,
    `{` or `}`) ends like a function's declarator (`) const`, `) -> T`). A name declared inside one is a local, which
    no other code sees. Read from the text, comments, literals and directive lines blanked."""
    text = _COMMENT_LITERAL_OR_DIRECTIVE_BYTES.sub(lambda m: b" " * len(m.group()), data)
    bodies: list[tuple[int, int]] = []
    depth = 0
    opened_at: int | None = None  # where the outermost function body open began
    start = 0
    for token in _BRACE_OR_END.finditer(text):
        kind = token.group()
        if kind == b"{":
            if opened_at is None and _FUNCTION_HEAD.search(text[start : token.start()]):
                opened_at, depth = token.start(), 0
            if opened_at is not None:
                depth += 1
        elif kind == b"}" and opened_at is not None:
            depth -= 1
            if depth == 0:
                bodies.append((opened_at, token.end()))
                opened_at = None
        start = token.end()
    return bodies


_BRACE_OR_END = re.compile(rb"[{};]")
_FUNCTION_HEAD = re.compile(
    rb"\)\s*(?:const|noexcept|override|final|mutable|volatile|&|->[^{;()]*(?:\([^{;]*\))?|\s)*$"
)
_COMMENT_LITERAL_OR_DIRECTIVE_BYTES = re.compile(_COMMENT_LITERAL_OR_DIRECTIVE.pattern.encode(), re.MULTILINE)
