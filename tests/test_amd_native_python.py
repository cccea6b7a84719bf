"""Python of a project written for AMD GPUs (`CudaProject.written_for_amd`, handed to Python rules as
`PythonContext.project_written_for_amd`): a ROCm-native project, a mixed one (an NVIDIA-only macro) and a CUDA one
without AMD code, through the engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cuda_project import write_tree

from rocmlint.config import ConfigResolver, Overrides, Settings
from rocmlint.cuda import project as cuda_project
from rocmlint.cuda.project import CudaProject, amd_verdict_for, forget_projects
from rocmlint.discovery import discover
from rocmlint.engine import Engine
from rocmlint.parallel import check_candidates

# An FP8 dtype picked per gfx arch (line 2) then the OCP one used (line 4); one target handed to the project's own
# code (line 6); the same target building (line 8) and an allow-list refusing other GPUs it builds for (line 9); an
# allow-list of the GPUs a kernel is written for (line 11), also before compiling it for the GPU found (line 16).
PYTHON = """
import os, torch
FP8 = {"gfx942": torch.float8_e4m3fnuz}
def quantize(x):
    return x.to(torch.float8_e4m3fn)
def scales(w):
    return shuffle_scale(w, arch="gfx950")
def build():
    os.environ["PYTORCH_ROCM_ARCH"] = "gfx942"
    assert arch() in ("gfx90a", "gfx942", "gfx1100")
def decode(x):
    if arch() not in ("gfx942", "gfx950", "gfx1250"):
        raise RuntimeError("no assembly kernel for this GPU")
    return assembly_kernel(x)
def compile_kernel():
    arch = get_gfx()
    assert arch in ("gfx942", "gfx950", "gfx1250")
    return compile_for(GPUTarget("hip", arch, 64))
"""
# The OCP dtype in a file that never picks the format per arch.
NO_CHOICE = """
import torch
def quantize(x):
    return x.to(torch.float8_e4m3fn)
"""
AMD_KERNEL = {"csrc/kernel.hip": "__global__ void k() { __builtin_amdgcn_s_barrier(); }\n"}
NVIDIA_SIDE = {
    "csrc/compat.h": "#ifndef __HIP_PLATFORM_AMD__\n#define PROJ_NV_BUILD 1\n#endif\n",
    "csrc/other.cu": '#include "compat.h"\n#ifdef PROJ_NV_BUILD\nint x;\n#endif\n',
}
CUDA_KERNEL = {"csrc/kernel.cu": "__global__ void k() { __syncthreads(); }\n"}
# Ported CUDA: AMD code only in a compat header included under a ROCm test.
PORTED = {
    "csrc/kernel.cu": '#if defined(USE_ROCM)\n#include "hip_compat.cuh"\n#endif\n__global__ void k() {}\n',
    "csrc/hip_compat.cuh": "__device__ int lane() { return __builtin_amdgcn_mbcnt_lo(~0u, 0u); }\n",
}
# Builds that settle the verdict alone: a macro defined for NVIDIA only; HIP the only GPU language.
NVIDIA_BUILD = {
    "CMakeLists.txt": "if(PROJ_WITH_HIP)\n  enable_language(HIP)\nelse()\n  add_compile_definitions(PROJ_CUDA_ONLY)\nendif()\n"
}
HIP_ONLY_BUILD = {"CMakeLists.txt": "project(x LANGUAGES CXX HIP)\n"}
# An Inductor knob tuned on NVIDIA turned on (ROC106), in a benchmark of the project.
AUTOTUNE = """
import torch
compiled = torch.compile(fn, options={"max_autotune": True})
"""
# An allow-list validating the targets the user builds for, read through a module-level copy of GPU_ARCHS.
VALIDATE = """
import os
GPU_ARCH = os.getenv("GPU_ARCHS", "native")
def validate():
    assert all(arch in ["native", "gfx90a", "gfx942"] for arch in GPU_ARCH.split(";"))
