"""Which files are checked: extensions, skipped folders, .gitignore, excludes, explicit paths, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import HAZARD, write_tree

from rocmlint.config import ConfigResolver, Overrides
from rocmlint.discovery import discover, matches_any

SOURCE_FILES = [
    "a.py",
    "a.pyi",
    "k.cu",
    "k.cuh",
    "k.cpp",
    "k.cc",
    "k.cxx",
    "k.h",
    "k.hpp",
    "k.hh",
    "k.inl",
    "k.hu",
    "k.hip",
    "UP.PY",
    "K.CU",
]
OTHER_FILES = ["notes.txt", "a.pyc", "setup.cfg", "Makefile", "k.c", "a.py~", "a.ipynb", "py"]


def found(project: Path, *paths: str, overrides: Overrides | None = None) -> list[str]:
    warnings: list[str] = []
    resolver = ConfigResolver(overrides or Overrides(), cwd=project)
    candidates = discover([Path(p) for p in (paths or (".",))], resolver, warnings.append)
    return [Path(os.path.relpath(c.path, project)).as_posix() for c in candidates]


def test_python_and_cuda_files_are_found(project):
    write_tree(project, {name: "" for name in SOURCE_FILES + OTHER_FILES})
    assert sorted(found(project)) == sorted(SOURCE_FILES)


@pytest.mark.parametrize(
    "folder",
    [
        ".git",
        ".hg",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "pkg.egg-info",
        "third_party",
        "_build",
    ],
)
def test_vcs_virtualenv_build_and_cache_folders_are_skipped(project, folder):
    write_tree(project, {f"{folder}/x.py": HAZARD, f"src/{folder}/y.py": HAZARD, "src/z.py": HAZARD})
    assert found(project) == ["src/z.py"]


def test_any_folder_with_pyvenv_cfg_is_a_virtualenv(project):
    write_tree(project, {"myenv/pyvenv.cfg": "home = /usr\n", "myenv/lib/m.py": HAZARD, "src/a.py": HAZARD})
    assert found(project) == ["src/a.py"]


def test_gitignore_is_honoured(project):
    write_tree(
        project,
        {
            ".gitignore": "generated/\n*_pb2.py\n/top_only.py\n",
            "generated/a.py": "",
            "src/model_pb2.py": "",
            "src/keep.py": "",
            "top_only.py": "",
            "src/top_only.py": "",
        },
    )
    assert found(project) == ["src/keep.py", "src/top_only.py"]


def test_nested_gitignore(project):
    write_tree(
        project,
        {
            ".gitignore": "*.gen.py\n",
            "a.gen.py": "",
            "sub/.gitignore": "local/\nonly_here.py\n!keep.gen.py\n",
            "sub/local/x.py": "",
            "sub/only_here.py": "",
            "sub/keep.gen.py": "",
            "sub/other.gen.py": "",
            "only_here.py": "",
            "local/y.py": "",
        },
    )
    assert sorted(found(project)) == ["local/y.py", "only_here.py", "sub/keep.gen.py"]


def test_gitignore_folder_wildcards_and_reinclusion(project):
    write_tree(project, {".gitignore": "*/\n!keep/\n", "sub/a.py": "", "keep/b.py": "", "top.py": ""})
    assert sorted(found(project)) == ["keep/b.py", "top.py"]


def test_a_gitignore_line_git_cannot_read_is_dropped_as_git_drops_it(project):
    # A trailing backslash escapes nothing (a .gitignore written on Windows): git matches nothing with the line,
    # pathspec raises on it; the other lines still apply and the run goes on.
    write_tree(project, {".gitignore": "env\\\nbuild/\n", "env/a.py": "", "build/b.py": "", "c.py": ""})
    assert sorted(found(project)) == ["c.py", "env/a.py"]


def test_gitignore_outside_the_repository_is_not_read(tmp_path, monkeypatch):
    (tmp_path / ".gitignore").write_text("*.py\n")
    repo = tmp_path / "repo"
    write_tree(repo, {".git/HEAD": "", "a.py": ""})
    monkeypatch.chdir(repo)
    assert found(repo) == ["a.py"]


def test_respect_gitignore_false(project):
    write_tree(
        project, {".gitignore": "ignored.py\n", "ignored.py": "", "rocmlint.toml": "respect-gitignore = false\n"}
    )
    assert found(project) == ["ignored.py"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("gen", ["gen.py", "src/a.py", "src/x/gen.py"]),  # a name: folders called gen anywhere
        ("gen.py", ["gen/c.py", "src/a.py", "src/gen/b.py"]),  # a name: files called gen.py anywhere
        ("*.py", []),
        ("src/gen", ["gen.py", "gen/c.py", "src/a.py", "src/x/gen.py"]),  # a relative path: that folder only
        ("src/gen/", ["gen.py", "gen/c.py", "src/a.py", "src/x/gen.py"]),
        ("./src/gen", ["gen.py", "gen/c.py", "src/a.py", "src/x/gen.py"]),
        ("src/*/gen.py", ["gen.py", "gen/c.py", "src/a.py", "src/gen/b.py"]),
        ("src", ["gen.py", "gen/c.py"]),
    ],
)
def test_exclude_patterns(project, pattern, expected):
    write_tree(project, {"gen.py": "", "gen/c.py": "", "src/a.py": "", "src/gen/b.py": "", "src/x/gen.py": ""})
    assert sorted(found(project, overrides=Overrides(extend_exclude=(pattern,)))) == expected


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(project):
    write_tree(project, {"build/a.py": "", "vendor/b.py": "", "c.py": ""})
    assert found(project) == ["c.py", "vendor/b.py"]
    assert found(project, overrides=Overrides(exclude=("vendor",))) == ["c.py", "build/a.py"]
    assert found(project, overrides=Overrides(extend_exclude=("vendor",))) == ["c.py"]


def test_exclude_from_config_is_relative_to_the_config_folder(project):
    write_tree(project, {"sub/rocmlint.toml": 'extend-exclude = ["gen/*.py"]\n', "sub/gen/a.py": "", "gen/b.py": ""})
    assert found(project) == ["gen/b.py"]


def test_explicit_files_are_checked_even_when_excluded(project):
    write_tree(project, {".gitignore": "ignored.py\n", "ignored.py": "", "build/x.py": "", "gen.py": ""})
    overrides = Overrides(extend_exclude=("gen.py",))
    assert found(project, "ignored.py", "build/x.py", "gen.py", overrides=overrides) == [
        "ignored.py",
        "build/x.py",
        "gen.py",
    ]
    forced = Overrides(extend_exclude=("gen.py",), force_exclude=True)
    assert found(project, "ignored.py", "build/x.py", "gen.py", "./build", overrides=forced) == []


def test_explicit_folder_is_walked_even_when_excluded(project):
    write_tree(project, {"build/x.py": ""})
    assert found(project, "build") == ["build/x.py"]
    assert found(project, "build", overrides=Overrides(force_exclude=True)) == []


def test_force_exclude_through_the_cli(cli, project):
    write_tree(project, {"build/x.py": HAZARD, "gen/y.py": HAZARD})
    assert cli("check", "build/x.py", "gen/y.py", "--extend-exclude", "gen").code == 1
    result = cli("check", "build/x.py", "gen/y.py", "--extend-exclude", "gen", "--force-exclude")
    assert (result.code, result.stdout) == (0, "All checks passed!\n")


def test_exclude_through_the_cli(cli, project):
    write_tree(project, {"a/x.py": HAZARD, "b/y.py": HAZARD})
    result = cli("check", "--quiet", "--exclude", "a")
    assert [line.split(":")[0] for line in result.lines] == ["b/y.py"]
    result = cli("check", "--quiet", "--extend-exclude", "b,a/x.py")
    assert result.lines == []


def test_order_is_deterministic(project):
    names = ["b/z.py", "b/a.py", "a.py", "B.py", "c/d/e.py", "c/a.py", "z.py", "a/b.cu"]
    write_tree(project, {name: "" for name in names})
    first = found(project)
    assert first == found(project)
    assert first == ["B.py", "a.py", "z.py", "a/b.cu", "b/a.py", "b/z.py", "c/a.py", "c/d/e.py"]


def test_same_file_twice_is_checked_once(project):
    write_tree(project, {"a.py": ""})
    assert found(project, "a.py", "./a.py", ".", str(project / "a.py")) == ["a.py"]


def test_symlink_loop_does_not_hang(project):
    write_tree(project, {"pkg/a.py": ""})
    os.symlink(project, project / "pkg" / "loop")
    os.symlink(project / "pkg", project / "pkg" / "self")
    os.symlink("nowhere.py", project / "broken.py")
    os.symlink("cycle.py", project / "cycle.py")
    assert found(project) == ["pkg/a.py"]


def test_symlinked_file_is_checked(project):
    write_tree(project, {"real/a.py": ""})
    os.symlink(project / "real" / "a.py", project / "link.py")
    assert found(project) == ["link.py", "real/a.py"]


def test_missing_path_is_a_warning(project):
    warnings: list[str] = []
    resolver = ConfigResolver(Overrides(), cwd=project)
    assert list(discover([Path("missing"), Path("gone.py")], resolver, warnings.append)) == []
    assert warnings == ["missing: no such file or directory", "gone.py: no such file or directory"]


def test_explicit_non_source_file_is_a_warning(cli, project):
    write_tree(project, {"notes.txt": HAZARD})
    result = cli("check", "notes.txt")
    assert result.code == 0
    assert "notes.txt: not a Python or CUDA/C++ file, skipped" in result.stderr


def test_unreadable_folder_is_a_warning(project, monkeypatch):
    # chmod 0 does not stop root (CI runs as root), so the refusal is simulated where the walk reads.
    write_tree(project, {"locked/a.py": HAZARD, "open/b.py": HAZARD})
    real_scandir = os.scandir

    def scandir(path):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    warnings: list[str] = []
    found = [c.path.name for c in discover([Path(".")], ConfigResolver(Overrides(), cwd=project), warnings.append)]
    assert found == ["b.py"]
    assert warnings == ["locked: cannot read folder: Permission denied"]


def test_each_file_gets_its_closest_settings(project):
    write_tree(project, {"a.py": "", "sub/rocmlint.toml": "", "sub/b.py": ""})
    resolver = ConfigResolver(Overrides(), cwd=project)
    settings = {c.path.name: c.settings.config_path for c in discover([Path(".")], resolver, print)}
    assert settings == {"a.py": None, "b.py": project / "sub" / "rocmlint.toml"}


def test_matches_any_name_and_relative_forms(tmp_path):
    root = tmp_path
    path = tmp_path / "src" / "gen" / "a_pb2.py"
    assert matches_any(path, ("*_pb2.py",), root)
    assert matches_any(path, ("src/gen/*",), root)
    assert matches_any(path, ("src",), root) is False  # a name pattern looks at this path's own name
    assert matches_any(path, ("other/*", "src/gen"), root)  # a folder pattern covers what is below it
    assert matches_any(path, ("src/ge",), root) is False
    assert matches_any(tmp_path / "src" / "gen", ("src/gen",), root)
    assert matches_any(path, (), root) is False
    assert matches_any(Path("/elsewhere/src/gen/a.py"), ("src/gen/*",), root) is False


@pytest.mark.parametrize("argument", [".", "./src", "src/", "src/../src", "ABSOLUTE", "./src/pkg/a.py"])
def test_a_candidate_is_shown_as_its_path_would_be(project, argument):
    """The walk builds the shown paths as strings; they must be what str() of the Path shows (the
    cache compares them with the paths reports carry)."""
    write_tree(project, {"src/pkg/a.py": "", "src/pkg/sub/b.cu": "", "src/c.py": ""})
    path = project / "src" if argument == "ABSOLUTE" else Path(argument)
    candidates = list(discover([path], ConfigResolver(Overrides(), cwd=project), lambda message: None))
    assert candidates
    assert [c.display for c in candidates] == [str(c.path) for c in candidates]
    assert [c.absolute for c in candidates] == [os.path.abspath(c.path) for c in candidates]
