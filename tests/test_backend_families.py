"""Per-vendor backend packages loaded by a name built from the detected vendor (rocmlint/python/backend_families.py,
ImportIndex.backend_family_base, ModuleReach.base)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_cuda_project import write_tree
from test_module_gates import HAZARDS, _codes, base, bases

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.backend_families import computed_load_prefixes, registered_by_vendor, vendor_twin_modules
from rocmlint.python.importers import read_small_file as read
from rocmlint.vendor import EVERYWHERE, NO_GPU, Branch

NVIDIA_ONLY = Branch(False, True)
LOADER = """
import importlib
import os
VENDOR = os.environ.get("VENDOR", "nvidia")
ops = importlib.import_module(f"_{VENDOR}.ops")
"""


def family(loader: str = LOADER, **extra: str) -> dict[str, str]:
    """A backend folder with one package per vendor, each with an `ops` module holding hazards."""
    files = {"pkg/__init__.py": "", "pkg/backend/__init__.py": loader, "main.py": "import pkg.backend\n"}
    for vendor in ("_amd", "_nvidia", "_othervendor"):
        files[f"pkg/backend/{vendor}/__init__.py"] = "NAME = 1\n"
        files[f"pkg/backend/{vendor}/ops.py"] = HAZARDS
    files.update(extra)
    return files


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b'importlib.import_module(f"_{vendor}.ops")', {"_"}, id="f-string"),
        pytest.param(b'import_module(\n    f"pkg.backends.be_{name}"\n)', {"pkg.backends.be_"}, id="multi-line"),
        pytest.param(b'__import__("_" + vendor)', {"_"}, id="concatenation"),
        pytest.param(b'import_module(f"{vendor}.ops")', set(), id="no-constant-prefix"),
        pytest.param(b'import_module(f"pkg.backends.{vendor}")', set(), id="no-name-prefix"),
        pytest.param(b'import_module("pkg.ops")', set(), id="written-name"),
    ],
)
def test_computed_load_prefixes(data: bytes, expected: set[str]) -> None:
    assert computed_load_prefixes(data) == expected


def test_only_the_rocm_member_runs_on_rocm(tmp_path: Path) -> None:
    found = bases(
        tmp_path,
        family(),
        "pkg/backend/_amd/ops.py",
        "pkg/backend/_nvidia/ops.py",
        "pkg/backend/_othervendor/ops.py",
        "pkg/backend/_othervendor/__init__.py",
    )
    assert found == [EVERYWHERE, NVIDIA_ONLY, NO_GPU, EVERYWHERE]


def test_without_a_rocm_member_nothing_is_known(tmp_path: Path) -> None:
    files = family()
    del files["pkg/backend/_amd/__init__.py"], files["pkg/backend/_amd/ops.py"]
    assert base(tmp_path, files, "pkg/backend/_othervendor/ops.py") == EVERYWHERE


def test_without_a_computed_load_nothing_is_known(tmp_path: Path) -> None:
    files = family(loader='import importlib\nops = importlib.import_module("_nvidia.ops")\n')
    assert base(tmp_path, files, "pkg/backend/_othervendor/ops.py") == EVERYWHERE


def test_a_member_the_product_imports_by_name_keeps_its_base(tmp_path: Path) -> None:
    shared = "from pkg.backend._othervendor import ops\n"
    files = family(**{"pkg/common.py": shared, "main.py": "import pkg.backend\nimport pkg.common\n"})
    assert base(tmp_path, files, "pkg/backend/_othervendor/ops.py") == EVERYWHERE


def test_a_test_importing_a_member_does_not_count(tmp_path: Path) -> None:
    files = family(**{"tests/test_ops.py": "from pkg.backend._othervendor import ops\n"})
    assert base(tmp_path, files, "pkg/backend/_othervendor/ops.py") == NO_GPU


def test_the_load_prefix_must_match_the_folder(tmp_path: Path) -> None:
    loader = 'import importlib\nops = importlib.import_module(f"other.backend._{VENDOR}.ops")\n'
    assert base(tmp_path, family(loader=loader), "pkg/backend/_othervendor/ops.py") == EVERYWHERE


def test_hazards_in_another_vendors_member_are_not_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, family())
    assert _codes(root, "pkg/backend/_othervendor/ops.py") == []
    assert _codes(root, "pkg/backend/_nvidia/ops.py") == []
    assert _codes(root, "pkg/backend/_amd/ops.py") == [("ROC107", 2), ("ROC113", 3)]


# --- sibling folders chosen by written imports -----------------------------------------------------------------------
DISPATCH = """
import torch
if torch.version.cuda:
    from pkg.kernels.nvidia.ops import run
