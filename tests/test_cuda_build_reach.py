"""What a project's build compiles: nested CMake projects it never adds, and headers only host-compiled sources
include (rocmlint/cuda/cmake_projects.py, `CudaProject` in rocmlint/cuda/project.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.cuda.build_files import cmake_cuda_only_options, cmake_unadded_projects, host_sources_as_cuda
from rocmlint.cuda.make_variables import vendors_reading
from rocmlint.cuda.project import CudaProject
from rocmlint.vendor import NO_GPU
from tests.test_cuda_project import _base_of, _codes, write_tree

_NESTED = "project(lib CXX)\nadd_subdirectory(test)\n"


def _unadded(root: str, texts: dict[str, str], other: str = "") -> list[str]:
    return sorted(cmake_unadded_projects(root, {f"{root}/{p}": t for p, t in texts.items()}, other))


def test_a_nested_cmake_project_the_build_never_adds_is_unadded():
    texts = {"CMakeLists.txt": "project(app)\nadd_subdirectory(src)\n", "src/CMakeLists.txt": "add_library(a a.cpp)\n"}
    assert _unadded("/r", {**texts, "ext/lib/CMakeLists.txt": _NESTED, "ext/lib/test/CMakeLists.txt": ""}) == [
        "/r/ext/lib"
    ]
    # A folder without its own `project()` is part of the project that reads it, added or not.
    assert _unadded("/r", {**texts, "ext/lib/CMakeLists.txt": "add_library(l l.cpp)\n"}) == []


def test_a_nested_project_the_build_adds_or_builds_is_not_unadded():
    nested = {"ext/lib/CMakeLists.txt": _NESTED}
    for top in (
        "project(app)\nadd_subdirectory(ext/lib)\n",
        "project(app)\nadd_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/ext/lib)\n",
        "project(app)\nadd_subdirectory(ext)\n",  # ext/CMakeLists.txt adds lib
        "project(app)\nExternalProject_Add(lib SOURCE_DIR ${PROJECT_SOURCE_DIR}/ext/lib)\n",
        "project(app)\nadd_subdirectory(ext/lib/src)\n",  # a folder inside it
    ):
        texts = {"CMakeLists.txt": top, "ext/CMakeLists.txt": "add_subdirectory(lib)\n", **nested}
        texts["ext/lib/src/CMakeLists.txt"] = "add_library(l l.cpp)\n"
        assert _unadded("/r", texts) == [], top
    # A module outside nested projects adds folders relative to the top one, which includes it.
    module = {
        "CMakeLists.txt": "project(app)\ninclude(cmake/deps.cmake)\n",
        "cmake/deps.cmake": "add_subdirectory(ext/lib)\n",
    }
    assert _unadded("/r", {**module, **nested}) == []
    # A setup.py running CMake in the folder builds it.
    assert _unadded("/r", {"CMakeLists.txt": "project(app)\n", **nested}, other="cmake_dir = 'ext/lib'") == []


def test_nothing_is_known_without_a_top_file_or_when_a_folder_is_added_through_a_variable():
    nested = {"ext/lib/CMakeLists.txt": _NESTED}
    assert _unadded("/r", {"tools/CMakeLists.txt": "project(tools)\n", **nested}) == []
    loop = "project(app)\nforeach(d IN LISTS DEPS)\n  add_subdirectory(${d})\nendforeach()\n"
    assert _unadded("/r", {"CMakeLists.txt": loop, **nested}) == []


def test_build_files_handing_cpp_sources_to_a_cuda_compiler():
    assert host_sources_as_cuda(
        "CMakeLists.txt", "add_library(a a.cpp)\n\nset_source_files_properties(a.cpp PROPERTIES LANGUAGE CUDA)"
    )
    assert host_sources_as_cuda("Makefile", "k.o: k.cpp\n\tnvcc -x cu -c k.cpp\n") == "Makefile:2"
    assert host_sources_as_cuda("BUILD", 'cuda_library(name = "k", srcs = ["k.cc"])\n') == "BUILD:1"
    assert host_sources_as_cuda("CMakeLists.txt", "set_source_files_properties(a.cpp PROPERTIES LANGUAGE HIP)\n") == ""


_VENDORED = {
    "CMakeLists.txt": "project(app CXX CUDA)\nadd_subdirectory(src)\ninclude_directories(ext/lib/include)\n",
    "src/CMakeLists.txt": "add_library(app main.cpp)\n",
    "src/main.cpp": '#include "lib/core.hpp"\n',
    "ext/lib/CMakeLists.txt": "project(lib CXX CUDA)\nadd_subdirectory(test)\n",
    "ext/lib/test/CMakeLists.txt": "add_executable(t cuda_test.cu)\n",
    "ext/lib/test/cuda_test.cu": '#include "lib/adaptors/cuda.hpp"\n',
    "ext/lib/include/lib/core.hpp": "int core();\n",
    "ext/lib/include/lib/adaptors/cuda.hpp": "#include <cuda_runtime.h>\n",
    "ext/lib/include/lib/adaptors/cublas.hpp": "#include <cublas_v2.h>\n",
}


def test_a_vendored_librarys_own_build_compiles_nothing_and_its_unused_headers_are_not_reported(tmp_path):
    root = write_tree(tmp_path, _VENDORED)
    project = CudaProject.build(root)
    for unbuilt in ("ext/lib/test/cuda_test.cu", "ext/lib/include/lib/adaptors/cublas.hpp"):
        view = project.view(str(root / unbuilt))
        assert view.base == NO_GPU, unbuilt
        assert view.base_evidence == "ext/lib/CMakeLists.txt: a CMake project the build never adds (add_subdirectory)"
    # A header only the unbuilt test includes is compiled by no build either.
    assert project.view(str(root / "ext/lib/include/lib/adaptors/cuda.hpp")).base == NO_GPU
    assert project.view(str(root / "ext/lib/include/lib/core.hpp")).base.on_rocm is not False  # the app includes it
    assert _codes(root, "ext/lib/include/lib/adaptors/cublas.hpp") == []


def test_code_no_build_compiles_is_not_nvidias(tmp_path):
    files = {
        "CMakeLists.txt": "project(prim CXX)\nadd_library(prim src/k.cpp)\n",
        "src/k.cpp": "int lane(int v) { return __builtin_amdgcn_ds_swizzle(v, 0); }\n",
        "test/package/CMakeLists.txt": "project(package_test CXX)\nadd_executable(t t.cpp)\n",
        "test/package/t.cpp": "int main() { return 0; }\n",
    }
    root = write_tree(tmp_path, files)
    # The package test, a project of its own nothing adds, does not make the AMD-native project a mixed one.
    assert CudaProject.build(root).written_for_amd


def test_the_same_header_is_reported_when_the_build_adds_the_library(tmp_path):
    files = {**_VENDORED, "CMakeLists.txt": "project(app CXX CUDA)\nadd_subdirectory(src)\nadd_subdirectory(ext/lib)\n"}
    root = write_tree(tmp_path, files)
    assert ("ROC205", 1) in _codes(root, "ext/lib/include/lib/adaptors/cublas.hpp")


_HOST_HEADER = """
    #ifdef __CUDACC__
    #define LIB_HD __host__ __device__
    #else
    #define LIB_HD
    #endif
    LIB_HD inline int twice(int x) { return 2 * x; }
    """


def _host_tree(tmp_path: Path, extra: dict[str, str]) -> Path:
    files = {
        "CMakeLists.txt": "project(app CXX)\nadd_library(app src/main.cpp src/io.cc)\n",
        "src/main.cpp": '#include "util/twice.hpp"\n',
        "src/io.cc": '#include "util/wrap.hpp"\n',
        "src/util/wrap.hpp": '#include "twice.hpp"\n',
        "src/util/twice.hpp": _HOST_HEADER,
    }
    return write_tree(tmp_path, {**files, **extra})


def test_a_header_only_host_compiled_sources_include_is_a_host_only_unit(tmp_path):
    root = _host_tree(tmp_path, {})
    project = CudaProject.build(root)
    assert project.view(str(root / "src/util/twice.hpp")).host_compiled_only
    assert _codes(root, "src/util/twice.hpp") == []


def test_a_header_no_host_source_includes_is_no_host_only_unit(tmp_path):
    # Only a header of the sources nothing includes (dead code) includes it: nothing says how it is compiled.
    root = _host_tree(tmp_path, {"src/main.cpp": "", "src/io.cc": "", "src/old_api.hpp": '#include "util/twice.hpp"\n'})
    assert not CudaProject.build(root).view(str(root / "src/util/twice.hpp")).host_compiled_only


def test_a_header_a_cuda_source_may_compile_is_no_host_only_unit(tmp_path):
    for extra in (
        {"src/kernel.cu": '#include "util/wrap.hpp"\n'},  # through another header
        {"src/kernel.cu": '#include "twice.hpp"\n', "src/other/twice.hpp": ""},  # an include not followed
        {"include/app/api.hpp": '#include "../../src/util/twice.hpp"\n'},  # a public header users include
        # A kernel template nothing in the tree includes: the sources the build generates do.
        {"src/kernel_template.h": '#include "util/twice.hpp"\n__global__ void k(int* x) { *x = twice(*x); }\n'},
        {
            "CMakeLists.txt": "add_library(app src/main.cpp)\nset_source_files_properties(src/main.cpp PROPERTIES LANGUAGE CUDA)\n"
        },
    ):
        root = _host_tree(tmp_path / str(len(list(tmp_path.iterdir()))), extra)
        assert not CudaProject.build(root).view(str(root / "src/util/twice.hpp")).host_compiled_only, extra
        assert ("ROC214", 1) in _codes(root, "src/util/twice.hpp"), extra


_MAKE_LISTED = {
    "Makefile": "include lib/Makefile.src\nlib.a: $(lib_src:.cu=.o)\n",
    # A make fragment the top Makefile includes, naming its folder's sources through a variable.
    "lib/Makefile.src": "cdir := lib\nlib_src += \\\n\t$(cdir)/gemm.cu \\\n\t$(cdir)/gemv.cu\n%.o: %.cu\n\t$(CC) -c $<\n",
    "lib/gemm.cu": "#include <cublas_v2.h>\nvoid gemm() {}\n",
    "lib/gemv.cu": "void gemv() {}\n",
    "lib/old_gemm.cu": "#include <cublas_v2.h>\nvoid old_gemm() {}\n",
}


def test_a_source_the_makefile_listing_its_folder_leaves_out_is_compiled_by_no_build(tmp_path):
    root = write_tree(tmp_path, _MAKE_LISTED)
    project = CudaProject.build(root)
    view = project.view(str(root / "lib/old_gemm.cu"))
    assert view.base == NO_GPU
    assert view.base_evidence == "lib/Makefile.src:2: the Makefile naming this folder's sources does not name it"
    assert project.view(str(root / "lib/gemm.cu")).base.on_rocm is not False
    assert _codes(root, "lib/old_gemm.cu") == []
    assert ("ROC205", 1) in _codes(root, "lib/gemm.cu")


def test_a_source_left_out_of_a_make_list_is_still_built_when_a_build_may_name_it(tmp_path):
    old = str(tmp_path / "lib/old_gemm.cu")
    for extra in (
        {"tools/Makefile": "t: ../lib/old_gemm.cu\n"},  # named by its path elsewhere
        {"tools/Makefile": "t: $(LIB)/old_gemm.cu $(LIB)/other.cu\n"},  # a file of its name outside that Makefile
        {"Makefile": "SRC := $(wildcard lib/*.cu)\n"},  # a glob over its folder
        {"Makefile": "SRC := $(shell find . -name '*.cu')\n"},  # a shell listing at or above it
        {"CMakeLists.txt": "add_library(l lib/gemm.cu lib/old_gemm.cu)\n"},  # another build names it
        {"lib/gemv.cu": '#include "old_gemm.cu"\n'},  # a listed source includes it
        {"lib/Makefile.src": "lib_src += lib/gemm.cu\n"},  # only one of the folder's sources is named
    ):
        root = write_tree(tmp_path, {**_MAKE_LISTED, **extra})
        assert CudaProject.build(root).view(old).base.on_rocm is not False, extra
        for name in extra:
            (root / name).unlink()


_SCRIPT_BUILT = {
    "CMakeLists.txt": "project(prof CXX)\nif(USE_ROCM)\n  add_definitions(-DHAS_ROCTRACER)\nendif()\nadd_library(p src/p.cpp)\n",
    "src/p.cpp": "int p() { return 0; }\n",
    # A sample built by its own scripts: nvcc for the kernel, g++ linking the CUDA runtime for the host program.
    "sample/build-cu.sh": "#!/bin/bash\nnvcc -c play.cu -o play.o\n",
    "sample/build.sh": "#!/bin/bash\ng++ -O0 \\\n  play.cpp \\\n  -lcudart -lcupti play.o\n",
    "sample/play.cu": '#include "play.cuh"\nvoid k() {}\n',
    "sample/play.cpp": '#include "play.cuh"\nint main() { return 0; }\n',
    "sample/play.cuh": "#include <cuda_runtime.h>\n",
}


def test_sources_a_script_compiles_for_nvidia_only_are_nvidias_where_the_project_builds_rocm(tmp_path):
    root = write_tree(tmp_path, _SCRIPT_BUILT)
    project = CudaProject.build(root)
    for name, evidence in (
        ("sample/play.cu", "sample/build-cu.sh:2: the build compiles it for NVIDIA only"),
        ("sample/play.cpp", "sample/build.sh:2: the build compiles it for NVIDIA only"),
    ):
        assert _base_of(project, root / name) == (False, evidence)
    assert project.view(str(root / "sample/play.cuh")).base.on_rocm is False  # only those sources include it
    assert _codes(root, "sample/play.cuh") == []


def test_a_script_says_nothing_when_it_builds_rocm_too_or_another_build_names_the_source(tmp_path):
    play = str(tmp_path / "sample/play.cpp")
    for extra in (
        {"sample/build.sh": "g++ play.cpp -lcudart\nhipcc play.cpp -o play_hip\n"},  # it builds ROCm as well
        {"sample/build.sh": "g++ play.cpp -L/opt/rocm/lib -lamdhip64\n"},  # it links ROCm's runtime
        {"sample/build.sh": "g++ play.cpp -o play\n"},  # no CUDA compiler or library
        {"CMakeLists.txt": _SCRIPT_BUILT["CMakeLists.txt"] + "add_executable(play sample/play.cpp)\n"},
        {"CMakeLists.txt": "project(prof CXX)\nadd_library(p src/p.cpp)\n"},  # no ROCm build yet: all to port
    ):
        root = write_tree(tmp_path, {**_SCRIPT_BUILT, **extra})
        assert CudaProject.build(root).view(play).base.on_rocm is not False, extra


_PROBED = {
    # The module path holds the probe's module wherever it sits (`include(check_cc)`).
    "CMakeLists.txt": "project(lib CXX)\nenable_language(HIP)\nadd_library(lib src/lib.hip)\ninclude(check_cc)\n",
    "src/lib.hip": "void f() {}\n",
    # A CUDA-backend module's configure probe: a device query `try_run` compiles against the CUDA runtime.
    "cmake/cuda/check_cc.cmake": (
        'set(CC_SOURCE "${CMAKE_CURRENT_LIST_DIR}/cc.cpp")\n'
        "try_run(RUN_RESULT COMPILE_RESULT ${CMAKE_BINARY_DIR} ${CC_SOURCE} LINK_LIBRARIES CUDA::cudart)\n"
    ),
    "cmake/cuda/cc.cpp": "#include <cuda_runtime.h>\nint main() { return 0; }\n",
}


def test_a_configure_probe_of_a_cuda_module_is_compiled_for_nvidia_only(tmp_path):
    root = write_tree(tmp_path, _PROBED)
    assert _base_of(CudaProject.build(root), root / "cmake/cuda/cc.cpp") == (
        False,
        "cmake/cuda/check_cc.cmake:2: the build compiles it for NVIDIA only",
    )
    # The same probe in a module no vendor's: compiled wherever the build configures.
    module = (root / "cmake/cuda/check_cc.cmake").read_text().replace("LIST_DIR}/", "LIST_DIR}/cuda/")
    (root / "cmake/cuda/check_cc.cmake").unlink()
    (root / "cmake/check_cc.cmake").write_text(module)
    assert CudaProject.build(root).view(str(root / "cmake/cuda/cc.cpp")).base.on_rocm is not False


def test_a_probe_run_only_when_the_cuda_option_is_on_is_compiled_for_nvidia_only(tmp_path):
    # A module the top folder includes: `${CMAKE_CURRENT_SOURCE_DIR}` is the folder reading it, and the block
    # needs the CUDA option whatever else it negates.
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(lib CXX)\nenable_language(HIP)\nadd_library(lib src/lib.hip)\ninclude(cmake/arch.cmake)\n",
            "src/lib.hip": "void f() {}\n",
            "cmake/arch.cmake": (
                "if(LIB_ENABLE_CUDA AND NOT CUDA_ARCH_GIVEN)\n"
                "  try_run(R C ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/probes/cc.cpp)\nendif()\n"
            ),
            "cmake/probes/cc.cpp": "#include <cuda_runtime.h>\nint main() { return 0; }\n",
        },
    )
    assert _base_of(CudaProject.build(root), root / "cmake/probes/cc.cpp") == (
        False,
        "cmake/arch.cmake:2: the build compiles it for NVIDIA only",
    )
    # Either option may run it: no vendor's block.
    arch = (root / "cmake/arch.cmake").read_text().replace("AND NOT CUDA_ARCH_GIVEN", "OR LIB_ENABLE_HIP")
    (root / "cmake/arch.cmake").write_text(arch)
    assert CudaProject.build(root).view(str(root / "cmake/probes/cc.cpp")).base.on_rocm is not False


def test_a_probe_named_from_the_including_folder_in_a_module_left_on_the_nvidia_path_is_nvidias(tmp_path):
    """A GPU-detection module that returns unless the CUDA toolkit is found, then `try_run`s a probe it names from the
    including file's folder (`${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_gpu.cu`): nvcc alone compiles the probe."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(lib CXX)\nenable_language(HIP)\nadd_library(lib src/lib.hip)\n"
            "include(CheckGpu)\n",
            "src/lib.hip": "void f() {}\n",
            "cmake/CheckGpu.cmake": (
                "find_package(CUDAToolkit)\nif(NOT CUDAToolkit_FOUND)\n  return()\nendif()\nenable_language(CUDA)\n"
                'set(CHECK_SRC "${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_gpu.cu")\n'
                "try_run(RUN_RESULT COMPILE_SUCCESS SOURCES ${CHECK_SRC})\n"
            ),
            "cmake/check_gpu.cu": "#include <cuda_runtime.h>\nint main() { return 0; }\n",
        },
    )
    assert _base_of(CudaProject.build(root), root / "cmake/check_gpu.cu") == (
        False,
        "cmake/CheckGpu.cmake:7: the build compiles it for NVIDIA only",
    )
    # The same probe in a module every build runs: compiled wherever the build configures.
    module = (root / "cmake/CheckGpu.cmake").read_text()
    (root / "cmake/CheckGpu.cmake").write_text(module.replace("return()", "message(STATUS none)"))
    assert CudaProject.build(root).view(str(root / "cmake/check_gpu.cu")).base.on_rocm is not False


