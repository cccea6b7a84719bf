"""Source trees a build compiles for NVIDIA only beside their hand-written HIP twins: a CUDA library folder a project
function lists by paths relative to its own folder, a CUDA backend's `${CMAKE_SOURCE_DIR}` globs, a program folder
whose Makefile runs nvcc only, and a library folder a Makefile's ROCm arm filters out (`CudaProject` in
rocmlint/cuda/project.py, rocmlint/cuda/build_files.py)."""

from __future__ import annotations

import textwrap

from rocmlint.cuda.build_files import cmake_source_functions, makefile_facts
from rocmlint.cuda.cargo_build import cargo_build_facts
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _base_of, _codes, write_tree

# A library function that writes its export header into the build tree, named after the target it is handed.
_LIBRARY_FUNCTION = """
    function(xyz_add_library fullname basename)
      cmake_parse_arguments(ARG "" "TYPE" "" ${ARGN})
      add_library(${fullname} ${ARG_TYPE} ${ARG_UNPARSED_ARGUMENTS})
      set(export_header "${CMAKE_CURRENT_BINARY_DIR}/xyz/${fullname}_export.hpp")
      generate_export_header(${fullname} EXPORT_FILE_NAME "${export_header}")
    endfunction()
    """

_LIBRARY_TWINS = {
    "CMakeLists.txt": """
        project(xyz LANGUAGES CXX)
        include(cmake/xyz-functions.cmake)
        add_subdirectory(core)
        if(XYZ_BUILD_CUDA_LIBRARY)
          add_subdirectory(cuda)
        endif()
        if(XYZ_BUILD_HIP_LIBRARY)
          add_subdirectory(hip)
        endif()
        """,
    "cmake/xyz-functions.cmake": _LIBRARY_FUNCTION,
    "core/CMakeLists.txt": "xyz_add_library(xyz_core core src/core.cpp)\n",
    "core/src/core.cpp": "",
    "cuda/CMakeLists.txt": "enable_language(CUDA)\nxyz_add_library(xyz_cuda cuda src/memory.cpp)\n",
    "cuda/src/memory.cpp": "#include <cuda_runtime_api.h>\nint f() { return 0; }\n",
    "hip/CMakeLists.txt": "enable_language(HIP)\nxyz_add_library(xyz_hip hip src/memory.cpp)\n",
    "hip/src/memory.cpp": "#include <hip/hip_runtime_api.h>\nint f() { return 0; }\n",
}


def test_a_file_a_function_writes_into_the_build_tree_places_no_source_in_a_folder():
    functions = cmake_source_functions([textwrap.dedent(_LIBRARY_FUNCTION)])
    assert functions.names == {"xyz_add_library"}
    assert functions.under_own_folder == frozenset()  # `${CMAKE_CURRENT_BINARY_DIR}/xyz/${fullname}...` is an output
    placing = _LIBRARY_FUNCTION.replace("${ARG_UNPARSED_ARGUMENTS})", "src/${basename}/${ARG_UNPARSED_ARGUMENTS})")
    assert cmake_source_functions([textwrap.dedent(placing)]).under_own_folder == {"xyz_add_library"}


def test_a_cuda_library_folder_listed_by_a_project_function_is_nvidias_beside_its_hip_twin(tmp_path):
    # Both twins list `src/memory.cpp`, each relative to its own folder: the HIP list does not name the CUDA file.
    root = write_tree(tmp_path, _LIBRARY_TWINS)
    assert _base_of(CudaProject.build(root), root / "cuda/src/memory.cpp") == (
        False,
        "cuda/CMakeLists.txt:2: the build compiles it for NVIDIA only",
    )
    assert _codes(root, "cuda/src/memory.cpp") == []
    # A HIP library listing the CUDA file itself compiles it on ROCm: its CUDA header is reported.
    hip = _LIBRARY_TWINS["hip/CMakeLists.txt"].replace("src/memory.cpp", "../cuda/src/memory.cpp")
    root = write_tree(tmp_path / "listed", {**_LIBRARY_TWINS, "hip/CMakeLists.txt": hip})
    assert _codes(root, "cuda/src/memory.cpp") == [("ROC204", 1)]


