"""Sources only the NVIDIA build compiles, read from the build files and the project's vendor names (`CudaProject`
in rocmlint/cuda/project.py, rocmlint/cuda/build_files.py)."""

from __future__ import annotations

from rocmlint.cuda.build_files import cmake_facts, vendor_of_words
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _base_of, _codes, write_tree

# A front end choosing its simulator backend per GPU vendor: NVGPU is NVIDIA's word as AMDGPU is AMD's.
_BACKEND_CHAIN = {
    "Makefile": "all: sim\nsim: wrapper.cpp\n\t$(CXX) -o $@ wrapper.cpp\n",
    "wrapper.cpp": """
        #ifdef USE_NVGPU
        #include "sim_nvgpu.cuh"
        #elif defined USE_AMDGPU
        #include "sim_amdgpu.hpp"
        #else
        #include "sim_cpu.hpp"
        #endif
        """,
    "sim_nvgpu.cuh": "#include <cuda.h>\n",
    "sim_amdgpu.hpp": "#include <hip/hip_runtime.h>\n",
    "sim_cpu.hpp": "",
}


def test_nvgpu_names_nvidia_as_amdgpu_names_amd():
    assert vendor_of_words("USE_NVGPU") == "nvidia"
    assert vendor_of_words("USE_AMDGPU") == "rocm"


def test_a_header_only_the_nvgpu_arm_includes_is_not_compiled_on_rocm(tmp_path):
    root = write_tree(tmp_path, _BACKEND_CHAIN)
    assert _base_of(CudaProject.build(root), root / "sim_nvgpu.cuh") == (
        False,
        "wrapper.cpp:2: included only where ROCm does not compile",
    )
    assert _codes(root, "sim_nvgpu.cuh") == []
    # Included outside the chain, it is compiled on ROCm: its CUDA header is reported.
    root = write_tree(tmp_path / "plain", {**_BACKEND_CHAIN, "other.cpp": '#include "sim_nvgpu.cuh"\n'})
    assert _codes(root, "sim_nvgpu.cuh") == [("ROC204", 1)]


# An automake library whose backends are make fragments, each included only under its configure switch; paths in
# a fragment are relative to the `Makefile.am` including it, and the CUDA headers are found through `-I` alone.
_AUTOMAKE_BACKENDS = {
    "configure.ac": """
        AM_CONDITIONAL([BUILD_GPU_A], [test x${have_cuda} = xyes])
        AM_CONDITIONAL([BUILD_GPU_B], [test x${have_hip} = xyes])
        """,
    "Makefile.am": "lib_LTLIBRARIES = libx.la\nlibx_la_SOURCES = src/core.c\ninclude $(top_srcdir)/src/Makefile.mk\n",
    "src/Makefile.mk": "include $(top_srcdir)/src/cuda/Makefile.mk\ninclude $(top_srcdir)/src/hip/Makefile.mk\n",
    "src/cuda/Makefile.mk": """
        if BUILD_GPU_A
        include $(top_srcdir)/src/cuda/hooks/Makefile.mk
        endif !BUILD_GPU_A
        """,
    "src/cuda/hooks/Makefile.mk": """
        AM_CPPFLAGS += -I$(top_srcdir)/src/cuda/include
        libx_la_SOURCES += src/cuda/hooks/init.c
        """,
    "src/cuda/hooks/init.c": '#include "x_cudai.h"\n',
    "src/cuda/include/x_cudai.h": "#include <x_cudai_base.h>\n",
    "src/cuda/include/x_cudai_base.h": "#include <cuda_runtime_api.h>\n",
    "src/hip/Makefile.mk": """
        if BUILD_GPU_B
        libx_la_SOURCES += src/hip/init.c
        endif !BUILD_GPU_B
        """,
    "src/hip/init.c": "#include <hip/hip_runtime_api.h>\n",
    "src/core.c": "",
}


