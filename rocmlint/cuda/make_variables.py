"""Which vendor's build reads a make variable.

A Makefile often lists each backend's sources once, outside any conditional (`cuda.c := $(wildcard
backends/cuda/*.c)`), and hands the list to what it compiles only inside the arm of that vendor's toolkit
(`ifneq ($(CUDA_DIR),) ... libx.c += $(cuda.c) ... endif`). The block around the list says nothing of its
vendor; the places make reads it do. A variable every read of which sits in one vendor's arms, directly or through
variables read only there, is that vendor's; a read anywhere else (a rule, a recipe, a conditional, an assignment
read outside the arms, a computed name that may spell it, another make file of the project) makes it no vendor's.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

# `NAME = value` and its kinds (`:=`, `+=`, `?=`, `!=`), exported or overriding.
MAKE_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|override\s+)*([A-Za-z_][\w.-]*)\s*(?::{1,3}=|\+=|\?=|!=|=)(.*)$")
# A read of a variable by its name: `$(NAME)`, `${NAME}`, a substitution reference `$(NAME:%.c=%.o)`. Function calls
# (`$(wildcard ...)`) have a space after their name.
_READ = re.compile(r"\$[({]([A-Za-z_][\w.-]*)(?=[:)}])")
# A read of a variable whose name make computes (`$($(d)_SRCS)`, `$($(v))`), and the variable parts of that name.
_COMPUTED_READ = re.compile(
    r"\$[({]((?:[\w.-]|\$[({][^(){}]*[)}])*\$[({][^(){}]*[)}](?:[\w.-]|\$[({][^(){}]*[)}])*)[)}]"
)
_INNER_READ = re.compile(r"\$[({][^(){}]*[)}]")


def variables_read(text: str) -> frozenset[str]:
    """The names of the variables a make file's text reads anywhere, by name (its comments too: more readers only
    leave more variables no vendor's)."""
    return frozenset(_READ.findall(text))


def vendors_reading(
    lines: Iterable[tuple[int, str]],
    recipes: frozenset[int],
    block_vendors: Mapping[int, str | None],
    read_elsewhere: frozenset[str],
) -> dict[str, str]:
    """Each variable of a make file (its logical `lines`, the `recipes` lines among them, the vendor of the
    conditional arms around each line) that only one vendor's arms read -> that vendor. `read_elsewhere`: the
    variables other make files of the project read, which none of them is. A computed name with a fixed part
    (`$($(d)_SRCS)`) may read any variable it matches; one with none (`$($(v))`, printing or saving a
    configuration's variables) is not followed."""
    reads: dict[str, list[tuple[str | None, str | None]]] = {}  # name -> (vendor of the arm, variable assigned)
    computed: list[str] = []
    for line, logical in lines:
        assignment = None if line in recipes else MAKE_ASSIGNMENT.match(logical)
        assigned = assignment.group(1) if assignment is not None else None
        text = assignment.group(2) if assignment is not None else logical
        for name in _READ.findall(text):
            reads.setdefault(name, []).append((block_vendors.get(line), assigned))
        for name in _COMPUTED_READ.findall(text):
            pattern = _INNER_READ.sub("*", name)
            if pattern.strip("*"):
                computed.append(pattern)
    vendors: dict[str, str | None] = {}

    def vendor(name: str, visiting: frozenset[str]) -> str | None:
        if name in vendors:
            return vendors[name]
        if name in read_elsewhere or any(fnmatch.fnmatchcase(name, pattern) for pattern in computed):
            return None
        found = set()
        for arm, assigned in reads.get(name, ()):
            if arm is None and (assigned is None or assigned in visiting or assigned == name):
                return None
            found.add(arm or vendor(assigned or "", visiting | {name}))
        result = found.pop() if len(found) == 1 else None
        vendors[name] = result
        return result

    return {name: found for name in reads if (found := vendor(name, frozenset())) is not None}
