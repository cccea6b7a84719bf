"""A project's own CUDA macros whose arms have a HIP twin (rocmlint/cuda/learning.py, build_files.py): the `-D`s of
Makefiles named after their vendor, a CUDA toolkit macro a vendored header gives a stand-in value, the project's own
mask-dropping `*_sync` for ROCm (ROC210), and tests whose arms only print a `#warning` (ROC214, ROC215)."""

from __future__ import annotations

from pathlib import Path

from test_cuda_project import _codes as _all_codes
from test_cuda_project import write_tree

from rocmlint.cuda.project import CudaProject

# A backend header with one arm per vendor macro; the CUDA arm's includes are ROC204's on every build compiling it.
_BACKEND = """
    #pragma once
    #ifdef _XYZ_DEVICE_CUDA_
    #include <cuda_runtime.h>
    #endif
    #ifdef _XYZ_DEVICE_HIP_
    #include <hip/hip_runtime.h>
    #endif
    """


def _codes(root: Path, name: str, select: str) -> list[tuple[str, int]]:
    return [(code, line) for code, line in _all_codes(root, name) if code == select]


def test_makefiles_named_for_each_vendor_define_that_vendors_macros(tmp_path):
    # `Makefile.cuda` runs g++ (no nvcc, no hipcc): its name alone says which build it is, because the project keeps a
    # `Makefile.hip` for the other; a folder with only the CUDA one is not built for ROCm at all.
    root = write_tree(
        tmp_path,
        {
            "core/backend.hpp": _BACKEND,
            "core/use.cpp": '#include "backend.hpp"\n',
            "app/Makefile.cuda": "FLAGS = -O3 -D_XYZ_DEVICE_CUDA_\nall:\n\tg++ $(FLAGS) -o app main.cpp\n",
            "app/Makefile.hip": "FLAGS = -O3 -D_XYZ_DEVICE_HIP_\nall:\n\tg++ $(FLAGS) -o app main.cpp\n",
            "app/main.cpp": '#include "../core/backend.hpp"\n',
            "tool/Makefile.cuda": "FLAGS = -D_XYZ_DEVICE_CUDA_\nall:\n\tg++ $(FLAGS) -o tool main.cpp\n",
            "tool/main.cpp": '#include "../core/backend.hpp"\n',
        },
    )
    learned = CudaProject.build(root).learned
    assert learned["_XYZ_DEVICE_CUDA_"].vendor == "nvidia"
    assert learned["_XYZ_DEVICE_HIP_"].vendor == "rocm"
    assert _codes(root, "core/backend.hpp", "ROC204") == []


def test_a_makefile_named_for_cuda_without_a_hip_twin_keeps_its_macros_for_every_build(tmp_path):
    # No `Makefile.hip` anywhere: before a port, the CUDA Makefile is the only build, and what its macro gates is what
    # a ROCm build of the project would compile.
    root = write_tree(
        tmp_path,
        {
            "core/backend.hpp": _BACKEND,
            "app/Makefile.cuda": "FLAGS = -O3 -D_XYZ_DEVICE_CUDA_\nall:\n\tg++ $(FLAGS) -o app main.cpp\n",
            "app/main.cpp": '#include "../core/backend.hpp"\n',
        },
    )
    assert "_XYZ_DEVICE_CUDA_" not in CudaProject.build(root).learned
    assert _codes(root, "core/backend.hpp", "ROC204") == [("ROC204", 3)]


def test_a_cuda_macro_a_vendored_header_defines_as_a_stand_in_does_not_tell_rocm_apart(tmp_path):
    # One library defines `CUDA_VERSION 0` where its CUDA option is off (learned as "defined on ROCm only"); another
    # library's `#ifndef CUDA_VERSION #error` sanity check inside its CUDA arm is still a test of CUDA's own macro, so
    # ROCm does not compile that arm and the arm's macro keeps the NVIDIA side its HIP twin tells.
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(LIBA_CUDA)\n  add_definitions(-DLIBA_CUDA_ENABLED)\nendif()\n"
            "if(LIBA_HIP)\n  add_definitions(-DLIBA_HIP_ENABLED)\nendif()\n",
            "liba/polyfill.hpp": "#pragma once\n#if LIBA_CUDA_ENABLED\n#include <cuda.h>\n#else\n#define CUDA_VERSION 0\n"
            "#endif\n#if CUDA_VERSION > 0\nint liba_version();\n#endif\n",
            "libb/utils.hpp": """
                #pragma once
                #if defined(LIBB_USING_CUDA)
                #include <cuda_runtime.h>
                #ifndef CUDA_VERSION
                #error CUDA_VERSION undefined
                #endif
                #elif defined(LIBB_USING_HIP)
                #include <hip/hip_runtime.h>
                #endif
                """,
            "libb/use.cpp": '#include "utils.hpp"\n',
        },
    )
    learned = CudaProject.build(root).learned
    assert learned["LIBB_USING_CUDA"].vendor == "nvidia"
    assert _codes(root, "libb/utils.hpp", "ROC204") == []


# A library's own `*_sync` for HIPs without them, declared over several lines as such libraries do.
_SHIMS = """
    #if defined(LIB_USING_HIP)
    template <typename T>
    static __device__ __forceinline__
    T __shfl_down_sync(unsigned mask, T val, unsigned delta, int width = 64)
    {
       return BODY;
    }
    #endif
    __device__ float reduce(float v) {
      for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
      return v;
    }
    """


def test_a_call_of_the_projects_own_sync_shim_dropping_the_mask_is_the_projects(tmp_path):
    root = write_tree(tmp_path, {"k.cu": _SHIMS.replace("BODY", "__shfl_down(val, delta, width)")})
    assert _codes(root, "k.cu", "ROC210") == []


def test_a_shim_passing_its_mask_on_still_needs_a_64_bit_one(tmp_path):
    body = "__shfl_down_sync((unsigned long long)mask, val, delta, width)"
    root = write_tree(tmp_path, {"k.cu": _SHIMS.replace("BODY", body)})
    assert ("ROC210", 10) in _codes(root, "k.cu", "ROC210")


def test_a_shim_only_nvidia_compiles_leaves_rocms_calls_to_hip(tmp_path):
    shims = _SHIMS.replace("defined(LIB_USING_HIP)", "!defined(__HIP_PLATFORM_AMD__) && defined(__CUDACC__)")
    root = write_tree(tmp_path, {"k.cu": shims.replace("BODY", "__shfl_down(val, delta, width)")})
    assert ("ROC210", 10) in _codes(root, "k.cu", "ROC210")


def test_an_nvcc_test_that_only_prints_a_warning_changes_no_rocm_code(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "util.h": """
                #include <cuda_runtime.h>
                #if !defined(__NVCC__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_USE_CXX11_ABI)
                # warning You are using an ancient version GNU libstdc++.
                #endif
                __global__ void k(float* x) { x[0] = 1.f; }
                """,
            "main.cu": '#include "util.h"\n',
        },
    )
    assert _codes(root, "util.h", "ROC214") == []


def test_an_nvcc_test_with_code_beside_its_warning_is_still_reported(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "util.h": """
                #include <cuda_runtime.h>
                #if !defined(__NVCC__)
                # warning host compiler
                #define XYZ_HD
                #endif
                __global__ void k(float* x) { x[0] = 1.f; }
                """,
            "main.cu": '#include "util.h"\n',
        },
    )
    assert _codes(root, "util.h", "ROC214") == [("ROC214", 2)]