_BACKEND_GLOBS = {
    "CMakeLists.txt": "project(app LANGUAGES CXX)\nadd_subdirectory(src/apps)\n",
    "src/apps/CMakeLists.txt": """
        file(GLOB APP_SRC "${CMAKE_SOURCE_DIR}/src/*.cpp")
        add_library(app_lib ${APP_SRC})
        if (CUDA_FOUND)
          file(GLOB APP_CUDA_SRC "${CMAKE_SOURCE_DIR}/src/acc/cuda/*.cu")
          cuda_add_library(app_gpu_util ${APP_CUDA_SRC})
        elseif (HIP_FOUND)
          enable_language(HIP)
          file(GLOB APP_HIP_SRC "${CMAKE_SOURCE_DIR}/src/acc/hip/*.cpp")
          add_library(app_gpu_util ${APP_HIP_SRC})
        endif()
        """,
    "src/main.cpp": "",
    "src/acc/cuda/fft.cu": '#include "fft.h"\n',
    "src/acc/cuda/fft.h": "#include <cufft.h>\n",
    "src/acc/hip/fft.cpp": '#include "fft.h"\n',
    "src/acc/hip/fft.h": "#include <hipfft/hipfft.h>\n",
}


def test_a_cuda_backends_glob_from_the_project_root_names_its_sources_for_nvidia_only(tmp_path):
    root = write_tree(tmp_path, _BACKEND_GLOBS)
    project = CudaProject.build(root)
    assert _base_of(project, root / "src/acc/cuda/fft.cu") == (
        False,
        "src/apps/CMakeLists.txt:4: the build compiles it for NVIDIA only",
    )
    assert project.view(str(root / "src/acc/cuda/fft.h")).base.on_rocm is False  # only that source includes it
    assert _codes(root, "src/acc/cuda/fft.h") == []
    assert project.view(str(root / "src/acc/hip/fft.cpp")).base.on_rocm is not False


# Two programs of one make build, each with its own Makefile: one compiles with nvcc, its hand-ported twin with
# hipcc. Their library folders are found by wildcards over computed names.
_NVCC_PROGRAM = """
    TARGET_DIR := $(shell dirname $(realpath $(lastword $(MAKEFILE_LIST))))
    LIBNAMES := $(filter-out bin Makefile%,$(wildcard *))
    define LIB_template
    $(1)_SRC := $$(wildcard $(TARGET_DIR)/$(1)/*.cc)
    $(1)_CUSRC := $$(wildcard $(TARGET_DIR)/$(1)/*.cu)
    endef
    $(foreach lib,$(LIBNAMES),$(eval $(call LIB_template,$(lib))))
    define BUILD_template
    $(OBJ_DIR)/$(2)/%.cc.o: $(SRC_DIR)/$(2)/%.cc
    \t$(CXX) $(CXXFLAGS) -c $$< -o $$@
    $(OBJ_DIR)/$(2)/%.cu.o: $(SRC_DIR)/$(2)/%.cu
    \t$(CUDA_NVCC) $(CUDA_CUFLAGS) -c $$< -o $$@
    endef
    """
_PROGRAM_TWINS = {
    "Makefile": "export CUDA_NVCC := /usr/local/cuda/bin/nvcc\nexport ROCM_HIPCC := /opt/rocm/bin/hipcc\n"
    "cuda:\n\t$(MAKE) -C src/cuda\nhip:\n\t$(MAKE) -C src/hip\n",
    "src/cuda/Makefile": _NVCC_PROGRAM,
    "src/cuda/Core/histogram.h": "#include <cuda_runtime.h>\n",
    "src/cuda/Core/histogram.cu": '#include "histogram.h"\n',
    "src/hip/Makefile": _NVCC_PROGRAM.replace("$(CUDA_NVCC) $(CUDA_CUFLAGS)", "$(ROCM_HIPCC) $(HIPCC_CXXFLAGS)"),
    "src/hip/Core/histogram.h": "#include <hip/hip_runtime.h>\n__global__ void k() { __shared__ int s[warpSize]; }\n",
    "src/hip/Core/histogram.cu": '#include "histogram.h"\n',
}


def test_a_program_folder_whose_makefile_runs_only_nvcc_is_nvidias_beside_its_hip_twin(tmp_path):
    root = write_tree(tmp_path, _PROGRAM_TWINS)
    project = CudaProject.build(root)
    assert _base_of(project, root / "src/cuda/Core/histogram.h") == (
        False,
        "src/cuda/Makefile:12: in a folder whose sources the build compiles for NVIDIA only",
    )
    assert _codes(root, "src/cuda/Core/histogram.h") == []
    assert _codes(root, "src/hip/Core/histogram.h") == [("ROC209", 2)]


