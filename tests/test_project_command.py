"""`rocmlint project` and the report's "C++ project model" section, through the real CLI on small projects built
in tmp_path; the read-only queries of CudaProject they use (rocmlint/cuda/project.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cuda_project import write_tree

from rocmlint.cuda.project import CudaProject
from rocmlint.project_text import TEXT_LIMIT

SETUP_PY = """
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

flags = []
if torch.version.hip:
    flags.append("-DXYZ_HIP")

setup(name="xyz", ext_modules=[CUDAExtension("xyz", ["csrc/kernel.cu"], extra_compile_args={"cxx": flags})],
      cmdclass={"build_ext": BuildExtension})
"""
CMAKE = """
project(xyz LANGUAGES CXX)
if(USE_ROCM)
  add_compile_definitions(XYZ_ROCM_CMAKE)
endif()
"""
COMPAT_H = """
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define XYZ_IS_AMD 1
#define XYZ_WARP_SIZE 64
#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)
#else
#define XYZ_IS_AMD 0
#define XYZ_WARP_SIZE 32
#endif
constexpr int kLaneCount = XYZ_WARP_SIZE;
#define XYZ_FULL_MASK 0xffffffffu
#define XYZ_BLOCK 256
"""
NV_ONLY_CUH = """
#pragma once
#include <mma.h>
__device__ int nv_only() { return 1; }
"""
KERNEL_CU = """
#include "../include/compat.h"
#ifndef XYZ_HIP
#include "nv_only.cuh"
#endif
#if XYZ_IS_AMD
__global__ void k(int* out) { out[0] = __shfl_xor_sync(XYZ_FULL_MASK, 1, 1); }
#endif
#ifdef XYZ_ROCM_CMAKE
#endif
"""
AMD_CU = """
__global__ void k(int* out) { out[0] = __builtin_amdgcn_readfirstlane(out[0]); }
"""
PROJECT = {
    "setup.py": SETUP_PY,
    "CMakeLists.txt": CMAKE,
    "include/compat.h": COMPAT_H,
    "csrc/nv_only.cuh": NV_ONLY_CUH,
    "csrc/kernel.cu": KERNEL_CU,
    "csrc/amd.cu": AMD_CU,
}


@pytest.fixture
def xyz(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "xyz", PROJECT)
    (root / ".git").mkdir()
    return root


def rocmlint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


def project_json(cwd: Path, *args: str) -> dict[str, Any]:
    result = rocmlint(cwd, "project", "--output-format", "json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def section(text: str, title: str) -> list[str]:
    """The lines of the text output's `# title...` section, without the title."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"# {title}"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return [" ".join(line.split()) for line in lines[start + 1 : end]]


# --- rocmlint project: text ---------------------------------------------------------------------------------------


def test_text_shows_the_build_the_macros_and_their_evidence(xyz: Path) -> None:
    result = rocmlint(xyz, "project")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith(f"Project root: {xyz}\nC/C++/CUDA files read: 4\n")
    assert section(out, "Build")[:2] == [
        "mode = torch extension (hipified at build time on ROCm)",
        "hip_only = no",
    ]
    # Strongest evidence first: both build defines, then the header's flag.
    assert section(out, "ROCm-only macros (3)") == [
        "XYZ_HIP rocm: 1 nvidia: undefined (build) setup.py:6: the ROCm build defines it",
        "XYZ_ROCM_CMAKE rocm: 1 nvidia: undefined (build) CMakeLists.txt:3: the ROCm build defines it",
        "XYZ_IS_AMD rocm: 1 nvidia: 0 (header) include/compat.h:3: defined under a ROCm-only condition",
    ]
    assert section(out, "NVIDIA-only macros (0)") == ["none"]


