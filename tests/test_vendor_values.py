"""Vendor-valued names (rocmlint/python/vendor_values.py): the strings a name, attribute or call result
holds per vendor, and comparisons of them as gates.

Each case places `HAZARD()` calls as tests/test_gating.py does and asks where they can run:
`(on_rocm, on_nvidia)`, False meaning never.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_gating import BOTH, NEVER, NVIDIA_ONLY, ROCM_ONLY, analyze, everywhere, where, where_in_project, write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.project import ProjectIndex
from rocmlint.python.vendor_values import VendorStrings
from rocmlint.vendor import Vendor

_PLATFORM = """
import torch
PLATFORM = "rocm" if torch.version.hip else "cuda"
"""

_CHAIN = """
import torch
if torch.version.hip:
    ACCEL = "hip"
elif hasattr(torch, "xpu") and torch.xpu.is_available():
    ACCEL = "xpu"
elif torch.backends.mps.is_available():
    ACCEL = "mps"
else:
    ACCEL = "cuda"
"""

FORMS = [
    pytest.param(_PLATFORM + 'if PLATFORM == "cuda":\n    HAZARD()\n', NVIDIA_ONLY, id="equal"),
    pytest.param(_PLATFORM + 'if PLATFORM != "cuda":\n    HAZARD()\n', ROCM_ONLY, id="not-equal"),
    pytest.param(_PLATFORM + 'if "cuda" == PLATFORM:\n    HAZARD()\n', NVIDIA_ONLY, id="literal-first"),
    pytest.param(_PLATFORM + 'if PLATFORM == "rocm":\n    pass\nelse:\n    HAZARD()\n', NVIDIA_ONLY, id="else-arm"),
    pytest.param(_PLATFORM + 'if PLATFORM == "xpu":\n    HAZARD()\n', NEVER, id="another-accelerators-value"),
    pytest.param(
        _PLATFORM + 'def run():\n    if PLATFORM in ("xpu", "rocm"):\n        return\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="in-tuple-early-return",
    ),
    pytest.param(_PLATFORM + 'if PLATFORM not in ["rocm"]:\n    HAZARD()\n', NVIDIA_ONLY, id="not-in-list"),
    pytest.param(_PLATFORM + 'if PLATFORM in {"rocm", "xpu"}:\n    HAZARD()\n', ROCM_ONLY, id="in-set"),
    pytest.param(
        _PLATFORM + 'NON_CUDA = frozenset(("rocm", "xpu"))\nif PLATFORM not in NON_CUDA:\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="in-named-frozenset",
    ),
    pytest.param(_PLATFORM + 'CUDA = "cuda"\nif PLATFORM == CUDA:\n    HAZARD()\n', NVIDIA_ONLY, id="named-constant"),
    pytest.param(
        _PLATFORM + 'KIND = "hip" if torch.version.hip else "cuda"\nif PLATFORM == KIND == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="chain-and-of-links",
    ),
    pytest.param(
        _PLATFORM + 'ON_CUDA = PLATFORM == "cuda"\nif ON_CUDA:\n    HAZARD()\n', NVIDIA_ONLY, id="truth-of-a-flag"
    ),
    pytest.param(
        _PLATFORM + 'def on_cuda():\n    return PLATFORM == "cuda"\nif not on_cuda():\n    HAZARD()\n',
        ROCM_ONLY,
        id="helper-returning-comparison",
    ),
    pytest.param(
        _PLATFORM + 'if PLATFORM == "cuda" and torch.cuda.is_available():\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="conjoined",
    ),
    pytest.param(
        'import torch\nARCH = "gfx942" if torch.version.hip else None\nif ARCH is None:\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="is-none",
    ),
    pytest.param(
        'import torch\nDEVICE = "cuda"\nif torch.version.hip:\n    DEVICE = "rocm"\nif DEVICE == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="overridden-on-rocm",
    ),
    pytest.param(
        'import torch\nif not torch.version.hip:\n    P = "cuda"\nelse:\n    P = "rocm"\nif P == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="if-else-assignments",
    ),
    pytest.param(
        'import torch\nif torch.version.hip:\n    P = "rocm"\nif P != "rocm":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="set-only-on-rocm",
    ),
    pytest.param(
        "import torch\n"
        'try:\n    P = "rocm" if torch.version.hip else "cuda"\nexcept ImportError:\n    P = "cpu"\n'
        'if P == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="fallback-in-handler-adds-a-value",
    ),
    pytest.param(
        'import torch\nIS_HIP = torch.version.hip is not None\ndef device_kind():\n    return "hip" if IS_HIP else "cuda"\n'
        'if device_kind() == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="function-result",
    ),
    pytest.param(
        'import torch\ndef backend(device=None):\n    if torch.version.hip:\n        return "rocm"\n    return "cuda"\n'
        'if backend(0) != "rocm":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="function-early-return-with-arguments",
    ),
    pytest.param(
        'import os\nimport torch\ndef kind():\n    if torch.version.hip:\n        return "rocm"\n    return os.environ["KIND"]\n'
        'if kind() == "cuda":\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="function-known-on-rocm-only",
    ),
    pytest.param(
        "import torch\nclass Runner:\n"
        '    def __init__(self):\n        self.platform = "rocm" if torch.version.hip else "cuda"\n'
        '    def run(self):\n        if self.platform == "cuda":\n            HAZARD()\n',
        NVIDIA_ONLY,
        id="self-attribute",
    ),
    pytest.param(
        "import torch\nclass Config:\n"
        '    BACKEND = "hip" if torch.version.hip else "cuda"\n'
        'if Config.BACKEND in ("hip",):\n    pass\nelse:\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="class-attribute",
    ),
    pytest.param(
        "import torch\nclass Platform:\n"
        '    def name(self):\n        return "rocm" if torch.version.hip else "cuda"\n'
        '    def setup(self):\n        if self.name() == "cuda":\n            HAZARD()\n',
        NVIDIA_ONLY,
        id="method-result",
    ),
]


@pytest.mark.parametrize(("code", "expected"), FORMS)
def test_forms(code: str, expected: tuple[bool | None, bool | None]) -> None:
    assert where(code) == expected


def test_if_elif_chain_with_other_accelerators() -> None:
    code = (
        _CHAIN
        + """
