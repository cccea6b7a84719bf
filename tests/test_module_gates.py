"""Module-level gates: where a module can run at all, from where the tree's modules import it
(rocmlint/python/importers.py, ProjectIndex.module_base, GateAnalyzer's `module_base` hook)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.importers import ImportIndex
from rocmlint.python.project import ProjectIndex, is_test_file
from rocmlint.vendor import EVERYWHERE, Branch

NVIDIA_ONLY = Branch(False, True)
ROCM_ONLY = Branch(True, False)
NOWHERE = Branch(False, False)  # another accelerator's code

# A module whose body holds two hazards: ROC107 (OCP FP8 dtype, line 2) and ROC113 (capability compared, line 3).
HAZARDS = """
import torch
weight = weight.to(torch.float8_e4m3fn)
use_fa3 = torch.cuda.get_device_capability()[0] >= 9
attention = "fa3" if use_fa3 else "fa2"
"""
PLATFORM = """
import torch
IS_ROCM = torch.version.hip is not None
"""


def bases(root: Path, files: dict[str, str], *modules: str) -> list[Branch]:
    """Write a tree, index it, and answer where each of `modules` can run."""
    write_tree(root, files)
    index = ImportIndex.build(root, is_test_file)
    project = ProjectIndex()
    return [project.module_base(index, str(root / module)) for module in modules]


def base(root: Path, files: dict[str, str], module: str) -> Branch:
    return bases(root, files, module)[0]


# --- one importer, one gate -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("gate", "expected"),
    [
        pytest.param("if not IS_ROCM:", NVIDIA_ONLY, id="nvidia-only"),
        pytest.param("if IS_ROCM:", ROCM_ONLY, id="rocm-only"),
        pytest.param("if torch.cuda.is_available():", EVERYWHERE, id="not-a-vendor-test"),
        pytest.param('if x.device.type == "xpu":', NOWHERE, id="other-accelerator"),
    ],
)
def test_a_module_imported_under_one_gate_runs_where_it_does(tmp_path: Path, gate: str, expected: Branch) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": f"import torch\nfrom pkg.platform import IS_ROCM\n{gate}\n    from pkg import backend\n",
        "main.py": "import pkg.select\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == expected


def test_mixed_importers_give_the_union(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/cuda_path.py": "from pkg.platform import IS_ROCM\nif not IS_ROCM:\n    import pkg.backend\n",
        "pkg/rocm_path.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import pkg.backend\n",
        "main.py": "import pkg.cuda_path\nimport pkg.rocm_path\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == EVERYWHERE


def test_an_ungated_import_anywhere_makes_it_everywhere(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": "from pkg.platform import IS_ROCM\nif not IS_ROCM:\n    from pkg.backend import weight\n",
        "pkg/tools.py": "def helper():\n    from pkg.backend import weight\n    return weight\n",
        "main.py": "import pkg.select\nimport pkg.tools\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == EVERYWHERE


def test_a_module_never_imported_runs_everywhere(tmp_path: Path) -> None:
    assert base(tmp_path, {"pkg/__init__.py": "", "pkg/script.py": HAZARDS}, "pkg/script.py") == EVERYWHERE


def test_a_platform_package_chooses_its_backend(tmp_path: Path) -> None:
    """The issue's example: `if current_platform.is_cuda(): from .backend_cuda import ...`."""
    files = {
        "pkg/__init__.py": "",
        "pkg/platforms.py": "current_platform = object()\n",
        "pkg/attention/__init__.py": """
            from pkg.platforms import current_platform

            if current_platform.is_cuda():
                from .backend_cuda import FlashBackend
            else:
                from .backend_rocm import RocmBackend
        """,
        "pkg/attention/backend_cuda.py": HAZARDS,
        "pkg/attention/backend_rocm.py": HAZARDS,
        "serve.py": "from pkg.attention import *\n",
    }
    found = bases(tmp_path, files, "pkg/attention/backend_cuda.py", "pkg/attention/backend_rocm.py")
    assert found == [NVIDIA_ONLY, ROCM_ONLY]


# --- chains and cycles ---------------------------------------------------------------------------------------------
def test_gates_carry_down_a_chain_of_module_level_imports(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/kernels.py": "from pkg import helpers\n",
        "pkg/helpers.py": HAZARDS,
        "pkg/entry.py": "from pkg.platform import IS_ROCM\nif not IS_ROCM:\n    import pkg.kernels\n",
    }
    assert bases(tmp_path, files, "pkg/kernels.py", "pkg/helpers.py") == [NVIDIA_ONLY, NVIDIA_ONLY]


def test_an_import_cycle_is_cut(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "from pkg import a\n",
        "main.py": "from pkg.platform import IS_ROCM\nif not IS_ROCM:\n    import pkg.a\n",
    }
    assert bases(tmp_path, files, "pkg/a.py", "pkg/b.py") == [NVIDIA_ONLY, NVIDIA_ONLY]


def test_a_cycle_nothing_outside_imports_is_loaded_some_way_not_seen(tmp_path: Path) -> None:
    """`import_submodule(package)` and registries load modules no import statement names: a module no chain
    of imports reaches from an entry point, whatever the gates, runs everywhere."""
    files = {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n", "pkg/b.py": "from pkg import a\n"}
    assert bases(tmp_path, files, "pkg/a.py", "pkg/b.py") == [EVERYWHERE, EVERYWHERE]


# --- the forms an import takes -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "target"),
    [
        pytest.param("from .backend import weight", "pkg/sub/backend.py", id="relative-from"),
        pytest.param("from . import backend", "pkg/sub/backend.py", id="relative-module"),
        pytest.param("from .. import rocm_tools", "pkg/rocm_tools.py", id="relative-parent-package"),
        pytest.param("from .backend import *", "pkg/sub/backend.py", id="star"),
        pytest.param("import pkg.sub.backend as b", "pkg/sub/backend.py", id="dotted-as"),
        pytest.param(
            "from pkg.sub import (\n        other,\n        backend,\n    )", "pkg/sub/backend.py", id="parenthesised"
        ),
        pytest.param('importlib.import_module("pkg.sub.backend")', "pkg/sub/backend.py", id="import-module-literal"),
        pytest.param('__import__("pkg.rocm_tools")', "pkg/rocm_tools.py", id="dunder-import-literal"),
    ],
)
def test_import_forms(tmp_path: Path, statement: str, target: str) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/rocm_tools.py": HAZARDS,
        "pkg/sub/__init__.py": "",
        "pkg/sub/other.py": "",
        "pkg/sub/backend.py": HAZARDS,
        "pkg/sub/select.py": f"import importlib\nfrom pkg.platform import IS_ROCM\nif IS_ROCM:\n    {statement}\n",
        "main.py": "import pkg.sub.select\n",
    }
    assert base(tmp_path, files, target) == ROCM_ONLY


def test_import_a_b_c_imports_the_packages_above(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/rocm/__init__.py": "",
        "pkg/rocm/kernels.py": HAZARDS,
        "main.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import pkg.rocm.kernels\n",
    }
    assert bases(tmp_path, files, "pkg/rocm/__init__.py", "pkg/rocm/kernels.py") == [ROCM_ONLY, ROCM_ONLY]


def test_only_modules_of_the_tree_count(tmp_path: Path) -> None:
    """`import backend` of a module outside the tree (a third-party package) links nothing."""
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "main.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import pkg.backend\nimport other.backend\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == ROCM_ONLY