elif torch.version.hip:
    from pkg.kernels.amd.ops import run
"""


def siblings(dispatch: str = DISPATCH, **extra: str) -> dict[str, str]:
    """`pkg/kernels/nvidia/` beside `pkg/kernels/amd/`, each with an `ops` module holding hazards, a dispatcher, and a
    Hopper-only helper importing the NVIDIA folder without a gate."""
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels/__init__.py": "",
        "pkg/kernels/nvidia/__init__.py": "",
        "pkg/kernels/nvidia/ops.py": HAZARDS,
        "pkg/kernels/nvidia/sub/tiles.py": HAZARDS,
        "pkg/kernels/amd/__init__.py": "",
        "pkg/kernels/amd/ops.py": HAZARDS,
        "pkg/kernels/dispatch.py": dispatch,
        "pkg/tma.py": "from pkg.kernels.nvidia.sub.tiles import tile\n",
        "main.py": "import pkg.kernels.dispatch\nimport pkg.tma\n",
    }
    files.update(extra)
    return files


def test_the_nvidia_folder_whose_rocm_sibling_the_project_chooses_is_nvidia_code(tmp_path: Path) -> None:
    found = bases(
        tmp_path,
        siblings(),
        "pkg/kernels/nvidia/ops.py",
        "pkg/kernels/nvidia/sub/tiles.py",
        "pkg/kernels/amd/ops.py",
        "pkg/tma.py",
    )
    assert found == [NVIDIA_ONLY, NVIDIA_ONLY, Branch(True, False), EVERYWHERE]


@pytest.mark.parametrize(
    "dispatch",
    [
        pytest.param("from pkg.kernels.nvidia.ops import run\nfrom pkg.kernels.amd.ops import run\n", id="no-gates"),
        pytest.param(
            "import torch\nif torch.version.hip:\n    from pkg.kernels.amd.ops import run\n", id="no-nvidia-import"
        ),
        pytest.param(
            "import torch\nif torch.cuda.is_available():\n    from pkg.kernels.nvidia.ops import run\n"
            "if torch.version.hip:\n    from pkg.kernels.amd.ops import run\n",
            id="not-a-vendor-test",
        ),
    ],
)
def test_without_a_dispatch_between_them_sibling_folders_prove_nothing(tmp_path: Path, dispatch: str) -> None:
    assert base(tmp_path, siblings(dispatch), "pkg/kernels/nvidia/sub/tiles.py") == EVERYWHERE


def test_a_test_of_the_nvidia_folder_tests_nvidia_code(tmp_path: Path) -> None:
    """So does a helper only such tests import; a test of the dispatcher runs everywhere."""
    extra = {
        "pkg/descriptors.py": HAZARDS,
        "tests/test_tiles.py": "from pkg.kernels.nvidia.sub.tiles import tile\nfrom pkg import descriptors\n",
        "tests/test_dispatch.py": "from pkg.kernels.dispatch import run\n" + HAZARDS,
    }
    found = bases(tmp_path, siblings(**extra), "tests/test_tiles.py", "pkg/descriptors.py", "tests/test_dispatch.py")
    assert found == [NVIDIA_ONLY, NVIDIA_ONLY, EVERYWHERE]


def test_a_test_suite_per_vendor_runs_the_nvidia_folder_on_nvidia_only(tmp_path: Path) -> None:
    """`tests/nvidia/` and `tests/amd/` each hold a `test_ops.py`: one suite per vendor, so every file of the NVIDIA
    folder's suite (`test_clusters.py`, a helper only its tests import) is NVIDIA's; a helper the ROCm suite also
    imports runs there too."""
    files = {
        "tests/nvidia/test_ops.py": "from . import nv_helpers, shared\n" + HAZARDS,
        "tests/nvidia/test_clusters.py": HAZARDS,
        "tests/nvidia/nv_helpers.py": HAZARDS,
        "tests/nvidia/shared.py": HAZARDS,
        "tests/amd/test_ops.py": "from ..nvidia import shared\n" + HAZARDS,
        "tests/__init__.py": "",
        "tests/nvidia/__init__.py": "",
        "tests/amd/__init__.py": "",
    }
    found = bases(
        tmp_path,
        files,
        "tests/nvidia/test_ops.py",
        "tests/nvidia/test_clusters.py",
        "tests/nvidia/nv_helpers.py",
        "tests/nvidia/shared.py",
        "tests/amd/test_ops.py",
    )
    assert found == [NVIDIA_ONLY, NVIDIA_ONLY, NVIDIA_ONLY, EVERYWHERE, EVERYWHERE]


def test_test_folders_named_for_the_vendors_without_a_test_in_both_prove_nothing(tmp_path: Path) -> None:
    files = {"tests/nvidia/test_clusters.py": HAZARDS, "tests/amd/test_ops.py": HAZARDS}
    assert base(tmp_path, files, "tests/nvidia/test_clusters.py") == EVERYWHERE


def _script_trees() -> dict[str, str | None]:
    """`problems/nvidia/` and `problems/amd/` each hold an `eval.py` and problems run as scripts beside it."""
    return {
        "problems/nvidia/eval.py": "import utils\n",
        "problems/nvidia/utils.py": "",
        "problems/nvidia/fp4_gemm/reference.py": HAZARDS,
        "problems/amd/eval.py": "import utils\n",
        "problems/amd/utils.py": "",
        "problems/amd/fp8_mm/reference.py": HAZARDS,
    }


def test_script_trees_per_vendor_run_the_nvidia_folder_on_nvidia_only(tmp_path: Path) -> None:
    """Neither folder is imported from outside, and both hold an `eval.py`: one copy of the scripts per vendor."""
    files = {path: text for path, text in _script_trees().items() if text is not None}
    found = bases(tmp_path, files, "problems/nvidia/fp4_gemm/reference.py", "problems/amd/fp8_mm/reference.py")
    assert found == [NVIDIA_ONLY, EVERYWHERE]


_PACKAGES: dict[str, str | None] = {
    "problems/__init__.py": "",
    "problems/nvidia/__init__.py": "",
    "problems/nvidia/fp4_gemm/__init__.py": "",
    "problems/amd/__init__.py": "",
}


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(
            _PACKAGES | {"run.py": "from problems.nvidia.fp4_gemm import reference\n"}, id="imported-from-outside"
        ),
        pytest.param(_PACKAGES | {"run.py": "from problems.amd import utils\n"}, id="rocm-twin-imported-from-outside"),
        pytest.param({"problems/amd/eval.py": None, "problems/amd/utils.py": None}, id="no-twin-module"),
        pytest.param(_PACKAGES | {"problems/amd/eval.py": None, "problems/amd/utils.py": None}, id="only-init-twins"),
    ],
)
def test_vendor_script_trees_need_a_twin_and_no_importer_outside(tmp_path: Path, extra: dict[str, str | None]) -> None:
    files = {path: text for path, text in (_script_trees() | extra).items() if text is not None}
    assert base(tmp_path, files, "problems/nvidia/fp4_gemm/reference.py") == EVERYWHERE


def _vendor_role_folders() -> dict[str, str]:
    """`vendors/<vendor>/` each hold the vendor's monitor named for the vendor, run as a script picked by the vendor's
    name (`os.path.join(root, vendor, vendor + "_monitor.py")`), and NVIDIA's holds model code beside it."""
    return {
        "vendors/nvidia/nvidia_monitor.py": HAZARDS,
        "vendors/nvidia/model/ops.py": HAZARDS,
        "vendors/iluvatar/iluvatar_monitor.py": "",
        "vendors/amd/amd_monitor.py": HAZARDS,
        "run.py": "import os\nMONITOR = os.path.join('vendors', VENDOR, VENDOR + '_monitor.py')\n",
    }


