"""`rocmlint check --since REV` in real git repositories: only diagnostics on lines added or changed since
the merge-base of REV and HEAD, in every output format, with renames, untracked files and the errors."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, commit_all, git, write_tree

from rocmlint.adoption import only_changed
from rocmlint.changes import ChangedLines, parse_diff
from rocmlint.cli import main
from rocmlint.diagnostics import Diagnostic, Location, Severity

COMPILE = 'm = torch.compile(m, mode="reduce-overhead")\n'  # ROC101 at column 22
SHUFFLE = "__device__ float f{n}(float v) {{ return __shfl_xor_sync(0xffffffff, v, 16); }}\n"  # ROC208, ROC210
Run = Callable[..., Result]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """`rocmlint ARGS` in-process in the current directory, without the result cache."""

    def invoke(*args: str) -> Result:
        code = main([*args, "--no-cache"] if args[0] == "check" else list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def python_file(hazards: int, clean: int = 2) -> str:
    return "import torch\n" + "x = 1\n" * clean + COMPILE * hazards


def cuda_file(kernels: int) -> str:
    return "".join(SHUFFLE.format(n=n) for n in range(kernels))


def diagnostics_json(run: Run, *args: str) -> set[tuple[str, int, int, str]]:
    result = run("check", "--output-format", "json", "--exit-zero", *args)
    assert result.code == 0, result.stderr
    return {
        (Path(d["filename"]).resolve().as_posix(), d["location"]["row"], d["location"]["column"], d["code"])
        for d in json.loads(result.stdout)
    }


def lines_git_says_changed(root: Path, revision: str) -> dict[str, set[int] | None]:
    """Computed here, apart from rocmlint/changes.py: the `+c,d` ranges of `git diff -U0` per new file
    name, plus every untracked file (None: all of it)."""
    base = git(root, "merge-base", revision, "HEAD").strip()
    changed: dict[str, set[int] | None] = {}
    current: set[int] | None = None
    for line in git(root, "diff", "-U0", "--find-renames", base).splitlines():
        if line.startswith("+++ "):
            name = line[4:].removesuffix("\t")  # git ends a name holding a space with a tab
            current = None if name == "/dev/null" else changed.setdefault((root / name[2:]).as_posix(), set())
        elif (hunk := re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)) and current is not None:
            start, count = int(hunk[1]), int(hunk[2] or 1)
            current.update(range(start, start + count))
    for name in git(root, "ls-files", "--others", "--exclude-standard").splitlines():
        changed[(root / name).as_posix()] = None
    return changed


def filtered(
    full: set[tuple[str, int, int, str]], changed: dict[str, set[int] | None]
) -> set[tuple[str, int, int, str]]:
    return {d for d in full if d[0] in changed and (changed[d[0]] is None or d[1] in changed[d[0]])}


@pytest.fixture
def branched(repository: Path) -> Path:
    """main with hazards everywhere; a `feature` branch that adds, changes, moves and deletes lines, renames
    a file, stages a new file and leaves one untracked; main moves on after the branch point."""
    write_tree(
        repository,
        {
            "src/model.py": python_file(3),
            "src/old_name.py": python_file(2, clean=5),
            "src/untouched.py": python_file(2),
            "csrc/kernels.cu": cuda_file(3),
            "src/with space.py": python_file(2),
            "notes.txt": "not checked\n",
        },
    )
    commit_all(repository, "main: the codebase as it is")
    git(repository, "checkout", "-q", "-b", "feature")
    model = python_file(3).splitlines(keepends=True)
    model.insert(2, COMPILE)  # a new hazard between old lines
    model[-1] = COMPILE.replace("m = ", "mm = ")  # an old hazard line changed
    del model[1]  # a deletion: nothing to report there
    write_tree(
        repository,
        {"src/model.py": "".join(model), "csrc/kernels.cu": cuda_file(4), "src/with space.py": python_file(3)},
    )
    git(repository, "mv", "src/old_name.py", "src/new_name.py")
    commit_all(repository, "feature: edits and a rename")
    git(repository, "checkout", "-q", "main")
    write_tree(repository, {"src/untouched.py": python_file(4)})
    commit_all(repository, "main moves on")
    git(repository, "checkout", "-q", "feature")
    renamed = (repository / "src/new_name.py").read_text() + COMPILE
    write_tree(repository, {"src/new_name.py": renamed, "src/staged.py": python_file(1)})
    git(repository, "add", "src/staged.py")
    write_tree(repository, {"src/untracked.py": python_file(2)})
    return repository


def test_since_is_the_full_run_filtered_by_git_diff_line_ranges(branched: Path, run: Run) -> None:
    full = diagnostics_json(run, ".")
    since = diagnostics_json(run, "--since", "main", ".")
    expected = filtered(full, lines_git_says_changed(branched, "main"))
    assert since == expected
    # The scenario exercises what it claims: something is left out, and each kind of change is in.
    assert since < full
    paths = {Path(d[0]).name for d in since}
    assert {"model.py", "kernels.cu", "new_name.py", "staged.py", "untracked.py", "with space.py"} <= paths
    assert "untouched.py" not in paths  # changed on main after the branch point only


def test_renamed_file_is_compared_with_its_old_name(branched: Path, run: Run) -> None:
    since = diagnostics_json(run, "--since", "main", "src/new_name.py")
    last_line = len((branched / "src/new_name.py").read_text().splitlines())
    assert {(d[1], d[3]) for d in since} == {(last_line, "ROC101")}
    assert len(diagnostics_json(run, "src/new_name.py")) == 3


def test_untracked_and_staged_files_are_new_as_a_whole(branched: Path, run: Run) -> None:
    assert len(diagnostics_json(run, "--since", "main", "src/untracked.py")) == 2
    assert len(diagnostics_json(run, "--since", "main", "src/staged.py")) == 1


@pytest.mark.parametrize(
    ("output_format", "count"),
    [
        ("text", lambda out: len(re.findall(r"^.+?:\d+:\d+: ROC\d+ ", out, re.MULTILINE))),
        ("json", lambda out: len(json.loads(out))),
        ("sarif", lambda out: len(json.loads(out)["runs"][0]["results"])),
        ("github", lambda out: len(re.findall(r"^::(?:error|warning|notice) ", out, re.MULTILINE))),
        ("gitlab", lambda out: len(json.loads(out))),
    ],
)
def test_every_output_format_shows_the_same_diagnostics(
    branched: Path, run: Run, output_format: str, count: Callable[[str], int]
) -> None:
    expected = len(diagnostics_json(run, "--since", "main", "."))
    result = run("check", "--since", "main", "--output-format", output_format, ".")
    assert (result.code, count(result.stdout)) == (1, expected)


def test_statistics_and_summary_count_the_filtered_list(branched: Path, run: Run) -> None:
    expected = len(diagnostics_json(run, "--since", "main", "."))
    statistics = run("check", "--since", "main", "--statistics", ".")
    assert sum(int(line.split()[0]) for line in statistics.stdout.splitlines() if line.strip()) == expected
    assert f"Found {expected} diagnostics" in run("check", "--since", "main", ".").stdout


def test_exit_code_follows_the_filtered_list(repository: Path, run: Run) -> None:
    write_tree(repository, {"a.py": python_file(2)})
    commit_all(repository, "hazards")
    write_tree(repository, {"a.py": python_file(2) + "y = 2\n"})
    assert run("check", ".").code == 1
    result = run("check", "--since", "HEAD", ".")
    assert (result.code, result.stdout) == (0, "All checks passed!\n")


def test_paths_relative_to_a_subfolder_and_a_repository_below_the_cwd(
    branched: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = diagnostics_json(run, "--since", "main", "src")
    monkeypatch.chdir(branched / "csrc")
    assert diagnostics_json(run, "--since", "main", "../src") == expected
    monkeypatch.chdir(branched.parent)  # outside the repository, which is a subfolder here
    assert diagnostics_json(run, "--since", "main", "repo/src") == expected


def test_unknown_revision_is_one_line_and_exit_2(repository: Path, run: Run) -> None:
    write_tree(repository, {"a.py": python_file(1)})
    commit_all(repository, "one")
    result = run("check", "--since", "no-such-branch", ".")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1 and "unknown revision 'no-such-branch'" in result.stderr


def test_outside_a_git_repository_is_one_line_and_exit_2(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plain"
    write_tree(folder, {"a.py": python_file(1)})
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(folder)
    result = run("check", "--since", "HEAD", ".")
    assert (result.code, result.stdout, result.stderr.count("\n")) == (2, "", 1)
    assert "not inside" in result.stderr and "git repository" in result.stderr


def test_git_missing_is_one_line_and_exit_2(
    repository: Path, run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_tree(repository, {"a.py": python_file(1)})
    commit_all(repository, "one")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools-here"))
    result = run("check", "--since", "HEAD", ".")
    assert (result.code, result.stderr) == (2, "rocmlint: error: --since needs git, which was not found on PATH\n")


def test_since_cannot_fix_or_read_stdin(repository: Path, run: Run) -> None:
    write_tree(repository, {"a.py": python_file(1)})
    commit_all(repository, "one")
    assert "whole files" in run("check", "--since", "HEAD", "--fix", ".").stderr
    assert run("check", "--since", "HEAD", "-").code == 2


def test_report_takes_since(branched: Path, run: Run) -> None:
    expected = len(diagnostics_json(run, "--since", "main", "."))
    full = json.loads(run("report", "--format", "json", "--no-progress", ".").stdout)["total"]
    since = json.loads(run("report", "--format", "json", "--no-progress", "--since", "main", ".").stdout)["total"]
    assert (since, full) == (expected, len(diagnostics_json(run, ".")))


def spanning(path: str, first: int, last: int) -> Diagnostic:
    return Diagnostic(path, "ROC101", "n", "m", Severity.WARNING, Location(first, 1), Location(last, 5))


def test_a_diagnostic_over_several_lines_counts_by_its_first_line(tmp_path: Path) -> None:
    path = str(tmp_path / "a.py")
    changes = ChangedLines({path: frozenset({4})})
    diagnostics = [spanning(path, 3, 5), spanning(path, 4, 6)]
    assert only_changed(diagnostics, changes) == diagnostics[1:]


def test_parse_diff_reads_quoted_names_deletions_and_pure_renames() -> None:
    patch = (
        b"diff --git a/x.py b/y.py\nsimilarity index 100%\nrename from x.py\nrename to y.py\n"
        b'diff --git "a/t\\tab.py" "b/t\\tab.py"\n--- "a/t\\tab.py"\n+++ "b/t\\tab.py"\n@@ -1 +1,2 @@\n'
        b"diff --git a/\xc3\xa9.cu b/\xc3\xa9.cu\n--- a/\xc3\xa9.cu\n+++ b/\xc3\xa9.cu\n@@ -3,2 +2,0 @@\n@@ -9 +8 @@\n"
        b'diff --git "a/\\303\\251\\"q.py" "b/\\303\\251\\"q.py"\n+++ "b/\\303\\251\\"q.py"\n@@ -0,0 +1,3 @@\n'
        b"diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1,4 +0,0 @@\n"
        b"diff --git a/sp ace.py b/sp ace.py\n--- a/sp ace.py\t\n+++ b/sp ace.py\t\n@@ -1 +1 @@\n"
    )
    assert parse_diff(patch) == {
        "t\tab.py": frozenset({1, 2}),
        "\u00e9.cu": frozenset({8}),
        '\u00e9"q.py': frozenset({1, 2, 3}),
        "sp ace.py": frozenset({1}),
    }
