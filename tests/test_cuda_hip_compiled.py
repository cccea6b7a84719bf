"""Files the ROCm build compiles as written with HIP-Clang (`FileView.hip_compiled`): `__CUDACC__` is undefined."""

from __future__ import annotations

from pathlib import Path

from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

# The 32-bit-mask shuffle and `__syncwarp` sit in arms only `__CUDACC__` opens; the lone `#ifdef` is ROC214's.
_KERNEL = """
__device__ float reduce(float v) {
#if defined(__CUDACC__)
  v += __shfl_down_sync(0xffffffff, v, 1);
#else
  v += __shfl_down(v, 1);
#endif
#ifdef __CUDACC__
  __syncwarp();
#endif
  return v;
}
"""
_HIP_LANGUAGE = """
project(proj LANGUAGES CXX)
if(PROJ_USE_HIP)
  enable_language(HIP)
  set_source_files_properties(src/reduce.cu PROPERTIES LANGUAGE HIP)
else()
  enable_language(CUDA)
endif()
add_library(proj src/reduce.cu)
"""


def test_a_hip_language_build_leaves_cudacc_arms_to_nvidia(tmp_path: Path):
    root = write_tree(tmp_path, {"CMakeLists.txt": _HIP_LANGUAGE, "src/reduce.cu": _KERNEL})
    view = CudaProject.build(root).view(str(root / "src/reduce.cu"))
    assert view.hip_compiled == "a CMake file builds the HIP language, and no build step hipifies"
    # Only the test HIP-Clang reads differently is left: the arms it never enters hold no ROCm hazard.
    assert _codes(root, "src/reduce.cu") == [("ROC214", 7)]


def test_a_hip_source_leaves_cudacc_arms_to_nvidia(tmp_path: Path):
    root = write_tree(tmp_path, {"CMakeLists.txt": "enable_language(CUDA)\n", "src/reduce.hip": _KERNEL})
    assert CudaProject.build(root).view(str(root / "src/reduce.hip")).hip_compiled == "src/reduce.hip is a HIP source"
    # The 32-bit-mask shuffle ROC210 reports where `__CUDACC__` may be defined is in an arm HIP-Clang skips.
    assert _codes(root, "src/reduce.hip") == []


def test_a_hipified_build_may_still_define_cudacc(tmp_path: Path):
    # A torch extension beside the HIP language build: hipify renames `__CUDACC__` to `__HIPCC__`, ROCm enters its arms.
    setup = "from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('proj', ['src/reduce.cu'])\n"
    root = write_tree(tmp_path, {"CMakeLists.txt": _HIP_LANGUAGE, "setup.py": setup, "src/reduce.cu": _KERNEL})
    assert CudaProject.build(root).view(str(root / "src/reduce.cu")).hip_compiled == ""
    codes = {code for code, _ in _codes(root, "src/reduce.cu")}
    assert {"ROC210", "ROC217"} <= codes


def test_without_a_hip_build_cudacc_may_be_defined_on_rocm(tmp_path: Path):
    root = write_tree(tmp_path, {"CMakeLists.txt": "enable_language(CUDA)\n", "src/reduce.cu": _KERNEL})
    assert CudaProject.build(root).view(str(root / "src/reduce.cu")).hip_compiled == ""
    assert {"ROC210", "ROC217"} <= {code for code, _ in _codes(root, "src/reduce.cu")}
