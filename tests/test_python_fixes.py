"""The Python fixes: NVIDIA behaviour unchanged, the promised ROCm behaviour, one shared guard, idempotence,
and `rocmlint check --fix` over the train_pkg fixture.

Behaviour is checked by running the original and the fixed module against a stand-in `torch` (a module
tree built here and put in sys.modules) that records what the code does to it: compile calls, backend
flag and config assignments, allocator settings, devices asked for. On NVIDIA (`torch.version.hip =
None`) both versions must leave the same record; on ROCm (`"6.2"`) the fixed one must do what the fix
promises.

Regenerate fixtures/train_pkg_fixed after a reviewed change with
`ROCMLINT_UPDATE_FIXTURES=1 python -m pytest tests/test_python_fixes.py`, then read its diff against
fixtures/train_pkg: every change must be a fix the rules promise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rocmlint.config import Settings
from rocmlint.diagnostics import Applicability, Diagnostic, FixAvailability
from rocmlint.engine import Engine
from rocmlint.fix import FixOutcome, apply_fixes, fix_content
from rocmlint.registry import all_rules
from rocmlint.testing import run_example

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ALLOC_CONF = "PYTORCH_CUDA_ALLOC_CONF"


# --- running the linter's fixes ------------------------------------------------------------------------
# ROC102 is off by default; its fixes are the simplest guard to test.
SETTINGS = Settings(root=Path.cwd(), extend_select=("ROC102",))


def diagnostics(code: str, path: str = "module.py") -> list[Diagnostic]:
    return Engine().check_bytes(path, code.encode("utf-8"), SETTINGS).diagnostics


def fix(code: str, unsafe: bool = False, path: str = "module.py") -> FixOutcome:
    def check(data: bytes) -> tuple[list[Diagnostic], str]:
        return Engine().check_bytes(path, data, SETTINGS).diagnostics, "utf-8"

    return fix_content(code.encode("utf-8"), check, unsafe)


def fixed_text(code: str, unsafe: bool = False) -> str:
    return fix(code, unsafe).data.decode("utf-8")


# --- a stand-in torch that records what the code does ------------------------------------------------
Log = list[tuple[Any, ...]]


class Recorder(types.ModuleType):
    """A module whose attribute assignments are logged (`torch.backends.cudnn.allow_tf32 = True`)."""

    def __init__(self, name: str, log: Log, **children: Any) -> None:
        super().__init__(name)
        object.__setattr__(self, "_log", log)
        for key, value in children.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        self._log.append(("set", f"{self.__name__}.{key}", value))
        object.__setattr__(self, key, value)


class PlanCache(Recorder):
    def __getitem__(self, index: int) -> Recorder:
        return Recorder(f"{self.__name__}[{index}]", self._log)


@dataclass
class Gpu:
    """What the stand-in reports for the GPU of one vendor."""

    hip: str | None
    capability: tuple[int, int]
    arch_name: str
    arch_list: list[str]


NVIDIA = Gpu(None, (9, 0), "", ["sm_80", "sm_90"])
ROCM = Gpu("6.2", (9, 4), "gfx942:sramecc+:xnack-", ["gfx90a", "gfx942"])


def build_torch(gpu: Gpu, log: Log) -> dict[str, types.ModuleType]:
    """The torch module tree (every submodule a test imports), recording calls and assignments."""

    def record(name: str, result: Any = None) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            log.append(("call", name, args, kwargs))
            return args[0] if result == "first" else result

        return call

    torch = Recorder("torch", log)
    props = types.SimpleNamespace(major=gpu.capability[0], minor=gpu.capability[1], gcnArchName=gpu.arch_name)
    cuda = Recorder(
        "torch.cuda",
        log,
        is_available=lambda: True,
        get_device_capability=lambda device=None: gpu.capability,
        get_device_properties=lambda device=None: props,
        get_arch_list=lambda: list(gpu.arch_list),
        memory=Recorder(
            "torch.cuda.memory",
            log,
            _set_allocator_settings=record("_set_allocator_settings"),
        ),
    )
    matmul = Recorder("torch.backends.cuda.matmul", log)
    plan_cache = PlanCache("torch.backends.cuda.cufft_plan_cache", log)
    backends_cuda = Recorder("torch.backends.cuda", log, matmul=matmul, cufft_plan_cache=plan_cache)
    cudnn = Recorder("torch.backends.cudnn", log)
    backends = Recorder("torch.backends", log, cuda=backends_cuda, cudnn=cudnn)
    triton = Recorder("torch._inductor.config.triton", log)
    config = Recorder("torch._inductor.config", log, triton=triton)
    inductor = Recorder("torch._inductor", log, config=config)
    cpp_extension = Recorder(
        "torch.utils.cpp_extension",
        log,
        IS_HIP_EXTENSION=gpu.hip is not None,
        CUDAExtension=record("CUDAExtension"),
        load=record("load"),
    )
    utils = Recorder("torch.utils", log, cpp_extension=cpp_extension)
    version = types.SimpleNamespace(hip=gpu.hip, cuda=None if gpu.hip else "12.4")
    for key, value in {
        "version": version,
        "cuda": cuda,
        "backends": backends,
        "_inductor": inductor,
        "utils": utils,
        "compile": record("compile", "first"),
        "set_float32_matmul_precision": record("set_float32_matmul_precision"),
        "device": record("device", "first"),
        "empty": record("empty"),
        "bfloat16": "bfloat16",
        "float16": "float16",
    }.items():
        object.__setattr__(torch, key, value)
    return {
        "torch": torch,
        "torch.cuda": cuda,
        "torch.backends": backends,
        "torch.backends.cuda": backends_cuda,
        "torch.backends.cudnn": cudnn,
        "torch._inductor": inductor,
        "torch._inductor.config": config,
        "torch.utils": utils,
        "torch.utils.cpp_extension": cpp_extension,
    }


@dataclass
class Run:
    log: Log
    namespace: dict[str, Any]
    environ: dict[str, str | None] = field(default_factory=dict)


def run(
    code: str,
    gpu: Gpu,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, Any] | None = None,
) -> Run:
    """Execute `code` as a fresh module against the stand-in torch for `gpu`."""
    log: Log = []
    for name, module in build_torch(gpu, log).items():
        monkeypatch.setitem(sys.modules, name, module)
    for name, module in (extra or {}).items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delenv(ALLOC_CONF, raising=False)
    namespace: dict[str, Any] = {"__name__": "checked_module"}
    exec(compile(code, "checked_module.py", "exec"), namespace)
    return Run(log, namespace, {ALLOC_CONF: os.environ.get(ALLOC_CONF)})


# --- (1) NVIDIA unchanged, ROCm as promised ------------------------------------------------------------
@dataclass
class Case:
    rule: str
    code: str
    # Called after the module ran (e.g. calls its function); its result is compared on NVIDIA too.
    after: Callable[[dict[str, Any]], Any]
    rocm: Callable[[Run, Any], None]  # asserts the ROCm behaviour the fix promises
    extra: Callable[[Gpu], dict[str, Any]] = lambda gpu: {}


def _calls(run: Run, name: str) -> list[tuple[Any, ...]]:
    return [entry for entry in run.log if entry[0] == "call" and entry[1] == name]


def _sets(run: Run, attribute: str) -> list[tuple[Any, ...]]:
    return [entry for entry in run.log if entry[0] == "set" and entry[1].endswith(attribute)]


def _nothing(namespace: dict[str, Any]) -> None:
    return None


def _rocm_compile_default(result: Run, _: Any) -> None:
    modes = [call[3].get("mode") for call in _calls(result, "compile")]
    assert modes == ["default", "default"]


def _rocm_no_tf32(result: Run, _: Any) -> None:
    assert not _sets(result, "allow_tf32") and not _calls(result, "set_float32_matmul_precision")


def _rocm_alloc_conf(result: Run, _: Any) -> None:
    assert result.environ[ALLOC_CONF] == "expandable_segments:True"
    assert not _calls(result, "_set_allocator_settings")


def _rocm_pynvml_none(result: Run, _: Any) -> None:
    assert result.namespace["pynvml"] is None and result.namespace["nvmlInit"] is None


def _rocm_inductor(result: Run, _: Any) -> None:
    assert not _sets(result, "cudagraphs") and not _sets(result, "max_autotune")
    (call,) = _calls(result, "compile")
    assert call[3]["options"] == {"max_autotune": False, "epilogue_fusion": True}


def _rocm_cuda_device(result: Run, value: Any) -> None:
    assert [call[2][0] for call in _calls(result, "device")] == ["cuda:0"]
    assert [call[3]["device"] for call in _calls(result, "empty")] == ["cuda"]


def _rocm_capability(result: Run, value: Any) -> None:
    assert value == ("fallback", "fallback", "bf16-off")


def _rocm_arch_list(result: Run, value: Any) -> None:
    assert value == ("gated", False)


def _rocm_gcn_arch(result: Run, value: Any) -> None:
    assert value == (256, 128)


def _rocm_plan_cache(result: Run, _: Any) -> None:
    assert not _sets(result, "max_size")


def _rocm_hip_flags(result: Run, _: Any) -> None:
    (call,) = _calls(result, "CUDAExtension")
    assert call[3]["extra_compile_args"]["nvcc"] == ["-O3", "-DNDEBUG"]


def _fake_pynvml(gpu: Gpu) -> dict[str, Any]:
    if gpu.hip is not None:
        return {"pynvml": None}  # not installed on the ROCm machine: importing it raises ImportError
    return {"pynvml": types.SimpleNamespace(nvmlInit=lambda: None, __name__="pynvml")}


CASES = [
    Case(
        "ROC101",
        "import torch\n"
        'MODE = "reduce-overhead"\n'
        'model = "model"\n'
        "a = torch.compile(model, mode=MODE)\n"
        "b = torch.compile(model, mode='reduce-overhead', fullgraph=True)\n",
        _nothing,
        _rocm_compile_default,
    ),
    Case(
        "ROC102",
        "import torch\n"
        "\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True\n"
        "\n"
        "def setup():\n"
        "    if torch.cuda.is_available():\n"
        '        torch.set_float32_matmul_precision("high")\n'
        "\n"
        "setup()\n",
        _nothing,
        _rocm_no_tf32,
    ),
    Case(
        "ROC103",
        "import os\n"
        "import torch\n"
        "\n"
        "def configure():\n"
        '    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True,max_split_size_mb:512"\n'
        '    torch.cuda.memory._set_allocator_settings("max_split_size_mb:20")\n'
        "\n"
        "configure()\n",
        _nothing,
        _rocm_alloc_conf,
    ),
    Case(
        "ROC104",
        "import torch\nimport pynvml\nfrom pynvml import nvmlInit\n",
        lambda ns: (
            getattr(ns["pynvml"], "__name__", None),
            ns["nvmlInit"] and ns["nvmlInit"](),
        ),
        _rocm_pynvml_none,
        _fake_pynvml,
    ),
    Case(
        "ROC106",
        "import torch\n"
        "import torch._inductor.config as inductor_config\n"
        "\n"
        "inductor_config.triton.cudagraphs = True\n"
        "inductor_config.max_autotune = True\n"
        'model = torch.compile("model", options={"max_autotune": True, "epilogue_fusion": True})\n',
        _nothing,
        _rocm_inductor,
    ),
    Case(
        "ROC110",
        "import torch\n"
        "\n"
        "def place():\n"
        "    if torch.version.hip:\n"
        '        torch.device("hip:0")\n'
        '        return torch.empty(4, device="hip")\n'
        '    return torch.empty(4, device="cuda")\n'
        "\n"
        "place()\n",
        _nothing,
        _rocm_cuda_device,
    ),
    Case(
        "ROC113",
        "import torch\n"
        "\n"
        "def pick():\n"
        "    major, minor = torch.cuda.get_device_capability()\n"
        '    attention = "fa3" if major >= 9 else "fallback"\n'
        "    if major > 8 or (major == 8 and minor >= 9):\n"
        '        fp8 = "fp8"\n'
        "    else:\n"
        '        fp8 = "fallback"\n'
        '    bf16 = "bf16-on" if torch.cuda.get_device_properties(0).major >= 8 else "bf16-off"\n'
        "    return attention, fp8, bf16\n",
        lambda ns: ns["pick"](),
        _rocm_capability,
    ),
    Case(
        "ROC114",
        "import torch\n"
        "\n"
        "def check():\n"
        "    major, minor = torch.cuda.get_device_capability()\n"
        '    if f"sm_{major}{minor}" not in torch.cuda.get_arch_list():\n'
        '        device = "cpu"\n'
        "    else:\n"
        '        device = "gated"\n'
        '    has_sm = any(a.startswith("sm_") for a in torch.cuda.get_arch_list())\n'
        "    return device, has_sm\n",
        lambda ns: ns["check"](),
        _rocm_arch_list,
    ),
    Case(
        "ROC115",
        "import torch\n"
        '_BLOCK = {"gfx90a": 64, "gfx942": 128}\n'
        "\n"
        "def tune():\n"
        "    props = torch.cuda.get_device_properties(0)\n"
        '    size = 256 if props.gcnArchName == "gfx942" else 64\n'
        "    return size, _BLOCK.get(props.gcnArchName, 32)\n",
        lambda ns: ns["tune"](),
        _rocm_gcn_arch,
    ),
    Case(
        "ROC120",
        "import torch\n"
        "torch.backends.cuda.cufft_plan_cache.max_size = 32\n"
        'setattr(torch.backends.cuda.cufft_plan_cache[0], "max_size", 8)\n',
        _nothing,
        _rocm_plan_cache,
    ),
    Case(
        "ROC301",
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension(\n"
        '    "fused_ops",\n'
        '    ["fused_ops.cpp", "fused_ops_kernel.cu"],\n'
        '    extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "-gencode", "arch=compute_80,code=sm_80", '
        '"--use_fast_math", "-DNDEBUG"]},\n'
        ")\n",
        _nothing,
        _rocm_hip_flags,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_fix_keeps_nvidia_and_changes_rocm(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    assert any(d.code == case.rule and d.fix is not None for d in diagnostics(case.code))
    outcome = fix(case.code)
    fixed = outcome.data.decode("utf-8")
    assert outcome.applied[case.rule] > 0 and fixed != case.code
    assert not [d for d in outcome.remaining if d.code == case.rule], fixed

    nvidia = [run(code, NVIDIA, monkeypatch, case.extra(NVIDIA)) for code in (case.code, fixed)]
    results = [case.after(r.namespace) for r in nvidia]
    assert nvidia[0].log == nvidia[1].log
    assert nvidia[0].environ == nvidia[1].environ
    assert results[0] == results[1]

    rocm = run(fixed, ROCM, monkeypatch, case.extra(ROCM))
    case.rocm(rocm, case.after(rocm.namespace))


def test_pynvml_import_still_fails_unfixed_on_rocm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ROC104 case above is meaningful: without the fix the module does not import on ROCm."""
    with pytest.raises(ImportError):
        run("import torch\nimport pynvml\n", ROCM, monkeypatch, _fake_pynvml(ROCM))


