"""The layers of docs/architecture.md, enforced over every module's imports.

Each import is read with `ast`, wherever it is written: at the top, inside a function (a late import is
still a dependency, it only hides a cycle), or under `if TYPE_CHECKING:`. A module may import modules of
its own layer or of a layer below; the two front ends never import each other; rule modules never import
one another; no modules import each other in a cycle. A new module must be given a layer here and in
docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
ARCHITECTURE_DOC = REPOSITORY / "docs" / "architecture.md"
# (folder, the package it installs as): rules/ installs as rocmlint.rules (pyproject.toml, package-dir).
PACKAGE_FOLDERS = (("rocmlint", "rocmlint"), ("rules", "rocmlint.rules"))

# Top layer first. `name.*` is a package with all its modules; a plain name is that module alone.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry points", ("rocmlint.__main__", "rocmlint.cli")),
    (
        "integrations",
        (
            "rocmlint.arguments",
            "rocmlint.adoption",
            "rocmlint.changes",
            "rocmlint.baseline",
            "rocmlint.add_noqa",
            "rocmlint.report.*",
            "rocmlint.project_command",
            "rocmlint.project_summary",
            "rocmlint.project_text",
            "rocmlint.lsp.*",
            "rocmlint.flake8_plugin",
            "rocmlint.verify",
            "rocmlint.docs",
            "rocmlint.testing",
        ),
    ),
    ("outputs, cache and pool", ("rocmlint.outputs.*", "rocmlint.parallel", "rocmlint.cache", "rocmlint.dependencies")),
    ("engine", ("rocmlint.engine", "rocmlint.discovery", "rocmlint.suppression", "rocmlint.fix")),
    ("configuration and registry", ("rocmlint.config", "rocmlint.registry", "rocmlint.rule_index")),
    ("rules", ("rocmlint.rules.*",)),
    ("front ends", ("rocmlint.python.*", "rocmlint.cuda.*")),
    (
        "core",
        (
            "rocmlint",
            "rocmlint.diagnostics",
            "rocmlint.source",
            "rocmlint.rule",
            "rocmlint.vendor",
            "rocmlint.file_report",
            "rocmlint.collector",
            "rocmlint.data.*",
        ),
    ),
)
# Packages of one layer that must not import each other.
INDEPENDENT = (("rocmlint.python.*", "rocmlint.cuda.*"),)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.relative_to(REPOSITORY)}:{self.line}"


def module_files() -> dict[str, Path]:
    """Every module of the installed package, by its dotted name."""
    modules: dict[str, Path] = {}
    for folder, package in PACKAGE_FOLDERS:
        for path in sorted((REPOSITORY / folder).rglob("*.py")):
            parts = list(path.relative_to(REPOSITORY / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[Import]:
    """The rocmlint modules `name` imports anywhere in its text: `from package import module` names the
    module, `from module import attribute` the module; `importlib.import_module("...")` counts too."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, is_package, node.level, node.module)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif (by_name := _imported_by_name(node)) is not None:
            targets = [by_name]
        else:
            continue
        for target in targets:
            if target == "rocmlint" or target.startswith("rocmlint."):
                yield Import(name, target, path, node.lineno)


def _imported_by_name(node: ast.AST) -> str | None:
    """The module an `importlib.import_module("rocmlint.rules")` call names (an import all the same), else None."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    name = node.args[0].value
    return name if called == "import_module" and isinstance(name, str) else None


def _absolute(name: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    package = name.split(".") if is_package else name.split(".")[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def all_imports(modules: Mapping[str, Path]) -> list[Import]:
    return [found for name, path in modules.items() for found in imports_of(name, path, modules)]


def _matches(pattern: str, module: str) -> bool:
    if pattern.endswith(".*"):
        package = pattern[:-2]
        return module == package or module.startswith(package + ".")
    return module == pattern


def layer_of(module: str) -> int | None:
    """The index of the module's layer in LAYERS (0 is the top), None when no layer lists it."""
    found = [index for index, (_, patterns) in enumerate(LAYERS) for pattern in patterns if _matches(pattern, module)]
    return found[0] if len(found) == 1 else None


def layer_violations(imports: list[Import]) -> list[str]:
    problems = []
    for found in imports:
        importer, imported = layer_of(found.importer), layer_of(found.imported)
        if importer is None or imported is None:
            continue  # reported by test_every_module_has_one_layer
        if imported < importer:
            problems.append(
                f"{found.where()}: {found.importer} ({LAYERS[importer][0]}) imports {found.imported}, "
                f"which is above it ({LAYERS[imported][0]})"
            )
    return problems


def independence_violations(imports: list[Import]) -> list[str]:
    problems = []
    for group in INDEPENDENT:
        for found in imports:
            mine = [p for p in group if _matches(p, found.importer)]
            theirs = [p for p in group if _matches(p, found.imported)]
            if mine and theirs and mine != theirs:
                problems.append(
                    f"{found.where()}: {found.importer} imports {found.imported} ({mine[0]} and {theirs[0]} are independent)"
                )
    rules = [
        f for f in imports if _is_rule_module(f.importer) and _is_rule_module(f.imported) and f.importer != f.imported
    ]
    problems += [f"{f.where()}: rule module {f.importer} imports rule module {f.imported}" for f in rules]
    return problems


