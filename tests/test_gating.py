"""The Python front end's gate analysis (RULES.md, "What gated means").

Every case parses a snippet, builds the semantic model and the GateAnalyzer the way
`rocmlint.python.frontend.check_python` does, and asks where a marked node can run:
`(on_rocm, on_nvidia)`, each True (runs whenever reached), False (never) or None (maybe).
The marked node is the call `HAZARD()` (or `HAZARD("label")` when a snippet has several), or the
statement on the line that ends with `# <-`.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import rocmlint.python.project as project_module
from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python.frontend import PythonContext, RuleOptions
from rocmlint.python.gating import CrossModuleResolver, GateAnalyzer, ReadElsewhere, Vendor
from rocmlint.python.project import ProjectIndex, is_test_file, package_of
from rocmlint.python.scopes import dotted_name
from rocmlint.python.semantic import Semantic
from rocmlint.python.tree import walk
from rocmlint.source import SourceFile

# Statements that hold no other statements: what a `# <-` mark points at.
_SIMPLE_STATEMENTS = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Import,
    ast.ImportFrom,
    ast.Return,
    ast.Raise,
    ast.Assert,
    ast.Pass,
    ast.Delete,
    ast.Global,
    ast.Nonlocal,
    ast.Break,
    ast.Continue,
)
ROCM_ONLY = (True, False)
NVIDIA_ONLY = (False, True)
BOTH = (True, True)
NEVER = (False, False)


# --- helpers ------------------------------------------------------------------------------------------
@dataclass
class Analyzed:
    text: str
    module: ast.Module
    semantic: Semantic
    gates: GateAnalyzer
    context: PythonContext

    def hazards(self) -> dict[str, ast.Call]:
        """Every `HAZARD(...)` call by its label (the first string argument, "" when none)."""
        found: dict[str, ast.Call] = {}
        for node in self.semantic.parents:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "HAZARD":
                label = self.semantic.string_value(node.args[0]) if node.args else ""
                assert label not in found, f"two HAZARD({label!r}) calls"
                found[label or ""] = node
        assert found, "snippet has no HAZARD() call"
        return found

    def hazard(self, label: str = "") -> ast.Call:
        return self.hazards()[label]

    def marked(self) -> ast.stmt:
        """The first simple statement (one without a body) on the line ending in `# <-`."""
        lines = [i for i, line in enumerate(self.text.splitlines(), 1) if line.rstrip().endswith("# <-")]
        assert len(lines) == 1, "mark exactly one line with `# <-`"
        for node in self.semantic.parents:
            if isinstance(node, _SIMPLE_STATEMENTS) and self.context.code_range(node).start.line == lines[0]:
                return node
        raise AssertionError("no statement on the marked line")

    def branch(self, node: ast.AST) -> tuple[bool | None, bool | None]:
        found = self.gates.branch(node)
        return (found.on_rocm, found.on_nvidia)

    def expression(self, source: str) -> ast.expr:
        """The expression assigned to `name` in `name = <expr>` (the last such assignment)."""
        found = None
        for node in self.semantic.parents:
            if isinstance(node, ast.Assign) and self.context.code_of(node.targets[0]) == source:
                found = node.value
        assert found is not None, f"no assignment to {source}"
        return found


def analyze(
    code: str,
    *,
    path: str = "example.py",
    package: str | None = None,
    rocm_guards: frozenset[str] = frozenset(),
    resolver: CrossModuleResolver | None = None,
    read_elsewhere: ReadElsewhere | None = None,
) -> Analyzed:
    """Parse and index like `check_python`: Semantic, GateAnalyzer, PythonContext, then the walk."""
    text = textwrap.dedent(code).lstrip("\n")
    module = ast.parse(text)
    semantic = Semantic(module, package, text)
    gates = GateAnalyzer(
        semantic, rocm_guards, resolver, read_elsewhere=read_elsewhere, in_test_suite=is_test_file(path)
    )
    source = SourceFile.from_bytes(path, text.encode("utf-8"), "python")
    context = PythonContext(source, module, semantic, gates, RuleOptions(rocm_guards))
    walk(module, semantic.parents, {}, semantic.mentions)
    return Analyzed(text, module, semantic, gates, context)


def where(code: str, label: str = "", **options: object) -> tuple[bool | None, bool | None]:
    """(on_rocm, on_nvidia) of the HAZARD call labelled `label`."""
    analyzed = analyze(code, **options)  # type: ignore[arg-type]
    return analyzed.branch(analyzed.hazard(label))


def everywhere(code: str, **options: object) -> dict[str, tuple[bool | None, bool | None]]:
    """(on_rocm, on_nvidia) of every labelled HAZARD call."""
    analyzed = analyze(code, **options)  # type: ignore[arg-type]
    return {label: analyzed.branch(node) for label, node in analyzed.hazards().items()}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


def where_in_project(
    root: Path, files: dict[str, str], checked: str, rocm_guards: frozenset[str] = frozenset()
) -> tuple[bool | None, bool | None]:
    """Write a project under `root`, then analyze `checked` with cross-module resolution as the engine does."""
    write_tree(root, files)
    path = str(root / checked)
    package, _ = package_of(path)
    resolver = ProjectIndex(rocm_guards).resolver_for(path)
    code = (root / checked).read_text(encoding="utf-8")
    return where(code, path=path, package=package, rocm_guards=rocm_guards, resolver=resolver)


# --- 1. what each test means on each vendor --------------------------------------------------------------
_TEMPLATE = """
{setup}
if {test}:
    HAZARD("then")
else:
    HAZARD("else")
if not ({test}):
    HAZARD("negated")
value = HAZARD("arm") if {test} else None
"""

ROCM_TESTS = [
    pytest.param("import torch", "torch.version.hip", id="hip-truthy"),
    pytest.param("import torch", "torch.version.hip is not None", id="hip-is-not-none"),
    pytest.param("import torch", "torch.version.hip != None", id="hip-ne-none"),
    pytest.param("import torch", "None is not torch.version.hip", id="none-is-not-hip"),
    pytest.param("import torch", 'getattr(torch.version, "hip", None)', id="getattr-hip"),
    pytest.param("import torch", 'getattr(torch.version, "hip", None) is not None', id="getattr-hip-is-not-none"),
    pytest.param(
        "import torch", 'hasattr(torch.version, "hip") and torch.version.hip is not None', id="hasattr-and-hip"
    ),
    pytest.param("import torch", "bool(torch.version.hip)", id="bool-hip"),
    pytest.param("import torch", "not torch.version.cuda", id="not-cuda"),
    pytest.param(
        "import torch.utils.cpp_extension", "torch.utils.cpp_extension.IS_HIP_EXTENSION", id="is-hip-extension-dotted"
    ),
    pytest.param(
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION", "IS_HIP_EXTENSION", id="is-hip-extension-imported"
    ),
    pytest.param(
        "from torch.utils import cpp_extension as ce", "ce.IS_HIP_EXTENSION", id="is-hip-extension-module-alias"
    ),
    pytest.param(
        "from torch.testing._internal.common_utils import TEST_WITH_ROCM", "TEST_WITH_ROCM", id="test-with-rocm"
    ),
    pytest.param("from vllm.platforms import current_platform", "current_platform.is_rocm()", id="vllm-is-rocm"),
    pytest.param(
        "import triton", 'triton.runtime.driver.active.get_current_target().backend == "hip"', id="triton-backend-hip"
    ),
    pytest.param("import torch as T", "T.version.hip is not None", id="import-torch-as-T"),
    pytest.param("from torch import version", "version.hip", id="from-torch-import-version"),
    pytest.param("from torch.version import hip", "hip is not None", id="from-torch-version-import-hip"),
    pytest.param("import torch.version as tv", "tv.hip", id="import-torch-version-as"),
    pytest.param("import torch", '"rocm" in torch.__version__', id="rocm-in-version-string"),
    pytest.param("import os", 'os.environ.get("BUILD_TARGET", "cuda") == "rocm"', id="build-target-rocm"),
    pytest.param("BUILD_TARGET = 'auto'", 'BUILD_TARGET == "HIP"', id="build-target-hip-any-case"),
    pytest.param("import os", 'os.getenv("PLATFORM") == "amd_rocm"', id="platform-value-naming-rocm"),
    pytest.param("import os", 'os.getenv("USE_ROCM")', id="rocm-build-switch"),
    pytest.param("import os", 'bool(int(os.getenv("NVTE_USE_ROCM", "0")))', id="project-rocm-build-switch-converted"),
    pytest.param("import os", 'os.environ.get("MYPKG_BUILD_FOR_HIP")', id="project-hip-build-switch"),
    pytest.param("import os", 'os.environ.get("USE_ROCM", "0") == "1"', id="rocm-build-switch-compared"),
    pytest.param("import os", '"ON" == os.getenv("MYPKG_USE_HIP")', id="hip-build-switch-compared-on"),
    # The ROCm version a build is for: set to build for ROCm (AutoGPTQ's `ROCM_VERSION=5.6 pip install .`).
    pytest.param("import os", 'os.environ.get("ROCM_VERSION", False)', id="rocm-version-build-switch"),
    pytest.param("import os", 'os.getenv("PROJ_HIP_VERSION")', id="project-hip-version-build-switch"),
    # Code for no GPU is no GPU code: beside a vendor test, a GPU-presence test is true.
    pytest.param(
        "import torch", "torch.cuda.is_available() and torch.version.hip is not None", id="gpu-present-and-hip"
    ),
]

NVIDIA_TESTS = [
    pytest.param("import torch", "torch.version.cuda", id="cuda-truthy"),
    pytest.param("import torch", "torch.version.cuda is not None", id="cuda-is-not-none"),
    pytest.param("import torch", 'getattr(torch.version, "cuda", None)', id="getattr-cuda"),
    pytest.param("import torch", "torch.version.hip is None", id="hip-is-none"),
    pytest.param("import torch", "torch.cuda.is_available() and not torch.version.hip", id="gpu-present-and-not-hip"),
    pytest.param("import torch", "torch.version.hip == None", id="hip-eq-none"),
    pytest.param("import torch", "not torch.version.hip", id="not-hip"),
    pytest.param(
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION", "not IS_HIP_EXTENSION", id="not-hip-extension"
    ),
    pytest.param(
        "from torch.testing._internal.common_utils import TEST_WITH_ROCM", "not TEST_WITH_ROCM", id="not-test-with-rocm"
    ),
    pytest.param("from vllm.platforms import current_platform", "current_platform.is_cuda()", id="vllm-is-cuda"),
    pytest.param(
        "from vllm.platforms import current_platform", "not current_platform.is_rocm()", id="vllm-not-is-rocm"
    ),
    pytest.param(
        "import triton",
        'triton.runtime.driver.active.get_current_target().backend != "hip"',
        id="triton-backend-not-hip",
    ),
    pytest.param(
        "import triton", 'triton.runtime.driver.active.get_current_target().backend == "cuda"', id="triton-backend-cuda"
    ),
    # TYPE_CHECKING is False whenever the code runs: only the vendor test decides (vLLM's per-platform model packages).
    pytest.param(
        "from typing import TYPE_CHECKING\nimport torch",
        "TYPE_CHECKING or torch.version.hip is None",
        id="type-checking-or-not-hip",
    ),
    pytest.param(
        "import typing\nimport torch",
        "not typing.TYPE_CHECKING and torch.version.cuda",
        id="not-type-checking-and-cuda",
    ),
]


@pytest.mark.parametrize(("setup", "test"), ROCM_TESTS)
def test_rocm_test_gates_both_arms(setup: str, test: str) -> None:
    found = everywhere(_TEMPLATE.format(setup=setup, test=test))
    assert found == {"then": ROCM_ONLY, "else": NVIDIA_ONLY, "negated": NVIDIA_ONLY, "arm": ROCM_ONLY}


@pytest.mark.parametrize(("setup", "test"), NVIDIA_TESTS)
def test_nvidia_test_gates_both_arms(setup: str, test: str) -> None:
    found = everywhere(_TEMPLATE.format(setup=setup, test=test))
    assert found == {"then": NVIDIA_ONLY, "else": ROCM_ONLY, "negated": ROCM_ONLY, "arm": NVIDIA_ONLY}


NOT_VENDOR_TESTS = [
    pytest.param("import torch", "torch.cuda.is_available()", id="cuda-is-available"),
    # vLLM's VLLM_TARGET_DEVICE is "cuda" on ROCm builds too: only Triton's backend attribute means NVIDIA.
    pytest.param("import os", 'os.environ.get("VLLM_TARGET_DEVICE") == "cuda"', id="target-device-cuda"),
    pytest.param("import torch", 'device.type == "cuda"', id="device-type-cuda"),
    pytest.param("import torch", "x.is_cuda", id="tensor-is-cuda"),
    pytest.param("import torch", "torch.backends.cudnn.is_available()", id="cudnn-is-available"),
    pytest.param("import torch", "torch.cuda.device_count() > 0", id="device-count"),
    # An installation path is no choice of vendor (a ROCm install may sit beside CUDA).
    pytest.param("import os", 'os.getenv("ROCM_PATH")', id="rocm-path-variable"),
    pytest.param("import os", 'os.getenv("NVTE_ROCM_ARCH")', id="rocm-arch-variable"),
    pytest.param("import os", 'os.getenv("USE_ROCM") == "2"', id="rocm-switch-compared-with-another-value"),
    pytest.param("import os", 'os.getenv("ROCM_PATH") == "1"', id="rocm-path-compared"),
    pytest.param("import os", 'os.getenv("ROCM_VERSION_FILE")', id="rocm-version-file-variable"),
    pytest.param("import torch", "torch.cuda.is_available() and x > 1", id="gpu-present-beside-no-vendor-test"),
    pytest.param("from torch.testing._internal.common_utils import TEST_CUDA", "TEST_CUDA", id="test-cuda"),
    pytest.param(
        "from vllm.platforms import current_platform", "current_platform.is_cuda_alike()", id="vllm-cuda-alike"
    ),
]


@pytest.mark.parametrize(("setup", "test"), NOT_VENDOR_TESTS)
def test_not_a_vendor_gate(setup: str, test: str) -> None:
    """Tests that hold on both vendors (or say nothing about the vendor) leave both arms runnable everywhere."""
    found = everywhere(_TEMPLATE.format(setup=setup, test=test))
    assert found == {"then": BOTH, "else": BOTH, "negated": BOTH, "arm": BOTH}


def test_cuda_arm_of_a_chain_with_a_later_rocm_arm_is_nvidia_only() -> None:
    """xformers' setup.py: the first arm's test is not known on ROCm (a FORCE_CUDA override), but a later
    arm only ROCm can take says where the author routed ROCm."""
    found = analyze(
        """
        import os, torch
        from torch.utils.cpp_extension import CUDA_HOME
        if (torch.version.cuda is not None and CUDA_HOME is not None) or os.getenv("FORCE_CUDA") == "1":
            HAZARD("cuda")
        elif torch.version.hip:
            HAZARD("rocm")
        else:
            HAZARD("cpu")
        if os.getenv("FORCE_CUDA") == "1":
            HAZARD("no-rocm-arm")
        elif os.getenv("CPU_ONLY"):
            pass
        """
    )
    assert found.branch(found.hazard("cuda")) == (False, True)
    assert found.branch(found.hazard("rocm")) == ROCM_ONLY
    assert found.branch(found.hazard("cpu")) == NVIDIA_ONLY
    assert found.branch(found.hazard("no-rocm-arm")) == BOTH


def test_cuda_or_hip_is_true_on_both_vendors() -> None:
    analyzed = analyze(
        """
        import torch
        if torch.version.cuda or torch.version.hip:
            HAZARD("then")
        else:
            HAZARD("else")  # CPU-only builds: never on a GPU vendor
        """
    )
    assert analyzed.branch(analyzed.hazard("then")) == BOTH
    assert analyzed.branch(analyzed.hazard("else")) == NEVER


def test_a_literal_on_one_vendor_compared_with_a_literal_is_decided_there() -> None:
    """`(0, 0)` on ROCm, the parsed CUDA version on NVIDIA: `CUDA_VERSION >= (12, 3)` is false on ROCm; what
    the NVIDIA arm holds is not known. Literals compared with literals, and other operands, decide nothing."""
    found = everywhere(
        """
        import torch
        CUDA_VERSION = tuple(int(x) for x in torch.version.cuda.split(".")) if torch.version.cuda else (0, 0)
        if CUDA_VERSION >= (12, 3):
            HAZARD("cuda-12.3")
        if CUDA_VERSION < (12, 3):
            HAZARD("older")
        ROCM_MAJOR = 6 if torch.version.hip else 0
        if ROCM_MAJOR > 5:
            HAZARD("rocm-number")
        if (0, 0) < (12, 3):
            HAZARD("constants")
        if CUDA_VERSION >= LIMIT:
            HAZARD("unknown-limit")
        SETTING = (1, 2) if torch.cuda.is_available() else (0, 0)
        if SETTING >= (1, 0):
            HAZARD("not-a-vendor-test")
        """
    )
    assert found == {
        "cuda-12.3": NVIDIA_ONLY,
        "older": BOTH,
        "rocm-number": ROCM_ONLY,
        "constants": BOTH,
        "unknown-limit": BOTH,
        "not-a-vendor-test": BOTH,
    }


def test_partial_tests_only_exclude_the_known_vendor() -> None:
    """A ROCm test combined with a runtime condition: the arm that may run on ROCm is not gated."""
    found = everywhere(
        """
        import torch
        if torch.version.hip and torch.cuda.get_device_capability()[0] >= 9:
            HAZARD("and-then")
        else:
            HAZARD("and-else")
        if torch.version.hip is not None or torch.cuda.is_available():
            HAZARD("or-then")
        else:
            HAZARD("or-else")
        if hasattr(torch.version, "hip"):
            HAZARD("hasattr-then")
        else:
            HAZARD("hasattr-else")
        """
    )
    assert found == {
        "and-then": ROCM_ONLY,
        "and-else": BOTH,
        "or-then": BOTH,
        "or-else": NVIDIA_ONLY,
        "hasattr-then": BOTH,
        "hasattr-else": NVIDIA_ONLY,
    }


def test_vendor_test_values() -> None:
    analyzed = analyze(
        """
        import torch
        a = torch.version.hip is not None
        b = torch.version.cuda
        c = torch.cuda.is_available()
        d = hasattr(torch.version, "hip")
        """
    )
    assert analyzed.context.vendor_test(analyzed.expression("a")) == Vendor(True, False)
    assert analyzed.context.vendor_test(analyzed.expression("b")) == Vendor(False, True)
    assert analyzed.context.vendor_test(analyzed.expression("c")) == Vendor(None, None)
    assert not analyzed.context.vendor_test(analyzed.expression("c")).is_vendor_test
    assert analyzed.context.vendor_test(analyzed.expression("d")).rocm is True


def test_triton_target_helpers_are_false_on_rocm() -> None:
    """`cuda_capability_geq` is evaluated for the compile target: False for HIP, either way on NVIDIA."""
    analyzed = analyze(
        """
        from triton.language.target_info import cuda_capability_geq
        import triton.language.target_info as target_info
        a = cuda_capability_geq(10, 0)
        b = target_info.is_cuda()
        c = is_fp4 and cuda_capability_geq(10, 0)
        d = capability_geq(10, 0)
        """
    )
    assert analyzed.context.vendor_test(analyzed.expression("a")) == Vendor(False, None)
    assert analyzed.context.vendor_test(analyzed.expression("b")) == Vendor(False, None)
    assert analyzed.context.vendor_test(analyzed.expression("c")).rocm is False
    assert not analyzed.context.vendor_test(analyzed.expression("d")).is_vendor_test


def test_jax_cuda_test_helpers_are_false_on_rocm() -> None:
    """JAX's test helpers return False unless the device's platform is CUDA's (jax/_src/test_util.py)."""
    analyzed = analyze(
        """
        from jax._src import test_util as jtu
        a = jtu.is_cuda_compute_capability_at_least("9.0")
        b = jtu.is_device_cuda()
        c = jtu.is_device_rocm()
        """
    )
    assert analyzed.context.vendor_test(analyzed.expression("a")) == Vendor(False, None)
    assert analyzed.context.vendor_test(analyzed.expression("b")) == Vendor(False, None)
    assert not analyzed.context.vendor_test(analyzed.expression("c")).is_vendor_test


