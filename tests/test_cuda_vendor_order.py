"""A macro named for NVIDIA that an `#if` chain tests before a ROCm macro is NVIDIA's by the project's design
(rocmlint/cuda/learning.py `_learn_from_order`), and a condition whose ROCm outcome nvcc's macros do not change
is no hazard (rocmlint/cuda/conditions.py `nvcc_macros_change_no_rocm_code`); NVIDIA-only libraries in a name,
and an NVRTC test in a project only NVIDIA compiles at run time."""

from __future__ import annotations

from pathlib import Path

from rocmlint.cuda.build_files import vendor_of_macro_name, vendor_of_words
from rocmlint.cuda.file_facts import read_facts
from rocmlint.cuda.preprocessor import VendorMacros
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

# The back-end macros of a project with one back end per vendor: `XYZ_USE_HIP` is ROCm's by its arms (HIP calls
# beside CUDA calls), `XYZ_USE_CUDA` only by its name until a chain tests it before `XYZ_USE_HIP`.
_STREAM = """
    #if defined(XYZ_USE_HIP)
    #include <hip/hip_runtime.h>
    inline void sync() { hipDeviceSynchronize(); }
    #else
    #include <cuda_runtime.h>
    inline void sync() { cudaDeviceSynchronize(); }
    #endif
    """
_BACKENDS = """
    #if defined(XYZ_USE_CUDA)
    inline const char* backend() { return "cuda"; }
    #elif defined(XYZ_USE_HIP)
    inline const char* backend() { return "hip"; }
    #endif
    """
_GRAPH = """
    #if defined(__CUDACC__) && defined(XYZ_USE_CUDA)
    #include <cuda/pipeline>
    void capture_graph();
    #endif
    """


def test_chains_record_the_macros_tested_alone_before_others():
    text = """#if defined(A_CUDA)
#elif B_HIP
#elif defined(C) && defined(D)
#elif defined(E)
#endif
#ifndef F
#elif defined(G)
#endif
"""
    facts = read_facts("/x/a.h", text, VendorMacros())
    assert facts.tested_before == (("A_CUDA", "B_HIP", 1), ("A_CUDA", "E", 1), ("B_HIP", "E", 2))


def test_a_macro_named_for_nvidia_tested_before_a_rocm_macro_is_nvidias(tmp_path: Path):
    root = write_tree(tmp_path, {"stream.h": _STREAM, "backend.h": _BACKENDS, "graph.cuh": _GRAPH})
    learned = CudaProject.build(root).learned["XYZ_USE_CUDA"]
    assert (learned.vendor, learned.evidence.kind) == ("nvidia", "arms")
    assert learned.evidence.why == "an #if chain tests it before the ROCm macro XYZ_USE_HIP"
    # `defined(__CUDACC__)` beside it changes nothing on ROCm: the project's macro already leaves the arm out.
    assert _codes(root, "graph.cuh") == []


def test_order_alone_or_name_alone_decides_nothing(tmp_path: Path):
    # Tested after the ROCm macro: a ROCm build defining it would still compile its own arm first.
    after = _BACKENDS.replace("XYZ_USE_CUDA", "XYZ_TMP").replace("XYZ_USE_HIP", "XYZ_USE_CUDA")
    after = after.replace("XYZ_TMP", "XYZ_USE_HIP")
    root = write_tree(tmp_path / "after", {"stream.h": _STREAM, "backend.h": after, "graph.cuh": _GRAPH})
    assert CudaProject.build(root).learned["XYZ_USE_CUDA"].evidence.kind == "name"
    assert _codes(root, "graph.cuh") == [("ROC214", 1)]
    # A macro whose name names no vendor, tested before a ROCm macro: an option that may win on ROCm too.
    plain = _BACKENDS.replace("XYZ_USE_CUDA", "XYZ_FAST_PATH")
    root = write_tree(tmp_path / "plain", {"stream.h": _STREAM, "backend.h": plain})
    assert "XYZ_FAST_PATH" not in CudaProject.build(root).learned


def test_a_macro_named_for_an_nvidia_only_library_is_nvidias():
    assert vendor_of_macro_name("NUMA_NVML") == "nvidia"
    assert vendor_of_macro_name("XYZ_USE_CUPTI") == "nvidia"
    assert vendor_of_macro_name("LIBKINETO_NOCUPTI") is None  # one word, not the library's name
    assert vendor_of_macro_name("XYZ_HIP_NVML") == "rocm"
    # A build condition naming one may pick a file serving both vendors (`if(NVML_LIB_PATH)`): no vendor's.
    assert vendor_of_words("NVML_LIB_PATH") is None


