"""CMake projects nested in a tree that the tree's own build never adds: a vendored library's own build.

CMake reads the top `CMakeLists.txt` and the folders `add_subdirectory` hands it, nothing else. A library copied
into the tree with its own build (`external/lib/CMakeLists.txt` calling `project(lib)`, with its tests, benchmarks
and examples) is often used only through its headers: the top build puts `external/lib/include` on the include
path and never adds the folder. Its CMake files then say nothing of what the project's build compiles, its sources
are compiled by no build of the project, and its headers only where files the build compiles include them.

A nested project counts as added when a CMake file the build reads (the top one, the `.cmake` modules outside
nested projects, and the files of every added folder) adds it or a folder inside it, or names it in
`ExternalProject_Add`/`FetchContent_Declare`, or when a Python or make build file names its folder (a setup.py
running CMake there). The answer is "nothing is known" (no folder) when the tree has no top `CMakeLists.txt`, or
when a CMake file the build reads adds a folder through a variable this module does not resolve
(`add_subdirectory(${dir})` in a loop): then any nested project may be the one it adds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

Command = tuple[str, str, int]  # (command, its argument text, line), as build_files reads them

_PROJECT_COMMAND = "project"
# Commands that build another folder's CMake project: the folder is added when they name it.
_BUILDING_COMMANDS = frozenset({"externalproject_add", "fetchcontent_declare", "fetchcontent_populate"})
# Variables naming the folder of the file being read, or the top folder, which `add_subdirectory` paths use.
_CURRENT_FOLDER = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}")
_TOP_FOLDER = re.compile(r"\$\{(?:CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR|CMAKE_HOME_DIRECTORY)\}")


def unadded_projects(root: str, files: Mapping[str, Sequence[Command]], other_build_texts: str) -> dict[str, str]:
    """Folder of each nested CMake project the tree's build never adds -> why (see the module's docstring)."""
    top = os.path.join(root, "CMakeLists.txt")
    if top not in files:
        return {}
    nested = {
        os.path.dirname(path)
        for path, commands in files.items()
        if path != top
        and os.path.basename(path) == "CMakeLists.txt"
        and any(c.lower() == _PROJECT_COMMAND for c, _, _ in commands)
    }
    if not nested:
        return {}
    reached = _reached(root, files, nested)
    if reached is None:
        return {}
    added = {folder for folder in nested if os.path.join(folder, "CMakeLists.txt") in reached}
    named = _named_by_building_commands(files, reached)
    unadded: dict[str, str] = {}
    for folder in sorted(nested - added):
        relative = os.path.relpath(folder, root)
        if _inside_any(folder, unadded) or relative in named or relative in other_build_texts:
            continue
        if any(path.startswith(folder + os.sep) and os.path.basename(path) == "CMakeLists.txt" for path in reached):
            continue  # the build adds a folder inside it (`add_subdirectory(external/lib/src)`)
        unadded[folder] = f"{relative}/CMakeLists.txt: a CMake project the build never adds (add_subdirectory)"
    return unadded


def _reached(root: str, files: Mapping[str, Sequence[Command]], nested: set[str]) -> set[str] | None:
    """The CMake files the build reads, from the top file down the `add_subdirectory` calls; None when one of
    them adds a folder through a variable not resolved here."""
    modules = [p for p in files if p.endswith(".cmake") and not any(p.startswith(f + os.sep) for f in nested)]
    pending = [os.path.join(root, "CMakeLists.txt"), *modules]
    reached: set[str] = set()
    while pending:
        path = pending.pop()
        if path in reached:
            continue
        reached.add(path)
        # A module's relative paths are relative to the file including it: the top folder, most often.
        folder = root if path.endswith(".cmake") else os.path.dirname(path)
        for command, arguments, _ in files[path]:
            if command.lower() != "add_subdirectory" or not arguments.split():
                continue
            named = _resolved(arguments.split()[0].strip('"'), folder, root)
            if named is None:
                return None
            target = os.path.join(named, "CMakeLists.txt")
            if target in files:
                pending.append(target)
                pending += [p for p in files if p.endswith(".cmake") and p.startswith(named + os.sep)]
    return reached


def _resolved(argument: str, folder: str, root: str) -> str | None:
    """The absolute folder an `add_subdirectory` argument names, None when a variable is left in it."""
    argument = _TOP_FOLDER.sub(root.replace("\\", "/"), _CURRENT_FOLDER.sub(folder.replace("\\", "/"), argument))
    if "$" in argument:
        return None
    return os.path.normpath(os.path.join(folder, argument))


def _named_by_building_commands(files: Mapping[str, Sequence[Command]], reached: set[str]) -> str:
    """The arguments of every command of a read CMake file that builds another folder's project, joined."""
    return "\n".join(
        arguments for path in reached for command, arguments, _ in files[path] if command.lower() in _BUILDING_COMMANDS
    )


def _inside_any(folder: str, folders: Mapping[str, str]) -> bool:
    return any(folder.startswith(other + os.sep) for other in folders)
