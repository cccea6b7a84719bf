"""What a project's Bazel files say about the sources and C++ macros each vendor's build has.

Read, never run: BUILD / BUILD.bazel files and `.bzl` macros (their Starlark parsed with CPython's `ast`, which
reads most of it; a top-level statement that does not parse, a `.bzl.tpl` placeholder, is skipped) and `.bazelrc`
files (line by line). Evidence, strongest first:
- **which `select()` key is which vendor's**: a `config_setting` whose `--define` values (`define_values`,
  `values = {"define": ...}`, `flag_values`) only one vendor's `.bazelrc` config sets (`build:rocm
  --define=using_rocm=true`; a config is a vendor's by its name, or by the vendor configs that include it);
  weaker, the words of its define keys, then of its name (`using_rocm`); a key naming an unresolved repository
  (`@local_config_rocm//rocm:using_hipcc`), the words of the label. `//conditions:default` is the vendors the
  other keys do not name.
- **project macros** (`def if_rocm(x, y = []): return select({...: x, "//conditions:default": y})`): a call is
  evaluated through the definition, so what it returns decides the vendor of its arguments, not its name;
- **what each vendor builds**: a target's sources (`srcs`, `hdrs`, any attribute naming a file of the package,
  globs resolved against it) are built for the vendors of the branch they sit in and of the targets reached from
  targets nothing depends on; a file only NVIDIA branches reach is NVIDIA's (`SourceSet` with that vendor);
- **vendor twin packages** (`gpu/cuda` and `gpu/rocm` building the same sources of `gpu/`): each twin's targets are
  its vendor's, and so is a target needing one outside any `select()` (it links NVIDIA's build, where ROCm's has its
  own), whatever reaches it;
- **macros each vendor defines**: `-D` in `copts`, `defines`, `local_defines` (per branch and target), and
  `--copt=-DX` of a `.bazelrc` config (the config's vendor).
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import shlex
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from rocmlint.cuda.build_files import BuildDefine, BuildFacts, SourceSet, vendor_of_words

Builds = frozenset[str]
BOTH: Builds = frozenset({"rocm", "nvidia"})
_BUILD_NAMES = frozenset({"BUILD", "BUILD.bazel"})
_WORKSPACE_NAMES = frozenset({"WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel"})
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")
_CXX_SUFFIXES = (*_SOURCE_SUFFIXES, ".cuh", ".hu", ".h", ".hh", ".hpp", ".hxx", ".inl")
_DEFAULT_KEY = "//conditions:default"
_DEFINE_ATTRIBUTES = frozenset({"defines", "local_defines"})
_IGNORED_ATTRIBUTES = frozenset({"name", "visibility", "tags", "licenses", "testonly", "linkstatic", "alwayslink"})
_TRUE_VALUES = frozenset({"true", "1", "on", "yes"})
_MADE = "\0"  # starts and splits the text naming a target a macro makes: "\0{macro file}:{line}\0{package}"
_MAX_DEPTH = 24  # nested evaluations (macro calls, names) before a value counts as unknown


def is_bazel_file(path: str) -> bool:
    """A file `bazel_facts` reads: BUILD files, `.bzl` macros (and their `.bzl.tpl` templates), `.bazelrc` files,
    the WORKSPACE / MODULE.bazel files that mark a workspace's root."""
    name = os.path.basename(path)
    return name in _BUILD_NAMES or name in _WORKSPACE_NAMES or name.endswith((".bzl", ".bzl.tpl", "bazelrc"))


@dataclass(frozen=True)
class _Item:
    """One string of a Starlark value (a source, a label, a flag), the vendors whose builds have it, and where."""

    text: str
    builds: Builds
    path: str
    line: int


@dataclass
class _Module:
    """One parsed Starlark file: its top-level assignments, definitions and loaded names."""

    path: str
    package: str  # the folder labels without a package (`:name`) are relative to
    statements: list[ast.stmt]
    names: dict[str, ast.expr] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    loads: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (label of the file, its name)


@dataclass(frozen=True)
class _Function:
    node: ast.FunctionDef
    module: _Module


_Value = list[_Item] | _Function
_Key = tuple[str, str]  # a target: (its package's folder, its name)


def bazel_facts(root: str, texts: Mapping[str, str], paths: Collection[str]) -> BuildFacts:
    """The sources and macros per vendor of the Bazel files `texts` (path -> text) of the project at `root`, whose
    files (for globs) are `paths`."""
    reader = _Reader(root, texts, paths)
    if not reader.rocm_keys and not any(reader.rc.builds(name) == {"rocm"} for name in reader.rc.configs):
        # No ROCm branch or config: the `//conditions:default` of an `if_cuda` is a CPU build, not ROCm's, and
        # every CUDA source the build lists is one to port.
        return BuildFacts()
    return BuildFacts(
        defines=tuple(reader.defines()), sources=tuple(reader.sources()), rocm_branches=tuple(sorted(reader.rocm_keys))
    )