# --- (2) fixing twice equals fixing once -----------------------------------------------------------------
def _fixable_examples() -> list[tuple[str, str]]:
    examples = []
    for rule in all_rules():
        if rule.language != "python":
            continue
        for example in rule.invalid:
            found = run_example(rule, example.code, example.path)
            if any(d.fix is not None for d in found):
                examples.append((rule.code, example.code))
    return examples


FIXABLE = _fixable_examples()


@pytest.mark.parametrize(("code", "source"), FIXABLE, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FIXABLE)])
def test_fix_is_idempotent(code: str, source: str) -> None:
    once = fix(source, unsafe=True)
    twice = fix(once.data.decode("utf-8"), unsafe=True)
    assert twice.data == once.data
    assert not twice.changed
    # Every fix made its diagnostic go away: the gating analysis sees the guard the fix wrote.
    assert not [d for d in once.remaining if d.fix is not None], once.data.decode("utf-8")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_case_fix_is_idempotent(case: Case) -> None:
    once = fixed_text(case.code)
    assert fixed_text(once) == once


def test_python_rules_with_fixes_have_fixed_examples() -> None:
    # Which rules fix is their declared availability, which tests/test_rule_examples.py checks against their fixes.
    for rule in all_rules():
        if rule.language == "python" and rule.fix_availability is not FixAvailability.NONE:
            assert sum(example.fixed is not None for example in rule.invalid) >= 2, rule.code