_TOOL_MAKEFILE = (
    "NVCC ?= /usr/local/cuda/bin/nvcc\nSRC := bench.cu\n\nall: bench\n\nbench: $(SRC)\n\t$(NVCC) -O3 $< -o $@ -lnccl\n"
)
_TOOL_BUILT = {
    "CMakeLists.txt": "project(lib CXX)\nif(USE_ROCM)\n  add_definitions(-DUSE_ROCM)\nendif()\nadd_library(l src/l.cpp)\n",
    "src/l.cpp": "int l() { return 0; }\n",
    # A stand-alone tool: its own Makefile runs nvcc and nothing else, and make builds no ROCm anywhere.
    "tools/bench/Makefile": _TOOL_MAKEFILE,
    "tools/bench/bench.cu": "#include <cuda_runtime.h>\n#include <nccl.h>\n",
}


def test_sources_only_an_nvcc_makefile_compiles_are_nvidias_where_another_build_system_builds_rocm(tmp_path):
    root = write_tree(tmp_path, _TOOL_BUILT)
    assert _base_of(CudaProject.build(root), root / "tools/bench/bench.cu") == (
        False,
        "tools/bench/Makefile:2: the build compiles it for NVIDIA only",
    )
    assert _codes(root, "tools/bench/bench.cu") == []