class _Reader:
    """The Bazel files of one project, read once: its targets, what each attribute evaluates to, and the vendors
    each target is built for."""

    def __init__(self, root: str, texts: Mapping[str, str], paths: Collection[str]) -> None:
        self.root = root
        self.paths = frozenset(paths)
        self.workspaces = sorted(
            (os.path.dirname(p) for p in texts if os.path.basename(p) in _WORKSPACE_NAMES), key=len
        )
        self.packages = {os.path.dirname(p) for p in texts if os.path.basename(p) in _BUILD_NAMES}
        self.modules = {p: _module(p, t) for p, t in texts.items() if not p.endswith("bazelrc")}
        self.repositories = dict(self._local_repositories())
        self.rc = _Bazelrc([(p, t) for p, t in sorted(texts.items()) if p.endswith("bazelrc")])
        self.targets: dict[tuple[str, str], tuple[ast.Call, _Module]] = {}
        for path in sorted(self.modules):
            module = self.modules[path]
            if os.path.basename(path) in _BUILD_NAMES:
                for call in _target_calls(module):
                    self.targets[(module.package, _call_name(call))] = (call, module)
        self.key_vendors: dict[tuple[str, str], str | None] = {}
        self.rocm_keys: set[str] = set()  # the files with a `select()` key of ROCm's
        self.files_by_package: dict[str, list[str]] = {}
        for file in sorted(self.paths):
            package = self._package_of(file)
            if package is not None:
                # Its path below the package's folder (`os.path.relpath`, which costs more, gives the same).
                self.files_by_package.setdefault(package, []).append(file[len(package) + 1 :])
        # Targets a macro makes (`native.cc_library(...)` in a `.bzl` function a package calls): their names are
        # computed, so a call's value stands for them (`deps = make_kernel_libs()`), wherever it is used.
        self.made: dict[_Key, tuple[ast.Call, _Module, dict[str, list[_Item]]]] = {}
        self.memo: dict[tuple[str, str], _Value] = {}
        self.attributes = {key: self._attributes(call, module) for key, (call, module) in self.targets.items()}
        for module in self.modules.values():
            if os.path.basename(module.path) in _BUILD_NAMES:
                for call in _macro_calls(module):  # `make_aliases()`: the targets it makes
                    self._call(call, {}, module, module.package, 0)
        for key, (call, module, attributes) in self.made.items():
            self.targets[key] = (call, module)
            self.attributes[key] = attributes
        self.builds, self.reasons = self._propagate()

    # --- labels and packages --------------------------------------------------------------------------------------
    def _workspace_of(self, path: str) -> str:
        return next((w for w in reversed(self.workspaces) if path.startswith(w + os.sep)), self.root)

    def _package_of(self, file: str) -> str | None:
        folder = os.path.dirname(file)
        while folder.startswith(self.root):
            if folder in self.packages:
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return None

    def _local_repositories(self) -> Iterator[tuple[str, str]]:
        """`local_repository(name = "x", path = "x")` of the WORKSPACE files: `@x//...` labels name that folder."""
        for module in self.modules.values():
            if os.path.basename(module.path) not in _WORKSPACE_NAMES:
                continue
            for call in _target_calls(module):
                where = "." if _rule_kind(call) == "workspace" else _keyword_text(call, "path")  # its own name
                if where is not None and not os.path.isabs(where):
                    yield _call_name(call), os.path.normpath(os.path.join(os.path.dirname(module.path), where))

    def _label(self, text: str, module: _Module) -> tuple[str, str] | None:
        """(package folder, name) of a label in the tree (`//a/b:c`, `//a/b`, `:c`, `@local_repo//a:c`); None for
        another repository's, or text that is no label."""
        base: str | None = self._workspace_of(module.path)
        if text.startswith("@"):
            repository, separator, rest = text.lstrip("@").partition("//")
            if not separator:
                return None
            base = self.repositories.get(repository) if repository else base
            text = "//" + rest
        if text.startswith("//") and base is not None:
            package, _, name = text[2:].partition(":")
            return os.path.normpath(os.path.join(base, package)), name or os.path.basename(package)
        if text.startswith(":"):
            return module.package, text[1:]
        return None

    def _named(self, text: str, module: _Module) -> _Key | None:
        """(package folder, name) of a string a target's attribute holds: a label, or a name in its package."""
        if text.startswith(_MADE):
            return text.removeprefix(_MADE).partition(_MADE)[2], text
        return self._label(text, module) if text.startswith((":", "//", "@")) else (module.package, text)

    def _target_of(self, text: str, module: _Module) -> _Key | None:
        named = self._named(text, module)
        return named if named in self.targets else None

    def _file_of(self, text: str, module: _Module) -> str | None:
        named = self._named(text, module)
        path = os.path.normpath(os.path.join(*named)) if named is not None and named not in self.targets else None
        return path if path in self.paths else None

    # --- evaluating Starlark --------------------------------------------------------------------------------------
    def evaluate(self, node: ast.expr, scope: dict[str, _Value], module: _Module, package: str, depth: int) -> _Value:
        """The strings a Starlark expression may give, each with the vendors whose builds give it; a macro's
        definition for a name bound to one. Unknown values are empty lists."""
        if depth > _MAX_DEPTH:
            return []
        if isinstance(node, ast.Constant):
            return [_Item(node.value, BOTH, module.path, node.lineno)] if isinstance(node.value, str) else []
        if isinstance(node, ast.List | ast.Tuple):
            return [i for e in node.elts for i in _items(self.evaluate(e, scope, module, package, depth + 1))]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = _items(self.evaluate(node.left, scope, module, package, depth + 1))
            right = _items(self.evaluate(node.right, scope, module, package, depth + 1))
            if not _is_text(node.left) and not _is_text(node.right):
                return left + right  # lists joined
            # Strings joined (`"-DHEAD_DIM=" + str(size)`): unknown when a part is.
            return [_Item(a.text + b.text, a.builds & b.builds, a.path, a.line) for a in left for b in right]
        if isinstance(node, ast.IfExp):
            body = _items(self.evaluate(node.body, scope, module, package, depth + 1))
            return body + _items(self.evaluate(node.orelse, scope, module, package, depth + 1))
        if isinstance(node, ast.Name):
            return scope[node.id] if node.id in scope else self._global(node.id, module, depth + 1)
        if isinstance(node, ast.Call):
            return self._call(node, scope, module, package, depth + 1)
        return []

    def _global(self, name: str, module: _Module, depth: int) -> _Value:
        if name in module.functions:
            return _Function(module.functions[name], module)
        if name in module.names:
            if (module.path, name) not in self.memo:
                self.memo[(module.path, name)] = []  # a name defined through itself is unknown
                self.memo[(module.path, name)] = self.evaluate(module.names[name], {}, module, module.package, depth)
            return self.memo[(module.path, name)]
        if name not in module.loads:
            return []
        label, original = module.loads[name]
        loaded = self._loaded_module(label, module)
        if loaded is not None and loaded is not module:
            return self._global(original, loaded, depth + 1)
        # A generated file (`@local_config_rocm//rocm:build_defs.bzl`): its template in the tree, if any.
        template = self._template_defining(original, label)
        return _Function(template.functions[original], template) if template is not None else []

    def _loaded_module(self, label: str, module: _Module) -> _Module | None:
        resolved = self._label(label, module)
        return self.modules.get(os.path.join(*resolved)) if resolved is not None else None

    def _template_defining(self, name: str, label: str) -> _Module | None:
        """The `.bzl` (or `.bzl.tpl`) file defining `name` whose path ends with the longest part of the loaded
        label's path (`cuda/build_defs.bzl` of `@local_config_cuda//cuda:build_defs.bzl`)."""
        wanted = label.split("//")[-1].replace(":", "/").strip("/").split("/")
        found: list[tuple[int, str]] = []
        for path, module in sorted(self.modules.items()):
            if name in module.functions:
                parts = path.removesuffix(".tpl").split(os.sep)
                common = next((n for n in range(len(wanted), 0, -1) if parts[-n:] == wanted[-n:]), 0)
                found += [(-common, path)] if common else []
        return self.modules[min(found)[1]] if found else None

    def _call(self, node: ast.Call, scope: dict[str, _Value], module: _Module, package: str, depth: int) -> _Value:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("select", "with_or") and node.args and isinstance(node.args[0], ast.Dict):
            return self._select(node.args[0], scope, module, package, depth)
        if name == "glob":
            return self._glob(node, scope, module, package, depth)
        function = scope.get(name) if isinstance(node.func, ast.Name) and name in scope else None
        if function is None and isinstance(node.func, ast.Name):
            function = self._global(name, module, depth)
        if not isinstance(function, _Function):
            return self._unknown_call(node, scope, module, package, depth) if isinstance(node.func, ast.Name) else []
        arguments = function.node.args
        parameters = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        bound: dict[str, _Value] = {}
        for parameter, default in zip(reversed(parameters), reversed(arguments.defaults), strict=False):
            bound[parameter] = self.evaluate(default, {}, function.module, package, depth)
        for parameter, argument in zip(parameters, node.args, strict=False):
            if not isinstance(argument, ast.Starred):
                bound[parameter] = self.evaluate(argument, scope, module, package, depth)
        for keyword in node.keywords:
            if keyword.arg is not None:
                bound[keyword.arg] = self.evaluate(keyword.value, scope, module, package, depth)
        return self._run(function.node.body, bound, function.module, package, depth)

    def _unknown_call(
        self, node: ast.Call, scope: dict[str, _Value], module: _Module, package: str, depth: int
    ) -> _Value:
        """A macro defined outside the tree (`if_rocm` of `@local_config_rocm`, generated at configure time): what its
        arguments hold may be what it returns. Only its name can tell a vendor's then: `if_rocm(x, y)` gives `x` to
        ROCm and `y` to the other; a name naming no vendor keeps them for both."""
        vendor = _words_vendor(getattr(node.func, "id", ""))
        arms = [frozenset({vendor}), BOTH - {vendor}] if vendor else []
        if vendor == "rocm":
            self.rocm_keys.add(module.path)
        found: list[_Item] = []
        for position, argument in enumerate([*node.args, *(k.value for k in node.keywords)]):
            keep = arms[position] if position < len(arms) and position < len(node.args) else BOTH
            for item in _items(self.evaluate(argument, scope, module, package, depth)):
                found.append(_Item(item.text, item.builds & keep, item.path, item.line))
        return [item for item in found if item.builds]

    def _run(self, body: list[ast.stmt], scope: dict[str, _Value], module: _Module, package: str, depth: int) -> _Value:
        """What a macro's body returns (every `return` it may reach, both arms of an `if`), following its simple
        assignments (a loop's body once, its variable any of the values), and the targets it makes."""
        returned: list[_Item] = []
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                returned += self._made_target(statement.value, scope, module, package, depth + 1)
            elif isinstance(statement, ast.For) and isinstance(statement.target, ast.Name):
                scope[statement.target.id] = self.evaluate(statement.iter, scope, module, package, depth + 1)
                returned += _items(self._run(statement.body, scope, module, package, depth + 1))
            if isinstance(statement, ast.Return) and statement.value is not None:
                value = self.evaluate(statement.value, scope, module, package, depth + 1)
                if isinstance(value, _Function):
                    return value
                returned += value
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    scope[target.id] = self.evaluate(statement.value, scope, module, package, depth + 1)
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                added = _items(self.evaluate(statement.value, scope, module, package, depth + 1))
                scope[statement.target.id] = _items(scope.get(statement.target.id, [])) + added
            elif isinstance(statement, ast.If):
                for arm in (statement.body, statement.orelse):
                    returned += _items(self._run(arm, dict(scope), module, package, depth + 1))
        return returned

    def _made_target(
        self, call: ast.Call, scope: dict[str, _Value], module: _Module, package: str, depth: int
    ) -> list[_Item]:
        """A macro's statement call: the target a `native.<rule>(...)` call makes (an item naming it), or those
        the macro it calls makes."""
        native = isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", "") == "native"
        if not native:
            return _items(self._call(call, scope, module, package, depth))
        if _rule_kind(call) in ("glob", "package_name", "existing_rule", "existing_rules"):
            return []
        text = f"{_MADE}{module.path}:{call.lineno}{_MADE}{package}"
        key = (package, text)
        if key not in self.made:
            self.made[key] = (call, _Module(module.path, package, []), {})  # made once: a loop's calls are one
            self.made[key][2].update(
                (k.arg, _items(self.evaluate(k.value, scope, module, package, depth)))
                for k in call.keywords
                if k.arg is not None and k.arg not in _IGNORED_ATTRIBUTES
            )
        return [_Item(text, BOTH, module.path, call.lineno)]

    def _select(self, node: ast.Dict, scope: dict[str, _Value], module: _Module, package: str, depth: int) -> _Value:
        """The values of a `select()` (or skylib's `selects.with_or`), each kept for the builds its key matches."""
        arms: list[tuple[Builds | None, ast.expr]] = []
        named: set[str] = set()
        for key, value in zip(node.keys, node.values, strict=True):
            texts = [i.text for i in _items(self.evaluate(key, scope, module, package, depth))] if key else []
            if texts == [_DEFAULT_KEY]:
                arms.append((None, value))
                continue
            vendors = {self.key_vendor(text, module) for text in texts}
            matched = BOTH if None in vendors or not vendors else frozenset(v for v in vendors if v is not None)
            named |= matched if matched != BOTH else set()
            if "rocm" in named:
                self.rocm_keys.add(module.path)
            arms.append((matched, value))
        default = (BOTH - named) or BOTH
        found: list[_Item] = []
        for arm, value in arms:
            keep = default if arm is None else arm
            for item in _items(self.evaluate(value, scope, module, package, depth)):
                if item.builds & keep:
                    found.append(_Item(item.text, item.builds & keep, item.path, item.line))
        return found

    def _glob(self, node: ast.Call, scope: dict[str, _Value], module: _Module, package: str, depth: int) -> _Value:
        """The files of the calling package a `glob(include, exclude = ...)` matches (not those of subpackages)."""
        arguments = {k.arg: k.value for k in node.keywords if k.arg}
        include = node.args[0] if node.args else arguments.get("include")
        exclude = node.args[1] if len(node.args) > 1 else arguments.get("exclude")

        def pattern(expression: ast.expr | None) -> re.Pattern[str] | None:
            """The files any glob of `expression` matches, as one pattern (None: no glob)."""
            if expression is None:
                return None
            globs = [i.text for i in _items(self.evaluate(expression, scope, module, package, depth))]
            return _globs_pattern(tuple(globs)) if globs else None

        wanted, unwanted = pattern(include), pattern(exclude)
        if wanted is None:
            return []
        return [
            _Item(file, BOTH, module.path, node.lineno)
            for file in self.files_by_package.get(package, ())
            if wanted.fullmatch(file) and not (unwanted is not None and unwanted.fullmatch(file))
        ]

    # --- which vendor a select() key is -------------------------------------------------------------------------
    def key_vendor(self, text: str, module: _Module) -> str | None:
        label = self._label(text, module)
        if label is None or label not in self.targets:
            return _words_vendor(text)  # another repository's setting (`@local_config_rocm//rocm:using_hipcc`)
        if label not in self.key_vendors:
            self.key_vendors[label] = None  # a group naming itself decides nothing
            self.key_vendors[label] = self._setting_vendor(*self.targets[label])
        return self.key_vendors[label]

    def _setting_vendor(self, call: ast.Call, module: _Module) -> str | None:
        """A `config_setting`'s vendor: that of the `.bazelrc` configs setting its defines, else the words of its
        true-valued define keys, else of its name. A `config_setting_group`: that of its members."""
        arguments = {k.arg: k.value for k in call.keywords if k.arg}
        kind = _rule_kind(call)
        if kind == "config_setting_group":
            members = [
                self.key_vendor(i.text, module)
                for group in ("match_all", "match_any")
                if group in arguments
                for i in _items(self.evaluate(arguments[group], {}, module, module.package, 0))
            ]
            vendors = set(members)
            if "match_all" in arguments:
                vendors.discard(None)
            return vendors.pop() if len(vendors) == 1 else None
        if kind != "config_setting":
            return _words_vendor(_call_name(call))
        pairs = list(_setting_pairs(arguments))
        decided = {self.rc.define_vendor(pair) for pair in pairs} - {None}
        if len(decided) == 1:
            return decided.pop()
        if decided:
            return None
        named = {_words_vendor(key) for key, value in pairs if value.lower() in _TRUE_VALUES} - {None}
        if len(named) == 1:
            return named.pop()
        return _words_vendor(_call_name(call)) if not named else None

    # --- what each vendor builds -----------------------------------------------------------------------------------
    def _attributes(self, call: ast.Call, module: _Module) -> dict[str, list[_Item]]:
        found: dict[str, list[_Item]] = {}
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg not in _IGNORED_ATTRIBUTES:
                found[keyword.arg] = _items(self.evaluate(keyword.value, {}, module, module.package, 0))
        return found

    def _propagate(self) -> tuple[dict[_Key, Builds], dict[_Key, tuple[str, int]]]:
        """The vendors each target is built for, and where the first NVIDIA-only dependency on it is: every vendor
        for a product nothing in the tree depends on (a binary, an extension), those of the branches its dependents
        name it in for the others. A test, library or alias nothing depends on is built only for the vendors that
        build every target it needs outside any `select()` (one needing a library only NVIDIA branches reach is
        NVIDIA's). No path builds a target of one vendor's twin package, or one needing it, for the other vendor
        (`_vendor_package_limits`)."""
        outgoing: dict[_Key, list[tuple[_Key, _Item]]] = {}
        for key, attributes in self.attributes.items():
            module = self.targets[key][1]
            for attribute, items in attributes.items():
                if _defines_macros(attribute):
                    continue
                for item in items:
                    target = self._target_of(item.text, module)
                    if target is not None and target != key:
                        outgoing.setdefault(key, []).append((target, item))
        limits = self._vendor_package_limits(outgoing)
        depended = {target for edges in outgoing.values() for target, _ in edges}
        roots = [key for key in self.targets if key not in depended]
        tests = {key for key in roots if _needs_its_dependencies(_rule_kind(self.targets[key][0]))}
        products = {key: limits.get(key, (BOTH, None)) for key in roots if key not in tests}
        libraries, library_reasons = _spread(products, outgoing, limits)
        needs: dict[_Key, tuple[Builds, tuple[str, int] | None]] = {}
        for key in self.targets:
            if key not in libraries:
                _needs(key, libraries, outgoing, needs, limits)
        tested, tested_reasons = _spread({key: needs[key] for key in tests}, outgoing, limits)
        for key, builds in tested.items():
            if key not in libraries:
                needed, reason = needs[key]
                libraries[key] = (builds & needed) or builds
                if "rocm" not in libraries[key]:
                    library_reasons[key] = reason or tested_reasons.get(key, (self.targets[key][1].path, 0))
        return libraries, library_reasons

    def _vendor_package_limits(
        self, outgoing: dict[_Key, list[tuple[_Key, _Item]]]
    ) -> dict[_Key, tuple[Builds, tuple[str, int] | None]]:
        """The vendor each target is limited to by the project's vendor twin packages (`_vendor_twins`), and where
        that shows: a target of one twin is that vendor's build of the ported sources, and so is a target of the
        tree that needs one outside any `select()` (it links NVIDIA's build of them, where ROCm's has its own)."""
        twins = self._vendor_twins()
        limits: dict[_Key, tuple[Builds, tuple[str, int] | None]] = {}
        for key, (call, module) in self.targets.items():
            own = twins.get(key[0])
            builds, where = (frozenset({own}), (module.path, call.lineno)) if own else (BOTH, None)
            for target, item in outgoing.get(key, ()):
                needed = twins.get(target[0])
                if needed is not None and item.builds == BOTH and target[0] != key[0]:
                    builds &= {needed}
                    where = where or (item.path, item.line)
            if builds and builds != BOTH:  # a target needing both twins says nothing
                limits[key] = (builds, where if "rocm" not in builds else None)
        return limits

    def _vendor_twins(self) -> dict[str, str]:
        """Package folder -> vendor, of the project's vendor twin packages: sibling packages named for either vendor
        (`gpu/cuda`, `gpu/rocm`) whose targets both compile a file outside them, each vendor's build of the same
        ported sources (with its own defines). A lone `cuda` package says nothing: it may be the only GPU build."""
        by_parent: dict[str, dict[str, list[str]]] = {}
        for package in sorted(self.packages):
            vendor = _words_vendor(os.path.basename(package))
            if vendor is not None:
                by_parent.setdefault(os.path.dirname(package), {}).setdefault(vendor, []).append(package)
        twins: dict[str, str] = {}
        for siblings in by_parent.values():
            for nvidia, rocm in itertools.product(siblings.get("nvidia", ()), siblings.get("rocm", ())):
                if self._shared_sources(nvidia, rocm):
                    twins.update({nvidia: "nvidia", rocm: "rocm"})
        return twins

    def _shared_sources(self, first: str, second: str) -> bool:
        """Whether the targets of packages `first` and `second` both name a C/C++ source outside both packages (a
        header both name may be an interface they share, not sources each vendor compiles)."""
        named: list[set[str]] = [set(), set()]
        for key, attributes in self.attributes.items():
            if key[0] not in (first, second):
                continue
            module = self.targets[key][1]
            for attribute, items in attributes.items():
                for item in items if not _defines_macros(attribute) else ():
                    file = self._file_of(item.text, module)
                    if (
                        file is not None
                        and file.endswith(_SOURCE_SUFFIXES)
                        and not file.startswith((first + os.sep, second + os.sep))
                    ):
                        named[key[0] == second].add(file)
        return bool(named[0] & named[1])

    def sources(self) -> Iterator[SourceSet]:
        """Each C/C++ file the targets name, with the vendor of every build that compiles it (None: both)."""
        mentions: dict[str, list[tuple[Builds, tuple[str, int]]]] = {}
        for key, attributes in self.attributes.items():
            module = self.targets[key][1]
            built = self.builds.get(key, BOTH)
            for attribute, items in attributes.items():
                if _defines_macros(attribute):
                    continue
                for item in items:
                    file = self._file_of(item.text, module)
                    if file is None or not file.endswith(_CXX_SUFFIXES):
                        continue
                    own = (item.path, item.line)
                    reason = own if "rocm" not in item.builds else self.reasons.get(key, own)
                    mentions.setdefault(file, []).append((built & item.builds, reason))
        # A file of a package no target names is built by none (Bazel compiles only what targets name); when
        # every one the package's files are built by leaves ROCm out, it belongs with them (a kernel only a
        # disabled variant, or a macro this reader cannot follow, would build).
        by_package: dict[str, list[tuple[Builds, tuple[str, int]]]] = {}
        for path, named in mentions.items():
            by_package.setdefault(os.path.dirname(path), []).extend(named)
        for package, named in by_package.items():
            for file in self.files_by_package.get(package, ()) if package in self.packages else ():
                if os.sep not in file and file.endswith(_SOURCE_SUFFIXES):
                    mentions.setdefault(os.path.join(package, file), named)
        for path, named in sorted(mentions.items()):
            builds = frozenset().union(*(b for b, _ in named))
            if not builds:
                continue
            vendor = next(iter(builds)) if len(builds) == 1 else None
            evidence, line = next((r for b, r in named if b and "rocm" not in b), next((r for b, r in named if b)))
            yield SourceSet(os.path.relpath(path, os.path.dirname(evidence)), vendor, evidence, line)

    def defines(self) -> Iterator[BuildDefine]:
        """The macros targets define (`copts` `-D` flags, `defines`, `local_defines`) for one vendor only, then the
        `.bazelrc` configs' `--copt=-D` (the plain `build` config's for every vendor)."""
        seen: set[BuildDefine] = set()
        for key, attributes in self.attributes.items():
            built = self.builds.get(key, BOTH)
            for attribute, items in attributes.items():
                if not _defines_macros(attribute):
                    continue
                for item in items:
                    builds = built & item.builds
                    match = (_DEFINE if attribute in _DEFINE_ATTRIBUTES else _DASH_D).fullmatch(item.text.strip())
                    # A target the graph cannot place (one nothing in the tree depends on, or only such targets
                    # do) is built for both as far as it knows: no evidence that every build defines its macros.
                    if len(builds) != 1 or match is None:
                        continue
                    define = BuildDefine(match.group(1), match.group(2), next(iter(builds)), item.path, item.line)
                    if define not in seen:
                        seen.add(define)
                        yield define
        yield from self.rc.defines()