# --- (3) one shared guard ----------------------------------------------------------------------------------
THREE_FIXES = (
    "import torch\n"
    "\n"
    "torch.backends.cuda.matmul.allow_tf32 = True\n"
    "torch.backends.cuda.cufft_plan_cache.max_size = 32\n"
    'model = torch.compile("model", mode="reduce-overhead")\n'
)


def test_guard_defined_once_for_three_fixes() -> None:
    found = [d for d in diagnostics(THREE_FIXES) if d.fix is not None]
    assert {d.code for d in found} == {"ROC101", "ROC102", "ROC120"}
    fixed, applied = apply_fixes(THREE_FIXES.encode(), [d.fix for d in found if d.fix is not None])
    text = fixed.decode()
    assert applied == 3
    assert text.count("_IS_ROCM = ") == 1
    assert text.startswith('import torch\n_IS_ROCM = getattr(torch.version, "hip", None) is not None\n\n')
    assert text.count("if not _IS_ROCM:") == 2 and '"default" if _IS_ROCM else "reduce-overhead"' in text


@pytest.mark.parametrize(
    ("definition", "guard"),
    [
        ("IS_ROCM = torch.version.hip is not None\n", "IS_ROCM"),
        ('_on_amd = getattr(torch.version, "hip", None) is not None\n', "_on_amd"),
        (
            "from torch.utils.cpp_extension import IS_HIP_EXTENSION\n",
            "IS_HIP_EXTENSION",
        ),
        ("from vllm.platforms import on_mi3xx\nON_MI = on_mi3xx()\n", "ON_MI"),  # named by convention
    ],
)
def test_existing_guard_is_reused(definition: str, guard: str) -> None:
    text = fixed_text("import torch\n" + definition + THREE_FIXES.replace("import torch\n", ""))
    assert "_IS_ROCM" not in text
    assert text.count(f"if not {guard}:") == 2 and f'"default" if {guard} else "reduce-overhead"' in text


