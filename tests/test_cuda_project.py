"""The C++ project model (rocmlint/cuda/project.py, build_files.py): evidence read from real files in a tree."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.cuda.build_files import (
    SourceFunctions,
    cmake_facts,
    cmake_glob_functions,
    cmake_source_functions,
    cmake_switches_off_on_rocm,
    makefile_facts,
    nvidia_only_native_folders,
    nvidia_only_native_modules,
    setup_py_facts,
    vendor_of_words,
    vendor_switched_off,
)
from rocmlint.cuda.file_facts import _may_name_a_wave_size
from rocmlint.cuda.project import CudaProject, project_root
from rocmlint.engine import Engine
from rocmlint.vendor import EVERYWHERE


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (dedented) under `root`, folders made as needed: a small project to build a model of."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _codes(root: Path, name: str, **settings: object) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, **settings))  # type: ignore[arg-type]
    return [(d.code, d.location.line) for d in report.diagnostics]


def _base_of(project: CudaProject, path: Path) -> tuple[bool | None, str]:
    """Whether the project's ROCm build compiles the file at `path` at all (False, None or True), and the model's
    evidence for it."""
    view = project.view(str(path))
    return view.base.on_rocm, view.base_evidence


# --- words and build files ----------------------------------------------------------------------------------------


def test_vendor_words_name_one_side_and_no_other_accelerator():
    assert vendor_of_words("GGML_USE_HIPBLAS") == "rocm"
    assert vendor_of_words("XYZ_USE_HIP") == "rocm"
    assert vendor_of_words("USE_AMD_GPU") == "rocm"
    assert vendor_of_words("USE_CUDA") == "nvidia"
    assert vendor_of_words("WITH_XYZ_DEVICE_OPTIX") == "nvidia"  # OptiX, NVIDIA's ray tracing, has no ROCm build
    assert vendor_of_words("torch_version_hip") == "rocm"
    assert vendor_of_words("GGML_USE_MUSA") is None  # another accelerator
    assert vendor_of_words("CUDA_OR_HIP") is None  # both sides
    assert vendor_of_words("CHIP_COUNT") is None  # HIP only inside a word
    assert vendor_of_words("ENABLE_FAST_PATH") is None
    # HIP's platform macros name the platform HIP runs on (a CMake may set them per HIP compiler).
    assert vendor_of_words("XYZ_HIP_PLATFORM_NVCC") == "nvidia"
    assert vendor_of_words("XYZ_HIP_PLATFORM_NVIDIA") == "nvidia"
    assert vendor_of_words("XYZ_HIP_PLATFORM_HCC") == "rocm"
    assert vendor_of_words("CUDA_PLATFORM") == "nvidia"  # no platform word after it
    # NVIDIA's own libraries with no ROCm build: its tracer (ROCm's is roctx) and its SHMEM.
    assert vendor_of_words("GMX_USE_NVTX") == "nvidia"
    assert vendor_of_words("ENABLE_NVSHMEM") == "nvidia"
    # NVIDIA's RAPIDS vector search: `if(XYZ_ENABLE_CUVS)` defines its switch for NVIDIA's build alone.
    assert vendor_of_words("XYZ_ENABLE_CUVS") == "nvidia"
    assert (
        cmake_facts("CMakeLists.txt", "if(XYZ_ENABLE_CUVS)\n  add_compile_definitions(USE_CUVS=1)\nendif()\n")
        .defines[0]
        .vendor
        == "nvidia"
    )


def test_setup_py_defines_per_vendor_branch():
    facts = setup_py_facts(
        "setup.py",
        textwrap.dedent(
            """
            import torch
            from torch.utils.cpp_extension import CUDAExtension
            args = ["-O3", "-DALWAYS_ON"]
            if torch.version.hip:
                args.append("-DXYZ_USE_HIP")
            else:
                args.append("-DXYZ_USE_NV=2")
            if torch.version.hip is None:
                args.append("-DONLY_NV")
            macros = [("XYZ_HIP_MACRO", None)] if IS_HIP_EXTENSION else []
            ext = CUDAExtension("x", ["x.cu"], define_macros=macros, extra_compile_args={"nvcc": args})
            """
        ),
    )
    found = {(d.name, d.value, d.vendor) for d in facts.defines}
    assert found == {
        ("ALWAYS_ON", None, None),
        ("XYZ_USE_HIP", None, "rocm"),
        ("XYZ_USE_NV", "2", "nvidia"),
        ("ONLY_NV", None, "nvidia"),
        ("XYZ_HIP_MACRO", None, "rocm"),
    }
    assert facts.torch_extension


def test_a_switch_turning_a_vendor_off_names_no_build_of_it():
    # `XYZ_NO_CUDA` is defined where CUDA is not wanted: its vendor word says the opposite of the build's vendor.
    assert vendor_of_words("PROJ_NO_CUDA") is None
    assert vendor_of_words("PROJ_DISABLE_HIP") is None
    assert vendor_of_words("WITHOUT_ROCM_SUPPORT") is None
    assert vendor_switched_off("PROJ_NO_CUDA") == "nvidia"
    assert vendor_switched_off("PROJ_DISABLE_HIP") == "rocm"
    assert vendor_switched_off("WITHOUT_ROCM_SUPPORT") == "rocm"
    assert vendor_switched_off("PROJ_USE_CUDA") is None  # no negation
    assert vendor_switched_off("PROJ_CUDA_NO_HALF") is None  # the negation turns off something else
    assert vendor_switched_off("PROJ_NO_CUDA_GRAPHS") is None  # one feature of CUDA, not CUDA
    # A vendor's build without one of its libraries: still that vendor's build, read by its name as before.
    assert vendor_switched_off("NO_HIPBLASLT") is None
    assert vendor_of_words("NO_HIPBLASLT") == "rocm"
    assert vendor_switched_off("XYZ_DISABLE_CUDNN") is None
    assert vendor_of_words("PROJ_NO_CUDA_GRAPHS") == "nvidia"
    assert vendor_switched_off("PROJ_NO_CUDA_NO_HIP") is None  # both vendors off: a CPU-only build
    assert vendor_switched_off("PROJ_NO_CUDA_USE_SYCL") is None  # another accelerator's
    # `if(NOT PROJ_DISABLE_HIP)` is taken by every build leaving the switch at its default: no vendor's arm.
    facts = cmake_facts("CMakeLists.txt", "if(NOT PROJ_DISABLE_HIP)\n  add_compile_definitions(PROJ_GPU=1)\nendif()\n")
    assert facts.defines[0].vendor is None


def test_conditions_over_a_negated_vendor_switch_keep_their_vendor(tmp_path):
    """`!defined(PROJ_NO_CUDA)` is the NVIDIA side and `!defined(PROJ_NO_HIP)` the ROCm side: a macro defined under
    `defined(__HIPCC__) && !defined(PROJ_NO_HIP)` is ROCm's, one under `defined(__CUDACC__) &&
    !defined(PROJ_NO_CUDA)` NVIDIA's, so their arms are gated as written."""
    root = write_tree(
        tmp_path,
        {
            "include/proj/macros.h": """
                #pragma once
                #if defined(__CUDACC__) && !defined(PROJ_NO_CUDA)
                  #define PROJ_CUDACC __CUDACC__
                #endif
                #if defined(__HIPCC__) && !defined(PROJ_NO_HIP)
                  #define PROJ_HIPCC __HIPCC__
                #endif
                """,
            "src/k.cu": """
                #include "../include/proj/macros.h"
                __device__ unsigned vote(int v) {
                #if defined(PROJ_CUDACC)
                  return __ballot_sync(0xffffffff, v > 0);
                #elif defined(PROJ_HIPCC)
                  return v > 0;
                #else
                  return 0;
                #endif
                }
                """,
        },
    )
    learned = CudaProject.build(root).learned
    no_cuda, no_hip = learned["PROJ_NO_CUDA"], learned["PROJ_NO_HIP"]
    assert (no_cuda.vendor, no_cuda.on_nvidia.defined, no_cuda.on_rocm.defined) == ("rocm", False, True)
    assert (no_hip.vendor, no_hip.on_rocm.defined, no_hip.on_nvidia.defined) == ("nvidia", False, True)
    assert str(no_cuda.evidence) == "include/proj/macros.h: its name switches NVIDIA off (name)"
    assert learned["PROJ_HIPCC"].vendor == "rocm" and learned["PROJ_HIPCC"].on_rocm.defined is True
    assert learned["PROJ_CUDACC"].vendor == "nvidia" and learned["PROJ_CUDACC"].on_rocm.defined is False
    assert _codes(root, "src/k.cu") == []


def test_a_build_class_named_like_torchs_is_no_torch_extension():
    own = "from setuptools.command.build_ext import build_ext\nclass NinjaBuildExtension(build_ext):\n    pass\n"
    assert not setup_py_facts("setup.py", own).torch_extension
    torch = "from torch.utils.cpp_extension import BuildExtension\ncmdclass = {'build_ext': BuildExtension}\n"
    assert setup_py_facts("setup.py", torch).torch_extension


def test_cmake_blocks_functions_and_folders_decide_the_vendor():
    text = textwrap.dedent(
        """
        add_compile_definitions(EVERYWHERE)
        if(USE_ROCM)  # a comment: (not a command)
          add_compile_definitions(XYZ_ROCM_BUILD VALUE=3)
        else()
          add_definitions(-DXYZ_NV_BUILD)
        endif()
        function(create_hip_test name)
          target_compile_definitions(${name} PRIVATE XYZ_TEST_HIP)
        endfunction()
        """
    )
    facts = cmake_facts("proj/CMakeLists.txt", text)
    found = {(d.name, d.value, d.vendor) for d in facts.defines}
    assert found == {
        ("EVERYWHERE", None, None),
        ("XYZ_ROCM_BUILD", None, "rocm"),
        ("VALUE", "3", "rocm"),
        ("XYZ_NV_BUILD", None, "nvidia"),
        ("XYZ_TEST_HIP", None, "rocm"),
    }
    in_hip_folder = cmake_facts("proj/hip/CMakeLists.txt", "target_compile_definitions(t PRIVATE BACKEND_FLAG)")
    assert [d.vendor for d in in_hip_folder.defines] == ["rocm"]
    hip_only = cmake_facts("CMakeLists.txt", "project(x LANGUAGES CXX HIP)\nadd_compile_definitions(FLAG)")
    assert hip_only.hip_language and not hip_only.cuda_language
    assert [d.vendor for d in hip_only.defines] == ["rocm"]


def test_cmake_lists_a_define_command_takes_whole_hold_definitions():
    # `target_compile_definitions(t PUBLIC "${XYZ_DEFINITIONS}")`: what the list gets in a backend's arm is that
    # backend's definition; a list no define command reads holds none.
    text = textwrap.dedent(
        """
        set(XYZ_DEFINITIONS "XYZ_NAMESPACE=xyz")
        list(APPEND XYZ_DEFINITIONS "ENABLE_IPC")
        if(XYZ_BACKEND STREQUAL "cuda")
          list(APPEND XYZ_DEFINITIONS "HAS_TRACER_NV")
        elseif(XYZ_BACKEND STREQUAL "rocm")
          list(APPEND XYZ_DEFINITIONS "HAS_TRACER_AMD")
          list(APPEND XYZ_EXTRA_FILES "HAS_NOTHING")
        endif()
        target_compile_definitions(xyz PUBLIC "${XYZ_DEFINITIONS}")
        """
    )
    found = {(d.name, d.value, d.vendor) for d in cmake_facts("proj/CMakeLists.txt", text).defines}
    assert found == {
        ("XYZ_NAMESPACE", "xyz", None),
        ("ENABLE_IPC", None, None),
        ("HAS_TRACER_NV", None, "nvidia"),
        ("HAS_TRACER_AMD", None, "rocm"),
    }


def test_cmake_flags_appended_to_a_rocm_flags_variable_define_macros_for_rocm():
    """PyTorch's `list(APPEND HIP_CXX_FLAGS -DHIPBLAS_V2)` defines HIPBLAS_V2 for ROCm; flags of a generic or NVIDIA
    variable (vLLM's `VLLM_GPU_FLAGS` in a CUDA block), and source lists, define nothing."""
    text = textwrap.dedent(
        """
        list(APPEND HIP_CXX_FLAGS -DHIPBLAS_V2 -DXYZ_LEVEL=2 -fPIC)
        if(USE_CUDA)
          list(APPEND EXTRA_FLAGS -DXYZ_NV)
        endif()
        list(APPEND CMAKE_CXX_FLAGS -DXYZ_ANY)
        list(APPEND SRCS -DNOT_A_FLAG.cu)
        """
    )
    found = {(d.name, d.value, d.vendor) for d in cmake_facts("CMakeLists.txt", text).defines}
    assert found == {("HIPBLAS_V2", None, "rocm"), ("XYZ_LEVEL", "2", "rocm")}


# --- learning ----------------------------------------------------------------------------------------------------


def test_macros_learned_with_the_strongest_evidence(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                if(XYZ_ENABLE_ROCM)
                  add_compile_definitions(XYZ_BUILD_FLAG)
                endif()
                add_compile_definitions(USE_CUDA_EVERYWHERE)
                """,
            "compat.h": """
                #if defined(__HIP_PLATFORM_AMD__)
                #define XYZ_IS_HIP 1
                #else
                #define XYZ_IS_HIP 0
                #endif
                """,
            "kernel.cu": """
                #include "compat.h"
                #if XYZ_IS_HIP
                #endif
                #ifdef XYZ_BUILD_FLAG
                #endif
                #ifdef PORTED
                #include <hip/hip_runtime.h>
                #else
                #include <cuda_runtime.h>
                #endif
                #ifdef USE_NV_TENSOR_CORES
                #endif
                #ifdef USE_CUDA_EVERYWHERE
                #endif
                #ifdef GGML_USE_MUSA
                #endif
                #ifdef NDEBUG
                #endif
                """,
        },
    )
    learned = CudaProject.build(root).learned
    assert learned["XYZ_BUILD_FLAG"].vendor == "rocm" and learned["XYZ_BUILD_FLAG"].evidence.kind == "build"
    is_hip = learned["XYZ_IS_HIP"]
    assert (is_hip.vendor, is_hip.on_rocm.value, is_hip.on_nvidia.value) == ("rocm", 1, 0)
    assert str(is_hip.evidence) == "compat.h:2: defined under a ROCm-only condition (header)"
    assert learned["PORTED"].vendor == "rocm" and learned["PORTED"].evidence.kind == "arms"
    assert learned["USE_NV_TENSOR_CORES"].vendor == "nvidia" and learned["USE_NV_TENSOR_CORES"].evidence.kind == "name"
    # The build defines it whatever the vendor: a value, not a gate, whatever its name says.
    assert "USE_CUDA_EVERYWHERE" not in learned
    assert "GGML_USE_MUSA" not in learned
    assert "NDEBUG" not in learned


def test_a_cmake_file_building_hip_in_a_rocm_arm_is_not_rocm_everywhere():
    # HIP is built only in the `if(USE_ROCM)` arm: the `elseif(USE_CUDA)` arm after it is NVIDIA's, the rest both.
    shared = cmake_facts(
        "proj/lib/CMakeLists.txt",
        textwrap.dedent(
            """
            add_compile_definitions(EVERYWHERE)
            if(USE_ROCM)
              hip_add_library(lib_hip ${SRCS})
              target_compile_definitions(lib_hip PRIVATE USE_NCCL ROCM_FLAG)
            elseif(USE_CUDA)
              add_library(lib_cuda ${SRCS})
              target_compile_definitions(lib_cuda PRIVATE USE_NCCL)
              if(USE_FLASH)
                target_compile_definitions(lib_cuda PRIVATE USE_FLASH)
              endif()
            endif()
            """
        ),
    )
    assert shared.hip_language
    assert {(d.name, d.vendor) for d in shared.defines} == {
        ("EVERYWHERE", None),
        ("USE_NCCL", "rocm"),
        ("ROCM_FLAG", "rocm"),
        ("USE_NCCL", "nvidia"),
        ("USE_FLASH", "nvidia"),
    }
    # HIP built outside any ROCm arm (under a plain option): the file is the ROCm build's alone.
    alone = cmake_facts(
        "proj/lib/CMakeLists.txt", "if(BUILD_TESTS)\n  enable_language(HIP)\nendif()\nadd_definitions(-DFLAG)\n"
    )
    assert [d.vendor for d in alone.defines] == ["rocm"]


def test_build_macros_defined_in_both_arms_or_compiled_on_rocm_are_no_vendor_macros(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                if(USE_ROCM)
                  hip_add_library(lib_hip src/module.cpp)
                  target_compile_definitions(lib_hip PRIVATE USE_NCCL)
                elseif(USE_CUDA)
                  add_library(lib_cuda src/module.cpp)
                  target_compile_definitions(lib_cuda PRIVATE USE_CUDA USE_NCCL USE_CUDSS)
                endif()
                """,
            # ROCm compiles code under `#ifdef USE_CUDA`: the author tells ROCm apart inside it.
            "src/module.cpp": """
                #include "assert.h"
                #ifdef USE_CUDA
                #ifdef __HIP_PLATFORM_AMD__
                int rocm_part;
                #endif
                #endif
                #ifdef USE_NCCL
                #endif
                #ifdef USE_CUDSS
                #endif
                """,
            "src/assert.h": "#ifdef USE_CUDA\n#define USE_DSA\n#endif\n#ifdef USE_DSA\n#endif\n",
            # A ROCm macro with a ROCm test inside stays ROCm's.
            "src/compat.h": """
                #ifdef __HIP_PLATFORM_AMD__
                #define PROJ_HIP 1
                #endif
                #ifdef PROJ_HIP
                #if defined(__HIP_PLATFORM_AMD__)
                #endif
                #endif
                """,
        },
    )
    learned = CudaProject.build(root).learned
    assert "USE_CUDA" not in learned  # the NVIDIA arm defines it, but ROCm compiles code under it
    assert "USE_DSA" not in learned  # defined under it: not NVIDIA-only either
    assert "USE_NCCL" not in learned  # defined in both arms
    assert learned["PROJ_HIP"].vendor == "rocm"
    cudss = learned["USE_CUDSS"]
    assert (cudss.vendor, str(cudss.evidence)) == ("nvidia", "CMakeLists.txt:6: the NVIDIA build defines it (build)")


def test_arms_with_one_plain_side_decide_nothing(tmp_path):
    root = write_tree(
        tmp_path,
        {"k.cu": "#ifndef FAST_SYNC\ncudaDeviceSynchronize();\n#endif\n#ifdef OTHER\nhipMalloc(p, n);\n#endif\n"},
    )
    learned = CudaProject.build(root).learned
    assert "FAST_SYNC" not in learned and "OTHER" not in learned


# --- per-file views ------------------------------------------------------------------------------------------------


