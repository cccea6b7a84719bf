"""Which modules of the checked tree import each module, and so on which vendors a module can run at all.

A module that is only ever imported from code gated for one vendor runs only on that vendor:

    if current_platform.is_cuda():
        from .backend_cuda import FlashBackend      # every line of backend_cuda.py is NVIDIA code

The index (`ImportIndex`) is built from bytes alone, once per run and project root (before the pool forks,
so workers inherit it): the lines of every `.py` file under the root that hold `import` (found with
bytes.find) are read as import statements or `importlib.import_module("pkg.mod")` / `__import__("pkg.mod")`
calls, and resolved to the tree's files as `ProjectIndex` resolves them (and against the folders above the
importer, up to the root).
`import a.b.c` imports the packages `a` and `a.b` too; `from a import b` imports the module `a.b` when
there is one and `a/__init__.py` writes no def or class `b` at its top (Python looks the name up in the package
first: a wrapper `def b(...)` that imports `.b` in its body is what the import gets).

A module's base (`ModuleReach.base`) is where it can be imported: on a vendor when a chain of importers
reaches an entry point through imports each of which can run on that vendor. An entry point is a module
nothing imports at run time (scripts, tests, modules only loaded by a computed name) or one run as
`__main__`. An import written at the start of a line (a module-level statement) is taken as run whenever
its importer runs, without parsing, unless the importer may leave early at module level (`if not ...:
pytest.skip(..., allow_module_level=True)`); any other is decided by the importer's own gate analysis,
parsing it once, and only when an answer needs it. Imports under `if TYPE_CHECKING:` never run. A test
file's imports count as run everywhere: a test's skip says where that test runs, not where the code it
imports runs in the product, which may load it by name (a registry of module names) where no import
statement shows it.

A module can also be unable to import on a vendor by what it imports itself: a statement at the start of a line
that imports a vendor-only package (rocmlint/data/vendor_packages.toml: `import cutlass` fails on ROCm, `import
flydsl` on NVIDIA: such a module is code written for ROCm), an extension module the project's build builds for
NVIDIA only (`pybind11_add_module(fp4_ops ...)` in the NVIDIA arm of a CMake file, `CUDAExtension("pkg._C", ...)`
under `if torch.version.hip is None:` in a setup.py: its Python wrappers only run where it was built), or a
module of the tree that cannot be imported there, through any chain of such statements (`ImportIndex.required`);
its base is narrowed to where those imports succeed. A test module that imports a CuTe DSL kernel module at module
level is never collected on ROCm. Such a module is no step of a chain of importers on the vendor where it cannot be
imported (its import stops there): a module only it imports, at module level or in a function, runs only on the
other vendor too. A vendor-only package's name that a module elsewhere in the tree also has (`intrin/nvshmem.py` of
another project in the checkout) still names the package, unless the importer's own import finds that module.

A script nothing imports in the folder of such an extension's sources (`fp4/bench/bench_quant.py` beside
`fp4/quant.cu`, when that folder is below the declaring build file's and no other extension builds from it) is its
benchmark or test: it needs the extension, so it runs on NVIDIA only too.

An absolute import that no folder above the importer resolves (a tutorial at the checkout's root importing `pkg`) is
looked for in the root's `src/`, else in the one folder with a `setup.py` beside a package of that name
(`python/setup.py` and `python/pkg/`: what `pip install` installs).

A module in a vendored folder (`thirdparty/`, `third_party/`, `_vendor/`) is never an entry point: the vendored
project's scripts, tests and training entry points are not the checked project's. One no chain of imports from the
project's own entry points reaches never runs (the vendored project's absolute imports resolve from the vendored
folder and from each project folder in it, as after the `sys.path.insert` such projects are loaded with).

A module in a hidden folder at the root (`.github/scripts/ci_gpu.py`, `.claude/skills/release/check.py`) is the
repository's tooling, which its CI or its maintainers run; when nothing hidden at the root (its folders and files,
`.gitlab-ci.yml` too) names ROCm or an AMD GPU (a workflow's runner label `mi300`, an image `rocm/pytorch`, `gfx942`),
those machines are the project's NVIDIA ones, and the module runs only there (`ImportIndex.tooling_base`). The index
itself reads no hidden folder.

Not seen: modules loaded by a computed name (`import_module(f"pkg.models.{name}")`, a registry's strings)
that are also imported from gated code of the product; such a module is taken as gated.
"""

from __future__ import annotations

import ast
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rocmlint.data import load
from rocmlint.python.backend_families import (
    computed_load_prefixes,
    family_bases,
    member_of,
    registered_by_vendor,
    sibling_of,
    vendor_role_twins,
    vendor_siblings,
    vendor_twin_modules,
)
from rocmlint.python.platform_classes import (
    chosen_by_name,
    paths_chosen_off_rocm,
    platform_modules,
    unreached_definitions,
    used_beyond_comparison,
)
from rocmlint.python.scopes import dotted_name
from rocmlint.vendor import EVERYWHERE, NO_GPU, Branch

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from rocmlint.python.gating import GateAnalyzer
    from rocmlint.python.semantic import Semantic

# Folders never read: version control, virtual environments, caches.
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox"})
_MAX_FILES = 50_000
_MAX_FILE_BYTES = 2_000_000
# An import statement from its line's start (group 1: its indentation), or after `:`/`;` (`try: import x`).
_IMPORT_LINE = re.compile(
    rb"([ \t]*)((?:[^\n]*?[:;][ \t]*)?)"
    rb"(?:from[ \t]+(\.*)[ \t]*(\w[\w.]*)?[ \t]*import\b[ \t]*(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))"
)
# A module-level `if` whose body exits (`pytest.skip(..., allow_module_level=True)`, `raise ImportError`), or a
# module-level `assert`: what follows may be gated, so its imports are decided by the importer's analysis.
_MODULE_EXIT = re.compile(
    rb"\nif [^\n]*:[ \t]*(?:#[^\n]*)?\n(?:(?:[ \t][^\n]*)?\n)*?[ \t]+(?:raise|pytest\.skip|sys\.exit|exit|quit)\b"
)
_LOAD_CALL = re.compile(rb"(?:import_module|__import__)\(\s*[\"']([\w.]+)[\"']")
_PACKAGE_SUFFIX = os.sep + "__init__.py"
# A def or class at the top of a module (`def act_quant(`, `async def f(`, `class Linear:`): group 1 is its name.
_TOP_LEVEL_DEFINITION = re.compile(rb"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)
# The script that builds a project's extension modules.
_BUILD_SCRIPT = "setup.py"
# Folders that hold copies of other projects (`thirdparty/melo/`, `third_party/`, `_vendor/`). A vendored project
# puts itself on `sys.path` (`sys.path.insert(0, ".../thirdparty")`, then `from melo.api import TTS`), so its
# absolute imports resolve from the folder and from each project folder in it; its own scripts, tests and training
# entry points are not the checked project's, so a vendored module runs only if the project's code imports it.
_VENDORED_FOLDERS = frozenset({"third_party", "thirdparty", "third-party", "3rdparty", "_vendor"})
_SOURCE_FOLDER = "src"
_LOAD_FUNCTIONS = frozenset({"import_module", "__import__"})
_TYPE_CHECKING = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})
# Where a module that imports a vendor-only package (rocmlint/data/vendor_packages.toml) at module level can be
# imported at all: an NVIDIA-only one fails on ROCm, a ROCm-only one on NVIDIA, another accelerator's on both GPU
# vendors.
_VENDOR_PACKAGES = load("vendor_packages")
_NVIDIA_ONLY = Branch(False, True)
_PACKAGE_BRANCHES = (
    (Branch(False, True), "nvidia_only"),
    (Branch(True, False), "rocm_only"),
    (Branch(False, False), "other_accelerators"),
)

