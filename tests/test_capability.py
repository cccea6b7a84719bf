"""The compute capability as Python reads it (rocmlint/python/capability.py), and the trigger pattern helper
`lexical.value_word_pattern`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from snippets import parse
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python import capability
from rocmlint.python.frontend import RuleOptions
from rocmlint.python.lexical import value_word_pattern


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("x = torch.cuda.get_device_capability()[0]\n", 1, id="indexed"),
        pytest.param("props = torch.cuda.get_device_properties(0)\nx = props.major\n", 1, id="property"),
        pytest.param("major, minor = torch.cuda.get_device_capability()\nx = major * 10 + minor\n", 2, id="combined"),
        pytest.param(
            "from vllm.platforms import current_platform\nx = current_platform.get_device_capability().to_int()\n",
            1,
            id="vllm-to-int",
        ),
        pytest.param("x = int(torch.cuda.get_device_capability()[1])\n", 1, id="cast"),
        pytest.param("major, minor = torch.cuda.get_device_capability()\nx = f'sm{major}{minor}'\n", 2, id="f-string"),
        pytest.param("cc = torch.cuda.get_device_capability()\nx = 'sm_%d%d' % cc\n", 1, id="percent-format"),
        pytest.param("cc = torch.cuda.get_device_capability()\nx = '{}.{}'.format(cc[0], cc[1])\n", 2, id="format"),
        pytest.param("x = str(torch.cuda.get_device_properties(0).major)\n", 1, id="str"),
        pytest.param(
            "def cap():\n    p = torch.cuda.get_device_properties(0)\n    return p.major, p.minor\nmajor, minor = cap()\n"
            "x = major\n",
            1,
            id="helper-returning-the-pair",
        ),
        pytest.param(
            "class A:\n    def __init__(self):\n        self.cap = None\n    def load(self):\n"
            "        self.cap = torch.cuda.get_device_capability()\n    def run(self):\n        x = self.cap\n",
            1,
            id="self-attribute-across-methods",
        ),
        pytest.param(
            "class A:\n    def __init__(self, cap):\n        self.cap = cap\n    def run(self):\n        x = self.cap\n",
            0,
            id="self-attribute-of-unknown-origin",
        ),
        pytest.param(
            "import dataclasses\n@dataclasses.dataclass\nclass Specs:\n    name: str\n    capability: tuple\n"
            "    def run(self):\n        x = self.capability\n"
            "specs = Specs('gpu', capability=torch.cuda.get_device_capability())\n",
            1,
            id="dataclass-field-given-by-its-constructor",
        ),
        pytest.param(
            "import dataclasses\n@dataclasses.dataclass\nclass Specs:\n    name: str\n    capability: tuple\n"
            "    def run(self):\n        x = self.capability\n"
            "specs = Specs('gpu', torch.cuda.get_device_capability())\nother = Specs('cpu', (0, 0))\n",
            1,
            id="dataclass-field-given-by-position-or-a-constant",
        ),
        pytest.param(
            "import dataclasses\n@dataclasses.dataclass\nclass Specs:\n    capability: tuple\n"
            "    def run(self):\n        x = self.capability\n"
            "specs = Specs(torch.cuda.get_device_capability())\nother = Specs(read())\n",
            0,
            id="dataclass-field-also-given-an-unknown-value",
        ),
        pytest.param(
            "class Specs:\n    capability: tuple\n    def run(self):\n        x = self.capability\n"
            "specs = Specs(torch.cuda.get_device_capability())\n",
            0,
            id="annotated-attribute-of-a-plain-class",
        ),
        pytest.param(
            "class Runner:\n    def __init__(self):\n        self.major = torch.cuda.get_device_capability()[0]\n"
            "    def run(self):\n        x = self.major\n",
            1,
            id="major-kept-on-self-under-the-properties-field-name",
        ),
        pytest.param(
            "class Runner:\n    def __init__(self, props):\n        self.props = props\n"
            "    def run(self):\n        x = self.major\n",
            0,
            id="own-attribute-named-major-never-assigned-a-read",
        ),
        pytest.param(
            "def caps():\n    return sorted(torch.cuda.get_device_capability(i) for i in range(2))\nx = caps()[-1]\n",
            1,
            id="highest-of-every-gpu-sorted",
        ),
        pytest.param(
            "x = min([torch.cuda.get_device_properties(i).major for i in range(2)])\n", 1, id="lowest-major-of-a-list"
        ),
        pytest.param("x = max(torch.cuda.get_device_properties(0).total_memory, 0)\n", 0, id="max-of-two-other-values"),
        pytest.param("x = torch.cuda.get_device_properties(0).total_memory\n", 0, id="other-property"),
        pytest.param("x = read_capability()\n", 0, id="unknown-call"),
    ],
)
def test_capability_reads(code: str, expected: int) -> None:
    snippet = parse("import torch\n" + code)
    reads = capability.capability_reads(snippet.ctx, snippet.value("x"))
    assert len(reads) == expected
    assert all(isinstance(read, ast.Call) for read in reads)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("x = 8\n", 8, id="major"),
        pytest.param("x = (8, 9)\n", 8, id="tuple"),
        pytest.param("x = 8.9\n", 8.9, id="float"),
        pytest.param("x = 89\n", 8, id="sm-number"),
        pytest.param("T = (9, 0)\nx = T\n", 9, id="name-assigned-once"),
        pytest.param("x = limit\n", None, id="unknown"),
        pytest.param("x = 'sm90'\n", 9, id="sm-text"),
        pytest.param("x = 'sm_100a'\n", 10, id="sm-text-with-suffix"),
        pytest.param("x = '8.9'\n", 8.9, id="version-text"),
        pytest.param("x = 'hopper'\n", None, id="text-without-version"),
    ],
)
def test_threshold_major(code: str, expected: float | None) -> None:
    snippet = parse(code)
    assert capability.threshold_major(snippet.ctx, snippet.value("x")) == expected


_CAP = "import torch\ncap = torch.cuda.get_device_capability()\nmajor, minor = cap\n"


@pytest.mark.parametrize(
    ("code", "reported"),
    [
        pytest.param(
            "def _fast(x):\n    return cap == (8, 9)\nif _fast(x):\n    y = 1\n", False, id="branch-predicate"
        ),
        pytest.param("def _fast(x):\n    return cap == (8, 9)\ny = 1 if not _fast(x) else 2\n", False, id="negated"),
        pytest.param("def fast(x):\n    return cap == (8, 9)\nif fast(x):\n    y = 1\n", True, id="public-def"),
        pytest.param("def _fast(x):\n    return cap == (8, 9)\nok = _fast(x)\n", True, id="kept-as-a-flag"),
        pytest.param("def _fast(x):\n    return cap == (9, 0)\nif _fast(x):\n    y = 1\n", True, id="amd-reports-it"),
        pytest.param("def _fast(x):\n    return cap == (8, 9)\n", True, id="never-called"),
    ],
)
def test_arch_test_of_a_branch_predicate(code: str, reported: bool) -> None:
    """A private def returning an equality with an arch no AMD GPU reports, only called as an `if` test, picks a
    branch as the `if` does: AMD takes the other GPUs' branch."""
    snippet = parse(_CAP + code)
    compare = next(node for node in ast.walk(snippet.module) if isinstance(node, ast.Compare))
    assert (capability.arch_test(snippet.ctx, compare) is not None) is reported


