"""`#if` chains whose arms only declare what nothing in the project names.

A chain such as `#if CUDART_VERSION >= 10000` around `constexpr auto MemoryTypeManaged = ...;` decides, on ROCm, only
whether a constant exists. When no file of the project names that constant (nor this file outside the chain),
whichever arm a build takes changes no code that runs: there is nothing for ROCm to decide. The evidence is the
project's own text; without a project read every name counts as named.

Only declarations without effects count: `const`/`constexpr` variables, `using` aliases, `typedef`s and `#define`s.
A function, an object built by a constructor, or a nested conditional makes the arm one to report as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rocmlint.cuda.frontend import ByteSpan, CudaContext
from rocmlint.cuda.hip_gaps import without_comments

# One `;`-ended declaration of one name: `static constexpr auto kX = f(kX);`, `using T = float;`, `typedef int T;`.
_DECLARATION = re.compile(
    r"""\A\s*(?:
        (?:(?:static|inline|extern|__device__|__constant__|__host__)\s+)*(?:constexpr|const)\s+
            [\w:<>\s*&]*?\b(?P<constant>[A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:=|\{).*
      | using\s+(?P<alias>[A-Za-z_]\w*)\s*=.*
      | typedef\s+[\w:<>\s*&]+?\b(?P<typedef>[A-Za-z_]\w*)\s*
    )\Z""",
    re.VERBOSE | re.DOTALL,
)
_DEFINED_NAME = re.compile(r"\s*([A-Za-z_]\w*)")
_BRACKETED = re.compile(r"\([^()]*\)|\{[^{}]*\}|\[[^\[\]]*\]")


def declares_only_unnamed(arms: Sequence[ByteSpan], ctx: CudaContext) -> bool:
    """Whether the arms of a chain (the code of each, in order) hold only effect-free declarations (see the module's
    docstring), at least one, and neither this file outside the chain nor any other file of the project names what
    they declare: whichever arm a ROCm build takes, no code reads it."""
    names: set[str] = set()
    for arm in arms:
        declared = _declared_names(arm, ctx)
        if declared is None:
            return False
        names |= declared
    if not names:
        return False
    chain = ByteSpan(arms[0].start_byte, arms[-1].end_byte)
    word = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in sorted(names)) + rb")\b")
    if any(not chain.start_byte <= found.start() < chain.end_byte for found in word.finditer(ctx.content)):
        return False
    return not ctx.options.project.named_in_other_files(frozenset(names))


def _declared_names(arm: ByteSpan, ctx: CudaContext) -> set[str] | None:
    """The names the arm declares, None when it holds anything but effect-free declarations."""
    directives = [d for d in ctx.preprocessor.directives if arm.start_byte <= d.start_byte < arm.end_byte]
    if any(d.kind != "define" for d in directives):
        return None
    names: set[str] = set()
    pieces, start = [], arm.start_byte
    for define in directives:
        defined = _DEFINED_NAME.match(define.text)
        if defined is None:
            return None
        names.add(defined.group(1))
        pieces.append(ctx.content[start : define.start_byte])
        start = define.end_byte
    pieces.append(ctx.content[start : arm.end_byte])
    code = without_comments(b" ".join(pieces).decode("utf-8", "replace"))
    *statements, rest = code.split(";")
    if rest.strip():
        return None  # code after the last `;`: a function body, a namespace, a statement split by a nested `;`
    for statement in statements:
        if not statement.strip():
            continue
        declared = _declaration_name(statement)
        if declared is None:
            return None
        names.add(declared)
    return names


def _declaration_name(statement: str) -> str | None:
    """The one name the statement declares (`_DECLARATION`), None for anything else or for several declarators
    (`const int a = 1, b = 2`: a comma outside brackets)."""
    outer, previous = statement, ""
    while outer != previous:
        previous, outer = outer, _BRACKETED.sub("", outer)
    if "," in outer or "{" in outer or "}" in outer:
        return None
    found = _DECLARATION.match(statement)
    if found is None:
        return None
    return found.group("constant") or found.group("alias") or found.group("typedef")
