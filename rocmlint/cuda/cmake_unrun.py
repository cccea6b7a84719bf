"""CMake code that never runs, and source lists nothing that runs reads: sources a CMake file names without handing
them to a target the build creates.

A project's CMake files may name sources the build never compiles: an example folder copied from another build that
globs `example_*.cu` and adds one executable per entry of a list the project never sets (`foreach(t IN LISTS
OTHER_TARGETS)`), a helper function nothing calls, a `set(SRCS ...)` nothing reads. Read over every CMake file of
the project, since one file may set the list another iterates, or call the function another defines:

- **a loop that never runs**: a `foreach` whose items are only lists (`IN LISTS X`, `${X}`) no CMake file of the
  project sets. A list is set when its name is a bare word of any command but a test or a loop (`set(X ...)`,
  `list(APPEND X ...)`, a function parameter, a name handed to a helper), a name a variable-built write may make
  (`set(${prefix}_TARGETS ...)`), one `cmake_parse_arguments(PREFIX ...)` or `project(NAME ...)` sets
  (`PREFIX_...`, `NAME_...`), a package's standard variable (`Xxx_LIBRARIES`, `Xxx_FIND_COMPONENTS`, ...), or CMake's own
  (`CMAKE_...`, `ARGN`, `ARGV...`). A list set only on the command line or by a preset is not seen;
- **a function or macro nothing calls**: its name is neither a command nor a bare word anywhere else;
- **a list nothing reads**: a variable that no code outside those (loops that never run, functions nothing calls)
  reads, as `${X}`, as a bare word (`list(LENGTH X n)`, `helper(X)`) or through a variable-built name
  (`${${prefix}_SRCS}`), other than the commands writing it (`set(X ${X} ...)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Command = tuple[str, str, int]  # (command, its argument text, line), as build_files reads them

# Commands whose bare words test or iterate variables without setting them.
_READING_COMMANDS = frozenset(
    {"if", "elseif", "else", "endif", "while", "endwhile", "foreach", "endforeach", "message", "return"}
)
# The commands whose first word is the variable they write, and the subcommands of `list` and `file` whose second
# is (`list(LENGTH X n)` reads `X`).
_FIRST_WORD_WRITES = frozenset({"set", "unset", "option"})
_SECOND_WORD_WRITES = {
    "list": frozenset(
        {"APPEND", "PREPEND", "INSERT", "REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES", "FILTER", "TRANSFORM"}
        | {"SORT", "REVERSE", "POP_BACK", "POP_FRONT"}
    ),
    "file": frozenset({"GLOB", "GLOB_RECURSE"}),
}
_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_EXPANSION = re.compile(r"\$\{([^{}$]*)\}")
_NESTED_EXPANSION = re.compile(r"\$\{((?:[^{}$]|\$\{[^{}]*\})*\$\{[^{}]*\}(?:[^{}$]|\$\{[^{}]*\})*)\}")
_LOOP_KEYWORDS = frozenset({"LISTS", "ITEMS", "ZIP_LISTS"})
# CMake's own variables, and the standard results of a `find_package` (CMake's "Standard Variable Names").
_BUILT_IN = re.compile(r"CMAKE_\w*|ARGN|ARGC|ARGV\d*|ENV|PROJECT_\w+")
_PACKAGE_RESULT = re.compile(
    r"\w+_(?:FOUND|INCLUDE_DIRS?|LIBRAR(?:Y|IES)|LIBRARY_DIRS|DEFINITIONS|EXECUTABLE|ROOT(?:_DIR)?|DIR|"
    r"VERSION\w*|LIBS|FIND_\w+)"
)


@dataclass(frozen=True)
class UnrunCmake:
    """What a project's CMake files leave unrun (see the module's docstring). The default runs everything."""

    unset_lists: frozenset[str] = frozenset()
    uncalled: frozenset[str] = frozenset()  # lowercase, as CMake command names are case-insensitive
    read: frozenset[str] = frozenset()  # every variable read by code that runs
    read_patterns: tuple[re.Pattern[str], ...] = ()  # names a variable-built read (`${${p}_SRCS}`) may read
    reads_known: bool = False  # False: `read` was not gathered, every list counts as read

    def why_unrun(self, command: str, arguments: str) -> str:
        """Why the body of a block a `foreach`, `function` or `macro` command opens never runs ("" when it may)."""
        words = arguments.split()
        if command in ("function", "macro") and words and words[0].lower() in self.uncalled:
            return f"in `{words[0]}`, which nothing calls"
        lists = _iterated_lists(words) if command == "foreach" else None
        if lists and all(name in self.unset_lists for name in lists):
            return f"in a loop over `{'`, `'.join(lists)}`, which no CMake file of the project sets"
        return ""

    def unread(self, variable: str) -> bool:
        """Whether no code that runs reads `variable`: the sources listed in it reach no target."""
        if not self.reads_known or not variable or variable in self.read:
            return False
        return not any(pattern.fullmatch(variable) for pattern in self.read_patterns)


RUNS_EVERYTHING = UnrunCmake()


@dataclass
class RunTracker:
    """Follows one CMake file command by command: `step` says why the command sits in code that never runs."""

    unrun: UnrunCmake
    blocks: list[str] = field(default_factory=list)  # per open foreach/function/macro: why its body never runs

    def step(self, command: str, arguments: str) -> str:
        """Why `command` (lowercase) never runs ("" when it may): the outermost block around it that never runs."""
        if command in ("endforeach", "endfunction", "endmacro") and self.blocks:
            self.blocks.pop()
        why = next((reason for reason in self.blocks if reason), "")
        if command in ("foreach", "function", "macro"):
            self.blocks.append(self.unrun.why_unrun(command, arguments))
        return why


def unrun_cmake(files: Iterable[Sequence[Command]]) -> UnrunCmake:
    """Read every CMake file's commands (each file's, in order) once for what is set and called, then again for
    what code that runs reads."""
    commands_of = [list(commands) for commands in files]
    written: set[str] = set()
    iterated: set[str] = set()
    defined: set[str] = set()
    mentioned: set[str] = set()  # commands and bare words, lowercase: a function nothing mentions is never called
    write_patterns: list[re.Pattern[str]] = []
    for commands in commands_of:
        for command, arguments, _ in commands:
            name = command.lower()
            words = _bare_words(arguments)
            if name == "foreach":
                iterated.update(_iterated_lists(arguments.split()) or ())
            if name in ("function", "macro") and words:
                defined.add(words[0].lower())
                written.update(words[1:])
                continue
            if name in ("endfunction", "endmacro"):
                continue  # `endfunction(name)` repeats the name it closes
            mentioned.add(name)
            mentioned.update(word.lower() for word in words)
            if name in _READING_COMMANDS:
                continue
            written.update(words)
            if name in ("cmake_parse_arguments", "project") and words:
                prefix = words[2] if words[0] == "PARSE_ARGV" and len(words) > 2 else words[0]
                write_patterns.append(re.compile(re.escape(prefix) + r"_\w+"))
            write_patterns += _built_names(arguments.split())
    unset = {
        name
        for name in iterated - written
        if not _BUILT_IN.fullmatch(name)
        and not _PACKAGE_RESULT.fullmatch(name)
        and not any(pattern.fullmatch(name) for pattern in write_patterns)
    }
    draft = UnrunCmake(frozenset(unset), frozenset(defined - mentioned))
    read, read_patterns = _reads(commands_of, draft)
    return UnrunCmake(draft.unset_lists, draft.uncalled, frozenset(read), tuple(read_patterns), reads_known=True)


def _reads(files: list[list[Command]], unrun: UnrunCmake) -> tuple[set[str], list[re.Pattern[str]]]:
    """Every variable the code that runs reads, and the patterns of the names its variable-built reads may read: a
    read with literal text (`${${prefix}_SRCS}`) reads the names it matches; a read through a name alone
    (`${${var}}`) reads whatever name the project puts in `var`, a bare word elsewhere or one it assembles
    (`string(TOUPPER "${CATEGORY}_SRC" var)`): every name any word with literal text around a variable may make."""
    read: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    through_a_name = False
    for commands in files:
        tracker = RunTracker(unrun)
        for command, arguments, _ in commands:
            name = command.lower()
            if tracker.step(name, arguments):
                continue
            names = set(_EXPANSION.findall(arguments)) | set(_bare_words(arguments))
            names.discard(_written_variable(name, arguments))
            read |= names
            for inner in _NESTED_EXPANSION.findall(arguments):
                if _literal(inner):
                    patterns.append(_pattern(inner))
                else:
                    through_a_name = True
    if through_a_name:
        patterns += [
            pattern for commands in files for _, arguments, _ in commands for pattern in _built_names(arguments.split())
        ]
    return read, patterns


def _written_variable(command: str, arguments: str) -> str:
    """The variable a `set`, `list(APPEND ...)` or `file(GLOB ...)` command writes ("" for other commands)."""
    words = [word.strip('"') for word in arguments.split()]
    if command in _FIRST_WORD_WRITES and words:
        return words[0]
    if len(words) > 1 and words[0] in _SECOND_WORD_WRITES.get(command, ()):
        return words[1]
    return ""


def _iterated_lists(words: list[str]) -> list[str] | None:
    """The lists a `foreach`'s words iterate when it iterates only lists (`x IN LISTS A B`, `x ${A} ${B}`), else
    None (literal items, a `RANGE`)."""
    if len(words) < 2 or words[1] == "RANGE":
        return None
    lists: list[str] = []
    if words[1] != "IN":
        for word in words[1:]:
            match = _EXPANSION.fullmatch(word.strip('"'))
            if match is None:
                return None
            lists.append(match.group(1))
        return lists
    section = ""
    for word in words[2:]:
        if word in _LOOP_KEYWORDS:
            section = word
            continue
        expanded = _EXPANSION.fullmatch(word.strip('"'))
        if section in ("LISTS", "ZIP_LISTS") and _NAME.fullmatch(word):
            lists.append(word)
        elif section == "ITEMS" and expanded is not None:
            lists.append(expanded.group(1))
        else:
            return None
    return lists or None


def _bare_words(arguments: str) -> list[str]:
    """The words of a command's arguments that are names outside any `${...}`."""
    return [word for word in (w.strip('"') for w in arguments.split()) if _NAME.fullmatch(word)]


def _built_names(words: list[str]) -> list[re.Pattern[str]]:
    """Patterns of the names written through a word with literal text around a variable (`${prefix}_TARGETS`); a
    bare `${name}` writes a name some caller spells out, a bare word elsewhere."""
    found: list[re.Pattern[str]] = []
    for word in words:
        word = word.strip('"')
        if "${" in word and _literal(word) and _NAME.fullmatch(_EXPANSION.sub("x", word)):
            found.append(_pattern(word))
    return found


def _literal(inner: str) -> bool:
    """Whether a variable-built name has literal text besides its variables."""
    return bool(re.sub(r"\$\{[^{}]*\}", "", inner))


def _pattern(name: str) -> re.Pattern[str]:
    """The names a variable-built name may stand for: its literal text, anything where a variable is."""
    pieces = re.split(r"\$\{[^{}]*\}", name)
    return re.compile(".*".join(re.escape(piece) for piece in pieces))