def test_a_makefile_says_nothing_when_it_compiles_for_any_vendor_or_a_rocm_build_names_the_source(tmp_path):
    bench = str(tmp_path / "tools/bench/bench.cu")
    for extra in (
        {"tools/bench/Makefile": "SRC := bench.cu\nbench: $(SRC)\n\t$(CXX) -O3 $< -o $@\n"},  # no CUDA compiler
        {"CMakeLists.txt": _TOOL_BUILT["CMakeLists.txt"] + "add_executable(bench tools/bench/bench.cu)\n"},
        {"CMakeLists.txt": "project(lib CXX)\nadd_library(l src/l.cpp)\n"},  # no ROCm build yet: all to port
    ):
        root = write_tree(tmp_path, {**_TOOL_BUILT, **extra})
        assert CudaProject.build(root).view(bench).base.on_rocm is not False, extra


# An option named for neither vendor whose top-level block only sets CUDA up (its `enable_language(CUDA)` inside a
# compiler probe), a HIP option enabling HIP in a block of its own, and a source list under the CUDA option in
# another CMake file, beside the hand-ported sources the HIP option lists.
_CUDA_OPTION = {
    "CMakeLists.txt": """
        project(solver C CXX)
        option(TPL_ENABLE_GPULIB "Enable the CUDA libraries" OFF)
        option(TPL_ENABLE_ROCLIB "Enable the HIP libraries" OFF)
        if (TPL_ENABLE_GPULIB)
          check_language(CUDA)
          if(CMAKE_CUDA_COMPILER)
            message("-- Enabled support for CUDA.")
            enable_language(CUDA)
            find_package(CUDAToolkit REQUIRED)
          else()
            message("-- CUDA libraries not found.")
          endif()
        endif()
        if (TPL_ENABLE_ROCLIB)
          find_package(hip CONFIG REQUIRED)
          enable_language(HIP)
        endif()
        add_subdirectory(SRC)
        """,
    "SRC/CMakeLists.txt": """
        set(sources util.c)
        if (TPL_ENABLE_GPULIB)
          list(APPEND sources cuda/factor.cu)
        endif()
        if (TPL_ENABLE_ROCLIB)
          list(APPEND sources hip/factor.hip.cpp)
        endif()
        add_library(solver ${sources})
        """,
    "SRC/util.c": "",
    "SRC/cuda/factor.cu": '#include "wrappers.hpp"\n',
    "SRC/cuda/wrappers.hpp": "#include <cublas_v2.h>\n",
    "SRC/hip/factor.hip.cpp": "#include <hip/hip_runtime.h>\n",
}


