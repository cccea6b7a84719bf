"""The C++ project model (rocmlint/cuda/project.py, build_files.py): evidence read from real files in a tree."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cuda.build_files import (
    cmake_facts,
    cmake_source_functions,
    makefile_facts,
    setup_py_facts,
    vendor_of_words,
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


# --- words and build files ----------------------------------------------------------------------------------------


def test_vendor_words_name_one_side_and_no_other_accelerator():
    assert vendor_of_words("GGML_USE_HIPBLAS") == "rocm"
    assert vendor_of_words("XYZ_USE_HIP") == "rocm"
    assert vendor_of_words("USE_AMD_GPU") == "rocm"
    assert vendor_of_words("USE_CUDA") == "nvidia"
    assert vendor_of_words("torch_version_hip") == "rocm"
    assert vendor_of_words("GGML_USE_MUSA") is None  # another accelerator
    assert vendor_of_words("CUDA_OR_HIP") is None  # both sides
    assert vendor_of_words("CHIP_COUNT") is None  # HIP only inside a word
    assert vendor_of_words("ENABLE_FAST_PATH") is None


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
    assert project_root(repo / "src/deep/k.cu", repo / "src") == repo / "src"
    assert project_root(repo / "src/deep/k.cu", tmp_path / "elsewhere") == repo
    loose = write_tree(tmp_path / "loose", {"setup.py": "", "csrc/k.cu": ""})
    assert project_root(loose / "csrc/k.cu", tmp_path / "elsewhere") == loose


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
    assert cmake_source_functions([text]) == {"add_to_property", "add_lib_sources", "add_gpu_sources"}


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
    view = CudaProject.build(ported).view(str(ported / "lib/cuda/alloc.cpp"))
    assert (view.base.on_rocm, view.base_evidence) == (
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