# Below this many files, forking a helper to index half of them costs more than it saves.
SPLIT_MIN_FILES = 1000
# The NVIDIA-only extension modules by import name (-> "path:line" of their declaration), the packages holding the
# dotted ones (`pkg` of `pkg._C`) and the names without a package (a CMake target's).
_NativeNames = tuple[Mapping[str, str], frozenset[str], frozenset[str]]
# What an import statement imports: (level, module, the names after `import` as written, parsed only when the
# module is a package whose names may be modules).
Imported = tuple[int, str, bytes]
# What indexing some of the files found: importers by imported file, module-level imports, vendor-only package
# bases, computed-load prefixes and absolute module-level imports, each by importer (`ImportIndex._part`).
IndexPart = tuple[
    dict[str, dict[str, bool]],
    dict[str, set[str]],
    dict[str, Branch],
    dict[str, set[str]],
    dict[str, list[tuple[str, bytes]]],
    list[str],
]
# A gfx target of AMD's consumer GPUs (RDNA1-4: gfx1010, gfx1100, gfx1201, `gfx110X`), which report the compute
# capability 10.x-12.x, NVIDIA's Blackwell numbers; the CDNA GPUs of AMD's servers are gfx9 (9.0-9.5).
_CONSUMER_GPU_TARGET = re.compile(rb"gfx1[0-2][0-9]")
# What names ROCm or an AMD GPU in a repository's tooling (a workflow's runner label `mi300`, `rocm/pytorch`, `gfx942`,
# `amd-gpu`, `hipcc`); not `amd64`, the x86-64 architecture.
_ROCM_NAMED = re.compile(rb"rocm|hipcc|amdgpu|\b(?:amd|hip|mi[123]\d\dx?|gfx\d+)\b", re.IGNORECASE)
# The most files of the root's hidden folders read to tell that they name no ROCm; more are taken as naming it.
_MAX_TOOLING_FILES = 2_000
# Where an importer's imports of a module run (importer, imported), None when none runs at all (only under
# `if TYPE_CHECKING:`, or text that looked like an import in a string), with the files that answer came from.
ImportGate = Callable[[str, str], tuple[Branch | None, frozenset[str]]]


@dataclass(frozen=True)
class NvidiaOnlyNatives:
    """The extension modules a project's build builds for NVIDIA only (import name -> "path:line" of the build file
    declaring it) and the folders of their sources (absolute folder -> the same)."""

    modules: Mapping[str, str] = field(default_factory=dict)
    folders: Mapping[str, str] = field(default_factory=dict)


class ModuleFinder:
    """Resolves dotted module names to the files of a tree, as ProjectIndex does (against the folder the
    importer's top-level package sits in, then the importer's own folder), then against the folders above."""

    def __init__(self, root: str, files: frozenset[str]) -> None:
        self.root = root
        self.files = files
        # Every name a module or package of the tree has: an import whose first name is none of them
        # (`import os`, a third-party package) imports nothing of the tree.
        self.names = frozenset(
            os.path.basename(os.path.dirname(path)) if path.endswith(_PACKAGE_SUFFIX) else os.path.basename(path)[:-3]
            for path in files
        )
        self._package_roots: dict[str, str] = {}
        self._found: dict[tuple[tuple[str, ...], tuple[str, ...]], str | None] = {}
        self._roots: dict[tuple[str, str], tuple[str, ...]] = {}
        self._modules: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        self.vendored_roots, vendored_names = _vendored_roots(root, files)
        self.names |= vendored_names
        self._folders: frozenset[str] | None = None  # every folder of the tree, when first needed
        self._install_folders: tuple[str, ...] | None = None  # the folders holding a `setup.py`, when first needed
        # package folder -> the defs and classes its `__init__.py` writes (`_defined_in_package`), when first needed
        self._package_defs: dict[str, frozenset[str]] = {}

    def _holds(self, root: str, first: str) -> bool:
        """`root` holds a module, a package or a namespace package (a folder without `__init__.py`: vendored
        projects often have them) named `first`."""
        if self.find([first], (root,)) is not None:
            return True
        if self._folders is None:
            self._folders = frozenset(_folders_above(self.files, self.root))
        return os.path.join(root, first) in self._folders

    def vendored(self, path: str) -> bool:
        """`path` sits in a vendored folder of the tree (`thirdparty/`, `third_party/`, `_vendor/`)."""
        relative = os.path.relpath(path, self.root)
        return any(part in _VENDORED_FOLDERS for part in relative.split(os.sep)[:-1])

    def package_root(self, folder: str) -> str:
        """The folder the top-level package of `folder`'s modules sits in (`folder` itself outside packages)."""
        chain: list[str] = []
        current = folder
        while current not in self._package_roots and os.path.join(current, "__init__.py") in self.files:
            chain.append(current)
            current = os.path.dirname(current)
        root = self._package_roots.setdefault(current, current)
        self._package_roots.update(dict.fromkeys(chain, root))
        return root

    def find(self, parts: Sequence[str], roots: tuple[str, ...]) -> str | None:
        key = (tuple(parts), roots)
        if key not in self._found:
            self._found[key] = self._find(parts, roots)
        return self._found[key]

    def _find(self, parts: Sequence[str], roots: tuple[str, ...]) -> str | None:
        relative = os.sep.join(parts)
        for root in roots:
            base = f"{root}{os.sep}{relative}"
            for candidate in (base + ".py", f"{base}{os.sep}__init__.py"):
                if candidate in self.files:
                    return candidate
        return None

    def roots_of(self, folder: str, first: str) -> tuple[str, ...]:
        """Where a module of `folder` looks for an absolute import whose first name is `first`: the folder its
        top-level package sits in, then the closest folder from `folder` up to the tree's root that holds
        `first` (a test folder without `__init__.py` imports the project's packages from the checkout's
        root, which Python has on its path), else the root's `src/` (the src layout, installed)."""
        key = (folder, first)
        if key not in self._roots:
            places = [self.package_root(folder)]
            holder = folder
            while len(holder) >= len(self.root):
                if self.find([first], (holder,)) is not None:
                    places.append(holder)
                    break
                holder = os.path.dirname(holder)
            else:
                source_folder = os.path.join(self.root, _SOURCE_FOLDER)
                if self.find([first], (source_folder,)) is not None:
                    places.append(source_folder)  # the src layout: the project's packages under src/
                else:
                    places.extend(self._install_folder(first))
            if not any(self.find([first], (place,)) is not None for place in places):
                places.extend(root for root in self.vendored_roots if self._holds(root, first))
            self._roots[key] = tuple(dict.fromkeys(places))
        return self._roots[key]

    def _install_folder(self, first: str) -> tuple[str, ...]:
        """The one folder below the root with a `setup.py` beside a module or package named `first`: where `pip install`
        takes the project's packages from when they do not sit at the root (`python/setup.py` beside
        `python/pkg/`: a tutorial at the root imports `pkg` as installed). None when no folder or several do."""
        if self._install_folders is None:
            self._install_folders = tuple(
                sorted(
                    os.path.dirname(path)
                    for path in self.files
                    if os.path.basename(path) == _BUILD_SCRIPT and not self.vendored(path)
                )
            )
        holders = tuple(folder for folder in self._install_folders if self.find([first], (folder,)) is not None)
        return holders if len(holders) == 1 else ()

    def imported_files(self, importer: str, level: int, module: str, names: Sequence[str] | bytes = ()) -> list[str]:
        """The files an import in `importer` runs: the module and the packages above it (`import a.b`
        runs a/__init__.py too), and each imported name that is a module (`from a import b`; `names` may
        be the text after `import`). `level`: the dots of a relative import."""
        if level:
            folder = os.path.dirname(importer)
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            roots: tuple[str, ...] = (folder,)
        else:
            roots = self.roots_of(os.path.dirname(importer), module.split(".", 1)[0])
        found = list(self._module_files(module, roots))
        package = found[-1][: -len(_PACKAGE_SUFFIX)] if found and found[-1].endswith(_PACKAGE_SUFFIX) else None
        if not module:
            package = roots[0]
        if package is not None and names:
            defined = self._defined_in_package(package)
            for name in _names(names) if isinstance(names, bytes) else names:
                submodule = self.find([name], (package,)) if name.isidentifier() and name not in defined else None
                if submodule is not None:
                    found.append(submodule)
        return found

    def _defined_in_package(self, package: str) -> frozenset[str]:
        """The names of the defs and classes written at the top of `package`'s `__init__.py`: `from package import
        name` gives that def (Python imports the submodule `package.name` only when the package has no such name), so
        a wrapper `def act_quant(...)` that imports `.act_quant` in its body is what the import gets."""
        known = self._package_defs.get(package)
        if known is None:
            data = read_small_file(package + _PACKAGE_SUFFIX) or b""
            known = frozenset(match.group(1).decode("ascii") for match in _TOP_LEVEL_DEFINITION.finditer(data))
            self._package_defs[package] = known
        return known

    def _module_files(self, module: str, roots: tuple[str, ...]) -> tuple[str, ...]:
        """The files of a dotted module and of the packages above it, outermost first (none when the module
        is not in the tree)."""
        key = (module, roots)
        known = self._modules.get(key)
        if known is None:
            parts = module.split(".") if module else []
            found = tuple(self.find(parts[:end], roots) for end in range(1, len(parts) + 1))
            known = self._modules[key] = tuple(path for path in found if path is not None)
        return known