@pytest.mark.parametrize(
    ("code", "lookup"),
    [
        pytest.param("x = cap >= (9, 0)\n", False, id="ordering"),
        pytest.param("x = f'sm{major}{minor}' == 'sm90'\n", False, id="text-equality"),
        pytest.param("x = major in (9, 10)\n", False, id="membership"),
        pytest.param("x = cap < min_capability\n", False, id="ordering-with-a-threshold-from-elsewhere"),
        pytest.param("T = {'sm80': 1, 'sm90': 2}\nx = T[f'sm{major}{minor}']\n", True, id="lookup"),
        pytest.param("T = {(8, 0): 1, (9, 0): 2}\nx = T.get(cap, 0)\n", True, id="get"),
        pytest.param("x = cap == expected\n", False, id="equal-to-a-value-from-elsewhere"),
        pytest.param("last = None\nlast = cap\nx = cap != last\n", None, id="cached-capability"),
        pytest.param("x = cap == torch.cuda.get_device_capability(1)\n", None, id="two-capabilities"),
        pytest.param("x = json.load(f).get('capability') != cap\n", None, id="read-back-from-a-record"),
        pytest.param("x = record['capability'] == cap\n", None, id="read-back-by-subscript"),
        pytest.param("A = {'hopper': (9, 0)}\nx = cap == A['hopper']\n", False, id="written-out-table"),
        pytest.param("x = cap >= record['capability']\n", False, id="ordering-with-a-record"),
        pytest.param("x = cap >= (7, 5)\n", None, id="threshold-below-major-8"),
        pytest.param("x = f'sm_{major}{minor}' == 'sm_75'\n", False, id="equality-below-major-8"),
        pytest.param("x = major in (6, 7)\n", None, id="membership-of-a-major-below-8"),
        pytest.param("x = cap in ((7, 0), (7, 5))\n", False, id="membership-below-major-8"),
        pytest.param("x = cap[0] < 7 or (cap[0] == 7 and cap[1] < 5)\n", None, id="threshold-spelled-out"),
        pytest.param("x = major * 10 + minor == 75\n", False, id="equality-with-major-and-minor"),
        pytest.param("x = 1 if major * 10 + minor == 80 else 2\n", None, id="picks-by-an-arch-no-amd-gpu-reports"),
        pytest.param("x = 1 if cap in {(8, 0), (8, 6)} else 2\n", None, id="picks-by-archs-no-amd-gpu-reports"),
        pytest.param("x = 1 if f'sm{major}{minor}' == 'sm89' else 2\n", None, id="picks-by-text-of-such-an-arch"),
        pytest.param("x = major * 10 + minor == 80\n", False, id="flag-of-an-arch-no-amd-gpu-reports"),
        pytest.param("x = 1 if major * 10 + minor in {80, 90} else 2\n", False, id="picks-by-archs-one-amd-reports"),
        pytest.param("x = 1 if cap != (8, 0) else 2\n", False, id="picks-by-unequal-to-such-an-arch"),
        pytest.param("x = 1 if major * 10 + minor not in {80} else 2\n", False, id="picks-by-not-member-of-such-archs"),
        pytest.param("T = {'sm70': 1, 'sm75': 2}\nx = T[f'sm{major}{minor}']\n", None, id="table-below-major-8"),
        pytest.param("x = cap in seen\n", None, id="membership-in-a-runtime-collection"),
        pytest.param("T = {}\nx = T[cap]\n", None, id="lookup-in-a-runtime-table"),
        pytest.param("T = {'sm80': 1}\nT[f'sm{major}{minor}'] = 2\nx = T\n", None, id="store"),
        pytest.param("x = cap[0]\n", None, id="indexing-the-capability"),
    ],
)
def test_arch_test(code: str, lookup: bool | None) -> None:
    snippet = parse(_CAP + code)
    value = snippet.value("x")
    value = value.test if isinstance(value, ast.IfExp) else value
    node = value if isinstance(value, (ast.Compare, ast.Subscript, ast.Call)) else snippet.first(ast.Subscript)
    test = capability.arch_test(snippet.ctx, node)
    assert (test.lookup if test is not None else None) == lookup
    assert test is None or all(isinstance(read, ast.Call) for read in test.sources)