def test_a_makefile_building_rocm_too_naming_nvcc_outside_its_recipes_or_without_a_hip_twin_keeps_its_folder():
    for changed in (
        # nvcc only as a variable's default; the recipe runs a compiler variable.
        _NVCC_PROGRAM.replace("$(CUDA_NVCC) $(CUDA_CUFLAGS)", "$(GPU_COMPILER)") + "GPU_COMPILER ?= nvcc\n",
        # A ROCm arm of its own.
        _NVCC_PROGRAM + "ifeq ($(BACKEND),HIP)\nGPU_FLAGS := -x hip\nendif\n",
        # Sources it names one by one: no computed folder, nothing said of the tree.
        _NVCC_PROGRAM.replace("$(TARGET_DIR)/$(1)/", "Core/"),
    ):
        facts = makefile_facts("/p/src/cuda/Makefile", textwrap.dedent(changed), "/p", hip_twin=True)
        assert all(s.pattern != "**" for s in facts.sources), changed
    facts = makefile_facts("/p/src/cuda/Makefile", textwrap.dedent(_NVCC_PROGRAM), "/p", hip_twin=True)
    assert [(s.pattern, s.vendor) for s in facts.sources if s.pattern == "**"] == [("**", "nvidia")]
    # No sibling program compiled with hipcc: nothing says the tree is kept from ROCm.
    facts = makefile_facts("/p/src/cuda/Makefile", textwrap.dedent(_NVCC_PROGRAM), "/p")
    assert all(s.pattern != "**" for s in facts.sources)


_BACKEND_FILTERED = {
    "Makefile": "export ROCM_HIPCC := /opt/rocm/bin/hipcc\nall:\n\t$(MAKE) -C src/portable\n",
    "src/portable/Makefile": """
        LIBNAMES := $(filter-out bin test Makefile%,$(wildcard *))
        ifneq ($(DEVICE_BACKEND),CUDA)
        LIBNAMES := $(filter-out CudaCore,$(LIBNAMES))
        endif
        ifeq ($(DEVICE_BACKEND),HIP)
        DEVICE_CXXFLAGS := -DXYZ_BACKEND_HIP
        endif
        define LIB_template
        $(1)_SRC := $$(wildcard $(TARGET_DIR)/$(1)/*.cc)
        endef
        $(foreach lib,$(LIBNAMES),$(eval $(call LIB_template,$(lib))))
        %.o: %.cc
        \t$(DEVICE_CXX) -c $< -o $@
        """,
    "src/portable/CudaCore/allocate.cc": "#include <cuda_runtime.h>\n",
    "src/portable/Core/allocate.cc": "#include <cuda_runtime.h>\n",
}


def test_a_library_folder_a_makefiles_rocm_arm_filters_out_is_nvidias(tmp_path):
    root = write_tree(tmp_path, _BACKEND_FILTERED)
    project = CudaProject.build(root)
    assert _base_of(project, root / "src/portable/CudaCore/allocate.cc") == (
        False,
        "src/portable/Makefile:3: the build compiles it for NVIDIA only",
    )
    assert _codes(root, "src/portable/CudaCore/allocate.cc") == []
    assert _codes(root, "src/portable/Core/allocate.cc") == [("ROC204", 1)]
    # Filtered out in the CUDA arm instead: the ROCm build keeps the folder.
    makefile = _BACKEND_FILTERED["src/portable/Makefile"].replace("ifneq", "ifeq")
    root = write_tree(tmp_path / "kept", {**_BACKEND_FILTERED, "src/portable/Makefile": makefile})
    assert _codes(root, "src/portable/CudaCore/allocate.cc") == [("ROC204", 1)]


# A Rust crate whose build script compiles its kernels with nvcc or hipcc (the `cc` crate), and an example whose own
# comment gives its nvcc command.
_CRATE = {
    "Cargo.toml": '[package]\nname = "beam"\n',
    "build.rs": """
        fn main() {
            #[cfg(feature = "cuda")]
            {
                let mut cuda_target = cc::Build::new();
                cuda_target
                    .cuda(true)
                    .include("src/gpu/")
                    .file("src/gpu/beam.cu");
                cuda_target.compile("beam_cuda");
            }
            #[cfg(feature = "hip")]
            {
                let mut compiler = hip_path.join("bin/hipcc");
                let mut gpu = cc::Build::new();
                gpu.compiler(compiler).file("src/gpu/beam.cu"); // the same kernel, for ROCm
                gpu.compile("beam_hip");
            }
        }
        """,
    "src/gpu/beam.cu": '#include "beam.h"\n',
    "src/gpu/beam.h": "#include <cuda_runtime.h>\n",
    "examples/beam_cuda_device.cu": """
        // Compile with:
        // nvcc -O3 -I ../include/ -L ../target/release/ -l beam ./beam_cuda_device.cu -o beam_cuda_device
        #include <cuComplex.h>
        """,
}


