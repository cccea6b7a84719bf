"""Follows `from pkg.env import is_hip` into the scanned tree, so project-wide ROCm flags are understood.

A name is looked for from the importer's package root, its folder and the project root, then in the folders holding
the packages the root's pyproject.toml builds from below the root (`wheel.packages = ["python/pkg"]`): a test at
`tests/` imports `pkg` as installed."""

from __future__ import annotations

import ast
import os
import re
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from rocmlint.python.accelerators import other_accelerator_in_path
from rocmlint.python.importers import (
    ImportIndex,
    ModuleReach,
    NvidiaOnlyNatives,
    import_gate,
    import_sites,
    read_small_file,
)
from rocmlint.python.scopes import FUNCTION_DEFS, dotted_name, tests_membership_of_its_parameter
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import PythonParseError, parse_text, walk
from rocmlint.source import DecodeError, SourceFile
from rocmlint.vendor import EVERYWHERE, Branch, Vendor

if TYPE_CHECKING:
    from rocmlint.python.gating import GateAnalyzer
    from rocmlint.python.vendor_values import VendorStrings

# What is asked of a module's name: its vendor value, the strings it holds per vendor, or where a test it
# decorates runs (a skip decorator the project defines, as a vendor value).
SymbolQuestion = Literal["value", "strings", "skip"]
# A symbol of one module as asked: (module file, name with "()" when called, guards, the question).
# A module, the name asked of it, the guards, the question, and the project root its own imports may also start from.
SymbolKey = tuple[Path, str, frozenset[str], SymbolQuestion, Path | None]

# How much of the neighbour modules a process keeps, in bytes of their source: their bytes, and apart their trees,
# semantic models and gate analyses (a tree takes about 35 times its source). A neighbour is asked about in bursts
# (the files of one package are checked together), and every answer is cached apart, so what is dropped is read or
# parsed again only for a new question. Counted in modules, the trees kept held 60-80 MB per worker on PyTorch, where
# the neighbours asked about most are test files of 0.1-0.4 MB, and every importer's bytes read for a word held 9-21
# MB more (docs/performance.md).
_NEIGHBOUR_BYTES_KEPT = 256 * 1024

# How many modules away `read_only_off_rocm` asks the importers of an importer where its defs and classes run.
_IMPORTER_READ_DEPTH = 1
_PYPROJECT = "pyproject.toml"
# A quoted relative path in pyproject.toml (`"python/pkg"`): a package folder when one is there.
_QUOTED_PATH = re.compile(rb'"([\w.\-]+(?:/[\w.\-]+)+)"')
# A module can only define a vendor test if it mentions one of these.
_VENDOR_BYTES = (b"hip", b"rocm", b"ROCM", b"HIP", b"cuda", b"amd", b"AMD", b"nvidia")
# `import *` (after `from m`); the word boundary before `import` is checked apart (`_holds_star_import`).
_STAR_IMPORT = re.compile(rb"import[ \t]*\*")


def package_of(path: str) -> tuple[str | None, Path]:
    """The dotted package a file belongs to, and the folder its top-level package sits in."""
    folder = Path(os.path.abspath(path)).parent
    parts: list[str] = []
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        folder = folder.parent
    return (".".join(reversed(parts)) if parts else ""), folder


