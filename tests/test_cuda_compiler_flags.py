"""Project macros that only an NVIDIA build sets, learned from how the project defines them (rocmlint/cuda/
preprocessor.py, learning.py, build_files.py, project.py): a flag per compiler (`XYZ_COMPILE_CUDA` under `__CUDACC__`
beside `XYZ_COMPILE_HIP` under `__HIPCC__`), a device-pass flag ROCm's build defines as 0, the selector macro such
a flag picks, a configured variable copied in the CUDA block of CMake, and autoconf's `HAVE_CONFIG_H`."""

from __future__ import annotations

from pathlib import Path

from rocmlint.cuda.build_files import cmake_facts
from rocmlint.cuda.preprocessor import MacroShape, VendorMacros, analyse, dropped_on_rocm, unused_parameters
from rocmlint.vendor import Branch
from tests.test_cuda_project import _codes, write_tree

# One flag per compiler, set in the project's platform header; the HIP flag's arm is ROCm's.
_PLATFORM = """
#pragma once
#if defined(__CUDACC__)
  #define XYZ_COMPILE_CUDA
#endif
#if defined(__HIPCC__)
  #define XYZ_COMPILE_HIP
#endif
#if defined(XYZ_COMPILE_CUDA)
  #include <cuda_fp16.h>
#elif defined(XYZ_COMPILE_HIP)
  #include <hip/hip_fp16.h>
#endif
"""
_KERNEL = """
#include "platform.h"
__device__ float reduce(float v) {
#if defined(XYZ_COMPILE_CUDA)
  v += __shfl_down_sync(0xFFFFFFFF, v, 1);
#else
  v += __shfl_down(v, 1);
#endif
  return v;
}
"""


def test_a_flag_set_under_cudacc_beside_its_hip_twin_is_nvidias(tmp_path: Path):
    root = write_tree(tmp_path, {"common/platform.h": _PLATFORM, "core/kernel.h": _KERNEL})
    # HIP-Clang never defines `__CUDACC__`, and the project gave it a flag of its own: the CUDA arms are NVIDIA's, in
    # the header itself and in the files including it.
    # (Only the compiler test itself is left, ROC214's own question.)
    assert _codes(root, "common/platform.h") == [("ROC214", 2)]
    assert _codes(root, "core/kernel.h") == []


def test_a_flag_set_under_cudacc_alone_stays_open_to_rocm(tmp_path: Path):
    # No HIP twin: a hipified or HIP-on-NVIDIA build may read `__CUDACC__` as set, the arms are reported.
    platform = _PLATFORM.replace("XYZ_COMPILE_HIP", "XYZ_COMPILE_OTHER")
    root = write_tree(tmp_path, {"common/platform.h": platform, "core/kernel.h": _KERNEL})
    assert ("ROC204", 9) in _codes(root, "common/platform.h")
    assert [code for code, _ in _codes(root, "core/kernel.h")] == ["ROC210"]


# A device-pass flag defined 1 for nvcc's device pass (or NVIDIA's HPC compiler) and 0 otherwise, with a selector
# macro keeping its argument for that pass only.
_BACKEND = """
#pragma once
#if defined(__CUDACC__) && defined(__NVCOMPILER)
 #define XYZ_CUDA_NVCXX
#endif
#if defined(__CUDA_ARCH__) || defined(XYZ_CUDA_NVCXX)
 #define XYZ_DEVICE_PASS_CUDA 1
#else
 #define XYZ_DEVICE_PASS_CUDA 0
#endif
#if defined(__HIP_DEVICE_COMPILE__)
 #define XYZ_DEVICE_PASS_HIP 1
#else
 #define XYZ_DEVICE_PASS_HIP 0
#endif
#if XYZ_DEVICE_PASS_CUDA
 #define XYZ_IF_CUDA(...) __VA_ARGS__
#else
 #define XYZ_IF_CUDA(...)
#endif
#if XYZ_DEVICE_PASS_HIP
 #define XYZ_IF_HIP(...) __VA_ARGS__
#else
 #define XYZ_IF_HIP(...)
#endif
"""
# Includes nothing: only the learned flag tells it what ROCm's build sets.
_SHUFFLE = """
#pragma once
#if XYZ_DEVICE_PASS_CUDA
__device__ int shuffle(int v) { return __shfl_sync(0xffffffff, v, 1); }
#endif
"""
_BARRIER = """
#include "backend.hpp"
__device__ void barrier() {
  XYZ_IF_CUDA(__syncwarp(););
  XYZ_IF_HIP(__syncwarp(););
}
"""


def test_a_pass_flag_rocm_defines_as_0_closes_its_arms_everywhere(tmp_path: Path):
    root = write_tree(tmp_path, {"lib/backend.hpp": _BACKEND, "lib/shuffle.hpp": _SHUFFLE, "lib/barrier.hpp": _BARRIER})
    assert _codes(root, "lib/shuffle.hpp") == []
    # ROCm's definition of the selector drops its argument; the HIP selector keeps it on ROCm's device pass.
    assert _codes(root, "lib/barrier.hpp") == [("ROC217", 4)]


def test_a_selector_may_drop_its_argument_in_a_definition_rocm_shares_with_a_host_pass():
    defines = analyse(_BACKEND, VendorMacros()).defines
    assert unused_parameters(defines["XYZ_IF_CUDA"][1]) == {0}  # `(...)` naming no `__VA_ARGS__`
    assert unused_parameters(defines["XYZ_IF_CUDA"][0]) == frozenset()
    used = MacroShape(Branch(False, None), 1, frozenset())
    dropped = MacroShape(Branch(True, None), 1, frozenset({0}))
    assert dropped_on_rocm([used, dropped]) == (1, {0})
    # Without a definition ROCm never compiles, nothing is vendor-selected.
    assert dropped_on_rocm([MacroShape(Branch(None, None), 1, frozenset()), dropped]) is None


