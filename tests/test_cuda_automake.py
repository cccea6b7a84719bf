"""Sources only the CUDA build compiles, as the build files decide them: automake conditionals (`if
WITH_NVIDIA_GPU` in a `Makefile.am`, configure's `AM_CONDITIONAL`, an arm linking CUDA's libraries), automake's
`EXTRA_DIST`, a `Makefile.am` wholly in one vendor's arms, make pattern rules only nvcc runs, a nested nvcc-only CMake
project, per-vendor twin projects side by side, CMake's quoted parentheses and `NOTFOUND` comparisons, HIP's CMake
package, configured switches copying a package's found flag (rocmlint/cuda/automake.py, rocmlint/cuda/build_files.py,
rocmlint/cuda/project.py)."""

from __future__ import annotations

from rocmlint.cuda.automake import automake_conditional_vendors
from rocmlint.cuda.build_files import (
    _globs_may_meet,
    cmake_cuda_only_options,
    cmake_dependent_cuda_options,
    cmake_facts,
    makefile_facts,
    vendor_of_words,
)
from rocmlint.cuda.project import project_root
from tests.test_cuda_project import _codes, write_tree

_CUDA_SOURCE = "#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n"
_HIP_SOURCE = "#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSynchronize(); }\n"


def _vendors(path: str, text: str, conditionals: dict[str, str] | None = None) -> dict[str, str | None]:
    return {s.pattern: s.vendor for s in makefile_facts(path, text, "/r", automake_conditionals=conditionals).sources}


def test_automake_conditionals_pick_each_vendors_sources():
    text = (
        "lib_LTLIBRARIES = libx.la\nlibx_la_SOURCES = src/common.c\n"
        "if WITH_NVIDIA_GPU_VERSION\nlibx_la_SOURCES += src/GPU/CUDA/k.cu\nelse\nlibx_la_SOURCES += src/cpu.c\nendif\n"
        "if !WITH_AMD_GPU_VERSION\nlibx_la_SOURCES += src/not_amd.c\nendif\n"
        "if GPU_A\nlibx_la_SOURCES += src/a.cu\nendif\n"
        "if GPU_B\nlibx_la_SOURCES += src/GPU/ROCm/k.hip\nendif\n"
    )
    conditionals = {"GPU_B": "rocm"}
    vendors = _vendors("/r/Makefile.am", text, conditionals)
    assert vendors["src/common.c"] is None
    assert vendors["src/GPU/CUDA/k.cu"] == "nvidia"
    assert vendors["src/cpu.c"] == "rocm"  # the `else` of an NVIDIA conditional
    assert vendors["src/not_amd.c"] == "nvidia"
    assert vendors["src/a.cu"] is None  # a conditional naming no vendor
    assert vendors["src/GPU/ROCm/k.hip"] == "rocm"  # configure's AM_CONDITIONAL tests a ROCm switch
    # make reads `if` as no conditional of its own: a plain Makefile's lines are no automake blocks.
    assert _vendors("/r/Makefile", text)["src/GPU/CUDA/k.cu"] is None


def test_an_automake_arm_linking_only_cudas_libraries_is_nvidias():
    text = (
        "if TL_X_ENABLED\nlibx_la_SOURCES = x.c\nlibx_la_CPPFLAGS = $(BASE_CPPFLAGS) $(CUDA_CPPFLAGS)\n"
        "libx_la_LIBADD = $(CUDA_LIBS) $(X_LIBADD)\nendif\n"
        "if TL_Y_ENABLED\nliby_la_SOURCES = y.c\nliby_la_LIBADD = $(CUDA_LIBS) $(ROCM_LIBS)\nendif\n"
        "if HAVE_TESTS\nt_SOURCES = t.c\nif TL_Z\nt_SOURCES += z.c\nt_LIBADD = $(CUDA_LIBS)\nendif\nendif\n"
    )
    vendors = _vendors("/r/src/Makefile.am", text)
    assert vendors["x.c"] == "nvidia"
    assert vendors["y.c"] is None  # it links both vendors' libraries
    assert vendors["t.c"] is None  # only an inner arm reads CUDA's: the outer one is no vendor's
    assert vendors["z.c"] == "nvidia"


def test_configure_am_conditionals_test_a_vendors_switch():
    configure = (
        'AM_CONDITIONAL([GPU_A], [test "x$enable_nvidia_gpu" = "xyes"])\n'
        'AM_CONDITIONAL([GPU_B], [test "x$have_hip" != xno])\n'
        'AM_CONDITIONAL([NO_GPU], [test "x$enable_nvidia_gpu" = xno])\n'
        "AM_CONDITIONAL([DOCS], [true])\n"
    )
    assert automake_conditional_vendors([configure], vendor_of_words) == {"GPU_A": "nvidia", "GPU_B": "rocm"}