def test_a_vendor_folder_mirrored_by_role_runs_on_nvidia_only(tmp_path: Path) -> None:
    """`nvidia/nvidia_monitor.py` beside `iluvatar/iluvatar_monitor.py` (another accelerator) or `amd/amd_monitor.py`:
    one folder per vendor, picked by the vendor's name; every module of NVIDIA's folder is NVIDIA's."""
    files = _vendor_role_folders()
    found = bases(
        tmp_path, files, "vendors/nvidia/nvidia_monitor.py", "vendors/nvidia/model/ops.py", "vendors/amd/amd_monitor.py"
    )
    assert found == [NVIDIA_ONLY, NVIDIA_ONLY, EVERYWHERE]
    only_iluvatar = {path: text for path, text in files.items() if not path.startswith("vendors/amd/")}
    assert base(tmp_path / "other", only_iluvatar, "vendors/nvidia/model/ops.py") == NVIDIA_ONLY


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"vendors/iluvatar/iluvatar_monitor.py": None, "vendors/amd/amd_monitor.py": None}, id="no-twin"),
        pytest.param(
            {
                "vendors/iluvatar/iluvatar_monitor.py": None,
                "vendors/amd/monitor.py": "",
                "vendors/amd/amd_monitor.py": None,
            },
            id="twin-not-named-for-its-folder",
        ),
        pytest.param(
            {
                "vendors/iluvatar/iluvatar_monitor.py": None,
                "vendors/amd/amd_monitor.py": None,
                "vendors/cpu/cpu_monitor.py": "",
            },
            id="sibling-named-for-no-vendor",
        ),
        pytest.param(
            {
                "vendors/__init__.py": "",
                "vendors/nvidia/__init__.py": "",
                "vendors/nvidia/model/__init__.py": "",
                "run.py": "from vendors.nvidia.model import ops\n",
            },
            id="imported-from-outside",
        ),
        pytest.param(
            {"vendors/cuda/cuda_monitor.py": HAZARDS, "vendors/nvidia/nvidia_monitor.py": None},
            id="cuda-not-the-vendor",
        ),
    ],
)
def test_vendor_folders_by_role_need_a_vendor_twin_and_no_importer_outside(
    tmp_path: Path, change: dict[str, str | None]
) -> None:
    files = {path: text for path, text in (_vendor_role_folders() | change).items() if text is not None}
    checked = (
        "vendors/cuda/cuda_monitor.py" if "vendors/cuda/cuda_monitor.py" in files else "vendors/nvidia/model/ops.py"
    )
    assert base(tmp_path, files, checked) == EVERYWHERE