def test_guard_of_unknown_meaning_is_not_reused() -> None:
    """`IS_ROCM` imported from a module the linter cannot read gates by its name, but a fix must not
    bet NVIDIA's behaviour on a name: it defines its own."""
    text = fixed_text("import torch\nfrom somewhere import IS_ROCM\n" + THREE_FIXES.replace("import torch\n", ""))
    assert text.count("_IS_ROCM = ") == 1 and "if not _IS_ROCM:" in text


def test_guard_goes_after_docstring_future_and_imports_without_torch_import() -> None:
    code = '"""Doc."""\nfrom __future__ import annotations\n\nimport os\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:64"\n'
    assert fixed_text(code) == (
        '"""Doc."""\nfrom __future__ import annotations\n\nimport os\nimport torch\n'
        '_IS_ROCM = getattr(torch.version, "hip", None) is not None\n\n'
        'if not _IS_ROCM:\n    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:64"\n'
    )


def test_torch_alias_is_used_in_the_guard() -> None:
    text = fixed_text("import torch as T\nT.backends.cudnn.allow_tf32 = True\n")
    assert (
        text
        == 'import torch as T\n_IS_ROCM = getattr(T.version, "hip", None) is not None\nif not _IS_ROCM:\n    T.backends.cudnn.allow_tf32 = True\n'
    )