_RTC_TEST = """
    #ifndef __CUDACC_RTC__
    #include <cstdio>
    #define XYZ_COMPLEX double _Complex
    #else
    #define XYZ_COMPLEX double2
    #endif
    """


def test_an_rtc_test_decides_nothing_where_only_nvidia_compiles_at_run_time(tmp_path: Path):
    jit = "#include <nvrtc.h>\nvoid build(nvrtcProgram p) { nvrtcCompileProgram(p, 0, nullptr); }\n"
    files = {
        "CMakeLists.txt": """
            add_library(xyz complex.cu)
            if(XYZ_TARGET STREQUAL "CUDA")
              enable_language(CUDA)
              target_sources(xyz PRIVATE cuda/jit.cpp)
            else()
              enable_language(HIP)
            endif()
            """,
        "complex.h": _RTC_TEST,
        "cuda/jit.cpp": jit,
    }
    root = write_tree(tmp_path / "nvidia_jit", files)
    view = CudaProject.build(root).view(str(root / "complex.h"))
    assert view.runtime_compiled_only_on_nvidia == "cuda/jit.cpp compiles at run time, and ROCm does not compile it"
    assert _codes(root, "complex.h") == []
    # Compiled at run time where ROCm compiles too (here: no build says otherwise), the test is ROCm's to decide.
    files["CMakeLists.txt"] = "add_library(xyz complex.cu cuda/jit.cpp)\n"
    root = write_tree(tmp_path / "shared_jit", files)
    assert CudaProject.build(root).view(str(root / "complex.h")).runtime_compiled_only_on_nvidia == ""
    assert _codes(root, "complex.h") == [("ROC214", 1)]
    # A project that never compiles at run time (none of its C++ files does): nothing to tell, reported as before.
    root = write_tree(tmp_path / "no_jit", {"complex.h": _RTC_TEST})
    assert _codes(root, "complex.h") == [("ROC214", 1)]


# A dependency's backend switches, tested in separate blocks: `DEP_ENABLE_HIP` is the ROCm twin of
# `DEP_ENABLE_CUDA`.
_TWIN_BLOCKS = """
    #if defined(DEP_ENABLE_CUDA) && defined(__CUDACC__)
    using launch_policy = dep::cuda_launch_t<true>;
    #endif
    #if defined(DEP_ENABLE_HIP) && defined(__HIP__)
    using launch_policy = dep::hip_launch_t<true>;
    #endif
    """


def test_a_macro_named_for_nvidia_whose_rocm_twin_is_tested_is_nvidias(tmp_path: Path):
    root = write_tree(tmp_path / "twins", {"policy.hpp": _TWIN_BLOCKS})
    learned = CudaProject.build(root).learned["DEP_ENABLE_CUDA"]
    assert (learned.vendor, learned.evidence.kind) == ("nvidia", "arms")
    assert learned.evidence.why == "the project also tests its ROCm twin DEP_ENABLE_HIP"
    assert _codes(root, "policy.hpp") == []


def test_no_twin_or_a_twin_tested_first_decides_nothing(tmp_path: Path):
    # Without the twin the name alone may mean "CUDA or HIP".
    alone = _TWIN_BLOCKS.replace("DEP_ENABLE_HIP", "DEP_ENABLE_OMP")
    root = write_tree(tmp_path / "alone", {"policy.hpp": alone})
    assert CudaProject.build(root).learned["DEP_ENABLE_CUDA"].evidence.kind == "name"
    assert _codes(root, "policy.hpp") == [("ROC214", 1)]
    # A chain testing the twin first is written for a ROCm build that may define both.
    chain = "#if defined(DEP_ENABLE_HIP)\nint hip();\n#elif defined(DEP_ENABLE_CUDA)\nint cuda();\n#endif\n"
    root = write_tree(tmp_path / "first", {"policy.hpp": _TWIN_BLOCKS, "chain.h": chain})
    assert CudaProject.build(root).learned["DEP_ENABLE_CUDA"].evidence.kind == "name"
    assert _codes(root, "policy.hpp") == [("ROC214", 1)]