def test_sources_under_an_option_whose_block_only_sets_cuda_up_are_nvidias(tmp_path):
    root = write_tree(tmp_path, _CUDA_OPTION)
    assert cmake_cuda_only_options([(root / "CMakeLists.txt").read_text()]) == {"TPL_ENABLE_GPULIB"}
    project = CudaProject.build(root)
    assert _base_of(project, root / "SRC/cuda/factor.cu") == (
        False,
        "SRC/CMakeLists.txt:3: the build compiles it for NVIDIA only",
    )
    assert project.view(str(root / "SRC/cuda/wrappers.hpp")).base.on_rocm is False  # only that source includes it
    assert _codes(root, "SRC/cuda/wrappers.hpp") == []


def test_an_option_is_no_cuda_switch_when_its_block_does_more_or_hip_is_built_nowhere_else(tmp_path):
    top = _CUDA_OPTION["CMakeLists.txt"]
    for changed in (
        # The block adds a folder too: a neutral switch with a CUDA probe inside.
        top.replace("  check_language(CUDA)\n", "  add_subdirectory(tests)\n"),
        # Some block of the option enables HIP.
        top.replace(
            "  enable_language(HIP)\n",
            "  enable_language(HIP)\n  if (TPL_ENABLE_GPULIB)\n    enable_language(HIP)\n  endif()\n",
        ),
        # No block of the project builds HIP (neither its language nor its package): nothing tells the option from a
        # general GPU switch.
        top.replace("  find_package(hip CONFIG REQUIRED)\n", "").replace("  enable_language(HIP)\n", ""),
        # The probe enabling CUDA sits in a neutral block of the option's block.
        top.replace("if(CMAKE_CUDA_COMPILER)", "if(BUILD_FAST)"),
    ):
        assert "TPL_ENABLE_GPULIB" not in cmake_cuda_only_options([textwrap.dedent(changed)]), changed
        root = write_tree(tmp_path, {**_CUDA_OPTION, "CMakeLists.txt": changed})
        assert CudaProject.build(root).view(str(root / "SRC/cuda/factor.cu")).base.on_rocm is not False, changed
    # The same option enabling CUDA as a command of its own block, whatever else the block does.
    direct = top.replace("  check_language(CUDA)\n", "  enable_language(CUDA)\n  add_subdirectory(tests)\n")
    assert cmake_cuda_only_options([textwrap.dedent(direct)]) == {"TPL_ENABLE_GPULIB"}