# --- 2. aliases: names, attributes and functions that stand for a test ----------------------------------
ALIASES = [
    pytest.param(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            HAZARD()
        """,
        ROCM_ONLY,
        id="module-alias",
    ),
    pytest.param(
        """
        import torch
        amd = torch.version.hip is not None
        def f():
            if not amd:
                HAZARD()
        """,
        NVIDIA_ONLY,
        id="module-alias-unconventional-name-read-in-function",
    ),
    pytest.param(
        """
        import torch
        def f():
            on_amd_gpu = bool(torch.version.hip)
            flag = on_amd_gpu
            if flag:
                HAZARD()
        """,
        ROCM_ONLY,
        id="function-local-alias-of-alias",
    ),
    pytest.param(
        """
        import torch
        base = torch.version.hip is not None
        derived = not base
        if derived:
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="negated-alias-of-alias",
    ),
    pytest.param(
        """
        try:
            import torch
            IS_ROCM = torch.version.hip is not None
        except ImportError:
            IS_ROCM = False
        if IS_ROCM:
            HAZARD()
        """,
        ROCM_ONLY,
        id="try-except-fallback",
    ),
    pytest.param(
        """
        try:
            import torch
            amd = torch.version.hip is not None
        except ImportError:
            amd = False
        if not amd:
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="try-except-fallback-unconventional",
    ),
    pytest.param(
        """
        import torch
        flag = torch.version.hip is not None
        flag = torch.version.cuda is not None
        if flag:
            HAZARD()
        """,
        BOTH,
        id="reassigned-conflicting-is-unknown",
    ),
    pytest.param(
        """
        import torch
        flag = torch.version.hip is not None
        flag = torch.cuda.is_available()
        if flag:
            HAZARD()
        """,
        BOTH,
        id="reassigned-to-non-test-is-unknown",
    ),
    pytest.param(
        """
        import torch
        flag = torch.version.hip is not None
        flag &= torch.cuda.is_available()
        if not flag:
            HAZARD()
        """,
        BOTH,
        id="augmented-assignment-is-unknown",
    ),
    pytest.param(
        """
        USE_GRAPHS = False
        if USE_GRAPHS:
            HAZARD()
        """,
        BOTH,
        id="constant-switch-is-not-a-gate",  # without a project, another module may set it (see below)
    ),
    pytest.param(
        """
        import torch
        class Config:
            IS_ROCM = torch.version.hip is not None
            amd = torch.version.hip is not None
            def run(self):
                if self.amd:
                    HAZARD()
        """,
        ROCM_ONLY,
        id="class-attribute-via-self",
    ),
    pytest.param(
        """
        import torch
        class Config:
            amd = torch.version.hip is not None
            @classmethod
            def run(cls):
                if not cls.amd:
                    HAZARD()
        """,
        NVIDIA_ONLY,
        id="class-attribute-via-cls",
    ),
    pytest.param(
        """
        import torch
        class Config:
            amd = torch.version.hip is not None
        def run():
            if Config.amd:
                HAZARD()
        """,
        ROCM_ONLY,
        id="class-attribute-via-class-name",
    ),
    pytest.param(
        """
        import torch
        class Base:
            amd = torch.version.hip is not None
        class Child(Base):
            def run(self):
                if self.amd:
                    HAZARD()
        """,
        ROCM_ONLY,
        id="class-attribute-inherited",
    ),
    pytest.param(
        """
        import torch
        class Runner:
            def __init__(self):
                self.amd = torch.version.hip is not None
            def run(self):
                if self.amd:
                    HAZARD()
        """,
        ROCM_ONLY,
        id="instance-attribute-set-in-init",
    ),
    pytest.param(
        """
        import torch
        class Runner:
            def __init__(self):
                self.amd = torch.version.hip is not None
            def run(self):
                def step():
                    if not self.amd:
                        HAZARD()
                return step
        """,
        NVIDIA_ONLY,
        id="instance-attribute-read-in-closure",
    ),
    pytest.param(
        """
        import torch
        class Runner:
            def run(self, other):
                if other.amd:
                    HAZARD()
            def setup(self):
                self.amd = torch.version.hip is not None
        """,
        BOTH,
        id="attribute-of-another-object-is-not-self",
    ),
    pytest.param(
        """
        import torch
        if (hip := torch.version.hip):
            HAZARD()
        """,
        ROCM_ONLY,
        id="walrus",
    ),
    pytest.param(
        """
        import torch
        amd = torch.version.hip is not None
        check = lambda amd: HAZARD() if amd else None
        """,
        BOTH,
        id="lambda-parameter-shadows",
    ),
    pytest.param(
        """
        import torch
        amd = torch.version.hip is not None
        results = [HAZARD() for amd in flags if amd]
        """,
        BOTH,
        id="comprehension-variable-shadows",
    ),
    pytest.param(
        """
        import torch
        def is_hip():
            return torch.version.hip is not None
        if is_hip():
            HAZARD()
        """,
        ROCM_ONLY,
        id="helper-function",
    ),
    pytest.param(
        """
        import torch
        from mylib import detect as is_hip
        if is_hip():
            HAZARD()
        """,
        ROCM_ONLY,
        id="conventional-local-name-of-import",
    ),
    pytest.param(
        """
        import torch
        class Platform:
            @staticmethod
            def amd():
                return torch.version.hip is not None
            @classmethod
            def run(cls):
                if cls.amd():
                    HAZARD()
        """,
        ROCM_ONLY,
        id="classmethod-calls-staticmethod",
    ),
    pytest.param(
        """
        import torch
        class Platform:
            @staticmethod
            def amd():
                return torch.version.hip is not None
        if not Platform.amd():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="staticmethod-via-class-name",
    ),
    pytest.param(
        """
        import functools
        import torch
        if not amd():
            HAZARD()
        @functools.lru_cache(maxsize=None)
        def amd():
            return torch.version.hip is not None
        """,
        NVIDIA_ONLY,
        id="cached-helper-defined-after-use",
    ),
    pytest.param(
        """
        import torch
        def amd():
            if torch.version.hip is not None:
                return True
            return False
        if amd():
            HAZARD()
        """,
        ROCM_ONLY,
        id="helper-returning-constants-per-branch",
    ),
    pytest.param(
        """
        def amd():
            try:
                import torch
                return torch.version.hip is not None
            except ImportError:
                return False
        if amd():
            HAZARD()
        """,
        ROCM_ONLY,
        id="helper-with-import-fallback",
    ),
    pytest.param(
        """
        import torch
        def amd():
            if not HAS_TRITON:
                return False
            return torch.version.hip is not None
        if amd():
            HAZARD()
        """,
        ROCM_ONLY,
        id="helper-with-runtime-precondition",
    ),
    pytest.param(
        """
        import torch
        def amd():
            if not HAS_TRITON:
                return False
            return torch.version.hip is not None
        if not amd():
            HAZARD()
        """,
        BOTH,
        id="helper-with-runtime-precondition-negated",
    ),
    pytest.param(
        """
        def helper():
            print("hello")
        if helper():
            HAZARD()
        """,
        BOTH,
        id="helper-without-return-is-not-a-gate",
    ),
    pytest.param(
        """
        def support_error():
            if IS_ROCM:
                return "not supported on ROCm"
            if not available():
                return "needs a GPU"
            major = capability()
            if major >= 10:
                return ""
            return f"needs sm100, found {major}"
        def flags():
            if support_error():
                return []
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="error-message-helper-exits-on-rocm",
    ),
    pytest.param(
        """
        def support_error():
            if IS_ROCM:
                return ""
            return "needs ROCm"
        def flags():
            if support_error():
                return []
            HAZARD()
        """,
        ROCM_ONLY,
        id="empty-message-on-rocm-only",
    ),
    pytest.param(
        """
        def support_error():
            if IS_ROCM:
                return f"{reason}"
            return ""
        def flags():
            if support_error():
                return []
            HAZARD()
        """,
        BOTH,
        id="f-string-without-text-may-be-empty",
    ),
    pytest.param(
        """
        def device_name():
            if IS_ROCM:
                return "rocm"
            return "cuda"
        if device_name():
            HAZARD()
        """,
        BOTH,
        id="names-per-vendor-are-both-truthy",
    ),
    pytest.param(
        """
        import torch
        def hip_version():
            if torch.version.hip:
                return torch.version.hip
            return None
        if not hip_version():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="explicit-return-none-is-false",
    ),
    pytest.param(
        """
        import torch
        class Platform:
            def amd(self):
                return torch.version.hip is not None
            def run(self):
                if self.amd():
                    HAZARD()
        """,
        ROCM_ONLY,
        id="method-returning-test",
    ),
    pytest.param(
        """
        class Platform:
            def is_rocm(self):
                return self._kind == "rocm"
            def run(self):
                if not self.is_rocm():
                    HAZARD()
        """,
        NVIDIA_ONLY,
        id="method-is-rocm",
    ),
    pytest.param(
        """
        import triton
        def is_hip():
            return triton.runtime.driver.active.get_current_target().backend == "hip"
        if is_hip():
            HAZARD()
        """,
        ROCM_ONLY,
        id="triton-is-hip-helper",
    ),
    pytest.param(
        """
        if IS_ROCM:
            HAZARD()
        """,
        ROCM_ONLY,
        id="conventional-name-unknown-origin",
    ),
    pytest.param(
        """
        from somewhere import IS_ROCM
        if not IS_ROCM:
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="conventional-name-imported-from-outside",
    ),
    pytest.param(
        """
        from vllm.platforms.rocm import on_gfx9
        if on_gfx9():
            HAZARD()
        """,
        ROCM_ONLY,
        id="conventional-on-gfx9",
    ),
    pytest.param(
        """
        from mylib import is_hip
        if is_hip():
            HAZARD()
        """,
        ROCM_ONLY,
        id="conventional-is-hip-call",
    ),
    pytest.param(
        """
        IS_ROCM = False
        if detect():
            IS_ROCM = True
        if IS_ROCM:
            HAZARD()
        """,
        ROCM_ONLY,
        id="conventional-name-set-from-constants",
    ),
    pytest.param(
        """
        if is_rocm_supported():
            HAZARD()
        """,
        BOTH,
        id="name-merely-mentioning-rocm-is-not-a-gate",
    ),
    pytest.param(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        def f(IS_ROCM):
            if IS_ROCM:
                HAZARD()
        """,
        ROCM_ONLY,
        id="parameter-named-by-convention",
    ),
    pytest.param(
        """
        import torch
        amd = torch.version.hip is not None
        def f(amd):
            if amd:
                HAZARD()
        """,
        BOTH,
        id="parameter-shadows-module-alias",
    ),
]


@pytest.mark.parametrize(("code", "expected"), ALIASES)
def test_alias(code: str, expected: tuple[bool | None, bool | None]) -> None:
    assert where(code) == expected


def test_configured_guard() -> None:
    code = """
        from mypkg.env import accelerated
        import mypkg.env as env
        if accelerated():
            HAZARD("imported")
        if not env.accelerated():
            HAZARD("module")
        if accelerated:
            HAZARD("unbound-or-attribute")
        """
    found = everywhere(code, rocm_guards=frozenset({"mypkg.env.accelerated"}))
    assert found == {"imported": ROCM_ONLY, "module": NVIDIA_ONLY, "unbound-or-attribute": ROCM_ONLY}
    assert everywhere(code) == {"imported": BOTH, "module": BOTH, "unbound-or-attribute": BOTH}


def test_configured_guard_by_last_segment_only_for_bare_names() -> None:
    code = """
        import other.env
        if other.env.accelerated():
            HAZARD("other-module")
        if accelerated():
            HAZARD("bare")
        """
    found = everywhere(code, rocm_guards=frozenset({"mypkg.env.accelerated"}))
    assert found == {"other-module": BOTH, "bare": ROCM_ONLY}