# A capability helper whose result is already false on ROCm (its own `torch.version.hip is None` conjunct).
_NVIDIA_ONLY_PLATFORM = """
import torch
class Platform:
    def has_device_capability(self, capability):
        return torch.version.hip is None and torch.cuda.get_device_capability()[0] * 10 >= capability
platform = Platform()
"""


@pytest.mark.parametrize(
    ("code", "helper"),
    [
        (
            "from vllm.platforms import current_platform\nx = current_platform.has_device_capability(89)\n",
            "has_device_capability",
        ),
        ("x = has_cuda_capability(9, 0)\n", "has_cuda_capability"),
        ("x = current_platform.has_device_capability()\n", None),
        ("class P:\n    def f(self):\n        x = self.has_device_capability(90)\n", None),
        ("def has_cuda_capability(a, b):\n    return True\nx = has_cuda_capability(9, 0)\n", None),
        ("x = helper(9, 0)\n", None),
        pytest.param(_NVIDIA_ONLY_PLATFORM + "x = platform.has_device_capability(90)\n", None, id="false-on-rocm"),
        pytest.param(
            _NVIDIA_ONLY_PLATFORM.replace("is None", "is not None") + "x = platform.has_device_capability(90)\n",
            "has_device_capability",
            id="true-on-rocm-only",
        ),
    ],
)
def test_helper_test(code: str, helper: str | None) -> None:
    snippet = parse(code)
    call = snippet.value("x")
    assert isinstance(call, ast.Call)
    assert capability.helper_test(snippet.ctx, call) == helper