@pytest.mark.parametrize(
    "code",
    [
        # Runs before torch is imported: the guard cannot be defined in time.
        'import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"\nimport torch\n',
        # Shares its line with another statement.
        "import torch\nx = 1; torch.backends.cudnn.allow_tf32 = True\n",
        # A multi-line string inside the statement would change when re-indented.
        'import torch\ntorch.backends.cudnn.allow_tf32 = True if """\nlong\n""" else False\n',
        # `_IS_ROCM` already means something else here.
        "import torch\n_IS_ROCM = False\ntorch.backends.cudnn.allow_tf32 = True\n",
        # An assert gated on ROCm would always fail there.
        "import torch\nassert torch.cuda.get_device_capability() >= (8, 0)\n",
    ],
)
def test_no_fix_where_it_cannot_be_safe(code: str) -> None:
    found = [d for d in diagnostics(code) if d.code.startswith("ROC1")]
    assert found and all(d.fix is None for d in found)


def test_wrapping_keeps_indent_unit_and_newline() -> None:
    code = "import torch\r\n\r\ndef setup():\r\n\tif True:\r\n\t\ttorch.backends.cudnn.allow_tf32 = True  # fast\r\n"
    assert fixed_text(code) == (
        'import torch\r\n_IS_ROCM = getattr(torch.version, "hip", None) is not None\r\n\r\n'
        "def setup():\r\n\tif True:\r\n\t\tif not _IS_ROCM:\r\n\t\t\ttorch.backends.cudnn.allow_tf32 = True  # fast\r\n"
    )