# --- 3. names defined in another module of the scanned tree ------------------------------------------
_ENV = """
import torch

amd = torch.version.hip is not None
accel = amd

def detect():
    return torch.version.hip is not None

class Platform:
    def amd(self):
        return torch.version.hip is not None
"""

CROSS_MODULE = [
    pytest.param("from mypkg.env import amd\nif amd:\n    HAZARD()\n", ROCM_ONLY, id="from-import-value"),
    pytest.param(
        "from mypkg.env import detect\nif not detect():\n    HAZARD()\n", NVIDIA_ONLY, id="from-import-function"
    ),
    pytest.param("from mypkg.env import detect as d\nif d():\n    HAZARD()\n", ROCM_ONLY, id="from-import-function-as"),
    pytest.param("import mypkg.env as env\nif env.amd:\n    HAZARD()\n", ROCM_ONLY, id="import-module-as"),
    pytest.param("import mypkg.env as env\nif env.detect():\n    HAZARD()\n", ROCM_ONLY, id="import-module-as-call"),
    pytest.param("import mypkg.env\nif not mypkg.env.amd:\n    HAZARD()\n", NVIDIA_ONLY, id="import-module-dotted"),
    pytest.param("from mypkg import env\nif env.amd:\n    HAZARD()\n", ROCM_ONLY, id="from-package-import-module"),
    pytest.param("from .env import amd\nif amd:\n    HAZARD()\n", ROCM_ONLY, id="relative-import"),
    pytest.param("from . import env\nif not env.detect():\n    HAZARD()\n", NVIDIA_ONLY, id="relative-import-module"),
    pytest.param("from mypkg import flag\nif flag:\n    HAZARD()\n", ROCM_ONLY, id="re-exported-through-init"),
    pytest.param("import mypkg\nif not mypkg.probe():\n    HAZARD()\n", NVIDIA_ONLY, id="re-exported-function"),
    pytest.param(
        "from mypkg.env import Platform\nif Platform().amd():\n    HAZARD()\n",
        BOTH,
        id="method-on-instance-not-followed",
    ),
    pytest.param("from mypkg.env import torch\nif torch.cuda.is_available():\n    HAZARD()\n", BOTH, id="not-a-test"),
]


@pytest.mark.parametrize(("code", "expected"), CROSS_MODULE)
def test_cross_module(tmp_path: Path, code: str, expected: tuple[bool | None, bool | None]) -> None:
    files = {
        "mypkg/__init__.py": "from .env import accel as flag, detect as probe\n",
        "mypkg/env.py": _ENV,
        "mypkg/train.py": code,
    }
    assert where_in_project(tmp_path, files, "mypkg/train.py") == expected


def test_cross_module_alias_chain_and_conflict(tmp_path: Path) -> None:
    files = {
        "proj/__init__.py": "",
        "proj/base.py": "import torch\nHIP = torch.version.hip\nmixed = torch.version.hip\nmixed = torch.version.cuda\n",
        "proj/flags.py": "from proj.base import HIP\nenabled = HIP is not None\n",
        "proj/main.py": (
            "from proj.flags import enabled\nfrom proj.base import mixed\n"
            'if enabled:\n    HAZARD("chain")\nif mixed:\n    HAZARD("conflict")\n'
        ),
    }
    write_tree(tmp_path, files)
    path = str(tmp_path / "proj/main.py")
    package, _ = package_of(path)
    assert package == "proj"
    found = everywhere(
        (tmp_path / "proj/main.py").read_text(), path=path, package=package, resolver=ProjectIndex().resolver_for(path)
    )
    assert found == {"chain": ROCM_ONLY, "conflict": BOTH}


def test_a_build_helper_true_when_a_rocm_switch_is_set_gates_its_else_arm(tmp_path: Path) -> None:
    """TransformerEngine's `rocm_build()`: true when the project's ROCm switch is set, false once nvcc is found,
    else whether hipcc exists. On ROCm builds it is true, so `if rocm_build(): ... else: <nvcc flags>` keeps
    the nvcc flags on NVIDIA."""
    helpers = """
        import os
        def cuda_path():
            raise FileNotFoundError("nvcc")
        def rocm_build():
            if bool(int(os.getenv("PROJ_USE_ROCM", "0"))):
                return True
            try:
                cuda_path()
                return False
            except FileNotFoundError:
                pass
            return os.path.isfile("/opt/rocm/bin/hipcc")
    """
    files = {
        "build_tools/__init__.py": "",
        "build_tools/utils.py": helpers,
        "build_tools/ext.py": "from .utils import rocm_build\nif rocm_build():\n    pass\nelse:\n    HAZARD()\n",
    }
    assert where_in_project(tmp_path, files, "build_tools/ext.py") == NVIDIA_ONLY


def test_a_helper_testing_for_a_rocm_gpu_gates_its_else_arm_through_a_package_reexport(tmp_path: Path) -> None:
    """`is_rocm_available()` returns `torch.cuda.is_available() and torch.version.hip is not None`, re-exported by
    the package and imported inside the function: its `else:` runs on NVIDIA GPUs (or on no GPU at all)."""
    files = {
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": "from .imports import is_rocm_available\n",
        "pkg/utils/imports.py": """
            import torch
            def is_rocm_available():
                return torch.cuda.is_available() and torch.version.hip is not None
        """,
        "pkg/utils/environment.py": """
            import torch
            def affinity():
                if torch.cuda.is_available():
                    from pkg.utils import is_rocm_available
                    if is_rocm_available():
                        pass
                    else:
                        HAZARD()
        """,
    }
    assert where_in_project(tmp_path, files, "pkg/utils/environment.py") == NVIDIA_ONLY


def test_cross_module_configured_guard(tmp_path: Path) -> None:
    files = {
        "mypkg/__init__.py": "",
        "mypkg/env.py": "from mypkg.probe import accelerated\nfast = accelerated()\n",
        "mypkg/run.py": "from mypkg.env import fast\nif fast:\n    HAZARD()\n",
    }
    guards = frozenset({"mypkg.probe.accelerated"})
    assert where_in_project(tmp_path, files, "mypkg/run.py", guards) == ROCM_ONLY
    assert where_in_project(tmp_path / "unconfigured", files, "mypkg/run.py") == BOTH


def test_cross_module_import_cycle_terminates(tmp_path: Path) -> None:
    files = {
        "cyc/__init__.py": "",
        "cyc/a.py": "from cyc.b import flag\n",
        "cyc/b.py": "from cyc.a import flag\n",
        "cyc/main.py": "from cyc.a import flag\nif flag:\n    HAZARD()\n",
    }
    assert where_in_project(tmp_path, files, "cyc/main.py") == BOTH


def test_resolver_reads_other_modules_with_the_given_guards(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/env.py": "from pkg.probe import accelerated\nfast = accelerated()\n",
        "pkg/run.py": "",
    }
    write_tree(tmp_path, files)
    index = ProjectIndex()
    path = str(tmp_path / "pkg/run.py")
    assert index.resolver_for(path)("pkg.env.fast") is None
    assert index.resolver_for(path, frozenset({"pkg.probe.accelerated"}))("pkg.env.fast") == Vendor(True, False)
    assert index.resolver_for(path)("pkg.env.missing") is None
    assert index.resolver_for(path)("pkg.nowhere.fast()") is None


