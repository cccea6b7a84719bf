"""Gates the C++ project model derives through a project's own macros and `#error`s (rocmlint/cuda/project.py):
a macro defined only under another learned macro, and a header that stops every ROCm build that compiles it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine

# A ballot stored in 32 bits (ROC201 on every build that compiles it).
_BALLOT_KERNEL = """
    #pragma once
    __device__ inline unsigned int voters(int x) {
      unsigned int mask = __ballot_sync(0xffffffffu, x);
      return mask;
    }
    """

# A bundled library's configuration: its CUDA atomics need the CUDA option and nvcc, its HIP ones the HIP option
# and HIP-Clang. Which option is NVIDIA's is learned first (its ROCm twin), the derived macro after.
_CONFIG = """
    #pragma once
    #if defined(LIB_ENABLE_CUDA) && defined(__CUDACC__)
    #define LIB_HAVE_CUDA_ATOMICS
    #endif
    #if defined(LIB_ENABLE_HIP) && defined(__HIPCC__)
    #define LIB_HAVE_HIP_ATOMICS
    #endif
    """


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_a_header_included_under_a_macro_derived_from_an_nvidia_option_is_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "lib/config.hpp": _CONFIG,
            "lib/ops.hpp": """
                #pragma once
                #include "config.hpp"
                #ifdef LIB_HAVE_CUDA_ATOMICS
                #include "ops_cuda.hpp"
                #endif
                #ifdef LIB_HAVE_HIP_ATOMICS
                #include "ops_hip.hpp"
                #endif
                """,
            "lib/ops_cuda.hpp": _BALLOT_KERNEL,
            "lib/ops_hip.hpp": "#pragma once\n",
            "src/use.cpp": '#include "../lib/ops.hpp"\n',
        },
    )
    project = CudaProject.build(root)
    assert project.learned["LIB_ENABLE_CUDA"].vendor == "nvidia"
    assert project.learned["LIB_HAVE_CUDA_ATOMICS"].vendor == "nvidia"
    view = project.view(str(root / "lib/ops_cuda.hpp"))
    assert view.base.on_rocm is False
    assert view.base_evidence == "lib/ops.hpp:4: included only where ROCm does not compile"
    assert _codes(root, "lib/ops_cuda.hpp") == []


def test_a_header_under_a_macro_the_rocm_build_may_define_stays_checked(tmp_path):
    # The derived macro needs only a switch of no vendor: ROCm may define it, the header is still ROCm's.
    root = write_tree(
        tmp_path,
        {
            "lib/config.hpp": "#pragma once\n#if defined(LIB_FAST_PATH)\n#define LIB_HAVE_FAST_ATOMICS\n#endif\n",
            "lib/ops.hpp": '#pragma once\n#include "config.hpp"\n#ifdef LIB_HAVE_FAST_ATOMICS\n#include "ops_fast.hpp"\n#endif\n',
            "lib/ops_fast.hpp": _BALLOT_KERNEL,
            "src/use.cpp": '#include "../lib/ops.hpp"\n',
        },
    )
    assert CudaProject.build(root).view(str(root / "lib/ops_fast.hpp")).base.on_rocm is not False
    assert "ROC201" in [code for code, _ in _codes(root, "lib/ops_fast.hpp")]


def test_a_header_that_errors_unless_an_nvidia_option_is_set_is_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "lib/config.hpp": _CONFIG,
            "lib/setup_cuda.hpp": """
                #ifndef LIB_SETUP_CUDA_HPP
                #define LIB_SETUP_CUDA_HPP
                #if !defined(LIB_ENABLE_CUDA)
                #error "LIB_ENABLE_CUDA was not defined, but setup_cuda.hpp was included anyway"
                #endif
                #include "cuda_helpers.hpp"
                __device__ inline unsigned int voters(int x) {
                  unsigned int mask = __ballot_sync(0xffffffffu, x);
                  return mask;
                }
                #endif
                """,
            "lib/cuda_helpers.hpp": _BALLOT_KERNEL,
        },
    )
    project = CudaProject.build(root)
    view = project.view(str(root / "lib/setup_cuda.hpp"))
    assert view.base.on_rocm is False
    assert view.base_evidence == "lib/setup_cuda.hpp:4: #error wherever ROCm compiles it"
    assert _codes(root, "lib/setup_cuda.hpp") == []
    # What only that header includes is the option's code too.
    assert project.view(str(root / "lib/cuda_helpers.hpp")).base.on_rocm is False


def test_an_error_the_rocm_build_may_skip_keeps_the_header(tmp_path):
    # An option of no vendor, an `#error` only NVIDIA reaches, or one refusing a compiler: ROCm may compile the header.
    root = write_tree(
        tmp_path,
        {
            "lib/config.hpp": _CONFIG,
            "lib/needs_option.hpp": '#pragma once\n#if !defined(LIB_OPTION)\n#error "set LIB_OPTION"\n#endif\n'
            + textwrap.dedent(_BALLOT_KERNEL).replace("#pragma once\n", ""),
            "lib/not_on_nvidia.hpp": '#pragma once\n#if defined(LIB_ENABLE_CUDA)\n#error "not for CUDA"\n#endif\n'
            + textwrap.dedent(_BALLOT_KERNEL).replace("#pragma once\n", ""),
            # An `#error` refusing a compiler pass, not a build: ROCm's host compiler still reads the header.
            "lib/host_only.hpp": '#pragma once\n#ifdef __HIPCC__\n#error "host code only"\n#endif\n'
            + textwrap.dedent(_BALLOT_KERNEL).replace("#pragma once\n", ""),
        },
    )
    project = CudaProject.build(root)
    for header in ("lib/needs_option.hpp", "lib/not_on_nvidia.hpp", "lib/host_only.hpp"):
        assert project.view(str(root / header)).base.on_rocm is not False, header
        assert "ROC201" in [code for code, _ in _codes(root, header)], header