def test_view_knows_macros_its_headers_define_as_the_device_wave_size(tmp_path):
    # Two ROCm values make `PROJ_WARP` no visible define, but one of them is the device pass's wave size.
    root = write_tree(
        tmp_path,
        {
            "include/arch.cuh": """
                #pragma once
                #if PROJ_HIP
                #ifdef __AMDGCN_WAVEFRONT_SIZE
                #define PROJ_WARP (__AMDGCN_WAVEFRONT_SIZE)
                #else
                #define PROJ_WARP 64
                #endif
                #else
                #define PROJ_WARP 32
                #endif
                #define OTHER_WARP 32
                """,
            "src/ops.cu": '#include "../include/arch.cuh"\n',
            "src/unresolved.cu": "#include <arch.cuh>\n",
            "src/own.cu": "#define PROJ_WARP 32\n",
        },
    )
    project = CudaProject.build(root)
    assert project.view(str(root / "src/ops.cu")).device_wave_sizes == {"PROJ_WARP"}
    # An include the model cannot resolve (`-I include`): no definition visible, the project's decides.
    assert project.view(str(root / "src/unresolved.cu")).device_wave_sizes == {"PROJ_WARP"}
    # The file's own definition is what it reads.
    assert project.view(str(root / "src/own.cu")).device_wave_sizes == frozenset()


def test_view_has_header_values_remaps_and_include_gates(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "include/proj/compat.cuh": """
                #pragma once
                #define PROJ_WARP 32
                constexpr int kLanes = 32;
                #ifdef USE_ROCM
                #define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)
                typedef hipStream_t cudaStream_t;
                #define NV_ONLY_VALUE 7
                #endif
                """,
            "src/nv_only.cuh": "#pragma once\n#include <cub/cub.cuh>\n",
            "src/kernel.cu": """
                #include "proj/compat.cuh"
                #ifndef USE_ROCM
                #include "nv_only.cuh"
                #endif
                """,
        },
    )
    project = CudaProject.build(root)
    view = project.view(str(root / "src/kernel.cu"))
    assert view.defines["PROJ_WARP"] == "32"
    assert view.constants["kLanes"] == "32"
    assert view.aliases["__shfl_xor_sync"] == ("include/proj/compat.cuh:5", 3)
    assert view.aliases["cudaStream_t"][1] is None
    assert str(root / "include/proj/compat.cuh") in view.dependencies
    header = project.view(str(root / "src/nv_only.cuh"))
    assert header.base.on_rocm is False
    assert header.base_evidence == "src/kernel.cu:3: included only where ROCm does not compile"
    assert project.view(str(root / "include/proj/compat.cuh")).base.on_rocm is not False


def test_shuffle_wrappers_of_included_headers_count_as_their_shuffle_on_rocm(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "include/proj/compat.cuh": """
                #pragma once
                #ifndef USE_ROCM
                #define PROJ_SHFL_XOR_W(var, lane, width) \\
                  __shfl_xor_sync(uint32_t(-1), var, lane, width)
                #else
                #define PROJ_SHFL_XOR_W(var, lane, width) __shfl_xor(var, lane, width)
                #endif
                """,
            "src/kernel.cu": """
                #include "proj/compat.cuh"
                __global__ void k(float* out, float v) {
                  const int lane = threadIdx.x & 31;
                  for (int offset = 8; offset > 0; offset /= 2) {
                    v = fmaxf(v, PROJ_SHFL_XOR_W(v, offset, 16));
                  }
                  if (lane == 0) out[threadIdx.x >> 5] = v;
                }
                """,
        },
    )
    view = CudaProject.build(root).view(str(root / "src/kernel.cu"))
    assert view.shuffle_wrappers["PROJ_SHFL_XOR_W"] == "__shfl_xor(#0, #1, #2)"  # as ROCm sees it
    # The function shuffles in 16-lane groups on purpose: its 32-lane splits index those groups.
    assert _codes(root, "src/kernel.cu", select=("ROC208",)) == []
    (root / "include/proj/compat.cuh").write_text("#pragma once\n", encoding="utf-8")
    (root / "src/kernel.cu").write_text(
        (root / "src/kernel.cu").read_text(encoding="utf-8").replace("PROJ_SHFL_XOR_W(v, offset, 16)", "v"),
        encoding="utf-8",
    )
    assert [code for code, _ in _codes(root, "src/kernel.cu", select=("ROC208",))] == ["ROC208", "ROC208"]


_BALLOT_KERNEL = """
    #pragma once
    __global__ void k(unsigned* out, int v) {
      unsigned mask = __ballot_sync(0xffffffff, v > 0);
      out[threadIdx.x] = mask;
    }
    """


def test_headers_included_only_under_learned_project_macros_are_nvidia_only(tmp_path):
    """Each include sits under an NVIDIA-only `#if` of a macro the model learned (from a header, the build, a name),
    not a well-known one; what those headers include outside vendor branches is NVIDIA-only too."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                if(PROJ_WITH_HIP)
                  enable_language(HIP)
                  add_compile_definitions(PROJ_BACKEND_B)
                else()
                  add_compile_definitions(PROJ_BACKEND_A)
                endif()
                """,
            "include/proj/config.h": """
                #pragma once
                #if defined(__HIP_PLATFORM_AMD__)
                #define PROJ_USE_CUDA 0
                #else
                #define PROJ_USE_CUDA 1
                #endif
                """,
            "src/kernel.cu": """
                #include "proj/config.h"
                #if PROJ_USE_CUDA
                #include "cuda_path.cuh"
                #endif
                #ifdef PROJ_GPU_CUDA
                #include "nv_backend.cuh"
                #endif
                #ifdef PROJ_BACKEND_A
                #include "backend_a.cuh"
                #endif
                """,
            "src/cuda_path.cuh": '#pragma once\n#include "detail/ballot.cuh"\n',
            "src/detail/ballot.cuh": _BALLOT_KERNEL,
            "src/nv_backend.cuh": _BALLOT_KERNEL,
            "src/backend_a.cuh": _BALLOT_KERNEL,
            "src/shared.cuh": _BALLOT_KERNEL,
            "src/other.cu": '#include "shared.cuh"\n',
        },
    )
    project = CudaProject.build(root)
    assert {
        name: project.learned[name].evidence.kind for name in ("PROJ_USE_CUDA", "PROJ_GPU_CUDA", "PROJ_BACKEND_A")
    } == {
        "PROJ_USE_CUDA": "header",
        "PROJ_GPU_CUDA": "name",
        "PROJ_BACKEND_A": "build",
    }
    for header in ("src/cuda_path.cuh", "src/detail/ballot.cuh", "src/nv_backend.cuh", "src/backend_a.cuh"):
        assert project.view(str(root / header)).base.on_rocm is False, header
        assert _codes(root, header) == [], header
    assert project.view(str(root / "src/detail/ballot.cuh")).base_evidence == (
        "src/cuda_path.cuh:2: included only where ROCm does not compile"
    )
    assert _codes(root, "src/shared.cuh") == [("ROC201", 3), ("ROC210", 3)]  # included outside any gate


def test_ambiguous_include_is_not_resolved(tmp_path):
    root = write_tree(tmp_path, {"a/util.h": "", "b/util.h": "", "c/k.cu": '#include "util.h"\n'})
    project = CudaProject.build(root)
    assert project.resolve(str(root / "c/k.cu"), "util.h", system=False) is None
    assert project.resolve(str(root / "c/k.cu"), "a/util.h", system=False) == str(root / "a/util.h")


def test_hip_only_build_makes_rocm_native_code(tmp_path):
    root = write_tree(tmp_path, {"CMakeLists.txt": "project(lib LANGUAGES CXX HIP)\n", "k.cpp": "int x;\n"})
    assert CudaProject.build(root).view(str(root / "k.cpp")).rocm_native
    mixed = write_tree(tmp_path / "mixed", {"CMakeLists.txt": "project(lib LANGUAGES CXX HIP CUDA)\n", "k.cpp": ""})
    assert not CudaProject.build(mixed).view(str(mixed / "k.cpp")).rocm_native


def test_code_written_for_amd_is_recognised_by_its_own_evidence(tmp_path):
    """AMD-only code outside vendor branches (a builtin, a 64-lane warp size), `#if`s per gfx target that never ask
    the vendor, a path naming a gfx target, or an ungated include of such a header."""
    root = write_tree(
        tmp_path,
        {
            "builtin.cuh": "__device__ int f(int v) { return __builtin_amdgcn_readfirstlane(v); }\n",
            "wave.cu": "constexpr int WARP_SIZE = 64;\n",
            "targets.h": "#if defined(__gfx950__)\nint a;\n#else\nint b;\n#endif\n",
            "kernels/gfx1250/pipe.cuh": "__global__ void k() {}\n",
            "gemm_gfx942.cuh": "int c;\n",
            "user.cu": '#include "builtin.cuh"\n',
            "mixed.cu": '#ifdef USE_ROCM\n#include "builtin.cuh"\n#endif\n#if defined(__gfx950__)\nint a;\n#endif\n',
            "plain.cu": '#include "targets.h"\n#define WARP_SIZE 32\n',
            "gfx_utils.cu": "int d;\n",
        },
    )
    project = CudaProject.build(root)
    native = {name: project.view(str(root / name)).rocm_native for name in ("builtin.cuh", "wave.cu", "targets.h")}
    assert all(native.values()), native
    assert "gfx1250" in project.view(str(root / "kernels/gfx1250/pipe.cuh")).rocm_native
    assert "gfx942" in project.view(str(root / "gemm_gfx942.cuh")).rocm_native
    assert "builtin.cuh" in project.view(str(root / "user.cu")).rocm_native
    # Asking for the vendor, only testing targets in an included header, or a word merely starting with gfx.
    assert not any(project.view(str(root / n)).rocm_native for n in ("mixed.cu", "plain.cu", "gfx_utils.cu"))


def test_files_reaching_amd_code_are_found_backwards_through_ungated_includes_only(tmp_path):
    """`_ungated_includers_of` (which files' closures are searched at all) holds exactly the files whose search
    finds something: through chains, an include cycle, and not through a vendor-gated include."""
    root = write_tree(
        tmp_path,
        {
            "amd.cuh": "__device__ int f(int v) { return __builtin_amdgcn_readfirstlane(v); }\n",
            "hip.h": "#include <hip/hip_runtime.h>\n",
            "middle.h": '#include "amd.cuh"\n#include "cycle.h"\n',
            "cycle.h": '#include "middle.h"\n#include "hip.h"\n',
            "top.cu": '#include "cycle.h"\n',
            "gated.cu": '#ifdef USE_ROCM\n#include "middle.h"\n#endif\n',
            "plain.cu": "int x;\n",
        },
    )
    project = CudaProject.build(root)
    for question in (project._has_own_amd_evidence, project._includes_hip_runtime):
        reaching = project._ungated_includers_of(question)
        searched = {
            path
            for path in project.files
            if any(question(p) for p in project._includes_from(path, lambda include: include.branch == EVERYWHERE))
        }
        assert reaching == searched
    assert {Path(p).name for p in project._ungated_includers_of(project._has_own_amd_evidence)} == {
        "amd.cuh",
        "middle.h",
        "cycle.h",
        "top.cu",
    }
    assert "amd.cuh" in project.view(str(root / "top.cu")).rocm_native
    assert "hip.h" in project.view(str(root / "top.cu")).hip_source
    assert not project.view(str(root / "gated.cu")).rocm_native and not project.view(str(root / "gated.cu")).hip_source


def test_hip_code_through_a_header_is_a_rocm_source_but_not_code_written_for_amd(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "common.h": "#pragma once\n#include <hip/hip_runtime.h>\n",
            "k.cu": '#include "common.h"\n#include <cub/cub.cuh>\n__global__ void k(int* o) { o[threadIdx.x / 32] = 1; }\n',
            "gated.cu": '#ifdef USE_ROCM\n#include "common.h"\n#endif\n#include <cub/cub.cuh>\n',
        },
    )
    view = CudaProject.build(root).view(str(root / "k.cu"))
    assert "common.h" in view.hip_source and not view.rocm_native
    codes = _codes(root, "k.cu")
    assert ("ROC205", 2) not in codes and ("ROC208", 3) in codes  # no CUDA library to port; the 32 still counts
    assert ("ROC205", 4) in _codes(root, "gated.cu")


def test_code_written_for_amd_keeps_only_the_rules_wrong_on_amd_hardware(tmp_path):
    kernel = """
        __device__ unsigned vote(bool p, int lane) {
          unsigned m = __ballot(p);
          return m + __builtin_amdgcn_readfirstlane(lane >> 5);
        }
        """
    root = write_tree(tmp_path, {"k.cu": kernel})
    assert _codes(root, "k.cu") == [("ROC201", 2)]  # the 32-bit mask is wrong on wave64; the 32-lane split is chosen


def test_project_root_is_the_configured_root_or_the_repository(tmp_path):
    repo = write_tree(tmp_path / "repo", {"CMakeLists.txt": "", "src/deep/k.cu": ""})
    (repo / ".git").mkdir()
    assert project_root(repo / "src/deep/k.cu", repo / "src", configured=True) == repo / "src"
    assert project_root(repo / "src/deep/k.cu", tmp_path / "elsewhere", configured=True) == repo
    loose = write_tree(tmp_path / "loose", {"setup.py": "", "csrc/k.cu": ""})
    assert project_root(loose / "csrc/k.cu", tmp_path / "elsewhere", configured=True) == loose
    # Inside by its folders, not by its spelling: a sibling whose name starts with the root's is outside it.
    sibling = write_tree(tmp_path / "repo2", {"k.cu": ""})
    assert project_root(sibling / "k.cu", repo, configured=True) == sibling
    assert project_root(repo / "src/../src/deep/k.cu", repo / "src/", configured=True) == repo / "src"
    assert project_root(repo / "src", repo / "src", configured=True) == repo / "src"


def test_the_working_directory_alone_makes_no_project_of_the_trees_below_it(tmp_path):
    """Checking one of several trees from the folder holding them (`rocmlint check corpora/a` run in the parent of
    `corpora`): each tree is its own project, so no build file of another tree speaks for it."""
    a = write_tree(tmp_path / "corpora/a", {"setup.py": "", "csrc/deep/k.cu": ""})
    write_tree(tmp_path / "corpora/b", {"CMakeLists.txt": "", "k.cu": ""})
    assert project_root(a / "csrc/deep/k.cu", tmp_path, configured=False) == a
    repo = write_tree(tmp_path / "corpora/repo", {"src/k.cu": ""})
    (repo / ".git").mkdir()
    assert project_root(repo / "src/k.cu", tmp_path, configured=False) == repo
    # A working directory holding a build file, or inside a repository, is where a user works: its files belong to
    # it, a sub-project's and a deep file's too.
    deep = "/".join(f"d{level}" for level in range(10))
    top = write_tree(tmp_path / "top", {"CMakeLists.txt": "", f"{deep}/setup.py": "", f"{deep}/k.cu": ""})
    assert project_root(top / deep / "k.cu", top, configured=False) == top
    assert project_root(repo / "src/k.cu", repo / "src", configured=False) == repo / "src"
    write_tree(repo, {"sub/setup.py": "", "sub/k.cu": ""})
    assert project_root(repo / "sub/k.cu", repo / "sub", configured=False) == repo / "sub"
    # A loose file with no build file around it: the working directory when it holds the file, else its folder.
    loose = write_tree(tmp_path / "loose", {"x/k.cu": ""})
    assert project_root(loose / "x/k.cu", loose, configured=False) == loose
    assert project_root(loose / "x/k.cu", tmp_path / "elsewhere", configured=False) == loose / "x"


def test_a_bazel_workspace_root_file_marks_the_project_root(tmp_path):
    """A pure Bazel tree (no setup.py, CMakeLists.txt or pyproject.toml) checked from its root is one project, and
    its root is found from a file deep inside it."""
    for marker in ("MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel"):
        tree = write_tree(tmp_path / f"tree_{marker}", {marker: "", "csrc/BUILD": "", "csrc/deep/k.cu": ""})
        assert project_root(tree / "csrc/deep/k.cu", tree, configured=False) == tree
        assert project_root(tree / "csrc/deep/k.cu", tmp_path / "elsewhere", configured=False) == tree
    bare = write_tree(tmp_path / "bare", {"csrc/BUILD": "", "csrc/k.cu": ""})
    assert project_root(bare / "csrc/k.cu", tmp_path / "elsewhere", configured=False) == bare / "csrc"


def test_a_makefile_compiling_sources_marks_the_root_only_where_no_other_build_file_does(tmp_path):
    """A project built by make alone (`src/makefile`, `src/makefile.hip` globbing the folders below), checked from
    elsewhere, is one project rooted at its Makefiles' folder: a file deep inside sees the project's headers."""
    make = "SOURCES = $(wildcard force/*.cu) $(wildcard utilities/*.cu)\nall:\n\t$(CC) $(SOURCES)\n"
    for name in ("makefile", "Makefile", "GNUmakefile", "makefile.hip"):
        tree = write_tree(tmp_path / f"make_{name}", {f"src/{name}": make, "src/force/k.cu": "", "doc/x.md": ""})
        assert project_root(tree / "src/force/k.cu", tmp_path / "elsewhere", configured=False) == tree / "src"
    # A Makefile compiling nothing (documentation's), or a make fragment another includes, marks no root.
    docs = write_tree(tmp_path / "docs", {"src/Makefile": "html:\n\tsphinx-build . _build\n", "src/x/k.cu": ""})
    assert project_root(docs / "src/x/k.cu", tmp_path / "elsewhere", configured=False) == docs / "src/x"
    fragment = write_tree(tmp_path / "fragment", {"src/rules.mk": make, "src/force/k.cu": ""})
    assert project_root(fragment / "src/force/k.cu", tmp_path / "elsewhere", configured=False) == fragment / "src/force"
    # A CMake, setup.py or git project keeps its root when a Makefile sits above or beside it.
    cmake = write_tree(
        tmp_path / "cmake", {"Makefile": make, "lib/CMakeLists.txt": "", "lib/Makefile": make, "lib/k.cu": ""}
    )
    assert project_root(cmake / "lib/k.cu", tmp_path / "elsewhere", configured=False) == cmake / "lib"
    python = write_tree(tmp_path / "python", {"Makefile": make, "pkg/setup.py": "", "pkg/csrc/k.cu": ""})
    assert project_root(python / "pkg/csrc/k.cu", tmp_path / "elsewhere", configured=False) == python / "pkg"
    repo = write_tree(tmp_path / "repo", {"Makefile": make, "src/makefile": make, "src/k.cu": ""})
    (repo / ".git").mkdir()
    assert project_root(repo / "src/k.cu", tmp_path / "elsewhere", configured=False) == repo


# --- the check of a file with its project ----------------------------------------------------------------------------


