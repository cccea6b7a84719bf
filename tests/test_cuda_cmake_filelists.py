"""Source lists a CMake build reads from a `.bzl` file (rocmlint/cuda/cmake_filelists.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.cuda.build_files import cmake_filelist_functions
from rocmlint.cuda.cmake_filelists import bzl_strings
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

_DEFS = """
    CORE_SRCS = ["src/core.cpp", "src/log.cpp"]
    API_SRCS = ["src/api.cpp"]
    NV_TRACER_SRCS = ["src/nv_tracer.cpp"]
    AMD_TRACER_SRCS = ["src/amd_tracer.cpp"]

    def get_core_srcs(with_api = True):
        "The sources every backend builds."
        return CORE_SRCS + (API_SRCS if with_api else [])

    def get_nv_srcs(with_api = True):
        return NV_TRACER_SRCS + get_core_srcs(with_api)

    def get_amd_srcs(with_api = True):
        return AMD_TRACER_SRCS + get_core_srcs(with_api)

    def get_globbed():
        return glob(["src/*.cpp"])
    """
_READER = """
    function(get_filelist name outputvar)
      execute_process(
        COMMAND "${Python3_EXECUTABLE}" -c
                "exec(open('xyz_defs.bzl').read());print(';'.join(${name}))"
        WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
        OUTPUT_VARIABLE _tempvar)
      set(${outputvar} ${_tempvar} PARENT_SCOPE)
    endfunction()
    """


def test_bzl_expressions_are_evaluated_over_string_lists():
    defs = textwrap.dedent(_DEFS)
    assert bzl_strings(defs, "CORE_SRCS") == ("src/core.cpp", "src/log.cpp")
    assert bzl_strings(defs, "get_nv_srcs(with_api=False)") == ("src/nv_tracer.cpp", "src/core.cpp", "src/log.cpp")
    assert bzl_strings(defs, "get_amd_srcs()") == ("src/amd_tracer.cpp", "src/core.cpp", "src/log.cpp", "src/api.cpp")
    # What is not a string list here (a glob, an unknown name, a broken expression) is nothing.
    assert bzl_strings(defs, "get_globbed()") == ()
    assert bzl_strings(defs, "MISSING_SRCS") == ()
    assert bzl_strings(defs, "get_nv_srcs(") == ()


def test_only_functions_printing_a_bzl_list_from_the_callers_folder_read_one(tmp_path: Path):
    bzl = {str(tmp_path / "xyz_defs.bzl"): textwrap.dedent(_DEFS)}
    assert list(cmake_filelist_functions([textwrap.dedent(_READER)], bzl)) == ["get_filelist"]
    # Paths prefixed with another folder, or a file that is not in the tree: not read.
    prefixed = _READER.replace("';'.join(${name})", "';'.join(['${ROOT}/' + x for x in ${name}])")
    assert cmake_filelist_functions([textwrap.dedent(prefixed)], bzl) == {}
    assert cmake_filelist_functions([textwrap.dedent(_READER).replace("xyz_defs", "other_defs")], bzl) == {}


def test_sources_a_cuda_arm_reads_from_a_bzl_list_are_nvidia_only(tmp_path: Path):
    cmake = (
        _READER
        + """
    if(XYZ_BACKEND STREQUAL "cuda")
      enable_language(CUDA)
      get_filelist("get_nv_srcs(with_api=False)" XYZ_SRCS)
    elseif(XYZ_BACKEND STREQUAL "rocm")
      enable_language(HIP)
      get_filelist("get_amd_srcs(with_api=False)" XYZ_SRCS)
    endif()
    add_library(xyz ${XYZ_SRCS})
    """
    )
    gate = "#include <cuda_runtime.h>\nint device_count() { int n = 0; cudaGetDeviceCount(&n); return n; }\n"
    root = write_tree(
        tmp_path,
        {"CMakeLists.txt": cmake, "xyz_defs.bzl": _DEFS, "src/nv_tracer.cpp": gate, "src/core.cpp": gate},
    )
    project = CudaProject.build(root)
    nv = project.view(str(root / "src/nv_tracer.cpp"))
    assert nv.base.on_rocm is False
    assert nv.base_evidence == "CMakeLists.txt:12: the build compiles it for NVIDIA only"
    assert project.view(str(root / "src/core.cpp")).base.on_rocm is not False
    assert _codes(root, "src/nv_tracer.cpp") == []
    assert _codes(root, "src/core.cpp") == [("ROC204", 1)]