def run():
    if ACCEL in ("xpu", "hip"):
        return
    HAZARD("after-return")
if ACCEL == "cuda":
    HAZARD("cuda")
if ACCEL == "mps":
    HAZARD("mps")
if ACCEL != "xpu":
    HAZARD("not-xpu")
if ACCEL == "hip":
    HAZARD("hip")
"""
    )
    assert everywhere(code) == {
        "after-return": NVIDIA_ONLY,
        "cuda": NVIDIA_ONLY,
        "mps": NVIDIA_ONLY,  # an NVIDIA build may run on a Mac: only ROCm is ruled out
        "not-xpu": BOTH,
        "hip": ROCM_ONLY,
    }


def test_rocm_arm_after_another_accelerators_arm() -> None:
    code = """
    import torch
    if torch.xpu.is_available():
        ACCEL = "xpu"
    elif torch.version.hip:
        ACCEL = "rocm"
    else:
        ACCEL = "cuda"
    if ACCEL == "cuda":
        HAZARD("cuda")
    if ACCEL == "rocm":
        HAZARD("rocm")
    """
    assert everywhere(code) == {"cuda": NVIDIA_ONLY, "rocm": ROCM_ONLY}


def test_strings_per_vendor() -> None:
    analyzed = analyze(_CHAIN + "x = ACCEL\n")
    strings = analyzed.gates.vendor_values.strings(analyzed.expression("x"))
    assert strings == VendorStrings(frozenset({"hip"}), frozenset({"xpu", "mps", "cuda"}))


UNKNOWN_CASES = [
    pytest.param(
        'import os\nPLATFORM = os.environ.get("PLATFORM", "cuda")\nif PLATFORM == "cuda":\n    HAZARD()\n',
        id="chosen-by-the-environment",  # a ROCm user may keep the default "cuda"
    ),
    pytest.param('PLATFORM = "cuda"\nif PLATFORM == "cuda":\n    HAZARD()\n', id="a-setting-not-a-vendor-test"),
    pytest.param('def run(kind):\n    if kind == "cuda":\n        HAZARD()\n', id="parameter"),
    pytest.param('for kind in ("rocm", "cuda"):\n    if kind == "cuda":\n        HAZARD()\n', id="loop-variable"),
    pytest.param(_PLATFORM + 'PLATFORM += "-gpu"\nif PLATFORM == "cuda-gpu":\n    HAZARD()\n', id="augmented"),
    pytest.param(
        'import torch\nP = "cuda"\nif P == "cuda":\n    HAZARD()\nif torch.version.hip:\n    P = "rocm"\n',
        id="read-before-the-rocm-assignment",
    ),
    pytest.param(
        _PLATFORM + 'def force():\n    global PLATFORM\n    PLATFORM = "cuda"\nif PLATFORM == "cuda":\n    HAZARD()\n',
        id="overwritten-elsewhere",
    ),
    pytest.param(
        'import torch\nP = "rocm" if torch.version.hip else detect()\nif P == "cuda":\n    pass\nelse:\n    HAZARD()\n',
        id="unknown-on-nvidia",
    ),
    pytest.param(
        'import torch\nP = "rocm" if torch.version.hip else "cuda"\nP = P.upper()\nif P == "CUDA":\n    HAZARD()\n',
        id="transformed",
    ),
    pytest.param('import torch\nP = "rocm" if torch.version.hip else "cuda"\nif P > "a":\n    HAZARD()\n', id="order"),
    pytest.param(
        "import torch\nclass Runner:\n"
        '    def force_cuda(self):\n        self.kind = "cuda"\n'
        '    def __init__(self):\n        self.kind = "rocm" if torch.version.hip else "cuda"\n'
        '    def run(self):\n        if self.kind == "cuda":\n            HAZARD()\n',
        id="attribute-set-in-two-methods",  # either may run last
    ),
]


@pytest.mark.parametrize("code", UNKNOWN_CASES)
def test_unknown_values_are_no_gate(code: str) -> None:
    assert where(code) == BOTH


def test_the_written_form_completes_what_the_values_leave_unknown() -> None:
    """`P == "rocm"` is a ROCm test by its literal (gating's written form); what P holds on ROCm does not
    change that, and on NVIDIA (unknown here) the literal still says no."""
    analyzed = analyze('import torch\nP = "rocm" if torch.version.hip else detect()\nx = P == "rocm"\n')
    assert analyzed.gates.value(analyzed.expression("x")) == Vendor(True, False)


def test_reassigned_under_a_comparison_of_itself() -> None:
    """The test reads the value assigned before it: false on ROCm, so "cpu" is never assigned there; on
    NVIDIA it always is, and replaces "cuda"."""
    code = 'import torch\nP = "rocm" if torch.version.hip else "cuda"\nif P == "cuda":\n    P = "cpu"\nx = P\n'
    analyzed = analyze(code)
    strings = analyzed.gates.vendor_values.strings(analyzed.expression("x"))
    assert strings == VendorStrings(frozenset({"rocm"}), frozenset({"cpu"}))


def test_a_cycle_is_unknown() -> None:
    """In a function, the test reads every assignment of the global, its own among them: unknown, so
    "cpu" may be assigned on both vendors."""
    code = """
    import torch
    P = "rocm" if torch.version.hip else "cuda"
    def fall_back():
        global P
        if P == "cuda":
            P = "cpu"
    x = P
    """
    analyzed = analyze(code)
    strings = analyzed.gates.vendor_values.strings(analyzed.expression("x"))
    assert strings == VendorStrings(frozenset({"rocm", "cpu"}), frozenset({"cuda", "cpu"}))


def test_decided_in_any_order() -> None:
    """A test further down the module that compares the name does not take part in deciding the name: asked
    first from inside a function, the module-level exit after the assignment still gates what follows."""
    code = """
    import torch
    PLATFORM = "rocm" if torch.version.hip else "cuda"
    def helper():
        return PLATFORM == "cuda"
    if PLATFORM != "cuda":
        raise ImportError("NVIDIA only")
    HAZARD()
    """
    analyzed = analyze(code)
    compare = next(node for node in analyzed.semantic.parents if isinstance(node, ast.Compare))
    assert analyzed.gates.value(compare) == Vendor(False, True)
    assert analyzed.branch(analyzed.hazard()) == NVIDIA_ONLY


def test_a_test_that_needs_a_later_statement_of_its_own_block() -> None:
    """Deciding the module-level test asks where the assignment written after it runs, while the module's
    statements are being scanned up to the test: the scan is not entered again (no exits assumed before
    the assignment), and the answer stands."""
    code = """
    import torch
    def on_cuda():
        return PLATFORM == "cuda"
    if not on_cuda():
        raise ImportError("NVIDIA only")
    PLATFORM = "rocm" if torch.version.hip else "cuda"
    HAZARD()
    """
    assert where(code) == NVIDIA_ONLY


def test_long_chains_of_names_stay_bounded() -> None:
    lines = ["import torch", 'P0 = "rocm" if torch.version.hip else "cuda"']
    for index in range(400):
        lines += [f'if P{index} == "cuda":', f'    P{index + 1} = "cuda"', "else:", f'    P{index + 1} = "rocm"']
    lines += ['if P400 == "cuda":', "    HAZARD()"]
    assert where("\n".join(lines) + "\n") in (NVIDIA_ONLY, BOTH)  # never a RecursionError


_PACKAGE = {
    "pkg/__init__.py": "from .platform import PLATFORM as CURRENT\n",
    "pkg/platform.py": _PLATFORM
    + 'def device_kind():\n    return "hip" if torch.version.hip else "cuda"\n'
    + 'if torch.version.hip:\n    ACCEL = "hip"\nelif torch.xpu.is_available():\n    ACCEL = "xpu"\nelse:\n    ACCEL = "cuda"\n',
    "pkg/consts.py": 'CUDA = "cuda"\n',
}

CROSS_MODULE = [
    pytest.param(
        'from pkg.platform import PLATFORM\nif PLATFORM == "cuda":\n    HAZARD()\n', NVIDIA_ONLY, id="from-import"
    ),
    pytest.param('from .platform import PLATFORM as P\nif P != "cuda":\n    HAZARD()\n', ROCM_ONLY, id="relative-as"),
    pytest.param(
        'import pkg.platform as plat\nif plat.PLATFORM == "cuda":\n    HAZARD()\n', NVIDIA_ONLY, id="module-attr"
    ),
    pytest.param(
        'from pkg.platform import device_kind\nif device_kind() == "cuda":\n    HAZARD()\n', NVIDIA_ONLY, id="function"
    ),
    pytest.param(
        'from pkg import platform\ndef f():\n    if platform.ACCEL in ("xpu", "hip"):\n        return\n    HAZARD()\n',
        NVIDIA_ONLY,
        id="if-elif-chain",
    ),
    pytest.param('from pkg import CURRENT\nif CURRENT == "cuda":\n    HAZARD()\n', NVIDIA_ONLY, id="re-exported"),
    pytest.param(
        "from pkg.platform import PLATFORM\nfrom pkg.consts import CUDA\nif PLATFORM == CUDA:\n    HAZARD()\n",
        NVIDIA_ONLY,
        id="constant-from-another-module",
    ),
    pytest.param('from pkg.consts import CUDA\nif CUDA == "cuda":\n    HAZARD()\n', BOTH, id="constant-alone"),
    pytest.param('from pkg.platform import MISSING\nif MISSING == "cuda":\n    HAZARD()\n', BOTH, id="missing"),
]


@pytest.mark.parametrize(("code", "expected"), CROSS_MODULE)
def test_cross_module(tmp_path: Path, code: str, expected: tuple[bool | None, bool | None]) -> None:
    assert where_in_project(tmp_path, {**_PACKAGE, "pkg/run.py": code}, "pkg/run.py") == expected


def test_resolver_strings(tmp_path: Path) -> None:
    where_in_project(tmp_path, {**_PACKAGE, "pkg/run.py": "HAZARD()\n"}, "pkg/run.py")
    resolver = ProjectIndex().resolver_for(str(tmp_path / "pkg/run.py"))
    assert resolver.strings("pkg.platform.PLATFORM") == VendorStrings(frozenset({"rocm"}), frozenset({"cuda"}))
    assert resolver.strings("pkg.platform.device_kind()") == VendorStrings(frozenset({"hip"}), frozenset({"cuda"}))
    assert resolver.strings("pkg.platform.nothing") is None
    assert resolver("pkg.platform.PLATFORM") is None  # a string is no vendor test by itself


_TRITON_DEVICE = """
import triton
def available_device():
    try:
        return triton.runtime.driver.active.get_current_target().backend
    except Exception:
        return "cpu"
platform = available_device()
"""


def test_triton_backend_names_the_vendor() -> None:
    analyzed = analyze(_TRITON_DEVICE + "x = platform\n")
    strings = analyzed.gates.vendor_values.strings(analyzed.expression("x"))
    # None: the analysis does not prove that one of the two returns always runs.
    assert strings == VendorStrings(frozenset({"hip", "cpu", None}), frozenset({"cuda", "cpu", None}))
    found = everywhere(
        _TRITON_DEVICE
        + 'if platform == "nvidia":\n    HAZARD("misspelt")\n'
        + 'if platform == "cuda":\n    HAZARD("nvidia")\n'
        + 'if platform != "hip":\n    HAZARD("not-amd")\n'
    )
    assert found == {"misspelt": NEVER, "nvidia": NVIDIA_ONLY, "not-amd": NVIDIA_ONLY}


def test_a_script_outside_the_packages_imports_them_from_the_project_root(tmp_path: Path) -> None:
    """`scripts/check.py` (no package) imports `pkg` as installed: the tree's `pkg` at the project root."""
    files = {
        **_PACKAGE,
        "scripts/check.py": 'from pkg.platform import PLATFORM\nif PLATFORM == "cuda":\n    HAZARD()\n',
    }
    assert where_in_project(tmp_path, files, "scripts/check.py") == BOTH  # without the project root
    resolver = ProjectIndex().resolver_for(str(tmp_path / "scripts/check.py"), project_root=tmp_path)
    assert resolver.strings("pkg.platform.PLATFORM") == VendorStrings(frozenset({"rocm"}), frozenset({"cuda"}))
    assert ProjectIndex().resolver_for(str(tmp_path / "scripts/check.py")).strings("pkg.platform.PLATFORM") is None
    script = 'import subprocess\nfrom pkg.platform import PLATFORM\nif PLATFORM == "cuda":\n    subprocess.run(["nvidia-smi"])\n'
    write_tree(tmp_path, {"scripts/check.py": script})
    report = Engine().check_path(tmp_path / "scripts/check.py", Settings(root=tmp_path))
    assert [d.code for d in report.diagnostics] == []
    report = Engine().check_path(tmp_path / "scripts/check.py", Settings(root=tmp_path / "scripts"))
    assert [d.code for d in report.diagnostics] == ["ROC116"]  # the package is outside the checked project


_DETECTOR = """
from pathlib import Path
def detect():
    if Path("/dev/nvidiactl").exists():
        return "nvidia"
    if Path("/dev/kfd").exists():
        return OTHER
    return None
"""

DETECTED_VENDORS = [
    pytest.param('"amd-graphics"', NVIDIA_ONLY, id="both-vendors-named"),
    pytest.param('"cpu"', BOTH, id="a-value-naming-no-vendor"),
    pytest.param('"nvidia-amd"', BOTH, id="a-value-naming-both"),
    pytest.param('"nvidia"', BOTH, id="one-vendor-only"),
]


@pytest.mark.parametrize(("other", "expected"), DETECTED_VENDORS)
def test_a_detector_returning_vendor_names_names_the_machines_vendor(
    other: str, expected: tuple[bool | None, bool | None]
) -> None:
    """Every string it returns names one vendor, both among them: a ROCm machine never sees "nvidia"."""
    code = _DETECTOR.replace("OTHER", other) + 'if detect() == "nvidia":\n    HAZARD()\n'
    assert where(code) == expected


def test_a_property_of_the_one_instance_a_name_holds() -> None:
    code = (
        _DETECTOR.replace("OTHER", '"amd"')
        + "class Gpu:\n    def __init__(self):\n        self._vendor = detect()\n"
        + "    @property\n    def vendor(self):\n        return self._vendor\n"
        + "    def probe(self):\n        return self._vendor\n"
        + "gpu = Gpu()\n"
        + 'if gpu.vendor == "nvidia":\n    HAZARD("property")\n'
        + 'if gpu.probe == "nvidia":\n    HAZARD("method-not-called")\n'
    )
    assert everywhere(code) == {"property": NVIDIA_ONLY, "method-not-called": BOTH}


def test_a_class_re_exported_by_a_package_below_a_folder_without_init(tmp_path: Path) -> None:
    """`from top.common.devices import Gpu` where `top/common/` has no `__init__.py`: the package's `__init__`
    re-exports the class from its module, found from the project root the checked file was given."""
    detector = (
        _DETECTOR.replace("OTHER", '"amd"')
        + "class Gpu:\n    @property\n    def vendor(self):\n        return detect()\n"
    )
    files = {
        "top/__init__.py": "",
        "top/common/devices/__init__.py": "from top.common.devices.gpu import Gpu\n",
        "top/common/devices/gpu.py": detector,
        "top/common/utils/__init__.py": "",
        "top/common/utils/monitor.py": (
            'import subprocess\nfrom top.common.devices import Gpu\nif Gpu().vendor == "nvidia":\n'
            '    subprocess.run(["nvidia-smi"])\ngpu = Gpu()\nif gpu.vendor == "nvidia":\n'
            '    subprocess.run(["nvidia-smi"])\n'
        ),
    }
    write_tree(tmp_path, files)
    report = Engine().check_path(tmp_path / "top/common/utils/monitor.py", Settings(root=tmp_path))
    # The class called in place is no name holding one instance; the instance bound to `gpu` is.
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC116", 4)]


_MONITOR = """
import subprocess, torch
class NvidiaMonitor:
    def __init__(self):
        subprocess.run(["nvidia-smi"])
    def count(self):
        return subprocess.run(["nvidia-smi", "-L"])
class Derived(BASE):
    pass
if torch.version.cuda:
    monitor = NvidiaMonitor()
ELSEWHERE
"""

CLASSES_MADE = [
    pytest.param("object", "", [], id="made-only-on-nvidia"),
    pytest.param("object", "other = NvidiaMonitor()", [4, 6], id="also-made-everywhere"),
    pytest.param("NvidiaMonitor", "", [4, 6], id="a-base-of-another-class"),
]


@pytest.mark.parametrize(("base", "elsewhere", "rows"), CLASSES_MADE)
def test_the_methods_of_a_class_only_made_off_rocm(tmp_path: Path, base: str, elsewhere: str, rows: list[int]) -> None:
    """A method runs on an instance: a class only made where ROCm never goes has methods that never run there."""
    write_tree(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/monitor.py": _MONITOR.replace("BASE", base).replace("ELSEWHERE", elsewhere)},
    )
    report = Engine().check_path(tmp_path / "pkg/monitor.py", Settings(root=tmp_path))
    assert [d.location.line for d in report.diagnostics if d.code == "ROC116"] == rows


ARCH_NAME_TRUTH = [
    pytest.param('arch = getattr(props, "gcnArchName", "")\n    if arch:\n        return', False, id="getattr"),
    pytest.param("if props.gcnArchName:\n        return", False, id="attribute"),
    pytest.param('if getattr(props, "gcnArchName", None) is None:\n        return', True, id="not-a-truth-test"),
    pytest.param(
        'arch = props.gcnArchName.split(":")[1]\n    if arch:\n        return', True, id="a-part-may-be-empty"
    ),
    pytest.param('arch = getattr(props, "name", "")\n    if arch:\n        return', True, id="another-attribute"),
]


@pytest.mark.parametrize(("test", "on_rocm"), ARCH_NAME_TRUTH)
def test_the_truth_of_the_gfx_name_holds_on_rocm(test: str, on_rocm: bool) -> None:
    """Every AMD GPU has a gfx name; NVIDIA's is its device name or missing: past `if arch: return`, no ROCm."""
    code = "import torch\ndef f():\n    props = torch.cuda.get_device_properties(0)\n    " + test + "\n    HAZARD()\n"
    assert where(code) == (on_rocm, True)


_DEVICE_TYPE = """
import os
from enum import Enum, IntEnum, auto
import torch
class DeviceType(IntEnum):
    Cpu = 0
    Cuda = 1
    ROCm = 4
    Ppu = 5
class Kind(Enum):
    CUDA = auto()
    HIP = auto()
def get_device_type():
    if torch.cuda.is_available():
        if torch.version.hip is not None:
            return DeviceType.ROCm
        if os.environ.get("PPU_HOME"):
            return DeviceType.Ppu
        return DeviceType.Cuda
    return DeviceType.Cpu
KIND = Kind.HIP if torch.version.hip else Kind.CUDA
"""

ENUM_MEMBERS = [
    pytest.param("if get_device_type() == DeviceType.Cuda:\n    HAZARD()\n", NVIDIA_ONLY, id="returned-member"),
    pytest.param(
        "device_type = get_device_type()\nif device_type == DeviceType.ROCm:\n    pass\n"
        "elif device_type == DeviceType.Cuda:\n    HAZARD()\n",
        NVIDIA_ONLY,
        id="elif-arm",
    ),
    pytest.param(  # the CPU member is chosen where no GPU is present: no GPU code
        "if get_device_type() != DeviceType.ROCm:\n    HAZARD()\n", NVIDIA_ONLY, id="not-rocm"
    ),
    pytest.param("if KIND is Kind.CUDA:\n    HAZARD()\n", BOTH, id="is-a-member-is-no-none-test"),
    pytest.param("if KIND == Kind.CUDA:\n    HAZARD()\n", NVIDIA_ONLY, id="auto-values"),
    pytest.param("if KIND in (Kind.HIP,):\n    HAZARD()\n", ROCM_ONLY, id="in-tuple"),
    pytest.param("if get_device_type() == 1:\n    HAZARD()\n", BOTH, id="an-int-enum-member-equals-its-value"),
    pytest.param('if KIND == "cuda":\n    HAZARD()\n', BOTH, id="a-member-and-a-string"),
]


@pytest.mark.parametrize(("code", "expected"), ENUM_MEMBERS)
def test_enum_members_a_vendor_test_chooses(code: str, expected: tuple[bool | None, bool | None]) -> None:
    """An enum member is a value like a string: the one a vendor test chose decides comparisons with it."""
    assert where(_DEVICE_TYPE + code) == expected


def test_enum_members_across_modules(tmp_path: Path) -> None:
    """The member is the same whether the enum's module or an importer names it."""
    files = {
        "pkg/__init__.py": "",
        "pkg/device_type.py": _DEVICE_TYPE,
        "pkg/run.py": "from pkg.device_type import DeviceType, get_device_type\n"
        "device_type = get_device_type()\nif device_type == DeviceType.Cuda:\n    HAZARD()\n",
    }
    assert where_in_project(tmp_path, files, "pkg/run.py") == NVIDIA_ONLY
