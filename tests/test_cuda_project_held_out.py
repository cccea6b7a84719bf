"""The C++ project model on the shapes of a held-out review: sibling CUDA/HIP sources chosen by the build, warp-size
chains the build sets per target, project macros switching between a CUDA and a HIP tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.cuda.build_files import cmake_facts, vendor_of_words
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine


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


def test_hip_compiled_for_nvidia_is_nvidia_by_its_name():
    """`hip_cuda` / `FF_USE_HIP_CUDA`: HIP whose platform is CUDA, which nvcc compiles; unless ROCm is named too."""
    assert vendor_of_words("FF_USE_HIP_CUDA") == "nvidia"
    assert vendor_of_words('GPU_BACKEND STREQUAL "hip_cuda"') == "nvidia"
    assert vendor_of_words('GPU_BACKEND STREQUAL "hip_cuda" OR GPU_BACKEND STREQUAL "hip_rocm"') is None
    assert vendor_of_words("FF_USE_HIP_ROCM") == "rocm"
    assert vendor_of_words("USE_HIP") == "rocm"


def test_a_hip_on_nvidia_flag_in_the_hip_builds_flags_is_nvidias(tmp_path):
    """`-DX_USE_HIP_CUDA` appended to the HIP compiler's flags is the HIP-on-NVIDIA build's: under it the headers
    include the CUDA libraries (`#if defined(X_USE_CUDA) || defined(X_USE_HIP_CUDA)`), which ROCm never reads."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                enable_language(HIP)
                if(GPU_BACKEND STREQUAL "cuda")
                  list(APPEND X_NVCC_FLAGS -DX_USE_CUDA)
                  add_compile_definitions(X_USE_CUDA)
                elseif(GPU_BACKEND STREQUAL "hip_cuda")
                  list(APPEND X_HIPCC_FLAGS -DX_USE_HIP_CUDA)
                elseif(GPU_BACKEND STREQUAL "hip_rocm")
                  list(APPEND X_HIPCC_FLAGS -DX_USE_HIP_ROCM)
                endif()
                """,
            "include/device.h": """
                #if defined(X_USE_CUDA) || defined(X_USE_HIP_CUDA)
                #include <cudnn.h>
                #elif defined(X_USE_HIP_ROCM)
                #include <miopen/miopen.h>
                #endif
                """,
        },
    )
    project = CudaProject.build(root)
    assert project.learned["X_USE_HIP_CUDA"].vendor == "nvidia"
    assert project.learned["X_USE_HIP_ROCM"].vendor == "rocm"
    assert _codes(root, "include/device.h") == []


def test_a_cuda_flag_tested_before_the_rocm_builds_own_macro(tmp_path):
    """`#if defined(ENABLE_CUDA) ... #elif defined(BUILD_X_HIP)`, `BUILD_X_HIP` defined by the ROCm build: that
    build takes the HIP arm, whatever else defines `ENABLE_CUDA` (a `.cu` file's own `#define ENABLE_CUDA 1`)."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(x LANGUAGES CXX CUDA)
                if(ENABLE_HIP)
                  enable_language(HIP)
                  add_definitions(-DBUILD_X_HIP)
                endif()
                """,
            "src/kernels.cu": '#define ENABLE_CUDA 1\n#include "memory.hpp"\n',
            "src/memory.hpp": """
                #if defined(ENABLE_CUDA)
                #include <cuda_runtime.h>
                #elif defined(BUILD_X_HIP)
                #include <hip/hip_runtime.h>
                #endif
                #if defined(ENABLE_CUDA) && defined(USE_NCCL)
                #include <nccl.h>
                #endif
                """,
        },
    )
    # No ROCm arm after the second `#if`: `ENABLE_CUDA` may hold there.
    assert _codes(root, "src/memory.hpp") == [("ROC205", 7)]


def test_unincluded_headers_of_a_folder_the_rest_of_the_project_enters_for_nvidia_only(tmp_path):
    """A CUDA wrapper folder the project's headers include only under an NVIDIA arm: its headers nothing includes
    (`old_blas.hpp`) are NVIDIA's too, and so is what only they include (`cublas_xt.hpp`), however they include
    each other; the folder's headers that only its own include do not decide."""
    folder = "src/detail/cuda"
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(x LANGUAGES CXX CUDA)\nif(USE_HIP)\n  enable_language(HIP)\nendif()\n",
            "src/blas.hpp": f"""
                #if defined(USE_CUDA)
                #include "{folder}/blas_gpu.hpp"
                #include "{folder}/sparse_gpu.hpp"
                #endif
                """,
            "src/main.cpp": '#include "blas.hpp"\n',
            f"{folder}/blas_gpu.hpp": '#include "cublas_wrapper.hpp"\n',
            f"{folder}/sparse_gpu.hpp": '#include "cublas_wrapper.hpp"\n',
            f"{folder}/cublas_wrapper.hpp": "#include <cublas_v2.h>\n",
            f"{folder}/old_blas.hpp": '#include "cublas_wrapper.hpp"\n#include "cublas_xt.hpp"\n',
            f"{folder}/lapack_all.hpp": '#include "cusolver_wrapper.hpp"\n',
            f"{folder}/cusolver_wrapper.hpp": "#include <cusolverDn.h>\n",
            f"{folder}/cublas_xt.hpp": '#include "cusolver_wrapper.hpp"\n#include <cublasXt.h>\n',
        },
    )
    project = CudaProject.build(root)
    for name in ("old_blas.hpp", "lapack_all.hpp", "cublas_xt.hpp", "cusolver_wrapper.hpp", "cublas_wrapper.hpp"):
        assert project.view(str(root / folder / name)).base.on_rocm is False, name
    assert _codes(root, f"{folder}/cublas_xt.hpp") == []


def test_a_shim_defining_the_removed_platform_macro_in_a_hip_build_is_no_stale_gate(tmp_path):
    """`#ifndef __HIP_PLATFORM_HCC__ / #define __HIP_PLATFORM_HCC__ / #endif` in a header the HIP build compiles
    defines the old name for code that still reads it: it chooses no arm, so ROC215 has nothing to report. An
    `#ifndef` of the old name around other code still is a stale gate."""
    shim = "#ifndef __HIP_PLATFORM_HCC__\n#define __HIP_PLATFORM_HCC__\n#endif\n"
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(x LANGUAGES CXX)
                option(PROJ_ENABLE_ROCM "rocm" OFF)
                if(PROJ_ENABLE_ROCM)
                  enable_language(HIP)
                  add_compile_definitions(PROJ_ENABLE_ROCM)
                endif()
                """,
            "include/backend_rocm.h": "#pragma once\n#ifdef PROJ_ENABLE_ROCM\n"
            + shim
            + "#include <hip/hip_runtime.h>\n#endif\n",
        },
    )
    report = Engine().check_path(root / "include/backend_rocm.h", Settings(root=root, select=("ROC215",)))
    assert report.diagnostics == []
    header = root / "include/backend_rocm.h"
    header.write_text(header.read_text().replace("#define __HIP_PLATFORM_HCC__", "#define PROJ_OLD_HIP 1"))
    report = Engine().check_path(header, Settings(root=root, select=("ROC215",)))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC215", 3)]
