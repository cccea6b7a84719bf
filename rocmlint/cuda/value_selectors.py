"""Backend selectors compared by value: a macro a project's `#if` chains compare with integers, one arm per backend
(`#if (XYZ_BACKEND == 1)` including CUDA's headers, `#elif (XYZ_BACKEND == 2)` including HIP's, other values for
other accelerators). The build passes the value (`-DXYZ_BACKEND=${XYZ_BACKEND}`), so no vendor's build defines the
macro by name; the arms show which value is which vendor's: the value whose arm is written for NVIDIA is NVIDIA's
build, the one whose arm is written for ROCm is ROCm's. Learned as a macro with a value on each vendor's build, every
`XYZ_BACKEND == 1` in the project is then NVIDIA's condition and `XYZ_BACKEND == 2` ROCm's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rocmlint.cuda.preprocessor import (
    Directive,
    LearnedMacro,
    MacroEvidence,
    MacroState,
    Preprocessor,
    VendorMacros,
    parse_int,
)

# `X == 1`, `(X==1)`, `1 == X`: one macro compared with one integer, the whole condition.
_COMPARED = re.compile(r"\(?\s*(?:([A-Za-z_]\w*)\s*==\s*(\w+)|(\d\w*)\s*==\s*([A-Za-z_]\w*))\s*\)?")


def value_arms(preprocessor: Preprocessor) -> Iterator[tuple[str, int, int, int, int]]:
    """(macro, value, first byte, end byte, line) of each `#if` / `#elif` arm whose whole condition compares one
    macro with one integer, in chains whose every such arm compares the same macro."""
    chains: list[list[tuple[Directive, int, int]]] = []  # per open chain: (arm's directive, its first byte, end)
    for directive in preprocessor.directives:
        kind = directive.kind
        if kind in ("if", "ifdef", "ifndef"):
            chains.append([(directive, directive.end_byte, -1)])
        elif kind in ("elif", "elifdef", "elifndef", "else") and chains:
            _close_arm(chains[-1], directive.start_byte)
            chains[-1].append((directive, directive.end_byte, -1))
        elif kind == "endif" and chains:
            arms = chains.pop()
            _close_arm(arms, directive.start_byte)
            yield from _compared_arms(arms)


def _close_arm(arms: list[tuple[Directive, int, int]], end: int) -> None:
    directive, start, _ = arms[-1]
    arms[-1] = (directive, start, end)


def _compared_arms(arms: list[tuple[Directive, int, int]]) -> Iterator[tuple[str, int, int, int, int]]:
    found: list[tuple[str, int, int, int, int]] = []
    for directive, start, end in arms:
        if directive.kind not in ("if", "elif"):
            continue
        compared = _compared(directive.condition)
        if compared is not None:
            found.append((compared[0], compared[1], start, end, directive.line))
    if len({name for name, *_ in found}) == 1:
        yield from found


def _compared(condition: str) -> tuple[str, int] | None:
    match = _COMPARED.fullmatch(condition)
    if match is None:
        return None
    name, text = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    value = parse_int(text)
    return None if value is None else (name, value)


# One arm's vote, as `FileFacts.value_votes` holds it: (macro, value, vendor its code is written for, line).
ValueVote = tuple[str, int, str, int]


def learn_value_selectors(votes_by_path: Iterable[tuple[str, ValueVote]]) -> Iterator[LearnedMacro]:
    """A macro whose compared arms (`FileFacts.value_votes`, with their files' paths) are written, over the whole project, for NVIDIA at one
    value and for ROCm at another, and never for both at one value: defined on both builds, with the value of each.
    Not a macro rocmlint's tables know (`CUDA_VERSION == 11000` compares a version whose value they know already)."""
    well_known = VendorMacros().well_known
    votes: dict[str, dict[int, dict[str, tuple[str, int]]]] = {}
    for path, (name, value, vendor, line) in votes_by_path:
        votes.setdefault(name, {}).setdefault(value, {}).setdefault(vendor, (path, line))
    for name, by_value in sorted(votes.items()):
        if name in well_known:
            continue
        if any(len(vendors) != 1 for vendors in by_value.values()):
            continue  # one value's arms written for both vendors: no backend selector
        nvidia = [value for value, vendors in by_value.items() if "nvidia" in vendors]
        rocm = [value for value, vendors in by_value.items() if "rocm" in vendors]
        if len(nvidia) != 1 or len(rocm) != 1:
            continue
        path, line = by_value[nvidia[0]]["nvidia"]
        why = f"its `== {nvidia[0]}` arms are written for NVIDIA, its `== {rocm[0]}` arms for ROCm"
        evidence = MacroEvidence("arms", path, line, why)
        yield LearnedMacro(name, "nvidia", MacroState(True, rocm[0]), MacroState(True, nvidia[0]), evidence)
