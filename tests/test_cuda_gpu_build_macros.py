"""A project nothing of which builds or tells apart ROCm yet: the macros its build defines for NVIDIA only are its GPU
build's, which a port reuses or mirrors, so the code under them is code to port (rocmlint/cuda/project.py,
`_gpu_build_macros`)."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine

_CUDA_ONLY_CMAKE = """
    project(xyz LANGUAGES CXX)
    find_package(CUDA)
    if(CUDA_FOUND)
      add_definitions(-DHAVE_CUDA=1)
      cuda_add_library(xyz_gpu src/matrix.cc src/kernels.cu)
    endif()
    """

_HOST_SOURCE = """
    #if HAVE_CUDA == 1
    #include <cublas_v2.h>
    #endif

    void launch(int n) {
    #if HAVE_CUDA == 1
      const int warpSize = 32;
      int blocks = (n + warpSize - 1) / warpSize;
      (void)blocks;
    #endif
    }
    """


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return sorted((d.code, d.location.line) for d in report.diagnostics)


def test_the_cuda_only_build_macro_of_a_project_with_no_rocm_build_is_code_to_port(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"CMakeLists.txt": _CUDA_ONLY_CMAKE, "src/matrix.cc": _HOST_SOURCE})
    project = CudaProject.build(root)
    assert "HAVE_CUDA" not in project.learned
    # The cuBLAS header and the host-side 32-lane warp constant are what the port has to change.
    assert ("ROC205", 2) in _codes(root, "src/matrix.cc")
    assert ("ROC208", 7) in _codes(root, "src/matrix.cc")


def test_a_rocm_arm_in_the_build_keeps_the_cuda_macro_nvidias(tmp_path: Path) -> None:
    cmake = _CUDA_ONLY_CMAKE + "    if(USE_ROCM)\n      add_definitions(-DUSE_ROCM)\n    endif()\n"
    root = write_tree(tmp_path, {"CMakeLists.txt": cmake, "src/matrix.cc": _HOST_SOURCE})
    learned = CudaProject.build(root).learned
    assert learned["HAVE_CUDA"].vendor == "nvidia"
    assert _codes(root, "src/matrix.cc") == []


def test_a_source_telling_rocm_apart_keeps_the_cuda_macro_nvidias(tmp_path: Path) -> None:
    # No build file knows ROCm, but a header tests a ROCm macro: the project has a ROCm path (its flags passed by
    # hand), so a macro only the CUDA build defines stays NVIDIA's.
    header = """
        #pragma once
        #if defined(__HIP_PLATFORM_AMD__)
        #define XYZ_WARP 64
        #else
        #define XYZ_WARP 32
        #endif
        """
    root = write_tree(
        tmp_path, {"CMakeLists.txt": _CUDA_ONLY_CMAKE, "src/matrix.cc": _HOST_SOURCE, "src/warp.h": header}
    )
    assert CudaProject.build(root).learned["HAVE_CUDA"].vendor == "nvidia"
    assert _codes(root, "src/matrix.cc") == []