def test_extra_dist_files_are_never_compiled():
    text = "x_SOURCES = a.c\nEXTRA_DIST = shipped/hh.cu \\\n  templates/t.cu\n"
    facts = makefile_facts("/r/Makefile.am", text, "/r")
    unbuilt = {s.pattern: s.unbuilt for s in facts.sources}
    assert unbuilt["a.c"] == ""
    assert unbuilt["shipped/hh.cu"] == unbuilt["templates/t.cu"] == "automake's EXTRA_DIST only ships it"


_AUTOMAKE_TREE = {
    "configure.ac": 'AM_CONDITIONAL([WITH_NVIDIA_GPU_VERSION], [test "x$use_nvidia" = xyes])\n',
    "Makefile.am": (
        "lib_LTLIBRARIES = libx.la\nlibx_la_SOURCES = src/common.c\n"
        "if WITH_NVIDIA_GPU_VERSION\nlibx_la_SOURCES += src/GPU/CUDA/k.cu\nendif\n"
        "if WITH_AMD_GPU_VERSION\nlibx_la_SOURCES += src/GPU/ROCm/k.hip\nendif\n"
        "EXTRA_DIST = src/GPU/CUDA/k_template.cu shipped/hh.cu src/GPU/both_template.cu\n"
    ),
    "src/common.c": '#include "GPU/both_template.cu"\n',
    "src/GPU/both_template.cu": _CUDA_SOURCE,
    "src/GPU/CUDA/k.cu": '#include "k_template.cu"\n' + _CUDA_SOURCE,
    "src/GPU/CUDA/k_template.cu": _CUDA_SOURCE,
    "src/GPU/ROCm/k.hip": _HIP_SOURCE,
    "shipped/hh.cu": _CUDA_SOURCE,
}


def test_automake_sources_of_the_nvidia_conditional_are_not_rocms(tmp_path):
    root = write_tree(tmp_path / "proj", _AUTOMAKE_TREE)
    assert _codes(root, "src/GPU/CUDA/k.cu") == []
    assert _codes(root, "src/GPU/CUDA/k_template.cu") == []  # shipped, and included only by an NVIDIA source
    assert _codes(root, "shipped/hh.cu") == []  # shipped only, never compiled
    # A shipped template a source every build compiles includes is compiled on ROCm too.
    assert _codes(root, "src/GPU/both_template.cu") != []


def test_without_a_rocm_conditional_the_nvidia_sources_are_code_to_port(tmp_path):
    tree = {**_AUTOMAKE_TREE, "Makefile.am": _AUTOMAKE_TREE["Makefile.am"].replace("WITH_AMD_GPU_VERSION", "GPU2")}
    root = write_tree(tmp_path / "proj", tree)
    assert _codes(root, "src/GPU/CUDA/k.cu") != []


def test_configure_ac_marks_an_autoconf_projects_root(tmp_path):
    root = write_tree(tmp_path / "proj", {"configure.ac": "", "tools/hh/CMakeLists.txt": "", "tools/hh/k.cu": ""})
    assert project_root(root / "tools/hh/k.cu", root, configured=False) == root


def test_a_cuda_project_folder_beside_its_rocm_twin_is_rooted_with_it(tmp_path):
    files = {
        "bench-cuda/CMakeLists.txt": "project(bench LANGUAGES CXX CUDA)\nadd_executable(bench main-cuda.cpp k.cu)\n",
        "bench-cuda/main-cuda.cpp": _CUDA_SOURCE,
        "bench-cuda/k.cu": _CUDA_SOURCE,
        "bench-hip/CMakeLists.txt": "project(bench LANGUAGES CXX HIP)\nadd_executable(bench main-hip.cpp k.hip)\n",
        "bench-hip/main-hip.cpp": _HIP_SOURCE,
        "bench-hip/k.hip": _HIP_SOURCE,
    }
    top = write_tree(tmp_path / "top", files)
    assert project_root(top / "bench-cuda/k.cu", top, configured=False) == top
    assert _codes(top, "bench-cuda/k.cu") == []
    assert _codes(top, "bench-cuda/main-cuda.cpp") == []
    # Alone, the CUDA project is the one to port.
    alone = write_tree(tmp_path / "alone", {p: t for p, t in files.items() if p.startswith("bench-cuda")})
    assert project_root(alone / "bench-cuda/k.cu", alone, configured=False) == alone / "bench-cuda"
    assert _codes(alone / "bench-cuda", "k.cu") != []


