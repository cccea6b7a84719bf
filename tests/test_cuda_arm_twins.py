"""Tests of `#ifdef __CUDA_ARCH__` chains whose arms compute the same thing two ways (rocmlint/cuda/arm_twins.py,
through conditions.py `nvcc_macros_change_no_rocm_code`): a per-thread intrinsic in the arm nvcc's device pass takes, a
portable twin in the arm HIP-Clang's device pass takes instead. Each has its counterpart where ROCm loses something,
which stays reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.data import load
from tests.test_cuda_project import _codes, write_tree


def _reported(tmp_path: Path, header: str, rule: str = "ROC213") -> list[int]:
    root = write_tree(tmp_path / "p", {"bits.cuh": header, "k.cu": '#include "bits.cuh"\n'})
    return [line for code, line in _codes(root, "bits.cuh") if code == rule]


_CLZ = """
    #pragma once
    #include <cstdint>
    __host__ __device__ inline int leading_zeros(uint32_t x) {
    #ifdef __CUDA_ARCH__
      return __clz(x);
    #elif defined(__GNUC__) || defined(__clang__)
      if (x == 0) return 32;
      return __builtin_clz(x);
    #else
      return portable_clz(x);
    #endif
    }
    """


def test_an_intrinsic_whose_twin_is_a_builtin_is_no_hazard(tmp_path: Path):
    # HIP-Clang is clang: its device pass takes the `__builtin_clz` arm, which AMDGPU compiles, with the same result.
    assert _reported(tmp_path, _CLZ) == []


def test_a_twin_for_gcc_alone_leaves_rocm_in_an_arm_nobody_checked(tmp_path: Path):
    # ROCm's device pass would take the third arm, a project function whose device use nothing shows.
    gcc_only = _CLZ.replace("defined(__GNUC__) || defined(__clang__)", "defined(__GNUC__) && !defined(__clang__)")
    assert _reported(tmp_path, gcc_only) == [4]


@pytest.mark.parametrize(
    ("device", "host"),
    [
        ("return __umulhi(bits, n);", "return ((unsigned long long)n * bits) >> 32;"),
        ("return __ffs(x) - 1;", "return std::countr_zero(x);"),
        ("return __expf(x) * scale;", "return std::exp(x) * scale;"),
        ("return __ldg(&table[i]);", "return table[i];"),
        ("return fminf(fmaxf(x, 0.f), 1.f);", "return std::min(std::max(x, 0.f), 1.f);"),
    ],
)
def test_per_thread_intrinsics_with_a_portable_twin(tmp_path: Path, device: str, host: str):
    header = f"""
        #pragma once
        __host__ __device__ inline auto twin(unsigned x, unsigned bits, unsigned n, float scale, const float* table, int i) {{
        #ifdef __CUDA_ARCH__
          {device}
        #else
          {host}
        #endif
        }}
        """
    assert _reported(tmp_path, header) == []


@pytest.mark.parametrize(
    ("device", "host"),
    [
        # The host arm is a stub: it ignores what the intrinsic reads.
        ("return __popc(mask);", "return 0;"),
        # The device arm depends on the thread's position, which the host arm cannot know.
        ("return __clz(x) + threadIdx.x;", "return __builtin_clz(x);"),
        # A warp-wide intrinsic is no per-thread computation.
        ("return __popc(__ballot_sync(0xffffffff, x));", "return __builtin_popcount(x);"),
        # The host arm calls what nothing shows compiles for the device, or writes to the host's streams.
        ("return __clz(x);", "return clz_table_lookup(x);"),
        ('printf("%u", __clz(x)); return 0;', 'fprintf(stderr, "%u", x); return 0;'),
        ("return __clz(x);", 'if (x == 0) throw std::domain_error("zero"); return __builtin_clz(x);'),
        ("return __clz(x);", "return __builtin_ia32_lzcnt_u32(x);"),
        # Inline assembly is no intrinsic HIP has.
        ('unsigned r; asm("clz.b32 %0, %1;" : "=r"(r) : "r"(x)); return __clz(r);', "return __builtin_clz(x);"),
    ],
)
def test_arms_that_are_no_twins_stay_reported(tmp_path: Path, device: str, host: str):
    header = f"""
        #pragma once
        __host__ __device__ inline unsigned twin(unsigned x, unsigned mask) {{
        #ifdef __CUDA_ARCH__
          {device}
        #else
          {host}
        #endif
        }}
        """
    assert _reported(tmp_path, header) == [3]


def test_a_device_arm_with_no_arm_for_rocm_stays_reported(tmp_path: Path):
    header = """
        #pragma once
        __host__ __device__ inline unsigned spread(unsigned x) {
          unsigned hint = x;
        #ifdef __CUDA_ARCH__
          hint += __clz(x);
        #endif
          return hint;
        }
        """
    assert _reported(tmp_path, header) == [4]


_MATH = """
    #pragma once
    #include <cmath>
    namespace xyz::math {
    #ifdef __CUDA_ARCH__
    __device__ inline float exp(float x) { return ::expf(x); }
    __device__ inline double exp(double x) { return ::exp(x); }
    #else
    using std::exp;
    #endif
    }
    """


def test_device_overloads_whose_twin_brings_in_the_same_names_from_std(tmp_path: Path):
    # HIP-Clang's `<cmath>` wrappers make `std::exp` callable from device code.
    assert _reported(tmp_path, _MATH) == []


def test_device_overloads_of_a_name_the_other_arm_does_not_declare_stay_reported(tmp_path: Path):
    assert _reported(tmp_path, _MATH.replace("using std::exp;", "using std::log;")) == [4]


def test_an_architecture_comparison_whose_rocm_arm_is_the_plain_load(tmp_path: Path):
    # ROC207: `__ldg` on sm_35 and newer; ROCm reads through the pointer, which is what HIP's `__ldg` does.
    header = """
        #pragma once
        template <typename T>
        __device__ __forceinline__ T read_only_load(const T* ptr) {
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 350
          return __ldg(ptr);
        #else
          return *ptr;
        #endif
        }
        """
    assert _reported(tmp_path, header, "ROC207") == []
    assert _reported(tmp_path, header.replace("return *ptr;", "return T();"), "ROC207") == [4]


def test_the_table_holds_no_warp_wide_intrinsic_nor_one_hip_lacks():
    intrinsics = set(load("per_thread_intrinsics")["intrinsics"])
    warp_wide = ("__shfl", "__ballot", "__activemask", "__any", "__all", "__match", "__syncwarp", "__reduce")
    assert not [name for name in intrinsics if name.startswith(warp_wide)]
    assert not intrinsics & set(load("hip_undeclared")["names"])