_READ = "cap = torch.cuda.get_device_capability(0)\n"


@pytest.mark.parametrize(
    ("code", "sink"),
    [
        pytest.param(
            _READ + 'os.environ["TORCH_CUDA_ARCH_LIST"] = f"{cap[0]}.{cap[1]}"\n',
            'os.environ["TORCH_CUDA_ARCH_LIST"]',
            id="environment",
        ),
        pytest.param(
            _READ
            + 'archs = []\narchs.append(f"{cap[0]}.{cap[1]}")\nos.environ.setdefault("CUDAARCHS", ";".join(archs))\n',
            'os.environ.setdefault("CUDAARCHS", ";".join(archs))',
            id="list-joined-setdefault",
        ),
        pytest.param(
            _READ
            + 'major, minor = min((9, 0), cap)\nflags = ["-gencode", "arch=compute_{0}{1},code=sm_{0}{1}".format(major, minor)]\n',
            '"arch=compute_{0}{1},code=sm_{0}{1}".format(major, minor)',
            id="clamped-format-option",
        ),
        pytest.param(
            _READ + 'for c in [f"{cap[0]}{cap[1]}"]:\n    flags = [f"-arch=sm_{c}"]\n',
            'f"-arch=sm_{c}"',
            id="loop",
        ),
        pytest.param(
            _READ + 'if cap >= (8, 0):\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"\n', None, id="compared"
        ),
        pytest.param(
            _READ + 'print(f"sm_{cap[0]}{cap[1]}")\nname = f"kernel_sm{cap[0]}{cap[1]}"\n', None, id="shown-or-named"
        ),
        pytest.param(_READ + 'os.environ["CUDA_VISIBLE_DEVICES"] = f"{cap[0]}"\n', None, id="other-variable"),
    ],
)
def test_built_architecture(code: str, sink: str | None) -> None:
    snippet = parse("import os, torch\n" + code)
    read = snippet.node("torch.cuda.get_device_capability(0)", ast.Call)
    assert capability.is_capability_read(snippet.ctx, read)
    found = capability.built_architecture(snippet.ctx, read)
    assert (None if found is None else snippet.code(found)) == sink


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("ok = read(0).major >= 8", True),
        ("ok = read (f(g(0))) .minor", True),
        ("from torch.cuda import read", True),
        ("gb = read(0).total_memory", False),
        ('mock.patch("torch.cuda.read")', False),
        ("helper(9, 0)", True),
        ("platform.helper.return_value = True", False),
        ("x = unread(0)", False),
    ],
)
def test_value_word_pattern(text: str, matches: bool) -> None:
    pattern = re.compile(
        value_word_pattern("helper") + "|" + value_word_pattern("read", after_call=True, attributes=("major", "minor"))
    )
    assert (pattern.search(text) is not None) is matches