def test_neighbour_modules_dropped_from_memory_are_read_again_with_the_same_answers(tmp_path: Path) -> None:
    """A process keeps the neighbour modules parsed last only up to a budget of source bytes; one asked about again
    after others pushed it out is read and parsed again and answers as before."""
    budget = project_module._NEIGHBOUR_BYTES_KEPT
    count = 7
    padding = "#" * (budget // 4) + "\n"  # four such modules fill the budget
    files = {"pkg/__init__.py": "", "pkg/run.py": ""}
    for number in range(count):
        files[f"pkg/env{number}.py"] = (
            f"import torch\n{padding}IS_HIP = torch.version.hip is not None\nIS_CUDA = not IS_HIP\n"
        )
    write_tree(tmp_path, files)
    index = ProjectIndex()
    resolve = index.resolver_for(str(tmp_path / "pkg/run.py"))
    assert [resolve(f"pkg.env{number}.IS_HIP") for number in range(count)] == [Vendor(True, False)] * count
    kept = {str(path.relative_to(tmp_path)) for path in index._semantics}
    assert kept == {"pkg/env4.py", "pkg/env5.py", "pkg/env6.py"}
    assert {str(path.relative_to(tmp_path)) for path in index._module_data} == kept
    assert resolve("pkg.env0.IS_CUDA") == Vendor(False, True)  # read again: a question not asked before
    assert "pkg/env0.py" in {str(path.relative_to(tmp_path)) for path in index._semantics}


def test_a_neighbour_larger_than_the_budget_is_kept_until_the_next_one(tmp_path: Path) -> None:
    budget = project_module._NEIGHBOUR_BYTES_KEPT
    large = "import torch\n" + "#" * budget + "\nIS_HIP = torch.version.hip is not None\n"
    small = "import torch\nIS_HIP = torch.version.hip is not None\n"
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/run.py": "", "pkg/large.py": large, "pkg/small.py": small})
    index = ProjectIndex()
    resolve = index.resolver_for(str(tmp_path / "pkg/run.py"))
    assert resolve("pkg.large.IS_HIP") == Vendor(True, False)
    assert [path.name for path in index._semantics] == ["large.py"]
    assert resolve("pkg.small.IS_HIP") == Vendor(True, False)
    assert [path.name for path in index._semantics] == ["small.py"]


def test_a_checked_file_reuses_its_neighbour_tree_only_for_the_same_text(tmp_path: Path) -> None:
    text = "import torch\nIS_HIP = torch.version.hip is not None\n"
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/run.py": "", "pkg/env.py": text})
    index = ProjectIndex()
    assert index.resolver_for(str(tmp_path / "pkg/run.py"))("pkg.env.IS_HIP") == Vendor(True, False)
    path = str(tmp_path / "pkg/env.py")
    tree = index.tree_of(path, text)
    assert isinstance(tree, ast.Module)
    assert ast.dump(tree) == ast.dump(ast.parse(text))
    assert index.tree_of(path, text + "x = 1\n") is None
    assert index.tree_of(str(tmp_path / "pkg/run.py"), "") is None


def test_package_of(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/__init__.py": "", "a/b/__init__.py": "", "a/b/c.py": "", "loose.py": ""})
    assert package_of(str(tmp_path / "a/b/c.py")) == ("a.b", tmp_path)
    assert package_of(str(tmp_path / "loose.py")) == ("", tmp_path)


# --- 4. positions: where a condition applies ------------------------------------------------------------
POSITIONS = [
    pytest.param(
        """
        import torch
        if torch.version.cuda:
            HAZARD("if")
        elif torch.version.hip:
            HAZARD("elif")
        else:
            HAZARD("else")
        """,
        {"if": NVIDIA_ONLY, "elif": ROCM_ONLY, "else": NEVER},
        id="if-elif-else",
    ),
    pytest.param(
        """
        import torch
        if x > 3:
            HAZARD("if")
        elif not torch.version.hip:
            HAZARD("elif")
        else:
            HAZARD("else")
        """,
        {"if": BOTH, "elif": NVIDIA_ONLY, "else": ROCM_ONLY},
        id="elif-after-unknown",
    ),
    pytest.param(
        """
        import torch
        if torch.version.hip:
            if x:
                HAZARD("nested")
            else:
                HAZARD("nested-else")
            if torch.version.cuda:
                HAZARD("contradiction")
        else:
            for item in items:
                while item:
                    HAZARD("deep-else")
        """,
        {"nested": ROCM_ONLY, "nested-else": ROCM_ONLY, "contradiction": NEVER, "deep-else": NVIDIA_ONLY},
        id="nested-ifs",
    ),
    pytest.param(
        """
        import torch
        if not torch.version.hip:
            def helper():
                class Inner:
                    def method(self):
                        return HAZARD("def-inside")
        """,
        {"def-inside": NVIDIA_ONLY},
        id="definitions-inside-a-branch",
    ),
    pytest.param(
        """
        IS_ROCM = detect()
        a = HAZARD("then") if IS_ROCM else HAZARD("else")
        b = HAZARD("neg-then") if not IS_ROCM else HAZARD("neg-else")
        c = (HAZARD("nested") if x else 1) if IS_ROCM else 2
        """,
        {"then": ROCM_ONLY, "else": NVIDIA_ONLY, "neg-then": NVIDIA_ONLY, "neg-else": ROCM_ONLY, "nested": ROCM_ONLY},
        id="conditional-expression",
    ),
    pytest.param(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        torch.version.hip and HAZARD("and")
        not IS_ROCM and HAZARD("not-and")
        IS_ROCM or HAZARD("or")
        (not IS_ROCM) or HAZARD("not-or")
        ok = not IS_ROCM and x > 1 and HAZARD("chain")
        HAZARD("left") and IS_ROCM
        """,
        {
            "and": ROCM_ONLY,
            "not-and": NVIDIA_ONLY,
            "or": NVIDIA_ONLY,
            "not-or": ROCM_ONLY,
            "chain": NVIDIA_ONLY,
            "left": BOTH,
        },
        id="short-circuits",
    ),
    pytest.param(
        """
        IS_ROCM = detect()
        results = [HAZARD("comp") for x in xs if not IS_ROCM]
        table = {k: HAZARD("dict") for k in ks if IS_ROCM}
        """,
        {"comp": NVIDIA_ONLY, "dict": ROCM_ONLY},
        id="comprehension-filters",
    ),
    pytest.param(
        """
        IS_ROCM = detect()
        while not IS_ROCM:
            HAZARD("while")
        """,
        {"while": NVIDIA_ONLY},
        id="while-test",
    ),
]


@pytest.mark.parametrize(("code", "expected"), POSITIONS)
def test_position(code: str, expected: dict[str, tuple[bool | None, bool | None]]) -> None:
    assert everywhere(code) == expected


EARLY_EXITS = [
    pytest.param(
        """
        def f():
            if IS_ROCM:
                return None
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="return",
    ),
    pytest.param(
        """
        def f():
            if not IS_ROCM:
                return
            HAZARD("after")
        """,
        ROCM_ONLY,
        id="return-after-negated",
    ),
    pytest.param(
        """
        def f():
            if IS_ROCM:
                raise NotImplementedError("ROCm")
            with ctx():
                if x:
                    HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="raise-then-nested",
    ),
    pytest.param(
        """
        for item in items:
            if IS_ROCM:
                continue
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="continue",
    ),
    pytest.param(
        """
        while True:
            if IS_ROCM: break
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="break-one-line",
    ),
    pytest.param(
        """
        def f():
            if IS_ROCM:
                x = 1
            else:
                return
            HAZARD("after")
        """,
        ROCM_ONLY,
        id="else-returns",
    ),
    pytest.param(
        """
        def f():
            if IS_ROCM:
                return
            elif x:
                y = 2
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="return-with-elif",
    ),
    pytest.param(
        """
        def f():
            if x:
                y = 1
            elif IS_ROCM:
                return
            else:
                return
            HAZARD("after")
        """,
        BOTH,
        id="only-first-arm-falls-through",
    ),
    pytest.param(
        """
        def f():
            if IS_ROCM:
                if x:
                    return 1
                else:
                    raise ValueError
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="nested-if-else-both-exit",
    ),
    pytest.param(
        """
        def f():
            if IS_ROCM:
                log("rocm")
            HAZARD("after")
        """,
        BOTH,
        id="no-exit",
    ),
    pytest.param(
        """
        def f():
            if x:
                if IS_ROCM:
                    return
                HAZARD("inner")
            HAZARD("after")
        """,
        BOTH,
        id="exit-in-inner-block-does-not-leak-out",
    ),
    pytest.param(
        """
        def f():
            assert not IS_ROCM, "NVIDIA only"
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="assert",
    ),
    pytest.param(
        """
        class T(unittest.TestCase):
            def test_x(self):
                if TEST_WITH_ROCM:
                    self.skipTest("not on ROCm")
                HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="skipTest",
    ),
    pytest.param(
        """
        import pytest
        if not IS_ROCM:
            pytest.skip("ROCm only", allow_module_level=True)
        HAZARD("after")
        """,
        ROCM_ONLY,
        id="pytest-skip",
    ),
    pytest.param(
        """
        import sys
        if IS_ROCM:
            print("unsupported")
            sys.exit(1)
        HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="sys-exit",
    ),
    pytest.param(
        """
        import unittest
        def test():
            if IS_ROCM:
                raise unittest.SkipTest("no")
            HAZARD("after")
        """,
        NVIDIA_ONLY,
        id="raise-skiptest",
    ),
    pytest.param(  # what a GPU-presence test around a vendor test leaves out is no GPU code
        """
        import torch
        def device():
            if torch.cuda.is_available():
                if torch.version.hip:
                    return "rocm"
                return "cuda"
            HAZARD("after")
        """,
        NEVER,
        id="no-gpu-after-a-gpu-presence-test-around-a-vendor-test",
    ),
    pytest.param(  # alone, a GPU-presence test is true on both vendors' GPU machines: no gate
        """
        import torch
        def device():
            if torch.cuda.is_available():
                return "gpu"
            HAZARD("after")
        """,
        BOTH,
        id="no-gpu-after-a-gpu-presence-test",
    ),
]


@pytest.mark.parametrize(("code", "expected"), EARLY_EXITS)
def test_early_exit(code: str, expected: tuple[bool | None, bool | None]) -> None:
    found = everywhere(code)
    assert found["after"] == expected
    if "inner" in found:
        assert found["inner"] == NVIDIA_ONLY


def test_code_before_an_early_exit_is_not_gated() -> None:
    found = everywhere(
        """
        def f():
            HAZARD("before")
            if IS_ROCM:
                return
            HAZARD("after")
        """
    )
    assert found == {"before": BOTH, "after": NVIDIA_ONLY}


DECORATORS = [
    pytest.param(
        "from torch.testing._internal.common_utils import skipIfRocm\n@skipIfRocm", NVIDIA_ONLY, id="skipIfRocm"
    ),
    pytest.param('@skipIfRocm(msg="flaky")', NVIDIA_ONLY, id="skipIfRocm-called"),
    pytest.param("@skipCUDAIfRocm", NVIDIA_ONLY, id="skipCUDAIfRocm"),
    pytest.param("@skip_if_rocm_multiprocess", NVIDIA_ONLY, id="skip-if-rocm-multiprocess"),
    pytest.param("@skipIfNotRocm", ROCM_ONLY, id="skipIfNotRocm"),
    pytest.param("@runOnRocm", ROCM_ONLY, id="runOnRocm"),
    pytest.param('@skipIfRocmArch(("gfx942",))', BOTH, id="skipIfRocmArch-partial"),
    pytest.param("@skipIfRocmVersionLessThan((6, 2))", BOTH, id="skipIfRocmVersionLessThan-partial"),
    pytest.param('@runOnRocmArch(("gfx942",))', BOTH, id="runOnRocmArch-partial"),
    pytest.param('import unittest\n@unittest.skipIf(TEST_WITH_ROCM, "no ROCm")', NVIDIA_ONLY, id="unittest-skipIf"),
    pytest.param(
        'import unittest, torch\n@unittest.skipUnless(torch.version.hip, "ROCm only")',
        ROCM_ONLY,
        id="unittest-skipUnless",
    ),
    pytest.param(
        'import pytest, torch\n@pytest.mark.skipif(torch.version.hip is not None, reason="ROCm")',
        NVIDIA_ONLY,
        id="pytest-skipif",
    ),
    pytest.param(
        'import pytest, torch\n@pytest.mark.skipif(condition=not torch.version.hip, reason="ROCm only")',
        ROCM_ONLY,
        id="pytest-skipif-keyword",
    ),
    pytest.param(
        'import pytest, torch\n@pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU")',
        BOTH,
        id="skipif-not-vendor",
    ),
]


@pytest.mark.parametrize(("decorator", "expected"), DECORATORS)
def test_skip_decorator_on_function(decorator: str, expected: tuple[bool | None, bool | None]) -> None:
    code = decorator + "\ndef test_thing():\n    HAZARD()\n"
    assert where(code) == expected


def test_skip_decorator_on_class_and_not_on_decorator_arguments() -> None:
    found = everywhere(
        """
        import unittest
        @unittest.skipIf(TEST_WITH_ROCM, HAZARD("decorator-argument"))
        class T(unittest.TestCase):
            def test_a(self):
                HAZARD("method")
        @skipIfRocm
        class U:
            X = HAZARD("class-body")
        """
    )
    # The class body itself runs at import time on every vendor; only the tests are skipped.
    assert found == {"decorator-argument": BOTH, "method": NVIDIA_ONLY, "class-body": BOTH}


PROJECT_SKIPS = [
    pytest.param(
        """
        import pytest, torch
        requires_nvidia = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA")
        @requires_nvidia
        def test_thing():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="mark-bound-to-a-name",
    ),
    pytest.param(
        """
        import unittest, torch
        def only_cuda():
            return unittest.skipUnless(torch.version.cuda, "NVIDIA only")
        @only_cuda()
        def test_thing():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="factory-returning-a-mark",
    ),
    pytest.param(
        """
        import pytest, torch
        def needs_cuda(func):
            return pytest.mark.skipif(torch.version.hip is not None, reason="no ROCm")(func)
        @needs_cuda
        def test_thing():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="decorator-applying-a-mark",
    ),
    pytest.param(
        """
        import functools, pytest, torch
        def cuda_only(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                if torch.version.cuda is None:
                    pytest.skip("NVIDIA only")
                return func(*args, **kwargs)
            return wrapper
        @cuda_only
        def test_thing():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="wrapper-skipping-first",
    ),
    pytest.param(
        """
        import pytest, torch
        def on_rocm(func):
            def wrapper():
                if not torch.version.hip:
                    return
                func()
            return wrapper
        @on_rocm
        def test_thing():
            HAZARD()
        """,
        ROCM_ONLY,
        id="wrapper-returning-first",
    ),
    pytest.param(
        """
        import pytest, torch
        requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU")
        @requires_gpu
        def test_thing():
            HAZARD()
        """,
        BOTH,
        id="mark-of-a-device-test",
    ),
    pytest.param(
        """
        import torch
        def timed(func):
            def wrapper(*args):
                if torch.version.cuda is not None:
                    torch.cuda.synchronize()
                return func(*args)
            return wrapper
        @timed
        def test_thing():
            HAZARD()
        """,
        BOTH,
        id="wrapper-calling-the-test-everywhere",
    ),
]


@pytest.mark.parametrize(("code", "expected"), PROJECT_SKIPS)
def test_project_skip_decorators_by_what_they_do(code: str, expected: tuple[bool | None, bool | None]) -> None:
    assert where(code) == expected


def test_project_skip_decorator_of_a_testing_package(tmp_path: Path) -> None:
    files = {
        "mypkg/__init__.py": "",
        "mypkg/testing/__init__.py": """
            import pytest, torch
            requires_cuda = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA only")
            """,
        "test_kernels.py": """
            import mypkg.testing
            @mypkg.testing.requires_cuda
            def test_fp8():
                HAZARD()
            """,
        "test_other.py": """
            from mypkg.testing import requires_cuda
            @requires_cuda
            def test_fp8():
                HAZARD()
            """,
    }
    assert where_in_project(tmp_path, files, "test_kernels.py") == NVIDIA_ONLY
    assert where_in_project(tmp_path, files, "test_other.py") == NVIDIA_ONLY


def test_a_frameworks_test_decorator_that_needs_its_nvidia_device(tmp_path: Path) -> None:
    """TVM's `requires_cuda*` marks skip unless TVM's CUDA runtime finds a device, which a ROCm build never does:
    written from `tvm.testing`, or re-exported by the project's testing module through `from tvm.testing.utils import
    *`. A name the star import does not bring (`requires_gpu`) and a decorator of no such framework decide nothing."""
    files = {
        "mypkg/__init__.py": "",
        "mypkg/testing/__init__.py": "import pytest\nfrom tvm.testing.utils import *\n",
        "test_direct.py": """
            import tvm.testing
            @tvm.testing.requires_cuda_compute_version(8, 9)
            def test_fp8():
                HAZARD()
            """,
        "test_reexported.py": """
            import mypkg.testing
            @mypkg.testing.requires_cuda_compute_version(8, 9)
            def test_fp8():
                HAZARD()
            """,
        "test_other_name.py": """
            import mypkg.testing
            @mypkg.testing.requires_gpu
            def test_fp8():
                HAZARD()
            """,
        "test_other_framework.py": """
            import gpulib.testing
            @gpulib.testing.requires_cuda_compute_version(8, 9)
            def test_fp8():
                HAZARD()
            """,
    }
    assert where_in_project(tmp_path, files, "test_direct.py") == NVIDIA_ONLY
    assert where_in_project(tmp_path, files, "test_reexported.py") == NVIDIA_ONLY
    assert where_in_project(tmp_path, files, "test_other_name.py") == (True, True)
    assert where_in_project(tmp_path, files, "test_other_framework.py") == (True, True)


def test_requirement_decorator_of_another_library_with_its_rocm_counterpart(tmp_path: Path) -> None:
    """`requires_cuda` of a library outside the tree means NVIDIA when its `requires_rocm` is imported beside it;
    alone (or as `skip_cuda`) it says nothing about the vendor."""
    files = {
        "mypkg/__init__.py": "",
        "mypkg/testing/__init__.py": """
            from gpulib.testing import requires_cuda, requires_rocm, skip_cuda
            """,
        "test_kernels.py": """
            import mypkg.testing
            @mypkg.testing.requires_cuda
            def test_fp8():
                HAZARD()
            """,
        "test_direct.py": """
            from gpulib.testing import cuda_only, rocm_only
            @cuda_only
            def test_fp8():
                HAZARD()
            """,
        "test_alone.py": """
            from gpulib.testing import requires_cuda
            @requires_cuda
            def test_fp8():
                HAZARD()
            """,
        "test_polarity.py": """
            import mypkg.testing
            @mypkg.testing.skip_cuda
            def test_fp8():
                HAZARD()
            """,
        "mypkg/marks.py": """
            import pytest, torch
            cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="a GPU")
            rocm_only = pytest.mark.skipif(torch.version.hip is None, reason="ROCm")
            """,
        "test_tree_marks.py": """
            from mypkg.marks import cuda_only, rocm_only
            @cuda_only
            def test_fp8():
                HAZARD()
            """,
    }
    assert where_in_project(tmp_path, files, "test_kernels.py") == NVIDIA_ONLY
    assert where_in_project(tmp_path, files, "test_direct.py") == NVIDIA_ONLY
    assert where_in_project(tmp_path, files, "test_alone.py") == BOTH
    assert where_in_project(tmp_path, files, "test_polarity.py") == BOTH
    assert where_in_project(tmp_path, files, "test_tree_marks.py") == BOTH, "the tree's own mark asks for any GPU"


def test_defaults_of_a_helper_only_gated_tests_call() -> None:
    found = everywhere(
        """
        import pytest, torch
        requires_cuda = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA only")
        def kernel(dtype=HAZARD("gated-default"), *, scale=HAZARD("gated-keyword-default")):
            HAZARD("gated-body")
        def shared(dtype=HAZARD("open-default")):
            pass
        @requires_cuda
        def test_a():
            kernel()
            shared()
        def test_b():
            shared()
        """
    )
    assert found == {
        "gated-default": NVIDIA_ONLY,
        "gated-keyword-default": NVIDIA_ONLY,
        "gated-body": NVIDIA_ONLY,
        "open-default": BOTH,
    }


def test_registration_switched_by_a_vendor_test() -> None:
    found = everywhere(
        """
        import torch
        def is_cuda():
            return torch.version.cuda is not None
        HAS_CUTLASS = False
        if is_cuda():
            try:
                import cutlass_ops
                HAS_CUTLASS = True
            except ImportError:
                HAS_CUTLASS = False
        HAS_TRITON = False
        try:
            import triton
            HAS_TRITON = True
        except ImportError:
            pass
        class Operator:
            @register_benchmark(enabled=is_cuda())
            def cutlass_matmul(self):
                HAZARD("called-switch")
            @register_benchmark(enabled=HAS_CUTLASS)
            def cutlass_gemm(self):
                HAZARD("flag-set-under-nvidia")
            @register_benchmark(enabled=HAS_TRITON)
            def triton_gemm(self):
                HAZARD("flag-set-everywhere")
            @register_benchmark(baseline=True)
            def aten_gemm(self):
                HAZARD("no-switch")
            @register_benchmark(enabled=False)
            def slow_gemm(self):
                HAZARD("off-by-default")
        if HAS_CUTLASS:
            HAZARD("flag-read")
        """
    )
    assert found == {
        "called-switch": NVIDIA_ONLY,
        "flag-set-under-nvidia": (False, True),
        "flag-set-everywhere": BOTH,
        "no-switch": BOTH,
        "off-by-default": BOTH,
        "flag-read": (False, True),
    }


_BENCHMARKS = """
import torch
def is_cuda():
    return torch.version.cuda is not None
HAS_CUTLASS = False
if is_cuda():
    HAS_CUTLASS = True
def quantize(x):
    return HAZARD("helper")
class Operator:
    @register_benchmark(enabled=HAS_CUTLASS)
    def cutlass_gemm(self):
        pass
    OTHER
    def get_input_iter(self):
        yield quantize(HAZARD("inputs"))
"""

IDLE_BENCHMARKS = [
    pytest.param("", NVIDIA_ONLY, id="every-benchmark-off-rocm"),
    pytest.param("@register_benchmark(enabled=is_cuda())\n    def triton_gemm(self): pass", NVIDIA_ONLY, id="two-off"),
    pytest.param("@register_benchmark(baseline=True)\n    def aten_gemm(self): pass", BOTH, id="one-always-on"),
    pytest.param("@register_benchmark\n    def aten_gemm(self): pass", BOTH, id="one-registered-bare"),
    pytest.param("@register_benchmark(enabled=False)\n    def slow_gemm(self): pass", BOTH, id="one-off-by-default"),
]


@pytest.mark.parametrize(("other", "expected"), IDLE_BENCHMARKS)
def test_a_benchmark_class_with_no_benchmark_on_rocm(other: str, expected: tuple[bool | None, bool | None]) -> None:
    """Every benchmark a class registers is switched off on ROCm: its inputs, and the helpers only they call, feed
    nothing there."""
    found = everywhere(_BENCHMARKS.replace("OTHER", other))
    assert found == {"inputs": expected, "helper": expected}


def test_flag_cleared_under_a_vendor_test_is_decided_by_the_last_assignment_there() -> None:
    found = everywhere(
        """
        import torch
        USE_FLASH = True
        if torch.version.hip:
            USE_FLASH = False
        if USE_FLASH:
            HAZARD("set-everywhere-first")
        ONLY_ON_ROCM = False
        if torch.version.hip:
            ONLY_ON_ROCM = True
        if ONLY_ON_ROCM:
            HAZARD("set-under-rocm")
        """
    )
    # Each vendor sees the last assignment that always runs there, as a string variable's values are decided
    # (vendor_values.py): the first flag is false on ROCm and true on NVIDIA.
    assert found == {"set-everywhere-first": NVIDIA_ONLY, "set-under-rocm": ROCM_ONLY}


def test_a_flag_set_in_both_arms_of_a_vendor_test_is_that_test() -> None:
    """True in the ROCm arm and false in the other: no false assignment runs on ROCm, no true one on NVIDIA;
    also when a tuple assignment sets it with another name, or a conditional expression reads it."""
    found = everywhere(
        """
        import torch
        if torch.version.hip:
            HIP_ENVIRONMENT = True
        else:
            HIP_ENVIRONMENT = False
        if HIP_ENVIRONMENT:
            HAZARD("plain")
        if torch.version.hip:
            IS_HIP, BACKEND = True, "ROCm"
        else:
            IS_HIP, BACKEND = False, "CUDA"
        if not IS_HIP:
            HAZARD("unpacked")
        PATTERNS = ("libamdhip64.so*",) if IS_HIP else HAZARD("arm")
        def probe(HIP_ENVIRONMENT):
            if HIP_ENVIRONMENT:
                HAZARD("parameter")
        OTHER, NAME = probe(1)
        if OTHER:
            HAZARD("unpacked-from-a-call")
        """
    )
    assert found == {
        "plain": ROCM_ONLY,
        "unpacked": NVIDIA_ONLY,
        "arm": NVIDIA_ONLY,
        "parameter": BOTH,
        "unpacked-from-a-call": BOTH,
    }


def test_a_flag_cleared_first_and_set_under_a_rocm_test_is_that_test() -> None:
    """`HIP_ENVIRONMENT = False` then `if torch.version.hip: HIP_ENVIRONMENT = True`: the last assignment that
    always runs on ROCm sets it, and no true one runs on NVIDIA; a flag set under some other test stays open."""
    found = everywhere(
        """
        import torch
        HIP_ENVIRONMENT = False
        BACKEND = "CPU"
        if torch.version.hip:
            HIP_ENVIRONMENT = True
            BACKEND = "ROCm"
        elif torch.cuda.is_available():
            BACKEND = "CUDA"
        def library():
            if HIP_ENVIRONMENT:
                return None
            return HAZARD("after-rocm-return")
        FAST = False
        if torch.version.hip and torch.cuda.device_count() > 1:
            FAST = True
        if not FAST:
            HAZARD("set-under-a-partial-test")
        """
    )
    assert found == {"after-rocm-return": NVIDIA_ONLY, "set-under-a-partial-test": BOTH}


def test_a_flag_set_in_both_arms_is_that_test_in_the_modules_importing_it(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/env.py": """
            import torch
            try:
                if torch.version.hip:
                    HIP_ENVIRONMENT, BACKEND = True, "ROCm"
                else:
                    HIP_ENVIRONMENT, BACKEND = False, "CUDA"
            except Exception:
                pass
            """,
        "pkg/use.py": """
            from pkg.env import HIP_ENVIRONMENT
            if not HIP_ENVIRONMENT:
                HAZARD()
            """,
    }
    assert where_in_project(tmp_path, files, "pkg/use.py") == NVIDIA_ONLY


def test_a_flag_set_under_its_own_test_is_decided_without_recursing() -> None:
    found = everywhere(
        """
        import torch
        READY = False
        if not READY and torch.version.cuda:
            READY = True
        if READY:
            HAZARD("read")
        """
    )
    assert found == {"read": (False, True)}


def test_a_platform_switch_with_a_value_naming_rocm_routes_its_other_arms_away_from_rocm() -> None:
    found = everywhere(
        """
        import os
        PLATFORM = os.getenv("PLATFORM")
        if PLATFORM == "vendor_npu":
            HAZARD("before")
        elif PLATFORM == "amd_rocm":
            HAZARD("rocm")
        elif PLATFORM == "other_gpu":
            HAZARD("after")
        if PLATFORM == "shipping":
            HAZARD("no-rocm-word")
        """
    )
    # An arm before the ROCm one is another platform's (the author routed ROCm further down), one after it too.
    assert found == {
        "before": (False, True),
        "rocm": (True, False),
        "after": (False, True),
        "no-rocm-word": (True, True),
    }


def test_a_flag_named_by_convention_keeps_its_convention() -> None:
    found = everywhere(
        """
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        if BUILD_TARGET == "auto":
            if IS_HIP_EXTENSION:
                IS_ROCM = True
            else:
                IS_ROCM = False
        elif BUILD_TARGET == "rocm":
            IS_ROCM = True
        else:
            IS_ROCM = False
        if IS_ROCM:
            HAZARD("rocm-arm")
        else:
            HAZARD("nvidia-arm")
        """
    )
    # Set true only under ROCm tests, so false on NVIDIA; named IS_ROCM, so true on ROCm: the else arm is NVIDIA's.
    assert found == {"rocm-arm": (True, False), "nvidia-arm": (False, True)}


def test_parametrize_lists_run_where_the_test_does() -> None:
    found = everywhere(
        """
        import pytest, torch
        requires_cuda = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA only")
        @requires_cuda
        @pytest.mark.parametrize("dtype", [HAZARD("gated-list")])
        def test_a(dtype):
            pass
        @pytest.mark.parametrize("dtype", [HAZARD("open-list")])
        def test_b(dtype):
            pass
        """
    )
    assert found == {"gated-list": NVIDIA_ONLY, "open-list": BOTH}


def test_parametrize_lists_run_where_the_body_gets_to_their_first_read() -> None:
    """absl's `parameterized.product` values reach the test body only after its skip of non-CUDA devices (JAX's
    `is_cuda_compute_capability_at_least` is False there); not when a parameter is read before the skip."""
    found = everywhere(
        """
        from absl.testing import parameterized
        from jax._src import test_util as jtu
        class T(parameterized.TestCase):
            @parameterized.product(dtype=[HAZARD("skipped-first")])
            def test_a(self, dtype):
                if not jtu.is_cuda_compute_capability_at_least("9.0"):
                    self.skipTest("TMA requires Hopper")
                run(dtype)
            @parameterized.parameters(HAZARD("read-first"))
            def test_b(self, dtype):
                run(dtype)
                if not jtu.is_cuda_compute_capability_at_least("9.0"):
                    self.skipTest("TMA requires Hopper")
        """
    )
    assert found == {"skipped-first": NVIDIA_ONLY, "read-first": BOTH}


def test_pytestmark_skips_the_module_tests() -> None:
    found = everywhere(
        """
        import pytest, torch
        pytestmark = pytest.mark.skipif(torch.version.hip is not None, reason="CUDA only")
        HAZARD("module-level")
        def test_a():
            HAZARD("test")
        """
    )
    assert found == {"module-level": BOTH, "test": NVIDIA_ONLY}


_BLACKWELL_ONLY_SUITE = """
import pytest, torch
_IS_BLACKWELL = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] in (10, 12)
pytestmark = pytest.mark.skipif(not _IS_BLACKWELL, reason="needs sm100/sm120")
@pytest.mark.skipif(HAZARD("own-skip") < 8, reason="sm80+")
def test_a():
    HAZARD("test")
"""
_PER_ARCH_TEST = """
import torch
def test_b():
    major, _ = torch.cuda.get_device_capability()
    if major >= 9:
        HAZARD("hopper-or-later")
    if major == 10:
        HAZARD("sm100")
    if torch.cuda.get_device_capability() == (9, 0):
        HAZARD("mi200-or-h100")
"""


def test_capability_tests_in_a_test_suite_are_valued_on_cdna() -> None:
    """A test suite runs on CDNA GPUs (9.0, 9.4, 9.5): `major in (10, 12)` is false on all of them, so the module's
    skip skips every test on ROCm (and decides where a test's own skip decorator matters); `major >= 9` is true on
    all of them, and the same code outside a test suite meets RDNA too (10.3-12.0): no gate there."""
    found = everywhere(_BLACKWELL_ONLY_SUITE, path="tests/test_fp4.py")
    assert found == {"own-skip": (False, True), "test": (False, True)}
    assert everywhere(_PER_ARCH_TEST, path="tests/test_fp4.py") == {
        "hopper-or-later": BOTH,
        "sm100": (False, True),
        "mi200-or-h100": BOTH,  # MI200 but not MI300: not decided on ROCm
    }
    for code in (_BLACKWELL_ONLY_SUITE, _PER_ARCH_TEST):
        assert set(everywhere(code, path="pkg/fp4.py").values()) == {BOTH}


def test_reach_keeps_runtime_conditions() -> None:
    """`branch` ignores conditions unrelated to vendors; `reach` keeps them (None = depends)."""
    analyzed = analyze(
        """
        import torch
        def build():
            if torch.version.hip:
                HAZARD("always-on-rocm")
                if x > 3:
                    HAZARD("sometimes")
            elif torch.version.cuda:
                HAZARD("nvidia")
        """
    )
    function = next(n for n in analyzed.semantic.parents if isinstance(n, ast.FunctionDef))
    reach = {label: analyzed.gates.reach(node, function.body) for label, node in analyzed.hazards().items()}
    assert reach == {
        "always-on-rocm": Vendor(True, False),
        "sometimes": Vendor(None, False),
        "nvidia": Vendor(False, True),
    }
    assert analyzed.branch(analyzed.hazard("sometimes")) == ROCM_ONLY
    assert analyzed.gates.reach(analyzed.hazard("sometimes")) == Vendor(None, False)


# --- 5. imports guarded by try/except ImportError --------------------------------------------------------
IMPORT_GUARDS = [
    pytest.param("try:\n    import pynvml  # <-\nexcept ImportError:\n    pynvml = None\n", True, id="ImportError"),
    pytest.param(
        "try:\n    from apex import amp  # <-\nexcept ModuleNotFoundError:\n    amp = None\n",
        True,
        id="ModuleNotFoundError",
    ),
    pytest.param("try:\n    import pynvml  # <-\nexcept Exception:\n    pass\n", True, id="Exception"),
    pytest.param("try:\n    import pynvml  # <-\nexcept:\n    pass\n", True, id="bare-except"),
    pytest.param(
        "try:\n    import pynvml  # <-\nexcept (OSError, ImportError) as e:\n    pass\n", True, id="tuple-of-exceptions"
    ),
    pytest.param(
        "try:\n    import pynvml  # <-\nexcept OSError:\n    pass\nexcept ImportError:\n    pass\n",
        True,
        id="second-handler",
    ),
    pytest.param("try:\n    import pynvml  # <-\nexcept OSError:\n    pass\n", False, id="other-exception"),
    pytest.param(
        "try:\n    import pynvml  # <-\nexcept ImportError:\n    raise RuntimeError('install pynvml')\n",
        False,
        id="handler-re-raises",
    ),
    pytest.param(
        "import sys\ntry:\n    import pynvml  # <-\nexcept ImportError:\n    sys.exit('need pynvml')\n",
        False,
        id="handler-exits",
    ),
    pytest.param(
        "try:\n    import pynvml\n    pynvml.nvmlInit()  # <-\nexcept ImportError:\n    pass\n",
        False,
        id="non-import-statement",
    ),
    pytest.param(
        "try:\n    if x:\n        import pynvml  # <-\nexcept ImportError:\n    pass\n", True, id="nested-in-if"
    ),
    pytest.param(
        "try:\n    def f():\n        import pynvml  # <-\nexcept ImportError:\n    pass\n",
        False,
        id="import-inside-def-runs-later",
    ),
    pytest.param(
        "try:\n    pass\nexcept ImportError:\n    pass\nelse:\n    import pynvml  # <-\n",
        False,
        id="try-else-is-not-guarded",
    ),
    pytest.param(
        "import contextlib\nwith contextlib.suppress(ImportError):\n    import pynvml  # <-\n", True, id="suppress"
    ),
    pytest.param(
        "from contextlib import suppress\nwith suppress(ModuleNotFoundError, AttributeError):\n    import pynvml  # <-\n",
        True,
        id="suppress-imported",
    ),
    pytest.param("import pynvml  # <-\n", False, id="plain-import"),
]


@pytest.mark.parametrize(("code", "gated"), IMPORT_GUARDS)
def test_import_guard(code: str, gated: bool) -> None:
    analyzed = analyze(code)
    node = analyzed.marked()
    assert analyzed.context.is_rocm_gated(node) is gated
    assert analyzed.branch(node) == BOTH  # an import guard is not a vendor branch


def test_import_guard_covers_names_inside_the_import() -> None:
    analyzed = analyze("try:\n    from pynvml import nvmlInit  # <-\nexcept ImportError:\n    pass\n")
    statement = analyzed.marked()
    assert isinstance(statement, ast.ImportFrom)
    assert analyzed.context.is_rocm_gated(statement.names[0])  # the `nvmlInit` alias


# --- 6. PythonContext wrappers ----------------------------------------------------------------------------
def test_context_gated_predicates() -> None:
    analyzed = analyze(
        """
        import torch
        if torch.version.hip:
            HAZARD("rocm")
        else:
            HAZARD("nvidia")
        HAZARD("both")
        if torch.version.hip and torch.version.cuda:
            HAZARD("never")
        """
    )
    ctx = analyzed.context
    rocm, nvidia, both, never = (analyzed.hazard(k) for k in ("rocm", "nvidia", "both", "never"))
    assert (ctx.is_rocm_gated(rocm), ctx.is_nvidia_gated(rocm)) == (False, True)
    assert (ctx.is_rocm_gated(nvidia), ctx.is_nvidia_gated(nvidia)) == (True, False)
    assert (ctx.is_rocm_gated(both), ctx.is_nvidia_gated(both)) == (False, False)
    assert (ctx.is_rocm_gated(never), ctx.is_nvidia_gated(never)) == (True, True)
    assert ctx.branch(rocm) == analyzed.gates.branch(rocm)


# --- 7. the semantic model: qualified names and values -------------------------------------------------
QUALIFIED = [
    pytest.param("import torch as T\nx = T.compile\n", "torch.compile", id="import-as"),
    pytest.param("from torch import version\nx = version.hip\n", "torch.version.hip", id="from-import-module"),
    pytest.param("from torch.version import hip\nx = hip\n", "torch.version.hip", id="from-import-name"),
    pytest.param(
        "from torch.backends import cuda as c\nx = c.matmul.allow_tf32\n",
        "torch.backends.cuda.matmul.allow_tf32",
        id="from-import-as",
    ),
    pytest.param(
        "import torch.utils.cpp_extension\nx = torch.utils.cpp_extension.CUDAExtension\n",
        "torch.utils.cpp_extension.CUDAExtension",
        id="import-dotted",
    ),
    pytest.param("import torch.nn.functional as F\nx = F.relu\n", "torch.nn.functional.relu", id="import-dotted-as"),
    pytest.param(
        "import torch\nbk = torch.backends\nx = bk.cudnn.benchmark\n",
        "torch.backends.cudnn.benchmark",
        id="name-alias-of-module",
    ),
    pytest.param("x = torch.compile\n", "torch.compile", id="unbound-taken-literally"),
    pytest.param("from .env import flag\nx = flag\n", "mypkg.sub.env.flag", id="relative-import"),
    pytest.param("from ..env import flag\nx = flag\n", "mypkg.env.flag", id="relative-import-parent"),
    pytest.param("from . import env\nx = env.flag\n", "mypkg.sub.env.flag", id="relative-import-module"),
    pytest.param(
        "import torch\ndef f(torch):\n    x = torch.compile\n", "torch.compile", id="parameter-shadows-import"
    ),
    pytest.param(
        "import torch\ndef f():\n    import numpy as torch\n    x = torch.compile\n",
        "numpy.compile",
        id="local-import-shadows",
    ),
]


@pytest.mark.parametrize(("code", "expected"), QUALIFIED)
def test_qualified_name(code: str, expected: str) -> None:
    analyzed = analyze(code, package="mypkg.sub")
    assert analyzed.semantic.qualified_name(analyzed.expression("x")) == expected


def test_qualified_name_of_import_from_two_places_is_unknown() -> None:
    analyzed = analyze(
        """
        import torch
        if torch.version.hip:
            from amdsmi import amdsmi_get_gpu_vram_usage as memory
        else:
            from pynvml import nvmlDeviceGetMemoryInfo as memory
        x = memory
        try:
            import simplejson as js
        except ImportError:
            import simplejson as js
        y = js.loads
        """
    )
    assert analyzed.semantic.qualified_name(analyzed.expression("x")) is None
    assert analyzed.semantic.qualified_name(analyzed.expression("y")) == "simplejson.loads"


def test_qualified_name_of_reassigned_alias_is_unknown() -> None:
    analyzed = analyze("import torch, numpy\nm = torch\nm = numpy\nx = m.compile\n")
    assert analyzed.semantic.qualified_name(analyzed.expression("x")) is None


STRING_SOURCES = [
    pytest.param('x = "reduce-overhead"\n', ["reduce-overhead"], id="literal"),
    pytest.param('MODE = "reduce-overhead"\nx = MODE\n', ["reduce-overhead"], id="name-assigned-once"),
    pytest.param('A = "max-autotune"\nB = A\nx = B\n', ["max-autotune"], id="alias-chain"),
    pytest.param('x = "default" if IS_ROCM else "reduce-overhead"\n', ["default", "reduce-overhead"], id="both-arms"),
    pytest.param(
        'M = "reduce-overhead"\nx = "a" if p else ("b" if q else M)\n', ["a", "b", "reduce-overhead"], id="nested-arms"
    ),
    pytest.param('x = "reduce" "-overhead"\n', ["reduce-overhead"], id="concatenated"),
    pytest.param('x = f"{mode}"\n', [], id="f-string-unknown"),
    pytest.param("x = get_mode()\n", [], id="call-unknown"),
    pytest.param('MODE = "reduce-overhead"\ndef f(MODE):\n    x = MODE\n', [], id="parameter-shadows-module-string"),
    pytest.param(
        'MODE = "reduce-overhead"\ndef f():\n    for MODE in modes:\n        x = MODE\n', [], id="loop-target-shadows"
    ),
]


@pytest.mark.parametrize(("code", "expected"), STRING_SOURCES)
def test_string_sources(code: str, expected: list[str]) -> None:
    analyzed = analyze(code)
    sources = analyzed.context.values.string_sources(analyzed.expression("x"))
    assert [string for string, _ in sources] == expected
    for _, literal in sources:
        assert isinstance(literal, ast.Constant) and type(literal.value) is str


def test_string_sources_literals_carry_their_own_gating() -> None:
    analyzed = analyze('import torch\nmode = "default" if torch.version.hip else "reduce-overhead"\nx = mode\n')
    sources = dict(analyzed.context.values.string_sources(analyzed.expression("x")))
    assert analyzed.branch(sources["default"]) == ROCM_ONLY
    assert analyzed.branch(sources["reduce-overhead"]) == NVIDIA_ONLY


SINGLE_VALUES = [
    pytest.param("n = 4\nx = n\n", "4", id="once"),
    pytest.param("n = 4\nm = n\nx = m\n", "4", id="chain"),
    pytest.param("n = 4\nn = 5\nx = n\n", "n", id="twice-is-the-name"),
    pytest.param("n += 1\nx = n\n", "n", id="augmented-is-the-name"),
    pytest.param("n = 4\ndef f(n):\n    x = n\n", "n", id="parameter"),
    pytest.param("n = 4\ndef f():\n    x = n\n", "4", id="module-value-seen-from-function"),
    pytest.param(
        "n = 4\nclass C:\n    n = 5\n    def m(self):\n        x = n\n", "4", id="class-body-invisible-to-methods"
    ),
    pytest.param("n = 4\nclass C:\n    n = 5\n    x = n\n", "5", id="class-body-visible-inside"),
    pytest.param("n = 4\ndef f():\n    with open(p) as n:\n        x = n\n", "n", id="with-target"),
    pytest.param("n = 4\ndef f():\n    a, n = g()\n    x = n\n", "n", id="tuple-target"),
    pytest.param("n = 4\ndef f():\n    global n\n    n = 5\nx = n\n", "n", id="global-assignment-counts"),
]


@pytest.mark.parametrize(("code", "expected"), SINGLE_VALUES)
def test_single_value(code: str, expected: str) -> None:
    analyzed = analyze(code)
    value = analyzed.semantic.single_value(analyzed.expression("x"))
    assert value is not None and analyzed.context.code_of(value) == expected


@pytest.mark.parametrize(
    ("code", "shadowed"),
    [
        pytest.param('MODE = "reduce-overhead"\nx = [f(MODE) for MODE in modes]\n', True, id="comprehension"),
        pytest.param(
            'MODE = "reduce-overhead"\nx = {k: f(MODE) for k, (a, MODE) in items}\n', True, id="dict-comp-tuple"
        ),
        pytest.param('MODE = "reduce-overhead"\nx = lambda MODE: f(MODE)\n', True, id="lambda"),
        pytest.param('MODE = "reduce-overhead"\nx = lambda other: f(MODE)\n', False, id="lambda-other-param"),
        pytest.param('MODE = "reduce-overhead"\nx = [f(MODE) for m in modes]\n', False, id="comprehension-other-var"),
    ],
)
def test_expression_scopes_shadow_outer_names(code: str, shadowed: bool) -> None:
    analyzed = analyze(code)
    call = next(n for n in analyzed.semantic.parents if isinstance(n, ast.Call) and dotted_name(n.func) == "f")
    argument = call.args[0]
    sources = [string for string, _ in analyzed.context.values.string_sources(argument)]
    assert sources == ([] if shadowed else ["reduce-overhead"])


def test_lookup_kinds() -> None:
    analyzed = analyze("import torch\nclass C: pass\ndef f(): pass\nn = 1\nx = n\n")
    at = analyzed.expression("x")
    kinds = {name: analyzed.semantic.lookup(name, at) for name in ("torch", "C", "f", "n", "missing")}
    assert {k: (b.kind if b else None) for k, b in kinds.items()} == {
        "torch": "import",
        "C": "class",
        "f": "function",
        "n": "value",
        "missing": None,
    }


def test_deeply_nested_code_does_not_overflow() -> None:
    depth = 90  # the tokenizer's limit is 100 indentation levels
    code = "IS_ROCM = detect()\n" + "".join("    " * i + "if x:\n" for i in range(depth))
    code += "    " * depth + "if not IS_ROCM:\n" + "    " * (depth + 1) + "y = " + "not " * 2000 + "HAZARD()\n"
    assert where(code) == NVIDIA_ONLY


# --- 8. through the engine: rules never report gated code ---------------------------------------------
ENGINE_VALID = [
    pytest.param(
        "import torch\ndef build(m):\n    if torch.version.hip:\n        return m\n"
        '    return torch.compile(m, mode="reduce-overhead")\n',
        id="early-return",
    ),
    pytest.param(
        "import torch as T\nfrom torch import version as V\nON_AMD = V.hip is not None\n"
        'm = T.compile(m, mode="default" if ON_AMD else "reduce-overhead")\n',
        id="aliases",
    ),
    pytest.param(
        "import torch\nclass Trainer:\n    def __init__(self):\n        self.amd = bool(torch.version.hip)\n"
        '    def build(self, m):\n        return m if self.amd else torch.compile(m, mode="reduce-overhead")\n',
        id="instance-attribute",
    ),
    pytest.param(
        'import pytest, torch\n@pytest.mark.skipif(torch.version.hip is not None, reason="CUDA graphs")\n'
        'def test_compile():\n    torch.compile(torch.nn.Linear(2, 2), mode="reduce-overhead")\n',
        id="skip-decorator",
    ),
]
ENGINE_INVALID = [
    pytest.param(
        'import torch\nif torch.cuda.is_available():\n    m = torch.compile(m, mode="reduce-overhead")\n',
        id="cuda-available-is-not-a-gate",
    ),
    pytest.param(
        'import torch\ndef build(m):\n    if torch.version.hip:\n        log("rocm")\n'
        '    return torch.compile(m, mode="reduce-overhead")\n',
        id="no-early-exit",
    ),
    pytest.param(
        'import torch\nMODE = "reduce-overhead"\ndef build(m, MODE="default"):\n    return torch.compile(m, mode=MODE)\n'
        "torch.compile(m, mode=MODE)\n",
        id="module-string-still-seen-outside-the-shadowing-def",
    ),
]


@pytest.mark.parametrize("code", ENGINE_VALID)
def test_engine_does_not_report_gated_code(code: str) -> None:
    from rocmlint.registry import rule_by_code
    from rocmlint.testing import run_example

    rule = rule_by_code("ROC101")
    assert rule is not None
    assert run_example(rule, code) == []


@pytest.mark.parametrize("code", ENGINE_INVALID)
def test_engine_reports_ungated_code(code: str) -> None:
    from rocmlint.registry import rule_by_code
    from rocmlint.testing import run_example

    rule = rule_by_code("ROC101")
    assert rule is not None
    found = run_example(rule, code)
    assert len(found) == 1, found


# --- vendor-only packages, other accelerators, one level of call graph ---------------------------------
# A package with no ROCm build, imported where its absence is caught: a call into it raises on ROCm.
_GUARDED_DEEP_GEMM = "try:\n    import deep_gemm\nexcept ImportError:\n    deep_gemm = None\ndef quantize(m, a, b):\n"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("import cutlass\nimport cutlass.cute as cute\nHAZARD()\n", NVIDIA_ONLY, id="import-cutlass"),
        pytest.param("from cuda.bindings import runtime\nHAZARD()\n", NVIDIA_ONLY, id="from-cuda-bindings"),
        pytest.param("from cuda import cudart\nHAZARD()\n", NVIDIA_ONLY, id="from-cuda-import"),
        pytest.param("from nvidia import dali\nHAZARD()\n", NVIDIA_ONLY, id="from-nvidia-namespace"),
        pytest.param("import nvidia.cudnn.lib\nHAZARD()\n", NVIDIA_ONLY, id="nvidia-cuda-library-wheel"),
        pytest.param("from tensorrt_llm import LLM\nHAZARD()\n", NVIDIA_ONLY, id="tensorrt-llm"),
        pytest.param(
            "def check():\n    try:\n        import cudnn\n    except Exception as exc:\n        raise RuntimeError('no') from exc\n"
            "    HAZARD()\n",
            NVIDIA_ONLY,
            id="cudnn-frontend-import-that-raises-otherwise",
        ),
        pytest.param("import habana_frameworks.torch.core as htcore\nHAZARD()\n", NEVER, id="import-habana"),
        pytest.param("HAZARD()\nimport cutlass\n", BOTH, id="code-before-the-import"),
        pytest.param(
            "try:\n    import cutlass\nexcept ImportError:\n    cutlass = None\nHAZARD()\n", BOTH, id="guarded-import"
        ),
        pytest.param("import pytest\npytest.importorskip('cuda.tile')\nHAZARD()\n", NVIDIA_ONLY, id="importorskip"),
        pytest.param("import cupy\nimport flash_attn\nHAZARD()\n", BOTH, id="packages-with-rocm-builds"),
        pytest.param(
            "import importlib.util\nif importlib.util.find_spec('cutlass') is not None:\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="find-spec",
        ),
        pytest.param("def f():\n    import cutlass\n    HAZARD()\nHAZARD('outside')\n", NVIDIA_ONLY, id="local-import"),
        pytest.param(
            "import subprocess\nsubprocess.check_output('nvidia-smi')\nHAZARD()\n", NVIDIA_ONLY, id="nvidia-smi"
        ),
        pytest.param(
            "import subprocess\nsubprocess.run(['/usr/bin/nvidia-smi', '-L'], check=True)\nHAZARD()\n",
            NVIDIA_ONLY,
            id="nvidia-smi-run-checked",
        ),
        pytest.param(
            "import subprocess\nout = subprocess.check_output(['nvidia-smi', '-L'])\nHAZARD(out)\n",
            BOTH,
            id="output-kept",
        ),
        pytest.param("import subprocess\nsubprocess.run(['nvidia-smi', '-L'])\nHAZARD()\n", BOTH, id="run-unchecked"),
        pytest.param("import subprocess\nsubprocess.check_call(['rocm-smi'])\nHAZARD()\n", ROCM_ONLY, id="rocm-smi"),
        pytest.param("import subprocess\nsubprocess.check_call(['make', 'all'])\nHAZARD()\n", BOTH, id="other-program"),
        # A driver's program that ran (exit code 0) runs only on its vendor's machines.
        pytest.param(
            "import subprocess\nif subprocess.call('nvidia-smi', shell=True) == 0:\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="nvidia-smi-exit-code",
        ),
        pytest.param(
            "import subprocess\nif subprocess.run(['rocm-smi']).returncode != 0:\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="rocm-smi-failed",
        ),
        pytest.param(
            "import os\ndef on_nvidia():\n    return os.system('nvidia-smi -L') == 0\nif on_nvidia():\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="helper-returning-exit-code-test",
        ),
        pytest.param("import subprocess\nif subprocess.call('ls') == 0:\n    HAZARD()\n", BOTH, id="other-exit-code"),
        pytest.param(
            "import shutil\ndef is_cuda():\n    if shutil.which('nvidia-smi'):\n        return True\n    else:\n"
            "        return False\nif is_cuda():\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="nvidia-smi-on-path",
        ),
        pytest.param("import shutil\nif not shutil.which('rocminfo'):\n    HAZARD()\n", NVIDIA_ONLY, id="no-rocminfo"),
        pytest.param("import shutil\nif shutil.which('git'):\n    HAZARD()\n", BOTH, id="other-program-on-path"),
        pytest.param(_GUARDED_DEEP_GEMM + "    n = deep_gemm.ceil_div(m, 128)\n    HAZARD()\n", NVIDIA_ONLY, id="call"),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    x = f(g(deep_gemm.ceil_div(m, 8)))\n    HAZARD()\n", NVIDIA_ONLY, id="nested"
        ),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    deep_gemm.gemm(a, b)\n    if m:\n        HAZARD()\n", NVIDIA_ONLY, id="later"
        ),
        pytest.param(_GUARDED_DEEP_GEMM + "    HAZARD()\n    deep_gemm.gemm(a, b)\n", BOTH, id="hazard-first"),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    n = deep_gemm.ceil_div(m, 8) if deep_gemm else m\n    HAZARD()\n", BOTH, id="arm"
        ),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    n = deep_gemm and deep_gemm.ceil_div(m, 8)\n    HAZARD()\n", BOTH, id="and"
        ),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    f = lambda: deep_gemm.ceil_div(m, 8)\n    HAZARD()\n", BOTH, id="lambda"
        ),
        pytest.param(
            _GUARDED_DEEP_GEMM + "    if m:\n        deep_gemm.gemm(a, b)\n    HAZARD()\n", BOTH, id="in-a-branch"
        ),
        pytest.param(
            "import flash_attn\nflash_attn.flash_attn_func(q)\nHAZARD()\n", BOTH, id="package-with-rocm-builds"
        ),
        pytest.param("import torch\ntorch.ops._C.cutlass_scaled_mm(o, a, b)\nHAZARD()\n", NVIDIA_ONLY, id="cutlass-op"),
        pytest.param("import torch\ntorch.ops._C.scaled_mm(o, a, b)\nHAZARD()\n", BOTH, id="other-custom-op"),
        # What the body of a `try:` whose handlers all leave, or the one arm of an `if` that carries on, leaves true
        # holds after it.
        pytest.param(
            "def load():\n    try:\n        import cutlass\n    except ImportError as error:\n"
            "        raise RuntimeError('pip install cutlass') from error\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="import-in-try-re-raised",
        ),
        pytest.param(
            "try:\n    import cutlass\nexcept ImportError:\n    raise\nexcept Exception:\n    pass\nHAZARD()\n",
            BOTH,
            id="import-in-try-one-handler-carrying-on",
        ),
        pytest.param(
            "import torch\nif torch.cuda.is_available():\n    import cutlass\nelse:\n    raise ImportError\nHAZARD()\n",
            NVIDIA_ONLY,
            id="import-in-the-arm-carrying-on",
        ),
        pytest.param(
            "import torch\nif not torch.cuda.is_available():\n    raise ImportError\nelse:\n    import cutlass\nHAZARD()\n",
            NVIDIA_ONLY,
            id="import-in-the-else-carrying-on",
        ),
        pytest.param(
            "import torch\nif torch.cuda.is_available():\n    import cutlass\nHAZARD()\n", BOTH, id="import-in-an-if"
        ),
    ],
)
def test_vendor_only_package_imports(code: str, expected: tuple[bool, bool]) -> None:
    found = analyze(code)
    assert found.branch(found.hazards()[""]) == expected


def test_a_probe_that_runs_nvidia_smi_is_an_nvidia_test() -> None:
    found = everywhere(
        """
        import subprocess
        def has_nvidia_smi() -> bool:
            try:
                subprocess.check_output("nvidia-smi")
                return True
            except subprocess.SubprocessError:
                return False
        if has_nvidia_smi():
            HAZARD("gated")
        HAZARD("open")
        """
    )
    assert found == {"gated": NVIDIA_ONLY, "open": BOTH}


@pytest.mark.parametrize("device_type", ["xpu", "npu", "hpu", "mps"])
def test_other_accelerators_device_types_never_run_on_gpus(device_type: str) -> None:
    found = analyze(
        f"""
        def launch(x):
            num_warps = HAZARD("xpu") if x.device.type == "{device_type}" else HAZARD("gpu")
            if device_type != "{device_type}":
                HAZARD("not-xpu")
            if infer_device() == "{device_type}":
                HAZARD("inferred")
        """
    )
    assert found.branch(found.hazard("inferred")) == NEVER
    assert found.branch(found.hazard("xpu")) == NEVER
    assert found.branch(found.hazard("gpu")) == BOTH
    assert found.branch(found.hazard("not-xpu")) == BOTH


def test_macos_platform_tests_run_on_no_gpu() -> None:
    found = analyze(
        """
        import platform
        import sys

        method = HAZARD("mac") if sys.platform == "darwin" else HAZARD("other")
        if platform.system() != "Darwin":
            HAZARD("not-mac")
        if platform.system() == "Darwin":
            HAZARD("mac-system")
        if sys.platform == "linux":
            HAZARD("linux")
        """
    )
    assert found.branch(found.hazard("mac")) == NEVER
    assert found.branch(found.hazard("mac-system")) == NEVER
    assert found.branch(found.hazard("other")) == BOTH
    assert found.branch(found.hazard("not-mac")) == BOTH
    assert found.branch(found.hazard("linux")) == BOTH


def test_windows_platform_tests_are_off_rocms_path() -> None:
    """Instinct GPUs run Linux: code only Windows runs is not ROCm's (NVIDIA's is not decided), its `else:` runs
    everywhere."""
    found = analyze(
        """
        import os
        import platform
        import sys

        windows = os.name == "nt"
        if windows:
            HAZARD("flag")
        else:
            HAZARD("posix")
        if sys.platform == "win32":
            HAZARD("sys")
        if platform.system() == "Windows":
            HAZARD("system")
        if os.name == "posix":
            HAZARD("posix-compared")
        """
    )
    for windows_only in ("flag", "sys", "system"):
        assert found.branch(found.hazard(windows_only)) == (False, True)
    assert found.branch(found.hazard("posix")) == BOTH
    assert found.branch(found.hazard("posix-compared")) == BOTH


def test_nvidia_toolchain_variables_are_set_off_rocm_only() -> None:
    """`CUDAHOSTCXX` names nvcc's host compiler: a ROCm build sets none of NVIDIA's toolchain variables. A runtime
    variable ROCm honours (`CUDA_VISIBLE_DEVICES`) decides nothing."""
    found = analyze(
        """
        import os

        if host_cxx := os.environ.get("CUDAHOSTCXX"):
            HAZARD("host-compiler")
        if os.getenv("NVCC_PREPEND_FLAGS"):
            HAZARD("nvcc-flags")
        if not os.environ.get("CUDACXX"):
            HAZARD("unset")
        if os.environ.get("CUDA_VISIBLE_DEVICES"):
            HAZARD("runtime")
        """
    )
    assert found.branch(found.hazard("host-compiler")) == (False, True)
    assert found.branch(found.hazard("nvcc-flags")) == (False, True)
    assert found.branch(found.hazard("unset")) == BOTH
    assert found.branch(found.hazard("runtime")) == BOTH


def test_a_cuda_build_variant_tag_starts_with_cu_only_on_nvidia() -> None:
    """A packaging script's CUDA build variant (`CU_VERSION=cu121`, `cpu` or `rocm6.1`) starts with `cu` only on
    NVIDIA: its prefix or a `cu` tag compared with it is an NVIDIA test, and a helper raising unless it holds one
    gates what follows its call. A device name that starts with `cu` ("cuda", also ROCm's) is no such variable."""
    found = analyze(
        """
        import os

        CU_VERSION = os.environ["CU_VERSION"]

        def cuda_major_minor():
            if len(CU_VERSION) != 5 or CU_VERSION[:2] != "cu":
                raise ValueError(CU_VERSION)
            return CU_VERSION[2:4], CU_VERSION[4]

        def setup_cuda():
            major, minor = cuda_major_minor()
            HAZARD("after-helper")

        if os.getenv("DESIRED_CUDA", "").startswith("cu"):
            HAZARD("prefix")
        if CU_VERSION == "cu102":
            HAZARD("tag")
        if device.startswith("cu"):
            HAZARD("device")
        if CU_VERSION[1:3] == "cu":
            HAZARD("middle")
        """
    )
    for nvidia_only in ("after-helper", "prefix", "tag"):
        assert found.branch(found.hazard(nvidia_only))[0] is False
    assert found.branch(found.hazard("device")) == BOTH
    assert found.branch(found.hazard("middle")) == BOTH


def test_a_call_of_a_helper_that_never_returns_on_rocm_gates_what_follows() -> None:
    """`get_nvcc_path()` raises unless `shutil.which("nvcc")` found NVIDIA's compiler: after a statement that always
    calls it, the rest of the block runs only off ROCm. Not after a helper that may return on ROCm, a generator, one
    whose call is not always made, nor before the call."""
    found = analyze(
        """
        import shutil

        def get_nvcc_path():
            nvcc = shutil.which("nvcc")
            if nvcc is None:
                raise RuntimeError("nvcc not found")
            return nvcc

        def find_compiler():
            nvcc = shutil.which("nvcc")
            if nvcc is None:
                return shutil.which("hipcc")
            return nvcc

        def compilers():
            if shutil.which("nvcc") is None:
                raise RuntimeError("nvcc not found")
            yield "nvcc"

        def compile(source, fast):
            HAZARD("before")
            nvcc = get_nvcc_path()
            HAZARD("after")

        def compile_any(source, fast):
            compiler = find_compiler()
            names = compilers()
            maybe = get_nvcc_path() if fast else None
            HAZARD("portable")
        """
    )
    assert found.branch(found.hazard("before")) == BOTH
    assert found.branch(found.hazard("after")) == (False, True)
    assert found.branch(found.hazard("portable")) == BOTH


def test_a_check_that_raises_on_rocm_and_otherwise_falls_off_its_end_never_returns_there() -> None:
    """`_require_sm90()` ends with `if torch.version.hip is not None or ...: raise`: its end, the only way back, is
    reached off ROCm only, so what follows a call of it runs off ROCm. Not a check that only warns, nor one whose
    raise is a GPU-presence test alone."""
    found = analyze(
        """
        import torch
        import warnings

        def _require_sm90():
            if torch.version.hip is not None or torch.cuda.get_device_capability()[0] < 9:
                raise RuntimeError("needs an SM90 NVIDIA GPU")

        def _warn_rocm():
            if torch.version.hip is not None:
                warnings.warn("untested on ROCm")

        def _require_gpu():
            if not torch.cuda.is_available():
                raise RuntimeError("needs a GPU")

        def kernel(x):
            _require_sm90()
            HAZARD("after-require")

        def warned(x):
            _warn_rocm()
            HAZARD("after-warning")

        def gpu(x):
            _require_gpu()
            HAZARD("after-gpu-check")
        """
    )
    assert found.branch(found.hazard("after-require")) == (False, True)
    assert found.branch(found.hazard("after-warning")) == BOTH
    assert found.branch(found.hazard("after-gpu-check")) == BOTH


def test_function_called_only_under_an_nvidia_gate_is_nvidia_only() -> None:
    found = analyze(
        """
        import torch

        def cuda_version():
            return HAZARD("helper")

        def unused_helper():
            HAZARD("never-called")

        def passed_around():
            HAZARD("callback")

        def recursive(n):
            HAZARD("recursive")
            return recursive(n - 1) if n else 0

        class Builder:
            def nvcc_args(self):
                HAZARD("method")

            def build(self):
                if not torch.version.hip:
                    self.nvcc_args()
                    recursive(3)

        if torch.version.cuda is not None:
            cuda_version()
            register(passed_around)
        """
    )
    assert found.branch(found.hazard("helper")) == (False, True)
    assert found.branch(found.hazard("method")) == (False, True)
    assert found.branch(found.hazard("never-called")) == BOTH
    # Handed to `register` only under the NVIDIA test: on ROCm the value is never made, so never called.
    assert found.branch(found.hazard("callback")) == (False, True)
    assert found.branch(found.hazard("recursive")) == BOTH


def test_function_used_as_a_value_only_where_rocm_never_goes() -> None:
    found = everywhere(
        """
        import torch, triton

        def _sync_cuda():
            HAZARD("cuda-arm")

        def _sync_rocm():
            HAZARD("rocm-arm")

        sync = _sync_rocm if torch.version.hip is not None else _sync_cuda

        def _prune(configs):
            HAZARD("pruner")

        def _shared(configs):
            HAZARD("shared")

        if torch.version.hip is None:
            options = {"prune_configs_by": {"early_config_prune": _prune}}
        callbacks = [_shared]
        """
    )
    # Callers decide only "never on ROCm" (what a diagnostic needs), so the ROCm arm stays open.
    assert found == {"cuda-arm": NVIDIA_ONLY, "rocm-arm": BOTH, "pruner": NVIDIA_ONLY, "shared": BOTH}


def test_function_with_one_ungated_call_runs_on_rocm() -> None:
    found = analyze(
        """
        import torch

        def helper():
            HAZARD()

        if torch.version.cuda:
            helper()
        helper()
        """
    )
    assert found.branch(found.hazard()) == BOTH


# --- long call chains and cycles (a 26,000-line module once ran gate analysis out of Python stack) -----
def _call_chain(length: int, head: str) -> str:
    """f1 -> f2 -> ... -> f<length>, a HAZARD("chain") at the end, f1 called at module level under `head`
    (empty: unconditionally); plus a cycle a -> b -> a holding HAZARD("cycle")."""
    functions = [f"def f{i}():\n    return f{i + 1}()\n" for i in range(1, length)]
    functions.append(f'def f{length}():\n    HAZARD("chain")\n')
    cycle = 'def a():\n    return b()\n\ndef b():\n    a()\n    HAZARD("cycle")\n'
    call = f"{head}\n    f1()\n" if head else "f1()\n"
    return "import torch\n\n" + "\n".join(functions) + "\n" + cycle + "\n" + call


@pytest.mark.parametrize(("head", "chain"), [("if torch.version.cuda:", NVIDIA_ONLY), ("", BOTH)])
def test_long_call_chain_is_followed_to_its_head(head: str, chain: tuple[bool | None, bool | None]) -> None:
    found = analyze(_call_chain(3000, head))
    assert found.branch(found.hazard("chain")) == chain
    assert found.branch(found.hazard("cycle")) == BOTH  # recursive through another function: left alone


def test_mutual_recursion_is_left_alone_from_either_end() -> None:
    code = """
        import torch

        def ping(n):
            HAZARD("ping")
            return pong(n - 1)

        def pong(n):
            HAZARD("pong")
            return ping(n - 1) if n else 0

        def three():
            HAZARD("three")
            return one()

        def one():
            return two()

        def two():
            return three()

        if torch.version.cuda:
            ping(3)
            one()
        """
    assert everywhere(code) == {"ping": BOTH, "pong": BOTH, "three": BOTH}
    found = analyze(code)  # asked in the other order
    assert [found.branch(found.hazard(label)) for label in ("three", "pong", "ping")] == [BOTH] * 3


def test_chain_through_a_cycle_that_is_never_reached_keeps_its_gate() -> None:
    """A cycle among the callers of `worker` (loop -> loop2 -> loop) leaves `worker` ungated, and the gate
    `worker` puts around its own call of `helper` still holds."""
    found = analyze(
        """
        import torch

        def helper():
            HAZARD()

        def worker():
            if torch.version.cuda:
                helper()

        def loop():
            worker()
            loop2()

        def loop2():
            loop()

        worker()
        """
    )
    assert found.branch(found.hazard()) == NVIDIA_ONLY


def test_long_call_chain_in_a_real_run_gives_no_roc001(settings: Settings) -> None:
    hazard = 'torch.compile(m, mode="reduce-overhead")'
    for head, reported in (("if torch.version.cuda:", False), ("", True)):
        code = _call_chain(3000, head).replace('HAZARD("chain")', hazard).replace('HAZARD("cycle")', hazard)
        report = Engine().check_bytes("chains.py", code.encode(), settings)
        lines = {d.location.line for d in report.diagnostics if d.code == "ROC101"}
        assert {d.code for d in report.diagnostics} == {"ROC101"}, [d.message for d in report.diagnostics]
        chain_line = code.splitlines().index(f"    {hazard}") + 1
        assert (chain_line in lines) is reported
        assert len(lines) == (2 if reported else 1)  # the cycle's hazard is always reported


# --- variables only read where ROCm ignores them: their definition is gated ------------------------------
FLAG_DEFINITIONS = [
    pytest.param(
        """
        from vllm.platforms import current_platform
        _has_sm80 = HAZARD() >= 8
        if current_platform.is_cuda() and _has_sm80:
            pass
        """,
        NVIDIA_ONLY,
        id="anded-after-an-nvidia-test",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        use_fast = _has_sm80 and not torch.version.hip
        """,
        NVIDIA_ONLY,
        id="anded-before-an-nvidia-test",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        if not (_has_sm80 and torch.version.cuda):
            raise RuntimeError("needs sm80")
        """,
        NVIDIA_ONLY,
        id="negated-conjunction",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        if torch.version.hip or _has_sm80:
            pass
        """,
        NVIDIA_ONLY,
        id="or-with-a-rocm-test",
    ),
    pytest.param(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        def pick():
            has_sm80 = HAZARD() >= 8
            if not IS_ROCM:
                return "fast" if has_sm80 else "slow"
            return "rocm"
        """,
        NVIDIA_ONLY,
        id="local-read-in-an-nvidia-branch",
    ),
    pytest.param(
        """
        import torch
        def pick():
            has_sm80 = HAZARD() >= 8
            if torch.version.hip:
                return "rocm"
            return "fast" if has_sm80 else "slow"
        """,
        NVIDIA_ONLY,
        id="local-read-after-a-rocm-exit",
    ),
    pytest.param(
        """
        import torch
        def pick():
            has_sm80 = HAZARD() >= 8
            fast = has_sm80 and small()
            if torch.version.cuda and fast:
                return "fast"
        """,
        NVIDIA_ONLY,
        id="flag-read-only-by-a-gated-flag",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        _has_sm80 = _has_sm80 and not torch.version.hip
        if torch.version.cuda and _has_sm80:
            pass
        """,
        NVIDIA_ONLY,
        id="reassigned-from-itself",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        if torch.version.cuda and _has_sm80:
            pass
        print(_has_sm80)
        """,
        BOTH,
        id="one-read-ungated",
    ),
    pytest.param(
        """
        import torch
        def pick():
            has_sm80 = HAZARD() >= 8
            return has_sm80
        """,
        BOTH,
        id="returned",
    ),
    pytest.param(
        """
        import torch
        def pick():
            has_sm80 = HAZARD() >= 8
        """,
        BOTH,
        id="never-read",
    ),
    pytest.param(
        """
        import torch
        has_sm80 = HAZARD() >= 8
        if torch.version.cuda and has_sm80:
            pass
        """,
        BOTH,
        id="public-module-variable-without-an-import-index",
    ),
    pytest.param(
        """
        import torch
        _has_sm80 = HAZARD() >= 8
        if torch.cuda.is_available() and _has_sm80:
            pass
        """,
        BOTH,
        id="anded-with-a-test-true-on-rocm",
    ),
    pytest.param(
        """
        import torch
        class Kernel:
            has_sm80 = HAZARD() >= 8
            def run(self):
                return torch.version.cuda and self.has_sm80
        """,
        BOTH,
        id="class-attribute-read-through-self",
    ),
    pytest.param(
        """
        import torch
        def pick():
            has_sm80 = other = HAZARD() >= 8
            if torch.version.cuda and has_sm80:
                pass
            return other
        """,
        BOTH,
        id="one-of-two-targets-returned",
    ),
    pytest.param(
        """
        import torch
        def pick():
            _a = HAZARD() >= 8
            _b = _a or x
            _a = _b and y
            return _a
        """,
        BOTH,
        id="cycle-of-flags",
    ),
]


@pytest.mark.parametrize(("code", "expected"), FLAG_DEFINITIONS)
def test_definition_of_a_variable_only_read_where_rocm_ignores_it(
    code: str, expected: tuple[bool | None, bool | None]
) -> None:
    assert where(code)[0] == expected[0]


_FLAG_MODULE = """
import torch
has_sm80 = torch.cuda.get_device_capability()[0] >= 8
def use_marlin():
    return torch.version.cuda is not None and has_sm80
"""


@pytest.mark.parametrize(
    ("importer", "reported"),
    [
        pytest.param("", False, id="imported-by-nobody"),
        pytest.param("from pkg.util import use_marlin\n", False, id="importer-reads-another-name"),
        pytest.param("from pkg.util import has_sm80\n", True, id="importer-reads-the-flag"),
        pytest.param("import pkg.util as u\nprint(u.has_sm80)\n", True, id="importer-reads-the-attribute"),
        pytest.param("from pkg.util import *\n", True, id="star-import"),
        pytest.param('import pkg.util\nflag = getattr(pkg.util, "has_sm80")\n', True, id="read-by-name"),
        pytest.param(
            "from pkg.util import use_marlin\nhas_sm80 = False\n", False, id="importer-has-its-own-variable-so-named"
        ),
    ],
)
def test_public_module_flag_by_what_its_importers_read(tmp_path: Path, importer: str, reported: bool) -> None:
    """A public module variable only read where ROCm ignores it is gated when no module of the project that
    imports its module may read it; those importers are the result's dependencies."""
    from rocmlint.dependencies import DependencyRecorder

    files = {"pkg/__init__.py": "", "pkg/util.py": _FLAG_MODULE, "pkg/main.py": importer}
    write_tree(tmp_path, files)
    recorder = DependencyRecorder()
    recorder.start_file()
    report = Engine(recorder).check_path(tmp_path / "pkg/util.py", Settings(root=tmp_path))
    assert [(d.code, d.location.line) for d in report.diagnostics] == ([("ROC113", 2)] if reported else [])
    if importer:
        assert str(tmp_path / "pkg/main.py") in recorder.finish_file()


def test_long_chain_of_flags_is_decided_without_overflow() -> None:
    """`_f1 = HAZARD(); _f2 = _f1 and x; ...`, the last read under an NVIDIA test: too deep to follow to the
    end from the first definition, which stays ungated; the last ones are decided."""
    chain = "\n".join(f"_f{i} = _f{i - 1} and x" for i in range(2, 3001))
    code = f'import torch\n_f1 = HAZARD("first") >= 8\n{chain}\nif torch.version.cuda and _f3000:\n    pass\n'
    code = code.replace("_f2999 and x", '_f2999 and HAZARD("last")')
    found = analyze(code)
    assert found.branch(found.hazard("first")) == BOTH
    assert found.branch(found.hazard("last")) == NVIDIA_ONLY


# --- architecture tests and the helpers that return them ------------------------------------------------
_ARCH = "import re, torch\narch = torch.cuda.get_device_properties(0).gcnArchName\n"
ARCH_TESTS = [
    pytest.param('"gfx94" in arch', id="substring"),
    pytest.param('arch == "gfx942"', id="equality"),
    pytest.param('"gfx942" == arch.split(":")[0]', id="equality-reversed"),
    pytest.param('arch.startswith("gfx9")', id="startswith"),
    pytest.param('arch.startswith(("gfx90a", "gfx942"))', id="startswith-tuple"),
    pytest.param('arch in ("gfx942", "gfx950")', id="member-of-tuple"),
    pytest.param('arch in frozenset({"gfx942", "gfx950"})', id="member-of-frozenset"),
    pytest.param('arch in {"gfx942": 256, "gfx950": 512}', id="key-of-dict"),
    pytest.param('any(a in arch for a in ["gfx942", "gfx950"])', id="any-of-names"),
    pytest.param('re.match(r"gfx9\\d", arch)', id="regex"),
    pytest.param('"GFX942" in arch.upper()', id="upper-case"),
    # Only the family prefix looked for in gcnArchName itself holds on every AMD GPU.
    pytest.param('"gfx" in target', id="family-in-another-string"),
]


@pytest.mark.parametrize("test", ARCH_TESTS)
def test_arch_test_is_false_on_nvidia_and_unknown_on_rocm(test: str) -> None:
    """An NVIDIA GPU has no gfx name; on ROCm the answer depends on the GPU (like `__GFX9__` in C++)."""
    found = everywhere(_TEMPLATE.format(setup=_ARCH, test=test))
    assert found == {"then": ROCM_ONLY, "else": BOTH, "negated": BOTH, "arm": ROCM_ONLY}


@pytest.mark.parametrize(
    "test",
    [
        pytest.param('"gfx" in torch.cuda.get_device_properties(0).gcnArchName', id="substring"),
        pytest.param('arch.startswith("gfx")', id="startswith-through-a-name"),
        pytest.param('getattr(props, "gcnArchName", "").lower().startswith("gfx")', id="getattr"),
    ],
)
def test_gfx_family_in_the_arch_name_is_a_rocm_test(test: str) -> None:
    """Every AMD GPU's `gcnArchName` starts with "gfx"; an NVIDIA GPU's is its product name."""
    found = everywhere(_TEMPLATE.format(setup=_ARCH, test=test))
    assert found == {"then": ROCM_ONLY, "else": NVIDIA_ONLY, "negated": NVIDIA_ONLY, "arm": ROCM_ONLY}


@pytest.mark.parametrize(
    "test",
    [
        pytest.param('"sm_90" in arch', id="nvidia-name"),
        pytest.param('arch in ("gfx942", "sm_90")', id="mixed-collection"),
        pytest.param("arch == other", id="unknown-strings"),
        pytest.param('any(a in arch for a in names if a != "gfx90a")', id="filtered-quantifier"),
        pytest.param('arch < "gfx942"', id="ordering"),
    ],
)
def test_not_an_arch_test(test: str) -> None:
    found = everywhere(_TEMPLATE.format(setup=_ARCH, test=test))
    assert found == {"then": BOTH, "else": BOTH, "negated": BOTH, "arm": BOTH}


ARCH_HELPERS = [
    pytest.param(
        """
        import torch
        def is_cdna():
            return "gfx9" in torch.cuda.get_device_properties(0).gcnArchName
        if is_cdna():
            HAZARD()
        """,
        ROCM_ONLY,
        id="returns-an-arch-test",
    ),
    pytest.param(
        """
        import torch
        def is_cdna():
            return torch.version.hip is not None and "gfx9" in torch.cuda.get_device_properties(0).gcnArchName
        if not is_cdna():
            HAZARD()
        """,
        BOTH,
        id="negated-arch-helper-runs-on-other-amd-gpus",
    ),
    pytest.param(
        """
        import torch
        def _arch():
            return torch.cuda.get_device_properties(0).gcnArchName
        def amd_gpu():
            return _arch().startswith("gfx")
        def supported():
            return not amd_gpu() and helper_free()
        if supported():
            HAZARD()
        """,
        NVIDIA_ONLY,
        id="helpers-calling-helpers",
    ),
    pytest.param(
        """
        import torch
        _GCN_ARCH = torch.cuda.get_device_properties(0).gcnArchName
        _ON_MI3 = any(arch in _GCN_ARCH for arch in ["gfx942", "gfx950"])
        def use_aiter():
            return _ON_MI3 and enabled()
        if use_aiter():
            HAZARD()
        """,
        ROCM_ONLY,
        id="module-flag-of-arch-names",
    ),
    pytest.param(
        """
        import torch
        class RocmPlatform:
            def __init__(self):
                self.arch = torch.cuda.get_device_properties(0).gcnArchName
            def is_mi300(self):
                return "gfx942" in self.arch
        current_platform = RocmPlatform()
        def kernel():
            if current_platform.is_mi300():
                HAZARD()
        """,
        ROCM_ONLY,
        id="method-of-a-platform-instance",
    ),
    pytest.param(
        """
        import torch
        current_platform = make_platform()
        if current_platform.is_mi300():
            HAZARD()
        """,
        BOTH,
        id="instance-of-an-unknown-factory",
    ),
]


@pytest.mark.parametrize(("code", "expected"), ARCH_HELPERS)
def test_arch_helper_recognised_by_what_it_returns(code: str, expected: tuple[bool | None, bool | None]) -> None:
    assert where(code) == expected


_PLATFORMS = {
    "plat/__init__.py": "from plat.rocm import RocmPlatform\ncurrent_platform = RocmPlatform()\n",
    "plat/rocm.py": """
        import torch
        from plat.arch import gcn_arch, on_amd_gpu

        class RocmPlatform:
            def is_mi300(self):
                return "gfx942" in gcn_arch()

            @classmethod
            def is_amd(cls):
                return on_amd_gpu()
        """,
    "plat/arch.py": """
        import torch

        def gcn_arch():
            return torch.cuda.get_device_properties(0).gcnArchName

        def on_amd_gpu():
            return "gfx" in torch.cuda.get_device_properties(0).gcnArchName
        """,
}


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            "from plat import current_platform\nif current_platform.is_mi300():\n    HAZARD()\n",
            ROCM_ONLY,
            id="method-of-an-instance-made-in-another-module",
        ),
        pytest.param(
            "import plat\nif not plat.current_platform.is_amd():\n    HAZARD()\n",
            NVIDIA_ONLY,
            id="through-the-package",
        ),
        pytest.param(
            "from plat.rocm import RocmPlatform\nif RocmPlatform.is_amd():\n    HAZARD()\n",
            ROCM_ONLY,
            id="class-method-of-an-imported-class",
        ),
        pytest.param(
            "from plat.arch import on_amd_gpu\nif on_amd_gpu():\n    HAZARD()\n", ROCM_ONLY, id="helper-function"
        ),
        pytest.param(
            "from plat import current_platform\nif current_platform.is_mi300.cache_info():\n    HAZARD()\n",
            BOTH,
            id="deeper-than-a-member",
        ),
    ],
)
def test_arch_helper_in_another_module(tmp_path: Path, code: str, expected: tuple[bool | None, bool | None]) -> None:
    files = {**_PLATFORMS, "main.py": code}
    assert where_in_project(tmp_path, files, "main.py") == expected