# A configured variable copied from a package's result, inside the CUDA block only.
_CUTENSOR_CMAKE = """
project(xyz LANGUAGES CXX)
if(XYZ_HAS_CUDA)
  find_package(cuTENSOR)
  set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})
endif()
set(XYZ_HAS_HALF ${HALF_FOUND})
configure_file(xyz_config.h.in xyz_config.h)
"""


def test_a_configured_variable_copied_in_one_vendors_block_is_that_vendors():
    configured = frozenset({"XYZ_HAS_CUTENSOR", "XYZ_HAS_HALF"})
    facts = cmake_facts("CMakeLists.txt", _CUTENSOR_CMAKE.lstrip("\n"), configured=configured)
    assert [(d.name, d.vendor) for d in facts.defines] == [("XYZ_HAS_CUTENSOR", "nvidia")]
    # Copied outside the block too: any build may set it.
    both = _CUTENSOR_CMAKE.replace("endif()\n", "endif()\nset(XYZ_HAS_CUTENSOR ${CUTENSOR_WANTED})\n")
    assert cmake_facts("CMakeLists.txt", both.lstrip("\n"), configured=configured).defines == ()


_CONFIGURE_AC = """
AC_INIT([xyz], [1.0])
AC_CONFIG_HEADERS([config.h])
"""
# A device header is included by CUDA builds, or outside autoconf's build where the header is found.
_DEVICE_IMPL = """
#pragma once
#if (defined(HAVE_CUDA) || (!defined(HAVE_CONFIG_H) && __has_include(<xyz/cuda/ipc.cuh>)))
#include <xyz/cuda/ipc.cuh>
#endif
"""
_IPC = """
#pragma once
#include <cuda_runtime.h>
"""
_MAKEFILE_AM = """
if HAVE_CUDA
AM_CPPFLAGS = -DHAVE_CUDA
endif
"""


def test_autoconf_defines_have_config_h_for_every_vendor(tmp_path: Path):
    files = {
        "configure.ac": _CONFIGURE_AC,
        "Makefile.am": _MAKEFILE_AM,
        "src/xyz/api/device_impl.h": _DEVICE_IMPL,
        "src/xyz/cuda/ipc.cuh": _IPC,
    }
    root = write_tree(tmp_path / "autoconf", files)
    assert _codes(root, "src/xyz/cuda/ipc.cuh") == []
    # A CMake build at the root may compile without `HAVE_CONFIG_H`: the header may be reached on ROCm.
    beside = write_tree(tmp_path / "both", {**files, "CMakeLists.txt": "project(xyz LANGUAGES CXX)\n"})
    assert _codes(beside, "src/xyz/cuda/ipc.cuh") == [("ROC204", 2)]


# A pair of implementation headers, one per compiler, that the library header includes side by side.
_LIB = """
#pragma once
#include "impl/cuda.hpp"
#include "impl/rocm.hpp"
"""
_IMPL_CUDA = """
#pragma once
#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif
"""
_IMPL_ROCM = """
#pragma once
#ifdef __HIPCC__
#include <hip/hip_fp16.h>
#endif
"""


def test_cudacc_in_a_header_whose_hip_twin_is_included_beside_it_is_a_vendor_switch(tmp_path: Path):
    files = {"include/lib.hpp": _LIB, "include/impl/cuda.hpp": _IMPL_CUDA, "include/impl/rocm.hpp": _IMPL_ROCM}
    root = write_tree(tmp_path / "pair", files)
    # (The include is ROC204's to judge: without a build saying how ROCm compiles, `__CUDACC__` may be hipified.)
    assert _codes(root, "include/impl/cuda.hpp") == [("ROC204", 3)]
    # A file including the CUDA header alone: ROCm would lose its arm there.
    alone = write_tree(tmp_path / "alone", {**files, "src/k.cu": '#include "impl/cuda.hpp"\n'})
    assert _codes(alone, "include/impl/cuda.hpp") == [("ROC214", 2), ("ROC204", 3)]


def test_an_nvcc_test_beside_a_block_hip_clang_is_given_of_its_own_is_not_asked_for_a_hip_test(tmp_path: Path):
    # The author gives HIP-Clang a block of its own written for ROCm (`rocm_smi` where nvcc gets NVML): the
    # `#ifdef __NVCC__` arm is nvcc's by design, ROC214 has nothing to ask.
    monitor = "#pragma once\n#ifdef __NVCC__\n#include <nvml.h>\n#endif\n#ifdef __HIP__\n#include <rocm_smi/rocm_smi.h>\n#endif\n"
    root = write_tree(tmp_path / "apart", {"src/monitor.cuh": monitor, "src/main.cu": '#include "monitor.cuh"\n'})
    assert "ROC214" not in {code for code, _ in _codes(root, "src/monitor.cuh")}
    # A HIP-Clang block that only sets a flag of its own shows no ROCm code: the nvcc test is asked about still.
    flag_only = monitor.replace("#include <rocm_smi/rocm_smi.h>", "#define XYZ_MONITOR 1")
    root = write_tree(tmp_path / "flag", {"src/monitor.cuh": flag_only, "src/main.cu": '#include "monitor.cuh"\n'})
    assert ("ROC214", 2) in _codes(root, "src/monitor.cuh")
