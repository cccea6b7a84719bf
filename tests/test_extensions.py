"""The flag lists a PyTorch extension build hands to the device compiler (rocmlint/python/extensions.py)."""

from __future__ import annotations

import ast

import pytest
from snippets import in_order, parse

from rocmlint.python import extensions

BUILD = """
import torch
from torch.utils.cpp_extension import CUDAExtension, load
IS_ROCM = torch.version.hip is not None
nvcc_flags = ["-O3"]
nvcc_flags.append("-lineinfo")
args = {"cxx": ["-O2"], "nvcc": nvcc_flags if not IS_ROCM else ["-O3"]}
ext = CUDAExtension("ops", ["ops.cu"], extra_compile_args=["-g"])
mod = load("k", ["k.cu"], extra_cuda_cflags=["-G"])
opts = dict(cxx=[], nvcc=["-c"])
hipcc_flags = ["--offload-arch=gfx942"]
class Builder:
    def nvcc_args(self):
        return ["--use_fast_math"]
def build(b):
    return b.nvcc_args()
"""


def _found(code: str) -> list[tuple[str, str, list[str], bool]]:
    """(defining node's first line, literal, path, hipified) for every flag string."""
    snippet = parse(code)
    found = []
    for node in in_order(snippet.module):
        for flags in extensions.device_flags(snippet.ctx, node):
            for literal, path in extensions.flag_strings(snippet.ctx, flags):
                where = snippet.code(node).splitlines()[0]
                found.append((where, snippet.code(literal), [snippet.code(step) for step in path], flags.hipified))
    return found


def test_device_flags_and_their_strings() -> None:
    found = _found(BUILD)
    assert ('nvcc_flags = ["-O3"]', '"-O3"', ["nvcc_flags"], True) in found
    assert ('nvcc_flags.append("-lineinfo")', '"-lineinfo"', ["nvcc_flags"], True) in found
    # The dict's "nvcc" entry reaches both arms; gating them is the report's business.
    assert (
        '{"cxx": ["-O2"], "nvcc": nvcc_flags if not IS_ROCM else ["-O3"]}',
        '"-lineinfo"',
        ["nvcc_flags"],
        True,
    ) in found
    assert ('CUDAExtension("ops", ["ops.cu"], extra_compile_args=["-g"])', '"-g"', [], False) in found
    assert ('load("k", ["k.cu"], extra_cuda_cflags=["-G"])', '"-G"', [], False) in found
    assert ('dict(cxx=[], nvcc=["-c"])', '"-c"', [], True) in found
    assert ("def nvcc_args(self):", '"--use_fast_math"', ["b.nvcc_args()"], True) in found
    assert not [entry for entry in found if "cxx" in entry[1] or "-O2" in entry[1] or "gfx942" in entry[1]]


@pytest.mark.parametrize(
    ("name", "device"),
    [
        ("nvcc_flags", True),
        ("NVCC_ARGS_layer_norm", True),
        ("extra_cuda_cflags", True),
        ("cuda_compile_args", True),
        ("cuda_flags_extra", False),
        ("hipcc_flags", False),
        ("nvcc_flags_rocm", False),
        ("nvcc_path", False),
    ],
)
def test_is_device_flags_name(name: str, device: bool) -> None:
    assert extensions.is_device_flags_name(name) is device


def test_a_call_of_an_unknown_receiver_is_a_plain_call() -> None:
    snippet = parse("x = helper().extend(['-g'])\n")
    call = snippet.node("helper().extend(['-g'])", ast.Call)
    assert extensions.device_flags(snippet.ctx, call) == []


def test_gpu_build_switch_is_a_cuda_switch_set_once_beside_a_cuda_extension() -> None:
    code = """
import torch
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension
WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
USE_CUDA = CUDA_HOME is not None
if torch.version.hip:
    USE_CUDA = True
WITH_HIP_CUDA = True
cuda_home = CUDA_HOME
def build():
    BUILD_CUDA = CUDA_HOME is not None
"""
    snippet = parse(code)
    switches = [
        switch.id
        for node in in_order(snippet.module)
        if isinstance(node, ast.Assign) and (switch := extensions.gpu_build_switch(snippet.ctx, node)) is not None
    ]
    # USE_CUDA is set twice (a ROCm override), WITH_HIP_CUDA names ROCm, cuda_home switches nothing, BUILD_CUDA is
    # a function's local.
    assert switches == ["WITH_CUDA"]
    # No CUDAExtension to build: no GPU build to switch.
    plain = parse(code.replace("CUDAExtension", "CppExtension"))
    assert not [
        node
        for node in in_order(plain.module)
        if isinstance(node, ast.Assign) and extensions.gpu_build_switch(plain.ctx, node) is not None
    ]
