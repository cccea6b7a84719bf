"""Tests of nvcc's compiler macros that only work around nvcc (rocmlint/cuda/conditions.py `works_around_nvcc`,
`nvcc_macros_change_no_rocm_code`, `arm_outcomes_agree`): HIP-Clang is right to take the arm every other compiler
takes. Each has its twin where the arm nvcc takes holds CUDA code ROCm silently loses, which stays reported."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

_COMPILER = """
    #pragma once
    #if defined(_MSC_VER)
    #define XYZ_MSVC _MSC_VER
    #endif
    #if defined(__NVCC__) || defined(__CUDACC__)
    #define XYZ_CUDA_VERSION (__CUDACC_VER_MAJOR__*100 + __CUDACC_VER_MINOR__)
    #endif
    """


def _roc214(root: Path, name: str) -> list[int]:
    return [line for code, line in _codes(root, name) if code == "ROC214"]


# --- an old nvcc's bug, tested through the project's macro for nvcc's version ---------------------------------------

_TRAITS = """
    #pragma once
    #include "compiler.hpp"
    #if defined(__NVCC__) && defined(XYZ_CUDA_VERSION) && (XYZ_CUDA_VERSION < 1102)
    template <typename T> struct nothrow_invocable : invocable<T> {};
    #else
    template <typename T> struct nothrow_invocable : nothrow_invocable_impl<T> {};
    #endif
    """


def test_a_workaround_for_an_old_nvcc_through_the_projects_version_macro_is_no_hazard(tmp_path: Path):
    root = write_tree(
        tmp_path / "p", {"compiler.hpp": _COMPILER, "traits.hpp": _TRAITS, "k.cu": '#include "traits.hpp"\n'}
    )
    assert _roc214(root, "traits.hpp") == []


def test_a_feature_only_a_recent_nvcc_gets_is_still_reported(tmp_path: Path):
    recent = _TRAITS.replace("(XYZ_CUDA_VERSION < 1102)", "(XYZ_CUDA_VERSION >= 1102)")
    root = write_tree(
        tmp_path / "p", {"compiler.hpp": _COMPILER, "traits.hpp": recent, "k.cu": '#include "traits.hpp"\n'}
    )
    assert _roc214(root, "traits.hpp") == [3]


def test_an_or_group_every_recent_nvcc_satisfies_decides_nothing(tmp_path: Path):
    variadic = """
        #if defined(__NVCC__)
        #define XYZ_COMP_NVCC ((__CUDACC_VER_MAJOR__ * 10000) + (__CUDACC_VER_MINOR__ * 100))
        #else
        #define XYZ_COMP_NVCC 0
        #endif
        #if XYZ_CPP >= 11 && (!defined(__NVCC__) || !XYZ_ARCH_ARM || (XYZ_COMP_NVCC >= 80000))
        #define XYZ_HAS_VARIADIC_TEMPLATES 1
        #else
        #define XYZ_HAS_VARIADIC_TEMPLATES 0
        #endif
        """
    root = write_tree(tmp_path / "p", {"macros.h": variadic, "k.cu": '#include "macros.h"\n'})
    assert _roc214(root, "macros.h") == []
    newest = variadic.replace("(XYZ_COMP_NVCC >= 80000)", "(XYZ_COMP_NVCC >= 130000)")
    root = write_tree(tmp_path / "q", {"macros.h": newest, "k.cu": '#include "macros.h"\n'})
    assert _roc214(root, "macros.h") == [6]


# --- compiler identification ---------------------------------------------------------------------------------------


def test_nvccs_version_recorded_with_a_zero_for_other_compilers_is_identification(tmp_path: Path):
    macros = """
        #if defined(__NVCC__)
        #if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ >= 9)
          #define XYZ_COMP_NVCC ((__CUDACC_VER_MAJOR__ * 10000) + (__CUDACC_VER_MINOR__ * 100))
        #elif defined(__CUDACC_VER__)
          #define XYZ_COMP_NVCC __CUDACC_VER__
        #else
          #error "NVCC did not define compiler version."
        #endif
        #else
          #define XYZ_COMP_NVCC 0
        #endif
        """
    root = write_tree(tmp_path / "p", {"macros.h": macros, "k.cu": '#include "macros.h"\n'})
    assert _roc214(root, "macros.h") == []
    flagged = macros.replace("#define XYZ_COMP_NVCC 0", "#define XYZ_COMP_NVCC 0\n#define XYZ_HD")
    root = write_tree(tmp_path / "q", {"macros.h": flagged, "k.cu": '#include "macros.h"\n'})
    assert _roc214(root, "macros.h") == [1]


# --- attributes nvcc rejects ---------------------------------------------------------------------------------------

_FORCEINLINE = """
    #pragma once
    #include "compiler.hpp"
    #if defined(__NVCC__) || defined(__CUDACC__)
    #define XYZ_FORCEINLINE inline
    #elif defined(XYZ_MSVC)
    #define XYZ_FORCEINLINE __forceinline
    #elif defined(__GNUC__)
    #define XYZ_FORCEINLINE inline __attribute__((__always_inline__))
    #else
    #define XYZ_FORCEINLINE inline
    #endif
    """


def test_gnu_attributes_withheld_from_nvcc_are_no_hazard(tmp_path: Path):
    visibility = """
        #if defined(_WIN32)
        #define XYZ_EXPORT __declspec(dllexport)
        #elif defined(__NVCC__) || defined(__CUDACC__)
        #define XYZ_EXPORT /* empty */
        #elif defined(XYZ_HAVE_ELF_HIDDEN_VISIBILITY)
        #define XYZ_EXPORT __attribute__((visibility("default")))
        #endif
        """
    files = {"compiler.hpp": _COMPILER, "inline.hpp": _FORCEINLINE, "export.hpp": visibility}
    root = write_tree(tmp_path / "p", {**files, "k.cu": '#include "inline.hpp"\n#include "export.hpp"\n'})
    assert _roc214(root, "inline.hpp") == []
    assert _roc214(root, "export.hpp") == []


def test_cuda_spellings_only_nvcc_gets_are_still_reported(tmp_path: Path):
    spelled = _FORCEINLINE.replace("#define XYZ_FORCEINLINE inline", "#define XYZ_FORCEINLINE __forceinline__", 1)
    device = _FORCEINLINE.replace("inline __attribute__((__always_inline__))", "inline __attribute__((device))")
    for index, text in enumerate((spelled, device)):
        root = write_tree(
            tmp_path / str(index), {"compiler.hpp": _COMPILER, "inline.hpp": text, "k.cu": '#include "inline.hpp"\n'}
        )
        assert _roc214(root, "inline.hpp") == [3]


def test_a_windows_compiler_named_by_the_projects_own_macro_is_windows_only(tmp_path: Path):
    iterator = """
        #pragma once
        #include "compiler.hpp"
        template <typename T> struct is_iterator {
        #if defined(XYZ_MSVC) && defined(__CUDACC__)
          template <typename U> static typename U::iterator_category* test(U);
        #else
          template <typename U, typename = typename std::iterator_traits<U>::pointer> static void* test(U&&);
        #endif
        };
        """
    root = write_tree(tmp_path / "p", {"compiler.hpp": _COMPILER, "it.hpp": iterator, "k.cu": '#include "it.hpp"\n'})
    assert _roc214(root, "it.hpp") == []
    linux = iterator.replace("defined(XYZ_MSVC)", "defined(XYZ_GNU)")
    root = write_tree(tmp_path / "q", {"compiler.hpp": _COMPILER, "it.hpp": linux, "k.cu": '#include "it.hpp"\n'})
    assert _roc214(root, "it.hpp") == [4]


# --- members clang infers host and device for ----------------------------------------------------------------------

_BOUND = """
    template <typename F> struct bound {
      F f;
    #if !defined(__NVCC__) && !defined(__CUDACC__)
      bound(bound const&) = default;
      bound(bound&&) = default;
    #else
      constexpr __host__ __device__ bound(bound const& other) : f(other.f) {}
      constexpr __host__ __device__ bound(bound&& other) : f(static_cast<F&&>(other.f)) {}
    #endif
    };
    """


def test_defaulted_members_nvcc_gets_written_out_are_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"bind.hpp": _BOUND, "k.cu": '#include "bind.hpp"\n'})
    assert _roc214(root, "bind.hpp") == []


def test_a_member_other_compilers_get_declared_differently_is_still_reported(tmp_path: Path):
    host_only = _BOUND.replace("  bound(bound&&) = default;\n", "  bound(bound&&) = default;\n  void run() { f(); }\n")
    root = write_tree(tmp_path / "p", {"bind.hpp": host_only, "k.cu": '#include "bind.hpp"\n'})
    assert _roc214(root, "bind.hpp") == [3]


_WIDTH = """
    struct Params {
    #if defined (  __NVCC__ )
        __device__ static constexpr int
    #else
        static constexpr int
    #endif
        clusterWidth( int dimension )
        {
            return dimension == 1 ? 4 : -1;
        }
    };
    """


def test_a_constexpr_function_nvcc_alone_gets_marked_device_is_no_hazard(tmp_path: Path):
    # Clang makes every constexpr function host and device: HIP-Clang's kernels may call the `#else` arm's.
    root = write_tree(tmp_path / "p", {"params.h": _WIDTH, "k.cu": '#include "params.h"\n'})
    assert _roc214(root, "params.h") == []


def test_a_function_only_nvcc_makes_device_code_is_still_reported(tmp_path: Path):
    for index, changed in enumerate(
        (
            _WIDTH.replace("constexpr ", ""),  # host-only for every compiler but nvcc
            _WIDTH.replace(
                "static constexpr int\n    #endif", "static constexpr int value = 4;\n    #endif"
            ),  # a variable
            _WIDTH.replace("__device__ static", "__device__ __forceinline__ static"),  # more than an execution space
        )
    ):
        root = write_tree(tmp_path / f"p{index}", {"params.h": changed, "k.cu": '#include "params.h"\n'})
        assert _roc214(root, "params.h") == [2], changed


# --- a builtin nvcc lacks --------------------------------------------------------------------------------------------


def test_a_gcc_builtin_defined_for_nvcc_alone_is_no_hazard(tmp_path: Path):
    shim = """
        #pragma once
        /* nvcc lacks the builtin GCC's x86 headers call */
        #if defined(__NVCC__) && !defined(__builtin_ia32_prefetch)
          #define __builtin_ia32_prefetch(_p, _rw, _loc, _cache) __builtin_prefetch((_p), (_rw), (_loc))
        #endif
        """
    root = write_tree(tmp_path / "p", {"device.h": shim, "k.cu": '#include "device.h"\n'})
    assert _roc214(root, "device.h") == []
    qualifiers = shim.replace(
        "#define __builtin_ia32_prefetch(_p, _rw, _loc, _cache)", "#define XYZ_PREFETCH(_p, _rw, _loc)"
    )
    root = write_tree(tmp_path / "q", {"device.h": qualifiers, "k.cu": '#include "device.h"\n'})
    assert _roc214(root, "device.h") == [3]


# --- ROC213: the device pass's CUDA headers ---------------------------------------------------------------------------


def test_toolkit_headers_included_in_the_device_pass_are_no_hazard(tmp_path: Path):
    types = """
        #pragma once
        #ifdef __CUDA_ARCH__
        #include <cuda.h>
        #if CUDA_VERSION >= 9000
        #pragma GCC diagnostic ignored "-Wstrict-aliasing"
        #endif
        #include <cuda_fp16.h>
        #endif
        """
    root = write_tree(tmp_path / "p", {"types.h": types, "k.cu": '#include "types.h"\n'})
    assert [line for code, line in _codes(root, "types.h") if code == "ROC213"] == []
    own = types.replace("#include <cuda_fp16.h>", '#include "device_half.h"')
    root = write_tree(
        tmp_path / "q", {"types.h": own, "device_half.h": "#pragma once\n", "k.cu": '#include "types.h"\n'}
    )
    assert [line for code, line in _codes(root, "types.h") if code == "ROC213"] == [2]
