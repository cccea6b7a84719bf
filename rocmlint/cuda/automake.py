"""The vendors of automake's conditionals: `if WITH_NVIDIA_GPU_VERSION` ... `else` ... `endif` in a `Makefile.am`
picks the sources one vendor's build compiles (`GPU/CUDA/*.cu` under the NVIDIA conditional, their `.hip` twins under
the AMD one). A conditional's vendor is the one its name says, else the one the `AM_CONDITIONAL` defining it in
`configure.ac` or an autoconf macro file (`*.m4`) tests (`AM_CONDITIONAL([GPU_A], [test "x$enable_nvidia_gpu" =
xyes])`), else, for its own arm only, the one whose libraries and flags that arm alone reads (`$(CUDA_LIBS)`,
`$(CUDA_CPPFLAGS)`: a library linking the CUDA runtime builds for NVIDIA only)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping

# The vendor the words of a name or condition say (`rocmlint.cuda.build_files.vendor_of_words`, which reads these).
VendorOf = Callable[[str], str | None]


def is_autoconf_file(name: str) -> bool:
    """A file where autoconf reads `AM_CONDITIONAL`s: the `configure.ac` (or older `configure.in`) and the macro
    files it includes (`*.m4`)."""
    return name in ("configure.ac", "configure.in") or name.endswith(".m4")


def is_automake_file(path: str) -> bool:
    """An automake input (`Makefile.am`, or a fragment one includes, `module.am`): where `if NAME` is automake's."""
    return path.endswith(".am")


def distributed_only(path: str, variable: str) -> str:
    """Why the files an automake input assigns to `variable` are never compiled, "" when they may be: `EXTRA_DIST`
    and the `*_DATA` lists name files `make dist` ships and `make install` copies, which no rule compiles (a shipped
    test's sources, a template a compiled source includes)."""
    if not is_automake_file(path) or not (variable == "EXTRA_DIST" or variable.endswith("_DATA")):
        return ""
    return f"automake's {variable} only ships it"


# autoconf's request for a configuration header (`AC_CONFIG_HEADERS([config.h])`, older `AM_CONFIG_HEADER`).
_CONFIG_HEADER = re.compile(r"^[ \t]*(?:AC_CONFIG_HEADERS?|AM_CONFIG_HEADER)\s*\(", re.MULTILINE)


def config_header_request(autoconf: Mapping[str, str]) -> tuple[str, int] | None:
    """(path, line) of the project's `configure.ac` (of `autoconf`: path -> text) request for a configuration header,
    None without one: automake then puts `-DHAVE_CONFIG_H` in `DEFS`, which every compile it runs gets, whatever the
    vendor. An autoconf macro file (`*.m4`) may spell the request inside a macro nothing calls."""
    for path, text in sorted(autoconf.items()):
        if os.path.basename(path) not in ("configure.ac", "configure.in"):
            continue
        match = _CONFIG_HEADER.search(text)
        if match is not None:
            return path, text.count("\n", 0, match.start()) + 1
    return None


def automake_conditional_vendors(texts: Iterable[str], vendor_of_words: VendorOf) -> dict[str, str]:
    """Each `AM_CONDITIONAL` of the autoconf files' `texts` whose test names one vendor only (`test
    "x$enable_nvidia_gpu" = "xyes"`, `test "x$have_hip" != xno`) -> that vendor. A test that holds when the vendor's
    switch is off (`= xno`) says nothing."""
    vendors: dict[str, set[str | None]] = {}
    for text in texts:
        for match in _AM_CONDITIONAL.finditer(text):
            name, test = match.groups()
            vendor = None if _OFF_TEST.search(test) else vendor_of_words(test.replace("$", " "))
            vendors.setdefault(name, set()).add(vendor)
    return {name: vendor for name, found in vendors.items() if len(found) == 1 and (vendor := next(iter(found)))}


# `AM_CONDITIONAL([NAME], [TEST])` (brackets optional); the test ends at the closing bracket or parenthesis.
_AM_CONDITIONAL = re.compile(r"AM_CONDITIONAL\(\s*\[?(\w+)\]?\s*,\s*\[?([^\]\)\n]*)")
# A test comparing a switch for equality with an "off" value: it holds when the vendor's build is off.
_OFF_TEST = re.compile(r"(?<![!])=\s*[\"']?x?(?:no|n|false|0)?[\"']?\s*$")


def automake_arm_vendors(
    lines: list[tuple[int, str]], conditionals: Mapping[str, str], vendor_of_words: VendorOf
) -> Iterator[tuple[int, str, tuple[str | None, str | None]]]:
    """(line, "if", "else" or "endif", the vendors of the arm and of its `else`) of each automake conditional line of
    a `Makefile.am` (`lines`: logical lines); make's own `ifeq`/`ifdef` blocks, which automake passes on, are left
    to make's reader. `if !NAME` swaps the vendors."""
    found: dict[int, tuple[str, tuple[str | None, str | None]]] = {}
    opened: list[tuple[int, str, bool, set[str | None]] | None] = []  # per open block (None: make's): line, name,
    # negated, and the vendors of the variables its `if` arm reads ("else" once past its `else`)
    for line, logical in lines:
        words = logical.split()
        opening = _AUTOMAKE_IF.match(logical)
        if opening is not None:
            opened.append((line, opening.group(2), bool(opening.group(1)), set()))
        elif words and words[0] in _MAKE_OPENINGS:
            opened.append(None)
        elif words[:1] == ["else"] and opened and opened[-1] is not None and words[1:2] != ["ifeq"]:
            opened[-1][3].add("else")
            found[line] = ("else", (None, None))
        elif words[:1] == ["endif"] and opened:
            block = opened.pop()
            if block is not None:
                start, name, negated, reads = block
                found[start] = ("if", _arms(conditionals.get(name) or vendor_of_words(name), negated, reads))
                found[line] = ("endif", (None, None))
        elif opened and opened[-1] is not None and "else" not in opened[-1][3]:
            # Only the innermost block's: an outer arm reading CUDA's flags only inside `if HAVE_CUDA` is no one's.
            opened[-1][3].update(vendor_of_words(v) for v in _VARIABLE_READ.findall(logical))
    for line in sorted(found):
        yield line, *found[line]


_MAKE_OPENINGS = frozenset({"ifeq", "ifneq", "ifdef", "ifndef"})


def _arms(named: str | None, negated: bool, reads: set[str | None]) -> tuple[str | None, str | None]:
    other = {"rocm": "nvidia", "nvidia": "rocm"}
    if named is not None:
        return (other[named], named) if negated else (named, other[named])
    read = reads - {None, "else"}
    if negated or len(read) != 1:
        return None, None
    return read.pop(), None


_AUTOMAKE_IF = re.compile(r"^if\s+(!?)\s*(\w+)\s*$")
# A variable a `Makefile.am` line reads: `$(CUDA_LIBS)`, `${ROCM_LDFLAGS}`.
_VARIABLE_READ = re.compile(r"\$[({](\w+)[)}]")


def autoconf_texts(paths: Iterable[str], read: Mapping[str, str]) -> list[str]:
    """The texts of the autoconf files among `paths` that `read` holds."""
    return [read[path] for path in paths if is_autoconf_file(os.path.basename(path)) and path in read]
