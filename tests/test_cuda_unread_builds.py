"""Build files that speak for less than the whole tree: CMake files the build never reads (an `attic/` folder's),
a setup.py or Bazel file below the top folder; CMake options only the NVIDIA build can switch on
(`cmake_dependent_option`); CUDA headers' include guards as NVIDIA-only gates (rocmlint/cuda/cmake_projects.py,
rocmlint/cuda/build_files.py, rocmlint/cuda/learning.py, `CudaProject` in rocmlint/cuda/project.py)."""

from __future__ import annotations

from rocmlint.cuda.build_files import cmake_dependent_cuda_options, cmake_unread_files
from rocmlint.cuda.project import CudaProject
from rocmlint.vendor import NO_GPU
from tests.test_cuda_project import _codes, write_tree


def _unread(texts: dict[str, str], other: str = "") -> list[str]:
    return sorted(
        p.removeprefix("/r/") for p in cmake_unread_files("/r", {f"/r/{p}": t for p, t in texts.items()}, other)
    )


_TOP = "project(app)\nlist(APPEND CMAKE_MODULE_PATH ${PROJECT_SOURCE_DIR}/cmake)\nadd_subdirectory(src)\n"


def test_cmake_files_no_read_file_adds_or_includes_are_unread():
    texts = {
        "CMakeLists.txt": _TOP,
        "src/CMakeLists.txt": "add_library(a a.cpp)\ninclude(cuda/sources.cmake)\ninclude(deps)\nfind_package(Nccl)\n",
        "src/cuda/sources.cmake": "target_sources(a PRIVATE cuda/k.cu)\n",
        "cmake/deps.cmake": "include(${CMAKE_CURRENT_LIST_DIR}/more.cmake)\n",
        "cmake/more.cmake": "",
        "cmake/FindNccl.cmake": "",
        "attic/CMakeLists.txt": "add_library(old old.cpp)\ninclude(cuda/old.cmake)\n",
        "attic/cuda/old.cmake": "target_sources(old PRIVATE cuda/k.cu)\n",
        "attic/unused.cmake": "",
    }
    assert _unread(texts) == ["attic/CMakeLists.txt", "attic/cuda/old.cmake", "attic/unused.cmake"]
    # A script a read file runs (`cmake -P`), or one a setup.py or Makefile names, may run.
    run = "add_custom_target(gen COMMAND ${CMAKE_COMMAND} -P ${PROJECT_SOURCE_DIR}/attic/unused.cmake)\n"
    assert "attic/unused.cmake" not in _unread({**texts, "CMakeLists.txt": _TOP + run})
    assert "attic/CMakeLists.txt" not in _unread(texts, other="cmake_dir = 'attic'")


def test_nothing_is_unread_without_a_top_file_or_when_a_file_is_reached_through_a_variable():
    attic = {"attic/CMakeLists.txt": "add_library(old old.cpp)\n"}
    assert _unread({"src/CMakeLists.txt": "add_library(a a.cpp)\n", **attic}) == []
    for top in ("project(app)\nadd_subdirectory(${DIR})\n", "project(app)\ninclude(${MODULE})\n"):
        assert _unread({"CMakeLists.txt": top, **attic}) == [], top


# A CMake build naming its sources one by one, with a ROCm build, beside an attic the build never reads.
_ATTIC = {
    "CMakeLists.txt": "project(solver CXX)\nif(USE_HIP)\n  enable_language(HIP)\nendif()\nadd_subdirectory(src)\n",
    "src/CMakeLists.txt": "add_library(solver util.cpp cuda/factor.cu)\n",
    "src/util.cpp": "",
    "src/cuda/factor.cu": '#include "props.hpp"\n',
    "src/cuda/props.hpp": "",
    "attic/CMakeLists.txt": "include(old.cmake)\n",
    "attic/old.cmake": "target_sources(solver PRIVATE cuda/solve.cu)\n",
    "attic/cuda/solve.cu": '#include "cuda/props.hpp"\n',
    "attic/cuda/props.hpp": "#include <cublas_v2.h>\n",
    "attic/cuda/retired.cu": "#include <cublas_v2.h>\n",
}