@dataclass
class ImportIndex:
    """Who imports each module of one tree (absolute paths)."""

    root: str
    finder: ModuleFinder
    # importee -> importer -> whether one of its imports of it is a module-level statement
    importers: dict[str, dict[str, bool]] = field(default_factory=dict)
    # The files whose imports all count as module-level ones (test files), asked per importer.
    imports_everywhere: Callable[[str], bool] = field(default=lambda path: False, repr=False)
    _facts: dict[str, tuple[bool, bool]] = field(default_factory=dict, repr=False)
    # importer -> the files of the tree its module-level statements import (written at the start of a line)
    _module_level: dict[str, set[str]] = field(default_factory=dict, repr=False)
    # importer -> where the vendor-only packages its module-level statements import can be imported
    _packages: dict[str, Branch] = field(default_factory=dict, repr=False)
    _vendor_branches: dict[str, tuple[Branch, ...]] = field(default_factory=dict, repr=False)  # by module name
    _requirements: dict[str, tuple[Branch, frozenset[str]]] | None = field(default=None, repr=False)
    _statement_files: dict[tuple[tuple[str, ...] | str, bytes], list[str]] = field(default_factory=dict, repr=False)
    # file -> the constant prefixes of the module names it loads by a computed name (backend_families.py)
    _computed_loads: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _families: dict[str, Branch] | None = field(default=None, repr=False)
    # NVIDIA-named folder -> its ROCm-named siblings (backend_families.vendor_siblings), when first asked
    _siblings: dict[str, tuple[str, ...]] | None = field(default=None, repr=False)
    # folder named `nvidia` -> its module and a sibling vendor folder's of the same role (`vendor_role_twins`)
    _role_twins: dict[str, tuple[str, str]] | None = field(default=None, repr=False)
    # NVIDIA-named folder -> the modules proving a registry keyed by vendor chooses it (`definitions_base`)
    _vendor_registries: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    # The files of the root's hidden folders and files showing that none names ROCm (`tooling_base`), empty when one
    # does; when first asked
    _tooling: frozenset[str] | None = field(default=None, repr=False)
    # module named for NVIDIA -> its AMD twin of the same role in its folder (`vendor_twin_modules`), when first asked
    _vendor_twins: dict[str, str] | None = field(default=None, repr=False)
    # module -> the NVIDIA-named folder it sits in (`nvidia_sibling`): the module bases ask again for each test file
    # importing a module, and each answer walks up the module's folders
    _sibling_folders: dict[str, str | None] = field(default_factory=dict, repr=False)
    # module -> the files proving that only the NVIDIA platform class chooses it (`platform_definitions`), when first
    # asked; and per such module, the names of its top-level defs and classes that only that choice reaches
    _platform_chosen: dict[str, frozenset[str]] | None = field(default=None, repr=False)
    _platform_names: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    # The extension modules the project's build builds for NVIDIA only and their source folders (the C++ front end
    # reads the build files: `nvidia_only_natives_for`), asked when requirements are first worked out, so that
    # building the index waits for no build file.
    nvidia_only_natives: Callable[[], NvidiaOnlyNatives] = field(default=lambda: NvidiaOnlyNatives(), repr=False)
    # importer -> the imports of its module-level statements ((module, names after `import`), relative ones made
    # absolute)
    _absolute_imports: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict, repr=False)
    # The files whose text names a consumer GPU's gfx target (`_CONSUMER_GPU_TARGET`), in file order.
    consumer_gpu_files: list[str] = field(default_factory=list, repr=False)

    @classmethod
    def build(
        cls,
        root: Path,
        imports_everywhere: Callable[[str], bool] = lambda path: False,
        processes: int = 1,
        nvidia_only_natives: Callable[[], NvidiaOnlyNatives] = lambda: NvidiaOnlyNatives(),
    ) -> ImportIndex:
        """The index of the `.py` files under `root`; `imports_everywhere(path)`: the file's imports all count
        as module-level ones (test files). `processes`: how many processes may read the tree at once (a pool's
        parent builds the index before its workers fork, while the other cores wait: with two, a forked helper
        indexes the second half of the files; the index is the same). `nvidia_only_natives`: the extension modules
        the project's build builds for NVIDIA only, and their source folders."""
        paths = tree_files(root)
        finder = ModuleFinder(os.path.abspath(root), frozenset(paths))
        index = cls(
            os.path.abspath(root),
            finder,
            imports_everywhere=imports_everywhere,
            nvidia_only_natives=nvidia_only_natives,
        )
        if processes > 1 and len(paths) >= SPLIT_MIN_FILES:
            index._add_files_beside_helper(paths, imports_everywhere)
        else:
            index._add_files(paths, imports_everywhere)
        return index

    def _add_files_beside_helper(self, paths: list[str], imports_everywhere: Callable[[str], bool]) -> None:
        """Index the first half of `paths` here while a forked process indexes the second half, then add its part in
        file order: every importer map comes out as `_add_files` builds it, in the same order. When the helper dies,
        this process indexes its half too."""
        import multiprocessing

        half = len(paths) // 2
        context = multiprocessing.get_context("fork")  # only where pools fork (the caller's `processes`)
        receiver, sender = context.Pipe(duplex=False)
        helper = context.Process(target=_index_part, args=(self, paths[half:], imports_everywhere, sender))
        helper.start()
        sender.close()  # the helper's copy stays open: the receiver sees the end of the pipe when it closes
        self._add_files(paths[:half], imports_everywhere)
        part: IndexPart | None = None
        try:
            part = receiver.recv()
        except (EOFError, OSError):
            part = None
        finally:
            receiver.close()
            helper.join()
        if part is None:
            self._add_files(paths[half:], imports_everywhere)
        else:
            self._add_part(part)

    def _part(self) -> IndexPart:
        return (
            self.importers,
            self._module_level,
            self._packages,
            self._computed_loads,
            self._absolute_imports,
            self.consumer_gpu_files,
        )

    def _add_part(self, part: IndexPart) -> None:
        """What another process indexed of the files after this one's (importer paths disjoint from this one's)."""
        importers, module_level, packages, computed_loads, absolute_imports, consumer_gpu_files = part
        for imported, importing in importers.items():
            self.importers.setdefault(imported, {}).update(importing)
        self._module_level.update(module_level)
        self._packages.update(packages)
        self._computed_loads.update(computed_loads)
        self._absolute_imports.update(absolute_imports)
        self.consumer_gpu_files.extend(consumer_gpu_files)

    def _add_files(self, paths: Iterable[str], imports_everywhere: Callable[[str], bool]) -> None:
        """Read and index each file in turn (the tree's bytes are never all held at once)."""
        for path in paths:
            data = read_small_file(path)
            if data is not None:
                self._add(path, data, imports_everywhere(path))
        self._statement_files.clear()  # only for building

    def is_entry(self, path: str) -> bool:
        """Imported by no module of the tree, or run as `__main__`; never a module of a vendored folder."""
        if self.finder.vendored(path):
            return False
        return not self.importers.get(path) or self._file_facts(path)[0]

    def importers_of(self, path: str) -> dict[str, bool]:
        return self.importers.get(path, {})

    def may_exit(self, path: str) -> bool:
        """Whether the file may leave early at module level (`if not ...: pytest.skip(...,
        allow_module_level=True)`, `raise`, `sys.exit`, a module-level `assert`): then its module-level
        imports are decided by its analysis too. A file whose imports all count everywhere never does."""
        return self._file_facts(path)[1]

    def _file_facts(self, path: str) -> tuple[bool, bool]:
        """(runs as `__main__`, may leave early), read when first asked: only the files a search reaches."""
        if path not in self._facts:
            data = read_small_file(path) or b""
            may_exit = not self.imports_everywhere(path) and (
                b"\nassert " in data or _MODULE_EXIT.search(data) is not None
            )
            self._facts[path] = (b"__main__" in data, may_exit)
        return self._facts[path]

    def _add(self, path: str, data: bytes, everywhere: bool) -> None:
        """Every line holding `import`, found with bytes.find (a regex over the whole text would try every
        position of it). A statement at the start of its line is a module-level one (run whenever its importer
        runs, unless the importer may leave early: `may_exit`); every import of a file whose imports run
        `everywhere` counts as one."""
        if names_consumer_gpu(data):
            self.consumer_gpu_files.append(path)
        folder = os.path.dirname(path)
        remembered, statement_at, find = self._statement_files, _IMPORT_LINE.match, data.find
        here: dict[str, bool] = {}  # what this file imports -> whether once at module level
        last_line = -1
        loads_by_name = False  # `import_module` or `__import__` written: each holds `import`, so is found here
        strings = _TripleQuotes(data)
        position = find(b"import")
        while position != -1:
            line = data.rfind(b"\n", 0, position) + 1
            loads_by_name = (
                loads_by_name
                or data.startswith(b"import_module", position)
                or data.startswith(b"__import__", position - 2)
            )
            position = find(b"import", position + 6)
            if line == last_line:
                continue
            last_line = line
            match = statement_at(data, line)
            if match is None:
                self._add_load_call(path, folder, data, line, everywhere, here)
                continue
            statement = data[match.end(2) : match.end()]
            found = remembered.get((folder, statement))
            if found is None:
                found = self._resolve(path, folder, statement, _absolute_module(match), partial(_statements, match))
            # A line of a triple-quoted string (generated code's template) is decided by the importer's own tree.
            statement_level = match.end(2) == line and not strings.inside(line)
            top_level = everywhere or statement_level
            for imported in found:
                here[imported] = top_level or here.get(imported, False)
            if statement_level:
                self._note_module_level(path, match, found)
            elif not strings.inside(line):
                self._note_nested_package(path, match)
        here.pop(path, None)
        prefixes = computed_load_prefixes(data) if loads_by_name else set()
        if prefixes:
            self._computed_loads[path] = prefixes
        for imported, top_level in here.items():
            self.importers.setdefault(imported, {})[path] = top_level

    def _note_module_level(self, path: str, match: re.Match[bytes], found: list[str]) -> None:
        """A statement at the start of its line runs whenever its module is imported: remember the files of the
        tree it imports, and where the vendor-only packages outside the tree it imports can be imported."""
        if found:
            self._module_level.setdefault(path, set()).update(found)
        for level, module, names in _statements(match):
            absolute = self._absolute_name(path, level, module) if level else module
            if absolute:
                self._absolute_imports.setdefault(path, []).append((absolute, names))
            if level:
                continue
            branches = self._package_branches(module)
            if branches and self._in_tree(path, module):
                continue  # the tree's own module of that name (`import cuda` of a package `cuda/` beside it)
            for branch in branches:
                self._packages[path] = _intersection(self._packages.get(path, EVERYWHERE), branch)

    def _note_nested_package(self, path: str, match: re.Match[bytes]) -> None:
        """An indented import of a vendor-only package may still be one the module does not survive failing (in a
        `try:` whose handlers re-raise, in the arm of an `if` whose other arms raise): `_package_requirement` decides
        it on the module's tree, so the module is one to parse."""
        for level, module, _ in _statements(match):
            if not level and self._package_branches(module):
                self._packages.setdefault(path, EVERYWHERE)
                return

    def _in_tree(self, importer: str, module: str) -> bool:
        """An absolute import of `module` in `importer` finds a module of the tree: one elsewhere in the tree with
        the same name (`intrin/nvshmem.py` of a sibling project, a `language/cuda/` package) is not it."""
        return module.split(".", 1)[0] in self.finder.names and bool(self.finder.imported_files(importer, 0, module))

    def _package_branches(self, module: str) -> tuple[Branch, ...]:
        """Where a module outside the tree can be imported, per vendor-only package list naming it or a package
        above it; worked out once per module name (`import torch` is written in most files)."""
        known = self._vendor_branches.get(module)
        if known is None:
            known = self._vendor_branches[module] = tuple(
                branch
                for branch, key in _PACKAGE_BRANCHES
                if any(module == package or module.startswith(package + ".") for package in _VENDOR_PACKAGES[key])
            )
        return known

    def _absolute_name(self, importer: str, level: int, module: str) -> str:
        """The absolute name a relative import names (`from . import _C` in pkg/ops.py: `pkg._C`), "" outside a
        package."""
        folder = os.path.dirname(importer)
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        package_root = self.finder.package_root(folder)
        if folder == package_root or not folder.startswith(package_root + os.sep):
            return ""
        package = os.path.relpath(folder, package_root).replace(os.sep, ".")
        return f"{package}.{module}" if module else package

    def _nvidia_only_native(self, module: str, names: bytes, natives: _NativeNames) -> str:
        """Where the build declares the NVIDIA-only extension module an absolute import statement imports, "" when
        it imports none: `import pkg._C` or `from pkg import _C` of an extension the build names `pkg._C`, or of one
        a CMake target names `_C` when no module of the tree has that name (`import fused_ops`, `from pkg import
        fused_ops`). The names after `import` are only read when they may be one."""
        declared, parents, bare = natives
        if module in declared:
            return declared[module]
        last = module.rsplit(".", 1)[-1]
        if last in bare and last not in self.finder.names:
            return declared[last]
        if not names or not (bare or module in parents):
            return ""
        for name in _names(names):
            if f"{module}.{name}" in declared:
                return declared[f"{module}.{name}"]
            if name in bare and name not in self.finder.names:
                return declared[name]
        return ""

    def required(self, path: str) -> tuple[Branch, frozenset[str]]:
        """Where the module at `path` can be imported at all by what its module-level statements import: nowhere
        on ROCm when one imports an NVIDIA-only package (`import cutlass`) or a module of the tree that cannot be
        imported there, through any chain of such imports (nowhere on NVIDIA for a ROCm-only one: `import flydsl`);
        and the files of that chain."""
        if self._requirements is None:
            self._requirements = self._propagate_requirements()
        return self._requirements.get(path, (EVERYWHERE, frozenset()))

    def backend_family_base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """Where the module at `path` can run when it sits in another vendor's member of a backend family loaded
        by a computed name (rocmlint/python/backend_families.py), and the loading files; everywhere otherwise."""
        if self._families is None:
            prefixes = {prefix for found in self._computed_loads.values() for prefix in found}
            self._families = family_bases(sorted(self.finder.files), prefixes, self._imported_from_outside)
        member = member_of(path, self._families)
        if member is None:
            return EVERYWHERE, frozenset()
        return self._families[member], frozenset(self._computed_loads)

    def tooling_base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """NVIDIA's when the module sits in a hidden folder at the root (`.github/scripts/`, `.claude/skills/`): the
        repository's tooling, run by its CI or its maintainers, not part of what it ships. When nothing of the
        repository's tooling (every hidden folder and file at the root: workflows and their runner labels, CI
        configurations such as `.gitlab-ci.yml`, scripts, their notes) names ROCm or an AMD GPU, the machines it runs on
        are the project's NVIDIA ones. Everywhere otherwise; with the files that decided it."""
        relative = os.path.relpath(path, self.root).split(os.sep)
        if len(relative) < 2 or not relative[0].startswith(".") or relative[0] in (os.curdir, os.pardir):
            return EVERYWHERE, frozenset()
        if self._tooling is None:
            self._tooling = _tooling_naming_no_rocm(self.root)
        return (_NVIDIA_ONLY, self._tooling) if self._tooling else (EVERYWHERE, frozenset())

    def module_level_imports(self, path: str) -> frozenset[str]:
        """The files of the tree the module's statements at the start of a line import."""
        return frozenset(self._module_level.get(path, ()))

    def nvidia_sibling(self, path: str) -> tuple[str, tuple[str, ...]] | None:
        """The NVIDIA-named folder the module at `path` sits in and its ROCm-named siblings
        (rocmlint/python/backend_families.py), None when it sits in none."""
        if self._siblings is None:
            self._siblings = vendor_siblings(sorted(self.finder.files))
        if path not in self._sibling_folders:
            self._sibling_folders[path] = sibling_of(path, self._siblings)
        folder = self._sibling_folders[path]
        return None if folder is None else (folder, self._siblings[folder])

    def nvidia_role_twin(self, path: str) -> tuple[str, tuple[str, str]] | None:
        """The folder named `nvidia` the module at `path` sits in, at any depth, when a sibling vendor folder holds a
        module of the same role as one of it (rocmlint/python/backend_families.py, `vendor_role_twins`), with that
        pair; None otherwise."""
        if self._role_twins is None:
            self._role_twins = vendor_role_twins(sorted(self.finder.files))
        folder = sibling_of(path, self._role_twins)
        return None if folder is None else (folder, self._role_twins[folder])

    def definitions_base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """Where the code inside the defs of the module at `path` can run, and the files that decided it: NVIDIA's when
        the module sits in an NVIDIA-named folder whose ROCm-named sibling registers the same entries in a registry keyed
        by the vendor's name (rocmlint/python/backend_families.py, `registered_by_vendor`), and no module of the product
        outside the folder imports it by a written name (`builder.py` importing `cuda/builder_cmake.py` calls its defs
        directly); NVIDIA's too when the module is named for NVIDIA beside an AMD-named twin of the same role
        (`vendor_twin_modules`: `gpu_nvidia.py` and `gpu_amd.py`); everywhere otherwise. Its module-level statements run
        wherever it is imported (`module_base`)."""
        if self._vendor_twins is None:
            self._vendor_twins = vendor_twin_modules(sorted(self.finder.files), _parsed)
        twin = self._vendor_twins.get(path)
        if twin is not None:
            return _NVIDIA_ONLY, frozenset((path, twin))
        member = self.nvidia_sibling(path)
        if member is None:
            return EVERYWHERE, frozenset()
        nvidia, rocm = member
        proof = self._vendor_registries.get(nvidia)
        if proof is None:
            proof = registered_by_vendor(nvidia, rocm, sorted(self.finder.files), read_small_file)
            self._vendor_registries[nvidia] = proof
        importers = self.importers_of(path)
        files = frozenset(proof) | frozenset(importers)
        inside = nvidia + os.sep
        outside = any(
            not importer.startswith(inside) and not self.imports_everywhere(importer) for importer in importers
        )
        return (_NVIDIA_ONLY if proof and not outside else EVERYWHERE), files

    def platform_definitions(self, path: str) -> tuple[frozenset[str], frozenset[str]]:
        """The top-level defs and classes of the module at `path` whose code runs only on NVIDIA as the project chooses
        it (rocmlint/python/platform_classes.py): the module is the NVIDIA platform class's own, or holds a class only
        it returns; and the files that decided it. A name another module of the product (not a test) imports from it
        runs wherever that module does, and so does what its code names of the module, unless that module only compares
        the class it imports (`backend == SparseBackend`, `isinstance(impl, SparseImpl)`)."""
        if self._platform_chosen is None:
            self._platform_chosen = self._chosen_by_nvidia_platform()
        proof = self._platform_chosen.get(path)
        if proof is None:
            return frozenset(), frozenset()
        if path not in self._platform_names:
            self._platform_names[path] = self._names_only_chosen(path, proof)
        return self._platform_names[path], proof | frozenset(self.importers_of(path))

    def _chosen_by_nvidia_platform(self) -> dict[str, frozenset[str]]:
        """Each module only the NVIDIA platform class chooses -> the platform modules and package file proving it."""
        chosen: dict[str, frozenset[str]] = {}
        for nvidia, rocm in platform_modules(sorted(self.finder.files)).items():
            package = os.path.join(os.path.dirname(nvidia), "__init__.py")
            package_text = read_small_file(package) or b""
            if not chosen_by_name(package_text, nvidia) or not any(chosen_by_name(package_text, r) for r in rocm):
                continue
            nvidia_tree, rocm_trees = _parsed(nvidia), [_parsed(path) for path in rocm]
            if nvidia_tree is None or None in rocm_trees:
                continue
            proof = frozenset((package, nvidia, *rocm))
            chosen[nvidia] = proof
            for qualified in paths_chosen_off_rocm(nvidia_tree, [tree for tree in rocm_trees if tree is not None]):
                module = self._module_file(nvidia, qualified.rpartition(".")[0])
                if module is not None and not any(path in self.importers_of(module) for path in rocm):
                    chosen.setdefault(module, proof)
        return chosen

    def _module_file(self, importer: str, module: str) -> str | None:
        """The file of the tree that an absolute import of `module` in `importer` finds (None for a package)."""
        found = self.finder.imported_files(importer, 0, module)
        tail = os.sep + module.replace(".", os.sep) + ".py"
        return found[-1] if found and found[-1].endswith(tail) else None

    def _names_only_chosen(self, path: str, proof: frozenset[str]) -> frozenset[str]:
        """The top-level defs and classes of the module at `path` that no module of the product outside `proof` uses,
        directly or through the module's other names (`_used_names`), nor its module-level code when such a module
        imports it (otherwise it only runs where `proof`'s modules load it, and tests)."""
        tree = _parsed(path)
        if tree is None:
            return frozenset()
        used: set[str] = set()
        imported = False
        for importer in sorted(self.importers_of(path)):
            if importer in proof or importer == path or self.imports_everywhere(importer):
                continue
            names = self._used_names(importer, path)
            if names is None:
                return frozenset()
            used |= names
            imported = True
        return unreached_definitions(tree, used, imported)

    def _used_names(self, importer: str, module: str) -> set[str] | None:
        """The names of `module` that `importer` imports and uses other than in a comparison (None: it imports the
        module itself, or all its names)."""
        tree = _parsed(importer)
        if tree is None:
            return None
        used: set[str] = set()
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                if any(module in self.finder.imported_files(importer, 0, alias.name) for alias in node.names):
                    return None
            elif isinstance(node, ast.ImportFrom):
                found = self.finder.imported_files(importer, node.level, node.module or "")
                if found and found[-1] == module:
                    for alias in node.names:
                        if alias.name == "*":
                            return None
                        if used_beyond_comparison(tree, parents, alias.asname or alias.name):
                            used.add(alias.name)
                elif module in self.finder.imported_files(
                    importer, node.level, node.module or "", [a.name for a in node.names]
                ):
                    return None
        return used

    def imported_in(self, folders: Sequence[str]) -> dict[str, dict[str, bool]]:
        """The modules of the tree in `folders` (at any depth) that some module imports -> their importers."""
        inside = tuple(folder + os.sep for folder in folders)
        return {imported: importers for imported, importers in self.importers.items() if imported.startswith(inside)}

    def _imported_from_outside(self, folder: str) -> bool:
        """A module of the product outside `folder` imports one of its modules by a written name (a test that
        imports a vendor's backend to test it says nothing of what the product loads on another vendor)."""
        inside = folder + os.sep
        return any(
            imported.startswith(inside)
            and any(not importer.startswith(inside) and not self.imports_everywhere(importer) for importer in importers)
            for imported, importers in self.importers.items()
        )

    def _propagate_requirements(self) -> dict[str, tuple[Branch, frozenset[str]]]:
        """Every module's requirement at once, from the modules importing vendor-only packages up through their
        module-level importers until nothing changes (each module narrows at most twice: a fixed point, the
        same whatever the order, import cycles included)."""
        importers: dict[str, list[str]] = {}
        for importer, imported_files in sorted(self._module_level.items()):
            for imported in sorted(imported_files):
                importers.setdefault(imported, []).append(importer)
        found = {
            path: (self._package_requirement(path, branch), frozenset[str]())
            for path, branch in sorted(self._packages.items())
        }
        for path, (branch, files) in self._native_requirements().items():
            current, current_files = found.get(path, (EVERYWHERE, frozenset()))
            found[path] = (_intersection(current, branch), current_files | files)
        pending = deque(found)
        members = self._package_members()
        while pending:
            module = pending.popleft()
            branch, files = found[module]
            for importer in (*importers.get(module, ()), *self._members_of(module, members)):
                current, current_files = found.get(importer, (EVERYWHERE, frozenset()))
                narrowed = _intersection(current, branch)
                if narrowed != current:
                    found[importer] = (narrowed, current_files | files | {module})
                    pending.append(importer)
        return found

    def _package_requirement(self, path: str, from_bytes: Branch) -> Branch:
        """Where the module can be imported by the vendor-only packages its module-level statements import, checked on
        its tree: a line of a string that reads like one (generated code: `import cutlass.utils as cu` in a
        template) is no statement. Only the few files the bytes say import such a package are parsed; one that does not
        parse keeps the bytes' answer."""
        data = read_small_file(path)
        try:
            module = ast.parse(data) if data is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            module = None
        if module is None:
            return from_bytes
        branch = EVERYWHERE
        for statement in _unsurvived_imports(module.body):
            if isinstance(statement, ast.Import):
                names = [alias.name for alias in statement.names]
            elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
                names = [statement.module]
            else:
                continue
            for name in names:
                if not self._in_tree(path, name):
                    for package_branch in self._package_branches(name):
                        branch = _intersection(branch, package_branch)
        return branch

    def _package_members(self) -> dict[str, list[str]]:
        """The modules of each package by its `__init__.py`: its own modules and its subpackages' `__init__.py`."""
        members: dict[str, list[str]] = {}
        for path in sorted(self.finder.files):
            folder = os.path.dirname(path)
            if os.path.basename(path) == "__init__.py":
                folder = os.path.dirname(folder)
            package = os.path.join(folder, "__init__.py")
            if package in self.finder.files:
                members.setdefault(package, []).append(path)
        return members

    def _members_of(self, module: str, members: dict[str, list[str]]) -> list[str]:
        """The modules that import `module` whenever they are imported because it is their package's `__init__.py`
        (Python runs it before any module of the package, `python -m pkg.mod` too); a module run as `__main__`
        may also be run by its path, without its package."""
        if os.path.basename(module) != "__init__.py":
            return []
        return [path for path in members.get(module, ()) if not self._file_facts(path)[0]]

    def _native_requirements(self) -> dict[str, tuple[Branch, frozenset[str]]]:
        """The modules that need an extension module the build builds for NVIDIA only, NVIDIA's, with the build
        files declaring those extensions: those whose module-level statements import one, and the scripts nothing
        imports in the folder of one's sources (its benchmarks and tests) or of the nested project declaring one
        (its setup.py too)."""
        natives = self.nvidia_only_natives()
        found: dict[str, tuple[Branch, frozenset[str]]] = {}
        if natives.modules:
            parents = frozenset(name.rsplit(".", 1)[0] for name in natives.modules if "." in name)
            bare = frozenset(name for name in natives.modules if "." not in name)
            names = (natives.modules, parents, bare)
            for path, statements in sorted(self._absolute_imports.items()):
                declared = {self._nvidia_only_native(module, imported, names) for module, imported in statements}
                declared.discard("")
                if declared:
                    found[path] = _NVIDIA_ONLY, frozenset(where.rsplit(":", 1)[0] for where in declared)
        for folder, where in sorted(natives.folders.items()):
            inside = folder + os.sep
            declaring = where.rsplit(":", 1)[0]
            for path in sorted(path for path in self.finder.files if path.startswith(inside)):
                # A build script runs before there is an extension, on ROCm too; not the setup.py declaring the
                # extension of a nested project whose build is NVIDIA's alone: its flags reach no ROCm build.
                if os.path.basename(path) == _BUILD_SCRIPT and path != declaring:
                    continue
                if not self.importers.get(path) and not self.finder.vendored(path):
                    found[path] = (
                        _NVIDIA_ONLY,
                        found.get(path, (_NVIDIA_ONLY, frozenset()))[1] | {where.rsplit(":", 1)[0]},
                    )
        return found

    def _add_load_call(
        self, path: str, folder: str, data: bytes, line: int, everywhere: bool, here: dict[str, bool]
    ) -> None:
        """`importlib.import_module("pkg.mod")` on the line: an import decided by the importer's analysis."""
        end = data.find(b"\n", line)
        call = _LOAD_CALL.search(data, line, len(data) if end == -1 else end)
        if call is not None:
            module = call.group(1)
            found = self._resolve(path, folder, call.group(0), module, lambda: [(0, module.decode("ascii"), b"")])
            for imported in found:
                here[imported] = everywhere or here.get(imported, False)

    def _resolve(
        self, path: str, folder: str, statement: bytes, module: bytes | None, imported: Callable[[], list[Imported]]
    ) -> list[str]:
        """The files a statement imports, remembered per folder and per the folders an absolute import is
        looked for in: the same statement is written in many files, and resolves the same way in each.
        `module`: the module an absolute import of one module names (None for any other statement)."""
        first = module.split(b".", 1)[0].decode("ascii", "replace") if module else ""
        if first and first not in self.finder.names:
            found: list[str] = []  # no module of the tree has its first name (`os`, a third-party package)
        else:
            places = self.finder.roots_of(folder, first) if first else (folder,)
            remembered = self._statement_files.get((places, statement))
            found = remembered if remembered is not None else self._files(path, imported())
            self._statement_files[(places, statement)] = found
        self._statement_files[(folder, statement)] = found
        return found

    def _files(self, path: str, imported: list[Imported]) -> list[str]:
        return [
            found
            for level, module, names in imported
            for found in self.finder.imported_files(path, level, module, names)
        ]


