"""The speed machinery never changes a result: prefilter on/off, cache cold/warm, --jobs 1/2.

Run over every fixture project and a generated synthetic corpus (benchmarks/synthetic.py: every
rule's own examples, cross-module gating, filler files without triggers, CUDA kernels). The fixtures'
results are also the recorded ones (tests/fixture_results: first those of the libcst front end).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from rocmlint.cache import Cache
from rocmlint.config import ConfigResolver, Overrides
from rocmlint.diagnostics import Diagnostic
from rocmlint.discovery import Candidate, discover
from rocmlint.outputs.json_format import to_json
from rocmlint.parallel import check_candidates

REPO = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (REPO / "fixtures").iterdir() if p.is_dir())


def _load_synthetic():
    spec = importlib.util.spec_from_file_location("rocmlint_bench_synthetic", REPO / "benchmarks" / "synthetic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def synthetic_corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("synthetic")
    _load_synthetic().generate(root, scale=1, seed=7)
    return root


def _candidates(root: Path) -> list[Candidate]:
    resolver = ConfigResolver(Overrides(), cwd=root)
    return list(discover([root], resolver, lambda message: None))


def _flatten(reports) -> list[tuple]:
    """Everything a user sees, fixes included (Diagnostic equality ignores only noqa_line)."""
    return [(d, d.noqa_line) for r in reports for d in sorted(r.diagnostics, key=Diagnostic.sort_key)]


def _run(
    root: Path, jobs: int = 1, prefilter: bool = True, cache_dir: Path | None = None, warnings: list | None = None
):
    warn = warnings.append if warnings is not None else lambda message: None
    cache = Cache.open(cache_dir, warn) if cache_dir is not None else None
    return check_candidates(_candidates(root), jobs, cache, warn, prefilter=prefilter, pool_min_files=0), cache


def _project(request, synthetic_corpus: Path, tmp_path: Path) -> Path:
    """A private copy, so cache folders and mtimes never touch the repository's fixtures."""
    source = synthetic_corpus if request.param == "synthetic" else REPO / "fixtures" / request.param
    copy = tmp_path / "project"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".rocmlint_cache"))
    return copy


@pytest.fixture(params=["synthetic", *(p.name for p in FIXTURES)])
def project(request, synthetic_corpus, tmp_path) -> Path:
    return _project(request, synthetic_corpus, tmp_path)


def test_corpus_is_not_trivial(synthetic_corpus):
    reports, _ = _run(synthetic_corpus)
    codes = {d.code for r in reports for d in r.diagnostics}
    assert len(codes) >= 20, codes
    assert any(r.skipped for r in reports), "filler files should be skipped by the prefilter"


def test_prefilter_changes_nothing(project):
    with_prefilter, _ = _run(project)
    without, _ = _run(project, prefilter=False)
    # By design a file no rule could fire on is never parsed, so its syntax errors (ROC001) are not
    # reported (see rules/roc001_parse_error.py); everything else must be identical.
    skipped = {r.path for r in with_prefilter if r.skipped}
    without_kept = [(d, line) for d, line in _flatten(without) if not (d.code == "ROC001" and d.path in skipped)]
    assert _flatten(with_prefilter) == without_kept


def test_jobs_change_nothing(project):
    one, _ = _run(project, jobs=1)
    two, _ = _run(project, jobs=2)
    assert [r.path for r in one] == [r.path for r in two]
    assert _flatten(one) == _flatten(two)


def test_cache_cold_and_warm_change_nothing(project, tmp_path):
    baseline, _ = _run(project)
    cache_dir = tmp_path / "cache"
    warnings: list[str] = []
    cold, _ = _run(project, cache_dir=cache_dir, warnings=warnings)
    warm, cache = _run(project, cache_dir=cache_dir, warnings=warnings)
    warm_pool, _ = _run(project, jobs=2, cache_dir=cache_dir, warnings=warnings)
    assert not warnings
    assert _flatten(cold) == _flatten(baseline)
    assert _flatten(warm) == _flatten(baseline)
    assert _flatten(warm_pool) == _flatten(baseline)
    assert cache is not None and not cache.dirty, "a warm run with nothing changed rewrites nothing"


def test_cache_after_edit_matches_a_fresh_run(project, tmp_path):
    cache_dir = tmp_path / "cache"
    _run(project, jobs=2, cache_dir=cache_dir)
    sources = sorted(project.rglob("*.py")) or sorted(project.rglob("*.cu"))
    edited = sources[0]
    python_hazard = '\nimport torch\nm = torch.compile(m, mode="reduce-overhead")\n'
    hazard = python_hazard if edited.suffix == ".py" else "\nint lanes = 32; // warpSize\n"
    edited.write_text(edited.read_text() + hazard)
    stamp = edited.stat().st_mtime_ns + 5_000_000_000
    os.utime(edited, ns=(stamp, stamp))
    cached, _ = _run(project, jobs=2, cache_dir=cache_dir)
    fresh, _ = _run(project)
    assert _flatten(cached) == _flatten(fresh)


# Each fixture's results (`check --isolated --no-cache --output-format json`, every default rule, fixes
# included; file names relative to the fixture), first recorded with the libcst front end (commit e3897e9)
# before issue 17 moved the Python front end to CPython's ast, and changed since only by commits that say
# which diagnostic changed and why (`git log tests/fixture_results`): ROC101 no longer checks test files.
FIXTURE_RESULTS = REPO / "tests" / "fixture_results"


@pytest.mark.parametrize("name", [p.name for p in FIXTURES])
def test_fixture_results_are_the_recorded_ones(name: str, tmp_path: Path) -> None:
    copy = tmp_path / name
    shutil.copytree(REPO / "fixtures" / name, copy, ignore=shutil.ignore_patterns(".rocmlint_cache"))
    resolver = ConfigResolver(Overrides(), isolated=True, cwd=copy)
    candidates = list(discover([copy], resolver, lambda message: None))
    reports = check_candidates(candidates, 2, None, lambda message: None, pool_min_files=0)
    found = []
    for diagnostic in (d for report in reports for d in report.diagnostics):
        entry = to_json(diagnostic)
        entry["filename"] = Path(entry["filename"]).relative_to(copy).as_posix()
        found.append(entry)
    found.sort(key=lambda d: (d["filename"], d["location"]["row"], d["location"]["column"], d["code"]))
    assert found == json.loads((FIXTURE_RESULTS / f"{name}.json").read_text(encoding="utf-8"))