def test_flag_read_at_the_end_of_a_long_call_chain() -> None:
    """`_x = g()` is only read in f3000, which runs only under an NVIDIA test through a chain of 3000 calls:
    deciding g's callers asks where `_x` is read, and that question is deferred past the chain's depth and
    asked again, so `_x`'s answer must not be kept from the interrupted attempt."""
    functions = "".join(f"def f{i}():\n    return f{i + 1}()\n" for i in range(1, 3000))
    code = (
        "import torch\n"
        f"{functions}def f3000():\n    if _x:\n        pass\n"
        "def g():\n    HAZARD()\n_x = g()\nif torch.version.cuda:\n    f1()\n"
    )
    found = analyze(code)
    assert found.branch(found.hazard()) == NVIDIA_ONLY


def test_a_skip_decorators_answer_is_not_given_to_a_binding_made_later() -> None:
    """Lookups make a new Binding each time; the answer for `requires_cuda` was cached by the binding's id, so
    the next binding made at the freed address (`plain`'s) got it, and which tests counted as NVIDIA-only
    depended on memory addresses."""
    analyzed = analyze(
        """
        import pytest, torch
        requires_cuda = pytest.mark.skipif(torch.version.cuda is None, reason="NVIDIA")
        def plain(func):
            return func
        HAZARD()
        """
    )
    semantic, gates = analyzed.semantic, analyzed.gates
    for _ in range(20):  # CPython reuses a freed block of the same size at once; a few rounds make sure of it
        assert gates._defined_skip(semantic.lookup_in(semantic.module, "requires_cuda"), False) == Vendor(
            rocm=False, nvidia=True
        )
        assert gates._defined_skip(semantic.lookup_in(semantic.module, "plain"), False) is None


