"""The configurations a project's CMake build refuses to make together with ROCm, as states of its macros.

`if(XYZ_UM AND NOT ENABLE_CUDA AND NOT XYZ_THIN) message(FATAL_ERROR ...)` stops every configure run without CUDA, a
ROCm build's among them, that turns `XYZ_UM` on and `XYZ_THIN` off; `if(XYZ_CVODE AND ENABLE_HIP) message(FATAL_ERROR
...)` stops a ROCm build turning `XYZ_CVODE` on. A configure header declaring an option with `#cmakedefine XYZ_UM`
defines the macro exactly when the option is on, so no ROCm compile sees `XYZ_UM` defined and `XYZ_THIN` undefined: the
preprocessor reads such files once per allowed combination (`VendorMacros.rocm_refused`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from rocmlint.cuda.build_files import cmake_commands, vendor_of_words

# One macro state: (name, defined).
Literal = tuple[str, bool]
# The states a refusal forbids together, and "path:line" of its `message(FATAL_ERROR ...)`.
Refusal = tuple[frozenset[Literal], str]

# `#cmakedefine NAME`, not `#cmakedefine01 NAME` (always defined, as 0 or 1).
_PLAIN_CMAKEDEFINE = re.compile(r"^[ \t]*#[ \t]*cmakedefine[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_]\w*")
# The commands opening and closing code that runs only when called.
_DEFINITIONS = {"function": "endfunction", "macro": "endmacro"}


def configure_header_switches(text: str) -> frozenset[str]:
    """The macros a configure header template defines, with nothing, exactly when the CMake variable of the same name
    is true (`#cmakedefine XYZ_UM`)."""
    return frozenset(_PLAIN_CMAKEDEFINE.findall(text))


def rocm_refusals(texts: Mapping[str, str], switches: frozenset[str], root: str) -> tuple[Refusal, ...]:
    """The combinations of `switches` (see `configure_header_switches`) a `message(FATAL_ERROR ...)` stops a ROCm
    configure run with: every `if()` arm around it, outside functions and macros, is the first arm of its chain (or
    the `else()` of a one-macro test) and a conjunction of options, their negations and a vendor's marker that holds on
    ROCm (`ENABLE_HIP`, `NOT ENABLE_CUDA`); every other option is a switch. Anything else (an `OR`, a comparison, an
    option no header declares) leaves the refusal out: it may stop fewer configurations than its switches say."""
    found: dict[frozenset[Literal], str] = {}
    for path, text in texts.items():
        arms: list[list[Literal] | None] = []  # per open `if`: the literals of its current arm, None if unreadable
        tested: list[list[Literal] | None] = []  # per open `if`: the literals of its first arm, None after an elseif
        definitions: list[str] = []
        for command, arguments, line in cmake_commands(text):
            name = command.lower()
            if name in _DEFINITIONS:
                definitions.append(_DEFINITIONS[name])
            elif definitions and name == definitions[-1]:
                definitions.pop()
            elif name == "if":
                literals = _conjunction(arguments)
                arms.append(literals)
                tested.append(literals)
            elif name == "elseif" and arms:
                arms[-1] = tested[-1] = None
            elif name == "else" and arms:
                arms[-1] = _negated(tested[-1])
            elif name == "endif" and arms:
                arms.pop()
                tested.pop()
            elif name == "message" and arguments.split()[:1] == ["FATAL_ERROR"] and arms and not definitions:
                refused = _refused_on_rocm(arms, switches)
                if refused:
                    found.setdefault(refused, f"{os.path.relpath(path, root)}:{line}")
    return tuple(found.items())


def _conjunction(condition: str) -> list[Literal] | None:
    """`A AND NOT B` as [("A", True), ("B", False)]; None for any other condition."""
    words = condition.split()
    literals: list[Literal] = []
    expect_name, negated = True, False
    for word in words:
        if expect_name and word == "NOT" and not negated:
            negated = True
        elif expect_name and _NAME.fullmatch(word) and word not in ("AND", "OR", "NOT"):
            literals.append((word, not negated))
            expect_name, negated = False, False
        elif not expect_name and word == "AND":
            expect_name = True
        else:
            return None
    return literals if literals and not expect_name else None


def _negated(literals: list[Literal] | None) -> list[Literal] | None:
    """The `else()` arm of a one-option test."""
    if literals is None or len(literals) != 1:
        return None
    name, on = literals[0]
    return [(name, not on)]


def _refused_on_rocm(arms: list[list[Literal] | None], switches: frozenset[str]) -> frozenset[Literal]:
    """The switches' states the open arms need, when they are a ROCm configuration's (a vendor marker holding on ROCm
    is among them, none holding only on NVIDIA) and every other option is a switch; empty otherwise."""
    on_rocm = False
    refused: set[Literal] = set()
    for arm in arms:
        if arm is None:
            return frozenset()
        for name, on in arm:
            vendor = vendor_of_words(name)
            if vendor is not None:
                if (vendor == "rocm") != on:
                    return frozenset()  # needs CUDA on (or ROCm off): not a ROCm configuration
                on_rocm = True
            elif name in switches:
                refused.add((name, on))
            else:
                return frozenset()
    return frozenset(refused) if on_rocm else frozenset()
