"""A macro the program's own run-time kernel compile command defines in one vendor's arm only (`"--define-macro=
XYZ_TARGET_CUDA_ARCH=" + cc` where the program runs nvcc, `"...ROCM_ARCH="` where it runs hipcc) splits the kernel
headers' arms by vendor (rocmlint/cuda/learning.py `_learn_from_compile_options`)."""

from __future__ import annotations

from pathlib import Path

from rocmlint.cuda.file_facts import read_facts
from rocmlint.cuda.preprocessor import VendorMacros
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

_CMAKE = """
    cmake_minimum_required(VERSION 3.21)
    if(XYZ_USE_CUDA)
        project(xyz LANGUAGES CXX CUDA)
    else()
        project(xyz LANGUAGES CXX HIP)
    endif()
    add_library(xyz compile.cpp)
    if(XYZ_USE_CUDA)
        target_compile_definitions(xyz PUBLIC XYZ_CUDA)
    endif()
    if(XYZ_USE_ROCM)
        target_compile_definitions(xyz PUBLIC XYZ_ROCM)
    endif()
    """
# The program compiling its kernels at run time, one command per vendor.
_COMPILE = """
    #include <string>
    #include <vector>
    std::vector<std::string> compile_args(const std::string &cc) {
        std::vector<std::string> args;
    #if defined(XYZ_CUDA)
        args.emplace_back("/usr/local/cuda/bin/nvcc");
        args.emplace_back("--define-macro=XYZ_TARGET_CUDA_ARCH=" + cc);
    #elif defined(XYZ_ROCM)
        args.emplace_back("hipcc");
        args.emplace_back("--define-macro=XYZ_TARGET_ROCM_ARCH=" + cc);
    #endif
        return args;
    }
    """
# A kernel header only those commands compile; its arms name no vendor's API.
_KERNEL = """
    struct Arch {
    #if defined(XYZ_TARGET_CUDA_ARCH)
        static const int ThreadsPerWarp = 32;
    #elif defined(XYZ_TARGET_ROCM_ARCH)
        static const int ThreadsPerWarp = 64;
    #endif
    };
    """


def test_string_literals_record_the_macros_compiler_options_define():
    text = 'auto a = "-DXYZ_FAST";\nauto b = "--define-macro=XYZ_ARCH=" + cc;\nauto c = "-D XYZ_N=4";\n'
    facts = read_facts("/x/a.cpp", text, VendorMacros())
    assert [(d.name, d.value, d.line) for d in facts.option_defines] == [
        ("XYZ_FAST", "1", 1),
        ("XYZ_ARCH", None, 2),
        ("XYZ_N", "4", 3),
    ]


def test_a_macro_one_vendors_kernel_compile_command_defines_is_that_vendors(tmp_path: Path):
    root = write_tree(tmp_path, {"CMakeLists.txt": _CMAKE, "compile.cpp": _COMPILE, "kernels/arch.h": _KERNEL})
    learned = CudaProject.build(root).learned
    assert (learned["XYZ_TARGET_CUDA_ARCH"].vendor, learned["XYZ_TARGET_CUDA_ARCH"].evidence.kind) == (
        "nvidia",
        "build",
    )
    assert learned["XYZ_TARGET_ROCM_ARCH"].vendor == "rocm"
    assert _codes(root, "kernels/arch.h") == []


def test_a_command_outside_vendor_arms_decides_nothing(tmp_path: Path):
    ungated = _COMPILE.replace("#if defined(XYZ_CUDA)", "#if 1").replace("#elif defined(XYZ_ROCM)", "#endif\n#if 1")
    root = write_tree(tmp_path, {"CMakeLists.txt": _CMAKE, "compile.cpp": ungated, "kernels/arch.h": _KERNEL})
    assert {"XYZ_TARGET_CUDA_ARCH", "XYZ_TARGET_ROCM_ARCH"}.isdisjoint(CudaProject.build(root).learned)
    assert _codes(root, "kernels/arch.h") == [("ROC208", 3)]
