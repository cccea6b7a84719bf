"""Files left to NVIDIA beside their hand-written ROCm twins, whatever the build system: a file nothing includes whose
path with an NVIDIA word said the ROCm way names a project file or folder (`backends/cuda/` beside `backends/hip/`,
`statevec_nvgpu_kernels.cuh` beside `statevec_amdgpu_kernels.hpp`, `config/cublas.cc` beside `config/rocblas.cc`, `nvmon.c` beside
`rocmon.c`) is compiled on NVIDIA only, unless something shows ROCm compiles it (`CudaProject._beside_its_vendor_twin`
in rocmlint/cuda/project.py, rocmlint/cuda/vendor_twins.py)."""

from __future__ import annotations

from rocmlint.cuda.project import CudaProject
from rocmlint.cuda.vendor_twins import rocm_names, says_rocm
from tests.test_cuda_project import _base_of, _codes, write_tree


def test_an_nvidia_word_of_a_name_is_said_each_rocm_way_in_the_same_case():
    assert rocm_names("cuda_fft") == ["hip_fft", "rocm_fft"]
    assert rocm_names("cuda_cuda") == ["hip_cuda", "hip_hip", "rocm_cuda", "rocm_rocm", "cuda_hip", "cuda_rocm"]
    assert rocm_names("statevec_nvgpu_kernels") == ["statevec_amdgpu_kernels"]
    assert rocm_names("cublas") == ["rocblas", "hipblas"]
    assert rocm_names("nvmon_types")[:2] == ["rocmon_types", "amdmon_types"]  # NVIDIA's `nv` prefix
    assert rocm_names("cudaBackend") == ["hipBackend", "rocmBackend"]
    assert rocm_names("CUDACore") == ["HIPCore", "ROCMCore"]
    assert rocm_names("NVML") == ["ROCM_SMI", "RSMI", "AMDSMI"]
    assert rocm_names("backend") == rocm_names("env") == rocm_names("cu-gemmpeak") == []
    assert says_rocm("hip_kernels") and says_rocm("rocblas") and not says_rocm("cuda_kernels")


# A code generator with one backend per vendor (headers and sources mirrored folder by folder), a configure probe per
# BLAS library, a monitoring backend per vendor and a kernel folder per vendor, built by make with a ROCm path.
_TWINS = {
    "Makefile": """
        CPPFLAGS += -Isrc/includes
        ifdef HIP_PATH
        CXXFLAGS += -D__HIP_PLATFORM_AMD__
        endif
        """,
    "include/gen/backends/cuda/backend.h": "#pragma once\n#include <cuda.h>\n#include <cudaProfiler.h>\n",
    "include/gen/backends/cuda/optimiser.h": '#pragma once\n#include "backend.h"\n',
    "include/gen/backends/cuda/utils.h": "#pragma once\n#if CUDA_VERSION >= 11000\nint v;\n#endif\n",
    "include/gen/backends/hip/backend.h": "#pragma once\n#include <hip/hip_runtime.h>\n",
    "include/gen/backends/hip/optimiser.h": '#pragma once\n#include "backend.h"\n',
    "include/gen/backends/hip/utils.h": "#pragma once\n",
    "config/cublas.cc": "#include <cuda_runtime.h>\n#include <cublas_v2.h>\nint main() { return 0; }\n",
    "config/rocblas.cc": "#include <hip/hip_runtime.h>\nint main() { return 0; }\n",
    "src/nvmon.c": "#include <nvmon_cupti.h>\nint nvmon(void) { return 0; }\n",
    "src/rocmon.c": "int rocmon(void) { return 0; }\n",
    "src/includes/nvmon_cupti.h": "#include <cuda.h>\n",
    "sim/statevec_nvgpu_kernels.cuh": "#include <cooperative_groups.h>\n",
    "sim/statevec_amdgpu_kernels.hpp": "#include <hip/hip_cooperative_groups.h>\n",
    "tensor/cuda_kernels/kernels.hpp": "#include <cuda_fp16.h>\n",
    "tensor/hip_kernels/all.hpp": "#include <hip/hip_fp16.h>\n",
}


def test_a_file_nothing_rocm_compiles_includes_beside_its_rocm_twin_is_nvidias(tmp_path):
    root = write_tree(tmp_path, _TWINS)
    project = CudaProject.build(root)
    for name, twin, code in (
        ("include/gen/backends/cuda/optimiser.h", "include/gen/backends/hip/optimiser.h", None),
        ("include/gen/backends/cuda/utils.h", "include/gen/backends/hip/utils.h", ("ROC207", 2)),
        ("config/cublas.cc", "config/rocblas.cc", ("ROC204", 1)),
        ("src/nvmon.c", "src/rocmon.c", None),
        ("sim/statevec_nvgpu_kernels.cuh", "sim/statevec_amdgpu_kernels.hpp", ("ROC204", 1)),
        ("tensor/cuda_kernels/kernels.hpp", "tensor/hip_kernels", ("ROC204", 1)),  # the folder's twin
    ):
        evidence = f"{twin} is its ROCm twin, and no file ROCm compiles includes it"
        assert _base_of(project, root / name) == (False, evidence), name
        assert _codes(root, name) == [], name
        if code is not None:
            assert code in _codes(root, name, project_model=False), name
    # What only they include is NVIDIA's with them: the backend header, the monitor's header found through `-I`.
    assert project.view(str(root / "include/gen/backends/cuda/backend.h")).base.on_rocm is False
    assert _codes(root, "include/gen/backends/cuda/backend.h") == []
    assert project.view(str(root / "src/includes/nvmon_cupti.h")).base.on_rocm is False
    # The ROCm side stays where it was.
    for name in (
        "include/gen/backends/hip/utils.h",
        "config/rocblas.cc",
        "src/rocmon.c",
        "sim/statevec_amdgpu_kernels.hpp",
    ):
        assert project.view(str(root / name)).base.on_rocm is not False, name


