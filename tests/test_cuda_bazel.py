"""Bazel build files in the C++ project model (rocmlint/cuda/bazel_files.py): which sources and macros each vendor's
build has, read from small Bazel trees written to tmp."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cuda.bazel_files import bazel_facts, is_bazel_file
from rocmlint.cuda.project import CudaProject
from rocmlint.engine import Engine
from tests.test_cuda_project import write_tree

# A kernel with a hard-coded 32-lane mask: reported wherever ROCm compiles it.
_KERNEL = """
    __global__ void k(int* out, int v) {
      out[0] = __shfl_xor_sync(0xffffffff, v, 1);
    }
    """

_RC = """
    build --copt=-DEVERYWHERE=1
    build:cuda --define=gpu_backend=nv --copt=-DUSING_CUDA=1
    build:cuda12 --config=cuda --copt=-DFAST_PATH --config=fast
    build:fast --copt=-DVIA_CUDA_ONLY
    build:rocm --define=gpu_backend=amd --copt=-DUSING_CUDA=0
    build:rocm --copt="-DPROJ_AMD=1"  # the ROCm build's own flag
    build:cpu --copt=-DUSING_CUDA=0 --copt=-DCPU_ONLY
    """

# Settings named for neither vendor: only the .bazelrc configs that set their defines tell them apart.
_SETTINGS = """
    config_setting(name = "backend_a", define_values = {"gpu_backend": "nv"})
    config_setting(name = "backend_b", values = {"define": "gpu_backend=amd"})
    """


def _project(root: Path) -> CudaProject:
    return CudaProject.build(root)


def _rocm_base(project: CudaProject, root: Path, name: str) -> tuple[bool, str]:
    """Whether ROCm may compile the file, and the evidence when it does not."""
    view = project.view(str(root / name))
    return view.base.on_rocm is not False, view.base_evidence


def test_select_branches_decided_by_the_bazelrc_configs_that_set_their_defines(tmp_path):
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": _SETTINGS,
            "ops/BUILD": """
                cc_library(
                    name = "ops",
                    srcs = ["common.cc"] + select({
                        "//:backend_a": ["nv_kernel.cu"],
                        "//:backend_b": ["amd_kernel.cc"],
                        "//conditions:default": [],
                    }),
                )
                cc_library(
                    name = "more",
                    srcs = glob(["*.cu"], exclude = ["nv_*.cu"]) + select({"//:backend_a": glob(["nv_*.cu"])}),
                )
                """,
            "ops/common.cc": "",
            "ops/shared.cu": "",
            "ops/nv_other.cu": "",
            "ops/nv_kernel.cu": _KERNEL,
            "ops/amd_kernel.cc": "",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "ops/nv_kernel.cu") == (
        False,
        "ops/BUILD:4: the build compiles it for NVIDIA only",
    )
    assert _rocm_base(project, root, "ops/common.cc") == (True, "")
    assert _rocm_base(project, root, "ops/amd_kernel.cc") == (True, "")
    # Excluded from the glob every vendor builds, listed by the NVIDIA branch's.
    assert _rocm_base(project, root, "ops/nv_other.cu") == (
        False,
        "ops/BUILD:11: the build compiles it for NVIDIA only",
    )
    assert _rocm_base(project, root, "ops/shared.cu") == (True, "")


def test_targets_only_an_nvidia_branch_depends_on_and_tests_needing_them_are_nvidia_only(tmp_path):
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": textwrap.dedent(_SETTINGS)
            + textwrap.dedent("""
                cc_binary(
                    name = "server",
                    srcs = ["main.cc"],
                    deps = [":shared"] + select({
                        ":backend_a": ["//kernels/nv:nv_kernels"],
                        ":backend_b": ["//kernels/amd:amd_kernels"],
                    }),
                )
                cc_library(name = "shared", srcs = ["shared.cu"])
                """),
            "main.cc": "",
            "shared.cu": _KERNEL,
            "kernels/nv/BUILD": """
                cc_library(name = "nv_kernels", srcs = glob(["*.cu"], exclude = ["skip_*.cu"]), deps = ["//:shared"])
                cc_test(name = "nv_kernels_test", srcs = ["kernels_test.cc"], deps = [":nv_kernels"])
                """,
            "kernels/nv/a.cu": _KERNEL,
            "kernels/nv/skip_b.cu": _KERNEL,
            "kernels/nv/kernels_test.cc": "",
            "kernels/amd/BUILD": 'cc_library(name = "amd_kernels", srcs = ["a.cc"], deps = ["//:shared"])\n',
            "kernels/amd/a.cc": "",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "kernels/nv/a.cu") == (False, "BUILD:8: the build compiles it for NVIDIA only")
    # A test that needs an NVIDIA-only library is built for NVIDIA only.
    assert _rocm_base(project, root, "kernels/nv/kernels_test.cc") == (
        False,
        "kernels/nv/BUILD:2: the build compiles it for NVIDIA only",
    )
    # Excluded from the glob, no target builds it: it goes with its package's NVIDIA-only files.
    assert _rocm_base(project, root, "kernels/nv/skip_b.cu") == (
        False,
        "BUILD:8: the build compiles it for NVIDIA only",
    )
    # Built by both vendors' targets: ROCm compiles it.
    assert _rocm_base(project, root, "shared.cu") == (True, "")
    assert _rocm_base(project, root, "kernels/amd/a.cc") == (True, "")
    assert _codes(root, "kernels/nv/a.cu") == []
    assert _codes(root, "shared.cu") != []


def test_project_macros_are_read_by_what_they_return_not_by_their_names(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "WORKSPACE": 'workspace(name = "proj")\n',
            "tools/defs.bzl": """
                def when_enabled(if_true, if_false = []):
                    \"\"\"Named for neither vendor: the select it returns says which.\"\"\"
                    return select({
                        "@local_config_rocm//rocm:using_hipcc": if_true,
                        "//conditions:default": if_false,
                    })

                def proj_copts():
                    return ["-Wall"] + when_enabled(["-DPROJ_USE_HIP=1"], ["-DPROJ_USE_NV"])
                """,
            "BUILD": """
                load("//tools:defs.bzl", "proj_copts", on_amd = "when_enabled")
                cc_library(
                    name = "lib",
                    srcs = ["lib.cc"] + on_amd([], ["nv_only.cu"]),
                    copts = proj_copts(),
                    local_defines = on_amd(["PROJ_WAVE=" + "64"]),
                )
                """,
            "lib.cc": "",
            "nv_only.cu": _KERNEL,
        },
    )
    project = _project(root)
    learned = {name: (m.vendor, m.evidence.path, m.evidence.line) for name, m in project.learned.items()}
    assert learned["PROJ_USE_HIP"] == ("rocm", "tools/defs.bzl", 9)
    assert learned["PROJ_USE_NV"] == ("nvidia", "tools/defs.bzl", 9)
    assert learned["PROJ_WAVE"] == ("rocm", "BUILD", 6)
    assert project.learned["PROJ_WAVE"].on_rocm.value == 64  # strings joined, not lists
    assert _rocm_base(project, root, "nv_only.cu") == (False, "BUILD:4: the build compiles it for NVIDIA only")


def test_bazelrc_configs_define_macros_per_vendor(tmp_path):
    root = write_tree(tmp_path, {".bazelrc": _RC, "BUILD": _SETTINGS, "k.cu": ""})
    project = _project(root)
    learned = {name: m for name, m in project.learned.items()}
    assert learned["PROJ_AMD"].vendor == "rocm"
    assert (learned["PROJ_AMD"].evidence.path, learned["PROJ_AMD"].evidence.line) == (".bazelrc", 6)
    # `cuda12` includes `cuda`, and its name says NVIDIA anyway.
    assert learned["FAST_PATH"].vendor == "nvidia"
    assert learned["VIA_CUDA_ONLY"].vendor == "nvidia"  # only an NVIDIA config includes `fast`
    # 1 on NVIDIA, 0 on ROCm: NVIDIA's gate, defined on both; the standalone `cpu` config is neither's build.
    using_cuda = learned["USING_CUDA"]
    assert (using_cuda.vendor, using_cuda.on_rocm.value, using_cuda.on_nvidia.value) == ("nvidia", 0, 1)
    assert using_cuda.on_rocm.defined is True
    assert "CPU_ONLY" not in learned
    assert "EVERYWHERE" not in learned  # the plain `build` config is every build's


def test_unparsable_starlark_is_skipped_statement_by_statement(tmp_path):
    root = write_tree(
        tmp_path,
        {
            # A repository rule's template: only the placeholder's statement fails to parse.
            "third_party/gpus/rocm/build_defs.bzl.tpl": """
                def if_rocm(if_true, if_false = []):
                    return select({"@local_config_rocm//rocm:using_hipcc": if_true, "//conditions:default": if_false})

                def rocm_is_configured():
                    return %{rocm_is_configured}
                """,
            "BUILD": """
                load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")
                cc_library(name = "lib", srcs = if_rocm([], ["nv.cu"]))
                this is not starlark (
                """,
            "nv.cu": "",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "nv.cu")[0] is False


def test_reader_recognises_bazel_files_and_tolerates_an_empty_tree(tmp_path):
    assert is_bazel_file("a/BUILD.bazel") and is_bazel_file(".bazelrc") and is_bazel_file("x/defs.bzl")
    assert not is_bazel_file("a/BUILD.md") and not is_bazel_file("CMakeLists.txt")
    facts = bazel_facts(str(tmp_path), {str(tmp_path / "BUILD"): "cc_library(name = 'x', srcs = ['missing.cc'])"}, [])
    assert facts.sources == () and facts.defines == ()


def _codes(root: Path, name: str) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root))
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_targets_a_macro_makes_and_files_no_target_names_follow_their_package(tmp_path):
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": textwrap.dedent(_SETTINGS)
            + textwrap.dedent("""
                cc_library(name = "app", srcs = ["app.cc"], deps = select({":backend_a": ["//attn:attn"]}))
                """),
            "app.cc": "",
            "attn/defs.bzl": """
                def one_variant(size):
                    native.cc_library(name = "attn_" + str(size), srcs = ["variant.cu"], copts = ["-DSIZE=" + str(size)])

                def all_variants():
                    names = []
                    for size in [64, 128]:
                        one_variant(size)
                    return names
                """,
            "attn/BUILD": """
                load(":defs.bzl", "all_variants")
                variants = all_variants()
                cc_library(name = "attn", srcs = ["dispatch.cu"], deps = variants)
                """,
            "attn/dispatch.cu": _KERNEL,
            "attn/variant.cu": _KERNEL,
            "attn/reference.cu": _KERNEL,  # no target names it
        },
    )
    project = _project(root)
    for name in ("attn/dispatch.cu", "attn/variant.cu", "attn/reference.cu"):
        assert _rocm_base(project, root, name) == (False, "BUILD:4: the build compiles it for NVIDIA only"), name
    assert _rocm_base(project, root, "app.cc") == (True, "")


def test_a_macro_defined_outside_the_tree_splits_its_arguments_by_its_name(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "BUILD": """
                load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")
                load("@other//:defs.bzl", "wrap")
                cc_library(name = "plugin", srcs = ["plugin.cc"] + if_rocm(["amd.cc"], ["nv.cu"]) + wrap(["both.cu"]))
                # Nothing depends on it: which vendor builds it (and defines the macro) is unknown.
                cc_library(name = "vendor", defines = ["PROJ_GPU_FLAG=1"], local_defines = if_rocm(["PROJ_AMD"]))
                """,
            "plugin.cc": "",
            "amd.cc": "",
            "nv.cu": "",
            "both.cu": "",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "nv.cu") == (False, "BUILD:3: the build compiles it for NVIDIA only")
    assert _rocm_base(project, root, "both.cu") == (True, "")
    assert _rocm_base(project, root, "amd.cc") == (True, "")
    defines = {(d.name, d.vendor) for d in project.build_facts.defines}
    assert defines == {("PROJ_AMD", "rocm")}


def test_a_bazel_build_without_rocm_says_nothing(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "defs.bzl": """
                def if_cuda(if_true, if_false = []):
                    return select({"@local_config_cuda//cuda:using_nvcc": if_true, "//conditions:default": if_false})
                """,
            "BUILD": """
                load("//:defs.bzl", "if_cuda")
                cc_library(name = "lib", srcs = if_cuda(["k.cu"], ["cpu.cc"]), copts = if_cuda([], ["-DCPU_BUILD"]))
                """,
            "k.cu": "",
            "cpu.cc": "",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "k.cu") == (True, "")
    assert project.build_facts.defines == ()


def test_a_glob_of_several_patterns_matches_the_files_any_of_them_matches(tmp_path):
    """The globs of one call are tried as one pattern: a file matching a later glob (or only the whole of a longer
    one) is found, and one any exclude matches is not."""
    files = ("k1.cu", "kx.cu", "f2.cu", "f22.cu", "kernels/a/b.cu", "kernels/old/c.cu", "other.cu", "common.cc")
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": _SETTINGS,
            "ops/BUILD": """
                cc_library(
                    name = "ops",
                    srcs = ["common.cc"] + select({
                        "//:backend_a": glob(["k*.cu", "kernels/**/*.cu", "f?.cu"], exclude = ["kx.cu", "kernels/old/**"]),
                    }),
                )
                """,
            **{f"ops/{name}": "" for name in files},
        },
    )
    project = _project(root)
    nvidia_only = {name for name in files if not _rocm_base(project, root, f"ops/{name}")[0]}
    assert nvidia_only == {"k1.cu", "f2.cu", "kernels/a/b.cu"}


def _twin_packages_tree(tmp_path: Path, rocm_sources: str) -> Path:
    """A tree whose `gpu/cuda` and `gpu/rocm` packages build the GPU sources of `gpu/` for one vendor each (the ROCm
    package naming `rocm_sources`), and a `fast/` package whose runtime links the CUDA package's vendor library
    outside any `select()`, built into a module nothing depends on and tested; a library it needs a tool needs
    too."""
    return write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": textwrap.dedent(_SETTINGS)
            + textwrap.dedent("""
                cc_binary(
                    name = "server",
                    srcs = ["main.cc"],
                    deps = select({":backend_a": ["//gpu/cuda:kernels"], ":backend_b": ["//gpu/rocm:kernels"]}),
                )
                """),
            "main.cc": "",
            "gpu/BUILD": 'exports_files(["kernels.cc", "vendor.h"])\n',
            "gpu/kernels.cc": _KERNEL,
            "gpu/other.cc": "",
            "gpu/vendor.h": "",
            "gpu/cuda/BUILD": """
                cc_library(name = "vendor", hdrs = ["//gpu:vendor.h"], defines = ["GPU_CUDA"])
                cc_library(name = "kernels", srcs = ["//gpu:kernels.cc"], deps = [":vendor"])
                """,
            "gpu/rocm/BUILD": f"""
                cc_library(name = "vendor", hdrs = ["//gpu:vendor.h"], defines = ["GPU_HIP"])
                cc_library(name = "kernels", srcs = ["//gpu:{rocm_sources}"], deps = [":vendor"])
                """,
            "fast/BUILD": """
                cc_library(
                    name = "runtime",
                    srcs = ["runtime.cu"],
                    deps = [
                        ":helpers",
                        "//gpu/cuda:vendor",
                    ],
                )
                cc_library(name = "helpers", srcs = ["helpers.cc"])
                cc_library(name = "support", srcs = ["support.cc"], deps = [":runtime"])
                cc_binary(name = "fast.so", deps = [":runtime"], linkshared = True)
                cc_test(name = "fast_test", srcs = ["fast_test.cc"], deps = [":support"])
                cc_binary(name = "tool", srcs = ["tool.cc"], deps = [":helpers"])
                """,
            "fast/tool.cc": "",
            "fast/runtime.cu": _KERNEL,
            "fast/helpers.cc": "",
            "fast/support.cc": "",
            "fast/fast_test.cc": "",
        },
    )


def test_a_target_needing_the_nvidia_twin_of_a_vendor_package_pair_is_nvidia_only(tmp_path):
    """Sibling `cuda` and `rocm` packages building the same sources are each vendor's build of them: a library that
    links the CUDA package's target outside any `select()` is NVIDIA's, wherever it is linked from, and so is
    what only it and tests needing it reach. Sources both twins build, and a library it needs that a product of
    every vendor needs too, stay ROCm code."""
    root = _twin_packages_tree(tmp_path, "kernels.cc")
    project = _project(root)
    assert _rocm_base(project, root, "fast/runtime.cu") == (
        False,
        "fast/BUILD:6: the build compiles it for NVIDIA only",
    )
    # Needed by the test alone, and needing the runtime.
    assert _rocm_base(project, root, "fast/support.cc") == (
        False,
        "fast/BUILD:10: the build compiles it for NVIDIA only",
    )
    assert _rocm_base(project, root, "fast/fast_test.cc")[0] is False
    # Linked by the NVIDIA-only runtime and by a tool every vendor builds.
    assert _rocm_base(project, root, "fast/helpers.cc") == (True, "")
    assert _rocm_base(project, root, "gpu/kernels.cc") == (True, "")
    assert _codes(root, "fast/runtime.cu") == []
    assert _codes(root, "gpu/kernels.cc") != []


def test_vendor_packages_that_share_no_source_are_no_twins(tmp_path):
    """A `rocm` package building sources of its own (sharing a header only) is no ROCm build of what the `cuda`
    package builds: linking the `cuda` package's target says nothing of the vendor."""
    root = _twin_packages_tree(tmp_path, "other.cc")
    project = _project(root)
    assert _rocm_base(project, root, "fast/runtime.cu") == (True, "")
    assert _codes(root, "fast/runtime.cu") != []


def test_an_examples_own_cuda_only_cmake_project_decides_where_no_rocm_build_names_the_file(tmp_path):
    """An example's CMake project of its own that builds the CUDA language only under a CUDA option (its GPU module
    inside `if(EX_ENABLE_CUDA)`), in a project whose ROCm build is Bazel's: that module's source is NVIDIA's; the
    example's CPU module is not."""
    root = write_tree(
        tmp_path,
        {
            ".bazelrc": _RC,
            "BUILD": textwrap.dedent(_SETTINGS)
            + 'cc_library(name = "lib", srcs = select({":backend_a": ["nv.cu"], ":backend_b": ["amd.cc"]}))\n',
            "pyproject.toml": "",  # the checked root is the project's, not the example's
            "nv.cu": "",
            "amd.cc": "",
            "examples/ex/CMakeLists.txt": """
                cmake_minimum_required(VERSION 3.18)
                project(ex LANGUAGES CXX)
                option(EX_ENABLE_CUDA "CUDA examples" OFF)
                nanobind_add_module(_cpu NB_STATIC "src/cpu.cc")
                if(EX_ENABLE_CUDA)
                  enable_language(CUDA)
                  find_package(CUDAToolkit REQUIRED)
                  nanobind_add_module(_gpu NB_STATIC "src/gpu.cc")
                  target_link_libraries(_gpu PRIVATE CUDA::cudart)
                endif()
                """,
            "examples/ex/src/gpu.cc": "#include <cuda_runtime_api.h>\n",
            "examples/ex/src/cpu.cc": "#include <cuda_runtime_api.h>\n",
        },
    )
    project = _project(root)
    assert _rocm_base(project, root, "examples/ex/src/gpu.cc") == (
        False,
        "examples/ex/CMakeLists.txt:8: the build compiles it for NVIDIA only",
    )
    assert _rocm_base(project, root, "examples/ex/src/cpu.cc") == (True, "")
    assert _codes(root, "examples/ex/src/gpu.cc") == []
    assert _codes(root, "examples/ex/src/cpu.cc") != []
