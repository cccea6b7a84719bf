"""The C++ project model's speed shortcuts give what the work they spare gave (docs/performance.md, eleventh round)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rocmlint.cuda import build_files, project
from rocmlint.cuda.project import _folder_under, _read_tree, _with_texts

REPO = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (REPO / "fixtures").iterdir() if p.is_dir())


@pytest.mark.parametrize("root", FIXTURES, ids=lambda p: p.name)
def test_a_tree_read_without_texts_then_given_them_is_the_tree_read_with_them(root: Path) -> None:
    assert _with_texts(_read_tree(root, texts=False)) == _read_tree(root)


def test_a_model_built_after_a_build_question_is_the_model_built_first(tmp_path: Path) -> None:
    root = next(p for p in FIXTURES if any(p.rglob("*.cu")))
    project.forget_projects()
    try:
        first = project.project_for(root)
        project.forget_projects()
        project.nvidia_only_natives_for(root)  # reads the tree without its sources' texts
        assert Path(os.path.abspath(root)) in project._BUILDS
        assert project.project_for(root) == first
    finally:
        project.forget_projects()


@pytest.mark.parametrize(
    "root", ["/work/tree", "/work/tree/", "tree", ".", "/", "a/../tree", str(Path(__file__).parent)]
)
def test_a_folder_under_the_root_is_its_relative_path(root: str) -> None:
    folders = [root, os.path.join(root, "sub"), os.path.join(root, "build", "x"), os.path.join(root, "a_setup")]
    for folder in folders:
        assert _folder_under(folder, root) == os.path.relpath(folder, root)


@pytest.mark.parametrize("root", FIXTURES, ids=lambda p: p.name)
def test_a_tree_read_with_cmake_commands_split_once_is_the_tree_read_splitting_them_each_time(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_files.cmake_commands.cache_clear()
    remembered = _read_tree(root, texts=False)
    assert build_files.cmake_commands.cache_info().hits or not build_files.cmake_commands.cache_info().misses
    monkeypatch.setattr(build_files, "cmake_commands", lambda text: tuple(build_files._split_cmake_commands(text)))
    assert _read_tree(root, texts=False) == remembered


def test_cmake_commands_are_remembered_as_tuples_no_caller_can_change() -> None:
    text = "project(x)\n# a comment (\nadd_library(k k.cu\n  other.cu)\nif(USE_CUDA)\nendif()\n"
    commands = build_files.cmake_commands(text)
    assert commands is build_files.cmake_commands(text)
    assert isinstance(commands, tuple) and all(isinstance(command, tuple) for command in commands)
    assert commands == (
        ("project", "x", 1),
        ("add_library", "k k.cu\n  other.cu", 3),
        ("if", "USE_CUDA", 5),
        ("endif", "", 6),
    )


def test_declarations_searched_only_for_the_names_a_file_holds_are_those_searched_for_every_name(
    tmp_path: Path,
) -> None:
    header = (
        "#pragma once\nstruct Switch {\n#if defined(XYZ_CUDA)\n  static void multimemStore(int v);\n"
        "  int multimem;\n#endif\n  void caf\u00e9();\n};\nvoid multimemStore2(int);\n"
        "int helper(int x) { int local = x; return local; }\n"
    )
    (tmp_path / "switch.hpp").write_text(header, encoding="utf-8")
    (tmp_path / "k.cu").write_text('#include "switch.hpp"\n', encoding="utf-8")
    path = str(tmp_path / "switch.hpp")
    data = header.encode()
    names = frozenset(
        {"multimemStore", "multimem", "multimemStore2", "Switch", "helper", "local", "absent", "Swit", "caf\u00e9"}
    )
    project.forget_projects()
    try:
        model = project.project_for(tmp_path)
        assert model._has_any_word(path, data, names)
        narrowed = model._declarations_of(path, data, names)
        model._declared.clear()
        model._words.clear()  # without the word set every name is searched
        assert model._declarations_of(path, data, names) == narrowed
        assert narrowed["multimemStore"] and narrowed["multimemStore2"] and not narrowed["absent"]
    finally:
        project.forget_projects()


def test_the_trigger_pattern_the_condition_rules_ask_for_is_compiled_before_workers_fork() -> None:
    from rocmlint.config import Settings
    from rocmlint.cuda.conditions import cuda_triggers
    from rocmlint.engine import compile_cuda_queries, cuda_options

    cuda_triggers.cache_clear()
    compile_cuda_queries()
    compiled = cuda_triggers.cache_info().currsize
    cuda_triggers(cuda_options(Settings(REPO)).known_rules)  # what a worker's first arm asks
    assert compiled == 1 and cuda_triggers.cache_info().misses == 1


def test_a_header_asked_about_by_several_arms_is_analysed_once_with_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_cuda_nvidia_only_arms import _DEVICE, _KERNEL, _SWITCH
    from tests.test_cuda_project import write_tree

    root = write_tree(tmp_path / "p", {"device.hpp": _DEVICE, "switch.hpp": _SWITCH, "kernel.cu": _KERNEL})
    paths = tuple(str(root / name) for name in ("kernel.cu", "switch.hpp", "device.hpp"))
    questions = [frozenset({"multimemStore"}), frozenset({"multimemStore", "Switch"}), frozenset({"mc", "v"})]
    analysed: list[str] = []
    original = project.analyse

    def counted(text: str, *args: Any) -> Any:
        analysed.append(text)
        return original(text, *args)

    monkeypatch.setattr(project, "analyse", counted)
    project.forget_projects()
    try:
        model = project.project_for(root)
        analysed.clear()
        remembered = [model._declared_only_off_rocm(paths, names, 1) for names in questions]
        assert remembered[0] == "multimemStore" and len(analysed) == 1
        fresh = []
        for names in questions:  # each question as the first: nothing remembered from the others
            model._preprocessed.clear()
            fresh.append(model._declared_only_off_rocm(paths, names, 1))
        assert fresh == remembered
    finally:
        project.forget_projects()
