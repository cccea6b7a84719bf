"""`check --fix` never loses a byte: atomic replace, SIGKILL at any moment, stale temporaries, write errors.

The read-only and changed-before-writing cases are in tests/test_fix_cli.py; these are the rest.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, write_tree

import rocmlint.fix as fix_module
from rocmlint.fix import TEMP_SUFFIX, remove_stale_temporaries

CU_FIXABLE = "__device__ void wait(unsigned ns) {{\n  __nanosleep(ns);  // {i}\n}}\n"  # ROC224, safe fix
PY_FIXABLE = 'import torch\nm{i} = torch.compile(m, mode="reduce-overhead")\n'  # ROC101, safe fix
# More with ROCMLINT_KILL_ROUNDS=200 (docs/robustness.md).
KILL_ROUNDS = int(os.environ.get("ROCMLINT_KILL_ROUNDS", "5"))


def _fixable_tree(count: int = 50) -> dict[str, str]:
    files = {}
    for i in range(count // 2):
        files[f"csrc/k{i:02}.cu"] = CU_FIXABLE.format(i=i)
        files[f"py/m{i:02}.py"] = PY_FIXABLE.format(i=i)
    return files


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def _rocmlint(cwd: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rocmlint", "check", "--fix", "--no-cache", "--jobs", "1", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _temporaries(root: Path) -> list[Path]:
    return sorted(root.rglob(f"*{TEMP_SUFFIX}"))


def test_sigkill_at_random_moments_leaves_each_file_original_or_fully_fixed(tmp_path: Path) -> None:
    files = _fixable_tree()
    expected_root = tmp_path / "expected"
    write_tree(expected_root, files)
    (expected_root / ".git").mkdir()
    started = time.monotonic()
    assert _rocmlint(expected_root).wait(timeout=120) in (0, 1)
    full_run = time.monotonic() - started
    fixed = _snapshot(expected_root)
    original = {name: content.encode() for name, content in files.items()}
    assert all(fixed[name] != original[name] for name in files), "every file must have a fix"

    rng = random.Random(7)
    outcomes = []
    for round_ in range(KILL_ROUNDS):
        root = tmp_path / f"run{round_}"
        write_tree(root, files)
        (root / ".git").mkdir()
        process = _rocmlint(root)
        # Mostly in the second half of the run, where the writes are (the first is start-up and checking).
        time.sleep(full_run * rng.uniform(0.3, 1.05))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        after = _snapshot(root)
        for name in files:
            assert after[name] in (original[name], fixed[name]), f"round {round_}: {name} is torn"
        leftovers = [p for p in _temporaries(root)]
        assert len(leftovers) <= 1, leftovers  # at most the one being written when the kill came
        outcomes.append(sum(after[name] == fixed[name] for name in files))
        # The next run finishes the job and removes what the killed one left.
        assert _rocmlint(root).wait(timeout=120) in (0, 1)
        assert {n: c for n, c in _snapshot(root).items() if n in files} == {n: fixed[n] for n in files}
        assert _temporaries(root) == []
    print(f"\n{KILL_ROUNDS} kills; files fully fixed when killed, per round: {outcomes}")


def test_stale_temporary_of_a_dead_process_is_removed_a_live_ones_kept(
    cli: Callable[..., Result], project: Path
) -> None:
    write_tree(project, {"k.cu": CU_FIXABLE.format(i=0)})
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # reaped: its pid names no process now
    stale = project / f".k.cu.{dead.pid}.abc123{TEMP_SUFFIX}"
    live = project / f".k.cu.{os.getpid()}.def456{TEMP_SUFFIX}"  # this process: alive
    unrelated = project / f".other.cu.{dead.pid}.x{TEMP_SUFFIX}"  # next to another file: not ours to judge
    for path in (stale, live, unrelated):
        path.write_bytes(b"half-written")
    result = cli("check", "--fix", "--no-cache")
    assert "__nanosleep" not in (project / "k.cu").read_text() or "#if" in (project / "k.cu").read_text()
    assert not stale.exists() and live.exists() and unrelated.exists(), result.stderr
    assert remove_stale_temporaries(project / "k.cu") == []  # idempotent, and still keeps the live one


def test_temporaries_are_never_checked_as_source(cli: Callable[..., Result], project: Path) -> None:
    write_tree(project, {f".k.cu.1.x{TEMP_SUFFIX}": CU_FIXABLE.format(i=0)})
    assert cli("check", "--no-cache").stdout.startswith("All checks passed!")


def test_file_saved_while_the_temporary_was_written_is_kept(
    cli: Callable[..., Result], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second look right before the rename: an editor's save landing after the first check."""
    write_tree(project, {"k.cu": CU_FIXABLE.format(i=0)})
    real_fsync = os.fsync

    def fsync_while_an_editor_saves(fd: int) -> None:
        (project / "k.cu").write_bytes(b"// the user's newer version\n")
        real_fsync(fd)

    monkeypatch.setattr(fix_module.os, "fsync", fsync_while_an_editor_saves)
    result = cli("check", "--fix", "--no-cache")
    assert (project / "k.cu").read_bytes() == b"// the user's newer version\n"
    assert "changed while it was being fixed" in result.stderr
    assert _temporaries(project) == []


def test_write_error_leaves_the_file_and_the_run_goes_on(
    cli: Callable[..., Result], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(project, {"a.cu": CU_FIXABLE.format(i=0), "b.py": PY_FIXABLE.format(i=0)})
    real_replace = os.replace

    def replace_full_disk(source: str, target: str | os.PathLike[str]) -> None:
        if str(target).endswith("a.cu"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(fix_module.os, "replace", replace_full_disk)
    result = cli("check", "--fix", "--no-cache")
    assert (project / "a.cu").read_text() == CU_FIXABLE.format(i=0)
    assert (project / "b.py").read_text() != PY_FIXABLE.format(i=0)  # fixed all the same
    assert "a.cu: cannot write: No space left on device" in result.stderr
    assert _temporaries(project) == []
    assert result.code in (0, 1)


def test_fix_keeps_a_symlink_target_intact_and_refuses_nothing_silently(
    cli: Callable[..., Result], project: Path
) -> None:
    """Fixing through a symlink must not leave a half-file anywhere; whatever it does, it is whole."""
    write_tree(project, {"real/k.cu": CU_FIXABLE.format(i=0)})
    try:
        os.symlink("real/k.cu", project / "link.cu")
    except OSError:
        pytest.skip("symlinks are not available here")
    original = (project / "real/k.cu").read_bytes()
    cli("check", "--fix", "--no-cache", "link.cu")
    for path in (project / "real/k.cu", project / "link.cu"):
        content = path.read_bytes()
        assert content == original or (b"__nanosleep" in content and content.count(b"\n") > original.count(b"\n"))
    assert _temporaries(project) == []
    shutil.rmtree(project / "real")