def test_a_project_flag_from_a_shared_header_gates_the_kernel(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "compat.cuh": """
                #pragma once
                #if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
                #define XYZ_HIP 1
                #else
                #define XYZ_HIP 0
                #endif
                """,
            "kernel.cu": """
                #include "compat.cuh"
                #if XYZ_HIP
                #include <hipcub/hipcub.hpp>
                #else
                #include <cub/cub.cuh>
                #endif
                __global__ void k(unsigned* out, bool p) {
                #if !XYZ_HIP
                  *out = __ballot_sync(0xffffffff, p);
                #endif
                }
                """,
        },
    )
    assert _codes(root, "kernel.cu") == []
    assert {code for code, _ in _codes(root, "kernel.cu", project_model=False)} >= {"ROC205", "ROC210"}


def test_a_remap_covers_calls_with_its_argument_count_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "compat.cuh": """
                #pragma once
                #ifdef USE_ROCM
                #define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)
                #endif
                """,
            "kernel.cu": """
                #include "compat.cuh"
                __device__ float f(float v) {
                  v += __shfl_xor_sync(0xffffffff, v, 1);
                  v += __shfl_xor_sync(0xffffffff, v, 1, 32);
                  return v;
                }
                """,
        },
    )
    assert [line for code, line in _codes(root, "kernel.cu") if code == "ROC210"] == [4]


def test_a_mask_read_only_by_a_remapped_shuffle_is_not_computed_for_rocm(tmp_path):
    """A 32-bit mask counted from `warpSize` (ROC211) whose only reader is a shuffle the project's header spells
    without a mask for ROCm: ROCm computes a value nothing of its own reads. Without the header it is reported."""
    kernel = """
        #include "compat.cuh"
        __device__ float low_lanes(float v, int len) {
          const uint32_t mask = 0xffffffff >> (warpSize - len);
          return __shfl_down_sync(mask, v, 1);
        }
        """
    remap = (
        "#pragma once\n#ifdef USE_ROCM\n#define __shfl_down_sync(mask, val, offset) __shfl_down(val, offset)\n#endif\n"
    )
    ported = write_tree(tmp_path / "ported", {"compat.cuh": remap, "kernel.cu": kernel})
    assert [line for code, line in _codes(ported, "kernel.cu") if code == "ROC211"] == []
    unported = write_tree(tmp_path / "unported", {"compat.cuh": "#pragma once\n", "kernel.cu": kernel})
    assert [line for code, line in _codes(unported, "kernel.cu") if code == "ROC211"] == [3]


def test_a_toolkit_version_read_as_a_value_in_a_hipified_extension(tmp_path):
    """torch's hipify renames `CUDA_VERSION` to `TORCH_HIP_VERSION`, which no extension build defines (ROC207); it may
    rename the others to a HIP macro, so `CUDART_VERSION` is left alone there (not in a build nothing hipifies)."""
    source = "#include <cuda.h>\nint64_t v() { return CUDA_VERSION; }\nint64_t r() { return CUDART_VERSION; }\n"
    setup = "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k.cpp'])\n"
    hipified = write_tree(tmp_path / "ext", {"setup.py": setup, "k.cpp": source})
    assert [line for code, line in _codes(hipified, "k.cpp") if code == "ROC207"] == [2]
    plain = write_tree(tmp_path / "plain", {"k.cu": source})
    assert [line for code, line in _codes(plain, "k.cu") if code == "ROC207"] == [2, 3]


def test_a_warp_size_from_a_header_is_known_in_the_kernel(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "common.cuh": "#pragma once\n#define FULL_MASK 0xffffffff\n",
            "kernel.cu": """
                #include "common.cuh"
                __device__ unsigned f(bool p) {
                  return __ballot_sync(FULL_MASK, p);
                }
                """,
        },
    )
    assert ("ROC210", 3) in _codes(root, "kernel.cu")
    assert ("ROC210", 3) not in _codes(root, "kernel.cu", project_model=False)


def test_a_header_included_only_for_nvidia_is_not_reported(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "nv.cuh": "#pragma once\n#include <cub/cub.cuh>\n",
            "kernel.cu": '#ifndef USE_ROCM\n#include "nv.cuh"\n#endif\n',
        },
    )
    assert _codes(root, "nv.cuh") == []
    assert ("ROC205", 2) in _codes(root, "nv.cuh", project_model=False)


def test_a_file_with_no_disk_copy_gets_no_model(tmp_path):
    write_tree(tmp_path, {"compat.cuh": "#define XYZ_HIP 1\n"})
    source = b'#include "compat.cuh"\n#include <cub/cub.cuh>\n'
    report = Engine().check_bytes(str(tmp_path / "unsaved.cu"), source, Settings(root=tmp_path))
    assert [d.code for d in report.diagnostics] == ["ROC205"]


def test_the_fixture_project_without_its_model_reports_the_gated_code(tmp_path):
    """fixtures/project_gates keeps its gates in setup.py, CMake and a shared header; with the model off, the
    code behind them is reported too (what rocmlint did before it had a project model)."""
    import shutil

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "project_gates"
    root = Path(shutil.copytree(fixture, tmp_path / "project_gates"))
    with_model = {(name, *found) for name in ("csrc/kernels.cu", "csrc/nv_only.cuh") for found in _codes(root, name)}
    without = {
        (name, *found)
        for name in ("csrc/kernels.cu", "csrc/nv_only.cuh")
        for found in _codes(root, name, project_model=False)
    }
    # Only the model knows the header's full mask; everything else it changes is gated code no longer reported.
    assert with_model - without == {("csrc/kernels.cu", "ROC210", 37)}
    assert {("csrc/nv_only.cuh", "ROC205", 2), ("csrc/nv_only.cuh", "ROC203", 6)} <= without - with_model
    # The ballot in the #else of setup.py's PG_ROCM_BUILD, the cuBLAS header in the #else of CMake's PG_HIPBLAS.
    assert {("csrc/kernels.cu", "ROC201", 26), ("csrc/kernels.cu", "ROC205", 10)} <= without - with_model


def test_sources_the_build_compiles_for_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "setup.py": """
                import glob, os, torch
                csrc = os.path.join(this_dir, "pkg", "csrc")
                sources = glob.glob(os.path.join(csrc, "**/*.cpp"), recursive=True)
                cuda_sources = glob.glob(os.path.join(csrc, "cuda", "**/*.cu"), recursive=True)
                use_cuda = torch.version.cuda is not None
                if use_cuda:
                    sources += cuda_sources
                """,
            "CMakeLists.txt": (
                "add_subdirectory(common)\nif(BUILD_CUDA_BACKEND)\n  add_subdirectory(backends/cuda)\n"
                "  add_library(timer utils/cuda_timer.cpp)\nelseif(BUILD_HIP_BACKEND)\n  add_subdirectory(backends/hip)\n"
                "endif()\nadd_library(util utils/util.cpp)\n"
            ),
            "utils/cuda_timer.cpp": "",
            "utils/util.cpp": "",
            "pkg/csrc/cuda/gemm.cu": "#include <cub/cub.cuh>\n",
            "pkg/csrc/cuda/glue.cpp": "",
            "pkg/csrc/common.cu": "",
            "backends/cuda/k.cu": "",
            "common/k.cu": "",
        },
    )
    project = CudaProject.build(root)
    gemm = project.view(str(root / "pkg/csrc/cuda/gemm.cu"))
    assert gemm.base.on_rocm is False
    assert gemm.base_evidence == "setup.py:4: the build compiles it for NVIDIA only"  # `cuda_sources = ...`
    assert project.view(str(root / "backends/cuda/k.cu")).base.on_rocm is False
    assert project.view(str(root / "utils/cuda_timer.cpp")).base.on_rocm is False
    for built_everywhere in ("pkg/csrc/cuda/glue.cpp", "pkg/csrc/common.cu", "common/k.cu", "utils/util.cpp"):
        assert project.view(str(root / built_everywhere)).base.on_rocm is not False, built_everywhere
    assert _codes(root, "pkg/csrc/cuda/gemm.cu") == []


def test_includes_a_hipified_build_swaps_are_notes_or_left_out(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k.cu'])\n",
            "k.cu": "#include <cuda_fp16.h>\n#include <cublas_v2.h>\n#include <cudnn.h>\n",
        },
    )
    hidden = Engine().check_path(root / "k.cu", Settings(root=root, show_hipified=False))
    assert [(d.code, d.location.line, d.severity.value) for d in hidden.diagnostics] == [("ROC205", 3, "warning")]
    evidence = "the build hipifies it (setup.py:2: builds a torch CUDAExtension (hipified on ROCm))"
    assert hidden.gated_notes == [
        f"{root / 'k.cu'}:1: ROC204 not reported: {evidence}",
        f"{root / 'k.cu'}:2: ROC205 not reported: {evidence}",
    ]
    shown = Engine().check_path(root / "k.cu", Settings(root=root))
    found = {d.code: d for d in shown.diagnostics}
    assert found["ROC204"].severity.value == "info"
    assert "(setup.py:2: builds a torch CUDAExtension (hipified on ROCm))" in found["ROC204"].message
    assert [d.severity.value for d in shown.diagnostics if d.code == "ROC205"] == ["info", "warning"]  # cuDNN stays
    hand_written = write_tree(
        tmp_path / "cmake",
        {"CMakeLists.txt": "project(x LANGUAGES CXX CUDA HIP)\n", "k.cu": "#include <cuda_fp16.h>\n"},
    )
    assert [
        d.severity.value for d in Engine().check_path(hand_written / "k.cu", Settings(root=hand_written)).diagnostics
    ] == ["warning"]


def test_check_verbose_says_which_evidence_gated_a_finding_away(tmp_path):
    import shutil
    import subprocess
    import sys

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "project_gates"
    root = Path(shutil.copytree(fixture, tmp_path / "project_gates"))
    notes = []
    for _run in ("cold", "served from the cache"):  # the notes are kept in the cache too
        run = subprocess.run(
            [sys.executable, "-m", "rocmlint", "check", "--verbose", "--isolated", "."],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        notes.append(sorted(line for line in run.stderr.splitlines() if "not reported" in line))
    assert notes[0] == notes[1]
    assert (
        "rocmlint: csrc/kernels.cu:26: ROC201 not reported: `PG_ROCM_BUILD` is ROCm's "
        "(setup.py:7: the ROCm build defines it (build))" in notes[0]
    )
    assert (
        "rocmlint: csrc/nv_only.cuh:2: ROC205 not reported: ROCm does not compile this file "
        "(csrc/kernels.cu:4: included only where ROCm does not compile)" in notes[0]
    )
    assert (
        "rocmlint: csrc/kernels.cu:15: ROC210 not reported: the project remaps the name for ROCm (csrc/compat.cuh:16)"
        in notes[0]
    )


def test_a_header_macro_standing_for_a_vendor_expression_gates(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(XYZ_HIPBLAS)\n  add_compile_definitions(XYZ_USE_HIPBLAS)\nendif()\n",
            "common.cuh": "#pragma once\n#define MMA_AVAILABLE !defined(XYZ_USE_HIPBLAS) && __CUDA_ARCH__ >= 700\n",
            "attn.cu": """
                #include "common.cuh"
                #if MMA_AVAILABLE
                #include <mma.h>
                #endif
                """,
        },
    )
    assert _codes(root, "attn.cu") == []
    assert ("ROC205", 3) in _codes(root, "attn.cu", project_model=False) or ("ROC217", 3) in _codes(
        root, "attn.cu", project_model=False
    )


def test_a_stale_macro_the_rocm_build_defines_itself_is_no_stale_gate(tmp_path):
    kernel = "#ifdef __HIP_PLATFORM_HCC__\n#include <hip/hip_runtime.h>\n#endif\n"
    defined = write_tree(
        tmp_path / "defined",
        {"CMakeLists.txt": "if(BUILD_HIP)\n  add_definitions(-D__HIP_PLATFORM_HCC__)\nendif()\n", "k.cu": kernel},
    )
    assert _codes(defined, "k.cu") == []
    plain = write_tree(tmp_path / "plain", {"k.cu": kernel})
    assert _codes(plain, "k.cu") == [("ROC215", 1)]


def test_python_build_helpers_count_as_build_files(tmp_path):
    root = write_tree(
        tmp_path / "build" / "proj",  # a `build` folder above the project is not a build helper folder
        {
            "install/builder/features.py": (
                "def settings(ctx):\n    macros = []\n    if ctx.use_hip:\n"
                "        macros.append(('XYZ_USE_HIP', '1'))\n    return macros\n"
            ),
            "pkg/module.py": "macros = [('NOT_A_BUILD_FLAG', None)]\n",
        },
    )
    project = CudaProject.build(root)
    assert [(d.name, d.vendor) for d in project.build_facts.defines] == [("XYZ_USE_HIP", "rocm")]


def test_a_header_only_rocm_includes_remaps_for_rocm(tmp_path):
    """`vendors/hip.h`-style: the remaps sit unconditionally in a header included only under a ROCm macro."""
    root = write_tree(
        tmp_path,
        {
            "vendors/hip.h": "#pragma once\n#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)\n",
            "vendors/cuda.h": "#pragma once\n#include <cuda_runtime.h>\n",
            "common.cuh": '#pragma once\n#ifdef USE_ROCM\n#include "vendors/hip.h"\n#else\n#include "vendors/cuda.h"\n#endif\n',
            "k.cu": '#include "common.cuh"\n__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n',
        },
    )
    project = CudaProject.build(root)
    hip_header = project.view(str(root / "vendors/hip.h"))
    assert hip_header.base.on_nvidia is False and hip_header.base.on_rocm is not False
    assert project.view(str(root / "k.cu")).aliases["__shfl_xor_sync"] == ("vendors/hip.h:2", 3)
    assert _codes(root, "k.cu") == []
    assert _codes(root, "vendors/cuda.h") == []  # included only where ROCm does not compile


def test_conditions_matching_text_and_version_names_decide_no_vendor(tmp_path):
    facts = cmake_facts(
        "CMakeLists.txt",
        'if(${glslc_out} MATCHES ".*GL_NV_cooperative_matrix2.*")\n'
        "  add_compile_definitions(COOPMAT2_OK)\nelse()\n  add_compile_definitions(NO_COOPMAT2)\nendif()\n",
    )
    assert {(d.name, d.vendor) for d in facts.defines} == {("COOPMAT2_OK", None), ("NO_COOPMAT2", None)}
    root = write_tree(tmp_path, {"k.cu": "#if hipblasVersionMajor >= 3\n#endif\n#ifdef USE_HIPBLAS_V2\n#endif\n"})
    learned = CudaProject.build(root).learned
    assert "hipblasVersionMajor" not in learned and learned["USE_HIPBLAS_V2"].vendor == "rocm"


def test_sources_of_a_project_with_no_rocm_build_yet_are_all_to_port(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(WITH_CUBLAS)\n  add_library(gpu kernels.cu)\nendif()\n",
            "kernels.cu": "#include <cub/cub.cuh>\n",
        },
    )
    assert CudaProject.build(root).view(str(root / "kernels.cu")).base.on_rocm is not False
    assert _codes(root, "kernels.cu") == [("ROC205", 1)]


def test_a_cmake_folder_added_for_nvidia_only_lists_nvidia_sources(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(BUILD_CUDA)\n  add_subdirectory(cuda)\nendif()\nif(BUILD_HIP)\n  add_subdirectory(hip)\nendif()\n",
            "cuda/CMakeLists.txt": "add_subdirectory(base)\nadd_library(k kernels.cu)\n",
            "cuda/base/CMakeLists.txt": "target_sources(k PRIVATE exception.cpp)\n",
            "cuda/kernels.cu": "",
            "cuda/base/exception.cpp": "",
            "hip/kernels.hip.cpp": "",
        },
    )
    project = CudaProject.build(root)
    for nvidia_only in ("cuda/kernels.cu", "cuda/base/exception.cpp"):
        assert project.view(str(root / nvidia_only)).base.on_rocm is False, nvidia_only
    assert project.view(str(root / "hip/kernels.hip.cpp")).base.on_rocm is not False


def test_options_named_after_cuda_inside_rocm_build_code_stay_rocm(tmp_path):
    in_hip_folder = cmake_facts(
        "ggml-hip/CMakeLists.txt", "if(GGML_CUDA_FORCE_MMQ)\n  add_compile_definitions(GGML_CUDA_FORCE_MMQ)\nendif()\n"
    )
    assert [(d.name, d.vendor) for d in in_hip_folder.defines] == [("GGML_CUDA_FORCE_MMQ", "rocm")]
    nested = cmake_facts(
        "CMakeLists.txt", "if(USE_ROCM)\n  if(USE_CUDA_GRAPHS)\n    add_definitions(-DGRAPHS)\n  endif()\nendif()\n"
    )
    assert [(d.name, d.vendor) for d in nested.defines] == [("GRAPHS", "rocm")]


HIPIFIED_EXTENSION = {
    "setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k.cu'])\n",
    "k.cu": "#include <cuda_fp16.h>\n",
}


def test_hipified_notes_hidden_by_the_configuration_or_the_command_line(project, cli):
    write_tree(project, HIPIFIED_EXTENSION)
    shown = cli("check", "--no-cache", "-q", "k.cu").stdout
    assert shown.startswith("k.cu:1:1: ROC204 ")
    assert "(setup.py:2: builds a torch CUDAExtension (hipified on ROCm))" in shown
    assert cli("check", "--no-cache", "-q", "--hide-hipified", "k.cu").stdout == ""
    (project / "rocmlint.toml").write_text("show-hipified = false\n", encoding="utf-8")
    assert cli("check", "--no-cache", "-q", "k.cu").stdout == ""
    (project / "rocmlint.toml").write_text("show-hipified = 1\n", encoding="utf-8")
    refused = cli("check", "--no-cache", "k.cu")
    assert refused.code == 2
    assert "show-hipified" in refused.stderr


def test_show_hipified_is_part_of_the_cache_key(project, cli):
    write_tree(project, HIPIFIED_EXTENSION)
    assert "ROC204" in cli("check", "-q", "k.cu").stdout
    assert cli("check", "-q", "--hide-hipified", "k.cu").stdout == ""
    assert "ROC204" in cli("check", "-q", "k.cu").stdout