# A CMake build naming its sources one by one, with a ROCm build: an old copy of a kernel beside the listed ones, and a
# folder of retired sources no build reaches.
_LISTED_ONE_BY_ONE = {
    "CMakeLists.txt": "project(solver C CXX)\nif(USE_HIP)\n  enable_language(HIP)\n"
    "  add_compile_definitions(HAVE_HIP)\nendif()\nadd_subdirectory(SRC)\n",
    "SRC/CMakeLists.txt": "add_library(solver util.c cuda/factor.cu cuda/solve.cu)\n",
    "SRC/util.c": "",
    "SRC/cuda/factor.cu": "",
    "SRC/cuda/solve.cu": "",
    "SRC/cuda/scan.cu": "#include <cub/cub.cuh>\n",
    "SRC_OLD/gpu.cu": "#include <cublas_v2.h>\n",
}


def test_a_source_no_build_names_is_compiled_by_no_build(tmp_path):
    root = write_tree(tmp_path, _LISTED_ONE_BY_ONE)
    project = CudaProject.build(root)
    for name in ("SRC/cuda/scan.cu", "SRC_OLD/gpu.cu"):
        view = project.view(str(root / name))
        assert (view.base, view.base_evidence) == (
            NO_GPU,
            "no build file names it, and the CMake build names its sources one by one",
        ), name
        assert _codes(root, name) == []
    assert project.view(str(root / "SRC/cuda/factor.cu")).base.on_rocm is not False


def test_a_source_no_build_names_is_built_when_a_build_may_name_it_or_rocm_is_built_nowhere(tmp_path):
    scan = str(tmp_path / "SRC/cuda/scan.cu")
    top = _LISTED_ONE_BY_ONE["CMakeLists.txt"]
    for extra in (
        {"SRC/CMakeLists.txt": "add_library(solver ${PROJECT_SOURCE_DIR}/SRC/cuda/scan.cu)\n"},  # through a variable
        {"SRC/CMakeLists.txt": "foreach(k factor scan)\n  list(APPEND S cuda/${k}.cu)\nendforeach()\n"},
        # a glob from the project root
        {"SRC/CMakeLists.txt": "file(GLOB S ${CMAKE_SOURCE_DIR}/SRC/cuda/*.cu)\nadd_library(solver ${S})\n"},
        {"SRC/CMakeLists.txt": "aux_source_directory(cuda S)\n"},
        {"SRC/CMakeLists.txt": "target_sources(solver PRIVATE $<$<BOOL:${WITH_SCAN}>:cuda/scan.cu>)\n"},
        {"bench/run.py": "build(file='scan.cu', kernel='scan')\n"},  # a module compiling it at run time
        {"meson.build": "project('solver')\n"},  # a build the model does not read
        {"SRC/CMakeLists.txt": "file(GLOB S cuda/*.cu)\nadd_library(solver ${S})\n"},  # a glob over its folder
        {"SRC/Makefile": "OBJS = factor.o scan.o\n"},  # a Makefile naming its object file
        {"tools/build.sh": "hipcc ../SRC/cuda/scan.cu -o scan\n"},  # a script naming it, not for NVIDIA only
        {"SRC/cuda/factor.cu": '#include "scan.cu"\n'},  # a listed source includes it
        {"setup.py": "from setuptools import setup\nsetup(name='solver')\n"},  # a Python build may compute its list
        {"CMakeLists.txt": top.replace("  enable_language(HIP)\n  add_compile_definitions(HAVE_HIP)\n", "")},
    ):
        root = write_tree(tmp_path, {**_LISTED_ONE_BY_ONE, **extra})
        assert CudaProject.build(root).view(scan).base.on_rocm is not False, extra
        for name in extra:
            if name not in _LISTED_ONE_BY_ONE:
                (root / name).unlink()


