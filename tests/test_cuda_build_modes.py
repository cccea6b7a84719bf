"""How a project builds for ROCm, read from its build files: the configure header a Makefile or CMake writes per
vendor, a Makefile rule hipifying a folder, torch's JIT `load()` (rocmlint/cuda/build_files.py, project.py)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.cuda.build_files import jit_extension_facts, makefile_facts, may_build_jit_extension
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine

_CONFIGURING_MAKEFILE = """
ifeq ($(BACKEND),cuda)
    $(CONFIG): include/config.h.in
\t\tcp $< $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_CUDA/#define XYZ_HAVE_CUDA/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_HIP/#undef XYZ_HAVE_HIP/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_ARCH "@XYZ_ARCH@"/#define XYZ_ARCH "$(ARCH)"/g' $@
else
    $(CONFIG): include/config.h.in
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_CUDA/#undef XYZ_HAVE_CUDA/g' $@
\t\tsed -i -e 's/#cmakedefine XYZ_HAVE_HIP/#define XYZ_HAVE_HIP/g' $@
endif
INSTALL_FLAGS := $(filter-out -DXYZ_NOAFFINITY -DXYZ_HAVE_CUDA -DXYZ_HAVE_HIP -fPIC, $(CFLAGS))
CFLAGS += -DXYZ_LOGGING
"""


def test_a_makefile_writing_the_configure_header_per_backend_defines_its_macros():
    facts = makefile_facts("Makefile", textwrap.dedent(_CONFIGURING_MAKEFILE).lstrip("\n"))
    assert [(d.name, d.value, d.vendor, d.line) for d in facts.defines] == [
        ("XYZ_HAVE_CUDA", None, "nvidia", 4),  # sed's `#cmakedefine X` -> `#define X`, in the `cuda` arm
        ("XYZ_ARCH", '"$(ARCH)"', "nvidia", 6),
        ("XYZ_HAVE_HIP", None, "rocm", 10),  # the `else` arm: ROCm's; the `#undef` rewrites define nothing
        # `$(filter-out -DX ...)` patterns define nothing; a plain flag does.
        ("XYZ_LOGGING", None, None, 13),
    ]


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


_CONFIGURED_SOURCE = """
#include "xyz_config.h"
__global__ void k(float* out, float v) {
#if CUDA_VERSION >= 9000 || defined(XYZ_BACKEND_B)
    out[threadIdx.x] = v;
#endif
}
"""


_CONFIGURING_CMAKE = """
if (XYZ_ENABLE_CUDA)
    enable_language(CUDA)
    set(XYZ_HAVE_CUDA "1")
endif()
if (XYZ_ENABLE_HIP)
    set(XYZ_BACKEND_B "1")
    set(XYZ_UNUSED OFF)
