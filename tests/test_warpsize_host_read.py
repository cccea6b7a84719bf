"""VALID and INVALID examples of ROC209's host-side `warpSize` reads (the module has no room for more examples),
checked the same way as the module's own (tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc209_warpsize_constexpr import WarpsizeConstexpr

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # Device code, however its head is spelled (a macro for `__device__`, a `__device__` lambda in host code); a
    # host function that launches nothing is not known to be host code.
    Valid(
        """
        #define DEVICE_INLINE __device__ inline
        #define WS warpSize
        DEVICE_INLINE int lanes() { return warpSize; }
        template <typename T> C10_DEVICE T reduce(T v) { return v + WS; }
        void fill(float* x, int n) {
          thrust::for_each(thrust::device, x, x + n, [=] __device__ (float& v) { v = warpSize; });
          k<<<1, 64>>>(x);
        }
        """,
    ),
    # The device pass's wave size read in device code, where it is a constant of the target.
    Valid(
        """
        #define BNB_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
        __global__ void k(float* x) {
          __shared__ float partial[1024 / BNB_WARP_SIZE];
          if (BNB_WARP_SIZE == 64) x[threadIdx.x] = partial[0];
        }
        void launch(float* x) { k<<<1, 256>>>(x); }
        """,
    ),
    # The host asks the runtime for the warp size; a `warpSize` of the code's own shadows HIP's.
    Valid(
        """
        void launch(float* x, int m, int warpSize) {
          int device_warp = 0;
          hipDeviceGetAttribute(&device_warp, hipDeviceAttributeWarpSize, 0);
          int blocks = device_warp == 64 ? (m + 1) / 2 : (m + 3) / 4;
          blocks += warpSize;
          hipLaunchKernelGGL(k, dim3(blocks), dim3(128), 0, 0, x);
        }
        """,
    ),
)
INVALID = (
    # bitsandbytes' CMake HIP dispatch: the macro follows the device target, the host pass has none.
    Invalid(
        """
        #if BNB_HIP
        #ifdef __AMDGCN_WAVEFRONT_SIZE
        #define BNB_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
        #else
        #define BNB_WARP_SIZE 64
        #endif
        #else
        #define BNB_WARP_SIZE 32
        #endif
        template <typename T> void gemv(int m, T* a, cudaStream_t stream) {
          int num_blocks = (m + 3) / 4;
          if (BNB_WARP_SIZE == 64) num_blocks = (m + 1) / 2;
          kgemv<T, 128><<<num_blocks, 128, 0, stream>>>(m, a);
        }
        """,
        expect=("12:7-12:20",),
        message="`BNB_WARP_SIZE` (the device pass's wave size) read in host code",
    ),
    # bitsandbytes' hipified gemv dispatch: the host pass has no wave size to read.
    Invalid(
        """
        #define WARP_THREADS warpSize
        template <typename T> void gemv(int m, T* a, hipStream_t stream) {
          int num_blocks = (m + 3) / 4;
          if (warpSize == 64) {
            num_blocks = (m + 1) / 2;
          }
          int rows = m / WARP_THREADS;
          hipLaunchKernelGGL((k<T, 128>), dim3(num_blocks), dim3(128), 0, stream, m, a, rows);
        }
        """,
        expect=("4:7-4:15", "7:18-7:30"),
        message="read in host code",
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid_example_is_not_reported(example: Valid) -> None:
    problems = check_valid(WarpsizeConstexpr, example)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("example", INVALID)
def test_invalid_example_is_reported(example: Invalid) -> None:
    problems = check_invalid(WarpsizeConstexpr, example)
    assert not problems, "\n".join(problems)