def test_cmake_quoted_parentheses_and_notfound_comparisons():
    text = (
        'set(GPU_AMD "gfx90a" CACHE STRING "the AMD GPU (ROCm and SYCL")\n'
        'if (NOT CMAKE_CUDA_COMPILER STREQUAL "NOTFOUND")\n'
        "  target_sources(t PRIVATE src/cuda/k.cu)\n  target_compile_definitions(t PUBLIC WITH_CUDA_REF)\nendif()\n"
        'if (CMAKE_CUDA_COMPILER STREQUAL "CMAKE_CUDA_COMPILER-NOTFOUND")\n  target_sources(t PRIVATE src/cpu.cpp)\n'
        "endif()\n"
    )
    facts = cmake_facts("/r/CMakeLists.txt", text, "/r")
    vendors = {s.pattern: s.vendor for s in facts.sources}
    assert vendors == {"src/cuda/k.cu": "nvidia", "src/cpu.cpp": "rocm"}
    assert [(d.name, d.vendor) for d in facts.defines] == [("WITH_CUDA_REF", "nvidia")]


def test_a_project_functions_compile_definitions_keyword_defines_in_its_arm():
    text = (
        "if(BUILD_NVECTOR_CUDA)\n  xyz_add_library(fused_cuda\n    SOURCES fused.cpp\n"
        "    COMPILE_DEFINITIONS PRIVATE USE_CUDA\n    LINK_LIBRARIES PUBLIC core)\nendif()\n"
        "if(BUILD_NVECTOR_HIP)\n  xyz_add_library(fused_hip SOURCES fused.cpp COMPILE_DEFINITIONS PRIVATE USE_HIP)\n"
        "endif()\n"
    )
    facts = cmake_facts("/r/src/CMakeLists.txt", text, "/r")
    assert [(d.name, d.vendor) for d in facts.defines] == [("USE_CUDA", "nvidia"), ("USE_HIP", "rocm")]


def test_an_option_depending_on_a_cuda_switch_is_nvidias():
    options = (
        'xyz_option(BUILD_SOLVER_X BOOL "needs CUDA" ON\n  DEPENDS_ON ENABLE_CUDA BUILD_OTHER\n  ADVANCED)\n'
        'xyz_option(BUILD_SOLVER_Y BOOL "needs MPI" ON DEPENDS_ON ENABLE_MPI)\n'
    )
    assert cmake_dependent_cuda_options([options]) == frozenset({"BUILD_SOLVER_X"})


def test_a_matched_plain_vendor_word_names_the_arms_vendor():
    text = (
        "foreach(backend ${BACKENDS})\n"
        '  if(backend MATCHES "CUDA")\n    set(_defines USE_CUDA)\n  elseif(backend MATCHES "HIP")\n'
        '    set(_defines USE_HIP)\n  elseif(out MATCHES ".*CUDA.*")\n    set(_defines USE_OTHER)\n  endif()\n'
        "  xyz_add_benchmark(b SOURCES b.cpp COMPILE_DEFINITIONS ${_defines})\nendforeach()\n"
    )
    facts = cmake_facts("/r/CMakeLists.txt", text, "/r")
    assert {d.name: d.vendor for d in facts.defines} == {"USE_CUDA": "nvidia", "USE_HIP": "rocm", "USE_OTHER": None}


def test_a_nested_project_declaring_the_cuda_language_names_nvidia_sources():
    text = "project(hh LANGUAGES Fortran CUDA)\nadd_executable(hh src/k.cu src/main.f90)\n"
    facts = cmake_facts("/r/shipped/hh/CMakeLists.txt", text, "/r")
    assert {(s.pattern, s.vendor, s.standalone) for s in facts.sources} == {("src/k.cu", "nvidia", True)}
    # A project of C++ whose CUDA module an option adds: only that module's sources are NVIDIA's.
    optional = "project(ex LANGUAGES CXX)\nadd_library(cpu src/cpu.cc)\nif(EX_CUDA)\n  enable_language(CUDA)\nendif()\n"
    facts = cmake_facts("/r/examples/ex/CMakeLists.txt", optional, "/r")
    assert {(s.pattern, s.vendor) for s in facts.sources} == {("src/cpu.cc", None)}