def is_test_file(path: str) -> bool:
    """A test suite's file (`test_*.py`, `*_test.py`, `conftest.py`, or in a `test`/`tests`/`testing` folder, or one
    named for a kind of tests (`integration_tests`), among the two closest: a checkout that itself lives under ~/tests/
    is not a test suite)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    in_test_dir = any(part in ("test", "tests", "testing") or part.endswith("_tests") for part in parts[-3:-1])
    return in_test_dir or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


class ProjectIndex:
    """Resolves qualified names defined in other Python modules of the project to their vendor values, or
    to the strings they hold per vendor; cached per run, each module parsed once.

    A qualified name ending in "()" asks for the value of calling it (`pkg.env.is_hip()`); one may name a
    member of a module's name (`pkg.platforms.current_platform.is_mi300()`).
    """

    def __init__(self, rocm_guards: frozenset[str] = frozenset()) -> None:
        self.rocm_guards = rocm_guards
        self._values: dict[SymbolKey, Vendor | VendorStrings | None] = {}
        self._in_progress: set[SymbolKey] = set()
        self._modules: dict[tuple[tuple[str, ...], tuple[Path, ...]], Path | None] = {}
        self._module_data: _Recent[Path, bytes | None] = _Recent(_NEIGHBOUR_BYTES_KEPT)
        self._star_imports: dict[Path, bool] = {}  # the module's bytes hold `import *`
        self._analyzers: _Recent[tuple[Path, frozenset[str], Path | None, int | None], GateAnalyzer | None]
        self._analyzers = _Recent(_NEIGHBOUR_BYTES_KEPT)
        self._semantics: _Recent[Path, Semantic | None] = _Recent(_NEIGHBOUR_BYTES_KEPT)
        self._package_roots: dict[Path, tuple[Path, ...]] = {}  # pyproject.toml -> `_declared_package_roots`
        self._reaches: dict[tuple[str, frozenset[str]], ModuleReach] = {}
        # an importer's analysis -> imported -> the import nodes of it in that analysis' tree: kept while the analysis
        # is, since an importer parsed again after its analysis was dropped has other nodes (see `_Recent`)
        self._import_sites: weakref.WeakKeyDictionary[GateAnalyzer, dict[str, list[ast.AST]]]
        self._import_sites = weakref.WeakKeyDictionary()
        self._read_elsewhere: dict[tuple[str, str], bool] = {}  # (module, name): an importer may read it
        # (module, name, depth): importers read it only off ROCm
        self._read_off_rocm: dict[tuple[str, str, int], bool] = {}
        # (root, key, testers, tester) -> `key_registered_off_rocm` and the files it read
        self._registered_off_rocm: dict[tuple[str, str, frozenset[str], str | None], tuple[bool, tuple[str, ...]]] = {}

    def note_files(self, paths: Iterable[str]) -> None:
        """Other files a result was computed from (the C++ project model's); only a recorder keeps them."""

    @contextmanager
    def _collecting(self) -> Iterator[set[str]]:
        """The files noted while inside (only a recorder notes any)."""
        yield set()

    def module_base(self, index: ImportIndex, path: str, rocm_guards: frozenset[str] | None = None) -> Branch:
        """Where the module at `path` can run at all, from where the modules of `index` import it
        (rocmlint/python/importers.py); its importers become dependencies of the result."""
        guards = self.rocm_guards if rocm_guards is None else rocm_guards
        key = (index.root, guards)
        reach = self._reaches.get(key)
        if reach is None:
            reach = self._reaches[key] = ModuleReach(
                index, lambda importer, imported: self._import_gate(index, importer, imported, guards)
            )
        branch, files = reach.base(os.path.abspath(path))
        self.note_files(files)
        return branch

    def definitions_only_on_nvidia(self, index: ImportIndex, path: str, name: str) -> bool:
        """Whether the code inside the defs of the module at `path` under its top-level def or class `name` runs only
        on NVIDIA, as the project chooses it (`ImportIndex.definitions_base`: an NVIDIA-named folder of a registry keyed
        by vendor; `ImportIndex.platform_definitions`: what only the NVIDIA platform class chooses); the files that
        decided it become dependencies of the result."""
        module = os.path.abspath(path)
        names, platform_files = index.platform_definitions(module)
        self.note_files(platform_files)
        if name in names:
            return True
        branch, files = index.definitions_base(module)
        self.note_files(files)
        return branch.on_rocm is False

    def read_elsewhere(self, index: ImportIndex, path: str, name: str) -> bool:
        """Whether a module of `index` that imports the module at `path` may read its module-level `name`. The
        importers become dependencies of the result (a module that starts importing it later is not one, as
        for `module_base`)."""
        module = os.path.abspath(path)
        importers = sorted(index.importers_of(module))
        self.note_files(importers)
        key = (module, name)
        if key not in self._read_elsewhere:
            self._read_elsewhere[key] = any(self._may_read(index, Path(importer), name) for importer in importers)
        return self._read_elsewhere[key]

    def read_only_off_rocm(self, index: ImportIndex, path: str, name: str, depth: int = _IMPORTER_READ_DEPTH) -> bool:
        """Whether some module of `index` importing the module at `path` reads its module-level `name`, and every
        module that may read it does so only in code that never runs on ROCm, by that module's own gates (a use
        under `if torch.version.hip is None:`, the NVIDIA arm of a conditional expression). A subpackage's
        `__init__.py` that only re-exports it (`from .packed import *`) passes the question on to its own
        importers. Another module that may read it without a visible read (a star import) decides nothing: False.

        `depth`: how many more modules away the importers' own importers are asked where the importers' defs and
        classes run (`_ImporterReads`): `Marlin(...)` read in a method of a class that only a module gated for
        NVIDIA makes."""
        module = os.path.abspath(path)
        key = (module, name, depth)
        if key not in self._read_off_rocm:
            self._read_off_rocm[key] = self._reads_through_reexports(index, module, name, depth, set()) is True
        return self._read_off_rocm[key]

    def _reads_through_reexports(
        self, index: ImportIndex, module: str, name: str, depth: int, seen: set[str]
    ) -> bool | None:
        """Whether the importers of `module` read `name` only off ROCm (None: none reads it), those of a package
        re-exporting it in its stead (`_only_reexports`; `seen`: the modules asked, at most `_MAX_REEXPORTS` packages
        passed through, each once). Importers are taken one at a time and the first read that may run on ROCm
        settles it: a widely imported module's names are mostly read on ROCm too, and parsing all its importers
        first cost vLLM a third of its Python time."""
        seen.add(module)
        importers = sorted(index.importers_of(module))
        self.note_files(importers)
        read: bool | None = None
        root = Path(index.root)
        for importer in map(Path, importers):
            if not self._may_read(index, importer, name, root):
                continue
            if self._only_reexports(importer, name, root) and len(seen) <= _MAX_REEXPORTS:
                if str(importer) in seen:
                    continue
                found = self._reads_through_reexports(index, str(importer), name, depth, seen)
                if found is False:
                    return False
                read = read or found
                continue
            if (
                not self._reads_off_rocm(index, importer, module, name, depth)
                and self.module_base(index, str(importer)).on_rocm
            ):
                return False
            read = True
        return read

    def _only_reexports(self, importer: Path, name: str, root: Path) -> bool:
        """The importer is a subpackage's `__init__.py` whose own code never reads `name`: it only hands it on to
        the project's modules. A top-level package's hands it to its users (`pkg.name` is the package's API)."""
        if importer.name != "__init__.py" or _package_file(importer.parent.parent) is None:
            return False
        data = self._data(importer)
        analyzer = self._analyzer(importer, data, self.rocm_guards, root) if data is not None else None
        if analyzer is None:
            return False
        return not analyzer.references.reads(name) and not analyzer.references.attributes(name)

    def key_registered_off_rocm(
        self, index: ImportIndex, path: str, key: str, testers: frozenset[str], qualified: str | None
    ) -> bool:
        """Whether the project registers the string `key` only in code that never runs on ROCm: some module writes
        it other than as the argument of a call of one of `testers` (`register(Extension("quanto_cuda", ...))`), and
        each such write sits in a module that never runs on ROCm (`module_base`) or under that module's own gates.
        With `qualified`, the tester the file at `path` imports must be a registry lookup (`def f(name): return
        name in REGISTRY`), found through re-exports (`from .extension import *`). The files holding the key and
        those the tester was found through become dependencies of the result."""
        cache_key = (index.root, key, testers, qualified)
        known = self._registered_off_rocm.get(cache_key)
        if known is None:
            self._registered_off_rocm[cache_key] = (False, ())  # a write's own gates asking the same: not yet
            files: list[str] = []
            lookup = qualified is None or self._registry_lookup(index, os.path.abspath(path), qualified, files)
            found = lookup and _REGISTRY_KEY.fullmatch(key) is not None
            found = found and self._written_only_off_rocm(index, key, testers, files)
            known = self._registered_off_rocm[cache_key] = (found, tuple(files))
        self.note_files(known[1])
        return known[0]

    def _registry_lookup(
        self, index: ImportIndex, importer: str, qualified: str, files: list[str], depth: int = 0
    ) -> bool:
        """The def `qualified` names, as `importer` imports it, is a registry lookup; followed through imports and
        star imports of the modules it is re-exported from (a few levels), whose files go to `files`."""
        stripped = qualified.lstrip(".")
        module, _, name = stripped.rpartition(".")
        level = len(qualified) - len(stripped)
        module_file = self._module_file(index, importer, level, module) if depth <= _MAX_REEXPORTS else None
        if module_file is None:
            return False
        files.append(str(module_file))
        data = self._data(module_file)
        semantic = self._semantic(module_file, data) if data is not None else None
        if semantic is None:
            return False
        binding = semantic.lookup_in(semantic.module, name)
        if binding is not None and binding.kind == "function":
            definition = binding.definition
            return isinstance(definition, FUNCTION_DEFS) and tests_membership_of_its_parameter(definition)
        if binding is not None:
            imported = binding.qualified if binding.kind == "import" else None
            return imported is not None and self._registry_lookup(index, str(module_file), imported, files, depth + 1)
        for node in semantic.module.body:
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                star = "." * node.level + (f"{node.module}." if node.module else "") + name
                if self._registry_lookup(index, str(module_file), star, files, depth + 1):
                    return True
        return False

    def _module_file(self, index: ImportIndex, importer: str, level: int, module: str) -> Path | None:
        """The file of the module `importer` imports (`level`: the dots of a relative import), looked for as the
        resolver does: from its top-level package's folder, its own folder and the project's root."""
        parts = tuple(module.split(".")) if module else ()
        if level:
            folder = Path(importer).parent
            for _ in range(level - 1):
                folder = folder.parent
            return self._find_module(parts, (folder,)) if parts else _package_file(folder)
        roots = (package_of(importer)[1], Path(importer).parent, Path(index.root))
        return self._find_module(parts, tuple(roots)) if parts else None

    def _written_only_off_rocm(self, index: ImportIndex, key: str, testers: frozenset[str], files: list[str]) -> bool:
        """Some module of `index` writes `key` other than as the one argument of a call of a tester, and every such
        write is off ROCm (see `key_registered_off_rocm`); the files holding it go to `files`."""
        quoted = (f'"{key}"'.encode(), f"'{key}'".encode())
        writes = 0
        for path in sorted(index.finder.files):
            data = read_small_file(path)
            if data is None or not any(text in data for text in quoted):
                continue
            files.append(path)
            analyzer = self._analyzer(Path(path), data, self.rocm_guards)
            if analyzer is None:
                return False
            module_off_rocm: bool | None = None
            for node in ast.walk(analyzer.semantic.module):
                if not isinstance(node, ast.Constant) or node.value != key or _tested(analyzer.semantic, node, testers):
                    continue
                writes += 1
                if module_off_rocm is None:
                    module_off_rocm = self.module_base(index, path).on_rocm is False
                if not module_off_rocm and not analyzer.never_on_rocm(node):
                    return False
        return writes > 0

    def _reads_off_rocm(self, index: ImportIndex, importer: Path, module: str, name: str, depth: int) -> bool:
        """Every read of `module`'s `name` in `importer` is off ROCm, by its gates, with the project's own modules
        (found from the project's root too: a script outside the packages imports them as installed) resolved and,
        `depth` permitting, the importer's own importers asked where its defs and classes run; every read in another
        accelerator's folder or file (rocmlint/python/accelerators.py) is. A `name` member of another of the
        project's modules is not one (`mylib.testing.main()` when asking about `example.main`)."""
        root = Path(index.root)
        if other_accelerator_in_path(str(importer), str(root)):
            return True
        data = self._data(importer)
        if data is None:
            return False
        reads_elsewhere = _ImporterReads(self, index, str(importer), depth - 1) if depth > 0 else None
        analyzer = self._analyzer(importer, data, self.rocm_guards, root, reads_elsewhere)
        if analyzer is None:
            return False
        if self._star_imports_in(importer, data) and self._star_import_may_bind(index, importer, analyzer, name):
            return False
        members = analyzer.references.attributes(name)
        own = [member for member in members if not self._member_of_another(index, importer, analyzer, member, module)]
        reads = [*analyzer.references.reads(name), *own]
        return bool(reads) and all(analyzer.never_on_rocm(read) for read in reads)

    def _member_of_another(
        self, index: ImportIndex, importer: Path, analyzer: GateAnalyzer, member: ast.Attribute, module: str
    ) -> bool:
        """`member` (`receiver.name`) reads a module-level name of a module other than `module`: its receiver is an
        imported module found in the project at another file, or one not found there whose name is not `module`'s
        (`unittest.main()`, `pytest.main()`)."""
        head = (dotted_name(member.value) or "").split(".", 1)[0]
        binding = analyzer.semantic.lookup(head, member) if head else None
        receiver = analyzer.semantic.qualified_name(member.value)
        if binding is None or binding.kind != "import" or receiver is None:
            return False
        stripped = receiver.lstrip(".")
        found = self._module_file(index, str(importer), len(receiver) - len(stripped), stripped)
        if found is not None:
            return os.path.abspath(found) != module
        return stripped.rsplit(".", 1)[-1] != _module_name(module)

    def _may_read(self, index: ImportIndex, importer: Path, name: str, root: Path | None = None) -> bool:
        """The importer imports `name` from somewhere (`from m import name`, a re-export), star-imports a module that
        may bind it (`_star_import_may_bind`), reads an attribute so named (`m.name`) or writes it as a string
        (`getattr(m, "name")`); one that cannot be read or parsed may do any. A variable of its own so named is no
        read (parsed only then)."""
        data = self._data(importer)
        if data is None:
            return True
        star = self._star_imports_in(importer, data)
        if not star and not _holds_word(data, name.encode()):
            return False  # each such read writes the name as a whole word (not `forward` in `forward_native`)
        analyzer = self._analyzer(importer, data, self.rocm_guards, root)  # `root`: the analysis asked for next
        if analyzer is None or (star and self._star_import_may_bind(index, importer, analyzer, name)):
            return True
        # Every node but the module (which names nothing), as the walk recorded them: a flat pass, where `ast.walk`
        # built a queue and a generator of fields per node.
        return any(_names(node, name) for node in analyzer.semantic.parents)

    def _star_import_may_bind(self, index: ImportIndex, importer: Path, analyzer: GateAnalyzer, name: str) -> bool:
        """A star import of the importer may bind `name` (so its reads may be of something else, or of the asked
        module's name invisibly): unless it imports a module of the project whose file never writes the word and
        star-imports nothing itself (`from pkg.common import *` beside `from pkg.nvidia import Gpus`)."""
        for node in analyzer.semantic.parents:
            if not isinstance(node, ast.ImportFrom) or all(alias.name != "*" for alias in node.names):
                continue
            found = self._module_file(index, str(importer), node.level, node.module or "")
            if found is None:
                return True
            data = self._data(found)
            if data is None or _holds_word(data, name.encode()) or self._star_imports_in(found, data):
                return True
        return False

    def _star_imports_in(self, module_file: Path, data: bytes) -> bool:
        """The module's bytes hold `import *` (searched once per module: many names are asked of its importers)."""
        found = self._star_imports.get(module_file)
        if found is None:
            found = self._star_imports[module_file] = _holds_star_import(data)
        return found

    def _import_gate(
        self, index: ImportIndex, importer: str, imported: str, guards: frozenset[str]
    ) -> tuple[Branch | None, frozenset[str]]:
        """Where `importer`'s imports of `imported` run, by its own gate analysis (one that cannot be read
        imports it everywhere), and the files that answer read."""
        with self._collecting() as noted:
            self.note_files([importer])
            data = self._data(Path(importer))
            # The index's root is the project's: names the importer imports resolve from it, as when it is checked.
            analyzer = self._analyzer(Path(importer), data, guards, Path(index.root)) if data is not None else None
            branch: Branch | None = EVERYWHERE
            if analyzer is not None:
                branch = import_gate(analyzer, self._sites(index, importer, analyzer).get(imported, []))
        if branch is not None and is_test_file(importer):
            branch = EVERYWHERE  # see rocmlint/python/importers.py: a test's gate is not the product's
        return branch, frozenset(noted)

    def _sites(self, index: ImportIndex, importer: str, analyzer: GateAnalyzer) -> dict[str, list[ast.AST]]:
        """The importer's import nodes by the file each imports, found once per analyzer (they are its tree's)."""
        sites = self._import_sites.get(analyzer)
        if sites is None:
            sites = self._import_sites[analyzer] = import_sites(analyzer.semantic, importer, index.finder)
        return sites

    def resolver_for(
        self, path: str, rocm_guards: frozenset[str] | None = None, project_root: Path | None = None
    ) -> ProjectResolver:
        """The resolver for names imported by the file at `path`. `rocm_guards` (default: the index's
        own) are the configured guard names the other modules are read with. `project_root` is searched
        last: a script outside the project's packages (`scripts/check.py`) imports them as installed
        (`from pkg.utils import x` is the tree's `pkg/utils`)."""
        _, root = package_of(path)
        roots: tuple[Path, ...] = (root, Path(os.path.abspath(path)).parent)
        if project_root is not None and Path(os.path.abspath(project_root)) not in roots:
            roots = (*roots, Path(os.path.abspath(project_root)))
        if project_root is not None:
            roots = (*roots, *(folder for folder in self._declared_package_roots(project_root) if folder not in roots))
        guards = self.rocm_guards if rocm_guards is None else rocm_guards
        return ProjectResolver(self, roots, guards, project_root)

    def _declared_package_roots(self, project_root: Path) -> tuple[Path, ...]:
        """The folders holding the packages the root's pyproject.toml builds from a folder below the root (scikit-build's
        `wheel.packages = ["python/pkg"]`, hatch's `packages`): the project's own imports of `pkg` find them there, as
        installed. Read once per root."""
        pyproject = Path(os.path.abspath(project_root)) / _PYPROJECT
        self.note_files([str(pyproject)])
        if pyproject not in self._package_roots:
            self._package_roots[pyproject] = _package_parents(pyproject.parent, read_small_file(str(pyproject)))
        return self._package_roots[pyproject]

    def resolve(
        self,
        qualified: str,
        roots: list[Path],
        rocm_guards: frozenset[str] | None = None,
        project_root: Path | None = None,
    ) -> Vendor | None:
        found = self._resolve(qualified, roots, rocm_guards, "value", project_root)
        return found if isinstance(found, Vendor) else None

    def resolve_skip(
        self,
        qualified: str,
        roots: list[Path],
        rocm_guards: frozenset[str] | None = None,
        project_root: Path | None = None,
    ) -> Vendor | None:
        """Where a test decorated with the module-level name `qualified` (called, with "()") runs."""
        found = self._resolve(qualified, roots, rocm_guards, "skip", project_root)
        return found if isinstance(found, Vendor) else None

    def resolve_strings(
        self,
        qualified: str,
        roots: list[Path],
        rocm_guards: frozenset[str] | None = None,
        project_root: Path | None = None,
    ) -> VendorStrings | None:
        found = self._resolve(qualified, roots, rocm_guards, "strings", project_root)
        return None if isinstance(found, Vendor) else found

    def in_project(self, qualified: str, roots: list[Path]) -> bool:
        """Whether a module of the tree (found from `roots`) defines the dotted name `qualified`."""
        parts = qualified.removesuffix("()").split(".")
        return any(self._find_module(tuple(parts[:split]), tuple(roots)) for split in range(len(parts) - 1, 0, -1))

    def _resolve(
        self,
        qualified: str,
        roots: list[Path],
        rocm_guards: frozenset[str] | None,
        question: SymbolQuestion,
        project_root: Path | None = None,
    ) -> Vendor | VendorStrings | None:
        guards = self.rocm_guards if rocm_guards is None else rocm_guards
        called = qualified.endswith("()")
        parts = qualified.removesuffix("()").split(".")
        for split in range(len(parts) - 1, 0, -1):
            module_file = self._find_module(tuple(parts[:split]), tuple(roots))
            if module_file is not None:
                if split < len(parts) - (1 if question == "skip" else 2):
                    return None  # deeper than a module's name (skips) or a member of one (values, strings)
                # A module's name, or a member of one (`current_platform.is_mi300`, `GPU.vendor`: its class's method).
                symbol = ".".join(parts[split:]) + ("()" if called else "")
                return self._symbol((module_file, symbol, guards, question, project_root))
        return None

    def _find_module(self, parts: tuple[str, ...], roots: tuple[Path, ...]) -> Path | None:
        key = (parts, roots)
        if key not in self._modules:
            self._modules[key] = _find_module(list(parts), list(roots))
        return self._modules[key]

    def _symbol(self, key: SymbolKey) -> Vendor | VendorStrings | None:
        if key in self._values:
            return self._values[key]
        if key in self._in_progress:
            return None  # an import cycle
        self._in_progress.add(key)
        try:
            value = self._evaluate(key)
        finally:
            self._in_progress.discard(key)
        self._values[key] = value
        return value

    def _evaluate(self, key: SymbolKey) -> Vendor | VendorStrings | None:
        module_file, symbol, guards, question, project_root = key
        called = symbol.endswith("()")
        name = symbol.removesuffix("()")
        data = self._data(module_file)
        star_reexport = question == "skip" and _holds_star_import(data or b"")
        if data is None or not (_may_define(data, name.split(".", 1)[0], guards) or star_reexport):
            return None
        # The project root goes on: a module re-exporting a name (`from pkg.sub.mod import Name` in a package
        # `__init__` below a folder without one) finds it from there.
        analyzer = self._analyzer(module_file, data, guards, project_root)
        if analyzer is None:
            return None
        if question == "strings":
            return analyzer.vendor_values.symbol_strings(name, called)
        if question == "skip":
            return analyzer.skip_decorator(name, called)
        value = analyzer.symbol_value(name, called)
        return value if value is not None and value.is_vendor_test else None

    def _data(self, module_file: Path) -> bytes | None:
        if module_file in self._module_data:
            return self._module_data[module_file]
        data = read_small_file(str(module_file))
        self._module_data.put(module_file, data, len(data or b""))
        return data

    def _analyzer(
        self,
        module_file: Path,
        data: bytes,
        guards: frozenset[str],
        project_root: Path | None = None,
        reads_elsewhere: _ImporterReads | None = None,
    ) -> GateAnalyzer | None:
        """The gate analysis of a neighbour module, parsed once per run however many names are asked of it; with
        `reads_elsewhere`, one that asks its own importers (one analysis per depth)."""
        # Imported here: gating imports this module's resolver type.
        from rocmlint.python.gating import GateAnalyzer

        depth = None if reads_elsewhere is None else reads_elsewhere.depth
        key = (module_file, guards, project_root, depth)
        if key in self._analyzers:
            return self._analyzers[key]
        semantic = self._semantic(module_file, data)
        resolver = self.resolver_for(str(module_file), guards, project_root)
        analyzer = (
            None if semantic is None else GateAnalyzer(semantic, guards, resolver, read_elsewhere=reads_elsewhere)
        )
        self._analyzers.put(key, analyzer, len(data))
        return analyzer

    def tree_of(self, path: str, text: str) -> ast.Module | None:
        """The tree of the file at `path` when this process has parsed it already as another module's neighbour
        from the same text (a module of a package is often both checked and read for its importers' gates)."""
        semantic = self._semantics.get(Path(os.path.abspath(path)))
        if semantic is None or semantic.source_text != text:
            return None
        return semantic.module

    def _semantic(self, module_file: Path, data: bytes) -> Semantic | None:
        """A neighbour module's tree and semantic model, built once however many analyses (guards, project roots)
        read it: it depends on the text alone."""
        if module_file in self._semantics:
            return self._semantics[module_file]
        self._semantics.put(module_file, None)
        try:
            text = SourceFile.from_bytes(str(module_file), data, "python").text
        except DecodeError:
            return None
        module = _parse(text)
        if module is None:
            return None
        package, _ = package_of(str(module_file))
        semantic = Semantic(module, package, text)
        walk(module, semantic.parents, {}, semantic.mentions)
        self._semantics.put(module_file, semantic, len(data))
        return semantic


_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")


class _Recent(Generic[_Key, _Value]):
    """A mapping that keeps the entries used last while their weights add up to at most `budget`; the least recently
    used are dropped first, and the entry put last is kept whatever it weighs."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._weight = 0
        self._entries: OrderedDict[_Key, tuple[_Value, int]] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[_Key]:
        return iter(self._entries)

    def __getitem__(self, key: _Key) -> _Value:
        self._entries.move_to_end(key)
        return self._entries[key][0]

    def put(self, key: _Key, value: _Value, weight: int = 0) -> None:
        if key in self._entries:
            self._weight -= self._entries[key][1]
        self._entries[key] = (value, weight)
        self._entries.move_to_end(key)
        self._weight += weight
        while self._weight > self._budget and len(self._entries) > 1:
            self._weight -= self._entries.popitem(last=False)[1][1]

    def get(self, key: _Key) -> _Value | None:
        return self[key] if key in self._entries else None


@dataclass(frozen=True)
class ProjectResolver:
    """The names one file imports from other modules of the project (gating.CrossModuleResolver)."""

    index: ProjectIndex
    roots: tuple[Path, ...]
    guards: frozenset[str]
    project_root: Path | None = None

    def __call__(self, qualified: str) -> Vendor | None:
        return self.index.resolve(qualified, list(self.roots), self.guards, self.project_root)

    def strings(self, qualified: str) -> VendorStrings | None:
        return self.index.resolve_strings(qualified, list(self.roots), self.guards, self.project_root)

    def skip(self, qualified: str) -> Vendor | None:
        return self.index.resolve_skip(qualified, list(self.roots), self.guards, self.project_root)

    def in_project(self, qualified: str) -> bool:
        return self.index.in_project(qualified, list(self.roots))


@dataclass(frozen=True)
class _ImporterReads:
    """What the importers of a neighbour module do with its module-level names (gating.ReadElsewhere), asked
    `depth` more modules away."""

    project: ProjectIndex
    index: ImportIndex
    path: str
    depth: int

    def __call__(self, name: str) -> bool:
        return self.project.read_elsewhere(self.index, self.path, name)

    def only_off_rocm(self, name: str) -> bool:
        return self.project.read_only_off_rocm(self.index, self.path, name, self.depth)

    def key_registered_off_rocm(self, key: str, testers: frozenset[str], qualified: str | None) -> bool:
        return self.project.key_registered_off_rocm(self.index, self.path, key, testers, qualified)

    def definitions_only_on_nvidia(self, name: str) -> bool:
        return self.project.definitions_only_on_nvidia(self.index, self.path, name)


def _package_file(folder: Path) -> Path | None:
    init = folder / "__init__.py"
    return init if init.is_file() else None


def _tested(semantic: Semantic, key: ast.Constant, testers: frozenset[str]) -> bool:
    """`key` is the one argument of a call of a tester (`is_extension_available("quanto_cuda")`): a lookup of the
    key, not a registration."""
    call = semantic.parent(key)
    if not isinstance(call, ast.Call) or call.args != [key] or call.keywords:
        return False
    return (dotted_name(call.func) or "").rsplit(".", 1)[-1] in testers


def _parse(text: str) -> ast.Module | None:
    """The module, or None for one that does not parse: a broken neighbour module resolves to nothing
    (its own check reports it)."""
    try:
        return parse_text(text)
    except PythonParseError:
        return None


def _names(node: ast.AST, name: str) -> bool:
    """`node` may read another module's `name`: an import of it, an attribute or a string so spelled."""
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == name for alias in node.names)
    if isinstance(node, ast.Attribute):
        return node.attr == name
    return isinstance(node, ast.Constant) and node.value == name


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # a bytes regex's `\w`