class _TripleQuotes:
    """Whether a position of a file's bytes lies inside a triple-quoted string, by the parity of the triple quotes of
    each kind before it, counted onwards (the positions asked only grow). A triple quote of the other kind inside such
    a string, or in a comment, misleads it; the importer's tree then decides that import, as any indented one."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.counted_to = 0
        self.double = 0
        self.single = 0

    def inside(self, position: int) -> bool:
        self.double += self.data.count(b'"""', self.counted_to, position)
        self.single += self.data.count(b"'''", self.counted_to, position)
        self.counted_to = position
        return self.double % 2 == 1 or self.single % 2 == 1


def _parsed(path: str) -> ast.Module | None:
    """The module at `path` parsed, None when it cannot be read or does not parse."""
    data = read_small_file(path)
    if data is None:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError):
        return None


def _tooling_naming_no_rocm(root: str) -> frozenset[str]:
    """The files of the hidden folders and files at `root` (version control and caches aside) when none names ROCm or
    an AMD GPU (`_ROCM_NAMED`) in its text or its path; empty when one does, when one cannot be read, or when there
    are more than `_MAX_TOOLING_FILES`."""
    files: list[str] = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not name.startswith(".") or name in _SKIPPED_FOLDERS or "cache" in name:
            continue
        if not os.path.isdir(path):
            files.append(path)
            continue
        for parent, _, names in os.walk(path):
            files.extend(os.path.join(parent, found) for found in names)
        if len(files) > _MAX_TOOLING_FILES:
            return frozenset()
    for path in files:
        data = read_small_file(path)
        named = os.path.relpath(path, root).encode("utf-8", "replace")
        if data is None or _ROCM_NAMED.search(data) or _ROCM_NAMED.search(named):
            return frozenset()
    return frozenset(files)