def test_a_header_nothing_includes_in_a_build_naming_its_sources_is_compiled_by_no_build(tmp_path):
    """A retired header kept beside the sources: nothing includes it, no build file names it, and the CMake build
    names its sources one by one."""
    old = str(tmp_path / "SRC/cuda/retired/pointer.hpp")
    tree = {**_LISTED_ONE_BY_ONE, "SRC/cuda/retired/pointer.hpp": "#include <cublas_v2.h>\nstruct P {};\n"}
    root = write_tree(tmp_path, tree)
    view = CudaProject.build(root).view(old)
    assert (view.base, view.base_evidence) == (
        NO_GPU,
        "nothing includes it, no build file names it, and the CMake build names its sources one by one",
    )
    assert _codes(root, "SRC/cuda/retired/pointer.hpp") == []
    listed = _LISTED_ONE_BY_ONE["SRC/CMakeLists.txt"]
    for extra in (
        {"SRC/cuda/factor.cu": '#include "pointer.hpp"\n'},  # a header of its name is included
        {"SRC/cuda/factor.cu": "#include KERNEL_HEADER\n"},  # an include the model cannot follow
        {"SRC/CMakeLists.txt": listed + "add_library(hdr INTERFACE cuda/retired/pointer.hpp)\n"},  # a build names it
        {"SRC/CMakeLists.txt": listed + "install(DIRECTORY cuda DESTINATION include)\n"},  # headers installed
        {"SRC/cuda/retired/pointer.hpp": "__global__ void k() {}\n#include <cublas_v2.h>\n"},  # device code
        {"include/pointer.hpp": "#include <cublas_v2.h>\n"},  # a public header
        {"setup.py": "from setuptools import setup\nsetup(name='solver')\n"},  # a Python build may compute lists
    ):
        root = write_tree(tmp_path, {**tree, **extra})
        header = str(root / "include/pointer.hpp") if "include/pointer.hpp" in extra else old
        assert CudaProject.build(root).view(header).base.on_rocm is not False, extra
        for name in extra:
            if name not in tree:
                (root / name).unlink()


def test_a_loop_over_spelled_out_names_and_an_unread_pattern_list_mention_no_other_source(tmp_path):
    """`add_executable(${p} ${p}.cu)` in a loop over a list the file spells out compiles those names only, and a list
    no CMake code reads (a documentation tool's `*.cu` pattern) compiles nothing: neither makes every `.cu` file one
    a build may compile."""
    scan = str(tmp_path / "SRC/cuda/scan.cu")
    listed = _LISTED_ONE_BY_ONE["SRC/CMakeLists.txt"]
    apps = listed + "set(APPS factor solve)\nforeach(p ${APPS})\n  add_executable(${p} cuda/${p}.cu)\nendforeach()\n"
    for extra in (
        {"SRC/CMakeLists.txt": apps},
        {"SRC/CMakeLists.txt": apps.replace("${APPS}", "IN LISTS APPS")},
        {
            "SRC/CMakeLists.txt": listed
            + "foreach(p IN ITEMS factor solve)\n  add_executable(t${p} cuda/${p}.cu)\nendforeach()\n"
        },
        {"docs/CMakeLists.txt": "set(DOXYGEN_FILE_PATTERNS *.h *.cu)\ndoxygen_add_docs(docs)\n"},
    ):
        root = write_tree(tmp_path, {**_LISTED_ONE_BY_ONE, **extra})
        view = CudaProject.build(root).view(scan)
        assert (view.base, view.base_evidence) == (
            NO_GPU,
            "no build file names it, and the CMake build names its sources one by one",
        ), extra
        for name in extra:
            if name not in _LISTED_ONE_BY_ONE:
                (root / name).unlink()
    for extra in (
        {"SRC/CMakeLists.txt": apps.replace("foreach", "list(APPEND APPS scan)\nforeach")},  # the list grows
        {"SRC/CMakeLists.txt": apps.replace("set(APPS factor solve)", "set(APPS factor ${MORE})")},  # not spelled out
        {"SRC/CMakeLists.txt": listed + "set(PATTERN *.cu)\nfile(GLOB S ${PATTERN})\n"},  # a pattern list it reads
    ):
        root = write_tree(tmp_path, {**_LISTED_ONE_BY_ONE, **extra})
        assert CudaProject.build(root).view(scan).base.on_rocm is not False, extra