_DASH_D = re.compile(r"-D\s*([A-Za-z_]\w*)(?:=(.*))?")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(?:=(.*))?")


def _is_text(node: ast.expr) -> bool:
    """An expression Starlark evaluates to a string: a literal, `str(...)`, an f-string or a `%` format."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Mod) or (
            isinstance(node.op, ast.Add) and (_is_text(node.left) or _is_text(node.right))
        )
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "str")


def _words_vendor(text: str) -> str | None:
    """The vendor the words of a config, setting, label or macro name name, versions apart (`cuda12_9`,
    `using_rocm_gfx950`)."""
    return vendor_of_words(re.sub(r"\d+", "_", text))


def _defines_macros(attribute: str) -> bool:
    return attribute in _DEFINE_ATTRIBUTES or attribute.endswith("copts")


def _spread(
    seeds: dict[_Key, tuple[Builds, tuple[str, int] | None]],
    outgoing: dict[_Key, list[tuple[_Key, _Item]]],
    limits: Mapping[_Key, tuple[Builds, tuple[str, int] | None]],
) -> tuple[dict[_Key, Builds], dict[_Key, tuple[str, int]]]:
    """The vendors whose builds reach each target from the `seeds` (built for some vendors, and where a seed built
    without ROCm learned so), through the branches of the dependencies, never past a target's `limits`; and for a
    target ROCm does not reach, where the first dependency (or limit) that left ROCm out is."""
    builds = {key: seed for key, (seed, _) in seeds.items()}
    reasons = {key: reason for key, (_, reason) in seeds.items() if reason is not None}
    pending = list(builds)
    while pending:
        source = pending.pop()
        for target, item in outgoing.get(source, ()):
            limit, limited_at = limits.get(target, (BOTH, None))
            reached = builds[source] & item.builds & limit
            grown = builds.get(target, frozenset()) | reached
            if grown == builds.get(target):
                continue
            if target not in reasons and reached and "rocm" not in reached:
                own = (item.path, item.line)
                if "rocm" not in item.builds:
                    reasons[target] = own
                else:
                    reasons[target] = reasons.get(source, limited_at or own)
            builds[target] = grown
            pending.append(target)
    return builds, reasons


def _needs_its_dependencies(kind: str) -> bool:
    """Whether a target nothing depends on is built only where all it needs is (a test, a library or alias no
    product uses), rather than a product built for every vendor (a binary, an extension, a package)."""
    return kind.endswith(("_test", "_library")) or kind in ("alias", "filegroup")


def _needs(
    key: _Key,
    libraries: dict[_Key, Builds],
    outgoing: dict[_Key, list[tuple[_Key, _Item]]],
    found: dict[_Key, tuple[Builds, tuple[str, int] | None]],
    limits: Mapping[_Key, tuple[Builds, tuple[str, int] | None]],
) -> tuple[Builds, tuple[str, int] | None]:
    """The vendors that build every target `key` depends on outside any `select()` (the `libraries` reached from
    the targets that are not tests, or in turn what those need), and where the first that ROCm does not build is
    named: a target only tests reach can be built only where all it needs can."""
    if key in found:
        return found[key]
    found[key] = (BOTH, None)  # a cycle needs nothing more
    builds, reason = limits.get(key, (BOTH, None))
    for target, item in outgoing.get(key, ()):
        if item.builds != BOTH:
            continue
        needed = libraries[target] if target in libraries else _needs(target, libraries, outgoing, found, limits)[0]
        if needed and "rocm" not in needed and reason is None:
            reason = (item.path, item.line)
        builds &= needed or BOTH
    found[key] = (builds, reason) if builds else (BOTH, None)
    return found[key]


def _items(value: _Value) -> list[_Item]:
    return value if isinstance(value, list) else []


# --- .bazelrc ---------------------------------------------------------------------------------------------------
_RC_COMMANDS = frozenset({"build", "common"})
_RC_VALUED = frozenset({"define", "copt", "cxxopt", "config"})


@dataclass
class _Config:
    includes: list[str] = field(default_factory=list)
    defines: list[tuple[str, str]] = field(default_factory=list)  # `--define k=v`, `--//flag=v`
    macros: list[tuple[str, str | None, str, int]] = field(default_factory=list)  # -D name, value, path, line


class _Bazelrc:
    """The configs of the `.bazelrc` files (`build:rocm --define=using_rocm=true --copt=-DUSE_ROCM`) and the vendor
    each is for: its name's (`rocm`, `cuda12`), else that of the vendor configs it includes, else of those that
    include it. The plain `build` config is every build's."""

    def __init__(self, files: list[tuple[str, str]]) -> None:
        self.configs: dict[str, _Config] = {}
        for path, text in files:
            for number, line in enumerate(text.splitlines(), 1):
                self._read(path, number, line)

    def _read(self, path: str, number: int, line: str) -> None:
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            return
        if not words:
            return
        command, _, name = words[0].partition(":")
        if command not in _RC_COMMANDS:
            return
        config = self.configs.setdefault(name, _Config())
        options = iter(words[1:])
        for word in options:
            option, equals, value = word.removeprefix("--").partition("=")
            if not word.startswith("--"):
                continue
            if not equals and option in _RC_VALUED:
                value = next(options, "")
            if option == "config":
                config.includes.append(value)
            elif option == "define":
                key, _, defined = value.partition("=")
                config.defines.append((key, defined))
            elif option.startswith(("//", "@")):
                config.defines.append((option, value if equals else "true"))
            elif option in ("copt", "cxxopt") and (match := _DASH_D.fullmatch(value.strip())):
                config.macros.append((match.group(1), match.group(2), path, number))

    def builds(self, name: str) -> Builds:
        """The vendors whose builds use config `name`: every vendor for the plain `build`; the one its name names,
        else those of the configs it includes (`cuda12_9 --config=cuda12`, `cuda12 --config=cuda`); else those
        of the configs including it, found the same way (none for a standalone `cpu` or `arm` config, a build of
        neither vendor)."""
        if not name:
            return BOTH
        return self._own(name, frozenset()) or self._including(name, frozenset())

    def _own(self, name: str, visiting: frozenset[str]) -> Builds:
        own = _words_vendor(name)
        if own is not None or name in visiting:
            return frozenset({own} if own else ())
        includes = self.configs.get(name, _Config()).includes
        return frozenset().union(*(self._own(other, visiting | {name}) for other in includes))

    def _including(self, name: str, visiting: frozenset[str]) -> Builds:
        found: Builds = frozenset()
        for other, config in self.configs.items():
            if name in config.includes and other not in visiting:
                inner = visiting | {name}
                found |= BOTH if not other else self._own(other, inner) or self._including(other, inner)
        return found

    def define_vendor(self, pair: tuple[str, str]) -> str | None:
        """The one vendor whose configs set `--define key=value` (None: none, both, or every build)."""
        builds = frozenset().union(*(self.builds(n) for n, config in self.configs.items() if pair in config.defines))
        return next(iter(builds)) if len(builds) == 1 else None

    def defines(self) -> Iterator[BuildDefine]:
        for name, config in self.configs.items():
            builds = self.builds(name)
            vendor = next(iter(builds)) if len(builds) == 1 else None
            for macro, value, path, line in config.macros if builds else ():
                yield BuildDefine(macro, value, vendor, path, line)