def test_multi_line_statement_is_indented_as_a_whole() -> None:
    code = "import torch\nif x:\n    torch.backends.cuda.matmul.allow_tf32 = (\n        True\n    )\n"
    assert fixed_text(code).endswith(
        "if x:\n    if not _IS_ROCM:\n        torch.backends.cuda.matmul.allow_tf32 = (\n            True\n        )\n"
    )


def test_unsafe_fixes_only_on_request() -> None:
    code = "import torch\nw = x.to(torch.float8_e4m3fn)\n"
    assert fixed_text(code) == code
    assert "torch.float8_e4m3fnuz if _IS_FNUZ else torch.float8_e4m3fn" in fixed_text(code, unsafe=True)
    (found,) = [d for d in diagnostics(code) if d.code == "ROC107"]
    assert found.fix is not None and found.fix.applicability is Applicability.UNSAFE


def test_fp8_fix_selects_fnuz_only_on_gfx94(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "import torch\nDTYPE = torch.float8_e4m3fn\n"
    fixed = fixed_text(code, unsafe=True)
    extra = {"float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz"}

    def dtype(gpu: Gpu) -> str:
        modules = build_torch(gpu, [])
        for key, value in extra.items():
            object.__setattr__(modules["torch"], key, value)
        for name, module in modules.items():
            monkeypatch.setitem(sys.modules, name, module)
        namespace: dict[str, Any] = {}
        exec(fixed, namespace)
        return namespace["DTYPE"]

    assert dtype(NVIDIA) == "e4m3fn"
    assert dtype(ROCM) == "e4m3fnuz"
    assert dtype(Gpu("6.2", (12, 0), "gfx1201", ["gfx1201"])) == "e4m3fn"


# --- (4) end to end: `rocmlint check --fix` over train_pkg ---------------------------------------------
def _rocmlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", "check", *args],
        check=False,  # exit 1 means "diagnostics found"; callers look at the output
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


# Written by running the linter or Python, not part of the project.
_IGNORED = ("__pycache__", ".rocmlint_cache")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and path.name != "expected.txt"
        and not set(_IGNORED).intersection(path.relative_to(root).parts)
    }


def test_check_fix_over_train_pkg(tmp_path: Path) -> None:
    project = tmp_path / "train_pkg"
    shutil.copytree(FIXTURES / "train_pkg", project, ignore=shutil.ignore_patterns(*_IGNORED))
    fixed_run = _rocmlint("--fix", ".", cwd=project)
    assert fixed_run.returncode in (0, 1), fixed_run.stderr
    assert "Fixed" in fixed_run.stdout

    # What remains is checked in as the fixed project's own snapshot (tests/test_fixtures.py reads it).
    (project / "expected.txt").write_text(_rocmlint("--quiet", ".", cwd=project).stdout, encoding="utf-8")
    expected_root = FIXTURES / "train_pkg_fixed"
    if os.environ.get("ROCMLINT_UPDATE_FIXTURES"):
        shutil.rmtree(expected_root, ignore_errors=True)
        shutil.copytree(project, expected_root, ignore=shutil.ignore_patterns(*_IGNORED))
    assert _files(project) == _files(expected_root)
    assert (project / "expected.txt").read_text() == (expected_root / "expected.txt").read_text()

    # The fixed copy reports nothing a safe fix could still change, and fixing it again is a no-op.
    report = json.loads(_rocmlint("--output-format", "json", "--exit-zero", ".", cwd=project).stdout)
    assert not [d for d in report if d["fix"] is not None and d["fix"]["applicability"] == "safe"]
    before = _files(project)
    _rocmlint("--fix", ".", cwd=project)
    assert _files(project) == before