def test_a_generator_expression_under_a_vendor_switch_lists_that_vendors_source(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(fft CXX)
                add_library(fft
                    src/plan.cpp
                    $<$<BOOL:${Fft_ENABLE_CUDA}>:src/backend_cuda.cu>
                    $<$<BOOL:${Fft_ENABLE_ROCM}>:src/backend_rocm.hip.cpp>
                    $<$<BOOL:${Fft_ENABLE_MAGMA}>:src/magma.cpp>)
                """,
            "src/plan.cpp": "",
            "src/backend_cuda.cu": "#include <cublas.h>\n",
            "src/backend_rocm.hip.cpp": "",
            "src/magma.cpp": "#include <cuda_runtime.h>\n",
        },
    )
    project = CudaProject.build(root)
    cuda = project.view(str(root / "src/backend_cuda.cu"))
    assert (cuda.base.on_rocm, cuda.base_evidence) == (False, "CMakeLists.txt:2: the build compiles it for NVIDIA only")
    assert _codes(root, "src/backend_cuda.cu") == []
    # A switch named for neither vendor: mentioned by the build, so compiled wherever it is switched on.
    assert project.view(str(root / "src/magma.cpp")).base.on_rocm is not False
    assert _codes(root, "src/magma.cpp") == [("ROC204", 1)]


# A Makefile listing each backend's sources once, outside any conditional, and handing each list to what it compiles
# only inside the arm of that vendor's toolkit; the ROCm arm picks the hand-written HIP twins.
_VENDOR_ARMS_MAKEFILE = """\
cuda.c := $(sort $(wildcard backends/cuda/*.c))
hip.c := $(sort $(wildcard backends/hip/*.c))
cuda-all.c := interface/gpu-cuda.c $(cuda.c)
lib.c := $(filter-out interface/gpu-cuda.c, $(wildcard interface/*.c))
ifneq ($(CUDA_DIR),)
  $(cuda-all.c:%.c=%.o) : CPPFLAGS += -I$(CUDA_DIR)/include
  lib.c += $(cuda-all.c)
endif
ifneq ($(ROCM_DIR),)
  lib.c += $(hip.c)
endif
lib.o = $(lib.c:%.c=%.o)
lib.so: $(lib.o)
\t$(CC) -shared -o $@ $^
"""
_VENDOR_ARMS = {
    "Makefile": _VENDOR_ARMS_MAKEFILE,
    "interface/core.c": "int core(void) { return 0; }\n",
    "interface/gpu-cuda.c": '#include "ceed/gpu-cuda.h"\nint gpu(void) { return 0; }\n',
    "interface/ceed/gpu-cuda.h": "#include <cuda.h>\n",
    "backends/cuda/run.c": '#include "run-cuda.h"\nint run(void) { return 0; }\n',
    "backends/cuda/run-cuda.h": "#include <cuda_runtime.h>\n#include <cublas_v2.h>\n",
    "backends/hip/run.c": '#include "run-hip.h"\nint run(void) { return 0; }\n',
    "backends/hip/run-hip.h": "#include <hip/hip_runtime.h>\n",
}


def test_sources_a_makefile_hands_on_only_in_its_nvidia_toolkit_arm_are_nvidias(tmp_path):
    root = write_tree(tmp_path, _VENDOR_ARMS)
    project = CudaProject.build(root)
    for name, evidence in (
        ("backends/cuda/run.c", "Makefile:1: the build compiles it for NVIDIA only"),
        ("interface/gpu-cuda.c", "Makefile:3: the build compiles it for NVIDIA only"),  # not what filter-out names
        ("backends/cuda/run-cuda.h", "backends/cuda/run.c:1: included only where ROCm does not compile"),
        ("interface/ceed/gpu-cuda.h", "interface/gpu-cuda.c:1: included only where ROCm does not compile"),
    ):
        assert _base_of(project, root / name) == (False, evidence), name
        assert _codes(root, name) == [], name
    for name in ("backends/hip/run.c", "backends/hip/run-hip.h", "interface/core.c"):
        assert project.view(str(root / name)).base.on_rocm is not False, name


def test_a_makefile_variable_is_no_vendors_when_read_outside_the_arm_or_the_build_has_no_rocm_arm(tmp_path):
    run = str(tmp_path / "backends/cuda/run.c")
    rocm_arm = "ifneq ($(ROCM_DIR),)\n  lib.c += $(hip.c)\nendif\n"
    for changed in (
        {"Makefile": _VENDOR_ARMS_MAKEFILE.replace(rocm_arm, "")},  # no ROCm arm: every CUDA source is to port
        # A ROCm arm (make builds ROCm) that lists no sources: nothing says the ROCm build picks others.
        {"Makefile": _VENDOR_ARMS_MAKEFILE.replace(rocm_arm, "ifneq ($(ROCM_DIR),)\n  CPPFLAGS += -DUSE_HIP\nendif\n")},
        # The source also named outside the conditional, by its own path.
        {"Makefile": _VENDOR_ARMS_MAKEFILE + "tool: backends/cuda/run.c\n\t$(CC) -o $@ $<\n"},
        # The list read outside the arms: by a rule, a conditional, a list read outside them.
        {"Makefile": _VENDOR_ARMS_MAKEFILE + "tidy: $(cuda.c:%=%.tidy)\n"},
        {"Makefile": _VENDOR_ARMS_MAKEFILE + "ifneq ($(cuda.c),)\n  HAVE = 1\nendif\n"},
        {"Makefile": _VENDOR_ARMS_MAKEFILE + "every.c := $(cuda.c) $(hip.c)\nall: $(every.c)\n"},
        # A computed name that may spell it, another make file of the project reading it.
        {"Makefile": _VENDOR_ARMS_MAKEFILE + "all: $(foreach b,cuda hip,$($(b).c))\n"},
        {"Makefile": _VENDOR_ARMS_MAKEFILE, "tests/Makefile": "t: $(cuda.c)\n"},
    ):
        root = write_tree(tmp_path, {**_VENDOR_ARMS, **changed})
        assert CudaProject.build(root).view(run).base.on_rocm is not False, changed
        assert ("ROC205", 2) in _codes(root, "backends/cuda/run-cuda.h"), changed
        for name in changed:
            if name != "Makefile":
                (root / name).unlink()


def test_a_makefile_variable_read_only_under_a_cuda_switch_is_nvidias_through_other_variables(tmp_path):
    makefile = """\
    KERNELS := $(wildcard kernels/cuda/*.cu)
    HIP_KERNELS := $(wildcard kernels/hip/*.hip)
    GPU_SRC = $(KERNELS)
    ifeq ($(USE_CUDA),1)
      SRC += $(GPU_SRC)
    else ifeq ($(USE_HIP),1)
      SRC += $(HIP_KERNELS)
    endif
    app: $(SRC:=.o)
    """
    files = {
        "Makefile": makefile,
        "kernels/cuda/k.cu": "#include <cublas_v2.h>\n",
        "kernels/hip/k.hip": "#include <hip/hip_runtime.h>\n",
    }
    root = write_tree(tmp_path, files)
    assert _base_of(CudaProject.build(root), root / "kernels/cuda/k.cu") == (
        False,
        "Makefile:1: the build compiles it for NVIDIA only",
    )
    assert _codes(root, "kernels/cuda/k.cu") == []


def test_make_variable_vendors_follow_reads_through_assignments_and_computed_names():
    text = textwrap.dedent(
        """\
        ifeq ($(USE_CUDA),1)
          SRC += $(CU_ALL)
        endif
        CU_ALL = $(CU)
        print-%:
        \t@echo $* = $($*) $($(V))
        """
    )
    lines = list(enumerate(text.splitlines(), 1))
    recipes = frozenset({6})
    arms = {2: "nvidia"}
    assert vendors_reading(lines, recipes, arms, frozenset()) == {"CU_ALL": "nvidia", "CU": "nvidia"}
    # Another make file reads CU; a computed name with a fixed part may spell CU_ALL.
    assert vendors_reading(lines, recipes, arms, frozenset({"CU"})) == {"CU_ALL": "nvidia"}
    computed = [*lines, (7, "all: $($(B)_ALL)")]
    assert vendors_reading(computed, recipes, arms, frozenset()) == {}


# A stand-alone device query no build names, compiled by hand with nvcc, beside its hand-written HIP port.
_HIP_TWINS = {
    "Makefile": "lib.a: src/lib.o\n",
    "src/lib.c": "int lib(void) { return 0; }\n",
    "tools/check_cuda_device.cu": "#include <cuda.h>\n#if CUDA_VERSION >= 11000\nint v = 11;\n#endif\n",
    "tools/check_hip_device.cpp": "#include <hip/hip_runtime.h>\nint main() { return 0; }\n",
    "tools/query.cu": "#include <cuda_runtime.h>\n",
    "tools/query.hip": "#include <hip/hip_runtime.h>\n",
}


def test_a_cuda_source_no_build_names_beside_its_hand_written_hip_twin_is_nvidias(tmp_path):
    root = write_tree(tmp_path, _HIP_TWINS)
    project = CudaProject.build(root)
    for name, twin in (
        ("tools/check_cuda_device.cu", "tools/check_hip_device.cpp"),
        ("tools/query.cu", "tools/query.hip"),
    ):
        evidence = f"{twin}: ROCm compiles its HIP twin beside it, and no build names this file"
        assert _base_of(project, root / name) == (False, evidence), name
        assert _codes(root, name) == [], name
    assert project.view(str(root / "tools/check_hip_device.cpp")).base.on_rocm is not False


def test_a_cuda_source_is_still_reported_when_its_twin_is_no_hip_code_or_a_build_names_it(tmp_path):
    device = str(tmp_path / "tools/check_cuda_device.cu")
    for changed in (
        {"tools/check_hip_device.cpp": "int main() { return 0; }\n"},  # no HIP runtime: not a HIP port
        {"tools/check_hip_device.cpp": "#ifdef USE_HIP\n#include <hip/hip_runtime.h>\n#endif\n"},  # a vendor branch
        {"Makefile": "tools: tools/check_cuda_device.cu\n\t$(CC) -o $@ $<\n"},  # a build names it
        {"CMakeLists.txt": "add_executable(q tools/check_cuda_device.cu)\n"},
        {"Makefile": "OBJ = $(T)/check_cuda_device.o\n"},  # its object file, wherever the variable points
        {"meson.build": "project('q', 'cpp')\n"},  # a build system the model does not read may name it
        {"tools/check_hip_device.cpp": "", "tools/check_hip_device.h": "#include <hip/hip_runtime.h>\n"},  # a header
    ):
        root = write_tree(tmp_path, {**_HIP_TWINS, **changed})
        if not changed.get("tools/check_hip_device.cpp", "x"):
            (root / "tools/check_hip_device.cpp").unlink()
        assert CudaProject.build(root).view(device).base.on_rocm is not False, changed
        assert ("ROC204", 1) in _codes(root, "tools/check_cuda_device.cu"), changed
        for name in changed:
            (root / name).unlink(missing_ok=True)


def test_sources_named_from_the_project_root_are_read_with_the_vendor_of_their_block(tmp_path):
    """`${PROJECT_SOURCE_DIR}/src/x.cc` names a source from the project's root, in a sub-folder's CMake file too: a
    list only the NVIDIA build's macro appends to compiles it for NVIDIA only, and its header, which only such
    sources include ungated, with it; the source both builds list stays compiled on ROCm."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                macro(ADD_CUDA)
                  list(APPEND SOURCES "${PROJECT_SOURCE_DIR}/src/cuda_ops.cc" "${PROJECT_SOURCE_DIR}/src/gpu_ops.cc")
                endmacro()
                if(HAVE_CUDA)
                  ADD_CUDA()
                elseif(HAVE_ROCM)
                  list(APPEND SOURCES "${CMAKE_SOURCE_DIR}/src/hip_ops.cc" "${PROJECT_SOURCE_DIR}/src/gpu_ops.cc")
                  add_definitions(-DHAVE_ROCM=1)
                endif()
                add_library(core ${SOURCES})
                """,
            "src/cuda/kernels.h": "#include <cuda_runtime.h>\n",
            "src/cuda_ops.cc": '#include "cuda/kernels.h"\n',
            "src/gpu_ops.cc": '#if !HAVE_ROCM\n#include "cuda/kernels.h"\n#endif\n',
            "src/hip_ops.cc": "#include <hip/hip_runtime.h>\n",
        },
    )
    project = CudaProject.build(root)
    assert project.view(str(root / "src/cuda_ops.cc")).base.on_rocm is False
    assert project.view(str(root / "src/gpu_ops.cc")).base.on_rocm is not False
    assert project.view(str(root / "src/cuda/kernels.h")).base.on_rocm is False
    assert _codes(root, "src/cuda/kernels.h") == []


_LISTS_CMAKE = """
set(XYZ_SRC solver.cpp)
set(XYZ_CUDA_SRC vector_cuda.cpp)
set(XYZ_HIP_SRC vector_hip.cpp)
if(XYZ_USE_CUDA)
  list(APPEND XYZ_SRC ${XYZ_CUDA_SRC})
  set_source_files_properties(${XYZ_CUDA_SRC} PROPERTIES LANGUAGE CUDA)
elseif(XYZ_USE_HIP)
  list(APPEND XYZ_SRC ${XYZ_HIP_SRC})
endif()
add_library(xyz ${XYZ_SRC})
"""


def test_a_source_list_read_only_in_one_vendors_block_names_that_vendors_sources(tmp_path):
    # `XYZ_CUDA_SRC` is set outside any block but only the `if(XYZ_USE_CUDA)` arm reads it: ROCm never compiles it.
    source = "#include <cusparse.h>\nint f() { return 0; }\n"
    files = {"CMakeLists.txt": _LISTS_CMAKE, "vector_cuda.cpp": source, "vector_hip.cpp": "int g();\n"}
    root = write_tree(tmp_path / "gated", {**files, "solver.cpp": "int s();\n"})
    assert _codes(root, "vector_cuda.cpp") == []
    # Also read outside the block (every build compiles it through `XYZ_ALL`): still a hazard.
    shared = _LISTS_CMAKE + "add_library(xyz_all ${XYZ_CUDA_SRC})\n"
    root = write_tree(tmp_path / "shared", {**files, "CMakeLists.txt": shared, "solver.cpp": "int s();\n"})
    assert _codes(root, "vector_cuda.cpp") == [("ROC205", 1)]
    # Handed to the parent's scope, or with a folder added outside the block, it may be read anywhere.
    for more in ("set(XYZ_CUDA_SRC ${XYZ_CUDA_SRC} PARENT_SCOPE)\n", "add_subdirectory(tests)\n"):
        root = write_tree(tmp_path / str(len(more)), {**files, "CMakeLists.txt": _LISTS_CMAKE + more})
        assert _codes(root, "vector_cuda.cpp") == [("ROC205", 1)]