# --- parsing Starlark -------------------------------------------------------------------------------------------
_TOP_LEVEL = re.compile(r"^(?![\s#)\]}]|else\b|elif\b)", re.MULTILINE)


def _module(path: str, text: str) -> _Module:
    statements = _parse(text)
    module = _Module(path, os.path.dirname(path), statements)
    for statement in statements:
        if isinstance(statement, ast.FunctionDef):
            module.functions[statement.name] = statement
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            if isinstance(statement.targets[0], ast.Name):
                module.names[statement.targets[0].id] = statement.value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            if getattr(call.func, "id", "") == "load" and call.args and isinstance(call.args[0], ast.Constant):
                label = str(call.args[0].value)
                for argument in call.args[1:]:
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        module.loads[argument.value] = (label, argument.value)
                for keyword in call.keywords:
                    if keyword.arg and isinstance(keyword.value, ast.Constant):
                        module.loads[keyword.arg] = (label, str(keyword.value.value))
    return module


def _parse(text: str) -> list[ast.stmt]:
    """The top-level statements of a Starlark file: the whole file when it parses, else each top-level statement
    that does on its own (a template's `%{placeholder}` spoils only its own)."""
    try:
        return ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    starts = [m.start() for m in _TOP_LEVEL.finditer(text)] + [len(text)]
    statements: list[ast.stmt] = []
    for start, end in itertools.pairwise(starts):
        line = text.count("\n", 0, start)
        try:
            chunk = ast.parse("\n" * line + text[start:end])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        statements += chunk.body
    return statements