def _holds_word(data: bytes, word: bytes) -> bool:
    """`word` as a whole word of a module's bytes: not inside a longer identifier (no ASCII letter, digit or `_`
    on either side). Found with `bytes.find`: a regex starting with a look-behind tries it at every byte, about
    thirty times slower over PyTorch's modules."""
    size, start = len(word), data.find(word)
    while start != -1:
        end = start + size
        if (start == 0 or data[start - 1] not in _WORD_BYTES) and (end == len(data) or data[end] not in _WORD_BYTES):
            return True
        start = data.find(word, start + 1)
    return False


def _holds_star_import(data: bytes) -> bool:
    """`import *` in a module's bytes, `import` starting a word. The pattern starts with its literal, which the regex
    engine looks for alone; a leading word boundary would be tried at every byte (ten times slower over PyTorch)."""
    for match in _STAR_IMPORT.finditer(data):
        start = match.start()
        if start == 0 or data[start - 1] not in _WORD_BYTES:
            return True
    return False


def _may_define(data: bytes, name: str, guards: frozenset[str]) -> bool:
    """Cheap test before parsing: the module names the symbol, and either mentions a vendor (or a
    configured guard) or imports something (it may re-export a test defined elsewhere)."""
    if name.encode() not in data:
        return False
    tokens = (*_VENDOR_BYTES, *(guard.rsplit(".", 1)[-1].encode() for guard in guards), b"import")
    return any(token in data for token in tokens)


