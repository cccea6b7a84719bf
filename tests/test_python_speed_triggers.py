"""Sharper Python triggers change no result: every spelling a rule reports still reaches it with the
prefilter on, and lookalikes of its trigger words no longer run it (so their files are not parsed)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from conftest import codes_with_prefilter
from rocmlint.rules.roc108_rng_state_in_capture import RngStateInCapture

from rocmlint.config import Settings
from rocmlint.engine import _embedded_cuda_rules, prefilter_for
from rocmlint.rule import AnchoredPattern

SETTINGS = Settings(root=Path.cwd(), extend_select=("ROC102",))  # ROC102 is off by default

_BUILD = "from torch.utils.cpp_extension import load\n\n"
# Spellings of nvcc-only flags ROC301 reports: each must still reach the rule through the pattern.
NVCC_FLAG_FORMS = [
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-arch=sm_80"])\n',
    _BUILD + "load('op', ['op.cu'], extra_cuda_cflags=['-O3', '--use_fast_math'])\n",
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags="-O3 -lineinfo".split())\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags="-O3\\t-Xptxas=-v".split())\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-O3\\x20-lineinfo"])\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-O3\\u00a0-lineinfo"])\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=[f"-gencode=arch=compute_{ARCH},code=sm_{ARCH}"])\n',
    _BUILD + 'NVCC_FLAGS = ["-O3",\n              "--expt-relaxed-constexpr"]\n',
    _BUILD + 'load("op", ["op.cu"], extra_cuda_cflags=["-U__CUDA_NO_HALF_OPERATORS__"])\n',
]
# Files holding a flag's spelling only inside other words: ROC301 is not even run on them.
NOT_FLAGS = [
    'parser.add_argument("--trust-remote-code", action="store_true")\n',
    "# see https://example.org/bmvc/2016/papers/paper119/-archive/index.html\n",
    "x = f()  # type: ignore  # mypy: disable-error-code=attr-defined\n",
    'opts = ["---lineinfo", "x_-arch=sm_80"]\n',  # three dashes, after `_`
]
DEVICE_STRING_FORMS = [
    'import torch\nx = torch.zeros(2, device="hip")\n',
    "import torch\nx = torch.zeros(2, device='rocm:0')\n",
    'import torch\ndef f(rank):\n    return torch.device(f"hip:{rank}")\n',
    'import torch\ndef f(rank):\n    return torch.zeros(1, device="hip:" + str(rank))\n',
    "import torch\ndef f(t):\n    return t.device.type == '''hip'''\n",
]


def _codes(source: str, prefilter: bool) -> list[str]:
    return codes_with_prefilter("setup.py", source, SETTINGS, prefilter)


@pytest.mark.parametrize("source", NVCC_FLAG_FORMS)
def test_every_flag_spelling_reaches_roc301(source: str) -> None:
    assert "ROC301" in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


@pytest.mark.parametrize("source", NOT_FLAGS)
def test_flag_spellings_inside_words_do_not_run_roc301(source: str) -> None:
    rules = prefilter_for("python", SETTINGS.enabled_codes).rules_for(source.encode())
    assert "ROC301" not in {rule.code for rule in rules}


def test_roc301_runs_where_a_flag_and_a_lookalike_share_a_file() -> None:
    source = NOT_FLAGS[0] + NVCC_FLAG_FORMS[0]
    assert "ROC301" in _codes(source, prefilter=True)


@pytest.mark.parametrize("source", DEVICE_STRING_FORMS)
def test_every_device_string_form_reaches_roc110(source: str) -> None:
    assert "ROC110" in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


def test_hip_names_in_strings_do_not_run_roc110() -> None:
    source = b'MAP = {"cudaMalloc": ("hipMalloc", "API_RUNTIME")}\nBACKEND = "rocm_smi"\n'
    rules = prefilter_for("python", SETTINGS.enabled_codes).rules_for(source)
    assert "ROC110" not in {rule.code for rule in rules}


# (code, source): odd but legal spellings each rule still reports with the prefilter on.
REACHES = [
    ("ROC102", "import torch\n(torch.backends.cudnn.  # Ampere and newer\n    allow_tf32) = True\n"),
    ("ROC102", "import torch\ntorch.backends.cuda.matmul . allow_tf32 \\\n    = True\n"),
    ("ROC102", 'import torch\ntorch.backends.cuda.matmul.fp32_precision\f= "tf32"\n'),
    ("ROC102", "import torch\ntorch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True\n"),
    ("ROC102", 'import torch\n(torch.set_float32_matmul_precision)(\n    "high")\n'),
    ("ROC102", 'import torch\ntorch.set_float32_matmul_precision (precision="high")\n'),
    ("ROC104", "import os, pynvml\n"),
    ("ROC104", "import torch as t, nvidia_smi\n"),
    ("ROC104", "from \\\n    pynvml import nvmlInit\n"),
    ("ROC104", "class Probe:\n    import pynvml\n"),
    (
        "ROC108",
        "import torch\nfrom torch.cuda import (\n    get_rng_state as cuda_rng_state,\n    graph as capture,\n)\n\n"
        "def warm_up(model, x):\n    return model(x)\n\ndef step(g, model, x):\n    with capture(g):\n"
        "        saved = cuda_rng_state()\n    return saved\n",
    ),
    (
        "ROC108",
        "import torch\ncap = (torch.cuda.  # the context\n    graph)\n\ndef f(g):\n    with cap(g):\n"
        "        return torch.cuda.get_rng_state()\n",
    ),
    (
        "ROC108",
        "import torch\nfrom torch.cuda import\tgraph as cap\nwith cap(g):\n    torch.cuda.random.set_rng_state_all(s)\n",
    ),
    ("ROC108", "import torch\ncap = (torch.cuda.\x0cgraph)\nwith cap(g):\n    torch.cuda.get_rng_state()\n"),
    ("ROC108", "import torch\ng.capture_begin()\ns = torch.cuda.get_rng_state()\ng.capture_end()\n"),
    ("ROC109", "import os, flash_attn\n"),
    ("ROC109", "import torch as t, flash_attn_interface\n"),
    ("ROC109", "from \\\n    flash_attn.bert_padding import pad_input\n"),
    ("ROC109", "import os, \\\n    flash_attn_3.flash_attn_interface as fa3\n"),
    ("ROC109", "import\tflash_attn . bert_padding\n"),
    ("ROC109", "from flash_attn import (\n    flash_attn_varlen_func,\n    flash_attn_with_kvcache,\n)\n"),
    ("ROC109", "def f(q):\n    if q: import flash_attn\n    return q\n"),
    (
        "ROC113",
        "import torch\ndef ampere(d):\n    return (torch.cuda.get_device_properties (d)\n            .major) >= 8\n",
    ),
    (
        "ROC113",
        "import torch\ndef hopper(d):\n    return torch.cuda.get_device_properties(d) \\\n        .major >= 9\n",
    ),
    (
        "ROC113",
        "import torch\nprops = torch.cuda.get_device_properties(0)\ndef fp8():\n"
        "    return props.minor >= 9 and props.major == 8\n",
    ),
    (
        "ROC113",
        "from torch.cuda import get_device_capability as capability\ndef use_fa3():\n    return capability()[0] >= 9\n",
    ),
    (
        "ROC113",
        "import torch\nread_capability = torch.cuda.get_device_capability\ndef use_fa3():\n"
        "    return read_capability() >= (9, 0)\n",
    ),
    (
        "ROC113",
        "from vllm.platforms import current_platform\ndef fp8():\n"
        "    return current_platform.get_device_capability().to_int() >= 89\n",
    ),
    ("ROC113", 'import torch\nLABEL = f"hopper={torch.cuda.get_device_capability()[0] >= 9}"\n'),
    (
        "ROC113",
        "from vllm.platforms import current_platform\nif current_platform.is_device_capability_family (100):\n"
        "    kernel = 'trtllm'\n",
    ),
    (
        "ROC119",
        "import torch.distributed as dist\n\ngroups = dist.\\\n"
        '    new_subgroups_by_enumeration([[0, 1], [2, 3]], None, "ucc")\n',
    ),
    (
        "ROC119",
        'import torch.distributed as dist\n\nBACKEND = "mpi"\n\ndef init():\n    (dist  # c\n'
        "        .init_process_group)(backend=BACKEND)\n",
    ),
]
# (code, source): files holding a rule's old trigger word only in forms it never reports or reads.
DOES_NOT_RUN = [
    ("ROC102", "import torch\nwith torch.backends.cudnn.flags(enabled=True, allow_tf32=False):\n    pass\n"),
    (
        "ROC102",
        "def _convolution(g, input, weight, allow_tf32=None,\n                 benchmark=None):\n"
        "    return tl.dot(a, b, allow_tf32=ALLOW_TF32)\n",
    ),
    (
        "ROC102",
        "import torch\nkey = (torch.backends.cuda.matmul.allow_tf32, torch._C._get_cublas_allow_tf32())\n"
        "if torch.backends.cudnn.allow_tf32 == True:\n    pass\n",
    ),
    (
        "ROC102",
        'import torch\nIGNORED = {torch.set_float32_matmul_precision: lambda p: -1}\nOPTIONS = {"allow_tf32": True}\n'
        '__all__ = ["set_float32_matmul_precision"]\n',
    ),
    ("ROC104", "from vllm.third_party import nvml_utils\npynvml = nvml_utils.pynvml\n"),
    ("ROC104", "from vllm.utils import import_pynvml\n"),
    (
        "ROC108",
        "import torch\ndef record(model, x):\n    state = torch.cuda.get_rng_state()\n"
        "    g = torch.cuda.CUDAGraph()\n    model = torch.cuda.make_graphed_callables(model, (x,))\n"
        "    torch.cuda.set_rng_state(state)\n",
    ),
    ("ROC108", "import torch\nfrom torch._inductor import cudagraph_trees\nstate = torch.cuda.get_rng_state()\n"),
    (
        "ROC108",
        "import torch\nfrom torch._prims.rng_prims import run_and_save_rng_state\nwith torch.cuda.graph(g):\n"
        "    out = run_and_save_rng_state(op, x)\n",
    ),
    (
        "ROC109",
        "from vllm.vllm_flash_attn import flash_attn_varlen_func\nuse_flash_attn = True\n"
        "out = flash_attn_varlen_func(q, k, v)\nimport vllm.flash_attn\n",
    ),
    ("ROC109", "from vllm.attention.backends.flash_attn import FlashAttentionBackend\n"),
    (
        "ROC113",
        "import torch\nmem = torch.cuda.get_device_properties(0).total_memory\n"
        "sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count\n",
    ),
    ("ROC113", "import torch\narch = torch.cuda.get_device_properties(torch.device(0).index).gcnArchName\n"),
    (
        "ROC113",
        "from vllm.platforms import current_platform\n"
        "version = current_platform.get_device_capability().as_version_str()\n",
    ),
    (
        "ROC113",
        'from unittest import mock\n@mock.patch("vllm.platforms.current_platform.has_device_capability", '
        "return_value=True)\ndef test_x(m):\n    pass\n",
    ),
    (
        "ROC113",
        'def init(self):\n    """Initialize attributes from torch.cuda.get_device_properties"""\n    self.num_sms = 132\n',
    ),
    (
        "ROC113",
        "platform.get_device_capability.return_value = (9, 0)\nplatform.has_device_capability.side_effect = None\n",
    ),
    ("ROC113", '__all__ = ["get_device_capability", "get_device_properties"]\n'),
    (
        "ROC119",
        "import torch\nfrom vllm.distributed import init_distributed_environment\n"
        'init_distributed_environment(backend="nccl")\nm = torch.compile(model)\n',
    ),
    (
        "ROC119",
        "from torch.distributed.distributed_c10d import _new_group_with_tag\npg = _new_group_with_tag([0, 1])  # mpi\n",
    ),
]


_INDUCTOR = (
    "import os\nimport torch\nimport torch._inductor.config as inductor_config\nfrom torch._inductor import config\n\n"
)
# Spellings of risky Inductor settings ROC106 reports.
INDUCTOR_SETTING_FORMS = [
    _INDUCTOR + "inductor_config.triton.cudagraphs = True\n",
    _INDUCTOR + "inductor_config.max_autotune=1\n",
    _INDUCTOR + "inductor_config.max_autotune \\\n    = True\n",
    _INDUCTOR + "(inductor_config.memory_planning) = True\n",
    _INDUCTOR + "inductor_config.max_autotune = inductor_config.triton.cudagraph_trees = True\n",
    _INDUCTOR + "with config.patch(max_autotune=True):\n    pass\n",
    _INDUCTOR + "with config.patch(\n    memory_planning  # static planning\n    = True,\n):\n    pass\n",
    _INDUCTOR + 'with config.patch({"max_autotune": True}):\n    pass\n',
    _INDUCTOR + "with config.patch('triton.cudagraphs', True):\n    pass\n",
    _INDUCTOR + 'model = torch.compile(model, options={"triton.cudagraphs": True})\n',
    _INDUCTOR + 'model = torch.compile(model, options={"triton." "cudagraphs": True})\n',
    _INDUCTOR + 'model = torch.compile(model, options={\n    "triton."  # graphs\n    r"cudagraphs": True,\n})\n',
    _INDUCTOR + 'model = torch.compile(model, options={"triton\\x2ecudagraphs": True})\n',
    _INDUCTOR + 'model = torch.compile(model, options={"triton\\N{FULL STOP}cudagraph_trees": True})\n',
    _INDUCTOR + 'with config.patch({"max_autotune\\\n": True}):\n    pass\n',
    _INDUCTOR + 'with config.patch({"\\\nmax_autotune": True}):\n    pass\n',
    _INDUCTOR + 'KEY = "max_autotune"\n\n\ndef tuned(fn):\n    with config.patch(KEY, True):\n        return fn()\n',
    _INDUCTOR + "OPTIONS = dict(max_autotune=True)\n\n\ndef build(m):\n    return torch.compile(m, options=OPTIONS)\n",
    _INDUCTOR + 'os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"\n',
    _INDUCTOR + "os.environ.update(TORCHINDUCTOR_CUDAGRAPHS='1')\n",
    _INDUCTOR + 'os.environ.setdefault("TORCHINDUCTOR_CUDAGRAPHS", "1")\n',
]
# Mentions of the setting names (reads, prose, backend and mode names, longer names, comments).
NOT_INDUCTOR_SETTINGS = [
    'import torch\nmodel = torch.compile(model, backend="cudagraphs")\n',
    'import torch\nmodel = torch.compile(model, mode="max-autotune-no-cudagraphs")\n',
    'BENCHMARKS = {"inductor_no_cudagraphs": "--training --inductor --disable-cudagraphs"}\n',
    'import torch._inductor.config as inductor_config\ninductor_config.max_autotune_gemm_backends = "TRITON"\n',
    "use_cudagraphs = True\ncudagraphs_reason = None\n",
    "import torch._inductor.config as c\nif c.max_autotune or c.triton.cudagraphs:\n    print(c.max_autotune == True)\n",
    "def test_max_autotune(self):\n    pass  # needs max_autotune on a big GPU\n",
    '"""Set TORCHINDUCTOR_MAX_AUTOTUNE in the environment for the best kernels."""\n',
]
REACHES += [("ROC106", source) for source in INDUCTOR_SETTING_FORMS]
# ROC114 needs an NVIDIA target's prefix or an arch-list variable spelled in the file (any case).
_CAPABILITY = "import os\nimport torch\nmajor, minor = torch.cuda.get_device_capability()\n"
REACHES += [
    ("ROC114", 'import torch\nif "sm_90" not in torch.cuda.get_arch_list():\n    device = "cpu"\n'),
    ("ROC114", _CAPABILITY + 'if f"compute_{major}{minor}" in torch.cuda.get_arch_list():\n    pass\n'),
    ("ROC114", _CAPABILITY + 'os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"\n'),
    ("ROC114", _CAPABILITY + 'os.environ.setdefault("CUDAARCHS", f"{major}{minor}")\n'),
    ("ROC114", _CAPABILITY + 'flags = [f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"]\n'),
]
DOES_NOT_RUN += [
    ("ROC114", _CAPABILITY + "use_bf16 = (major, minor) >= (8, 0)\nprint(torch.cuda.get_arch_list())\n"),
]
# ROC108's capture `graph` is a whole token after `.`, `import`, `,` or `(`, or first on its line.
_RNG = "    state = torch.cuda.get_rng_state()\n"
REACHES += [
    ("ROC108", f"import torch\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n{_RNG}"),
    ("ROC108", f"import torch\ng = torch.cuda.CUDAGraph()\nwith torch.cuda . graph(g):\n{_RNG}"),
    ("ROC108", f"import torch\ncapture = (torch.cuda.\n    graph)\nwith capture(g):\n{_RNG}"),
    ("ROC108", f"import torch\ncapture = (torch.cuda.  # the context\n    graph)\nwith capture(g):\n{_RNG}"),
    ("ROC108", f"import torch\nfrom torch.cuda import (  # capture\n    graph,\n)\nwith graph(g):\n{_RNG}"),
    ("ROC108", f"import torch\nfrom torch.cuda import CUDAGraph, \\\n    graph as cap\nwith cap(g):\n{_RNG}"),
    ("ROC108", f"import torch\nimport torch.cuda.graphs as G\nwith G.graph(g):\n{_RNG}"),
    ("ROC108", f"import torch\ng.capture_begin()\n{_RNG.strip()}\ng.capture_end()\n"),
]
DOES_NOT_RUN += [
    (
        "ROC108",
        "import torch\n# verify the cached graph keys\nstate = torch.cuda.get_rng_state()\n"
        "nodes = gm.graph.nodes\nfor n in gm.graph .nodes:\n    pass\nx = sub_graph(2)\n",
    ),
]
# ROC124 runs wherever a `num_warps` is more than a keyword set to a literal of at most 16, or a `Config` is called.
_SMALL_LAUNCH = "import triton\n\n\ndef launch(k, x):\n    k[(1,)](x, num_warps=4)\n    k[(1,)](x, num_warps = 16 )\n"
REACHES += [
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=32)\n"),
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=160)\n"),
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=0x20)\n"),
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=1 << 5)\n"),
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=16 if x else 32)\n"),
    ("ROC124", _SMALL_LAUNCH + "    k[(1,)](x, num_warps=8  # 32 on big blocks\n    * 4)\n"),
    ("ROC124", _SMALL_LAUNCH + "    w = 32\n    k[(1,)](x, num_warps=w)\n"),
    ("ROC124", _SMALL_LAUNCH + "    cfg = triton.Config({'BLOCK': 64}, 32)\n"),
    ("ROC124", _SMALL_LAUNCH + "\n\ndef settings(n):\n    num_warps = 32\n    return n, num_warps\n"),
]
DOES_NOT_RUN += [("ROC124", _SMALL_LAUNCH), ("ROC124", "import triton\nkernel[grid](x, num_warps=2, num_stages=1)\n")]
# A CUDA library's file name spells one of ROC135's stems, in any case; a `.so` of another library alone does not run it.
REACHES += [
    ("ROC135", 'import ctypes\nlib = ctypes.CDLL("LIBCUDART.so.12")\n'),
    ("ROC135", 'import ctypes\nlib = ctypes.cdll.LoadLibrary("libcublasLt.so.12")\n'),
    (
        "ROC135",
        'import glob\nPATTERNS = ("NvRtc64*.dll", "libnvrtc*.so*")\n\n\ndef find(d):\n'
        "    for p in PATTERNS:\n        yield from glob.glob(p)\n",
    ),
]
DOES_NOT_RUN += [
    ("ROC135", 'import ctypes\nlib = ctypes.CDLL("libfoo.so.1")\n'),
    ("ROC135", 'import glob\nlibs = glob.glob("/usr/lib/*.dylib") + glob.glob("build/_C*.so")\n'),
]
# A CUDA version tag is followed by what builds it (a field, a quote, `%`, `{}`); a written-out pin is not one.
_TORCH = "import torch\ncuda = torch.version.cuda\n"
REACHES += [
    ("ROC136", _TORCH + 'version = f"1.0+cu{cuda}"\n'),
    ("ROC136", _TORCH + 'version = "1.0" + "+cu" + cuda\n'),
    ("ROC136", _TORCH + "version = '1.0+cu%s' % cuda\n"),
    ("ROC136", _TORCH + 'version = "1.0+cu{}".format(cuda)\n'),
]
DOES_NOT_RUN += [
    ("ROC136", _TORCH + 'pin = "torch==2.1.0+cu118"\n'),
    ("ROC136", 'import tensorflow as tf\nversion = f"1.0+cu{tf.__version__}"\n'),
]
DOES_NOT_RUN += [("ROC106", source) for source in NOT_INDUCTOR_SETTINGS]


@pytest.mark.parametrize(("code", "source"), REACHES)
def test_every_spelling_still_reaches_its_rule(code: str, source: str) -> None:
    assert code in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


@pytest.mark.parametrize(("code", "source"), DOES_NOT_RUN)
def test_lookalikes_of_a_trigger_do_not_run_the_rule(code: str, source: str) -> None:
    rules = prefilter_for("python", SETTINGS.enabled_codes).rules_for(source.encode())
    assert code not in {rule.code for rule in rules}


def test_roc106_runs_where_a_setting_and_a_mention_share_a_file() -> None:
    source = NOT_INDUCTOR_SETTINGS[5] + "\n\n" + INDUCTOR_SETTING_FORMS[6]
    assert "ROC106" in _codes(source, prefilter=True)


# CUDA held in a JIT call's strings (rocmlint/python/embedded.py): every way a call resolves to an entry point
# writes the entry point's own name as a word, so each of these still reaches the C++ rules (ROC224 stands in).
_KERNEL = '"__global__ void f() { __nanosleep(1); }"'
JIT_SOURCE_FORMS = [
    f"from torch.utils.cpp_extension import load_inline as build\nm = build('m', '', {_KERNEL})\n",
    f"import torch.utils.cpp_extension as ext\nm = ext.\\\n    load_inline('m', '', {_KERNEL})\n",
    f"import cupy\nmake = cupy.RawKernel\nk = make({_KERNEL}, 'f')\n",
    f"from cupy import RawModule as M\nk = M(code={_KERNEL})\n",
    f"import torch\nf = torch.cuda.jiterator._create_jit_fn({_KERNEL})\n",
    f"from torch.cuda.jiterator import _create_multi_output_jit_fn as j\nf = j({_KERNEL}, num_outputs=2)\n",
    f"torch.utils.cpp_extension.load_inline('m', '', {_KERNEL})\n",  # unbound: taken as written
]
# Entry-point names inside other words, or only a module's name: no file of these is parsed for CUDA sources.
NOT_JIT_SOURCES = [
    f"@scoped_load_inline\ndef test_op(self, load_inlines):\n    load_inlines('m', '', {_KERNEL})\n",
    f'OPS = {{"jiterator_binary", "jiterator_unary"}}\nif "jiterator" in name:\n    print({_KERNEL})\n',
    f"import torch.cuda.jiterator\nx = MyRawKernels({_KERNEL})\n",
]


@pytest.mark.parametrize("source", JIT_SOURCE_FORMS)
def test_every_jit_call_spelling_reaches_the_cuda_rules(source: str) -> None:
    assert _codes(source, prefilter=False) == ["ROC224"]
    assert _codes(source, prefilter=True) == ["ROC224"]


@pytest.mark.parametrize("source", NOT_JIT_SOURCES)
def test_lookalikes_of_an_entry_point_are_not_scanned_for_cuda_sources(source: str) -> None:
    data = source.encode()
    assert not _embedded_cuda_rules(
        data, SETTINGS.enabled_codes, prefilter_for("python", SETTINGS.enabled_codes).triggers_in(data)
    )
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False) == []


def test_anchored_capture_search_answers_as_the_whole_pattern() -> None:
    """ROC108's trigger pattern searched from its anchors (`AnchoredPattern`) finds a match in exactly the texts
    the regex engine's own search does: random texts of the tokens around `graph`, and the spellings above."""
    anchored = RngStateInCapture.trigger_pattern
    assert isinstance(anchored, AnchoredPattern)
    whole = re.compile(anchored.pattern.encode("ascii"))
    pieces = [b"graph", b"import", b" ", b"\t", b"\n", b"\r", b"\\", b".", b",", b"(", b"x", b"_", b"capture_begin"]
    pieces += [b"\x0c", b"\x0b", b"g", b"#"]
    generator = random.Random(17)
    texts = [b"".join(generator.choice(pieces) for _ in range(generator.randint(0, 12))) for _ in range(40_000)]
    texts += [text.encode() for code, text in (*REACHES, *DOES_NOT_RUN) if code == "ROC108"]
    found = [text for text in texts if anchored.search(text)]
    assert found == [text for text in texts if whole.search(text)]
    assert len(found) > 1_000  # the texts hold matches of every kind, not only misses