def test_hazards_in_the_nvidia_sibling_are_not_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, siblings())
    assert _codes(root, "pkg/kernels/nvidia/sub/tiles.py") == []
    assert _codes(root, "pkg/kernels/amd/ops.py") == [("ROC107", 2)]


# A device-type enum chosen by a vendor test (vendor_values.py) in a package below a folder without `__init__.py`, and
# implementation folders whose names carry the vendor's word, holding modules only in subfolders.
DEVICE_TYPE = """
import enum
import torch
class DeviceType(enum.IntEnum):
    Cpu = 0
    Cuda = 1
    ROCm = 4
def get_device_type():
    if torch.cuda.is_available():
        if torch.version.hip is not None:
            return DeviceType.ROCm
        return DeviceType.Cuda
    return DeviceType.Cpu
"""
ENUM_DISPATCH = """
from pkg.device_type import DeviceType, get_device_type
device_type = get_device_type()
if device_type == DeviceType.ROCm:
    from pkg.models.attention.rocm_impl.aiter import AiterImpl
elif device_type == DeviceType.Cuda:
    from pkg.models.attention.cuda_impl.flash.xqa import XqaImpl
    from pkg.models.attention.cuda_mla_impl.mla import MlaImpl
"""


def impl_folders(dispatch: str = ENUM_DISPATCH) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/device_type.py": DEVICE_TYPE,
        "pkg/models/attention/__init__.py": dispatch,
        "pkg/models/attention/rocm_impl/aiter.py": HAZARDS,
        "pkg/models/attention/cuda_impl/flash/xqa.py": HAZARDS,
        "pkg/models/attention/cuda_impl/test/test_xqa.py": "from pkg.models.attention.cuda_impl.flash.xqa import f\n",
        "pkg/models/attention/cuda_mla_impl/mla.py": HAZARDS,
        "main.py": "import pkg.models.attention\n",
    }