def test_a_test_folder_without_init_imports_the_project_from_the_root(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import pkg.backend\n",
        "tests/unit/test_backend.py": "from pkg.backend import weight\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == EVERYWHERE


# --- imports that do not run, or run anyway ------------------------------------------------------------------------
def test_type_checking_imports_never_run(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": """
            from typing import TYPE_CHECKING
            from pkg.platform import IS_ROCM
            if TYPE_CHECKING:
                from pkg.backend import weight
            if IS_ROCM:
                import pkg.backend
        """,
        "main.py": "import pkg.select\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == ROCM_ONLY


def test_a_module_only_imported_for_type_checkers_is_loaded_some_way_not_seen(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.backend import weight\n",
        "main.py": "import pkg.select\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == EVERYWHERE


def test_text_that_looks_like_an_import_is_none(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "pkg/select.py": """
            from pkg.platform import IS_ROCM
            USAGE = '''
                import pkg.backend
            '''
            if IS_ROCM:
                import pkg.backend
        """,
        "main.py": "import pkg.select\n",
    }
    assert base(tmp_path, files, "pkg/backend.py") == ROCM_ONLY


def test_a_module_level_exit_gates_the_imports_after_it(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "bench.py": """
            import sys
            from pkg.platform import IS_ROCM
            if IS_ROCM:
                sys.exit("NVIDIA only")
            import pkg.backend
        """,
    }
    assert base(tmp_path, files, "pkg/backend.py") == NVIDIA_ONLY


def test_a_gated_test_import_counts_as_everywhere(tmp_path: Path) -> None:
    """A test's skip says where that test runs, not where the module it imports runs in the product (a registry
    may load the module by name)."""
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/backend.py": HAZARDS,
        "tests/test_backend.py": """
            import pytest
            from pkg.platform import IS_ROCM

            @pytest.mark.skipif(IS_ROCM, reason="NVIDIA only")
            def test_weight():
                from pkg.backend import weight
        """,
    }
    assert base(tmp_path, files, "pkg/backend.py") == EVERYWHERE


def test_a_module_run_as_main_is_an_entry_point(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/tool.py": HAZARDS + 'if __name__ == "__main__":\n    pass\n',
        "main.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import pkg.tool\n",
    }
    assert base(tmp_path, files, "pkg/tool.py") == EVERYWHERE


# --- what a module imports at module level --------------------------------------------------------------------------
_KERNELS = {
    "pkg/__init__.py": "",
    "pkg/kernel.py": "import torch\nimport cutlass.cute as cute\n",
    "pkg/ops.py": "from pkg.kernel import run\n",
    "pkg/optional.py": "try:\n    from pkg.kernel import run\nexcept ImportError:\n    run = None\n",
    "pkg/cycle_a.py": "from pkg import cycle_b\n",
    "pkg/cycle_b.py": "from pkg import cycle_a\nimport cuda.bindings.driver as cuda\n",
    "pkg/gaudi.py": "import habana_frameworks.torch.core as htcore\n",
    "pkg/loader.py": "from nvidia import dali\n",
    "pkg/fa4.py": "from flash_attn.cute.interface import _flash_attn_fwd\n",
    "pkg/fa2.py": "from flash_attn.flash_attn_interface import flash_attn_func\n",
    "pkg/numba_kernels.py": "import numba.cuda\n",
    "pkg/numba_cpu.py": "import numba\n",
    # An import whose failure the module re-raises, or that the arm of an `if` makes while the other arm raises, is as
    # unguarded as one written alone; one whose handler carries on, or that an `if` may skip, is not.
    "pkg/reraised.py": (
        "try:\n    import deep_gemm\nexcept ImportError as error:\n    raise ImportError('needs DeepGEMM') from error\n"
    ),
    "pkg/only_arm.py": (
        "import torch\nif torch.cuda.is_available():\n    try:\n        from flash_attn.cute import interface\n"
        "    except ImportError:\n        raise\nelse:\n    raise ImportError('FA4 needs a GPU')\n"
    ),
    "pkg/skippable_arm.py": "import torch\nif torch.cuda.is_available():\n    import deep_gemm\n",
    "pkg/caught.py": "try:\n    import deep_gemm\nexcept ImportError:\n    raise\nexcept Exception:\n    deep_gemm = None\n",
    "tests/test_kernel.py": "import pytest\nfrom pkg.ops import run\n",
    "tests/test_lazy.py": "def test_run():\n    from pkg.ops import run\n",
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("pkg/kernel.py", NVIDIA_ONLY, id="imports-an-nvidia-only-package"),
        pytest.param("pkg/ops.py", NVIDIA_ONLY, id="imports-such-a-module"),
        pytest.param("tests/test_kernel.py", NVIDIA_ONLY, id="a-test-importing-it-at-module-level"),
        pytest.param("tests/test_lazy.py", EVERYWHERE, id="a-test-importing-it-in-a-function"),
        pytest.param("pkg/optional.py", EVERYWHERE, id="an-import-in-try"),
        pytest.param("pkg/cycle_a.py", NVIDIA_ONLY, id="an-import-cycle"),
        pytest.param("pkg/loader.py", NVIDIA_ONLY, id="from-the-nvidia-namespace"),
        pytest.param("pkg/gaudi.py", NOWHERE, id="another-accelerators-package"),
        pytest.param("pkg/fa4.py", NVIDIA_ONLY, id="flash-attention-4-cute-dsl"),
        pytest.param("pkg/fa2.py", EVERYWHERE, id="flash-attention-with-rocm-builds"),
        pytest.param("pkg/numba_kernels.py", NVIDIA_ONLY, id="numba-cuda-target"),
        pytest.param("pkg/numba_cpu.py", EVERYWHERE, id="numba-cpu"),
        pytest.param("pkg/reraised.py", NVIDIA_ONLY, id="an-import-in-try-whose-handler-re-raises"),
        pytest.param("pkg/only_arm.py", NVIDIA_ONLY, id="an-import-in-the-arm-whose-other-arm-raises"),
        pytest.param("pkg/skippable_arm.py", EVERYWHERE, id="an-import-under-an-if-it-may-skip"),
        pytest.param("pkg/caught.py", EVERYWHERE, id="an-import-in-try-one-handler-of-which-carries-on"),
    ],
)
def test_a_module_that_cannot_import_on_rocm_runs_only_where_it_can(
    tmp_path: Path, module: str, expected: Branch
) -> None:
    assert base(tmp_path, _KERNELS, module) == expected


# A ROCm-native tree (its kernels import AMD's FlyDSL), a mixed one (AMD SMI imported only under a ROCm test or in a
# try) and an NVIDIA-only one (CuTe DSL): only imports that fail on NVIDIA make a module code written for ROCm.
_ROCM_NATIVE = {
    "pkg/__init__.py": "",
    "pkg/kernel.py": "import torch\nimport flydsl.compiler as flyc\n",
    "pkg/ops.py": "from pkg.kernel import run\n",
    "pkg/smi.py": "from amdsmi import amdsmi_init\n",
    "pkg/both.py": "import flydsl\nimport cutlass\n",
    "pkg/platform.py": PLATFORM,
    "pkg/mixed.py": "from pkg.platform import IS_ROCM\nif IS_ROCM:\n    import amdsmi\n",
    "pkg/optional.py": "try:\n    import mori\nexcept ImportError:\n    mori = None\n",
    "pkg/hipify_tool.py": "import hipify_torch\n",
    "tests/test_ops.py": "from pkg.ops import run\n",
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("pkg/kernel.py", ROCM_ONLY, id="imports-a-rocm-only-package"),
        pytest.param("pkg/ops.py", ROCM_ONLY, id="imports-such-a-module"),
        pytest.param("pkg/smi.py", ROCM_ONLY, id="amd-smi"),
        pytest.param("tests/test_ops.py", ROCM_ONLY, id="a-test-importing-it-at-module-level"),
        pytest.param("pkg/both.py", NOWHERE, id="rocm-and-nvidia-only-packages"),
        pytest.param("pkg/mixed.py", EVERYWHERE, id="imported-under-a-rocm-test"),
        pytest.param("pkg/optional.py", EVERYWHERE, id="an-import-in-try"),
        pytest.param("pkg/hipify_tool.py", EVERYWHERE, id="a-name-starting-like-hip-is-not-hip"),
    ],
)
def test_a_module_that_cannot_import_on_nvidia_is_written_for_rocm(
    tmp_path: Path, module: str, expected: Branch
) -> None:
    assert base(tmp_path, _ROCM_NATIVE, module) == expected


def test_a_test_imports_the_project_from_its_src_folder(tmp_path: Path) -> None:
    files = {
        "src/pkg/__init__.py": "",
        "src/pkg/kernel.py": "import cutlass\n",
        "tests/test_kernel.py": "from pkg.kernel import run\n",
    }
    assert base(tmp_path, files, "tests/test_kernel.py") == NVIDIA_ONLY


def test_a_script_imports_the_project_from_the_folder_of_its_setup_py(tmp_path: Path) -> None:
    files = {
        "python/setup.py": "",
        "python/pkg/__init__.py": "",
        "python/pkg/kernel.py": "import cutlass\n",
        "tutorials/01-kernel.py": "from pkg.kernel import run\n",
        "other/setup.py": "",  # another installable folder, without `pkg`
    }
    assert base(tmp_path, files, "tutorials/01-kernel.py") == NVIDIA_ONLY


def test_a_package_two_install_folders_hold_is_not_guessed(tmp_path: Path) -> None:
    files = {
        "a/setup.py": "",
        "a/pkg/__init__.py": "",
        "a/pkg/kernel.py": "import cutlass\n",
        "b/setup.py": "",
        "b/pkg/__init__.py": "",
        "b/pkg/kernel.py": "",
        "tutorials/kernel.py": "from pkg.kernel import run\n",
    }
    assert base(tmp_path, files, "tutorials/kernel.py") == EVERYWHERE


# A package whose `__init__.py` cannot be imported on ROCm: Python runs it before any of its modules.
_PACKAGE_NVIDIA_ONLY = {
    "pkg/__init__.py": "",
    "pkg/kernels/__init__.py": "from .comm import put\n",
    "pkg/kernels/comm.py": "import nvshmem.core\n",
    "pkg/kernels/perf_model.py": HAZARDS,
    "pkg/kernels/sub/__init__.py": "",
    "pkg/kernels/sub/tiles.py": HAZARDS,
    "pkg/kernels/bench.py": HAZARDS + 'if __name__ == "__main__":\n    main()\n',
    "pkg/other/perf_model.py": HAZARDS,
    "main.py": "from pkg.other import perf_model\n",
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("pkg/kernels/perf_model.py", NVIDIA_ONLY, id="a-module-of-the-package"),
        pytest.param("pkg/kernels/sub/tiles.py", NVIDIA_ONLY, id="a-module-of-a-subpackage"),
        pytest.param("pkg/kernels/bench.py", EVERYWHERE, id="a-script-may-be-run-by-its-path"),
        pytest.param("pkg/other/perf_model.py", EVERYWHERE, id="a-folder-without-init-py"),
    ],
)
def test_the_modules_of_a_package_that_cannot_import_on_rocm_cannot_either(
    tmp_path: Path, module: str, expected: Branch
) -> None:
    assert base(tmp_path, _PACKAGE_NVIDIA_ONLY, module) == expected


# A module only imported by modules that cannot be imported on ROCm (they import an NVIDIA-only package at module
# level, directly or through others) only runs on NVIDIA: its importers stop at that import there.
_IMPORTED_BY_NVIDIA_ONLY = {
    "pkg/__init__.py": "",
    "pkg/comm.py": "import nvshmem.core\n",
    "pkg/kernels.py": "from pkg.comm import put\nfrom pkg import helpers\n",
    "pkg/helpers.py": HAZARDS,
    "pkg/shared.py": HAZARDS,
    "pkg/optional.py": "try:\n    import nvshmem\nexcept ImportError:\n    nvshmem = None\nfrom pkg import shared\n",
    "intrin/nvshmem.py": "",  # a module elsewhere in the tree with the package's name is not it
    "tests/test_kernels.py": "from pkg.kernels import run\nfrom pkg import helpers\n",
    "bench.py": "import pkg.kernels\n",
    "tool.py": "import pkg.optional\n",
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("pkg/comm.py", NVIDIA_ONLY, id="imports-an-nvidia-only-package"),
        pytest.param("pkg/helpers.py", NVIDIA_ONLY, id="imported-only-by-modules-that-cannot-import-on-rocm"),
        pytest.param("pkg/shared.py", EVERYWHERE, id="also-imported-by-one-that-can"),
    ],
)
def test_a_module_only_imported_by_modules_that_cannot_import_on_rocm_runs_only_on_nvidia(
    tmp_path: Path, module: str, expected: Branch
) -> None:
    assert base(tmp_path, _IMPORTED_BY_NVIDIA_ONLY, module) == expected


# Generated code's template: lines that read like imports inside a string are no statements of the module.
_TEMPLATE = '''
TEMPLATE = """
import cutlass.utils as cutlass_utils
import pkg.kernel as kernel
"""
'''


def test_an_import_in_a_template_string_is_no_module_level_import(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/kernel.py": "import cutlass\n",
        "pkg/codegen.py": _TEMPLATE + HAZARDS,
        "pkg/helpers.py": HAZARDS,
        "main.py": "import pkg.codegen\n",
        "uses_helpers.py": "import pkg.codegen\nimport pkg.helpers\n",
    }
    assert bases(tmp_path, files, "pkg/codegen.py", "pkg/helpers.py", "pkg/kernel.py") == [
        EVERYWHERE,
        EVERYWHERE,
        NVIDIA_ONLY,
    ]


# --- through the engine ---------------------------------------------------------------------------------------------
ENGINE_TREE = {
    "pkg/__init__.py": "",
    "pkg/platform.py": PLATFORM,
    "pkg/backend_cuda.py": HAZARDS,
    "pkg/common.py": HAZARDS,
    "pkg/backend_rocm.py": 'import torch\ndevice = torch.device("hip")\n',
    "pkg/select.py": """
        from pkg.platform import IS_ROCM
        from pkg import common
        if IS_ROCM:
            from pkg import backend_rocm
        else:
            from pkg import backend_cuda
    """,
    "main.py": "import pkg.select\n",
}


# A project whose build builds two extension modules for NVIDIA only (a CMake target and a setup.py extension) and
# one for every vendor; the Python modules wrapping them hold HAZARDS.
NATIVE_TREE = {
    "CMakeLists.txt": """
        if(USE_ROCM)
          message(STATUS "fp4 kernels: not built for ROCm")
        else()
          pybind11_add_module(fp4_ops fp4/api.cu)
        endif()
    """,
    "setup.py": """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        ext_modules = [CUDAExtension("pkg._C", ["csrc/ops.cu"])]
        if torch.version.hip is None:
            ext_modules.append(CUDAExtension("pkg._flash_C", ["csrc/flash.cu"]))
    """,
    "pkg/__init__.py": "",
    "pkg/fp4.py": "import fp4_ops" + HAZARDS,
    "pkg/flash.py": "from pkg import _flash_C" + HAZARDS,
    "pkg/attention.py": "from pkg.flash import run" + HAZARDS,
    "pkg/ops.py": "import pkg._C as ops" + HAZARDS,
    "pkg/lazy.py": "def run():\n    import pkg._flash_C" + HAZARDS,
    "pkg/relative.py": "from . import _flash_C" + HAZARDS,
    "pkg/sub/__init__.py": "",
    "pkg/sub/relative.py": "from .._flash_C import flash" + HAZARDS,
    "fp4/bench/bench_fp4.py": HAZARDS,  # a script beside the sources of `fp4_ops`
    "fp4/helpers.py": HAZARDS,  # imported by the package
    "csrc/bench_flash.py": HAZARDS,  # beside the sources of `pkg._flash_C`, but of `pkg._C` (every vendor's) too
    # (a script that imports an NVIDIA-only module stops there on ROCm: nothing else it imports runs there through it)
    "main.py": "import pkg.ops\nimport pkg.lazy\nimport fp4.helpers\n",
    "nvidia_main.py": "import pkg.fp4\nimport pkg.attention\nimport pkg.relative\n",
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("pkg/fp4.py", [], id="imports-a-cmake-module-built-for-nvidia-only"),
        pytest.param("pkg/flash.py", [], id="imports-a-setup-py-extension-built-for-nvidia-only"),
        pytest.param("pkg/attention.py", [], id="imports-such-a-module-at-module-level"),
        pytest.param("pkg/relative.py", [], id="a-relative-import-of-it"),
        pytest.param("pkg/sub/relative.py", [], id="a-relative-import-from-it"),
        pytest.param("fp4/bench/bench_fp4.py", [], id="a-script-in-the-folder-of-its-sources"),
        pytest.param("fp4/helpers.py", [("ROC107", 2), ("ROC113", 3)], id="an-imported-module-in-that-folder"),
        pytest.param("csrc/bench_flash.py", [("ROC107", 2), ("ROC113", 3)], id="a-folder-every-vendor-builds-from"),
        pytest.param("pkg/ops.py", [("ROC107", 3), ("ROC113", 4)], id="an-extension-built-for-every-vendor"),
        pytest.param("pkg/lazy.py", [("ROC107", 4), ("ROC113", 5)], id="imported-in-a-function"),
    ],
)
def test_a_module_importing_an_extension_built_for_nvidia_only_is_nvidia_code(
    tmp_path: Path, module: str, expected: list[tuple[str, int]]
) -> None:
    root = write_tree(tmp_path, NATIVE_TREE)
    assert _codes(root, module) == expected


# A kernel package shipped beside the product as a CMake project of its own that only nvcc builds, its package in a
# `python/` folder (imported by nothing the index resolves) and tests beside; and the same project at the root, the
# one being ported, and one that names HIP.
NESTED_CUDA_PROJECT = {
    "setup.py": "from setuptools import setup\nsetup(name='product')\n",
    "kernels/CMakeLists.txt": """
        project(kernels LANGUAGES CXX CUDA)
        find_package(CUDAToolkit REQUIRED)
        Python_add_library(common_ops MODULE USE_SABI 3 WITH_SOABI ${SOURCES})
    """,
    "kernels/python/kernels/__init__.py": "from kernels import common_ops" + HAZARDS,
    "kernels/python/kernels/utils.py": HAZARDS,
    "kernels/test/test_gemm.py": "from kernels.gemm import mm" + HAZARDS,
    "kernels/setup.py": "import torch\nmajor = torch.version.cuda.split('.')[0]\n",  # builds it: runs before it exists
    "ported/CMakeLists.txt": """
        project(ported LANGUAGES CXX CUDA)
        # the HIP build: hipify the sources first
        pybind11_add_module(ported_ops ops.cu)
    """,
    "ported/test_ported.py": "import ported_ops" + HAZARDS,
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("kernels/python/kernels/__init__.py", [], id="imports-the-extension"),
        pytest.param("kernels/python/kernels/utils.py", [], id="a-module-of-its-package"),
        pytest.param("kernels/test/test_gemm.py", [], id="its-test"),
        pytest.param("kernels/setup.py", [("ROC111", 2)], id="its-build-script"),
        pytest.param("ported/test_ported.py", [("ROC107", 3), ("ROC113", 4)], id="a-project-naming-hip"),
    ],
)
def test_a_nested_project_only_nvcc_builds_is_nvidia_code(
    tmp_path: Path, module: str, expected: list[tuple[str, int]]
) -> None:
    root = write_tree(tmp_path, NESTED_CUDA_PROJECT)
    assert _codes(root, module) == expected


# A communication library shipped beside the product as a setup.py project of its own whose extension links the CUDA
# driver library (no ROCm build can link it) and that names no ROCm; beside it one that has a ROCm build, one that
# links the driver only in an NVIDIA arm, and the root's own setup.py (the project being ported).
NESTED_LINKED_PROJECT = {
    "setup.py": """
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension("product._C", ["ops.cu"], extra_link_args=["-lcuda"])
        flags = {"nvcc": ["--expt-relaxed-constexpr"]}
    """,
    "comm/setup.py": """
        from torch.utils.cpp_extension import CUDAExtension
        def extension():
            flags = {"nvcc": ["-O3", "--expt-relaxed-constexpr"]}
            return CUDAExtension("comm._C", ["csrc/comm.cu"], extra_compile_args=flags, extra_link_args=["-lcuda"])
    """,
    "comm/python/comm/__init__.py": "from . import ops\n",
    "comm/python/comm/ops.py": "import comm._C as _C" + HAZARDS,
    "comm/python/comm/utils.py": HAZARDS,
    "comm/tests/test_comm.py": "from comm.utils import rand" + HAZARDS,
    "hipped/setup.py": """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        link = [] if torch.version.hip else ["-lcuda"]
        ext = CUDAExtension("hipped._C", ["k.cu"], extra_link_args=link)
    """,
    "hipped/test_hipped.py": "import hipped._C" + HAZARDS,
    "armed/setup.py": """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        link = []
        if torch.version.cuda:
            link.append("-lcuda")
        ext = CUDAExtension("armed._C", ["k.cu"], extra_link_args=link)
    """,
    "armed/test_armed.py": "import armed._C" + HAZARDS,
}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("comm/python/comm/ops.py", [], id="imports-the-extension"),
        pytest.param("comm/python/comm/utils.py", [], id="a-module-of-its-package"),
        pytest.param("comm/tests/test_comm.py", [], id="its-test"),
        pytest.param("comm/setup.py", [], id="its-setup-py-builds-for-nvidia-only"),
        pytest.param("hipped/test_hipped.py", [("ROC107", 3), ("ROC113", 4)], id="a-project-naming-hip"),
        pytest.param("armed/test_armed.py", [("ROC107", 3), ("ROC113", 4)], id="linked-in-an-nvidia-arm"),
        pytest.param("setup.py", [("ROC301", 3)], id="the-root-setup-py"),
    ],
)
def test_a_nested_setup_py_project_linking_nvidia_libraries_is_nvidia_code(
    tmp_path: Path, module: str, expected: list[tuple[str, int]]
) -> None:
    root = write_tree(tmp_path, NESTED_LINKED_PROJECT)
    assert _codes(root, module) == expected


# An extension registry re-exported from its package, whose CUDA extension is registered only in a module imported
# under `torch.version.cuda`; a test skipped unless the registry has it, one asking for a key registered everywhere,
# one asking for a key a test also registers without a gate, and a lookup that is no registry test.
REGISTRY_TREE = {
    "pkg/__init__.py": "",
    "pkg/ext/__init__.py": """
        import torch
        from .registry import *
        if torch.version.cuda:
            from .cuda import *
    """,
    "pkg/ext/registry.py": """
        _extensions = {}
        def register(name, lib):
            _extensions[name] = lib
        def is_available(name):
            \"\"\"Whether the extension was registered.\"\"\"
            return name in _extensions
        def is_named(name):
            return name.startswith("fast")
        register("fast_cpp", None)
    """,
    "pkg/ext/cuda.py": """
        from .registry import register
        register("fast_cuda", None)
        register("fast_both", None)
        register("fast_sm90", None)
    """,
    "pkg/ext/hip.py": 'from .registry import register\nregister("fast_both", None)\n',
    "tests/test_ops.py": """
        import pytest
        import torch
        from pkg.ext import is_available, is_named
        @pytest.mark.skipif(not is_available("fast_cuda"), reason="no CUDA extension")
        def test_cuda():
            assert torch.cuda.get_device_capability()[0] >= 8
        @pytest.mark.skipif(not is_available("fast_cpp"), reason="no CPU extension")
        def test_cpp():
            assert torch.cuda.get_device_capability()[0] >= 8
        @pytest.mark.skipif(not is_available("fast_both"), reason="no extension")
        def test_both():
            assert torch.cuda.get_device_capability()[0] >= 8
        @pytest.mark.skipif(not is_named("fast_sm90"), reason="no name")
        def test_named():
            assert torch.cuda.get_device_capability()[0] >= 8
    """,
    "main.py": "import pkg.ext\nimport pkg.ext.hip\n",
}


def test_a_registry_lookup_of_a_key_registered_only_off_rocm_is_false_on_rocm(tmp_path: Path) -> None:
    """`is_available("fast_cuda")` looks the key up in a registry (`return name in _extensions`) that only NVIDIA-only
    code fills with it: false on ROCm, so the test it skips never runs there. Not for a key registered where ROCm
    runs (`fast_cpp`, `fast_both`), nor for a def that is no membership test."""
    root = write_tree(tmp_path, REGISTRY_TREE)
    assert _codes(root, "tests/test_ops.py") == [("ROC113", 9), ("ROC113", 12), ("ROC113", 15)]


def test_the_root_project_only_nvcc_builds_is_the_one_being_ported(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(kernels LANGUAGES CXX CUDA)\npybind11_add_module(common_ops ops.cu)\n",
            "kernels/__init__.py": "from kernels import common_ops" + HAZARDS,
        },
    )
    assert _codes(root, "kernels/__init__.py") == [("ROC107", 3), ("ROC113", 4)]


def test_the_build_file_declaring_the_extension_is_a_dependency_of_the_result(tmp_path: Path) -> None:
    from rocmlint.dependencies import DependencyRecorder

    root = write_tree(tmp_path, NATIVE_TREE)
    recorder = DependencyRecorder()
    recorder.start_file()
    Engine(recorder).check_path(root / "pkg/fp4.py", Settings(root=root))
    assert os.path.abspath(root / "CMakeLists.txt") in recorder.finish_file()


def _codes(root: Path, name: str, **settings: object) -> list[tuple[str, int]]:
    report = Engine().check_path(root / name, Settings(root=root, **settings))  # type: ignore[arg-type]
    return [(d.code, d.location.line) for d in report.diagnostics]


def test_hazards_in_an_nvidia_only_module_are_not_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, ENGINE_TREE)
    assert _codes(root, "pkg/backend_cuda.py") == []
    assert _codes(root, "pkg/common.py") == [("ROC107", 2), ("ROC113", 3)]


def test_rules_for_rocm_only_code_still_see_a_rocm_only_module(tmp_path: Path) -> None:
    """ROC110 reports `"hip"` devices everywhere, and offers its fix only where the code never runs on NVIDIA."""
    root = write_tree(tmp_path, ENGINE_TREE)
    report = Engine().check_path(root / "pkg/backend_rocm.py", Settings(root=root))
    assert [(d.code, d.fix is not None) for d in report.diagnostics] == [("ROC110", True)]
    assert "only runs on ROCm" in report.diagnostics[0].message


# HAZARDS in code written for ROCm: a kernel module importing FlyDSL that picks the FP8 format per gfx arch, a module
# importing it that does not, and the same hazards in a module of a mixed project.
ROCM_NATIVE_TREE = {
    "pkg/__init__.py": "",
    "pkg/kernel.py": "import flydsl\nFP8 = {'gfx942': torch.float8_e4m3fnuz}\n" + HAZARDS.lstrip(),
    "pkg/ops.py": "from pkg import kernel" + HAZARDS,
    "pkg/common.py": HAZARDS,
    "main.py": "import pkg.common\n",
    "rocm_main.py": "import pkg.ops\n",
}


def test_an_ocp_fp8_dtype_in_code_written_for_rocm_is_reported_only_without_a_per_arch_choice(tmp_path: Path) -> None:
    root = write_tree(tmp_path, ROCM_NATIVE_TREE)
    assert _codes(root, "pkg/kernel.py") == []  # ROC113: a capability ROCm-only code compares is read on purpose
    assert _codes(root, "pkg/ops.py") == [("ROC107", 3)]
    assert _codes(root, "pkg/common.py") == [("ROC107", 2), ("ROC113", 3)]


def test_project_model_false_turns_module_gates_off(tmp_path: Path) -> None:
    root = write_tree(tmp_path, ENGINE_TREE)
    assert _codes(root, "pkg/backend_cuda.py", project_model=False) == [("ROC107", 2), ("ROC113", 3)]


def test_a_buffer_without_a_file_runs_everywhere(tmp_path: Path) -> None:
    root = write_tree(tmp_path, ENGINE_TREE)
    data = (root / "pkg/backend_cuda.py").read_bytes()
    report = Engine().check_bytes(str(root / "pkg/unsaved.py"), data, Settings(root=root))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC107", 2), ("ROC113", 3)]


def test_the_importers_are_dependencies_of_the_result(tmp_path: Path) -> None:
    from rocmlint.dependencies import DependencyRecorder

    root = write_tree(tmp_path, ENGINE_TREE)
    recorder = DependencyRecorder()
    recorder.start_file()
    Engine(recorder).check_path(root / "pkg/backend_cuda.py", Settings(root=root))
    found = recorder.finish_file()
    assert os.path.abspath(root / "pkg/select.py") in found
    assert os.path.abspath(root / "pkg/platform.py") in found, "the gate's flag came from there"


def test_editing_an_importer_checks_the_module_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cached result of a module judged NVIDIA-only is checked again once its importer's gate changes."""
    from rocmlint import cache as cache_module
    from rocmlint.cache import Cache
    from rocmlint.config import ConfigResolver, Overrides
    from rocmlint.discovery import discover
    from rocmlint.parallel import check_candidates

    monkeypatch.setattr(cache_module, "RACY_NS", 0)  # trust stats at once (see tests/test_cache.py)
    root = write_tree(tmp_path / "proj", ENGINE_TREE)

    def run() -> list[tuple[str, str, int]]:
        warnings: list[str] = []
        candidates = list(discover([root], ConfigResolver(Overrides(), cwd=root), warnings.append))
        cache = Cache.open(tmp_path / "cache", warnings.append)
        reports = check_candidates(candidates, 1, cache, warnings.append, pool_min_files=0)
        return [(Path(d.path).name, d.code, d.location.line) for r in reports for d in r.diagnostics]

    assert ("backend_cuda.py", "ROC107", 2) not in run()
    select = root / "pkg/select.py"
    select.write_text(select.read_text().replace("if IS_ROCM:", "if __debug__:"))  # no vendor test any more
    assert ("backend_cuda.py", "ROC107", 2) in run()


# --- a def the importers only use where ROCm never runs -------------------------------------------------------------
USE_TREE = {
    "pkg/__init__.py": "",
    "pkg/perf_model.py": """
        import torch
        def clock_rate():
            return torch.cuda.get_device_capability()[0] >= 9
        def estimate_time(config):
            return clock_rate()
        def shared(config):
            return torch.cuda.get_device_capability()[0] >= 9
        """,
    "pkg/matmul.py": """
        import torch
        from pkg.perf_model import estimate_time, shared
        prune_configs_by = {"perf_model": estimate_time} if torch.version.hip is None else {}
        if torch.version.hip is None:
            shared(None)
        """,
    "pkg/tune.py": """
        from pkg import perf_model
        def tune(config):
            return perf_model.shared(config)
        """,
}


def test_a_def_its_importers_only_use_off_rocm_runs_only_there(tmp_path: Path) -> None:
    """`estimate_time` is only handed over under `torch.version.hip is None`, and `clock_rate` is only called by it:
    neither runs on ROCm. `shared` is also called ungated by another importer (through `perf_model.shared`)."""
    root = write_tree(tmp_path, USE_TREE)
    assert _codes(root, "pkg/perf_model.py") == [("ROC113", 7)]


# A template class of a platform package that only the other platforms' backends subclass: one in another accelerator's
# folder, one imported only under an NVIDIA test; a second template is also made by the product.
TEMPLATE_TREE = {
    "plat/__init__.py": "",
    "plat/template.py": """
        import torch
        class QuantTemplate:
            def load_fp8(self, weight):
                return weight.to(torch.float8_e4m3fn)
        class SharedTemplate:
            def load_fp8(self, weight):
                return weight.to(torch.float8_e4m3fn)
        """,
    "plat/ops.py": """
        import torch
        if torch.version.hip is None:
            from plat.nv_backend import NvWeight
        """,
    "plat/nv_backend.py": "from plat.template import QuantTemplate\nclass NvWeight(QuantTemplate):\n    pass\n",
    "plat/npu/backend.py": "from plat.template import QuantTemplate\nclass NpuWeight(QuantTemplate):\n    pass\n",
    "plat/product.py": "from plat.template import SharedTemplate\nweight = SharedTemplate()\n",
    "main.py": "import plat.ops\nimport plat.npu.backend\nimport plat.product\n",
}


def test_a_template_only_subclassed_where_rocm_never_runs_is_not_rocm_code(tmp_path: Path) -> None:
    """`QuantTemplate` is only subclassed by a backend imported under `torch.version.hip is None` and by one in an NPU
    folder: its methods only run on their instances. `SharedTemplate` is made by a module that runs everywhere."""
    root = write_tree(tmp_path, TEMPLATE_TREE)
    assert _codes(root, "plat/template.py") == [("ROC107", 7)]


def test_a_def_only_imported_and_re_exported_decides_nothing(tmp_path: Path) -> None:
    files = {**USE_TREE, "pkg/__init__.py": "from pkg.perf_model import estimate_time\n"}
    root = write_tree(tmp_path, files)
    assert _codes(root, "pkg/perf_model.py") == [("ROC113", 3), ("ROC113", 7)]


def test_a_script_outside_the_packages_resolves_its_gate_from_the_project(tmp_path: Path) -> None:
    """`scripts/report.py` (no package) imports `pkg` as installed: its gate `has_nvidia_smi()`, a def of the project
    that returns True only after running nvidia-smi, is found from the project root."""
    files = {
        "pkg/__init__.py": "",
        "pkg/gpu.py": """
            import subprocess, torch
            def gpu_states():
                return torch.cuda.get_device_capability()[0] >= 9
            def has_nvidia_smi():
                try:
                    subprocess.check_output("nvidia-smi")
                    return True
                except subprocess.SubprocessError:
                    return False
            """,
        "scripts/report.py": """
            def report():
                from pkg.gpu import gpu_states, has_nvidia_smi
                if has_nvidia_smi():
                    return gpu_states()
            """,
    }
    root = write_tree(tmp_path, files)
    assert _codes(root, "pkg/gpu.py") == [("ROC116", 6)], "the probe's own nvidia-smi call runs everywhere"


# --- vendored projects ----------------------------------------------------------------------------------------------
VENDORED_TREE = {
    "app/__init__.py": "",
    "app/tts.py": """
        import os, sys
        def load():
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "thirdparty"))
            from melo.api import TTS
            return TTS()
        """,
    "app/thirdparty/melo/__init__.py": "",
    "app/thirdparty/melo/api.py": "from melo.models import Net\nclass TTS: ...\n",
    "app/thirdparty/melo/models.py": "class Net: ...\n",
    "app/thirdparty/melo/train.py": "from melo.models import Net\nif __name__ == '__main__':\n    Net()\n",
    "app/thirdparty/melo/tests/test_api.py": "from melo.api import TTS\n",
    "app/speech.py": """
        def load():
            from tools.llama.generate import generate
            return generate
        """,
    "app/thirdparty/fish/tools/llama/generate.py": "def generate(): ...\n",
    "app/thirdparty/fish/tools/llama/train.py": "def train(): ...\n",
}


def test_a_vendored_module_the_project_never_imports_never_runs(tmp_path: Path) -> None:
    """`melo.api` is imported by the project (its folder put on sys.path first) and imports `melo.models`; the
    vendored project's own training script and tests are not the project's entry points."""
    found = bases(
        tmp_path,
        VENDORED_TREE,
        "app/thirdparty/melo/api.py",
        "app/thirdparty/melo/models.py",
        "app/thirdparty/melo/train.py",
        "app/thirdparty/melo/tests/test_api.py",
        "app/thirdparty/fish/tools/llama/generate.py",
        "app/thirdparty/fish/tools/llama/train.py",
    )
    assert found == [EVERYWHERE, EVERYWHERE, NOWHERE, NOWHERE, EVERYWHERE, NOWHERE], "tools/ is a namespace package"


def test_a_module_of_the_project_nothing_imports_still_runs(tmp_path: Path) -> None:
    files = {**VENDORED_TREE, "app/cli.py": "from melo.api import TTS\n"}
    assert bases(tmp_path, files, "app/cli.py", "app/thirdparty/melo/train.py") == [EVERYWHERE, NOWHERE]


# --- the index read by two processes --------------------------------------------------------------------------------
def _index_contents(index: ImportIndex) -> tuple[object, ...]:
    """Everything the build records, in the order it holds it (sets sorted: nothing reads them in their order)."""
    return (
        [(imported, list(importers.items())) for imported, importers in index.importers.items()],
        [(importer, sorted(files)) for importer, files in index._module_level.items()],
        list(index._packages.items()),
        [(importer, sorted(prefixes)) for importer, prefixes in index._computed_loads.items()],
        list(index._absolute_imports.items()),
        index.consumer_gpu_files,
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper is forked")
def test_an_index_read_by_two_processes_is_the_one_read_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second half's importers of a module come after the first half's, modules first imported in the second
    half after the others, as one process reading the files in order records them."""
    files = {"pkg/__init__.py": "", "pkg/platform.py": PLATFORM}
    for number in range(12):
        files[f"pkg/mod{number:02}.py"] = (
            f"from pkg.platform import IS_ROCM\nimport cutlass\nfrom . import mod{(number + 5) % 12:02}\n"
            f"if IS_ROCM:\n    from pkg import mod{(number + 7) % 12:02}\n"
            f'ops = importlib.import_module(f"_{{vendor}}.ops{number}")\n'
        )
    for number in (1, 10):  # one file of each half names a consumer GPU (RDNA3, RDNA4); gfx90a/gfx942 are CDNA
        files[f"pkg/mod{number:02}.py"] += f"ARCH = 'gfx{1100 + number * 10}'\nSERVER = 'gfx942'\n"
    files["pkg/mod05.py"] += "ARCHS = ('gfx90a', 'gfx942', 'gfx950')\n"
    write_tree(tmp_path, files)
    monkeypatch.setattr("rocmlint.python.importers.SPLIT_MIN_FILES", 4)
    alone = ImportIndex.build(tmp_path, is_test_file)
    split = ImportIndex.build(tmp_path, is_test_file, processes=2)
    assert _index_contents(split) == _index_contents(alone)
    assert split.importers[str(tmp_path / "pkg/mod00.py")]  # the second half's files import it
    assert len(split._packages) == len(split._computed_loads) == 12  # both halves' files were read
    assert len(split._absolute_imports) == len(alone._absolute_imports) > 12
    assert split.consumer_gpu_files == [str(tmp_path / "pkg/mod01.py"), str(tmp_path / "pkg/mod10.py")]


def test_a_registry_lookup_of_a_def_of_the_file_is_decided_by_its_registrations(tmp_path: Path) -> None:
    """The same with the registry in the checked file: `has_runtime("cudart")` is false on ROCm when the project
    registers "cudart" only under `torch.version.cuda`, and not decided when another module registers it ungated."""
    probe = """
        import ctypes
        import torch
        _runtimes = {}
        def register(name, loader):
            _runtimes[name] = loader
        def has_runtime(name):
            return name in _runtimes
        if torch.version.cuda:
            register("cudart", ctypes.CDLL)
        if has_runtime("cudart"):
            runtime = ctypes.CDLL("libcudart.so")
    """
    gated = write_tree(tmp_path / "gated", {"probe.py": probe})
    assert _codes(gated, "probe.py") == []
    ungated = write_tree(
        tmp_path / "ungated", {"probe.py": probe, "setup_all.py": 'import probe\nprobe.register("cudart", None)\n'}
    )
    assert _codes(ungated, "probe.py") == [("ROC135", 11)]


# Example scripts and the tests that run them: `requires_cuda` skips unless on NVIDIA (`tests.testing`), and the test
# files end with the testing package's own `main()`, a member of another module named like the scripts' `main`.
SCRIPT_TREE = {
    "tests/__init__.py": "",
    "tests/testing.py": """
        import pytest, torch
        requires_cuda = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA only")
        def main():
            pytest.main()
        """,
    "examples/gemm_fp8.py": """
        import torch
        def quantize(x):
            return x.to(torch.float8_e4m3fn)
        def main():
            quantize(torch.ones(4))
        def run_regression_perf():
            return torch.ones(4).to(torch.float8_e4m3fn)
        if __name__ == "__main__":
            main()
        """,
    "examples/test_gemm_fp8.py": """
        import tests.testing
        import gemm_fp8
        @tests.testing.requires_cuda
        def test_gemm_fp8():
            gemm_fp8.main()
        if __name__ == "__main__":
            tests.testing.main()
        """,
    "examples/regression_gemm_fp8.py": "import gemm_fp8\ndef regression():\n    gemm_fp8.run_regression_perf()\n",
    "examples/cast_fp8.py": """
        import torch
        def quantize(x):
            return x.to(torch.float8_e4m3fn)
        def main():
            quantize(torch.ones(4))
        if __name__ == "__main__":
            quantize(torch.zeros(4))
        """,
    "examples/test_cast_fp8.py": """
        import unittest
        from tests.testing import requires_cuda
        from cast_fp8 import main
        @requires_cuda
        def test_cast_fp8():
            main()
        if __name__ == "__main__":
            unittest.main()
        """,
    "examples/scale_fp8.py": """
        import torch
        def main():
            return torch.ones(4).to(torch.float8_e4m3fn)
        if __name__ == "__main__":
            main()
        """,
    "examples/test_scale_fp8.py": "import scale_fp8\ndef test_scale_fp8():\n    scale_fp8.main()\n",
    "examples/untested_fp8.py": """
        import torch
        def main():
            return torch.ones(4).to(torch.float8_e4m3fn)
        if __name__ == "__main__":
            main()
        """,
}


# A factory that makes a packed tensor class only on NVIDIA: the class's module and the module of the class holding it
# are re-exported by their subpackage's `__init__.py`, and each class also makes itself in one of its own methods.
FACTORY_TREE = {
    "lib/__init__.py": "",
    "lib/weights/__init__.py": "from .qbytes import *\n",
    "lib/weights/qbytes.py": """
        import torch
        def create(data):
            from .marlin import MarlinTensor
            if torch.version.cuda and data.is_cuda:
                return MarlinTensor(data)
            return data
        """,
    "lib/weights/marlin/__init__.py": "from .packed import *\nfrom .tensor import *\n",
    "lib/weights/marlin/packed.py": """
        import torch
        def unpack(data):
            return data.view(torch.float8_e4m3fn)
        class Packed:
            def __init__(self, data):
                self.data = data
            @staticmethod
            def unflatten(data):
                return Packed(data)
            def unpack(self):
                return unpack(self.data)
        """,
    "lib/weights/marlin/tensor.py": """
        from .packed import Packed
        class MarlinTensor:
            def __init__(self, data):
                self.packed = Packed(data)
            @staticmethod
            def unflatten(data):
                return MarlinTensor(data)
        """,
}


def test_a_script_the_project_only_runs_off_rocm_is_not_rocm_code(tmp_path: Path) -> None:
    """`gemm_fp8.main` is called by its `__main__` block and, in the project, only by a test skipped unless on NVIDIA:
    it and `quantize` (called only by it) do not run on ROCm; `run_regression_perf` is run by an ungated regression
    script. `cast_fp8`'s `__main__` block calls `quantize` itself, but the project reads nothing of the script but
    `main`, in that test alone (`unittest.main()` is another module's)."""
    root = write_tree(tmp_path, SCRIPT_TREE)
    assert _codes(root, "examples/gemm_fp8.py") == [("ROC107", 7)]
    assert _codes(root, "examples/cast_fp8.py") == []


def test_a_script_tested_on_rocm_or_never_tested_keeps_its_findings(tmp_path: Path) -> None:
    """`scale_fp8.main` is run by an ungated test; `untested_fp8` by nothing but its `__main__` block (by hand)."""
    root = write_tree(tmp_path, SCRIPT_TREE)
    assert _codes(root, "examples/scale_fp8.py") == [("ROC107", 3)]
    assert _codes(root, "examples/untested_fp8.py") == [("ROC107", 3)]


def test_classes_only_an_nvidia_gated_factory_makes_run_only_on_nvidia(tmp_path: Path) -> None:
    """`create` makes `MarlinTensor` only under `torch.version.cuda`, and only `MarlinTensor.__init__` makes
    `Packed` (each also makes itself in `unflatten`, which only runs where it is used from outside): the def only
    `Packed.unpack` calls never runs on ROCm. The subpackage re-exports them to the project's modules alone."""
    root = write_tree(tmp_path, FACTORY_TREE)
    assert _codes(root, "lib/weights/marlin/packed.py") == []


def test_a_class_the_factory_also_makes_ungated_stays_reported(tmp_path: Path) -> None:
    gated = FACTORY_TREE["lib/weights/qbytes.py"]
    files = {
        **FACTORY_TREE,
        "lib/weights/qbytes.py": gated.replace("torch.version.cuda and data.is_cuda", "data.is_cuda"),
    }
    root = write_tree(tmp_path, files)
    assert _codes(root, "lib/weights/marlin/packed.py") == [("ROC107", 3)]


def test_a_class_the_top_level_package_re_exports_is_its_users_to_make(tmp_path: Path) -> None:
    """`lib/__init__.py` hands the classes on as `lib.MarlinTensor`: the package's users may make them anywhere."""
    root = write_tree(tmp_path, {**FACTORY_TREE, "lib/__init__.py": "from .weights.marlin import *\n"})
    assert _codes(root, "lib/weights/marlin/packed.py") == [("ROC107", 3)]


def test_a_class_an_importer_makes_ungated_stays_reported(tmp_path: Path) -> None:
    """A script of the project makes `Packed` directly, with no gate."""
    script = "from lib.weights.marlin import Packed\nPacked(None).unpack()\n"
    root = write_tree(tmp_path, {**FACTORY_TREE, "bench/run.py": script})
    assert _codes(root, "lib/weights/marlin/packed.py") == [("ROC107", 3)]


# A test module with an arch-test helper no test calls, and one a test calls.
HELPER_TESTS = """
    import torch
    def check_hopper():
        return torch.cuda.get_device_capability() == (9, 0)
    def check_ampere():
        return torch.cuda.get_device_capability() == (8, 0)
    def test_tma():
        assert check_ampere()
    """


def test_a_test_modules_helper_nothing_calls_runs_nowhere(tmp_path: Path) -> None:
    """pytest neither collects nor calls `check_hopper` and no module imports it: its comparison never runs."""
    root = write_tree(tmp_path, {"tests/test_tma.py": HELPER_TESTS})
    assert _codes(root, "tests/test_tma.py") == [("ROC113", 5)]


_SKIPIF_STRING = (
    '    import pytest\n    @pytest.mark.skipif("not check_hopper()", reason="Hopper")\n    def test_b(): pass\n'
)


@pytest.mark.parametrize(
    ("path", "files"),
    [
        ("lib/arch.py", {"lib/arch.py": HELPER_TESTS}),  # a library's def: its users call it
        (
            "tests/test_tma.py",
            {"tests/test_tma.py": HELPER_TESTS, "tests/test_b.py": "from test_tma import check_hopper\n"},
        ),
        ("tests/test_tma.py", {"tests/test_tma.py": HELPER_TESTS + _SKIPIF_STRING}),  # pytest evaluates the string
        (
            "tests/test_tma.py",
            {"tests/test_tma.py": HELPER_TESTS.replace("check_hopper", "pytest_configure")},
        ),  # a hook
        ("tests/helpers.py", {"tests/helpers.py": HELPER_TESTS.replace("def test_tma", "def _tma")}),  # no test here
    ],
)
def test_a_helper_something_may_call_stays_reported(tmp_path: Path, path: str, files: dict[str, str]) -> None:
    root = write_tree(tmp_path, files)
    assert _codes(root, path)[0] == ("ROC113", 3)


def test_a_class_its_file_makes_only_on_nvidia_besides_its_own_methods_runs_there(tmp_path: Path) -> None:
    """`Packed.unflatten` makes a `Packed` only where one exists already: `make`'s gated call decides."""
    source = """
        import torch
        class Packed:
            def __init__(self, data):
                self.data = data
            def unpack(self):
                return self.data.view(torch.float8_e4m3fn)
            @staticmethod
            def unflatten(data):
                return Packed(data)
        def make(data):
            if torch.version.cuda:
                return Packed(data)
            return data
        """
    root = write_tree(tmp_path, {"packed.py": source})
    assert _codes(root, "packed.py") == []
    ungated = write_tree(tmp_path / "ungated", {"packed.py": source.replace("torch.version.cuda", "data.is_cuda")})
    assert _codes(ungated, "packed.py") == [("ROC107", 6)]


# --- a caller's dispatch by the GPU's name ------------------------------------------------------------------------
GPU_MONITOR = """
import torch

device = None


def gpu_metrics():
    global device
    if device is None:
        try:
            device = torch.cuda.get_device_name(torch.cuda.current_device())
        except Exception:
            device = ""
    if "nvidia" in device.lower():
        from pkg import nvml
        return nvml.metrics()
    elif "amd" in device.lower():
        from pkg import rocm_smi
        return rocm_smi.metrics()
    return []
"""
NVML_MODULE = """
def metrics():
    import pynvml
    pynvml.nvmlInit()
    return [pynvml.nvmlDeviceGetCount()]


if __name__ == "__main__":
    import pynvml
    pynvml.nvmlInit()
    print(metrics())
"""


def test_a_module_imported_only_when_the_device_name_is_nvidias_runs_on_nvidia(tmp_path: Path) -> None:
    """No ROCm GPU's name holds "nvidia"; the module's own `__main__` demo is no entry point on ROCm then."""
    files = {
        "pkg/__init__.py": "",
        "pkg/gpu.py": GPU_MONITOR,
        "pkg/nvml.py": NVML_MODULE,
        "pkg/rocm_smi.py": "def metrics():\n    return []\n",
        "main.py": "from pkg.gpu import gpu_metrics\nprint(gpu_metrics())\n",
    }
    found = bases(tmp_path, files, "pkg/nvml.py", "pkg/rocm_smi.py")
    assert found == [NVIDIA_ONLY, EVERYWHERE]


@pytest.mark.parametrize(
    ("test", "fallback"),
    [
        pytest.param('"amd" in device.lower()', '""', id="amds-name-is-no-vendor-test"),
        pytest.param('"nvidia" in device.lower()', '"NVIDIA (unknown)"', id="a-fallback-holding-the-word"),
        pytest.param('"nvidia" in device.lower()', "read_name()", id="a-fallback-not-known"),
    ],
)
def test_a_main_module_imported_under_no_vendor_test_stays_an_entry_point(
    tmp_path: Path, test: str, fallback: str
) -> None:
    monitor = GPU_MONITOR.replace('"nvidia" in device.lower()', test).replace('device = ""', f"device = {fallback}")
    files = {
        "pkg/__init__.py": "",
        "pkg/gpu.py": monitor,
        "pkg/nvml.py": NVML_MODULE,
        "pkg/rocm_smi.py": "def metrics():\n    return []\n",
        "main.py": "from pkg.gpu import gpu_metrics\nprint(gpu_metrics())\n",
    }
    assert base(tmp_path, files, "pkg/nvml.py") == EVERYWHERE


def test_from_a_package_import_a_name_its_init_defines_does_not_import_the_submodule(tmp_path: Path) -> None:
    """`from pkg import act_quant` gets the wrapper `def act_quant` of pkg/__init__.py, which raises on ROCm before
    importing `pkg/act_quant.py` in its body: a test importing the wrapper does not import the submodule, which runs
    off ROCm only. A name the package does not define imports the submodule (`from pkg import other`)."""
    wrapper = (
        "import torch\n"
        "def _require_nvidia():\n"
        "    if torch.version.hip is not None:\n"
        "        raise RuntimeError('NVIDIA only')\n"
        "def act_quant(x):\n"
        "    _require_nvidia()\n"
        "    from .act_quant import act_quant as impl\n"
        "    return impl(x)\n"
    )
    files = {
        "pkg/__init__.py": wrapper,
        "pkg/act_quant.py": HAZARDS,
        "pkg/other.py": HAZARDS,
        "tests/test_quant.py": "from pkg import act_quant, other\ndef test_quant():\n    act_quant(1)\n",
    }
    assert bases(tmp_path, files, "pkg/act_quant.py", "pkg/other.py") == [NVIDIA_ONLY, EVERYWHERE]


def test_an_importer_parsed_again_after_it_was_dropped_gives_the_same_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process keeps few neighbour modules parsed (`ProjectIndex`'s budget); an importer dropped and parsed again
    has new import nodes, and its gates are read from those, not from the nodes of the tree it was first parsed to."""
    monkeypatch.setattr("rocmlint.python.project._NEIGHBOUR_BYTES_KEPT", 1)  # keeps only the module used last
    files = {
        "pkg/__init__.py": "",
        "pkg/platform.py": PLATFORM,
        "pkg/first.py": HAZARDS,
        "pkg/second.py": HAZARDS,
        "pkg/select.py": "from pkg.platform import IS_ROCM\nif not IS_ROCM:\n    import pkg.first\n    import pkg.second\n",
        "main.py": "import pkg.select\n",
    }
    assert bases(tmp_path, files, "pkg/first.py", "pkg/second.py") == [NVIDIA_ONLY, NVIDIA_ONLY]