def _module_name(path: str) -> str:
    """The last part of the name the module at `path` is imported by (a package's `__init__.py`: its folder's)."""
    file = Path(path)
    return file.parent.name if file.stem == "__init__" else file.stem


def _package_parents(root: Path, pyproject: bytes | None) -> tuple[Path, ...]:
    """The folders below `root` holding a package (a folder with `__init__.py`) that `pyproject` names by its path."""
    parents: list[Path] = []
    for match in _QUOTED_PATH.finditer(pyproject or b""):
        folder = root / match.group(1).decode("utf-8", "replace")
        if (folder / "__init__.py").is_file() and folder.parent != root and folder.parent not in parents:
            parents.append(folder.parent)
    return tuple(parents)


def _find_module(parts: list[str], roots: list[Path]) -> Path | None:
    for root in roots:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


# A registry key the project may write as a plain string literal (`"quanto_cuda"`, `"fp8.marlin"`).
_REGISTRY_KEY = re.compile(r"[\w.\-]+")
# How many modules a registry lookup is re-exported through before it is not followed further.
_MAX_REEXPORTS = 4


# --- one import index per project root and process ----------------------------------------------------------------
_IMPORT_INDEXES: dict[str, ImportIndex] = {}


def import_index_for(
    root: Path, processes: int = 1, nvidia_only_natives: Callable[[], NvidiaOnlyNatives] | None = None
) -> ImportIndex:
    """The import index of `root` (rocmlint/python/importers.py), built on first use in this process (a pool's
    forked workers inherit the parent's) by up to `processes` processes. Test files' imports count as run
    everywhere; `nvidia_only_natives` gives the extension modules the project's build builds for NVIDIA only and
    their source folders (asked once, when a module's requirements are first worked out)."""
    key = os.path.abspath(root)
    index = _IMPORT_INDEXES.get(key)
    if index is None:
        natives = nvidia_only_natives if nvidia_only_natives is not None else NvidiaOnlyNatives
        index = _IMPORT_INDEXES[key] = ImportIndex.build(Path(key), is_test_file, processes, natives)
    return index


def forget_import_indexes() -> None:
    """Drop every import index built so far (a long-running server does when files are saved)."""
    _IMPORT_INDEXES.clear()
