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

The same walk, following `include()` too, finds the CMake files the build never reads at all (`unread_cmake_files`):
an `attic/` folder's `CMakeLists.txt` no `add_subdirectory` reaches, the `.cmake` modules only it includes. They
run nowhere, so the sources they name are compiled by no build.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence

Command = tuple[str, str, int]  # (command, its argument text, line), as build_files reads them

_PROJECT_COMMAND = "project"
# Commands that build another folder's CMake project: the folder is added when they name it.
_BUILDING_COMMANDS = frozenset({"externalproject_add", "fetchcontent_declare", "fetchcontent_populate"})
# Variables naming the folder of the file being read, or the top folder, which `add_subdirectory` paths use.
_CURRENT_FOLDER = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}")
_LIST_FOLDER = re.compile(r"\$\{CMAKE_CURRENT_LIST_DIR\}")
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


def unread_cmake_files(root: str, files: Mapping[str, Sequence[Command]], other_build_texts: str) -> frozenset[str]:
    """The CMake files of `files` the build never reads: no file it reads adds their folder (`add_subdirectory`),
    includes them (`include(path)`; `include(name)` and `find_package(Name)` reach every `name.cmake`,
    `FindName.cmake`, `NameConfig.cmake` of the tree, wherever `CMAKE_MODULE_PATH` points), or names them in any
    other way (`-P script.cmake`, a folder `ExternalProject_Add` builds), and no Python or make build file names
    them or their folder. Empty when that is not known: no top `CMakeLists.txt`, or a read file adds or includes
    a file through a variable not resolved here."""
    top = os.path.join(root, "CMakeLists.txt")
    if top not in files:
        return frozenset()
    by_name = _by_name(files)
    pending = [(top, root)]  # (a file the build reads, the folder its relative paths start from)
    seen: set[tuple[str, str]] = set()
    while pending:
        path, folder = pending.pop()
        if (path, folder) in seen:
            continue
        seen.add((path, folder))
        for command, arguments, _ in files[path]:
            reached = _reached_by(command.lower(), arguments, path, folder, root, files, by_name)
            if reached is None:
                return frozenset()
            pending += reached
    read = {path for path, _ in seen}
    return frozenset(
        path
        for path in files
        if path not in read and not _named_by_other_builds(os.path.relpath(path, root), other_build_texts)
    )


def _reached_by(
    command: str,
    arguments: str,
    path: str,
    folder: str,
    root: str,
    files: Mapping[str, Sequence[Command]],
    by_name: Mapping[str, Sequence[str]],
) -> list[tuple[str, str]] | None:
    """The CMake files (each with the folder its relative paths start from) one command of a file the build reads
    brings in; None when it names one through a variable not resolved here."""
    words = [word.strip('"') for word in arguments.split()]
    if not words:
        return []
    if command == "add_subdirectory":
        named = _resolved(words[0], folder, root, os.path.dirname(path))
        if named is None:
            return None
        target = os.path.join(named, "CMakeLists.txt")
        return [(target, named)] if target in files else []
    if command == "include":
        return _included(words[0], path, folder, root, files, by_name)
    found: list[tuple[str, str]] = []
    if command == "find_package":
        found += _named(by_name, _package_files(words[0]), folder)
    if command in _BUILDING_COMMANDS:
        found += [(os.path.join(p, "CMakeLists.txt"), p) for p in _named_folders(words, folder, root, files)]
    # Any other word naming a module (`-P script.cmake`, `install(FILES X.cmake)`) may run it somewhere.
    modules = [os.path.basename(word) for word in words if word.endswith(".cmake")]
    return found + _named(by_name, [m for m in modules if "$" not in m], folder)


def _included(
    argument: str,
    path: str,
    folder: str,
    root: str,
    files: Mapping[str, Sequence[Command]],
    by_name: Mapping[str, Sequence[str]],
) -> list[tuple[str, str]] | None:
    """The files an `include()` of a read file brings in: a module by name (`include(deps)`: every `deps.cmake`), or
    a path relative to the folder the including file's paths start from (else every file whose path ends so)."""
    if "/" not in argument and not argument.endswith(".cmake"):
        return _named(by_name, [f"{argument}.cmake"], folder) if "$" not in argument else None
    named = _resolved(argument, folder, root, os.path.dirname(path))
    if named is None:
        name = os.path.basename(argument)
        return None if "$" in name else _named(by_name, [name], folder)
    if named in files:
        return [(named, folder)]
    tail = os.sep + os.path.normpath(re.sub(r"^(?:\.\.?/)+", "", argument))
    return [(p, folder) for p in by_name.get(os.path.basename(argument).lower(), ()) if p.endswith(tail)]


class ModuleIndex:
    """The `.cmake` files of a tree by name, to find those a module-reading command may read."""

    def __init__(self, root: str, paths: Iterable[str]) -> None:
        self.root = root
        self.files: dict[str, Sequence[Command]] = {path: () for path in paths}
        self.by_name = _by_name(self.files)

    def read_by(self, command: str, argument: str, includer: str) -> list[str] | None:
        """The files `include(argument)` or `find_package(argument)` in the CMake file `includer` may read (a relative
        path taken from the includer's folder, else any file ending so); None when a variable hides which."""
        folder = os.path.dirname(includer)
        if command == "find_package":
            return [path for path, _ in _named(self.by_name, _package_files(argument), folder)]
        found = _included(argument, includer, folder, self.root, self.files, self.by_name)
        return None if found is None else [path for path, _ in found]


def _package_files(package: str) -> tuple[str, ...]:
    """The module files `find_package(package)` may read, lower case as `by_name` keys them."""
    return (f"find{package}.cmake", f"{package}config.cmake", f"{package}-config.cmake")


def _by_name(paths: Iterable[str]) -> dict[str, list[str]]:
    """The files of `paths` by file name, lower case (CMake module names match whatever the case)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(os.path.basename(path).lower(), []).append(path)
    return found


def _named(by_name: Mapping[str, Sequence[str]], names: Sequence[str], folder: str) -> list[tuple[str, str]]:
    return [(p, folder) for name in names for p in by_name.get(name.lower(), ())]


def _named_folders(words: Sequence[str], folder: str, root: str, files: Mapping[str, Sequence[Command]]) -> list[str]:
    """The folders of the tree with a `CMakeLists.txt` that the words of a command building another project name."""
    resolved = (_resolved(word, folder, root, folder) for word in words)
    return [f for f in resolved if f is not None and os.path.join(f, "CMakeLists.txt") in files]


def _named_by_other_builds(relative: str, other_build_texts: str) -> bool:
    """Whether a Python or make build file names a CMake file's folder (a setup.py running CMake there) or the
    file itself (`cmake -C cache.cmake`)."""
    name = os.path.basename(relative)
    return (
        relative in other_build_texts
        or (name != "CMakeLists.txt" and name in other_build_texts)
        or (name == "CMakeLists.txt" and os.path.dirname(relative) in other_build_texts)
    )


def _resolved(argument: str, folder: str, root: str, list_folder: str = "") -> str | None:
    """The absolute path an `add_subdirectory` or `include` argument names, relative to `folder` (the current source
    folder), None when a variable is left in it. `list_folder`: the folder of the file holding the command, which
    `CMAKE_CURRENT_LIST_DIR` names (a `.cmake` module's own; `folder` when not given)."""
    argument = _LIST_FOLDER.sub((list_folder or folder).replace("\\", "/"), argument)
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