def test_the_sources_only_unread_cmake_files_name_are_compiled_by_no_build(tmp_path):
    root = write_tree(tmp_path, _ATTIC)
    project = CudaProject.build(root)
    solve = project.view(str(root / "attic/cuda/solve.cu"))
    assert solve.base.on_rocm is False
    assert solve.base_evidence.endswith("a CMake file no CMake file the build reads adds or includes)")
    # A header only ambiguous includes (`"cuda/props.hpp"`, two files end so) of such sources reach.
    assert project.view(str(root / "attic/cuda/props.hpp")).base.on_rocm is False
    assert _codes(root, "attic/cuda/props.hpp") == []
    # A source no read file names (the unread ones name nothing) is compiled by no build.
    retired = project.view(str(root / "attic/cuda/retired.cu"))
    assert (retired.base, _codes(root, "attic/cuda/retired.cu")) == (NO_GPU, [])
    assert project.view(str(root / "src/cuda/factor.cu")).base.on_rocm is not False


def test_an_included_cmake_file_still_names_its_sources(tmp_path):
    top = _ATTIC["CMakeLists.txt"] + "include(attic/old.cmake)\n"
    root = write_tree(tmp_path, {**_ATTIC, "CMakeLists.txt": top})
    project = CudaProject.build(root)
    assert project.view(str(root / "attic/cuda/solve.cu")).base.on_rocm is not False
    # One of the ambiguous includes of the header is compiled on ROCm: it may be the one it finds.
    assert project.view(str(root / "attic/cuda/props.hpp")).base.on_rocm is not False


def test_a_setup_py_speaks_for_its_own_folder_only(tmp_path):
    setup = "from setuptools import setup, Extension\nsetup(ext_modules=[Extension('m', sources=SOURCES)])\n"
    root = write_tree(tmp_path, {**_ATTIC, "bindings/setup.py": setup, "bindings/m.cpp": "#include <cublas_v2.h>\n"})
    project = CudaProject.build(root)
    assert project.view(str(root / "attic/cuda/retired.cu")).base == NO_GPU
    # The sources below it may be those its computed list names.
    assert project.view(str(root / "bindings/m.cpp")).base.on_rocm is not False
    # One naming a source elsewhere may compile it.
    setup = "from setuptools import setup\nsetup(sources=['../attic/cuda/retired.cu'])\n"
    root = write_tree(tmp_path, {"bindings/setup.py": setup})
    assert CudaProject.build(root).view(str(root / "attic/cuda/retired.cu")).base.on_rocm is not False


_DEPENDENT = """
option(USE_CUDA "CUDA" OFF)
option(USE_HIP "HIP" OFF)
include(CMakeDependentOption)
cmake_dependent_option(USE_NCCL "NCCL" ON "USE_CUDA" OFF)
cmake_dependent_option(USE_NCCL_TESTS "NCCL tests" ON "USE_NCCL;BUILD_TESTING" OFF)
cmake_dependent_option(USE_MAGMA "MAGMA" ON "USE_CUDA OR USE_HIP" OFF)
cmake_dependent_option(USE_EMU "CPU emulation" OFF "USE_CUDA" ON)
"""


def test_options_only_the_nvidia_build_can_switch_on():
    assert cmake_dependent_cuda_options([_DEPENDENT]) == {"USE_NCCL", "USE_NCCL_TESTS"}
    # An option depending on a CUDA-only switch of the project.
    gpu = 'cmake_dependent_option(USE_CUTLASS "CUTLASS" ON "TPL_ENABLE_GPU" OFF)\n'
    assert cmake_dependent_cuda_options([gpu], frozenset({"TPL_ENABLE_GPU"})) == {"USE_CUTLASS"}
    assert cmake_dependent_cuda_options([gpu]) == frozenset()


