"""Tensors made and kept on the CPU (rocmlint/python/cpu_tensors.py), asked of the call written `[[<call>]]`
in the parameters (the snippet holds `<call>` alone), inside `def f(weight, device):`."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest
from snippets import parse

from rocmlint.python import cpu_tensors

_TEST_PATH = "tests/test_example.py"


def _kept(body: str, path: str) -> bool:
    marked = re.search(r"\[\[(.*?)\]\]", body)
    assert marked is not None
    code = body.replace(f"[[{marked.group(1)}]]", marked.group(1))
    code = "import torch\ndef f(weight, device):\n" + textwrap.indent(code, "    ") + "\n"
    snippet = parse(code, path=path)
    return cpu_tensors.kept_on_cpu(snippet.ctx, snippet.node(marked.group(1), ast.Call))


KEPT = [
    pytest.param("x = [[torch.tensor([1.0, 2.0])]]\nsave(x)", "tests", id="tensor-from-a-literal"),
    pytest.param('x = [[torch.zeros(4, device="cpu")]]\nsave(x)', "anywhere", id="factory-on-cpu"),
    pytest.param("x = [[weight.detach().cpu()]]\nsave({'w': x})", "anywhere", id="moved-to-cpu"),
    pytest.param('x = [[weight.to("cpu")]]\nassert x.shape == (2, 2)', "anywhere", id="to-cpu"),
    pytest.param("x = [[torch.randn(4, 8)]]\ncheck(x, scale=2)", "tests", id="factory-without-device-in-test"),
    pytest.param("x = torch.randn(4)\nx = [[x.view(2, 2)]]\nsave(x)", "tests", id="local-reassigned"),
    pytest.param("state = {}\nstate['w'] = [[torch.randn(4)]]\nsave_file(state)", "tests", id="into-a-local-dict"),
    pytest.param("save_file({'w': [[torch.randn(4)]]}, path)", "tests", id="dict-passed-on"),
]
NOT_KEPT = [
    pytest.param("x = [[torch.as_tensor(weight)]]\nsave(x)", "tests", id="copy-of-a-tensor-keeps-its-device"),
    pytest.param("x = [[torch.zeros(4)]]\nsave(x)", "anywhere", id="factory-without-device-in-library"),
    pytest.param("x = [[torch.zeros(4, device=device)]]", "tests", id="factory-on-a-device"),
    pytest.param("x = [[weight.detach()]]\nsave(x)", "tests", id="unknown-device"),
    pytest.param("x = [[torch.randn(4, 8)]]\ny = x.t().cuda()", "tests", id="moved-later"),
    pytest.param("x = [[torch.randn(4, 8)]]\ny = x.to(device)", "tests", id="moved-by-to"),
    pytest.param("x = [[torch.randn(4, 8)]].cuda()", "tests", id="moved-in-the-chain"),
    pytest.param("self.w = [[torch.randn(4)]]", "tests", id="stored-on-an-object"),
    pytest.param("x = [[torch.randn(4)]]\nreturn x", "tests", id="returned"),
    pytest.param("x = [[torch.randn(4)]]\np = torch.nn.Parameter(x)", "tests", id="module-parameter"),
    pytest.param("x = [[torch.randn(4)]]\nlayer.register_buffer('w', x)", "tests", id="module-buffer"),
    pytest.param(
        "x = [[torch.randn(4)]]\ny = torch.empty_like(x, device=device, dtype=x.dtype)", "tests", id="given-a-device"
    ),
    pytest.param("torch.set_default_device('cuda')\nx = [[torch.randn(4)]]\nsave(x)", "tests", id="default-device-set"),
    pytest.param("with torch.device('cuda'):\n    x = [[torch.randn(4)]]\nsave(x)", "tests", id="device-context"),
]


@pytest.mark.parametrize(("body", "where"), KEPT)
def test_kept_on_cpu(body: str, where: str) -> None:
    assert _kept(body, _TEST_PATH)
    if where == "anywhere":
        assert _kept(body, "pkg/module.py")


@pytest.mark.parametrize(("body", "where"), NOT_KEPT)
def test_not_kept_on_cpu(body: str, where: str) -> None:
    assert not _kept(body, _TEST_PATH if where == "tests" else "pkg/module.py")


_HELPERS = (
    "import pytest, torch\n"
    "from lib import quantize\n"
    "SIZE = 4\n"
    "GPU_W = torch.randn(4, device='cuda')\n"
    "def make(n, dtype=torch.float32):\n    return torch.zeros(n, dtype=dtype)\n"
    "def make_on_gpu(n):\n    return torch.zeros(n).cuda()\n"
    "class Net(torch.nn.Module):\n    def __init__(self, device):\n        self.w = torch.zeros(4, device=device)\n"
)


@pytest.mark.parametrize(
    ("test", "gpu_free"),
    [
        pytest.param("def test_a():\n    x = make(SIZE, dtype=D)\n", True, id="helper-and-constant"),
        pytest.param("def test_a():\n    net = Net(device='cpu')\n    net.w.data = net.w.data.to(D)\n", True, id="cpu"),
        pytest.param(
            "@pytest.mark.parametrize('dtype', [D])\ndef test_a(dtype, monkeypatch):\n"
            "    with pytest.raises(ValueError):\n        quantize(torch.zeros(4), dtype)\n",
            True,
            id="parametrized",
        ),
        pytest.param(
            'def test_a():\n    """No CUDA kernel for FP8 adds."""\n    x = torch.zeros(4).to(D)\n'
            "    def fake(value, device):\n        return value\n",
            True,
            id="docstring-and-nested-parameters",
        ),
        pytest.param("class TestA:\n    def test_a(self):\n        x = make(SIZE).to(D)\n", True, id="method"),
        pytest.param("def test_a():\n    x = make(SIZE).to(D).cuda()\n", False, id="moved-to-cuda"),
        pytest.param("def test_a():\n    x = make_on_gpu(SIZE).to(D)\n", False, id="helper-on-gpu"),
        pytest.param("def test_a():\n    x = GPU_W.to(D)\n", False, id="module-tensor-on-gpu"),
        pytest.param("def test_a():\n    x = W.to(D)\n", False, id="unknown-name"),
        pytest.param("def test_a(weight):\n    x = weight.to(D)\n", False, id="fixture"),
        pytest.param("def test_a(device):\n    x = make(SIZE).to(device).to(D)\n", False, id="device-fixture"),
        pytest.param(
            "class TestA:\n    def setup_method(self):\n        self.w = make_on_gpu(4)\n"
            "    def test_a(self):\n        x = self.w.to(D)\n",
            False,
            id="class-puts-on-gpu",
        ),
        pytest.param("x = make(SIZE).to(D)\n", False, id="module-level"),
    ],
)
def test_in_gpu_free_test(test: str, gpu_free: bool) -> None:
    code = _HELPERS + test.replace("D", "torch.float8_e4m3fn")
    snippet = parse(code, path=_TEST_PATH)
    assert cpu_tensors.in_gpu_free_test(snippet.ctx, _last_fp8(snippet.module)) is gpu_free
    if gpu_free:  # the same code outside a test suite: a library's tensors may be moved by its callers
        library = parse(code, path="lib/example.py")
        assert not cpu_tensors.in_gpu_free_test(library.ctx, _last_fp8(library.module))


def _last_fp8(module: ast.Module) -> ast.Attribute:
    return [n for n in ast.walk(module) if isinstance(n, ast.Attribute) and n.attr == "float8_e4m3fn"][-1]


# A file whose helpers name no GPU (the `_HELPERS` above do, in `GPU_W` and `make_on_gpu`).
_CPU_HELPERS = "import torch\nfrom lib import quantize\ndef make(n):\n    return torch.zeros(n)\n"


@pytest.mark.parametrize(
    ("test", "gpu_free"),
    [
        pytest.param(
            "def scales(w, block):\n    return (w.abs() / 6.0).to(D)\ndef test_a():\n    s = scales(make(4), 16)\n",
            True,
            id="helper-called-from-cpu-tests",
        ),
        pytest.param(
            "def scales(w, block):\n    return (w.abs() / 6.0).to(D)\ndef test_a():\n    s = scales(make(4).cuda(), 16)\n",
            False,
            id="helper-called-from-gpu-test",
        ),
        pytest.param(
            "def scales(w, block):\n    return (w.abs() / 6.0).to(D)\nquantize(scales)\n",
            False,
            id="helper-passed-on",
        ),
        pytest.param("def scales(w, block):\n    return (w.abs() / 6.0).to(D)\n", False, id="helper-never-called"),
        pytest.param(
            "class TestA:\n    @staticmethod\n    def _scales(w):\n        return w.to(D)\n"
            "    def test_a(self):\n        self._scales(make(4))\n",
            True,
            id="helper-method-of-cpu-class",
        ),
        pytest.param(
            "class TestA:\n    def test_gpu(self):\n        x = make(4).cuda()\n"
            "    def test_cpu(self):\n        x = make(4).to(D)\n",
            True,
            id="other-test-method-on-gpu",
        ),
        pytest.param(
            "class TestA:\n    def setUp(self):\n        self.w = make(4).cuda()\n"
            "    def test_cpu(self):\n        x = self.w.to(D)\n",
            False,
            id="set-up-on-gpu",
        ),
        pytest.param(
            "class TestA:\n    def test_gpu(self):\n        previous = torch.get_default_device()\n"
            "        try:\n            torch.set_default_device('cuda')\n        finally:\n"
            "            torch.set_default_device(previous)\n"
            "    def test_cpu(self):\n        x = make(4).to(D)\n",
            True,
            id="default-device-restored-by-another-test",
        ),
        pytest.param(
            "class TestA:\n    def test_gpu(self):\n        torch.set_default_device('cuda')\n"
            "    def test_cpu(self):\n        x = make(4).to(D)\n",
            False,
            id="default-device-left-changed",
        ),
        pytest.param(
            "class TestA:\n    def test_cpu(self, weight):\n        x = weight.to(D)\n",
            False,
            id="method-with-tensor-fixture",
        ),
    ],
)
def test_gpu_free_helpers_and_methods(test: str, gpu_free: bool) -> None:
    """A helper def is given what its calls pass; a test method runs without its class's other tests."""
    snippet = parse(_CPU_HELPERS + test.replace("D", "torch.float8_e4m3fn"), path=_TEST_PATH)
    assert cpu_tensors.in_gpu_free_test(snippet.ctx, _last_fp8(snippet.module)) is gpu_free