def test_text_shows_constants_remaps_and_files(xyz: Path) -> None:
    out = rocmlint(xyz, "project", ".").stdout
    # Only warp-, lane- and mask-like constants in text; XYZ_BLOCK and XYZ_IS_AMD are counted.
    assert section(out, "Header constants (3 warp, lane or mask of 5") == [
        "XYZ_WARP_SIZE = 64 include/compat.h:4 ROCm only macro",
        "XYZ_FULL_MASK = 0xffffffffu include/compat.h:11 macro",
        "kLaneCount = XYZ_WARP_SIZE include/compat.h:10 constant",
    ]
    # XYZ_WARP_SIZE and XYZ_IS_AMD have a value on each vendor: no remaps.
    assert section(out, "ROCm-only remaps (1)") == ["__shfl_xor_sync(_, _, _) include/compat.h:5"]
    assert section(out, "Files the ROCm build does not compile (1)") == [
        "csrc/nv_only.cuh csrc/kernel.cu:3: included only where ROCm does not compile"
    ]
    assert section(out, "Files written for AMD (1)") == [
        "csrc/amd.cu the file calls __builtin_amdgcn_* or defines a 64-lane warp size outside any vendor branch"
    ]


def test_a_hip_only_build_makes_every_file_rocm_native(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"CMakeLists.txt": "enable_language(HIP)\n", "k.hip": "#include <hip/hip_runtime.h>\n"})
    out = rocmlint(root, "project").stdout
    assert "mode = CMake HIP\nhip_only = yes: every file is checked as ROCm-native code\n" in out
    assert section(out, "Files written for AMD (1)") == ["every file: the project's build compiles HIP only"]


def test_long_lists_are_cut_in_text_and_whole_in_json(tmp_path: Path) -> None:
    count = TEXT_LIMIT + 5
    remaps = "".join(f"#define cudaThing{i} hipThing{i}\n" for i in range(count))
    root = write_tree(tmp_path, {"compat.h": f"#ifdef USE_ROCM\n{remaps}#endif\n", "a.cu": '#include "compat.h"\n'})
    out = rocmlint(root, "project").stdout
    listed = section(out, f"ROCm-only remaps ({count})")
    assert len(listed) == TEXT_LIMIT + 1
    assert listed[-1] == "... and 5 more (--output-format json lists them all)"
    assert len(project_json(root)["projects"][0]["remaps"]) == count


def test_no_build_and_no_sources(tmp_path: Path) -> None:
    out = rocmlint(tmp_path, "project").stdout
    assert "C/C++/CUDA files read: 0" in out
    assert "mode = not found (no setup.py or CMake file builds CUDA or HIP)" in out


# --- rocmlint project: JSON ---------------------------------------------------------------------------------------


def test_json_holds_every_fact_with_its_location(xyz: Path) -> None:
    data = project_json(xyz)
    assert data["schema"] == "rocmlint-project/1"
    (model,) = data["projects"]
    assert model["root"] == str(xyz)
    assert model["files"] == 4
    assert model["enabled"] is True
    assert {k: v for k, v in model["build"].items() if k != "defines"} == {
        "torch_extension": True,
        "hipify": "setup.py:8: builds a torch CUDAExtension (hipified on ROCm)",
        "rocm_build": "CMakeLists.txt:3: the ROCm build defines XYZ_ROCM_CMAKE",
        "hip_language": False,
        "cuda_language": False,
        "hip_only": False,
    }
    assert {(d["name"], d["vendor"], d["path"], d["line"]) for d in model["build"]["defines"]} == {
        ("XYZ_HIP", "rocm", "setup.py", 6),
        ("XYZ_ROCM_CMAKE", "rocm", "CMakeLists.txt", 3),
    }
    assert model["macros"][2] == {
        "name": "XYZ_IS_AMD",
        "vendor": "rocm",
        "kind": "header",
        "rocm": {"defined": True, "value": 1},
        "nvidia": {"defined": True, "value": 0},
        "path": "include/compat.h",
        "line": 3,
        "why": "defined under a ROCm-only condition",
    }
    assert [m["kind"] for m in model["macros"]] == ["build", "build", "header"]
    constants = {c["name"]: (c["value"], c["kind"], c["rocm_only"], c["line"]) for c in model["constants"]}
    assert constants == {
        "XYZ_IS_AMD": ("1", "macro", True, 3),
        "XYZ_WARP_SIZE": ("64", "macro", True, 4),
        "XYZ_FULL_MASK": ("0xffffffffu", "macro", False, 11),
        "XYZ_BLOCK": ("256", "macro", False, 12),
        "kLaneCount": ("XYZ_WARP_SIZE", "constant", False, 10),
    }
    assert model["remaps"] == [
        {"name": "__shfl_xor_sync", "parameters": 3, "path": "include/compat.h", "line": 5},
    ]
    assert model["nvidia_only_files"] == [
        {"path": "csrc/nv_only.cuh", "why": "csrc/kernel.cu:3: included only where ROCm does not compile"}
    ]
    assert [f["path"] for f in model["rocm_native_files"]] == ["csrc/amd.cu"]


