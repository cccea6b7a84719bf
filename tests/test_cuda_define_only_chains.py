"""An `#if` chain that only `#define`s macros the file reads where ROCm never compiles (rocmlint/cuda/frontend.py
`defines_read_only_off_rocm`): whichever arm ROCm takes, it defines what it never reads, so the chain's test is no
hazard there. Read where ROCm compiles, or named by another file around it, it still is."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

# PTX load spellings picked by architecture, read only by inline PTX in the NVIDIA arm of `#ifdef USE_ROCM`.
_LOADS = """
    #pragma once
    #if __CUDA_ARCH__ >= 350
    // read-only cache
    #define LD_V1 "ld.global.cs.nc.u32"
    #else
    #define LD_V1 "ld.global.cs.u32"
    #endif
    inline __device__ unsigned load(const void* p) {
        unsigned v;
    #ifdef USE_ROCM
        v = __builtin_nontemporal_load((const unsigned*)p);
    #else
        asm(LD_V1 " {%0}, [%1];" : "=r"(v) : "l"(p));
    #endif
        return v;
    }
    """


def test_macros_read_only_where_rocm_never_compiles_make_their_chain_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"loads.cuh": _LOADS, "use.cu": '#include "loads.cuh"\n'})
    assert _codes(root, "loads.cuh") == []


def test_a_read_where_rocm_compiles_or_in_another_file_keeps_the_chain(tmp_path: Path):
    # Read outside the NVIDIA arm: ROCm's value matters.
    read = _LOADS + "const char* name() { return LD_V1; }\n"
    root = write_tree(tmp_path / "read", {"loads.cuh": read})
    assert ("ROC207", 2) in _codes(root, "loads.cuh")
    # Named by a file including the header: that file's reads are not looked at here.
    user = '#include "loads.cuh"\nconst char* name() { return LD_V1; }\n'
    root = write_tree(tmp_path / "other", {"loads.cuh": _LOADS, "use.cu": user})
    assert ("ROC207", 2) in _codes(root, "loads.cuh")
    # The chain holds code besides its definitions.
    code = _LOADS.replace(
        '    #else\n    #define LD_V1 "ld.global.cs.u32"',
        '    int fast = 1;\n    #else\n    #define LD_V1 "ld.global.cs.u32"',
    )
    root = write_tree(tmp_path / "code", {"loads.cuh": code})
    assert ("ROC207", 2) in _codes(root, "loads.cuh")


# fp16 helpers for architectures with native half math, called only by a specialisation the `.cu` file keeps off ROCm.
_HELPERS = """
    #pragma once
    template <typename T>
    __device__ void overlaps(const T* a, T* out) { out[0] = a[0]; }
    #if __CUDA_ARCH__ >= 530
    __device__ __forceinline__ __half half_area(const __half w, const __half h) { return __hmul(w, h); }
    __device__ void overlaps_half(const __half* a, __half* out) { out[0] = half_area(a[0], a[1]); }
    #endif
    """
_CALLER = """
    #include "helpers.cuh"
    template <>
    __global__ void run<__half>(const __half* a, __half* out) {
    #ifndef USE_ROCM
      overlaps_half(a, out);
    #else
      overlaps(a, out);
    #endif
    }
    """


def test_functions_called_only_where_rocm_never_compiles_make_their_arms_test_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"helpers.cuh": _HELPERS, "ops.cu": _CALLER})
    assert _codes(root, "helpers.cuh") == []
    # Called where ROCm compiles too: the test decides what ROCm gets.
    called = _CALLER.replace("      overlaps(a, out);", "      overlaps_half(a, out);")
    root = write_tree(tmp_path / "called", {"helpers.cuh": _HELPERS, "ops.cu": called})
    assert ("ROC207", 4) in _codes(root, "helpers.cuh")
    # A host function another translation unit may call without seeing the header: not looked for.
    host = _HELPERS.replace("__device__ void overlaps_half", "void overlaps_half")
    root = write_tree(tmp_path / "host", {"helpers.cuh": host, "ops.cu": _CALLER})
    assert ("ROC207", 4) in _codes(root, "helpers.cuh")
