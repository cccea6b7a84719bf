"""`--baseline FILE` / `--update-baseline`: known diagnostics hidden by fingerprints that hold no line number;
stale entries reported and dropped."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from conftest import write_tree

from rocmlint.baseline import VERSION, BaselineError, Entry, save

COMPILE = 'm = torch.compile(m, mode="reduce-overhead")\n'  # ROC101
OTHER = 'n = torch.compile(n, mode="reduce-overhead")\n'
SHUFFLE = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 16); }\n"  # ROC208, ROC210


def entries(path: Path) -> list[dict[str, str]]:
    document = json.loads(path.read_text())
    assert (document["tool"], document["version"]) == ("rocmlint", VERSION)
    return document["entries"]


def seed(project: Path, cli) -> Path:
    write_tree(
        project,
        {"a.py": "import torch\n" + COMPILE + OTHER, "b.py": "import torch\n" + COMPILE, "k.cu": SHUFFLE},
    )
    result = cli("check", "--baseline", "baseline.json", "--update-baseline")
    assert result.code == 0, result.stderr
    assert "Wrote 5 baseline entries" in result.stderr
    return project / "baseline.json"


def test_round_trip_hides_everything_the_baseline_lists(project, cli):
    baseline = seed(project, cli)
    rows = entries(baseline)
    assert [(e["path"], e["code"]) for e in rows] == [
        ("a.py", "ROC101"),
        ("a.py", "ROC101"),
        ("b.py", "ROC101"),
        ("k.cu", "ROC208"),
        ("k.cu", "ROC210"),
    ]
    assert rows == sorted(rows, key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    assert not any("line" in e for e in rows)
    result = cli("check", "--baseline", "baseline.json")
    assert (result.code, result.stdout) == (0, "All checks passed!\n")
    assert "5 diagnostics hidden by the baseline" in result.stderr
    before = baseline.read_bytes()
    assert cli("check", "--baseline", "baseline.json", "--update-baseline").code == 0
    assert baseline.read_bytes() == before  # stable: regenerating changes nothing


def test_moved_lines_are_still_matched(project, cli):
    seed(project, cli)
    write_tree(project, {"a.py": "import torch\n\n# a comment\nx = 1\n" + OTHER + "\n" + COMPILE})
    write_tree(project, {"k.cu": "#include <x.h>\n\n" + SHUFFLE})
    assert cli("check", "--baseline", "baseline.json").code == 0


def test_a_changed_line_is_reported_and_its_entry_is_stale(project, cli):
    seed(project, cli)
    write_tree(project, {"b.py": "import torch\n" + COMPILE.replace("(m,", "(model,")})
    result = cli("check", "--baseline", "baseline.json", "--output-format", "json")
    assert result.code == 1
    assert [(Path(d["filename"]).name, d["code"]) for d in json.loads(result.stdout)] == [("b.py", "ROC101")]
    assert "1 baseline entry of baseline.json matches nothing any more" in result.stderr
    assert "b.py ROC101" in result.stderr


def test_identical_lines_are_told_apart_by_their_occurrence(project, cli):
    write_tree(project, {"a.py": "import torch\n" + COMPILE * 2})
    assert cli("check", "--baseline", "baseline.json", "--update-baseline").code == 0
    assert len({e["fingerprint"] for e in entries(project / "baseline.json")}) == 2
    write_tree(project, {"a.py": "import torch\n" + COMPILE * 3})
    result = cli("check", "--baseline", "baseline.json", "--output-format", "json")
    assert (result.code, len(json.loads(result.stdout))) == (1, 1)


def test_stale_entries_are_noted_then_dropped_by_update(project, cli):
    baseline = seed(project, cli)
    write_tree(project, {"a.py": "import torch\n" + OTHER, "k.cu": "int x;\n"})
    result = cli("check", "--baseline", "baseline.json")
    assert result.code == 0
    note = next(line for line in result.stderr.splitlines() if "baseline entries" in line)
    assert note.startswith("rocmlint: 3 baseline entries of baseline.json match nothing any more")
    assert "a.py ROC101" in note and "k.cu ROC208" in note and "k.cu ROC210" in note
    assert cli("check", "--baseline", "baseline.json", "--update-baseline").code == 0
    assert [(e["path"], e["code"]) for e in entries(baseline)] == [("a.py", "ROC101"), ("b.py", "ROC101")]
    assert "match nothing" not in cli("check", "--baseline", "baseline.json").stderr


def test_a_run_over_part_of_the_codebase_keeps_the_rest(project, cli):
    baseline = seed(project, cli)
    partial = cli("check", "--baseline", "baseline.json", "b.py")
    assert (partial.code, "match nothing" in partial.stderr) == (0, False)
    narrowed = cli("check", "--baseline", "baseline.json", "--select", "ROC101")
    assert "match nothing" not in narrowed.stderr  # k.cu's entries are of rules this run did not enable
    before = entries(baseline)
    assert cli("check", "--baseline", "baseline.json", "--update-baseline", "b.py").code == 0
    assert entries(baseline) == before


def test_the_baseline_can_be_configured(project, cli):
    write_tree(project, {"rocmlint.toml": 'baseline = "config/baseline.json"\n'})
    write_tree(project, {"a.py": "import torch\n" + COMPILE})
    seed_result = cli("check", "--update-baseline")
    assert seed_result.code == 0, seed_result.stderr
    assert len(entries(project / "config" / "baseline.json")) == 1
    assert entries(project / "config" / "baseline.json")[0]["path"] == "../a.py"
    assert cli("check").code == 0


def test_missing_or_foreign_baseline_is_an_error(project, cli):
    write_tree(project, {"a.py": "import torch\n" + COMPILE, "other.json": '{"version": 7, "entries": []}'})
    missing = cli("check", "--baseline", "nope.json")
    assert missing.code == 2 and missing.stderr.count("\n") == 1 and "--update-baseline" in missing.stderr
    foreign = cli("check", "--baseline", "other.json")
    assert foreign.code == 2 and "version" in foreign.stderr
    assert "needs --baseline" in cli("check", "--update-baseline").stderr


def test_a_configured_baseline_must_be_a_file_name(project, cli):
    write_tree(project, {"rocmlint.toml": "baseline = 3\n", "a.py": "import torch\n"})
    result = cli("check")
    assert result.code == 2 and "'baseline' must be a file name, got 3" in result.stderr


def test_a_failed_write_keeps_the_old_baseline_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    path.write_text("old\n", encoding="utf-8")

    def full_disk(source: str, target: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(BaselineError, match="cannot write the baseline: No space left on device"):
        save(path, [Entry("a.py", "ROC101", "f" * 64)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]
    assert path.read_text(encoding="utf-8") == "old\n"