def test_a_name_learned_macro_has_no_line(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"a.cu": "#ifdef XYZ_USE_HIPBLAS\n#endif\n"})
    (macro,) = project_json(root)["projects"][0]["macros"]
    assert (macro["name"], macro["kind"], macro["path"], macro["line"]) == ("XYZ_USE_HIPBLAS", "name", "a.cu", None)
    assert macro["why"] == "its name says ROCm"


# --- roots, configuration and errors ------------------------------------------------------------------------------


def test_paths_in_one_project_share_one_model(xyz: Path) -> None:
    data = project_json(xyz, "csrc", "include/compat.h", ".")
    assert [p["root"] for p in data["projects"]] == [str(xyz)]


def test_a_path_outside_the_working_directory_finds_its_repository(xyz: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = project_json(elsewhere, str(xyz / "csrc"))
    assert [p["root"] for p in data["projects"]] == [str(xyz)]


def test_the_configuration_decides_the_root_and_whether_check_uses_the_model(xyz: Path, tmp_path: Path) -> None:
    (xyz / "rocmlint.toml").write_text("project-model = false\n", encoding="utf-8")
    data = project_json(tmp_path, "--config", str(xyz / "rocmlint.toml"), str(xyz / "csrc"))
    assert [(p["root"], p["enabled"]) for p in data["projects"]] == [(str(xyz), False)]
    out = rocmlint(xyz, "project").stdout
    assert "project-model = false in the configuration: `check` does not use this model" in out
    assert project_json(xyz, "--isolated")["projects"][0]["enabled"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("missing",), "rocmlint: error: missing: no such file or folder"),
        (("-",), "rocmlint: error: project reads files and folders, not stdin"),
        (("--config", "x.toml", "--isolated"), "rocmlint: error: --config and --isolated cannot be used together"),
    ],
)
def test_usage_errors_exit_2(xyz: Path, args: tuple[str, ...], message: str) -> None:
    result = rocmlint(xyz, "project", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == message


# --- the report's section -----------------------------------------------------------------------------------------


def test_report_shows_the_model(xyz: Path) -> None:
    markdown = rocmlint(xyz, "report", "--no-progress").stdout
    start = markdown.index("## C++ project model")
    shown = markdown[start : markdown.index("\n## ", start + 1)]
    assert "Project `.`: 4 C/C++/CUDA files read; build: torch extension" in shown
    assert "| `XYZ_HIP` | ROCm | 1 | undefined | `setup.py:6` the ROCm build defines it (build) |" in shown
    assert "- Files the ROCm build does not compile (1): `csrc/nv_only.cuh`" in shown
    assert "- ROCm-only remaps (1): `__shfl_xor_sync` (`include/compat.h:5`)" in shown
    page = rocmlint(xyz, "report", "--no-progress", "--format", "html").stdout
    assert '<section id="project-model">' in page
    assert '<a href="include/compat.h#L3"><code>include/compat.h:3</code></a>' in page
    report = json.loads(rocmlint(xyz, "report", "--no-progress", "--format", "json").stdout)
    (model,) = report["project_models"]
    assert model["root"] == "."
    assert [m["name"] for m in model["macros"]] == ["XYZ_HIP", "XYZ_ROCM_CMAKE", "XYZ_IS_AMD"]


def test_report_paths_are_relative_to_the_report_root(xyz: Path, tmp_path: Path) -> None:
    # The working directory holds no project: the repository holding the files is theirs, the report's root is
    # the working directory (two paths).
    markdown = rocmlint(tmp_path, "report", "--no-progress", "--isolated", "xyz/csrc", "xyz/include").stdout
    assert "Project `xyz`: 4 C/C++/CUDA files read" in markdown
    assert "`xyz/setup.py:6`" in markdown
    # One folder is the report's root; the project's root (the working directory) is above it: absolute.
    markdown = rocmlint(xyz, "report", "--no-progress", "csrc").stdout
    assert f"Project `{xyz}`" in markdown
    assert f"`{xyz}/setup.py:6`" in markdown


def test_report_without_cpp_files_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": "import torch\n"})
    markdown = rocmlint(tmp_path, "report", "--no-progress").stdout
    assert "## C++ project model\n\nNo C/C++ files: nothing for the project model to learn.\n" in markdown


# --- the queries ----------------------------------------------------------------------------------------------------


def test_queries_of_the_model(xyz: Path) -> None:
    model = CudaProject.build(xyz)
    assert not model.builds_hip_only()
    found = {(os.path.relpath(p, xyz), d.name, kind) for p, d, kind in model.header_constants()}
    assert ("include/compat.h", "kLaneCount", "constant") in found
    assert ("include/compat.h", "XYZ_WARP_SIZE", "macro") in found
    assert model.rocm_remaps() == {"__shfl_xor_sync": ("include/compat.h:5", 3)}
    assert model.nvidia_only_files() == {
        str(xyz / "csrc/nv_only.cuh"): "csrc/kernel.cu:3: included only where ROCm does not compile"
    }
    assert model.rocm_native_files() == {
        str(
            xyz / "csrc/amd.cu"
        ): "the file calls __builtin_amdgcn_* or defines a 64-lane warp size outside any vendor branch"
    }


def test_header_constants_are_those_rocm_sees_in_included_files(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "w.h": "#ifdef USE_ROCM\n#define WARP 64\n#else\n#define WARP 32\n#endif\n",
            "unused.h": "#define LONELY 1\n",
            "a.cu": '#include "w.h"\n#ifndef USE_ROCM\n#include "sm90.h"\n#endif\n',
            "sm90.h": "#define TMA_BOX 256\n",  # a header only NVIDIA compiles
        },
    )
    found = [(d.name, d.value) for _, d, _ in CudaProject.build(root).header_constants()]
    assert found == [("WARP", "64")]


