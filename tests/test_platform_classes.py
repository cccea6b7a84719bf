"""Per-vendor platform classes and what only the NVIDIA one chooses (rocmlint/python/platform_classes.py,
ImportIndex.platform_definitions, GateAnalyzer._chosen_conditions)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_backend_families import HAZARD_LINES, REGISTERED
from test_cuda_project import write_tree
from test_module_gates import _codes

from rocmlint.python.platform_classes import paths_chosen_off_rocm, platform_modules, unreached_definitions

PLUGINS = """
def cuda_platform_plugin():
    return "pkg.platforms.cuda.CudaPlatform" if is_cuda() else None
def rocm_platform_plugin():
    return "pkg.platforms.rocm.RocmPlatform" if is_rocm() else None
"""
CUDA_PLATFORM = """import torch
from pkg.platforms.interface import Platform
class CudaPlatform(Platform):
    @classmethod
    def get_attn_backend_cls(cls, selected):
        if selected == "SPARSE":
            from pkg.backends.sparse import SparseBackend
            return "pkg.backends.sparse.SparseBackend"
        if torch.cuda.get_device_capability()[0] >= 9:
            return "pkg.backends.flash.FlashBackend"
        return "pkg.backends.sdpa.SdpaBackend"
"""
ROCM_PLATFORM = """from pkg.platforms.interface import Platform
class RocmPlatform(Platform):
    @classmethod
    def get_attn_backend_cls(cls, selected):
        if selected == "SPARSE":
            raise ValueError("not supported on ROCm")
        return "pkg.backends.flash.FlashBackend" if selected == "FLASH" else "pkg.backends.sdpa.SdpaBackend"
"""
# A backend module: the backend class the platform returns, its implementation, a helper.
BACKEND = """import torch
class {name}Backend:
    @staticmethod
    def get_impl_cls():
        return {name}Impl
class {name}Impl:
    def forward(self, x):
        return x.to(torch.float8_e4m3fn)
def helper(x):
    return x.to(torch.float8_e5m2)
