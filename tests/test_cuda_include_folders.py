"""Include folders the CMake build puts on the include path (rocmlint/cuda/build_files.py `include_folders`) and what
the project model makes of them (rocmlint/cuda/project.py): a header found only through a folder the NVIDIA build
alone adds is NVIDIA's, and so is a header only such headers include."""

from __future__ import annotations

from pathlib import Path

from rocmlint.cuda.build_files import cmake_facts
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

# A library with one back end per vendor: the CUDA target's CMake module adds `include/targets/cuda`, the HIP
# target's `include/targets/hip`; both folders hold a `reduce_helper.h`, and generic code includes it by its bare name.
_TARGETS = {
    "CMakeLists.txt": """
        add_library(lib kernels.cu)
        target_include_directories(lib PUBLIC ${CMAKE_SOURCE_DIR}/include)
        if(${LIB_TARGET_TYPE} STREQUAL "CUDA")
          include(targets/cuda/target_cuda.cmake)
        endif()
        if(${LIB_TARGET_TYPE} STREQUAL "HIP")
          include(targets/hip/target_hip.cmake)
        endif()
        """,
    "targets/cuda/target_cuda.cmake": """
        enable_language(CUDA)
        target_include_directories(lib PRIVATE ${CMAKE_SOURCE_DIR}/include/targets/cuda)
        """,
    "targets/hip/target_hip.cmake": """
        enable_language(HIP)
        target_include_directories(lib PRIVATE ${CMAKE_SOURCE_DIR}/include/targets/hip)
        """,
    "kernels.cu": "#include <reduce_helper.h>\n#include <mma/gemm.cuh>\n",
    "include/targets/cuda/reduce_helper.h": "#include <inline_ptx.h>\n#include <cub/cub.cuh>\n",
    "include/targets/cuda/mma/gemm.cuh": "#include <mma.h>\n",
    "include/targets/hip/reduce_helper.h": "#include <hipcub/hipcub.hpp>\n",
    "include/inline_ptx.h": "#include <cuda_pipeline.h>\n",  # generic-looking; only the CUDA target includes it
}


def test_cmake_include_folders_are_read_with_the_vendor_of_their_block():
    text = """
        target_include_directories(lib PRIVATE ${CMAKE_SOURCE_DIR}/include/targets/cuda)
        target_include_directories(lib PUBLIC $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/gen> $<INSTALL_INTERFACE:inc>)
        target_include_directories(lib SYSTEM PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ext relative)
        if(USE_HIP)
          include_directories(${CMAKE_CURRENT_SOURCE_DIR} hip/include "${PROJECT_SOURCE_DIR}")
        endif()
        """
    folders = cmake_facts("/r/lib/CMakeLists.txt", text, "/r").include_folders
    assert [(s.pattern, s.vendor) for s in folders] == [
        ("/r/include/targets/cuda", None),
        ("ext", None),
        ("relative", None),
        (".", "rocm"),
        ("hip/include", "rocm"),
        ("/r", "rocm"),
    ]
    # A `.cmake` module's relative folders are relative to the file including it: unknown, left out.
    module = cmake_facts("/r/cmake/gpu.cmake", text, "/r").include_folders
    assert [s.pattern for s in module] == ["/r/include/targets/cuda", "ext", "/r"]


def test_a_header_found_only_through_the_nvidia_builds_include_folder_is_nvidia_only(tmp_path: Path):
    root = write_tree(tmp_path, _TARGETS)
    project = CudaProject.build(root)
    helper = project.view(str(root / "include/targets/cuda/reduce_helper.h"))
    assert helper.base.on_rocm is False
    assert helper.base_evidence == (
        "targets/cuda/target_cuda.cmake:2: under include/targets/cuda/, which only the NVIDIA build puts on the "
        "include path"
    )
    # Included from generic code, but by a path only that folder finds (`<mma/gemm.cuh>`).
    assert project.view(str(root / "include/targets/cuda/mma/gemm.cuh")).base.on_rocm is False
    # The HIP target's own header is compiled on ROCm.
    assert project.view(str(root / "include/targets/hip/reduce_helper.h")).base.on_rocm is not False
    # A generic-looking header right in a build include folder that only the CUDA target's headers include by its
    # bare name (`<inline_ptx.h>`, which the include graph leaves unresolved) is NVIDIA's too.
    ptx = project.view(str(root / "include/inline_ptx.h"))
    assert ptx.base.on_rocm is False
    assert ptx.base_evidence == "include/targets/cuda/reduce_helper.h:1: included only where ROCm does not compile"
    assert _codes(root, "include/targets/cuda/reduce_helper.h") == []
    assert _codes(root, "include/inline_ptx.h") == []
    assert _codes(root, "include/targets/hip/reduce_helper.h") == []


def test_a_header_generic_code_includes_past_the_nvidia_folder_is_compiled_on_rocm(tmp_path: Path):
    """`#include "targets/cuda/reduce_helper.h"` from a generic file finds the header without the CUDA target's
    folder on the include path: ROCm may compile it, and what it includes."""
    files = dict(_TARGETS)
    files["kernels.cu"] = '#include "include/targets/cuda/reduce_helper.h"\n'
    files["include/targets/cuda/reduce_helper.h"] = '#include "detail.h"\n#include <cub/cub.cuh>\n'
    files["include/targets/cuda/detail.h"] = "#include <cub/cub.cuh>\n"
    root = write_tree(tmp_path, files)
    project = CudaProject.build(root)
    assert project.view(str(root / "include/targets/cuda/reduce_helper.h")).base.on_rocm is not False
    assert project.view(str(root / "include/targets/cuda/detail.h")).base.on_rocm is not False
    assert _codes(root, "include/targets/cuda/detail.h") == [("ROC205", 1)]


def test_a_general_folder_the_nvidia_build_adds_decides_nothing(tmp_path: Path):
    """The NVIDIA build adds `src/`, the ROCm build `src/hip/`: `src/` is the project's, reached on ROCm by relative
    includes; and a build with no ROCm include folder of its own says nothing about its NVIDIA one."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                if(USE_CUDA)
                  enable_language(CUDA)
                  include_directories(src)
                elseif(USE_HIP)
                  enable_language(HIP)
                  include_directories(src/hip)
                endif()
                """,
            "src/reduce.cuh": "#include <cub/cub.cuh>\n",
            "src/hip/compat.h": "",
        },
    )
    assert CudaProject.build(root).view(str(root / "src/reduce.cuh")).base.on_rocm is not False
    root = write_tree(
        tmp_path / "no_rocm_folder",
        {
            "CMakeLists.txt": """
                if(USE_CUDA)
                  enable_language(CUDA)
                  include_directories(cuda)
                elseif(USE_HIP)
                  enable_language(HIP)
                endif()
                """,
            "cuda/reduce.cuh": "#include <cub/cub.cuh>\n",
        },
    )
    assert CudaProject.build(root).view(str(root / "cuda/reduce.cuh")).base.on_rocm is not False