class _ReadBy:
    """The module-level names the modules importing the checked one read (`ReadElsewhere`)."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def __call__(self, name: str) -> bool:
        return name in self.names

    def only_off_rocm(self, name: str) -> bool:
        return False

    def definitions_only_on_nvidia(self, name: str) -> bool:
        return False


@pytest.mark.parametrize(
    ("code", "read_elsewhere", "expected"),
    [
        pytest.param("FLAG = False\nif FLAG:\n    HAZARD()\n", _ReadBy(), NEVER, id="hard-wired-off"),
        pytest.param("_FLAG = False\nif _FLAG:\n    HAZARD()\n", None, NEVER, id="private-without-a-project"),
        pytest.param(
            "FLAG = False\ntry:\n    if FLAG:\n        HAZARD()\nexcept Exception:\n    pass\n",
            _ReadBy(),
            NEVER,
            id="in-try",
        ),
        pytest.param("FLAG = False\nif not FLAG:\n    HAZARD()\n", _ReadBy(), BOTH, id="negated"),
        pytest.param("FLAG = False\nif FLAG:\n    HAZARD()\n", _ReadBy("FLAG"), BOTH, id="read-by-an-importer"),
        pytest.param("FLAG = False\nif FLAG:\n    HAZARD()\n", None, BOTH, id="no-project"),
        pytest.param("FLAG = False\nFLAG = True\nif FLAG:\n    HAZARD()\n", _ReadBy(), BOTH, id="rebound"),
        pytest.param(
            "FLAG = False\ndef on():\n    global FLAG\n    FLAG = True\nif FLAG:\n    HAZARD()\n",
            _ReadBy(),
            BOTH,
            id="global",
        ),
        pytest.param("if x:\n    FLAG = False\nif FLAG:\n    HAZARD()\n", _ReadBy(), BOTH, id="conditional"),
        pytest.param("FLAG = True\nif FLAG:\n    HAZARD()\n", _ReadBy(), BOTH, id="on"),
    ],
)
def test_a_flag_hard_wired_off(code: str, read_elsewhere: _ReadBy | None, expected: tuple[bool, bool]) -> None:
    """`FLAG = False` once at module level, never rebound and read by no importer: `if FLAG:` never runs."""
    found = analyze(code, read_elsewhere=read_elsewhere)
    assert found.branch(found.hazard()) == expected


def test_nvidias_name_in_the_gpus_name_is_off_rocm() -> None:
    """No ROCm GPU's marketing name holds "nvidia" (`get_device_name`, the properties' `name`), followed through
    case changes and a variable whose other values are constants without the word. "amd" in it decides nothing:
    an unknown AMD GPU may report a bare PCI id."""
    found = analyze(
        """
        import torch
        from torch.cuda import get_device_name

        try:
            name = torch.cuda.get_device_name(0)
        except Exception:
            name = ""
        if "nvidia" in name.lower():
            HAZARD("lowered")
        if "NVIDIA" in get_device_name().strip():
            HAZARD("imported-query")
        if "NVIDIA" in torch.cuda.get_device_properties(0).name:
            HAZARD("properties")
        if "nvidia" not in name.lower():
            HAZARD("negated")
        if "amd" in name.lower():
            HAZARD("amd")
        labelled = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "nvidia-default"
        if "nvidia" in labelled.lower():
            HAZARD("constant-with-the-word")
        if "nvidia" in describe(0).lower():
            HAZARD("unknown-query")
        """
    )
    for nvidia_named in ("lowered", "imported-query", "properties"):
        assert found.branch(found.hazard(nvidia_named)) == (False, True)
    for undecided in ("negated", "amd", "constant-with-the-word", "unknown-query"):
        assert found.branch(found.hazard(undecided)) == BOTH


def test_a_found_cuda_toolkit_decides_nothing() -> None:
    """torch's `CUDA_HOME` is set wherever a CUDA toolkit is found, a ROCm machine with one installed too (xformers'
    setup.py chose its CUDA build by it on ROCm until it tested `torch.version.cuda`): no vendor test."""
    found = analyze(
        """
        from torch.utils.cpp_extension import CUDA_HOME

        if CUDA_HOME is not None:
            HAZARD("toolkit")
        """
    )
    assert found.branch(found.hazard("toolkit")) == BOTH
