"""The process pool: deterministic order, small chunks, and a dying worker never hangs the run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from conftest import CLEAN, HAZARD, write_tree

from rocmlint import parallel
from rocmlint.config import ConfigResolver, Overrides
from rocmlint.discovery import discover
from rocmlint.parallel import check_candidates

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test relies on fork inheriting the patch")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {f"pkg/m{i:02}.py": (HAZARD if i % 3 == 0 else CLEAN) for i in range(30)}
    files["pkg/boom.py"] = HAZARD
    files["k.cu"] = "__global__ void k() { int lane = threadIdx.x % 32; }\n"
    write_tree(tmp_path, files)
    return tmp_path


@pytest.fixture
def deadline():
    """Fail instead of hanging forever if the pool ever waits on a dead worker."""

    def expire(signum, frame):
        raise TimeoutError("the run hung")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _candidates(root: Path):
    return list(discover([root], ConfigResolver(Overrides(), cwd=root), lambda message: None))


def _summary(reports):
    return [(Path(r.path).name, [(d.code, d.location.line, d.message) for d in r.diagnostics]) for r in reports]


def test_pool_output_is_in_candidate_order_and_equals_in_process(tree, deadline):
    candidates = _candidates(tree)
    one = check_candidates(candidates, 1, None, lambda m: None)
    two = check_candidates(candidates, 2, None, lambda m: None, pool_min_files=0)
    assert [r.path for r in two] == [str(c.path) for c in candidates]
    assert _summary(one) == _summary(two)


def test_chunks_cover_every_file_once():
    tasks = list(range(1000))
    chunks = parallel._chunks(tasks, 2)  # type: ignore[arg-type]
    assert sorted(i for chunk in chunks for i in chunk) == tasks
    assert max(len(chunk) for chunk in chunks) <= parallel.CHUNK_MAX_FILES


def test_payload_sends_each_settings_once(tree):
    candidates = _candidates(tree)
    table, items = parallel._payload(candidates, list(range(len(candidates))))
    assert len(table) == 1 and len(items) == len(candidates)


def test_worker_killed_mid_run_does_not_hang(tree, deadline, monkeypatch):
    parent = os.getpid()
    real = parallel.check_file

    def deadly(engine, path, settings, remember):
        if path.name == "boom.py" and os.getpid() != parent:
            os._exit(13)  # what a segfault in a native parser looks like to the pool
        return real(engine, path, settings, remember)

    monkeypatch.setattr(parallel, "check_file", deadly)
    warnings: list[str] = []
    candidates = _candidates(tree)
    reports = check_candidates(candidates, 2, None, warnings.append, pool_min_files=0)
    assert any("worker process died" in w for w in warnings)
    by_name = dict(_summary(reports))
    assert [code for code, _, _ in by_name["boom.py"]] == ["ROC900"]
    assert "worker process" in by_name["boom.py"][0][2]
    monkeypatch.setattr(parallel, "check_file", real)
    expected = dict(_summary(check_candidates(candidates, 1, None, lambda m: None)))
    del expected["boom.py"], by_name["boom.py"]
    assert by_name == expected, "every other file still gets its real result"


def test_worker_killed_while_starting_does_not_hang(tree, deadline, monkeypatch):
    parent = os.getpid()

    def dead_on_arrival(options):
        if os.getpid() != parent:
            os._exit(1)

    monkeypatch.setattr(parallel, "_init_worker", dead_on_arrival)
    candidates = _candidates(tree)[:3]
    reports = check_candidates(candidates, 2, None, lambda m: None, pool_min_files=0)
    assert [d.code for r in reports for d in r.diagnostics] == ["ROC900"] * 3


def test_cuda_worker_killed_in_the_modelled_run_does_not_hang(tree, deadline, monkeypatch):
    """The C++ files are checked by a process of their own (it builds the project model and forks their pool): a
    worker of that pool dying is reported as in the first pool."""
    parent = os.getpid()
    real = parallel.check_file

    def deadly(engine, path, settings, remember):
        if path.name == "k.cu" and os.getpid() != parent:
            os._exit(13)
        return real(engine, path, settings, remember)

    monkeypatch.setattr(parallel, "check_file", deadly)
    warnings: list[str] = []
    reports = check_candidates(_candidates(tree), 2, None, warnings.append, pool_min_files=0)
    assert any("worker process died" in w for w in warnings)
    assert [d.code for d in dict((Path(r.path).name, r) for r in reports)["k.cu"].diagnostics] == ["ROC900"]


def test_modelled_run_that_dies_is_checked_again_here(tree, deadline, monkeypatch):
    parent = os.getpid()

    def dies(*args):
        if os.getpid() != parent:
            os._exit(9)  # the OOM killer

    monkeypatch.setattr(parallel, "_run_modelled", dies)
    warnings: list[str] = []
    candidates = _candidates(tree)
    two = check_candidates(candidates, 2, None, warnings.append, pool_min_files=0)
    assert warnings == ["a worker process died; checking the 1 unfinished files one at a time"]
    assert _summary(two) == _summary(check_candidates(candidates, 1, None, lambda m: None))


def test_jobs_option_is_validated(capsys):
    from rocmlint.cli import main

    with pytest.raises(SystemExit):
        main(["check", "--jobs", "0", "."])
    assert "--jobs" in capsys.readouterr().err