def test_a_fragment_automake_includes_under_one_vendors_switch_is_that_vendors(tmp_path):
    root = write_tree(tmp_path, _AUTOMAKE_BACKENDS)
    project = CudaProject.build(root)
    hooks = project.view(str(root / "src/cuda/hooks/init.c"))
    assert (hooks.base.on_rocm, hooks.base_evidence) == (
        False,
        "src/cuda/hooks/Makefile.mk:2: the build compiles it for NVIDIA only",
    )
    # Found only through the NVIDIA fragment's `-I`, from a header only NVIDIA compiles.
    assert project.view(str(root / "src/cuda/include/x_cudai_base.h")).base.on_rocm is False
    assert _codes(root, "src/cuda/include/x_cudai_base.h") == []
    assert project.view(str(root / "src/hip/init.c")).base.on_rocm is not False
    assert project.view(str(root / "src/core.c")).base.on_rocm is not False


def test_a_fragment_included_outside_any_switch_keeps_its_sources_for_rocm(tmp_path):
    unswitched = "include $(top_srcdir)/src/cuda/hooks/Makefile.mk\n"
    root = write_tree(tmp_path, {**_AUTOMAKE_BACKENDS, "src/cuda/Makefile.mk": unswitched})
    assert CudaProject.build(root).view(str(root / "src/cuda/hooks/init.c")).base.on_rocm is not False
    assert _codes(root, "src/cuda/include/x_cudai_base.h") == [("ROC204", 1)]


# A CMake library whose CUDA source and backend switch come from generator expressions over per-vendor options.
_GENERATOR_SWITCHES = {
    "CMakeLists.txt": """
        option(XYZ_ENABLE_CUDA "CUDA" OFF)
        option(XYZ_ENABLE_HIP "HIP" OFF)
        add_library(gpu graph.cc $<IF:$<BOOL:${XYZ_ENABLE_CUDA}>, cuda_utils.cu,>)
        target_compile_definitions(gpu PUBLIC
                                   $<IF:$<BOOL:${XYZ_ENABLE_CUDA}>, XYZ_ENABLE_CUDA=1,>
                                   $<IF:$<BOOL:${XYZ_ENABLE_HIP}>, XYZ_ENABLE_HIP=1,>)
        """,
    "graph.cc": '#include "gpu.h"\n',
    "gpu.h": '#if defined(XYZ_ENABLE_CUDA)\n#include "cuda_utils.h"\n#endif\n',
    "cuda_utils.cu": '#include "cuda_utils.h"\n',
    "cuda_utils.h": "#include <cuda_runtime.h>\n",
}


def test_a_generator_expression_defines_its_words_only_where_its_option_is_on():
    text = "target_compile_definitions(g PUBLIC $<IF:$<BOOL:${XYZ_ENABLE_CUDA}>, XYZ_ENABLE_CUDA=1,> PLAIN\n"
    text += "  $<$<BOOL:${XYZ_FLOAT}>:XYZ_FLOAT=1>)\n"
    defines = [(d.name, d.value, d.vendor) for d in cmake_facts("CMakeLists.txt", text).defines]
    assert defines == [("XYZ_ENABLE_CUDA", "1", "nvidia"), ("XYZ_FLOAT", "1", None), ("PLAIN", None, None)]


def test_a_source_and_a_header_only_a_cuda_option_builds_are_nvidias(tmp_path):
    root = write_tree(tmp_path, _GENERATOR_SWITCHES)
    project = CudaProject.build(root)
    assert project.view(str(root / "cuda_utils.cu")).base.on_rocm is False
    assert project.view(str(root / "cuda_utils.h")).base.on_rocm is False
    assert _codes(root, "cuda_utils.h") == []
    # The same header included outside the switch is compiled on ROCm.
    root = write_tree(tmp_path / "open", {**_GENERATOR_SWITCHES, "gpu.h": '#include "cuda_utils.h"\n'})
    assert _codes(root, "cuda_utils.h") == [("ROC204", 1)]
