"""CMake code that never runs and lists nothing reads (rocmlint/cuda/cmake_unrun.py): the sources they name are
compiled by no build, so the C++ project model does not count them as ROCm's."""

from __future__ import annotations

from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cuda.build_files import cmake_facts, cmake_unrun
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine
from tests.test_cuda_project import write_tree

EXAMPLES = """
file(GLOB_RECURSE example_srcs RELATIVE "${CMAKE_CURRENT_LIST_DIR}" CONFIGURE_DEPENDS example_*.cu)

foreach(other_target IN LISTS OTHER_TARGETS)
  foreach(example_src IN LISTS example_srcs)
    add_project_example(${example_src} ${other_target})
  endforeach()
endforeach()
"""


def test_a_loop_over_a_list_no_cmake_file_sets_never_runs():
    unrun = cmake_unrun([EXAMPLES, "function(add_project_example src)\n  add_executable(x ${src})\nendfunction()\n"])
    assert unrun.unset_lists == {"OTHER_TARGETS"}
    assert unrun.why_unrun("foreach", "t IN LISTS OTHER_TARGETS") == (
        "in a loop over `OTHER_TARGETS`, which no CMake file of the project sets"
    )
    # The glob's list is read only inside that loop: nothing hands its sources to a target.
    assert unrun.unread("example_srcs")
    assert not unrun.unread("other_target")


def test_lists_set_anywhere_in_the_project_or_by_cmake_make_loops_run():
    texts = [
        "foreach(t IN LISTS SET_HERE)\nendforeach()\nforeach(t ${ARGN})\nendforeach()\n",
        "set(SET_HERE a b)\n",
        "foreach(t IN LISTS BUILT_TARGETS PARSED_SOURCES CUDA_LIBRARIES CMAKE_CUDA_ARCHITECTURES)\nendforeach()\n",
        "foreach(c IN LISTS Julia_FIND_COMPONENTS)\nendforeach()\n",
        # Names a variable-built write, `cmake_parse_arguments` or a package may set.
        'set(${prefix}_TARGETS x)\ncmake_parse_arguments(PARSED "" "" "SOURCES" ${ARGN})\n',
        "function(helper LIST_PARAMETER)\n  foreach(s IN LISTS LIST_PARAMETER)\n  endforeach()\nendfunction()\n",
        "foreach(s IN ITEMS a.cu ${NEVER_SET})\nendforeach()\nforeach(i RANGE 3)\nendforeach()\n",
        "helper(x)\n",
    ]
    unrun = cmake_unrun(texts)
    assert unrun.unset_lists == set()
    assert unrun.why_unrun("foreach", "s IN ITEMS a.cu ${NEVER_SET}") == ""
    assert unrun.why_unrun("foreach", "i RANGE 3") == ""


def test_a_function_nothing_calls_never_runs_and_its_reads_do_not_count():
    texts = [
        "function(unused_helper)\n  add_library(x ${HELPER_SOURCES})\nendfunction(unused_helper)\n",
        "function(called_by_name)\nendfunction()\ncmake_language(CALL called_by_name)\n",
        "macro(Called)\nendmacro()\ncalled()\n",
        "set(HELPER_SOURCES a.cu)\nset(OWN_SOURCES ${OWN_SOURCES} b.cu)\nset(READ_SOURCES c.cu)\n",
        "add_library(y ${${prefix}_BUILT_SOURCES} ${READ_SOURCES})\nlist(LENGTH LENGTH_ONLY n)\n",
    ]
    unrun = cmake_unrun(texts)
    assert unrun.uncalled == {"unused_helper"}
    assert unrun.why_unrun("function", "unused_helper") == "in `unused_helper`, which nothing calls"
    assert unrun.unread("HELPER_SOURCES")
    assert unrun.unread("OWN_SOURCES")  # only its own `set` reads it
    for read in ("READ_SOURCES", "X_BUILT_SOURCES", "LENGTH_ONLY"):
        assert not unrun.unread(read), read


def test_a_read_through_a_name_reads_every_name_the_project_assembles():
    texts = [
        "set(COMMON_SRC a.cpp)\nset(UNREAD_LIST b.cpp)\n",
        'foreach(CATEGORY common)\n  string(TOUPPER "${CATEGORY}_SRC" VAR)\n  add_executable(t ${${VAR}})\nendforeach()\n',
    ]
    unrun = cmake_unrun(texts)
    assert not unrun.unread("COMMON_SRC")
    assert unrun.unread("UNREAD_LIST")
    # Without the read through a name, the assembled name reads nothing.
    assert cmake_unrun([texts[0], 'string(TOUPPER "${CATEGORY}_SRC" VAR)\n']).unread("COMMON_SRC")


def test_without_the_project_read_every_list_counts_as_read():
    facts = cmake_facts("CMakeLists.txt", "set(SOURCES k.cu)\n")
    assert [(s.pattern, s.unbuilt) for s in facts.sources] == [("k.cu", "")]


def test_sources_in_unrun_code_are_unbuilt_with_the_command_line():
    texts = {"examples/CMakeLists.txt": EXAMPLES, "CMakeLists.txt": "add_subdirectory(examples)\n"}
    unrun = cmake_unrun(texts.values())
    facts = cmake_facts("examples/CMakeLists.txt", "# licence\n\n" + EXAMPLES, unrun=unrun)
    assert [(s.pattern, s.line, s.unbuilt) for s in facts.sources] == [
        ("./**/example_*.cu", 4, "in `example_srcs`, which no CMake code that runs reads")
    ]
    looped = cmake_facts(
        "CMakeLists.txt", "foreach(t IN LISTS OTHER_TARGETS)\n  add_subdirectory(more)\nendforeach()\n", unrun=unrun
    )
    assert [(s.pattern, s.unbuilt) for s in looped.sources] == [
        ("more/**", "in a loop over `OTHER_TARGETS`, which no CMake file of the project sets")
    ]


def _tree(root: Path, sets_the_list: bool) -> Path:
    return write_tree(
        root,
        {
            "CMakeLists.txt": f"""
                project(lib LANGUAGES CXX HIP CUDA)
                {"set(OTHER_TARGETS lib)" if sets_the_list else ""}
                add_subdirectory(examples)
                """,
            "examples/CMakeLists.txt": EXAMPLES
            + "function(add_project_example src target)\n  add_executable(${target}.x ${src})\nendfunction()\n",
            "examples/example_scan.cu": "#include <cub/block/block_scan.cuh>\n",
        },
    )


def test_an_example_folder_copied_from_a_build_whose_loop_never_runs_is_not_compiled(tmp_path):
    root = _tree(tmp_path / "unrun", sets_the_list=False)
    view = CudaProject.build(root).view(str(root / "examples/example_scan.cu"))
    assert view.base.on_rocm is False
    assert view.base_evidence == (
        "examples/CMakeLists.txt:1: no build compiles it (in `example_srcs`, which no CMake code that runs reads)"
    )
    report = Engine().check_path(root / "examples/example_scan.cu", Settings(root=root))
    assert [d.code for d in report.diagnostics] == []
    # The same folder where the project sets the list: ROCm compiles the example, its CUB include is a hazard.
    control = _tree(tmp_path / "run", sets_the_list=True)
    assert CudaProject.build(control).view(str(control / "examples/example_scan.cu")).base.on_rocm is not False
    report = Engine().check_path(control / "examples/example_scan.cu", Settings(root=control))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC205", 1)]