@pytest.mark.parametrize(
    ("code", "harmless"),
    [
        pytest.param("@pytest.mark.skipif(major >= 12, reason='')\ndef test(): pass\n", True, id="skips-newer-only"),
        pytest.param("@pytest.mark.skipif(cap == (9, 0), reason='')\ndef test(): pass\n", True, id="skips-one-arch"),
        pytest.param("@unittest.skipUnless(major < 10, '')\ndef test(): pass\n", True, id="runs-older"),
        pytest.param("def test(v):\n    if v and sm >= 90:\n        pytest.skip('')\n", True, id="if-skip-newer"),
        pytest.param("@pytest.mark.skipif(major >= 9, reason='')\ndef test(): pass\n", True, id="skips-every-amd-gpu"),
        pytest.param("@pytest.mark.skipif(cap < (8, 9), reason='')\ndef test(): pass\n", False, id="needs-sm89"),
        pytest.param("@pytest.mark.skipif(cap != (9, 0), reason='')\ndef test(): pass\n", False, id="needs-sm90"),
        pytest.param("@pytest.mark.skipif(not major >= 9, reason='')\ndef test(): pass\n", False, id="negated"),
        pytest.param("@unittest.skipUnless(major >= 9, '')\ndef test(): pass\n", False, id="runs-newer"),
        pytest.param(
            "class T:\n    def test(self):\n        if major < 9:\n            self.skipTest('')\n",
            False,
            id="skiptest",
        ),
        pytest.param(
            "def test():\n    if major >= 12:\n        pytest.skip('')\n        run()\n", False, id="if-does-more"
        ),
        pytest.param("x = 1 if major >= 12 else 2\n", False, id="no-skip"),
        pytest.param("@pytest.mark.skipif(minor >= 9, reason='')\ndef test(): pass\n", False, id="minor-alone"),
        pytest.param("@pytest.mark.skipif(cap >= LIMIT, reason='')\ndef test(): pass\n", False, id="unknown-limit"),
        pytest.param(
            "@pytest.mark.skipif(cap < (9, 0), reason='')\ndef test():\n    pytest.importorskip('deep_gemm')\n    run()\n",
            True,
            id="test-needs-an-nvidia-only-package",
        ),
        pytest.param(
            "@pytest.mark.skipif(cap < (9, 0), reason='')\ndef test():\n    pytest.importorskip('einops')\n    run()\n",
            False,
            id="test-needs-a-package-of-both-vendors",
        ),
    ],
)
def test_harmless_skip(code: str, harmless: bool) -> None:
    snippet = parse("import pytest, unittest\n" + _CAP + "sm = major * 10 + minor\n" + code, path="tests/test_x.py")
    compare = next(
        node
        for node in ast.walk(snippet.module)
        if isinstance(node, ast.Compare) and capability.capability_reads(snippet.ctx, node.left)
    )
    assert capability.harmless_skip(snippet.ctx, compare) is harmless