def test_implementation_folders_chosen_by_a_device_type_enum(tmp_path: Path) -> None:
    """`cuda_impl/` and `cuda_mla_impl/` beside `rocm_impl/`, the package choosing them by the device type a vendor test
    returned: NVIDIA code, and so is a test in them (`pkg/models/` has no `__init__.py`: the dispatcher's own imports
    resolve from the project's root)."""
    found = bases(
        tmp_path,
        impl_folders(),
        "pkg/models/attention/cuda_impl/flash/xqa.py",
        "pkg/models/attention/cuda_impl/test/test_xqa.py",
        "pkg/models/attention/cuda_mla_impl/mla.py",
        "pkg/models/attention/rocm_impl/aiter.py",
    )
    assert found == [NVIDIA_ONLY, NVIDIA_ONLY, NVIDIA_ONLY, Branch(True, False)]


def test_implementation_folders_without_a_vendor_choice_prove_nothing(tmp_path: Path) -> None:
    dispatch = ENUM_DISPATCH.replace("DeviceType.ROCm", "DeviceType.Cpu").replace("DeviceType.Cuda", "DeviceType.Cpu")
    found = bases(tmp_path, impl_folders(dispatch), "pkg/models/attention/cuda_impl/flash/xqa.py")
    assert found == [EVERYWHERE]


# --- sibling folders chosen by a registry keyed by vendor -----------------------------------------------------------
# Module-level statements run on import (line 3), the code in defs (lines 6 and 9) only when the registry's key is
# looked up.
REGISTERED = """import torch
from pkg.backend import registry
WEIGHT = weight.to(torch.float8_e4m3fn)
@registry.reg("{vendor}.gemm.gen_function")
def gen_function():
    return weight.to(torch.float8_e4m3fn)
class Target:
    def flags(self):
        return weight.to(torch.float8_e5m2)
"""
HAZARD_LINES = [("ROC107", 3), ("ROC107", 6), ("ROC107", 9)]
LOOKUP = """
from pkg.backend import registry
def codegen(target):
    return registry.get(target.name() + ".gemm.gen_function")()
"""


def registry_tree(rocm_entry: str = "gemm.gen_function", **extra: str) -> dict[str, str]:
    """`pkg/backend/cuda/` beside `pkg/backend/rocm/`, both imported by the backend package, registering an entry
    under their own vendor's name."""
    files = {
        "pkg/__init__.py": "",
        "pkg/backend/__init__.py": "from pkg.backend import codegen, cuda, rocm\n",
        "pkg/backend/registry.py": "TABLE = {}\n",
        "pkg/backend/codegen.py": LOOKUP,
        "pkg/backend/cuda/__init__.py": "from pkg.backend.cuda import ops\n",
        "pkg/backend/cuda/ops.py": REGISTERED.replace("{vendor}", "cuda"),
        "pkg/backend/rocm/__init__.py": "from pkg.backend.rocm import ops\n",
        "pkg/backend/rocm/ops.py": REGISTERED.replace("{vendor}.gemm.gen_function", f"rocm.{rocm_entry}"),
        "main.py": "import pkg.backend\n",
    }
    files.update(extra)
    return files