def _folders_above(files: Iterable[str], root: str) -> set[str]:
    """Every folder between the files and `root`."""
    folders: set[str] = set()
    for path in files:
        folder = os.path.dirname(path)
        while len(folder) > len(root) and folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    return folders


def _vendored_roots(root: str, files: frozenset[str]) -> tuple[tuple[str, ...], frozenset[str]]:
    """Each vendored folder of the tree and each folder directly in one (a vendored project's root), sorted; and
    the names of the folders in those (namespace packages without `__init__.py` are importable from them)."""
    roots: set[str] = set()
    names: set[str] = set()
    for path in files:
        parts = os.path.relpath(path, root).split(os.sep)[:-1]
        for depth, part in enumerate(parts):
            if part in _VENDORED_FOLDERS:
                roots.add(os.path.join(root, *parts[: depth + 1]))
                if depth + 1 < len(parts):
                    roots.add(os.path.join(root, *parts[: depth + 2]))
                names.update(parts[depth + 1 : depth + 3])
                break
    return tuple(sorted(roots)), frozenset(names)


def _absolute_module(match: re.Match[bytes]) -> bytes | None:
    """The module of `from a.b import c` or `import a.b as c`; None for a relative import or one of several
    modules."""
    if match.group(3):
        return None
    module = match.group(4) if match.group(6) is None else match.group(6)
    if module is None or b"," in module or not module.strip():
        return None
    return module.split(None, 1)[0]


