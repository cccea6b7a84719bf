"""Configurations a project's CMake build refuses with ROCm: the option alone (its blocks and sources are NVIDIA's) or a
combination of configure-header switches (no ROCm compile sees it), and what one reading per such compile decides."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cuda.build_files import cmake_facts
from rocmlint.cuda.cmake_refusals import configure_header_switches, rocm_refusals
from rocmlint.engine import Engine


def _refusals(cmake: str, switches: frozenset[str]) -> list[frozenset[tuple[str, bool]]]:
    return [states for states, _ in rocm_refusals({"/p/CMakeLists.txt": textwrap.dedent(cmake)}, switches, "/p")]


def test_configure_header_switches_are_plain_cmakedefines():
    header = "#cmakedefine XYZ_UM\n#cmakedefine01 XYZ_COUNT\n  #  cmakedefine XYZ_THIN 1\n// #cmakedefine XYZ_OFF\n"
    assert configure_header_switches(header) == {"XYZ_UM", "XYZ_THIN"}


def test_a_refusal_without_cuda_or_with_hip_forbids_its_switches_together_on_rocm():
    switches = frozenset({"XYZ_UM", "XYZ_THIN", "XYZ_CVODE", "XYZ_SYCL"})
    cmake = """
        if (XYZ_UM AND NOT ENABLE_CUDA AND NOT XYZ_THIN)
          message(FATAL_ERROR "XYZ_UM requires ENABLE_CUDA or XYZ_THIN")
        endif()
        if(XYZ_CVODE)
          if(XYZ_HIP_ENABLED)
            message(FATAL_ERROR "CVODE + HIP is not supported")
          endif()
        endif()
        if(XYZ_SYCL AND ENABLE_HIP)
          message(FATAL_ERROR "SYCL / HIP are mutually exclusive")
        endif()
    """
    assert _refusals(cmake, switches) == [
        frozenset({("XYZ_UM", True), ("XYZ_THIN", False)}),
        frozenset({("XYZ_CVODE", True)}),
        frozenset({("XYZ_SYCL", True)}),
    ]
    # The `else()` of a one-option test: `if(XYZ_CUDSS) if(USE_CUDA) ... else() message(FATAL_ERROR ...)`.
    nested = 'if(XYZ_UM)\n  if(USE_CUDA)\n    find_package(X)\n  else()\n    message(FATAL_ERROR "needs CUDA")\n  endif()\nendif()\n'
    assert _refusals(nested, switches) == [frozenset({("XYZ_UM", True)})]


def test_refusals_that_may_stop_fewer_configurations_are_left_out():
    switches = frozenset({"XYZ_UM", "XYZ_GPU"})
    for cmake in (
        'if(XYZ_UM AND ENABLE_CUDA)\n  message(FATAL_ERROR "not with CUDA")\nendif()\n',  # an NVIDIA configuration
        'if(XYZ_UM AND NOT XYZ_OTHER AND NOT ENABLE_CUDA)\n  message(FATAL_ERROR "x")\nendif()\n',  # no header's switch
        'if(XYZ_UM OR NOT ENABLE_CUDA)\n  message(FATAL_ERROR "x")\nendif()\n',
        'if(XYZ_UM AND NOT ENABLE_CUDA)\n  message(WARNING "x")\nendif()\n',
        'function(check)\n  if(XYZ_UM AND NOT ENABLE_CUDA)\n    message(FATAL_ERROR "x")\n  endif()\nendfunction()\n',
        'if(XYZ_UM AND NOT ENABLE_CUDA)\nelse()\n  message(FATAL_ERROR "x")\nendif()\n',
        # `else()` after an `elseif()`: neither CUDA nor HIP, which says nothing of a ROCm build.
        'if(XYZ_GPU)\n  if(XYZ_USE_CUDA)\n  elseif(XYZ_USE_HIP)\n  else()\n    message(FATAL_ERROR "x")\n  endif()\nendif()\n',
        'if(XYZ_UM STREQUAL "ON" AND NOT ENABLE_CUDA)\n  message(FATAL_ERROR "x")\nendif()\n',
    ):
        assert _refusals(cmake, switches) == [], cmake


def test_an_option_refused_inside_a_rocm_test_opens_nvidia_blocks():
    facts = cmake_facts(
        "CMakeLists.txt",
        textwrap.dedent(
            """
            if(XYZ_CVODE)
              if(XYZ_HIP_ENABLED)
                message(FATAL_ERROR "CVODE + HIP is not supported")
              endif()
              add_definitions(-DXYZ_HAVE_CVODE)
            endif()
            if(XYZ_BUILD_TESTS AND XYZ_SLOW)
              if(XYZ_HIP_ENABLED)
                message(FATAL_ERROR "slow tests need CUDA")
              endif()
            endif()
            if(XYZ_SLOW)
              add_definitions(-DXYZ_HAVE_SLOW)
            endif()
            """
        ),
    )
    # Only an option every arm around the refusal tests alone is refused: XYZ_SLOW is refused with XYZ_BUILD_TESTS.
    assert [(d.name, d.vendor) for d in facts.defines] == [("XYZ_HAVE_CVODE", "nvidia"), ("XYZ_HAVE_SLOW", None)]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


_UNIFIED_MEMORY = """
    #include "config.hpp"
    #if defined(XYZ_UM)
    #if !defined(XYZ_THIN)
    #include <cuda_runtime_api.h>
    #endif
    #endif
    #if defined(XYZ_ENABLE_HIP)
    #include <hip/hip_runtime_api.h>
    #endif
