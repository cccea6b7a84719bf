"""Configuration files: which one applies, every key's validation, errors, --config and --isolated,
and ruff-style rule selection across the file and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import HAZARD, write_tree

from rocmlint.config import ConfigError, ConfigResolver, Overrides, Settings, load_config

UNUSED_NOQA_LINE = "y = 2  # noqa: ROC101\n"


def flagged(cli, *args: str) -> list[str]:
    """The files with a diagnostic, as `rocmlint check --quiet` shows them."""
    result = cli("check", "--quiet", *args)
    assert result.code in (0, 1), result.stderr
    return sorted({line.split(":")[0] for line in result.lines})


def enabled(settings: Settings, *codes: str) -> set[str]:
    return {code for code in codes if code in settings.enabled_codes}


# --- which file applies ------------------------------------------------------------------------------


def test_closest_config_wins_in_nested_projects(cli, project):
    write_tree(
        project,
        {
            "rocmlint.toml": 'ignore = ["ROC101"]\n',
            "a.py": HAZARD,
            "inner/pyproject.toml": '[tool.rocmlint]\nselect = ["ROC1"]\n',
            "inner/b.py": HAZARD,
            "inner/deeper/c.py": HAZARD,
            "inner/deeper/plain/rocmlint.toml": "",  # an empty config: the defaults, nothing inherited
            "inner/deeper/plain/d.py": HAZARD,
            "other/e.py": HAZARD,
        },
    )
    assert flagged(cli) == ["inner/b.py", "inner/deeper/c.py", "inner/deeper/plain/d.py"]


def test_configs_are_not_merged(cli, project):
    write_tree(
        project,
        {
            "rocmlint.toml": 'ignore = ["ROC101"]\n',
            "sub/rocmlint.toml": 'extend-exclude = ["nothing"]\n',
            "sub/a.py": HAZARD,
        },
    )
    assert flagged(cli) == ["sub/a.py"]


@pytest.mark.parametrize(
    ("files", "flagged_expected"),
    [
        # .rocmlint.toml > rocmlint.toml > pyproject.toml within one folder.
        ({".rocmlint.toml": 'ignore = ["ROC101"]\n', "rocmlint.toml": 'select = ["ROC101"]\n'}, []),
        ({".rocmlint.toml": 'select = ["ROC101"]\n', "rocmlint.toml": 'ignore = ["ROC101"]\n'}, ["a.py"]),
        ({"rocmlint.toml": 'ignore = ["ROC101"]\n', "pyproject.toml": '[tool.rocmlint]\nselect = ["ROC101"]\n'}, []),
        (
            {"rocmlint.toml": 'select = ["ROC101"]\n', "pyproject.toml": '[tool.rocmlint]\nignore = ["ROC101"]\n'},
            ["a.py"],
        ),
        ({".rocmlint.toml": 'ignore = ["ROC101"]\n', "pyproject.toml": '[tool.rocmlint]\nselect = ["ROC101"]\n'}, []),
    ],
    ids=["dot-over-plain", "dot-over-plain-2", "plain-over-pyproject", "plain-over-pyproject-2", "dot-over-pyproject"],
)
def test_precedence_within_one_folder(cli, project, files, flagged_expected):
    write_tree(project, {**files, "a.py": HAZARD})
    assert flagged(cli) == flagged_expected


def test_pyproject_without_our_table_is_skipped(cli, project):
    write_tree(
        project,
        {
            "rocmlint.toml": 'ignore = ["ROC101"]\n',
            "pkg/pyproject.toml": '[project]\nname = "pkg"\n[tool.ruff]\nline-length = 100\n',
            "pkg/a.py": HAZARD,
        },
    )
    assert flagged(cli) == []


def test_broken_pyproject_that_is_not_ours_is_skipped(cli, project):
    write_tree(project, {"pyproject.toml": "[project\nname = 1\n", "a.py": HAZARD})
    assert flagged(cli) == ["a.py"]


def test_broken_pyproject_with_our_subtable_is_reported(cli, project):
    write_tree(project, {"pyproject.toml": '[tool.rocmlint.per-file-ignores]\n"a.py" = [\n', "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2 and "pyproject.toml" in result.stderr


def test_patterns_are_relative_to_the_config_folder(cli, project):
    write_tree(
        project,
        {
            "sub/rocmlint.toml": '[per-file-ignores]\n"gen/*" = ["ROC101"]\n',
            "sub/gen/a.py": HAZARD,
            "sub/src/gen/b.py": HAZARD,
        },
    )
    assert flagged(cli) == ["sub/src/gen/b.py"]


# --- errors ------------------------------------------------------------------------------------------


def test_unknown_key_names_file_and_key(cli, project):
    write_tree(project, {"sub/rocmlint.toml": 'selct = ["ROC101"]\n', "sub/a.py": HAZARD})
    result = cli("check")
    assert result.code == 2
    assert str(project / "sub" / "rocmlint.toml") in result.stderr
    assert "unknown key 'selct'" in result.stderr and "did you mean 'select'" in result.stderr
    assert result.stdout == ""


def test_unknown_key_in_pyproject(cli, project):
    write_tree(project, {"pyproject.toml": "[tool.rocmlint]\nline-length = 3\n", "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2
    assert "pyproject.toml: [tool.rocmlint]: unknown key 'line-length'" in result.stderr


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('select = "ROC101"', "select"),
        ("select = [101]", "select"),
        ('select = ["ROC999"]', "select"),
        ('select = ["roc101"]', "select"),
        ('extend-select = ["NOPE"]', "extend-select"),
        ('ignore = ["ROC1x"]', "ignore"),
        ('per-file-ignores = ["a.py"]', "per-file-ignores"),
        ('per-file-ignores = { "a.py" = "ROC101" }', "per-file-ignores.a.py"),
        ('per-file-ignores = { "a.py" = ["ROC999"] }', "per-file-ignores.a.py"),
        ('exclude = "build"', "exclude"),
        ("extend-exclude = [1]", "extend-exclude"),
        ('respect-gitignore = "yes"', "respect-gitignore"),
        ("respect-gitignore = 1", "respect-gitignore"),
        ('rocm-guards = ["utils.is-rocm"]', "rocm-guards"),
        ('rocm-guards = "IS_ROCM"', "rocm-guards"),
        ('rocm-macros = ["1_BAD"]', "rocm-macros"),
        ('portable-macros = ["has space"]', "portable-macros"),
        ('target-archs = ["sm_80"]', "target-archs"),
        ('target-archs = "gfx90a"', "target-archs"),
    ],
)
def test_bad_values_name_file_and_key(tmp_path, body, key):
    path = tmp_path / "rocmlint.toml"
    path.write_text(body + "\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    message = str(error.value)
    assert message.startswith(str(path)) and f"'{key}'" in message


def test_good_values_are_read(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(
        "[tool.rocmlint]\n"
        'select = ["ROC1", "ROC001"]\n'
        'extend-select = ["ROC002"]\n'
        'ignore = ["ROC101"]\n'
        'exclude = ["vendor"]\n'
        'extend-exclude = ["gen/*.py"]\n'
        "respect-gitignore = false\n"
        'rocm-guards = ["utils.IS_ROCM", "on_amd"]\n'
        'rocm-macros = ["USE_ROCM"]\n'
        'portable-macros = ["MY_WARP_SIZE"]\n'
        'target-archs = ["gfx90a", "gfx942", "gfx90a:xnack+"]\n'
        "[tool.rocmlint.per-file-ignores]\n"
        '"tests/*" = ["ROC1"]\n'
    )
    settings = load_config(path)
    assert settings.root == tmp_path.resolve() and settings.config_path == path
    assert settings.select == ("ROC1", "ROC001") and settings.extend_select == ("ROC002",)
    assert settings.ignore == ("ROC101",)
    assert settings.exclude_patterns == ("vendor", "gen/*.py")
    assert settings.respect_gitignore is False
    assert settings.rocm_guards == ("utils.IS_ROCM", "on_amd")
    assert settings.rocm_macros == ("USE_ROCM",) and settings.portable_macros == ("MY_WARP_SIZE",)
    assert settings.target_archs == ("gfx90a", "gfx942", "gfx90a:xnack+")
    assert settings.per_file_ignores == (("tests/*", ("ROC1",)),)
    assert enabled(settings, "ROC001", "ROC002", "ROC101") == {"ROC001", "ROC002"}


def test_bad_value_exits_2_through_the_cli(cli, project):
    write_tree(project, {"rocmlint.toml": 'target-archs = ["sm_90"]\n', "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2
    assert "rocmlint.toml: 'target-archs' has 'sm_90'" in result.stderr


@pytest.mark.parametrize("name", ["rocmlint.toml", ".rocmlint.toml", "pyproject.toml"])
def test_malformed_toml_names_file_and_line(cli, project, name):
    header = "[tool.rocmlint]\n" if name == "pyproject.toml" else ""
    write_tree(project, {name: header + 'select = ["ROC101"]\nignore = [\n"ROC1"\nexclude = 3\n', "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2
    assert str(project / name) in result.stderr
    assert "line" in result.stderr and "invalid TOML" in result.stderr
    line = 5 if header else 4
    assert f"line {line}" in result.stderr


def test_malformed_toml_exits_2_in_a_real_process(run_cli, project):
    write_tree(project, {"rocmlint.toml": "select = [\n", "a.py": HAZARD})
    result = run_cli("check")
    assert result.code == 2
    assert "rocmlint.toml" in result.stderr and "line" in result.stderr
    assert "Traceback" not in result.stderr


# --- --config and --isolated -------------------------------------------------------------------------


def test_config_option_applies_to_every_file(cli, project):
    write_tree(
        project,
        {
            "ci/strict.toml": 'extend-select = ["ROC002"]\n',
            "sub/rocmlint.toml": 'ignore = ["ROC101"]\n',
            "sub/a.py": HAZARD + UNUSED_NOQA_LINE,
            "b.py": HAZARD,
        },
    )
    result = cli("check", "--quiet", "--config", "ci/strict.toml")
    codes = sorted((line.split(":")[0], line.split()[1]) for line in result.lines)
    assert codes == [("b.py", "ROC101"), ("sub/a.py", "ROC002"), ("sub/a.py", "ROC101")]


def test_config_option_with_pyproject(cli, project):
    write_tree(project, {"conf/pyproject.toml": '[tool.rocmlint]\nignore = ["ROC1"]\n', "a.py": HAZARD})
    assert flagged(cli, "--config", "conf/pyproject.toml") == []


def test_config_option_pyproject_without_table_is_an_error(cli, project):
    write_tree(project, {"pyproject.toml": '[project]\nname = "x"\n', "a.py": HAZARD})
    result = cli("check", "--config", "pyproject.toml")
    assert result.code == 2 and "has no [tool.rocmlint] table" in result.stderr


def test_config_option_missing_file(cli, project):
    result = cli("check", "--config", "nope.toml")
    assert result.code == 2 and "nope.toml" in result.stderr


def test_isolated_ignores_every_config_file(cli, project):
    write_tree(
        project,
        {"rocmlint.toml": 'ignore = ["ROC101"]\n', "sub/rocmlint.toml": "bogus = 1\n", "sub/a.py": HAZARD},
    )
    assert cli("check").code == 2  # the broken file is read without --isolated
    assert flagged(cli, "--isolated") == ["sub/a.py"]
    assert flagged(cli, "--isolated", "--ignore", "ROC101") == []


def test_resolver_caches_and_finds_the_closest(project):
    write_tree(project, {"rocmlint.toml": "", "a/b/rocmlint.toml": 'ignore = ["ROC101"]\n'})
    resolver = ConfigResolver(Overrides(), cwd=project)
    assert resolver.for_file(project / "x.py").config_path == project / "rocmlint.toml"
    assert resolver.for_file(project / "a" / "c.py").config_path == project / "rocmlint.toml"
    deep = resolver.for_file(project / "a" / "b" / "c" / "d.py")
    assert deep.config_path == project / "a" / "b" / "rocmlint.toml"
    assert resolver.for_folder(project / "a" / "b" / "c") is deep
    assert resolver.default().config_path == project / "rocmlint.toml"


def test_resolver_without_any_config_uses_defaults_rooted_at_cwd(tmp_path):
    (tmp_path / ".git").mkdir()
    resolver = ConfigResolver(Overrides(), cwd=tmp_path)
    settings = resolver.for_file(tmp_path / "a.py")
    assert settings.config_path is None and settings.root == tmp_path.resolve()


# --- per-file-ignores --------------------------------------------------------------------------------


def test_per_file_ignores_in_config(cli, project):
    write_tree(
        project,
        {
            "pyproject.toml": (
                "[tool.rocmlint]\n"
                "[tool.rocmlint.per-file-ignores]\n"
                '"tests/*" = ["ROC101"]\n'
                '"conftest.py" = ["ROC1"]\n'
                '"scripts/*.py" = ["ALL"]\n'
            ),
            "tests/test_a.py": HAZARD,
            "tests/deep/test_b.py": HAZARD,
            "src/conftest.py": HAZARD,
            "scripts/run.py": HAZARD,
            "src/model.py": HAZARD,
        },
    )
    assert flagged(cli) == ["src/model.py"]


def test_per_file_ignores_config_and_cli_add_up(cli, project):
    write_tree(
        project,
        {"rocmlint.toml": '[per-file-ignores]\n"a.py" = ["ROC101"]\n', "a.py": HAZARD, "b.py": HAZARD, "c.py": HAZARD},
    )
    assert flagged(cli) == ["b.py", "c.py"]
    assert flagged(cli, "--per-file-ignores", "b.py:ROC101") == ["c.py"]


def test_per_file_ignores_also_silence_unused_noqa(cli, project):
    write_tree(
        project,
        {
            "rocmlint.toml": '[per-file-ignores]\n"a.py" = ["ROC002"]\n',
            "a.py": UNUSED_NOQA_LINE,
            "b.py": UNUSED_NOQA_LINE,
        },
    )
    assert flagged(cli, "--extend-select", "ROC002") == ["b.py"]


# --- selection semantics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("select", "extend_select", "ignore", "expected"),
    [
        (None, (), (), {"ROC001", "ROC101", "ROC900"}),
        (("ROC0",), (), (), {"ROC001"}),  # ROC002 is off by default: a prefix is not enough
        (("ROC00",), (), (), {"ROC001"}),
        (("ROC002",), (), (), {"ROC002"}),
        (("ALL",), (), (), {"ROC001", "ROC002", "ROC101", "ROC900"}),
        (None, ("ROC002",), (), {"ROC001", "ROC002", "ROC101", "ROC900"}),
        (None, ("ROC0",), (), {"ROC001", "ROC101", "ROC900"}),
        (None, (), ("ROC1",), {"ROC001", "ROC900"}),
        (("ROC1",), (), ("ROC101",), set()),
        (("ROC101",), (), ("ROC1",), {"ROC101"}),  # more specific select wins
        (("ROC101",), (), ("ROC101",), set()),  # a tie goes to ignore
        (("ALL",), (), ("ROC",), set()),
        (("ROC",), (), ("ALL",), {"ROC001", "ROC101", "ROC900"}),  # ROC is more specific than ALL
        (("ROC",), ("ROC002",), ("ROC00",), {"ROC002", "ROC101", "ROC900"}),
    ],
)
def test_selection_in_one_layer(project, select, extend_select, ignore, expected):
    settings = Settings(root=project, select=select, extend_select=extend_select, ignore=ignore)
    assert enabled(settings, "ROC001", "ROC002", "ROC101", "ROC900") == expected


@pytest.mark.parametrize(
    ("config", "cli_options", "expected"),
    [
        # The command line is a layer above the file, as in ruff: its --select starts over ...
        ('ignore = ["ROC101"]', Overrides(select=("ROC101",)), {"ROC101"}),
        ('extend-select = ["ROC002"]', Overrides(select=("ROC101",)), {"ROC101"}),
        # ... and its --extend-select / --ignore adjust what the file enabled.
        ('select = ["ROC1"]\nignore = ["ROC101"]', Overrides(extend_select=("ROC101",)), {"ROC101"}),
        ('select = ["ROC101"]', Overrides(ignore=("ROC1",)), set()),
        ('select = ["ROC101", "ROC001"]', Overrides(ignore=("ROC1",), extend_select=("ROC101",)), {"ROC001", "ROC101"}),
        ('select = ["ROC101"]', Overrides(extend_select=("ROC002",)), {"ROC002", "ROC101"}),
        ('select = ["ROC101"]', Overrides(ignore=("ALL",), extend_select=("ROC0",)), {"ROC001"}),
        ('ignore = ["ROC1"]', Overrides(), {"ROC001", "ROC900"}),
    ],
)
def test_command_line_is_a_layer_above_the_file(project, config, cli_options, expected):
    write_tree(project, {"rocmlint.toml": config + "\n"})
    settings = ConfigResolver(cli_options, cwd=project).for_file(project / "a.py")
    assert enabled(settings, "ROC001", "ROC002", "ROC101", "ROC900") == expected


def test_command_line_select_beats_a_configured_ignore(cli, project):
    write_tree(project, {"rocmlint.toml": 'ignore = ["ROC101"]\n', "a.py": HAZARD})
    assert flagged(cli) == []
    assert flagged(cli, "--select", "ROC101") == ["a.py"]
    assert flagged(cli, "--extend-select", "ROC101") == ["a.py"]


def test_exclude_options_override_and_extend(project):
    write_tree(project, {"rocmlint.toml": 'exclude = ["vendor"]\nextend-exclude = ["gen"]\n'})
    resolver = ConfigResolver(Overrides(exclude=("other",), extend_exclude=("more",)), cwd=project)
    assert resolver.for_file(project / "a.py").exclude_patterns == ("other", "gen", "more")
    resolver = ConfigResolver(Overrides(extend_exclude=("more",)), cwd=project)
    assert resolver.for_file(project / "a.py").exclude_patterns == ("vendor", "gen", "more")


def test_default_excludes_survive_extend_exclude(project):
    settings = ConfigResolver(Overrides(extend_exclude=("gen",)), cwd=project).default()
    assert "build" in settings.exclude_patterns and "gen" in settings.exclude_patterns


def test_settings_roots(project: Path):
    write_tree(project, {"sub/rocmlint.toml": ""})
    resolver = ConfigResolver(Overrides(), isolated=True, cwd=project)
    assert resolver.for_file(project / "sub" / "a.py").root == project.resolve()
    resolver = ConfigResolver(Overrides(), config_path=project / "sub" / "rocmlint.toml", cwd=project)
    assert resolver.for_file(project / "a.py").root == (project / "sub").resolve()


def test_config_that_is_not_utf8_names_file_and_line(cli, project):
    write_tree(project, {"rocmlint.toml": b'select = ["ROC101"]\n# caf\xe9\n', "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2
    assert "rocmlint.toml: invalid TOML: not UTF-8 text (at line 2)" in result.stderr


def test_unclosed_construct_names_the_last_line(cli, project):
    write_tree(project, {"rocmlint.toml": 'ignore = ["ROC101"]\nselect = [\n  "ROC1",\n', "a.py": HAZARD})
    result = cli("check")
    assert result.code == 2 and "line 3" in result.stderr


@pytest.mark.parametrize("body", ["[tool]\nrocmlint = 3\n", 'tool = "rocmlint"\n'])
def test_pyproject_with_a_strange_tool_entry(cli, project, body):
    write_tree(project, {"pyproject.toml": body, "a.py": HAZARD})
    result = cli("check")
    if "rocmlint = 3" in body:
        assert result.code == 2 and "'tool.rocmlint' must be a table" in result.stderr
    else:
        assert result.code == 1  # not our table: skipped


def test_non_utf8_pyproject_that_is_not_ours_is_skipped(cli, project):
    write_tree(project, {"pyproject.toml": b'[project]\nname = "caf\xe9"\n', "a.py": HAZARD})
    assert cli("check").code == 1