@pytest.mark.parametrize(
    ("code", "in_product", "in_tests"),
    [
        pytest.param("x = cap != (10, 0)\n", True, True, id="not-blackwell"),
        pytest.param("SM100 = (10, 0)\nx = cap == SM100\n", True, True, id="named-constant"),
        pytest.param("x = major == 12\n", False, True, id="consumer-blackwell-is-rdna4"),
        pytest.param("x = cap not in [(10, 0), (10, 3)]\n", False, True, id="not-in-list-holds-rdna2"),
        pytest.param("x = major not in (10, 12)\n", False, True, id="major-not-in"),
        pytest.param("x = cap < (10, 0)\n", False, True, id="older-than-blackwell"),
        pytest.param("x = major >= 10\n", False, True, id="rdna-true"),
        pytest.param("if major >= 10:\n    x = 1\nelif major >= 9:\n    x = 2\n", False, False, id="elif-hopper"),
        pytest.param("if major >= 10:\n    x = 1\nelif major >= 7:\n    x = 2\n", False, True, id="elif-volta"),
        pytest.param("x = cap >= (8, 9)\n", False, False, id="fp8-true-on-mi250"),
        pytest.param("x = major >= 9\n", False, False, id="hopper"),
        pytest.param("x = cap == (9, 0)\n", False, False, id="h100-equals-mi250"),
        pytest.param("x = cap in [(9, 0), (10, 0)]\n", False, False, id="list-with-hopper"),
        pytest.param("x = cap in CAPS\n", False, False, id="unknown-list"),
        pytest.param("x = cap == (8, 0)\n", False, False, id="a100-only-a-feature-amd-has"),
        pytest.param("x = cap not in [(8, 0), (10, 0)]\n", False, False, id="list-with-an-older-arch"),
        pytest.param("x = cap >= LIMIT\n", False, False, id="unknown-limit"),
    ],
)
def test_oldest_arm_on_amd(code: str, in_product: bool, in_tests: bool) -> None:
    """Product code of a project that runs on AMD's consumer GPUs meets every ROCm GPU (RDNA's 10.3-12.0 too); a test
    suite, and the product code of any other project, the CDNA ones (9.0, 9.4, 9.5)."""
    for path, consumer_gpus, expected in (
        ("pkg/module.py", "pkg/rdna.py names an RDNA gfx target", in_product),
        ("pkg/module.py", "", in_tests),
        ("tests/test_x.py", "pkg/rdna.py names an RDNA gfx target", in_tests),
    ):
        snippet = parse(_CAP + code, path=path)
        snippet.ctx.options = RuleOptions(consumer_gpus=lambda why=consumer_gpus: why)
        compare = next(
            node
            for node in ast.walk(snippet.module)
            if isinstance(node, ast.Compare) and capability.capability_reads(snippet.ctx, node.left)
        )
        assert capability.oldest_arm_on_amd(snippet.ctx, compare) is expected, (path, consumer_gpus)


@pytest.mark.parametrize(
    ("code", "no_effect"),
    [
        pytest.param("x = major >= 9 or torch.version.hip is not None\n", True, id="or-rocm"),
        pytest.param("x = not (major >= 9 or IS_ROCM) and ready\n", True, id="nested-or-rocm"),
        pytest.param("x = major >= 9 and torch.version.cuda is not None\n", True, id="and-nvidia"),
        pytest.param("x = major >= 9 or torch.version.cuda is not None\n", False, id="or-nvidia"),
        pytest.param("x = major >= 9 or forced\n", False, id="or-unknown"),
        pytest.param("x = f(major >= 9 or IS_ROCM)\n", True, id="inside-a-call"),
        pytest.param("x = [major >= 9, IS_ROCM]\n", False, id="no-chain"),
        pytest.param("if major >= 9:\n    print('Hopper')\n", True, id="only-a-message"),
        pytest.param("if IS_ROCM:\n    x = major >= 9\n", True, id="rocm-only-code"),
        pytest.param("if not IS_ROCM:\n    x = major >= 9\n", True, id="nvidia-only-code"),
        pytest.param("if major >= 9:\n    print('Hopper')\n    fa3()\n", False, id="message-and-more"),
    ],
)
def test_harmless_reading(code: str, no_effect: bool) -> None:
    snippet = parse(_CAP + "IS_ROCM = torch.version.hip is not None\n" + code)
    reading = capability.harmless_reading(snippet.ctx, snippet.node("major >= 9", ast.Compare))
    assert (reading is not None) is no_effect


