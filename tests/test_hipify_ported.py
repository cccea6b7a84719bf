"""A project that already builds for ROCm through hipify: what the build's hipify renames (ROC204/ROC205 includes)
is left out by default there, and noted at info before a first port (`CudaProject.rocm_build_path`,
`FileView.hipify_ported`, `CudaContext.report_hipified`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.cuda.build_files import cmake_facts, setup_py_facts
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine

HIPIFIED = "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k.cu'])\n"
KERNEL = "#include <cuda_fp16.h>\n#include <cublas_v2.h>\n#include <cudnn.h>\n"
# The port's compat header, which the ported kernels include (after the CUDA includes: any order does).
COMPAT = {"compat.h": "#ifdef USE_ROCM\n#define WARP 64\n#endif\n"}
PORTED_KERNEL = KERNEL + '#include "compat.h"\n'
# A ROCm arm of the setup.py that does something for the ROCm build: the project builds for ROCm already.
ROCM_ARM = "import torch\nflags = []\nif torch.version.hip:\n    flags += ['-DHIPBLAS_USE_HIP_HALF']\n"
EVIDENCE = "setup.py:4: the ROCm arm of `if torch.version.hip:` runs `flags += ['-DHIPBLAS_USE_HIP_HALF']`"


def _found(root: Path, **settings: object) -> list[tuple[str, int, str]]:
    report = Engine().check_path(root / "k.cu", Settings(root=root, **settings))  # type: ignore[arg-type]
    return [(d.code, d.location.line, d.severity.value) for d in report.diagnostics]


def _arms(text: str) -> list[str]:
    return list(setup_py_facts("setup.py", text).rocm_arms)


def test_a_setup_py_arm_whose_test_names_rocm_and_builds_something_is_a_rocm_build_path():
    assert _arms(ROCM_ARM) == [EVIDENCE]
    assert _arms("import os\nV = ''\nif os.getenv('ROCM_VERSION'):\n    V += '+rocm'\n") == [
        "setup.py:4: the ROCm arm of `if os.getenv('ROCM_VERSION'):` runs `V += '+rocm'`"
    ]
    negated = "from torch.utils.cpp_extension import IS_HIP_EXTENSION\nif not IS_HIP_EXTENSION:\n    a = 1\nelse:\n"
    assert _arms(negated + "    b = 2\n") == ["setup.py:5: the ROCm arm of `if not IS_HIP_EXTENSION:` runs `b = 2`"]


def test_a_conditional_expression_giving_rocm_flags_is_a_rocm_arm():
    chosen = "import torch\nflags = ['-O3'] + (['-DUSE_ROCM'] if torch.version.hip else [])\n"
    assert _arms(chosen) == ["setup.py:2: the ROCm arm of `... if torch.version.hip else ...` gives `['-DUSE_ROCM']`"]
    assert _arms("import torch\nflags = [] if torch.version.hip else ['-lineinfo']\n") == []
    assert _arms("import torch\nflags = ['-lineinfo'] if not torch.version.hip else ''\n") == []


def test_a_torch_jit_build_with_a_rocm_arm_hides_renames_in_the_ported_folder(tmp_path):
    loader = (
        "import torch\nfrom torch.utils.cpp_extension import load\n"
        "ext = load('x', sources=['ext/k.cu'], extra_cuda_cflags=['-DX'] if torch.version.hip else [])\n"
    )
    root = write_tree(tmp_path, {"build_ext.py": loader, "ext/k.cu": PORTED_KERNEL, "ext/compat.h": COMPAT["compat.h"]})
    report = Engine().check_path(root / "ext" / "k.cu", Settings(root=root))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC205", 3)]  # cuDNN has no drop-in
    root_without = write_tree(
        tmp_path / "unported", {"build_ext.py": loader.replace("if torch.version.hip", "if False")}
    )
    write_tree(root_without, {"ext/k.cu": PORTED_KERNEL, "ext/compat.h": COMPAT["compat.h"]})
    report = Engine().check_path(root_without / "ext" / "k.cu", Settings(root=root_without))
    assert [(d.code, d.location.line, d.severity.value) for d in report.diagnostics] == [
        ("ROC204", 1, "info"),
        ("ROC205", 2, "info"),
        ("ROC205", 3, "warning"),
    ]


def test_arms_that_refuse_or_only_report_rocm_and_the_else_of_a_cuda_test_are_none():
    refused = (
        "import torch\nif torch.version.hip:\n    print('ROCm')\n    raise RuntimeError('ROCm is not supported')\n"
    )
    assert _arms(refused) == []
    # `CUDA_HOME is None` reads as ROCm's arm to the vendor of defines, but before a port it is the CPU build.
    no_toolkit = "from torch.utils.cpp_extension import CUDA_HOME\nif CUDA_HOME is None:\n    flags = ['-DCPU']\n"
    assert _arms(no_toolkit) == []
    # A GPU switch named after CUDA that holds its own ROCm test is no vendor's arm.
    switch = "import torch\nif not torch.version.hip:\n    if BUILD_CUDA:\n        x = 1\nelse:\n    y = 2\n"
    assert _arms(switch) == ["setup.py:6: the ROCm arm of `if not torch.version.hip:` runs `y = 2`"]


def test_rocm_build_path_from_cmake_defines_sources_or_the_hip_language(tmp_path):
    cmake = "if(USE_ROCM)\n  add_definitions(-DXYZ_HIP)\nendif()\n"
    assert [(d.name, d.vendor) for d in cmake_facts("CMakeLists.txt", cmake).defines] == [("XYZ_HIP", "rocm")]
    defined = CudaProject.build(write_tree(tmp_path / "defines", {"CMakeLists.txt": cmake, "k.cu": ""}))
    assert defined.rocm_build_path == "CMakeLists.txt:2: the ROCm build defines XYZ_HIP"
    hip = CudaProject.build(write_tree(tmp_path / "hip", {"CMakeLists.txt": "project(x LANGUAGES CXX HIP)\n"}))
    assert hip.rocm_build_path == "a CMake file builds the HIP language"
    first_port = CudaProject.build(write_tree(tmp_path / "none", {"setup.py": HIPIFIED, "k.cu": KERNEL}))
    assert first_port.rocm_build_path == ""


def test_a_define_only_a_negated_cuda_test_gives_rocm_is_no_rocm_build_path(tmp_path):
    """The define's vendor reads `if CUDA_HOME is None:` as ROCm's arm; a Python build file's ROCm arms decide."""
    setup = HIPIFIED + "CUDA_HOME = None\nif CUDA_HOME is None:\n    flags = ['-DXYZ_CPU']\n"
    facts = setup_py_facts("setup.py", setup)
    assert [(d.name, d.vendor) for d in facts.defines] == [("XYZ_CPU", "rocm")]
    assert CudaProject.build(write_tree(tmp_path, {"setup.py": setup, "k.cu": KERNEL})).rocm_build_path == ""


