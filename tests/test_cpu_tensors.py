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