def test_sources_listed_in_nvidia_blocks_through_globs_variables_and_project_functions(tmp_path):
    """Sources an NVIDIA-only block adds, however it adds them, while the ROCm build has its own twins: NVIDIA's."""
    root = write_tree(
        tmp_path,
        {
            "cmake/sources.cmake": """
                function(proj_add_sources)
                  set(PROJ_SRCS ${PROJ_SRCS} ${ARGN} PARENT_SCOPE)
                endfunction()
                macro(proj_add_each)
                  foreach(source ${ARGN})
                    list(APPEND PROJ_SRCS ${source})
                  endforeach()
                endmacro()
                function(_proj_add_to_property PROPERTY)
                  foreach(_file ${ARGN})
                    set_property(GLOBAL APPEND PROPERTY ${PROPERTY} ${CMAKE_CURRENT_LIST_DIR}/${_file})
                  endforeach()
                endfunction()
                function(proj_add_lib_sources)
                  _proj_add_to_property(PROJ_LIB_SOURCES ${ARGN})
                endfunction()
                """,
            "CMakeLists.txt": """
                include(cmake/sources.cmake)
                set(PROJ_SRCS src/common.cu)
                if(PROJ_USE_HIP)
                  enable_language(HIP)
                  file(GLOB HIP_SRCS CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/hip/*.hip")
                  list(APPEND PROJ_SRCS src/gemm_hip.cpp ${HIP_SRCS})
                elseif(PROJ_USE_CUDA)
                  file(GLOB_RECURSE NV_KERNELS "src/nv/*.cu")
                  set(PROJ_SRCS ${PROJ_SRCS} src/gemm.cu)
                  proj_add_sources(src/attention.cu)
                  PROJ_ADD_EACH(src/topk.cu)
                  proj_add_lib_sources(src/pme.cu)
                  target_sources(proj PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/scan.cu)
                  set(FLAGGED_FILE ${CMAKE_CURRENT_LIST_DIR}/src/common.cu)
                  set_source_files_properties(${FLAGGED_FILE} PROPERTIES COMPILE_FLAGS "-arch=sm_90a")
                endif()
                add_library(proj ${PROJ_SRCS})
                """,
            "src/common.cu": "",
            "src/gemm.cu": "",
            "src/gemm_hip.cpp": "",
            "src/attention.cu": "",
            "src/topk.cu": "",
            "src/pme.cu": "",
            "src/scan.cu": "",
            "src/hip/reduce.hip": "",
            "src/nv/deep/fmha.cu": "",
        },
    )
    project = CudaProject.build(root)
    nvidia_only = {name for name in ("gemm.cu", "attention.cu", "topk.cu", "pme.cu", "scan.cu", "nv/deep/fmha.cu")}
    for name in nvidia_only:
        view = project.view(str(root / "src" / name))
        assert view.base.on_rocm is False, name
        assert view.base_evidence.startswith("CMakeLists.txt:"), name
    for name in ("common.cu", "gemm_hip.cpp", "hip/reduce.hip"):
        assert project.view(str(root / "src" / name)).base.on_rocm is not False, name


def test_cmake_source_functions_follow_wrappers_and_global_properties():
    """A function appending its arguments to a global property lists sources, and so does a wrapper handing its
    arguments to it (a wrapper of a wrapper too); a property set without APPEND, or a function only printing its
    arguments, lists nothing."""
    text = """
        function(add_to_property PROPERTY)
          foreach(_file ${ARGN})
            set_property(GLOBAL APPEND PROPERTY ${PROPERTY} ${_file})
          endforeach()
        endfunction()
        function(add_lib_sources)
          add_to_property(LIB_SOURCES ${ARGN})
        endfunction()
        macro(add_gpu_sources)
          add_lib_sources(${ARGN})
        endmacro()
        function(replace_property)
          set_property(GLOBAL PROPERTY LIB_SOURCES ${ARGN})
        endfunction()
        function(show)
          message(STATUS ${ARGN})
        endfunction()
        function(show_twice)
          show(${ARGN})
        endfunction()
        """
    assert cmake_source_functions([text]).names == {"add_to_property", "add_lib_sources", "add_gpu_sources"}


def test_cmake_macros_handing_a_named_parameter_to_a_target_list_sources(tmp_path):
    # `macro(add_example target file)` builds `${file}`: an example added only `if(WITH_CUDA)` is NVIDIA's.
    text = """
        macro(add_example target file)
          add_executable(example_${target} ${file})
          target_link_libraries(example_${target} lib)
        endmacro()
        function(set_flag name value)
          message(STATUS "${name}=${value}")
        endfunction()
        """
    assert cmake_source_functions([text]).names == {"add_example"}
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(WITH_HIP)\n  enable_language(HIP)\n  add_compile_definitions(XYZ_HIP)\nelse()\n"
            "  enable_language(CUDA)\nendif()\nadd_subdirectory(examples)\n",
            "examples/CMakeLists.txt": text + "add_subdirectory(interop)\nadd_example(plain plain.cpp)\n",
            "examples/interop/CMakeLists.txt": "if (WITH_CUDA)\n  add_example(interop main.cpp)\nendif()\n",
            "examples/interop/main.cpp": "#include <cuda_runtime_api.h>\nint main() { return 0; }\n",
            "examples/plain.cpp": "#include <cuda_runtime_api.h>\nint main() { return 0; }\n",
        },
    )
    project = CudaProject.build(root)
    interop = project.view(str(root / "examples/interop/main.cpp"))
    assert interop.base.on_rocm is False
    assert interop.base_evidence == "examples/interop/CMakeLists.txt:2: the build compiles it for NVIDIA only"
    assert _codes(root, "examples/interop/main.cpp") == []
    assert _codes(root, "examples/plain.cpp") == [("ROC204", 1)]


def test_a_macro_making_its_arguments_absolute_into_the_callers_list_lists_sources(tmp_path):
    """A macro that makes each argument absolute (`get_filename_component(__name ${file} ABSOLUTE)`), appends the
    result to a list and hands the list to the caller's variable lists sources: a call under `if(XYZ_HAVE_CUDA)`
    names NVIDIA's sources. One only printing what it derived lists nothing."""
    module = """
        macro(set_full_path VAR)
          unset(__tmp_names)
          foreach(filename ${ARGN})
            get_filename_component(__name "${filename}" ABSOLUTE)
            list(APPEND __tmp_names "${__name}")
          endforeach()
          set(${VAR} "${__tmp_names}")
        endmacro()
        macro(show_full_path)
          foreach(filename ${ARGN})
            get_filename_component(__name "${filename}" ABSOLUTE)
            message(STATUS "${__name}")
          endforeach()
        endmacro()
        """
    assert cmake_source_functions([textwrap.dedent(module)]).names == {"set_full_path"}
    device = (
        "if(XYZ_HAVE_CUDA)\n  set_full_path(THIS_DIR_SOURCES CUDA.cpp GPU.cpp)\nendif()\n"
        "if(XYZ_HAVE_ROCM)\n  set_full_path(THIS_DIR_SOURCES GPU.cpp ROCm.cpp)\nendif()\n"
        'set(SOURCES "${SOURCES}" "${THIS_DIR_SOURCES}" PARENT_SCOPE)\n'
    )
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": module + "project(demo LANGUAGES CXX)\nif(XYZ_HAVE_ROCM)\n  enable_language(HIP)\n"
            "elseif(XYZ_HAVE_CUDA)\n  enable_language(CUDA)\nendif()\nadd_subdirectory(device)\nadd_library(demo ${SOURCES})\n",
            "device/CMakeLists.txt": device,
            "device/CUDA.cpp": "#include <cuda_runtime.h>\nint f() { return 0; }\n",
            "device/GPU.cpp": "#include <cuda_runtime.h>\nint g() { return 0; }\n",
            "device/ROCm.cpp": "#include <hip/hip_runtime.h>\nint f() { return 0; }\n",
        },
    )
    project = CudaProject.build(root)
    assert project.view(str(root / "device/CUDA.cpp")).base_evidence == (
        "device/CMakeLists.txt:2: the build compiles it for NVIDIA only"
    )
    assert _codes(root, "device/CUDA.cpp") == []
    assert _codes(root, "device/GPU.cpp") == [("ROC204", 1)]  # listed for both vendors


def test_a_source_function_placing_its_arguments_in_a_folder_of_its_own_names_files_there(tmp_path):
    # `register_backend(cuda CUDA CudaBackend.cu)` lists `src/cuda/CudaBackend.cu`: the body spells the folder, the
    # call only the file's name, which names the project file ending so. Listed for NVIDIA only, ROCm never builds it;
    # a function placing its arguments in the calling file's own folder keeps the call's paths as they are.
    module = """
        macro(register_backend NAME DEFINE)
          list(APPEND BACKENDS "${NAME}")
          list(APPEND BACKEND_SOURCES "src/${NAME}/${ARGN}")
        endmacro()
        function(add_here)
          list(APPEND HERE_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${ARGN})
        endfunction()
        """
    functions = cmake_source_functions([textwrap.dedent(module)])
    assert functions == SourceFunctions(frozenset({"register_backend", "add_here"}), frozenset({"register_backend"}))
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(demo LANGUAGES CXX)\ninclude(cmake/backends.cmake)\n"
            "register_backend(hip HIP HipBackend.cpp)\nregister_backend(cuda CUDA CudaBackend.cu)\n"
            "register_backend(serial SERIAL SerialBackend.cpp)\n",
            "cmake/backends.cmake": module,
            "src/cuda/CudaBackend.cu": "#include <nvml.h>\nint f() { return 0; }\n",
            "src/hip/HipBackend.cpp": "#include <hip/hip_runtime.h>\nint f() { return 0; }\n",
            "src/serial/SerialBackend.cpp": "#include <cuda_runtime_api.h>\nint g() { return 0; }\n",
        },
    )
    project = CudaProject.build(root)
    cuda = project.view(str(root / "src/cuda/CudaBackend.cu"))
    assert cuda.base.on_rocm is False
    assert cuda.base_evidence == "CMakeLists.txt:4: the build compiles it for NVIDIA only"
    assert _codes(root, "src/cuda/CudaBackend.cu") == []
    assert _codes(root, "src/serial/SerialBackend.cpp") == [("ROC204", 1)]


def test_a_cuda_folder_whose_hip_twin_hipify_fills_is_compiled_on_rocm(tmp_path):
    files = {
        "CMakeLists.txt": "project(proj LANGUAGES CXX)\nadd_subdirectory(lib)\n",
        "lib/CMakeLists.txt": """
            if(USE_CUDA)
              add_subdirectory(cuda)
            endif()
            if(USE_ROCM)
              add_subdirectory(hip)
            endif()
            """,
        "lib/cuda/CMakeLists.txt": "set(CUDA_SRCS alloc.cpp)\nadd_library(lib_cuda ${CUDA_SRCS})\n",
        "lib/cuda/alloc.cpp": "",
        # hipify writes the copies of lib/cuda here at build time: the globs match nothing in the tree.
        "lib/hip/CMakeLists.txt": "file(GLOB HIP_SRCS *.cpp)\nhip_add_library(lib_hip ${HIP_SRCS})\n",
    }
    root = write_tree(tmp_path / "hipified", files)
    assert CudaProject.build(root).view(str(root / "lib/cuda/alloc.cpp")).base.on_rocm is not False
    # A hand-ported twin in the tree: the CUDA folder is NVIDIA's.
    ported = write_tree(tmp_path / "ported", {**files, "lib/hip/alloc.cpp": ""})
    assert _base_of(CudaProject.build(ported), ported / "lib/cuda/alloc.cpp") == (
        False,
        "lib/cuda/CMakeLists.txt:1: the build compiles it for NVIDIA only",
    )