def test_a_macro_an_nvidia_only_dependent_option_defines_gates_nvidia_code(tmp_path):
    files = {
        "CMakeLists.txt": "project(app CXX)\n" + _DEPENDENT + "if(USE_HIP)\n  enable_language(HIP)\nendif()\n"
        "if(USE_CUDA)\n  enable_language(CUDA)\nendif()\n"
        "if(USE_NCCL)\n  add_compile_definitions(HAVE_NCCL)\nendif()\n"
        "if(USE_MAGMA)\n  add_compile_definitions(HAVE_MAGMA)\nendif()\nadd_library(app reduce.cpp)\n",
        "reduce.cpp": "#ifdef HAVE_NCCL\n#include <nccl.h>\n#endif\n#ifdef HAVE_MAGMA\n#include <cublas_v2.h>\n#endif\n",
    }
    root = write_tree(tmp_path, files)
    assert _codes(root, "reduce.cpp") == [("ROC205", 5)]


def test_a_cuda_headers_include_guard_gates_nvidia_code(tmp_path):
    helper = "#ifdef __CUDA_RUNTIME_H__\ninline int arch(cudaDeviceProp p) { return p.major > 7; }\n#endif\n"
    files = {"helper.h": helper, "main.cu": '#include "helper.h"\n'}
    assert _codes(write_tree(tmp_path / "plain", files), "helper.h") == []
    # A project defining the guard itself (a ROCm shim standing in for the header) may compile the code on ROCm.
    shim = "#pragma once\n#define __CUDA_RUNTIME_H__\n#include <hip/hip_runtime.h>\n"
    root = write_tree(tmp_path / "shimmed", {**files, "shim/cuda_compat.h": shim})
    assert _codes(root, "helper.h") == [("ROC229", 2)]


def test_a_module_read_only_in_nvidia_code_defines_for_nvidia(tmp_path):
    top = (
        "project(app CXX)\n" + _DEPENDENT + "list(APPEND CMAKE_MODULE_PATH ${PROJECT_SOURCE_DIR}/cmake)\n"
        "if(USE_HIP)\n  enable_language(HIP)\nendif()\nif(USE_CUDA)\n  enable_language(CUDA)\nendif()\n"
        "if(USE_NCCL)\n  include(app-nccl)\nendif()\ninclude(app-magma)\nadd_library(app reduce.cpp)\n"
    )
    files = {
        "CMakeLists.txt": top,
        "cmake/app-nccl.cmake": 'set(APP_HAS_NCCL TRUE CACHE BOOL "" FORCE)\n',
        "cmake/app-magma.cmake": 'set(APP_HAS_MAGMA TRUE CACHE BOOL "" FORCE)\n',
        "config.h.in": "#cmakedefine APP_HAS_NCCL\n#cmakedefine APP_HAS_MAGMA\n",
        "reduce.cpp": "#ifdef APP_HAS_NCCL\n#include <nccl.h>\n#endif\n#ifdef APP_HAS_MAGMA\n#include <cublas_v2.h>\n#endif\n",
    }
    root = write_tree(tmp_path / "one", files)
    assert _codes(root, "reduce.cpp") == [("ROC205", 5)]
    # A module some code reads whatever the vendor is no vendor's.
    root = write_tree(tmp_path / "both", {**files, "CMakeLists.txt": top + "include(app-nccl)\n"})
    assert _codes(root, "reduce.cpp") == [("ROC205", 2), ("ROC205", 5)]


def test_a_header_including_the_toolkit_header_of_its_own_name_is_still_compiled(tmp_path):
    # `<cuda_fp4.h>` names the toolkit's header: only one project file ends so, itself.
    own = "#pragma once\n#if defined(__CUDA_ARCH__)\n#include <cuda_fp4.h>\n#endif\n"
    root = write_tree(tmp_path, {**_ATTIC, "src/cuda/cuda_fp4.h": own})
    assert CudaProject.build(root).view(str(root / "src/cuda/cuda_fp4.h")).base.on_rocm is not False
