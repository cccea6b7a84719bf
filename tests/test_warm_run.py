"""A `rocmlint check` served entirely from the cache imports no front end (no Python front end, no tree-sitter,
no engine, no rule module) and prints exactly what the run that filled the cache printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HAZARD, write_tree

from rocmlint.cache import RACY_NS

FRONT_END = ("rocmlint.python.", "tree_sitter", "rocmlint.engine", "rocmlint.rules.")
# The console script's main() in a fresh interpreter, then every module it left in sys.modules
# (python -X importtime would miss the rule modules: the registry imports them with importlib).
_PROBE = (
    "import json, sys\n"
    "from rocmlint.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as out:\n"
    "    json.dump(sorted(sys.modules), out)\n"
    "sys.exit(code)\n"
)


def _run(project: Path, cache: Path, *argv: str) -> tuple[set[str], str]:
    """The modules a real `rocmlint` process imported, and its stdout."""
    env = {**os.environ, "ROCMLINT_CACHE_DIR": str(cache)}
    listing = cache.parent / f"{cache.name}-modules.json"
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(listing), *argv], cwd=project, env=env, capture_output=True, text=True
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return set(json.loads(listing.read_text())), result.stdout


def _front_end(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(FRONT_END))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("warm") / "proj"
    write_tree(
        root,
        {
            # A selection in the configuration: validating it must not import the rules either.
            "pyproject.toml": '[tool.rocmlint]\nselect = ["ROC1", "ROC2"]\nper-file-ignores = { "b.py" = ["ROC104"] }\n',
            "pkg/__init__.py": "",
            "pkg/a.py": HAZARD,
            "pkg/b.py": "import pynvml\n",
            "pkg/clean.py": "import torch\n",
            "k.cu": "__global__ void k() { int lane = threadIdx.x % 32; }\n",
        },
    )
    # Files younger than the racy window are re-hashed, and results depending on such a file (here
    # pkg/__init__.py) are re-checked (rocmlint/cache.py): only older files give a pure warm run.
    time.sleep(RACY_NS / 1e9)
    return root


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--select", "ROC101,ROC2", "--ignore", "ROC208"),
        ("--output-format", "json"),
        ("--statistics", "--jobs", "1"),
    ],
)
def test_warm_check_imports_no_front_end_and_prints_the_same(project, tmp_path, options):
    cold_modules, cold_out = _run(project, tmp_path / "cache", "check", *options, ".")
    assert _front_end(cold_modules), "the cold run checks files, so the detection itself is shown to work"
    warm_modules, warm_out = _run(project, tmp_path / "cache", "check", *options, ".")
    assert _front_end(warm_modules) == []
    assert warm_out == cold_out


def test_one_edited_file_is_checked_again(tmp_path):
    write_tree(tmp_path, {"a.py": HAZARD, "clean.py": "import torch\n"})
    _, cold_out = _run(tmp_path, tmp_path / "cache", "check", ".")
    (tmp_path / "clean.py").write_text("import torch\nm = torch.compile(m, mode='reduce-overhead')\n")
    modules, out = _run(tmp_path, tmp_path / "cache", "check", ".")
    assert _front_end(modules), "a miss needs the engine"
    assert "clean.py:2:" in out and out != cold_out


def test_listing_the_rules_imports_no_rule_module(tmp_path):
    modules, out = _run(tmp_path, tmp_path / "cache", "rules")
    assert "ROC101" in out
    assert _front_end(modules) == []
