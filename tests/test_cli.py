"""`rocmlint check | rule | rules`: options, exit codes, stdin, text output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CLEAN, HAZARD, HAZARD_COLUMN, HAZARD_LINE, write_tree

from rocmlint import __version__
from rocmlint.registry import all_rules

UNUSED_NOQA_FILE = "x = 1  # noqa: ROC101\n"  # ROC002 (off by default, fixable) on line 1, column 8


# --- exit codes, in a real process ------------------------------------------------------------------


def test_exit_1_when_diagnostics_are_found(run_cli, project):
    write_tree(project, {"a.py": HAZARD})
    result = run_cli("check")
    assert result.code == 1
    assert f"a.py:{HAZARD_LINE}:{HAZARD_COLUMN}: ROC101 " in result.stdout


def test_exit_0_when_clean(run_cli, project):
    write_tree(project, {"a.py": CLEAN})
    result = run_cli("check")
    assert (result.code, result.stdout, result.stderr) == (0, "All checks passed!\n", "")


def test_exit_2_on_usage_error(run_cli, project):
    result = run_cli("check", "--select", "ROC999")
    assert result.code == 2
    assert "ROC999" in result.stderr and result.stdout == ""


def test_exit_2_on_unknown_option(run_cli):
    assert run_cli("check", "--no-such-option").code == 2


def test_exit_zero_reports_but_exits_0(run_cli, project):
    write_tree(project, {"a.py": HAZARD})
    result = run_cli("check", "--exit-zero")
    assert result.code == 0
    assert "ROC101" in result.stdout and "Found 1 diagnostic" in result.stdout


def test_stdin_through_a_pipe(run_cli):
    result = run_cli("check", "-", "--stdin-filename", "model.py", stdin=HAZARD.encode())
    assert result.code == 1
    assert result.lines[0].startswith(f"model.py:{HAZARD_LINE}:{HAZARD_COLUMN}: ROC101 ")


def test_a_real_process_prints_all_that_main_prints(run_cli, cli, project):
    """The command ends its process without the interpreter's teardown (`cli.run`): what stdout and stderr buffered
    is still written, and the exit status is main's. Many files: the output passes a pipe's buffer."""
    write_tree(project, {f"m{i}.py": HAZARD for i in range(300)})
    arguments = ("check", "--no-cache", "--output-format", "json", "--statistics", "not-there.py", ".")
    real, in_process = run_cli(*arguments), cli(*arguments)
    assert len(real.stdout) > 65536 and "not-there.py" in real.stderr and real.code == 1
    assert (real.code, real.stdout, real.stderr) == (in_process.code, in_process.stdout, in_process.stderr)


def test_version(run_cli):
    result = run_cli("--version")
    assert (result.code, result.stdout.strip()) == (0, f"rocmlint {__version__}")


# --- exit codes and options, in-process --------------------------------------------------------------


def test_internal_error_exits_2_with_a_message(cli, project, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("rocmlint.cli.discover", broken)
    result = cli("check")
    assert result.code == 2
    assert "internal error: RuntimeError: boom" in result.stderr
    assert "Traceback" not in result.stderr
    assert "Traceback" in cli("check", "--verbose").stderr


def test_no_command_prints_help_and_exits_2(cli):
    result = cli()
    assert result.code == 2 and "usage: rocmlint" in result.stderr


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
@pytest.mark.parametrize("selector", ["ROC999", "XYZ", "ROC1234", "ROC-1"])
def test_unknown_selector_exits_2(cli, option, selector):
    result = cli("check", f"{option}=ROC101,{selector}")
    assert result.code == 2
    assert option in result.stderr and "not a rule code or prefix" in result.stderr


def test_selectors_are_case_insensitive_on_the_command_line(cli, project):
    write_tree(project, {"a.py": HAZARD})
    assert cli("check", "--select", "roc101").code == 1


def test_select_ignore_extend_select(cli, project):
    write_tree(project, {"a.py": HAZARD + UNUSED_NOQA_FILE})
    codes = lambda *args: {line.split()[1] for line in cli("check", "--quiet", *args).lines}  # noqa: E731
    assert codes() == {"ROC101"}
    assert codes("--ignore", "ROC101") == set()
    assert codes("--ignore", "ROC1") == set()
    assert codes("--select", "ROC1", "--ignore", "ROC101") == set()
    assert codes("--ignore", "ROC1", "--extend-select", "ROC101") == {"ROC101"}  # more specific wins
    assert codes("--extend-select", "ROC101", "--ignore", "ROC101") == set()  # a tie goes to ignore
    assert codes("--extend-select", "ROC002") == {"ROC101", "ROC002"}
    assert codes("--select", "ROC0") == set()  # ROC002 is off by default: a prefix does not enable it
    assert codes("--select", "ROC002") == {"ROC002"}
    assert codes("--select", "ALL") == {"ROC101", "ROC002"}
    assert codes("--select", "ALL", "--ignore", "ROC0") == {"ROC101"}


def test_per_file_ignores_option(cli, project):
    write_tree(project, {"src/a.py": HAZARD, "tests/test_a.py": HAZARD, "tests/deep/b.py": HAZARD})
    result = cli("check", "--quiet", "--per-file-ignores", "tests/*:ROC101")
    assert [line.split(":")[0] for line in result.lines] == ["src/a.py"]
    result = cli("check", "--quiet", "--per-file-ignores", "test_*.py:ROC1", "--per-file-ignores", "b.py:ALL")
    assert [line.split(":")[0] for line in result.lines] == ["src/a.py"]


@pytest.mark.parametrize("value", ["tests/*", "tests/*:", ":ROC101", "tests/*:ROC999"])
def test_bad_per_file_ignores_option_exits_2(cli, value):
    result = cli("check", f"--per-file-ignores={value}")
    assert result.code == 2 and "per-file-ignores" in result.stderr


def test_bad_output_format_exits_2(cli):
    result = cli("check", "--output-format", "xml")
    assert result.code == 2 and "invalid choice" in result.stderr


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_every_output_format_runs(cli, project, output_format):
    write_tree(project, {"a.py": HAZARD})
    result = cli("check", "--output-format", output_format)
    assert result.code == 1
    assert "ROC101" in result.stdout


# --- text output -------------------------------------------------------------------------------------


def test_text_line_format_and_summary(cli, project):
    write_tree(project, {"pkg/a.py": HAZARD, "b.py": CLEAN})
    result = cli("check")
    assert len(result.lines) == 3
    assert re.fullmatch(
        rf"pkg/a\.py:{HAZARD_LINE}:{HAZARD_COLUMN}: ROC101 \[\*\] torch\.compile mode .+", result.lines[0]
    )
    assert result.lines[1:] == ["Found 1 diagnostic (1 warning).", "[*] 1 fixable with `--fix`."]


def test_fixable_mark_and_fixable_summary(cli, project):
    write_tree(project, {"a.py": HAZARD + UNUSED_NOQA_FILE})
    result = cli("check", "--extend-select", "ROC002")
    assert result.lines == [
        result.lines[0],
        "a.py:3:8: ROC002 [*] Unused `noqa` directive (unused: ROC101)",
        "Found 2 diagnostics (1 warning, 1 info).",
        "[*] 2 fixable with `--fix`.",
    ]
    assert result.lines[0].startswith("a.py:2:22: ROC101 [*] torch.compile")


def test_quiet_leaves_out_the_summary(cli, project):
    write_tree(project, {"a.py": HAZARD})
    result = cli("check", "--quiet")
    assert len(result.lines) == 1 and result.lines[0].startswith("a.py:2:22: ROC101")
    write_tree(project, {"a.py": CLEAN})
    assert cli("check", "-q").stdout == ""


def test_statistics(cli, project):
    write_tree(project, {"a.py": HAZARD + UNUSED_NOQA_FILE, "b.py": HAZARD})
    result = cli("check", "--statistics", "--extend-select", "ROC002")
    assert result.code == 1
    assert result.lines == [
        "2\tROC101\t[*] reduce-overhead-compile",
        "1\tROC002\t[*] unused-noqa",
    ]


def test_statistics_when_clean_prints_nothing(cli, project):
    write_tree(project, {"a.py": CLEAN})
    result = cli("check", "--statistics")
    assert (result.code, result.stdout) == (0, "")


def test_paths_are_shown_relative_to_the_working_directory(cli, project, monkeypatch):
    write_tree(project, {"sub/a.py": HAZARD})
    monkeypatch.chdir(project / "sub")
    assert cli("check", "--quiet").lines[0].startswith("a.py:2:22:")
    monkeypatch.chdir(project.parent)
    assert cli("check", "--quiet", "proj").lines[0].startswith("proj/sub/a.py:2:22:")


# --- stdin -------------------------------------------------------------------------------------------


def test_stdin_without_filename_is_python_shown_as_dash(cli):
    result = cli("check", "-", stdin=HAZARD.encode())
    assert result.code == 1
    assert result.lines[0].startswith(f"-:{HAZARD_LINE}:{HAZARD_COLUMN}: ROC101 ")
    data = json.loads(cli("check", "-", "--output-format", "json", stdin=HAZARD.encode()).stdout)
    assert data[0]["filename"] == "-"


def test_stdin_filename_names_the_file_and_picks_its_config(cli, project):
    write_tree(project, {"sub/rocmlint.toml": 'ignore = ["ROC101"]\n'})
    result = cli("check", "-", "--stdin-filename", "model.py", stdin=HAZARD.encode())
    assert result.lines[0].startswith("model.py:2:22: ROC101")
    result = cli("check", "-", "--stdin-filename", "sub/model.py", stdin=HAZARD.encode())
    assert (result.code, result.stdout) == (0, "All checks passed!\n")


def test_stdin_filename_alone_reads_stdin(cli):
    result = cli("check", "--stdin-filename", "model.py", stdin=HAZARD.encode())
    assert result.code == 1 and result.lines[0].startswith("model.py:2:22: ROC101")


def test_stdin_filename_applies_per_file_ignores(cli):
    result = cli(
        "check", "-", "--stdin-filename", "tests/t.py", "--per-file-ignores", "tests/*:ROC101", stdin=HAZARD.encode()
    )
    assert result.code == 0


def test_stdin_filename_is_excluded_only_with_force_exclude(cli):
    args = ("check", "-", "--stdin-filename", "gen/model.py", "--extend-exclude", "gen")
    assert cli(*args, stdin=HAZARD.encode()).code == 1
    assert cli(*args, "--force-exclude", stdin=HAZARD.encode()).code == 0


def test_stdin_with_a_non_source_filename_warns(cli):
    result = cli("check", "-", "--stdin-filename", "notes.txt", stdin=HAZARD.encode())
    assert result.code == 0 and "notes.txt: not a Python or CUDA/C++ file" in result.stderr


def test_stdin_cannot_be_combined_with_paths(cli, project):
    write_tree(project, {"a.py": CLEAN})
    result = cli("check", "-", "a.py", stdin=HAZARD.encode())
    assert result.code == 2 and "stdin" in result.stderr


def test_stdin_with_crlf_and_a_bom(cli):
    data = b"\xef\xbb\xbf" + HAZARD.replace("\n", "\r\n").encode()
    result = cli("check", "-", "--stdin-filename", "m.py", stdin=data)
    assert result.lines[0].startswith("m.py:2:22: ROC101")


# --- rule / rules ------------------------------------------------------------------------------------


def test_rule_page(cli):
    result = cli("rule", "ROC101")
    assert result.code == 0
    assert result.lines[0] == "# reduce-overhead-compile (ROC101)"
    assert "## What it does" in result.stdout and "## Why is this bad on ROCm?" in result.stdout
    assert cli("rule", "reduce-overhead-compile").stdout == result.stdout
    assert cli("rule", "roc101").stdout == result.stdout


def test_unknown_rule_exits_2(cli):
    result = cli("rule", "ROC999")
    assert result.code == 2 and "unknown rule" in result.stderr


def test_rules_table(cli):
    result = cli("rules")
    assert result.code == 0
    header = result.lines[0].split()
    assert header == ["code", "name", "language", "severity", "fix", "default"]
    rows = {line.split()[0]: line.split() for line in result.lines[1:]}
    assert rows["ROC101"] == ["ROC101", "reduce-overhead-compile", "Python", "warning", "safe", "on"]
    assert rows["ROC002"][1] == "unused-noqa" and rows["ROC002"][-1] == "off"
    assert rows["ROC001"][-1] == "on"
    assert list(rows) == sorted(rows) == [rule.code for rule in all_rules()]


def test_rules_json(cli):
    rows = json.loads(cli("rules", "--output-format", "json").stdout)
    by_code = {row["code"]: row for row in rows}
    assert by_code["ROC002"] == {
        "code": "ROC002",
        "name": "unused-noqa",
        "language": "any",
        "severity": "info",
        "fix": "safe",
        "enabled_by_default": False,
        "url": "https://github.com/rocmlint/rocmlint/blob/main/docs/rules/ROC002.md",
    }


def test_missing_path_warns_and_goes_on(cli, project):
    write_tree(project, {"a.py": HAZARD})
    result = cli("check", "--quiet", "missing.py", "a.py")
    assert result.code == 1
    assert "rocmlint: warning: missing.py: no such file or directory" in result.stderr
    assert len(result.lines) == 1


def test_paths_default_to_the_working_directory(cli, project):
    write_tree(project, {"a/b/c.py": HAZARD})
    assert cli("check", "--quiet").lines == cli("check", "--quiet", ".").lines
    assert cli("check", "--quiet").lines[0].startswith("a/b/c.py:")


def test_explicit_file_and_folder(cli, project):
    write_tree(project, {"a/x.py": HAZARD, "b/y.py": HAZARD, "c/z.py": HAZARD})
    result = cli("check", "--quiet", "a/x.py", "c")
    assert [line.split(":")[0] for line in result.lines] == ["a/x.py", "c/z.py"]


def test_output_is_sorted_and_stable(cli, project):
    write_tree(project, {f"m{i}/f{j}.py": HAZARD * 2 for i in (3, 1, 2) for j in (2, 1)})
    first = cli("check", "--quiet").lines
    assert first == cli("check", "--quiet").lines
    keys = [(line.split(":")[0], int(line.split(":")[1])) for line in first]
    assert keys == sorted(keys) and len(keys) == 12


def test_config_and_isolated_together_exit_2(cli, project):
    write_tree(project, {"rocmlint.toml": ""})
    result = cli("check", "--config", "rocmlint.toml", "--isolated")
    assert result.code == 2 and "--isolated" in result.stderr


def test_verbose_is_silent_when_nothing_crashed(cli, project):
    write_tree(project, {"a.py": HAZARD})
    assert cli("check", "--verbose").stderr == ""


def test_directory_named_like_a_file(cli, project: Path):
    (project / "weird.py").mkdir()
    write_tree(project, {"weird.py/inner.py": HAZARD})
    assert cli("check", "--quiet").lines[0].startswith("weird.py/inner.py:2:22")
