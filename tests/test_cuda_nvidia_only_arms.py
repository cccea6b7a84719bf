"""An `#if` arm testing nvcc's macros that could never build on ROCm by the project's design (rocmlint/cuda/conditions.py
`nvidia_only_by_design`): it uses names the project's headers declare only under the project's own NVIDIA macro, and
ROCm takes the arm after it. An arm of portable code is still a hazard: ROCm silently drops it."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

_DEVICE = """
    #pragma once
    #if defined(__HIP_PLATFORM_AMD__)
    #define XYZ_DEVICE_HIP
    #else
    #define XYZ_DEVICE_CUDA
    #endif
    """
_SWITCH = """
    #pragma once
    #include "device.hpp"
    struct Switch {
      void* mc;
    #if defined(XYZ_DEVICE_CUDA)
      template <typename T>
      __device__ static void multimemStore(const T& v, T* p) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"(v)); }
    #endif
    };
    """
_KERNEL = """
    #include "switch.hpp"
    __global__ void store(Switch* s, unsigned* out, unsigned v) {
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      Switch::multimemStore(v, out);
    #else
      out[threadIdx.x] = v;
    #endif
    }
    """


def test_an_arm_using_names_declared_only_for_nvidia_is_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"device.hpp": _DEVICE, "switch.hpp": _SWITCH, "kernel.cu": _KERNEL})
    assert _codes(root, "kernel.cu") == []


def test_an_arm_of_portable_code_is_still_reported(tmp_path: Path):
    portable = _KERNEL.replace("  Switch::multimemStore(v, out);", "  out[threadIdx.x] = v * 2;")
    root = write_tree(tmp_path / "p", {"device.hpp": _DEVICE, "switch.hpp": _SWITCH, "kernel.cu": portable})
    assert ("ROC207", 3) in _codes(root, "kernel.cu")


def test_a_name_declared_for_rocm_too_is_no_evidence(tmp_path: Path):
    both = _SWITCH.replace(
        "    #endif\n    };",
        "    #else\n      template <typename T>\n      __device__ static void multimemStore(const T& v, T* p) { *p = v; }\n"
        "    #endif\n    };",
    )
    root = write_tree(tmp_path / "p", {"device.hpp": _DEVICE, "switch.hpp": both, "kernel.cu": _KERNEL})
    assert ("ROC207", 3) in _codes(root, "kernel.cu")


# Helpers calling the NVIDIA-only ones, under an architecture test of their own: an arm using them needs them too.
_HELPERS = """
    #pragma once
    #include "switch.hpp"
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    template <typename T>
    __device__ void storeAll(Switch* s, T* out, T v) {
      using Word = T;
      Switch::multimemStore(Word(v), out);
    }
    #endif
    """
_PIPELINE = """
    #include "helpers.hpp"
    __global__ void pipeline(Switch* s, unsigned* out, unsigned v) {
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      storeAll(s, out, v);
    #endif
    }
    """


def test_an_arm_using_helpers_that_need_nvidia_only_names_is_no_hazard(tmp_path: Path):
    files = {"device.hpp": _DEVICE, "switch.hpp": _SWITCH, "helpers.hpp": _HELPERS, "pipeline.cu": _PIPELINE}
    root = write_tree(tmp_path / "p", files)
    assert _codes(root, "pipeline.cu") == []
    # A local of such a helper (`Word`) is no name of the project's: an arm using one is still reported.
    local = _PIPELINE.replace("  storeAll(s, out, v);", "  unsigned Word = v; out[0] = Word;")
    root = write_tree(tmp_path / "local", {**files, "pipeline.cu": local})
    assert ("ROC207", 3) in _codes(root, "pipeline.cu")


# Class members only the project's NVIDIA code defines and calls (`defined(__CUDACC__) && defined(XYZ_DEVICE_CUDA)`).
_GRAPH = """
    #pragma once
    #include "device.hpp"
    struct Device {
      static void sync();
    #if defined(__CUDACC__)
      static void startGraph(int first);
    #endif
    };
    """
_GRAPH_USER = """
    #include "graph.hpp"
    void Device::sync() {}
    #if defined(__CUDACC__) && defined(XYZ_DEVICE_CUDA)
    void Device::startGraph(int first) {}
    void record() { Device::startGraph(1); }
    #endif
    """


def test_class_members_named_only_in_nvidia_code_are_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"device.hpp": _DEVICE, "graph.hpp": _GRAPH, "graph.cu": _GRAPH_USER})
    assert _codes(root, "graph.hpp") == []
    # Called where ROCm compiles too: ROCm needs the member.
    called = _GRAPH_USER + "void replay() { Device::startGraph(0); }\n"
    root = write_tree(tmp_path / "called", {"device.hpp": _DEVICE, "graph.hpp": _GRAPH, "graph.cu": called})
    assert ("ROC214", 5) in _codes(root, "graph.hpp")


def test_declarations_about_libcudacxx_types_are_no_hazard(tmp_path: Path):
    traits = """
    #pragma once
    #include <complex>
    #if defined(__CUDACC__)
    #include <cuda/std/complex>
    template <> struct Traits<::cuda::std::complex<float>> { typedef float Real; };
    #endif
    """
    root = write_tree(tmp_path / "p", {"traits.h": traits, "use.cu": '#include "traits.h"\n'})
    assert _codes(root, "traits.h") == []
    # Portable code in the arm: ROCm silently drops it.
    portable = traits.replace("#endif", "template <> struct Traits<float> { typedef float Real; };\n    #endif")
    root = write_tree(tmp_path / "portable", {"traits.h": portable, "use.cu": '#include "traits.h"\n'})
    assert ("ROC214", 3) in _codes(root, "traits.h")