def test_hipify_renames_are_left_out_where_the_project_already_builds_for_rocm(tmp_path):
    root = write_tree(tmp_path, {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": PORTED_KERNEL, **COMPAT})
    assert _found(root) == [("ROC205", 3, "warning")]  # cuDNN has no drop-in: still a warning
    report = Engine().check_path(root / "k.cu", Settings(root=root))
    why = (
        "the build hipifies it (setup.py:6: builds a torch CUDAExtension (hipified on ROCm)) and the project already"
        f" builds it for ROCm ({EVIDENCE}; no HIP twin shows the port left it to NVIDIA)"
    )
    assert report.gated_notes == [
        f"{root / 'k.cu'}:1: ROC204 not reported: {why}",
        f"{root / 'k.cu'}:2: ROC205 not reported: {why}",
    ]


def test_a_kernel_testing_no_rocm_macro_is_ported_too(tmp_path):
    """The ROCm build compiles every file hipify reaches: one testing no ROCm macro (a kernel whose CUDA code hipify
    alone ports, beside a compat header other kernels test `USE_ROCM` in) is ported code as well."""
    files = {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": PORTED_KERNEL, "plain_kernel.cu": KERNEL, **COMPAT}
    root = write_tree(tmp_path, files)
    report = Engine().check_path(root / "plain_kernel.cu", Settings(root=root))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC205", 3)]
    assert report.gated_notes[0].endswith(f"({EVIDENCE}; no HIP twin shows the port left it to NVIDIA)")


TWINS = {
    "a .hip file of the same name beside it": ("ops/k.cu", "ops/k.hip"),
    "a hip/ folder beside cuda/": ("ops/cuda/k.cu", "ops/hip/k.cpp"),
    "a rocm/ folder in its folder": ("ops/k.cu", "ops/rocm/k.cpp"),
    "hip for cuda in its name": ("ops/k_cuda.cu", "ops/k_hip.cpp"),
    "rocm added to its name": ("ops/k.cu", "ops/k_rocm.cpp"),
    "HIP for CUDA in a folder's name": ("ops/CudaOps/k.cu", "ops/HipOps/k.cpp"),
}


def test_code_the_port_left_to_nvidia_keeps_its_notes(tmp_path):
    """A kernel with a hand-written HIP twin (a CUTLASS kernel whose ROCm side is a rewrite): the port left it to
    NVIDIA, its CUDA includes stay notes of what a port there touches."""
    for case, (kernel, twin) in TWINS.items():
        root = write_tree(
            tmp_path / case.replace(" ", "_"), {"setup.py": ROCM_ARM + HIPIFIED, kernel: KERNEL, twin: ""}
        )
        report = Engine().check_path(root / kernel, Settings(root=root))
        found = [(d.code, d.location.line, d.severity.value) for d in report.diagnostics]
        assert found == [("ROC204", 1, "info"), ("ROC205", 2, "info"), ("ROC205", 3, "warning")], case
        assert CudaProject.build(root)._left_to_nvidia(str(root / kernel)) == f"{twin} is its HIP twin", case


def test_a_header_only_kernels_left_to_nvidia_include_is_left_too(tmp_path):
    files = {
        "setup.py": ROCM_ARM + HIPIFIED,
        "k.cu": '#include "k_utils.cuh"\n',
        "k.hip": "",
        "k_utils.cuh": "#include <cuda_runtime.h>\n",
        "shared.cuh": "#include <cuda_runtime.h>\n",
        "other.cu": '#include "shared.cuh"\n',
        "k2.cu": '#include "shared.cuh"\n',
        "k2.hip": "",
    }
    root = write_tree(tmp_path, files)
    left = Engine().check_path(root / "k_utils.cuh", Settings(root=root))
    assert [(d.code, d.severity.value) for d in left.diagnostics] == [("ROC204", "info")]
    assert CudaProject.build(root)._left_to_nvidia(str(root / "k_utils.cuh")) == (
        "every file including it is left to NVIDIA (k.cu: k.hip is its HIP twin)"
    )
    # `other.cu`, which has no twin, includes `shared.cuh` too: ROCm compiles it.
    assert Engine().check_path(root / "shared.cuh", Settings(root=root)).diagnostics == []


def test_files_of_one_name_are_no_twins(tmp_path):
    """`k.cu` and `k.cuh` beside it are a kernel and its header, not a CUDA file and its ROCm twin."""
    files = {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": KERNEL, "k.cuh": "", "cuda/k.cu": ""}
    project = CudaProject.build(write_tree(tmp_path, files))
    assert project._left_to_nvidia(str(tmp_path / "k.cu")) == ""
    assert _found(tmp_path) == [("ROC205", 3, "warning")]


def test_hipify_renames_are_notes_before_a_first_port(tmp_path):
    root = write_tree(tmp_path, {"setup.py": HIPIFIED, "k.cu": PORTED_KERNEL, **COMPAT})
    assert _found(root) == [("ROC204", 1, "info"), ("ROC205", 2, "info"), ("ROC205", 3, "warning")]


def test_the_explicit_setting_wins_over_the_model(tmp_path):
    ported = write_tree(tmp_path / "ported", {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": PORTED_KERNEL, **COMPAT})
    assert _found(ported, show_hipified=True) == [
        ("ROC204", 1, "info"),
        ("ROC205", 2, "info"),
        ("ROC205", 3, "warning"),
    ]
    first_port = write_tree(tmp_path / "first", {"setup.py": HIPIFIED, "k.cu": KERNEL})
    assert _found(first_port, show_hipified=False) == [("ROC205", 3, "warning")]
    report = Engine().check_path(first_port / "k.cu", Settings(root=first_port, show_hipified=False))
    assert all("already builds" not in note for note in report.gated_notes)  # the user's choice, not the model's


def test_show_and_hide_from_the_command_line_and_the_configuration(project: Path, cli: Callable[..., object]):
    write_tree(
        project, {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": '#include <cuda_fp16.h>\n#include "compat.h"\n', **COMPAT}
    )
    assert cli("check", "--no-cache", "-q", "k.cu").stdout == ""  # type: ignore[attr-defined]
    shown = cli("check", "--no-cache", "-q", "--show-hipified", "k.cu").stdout  # type: ignore[attr-defined]
    assert shown.startswith("k.cu:1:1: ROC204 ")
    (project / "rocmlint.toml").write_text("show-hipified = true\n", encoding="utf-8")
    assert cli("check", "--no-cache", "-q", "k.cu").stdout == shown  # type: ignore[attr-defined]
    assert cli("check", "--no-cache", "-q", "--hide-hipified", "k.cu").stdout == ""  # type: ignore[attr-defined]
    both = cli("check", "--show-hipified", "--hide-hipified", "k.cu")
    assert both.code == 2  # type: ignore[attr-defined]
    assert "not allowed with argument" in both.stderr  # type: ignore[attr-defined]


def test_rocmlint_project_names_the_evidence(project: Path, cli: Callable[..., object]):
    write_tree(project, {"setup.py": ROCM_ARM + HIPIFIED, "k.cu": KERNEL})
    out = cli("project").stdout  # type: ignore[attr-defined]
    assert f"rocm_build = {EVIDENCE}\n" in out
    assert (
        "hipify's renames = left out where hipify reaches, notes where a HIP twin shows the port left the file" in out
    )


def test_rocmlint_project_says_when_there_is_no_rocm_build_yet(project: Path, cli: Callable[..., object]):
    write_tree(project, {"setup.py": HIPIFIED, "k.cu": KERNEL})
    out = cli("project").stdout  # type: ignore[attr-defined]
    assert "rocm_build = none found\nhipify's renames = reported at info: no ROCm build yet" in out


def test_a_cub_header_torch_s_hipify_does_not_rename_stays_a_warning_in_a_hipified_build(tmp_path):
    kernel = "#include <cub/block/block_scan.cuh>\n#include <cub/warp/warp_scan.cuh>\n"
    root = write_tree(tmp_path, {"setup.py": HIPIFIED, "k.cu": kernel})
    assert _found(root) == [("ROC205", 1, "info"), ("ROC205", 2, "warning")]


def test_a_build_running_a_hipify_tool_itself_may_rename_any_header_the_table_maps(tmp_path):
    """A build step running hipify (`hipify_torch` with a project map) may rename `cub/warp/warp_scan.cuh` too: only
    torch's extension build is held to torch's own tables."""
    kernel = "#include <cub/warp/warp_scan.cuh>\n"
    tool = "execute_process(COMMAND python -m hipify_torch --custom-map-list map.json)\n"
    root = write_tree(tmp_path, {"setup.py": HIPIFIED, "CMakeLists.txt": tool, "k.cu": kernel})
    assert CudaProject.build(root).build_facts.hipify_tool.endswith("CMakeLists.txt:1")
    assert _found(root) == [("ROC205", 1, "info")]


def test_a_header_included_by_a_twin_kernel_and_an_nvidia_only_one_is_left_too(tmp_path):
    """`u.cuh` is included by a kernel with a HIP twin and by one the build compiles for NVIDIA only: no file ROCm
    compiles through hipify includes it, so its renames stay notes; a kernel both builds compile is ported."""
    setup = "import torch\nsources = ['both.cu']\nif torch.version.hip:\n    flags = ['-DX']\n"
    setup += "else:\n    sources += ['nv.cu']\nfrom torch.utils.cpp_extension import CUDAExtension\n"
    setup += "ext = CUDAExtension('x', sources)\n"
    files = {
        "setup.py": setup,
        "k.cu": '#include "u.cuh"\n',
        "k.hip": "",
        "nv.cu": '#include "u.cuh"\n',
        "both.cu": "#include <cuda_runtime.h>\n",
        "u.cuh": "#include <cuda_runtime.h>\n",
    }
    root = write_tree(tmp_path, files)
    project = CudaProject.build(root)
    assert project._left_to_nvidia(str(root / "nv.cu")) == "setup.py:6: the build compiles it for NVIDIA only"
    assert project._left_to_nvidia(str(root / "u.cuh")).startswith("every file including it is left to NVIDIA")
    header = Engine().check_path(root / "u.cuh", Settings(root=root))
    assert [(d.code, d.severity.value) for d in header.diagnostics] == [("ROC204", "info")]
    assert Engine().check_path(root / "both.cu", Settings(root=root)).diagnostics == []


def test_a_file_the_build_lists_for_rocm_has_no_twin(tmp_path):
    """A ROCm-only file of its name beside it (a ROCm module's own bindings in `rocm/`) is no twin when the build lists
    the CUDA file itself for ROCm too: the ROCm build compiles it."""
    cmake = (
        "set(SRC csrc/k.cu)\nif(USE_ROCM)\n  add_definitions(-DXYZ_HIP)\n  list(APPEND SRC csrc/rocm/k.cpp)\nendif()\n"
    )
    cmake += "add_library(x ${SRC})\n"
    files = {"CMakeLists.txt": cmake, "setup.py": HIPIFIED, "csrc/k.cu": "", "csrc/rocm/k.cpp": ""}
    files |= {"csrc/b.cu": "", "csrc/rocm/b.cpp": ""}
    root = write_tree(tmp_path, files)
    project = CudaProject.build(root)
    assert project._left_to_nvidia(str(root / "csrc/k.cu")) == ""
    assert project._left_to_nvidia(str(root / "csrc/b.cu")) == "csrc/rocm/b.cpp is its HIP twin"


def test_a_folder_rewritten_for_rocm_leaves_every_file_of_the_cuda_folder(tmp_path):
    """`attention/hip_fmha/` beside `attention/cuda/fmha/` (a CUTLASS kernel folder and its CK rewrite): the port left
    the CUDA folder's files to NVIDIA, whatever their names. A `hip/` folder beside `cuda/` is where hipify writes its
    copies, beside a few hand-written files: no rewrite of the folder."""
    files = {
        "setup.py": ROCM_ARM + HIPIFIED,
        "attention/cuda/fmha/kernel_backward.h": KERNEL,
        "attention/hip_fmha/ck_fmha_util.h": "",
        "aten/cuda/Atomic.cuh": KERNEL,
        "aten/hip/impl/HIPGuard.h": "",
    }
    root = write_tree(tmp_path, files)
    project = CudaProject.build(root)
    assert project._left_to_nvidia(str(root / "attention/cuda/fmha/kernel_backward.h")) == (
        "attention/hip_fmha/ is the HIP twin of its folder"
    )
    assert project._left_to_nvidia(str(root / "aten/cuda/Atomic.cuh")) == ""