def _is_rule_module(module: str) -> bool:
    return module.startswith("rocmlint.rules.")


def cycles(imports: list[Import]) -> list[list[str]]:
    """The import cycles between modules: each strongly connected component of more than one module (or of
    one that imports itself), by Tarjan's algorithm."""
    graph: dict[str, set[str]] = {}
    for found in imports:
        graph.setdefault(found.importer, set()).add(found.imported)
        graph.setdefault(found.imported, set())
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                lowest[module] = min(lowest[module], lowest[target])
            elif target in on_stack:
                lowest[module] = min(lowest[module], index[target])
        if lowest[module] != index[module]:
            return
        component: list[str] = []
        while not component or component[-1] != module:
            component.append(stack.pop())
            on_stack.discard(component[-1])
        if len(component) > 1 or module in graph[module]:
            components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return module_files()


@pytest.fixture(scope="module")
def imports(modules: dict[str, Path]) -> list[Import]:
    return all_imports(modules)


def test_every_module_has_one_layer(modules: dict[str, Path]) -> None:
    assert [name for name in modules if layer_of(name) is None] == []


def test_imports_go_down_the_layers(imports: list[Import]) -> None:
    assert layer_violations(imports) == []


def test_front_ends_and_rules_stay_apart(imports: list[Import]) -> None:
    assert independence_violations(imports) == []


def test_no_import_cycles(imports: list[Import]) -> None:
    assert cycles(imports) == []


def test_front_ends_never_import_the_registry(imports: list[Import]) -> None:
    """Spelled out, as the layer order implies it: what a front end knows of rules, the engine passes in."""
    front_ends = ("rocmlint.python.*", "rocmlint.cuda.*")
    crossing = [
        f.where()
        for f in imports
        if any(_matches(p, f.importer) for p in front_ends) and f.imported in ("rocmlint.registry", "rocmlint.config")
    ]
    assert crossing == []


def documented_layers(text: str) -> list[tuple[str, set[str]]]:
    """The rows of the `| Layer | Modules | May import |` table in docs/architecture.md, top first."""
    section = text.split("## Layers", 1)[1]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ")]
    return [(cells[0].strip(), set(re.findall(r"`([^`]+)`", cells[1]))) for cells in rows[2:]]  # after the header


def test_the_table_mirrors_the_architecture_doc() -> None:
    documented = documented_layers(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
    assert documented == [(name, set(patterns)) for name, patterns in LAYERS]


# A rule keeps what is about its hazard; what is generic belongs to a front end (docs/writing-rules.md).
MAX_RULE_MODULE_LINES = 400


def test_rule_modules_stay_small() -> None:
    """Each rule module, its doc and examples included, fits in MAX_RULE_MODULE_LINES: a larger one holds
    an analysis other rules could share, which goes to the front end with its own tests."""
    sizes = {
        path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in (REPOSITORY / "rules").glob("roc*.py")
    }
    assert sizes
    assert {name: lines for name, lines in sizes.items() if lines > MAX_RULE_MODULE_LINES} == {}


# --- the checks themselves catch what they are for ----------------------------------------------------


def _imports_from(tmp_path: Path, files: Mapping[str, str]) -> list[Import]:
    modules: dict[str, Path] = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        modules[name] = path
    return [Import(f.importer, f.imported, REPOSITORY / "tests" / "x.py", f.line) for f in all_imports(modules)]


def test_a_function_local_import_of_the_registry_by_a_front_end_is_caught(tmp_path: Path) -> None:
    found = _imports_from(
        tmp_path,
        {
            "rocmlint.cuda.frontend": "def visited():\n    from rocmlint.registry import all_rules\n    return all_rules()\n"
        },
    )
    assert [f.imported for f in found] == ["rocmlint.registry"]
    assert len(layer_violations(found)) == 1


def test_a_cycle_through_a_late_import_is_caught(tmp_path: Path) -> None:
    found = _imports_from(
        tmp_path,
        {
            "rocmlint.cli": "from rocmlint.report import command\n",
            "rocmlint.report.command": "def run():\n    from rocmlint.cli import UsageError\n",
            "rocmlint.report": "",
        },
    )
    assert cycles(found) == [["rocmlint.cli", "rocmlint.report.command"]]


def test_an_import_by_name_counts(tmp_path: Path) -> None:
    found = _imports_from(
        tmp_path, {"rocmlint.python.frontend": 'import importlib\nimportlib.import_module("rocmlint.engine")\n'}
    )
    assert [f.imported for f in found] == ["rocmlint.engine"]


def test_relative_imports_resolve_against_the_package(tmp_path: Path) -> None:
    path = tmp_path / "__init__.py"
    path.write_text("from . import text\nfrom .paths import escape_control\n", encoding="utf-8")
    known = {"rocmlint.outputs": path, "rocmlint.outputs.text": path, "rocmlint.outputs.paths": path}
    assert [f.imported for f in imports_of("rocmlint.outputs", path, known)] == [
        "rocmlint.outputs.text",
        "rocmlint.outputs.paths",
    ]
