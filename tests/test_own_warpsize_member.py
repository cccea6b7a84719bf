"""A project's own `warpSize`, a class member its header sets per platform (`static constexpr int warpSize = 64;`
under HIPCC), read as `Config::warpSize` across a tree: a constant on ROCm and on the host, not HIP's built-in
(ROC209). `warpSize` alone, and `::warpSize`, still name the built-in."""

from __future__ import annotations

from pathlib import Path

from rocmlint.rules.roc209_warpsize_constexpr import WarpsizeConstexpr
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.rule import Invalid
from rocmlint.testing import check_invalid

_CONFIG = """
    #pragma once
    namespace lib {
    struct DeviceTraits {
    #if defined(__HIPCC__)
      static constexpr int warpSize = 64;
    #else
      static constexpr int warpSize = 32;
    #endif
      static_assert(warpSize == 32 || warpSize == 64, "warp size has to be 32 or 64");
    };
    }
    """

_KERNELS = """
    #include "config.cuh"
    namespace lib {
    struct TravConfig {
      static constexpr unsigned memPerWarp = 256 * DeviceTraits::warpSize;
      static constexpr unsigned targetSize = lib::DeviceTraits::warpSize;
    };
    template <int groupSize>
    __global__ void split(const float* x, float* out) {
      __shared__ float masks[groupSize / DeviceTraits::warpSize];
      out[threadIdx.x] = x[threadIdx.x] + masks[0];
    }
    void compute(const float* x, float* out, int n) {
      unsigned gridSize = n * DeviceTraits::warpSize;
      split<2 * DeviceTraits::warpSize><<<gridSize, 256>>>(x, out);
    }
    __global__ void builtin(float* out) {
      __shared__ float partial[1024 / warpSize];
      constexpr int lanes = ::warpSize;
      out[threadIdx.x] = partial[0] * lanes;
    }
    }
    """


def _roc209_lines(root: Path, name: str) -> list[int]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [d.location.line for d in report.diagnostics if d.code == "ROC209"]


def test_a_class_member_named_warpsize_is_the_projects_constant(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"lib/config.cuh": _CONFIG, "lib/kernels.cu": _KERNELS})
    assert _roc209_lines(root, "lib/kernels.cu") == [17, 18]  # the built-in in `builtin` only
    assert _roc209_lines(root, "lib/config.cuh") == []


def test_the_fix_replaces_the_builtin_and_keeps_the_member() -> None:
    """The fix writes the target's wave size for HIP's `warpSize` only: `Tile::warpSize` is already a constant."""
    example = Invalid(
        """
        template <int kWarp, int kTile>
        __device__ float reduce(float v);
        __global__ void k(float* x) {
          x[0] = reduce<warpSize, Tile::warpSize>(x[threadIdx.x]);
        }
        """,
        expect=("4:17-4:25",),
        message="a template argument",
        fixed="""
        template <int kWarp, int kTile>
        __device__ float reduce(float v);
        __global__ void k(float* x) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
          x[0] = reduce<64, Tile::warpSize>(x[threadIdx.x]);
          #else
          x[0] = reduce<32, Tile::warpSize>(x[threadIdx.x]);
          #endif
        #else
          x[0] = reduce<warpSize, Tile::warpSize>(x[threadIdx.x]);
        #endif
        }
        """,
    )
    problems = check_invalid(WarpsizeConstexpr, example)
    assert not problems, "\n".join(problems)