"""


def test_code_only_a_refused_configuration_compiles_is_not_reported(tmp_path):
    files = {
        "CMakeLists.txt": """
            option(XYZ_UM "unified memory" Off)
            if (XYZ_UM AND NOT ENABLE_CUDA AND NOT XYZ_THIN)
              message(FATAL_ERROR "XYZ_UM requires ENABLE_CUDA or XYZ_THIN")
            endif()
            configure_file(src/config.hpp.in config.hpp)
            add_library(xyz src/um.cpp)
        """,
        "src/config.hpp.in": "#cmakedefine XYZ_UM\n#cmakedefine XYZ_THIN\n#cmakedefine XYZ_ENABLE_HIP\n",
        "src/um.hpp": _UNIFIED_MEMORY,
        "src/um.cpp": '#include "um.hpp"\n',
    }
    _write(tmp_path, files)
    report = Engine().check_path(tmp_path / "src/um.hpp", Settings(root=tmp_path))
    assert [(d.code, d.location.line) for d in report.diagnostics] == []
    assert report.gated_notes == [
        f"{tmp_path / 'src/um.hpp'}:4: ROC204 not reported: no ROCm compile enters it (the build refuses `XYZ_THIN` "
        "off and `XYZ_UM` on with ROCm (CMakeLists.txt:3))"
    ]
    # Without the refusal a ROCm build may turn XYZ_UM on alone: the header is reported.
    unrefused = tmp_path / "unrefused"
    _write(
        unrefused,
        {**files, "CMakeLists.txt": "configure_file(src/config.hpp.in config.hpp)\nadd_library(xyz src/um.cpp)\n"},
    )
    report = Engine().check_path(unrefused / "src/um.hpp", Settings(root=unrefused))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC204", 4)]


def test_code_no_hip_clang_pass_compiles_is_not_reported(tmp_path):
    files = {
        "src/macros.hpp": """
            #if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
            #define XYZ_DEVICE_COMPILE
            #endif
            #if defined(XYZ_DEVICE_COMPILE)
            #if !defined(NDEBUG) || defined(__HIP_DEVICE_COMPILE__)
            #define XYZ_ERROR_IF(x) assert(!(x))
            #else
            #define XYZ_ERROR_IF(x) do { if (x) { asm("trap;"); } } while (false)
            #endif
            #endif
        """,
        "src/atomics.hpp": """
            #if defined(__HIP_ARCH__) && __HIP_ARCH__ < 600
            __device__ double atomicAdd(double* address, double val) { return *address += val; }
            #endif
        """,
        # Without the file's own device-pass macro around it, the host pass takes the `#else` when NDEBUG is defined.
        "src/host.hpp": """
            #if !defined(NDEBUG) || defined(__HIP_DEVICE_COMPILE__)
            #define XYZ_ERROR_IF(x) assert(!(x))
            #else
            #define XYZ_ERROR_IF(x) do { if (x) { asm("trap;"); } } while (false)
            #endif
        """,
    }
    _write(tmp_path, files)
    macros = Engine().check_path(tmp_path / "src/macros.hpp", Settings(root=tmp_path))
    assert macros.diagnostics == []
    assert macros.gated_notes == [
        f"{tmp_path / 'src/macros.hpp'}:8: ROC203 not reported: no ROCm compile enters it (HIP-Clang's host pass "
        "leaves `__HIP_DEVICE_COMPILE__` undefined, its device passes define it)"
    ]
    atomics = Engine().check_path(tmp_path / "src/atomics.hpp", Settings(root=tmp_path))
    assert atomics.diagnostics == []
    assert atomics.gated_notes == [
        f"{tmp_path / 'src/atomics.hpp'}:2: ROC243 not reported: no HIP-Clang pass defines `__HIP_ARCH__`"
    ]
    host = Engine().check_path(tmp_path / "src/host.hpp", Settings(root=tmp_path))
    assert [(d.code, d.location.line) for d in host.diagnostics] == [("ROC203", 4)]