_WHOLE_FILE_TREE = {
    "configure.ac": "AM_CONDITIONAL([HAVE_CUDA], [test x$cuda_happy != xno])\n",
    "Makefile.am": "SUBDIRS = src/cuda src/rocm src/common\n",
    # Every statement of the module's Makefile.am sits in `if HAVE_CUDA`: what the folder holds is built, and its
    # headers installed, only where configure found CUDA.
    "src/cuda/Makefile.am": "if HAVE_CUDA\nSUBDIRS = . ipc\nlib_LTLIBRARIES = libx_cuda.la\n"
    "libx_cuda_la_SOURCES = cuda_md.c\nnobase_dist_libx_cuda_la_HEADERS = ipc/ipc.cuh\nendif\n",
    "src/cuda/cuda_md.c": "int f(void) { return 0; }\n",
    "src/cuda/ipc/ipc.cuh": "#include <cuda_runtime.h>\n__device__ void g() { __syncwarp(); }\n",
    "src/rocm/Makefile.am": "if HAVE_ROCM\nlib_LTLIBRARIES = libx_rocm.la\nlibx_rocm_la_SOURCES = rocm_md.c\nendif\n",
    "src/rocm/rocm_md.c": "int f(void) { return 0; }\n",
    # A statement outside the conditional (headers the folder ships whatever the vendor): no vendor's folder.
    "src/common/Makefile.am": "noinst_HEADERS = dev.cuh\nif HAVE_CUDA\nlibc_la_SOURCES = c.c\nendif\n",
    "src/common/dev.cuh": "#include <cuda_runtime.h>\n__device__ void g() { __syncwarp(); }\n",
}


def test_a_makefile_am_wholly_in_one_vendors_conditional_makes_its_folder_that_vendors(tmp_path):
    facts = makefile_facts(
        "/r/src/cuda/Makefile.am", _WHOLE_FILE_TREE["src/cuda/Makefile.am"], "/r", automake_conditionals={}
    )
    assert [(s.pattern, s.vendor, s.line) for s in facts.sources if s.pattern == "**"] == [("**", "nvidia", 2)]
    common = makefile_facts("/r/src/common/Makefile.am", _WHOLE_FILE_TREE["src/common/Makefile.am"], "/r")
    assert not [s for s in common.sources if s.pattern == "**"]
    root = write_tree(tmp_path / "proj", _WHOLE_FILE_TREE)
    assert _codes(root, "src/cuda/ipc/ipc.cuh") == []
    assert _codes(root, "src/common/dev.cuh") != []


_BACKEND_VALUE_CMAKE = """
project(fft LANGUAGES CXX)
set(XYZ_BACKEND 0 CACHE STRING "0 - Vulkan, 1 - CUDA, 2 - HIP")
if(${XYZ_BACKEND} EQUAL 1)
  option(build_vendor_bench "Build the vendor FFT benchmark" ON)
else()
  option(build_vendor_bench "Build the vendor FFT benchmark" OFF)
endif()
add_executable(fft main.cpp)
if(${XYZ_BACKEND} EQUAL 2)
  find_package(hip)
  target_link_libraries(fft PUBLIC hip::host)
endif()
if(build_vendor_bench)
  find_package(CUDA 9.0 REQUIRED)
  enable_language(CUDA)
  add_library(bench STATIC bench/cufft_bench.cu)
endif()
"""


def test_an_option_enabling_cuda_in_a_project_building_rocm_through_hips_package_is_nvidias(tmp_path):
    # The ROCm build finds HIP's package (`find_package(hip)`, `hip::host`) instead of enabling CMake's HIP language:
    # the benchmark option's block enables CUDA alone, so its sources are NVIDIA's.
    files = {
        "CMakeLists.txt": _BACKEND_VALUE_CMAKE,
        "main.cpp": "int main() { return 0; }\n",
        "bench/cufft_bench.cu": "#include <cufft.h>\n#include <cuda_runtime.h>\nint b() { return 0; }\n",
    }
    root = write_tree(tmp_path / "with_hip", files)
    assert cmake_cuda_only_options([_BACKEND_VALUE_CMAKE]) == {"build_vendor_bench"}
    assert _codes(root, "bench/cufft_bench.cu") == []
    # Without any ROCm build the benchmark is code to port.
    no_hip = _BACKEND_VALUE_CMAKE.replace("find_package(hip)", "").replace("hip::host", "fft_vendor")
    root = write_tree(tmp_path / "no_hip", {**files, "CMakeLists.txt": no_hip})
    assert cmake_cuda_only_options([no_hip]) == set()
    assert _codes(root, "bench/cufft_bench.cu") != []