endif()
configure_file(include/xyz_config.h.in include/xyz_config.h)
add_library(xyz src/k.cu)
"""


def test_a_cmake_variable_a_configure_header_cmakedefines_is_the_macro_of_the_block_setting_it(tmp_path):
    template = "#cmakedefine XYZ_HAVE_CUDA\n#cmakedefine XYZ_BACKEND_B\n#cmakedefine XYZ_UNUSED\n"
    files = {"CMakeLists.txt": _CONFIGURING_CMAKE, "src/k.cu": _CONFIGURED_SOURCE}
    root = write_tree(tmp_path / "configured", {**files, "include/xyz_config.h.in": template})
    project = CudaProject.build(root)
    # XYZ_BACKEND_B's name says no vendor: the block setting it does.
    assert project.learned["XYZ_BACKEND_B"].vendor == "rocm"
    assert project.learned["XYZ_BACKEND_B"].evidence.kind == "build"
    assert project.learned["XYZ_HAVE_CUDA"].vendor == "nvidia"
    assert "XYZ_UNUSED" not in project.learned  # set false: the header leaves it undefined
    # ROCm compiles the body under `|| defined(XYZ_BACKEND_B)`: no hazard. Without the template the variables are
    # no macros: the CUDA_VERSION test skips the body on ROCm.
    assert _codes(root, "src/k.cu") == []
    assert _codes(write_tree(tmp_path / "plain", files), "src/k.cu") == [("ROC207", 3)]
    # The package-config template the install writes copies the configured values (`@XYZ_HAVE_CUDA@`): it
    # defines nothing, for any vendor.
    config = "set(XYZ_HAVE_CUDA @XYZ_HAVE_CUDA@)\nset(XYZ_BACKEND_B @XYZ_BACKEND_B@)\n"
    with_config = {**files, "include/xyz_config.h.in": template, "cmake/XyzConfig.cmake": config}
    project = CudaProject.build(write_tree(tmp_path / "packaged", with_config))
    assert (project.learned["XYZ_BACKEND_B"].vendor, project.learned["XYZ_HAVE_CUDA"].vendor) == ("rocm", "nvidia")


def test_a_cmakedefine01_variable_set_true_in_a_vendor_block_is_that_vendors_macro(tmp_path):
    # `#cmakedefine01 XYZ_BACKEND_B`: 1 where the HIP block sets it, 0 elsewhere, so `#if !XYZ_BACKEND_B` is NVIDIA's.
    template = "#cmakedefine01 XYZ_HAVE_CUDA\n#cmakedefine01 XYZ_BACKEND_B\n"
    source = "#include <xyz_config.h>\n#if !XYZ_BACKEND_B\n#include <cuda.h>\n#endif\n"
    files = {"CMakeLists.txt": _CONFIGURING_CMAKE, "src/probe.cpp": source}
    root = write_tree(tmp_path / "configured", {**files, "include/xyz_config.h.in": template})
    project = CudaProject.build(root)
    assert project.learned["XYZ_HAVE_CUDA"].vendor == "nvidia"
    assert project.learned["XYZ_BACKEND_B"].vendor == "rocm"
    assert _codes(root, "src/probe.cpp") == []
    assert _codes(write_tree(tmp_path / "plain", files), "src/probe.cpp") == [("ROC204", 3)]


def test_a_cmakedefine01_set_per_hip_compiler_is_that_platforms_macro(tmp_path):
    # `CMAKE_HIP_COMPILER_ID STREQUAL "NVIDIA"` is HIP compiled by nvcc: its arm's variable is NVIDIA's, the `else` ROCm's,
    # in a HIP module whose own name says ROCm.
    cmake = """
        enable_language(HIP)
        set(XYZ_PLATFORM_A 0)
        set(XYZ_PLATFORM_B 0)
        if(CMAKE_HIP_COMPILER_ID STREQUAL "NVIDIA")
            set(XYZ_PLATFORM_A 1)
        else()
            set(XYZ_PLATFORM_B 1)
        endif()
        """
    files = {"CMakeLists.txt": "include(cmake/hip.cmake)\n", "cmake/hip.cmake": cmake, "src/k.hip": "int k;\n"}
    template = "#cmakedefine01 XYZ_PLATFORM_A\n#cmakedefine01 XYZ_PLATFORM_B\n"
    project = CudaProject.build(write_tree(tmp_path, {**files, "include/config.hpp.in": template}))
    assert project.learned["XYZ_PLATFORM_A"].vendor == "nvidia"
    assert project.learned["XYZ_PLATFORM_B"].vendor == "rocm"


_STAND_IN = """
#include <xyz_config.h>
#if !XYZ_BACKEND_B
#include <cuda.h>
#else
namespace xyz {
typedef enum { CUDA_SUCCESS = 0, CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_INVALID_PC } CUresult;
}
#endif
"""
_ERROR_NAMES = """
#include "stand_in.h"
namespace xyz {
const char* error_name(CUresult e) {
  switch (e) {
    case CUDA_ERROR_NOT_PERMITTED: return "not permitted";
    default: return "unknown";
  }
}
}
"""


def test_enumerators_a_rocm_only_branch_defines_are_the_projects_remaps(tmp_path):
    # The stand-in enum of a build without CUDA: on ROCm the names in `error_name` are its enumerators.
    template = "#cmakedefine01 XYZ_BACKEND_B\n"
    files = {"CMakeLists.txt": _CONFIGURING_CMAKE, "src/stand_in.h": _STAND_IN, "src/errors.cpp": _ERROR_NAMES}
    root = write_tree(tmp_path / "configured", {**files, "include/xyz_config.h.in": template})
    assert _codes(root, "src/errors.cpp") == []
    assert ("ROC217", 5) in _codes(write_tree(tmp_path / "plain", files), "src/errors.cpp")


_HIPIFYING_MAKEFILE = """
# generated: hipifies the CUDA folders into *_hip folders
HIPIFY ?= tools/hipify-perl