"""
PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/q.py": PYTHON,
    "pkg/plain.py": NO_CHOICE,
    "pkg/validate.py": VALIDATE,
    "bench/autotune.py": AUTOTUNE,
}
EVERY_HAZARD = [("ROC107", 4), ("ROC105", 6), ("ROC105", 8), ("ROC105", 9), ("ROC105", 11), ("ROC105", 16)]


def _codes(root: Path, name: str, **settings: object) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, **settings))  # type: ignore[arg-type]
    return [(d.code, d.location.line) for d in report.diagnostics]


@pytest.mark.parametrize(
    ("files", "written_for_amd"),
    [
        pytest.param(AMD_KERNEL, True, id="amd-code-only"),
        pytest.param({**AMD_KERNEL, **NVIDIA_SIDE}, False, id="mixed-an-nvidia-only-macro"),
        pytest.param(CUDA_KERNEL, False, id="cuda-code-without-amd-code"),
        pytest.param(PORTED, False, id="amd-code-only-in-a-rocm-branch"),
        pytest.param({}, False, id="no-native-code"),
    ],
)
def test_a_project_is_written_for_amd_when_its_native_code_is_amds_only(
    tmp_path: Path, files: dict[str, str], written_for_amd: bool
) -> None:
    project = CudaProject.build(write_tree(tmp_path, {**files, **PACKAGE}))
    assert bool(project.written_for_amd) == written_for_amd
    assert ("csrc/kernel.hip" in project.written_for_amd) == written_for_amd, "it names its evidence"
    assert any(path.endswith("kernel.hip") for path in project.written_for_amd_evidence) == written_for_amd


def test_in_a_project_written_for_amd_per_arch_choices_are_deliberate_and_builds_are_not(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {**AMD_KERNEL, **PACKAGE})
    assert _codes(root, "pkg/q.py") == [("ROC105", 8), ("ROC105", 9)]
    assert _codes(root, "pkg/plain.py") == [("ROC107", 3)], "no per-arch choice: OCP FP8 is wrong on MI300"
    assert _codes(root, "bench/autotune.py") == [], "AMD's authors turn the knob on for AMD GPUs"
    assert _codes(root, "pkg/validate.py") == [("ROC105", 4)], "it refuses new GPUs the user builds for"


@pytest.mark.parametrize("files", [{**AMD_KERNEL, **NVIDIA_SIDE}, CUDA_KERNEL], ids=["mixed", "cuda"])
def test_other_projects_are_checked_as_before(tmp_path: Path, files: dict[str, str]) -> None:
    root = write_tree(tmp_path, {**files, **PACKAGE})
    assert _codes(root, "pkg/q.py") == EVERY_HAZARD
    assert _codes(root, "bench/autotune.py") == [("ROC106", 2)]


def test_project_model_false_turns_the_verdict_off(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {**AMD_KERNEL, **PACKAGE})
    assert _codes(root, "pkg/q.py", project_model=False) == EVERY_HAZARD


def test_the_evidence_is_a_dependency_of_the_result(tmp_path: Path) -> None:
    from rocmlint.dependencies import DependencyRecorder

    root = write_tree(tmp_path, {**AMD_KERNEL, **PACKAGE})
    recorder = DependencyRecorder()
    recorder.start_file()
    Engine(recorder).check_path(root / "pkg/q.py", Settings(root=root))
    assert str(root / "csrc/kernel.hip") in recorder.finish_file()


@pytest.mark.parametrize(
    ("files", "verdict", "model_built"),
    [
        pytest.param({**AMD_KERNEL, **NVIDIA_BUILD}, "", False, id="a-macro-the-build-defines-for-nvidia-only"),
        pytest.param({**CUDA_KERNEL, **HIP_ONLY_BUILD}, "compiles HIP only", False, id="a-hip-only-build"),
        pytest.param({}, "", False, id="no-c-or-cpp-source"),
        pytest.param(AMD_KERNEL, "csrc/kernel.hip", True, id="only-the-files-tell"),
    ],
)
def test_the_build_files_settle_the_verdict_without_the_model_when_they_can(
    tmp_path: Path, files: dict[str, str], verdict: str, model_built: bool
) -> None:
    forget_projects()
    root = write_tree(tmp_path, {**files, **PACKAGE})
    why, evidence = amd_verdict_for(root)
    assert (verdict in why) if verdict else why == ""
    assert (root.resolve() in cuda_project._MODELS) == model_built
    assert (str(root / "CMakeLists.txt") in evidence) == ("CMakeLists.txt" in files), "the build files are evidence"
    assert CudaProject.build(root).written_for_amd == why, "the model decides as its build files did"
    forget_projects()


def test_the_python_pool_takes_the_verdict_from_the_process_building_the_cpp_model(tmp_path: Path) -> None:
    """The process checking C++ files builds the model and sends its verdict; this one (whose Python workers fork
    from it) builds none, and its workers decide as a run in one process does."""
    forget_projects()
    modules = {f"pkg/m{i:02}.py": PYTHON for i in range(20)}
    root = write_tree(tmp_path, {**AMD_KERNEL, **PACKAGE, **modules})
    candidates = list(discover([root], ConfigResolver(Overrides(), cwd=root), lambda message: None))
    pooled = check_candidates(candidates, 2, None, lambda message: None, pool_min_files=0)
    assert root.resolve() not in cuda_project._MODELS, "the Python side never built the C++ model"
    assert "csrc/kernel.hip" in cuda_project._VERDICTS[root.resolve()][0]
    forget_projects()
    alone = check_candidates(candidates, 1, None, lambda message: None)
    codes = {r.path: [(d.code, d.location.line) for d in r.diagnostics] for r in pooled}
    assert codes == {r.path: [(d.code, d.location.line) for d in r.diagnostics] for r in alone}
    assert codes[str(root / "pkg/m00.py")] == [("ROC105", 8), ("ROC105", 9)], "the OCP dtype picked per arch is fine"
    forget_projects()


# --- a project whose declared requirements need ROCm ----------------------------------------------------------------
# Its default install names a package that exists for ROCm only (line 3 of pyproject.toml); beside it, one for NVIDIA
# only; an LD_PRELOAD shim in host C (native code that is no CUDA); an optional extra, which the default install skips.
ROCM_REQUIREMENTS = {"pyproject.toml": '[project]\nname = "x"\ndependencies = [\n  "torch",\n  "pyrsmi>=1.0",\n]\n'}
NVIDIA_TOO = {"requirements.txt": "# monitoring\n-r base.txt\nnvidia-ml-py>=12 ; sys_platform == 'linux'\n"}
HOST_SHIM = {"hooks/preload.c": "#include <dlfcn.h>\nint hook(void) { return 0; }\n"}
OPTIONAL_ONLY = {"pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\nrocm = ["amdsmi"]\n'}
# FlashAttention-2 (AMD's CK or Triton build where the project runs) and FlashAttention-3 (no ROCm build).
FLASH = "from flash_attn import flash_attn_func\ndef attention():\n    import flash_attn_interface\n"


@pytest.mark.parametrize(
    ("files", "verdict"),
    [
        pytest.param(ROCM_REQUIREMENTS, "pyproject.toml:5: pyrsmi", id="a-rocm-only-requirement"),
        pytest.param({"requirements.txt": "torch\nhip-python==6.4\n"}, "requirements.txt:2: hip-python", id="txt"),
        pytest.param({**ROCM_REQUIREMENTS, **HOST_SHIM}, "pyrsmi", id="native-code-that-is-no-cuda"),
        pytest.param({**ROCM_REQUIREMENTS, **NVIDIA_TOO}, "", id="an-nvidia-only-requirement-too"),
        pytest.param({**ROCM_REQUIREMENTS, **CUDA_KERNEL}, "", id="cuda-code-decides"),
        pytest.param(OPTIONAL_ONLY, "", id="an-optional-extra"),
    ],
)
def test_a_project_whose_declared_requirements_need_rocm_is_written_for_amd(
    tmp_path: Path, files: dict[str, str], verdict: str
) -> None:
    forget_projects()
    root = write_tree(tmp_path, {**files, **PACKAGE, "bench/fa.py": FLASH})
    why, evidence = amd_verdict_for(root)
    assert (verdict in why) if verdict else why == ""
    assert CudaProject.build(root).written_for_amd == why, "the model decides as its build files did"
    declared = [str(root / name) for name in ("pyproject.toml", "requirements.txt") if name in files]
    assert all(path in evidence for path in declared) or files.keys() & CUDA_KERNEL.keys(), "what CUDA code decides"
    amd = bool(verdict)
    assert _codes(root, "pkg/q.py") == ([("ROC105", 8), ("ROC105", 9)] if amd else EVERY_HAZARD)
    assert _codes(root, "bench/fa.py") == [("ROC109", 1)] * (not amd) + [("ROC109", 3)], "FA3 has no ROCm build"
    forget_projects()


def test_the_declared_requirements_are_a_dependency_of_the_result(tmp_path: Path) -> None:
    from rocmlint.dependencies import DependencyRecorder

    forget_projects()
    root = write_tree(tmp_path, {**ROCM_REQUIREMENTS, **PACKAGE})
    recorder = DependencyRecorder()
    recorder.start_file()
    Engine(recorder).check_path(root / "pkg/q.py", Settings(root=root))
    assert str(root / "pyproject.toml") in recorder.finish_file()
    forget_projects()
