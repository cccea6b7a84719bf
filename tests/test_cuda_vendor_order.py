"""A macro named for NVIDIA that an `#if` chain tests before a ROCm macro is NVIDIA's by the project's design
(rocmlint/cuda/learning.py `_learn_from_order`), and a condition whose ROCm outcome nvcc's macros do not change
is no hazard (rocmlint/cuda/conditions.py `nvcc_macros_change_no_rocm_code`)."""

from __future__ import annotations

from pathlib import Path

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