@pytest.mark.parametrize(
    ("code", "estimate"),
    [
        pytest.param(
            "def prior():\n    if major >= 9: return 5.0\n    if major == 8: return 4.0 if minor == 9 else 2.0\n"
            "    return 1.0\n",
            True,
            id="speed-prior",
        ),
        pytest.param("def prior():\n    return 5.0 if major >= 9 else 1.0\n", True, id="conditional-expression"),
        pytest.param("def tile():\n    if major >= 9: return 128\n    return 64\n", False, id="a-size"),
        pytest.param("def pick():\n    if major >= 9: return 5.0\n    return fa2\n", False, id="not-only-floats"),
        pytest.param("fp8_max = 448.0 if major >= 9 else 57344.0\n", False, id="outside-a-def"),
        pytest.param("def speed():\n    if major >= 9:\n        use_fa3()\n    return 1.0\n", False, id="does-more"),
    ],
)
def test_only_picks_an_estimate(code: str, estimate: bool) -> None:
    snippet = parse(_CAP + code)
    assert capability.only_picks_an_estimate(snippet.ctx, snippet.node("major >= 9", ast.Compare)) is estimate


# The rest of a probe that answers False on ROCm: CUTLASS's CuTe DSL does not import there.
_CUTLASS = "    try:\n        import cutlass\n        return True\n    except ImportError:\n        return False\n"


@pytest.mark.parametrize(
    ("code", "false_anyway"),
    [
        pytest.param(
            'def ok():\n    """Whether the kernel builds here."""\n    if major >= 9:\n        return False\n'
            + _CUTLASS,
            True,
            id="nvidia-only-import-after-a-docstring",
        ),
        pytest.param(
            "def ok():\n    if major >= 9: return False\n    from torch.utils.cpp_extension import CUDA_HOME\n"
            "    return CUDA_HOME is not None\n",
            False,
            id="a-cuda-toolkit-rocm-may-have-too",
        ),
        pytest.param(
            "def ok():\n    if major >= 9: return False\n    try:\n        import deep_gemm\n        return True\n"
            "    except ImportError:\n        return False\n",
            True,
            id="nvidia-only-import",
        ),
        pytest.param("def ok():\n    if major >= 9: return False\n    return True\n", False, id="true-on-rocm"),
        pytest.param(
            "def ok():\n    if major >= 9: return False\n    torch.backends.cuda.matmul.allow_tf32 = True\n" + _CUTLASS,
            False,
            id="an-effect-it-lets-through",
        ),
        pytest.param(
            "def ok():\n    if major >= 9:\n        warn()\n        return False\n" + _CUTLASS, False, id="a-call"
        ),
        pytest.param(
            "class Probe:\n    def ok(self):\n        if major >= 9: return False\n        import cutlass\n        return True\n",
            False,
            id="a-method",
        ),
    ],
)
def test_probe_false_on_rocm_anyway(code: str, false_anyway: bool) -> None:
    """A capability test that only picks an early return of an effect-free probe ROCm answers False anyway."""
    snippet = parse(_CAP + code)
    assert capability.probe_false_on_rocm_anyway(snippet.ctx, snippet.node("major >= 9", ast.Compare)) is false_anyway


def test_calls_of_another_modules_helper_that_is_false_on_rocm_are_not_reported(tmp_path: Path) -> None:
    """torchtitan's shape: the helper's own `torch.version.hip is None` conjunct makes it an NVIDIA-only test,
    so none of its callers (a branch, a flag, a skip decorator) selects an NVIDIA path on AMD GPUs."""
    helper = "def has_cuda_capability(major, minor):\n    return {} and torch.cuda.get_device_capability() >= (major, minor)\n"
    caller = """
        import unittest
        from pkg.utils import has_cuda_capability
        if has_cuda_capability(8, 9):
            recipe = "fp8"
        ok = has_cuda_capability(9, 0)
        class TestNumerics(unittest.TestCase):
            @unittest.skipUnless(has_cuda_capability(9, 0), "H100 only")
            def test_h100(self):
                pass
    """
    for conjunct, expected in (("torch.version.hip is None", []), ("torch.cuda.is_available()", [3, 5, 7])):
        root = write_tree(
            tmp_path / str(len(expected)),
            {"pkg/__init__.py": "", "pkg/utils.py": "import torch\n" + helper.format(conjunct), "pkg/use.py": caller},
        )
        report = Engine().check_path(root / "pkg/use.py", Settings(root=root))
        assert [d.location.line for d in report.diagnostics if d.code == "ROC113"] == expected