def test_a_cargo_build_script_compiles_its_sources_per_compiler():
    facts = cargo_build_facts("/p/build.rs", textwrap.dedent(_CRATE["build.rs"]))
    assert [(s.pattern, s.vendor, s.line) for s in facts.sources] == [
        ("src/gpu/beam.cu", "nvidia", 6),
        ("src/gpu/beam.cu", "rocm", 16),
    ]


def test_an_example_its_own_comment_compiles_with_nvcc_is_nvidias_where_the_crate_builds_rocm(tmp_path):
    root = write_tree(tmp_path / "crate", _CRATE)
    project = CudaProject.build(root)
    assert _base_of(project, root / "examples/beam_cuda_device.cu") == (
        False,
        "examples/beam_cuda_device.cu:2: the build compiles it for NVIDIA only",
    )
    assert _codes(root, "examples/beam_cuda_device.cu") == []
    assert project.view(str(root / "src/gpu/beam.h")).base.on_rocm is not False  # hipcc compiles its includer
    assert _codes(root, "src/gpu/beam.h") == [("ROC204", 1)]


def test_an_example_is_kept_when_its_comment_builds_rocm_too_or_the_crate_builds_no_rocm(tmp_path):
    example = _CRATE["examples/beam_cuda_device.cu"]
    for index, changed in enumerate(
        (
            {"examples/beam_cuda_device.cu": example + "// hipcc -O3 ./beam_cuda_device.cu -o beam_hip_device\n"},
            {"examples/beam_cuda_device.cu": example.replace("./beam_cuda_device.cu", "./other.cu")},
            {"build.rs": _CRATE["build.rs"].replace('hip_path.join("bin/hipcc")', "find_compiler()")},
        )
    ):
        root = write_tree(tmp_path / f"crate{index}", {**_CRATE, **changed})
        assert _codes(root, "examples/beam_cuda_device.cu") == [("ROC204", 3)], changed


_OBJECTS_FILTERED = {
    "Makefile": """
        OBJ = $(patsubst $(SRC_DIR)/%.c, $(BUILD_DIR)/%.o,$(wildcard $(SRC_DIR)/*.c))
        ifneq ($(NVIDIA_INTERFACE), true)
        OBJ := $(filter-out $(BUILD_DIR)/nvmon.o,$(OBJ))
        endif
        ifeq ($(ROCM_INTERFACE), true)
        CFLAGS += -DLIKE_ROCM -I/opt/rocm/include
        endif
        lib: $(OBJ)
        \t$(CC) -shared -o lib.so $(OBJ)
        """,
    "src/nvmon.c": '#include "includes/nvmon_cupti.h"\n',
    "src/includes/nvmon_cupti.h": "#include <cupti.h>\n#include <cuda.h>\n",
}


def test_an_object_a_makefiles_rocm_arm_filters_out_is_nvidias(tmp_path):
    """`OBJ := $(filter-out $(BUILD_DIR)/nvmon.o,$(OBJ))` where NVIDIA's interface is off: its source, and the headers
    only it includes, are NVIDIA's."""
    root = write_tree(tmp_path, _OBJECTS_FILTERED)
    project = CudaProject.build(root)
    assert _base_of(project, root / "src/nvmon.c") == (False, "Makefile:3: the build compiles it for NVIDIA only")
    assert _codes(root, "src/includes/nvmon_cupti.h") == []
    # Filtered out where the interface is on instead: the ROCm build keeps it.
    makefile = _OBJECTS_FILTERED["Makefile"].replace("ifneq ($(NVIDIA", "ifeq ($(NVIDIA")
    root = write_tree(tmp_path / "kept", {**_OBJECTS_FILTERED, "Makefile": makefile})
    assert _codes(root, "src/includes/nvmon_cupti.h") != []