def _unsurvived_imports(block: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of a module's block whose failed import the module does not survive: written alone, in the body
    of a `try:` whose handlers all raise (`except ImportError: raise`, or one re-raising as another error), in the
    arm of an `if` whose other arm raises (`if torch.cuda.is_available(): from flash_attn.cute import f`
    `else: raise ImportError(...)`). An import in a `try:` that carries on, or under an `if` it may skip, is not."""
    for statement in block:
        if isinstance(statement, ast.Try):
            if all(_raises(handler.body) for handler in statement.handlers):
                yield from _unsurvived_imports(statement.body)
        elif isinstance(statement, ast.If):
            if _raises(statement.orelse):
                yield from _unsurvived_imports(statement.body)
            if _raises(statement.body):
                yield from _unsurvived_imports(statement.orelse)
        else:
            yield statement


def _raises(block: list[ast.stmt]) -> bool:
    """The block always ends in a `raise` (each arm of an `if` ending it too)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.If):
        return _raises(last.body) and _raises(last.orelse)
    return isinstance(last, ast.Raise)


def _statements(match: re.Match[bytes]) -> list[Imported]:
    """(level, module, imported names) per module an import statement's text imports: one per name of
    `import a.b as c, d`, one for `from ..a import b, c`."""
    plain = match.group(6)
    if plain is not None:
        return [(0, name, b"") for name in _names(plain) if _is_dotted(name)]
    dots, module = match.group(3), match.group(4) or b""
    return [(len(dots), module.decode("ascii", "replace"), match.group(5))]


def _names(text: bytes) -> list[str]:
    """The names of `x, y as z` or `(x,\n y)`, comments and a trailing `;` statement dropped."""
    written = text.decode("ascii", "replace").strip().removeprefix("(").removesuffix(")")
    if "#" in written:
        written = " ".join(line.split("#", 1)[0] for line in written.splitlines())
    written = written.split(";", 1)[0].replace("\\", " ")
    return [words[0] for words in (name.split(None, 1) for name in written.split(",")) if words]