def test_blackwell_threshold_meets_rdna_only_where_the_project_runs_on_it(tmp_path: Path) -> None:
    """`major >= 10` is false on every CDNA GPU (9.0-9.5): AMD's servers take the arm Turing takes. It is reported
    where the project runs on AMD's consumer GPUs too (RDNA reports 10.x-12.x): a file names an RDNA gfx target, or
    target-archs does; target-archs, when set, decides over the files."""
    use = "import torch\nif torch.cuda.get_device_capability()[0] >= 10:\n    kernel = 'tcgen05'\n"
    rdna = "ARCHS = ('gfx942', 'gfx1100')\n"
    for name, files, archs, expected in (
        ("cdna", {"pkg/archs.py": "ARCHS = ('gfx90a', 'gfx942')\n"}, (), []),
        ("rdna", {"pkg/archs.py": rdna}, (), [2]),
        ("configured-cdna", {"pkg/archs.py": rdna}, ("gfx942",), []),
        ("configured-rdna", {}, ("gfx942", "gfx1201"), [2]),
    ):
        root = write_tree(tmp_path / name, {"pkg/__init__.py": "", "pkg/use.py": use, **files})
        report = Engine().check_path(root / "pkg/use.py", Settings(root=root, target_archs=archs))
        assert [d.location.line for d in report.diagnostics if d.code == "ROC113"] == expected, name


def test_if_on_archs_no_amd_gpu_met_reports_meets_rdna_only_where_the_project_runs_on_it(tmp_path: Path) -> None:
    """`cap in [(8, 9), (12, 0)]` in an `if`: no CDNA GPU reports either, so AMD's servers take the branch the other
    NVIDIA GPUs take. RDNA4 reports 12.0: reported where the project runs on consumer GPUs. `(9, 0)` is MI250's
    number, reported everywhere; in a test file (AMD's CI runs CDNA) RDNA is not met."""
    use = (
        "import torch\ncap = torch.cuda.get_device_capability()\n"
        "if cap in [(8, 9), (12, 0)]:\n    attention = 'sage'\nif cap == (9, 0):\n    attention = 'fa3'\n"
    )
    for name, files, path, expected in (
        ("cdna", {}, "pkg/use.py", [5]),
        ("rdna", {"pkg/archs.py": "ARCHS = ('gfx942', 'gfx1201')\n"}, "pkg/use.py", [3, 5]),
        ("rdna-test-file", {"pkg/archs.py": "ARCHS = ('gfx942', 'gfx1201')\n"}, "tests/test_use.py", [5]),
    ):
        root = write_tree(tmp_path / name, {"pkg/__init__.py": "", path: use, **files})
        report = Engine().check_path(root / path, Settings(root=root))
        assert [d.location.line for d in report.diagnostics if d.code == "ROC113"] == expected, name


def test_verbose_names_the_reading_that_hid_a_floor(tmp_path: Path) -> None:
    """`check --verbose` says why a capability test was left out: an Ampere floor that only picks bf16 (every AMD GPU
    has it), a test nothing reads. The reported "Hopper" floor has no note."""
    code = (
        "import torch\nmajor, minor = torch.cuda.get_device_capability()\n"
        "dtype = torch.bfloat16 if major >= 8 else torch.float16\nunused = major >= 9\n"
        "kernel = 'wgmma' if major >= 9 else 'mma'\n"
    )
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/use.py": code})
    report = Engine().check_path(root / "pkg/use.py", Settings(root=root, select=("ROC113",)))
    assert [d.location.line for d in report.diagnostics] == [5]
    notes = [note.split(": ", 1)[1] for note in report.gated_notes]
    assert notes == [
        "ROC113 not reported: an Ampere floor that only enables a feature every AMD GPU has (bf16, an SDPA backend, "
        "FlashAttention 2, TF32)",
        "ROC113 not reported: nothing reads its value",
    ]