def test_a_file_beside_its_rocm_twin_is_still_reported_where_rocm_may_compile_it(tmp_path):
    cublas = str(tmp_path / "config/cublas.cc")
    for changed in (
        # The file is written for ROCm too: it tells the vendors apart, or includes the HIP runtime.
        {"config/cublas.cc": "#ifdef __HIP_PLATFORM_AMD__\nint amd;\n#endif\n#include <cuda_runtime.h>\n"},
        {"config/cublas.cc": "#include <hip/hip_runtime.h>\n#include <cuda.h>\n"},
        # No twin: the ROCm probe is gone.
        {"config/rocblas.cc": None},
        # A ROCm-compiled file includes it, or one of its name the twin's name cannot serve.
        {"config/use.cc": '#include "cublas.cc"\n'},
        {"src/main.cc": "#include <cublas.cc>\n"},
        # The make build, which builds ROCm, compiles it whatever the vendor.
        {
            "Makefile": "ifdef HIP_PATH\nCXXFLAGS += -D__HIP_PLATFORM_AMD__\nendif\nprobe: config/cublas.cc\n\t$(CXX) -o $@ $<\n"
        },
    ):
        root = write_tree(tmp_path, {**_TWINS, **{k: v for k, v in changed.items() if v is not None}})
        for name in (k for k, v in changed.items() if v is None):
            (root / name).unlink()
        assert CudaProject.build(root).view(cublas).base.on_rocm is not False, changed
        for name in changed:
            (root / name).unlink(missing_ok=True)
        write_tree(tmp_path, {k: v for k, v in _TWINS.items() if k in changed})


def test_without_a_rocm_build_the_nvidia_copy_is_code_to_port(tmp_path):
    root = write_tree(tmp_path, {**_TWINS, "Makefile": "CPPFLAGS += -Isrc/includes\n"})
    assert CudaProject.build(root).view(str(root / "config/cublas.cc")).base.on_rocm is not False
    assert ("ROC204", 1) in _codes(root, "config/cublas.cc")


def test_the_rocm_side_and_a_hipified_tree_have_no_nvidia_twin(tmp_path):
    # A CUDA shim of the ROCm side (`hip/cuda_compat.h` beside `hip/hip_compat.h`) is the ROCm side's own file.
    root = write_tree(
        tmp_path / "shim",
        {
            "Makefile": "ifdef HIP_PATH\nCXXFLAGS += -D__HIP_PLATFORM_AMD__\nendif\n",
            "hip/cuda_compat.h": "#include <cuda_fp16.h>\n",
            "hip/hip_compat.h": "#pragma once\n",
        },
    )
    assert CudaProject.build(root).view(str(root / "hip/cuda_compat.h")).base.on_rocm is not False
    # A build that hipifies the tree compiles the CUDA copy on ROCm as hipify rewrites it.
    root = write_tree(
        tmp_path / "ext",
        {
            "setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('x', ['k_cuda.cu'])\n",
            "k_cuda.cu": "#include <cuda_runtime.h>\n",
            "k_hip.cpp": "#include <hip/hip_runtime.h>\n",
        },
    )
    assert CudaProject.build(root).view(str(root / "k_cuda.cu")).base.on_rocm is not False


def test_a_source_only_the_nvidia_twin_of_a_build_file_names_is_nvidias_beside_its_twin(tmp_path):
    # `Makefile.cuda` beside `Makefile.hip`: the ROCm build is the other file, whatever `Makefile.cuda` names.
    files = {
        "Makefile.cuda": "tensor: cuda_tensor.cpp\n\t$(CXX) -o $@ cuda_tensor.cpp\n",
        "Makefile.hip": "CXXFLAGS += -D_USING_DEVICE_HIP_\ntensor: hip_tensor.cpp\n\t$(CXX) -o $@ hip_tensor.cpp\n",
        "cuda_tensor.cpp": "#include <cuda_runtime.h>\n",
        "hip_tensor.cpp": "#include <hip/hip_runtime.h>\n",
    }
    root = write_tree(tmp_path / "named", files)
    assert _base_of(CudaProject.build(root), root / "cuda_tensor.cpp") == (
        False,
        "hip_tensor.cpp is its ROCm twin, and no file ROCm compiles includes it",
    )
    # One Makefile naming it for every vendor: the ROCm build may compile it.
    root = write_tree(tmp_path / "shared", {**files, "Makefile.hip": files["Makefile.hip"] + "all: cuda_tensor.cpp\n"})
    assert CudaProject.build(root).view(str(root / "cuda_tensor.cpp")).base.on_rocm is not False