def _is_dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def tree_files(root: Path) -> list[str]:
    """The `.py` files under `root` an index reads, in a fixed order (at most _MAX_FILES)."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(os.path.abspath(root)):
        subfolders[:] = sorted(s for s in subfolders if s not in _SKIPPED_FOLDERS and not s.startswith("."))
        for name in sorted(names):
            if name.endswith(".py"):
                found.append(os.path.join(folder, name))
                if len(found) >= _MAX_FILES:
                    return found
    return found


def _index_part(
    index: ImportIndex, paths: list[str], imports_everywhere: Callable[[str], bool], sender: Connection
) -> None:
    """The forked helper of `ImportIndex._add_files_beside_helper`: index `paths` and send what it found."""
    index._add_files(paths, imports_everywhere)
    sender.send(index._part())
    sender.close()


def names_consumer_gpu(data: bytes) -> bool:
    """The text names a gfx target of AMD's consumer GPUs (RDNA: `"gfx1100"`, `gfx120X`): code written to run there."""
    return b"gfx1" in data and _CONSUMER_GPU_TARGET.search(data) is not None


def read_small_file(path: str) -> bytes | None:
    """The bytes of the file at `path`; None when it cannot be read or is larger than a module an index reads."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > _MAX_FILE_BYTES:
                return None
            return handle.read()
    except OSError:
        return None


# --- reading an importer's tree ------------------------------------------------------------------------------------
def import_gate(analyzer: GateAnalyzer, sites: Sequence[ast.AST]) -> Branch | None:
    """Where an importer's imports of a module (`sites`, from import_sites) run: the union of their branches;
    None when none runs (under `if TYPE_CHECKING:`, or no site at all: bytes that looked like an import in a
    string or comment)."""
    where: Branch | None = None
    for node in sites:
        if not _type_checking_only(analyzer, node):
            branch = analyzer.branch(node)
            where = branch if where is None else _union(where, branch)
    return where


def import_sites(semantic: Semantic, importer: str, finder: ModuleFinder) -> dict[str, list[ast.AST]]:
    """Every import statement and load call of the importer's tree, by the files of the tree it imports: the
    statements from the nodes the walk recorded, the calls from the names it saw."""
    found: dict[str, list[ast.AST]] = {}
    calls = [semantic.parent(mention) for mention in semantic.mentions if _names_a_load_function(mention)]
    statements = [node for node in semantic.parents if type(node) is ast.Import or type(node) is ast.ImportFrom]
    for node in statements + [call for call in calls if call is not None]:
        for imported in _files_imported(node, importer, finder):
            found.setdefault(imported, []).append(node)
    return found


def _intersection(first: Branch, second: Branch) -> Branch:
    """Where code runs that runs only where both do."""
    return Branch(
        first.on_rocm is not False and second.on_rocm is not False,
        first.on_nvidia is not False and second.on_nvidia is not False,
    )


def _within(branch: Branch, only: Branch) -> bool:
    """Code at `branch` runs on the vendor of `only` and never on the other one (`only` names exactly one)."""
    if only.on_rocm:
        return branch.on_rocm is not False and branch.on_nvidia is False
    return branch.on_nvidia is not False and branch.on_rocm is False


def _union(first: Branch, second: Branch) -> Branch:
    """Where code runs that runs where either does (only False means never)."""
    return Branch(
        first.on_rocm is not False or second.on_rocm is not False,
        first.on_nvidia is not False or second.on_nvidia is not False,
    )


def _files_imported(node: ast.AST, importer: str, finder: ModuleFinder) -> list[str]:
    if isinstance(node, ast.Import):
        return [path for alias in node.names for path in finder.imported_files(importer, 0, alias.name)]
    if isinstance(node, ast.ImportFrom):
        names = [alias.name for alias in node.names]
        return finder.imported_files(importer, node.level, node.module or "", names)
    if isinstance(node, ast.Call) and node.args:
        function = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        argument = node.args[0]
        if function in _LOAD_FUNCTIONS and isinstance(argument, ast.Constant) and type(argument.value) is str:
            return finder.imported_files(importer, 0, argument.value)
    return []


def _names_a_load_function(mention: ast.Name | ast.Attribute) -> bool:
    return (mention.id if isinstance(mention, ast.Name) else mention.attr) in _LOAD_FUNCTIONS


def _type_checking_only(analyzer: GateAnalyzer, node: ast.AST) -> bool:
    """Inside `if TYPE_CHECKING:`: read by type checkers, never run."""
    child = node
    for ancestor in analyzer.semantic.ancestors(node):
        if isinstance(ancestor, ast.If) and any(child is statement for statement in ancestor.body):
            if (analyzer.semantic.qualified_name(ancestor.test) or dotted_name(ancestor.test)) in _TYPE_CHECKING:
                return True
        child = ancestor
    return False


# --- where a module can be imported --------------------------------------------------------------------------------
_IMPORTED = "imported"  # the search that lets every import through, whatever its gate
_VENDORS = ("on_rocm", "on_nvidia", _IMPORTED)
Answer = tuple[bool, frozenset[str]]  # whether an entry point is reached, and the files that decided it


class ModuleReach:
    """Where the modules of one index can be imported, for one reading of vendor tests (memoised per process).

    A module can run on a vendor when some chain of importers, each import of it able to run on that
    vendor, reaches an entry point: a search upwards from the module, module-level imports tried first (they
    need no parse), stopped at the first entry point. A search that finds none has seen every importer
    that could lead to one, so every module it went through gets that answer too; cycles are cut there.
    """

    def __init__(self, index: ImportIndex, gate: ImportGate) -> None:
        self.index = index
        self.gate = gate
        self._gates: dict[tuple[str, str], tuple[Branch | None, frozenset[str]]] = {}
        self._entries: dict[str, Answer] = {}
        self._answers: dict[str, dict[str, Answer]] = {vendor: {} for vendor in _VENDORS}
        self._dispatches: dict[str, Answer] = {}  # NVIDIA-named folder -> whether the project chooses its sibling
        self._twin_suites: dict[str, Answer] = {}  # NVIDIA-named folder -> `_twin_tests`
        self._twin_trees: dict[str, Answer] = {}  # NVIDIA-named folder -> `_twin_scripts`
        self._role_trees: dict[str, bool] = {}  # folder named `nvidia` -> no module outside imports one of its modules

    def base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """Where the module at `path` can run at all, and the files (importers) that answer came from. A
        module no chain of imports reaches from an entry point, whatever the gates (one imported only from
        its own import cycle, `import_submodule(package)`), is loaded some way not seen: everywhere."""
        required, required_files = self.index.required(path)
        family, family_files = self.index.backend_family_base(path)
        required, required_files = _intersection(required, family), required_files | family_files
        tooling, tooling_files = self.index.tooling_base(path)
        required, required_files = _intersection(required, tooling), required_files | tooling_files
        sibling, sibling_files = self._sibling_base(path)
        required, required_files = _intersection(required, sibling), required_files | sibling_files
        on_rocm, rocm_files = self._reaches(path, "on_rocm")
        on_nvidia, nvidia_files = self._reaches(path, "on_nvidia")
        if on_rocm and on_nvidia:
            return required, rocm_files | nvidia_files | required_files
        imported, imported_files = self._reaches(path, _IMPORTED)
        files = rocm_files | nvidia_files | imported_files | required_files
        if not imported and self.index.finder.vendored(path):
            return NO_GPU, files  # a vendored module the project's code never imports: it never runs
        return _intersection(required, Branch(on_rocm, on_nvidia) if imported else EVERYWHERE), files

    def _tests_nvidia_code(self, module: str, files: set[str]) -> bool:
        """A test file whose module-level statements import a module of an NVIDIA-named folder that the project
        chooses against its ROCm-named sibling (`_sibling_base`): it tests code ROCm never runs."""
        if not self.index.imports_everywhere(module):
            return False
        for imported in sorted(self.index.module_level_imports(module)):
            sibling, sibling_files = self._sibling_base(imported)
            if sibling.on_rocm is False:
                files.update(sibling_files)
                return True
        return False

    def _sibling_base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """NVIDIA's when the module sits in a folder named for NVIDIA whose ROCm-named sibling the project chooses
        on ROCm (rocmlint/python/backend_families.py), with the files that decided it; everywhere otherwise."""
        member = self.index.nvidia_sibling(path)
        if member is None:
            return self._role_twin_base(path)
        nvidia, rocm = member
        if nvidia not in self._dispatches:
            self._dispatches[nvidia] = self._dispatched(nvidia, rocm)
        dispatched, files = self._dispatches[nvidia]
        if not dispatched and self.index.imports_everywhere(path) and self._imported_only_within(path, nvidia):
            if nvidia not in self._twin_suites:
                self._twin_suites[nvidia] = self._twin_tests(nvidia, rocm)
            dispatched, files = self._twin_suites[nvidia]
        if not dispatched:
            if nvidia not in self._twin_trees:
                self._twin_trees[nvidia] = self._twin_scripts(nvidia, rocm)
            dispatched, files = self._twin_trees[nvidia]
        if not dispatched:
            return self._role_twin_base(path)
        return _NVIDIA_ONLY, files

    def _role_twin_base(self, path: str) -> tuple[Branch, frozenset[str]]:
        """NVIDIA's when the module sits in a folder named `nvidia` that a sibling vendor folder mirrors by role
        (`vendors/nvidia/nvidia_monitor.py`, `vendors/amd/amd_monitor.py`) and no module outside it imports one of its
        modules: the project picks the folder by the vendor's name. Everywhere otherwise."""
        twin = self.index.nvidia_role_twin(path)
        if twin is None:
            return EVERYWHERE, frozenset()
        folder, pair = twin
        if folder not in self._role_trees:
            self._role_trees[folder] = bool(self._closed_tree(folder))
        return (_NVIDIA_ONLY, frozenset(pair)) if self._role_trees[folder] else (EVERYWHERE, frozenset())

    def _imported_only_within(self, path: str, folder: str) -> bool:
        """No module outside `folder` imports the module at `path` (a helper the ROCm suite shares runs there too)."""
        return all(importer.startswith(folder + os.sep) for importer in self.index.importers_of(path))

    def _twin_tests(self, nvidia: str, rocm: tuple[str, ...]) -> Answer:
        """The NVIDIA-named folder and a ROCm-named sibling each hold a test file of the same name at the same place
        (`test/nvidia/test_all_to_all.py` and `test/amd/test_all_to_all.py`): the project keeps one test suite per
        vendor, and runs the ROCm folder's on ROCm. The pair found, as the files that decided it."""
        tests = {
            os.path.relpath(path, nvidia): path
            for path in self.index.finder.files
            if path.startswith(nvidia + os.sep) and self.index.imports_everywhere(path)
        }
        for folder in rocm:
            for relative, path in sorted(tests.items()):
                twin = os.path.join(folder, relative)
                if twin in self.index.finder.files and self.index.imports_everywhere(twin):
                    return True, frozenset((path, twin))
        return False, frozenset()

    def _twin_scripts(self, nvidia: str, rocm: tuple[str, ...]) -> Answer:
        """The NVIDIA-named folder and a ROCm-named sibling are each a tree of their own, no module of either imported
        from outside it, and hold a module of the same name at the same place (`problems/nvidia/eval.py` and
        `problems/amd/eval.py`, a package's `__init__.py` aside): the project keeps one copy of its scripts per vendor
        and runs the ROCm folder's on ROCm. The pair found, as the files that decided it."""
        modules = self._closed_tree(nvidia)
        if not modules:
            return False, frozenset()
        for folder in rocm:
            twins = self._closed_tree(folder)
            for relative, path in sorted(modules.items()):
                if relative in twins and os.path.basename(relative) != "__init__.py":
                    return True, frozenset((path, twins[relative]))
        return False, frozenset()

    def _closed_tree(self, folder: str) -> dict[str, str]:
        """The modules under `folder` by their path relative to it, or none when a module outside imports one."""
        modules = {
            os.path.relpath(path, folder): path for path in self.index.finder.files if path.startswith(folder + os.sep)
        }
        if not all(self._imported_only_within(path, folder) for path in modules.values()):
            return {}
        return modules

    def _dispatched(self, nvidia: str, rocm: tuple[str, ...]) -> Answer:
        """Some module outside the folders imports a module of a ROCm one under a ROCm-only gate and one of the
        NVIDIA one under an NVIDIA-only gate; and the importers read to decide it."""
        files: set[str] = set()
        members = (nvidia, *rocm)
        on_rocm = self._gated_importers(rocm, members, Branch(True, False), files)
        on_nvidia = self._gated_importers((nvidia,), members, _NVIDIA_ONLY, files) if on_rocm else set()
        return bool(on_rocm & on_nvidia), frozenset(files)

    def _gated_importers(
        self, folders: Sequence[str], members: Sequence[str], only: Branch, files: set[str]
    ) -> set[str]:
        """The modules outside `members` importing a module of `folders` under a gate that runs only where `only`
        does (its other vendor False). Module-level imports are no such import and need no parse."""
        inside = tuple(member + os.sep for member in members)
        found: set[str] = set()
        for imported, importers in sorted(self.index.imported_in(folders).items()):
            for importer, top_level in sorted(importers.items()):
                if importer.startswith(inside) or (top_level and not self.index.may_exit(importer)):
                    continue
                branch, gate_files = self._gate(importer, imported)
                files.update(gate_files)
                if branch is not None and _within(branch, only):
                    found.add(importer)
        return found

    def _reaches(self, start: str, vendor: str) -> Answer:
        answers = self._answers[vendor]
        if start in answers:
            return answers[start]
        files: set[str] = set()
        through: dict[str, str | None] = {start: None}  # module -> the module it was reached from
        found = self._search(start, vendor, through, files)
        decided = frozenset(files)
        if found is None:
            answers.update(dict.fromkeys(through, (False, decided)))
        else:
            node: str | None = found
            while node is not None:
                answers[node] = (True, decided)
                node = through[node]
        return answers[start]

    def _search(self, start: str, vendor: str, through: dict[str, str | None], files: set[str]) -> str | None:
        """The entry point (or module known to reach one) found first, None when there is none."""
        answers = self._answers[vendor]
        pending: list[tuple[str, str, bool]] = []  # (importer, imported, a module-level import)
        if self._reached(start, vendor, files, pending):
            return start
        while pending:
            importer, imported, top_level = pending.pop()
            if importer in through:
                continue
            files.add(importer)
            if not top_level or self.index.may_exit(importer):
                branch, gate_files = self._gate(importer, imported)
                files.update(gate_files)
                if branch is None or (vendor != _IMPORTED and getattr(branch, vendor) is False):
                    continue
            through[importer] = imported
            known = answers.get(importer)
            if known is not None:
                files.update(known[1])
                if known[0]:
                    return importer
                continue
            if self._reached(importer, vendor, files, pending):
                return importer
        return None

    def _reached(self, module: str, vendor: str, files: set[str], pending: list[tuple[str, str, bool]]) -> bool:
        """Whether `module` is an entry point; else push its importers, module-level ones last so that they
        are tried first. A module that cannot be imported on the vendor (`ImportIndex.required`: it imports an
        NVIDIA-only package at module level) is no step of a chain there: nothing it imports runs there through it;
        nor, on ROCm, is a test of NVIDIA's code (`_tests_nvidia_code`)."""
        if vendor != _IMPORTED:
            required, required_files = self.index.required(module)
            if getattr(required, vendor) is False:
                files.update(required_files)
                return False
            if vendor == "on_rocm" and self._tests_nvidia_code(module, files):
                return False
        is_entry, entry_files = self._is_entry(module)
        files.update(entry_files)
        if is_entry:
            return True
        importers = sorted(self.index.importers_of(module).items(), key=lambda item: (item[1], item[0]))
        pending.extend((importer, module, top_level) for importer, top_level in importers)
        return False

    def _is_entry(self, module: str) -> Answer:
        """Run as `__main__`, or imported by nothing at run time (its imports all under `if TYPE_CHECKING:`)."""
        if module not in self._entries:
            importers = self.index.importers_of(module)
            if self.index.finder.vendored(module):
                self._entries[module] = (False, frozenset())
            elif self.index.is_entry(module):
                self._entries[module] = self._main_entry(module, importers)
            elif any(top_level and not self.index.may_exit(importer) for importer, top_level in importers.items()):
                self._entries[module] = (False, frozenset())
            else:
                files: set[str] = set(importers)
                runs = False
                for importer in importers:
                    branch, gate_files = self._gate(importer, module)
                    files.update(gate_files)
                    if branch is not None:
                        runs = True
                        break
                self._entries[module] = (not runs, frozenset(files))
        return self._entries[module]

    def _main_entry(self, module: str, importers: Mapping[str, bool]) -> Answer:
        """A module run as `__main__` is an entry point, unless the project imports it and only ever for NVIDIA:
        a module every importer loads in an NVIDIA-only branch (`if "nvidia" in device_name: from . import nvml`)
        is NVIDIA's module, and its `__main__` block that module's demo; where it runs is where its importers do."""
        if not importers:
            return True, frozenset()
        files: set[str] = set(importers)
        for importer, top_level in importers.items():
            if top_level and not self.index.may_exit(importer):
                return True, frozenset()
            branch, gate_files = self._gate(importer, module)
            files.update(gate_files)
            if branch is None or branch.on_rocm is not False:
                return True, frozenset()
        return False, frozenset(files)

    def _gate(self, importer: str, imported: str) -> tuple[Branch | None, frozenset[str]]:
        key = (importer, imported)
        if key not in self._gates:
            self._gates[key] = self.gate(importer, imported)
        return self._gates[key]