def test_registered_by_vendor(tmp_path: Path) -> None:
    root = write_tree(tmp_path, registry_tree())
    files = sorted(str(path) for path in root.rglob("*.py"))
    proof = registered_by_vendor(str(root / "pkg/backend/cuda"), (str(root / "pkg/backend/rocm"),), files, read)
    assert proof == (str(root / "pkg/backend/cuda/ops.py"), str(root / "pkg/backend/rocm/ops.py"))


def test_the_defs_of_a_folder_a_registry_keyed_by_vendor_chooses_are_nvidia_code(tmp_path: Path) -> None:
    """Its module-level statements run wherever it is imported; the ROCm folder's defs run on ROCm."""
    root = write_tree(tmp_path, registry_tree())
    assert _codes(root, "pkg/backend/cuda/ops.py") == [("ROC107", 3)]
    assert _codes(root, "pkg/backend/rocm/ops.py") == HAZARD_LINES


@pytest.mark.parametrize(
    ("files", "why"),
    [
        pytest.param(registry_tree(rocm_entry="conv.gen_function"), "no entry for both", id="different-entries"),
        pytest.param(
            registry_tree(**{"pkg/backend/rocm/ops.py": REGISTERED.replace("{vendor}", "cuda")}),
            "the ROCm folder's keys are not named for it",
            id="keys-not-named-for-the-folder",
        ),
        pytest.param(
            registry_tree(**{"pkg/backend/shared.py": "from pkg.backend.cuda.ops import Target\n"}),
            "a module of the product calls it directly",
            id="imported-from-outside",
        ),
        pytest.param(
            registry_tree(
                **{
                    "pkg/backend/cuda/ops.py": REGISTERED.replace("{vendor}", "cuda") + "gen_function()\n"
                    "DEFAULT = Target()\n"
                }
            ),
            "this module calls its defs at import",
            id="called-at-import",
        ),
    ],
)
def test_without_a_vendor_keyed_choice_the_defs_keep_their_base(
    tmp_path: Path, files: dict[str, str], why: str
) -> None:
    root = write_tree(tmp_path, files)
    assert _codes(root, "pkg/backend/cuda/ops.py") == HAZARD_LINES, why


def test_a_test_importing_the_nvidia_folder_does_not_count(tmp_path: Path) -> None:
    root = write_tree(tmp_path, registry_tree(**{"tests/test_target.py": "from pkg.backend.cuda.ops import Target\n"}))
    assert _codes(root, "pkg/backend/cuda/ops.py") == [("ROC107", 3)]


def test_verbose_notes_say_a_test_of_the_nvidia_suite_runs_off_rocm(tmp_path: Path) -> None:
    files = {"tests/nvidia/test_ops.py": HAZARDS, "tests/amd/test_ops.py": HAZARDS}
    root = write_tree(tmp_path, files)
    report = Engine().check_path(root / "tests/nvidia/test_ops.py", Settings(root=root))
    assert report.diagnostics == []
    why = "the module only runs off ROCm (where the project imports it, what it imports, or its folder)"
    notes = [note.split(": ", 1)[1] for note in report.gated_notes]
    assert notes == [f"ROC107 not reported: {why}", f"ROC113 not reported: {why}", f"findings not reported: {why}"]


