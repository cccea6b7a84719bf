"""Names the project defines or expands itself, read across its files (rocmlint/cuda/frontend.py `macro_replacement`,
`expanded_only_off_rocm`; rocmlint/cuda/masks.py `mask_macro_used_elsewhere`): a macro a header defines for the
code including it is the code's own spelling, a macro whose every expansion sits where ROCm never compiles is
NVIDIA code, and a mask macro nothing names is no mask passed anywhere. Named where ROCm compiles, they still count.
A tool's Makefile handing its own folder's `.cpp` to nvcc (rocmlint/cuda/build_files.py `compiles_only_its_folder`)
makes those sources CUDA ones, not every host source of the project."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

# A header of code written for AMD's lockstep waves: `__syncwarp()` stands for nothing there.
_COMMON = """
    #pragma once
    #define __syncwarp()
    """
_KERNEL = """
    #include "common.h"
    __global__ void unpack(float* out) {
      out[threadIdx.x] = 0.f;
      __syncwarp();
    }
    """


def test_a_macro_a_header_defines_where_rocm_compiles_is_the_codes_own_name(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"common.h": _COMMON, "unpack.cu": _KERNEL})
    assert _codes(root, "unpack.cu") == []


def test_a_header_macro_rocm_may_not_see_or_naming_what_hip_lacks_leaves_the_name_reported(tmp_path: Path):
    nvidia_only = "#pragma once\n#ifndef USE_ROCM\n#define __syncwarp() __syncwarp_impl()\n#endif\n"
    root = write_tree(tmp_path / "nvidia", {"common.h": nvidia_only, "unpack.cu": _KERNEL})
    assert ("ROC217", 4) in _codes(root, "unpack.cu")
    lacking = "#pragma once\n#define __syncwarp() __trap()\n"
    root = write_tree(tmp_path / "lacking", {"common.h": lacking, "unpack.cu": _KERNEL})
    assert ("ROC217", 4) in _codes(root, "unpack.cu")


# PTX specialisations defined by macros (one through another) and expanded only in an sm_90 arm ROCm never takes.
_MULTIMEM = r"""
    #pragma once
    #define LOAD_SUM(T, ty) \
      template<> struct Load<T> { \
        __device__ static T load(uintptr_t addr) { \
          T v; asm("multimem.ld_reduce.relaxed.sys.global.add." #ty " %0, [%1];" : "=r"(v) : "l"(addr)); return v; } };
    #define LOAD_SUM_AND_HALF(T, ty) LOAD_SUM(T, ty)
    template <typename T> struct Load { __device__ static T load(uintptr_t addr) { return T(); } };
    #if __CUDA_ARCH__ >= 900
    LOAD_SUM(uint32_t, u32)
    LOAD_SUM_AND_HALF(float, f32)
    #endif
    """


def test_ptx_in_a_macro_expanded_only_where_rocm_never_compiles_is_nvidia_code(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"reduce.h": _MULTIMEM, "kernel.cu": '#include "reduce.h"\n'})
    assert [code for code in _codes(root, "reduce.h") if code[0] == "ROC203"] == []


def test_ptx_in_a_macro_expanded_where_rocm_compiles_or_nowhere_is_reported(tmp_path: Path):
    # An expansion outside the arm, through the other macro.
    opened = _MULTIMEM + "LOAD_SUM_AND_HALF(double, f64)\n"
    root = write_tree(tmp_path / "opened", {"reduce.h": opened})
    assert ("ROC203", 2) in _codes(root, "reduce.h")
    # Expanded by a file including the header: that file's arms are not looked at here.
    user = '#include "reduce.h"\nLOAD_SUM(int, s32)\n'
    root = write_tree(tmp_path / "other", {"reduce.h": _MULTIMEM, "kernel.cu": user})
    assert ("ROC203", 2) in _codes(root, "reduce.h")
    # Expanded nowhere: a header's macro may be for its users.
    unused = _MULTIMEM.replace("LOAD_SUM(uint32_t, u32)\n    LOAD_SUM_AND_HALF(float, f32)\n", "")
    root = write_tree(tmp_path / "unused", {"reduce.h": unused})
    assert ("ROC203", 2) in _codes(root, "reduce.h")


_MASK = """
    #pragma once
    #define WARP_MASK 0xffffffff
    __device__ int lane() { return threadIdx.x % warpSize; }
    """


def test_a_mask_macro_nothing_names_is_no_mask_passed_anywhere(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"prims.h": _MASK, "kernel.cu": '#include "prims.h"\n'})
    assert _codes(root, "prims.h") == []


def test_a_mask_macro_another_file_names_is_reported(tmp_path: Path):
    user = '#include "prims.h"\n__device__ int all(int v) { return __all_sync(WARP_MASK, v); }\n'
    root = write_tree(tmp_path / "p", {"prims.h": _MASK, "kernel.cu": user})
    assert ("ROC210", 2) in _codes(root, "prims.h")


# A host header of the library (a write-combining fence for plain C++), and a tool beside it whose Makefile hands
# its own `.cpp` to nvcc: the library's `.cc` files stay host compilers' sources on both vendors.
_FENCE = """
    #pragma once
    #if !defined(__NVCC__)
    #if defined(__PPC__)
    static inline void wc_store_fence(void) { asm volatile("sync"); }
    #elif defined(__x86_64__)
    #include <immintrin.h>
    static inline void wc_store_fence(void) { _mm_sfence(); }
    #endif
    #endif
    """
_TOOL_MAKEFILE = "bench: bench.cpp\n\t$(NVCC) -x cu $< -o $@\n"


def _fence_tree(root: Path, makefile: str, bench: str = "int main() { return 0; }\n") -> Path:
    files = {"src/fence.h": _FENCE, "src/net.cc": '#include "fence.h"\n', "tools/bench/bench.cpp": bench}
    return write_tree(root, {**files, "tools/bench/Makefile": makefile})


def test_a_tools_makefile_compiling_its_own_cpp_with_nvcc_leaves_the_librarys_host_sources_host_only(tmp_path: Path):
    root = _fence_tree(tmp_path / "p", _TOOL_MAKEFILE)
    assert _codes(root, "src/fence.h") == []


def test_a_makefile_reaching_up_or_a_tool_including_the_header_keeps_it_compiled_by_nvcc(tmp_path: Path):
    root = _fence_tree(tmp_path / "up", "bench: ../../src/net.cc bench.cpp\n\t$(NVCC) -x cu $^ -o $@\n")
    assert ("ROC214", 2) in _codes(root, "src/fence.h")
    root = _fence_tree(tmp_path / "include", _TOOL_MAKEFILE, '#include "../../src/fence.h"\nint main() {}\n')
    assert ("ROC214", 2) in _codes(root, "src/fence.h")