_PATTERN_RULES_MAKEFILE = """
CUDA_FILES := $(wildcard *cuda_test.cu)
VENDORLIB_FILES := $(wildcard *vendorlib_test.cu)
APPS = $(shell find . -maxdepth 1 -name "*vendorlib.cu")
%cuda_test.x: %cuda_test.cu
\t$(NVCC) -o ./$@ $< $(NVCCFLAGS)
%vendorlib_test.x: %vendorlib_test.cu | gtest
\t$(NVCC) -o ./$@ $< $(NVCCFLAGS) $(VENDORLIBFLAGS)
%vendorlib.x: %vendorlib.cu
\t$(NVCC) -o ./$@ $< $(NVCCFLAGS) $(VENDORLIBFLAGS)
%hip_test.x: %cuda_test.cu
\t$(HIPCC) -o ./$@ $< $(HIPCCFLAGS)
"""


def test_sources_only_nvcc_pattern_rules_compile_are_nvidias(tmp_path):
    # `%vendorlib_test.x: %vendorlib_test.cu` runs nvcc alone: the tests its wildcard lists (and the files a
    # `$(shell find ...)` lists for `%vendorlib.x`) are NVIDIA's; `*cuda_test.cu` is compiled by nvcc and by hipcc
    # (`%hip_test.x: %cuda_test.cu`), whatever the vendor.
    vendors = _vendors("/r/tests/Makefile", _PATTERN_RULES_MAKEFILE)
    assert vendors["*vendorlib_test.cu"] == "nvidia"
    assert vendors["*vendorlib.cu"] == "nvidia"
    assert vendors["*cuda_test.cu"] is None
    root = write_tree(
        tmp_path / "proj",
        {
            "CMakeLists.txt": "project(x LANGUAGES CXX HIP)\nadd_library(x x.hip)\n",
            "x.hip": _HIP_SOURCE,
            "tests/Makefile": _PATTERN_RULES_MAKEFILE,
            "tests/k_vendorlib_test.cu": '#include "../lib/vendorlib_sim.h"\n',
            "tests/k_vendorlib.cu": '#include "../lib/vendorlib_sim.h"\n',
            "tests/k_cuda_test.cu": _CUDA_SOURCE,
            "lib/vendorlib_sim.h": "#include <cublas_v2.h>\n",
        },
    )
    assert _codes(root, "tests/k_vendorlib_test.cu") == []
    assert _codes(root, "lib/vendorlib_sim.h") == []  # included only by those tests
    assert _codes(root, "tests/k_cuda_test.cu") != []


def test_a_configured_switch_copying_a_package_found_only_in_the_cuda_arm_is_nvidias(tmp_path):
    # `set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})` in the CUDA arm: `#cmakedefine XYZ_HAS_CUTENSOR` defines it in the
    # NVIDIA build only, and `if(XYZ_HAS_CUTENSOR)` blocks are NVIDIA's.
    cmake = (
        "project(x LANGUAGES CXX)\nif(XYZ_HAS_ROCM)\n  enable_language(HIP)\nendif()\n"
        "if(XYZ_HAS_CUDA)\n  enable_language(CUDA)\n  find_package(cuTENSOR)\n"
        "  set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})\nendif()\n"
        "set(XYZ_HAS_MPI ${MPI_FOUND})\n"
        "add_library(x main.cpp)\nif(XYZ_HAS_CUTENSOR)\n  add_executable(t tensor_test.cpp)\nendif()\n"
    )
    facts = cmake_facts("/r/CMakeLists.txt", cmake, "/r", configured=frozenset({"XYZ_HAS_CUTENSOR", "XYZ_HAS_MPI"}))
    assert [(d.name, d.vendor) for d in facts.defines] == [("XYZ_HAS_CUTENSOR", "nvidia")]  # not the unvendored copy
    root = write_tree(
        tmp_path / "proj",
        {
            "CMakeLists.txt": cmake,
            "config.h.in": "#cmakedefine XYZ_HAS_CUTENSOR\n",
            "main.cpp": '#include "config.h"\n#ifdef XYZ_HAS_CUTENSOR\n#include "tensor_support.hpp"\n#endif\n',
            "tensor_test.cpp": '#include "tensor_support.hpp"\n',
            "tensor_support.hpp": "#include <cuda_runtime.h>\n#include <cutensor.h>\n",
        },
    )
    assert _codes(root, "tensor_support.hpp") == []


def test_make_globs_meet_when_a_path_may_match_both():
    assert _globs_may_meet("*vendorlib_test.cu", "*_test.cu")  # every vendorlib test is a test
    assert not _globs_may_meet("*vendorlib_test.cu", "*cuda_test.cu")
    assert _globs_may_meet("k_cuda_test.cu", "*cuda_test.cu")
    assert not _globs_may_meet("k.cc", "*.cu")
    assert not _globs_may_meet("k.cu", "j.cu")
    assert _globs_may_meet("src/*/k*.cu", "lib/*.cu")  # several wildcards: assumed to meet