# --- twin modules per vendor in one folder -------------------------------------------------------------------------
# The NVIDIA module's module-level statement (line 4) runs wherever it is imported; its defs (lines 7 and 10) only where
# the project uses NVIDIA's implementation.
NVIDIA_TWIN = """import pynvml
from pkg.device import GPUDevice
pynvml.nvmlInit()
def nvml_is_available():
    return pynvml.nvmlInit() is None
class NvidiaGPUDevice(GPUDevice):
    def power(self):
        return pynvml.nvmlDeviceGetPowerUsage(self.handle)
"""
NVIDIA_TWIN_LINES = [("ROC104", 1), ("ROC117", 3), ("ROC117", 5), ("ROC117", 8)]
AMD_TWIN = """import amdsmi
from pkg.device import GPUDevice
def amdsmi_is_available():
    return amdsmi.amdsmi_init() is None
class AMDGPUDevice(GPUDevice):
    def power(self):
        return amdsmi.amdsmi_get_power_info(self.handle)
"""
TWIN_DISPATCH = """from pkg import gpu_amd, gpu_nvidia
def devices():
    if gpu_nvidia.nvml_is_available():
        return gpu_nvidia.NvidiaGPUDevice()
    return gpu_amd.AMDGPUDevice()
"""


def twin_tree(nvidia: str = "pkg/gpu_nvidia.py", amd: str = "pkg/gpu_amd.py", **extra: str) -> dict[str, str]:
    """`gpu_nvidia.py` beside `gpu_amd.py`, both imported by a dispatcher without a gate."""
    files = {
        "pkg/__init__.py": "",
        "pkg/device.py": "class GPUDevice:\n    pass\n",
        "pkg/gpus.py": TWIN_DISPATCH,
        nvidia: NVIDIA_TWIN,
        amd: AMD_TWIN,
        "main.py": "from pkg.gpus import devices\ndevices()\n",
    }
    files.update(extra)
    return files


@pytest.mark.parametrize(
    ("nvidia", "amd"),
    [
        pytest.param("gpu_nvidia.py", "gpu_amd.py", id="vendor-word-swapped"),
        pytest.param("nvml.py", "amd.py", id="management-library-and-vendor"),
        pytest.param("nvml.py", "rocm_smi.py", id="management-libraries"),
    ],
)
def test_vendor_twin_modules(tmp_path: Path, nvidia: str, amd: str) -> None:
    files = {"pkg/device.py": "", "pkg/" + nvidia: NVIDIA_TWIN, "pkg/" + amd: AMD_TWIN, "pkg/gpu_intel.py": AMD_TWIN}
    root = write_tree(tmp_path, files)
    twins = vendor_twin_modules(sorted(str(path) for path in root.rglob("*.py")), lambda path: ast.parse(read(path)))
    assert twins == {str(root / "pkg" / nvidia): str(root / "pkg" / amd)}


def test_the_defs_of_the_nvidia_twin_module_are_nvidia_code(tmp_path: Path) -> None:
    """Its module-level statements run wherever it is imported."""
    root = write_tree(tmp_path, twin_tree())
    assert _codes(root, "pkg/gpu_nvidia.py") == [("ROC104", 1), ("ROC117", 3)]


@pytest.mark.parametrize(
    ("files", "why"),
    [
        pytest.param(twin_tree(amd="pkg/gpu_amd_stats.py"), "the names differ beyond the vendor", id="other-role"),
        pytest.param(twin_tree(amd="other/gpu_amd.py"), "not in the same folder", id="other-folder"),
        pytest.param(twin_tree(nvidia="pkg/gpu_cuda.py", amd="pkg/gpu_hip.py"), "CUDA names no vendor", id="cuda"),
        pytest.param(
            twin_tree(**{"pkg/gpu_amd.py": AMD_TWIN.replace("(GPUDevice)", "(Enum)").replace("amdsmi_is", "is")}),
            "no shared base of their own, no def named for each vendor alike",
            id="no-shared-role",
        ),
    ],
)
def test_modules_named_for_the_vendors_without_a_shared_role_prove_nothing(
    tmp_path: Path, files: dict[str, str], why: str
) -> None:
    root = write_tree(tmp_path, files)
    nvidia = next(name for name in files if name.startswith("pkg/gpu_") and "amd" not in name and "hip" not in name)
    assert _codes(root, nvidia) == NVIDIA_TWIN_LINES, why
