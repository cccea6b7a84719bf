"""A capability test in a project's hand-written HIP twin of one of its CUDA files (rocmlint/cuda/project.py
`_apart_from_cuda_twin`, asked through `CudaContext.rewritten_for_amd`): where the CUDA file tests `major >= 8` and
its HIP twin `major >= 10`, the HIP backend was rewritten for the GFX IP numbers an AMD GPU reports. A test the
twin shares with the CUDA file (a hipified copy) is still reported, as is one in a HIP file with no CUDA twin."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

_CUDA_UTIL = """
    #pragma once
    static inline bool cudaSupportsDevice(int dev) {
      int major;
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      return major >= 8;
    }
    """
_HIP_UTIL = """
    #pragma once
    static inline bool hipSupportsDevice(int dev) {
      int major;
      hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, dev);
      return major >= 10;
    }
    """


def test_a_test_the_hip_twin_rewrote_for_gfx_ip_is_not_reported(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"device/cuda/util.h": _CUDA_UTIL, "device/hip/util.h": _HIP_UTIL})
    assert _codes(root, "device/hip/util.h") == []
    assert ("ROC229", 5) in _codes(root, "device/cuda/util.h")


def test_a_test_shared_with_the_cuda_file_or_without_a_twin_is_reported(tmp_path: Path):
    copied = _HIP_UTIL.replace("major >= 10", "major >= 8")
    root = write_tree(tmp_path / "copy", {"device/cuda/util.h": _CUDA_UTIL, "device/hip/util.h": copied})
    assert ("ROC229", 5) in _codes(root, "device/hip/util.h")
    root = write_tree(tmp_path / "alone", {"device/hip/util.h": _HIP_UTIL})
    assert ("ROC229", 5) in _codes(root, "device/hip/util.h")