def _target_calls(module: _Module) -> Iterator[ast.Call]:
    """The top-level calls of a file that name what they make (`cc_library(name = "x", ...)`)."""
    for statement in module.statements:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            if _call_name(statement.value):
                yield statement.value


def _macro_calls(module: _Module) -> Iterator[ast.Call]:
    """The top-level calls of a file that name nothing (`register_kernels()`, not `load(...)`): macros that make
    targets of their own."""
    for statement in module.statements:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            if isinstance(call.func, ast.Name) and call.func.id != "load" and not _call_name(call):
                yield call


def _call_name(call: ast.Call) -> str:
    return _keyword_text(call, "name") or ""


def _keyword_text(call: ast.Call, keyword: str) -> str | None:
    for argument in call.keywords:
        if (
            argument.arg == keyword
            and isinstance(argument.value, ast.Constant)
            and isinstance(argument.value.value, str)
        ):
            return argument.value.value
    return None


def _rule_kind(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _setting_pairs(arguments: dict[str, ast.expr]) -> Iterator[tuple[str, str]]:
    """The (define key or flag label, value) pairs a `config_setting` matches."""
    for group in ("define_values", "flag_values"):
        node = arguments.get(group)
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    yield str(key.value), str(value.value)
    values = arguments.get("values")
    if isinstance(values, ast.Dict):
        for key, value in zip(values.keys, values.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                if key.value == "define":
                    name, _, defined = str(value.value).partition("=")
                    yield name, defined
                elif str(key.value).startswith(("//", "@")):
                    yield str(key.value), str(value.value)


def _globs_pattern(globs: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern that matches a whole path when one of `globs` does: one alternation, which the regex engine tries
    in C (a glob of PyTorch's root package is tried on every file of the tree)."""
    return re.compile("|".join(f"(?:{_glob_regex(glob)})" for glob in globs))


def _glob_regex(glob: str) -> str:
    parts = re.split(r"(\*\*/|\*\*|\*|\?)", glob.removeprefix("./"))
    wildcards = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    return "".join(wildcards.get(part, re.escape(part)) for part in parts)
