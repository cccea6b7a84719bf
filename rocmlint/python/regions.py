"""Which parts of a Python file the rules need, so that only those are parsed and walked.

The files a trigger lets through are often large (inductor's code generators, test suites of one
class): building and walking their whole tree dominates a cold run. Most of such a file is
functions and methods no trigger lands in. This module finds them from the raw text and blanks their
lines, so the parsed module has the same lines and columns as the file (every position and edit stays
exact) but holds only:

- every top-level statement that is not a def, a class or a plain assignment or expression statement
  (imports, `if`/`try`/`with` blocks), and every one of those that says hip, rocm or amd or may end the
  module (`exit`, `skip`, ...);
- every def, class and method a trigger lands in;
- what the analyses of those reach by name (a fixpoint over words, deliberately over-inclusive):
  functions their text calls or names (a guard function `is_hip()`, a pruning callback), methods and
  properties it names (`self.is_rocm`), classes it names (a base class); functions and methods that
  name a kept definition (callers decide whether a function runs on ROCm); methods assigning a
  `self.<attr>` that kept text names; module-level statements assigning a name kept text reads; and code
  that names a variable assigned where a trigger lands (`MODE = "reduce-overhead"` used as `mode=MODE`);
- anything containing `global` or `nonlocal` (it rebinds names other code reads).

Inside a kept module-level statement of _LARGE_LITERAL_LINES lines or more, the elements of its large
list, dict and set literals are blanked too when no trigger lands in them, they are more than strings and
names (a list of CUDA sources stays whole for the embedded-CUDA scan), and the fixpoint does not need
what they read (an element reading a name a trigger's statement binds, or calling a kept function,
stays): `op_db = [OpInfo(...), ...]` with an FP8 dtype in three of its five hundred entries, a tuning
table read by a kept function (hundreds of thousands of nodes to walk). The lines blanked this way are
reported (`Reduction.elided`) so that a diagnostic or fix reaching them can be redone on the
whole file (rocmlint/python/frontend.py).

The scan relies on the file being valid Python (the caller compiles it first), so strings, comments,
brackets and continuation lines are tokenised exactly; unbalanced brackets keep the whole file, and a
reduced module that does not parse is parsed whole (rocmlint/python/frontend.py). What the fixpoint
keeps is checked against whole-file parsing by tests/test_regions.py (every rule example inside a
large file) and, by hand, on the PyTorch and vLLM trees (docs/performance.md).
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from rocmlint.python.lexical import COMMENT, STRING, STRING_OR_COMMENT

# Each match skips plain code in one tight character-class loop, then takes one token: five times
# faster in the regex engine than trying every alternative at every character.
_TOKEN = re.compile(
    rf"""
    [^"'\#()\[\]{{}}\\]*+
    (?:
      (?P<flat>[(\[{{][^()\[\]{{}}"'\#\\\r\n]*[)\]}}])  # `f(a, b)` on one line: opens and closes, nothing to do
    | (?P<string>{STRING})
    | (?P<comment>{COMMENT})
    | (?P<open>[(\[{{])
    | (?P<close>[)\]}}])
    | (?P<continuation>\\(?:\r\n|\r|\n))
    )?  # optional: a tail with no token still matches once (a failed match would rescan it per character)
    """,
    re.VERBOSE | re.DOTALL,
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DEFINITION = re.compile(r"(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_MODULE_LEVEL_DEFINED = re.compile(r"^(?:\t| {0,4})(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_WORD = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_ATTRIBUTE = re.compile(r"\.[ \t]*(\w+)")
_ATTRIBUTE_ASSIGNMENT = re.compile(r"\b\w+\.(\w+)[ \t]*(?::[^=\r\n]*)?(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")
_AS_NAME = re.compile(r"\bas[ \t]+(\w+)")
_WALRUS = re.compile(r"\b(\w+)[ \t]*:=")
_FOR_TARGETS = re.compile(r"(?:async[ \t]+)?for[ \t]+(.+?)[ \t]+in\b", re.DOTALL)
# `=` of an assignment (also augmented and annotated), not of a comparison.
_ASSIGNMENT_EQUALS = re.compile(r"(?<![=!<>])=(?!=)")
_TRAILING_SUBSCRIPT = re.compile(r"\[[^\[\]]*\]\s*$")
_NEAR = 12  # lines around a trigger whose names count, in a statement longer than twice that
_LARGE_LITERAL_LINES = 50  # a statement this long may have its literals' elements blanked
_BRACKET = re.compile(r"[\[\](){}]")
_CLOSING = {"]": "[", ")": "(", "}": "{"}
# A call, subscript or nested literal: an element holding none is plain strings and names.
_COMPOUND = re.compile(r"[\w)\]][ \t]*[(\[]|[\[{]")
_FREE_NAME = re.compile(r"(?<![\w.])[^\W\d]\w*")  # a name not after a dot: a variable or function read
_NOT_LINE_BREAK = re.compile(r"[^\r\n]")
_KEYWORDS = frozenset(
    [
        "if",
        "elif",
        "else",
        "for",
        "while",
        "try",
        "except",
        "finally",
        "with",
        "def",
        "class",
        "async",
        "import",
        "from",
        "global",
        "nonlocal",
        "assert",
        "raise",
        "return",
        "del",
        "pass",
        "break",
        "continue",
        "match",
        "case",
        "type",
        "await",
        "yield",
        "lambda",
        "not",
        "print",
    ]
)
# A module-level statement matching this stays: it may bind a ROCm guard a fix reuses (gating's naming
# conventions included: `on_gfx9`, `on_mi3xx`), probe for a package, or end the module early
# (`sys.exit()`, `pytest.skip(...)`), which gates everything after it.
_PINNED = re.compile(r"hip|rocm|amd|gfx|mi\d|find_spec|exit|skip|abort|fail|raise", re.IGNORECASE)
_REBINDING_WORDS = frozenset({"global", "nonlocal"})


@dataclass
class _Unit:
    """A def or class (with its decorators) or a plain assignment/expression statement at the top
    level, or a def or class directly inside a top-level class: what the scan may blank."""

    first: int  # 0-based first line (its first decorator)
    end: int  # 0-based line after its last line
    name: str
    is_class: bool
    owner: _Unit | None = None  # the class a method belongs to
    statement: bool = False  # a module-level assignment or expression statement
    members: list[_Unit] = field(default_factory=list)
    kept: bool = False
    elided: list[tuple[int, int]] = field(default_factory=list)  # line runs [first, end) of literal elements left out


@dataclass(frozen=True)
class Reduction:
    """The text parsed instead of the file's, and which lines of kept statements it left out."""

    text: str
    elided: tuple[tuple[int, int], ...]  # 0-based line runs [first, end) of blanked literal elements


def reduce_source(
    text: str, hit_offsets: Iterable[int], pinned: Iterable[str] = (), elide_literals: bool = True
) -> Reduction | None:
    """`text` with the lines of every unneeded def, class, method and module-level statement blanked
    (line endings kept; a method becomes `pass` so its class keeps a body); None when nothing can be
    left out. `hit_offsets`: offsets into `text` where a trigger of a rule that will run matched.
    `pinned`: names whose module-level definitions always stay (configured ROCm guards).
    `elide_literals`: also blank the elements of large literals no trigger lands in."""
    lines = _LINE_BREAK.split(text)
    breaks = [match.end() for match in _LINE_BREAK.finditer(text)]
    starts = _statement_starts(text, breaks, len(lines))
    if starts is None:
        return None
    units = _units(lines, starts)
    if not units:
        return None
    hit_lines = sorted({bisect_right(breaks, offset) for offset in hit_offsets})
    if elide_literals:
        for unit in units:
            if unit.statement and unit.end - unit.first >= _LARGE_LITERAL_LINES:
                unit.elided = _elidable_elements(lines, unit, hit_lines)
    _Analysis(lines, units, starts, hit_lines, frozenset(pinned)).run()
    dropped = [unit for unit in _all_units(units) if not unit.kept and (unit.owner is None or unit.owner.kept)]
    elided = _merged(run for unit in units if unit.kept for run in unit.elided)
    if not dropped and not elided:
        return None
    return Reduction(_blank(text, lines, breaks, dropped, elided), tuple(elided))


def _first_indented_line(lines: list[str], starts: list[int]) -> int:
    """The first indented statement's line (-1 without one): libcst takes its indentation as the
    module's default_indent, which fixes indent added code with, so it must stay."""
    for line_number in starts:
        line = lines[line_number] if line_number < len(lines) else ""
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith("#") and len(stripped) < len(line):
            return line_number
    return -1


def _statement_starts(text: str, breaks: list[int], line_count: int) -> list[int] | None:
    """0-based lines on which a logical line begins: every line but those inside brackets or a
    multi-line string, or after a backslash continuation. None if the brackets do not balance."""
    inside = bytearray(line_count)

    def cover(start: int, end: int) -> None:
        """Lines after the one holding offset `start`, through the one holding offset `end`."""
        first, last = bisect_right(breaks, start) + 1, bisect_right(breaks, end)
        if last >= first:
            inside[first : last + 1] = b"\x01" * (last + 1 - first)

    depth = 0
    opened = 0
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "flat":
            continue
        if kind == "open":
            if depth == 0:
                opened = match.start(kind)
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                cover(opened, match.start(kind))
        elif kind == "string":
            start = match.start(kind)
            if depth == 0 and _LINE_BREAK.search(text, start, match.end()):
                cover(start, match.end() - 1)
        elif kind == "continuation":
            cover(match.start(kind), match.end())
    if depth != 0:
        return None
    return [line for line, covered in enumerate(inside) if not covered]


def _units(lines: list[str], starts: list[int]) -> list[_Unit]:
    """Top-level defs and classes, and the defs and classes directly inside top-level classes."""
    top = _definitions(lines, starts, 0, len(lines), "")
    for unit in top:
        if unit.is_class:
            indent = _body_indent(lines, starts, unit)
            if indent:
                unit.members = _definitions(lines, starts, unit.first, unit.end, indent, owner=unit)
    return top


def _definitions(
    lines: list[str], starts: list[int], first: int, end: int, indent: str, owner: _Unit | None = None
) -> list[_Unit]:
    """The defs and classes whose statements begin at exactly `indent` within lines [first, end)."""
    found: list[_Unit] = []
    decorator_start: int | None = None
    current: _Unit | None = None
    for line_number in starts[bisect_right(starts, first - 1) :]:
        if line_number >= end:
            break
        line = lines[line_number]
        content = line[len(indent) :] if line.startswith(indent) else None
        if content is None or not content or content[0] in " \t#" or content.isspace():
            continue  # deeper (or shallower: only at the very end), blank, or a comment line
        if current is not None:
            current.end = line_number
            current = None
        if content.startswith("@"):
            decorator_start = line_number if decorator_start is None else decorator_start
            continue
        definition = _DEFINITION.match(content)
        if definition is not None:
            unit_first = decorator_start if decorator_start is not None else line_number
            current = _Unit(unit_first, end, definition.group(2), definition.group(1) == "class", owner)
            found.append(current)
        elif owner is None and _is_plain_statement(content):
            current = _Unit(line_number, end, "", False, statement=True)
            found.append(current)
        decorator_start = None
    return found


def _is_plain_statement(content: str) -> bool:
    """A module-level assignment or expression statement (`op_db = [...]`, `add_docstr(...)`), not a
    compound statement, import or other keyword statement."""
    first = _IDENTIFIER.match(content)
    return first is not None and first.group() not in _KEYWORDS


def _body_indent(lines: list[str], starts: list[int], unit: _Unit) -> str:
    """The indentation of a class's body statements; '' for a one-line class."""
    for line_number in starts[bisect_right(starts, unit.first) :]:
        if line_number >= unit.end:
            break
        line = lines[line_number]
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith("#") and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return ""


def _elidable_elements(lines: list[str], unit: _Unit, hit_lines: list[int]) -> list[tuple[int, int]]:
    """Line runs [first, end) of a statement's large list/dict/set literals that each hold whole
    elements (ending with their comma) and no trigger: blanking them leaves a valid literal."""
    code = _code_only("\n".join(lines[unit.first : unit.end])).split("\n")
    level = [0]  # bracket depth at the start of each line
    for line in code:
        level.append(level[-1] + _net_brackets(line))
    runs: list[tuple[int, int]] = []
    for opening, closing, depth in _large_literals(code):
        element_starts = _element_starts(code, level, opening, closing, depth)
        for first, end in itertools.pairwise(element_starts):
            if _contains_line(hit_lines, unit.first + first, unit.first + end):
                continue
            element = "\n".join(code[first:end])
            if ":=" in element:
                continue  # an assignment expression binds a name other code may read
            if not _COMPOUND.search(element):
                continue  # strings and names only: a list of CUDA sources for load_inline, say
            runs.append((unit.first + first, unit.first + end))
    return runs


def _merged(runs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line runs with neighbouring ones joined (one elided stretch per run of blanked elements)."""
    merged: list[tuple[int, int]] = []
    for first, end in sorted(runs):
        if merged and merged[-1][1] == first:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((first, end))
    return merged


def _code_only(text: str) -> str:
    """`text` with every character of a string literal but its line breaks made `S` and every comment
    removed, so the brackets and commas left are code."""
    pieces: list[str] = []
    position = 0
    for match in STRING_OR_COMMENT.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue
        start, end = match.span(kind)
        pieces.append(text[position:start])
        if kind == "string":
            pieces.append(_NOT_LINE_BREAK.sub("S", text[start:end]))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _large_literals(code: list[str]) -> list[tuple[int, int, int]]:
    """(opening line, closing line, depth outside) of the outermost `[...]`/`{...}` literals spanning
    at least _LARGE_LITERAL_LINES lines; a `[` after a name or bracket is a subscript, not a literal."""
    found: list[tuple[int, int, int]] = []
    open_brackets: list[tuple[str, int, bool]] = []  # (bracket, line, is a literal)
    for line_number, line in enumerate(code):
        for match in _BRACKET.finditer(line):
            bracket = match.group()
            if bracket in "([{":
                before = line[: match.start()].rstrip()
                literal = bracket == "{" or not before or not (before[-1] in "])}S_" or before[-1].isalnum())
                open_brackets.append((bracket, line_number, literal))
                continue
            if not open_brackets or open_brackets[-1][0] != _CLOSING[bracket]:
                return []  # cannot happen in code that compiles; stay safe
            opener, opening, literal = open_brackets.pop()
            if literal and opener != "(" and line_number - opening >= _LARGE_LITERAL_LINES:
                found = [inner for inner in found if inner[0] < opening]  # nested ones are inside this one
                found.append((opening, line_number, len(open_brackets)))
    return found


def _element_starts(code: list[str], level: list[int], opening: int, closing: int, depth: int) -> list[int]:
    """Lines in (opening, closing] on which an element of the literal opened on line `opening` begins,
    alone at its start: right after the opener, or after a line ending with the comma of the element
    before. `closing` counts when the last element ends with a comma, so every run between two of these
    lines is whole elements with their commas."""
    starts: list[int] = []
    previous = code[opening].rstrip()
    for line_number in range(opening + 1, closing + 1):
        stripped = code[line_number].strip()
        if not stripped:
            continue
        after_opener = line_number == opening + 1 and previous[-1:] in ("[", "{")
        if level[line_number] == depth + 1 and (previous.endswith(",") or after_opener):
            starts.append(line_number)
        previous = stripped
    return starts


def _net_brackets(line: str) -> int:
    return line.count("(") + line.count("[") + line.count("{") - line.count(")") - line.count("]") - line.count("}")


def _all_units(units: list[_Unit]) -> Iterable[_Unit]:
    for unit in units:
        yield unit
        yield from unit.members


class _Analysis:
    """The words each unit's text holds, and the fixpoint deciding which units stay."""

    def __init__(
        self, lines: list[str], units: list[_Unit], starts: list[int], hit_lines: list[int], pinned: frozenset[str]
    ) -> None:
        self.units = units
        self.candidates = list(_all_units(units))
        self.own = {
            id(unit): _Words.of(_own_text(lines, unit), unit.statement, pinned, method=unit.owner is not None)
            for unit in self.candidates
        }
        # The names (not after a dot) and words of each literal element left out of its statement's own
        # words, should kept code turn out to need what it reads.
        self.element_names: dict[tuple[int, int], tuple[set[str], _Words]] = {}
        for unit in units:
            for run in unit.elided:
                text = "\n".join(lines[run[0] : run[1]])
                self.element_names[run] = (set(_FREE_NAME.findall(text)), _Words.of(text, False, pinned))
        # Every word of a class, its methods' included (a class must be kept for a method of it to be),
        # and of a statement, its elided elements' included (whether it is needed does not depend on
        # which elements would be left out once it is): unions of the parts' sets, as words and attributes
        # never span lines (rescanning a test class of thousands of lines took a tenth of a cold run).
        self.deep: dict[int, _Reach] = {}
        for unit in self.candidates:
            parts = [self.own[id(unit)]] + [self.own[id(member)] for member in unit.members]
            parts += [self.element_names[run][1] for run in unit.elided]
            self.deep[id(unit)] = _Reach(
                set().union(*(part.words for part in parts)), set().union(*(part.attributes for part in parts))
            )
        module = _Words.of(_module_text(lines, units), False, pinned)
        self.kept = _Kept(set(module.words), set(module.attributes))
        # Functions defined by module-level code itself (`if HAS_GPU:` / `    def helper():`), the one
        # block level down at most: deeper ones are local to a function of that code.
        self.top_functions = set(module.defined)
        self.kept_methods: set[str] = set()
        self.assigned = _bound_at(lines, starts, hit_lines)  # names a trigger's statement binds
        self.hit_words = _words_near(lines, starts, hit_lines)  # names the code around a trigger mentions
        top_level = [line for line in starts if line < len(lines) and lines[line][:1] not in ("", " ", "\t", "#")]
        first_indented = _first_indented_line(lines, starts)
        for unit in self.candidates:
            own = self.own[id(unit)]
            holds_hit = _contains_line(hit_lines, unit.first, unit.end)
            structural = unit.first <= first_indented < unit.end or _frames_imports(unit, top_level, lines)
            if holds_hit or structural or own.rebinds or (unit.statement and own.pinned):
                self._keep(unit)

    def run(self) -> None:
        changed = True
        while changed:
            changed = False
            families: dict[int, set[str]] = {}  # per kept class, as of this round
            for unit in self.candidates:
                if unit.kept or (unit.owner is not None and not unit.owner.kept):
                    continue
                if self._needed(unit, families):
                    self._keep(unit)
                    changed = True
            changed = self._restore_needed_elements() or changed

    def _restore_needed_elements(self) -> bool:
        """Put back the literal elements of kept statements that read what a trigger's statement binds,
        call a kept function or read a kept method (`make_ext("a", cuda_flags)` in a table of
        extensions: a rule following the flags' reads must see it), as _needed keeps units."""
        restored = False
        for unit in self.units:
            if not unit.kept:
                continue
            for run in list(unit.elided):
                names, words = self.element_names[run]
                reads_hit = not names.isdisjoint(self.assigned)
                calls_kept = not names.isdisjoint(self.top_functions)  # `unittest.skip` is not `skip`
                if reads_hit or calls_kept or not words.attributes.isdisjoint(self.kept_methods):
                    unit.elided.remove(run)
                    self.kept.add(words)
                    if reads_hit:
                        self.assigned |= self.own[id(unit)].bound
                    restored = True
        return restored

    def _keep(self, unit: _Unit) -> None:
        unit.kept = True
        own = self.own[id(unit)]
        self.kept.add(own)
        if unit.statement and not self.deep[id(unit)].words.isdisjoint(self.assigned):
            self.assigned |= own.bound  # `sm = major * 10 + minor`: what it binds carries the hit on
        if unit.owner is None and not unit.is_class and not unit.statement:
            self.top_functions.add(unit.name)  # its callers decide whether it runs on ROCm
        if unit.owner is not None:
            self.kept_methods.add(unit.name)

    def _needed(self, unit: _Unit, families: dict[int, set[str]]) -> bool:
        own, deep = self.own[id(unit)], self.deep[id(unit)]
        if not deep.words.isdisjoint(self.assigned):
            return True  # it reads a name a trigger's statement binds (or one bound from that)
        if not deep.words.isdisjoint(self.top_functions) or not deep.attributes.isdisjoint(self.kept_methods):
            return True  # it calls a kept function or method, whose callers decide where it runs
        if unit.statement:
            return not own.bound.isdisjoint(self.kept.words)  # kept code reads what it binds
        if unit.owner is None and unit.is_class:
            return unit.name in self.kept.words  # a base class, or one whose attributes kept code reads
        if unit.owner is None:
            # Gating evaluates a function where it is called (`if is_hip():`); a rule may read one that
            # kept code only names (`prune_configs_by={"early_config_prune": _prune}` on a kept kernel)
            # or that the code around its trigger names, which may sit in literal elements left out (a
            # table of ten thousand lines naming `sample_inputs_func=f` keeps only the f near a trigger).
            return unit.name in self.kept.words or unit.name in self.hit_words
        family = families.get(id(unit.owner))
        if family is None:
            family = families[id(unit.owner)] = self._family_attributes(unit.owner)
        # `self.is_rocm`, `Config.gpu_kind()`: a method or property read; `cls.use_hip = ...` for an
        # attribute read.
        return unit.name in family or not own.assigned_attributes.isdisjoint(family)

    def _family_attributes(self, cls: _Unit) -> set[str]:
        """Attributes read by kept code that names `cls` (itself, subclasses, `Config.x` users), with
        the kept methods of the classes that name it."""
        attributes = set(self.kept.attributes_where(cls.name))
        for other in self.units:
            if other.kept and other.is_class and (other is cls or cls.name in self.own[id(other)].header_words):
                for member in other.members:
                    if member.kept:
                        attributes |= self.own[id(member)].attributes
        return attributes


@dataclass
class _Kept:
    """What the kept code holds so far."""

    words: set[str]
    attributes: set[str]
    # (words, attributes) of each kept piece, to ask which attributes code naming a class reads.
    pieces: list[tuple[set[str], set[str]]] = field(default_factory=list)

    def add(self, own: _Words) -> None:
        self.words |= own.words
        self.attributes |= own.attributes
        self.pieces.append((own.words, own.attributes))

    def attributes_where(self, name: str) -> set[str]:
        found: set[str] = set()
        for words, attributes in self.pieces:
            if name in words:
                found |= attributes
        return found


@dataclass(frozen=True)
class _Reach:
    """The words and attributes (names after a dot) of a unit's whole text."""

    words: set[str]
    attributes: set[str]


@dataclass
class _Words:
    words: set[str]
    attributes: set[str]  # names after a dot
    assigned_attributes: set[str]  # of a method: `self.<name> = ...`, `cls.<name> += ...`
    defined: set[str]  # defs at most one block level down (for module-level code)
    header_words: set[str]  # words of its first line (a class's bases)
    rebinds: bool  # holds `global` or `nonlocal`
    pinned: bool  # as a module-level statement, must stay (see _PINNED)
    bound: set[str]  # as a module-level statement, the names it binds

    @classmethod
    def of(cls, text: str, statement: bool, pinned_names: frozenset[str], method: bool = False) -> _Words:
        """`method`: also find the attributes it assigns (only a method's are ever asked for)."""
        words = set(_WORD.findall(text))
        return cls(
            words,
            set(_ATTRIBUTE.findall(text)) if "." in text else set(),
            set(_ATTRIBUTE_ASSIGNMENT.findall(text)) if method and "." in text else set(),
            set(_MODULE_LEVEL_DEFINED.findall(text)) if "def" in words else set(),
            set(_WORD.findall(text.split("\n", 1)[0])),
            not words.isdisjoint(_REBINDING_WORDS),
            # `DEBUG = False; import torch as T`: a `;` may hide an import or anything else.
            statement and (";" in text or _PINNED.search(text) is not None or not words.isdisjoint(pinned_names)),
            _bound_names(text) if statement else set(),
        )


def _words_near(lines: list[str], starts: list[int], hit_lines: list[int]) -> set[str]:
    """The words of the statements triggers land in (`@triton.autotune(configs=..., prune_configs_by=
    {...: _prune})` names the function a rule reads), within _NEAR lines of the trigger in a statement
    longer than that (one entry of a 10,000-line table, not every function the table names)."""
    words: set[str] = set()
    for hit in hit_lines:
        position = bisect_right(starts, hit) - 1
        first = starts[position]
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        if end - first > 2 * _NEAR:
            first, end = max(first, hit - _NEAR), min(end, hit + _NEAR + 1)
        words |= set(_WORD.findall("\n".join(lines[first:end])))
    return words


def _frames_imports(unit: _Unit, top_level: list[int], lines: list[str]) -> bool:
    """Whether blanking this top-level unit could change what the fixes see around imports: it is the
    module's first statement (`import torch` would go above it), or an import follows it (two import
    blocks it separates would become one, moving where `_IS_ROCM = ...` goes)."""
    if unit.owner is not None:
        return False
    index = bisect_right(top_level, unit.first - 1)
    if index == 0:
        return True
    following = bisect_right(top_level, unit.end - 1)
    return following < len(top_level) and lines[top_level[following]].startswith(("import ", "from "))


def _own_text(lines: list[str], unit: _Unit) -> str:
    """A unit's lines without those of its members (a class's methods are units of their own) and
    without its elided literal elements."""
    taken = [False] * (unit.end - unit.first)
    for first, end in [(member.first, member.end) for member in unit.members] + unit.elided:
        taken[first - unit.first : end - unit.first] = [True] * (end - first)
    return "\n".join(line for line, gone in zip(lines[unit.first : unit.end], taken, strict=False) if not gone)


def _module_text(lines: list[str], units: list[_Unit]) -> str:
    """The lines outside every top-level def and class."""
    taken = [False] * len(lines)
    for unit in units:
        taken[unit.first : unit.end] = [True] * (unit.end - unit.first)
    return "\n".join(line for line, gone in zip(lines, taken, strict=True) if not gone)


def _bound_at(lines: list[str], starts: list[int], hit_lines: list[int]) -> set[str]:
    """Names bound by the statements triggers land in (`MODE = "reduce-overhead"` -> MODE;
    `self.flags += [...]` -> flags; `os.environ["X"] = ...` -> environ; `a = b = ...` -> a, b;
    `from torch.version import cuda` -> cuda; `for arch in ...`, `with ... as f`, `(n := ...)`)."""
    names: set[str] = set()
    for position in sorted({bisect_right(starts, hit) - 1 for hit in hit_lines}):
        first = starts[position]
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        names |= _bound_names("\n".join(lines[first:end]))
    return names


def _bound_names(statement: str) -> set[str]:
    body = statement.lstrip()
    if body.startswith(("import ", "from ")):
        return _imported_names(body)
    names = set(_WALRUS.findall(statement))
    header = body.split("\n", 1)[0]
    if header.startswith(("with ", "async with ", "except ")):
        names |= set(_AS_NAME.findall(header))
    loop = _FOR_TARGETS.match(header)
    if loop is not None:
        names |= set(_IDENTIFIER.findall(loop.group(1)))
    target_start = 0
    for equals in _ASSIGNMENT_EQUALS.finditer(statement):
        found = _target_names(statement[target_start : equals.start()])
        if found is None:
            break  # `f(mode=...`: from here on, keyword arguments rather than assignment targets
        names.update(found)
        target_start = equals.end()
    return names


def _imported_names(statement: str) -> set[str]:
    """What a one-line import binds (`from torch.version import cuda as v` -> v). A parenthesised list
    over many lines binds nothing here: carrying a whole import block on would keep every function that
    uses any of its names."""
    if "\n" in statement.rstrip():
        return set()
    names_part = statement.split(" import ", 1)[1] if statement.startswith("from ") else statement[len("import ") :]
    names = set()
    for alias in names_part.split("#", 1)[0].strip(" ()\r\n").split(","):
        words = alias.split()
        if len(words) == 3 and words[1] == "as":
            names.add(words[2])
        elif words:
            names.add(words[0].split(".", 1)[0])
    return names


def _target_names(target: str) -> list[str] | None:
    target = target.split(":", 1)[0].rstrip(" \t+-*/%&|^@<>")
    if target.count("(") != target.count(")") or target.count("[") != target.count("]"):
        return None
    names = []
    for part in target.split(","):
        part = _TRAILING_SUBSCRIPT.sub("", part.strip())
        words = _IDENTIFIER.findall(part)
        if words:
            names.append(words[-1])
    return names


def _contains_line(sorted_lines: list[int], first: int, end: int) -> bool:
    index = bisect_right(sorted_lines, first - 1)
    return index < len(sorted_lines) and sorted_lines[index] < end


def _blank(text: str, lines: list[str], breaks: list[int], dropped: list[_Unit], elided: list[tuple[int, int]]) -> str:
    """The text with the lines of each dropped unit and elided run emptied; a method keeps `pass` on
    its first line."""
    runs = [(unit.first, unit.end, unit.owner is not None) for unit in dropped]
    runs += [(first, end, False) for first, end in elided]
    line_starts = [0, *breaks]
    pieces: list[str] = []
    position = 0
    for first, end, keeps_pass in sorted(runs):
        start = line_starts[first]
        stop = line_starts[end] if end < len(line_starts) else len(text)
        pieces.append(text[position:start])
        if keeps_pass:
            first_line = lines[first]
            pieces.append(first_line[: len(first_line) - len(first_line.lstrip(" \t"))] + "pass")
        pieces.append("".join(_LINE_BREAK.findall(text, start, stop)))
        position = stop
    pieces.append(text[position:])
    return "".join(pieces)