def test_sources_removed_in_a_hip_branch_are_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                option(WITH_CUDA "CUDA backend" OFF)
                option(WITH_HIP "HIP backend" OFF)
                set(CUDA_SOURCES src/common.cu src/quant/gemm.cu src/quant/pack.cu)
                if(WITH_CUDA)
                  list(REMOVE_ITEM CUDA_SOURCES src/common.cu)
                  cuda_add_library(lib ${CUDA_SOURCES})
                elseif(WITH_HIP)
                  enable_language(HIP)
                  list(REMOVE_ITEM CUDA_SOURCES
                    src/quant/gemm.cu
                  )
                  list(REMOVE_ITEM CUDA_SOURCES src/quant/pack.cu)
                  set(PACK_SOURCES src/quant/pack.cu)
                  add_library(lib ${CUDA_SOURCES})
                  add_library(pack OBJECT ${PACK_SOURCES})
                endif()
                """,
            "src/common.cu": '#include "quant/tile.cuh"\n',
            "src/quant/gemm.cu": '#include "tile.cuh"\n#include <cub/cub.cuh>\n',
            "src/quant/pack.cu": "",
            "src/quant/tile.cuh": "",
        },
    )
    facts = cmake_facts(str(root / "CMakeLists.txt"), (root / "CMakeLists.txt").read_text(), str(root))
    assert [(s.pattern, s.vendor, s.variable) for s in facts.sources if s.removed] == [
        ("src/common.cu", "nvidia", "CUDA_SOURCES"),
        ("src/quant/gemm.cu", "rocm", "CUDA_SOURCES"),
        ("src/quant/pack.cu", "rocm", "CUDA_SOURCES"),
    ]
    project = CudaProject.build(root)
    gemm = project.view(str(root / "src/quant/gemm.cu"))
    assert gemm.base.on_rocm is False
    assert gemm.base_evidence == "CMakeLists.txt:9: the ROCm build removes it from its sources"
    # Removed for NVIDIA only, or moved to another list the ROCm build compiles: ROCm compiles them (and the
    # header one of them includes).
    for built_for_rocm in ("src/common.cu", "src/quant/pack.cu", "src/quant/tile.cuh"):
        assert project.view(str(root / built_for_rocm)).base.on_rocm is not False, built_for_rocm
    assert _codes(root, "src/quant/gemm.cu") == []


_HIP_FRAGMENT = """
    # the ROCm build's flags
    CXXFLAGS += -DHAVE_GPU=1 \\
                -D__IS_HIP_COMPILE__=1 -DCUDA_VERSION=11000 -DLIB_VER=$(VER)
    HIPCC_FLAGS = -D__CUDACC_VER_MAJOR__=11
    """
_CUDA_FRAGMENT = "CXXFLAGS += -DHAVE_GPU=1\nCUDA_FLAGS = -DHAVE_GPU -DPER_THREAD_STREAM\n"


def test_make_fragments_and_makefiles_define_macros_per_vendor():
    fragment = makefile_facts("src/makefiles/hip_64bit.mk", textwrap.dedent(_HIP_FRAGMENT).lstrip("\n"))
    assert [(d.name, d.value, d.vendor, d.line) for d in fragment.defines] == [
        ("HAVE_GPU", "1", "rocm", 2),
        ("__IS_HIP_COMPILE__", "1", "rocm", 2),
        ("CUDA_VERSION", "11000", "rocm", 2),
        ("LIB_VER", "$(VER)", "rocm", 2),
        ("__CUDACC_VER_MAJOR__", "11", "rocm", 4),
    ]
    makefile = makefile_facts(
        "src/decoder/Makefile",
        "ifeq ($(CUDA), true)\n%.o : %.cu\n\tnvcc -c $< -DUSE_NVTX\nelse\nCXXFLAGS += -DNO_NVTX\nendif\n"
        "ROCM_FLAGS = -DUSE_ROCTX\nNVCCFLAGS = -DUSE_NVTX_RANGES\n%.o : %.hip\n\t$(HIPCC) -c $< -DHIP_KERNELS\n"
        "CXXFLAGS += -DLOGGING  # -DNOT_A_FLAG\n",
    )
    assert [(d.name, d.vendor) for d in makefile.defines] == [
        ("USE_NVTX", "nvidia"),  # an `ifeq ($(CUDA), true)` block, its `else` ROCm's
        ("NO_NVTX", "rocm"),
        ("USE_ROCTX", "rocm"),  # the variable's name
        ("USE_NVTX_RANGES", "nvidia"),
        ("HIP_KERNELS", "rocm"),  # the compiler the recipe runs
        ("LOGGING", None),
    ]


def test_make_conditionals_comparing_with_nothing_test_a_vendors_absence():
    makefile = makefile_facts(
        "Makefile",
        "ifeq ($(HIPCC),)\n  $(info no hipcc)\nelse\n  HIPCC_FLAGS += -DBUILD_AMD\nendif\n"
        "ifneq ($(filter gfx90a,$(AMDGPU_TARGETS)),)\n  FLAGS += -DWAVE64\nendif\n"
        'ifeq "$(USE_ROCM)" "0"\n  FLAGS += -DNO_ROCM_PATH\nendif\n'
        "ifeq ($(NVCC),)\n  FLAGS += -DCPU_ONLY\nelse ifeq ($(word 1,$(A)),x)\n  FLAGS += -DOTHER\nendif\n",
    )
    assert [(d.name, d.vendor) for d in makefile.defines] == [
        ("BUILD_AMD", "rocm"),  # `else` of "no hipcc found"
        ("WAVE64", "rocm"),  # an AMD target was asked for
        ("NO_ROCM_PATH", None),  # ROCm switched off: not NVIDIA's arm for that (a CPU build, another vendor)
        ("CPU_ONLY", None),
        ("OTHER", None),
    ]


_TWO_MAKEFILES = {
    "src/makefile": "CC = nvcc\nSOURCES = $(wildcard main/*.cu) $(wildcard extra/*.cu) \\\n  $(wildcard util/*.cu)\n",
    "src/makefile.hip": "CC = hipcc\nCFLAGS = -DUSE_HIP\nSOURCES = $(wildcard main/*.cu) $(wildcard util/*.cu)\n",
    "src/main/run.cu": "__global__ void k(int* out) {\n  *out = __syncwarp();\n}\n",
    "src/extra/fit.cu": '#include "../util/solver.cuh"\n__global__ void k() {\n  __syncwarp();\n}\n',
    "src/util/solver.cuh": "#include <cusolverDn.h>\n",
}


def test_source_lists_of_a_rocm_makefile_and_an_nvcc_makefile_tell_what_rocm_compiles(tmp_path):
    root = write_tree(tmp_path, _TWO_MAKEFILES)
    assert _codes(root, "src/main/run.cu", select=("ROC217",)) == [("ROC217", 2)]
    assert _codes(root, "src/extra/fit.cu", select=("ROC217",)) == []  # listed by the nvcc makefile alone
    assert _codes(root, "src/util/solver.cuh") == []  # included only by it
    unported = {name: text for name, text in _TWO_MAKEFILES.items() if name != "src/makefile.hip"}
    assert _codes(write_tree(tmp_path / "unported", unported), "src/extra/fit.cu", select=("ROC217",)) == [
        ("ROC217", 3)
    ]


def test_cmake_conditions_naming_a_vendor_after_not_are_the_other_vendors_arm():
    facts = cmake_facts(
        "CMakeLists.txt",
        "if(NOT USE_ROCM)\n  add_definitions(-DCUDA_PATH)\nelse()\n  add_definitions(-DROCM_PATH)\nendif()\n"
        "if(USE_HIP AND NOT USE_CUDA)\n  add_definitions(-DHIP_ONLY)\nendif()\n"
        "if(NOT CUDA_FOUND AND NOT USE_ROCM)\n  add_definitions(-DCPU_PATH)\nendif()\n",
    )
    assert [(d.name, d.vendor) for d in facts.defines] == [
        ("CUDA_PATH", "nvidia"),
        ("ROCM_PATH", "rocm"),
        ("HIP_ONLY", "rocm"),
        ("CPU_PATH", None),  # not NVIDIA and not ROCm: neither vendor's
    ]


_CUDA_ONLY_BENCHMARK = (
    "find_package(CUDAToolkit QUIET)\nif(NOT CUDAToolkit_FOUND)\n  message(WARNING skipping)\n  return()\nendif()\n"
    "add_executable(stream stream.cu)\n"
)


def test_a_cmake_file_that_returns_unless_a_vendor_is_found_builds_the_rest_for_that_vendor():
    facts = cmake_facts("bench/stream/CMakeLists.txt", _CUDA_ONLY_BENCHMARK + "add_definitions(-DSTREAM)\n")
    assert [(s.pattern, s.vendor) for s in facts.sources] == [("stream.cu", "nvidia")]
    assert [(d.name, d.vendor) for d in facts.defines] == [("STREAM", "nvidia")]
    # A `return()` in a function leaves the function, not the file; nor does an `if()` with an `else()` decide.
    in_function = "function(check)\n  if(NOT CUDA_FOUND)\n    return()\n  endif()\nendfunction()\n"
    branched = "if(NOT CUDA_FOUND)\n  return()\nelse()\n  message(found)\nendif()\n"
    for head in (in_function, branched):
        facts = cmake_facts("bench/CMakeLists.txt", head + "add_executable(stream stream.cu)\n")
        assert [(s.pattern, s.vendor) for s in facts.sources] == [("stream.cu", None)]


def test_a_benchmark_the_cmake_build_skips_without_cuda_is_nvidia_code_in_a_project_building_rocm(tmp_path):
    files = {
        "CMakeLists.txt": "add_subdirectory(stream)\nadd_subdirectory(copy)\n",
        "copy/CMakeLists.txt": "if(USE_ROCM)\n  add_definitions(-DHIP_UNCACHED)\nendif()\nadd_executable(c copy.cu)\n",
        "copy/copy.cu": "__global__ void k() {}\n",
        "stream/CMakeLists.txt": _CUDA_ONLY_BENCHMARK,
        "stream/stream.cu": "#include <nvml.h>\n__global__ void k() {}\n",
    }
    root = write_tree(tmp_path, files)
    assert _codes(root, "stream/stream.cu") == []
    del files["copy/CMakeLists.txt"]  # no ROCm build yet: every CUDA source is one to port
    assert _codes(write_tree(tmp_path / "unported", files), "stream/stream.cu") == [("ROC205", 1)]


_ROCM_MAKE_ARM = "ifeq ($(HIPCC),)\nelse\n  HIPCC_FLAGS += -DBUILD_AMD\nendif\n"
_TEST_INCLUDING_ITS_PROGRAM = {
    "test.cu": '#ifdef BUILD_AMD\n#include "train.hip"\n#else\n#include "train.cu"\n#endif\n',
    "train.cu": "__global__ void k(float* p) {\n  __stcs(p, 1.0f);\n}\n",
}


def test_a_program_a_test_includes_where_rocm_does_not_compile_is_still_compiled_on_its_own(tmp_path):
    named = _ROCM_MAKE_ARM + "train_cu: train.cu\n\tnvcc $< -o $@\ntest_cu: test.cu\n\tnvcc $< -o $@\n"
    root = write_tree(tmp_path / "named", {**_TEST_INCLUDING_ITS_PROGRAM, "Makefile": named})
    assert _codes(root, "train.cu", select=("ROC217",)) == [("ROC217", 2)]
    # Named by no build: only the test compiles it, by its `#include`, which ROCm never reaches.
    unnamed = _ROCM_MAKE_ARM + "test_cu: test.cu\n\tnvcc $< -o $@\n"
    root = write_tree(tmp_path / "unnamed", {**_TEST_INCLUDING_ITS_PROGRAM, "Makefile": unnamed})
    assert _codes(root, "train.cu", select=("ROC217",)) == []


_NVCC_ONLY_FOLDER = {
    "dev/Makefile": "NVCC := $(shell which nvcc)\n%: %.cu\n\t$(NVCC) $< -o $@\n",
    "dev/common.h": "#define WARP 32\n__device__ int lanes() { return __popc(__activemask()); }\n",
    "dev/experiment.cu": '#include "common.h"\n__global__ void k(unsigned* out) {\n  *out = __ballot_sync(~0u, 1);\n}\n',
}


def test_a_folder_only_an_nvcc_makefile_builds_is_nvidia_code_where_make_builds_rocm_elsewhere(tmp_path):
    rocm_make = _ROCM_MAKE_ARM + "%amd: %.cu\n\t$(HIPCC) $(HIPCC_FLAGS) $< -o $@\n"
    root = write_tree(tmp_path / "ported", {**_NVCC_ONLY_FOLDER, "Makefile": rocm_make})
    assert _codes(root, "dev/experiment.cu") == []
    assert _codes(root, "dev/common.h") == []
    # Before any ROCm build: every CUDA source is one to port, whatever builds it.
    root = write_tree(tmp_path / "unported", _NVCC_ONLY_FOLDER)
    assert _codes(root, "dev/experiment.cu") == [("ROC210", 3)]
    assert _codes(root, "dev/common.h") == [("ROC202", 2)]


def test_make_conditionals_comparing_with_an_empty_or_off_value_negate_their_test():
    # `ifneq ($(NVCC),)` holds when nvcc was found: NVIDIA's arm; its `else ifneq ($(HIPCC),)` ROCm's.
    makefile = makefile_facts(
        "src/Makefile",
        "ifneq ($(OPENCL),0)\nCFLAGS += -DUSE_CL\nelse ifneq ($(NVCC),)\nCFLAGS += -DOFFLOAD_CUDA\n"
        "else ifneq ($(HIPCC),)\nCFLAGS += -DOFFLOAD_HIP\nendif\n"
        "ifeq ($(USE_HIP),0)\nCFLAGS += -DNO_HIP\nendif\nifeq ($(USE_ROCM), true)\nCFLAGS += -DROCM_ON\nendif\n"
        'ifneq "$(USE_CUDA)" "off"\nCFLAGS += -DCUDA_ON\nendif\nifeq ($(filter-out 0,$(USE_HIP)),)\nCFLAGS += -DX\nendif\n',
    )
    assert [(d.name, d.vendor) for d in makefile.defines] == [
        ("USE_CL", None),
        ("OFFLOAD_CUDA", "nvidia"),
        ("OFFLOAD_HIP", "rocm"),
        ("NO_HIP", None),  # HIP off: not NVIDIA's arm for that
        ("ROCM_ON", "rocm"),
        ("CUDA_ON", "nvidia"),
        ("X", None),  # `$(filter-out 0,$(USE_HIP))` empty: HIP off
    ]


def test_a_make_fragment_of_the_rocm_build_gates_and_decides_version_tests(tmp_path):
    files = {
        "src/makefiles/hip_64bit.mk": _HIP_FRAGMENT,
        "src/makefiles/cuda_64bit.mk": _CUDA_FRAGMENT,
        # A CMake build that knows only CUDA lists the kernel for NVIDIA: the make build still compiles it for ROCm.
        "CMakeLists.txt": "if(CUDA_FOUND)\n  add_library(k src/k.cu)\nendif()\n",
        "src/k.cu": """
            #ifdef __IS_HIP_COMPILE__
            #include <hipcub/hipcub.hpp>
            #else
            #include <cub/cub.cuh>
            #endif
            #if CUDA_VERSION >= 11000
            #define ASYNC_COPY 1
            #else
            #define ASYNC_COPY 0
            #endif
            const int async_copy = ASYNC_COPY;  // read: the version test decides code
            #if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ < 10
            #error "too old"
            #endif
            #ifdef PER_THREAD_STREAM
            #include <cuda_runtime.h>
            #endif
            """,
    }
    root = write_tree(tmp_path / "with", files)
    project = CudaProject.build(root)
    learned = project.learned["__IS_HIP_COMPILE__"]  # the build's, though its name is the compiler's kind
    assert (learned.vendor, learned.evidence.path, learned.evidence.line) == ("rocm", "src/makefiles/hip_64bit.mk", 2)
    assert "CUDA_VERSION" not in project.learned  # a value for ROCm, not a ROCm-only gate
    view = project.view(str(root / "src/k.cu"))
    assert view.base.on_rocm is not False
    assert view.rocm_build_values["CUDA_VERSION"] == "11000"
    assert view.rocm_build_values["LIB_VER"] is None  # the build's own variable: defined, value unknown
    assert project.learned["PER_THREAD_STREAM"].vendor == "nvidia"
    assert _codes(root, "src/k.cu") == []
    del files["src/makefiles/hip_64bit.mk"]
    without = write_tree(tmp_path / "without", files)
    assert {code for code, _ in _codes(without, "src/k.cu")} >= {"ROC205", "ROC207"}


def test_an_extension_class_picked_into_a_variable_is_hipified_with_cudacc_renamed(tmp_path):
    files = {
        "setup.py": """
            import torch
            from torch.utils.cpp_extension import CppExtension, CUDAExtension
            if torch.cuda.is_available():
                extension = CUDAExtension
            else:
                extension = CppExtension
            ext = extension("ops", ["k.cu"])
            """,
        "k.cu": """
            #include <cuda_fp16.h>
            #ifdef __CUDACC__
            #define HOST_DEVICE __host__ __device__
            #else
            #define HOST_DEVICE
            #endif
            """,
    }
    root = write_tree(tmp_path / "variable", files)
    facts = setup_py_facts(str(root / "setup.py"), (root / "setup.py").read_text())
    assert facts.hipify.endswith("setup.py:7: builds a torch CUDAExtension through `extension` (hipified on ROCm)")
    view = CudaProject.build(root).view(str(root / "k.cu"))
    assert view.rocm_build_values["__CUDACC__"] == "1"
    assert "__CUDACC__" in view.rocm_build_decided
    report = Engine().check_path(root / "k.cu", Settings(root=root))
    assert [(d.code, d.severity.value) for d in report.diagnostics] == [("ROC204", "info")]  # no ROC214
    files["setup.py"] = "from setuptools import Extension\next = Extension('ops', ['k.cu'])\n"  # no hipify
    plain = write_tree(tmp_path / "plain", files)
    report = Engine().check_path(plain / "k.cu", Settings(root=plain))
    assert [(d.code, d.severity.value) for d in report.diagnostics] == [("ROC204", "warning"), ("ROC214", "error")]


def test_a_torch_extension_computing_its_sources_compiles_what_a_cmake_build_lists_for_nvidia_only(tmp_path):
    # A setup.py picking `CUDAExtension` by a conditional expression and computing its sources from a glob, beside a
    # libtorch CMake build whose `csrc/cuda/*.cu` glob sits under `if(WITH_CUDA)`: pip's build hipifies and compiles
    # the CUDA sources on ROCm, so the CMake list does not make them NVIDIA-only.
    files = {
        "setup.py": """
            import glob, os.path as osp, torch
            from torch.utils.cpp_extension import CppExtension, CUDAExtension
            suffices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
            extensions = []
            main_files = glob.glob(osp.join("csrc", "*.cpp"))
            for main in main_files:
                for suffix in suffices:
                    define_macros = []
                    if suffix == "cuda" and torch.version.hip:
                        define_macros += [("USE_ROCM", None)]
                    name = main.split("/")[-1][:-4]
                    sources = [main, osp.join("csrc", "cuda", f"{name}_cuda.cu")]
                    Extension = CppExtension if suffix == "cpu" else CUDAExtension
                    extensions.append(Extension(name, sources, define_macros=define_macros))
            """,
        "CMakeLists.txt": """
            option(WITH_CUDA "Enable CUDA support" OFF)
            if(WITH_CUDA)
              enable_language(CUDA)
            endif()
            file(GLOB OPERATOR_SOURCES csrc/*.cpp)
            if(WITH_CUDA)
              file(GLOB OPERATOR_SOURCES ${OPERATOR_SOURCES} csrc/cuda/*.cu)
            endif()
            add_library(ops SHARED ${OPERATOR_SOURCES})
            """,
        "csrc/spmm.cpp": "int spmm();\n",
        "csrc/cuda/spmm_cuda.cu": """
            #define FULL_MASK 0xffffffff
            __global__ void k(float* out, float v) {
              for (int i = 16; i > 0; i /= 2) v += __shfl_down_sync(FULL_MASK, v, i);
              out[threadIdx.x] = v;
            }
            """,
    }
    root = write_tree(tmp_path / "computed", files)
    facts = setup_py_facts(str(root / "setup.py"), (root / "setup.py").read_text())
    assert facts.extension_folders == (str(root),)
    assert "through `Extension` (hipified on ROCm)" in facts.hipify
    assert CudaProject.build(root).view(str(root / "csrc/cuda/spmm_cuda.cu")).base.on_rocm is not False
    assert ("ROC210", 3) in {(code, line) for code, line in _codes(root, "csrc/cuda/spmm_cuda.cu")}
    # A setup.py naming its sources one by one compiles those alone: the CMake build's list decides the rest.
    files["setup.py"] = """
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension("ops", ["csrc/spmm.cpp"])
        """
    named = write_tree(tmp_path / "named", files)
    assert CudaProject.build(named).view(str(named / "csrc/cuda/spmm_cuda.cu")).base.on_rocm is False


def test_a_header_nothing_includes_in_a_folder_only_nvidia_compiles_is_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                set(SOURCES src/attention.cu)
                if(WITH_CUDA)
                  list(APPEND SOURCES src/fa/fwd_hdim64.cu)
                  cuda_add_library(lib ${SOURCES})
                elseif(WITH_HIP)
                  enable_language(HIP)
                  add_library(lib ${SOURCES})
                endif()
                """,
            "src/attention.cu": '#include "common/api.h"\n',
            "src/fa/fwd_hdim64.cu": '#include "fa/kernel.h"\n',
            "include/fa/kernel.h": '#include "softmax.h"\n#include "utils.h"\n',
            "include/fa/softmax.h": '#include "utils.h"\n',
            "include/fa/utils.h": "#include <cute/tensor.hpp>\n",
            "include/fa/alibi.h": '#include "utils.h"\n#include <cutlass/cutlass.h>\n',  # nothing includes it
            "include/common/api.h": '#include "detail.h"\n',
            "include/common/detail.h": "",
            "include/common/extra.h": "#include <cutlass/cutlass.h>\n",  # nothing includes it either
        },
    )
    project = CudaProject.build(root)
    alibi = project.view(str(root / "include/fa/alibi.h"))
    assert alibi.base.on_rocm is False
    assert alibi.base_evidence == "include/fa/: a header nothing includes, beside 2 headers only NVIDIA compiles"
    assert project.view(str(root / "include/fa/utils.h")).base.on_rocm is False  # its includers too
    assert _codes(root, "include/fa/alibi.h") == []
    # A header nothing includes beside headers ROCm compiles (a library's public header) is checked as it is.
    assert project.view(str(root / "include/common/extra.h")).base.on_rocm is not False
    assert _codes(root, "include/common/extra.h") == [("ROC206", 1)]


def test_an_option_the_rocm_build_refuses_opens_nvidia_blocks():
    facts = cmake_facts(
        "CMakeLists.txt",
        """
        if(WITH_FLASH_ATTN)
          add_definitions(-DWITH_FLASH)
          list(APPEND SOURCES src/flash/fwd.cu)
        else()
          add_definitions(-DNO_FLASH)
        endif()
        if(WITH_CUDA)
          enable_language(CUDA)
        elseif(WITH_HIP)
          if(WITH_FLASH_ATTN)
            message(FATAL_ERROR "WITH_HIP=ON incompatible with WITH_FLASH_ATTN=ON")
          endif()
          if(WITH_NCCL)
            message(STATUS "using RCCL")
          endif()
        endif()
        if(WITH_HIP AND WITH_TP)
          message(FATAL_ERROR "no tensor parallelism on HIP")
        endif()
        if(WITH_TP)
          add_definitions(-DWITH_TP)
        endif()
        if(WITH_NCCL)
          add_definitions(-DWITH_NCCL)
        endif()
        """,
    )
    assert [(d.name, d.vendor) for d in facts.defines] == [
        ("WITH_FLASH", "nvidia"),
        ("NO_FLASH", None),  # not having the option says nothing about the vendor
        ("WITH_TP", "nvidia"),
        ("WITH_NCCL", None),  # a ROCm block reads it without refusing it
    ]
    assert [(s.pattern, s.vendor) for s in facts.sources] == [("src/flash/fwd.cu", "nvidia")]


def test_cudacc_is_renamed_only_under_the_setup_py_that_builds_the_extension(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  execute_process(COMMAND python tools/hipify_some_folders.py)\nendif()\n",
            "c10/half.h": "#ifdef __CUDACC__\n#include <cuda_fp16.h>\n#endif\n",
            "test/ext/setup.py": "from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('e', ['k.cu'])\n",
            "test/ext/k.cu": '#include "c10/half.h"\n#ifdef __CUDACC__\n#define HD __host__ __device__\n#endif\n',
        },
    )
    project = CudaProject.build(root)
    assert "__CUDACC__" in project.view(str(root / "test/ext/k.cu")).rocm_build_decided
    assert "__CUDACC__" not in project.view(str(root / "c10/half.h")).rocm_build_decided
    assert "ROC214" in [code for code, _ in _codes(root, "c10/half.h")]  # hipify never sees c10/
    assert [code for code, _ in _codes(root, "test/ext/k.cu")] == []


def test_wave_size_names_are_found_in_any_case_and_only_with_a_64():
    """The pre-test for the 64-lane warp size constant: every spelling of the names it needs, in any case."""
    for unit, joint, extent in itertools.product(("warp", "wave", "wavefront"), ("", "_"), ("size", "width")):
        name = f"{unit}{joint}{extent}"
        for spelled in (name, name.upper(), name.title(), f"k{name.title().replace('_', '')}"):
            assert _may_name_a_wave_size(f"#define {spelled} 64\n".encode()), spelled
            assert not _may_name_a_wave_size(f"#define {spelled} 32\n".encode()), spelled
    for near_miss in ("warp__size", "wavesiz", "warp_count", "wave_fron_size", "front_size"):
        assert not _may_name_a_wave_size(f"#define {near_miss} 64\n".encode()), near_miss


def test_sources_a_python_build_helper_adds_only_outside_rocm_are_nvidia_only(tmp_path):
    """`if not rocm_build(): sources.extend([csrc / "comm" / "k.cu"])` in a build helper: a path whose folder is a
    parameter names the project file ending with the rest; the headers only those sources include follow. A
    file name alone under an unknown folder names nothing, and a file the ROCm arm lists too stays built."""
    root = write_tree(
        tmp_path,
        {
            "setup.py": "from build_tools.ext import make\nmake('pkg/csrc')\n",
            "build_tools/ext.py": """
                from pathlib import Path
                from .utils import rocm_build
                def make(csrc):
                    csrc = Path(csrc)
                    sources = [csrc / "main.cu"]
                    if not rocm_build():
                        sources.extend([csrc / "comm" / "comm.cu", csrc / "shared" / "both.cu", csrc / "main.cu"])
                    else:
                        sources.append(csrc / "shared" / "both.cu")
                        define_macros = [("USE_ROCM", "1")]
                    return sources
                """,
            "pkg/csrc/main.cu": '#include "comm/comm.h"\n',
            "pkg/csrc/comm/comm.cu": '#include "comm_impl.h"\n#include <cuda/barrier>\n',
            "pkg/csrc/comm/comm_impl.h": "",
            "pkg/csrc/comm/comm.h": "",
            "pkg/csrc/shared/both.cu": "",
        },
    )
    project = CudaProject.build(root)
    comm = project.view(str(root / "pkg/csrc/comm/comm.cu"))
    assert comm.base.on_rocm is False
    assert comm.base_evidence == "build_tools/ext.py:7: the build compiles it for NVIDIA only"
    assert project.view(str(root / "pkg/csrc/comm/comm_impl.h")).base.on_rocm is False  # only comm.cu includes it
    for built_for_rocm in ("pkg/csrc/main.cu", "pkg/csrc/comm/comm.h", "pkg/csrc/shared/both.cu"):
        assert project.view(str(root / built_for_rocm)).base.on_rocm is not False, built_for_rocm
    assert _codes(root, "pkg/csrc/comm/comm.cu") == []


def test_an_extension_built_only_when_a_rocm_variable_is_unset_is_nvidia_only(tmp_path):
    """`if not ROCM_VERSION and COMPILE_X: extensions.append(CUDAExtension(name, [sources]))`: the conjunction
    decides its body. `if BUILD_CUDA_EXT:` around it tests ROCm inside, so it is a GPU switch, not NVIDIA's."""
    root = write_tree(
        tmp_path,
        {
            "setup.py": """
                import os, torch
                from torch.utils import cpp_extension
                ROCM_VERSION = os.environ.get("ROCM_VERSION", None)
                if BUILD_CUDA_EXT:
                    extensions = [cpp_extension.CUDAExtension("common", ["ext/common/k.cu"])]
                    if not ROCM_VERSION and COMPILE_FAST:
                        extensions.append(cpp_extension.CUDAExtension("fast", sources=["ext/fast/k.cu"]))
                    extensions.append(cpp_extension.CUDAExtension("other", ["ext/other/k.cu"]))
                if torch.cuda.is_available() and not DISABLE:
                    extensions.append(cpp_extension.CUDAExtension("probe", ["ext/probe/k.cu"]))
                """,
            "ext/common/k.cu": "",
            "ext/fast/k.cu": "",
            "ext/other/k.cu": "",
            "ext/probe/k.cu": "",
        },
    )
    project = CudaProject.build(root)
    assert (
        project.view(str(root / "ext/fast/k.cu")).base_evidence == "setup.py:7: the build compiles it for NVIDIA only"
    )
    # torch.cuda answers on ROCm too: `torch.cuda.is_available()` is no vendor test.
    for built_for_rocm in ("ext/common/k.cu", "ext/other/k.cu", "ext/probe/k.cu"):
        assert project.view(str(root / built_for_rocm)).base.on_rocm is not False, built_for_rocm


def test_an_arch_test_conjoined_with_a_project_macro_false_on_rocm_is_the_projects_choice(tmp_path):
    """A shared header defines `FEATURE_AVAILABLE` as 0 for HIP and as a CUDA version test otherwise, and
    `PROJ_DEVICE_CUDA` only for NVIDIA: `#if FEATURE_AVAILABLE && __CUDA_ARCH__ >= 900` is false on ROCm whatever
    `__CUDA_ARCH__` is, by the project's design. A macro known only by its name, or not at all, decides
    nothing: the arch test is still what ROCm trips on."""
    root = write_tree(
        tmp_path,
        {
            "include/gpu.hpp": """
                #if defined(__HIP_PLATFORM_AMD__)
                #define PROJ_DEVICE_HIP
                #define FEATURE_AVAILABLE 0
                #else
                #define PROJ_DEVICE_CUDA
                #define FEATURE_AVAILABLE (CUDART_VERSION >= 12030)
                #endif
                #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
                #define HAS_FAST_PATH 1
                #endif
                """,
            "src/k.cu": """
                #include "../include/gpu.hpp"
                __global__ void a() {
                #if (FEATURE_AVAILABLE) && (__CUDA_ARCH__ >= 900)
                  a();
                #endif
                }
                __global__ void b() {
                #if defined(PROJ_DEVICE_CUDA) && defined(__CUDA_ARCH__)
                  b();
                #endif
                }
                __global__ void c() {
                #if defined(USE_CUDA_GRAPHS) && __CUDA_ARCH__ >= 900
                  c();
                #endif
                }
                __global__ void d() {
                #if defined(SOME_OPTION) && __CUDA_ARCH__ >= 900
                  d();
                #endif
                }
                __global__ void e() {
                #if defined(HAS_FAST_PATH) && __CUDA_ARCH__ >= 900
                  e();
                #endif
                #if defined(CUSPARSE_VERSION) && CUDART_VERSION >= 11000
                  e();
                #endif
                }
                """,
        },
    )
    project = CudaProject.build(root)
    feature = project.learned["FEATURE_AVAILABLE"]
    assert (feature.vendor, feature.evidence.kind, feature.on_rocm.value) == ("nvidia", "header", 0)
    assert str(feature.evidence) == ("include/gpu.hpp:6: defined under a NVIDIA-only condition, as 0 for ROCm (header)")
    assert project.learned["USE_CUDA_GRAPHS"].evidence.kind == "name"
    # NVIDIA-only only because HIP lacks `__CUDA_ARCH__`: the arch test decides ROCm's arm after all.
    assert project.learned["HAS_FAST_PATH"].evidence.compiler_decided
    assert not feature.evidence.compiler_decided and not project.learned["PROJ_DEVICE_CUDA"].evidence.compiler_decided
    # cuSPARSE's version is a library's macro, not the project's choice; arch comparisons are version tests (ROC207).
    assert [(c, line) for c, line in _codes(root, "src/k.cu") if c in ("ROC207", "ROC213")] == [
        ("ROC207", 13),
        ("ROC207", 18),
        ("ROC207", 23),
        ("ROC207", 26),
    ]


def test_code_written_for_rocm_is_gated_by_a_well_known_rocm_macro_not_a_learned_flag(tmp_path):
    """ROC229 leaves a capability test under `#ifdef __HIP_PLATFORM_AMD__` alone (GFX IP read on purpose), but not
    one under a build flag the model learned as ROCm's: a flag learned for the wrong vendor would hide NVIDIA
    checks (`CudaContext.written_for_rocm`)."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  add_compile_definitions(PROJ_FAST_ATTN)\nendif()\n",
            "k.cpp": """
                void pick(const cudaDeviceProp& prop) {
                #ifdef __HIP_PLATFORM_AMD__
                  if (prop.major == 9 && prop.minor >= 4) use_fp8();
                #endif
                #ifdef PROJ_FAST_ATTN
                  if (prop.major == 8) use_ampere();
                #endif
                }
                """,
        },
    )
    assert CudaProject.build(root).learned["PROJ_FAST_ATTN"].vendor == "rocm"
    assert [line for code, line in _codes(root, "k.cpp") if code == "ROC229"] == [6]


def test_a_hipified_extension_compiles_the_non_cuda_arm_of_a_cuda_version_test(tmp_path):
    # hipify renames CUDA_VERSION to TORCH_HIP_VERSION (torch/utils/hipify/cuda_to_hip_mappings.py), which no torch
    # extension build defines (PyTorch's own CMake defines it as major * 100 + minor): `#if CUDA_VERSION >= 9000`
    # is false on ROCm in a hipified build as in a CMake HIP one, so the PTX ROCm compiles is the `#else` arm's.
    files = {
        "setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('ops', ['k.cu'])\n",
        "k.cu": """
            __device__ void store(unsigned* p, unsigned a, unsigned b) {
            #if CUDA_VERSION >= 9000
              asm("st.v2.u32 [%0], {%1, %2};" : : "l"(p), "r"(a), "r"(b));
            #else
              asm("st.v2.u32 [%0], {%1, %2};" : : "l"(p), "r"(b), "r"(a));
            #endif
            }
            """,
    }
    root = write_tree(tmp_path, files)
    assert "CUDA_VERSION" not in CudaProject.build(root).view(str(root / "k.cu")).rocm_build_values
    report = Engine().check_path(root / "k.cu", Settings(root=root))
    assert sorted((d.code, d.location.line) for d in report.diagnostics if d.code in ("ROC203", "ROC207")) == [
        ("ROC203", 5),
        ("ROC207", 2),
    ]


def test_a_rocm_only_device_function_under_an_intrinsic_name_is_the_project_s_remap(tmp_path):
    """llama.cpp's HIP port defined `__dp4a` and `__vsubss4` in a HIP branch of a header: the calls of every file
    including it use the project's own version, not the CUDA intrinsic HIP lacks; one it does not define
    (`__vsubss4`) is still reported."""
    header = (
        "#pragma once\n"
        "#if defined(GGML_USE_HIPBLAS)\n"
        "static __device__ __forceinline__ int __dp4a(const int a, const int b, int c) {\n"
        "  return __builtin_amdgcn_sdot4(a, b, c, false);\n"
        "}\n"
        "#endif\n"
    )
    # Later, a vendor header only ROCm includes, with no `#if` of its own, defines `__vsub4`.
    header += '#if defined(GGML_USE_HIPBLAS)\n#include "vendors/hip.h"\n#endif\n'
    hip = "#pragma once\nstatic __device__ __forceinline__ int __vsub4(const int a, const int b) { return a - b; }\n"
    source = (
        '#include "common.cuh"\n'
        "__device__ int dot(int a, int b) { return __vsubss4(__dp4a(a, b, 0), b); }\n"
        "__device__ int sub(int a, int b) { return __vsub4(a, b); }\n"
    )
    cmake = "project(x LANGUAGES CXX)\nif(GGML_HIPBLAS)\n  add_compile_definitions(GGML_USE_HIPBLAS)\nendif()\n"
    root = write_tree(tmp_path, {"CMakeLists.txt": cmake, "common.cuh": header, "vendors/hip.h": hip, "k.cu": source})
    found = Engine().check_path(root / "k.cu", Settings(root=root, select=("ROC217",))).diagnostics
    assert [(d.location.line, d.message.split(":")[0]) for d in found] == [(2, "`__vsubss4`")]


def test_a_project_s_own_half2_atomic_add_compiled_on_rocm_covers_the_calls_around_it(tmp_path):
    """exllamav2's compat.cuh defines `atomicAdd(half2*, half2)` under `__CUDA_ARCH__ < 600 || USE_ROCM`; its kernel
    header calls atomicAdd on a `half2*` and is included by the .cu that includes compat.cuh: ROCm compiles the
    project's overload there. A kernel whose files define none keeps its diagnostic; an overload only NVIDIA
    compiles covers nothing."""
    compat = (
        "#pragma once\n"
        "#if __CUDA_ARCH__ < 600 || defined(USE_ROCM)\n"
        "__device__ __forceinline__ void atomicAdd(half2* address, half2 val) { atomicAdd_half2(address, val); }\n"
        "#endif\n"
    )
    kernel = "__global__ void acc(half2* c, half2 v) {\n  half2* out = c;\n  atomicAdd(out, v);\n}\n"
    nvidia_only = compat.replace("__CUDA_ARCH__ < 600 || defined(USE_ROCM)", "!defined(USE_ROCM)")
    root = write_tree(
        tmp_path,
        {
            "compat.cuh": compat,
            "nv_compat.cuh": nvidia_only,
            "kernel.cuh": kernel,
            "other.cuh": kernel,
            "gemm.cu": '#include "compat.cuh"\n#include "kernel.cuh"\n',
            "bare.cu": '#include "nv_compat.cuh"\n#include "other.cuh"\n',
        },
    )
    settings = Settings(root=root, select=("ROC243",))
    assert Engine().check_path(root / "kernel.cuh", settings).diagnostics == []
    assert [d.location.line for d in Engine().check_path(root / "other.cuh", settings).diagnostics] == [3]


def test_a_rocm_build_defining_hipblas_v2_takes_cuda_datatypes_in_ex_gemms(tmp_path):
    """hipBLAS's GEMMs take hipDataType with -DHIPBLAS_V2 (PyTorch appends it to HIP_CXX_FLAGS): ROC244 stays
    silent there, and reports the same call in a project whose ROCm build does not define it."""
    gemm = (
        "void hgemm(cublasHandle_t h, int n, const void* a, void* c, const float* s) {\n"
        "  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, s, a, CUDA_R_16F, n, a, CUDA_R_16F, n, s, c,\n"
        "               CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);\n"
        "}\n"
    )
    found = []
    for name, flags in (("v2", "list(APPEND HIP_CXX_FLAGS -DHIPBLAS_V2)\n"), ("v1", "")):
        cmake = f"project(x LANGUAGES CXX)\nif(USE_ROCM)\n  add_compile_definitions(USE_ROCM)\nendif()\n{flags}"
        root = write_tree(tmp_path / name, {"CMakeLists.txt": cmake, "gemm.cu": gemm})
        report = Engine().check_path(root / "gemm.cu", Settings(root=root, select=("ROC244",)))
        found.append([d.location.line for d in report.diagnostics])
    assert found == [[], [2]]


def test_a_torch_extension_s_hipify_maps_the_opt_in_shared_memory_attribute_away(tmp_path):
    """torch's hipify renames `cudaDevAttrMaxSharedMemoryPerBlockOptin` to the non-opt-in limit: ROC246 leaves the
    attribute alone in a torch extension and still reports it in a CMake project, and the property in both."""
    source = (
        "int limit(int device, const cudaDeviceProp& prop) {\n"
        "  int bytes = 0;\n"
        "  cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);\n"
        "  return bytes + prop.sharedMemPerBlockOptin;\n"
        "}\n"
    )
    builds = {
        "torch": (
            "setup.py",
            "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k.cu'])\n",
        ),
        "cmake": ("CMakeLists.txt", "project(x LANGUAGES CXX CUDA)\nadd_library(x k.cu)\n"),
    }
    found = {}
    for name, (build_file, text) in builds.items():
        root = write_tree(tmp_path / name, {build_file: text, "k.cu": source})
        report = Engine().check_path(root / "k.cu", Settings(root=root, select=("ROC246",)))
        found[name] = [d.location.line for d in report.diagnostics]
    assert found == {"torch": [4], "cmake": [3, 4]}


def test_a_package_whose_option_defaults_off_on_hip_is_nvidia_only(tmp_path):
    """An option declared off where the build targets HIP (on elsewhere): the folder it adds, and the GPU sources
    its own CMake file lists under the project's GPU switch (named HIP: HIP on NVIDIA too), are NVIDIA's."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(p LANGUAGES CXX)
                if (GPU_PLATFORM STREQUAL "HIP")
                    enable_language(HIP)
                else()
                    enable_language(CUDA)
                endif()
                if (ENABLE_GPU AND GPU_PLATFORM STREQUAL "HIP")
                    option(BUILD_FLUID "Build the fluid package" off)
                else()
                    option(BUILD_FLUID "Build the fluid package" ${BUILD_CORE})
                endif()
                option(BUILD_SOLID "Build the solid package" off)
                if (BUILD_FLUID)
                    add_subdirectory(fluid)
                endif()
                if (BUILD_SOLID)
                    add_subdirectory(solid)
                endif()
                """,
            "fluid/CMakeLists.txt": """
                set(_sources Fluid.cc)
                if (ENABLE_HIP)
                    list(APPEND _cu_sources FluidGPU.cu)
                endif()
                add_library(fluid ${_sources} ${_cu_sources})
                """,
            "fluid/FluidGPU.cu": '#include "FluidGPU.cuh"\n',
            "fluid/FluidGPU.cuh": "#include <cuda_runtime.h>\n",
            "fluid/Fluid.cc": "",
            "solid/CMakeLists.txt": "if (ENABLE_HIP)\n  list(APPEND _cu_sources SolidGPU.cu)\nendif()\n",
            "solid/SolidGPU.cu": "#include <cuda_runtime.h>\n",
        },
    )
    texts = [(root / name).read_text() for name in ("CMakeLists.txt", "fluid/CMakeLists.txt")]
    assert cmake_switches_off_on_rocm(texts) == {"BUILD_FLUID"}  # BUILD_SOLID is off whatever the platform
    project = CudaProject.build(root)
    for nvidia_only in ("fluid/FluidGPU.cu", "fluid/FluidGPU.cuh", "fluid/Fluid.cc"):
        assert project.view(str(root / nvidia_only)).base.on_rocm is False, nvidia_only
    assert project.view(str(root / "solid/SolidGPU.cu")).base.on_rocm is not False
    assert _codes(root, "fluid/FluidGPU.cuh") == []
    assert ("ROC204", 1) in _codes(root, "solid/SolidGPU.cu")


def test_a_module_globbing_through_a_project_function_under_a_cuda_option(tmp_path):
    """A `.cmake` module, included from the top, globs through the project's wrapper of `file(GLOB)` (paths
    relative to the top folder) under a CUDA switch, or under an option whose block enables only CUDA: more
    specific than a recursive glob of every source at the top."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(p LANGUAGES CXX)
                option(USE_ROCM "ROCm" OFF)
                include(cmake/utils/Utils.cmake)
                include(cmake/modules/Gpu.cmake)
                include(cmake/modules/contrib/paged.cmake)
                my_glob(GLOB_RECURSE GROUP_SOURCE "src/*.cc")
                if(USE_ROCM)
                  my_glob(GLOB ROCM_SRCS src/rocm/*.cc)
                endif()
                """,
            "cmake/utils/Utils.cmake": "macro(my_glob glob variable)\n  file(${glob} ${variable} ${ARGN})\nendmacro()\n",
            "cmake/modules/Gpu.cmake": "if(USE_CUDA)\n  my_glob(GLOB RUNTIME_CUDA_SRCS src/cuda/*.cc)\nendif()\n",
            "cmake/modules/contrib/paged.cmake": """
                if(USE_PAGED)
                  enable_language(CUDA)
                  my_glob(GLOB PAGED_SRC src/contrib/paged/*.cu)
                endif(USE_PAGED)
                """,
            "src/cuda/module.cc": "#include <cuda.h>\n",
            "src/contrib/paged/kernels.cu": "#include <cuda_fp16.h>\n",
            "src/rocm/module.cc": "",
            "src/common/api.cc": "#include <cuda.h>\n",
        },
    )
    assert cmake_glob_functions([(root / "cmake/utils/Utils.cmake").read_text()]) == {"my_glob"}
    project = CudaProject.build(root)
    for nvidia_only in ("src/cuda/module.cc", "src/contrib/paged/kernels.cu"):
        assert project.view(str(root / nvidia_only)).base.on_rocm is False, nvidia_only
    assert project.view(str(root / "src/common/api.cc")).base.on_rocm is not False
    assert _codes(root, "src/cuda/module.cc") == []
    assert ("ROC204", 1) in _codes(root, "src/common/api.cc")


def test_a_hip_platform_macro_the_nvidia_build_defines_itself(tmp_path):
    """A build defining the old NVIDIA platform macro itself, for its HIP-on-NVIDIA build only (a HIP platform
    test inside a block named for HIP): a test of it still works (no ROC215), unless its chain also waits for the
    old ROCm macro, which ROCm 6 no longer defines."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(p LANGUAGES CXX)
                if (ENABLE_HIP)
                    if(${HIP_PLATFORM} STREQUAL "nvcc")
                        set_property(TARGET hip::host APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS __HIP_PLATFORM_NVCC__)
                    elseif(${HIP_PLATFORM} STREQUAL "hip-clang")
                        set_property(TARGET hip::host APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS __HIP_PLATFORM_AMD__)
                    endif()
                endif()
                """,
            "managed.cc": "#if defined(__HIP_PLATFORM_NVCC__)\nint advise = 1;\n#endif\n",
            "math.h": """
                #ifdef __HIP_PLATFORM_NVCC__
                #define RSQRT 1
                #elif defined(__HIP_PLATFORM_HCC__)
                #define RSQRT 2
                #endif
                """,
        },
    )
    facts = cmake_facts(str(root / "CMakeLists.txt"), (root / "CMakeLists.txt").read_text(), str(root))
    assert {(d.name, d.vendor) for d in facts.defines} == {
        ("__HIP_PLATFORM_NVCC__", "nvidia"),
        ("__HIP_PLATFORM_AMD__", "rocm"),
    }
    assert "ROC215" not in {code for code, _ in _codes(root, "managed.cc")}
    assert ("ROC215", 1) in _codes(root, "math.h")


def test_headers_in_a_folder_tree_globbed_for_nvidia_only(tmp_path):
    """A header under a folder whose sources only the NVIDIA build globs (recursively) is NVIDIA's, even when
    its siblings include it in a cycle or shared code includes it under a gate the ROCm build may leave closed;
    one that shared code includes unconditionally is compiled on ROCm."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                file(GLOB_RECURSE SOURCES common/*.cpp)
                if(WITH_ROCM)
                  file(GLOB_RECURSE HIP_SOURCES rocm/*.cpp)
                endif()
                if(WITH_CUDA)
                  file(GLOB_RECURSE CUSOURCES cuda/*.cu)
                endif()
                add_library(lib ${SOURCES} ${HIP_SOURCES} ${CUSOURCES})
                """,
            "common/helper.cpp": '#if CC_GPU\n#include "../cuda/utils.cuh"\n#endif\n#include "../cuda/shared.h"\n',
            "cuda/utils.cuh": "#include <cuda_runtime.h>\n",
            "cuda/shared.h": "#include <cuda_runtime.h>\n",
            "cuda/sub/a.cuh": '#include <cuda_runtime.h>\n#include "b.cuh"\n',
            "cuda/sub/b.cuh": '#include "a.cuh"\n',
            "rocm/kernel.cpp": "",
        },
    )
    project = CudaProject.build(root)
    for nvidia_only in ("cuda/utils.cuh", "cuda/sub/a.cuh", "cuda/sub/b.cuh"):
        view = project.view(str(root / nvidia_only))
        assert view.base.on_rocm is False, nvidia_only
        assert view.base_evidence == "CMakeLists.txt:6: in a folder whose sources the build compiles for NVIDIA only"
    assert project.view(str(root / "cuda/shared.h")).base.on_rocm is not False
    assert _codes(root, "cuda/sub/a.cuh") == []
    assert ("ROC204", 1) in _codes(root, "cuda/shared.h")


def test_a_build_taking_the_platform_macros_from_hipconfig_defines_the_old_rocm_one(tmp_path):
    """`hipconfig --cpp_config` still prints `-D__HIP_PLATFORM_HCC__=` on ROCm: a build passing its output on (or
    writing it into a generated header) defines the old macro, and a test of it is no stale gate (no ROC215)."""
    root = write_tree(
        tmp_path / "built",
        {
            "CMakeLists.txt": "if(WITH_ROCM)\n  include(cmake/hip.cmake)\nendif()\n",
            "cmake/hip.cmake": """
                macro(get_hip_option variable option)
                  execute_process(COMMAND ${HIP_HIPCONFIG_EXECUTABLE} ${option} OUTPUT_VARIABLE ${variable})
                endmacro()
                get_hip_option(HIP_CPP_CONFIG "--cpp_config")
                """,
            "kern.cuh": "#ifndef __HIP_PLATFORM_HCC__\n#error hip prologue missing\n#endif\n",
        },
    )
    facts = cmake_facts(str(root / "cmake/hip.cmake"), (root / "cmake/hip.cmake").read_text(), str(root))
    assert {(d.name, d.vendor) for d in facts.defines} == {
        ("__HIP_PLATFORM_HCC__", "rocm"),
        ("__HIP_PLATFORM_AMD__", "rocm"),
    }
    assert _codes(root, "kern.cuh") == []
    bare = write_tree(tmp_path / "bare", {"kern.cuh": (root / "kern.cuh").read_text()})
    assert ("ROC215", 1) in _codes(bare, "kern.cuh")


def test_directives_inside_a_raw_string_literal_are_text(tmp_path):
    """A raw string literal holding CUDA source a code generator emits: its `#if`s are not the file's, and the
    lines after it keep their numbers."""
    root = write_tree(
        tmp_path,
        {
            "literal.h": """
                static constexpr const char* half_def = u8R"tag(
                #if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 530)
                #define HALF_MATH 1
                #endif
                )tag";
                #if __CUDA_ARCH__ >= 530
                int fast = 1;
                #endif
                """,
        },
    )
    assert [code for code, line in _codes(root, "literal.h") if line < 6] == []
    assert ("ROC207", 6) in _codes(root, "literal.h")


def test_a_variable_set_on_only_for_the_nvidia_platform_is_off_on_rocm(tmp_path):
    """A variable set on only under a HIP platform test for nvcc (`SOLVER_AVAILABLE`): the definition its block
    makes, even inside a block named for HIP, is NVIDIA's, so a header testing it is no ROCm hazard."""
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                include(cmake/Setup.cmake)
                if (ENABLE_HIP)
                    if (SOLVER_AVAILABLE)
                        target_compile_definitions(lib PUBLIC SOLVER_AVAILABLE)
                    endif()
                    target_compile_definitions(lib PUBLIC ENABLE_HIP)
                endif()
                """,
            "cmake/Setup.cmake": """
                if (ENABLE_HIP AND HIP_PLATFORM STREQUAL "nvcc")
                    if (SOLVER_LIBRARY)
                        set(SOLVER_AVAILABLE TRUE)
                    else()
                        set(SOLVER_AVAILABLE FALSE)
                    endif()
                endif()
                """,
            "solver.h": "#ifdef SOLVER_AVAILABLE\n#include <cusolverDn.h>\n#endif\n",
        },
    )
    texts = [(root / name).read_text() for name in ("CMakeLists.txt", "cmake/Setup.cmake")]
    assert cmake_switches_off_on_rocm(texts) == {"SOLVER_AVAILABLE"}
    project = CudaProject.build(root)
    assert {(d.name, d.vendor) for d in project.build_facts.defines} == {
        ("SOLVER_AVAILABLE", "nvidia"),
        ("ENABLE_HIP", "rocm"),
    }
    assert _codes(root, "solver.h") == []


def test_an_include_of_a_project_header_that_brings_in_cutlass_is_where_rocm_stops(tmp_path):
    """xformers' `attention_forward_generic.cu` gets CUTLASS through `autogen/cutlassF.h` -> `kernel_forward.h`: the
    project model follows the includes to the library's header, so ROC206 reports that `#include` (not the file's
    first `cutlass::` use); a ROCm-gated include, or a file including the library itself, is reported as before."""
    kernel = "#pragma once\n#include <cutlass/cutlass.h>\ntemplate <typename T> struct AttentionKernel {};\n"
    generated = '#pragma once\n#include "../kernel_forward.h"\n'
    source = '#include <cmath>\n#include "autogen/cutlassF.h"\nvoid run() { AttentionKernel<cutlass::half_t> k; }\n'
    gated = '#ifndef USE_ROCM\n#include "autogen/cutlassF.h"\n#endif\nint other() { return 0; }\n'
    own = '#include "kernel_forward.h"\n#include <cutlass/numeric_types.h>\nusing T = cutlass::half_t;\n'
    root = write_tree(
        tmp_path,
        {
            "kernel_forward.h": kernel,
            "autogen/cutlassF.h": generated,
            "fwd.cu": source,
            "gated.cu": gated,
            "own.cu": own,
        },
    )

    def reported(name: str) -> list[tuple[int, str]]:
        found = Engine().check_path(root / name, Settings(root=root, select=("ROC206",))).diagnostics
        return [(d.location.line, d.message.split(" ")[0]) for d in found]

    assert reported("fwd.cu") == [(2, "`autogen/cutlassF.h`")]
    assert reported("gated.cu") == []
    assert reported("own.cu") == [(2, "`cutlass/numeric_types.h`")]


def test_a_project_header_bringing_in_cutlass_and_cute_is_one_diagnostic(tmp_path):
    """flash-attention's `utils.h` includes both CuTe and CUTLASS: a file getting them through it is told once."""
    utils = "#pragma once\n#include <cute/tensor.hpp>\n#include <cutlass/array.h>\n"
    root = write_tree(
        tmp_path, {"utils.h": utils, "k.cu": '#include "utils.h"\nvoid f() { cute::Tensor t; cutlass::half_t h; }\n'}
    )
    found = Engine().check_path(root / "k.cu", Settings(root=root, select=("ROC206",))).diagnostics
    assert [(d.location.line, "CuTe and CUTLASS" in d.message) for d in found] == [(1, True)]


def test_definitions_made_only_for_another_accelerator_or_windows_are_no_rocm_builds():
    cmake = textwrap.dedent(
        """
        if(WIN32)
          add_compile_definitions(DEMO_USE_CUDA=1)
        elseif(UNIX)
          add_compile_definitions(ON_UNIX)
        endif()
        if(DEMO_USE_SYCL AND CUDAToolkit_FOUND)
          target_compile_definitions(demo PRIVATE DEMO_HOST_BRIDGE=1)
        elseif(DEMO_USE_MUSA OR DEMO_USE_XPU)
          add_compile_definitions(DEMO_OTHER=1)
        else()
          add_compile_definitions(DEMO_NOT_SYCL)
        endif()
        if(NOT WIN32)
          add_compile_definitions(DEMO_NOT_WINDOWS)
        endif()
        if(DEMO_USE_SYCL OR WITH_GPU)
          add_compile_definitions(DEMO_MAYBE_GPU)
        endif()
        if(DEMO_CPU_USE_AVX2)
          add_compile_definitions(DEMO_AVX2)
        endif()
        """
    )
    found = {d.name for d in cmake_facts("proj/CMakeLists.txt", cmake).defines}
    assert found == {"ON_UNIX", "DEMO_NOT_SYCL", "DEMO_NOT_WINDOWS", "DEMO_MAYBE_GPU", "DEMO_AVX2"}
    setup = textwrap.dedent(
        """
        if CUDA_HOME is not None:
            args = ["-DDEMO_USE_CUDA=ON"]
        elif MUSA_HOME is not None:
            args = ["-DDEMO_USE_MUSA=ON"]
        elif ROCM_HOME is not None:
            args = ["-DDEMO_USE_ROCM=ON"]
        elif BUILD_XPU:
            args = ["-DDEMO_USE_XPU=ON", "-DDEMO_USE_CUDA=OFF"]
        """
    )
    found_setup = {(d.name, d.value, d.vendor) for d in setup_py_facts("setup.py", setup).defines}
    # The `elif` of another accelerator after a CUDA test is no ROCm arm, and defines nothing a ROCm build sees.
    assert found_setup == {("DEMO_USE_CUDA", "ON", "nvidia"), ("DEMO_USE_ROCM", "ON", "rocm")}


def test_a_header_included_under_a_macro_only_another_accelerator_defines_is_not_rocm_code(tmp_path):
    for bridge, reported in (("DEMO_USE_SYCL", False), ("DEMO_BRIDGE", True)):
        root = _bridged_vendor_headers(tmp_path / bridge, bridge)
        # Defined in the build whatever the vendor, the bridge macro leaves ROCm's include undecided.
        assert (("ROC204", 2) in _codes(root, "src/vendors/cuda.h")) == reported


def _bridged_vendor_headers(root: Path, bridge_option: str) -> Path:
    return write_tree(
        root,
        {
            "CMakeLists.txt": f"""
                if(DEMO_USE_CUDA)
                  add_compile_definitions(DEMO_USE_CUDA=1)
                elseif(DEMO_USE_ROCM)
                  add_compile_definitions(DEMO_USE_ROCM=1)
                endif()
                if({bridge_option})
                  target_compile_definitions(demo PRIVATE DEMO_CUDA_HOST_BRIDGE=1)
                endif()
                add_library(demo src/engine.cpp)
                """,
            "src/engine.h": """
                #pragma once
                #if defined(DEMO_USE_CUDA) || defined(DEMO_CUDA_HOST_BRIDGE)
                #include "vendors/cuda.h"
                #elif DEMO_USE_ROCM
                #include "vendors/hip.h"
                #endif
                """,
            "src/vendors/cuda.h": "#pragma once\n#include <cuda_runtime.h>\n",
            "src/vendors/hip.h": "#pragma once\n#include <hip/hip_runtime.h>\n",
            "src/engine.cpp": '#include "engine.h"\nint f() { return 0; }\n',
        },
    )


def test_sources_after_a_keyword_naming_a_vendor_in_a_project_function_are_that_vendors():
    """A project test function parsing its arguments with `cmake_parse_arguments` lists sources; those after a
    keyword naming CUDA are the NVIDIA build's, after one naming HIP the ROCm build's, after others nobody's in
    particular. A source function's own block vendor still comes first."""
    module = """
        function(demo_add_test NAME)
          cmake_parse_arguments(ARG "MPI" "" "CPP_SOURCE_FILES;CUDA_CU_SOURCE_FILES;HIP_CPP_SOURCE_FILES" ${ARGN})
          if(DEMO_GPU_CUDA)
            add_executable(${NAME} ${ARG_CPP_SOURCE_FILES} ${ARG_CUDA_CU_SOURCE_FILES})
          elseif(DEMO_GPU_HIP)
            add_executable(${NAME} ${ARG_CPP_SOURCE_FILES} ${ARG_HIP_CPP_SOURCE_FILES})
          endif()
        endfunction()
        function(demo_add_mpi_test NAME)
          demo_add_test(${NAME} MPI ${ARGN})
        endfunction()
        function(demo_print NAME)
          cmake_parse_arguments(ARG "" "" "FILES" ${ARGN})
          message(STATUS ${ARG_FILES})
        endfunction()
        """
    functions = cmake_source_functions([textwrap.dedent(module)])
    assert functions.names == {"demo_add_test", "demo_add_mpi_test"}
    calls = textwrap.dedent(
        """
        demo_add_mpi_test(t MPI CPP_SOURCE_FILES main.cpp CUDA_CU_SOURCE_FILES put.cu HIP_CPP_SOURCE_FILES put_hip.cpp)
        if(USE_ROCM)
          demo_add_test(u CUDA_CU_SOURCE_FILES hipified.cu)
        endif()
        """
    )
    found = {(s.pattern, s.vendor) for s in cmake_facts("tests/CMakeLists.txt", calls, "", functions).sources}
    assert found == {("main.cpp", None), ("put.cu", "nvidia"), ("put_hip.cpp", "rocm"), ("hipified.cu", "rocm")}


def test_headers_a_test_listed_for_nvidia_only_includes_are_not_rocm_code(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(demo LANGUAGES CXX CUDA HIP)\ninclude(cmake/Tests.cmake)\nadd_subdirectory(tests)\n",
            "cmake/Tests.cmake": """
                function(demo_add_test NAME)
                  cmake_parse_arguments(ARG "" "" "CPP_SOURCE_FILES;CUDA_CU_SOURCE_FILES" ${ARGN})
                  add_executable(${NAME} ${ARG_CPP_SOURCE_FILES} ${ARG_CUDA_CU_SOURCE_FILES})
                endfunction()
                """,
            "tests/CMakeLists.txt": "demo_add_test(t CPP_SOURCE_FILES main.cpp CUDA_CU_SOURCE_FILES put.cu)\n",
            "tests/main.cpp": "int main() { return 0; }\n",
            "tests/put.cu": '#include "arch.cuh"\n__global__ void k() {}\n',
            "tests/arch.cuh": "#pragma once\n#ifdef __CUDA_ARCH__\n#define ON_DEVICE 1\n#endif\n",
        },
    )
    assert _codes(root, "tests/arch.cuh") == []
    assert ("ROC213", 2) in _codes(root, "tests/arch.cuh", project_model=False)


def test_a_compat_header_defining_cuda_arch_for_hip_covers_its_includers(tmp_path):
    """A header remapping `__CUDA_ARCH__` to HIP's device-pass macro under `__HIPCC__` (and not nvcc's
    `__CUDACC__`, which a chain testing `__HIPCC__` means) makes its includers' device-pass tests work on ROCm."""
    for remapped in (True, False):
        root = write_tree(
            tmp_path / str(remapped),
            {
                "CMakeLists.txt": "project(demo LANGUAGES CXX HIP CUDA)\nadd_library(demo src/reduce.cu)\n",
                "include/half.hpp": """
                    #pragma once
                    #if defined(__HIPCC__) && !defined(__CUDACC__)
                    #define __CUDA_ARCH__ __HIP_DEVICE_COMPILE__
                    #include <hip/hip_fp16.h>
                    #endif
                    """
                if remapped
                else "#pragma once\n",
                "include/dtype.h": '#pragma once\n#include "half.hpp"\n',
                "src/reduce.cu": """
                    #include "../include/dtype.h"
                    __host__ __device__ inline float lowest() {
                    #if defined(__CUDA_ARCH__)
                      return -1e30f;
                    #else
                      return -3.4e38f;
                    #endif
                    }
                    """,
            },
        )
        assert (("ROC213", 3) in _codes(root, "src/reduce.cu")) is not remapped


def test_a_switch_the_build_sets_per_source_and_vendor_decides_the_headers_arms(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": """
                project(demo LANGUAGES CXX)
                if(USE_CUDA AND USE_NCCL)
                  set_source_files_properties(src/comm.cc PROPERTIES COMPILE_DEFINITIONS "XYZ_NCCL_RCCL_SWITCH=0")
                  add_library(nccl_objs OBJECT src/comm.cc)
                endif()
                if(USE_ROCM AND USE_RCCL)
                  set_source_files_properties(src/comm.cc PROPERTIES COMPILE_DEFINITIONS "XYZ_NCCL_RCCL_SWITCH=1;X=2" LANGUAGE CXX)
                  add_library(rccl_objs OBJECT src/comm.cc)
                endif()
                """,
            "src/comm.h": """
                #pragma once
                #ifndef XYZ_NCCL_RCCL_SWITCH
                #define XYZ_NCCL_RCCL_SWITCH 0
                #endif
                #if XYZ_NCCL_RCCL_SWITCH == 0
                #include <nccl.h>
                #else
                #include <rccl/rccl.h>
                #endif
                """,
            "src/comm.cc": '#include "comm.h"\nint f() { return 0; }\n',
        },
    )
    facts = CudaProject.build(root).build_facts
    assert {(d.name, d.value, d.vendor) for d in facts.defines} == {
        ("XYZ_NCCL_RCCL_SWITCH", "0", "nvidia"),
        ("XYZ_NCCL_RCCL_SWITCH", "1", "rocm"),
        ("X", "2", "rocm"),
    }
    assert _codes(root, "src/comm.h") == []


def test_arguments_a_vendor_selector_drops_on_rocm_are_not_compiled_there(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(XYZ_GPU_BACKEND STREQUAL HIP)\n  add_definitions(-DXYZ_USE_HIP)\nendif()\n",
            # An upper-case `.H` header, read as a header like `.h`.
            "include/Xyz_GpuControl.H": """
                #pragma once
                #if defined(XYZ_USE_HIP)
                #define XYZ_HIP_OR_CUDA(h, c) h
                #elif defined(XYZ_USE_CUDA)
                #define XYZ_HIP_OR_CUDA(h, c) c
                #else
                #define XYZ_HIP_OR_CUDA(h, c) ((void)0);
                #endif
                """,
            # Included through a `-I` folder the model cannot follow: the selector is the project's all the same.
            "src/reduce.cu": """
                #include <Xyz_GpuControl.H>
                __device__ float down(float x, int offset) {
                  return XYZ_HIP_OR_CUDA(__shfl_down(x, offset), __shfl_down_sync(0xffffffff, x, offset));
                }
                __device__ unsigned votes(bool p) {
                  return XYZ_HIP_OR_CUDA(__ballot_sync(0xffffffff, p), __ballot(p));
                }
                """,
        },
    )
    project = CudaProject.build(root)
    assert project.view(str(root / "src/reduce.cu")).selectors["XYZ_HIP_OR_CUDA"] == (
        "include/Xyz_GpuControl.H:3",
        2,
        {1},
    )
    # The CUDA argument (line 3) is NVIDIA's alone; the HIP argument (line 6) is what ROCm compiles.
    assert [line for code, line in _codes(root, "src/reduce.cu") if code == "ROC210"] == [6]


def test_another_accelerators_macro_tested_before_a_rocm_macro_is_undefined_on_rocm_everywhere(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "if(XYZ_GPU_BACKEND STREQUAL HIP)\n  add_definitions(-DXYZ_USE_HIP)\nendif()\n",
            "src/scan.h": """
                #pragma once
                #if defined(XYZ_USE_SYCL)
                #include <sycl/sycl.hpp>
                #elif defined(XYZ_USE_HIP)
                #include <hip/hip_runtime.h>
                #endif
                """,
            # No ROCm arm here: only the project's other chain tells how a ROCm build defines it.
            "src/lanes.cu": """
                #include "scan.h"
                #ifdef XYZ_USE_SYCL
                __device__ unsigned lane_bit(int lane) { return 0x1u << lane; }
                #endif
                __device__ unsigned low_bit(int lane) { return 0x1u << lane; }
                """,
        },
    )
    learned = CudaProject.build(root).learned["XYZ_USE_SYCL"]
    assert (learned.vendor, learned.on_rocm.defined, learned.on_nvidia.defined) == ("other", False, None)
    assert str(learned.evidence) == "src/scan.h:2: an #if chain tests it before the ROCm macro XYZ_USE_HIP (arms)"
    assert [line for code, line in _codes(root, "src/lanes.cu") if code == "ROC211"] == [5]


# --- Python extension modules built for one vendor --------------------------------------------------------------
def test_cmake_extension_modules_keep_the_vendor_of_their_block():
    text = textwrap.dedent(
        """
        pybind11_add_module(common_ops src/common.cpp)
        if(GPU_BACKEND STREQUAL "ROCM")
          message(STATUS "fp4 kernels: disabled")
        else()
          Python_add_library(fp4_ops MODULE WITH_SOABI fp4/api.cu)
          add_library(fp4_quant MODULE fp4/quant.cu)
          add_library(fp4_static STATIC fp4/static.cu)
        endif()
        nanobind_add_module(${NAME}_ext src/x.cpp)
        """
    )
    facts = cmake_facts("CMakeLists.txt", text)
    assert [(m.name, m.vendor) for m in facts.native_modules] == [
        ("common_ops", None),
        ("fp4_ops", "nvidia"),
        ("fp4_quant", "nvidia"),
    ], "a static library is no module, a computed name is not known"
    assert nvidia_only_native_modules(facts) == {"fp4_ops": "CMakeLists.txt:6", "fp4_quant": "CMakeLists.txt:7"}


def test_setup_py_extension_modules_keep_the_vendor_of_their_arm():
    text = textwrap.dedent(
        """
        import torch
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension
        ext_modules = [CUDAExtension("pkg._C", ["csrc/ops.cu"])]
        if torch.version.hip is None:
            ext_modules.append(CUDAExtension(name="pkg._flash_C", sources=["csrc/flash.cu"]))
            ext_modules.append(CUDAExtension(name="pkg._both_C", sources=["csrc/both.cu"]))
        else:
            ext_modules.append(CUDAExtension(name="pkg._both_C", sources=["csrc/both_hip.cu"]))
        setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
        """
    )
    facts = setup_py_facts("setup.py", text)
    assert {(m.name, m.vendor) for m in facts.native_modules} == {
        ("pkg._C", None),
        ("pkg._flash_C", "nvidia"),
        ("pkg._both_C", "nvidia"),
        ("pkg._both_C", "rocm"),
    }
    assert nvidia_only_native_modules(facts) == {"pkg._flash_C": "setup.py:6"}, "built for ROCm too: not NVIDIA's"


def test_the_source_folders_of_extension_modules_built_for_nvidia_only():
    text = textwrap.dedent(
        """
        pybind11_add_module(common_ops src/common.cpp)
        if(USE_ROCM)
          message(STATUS "fp4 kernels: not built for ROCm")
        else()
          Python_add_library(fp4_ops MODULE WITH_SOABI fp4/blackwell/api.cu fp4/blackwell/gemm.cu)
          add_library(fp4_quant MODULE fp4/quant/quant.cu ${EXTRA_SOURCES})
          add_library(beside MODULE beside.cu)
          add_library(shared MODULE src/shared.cu)
        endif()
        """
    )
    facts = cmake_facts("proj/CMakeLists.txt", text)
    assert [m.source_folders for m in facts.native_modules] == [
        ("proj/src",),
        ("proj/fp4/blackwell",),
        ("proj/fp4/quant",),
        ("proj",),
        ("proj/src",),
    ]
    assert nvidia_only_native_folders(facts) == {
        "proj/fp4/blackwell": "proj/CMakeLists.txt:6",
        "proj/fp4/quant": "proj/CMakeLists.txt:7",
    }, "not the build file's own folder, nor one another extension module builds from"


def test_the_source_folders_of_setup_py_extensions_follow_their_source_lists():
    text = textwrap.dedent(
        """
        import glob
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        flash_sources = glob.glob("csrc/flash/*.cu")
        if torch.version.hip is None:
            ext_modules = [CUDAExtension("pkg._flash_C", sources=flash_sources + ["csrc/flash/api.cpp"])]
        """
    )
    facts = setup_py_facts("proj/setup.py", text)
    assert [m.source_folders for m in facts.native_modules] == [("proj/csrc/flash",)]
    assert nvidia_only_native_folders(facts) == {"proj/csrc/flash": "proj/setup.py:7"}


def test_a_setup_py_test_of_the_build_target_decides_its_body_only():
    text = textwrap.dedent(
        """
        import os
        def get_target_device():
            return os.getenv("PKG_TARGET_DEVICE", "cuda")
        if get_target_device() == "cuda" and not os.getenv("DISABLE_ENGINE"):
            ext_modules = [CMakeExtension(name="_engine")]
            extra = ["-DENGINE_TARGET=1"]
        else:
            ext_modules = [CMakeExtension(name="_other")]
            extra = ["-DOTHER_TARGET=1"]
        if x.device.type == "cuda":
            ext_modules.append(CMakeExtension(name="_device"))
        """
    )
    facts = setup_py_facts("setup.py", text)
    assert [(m.name, m.vendor) for m in facts.native_modules] == [
        ("_engine", "nvidia"),
        ("_other", None),
        ("_device", None),
    ], "the other targets are other accelerators' too; a torch device is 'cuda' on ROCm"
    assert {(d.name, d.vendor) for d in facts.defines} == {("ENGINE_TARGET", "nvidia"), ("OTHER_TARGET", None)}


@pytest.mark.parametrize(
    ("folder", "text", "nvidia_only"),
    [
        pytest.param("comm", 'CUDAExtension("comm._C", ["c.cu"], extra_link_args=["-lcuda", "-lcudart"])', True),
        pytest.param(".", 'CUDAExtension("comm._C", ["c.cu"], extra_link_args=["-lcuda"])', False, id="root-setup"),
        pytest.param("comm", 'CUDAExtension("comm._C", ["c.cu"], extra_link_args=["-lrt"])', False, id="host-lib"),
        pytest.param(
            "comm",
            'CUDAExtension("comm._C", ["c.cu"], extra_link_args=[] if IS_HIP_EXTENSION else ["-lcuda"])',
            False,
            id="names-hip",
        ),
    ],
)
def test_a_nested_setup_py_linking_an_nvidia_library_builds_for_nvidia_only(
    tmp_path: Path, folder: str, text: str, nvidia_only: bool
) -> None:
    """Its own setup.py below the checked root, linking a library only NVIDIA installs (`-lcuda`), naming no ROCm:
    its extension cannot be built on ROCm, like a nested CMake project only nvcc builds."""
    path = tmp_path / folder / "setup.py"
    facts = setup_py_facts(
        str(path), f"from torch.utils.cpp_extension import CUDAExtension\next = {text}\n", str(tmp_path)
    )
    (module,) = facts.native_modules
    assert (module.vendor, module.nested_project) == (("nvidia", True) if nvidia_only else (None, False))


def test_a_tree_checked_from_the_folder_holding_others_learns_nothing_from_their_builds(tmp_path):
    """Another tree's build file defines FAST_PATH_OFF for ROCm: that says nothing of this tree's macro of the same
    name, so the ballot stays reported when the check runs from the folder holding both trees."""
    kernel = """
        #ifndef FAST_PATH_OFF
        __device__ unsigned votes(int x) { return __ballot_sync(0xffffffff, x); }
        #endif
        """
    write_tree(tmp_path / "a", {"setup.py": "", "k.cu": kernel})
    write_tree(tmp_path / "b", {"CMakeLists.txt": "if(HIP_FOUND)\n  add_definitions(-DFAST_PATH_OFF)\nendif()\n"})
    report = Engine().check_path(tmp_path / "a/k.cu", Settings(root=tmp_path))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC201", 2), ("ROC210", 2)]


def test_a_header_too_large_for_the_model_is_still_checked_without_a_crash(tmp_path):
    """The model reads no file over 2 MB (a generated single-header library), but the file is still checked: asking
    the model about a header it never read must not crash the front end (ROC900)."""
    big = "// " + "x" * 100 + "\n"
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "include_directories(Headers)\nadd_library(k k.cu)\n",
            "k.cu": "#include <big.h>\n",
            "Headers/big.h": big * 21_000 + "__device__ unsigned f(int x) { return __ballot_sync(0xffffffff, x); }\n",
        },
    )
    assert _codes(root, "Headers/big.h") == [("ROC201", 21_001), ("ROC210", 21_001)]


def test_a_cuda_library_call_beside_the_projects_own_hip_spelling_macros_is_unported(tmp_path):
    # The project ports by its own macros (a header spelling `gpuFree` as `hipFree` under the `USE_HIP` its HIP
    # makefile defines): ROCm compiles the sources as written, so a cuFFT call the macros do not cover breaks there.
    files = {
        "src/makefile.hip": "CFLAGS = -O3 --offload-arch=gfx90a -DUSE_HIP\nall:\n\thipcc $(CFLAGS) main.cu pppm.cu\n",
        "src/gpu_macro.cuh": """
            #pragma once
            #ifdef USE_HIP
            #include <hip/hip_runtime.h>
            #define gpuFree hipFree
            #else
            #define gpuFree cudaFree
            #endif
            """,
        "src/pppm.cu": """
            #include "gpu_macro.cuh"
            #include <cufft.h>
            void destroy(cufftHandle plan, void* mesh) {
              gpuFree(mesh);
              cufftDestroy(plan);
            }
            """,
        "src/main.cu": "int main() { return 0; }\n",
    }
    root = write_tree(tmp_path / "macros", files)
    view = CudaProject.build(root).view(str(root / "src/pppm.cu"))
    assert view.rocm_spelling(frozenset({"hipFree"})) == "src/gpu_macro.cuh:4"
    assert ("ROC247", 5) in _codes(root, "src/pppm.cu")
    # Without the header's HIP spellings nothing says how the project ports: ROC216's checklist, off by default.
    files["src/gpu_macro.cuh"] = "#pragma once\n#define gpuFree cudaFree\n"
    plain = write_tree(tmp_path / "plain", files)
    assert "ROC247" not in {code for code, _ in _codes(plain, "src/pppm.cu")}


def test_a_cuda_library_type_a_header_keeps_beside_the_projects_own_hip_spelling_macros_is_unported(tmp_path):
    # The calls go through the project's `gpufft*` macros, but the class header still declares the plan with
    # cuFFT's type (a real port renamed it `gpufftHandle` later); the ROCm build compiles the header as written.
    files = {
        "src/makefile.hip": "CFLAGS = -O3 --offload-arch=gfx90a -DUSE_HIP\nall:\n\thipcc $(CFLAGS) main.cu pppm.cu\n",
        "src/gpu_macro.cuh": """
            #pragma once
            #ifdef USE_HIP
            #include <hip/hip_runtime.h>
            #include <hipfft/hipfft.h>
            #define gpuFree hipFree
            #define gpufftDestroy hipfftDestroy
            #define gpufftComplex hipfftComplex
            #else
            #include <cufft.h>
            #define gpuFree cudaFree
            #define gpufftDestroy cufftDestroy
            #define gpufftComplex cufftComplex
            #endif
            """,
        "src/pppm.cuh": """
            #pragma once
            #include "gpu_macro.cuh"
            template <typename T> struct GPU_Vector { T* data; };
            class PPPM {
            public:
              ~PPPM() { gpufftDestroy(plan); }
              GPU_Vector<gpufftComplex> mesh;
              cufftHandle plan;
            };
            """,
        "src/pppm.cu": '#include "pppm.cuh"\n',
        "src/main.cu": "int main() { return 0; }\n",
    }
    root = write_tree(tmp_path / "macros", files)
    assert _codes(root, "src/pppm.cuh") == [("ROC247", 8)]
    # Once the header names it through the project's macro, nothing is left for ROCm to miss.
    files["src/pppm.cuh"] = files["src/pppm.cuh"].replace("cufftHandle plan", "gpufftHandle plan")
    ported = write_tree(tmp_path / "ported", files)
    assert "ROC247" not in {code for code, _ in _codes(ported, "src/pppm.cuh")}


def test_a_cuda_name_torchs_hipify_misses_is_reported_only_where_torchs_hipify_renames_the_source(tmp_path):
    # A torch CUDAExtension hipifies its sources on ROCm by torch's table, which lacks the CUDA-graph kernel-node
    # names: the ROCm build sees them undeclared.
    source = """
        void set(cudaGraphExec_t exec, cudaGraphNode_t node, cudaKernelNodeParams* params) {
          cudaGraphExecKernelNodeSetParams(exec, node, params);
        }
        """
    extension = {
        "setup.py": """
            from setuptools import setup
            from torch.utils.cpp_extension import BuildExtension, CUDAExtension
            setup(name="ext", ext_modules=[CUDAExtension("ext", ["csrc/graph.cu"])], cmdclass={"build_ext": BuildExtension})
            """,
        "csrc/graph.cu": source,
    }
    root = write_tree(tmp_path / "extension", extension)
    assert [code for code, _ in _codes(root, "csrc/graph.cu")].count("ROC245") == 2
    # A build running hipify-perl over its CUDA folder renames by HIPIFY's own table, which maps these names.
    tool = {
        "CMakeLists.txt": """
            project(xyz LANGUAGES CXX)
            if(XYZ_USE_HIP)
              execute_process(COMMAND hipify-perl -inplace ${CMAKE_SOURCE_DIR}/csrc/graph.cu)
              enable_language(HIP)
              add_library(xyz csrc/graph.cu)
              set_source_files_properties(csrc/graph.cu PROPERTIES LANGUAGE HIP)
            else()
              enable_language(CUDA)
              add_library(xyz csrc/graph.cu)
            endif()
            """,
        "csrc/graph.cu": source,
    }
    built = write_tree(tmp_path / "tool", tool)
    view = CudaProject.build(built).view(str(built / "csrc/graph.cu"))
    assert view.hipified and view.hipify_tool
    assert "ROC245" not in {code for code, _ in _codes(built, "csrc/graph.cu")}


def test_a_cuda_name_torchs_hipify_misses_is_left_to_torchs_own_tree(tmp_path):
    # A source including torch's headers is an extension's, which torch's hipify renames by its table...
    source = "#include <c10/cuda/CUDAStream.h>\nbool idle(cudaStreamCaptureStatus s) { return s == cudaStreamCaptureStatusNone; }\n"
    root = write_tree(tmp_path / "extension", {"csrc/capture.cu": source})
    assert ("ROC245", 2) in _codes(root, "csrc/capture.cu")
    # ...but where those headers are files of the checked tree, it is torch itself, which its own build hipifies with
    # the tree's table and rules.
    root = write_tree(tmp_path / "torch", {"c10/cuda/capture.h": source, "c10/cuda/CUDAStream.h": "#pragma once\n"})
    assert "ROC245" not in {code for code, _ in _codes(root, "c10/cuda/capture.h")}
