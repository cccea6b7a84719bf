"""The C++ project model on the shapes of a held-out review: sibling CUDA/HIP sources chosen by the build, warp-size
chains the build sets per target, project macros switching between a CUDA and a HIP tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cuda.build_files import cmake_facts
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


_BACKEND_CMAKE = """
    set(PROJ_ROOT ${CMAKE_CURRENT_LIST_DIR})
    if(GPU_BACKEND STREQUAL "cuda")
      file(GLOB_RECURSE GPU_SRC LIST_DIRECTORIES False ${PROJ_ROOT}/src/*.cu)
      cuda_add_library(proj SHARED ${GPU_SRC})
    elseif(GPU_BACKEND STREQUAL "hip_cuda" OR GPU_BACKEND STREQUAL "hip_rocm")
      enable_language(HIP)
      file(GLOB_RECURSE GPU_SRC LIST_DIRECTORIES False ${PROJ_ROOT}/src/*.cpp)
      add_library(proj SHARED ${GPU_SRC})
    endif()
    """


def test_sources_globbed_through_a_variable_naming_the_project_folder(tmp_path):
    """`set(ROOT ${CMAKE_CURRENT_LIST_DIR})` then `file(GLOB_RECURSE SRC ${ROOT}/src/*.cu)` in the CUDA backend's arm:
    the `.cu` kernels are NVIDIA's, the ROCm build compiles their hand-ported `.cpp` twins."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": _BACKEND_CMAKE,
            "src/ops/linear.cu": "#include <cuda_runtime.h>\n",
            "src/ops/linear.cpp": "#include <hip/hip_runtime.h>\n",
        },
    )
    facts = cmake_facts(str(root / "CMakeLists.txt"), (root / "CMakeLists.txt").read_text(), str(root))
    assert {(s.pattern, s.vendor) for s in facts.sources if s.pattern.startswith("src")} == {
        ("src/**/*.cu", "nvidia"),
        ("src/**/*.cpp", None),
    }
    project = CudaProject.build(root)
    assert project.view(str(root / "src/ops/linear.cu")).base.on_rocm is False
    assert project.view(str(root / "src/ops/linear.cpp")).base.on_rocm is not False
    assert _codes(root, "src/ops/linear.cu") == []


def test_a_folder_variable_set_again_to_something_else_is_forgotten(tmp_path):
    """A variable the file later sets to a path the model cannot read names no folder any more."""
    text = _BACKEND_CMAKE.replace("if(GPU", "set(PROJ_ROOT ${OTHER_ROOT})\nif(GPU", 1)
    facts = cmake_facts(str(tmp_path / "CMakeLists.txt"), textwrap.dedent(text), str(tmp_path))
    assert not [s for s in facts.sources if s.pattern.startswith("src")]
