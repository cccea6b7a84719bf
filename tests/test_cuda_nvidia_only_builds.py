"""Sources only the NVIDIA build compiles, read from the build files and the project's vendor names (`CudaProject`
in rocmlint/cuda/project.py, rocmlint/cuda/build_files.py)."""

from __future__ import annotations

from rocmlint.cuda.build_files import vendor_of_words
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

# A front end choosing its simulator backend per GPU vendor: NVGPU is NVIDIA's word as AMDGPU is AMD's.
_BACKEND_CHAIN = {
    "Makefile": "all: sim\nsim: wrapper.cpp\n\t$(CXX) -o $@ wrapper.cpp\n",
    "wrapper.cpp": """
        #ifdef USE_NVGPU
        #include "sim_nvgpu.cuh"
        #elif defined USE_AMDGPU
        #include "sim_amdgpu.hpp"
        #else
        #include "sim_cpu.hpp"
        #endif
        """,
    "sim_nvgpu.cuh": "#include <cuda.h>\n",
    "sim_amdgpu.hpp": "#include <hip/hip_runtime.h>\n",
    "sim_cpu.hpp": "",
}


def test_nvgpu_names_nvidia_as_amdgpu_names_amd():
    assert vendor_of_words("USE_NVGPU") == "nvidia"
    assert vendor_of_words("USE_AMDGPU") == "rocm"


def test_a_header_only_the_nvgpu_arm_includes_is_not_compiled_on_rocm(tmp_path):
    root = write_tree(tmp_path, _BACKEND_CHAIN)
    view = CudaProject.build(root).view(str(root / "sim_nvgpu.cuh"))
    assert (view.base.on_rocm, view.base_evidence) == (
        False,
        "wrapper.cpp:2: included only where ROCm does not compile",
    )
    assert _codes(root, "sim_nvgpu.cuh") == []
    # Included outside the chain, it is compiled on ROCm: its CUDA header is reported.
    root = write_tree(tmp_path / "plain", {**_BACKEND_CHAIN, "other.cpp": '#include "sim_nvgpu.cuh"\n'})
    assert _codes(root, "sim_nvgpu.cuh") == [("ROC204", 1)]