"""
BACKEND_LINES = [("ROC107", 8), ("ROC107", 10)]


def platform_tree(**extra: str) -> dict[str, str]:
    """`pkg/platforms/cuda.py` beside `pkg/platforms/rocm.py`, picked by name in the package's `__init__.py`; the CUDA
    platform returns the sparse backend, which the ROCm platform refuses."""
    files = {
        "pkg/__init__.py": "",
        "pkg/platforms/__init__.py": PLUGINS,
        "pkg/platforms/interface.py": "class Platform:\n    pass\n",
        "pkg/platforms/cuda.py": CUDA_PLATFORM,
        "pkg/platforms/rocm.py": ROCM_PLATFORM,
        "pkg/backends/__init__.py": "",
        "pkg/backends/sparse.py": BACKEND.format(name="Sparse"),
        "pkg/backends/flash.py": BACKEND.format(name="Flash"),
        "pkg/backends/sdpa.py": BACKEND.format(name="Sdpa"),
        "main.py": "import pkg.platforms\n",
    }
    files.update(extra)
    return files


def _module(code: str) -> ast.Module:
    return ast.parse(code)


def test_platform_modules_pairs_an_nvidia_named_module_with_rocm_named_siblings() -> None:
    files = ["/p/platforms/cuda.py", "/p/platforms/rocm.py", "/p/platforms/cpu.py", "/p/other/cuda.py"]
    assert platform_modules(files) == {"/p/platforms/cuda.py": ("/p/platforms/rocm.py",)}


def test_paths_chosen_off_rocm() -> None:
    assert paths_chosen_off_rocm(_module(CUDA_PLATFORM), [_module(ROCM_PLATFORM)]) == {
        "pkg.backends.sparse.SparseBackend"
    }


@pytest.mark.parametrize(
    ("rocm", "why"),
    [
        pytest.param(
            ROCM_PLATFORM.replace('return "pkg.backends.flash.FlashBackend" if', "return selected.get_path() if"),
            "a computed return may be any backend",
            id="computed-return",
        ),
        pytest.param(
            "class RocmPlatform(Platform):\n    pass\n", "the base class's method decides", id="method-inherited"
        ),
    ],
)
def test_a_rocm_method_returning_what_it_cannot_tell_proves_nothing(rocm: str, why: str) -> None:
    assert paths_chosen_off_rocm(_module(CUDA_PLATFORM), [_module(rocm)]) == frozenset(), why


def test_a_class_path_the_rocm_module_names_anywhere_stays_rocms() -> None:
    rocm = ROCM_PLATFORM + 'FALLBACK = "pkg.backends.sparse.SparseBackend"\n'
    assert paths_chosen_off_rocm(_module(CUDA_PLATFORM), [_module(rocm)]) == frozenset()


def test_unreached_definitions_follows_what_the_used_names_read() -> None:
    tree = _module(BACKEND.format(name="Sparse"))
    assert unreached_definitions(tree, set(), imported=False) == {"SparseBackend", "SparseImpl", "helper"}
    assert unreached_definitions(tree, {"SparseBackend"}, imported=True) == {"helper"}


def test_module_level_code_reaches_what_it_calls_only_where_the_module_is_imported() -> None:
    tree = _module(BACKEND.format(name="Sparse") + "DEFAULT = helper(1)\nALIAS = SparseImpl\n")
    assert unreached_definitions(tree, set(), imported=True) == {"SparseBackend", "SparseImpl"}
    assert unreached_definitions(tree, set(), imported=False) == {"SparseBackend", "SparseImpl", "helper"}


def test_a_backend_only_the_nvidia_platform_chooses_is_nvidia_code(tmp_path: Path) -> None:
    root = write_tree(tmp_path, platform_tree())
    assert _codes(root, "pkg/backends/sparse.py") == []
    assert _codes(root, "pkg/backends/flash.py") == BACKEND_LINES
    assert _codes(root, "pkg/backends/sdpa.py") == BACKEND_LINES


def test_the_nvidia_platform_module_itself_is_nvidia_code(tmp_path: Path) -> None:
    root = write_tree(tmp_path, platform_tree())
    assert _codes(root, "pkg/platforms/cuda.py") == []


def test_a_platform_module_a_product_module_uses_keeps_its_base(tmp_path: Path) -> None:
    use = "from pkg.platforms.cuda import CudaPlatform\nCudaPlatform.get_attn_backend_cls(None)\n"
    root = write_tree(tmp_path, platform_tree(**{"pkg/worker.py": use, "main.py": "import pkg.worker\n"}))
    assert _codes(root, "pkg/platforms/cuda.py") == [("ROC113", 9)]


def test_a_class_another_module_only_compares_with_stays_chosen(tmp_path: Path) -> None:
    stage = "from pkg.backends.sparse import SparseBackend\ndef sparse(backend):\n    return backend == SparseBackend\n"
    root = write_tree(tmp_path, platform_tree(**{"pkg/stage.py": stage, "main.py": "import pkg.stage\n"}))
    assert _codes(root, "pkg/backends/sparse.py") == []


@pytest.mark.parametrize(
    ("extra", "expected", "why"),
    [
        pytest.param(
            {"pkg/stage.py": "from pkg.backends.sparse import helper\nhelper(1)\n"},
            [("ROC107", 10)],
            "a module of the product calls the helper",
            id="helper-used-elsewhere",
        ),
        pytest.param(
            {"pkg/stage.py": "from pkg.backends.sparse import SparseBackend\nSparseBackend.get_impl_cls()\n"},
            [("ROC107", 8)],
            "a module of the product uses the backend class, whose code names the implementation",
            id="backend-used-elsewhere",
        ),
        pytest.param(
            {"pkg/stage.py": "from pkg.backends import sparse\n"},
            BACKEND_LINES,
            "a module of the product imports the module itself",
            id="module-imported",
        ),
        pytest.param(
            {
                "pkg/platforms/__init__.py": "def cuda_platform_plugin():\n    return 'pkg.platforms.cuda.CudaPlatform'\n"
            },
            BACKEND_LINES,
            "the package does not pick the ROCm platform class by name",
            id="rocm-class-never-picked",
        ),
        pytest.param(
            {
                "pkg/platforms/rocm.py": ROCM_PLATFORM.replace(
                    "raise ValueError(", "from pkg.backends import sparse  # "
                )
            },
            BACKEND_LINES,
            "the ROCm platform module imports the backend",
            id="rocm-imports-it",
        ),
    ],
)
def test_without_an_nvidia_only_choice_the_backend_keeps_its_base(
    tmp_path: Path, extra: dict[str, str], expected: list[tuple[str, int]], why: str
) -> None:
    root = write_tree(tmp_path, platform_tree(**extra))
    assert _codes(root, "pkg/backends/sparse.py") == expected, why


def test_a_test_importing_the_backend_does_not_count(tmp_path: Path) -> None:
    test = "from pkg.backends.sparse import SparseImpl, helper\ndef test_it():\n    helper(SparseImpl())\n"
    root = write_tree(tmp_path, platform_tree(**{"tests/test_sparse.py": test}))
    assert _codes(root, "pkg/backends/sparse.py") == []


def test_a_registry_keyed_by_vendor_still_decides_a_module_no_platform_chooses(tmp_path: Path) -> None:
    root = write_tree(tmp_path, platform_tree(**{"pkg/backends/other.py": REGISTERED.replace("{vendor}", "cuda")}))
    assert _codes(root, "pkg/backends/other.py") == HAZARD_LINES