def test_a_rocm_only_flag_is_a_macro_not_a_remap(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "flag.h": "#ifdef __HIP_PLATFORM_AMD__\n#define XYZ_ONLY_HIP 1\n#define cudaFree hipFree\n#endif\n",
            "a.cu": '#include "flag.h"\n#ifdef XYZ_ONLY_HIP\n#endif\n',
        },
    )
    model = CudaProject.build(root)
    assert "XYZ_ONLY_HIP" in model.learned
    assert model.rocm_remaps() == {"cudaFree": ("flag.h:3", None)}


def test_a_make_build_with_rocm_flags_is_a_build_mode(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "makefiles/hip_64bit.mk": "CXXFLAGS += -D__IS_HIP_COMPILE__=1\n",
            "k.cu": "#ifdef __IS_HIP_COMPILE__\n#endif\n",
        },
    )
    out = rocmlint(root, "project").stdout
    assert "mode = make with ROCm flags" in out
    assert "__IS_HIP_COMPILE__  rocm: 1" in out


def test_a_bazel_build_with_rocm_configs_is_a_build_mode(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": "build:rocm --copt=-DPROJ_ON_AMD=1\n",
            "BUILD": 'cc_library(name = "k", srcs = ["k.cu"])\n',
            "k.cu": "#ifdef PROJ_ON_AMD\n#endif\n",
        },
    )
    out = rocmlint(root, "project").stdout
    assert "mode = Bazel with ROCm configs" in out
    assert "PROJ_ON_AMD  rocm: 1" in out
    assert ".bazelrc:1: the ROCm build defines it" in out