kernels_hip/%.hip.cpp: kernels/%.cu
\t@mkdir -p $(dir $@)
\t$(HIPIFY) $< > $@

host_hip/%.cpp: host/%.cpp
\tcp $< $@
"""


def test_a_makefile_run_with_f_hipifying_a_folder_makes_only_that_folder_hipified(tmp_path):
    include = "#include <cuda_runtime.h>\nvoid f();\n"
    root = write_tree(
        tmp_path,
        {
            "Makefile": "ifeq ($(BACKEND),hip)\n    tmp := $(shell $(MAKE) -j4 -f make.gen.hip 1>&2)\nendif\n",
            "make.gen.hip": _HIPIFYING_MAKEFILE,
            "kernels/k.cu": include,
            "host/h.cpp": include,  # copied, not hipified
            "control/c.cpp": include,  # compiled as written
        },
    )
    project = CudaProject.build(root)
    assert [os.path.relpath(f, root) for f, _ in project.build_facts.hipify_folders] == ["kernels"]
    assert str(root / "make.gen.hip") in project.build_facts.files
    assert project.view(str(root / "kernels/k.cu")).hipified.endswith("make.gen.hip:6: hipifies kernels/ for ROCm")
    assert project.view(str(root / "control/c.cpp")).hipified == ""
    found = {
        name: [(d.code, d.severity.value) for d in Engine().check_path(root / name, Settings(root=root)).diagnostics]
        for name in ("control/c.cpp", "host/h.cpp", "kernels/k.cu")
    }
    assert found == {
        "control/c.cpp": [("ROC204", "warning")],
        "host/h.cpp": [("ROC204", "warning")],
        # hipify renames it for the BACKEND=hip build, which compiles it (no HIP twin): left out
        "kernels/k.cu": [],
    }


_STATIC_RULES_MAKEFILE = """
HIPCCFLAGS += -DXYZ_HIP
cuda_src := $(wildcard src/cuda/*.cu)
cuda_hdr := $(wildcard src/cuda/*.cuh)
hip_src := $(patsubst src/cuda/%.cu,src/hip/%.hip.cc,$(cuda_src))
hip_hdr := $(patsubst src/cuda/%.cuh,src/hip/%.hip.hh,$(cuda_hdr))
host_src := $(patsubst src/cuda/%.cu,host/%.cc,$(cuda_src))

$(hip_src): src/hip/%.hip.cc: src/cuda/%.cu.md5 | src/hip
$(hip_hdr): src/hip/%.hip.hh: src/cuda/%.cuh.md5 | src/hip
$(host_src): host/%.cc: src/cuda/%.cu

$(hip_src) $(hip_hdr):
\t$(hipify) $(basename $<) > $@

$(host_src) other:
\tcp $< $@
"""


def test_static_pattern_rules_whose_recipe_runs_hipify_make_their_source_folder_hipified(tmp_path):
    # make runs the recipe of `$(hip_src) $(hip_hdr):` for the targets its static pattern rules made from
    # `src/cuda/`: that folder is hipified, and the HIP copies the project committed from it are hipify's, not a
    # hand-written twin, so an include hipify swaps is left out in the folder as in any other it rewrites. A rule
    # naming a target no static pattern rule made (`other`) hipifies nothing.
    facts = makefile_facts("GNUmakefile", _STATIC_RULES_MAKEFILE)
    assert facts.hipify_folders == (("src/cuda", "GNUmakefile:14: hipifies src/cuda/ for ROCm"),)
    header = "#pragma once\n#include <cuComplex.h>\n"
    root = write_tree(
        tmp_path,
        {
            "GNUmakefile": _STATIC_RULES_MAKEFILE,
            "src/cuda/util.cuh": header,
            "src/cuda/k.cu": '#include "util.cuh"\n__global__ void k() {}\n',
            "src/hip/util.hip.hh": "#pragma once\n#include <hip/hip_complex.h>\n",
            "src/hip/k.hip.cc": '#include "util.hip.hh"\n__global__ void k() {}\n',
        },
    )
    project = CudaProject.build(root)
    assert project.view(str(root / "src/cuda/util.cuh")).hipified.endswith("hipifies src/cuda/ for ROCm")
    assert [d.code for d in Engine().check_path(root / "src/cuda/util.cuh", Settings(root=root)).diagnostics] == []


_JIT_MODULE = """
import os
import torch
from torch.utils.cpp_extension import load, load_inline

here = os.path.dirname(os.path.abspath(__file__))
ext = load(
    name="ext",
    sources=[os.path.join(here, "ext/ext.cpp"), os.path.join(here, "ext/kernels/k.cu")],
    extra_cuda_cflags=["-lineinfo"] + (["-DEXT_ROCM_TUNED"] if torch.version.hip else []),
)
inline = load_inline(name="inline", cpp_sources="int f();", cuda_sources="__global__ void k() {}")
"""


def test_torch_jit_load_hipifies_the_folder_of_the_sources_it_names(tmp_path):
    include = "#include <cuda_runtime.h>\nvoid f();\n"
    root = write_tree(
        tmp_path,
        {
            "cuda_ext.py": _JIT_MODULE,
            "ext/ext.cpp": include,
            "ext/kernels/k.cu": include,
            "ext/util.cuh": include,  # a header beside the sources: hipified with them
            "bench/b.cu": include,  # no load() names it
        },
    )
    project = CudaProject.build(root)
    assert [(os.path.relpath(f, root), why.rpartition(": ")[2]) for f, why in project.build_facts.hipify_folders] == [
        ("ext", "builds a torch extension with cpp_extension.load (hipified on ROCm)")
    ]
    assert [(d.name, d.vendor) for d in project.build_facts.defines] == [("EXT_ROCM_TUNED", "rocm")]
    severities = {
        name: [(d.code, d.severity.value) for d in Engine().check_path(root / name, Settings(root=root)).diagnostics]
        for name in ("ext/util.cuh", "ext/kernels/k.cu", "bench/b.cu")
    }
    # The hipified folder's renames are left out: the loader's ROCm arm is the ROCm build, which compiles what hipify
    # makes of every file there (none has a HIP twin); the file no load() names stays a warning.
    assert severities == {"ext/util.cuh": [], "ext/kernels/k.cu": [], "bench/b.cu": [("ROC204", "warning")]}


def test_a_module_naming_cpp_extension_without_calling_a_loader_builds_nothing():
    text = "from torch.utils import cpp_extension\nsources = ['k.cu']\ncpp_extension.CUDA_HOME\n"
    assert jit_extension_facts("m.py", text, exists=lambda _: True).hipify_folders == ()
    called = "from torch.utils import cpp_extension as ce\nce.load(name='x', sources=['k.cu'])\n"
    assert [f for f, _ in jit_extension_facts("m.py", called, exists=lambda _: True).hipify_folders] == [""]
    assert jit_extension_facts("m.py", called, exists=lambda _: False).hipify_folders == ()  # names no file
    shadowed = "def load(name, sources):\n    pass\nload(name='x', sources=['k.cu'])  # cpp_extension\n"
    assert jit_extension_facts("m.py", shadowed, exists=lambda _: True).hipify_folders == ()  # not torch's
    aliased = "import torch.utils.cpp_extension as ce\nce.load(name='x', sources=['ext/k.cu'])\n"
    assert [f for f, _ in jit_extension_facts("m.py", aliased, exists=lambda _: True).hipify_folders] == ["ext"]


def test_only_a_module_calling_a_loader_with_an_existing_source_beside_it_is_parsed():
    called = b"from torch.utils.cpp_extension import load\next = load('x', sources=['ext/k.cu'])\n"
    assert may_build_jit_extension("pkg/m.py", called, exists=lambda path: path == "pkg/ext/k.cu")
    assert not may_build_jit_extension("pkg/m.py", called, exists=lambda _: False)  # names no file there
    assert not may_build_jit_extension("pkg/m.py", called.replace(b"load(", b"build("), exists=lambda _: True)
    assert not may_build_jit_extension("pkg/m.py", called.replace(b"cpp_extension", b"other"), exists=lambda _: True)
    assert not may_build_jit_extension("pkg/m.py", called.replace(b"k.cu", b"k.cuh"), exists=lambda _: True)


_JIT_BUILD_PARAMETERS = """
import glob
import os
import torch
import torch.utils.cpp_extension as jit

PATH = os.path.dirname(os.path.abspath(__file__))


def get_build_parameters():
    sources = list(glob.glob(os.path.join(PATH, "csrc/*.cu"))) + [os.path.join(PATH, "ext.cpp")]
    flags = []
    if torch.version.hip:
        flags += ["-DUSE_ROCM"]
    return sources, flags


def build():
    params = get_build_parameters()
    return jit.load(name="ext", sources=params[0], extra_cflags=params[1])
"""


def test_a_jit_load_whose_sources_are_built_before_it_hipifies_the_folders_its_module_lists(tmp_path):
    """`jit.load(sources=params.sources)`: the call writes no source, the module's source lists name them (a glob
    names its folder), and its `if torch.version.hip:` arm is the project's ROCm build."""
    include = "#include <cuda_runtime.h>\nvoid f();\n"
    root = write_tree(
        tmp_path,
        {
            "pkg/build.py": _JIT_BUILD_PARAMETERS,
            "pkg/ext.cpp": include,
            "pkg/csrc/k.cu": include,
            "bench/b.cu": include,
        },
    )
    project = CudaProject.build(root)
    assert [os.path.relpath(f, root) for f, _ in project.build_facts.hipify_folders] == ["pkg"]
    assert project.rocm_build_path.startswith("pkg/build.py:13: the ROCm arm of `if torch.version.hip:`")
    # The call's sources written in it decide alone: the module's lists are not read.
    written = _JIT_BUILD_PARAMETERS.replace("sources=params[0]", "sources=['ext.cpp']")
    facts = jit_extension_facts("pkg/build.py", written, exists=lambda path: path == "pkg/ext.cpp")
    assert [folder for folder, _ in facts.hipify_folders] == ["pkg"]


def test_a_quoted_glob_of_sources_whose_folder_exists_may_build_a_jit_extension():
    called = b"import glob\nfrom torch.utils.cpp_extension import load\nload('x', glob.glob('csrc/*.cu'))\n"
    assert may_build_jit_extension("pkg/m.py", called, exists=lambda _: False, is_folder=lambda p: p == "pkg/csrc")
    assert not may_build_jit_extension("pkg/m.py", called, exists=lambda _: False, is_folder=lambda _: False)
    facts = jit_extension_facts(
        "pkg/m.py", called.decode(), exists=lambda _: False, is_folder=lambda p: p == "pkg/csrc"
    )
    assert [folder for folder, _ in facts.hipify_folders] == ["pkg/csrc"]


def test_a_configured_switch_an_unread_cache_preset_named_for_a_vendor_sets_on_is_that_vendors_macro(tmp_path):
    # `cmake -C scripts/gcc-cuda.cmake` presets the NVIDIA build (`set(XYZ_USE_CUDA ON CACHE BOOL "")`), the HIP
    # preset its own switch: no CMake file reads either, so neither defines its switch for every build.
    cmake = "option(XYZ_USE_CUDA OFF)\noption(XYZ_USE_HIP OFF)\nconfigure_file(xyz_config.h.in xyz_config.h)\n"
    source = "#include <xyz_config.h>\n#ifdef XYZ_USE_CUDA\n#include <cusparse.h>\n#endif\n"
    files = {
        "CMakeLists.txt": cmake,
        "xyz_config.h.in": "#cmakedefine XYZ_USE_CUDA\n#cmakedefine XYZ_USE_HIP\n",
        "src/solver.cpp": source,
        "scripts/gcc-cuda.cmake": 'set(XYZ_USE_CUDA ON CACHE BOOL "")\n',
        "scripts/clang-hip.cmake": 'set(XYZ_USE_HIP ON CACHE BOOL "")\n',
    }
    root = write_tree(tmp_path / "presets", files)
    project = CudaProject.build(root)
    assert project.learned["XYZ_USE_CUDA"].vendor == "nvidia"
    assert project.learned["XYZ_USE_HIP"].vendor == "rocm"
    assert _codes(root, "src/solver.cpp") == []
    # A preset whose name says no vendor sets the switch for a build of any vendor: the include stays a hazard.
    neutral = {**files, "scripts/gcc-cuda.cmake": "", "scripts/gcc-gpu.cmake": 'set(XYZ_USE_CUDA ON CACHE BOOL "")\n'}
    assert _codes(write_tree(tmp_path / "neutral", neutral), "src/solver.cpp") == [("ROC205", 3)]
