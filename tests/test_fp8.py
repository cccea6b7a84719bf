"""The OCP FP8 dtypes as Python names them (rocmlint/python/fp8.py)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from snippets import parse
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.python import fp8


@pytest.mark.parametrize(
    ("code", "qualified", "fnuz"),
    [
        pytest.param(
            "import torch\nx = torch.float8_e4m3fn\n", "torch.float8_e4m3fn", "torch.float8_e4m3fnuz", id="torch"
        ),
        pytest.param(
            "from torch import float8_e5m2\nx = float8_e5m2\n",
            "torch.float8_e5m2",
            "torch.float8_e5m2fnuz",
            id="imported",
        ),
        pytest.param(
            "import jax.numpy as jnp\nx = jnp.float8_e4m3fn\n",
            "jax.numpy.float8_e4m3fn",
            "jax.numpy.float8_e4m3fnuz",
            id="jax",
        ),
        pytest.param(
            "import ml_dtypes\nx = ml_dtypes.float8_e5m2\n",
            "ml_dtypes.float8_e5m2",
            "ml_dtypes.float8_e5m2fnuz",
            id="ml",
        ),
        pytest.param(
            'import torch\nx = getattr(torch, "float8_e4m3fn", None)\n',
            "torch.float8_e4m3fn",
            "torch.float8_e4m3fnuz",
            id="getattr",
        ),
        pytest.param('import torch\nx = getattr(torch, "float8_e4m3fnuz")\n', None, None, id="getattr-fnuz"),
        pytest.param("import torch\nx = torch.float8_e4m3fnuz\n", None, None, id="fnuz"),
        pytest.param("x = config.float8_e4m3fn\n", None, None, id="other-library"),
        pytest.param('x = getattr(config, "float8_e4m3fn")\n', None, None, id="getattr-other-library"),
    ],
)
def test_ocp_fp8_dtype(code: str, qualified: str | None, fnuz: str | None) -> None:
    snippet = parse(code)
    dtype = fp8.ocp_fp8_dtype(snippet.ctx, snippet.value("x"))
    assert (dtype.qualified if dtype else None) == qualified
    assert (dtype.fnuz if dtype else None) == fnuz


@pytest.mark.parametrize(
    ("code", "by_spec"),
    [
        ("cfg = MXLinearConfig(elem_dtype=D)\n", True),
        ("cfg = to_mx(x, elem_dtype=D)\n", True),
        ("cfg = MXFPInferenceConfig(activation_dtype=D)\n", True),
        ("cfg = mx_config(weight_dtype=D)\n", True),
        ("cfg = Mxfp8Config(weight_dtype=D)\n", True),
        ("cfg = Float8LinearConfig(weight_dtype=D)\n", False),
        ("cfg = MixedPrecisionConfig(weight_dtype=D)\n", False),
        ("cfg = MXLinearConfig(dtype=D)\n", False),
    ],
)
def test_ocp_by_spec(code: str, by_spec: bool) -> None:
    snippet = parse(code)
    assert fp8.ocp_by_spec(snippet.ctx, snippet.node("D", ast.Name)) is by_spec


@pytest.mark.parametrize(
    ("code", "neutral"),
    [
        ("if t.dtype == D:\n    pass\n", True),
        ("bits = torch.finfo(D).bits\n", True),
        ("top = torch.finfo(D).max\n", False),
        ("y = x.to(D)\n", False),
        ("self.assertEqual(w.dtype, D)\n", True),
        ("self.assertIn(w.dtype, (D, torch.bfloat16))\n", True),
        ("self.assertTrue(w.to(D).isfinite().all())\n", False),
        ("KINDS = {torch.uint8, getattr(torch, 'float8_e5m2', D)}\n", True),
        ("x = w.to(getattr(torch, 'float8_e5m2', D))\n", False),
    ],
)
def test_encoding_neutral_use(code: str, neutral: bool) -> None:
    snippet = parse("import torch\n" + code)
    assert fp8.encoding_neutral_use(snippet.ctx, snippet.node("D", ast.Name)) is neutral


@pytest.mark.parametrize(
    ("field", "path", "neutral"),
    [
        ("tiny", "pkg/nvfp4_quant.py", True),
        ("eps", "pkg/nvfp4_quant.py", True),
        ("max", "pkg/nvfp4_quant.py", False),
        ("tiny", "pkg/fp8_quant.py", False),
    ],
)
def test_smallest_step_of_fp4_block_scales(field: str, path: str, neutral: bool) -> None:
    """Beside a 4-bit float format the smallest step of e4m3 is its block scales' floor (OCP by the format); the
    largest value is not portable (240 on MI300), nor is the smallest step of a plain FP8 recipe."""
    snippet = parse(f"import torch\nkernel[grid](x, out, EPS=float(torch.finfo(D).{field}))\n", path=path)
    assert fp8.encoding_neutral_use(snippet.ctx, snippet.node("D", ast.Name)) is neutral


def test_finfo_of_and_selected_per_arch() -> None:
    snippet = parse(
        "import jax.numpy as jnp, torch\nm = jnp.finfo(dtype=A).max\nd = torch.float8_e4m3fnuz if fnuz else B\ne = C\n"
    )
    assert snippet.code(fp8.finfo_of(snippet.ctx, snippet.node("A", ast.Name))) == "jnp.finfo(dtype=A)"
    assert fp8.selected_per_arch(snippet.ctx, snippet.node("B", ast.Name))
    assert not fp8.selected_per_arch(snippet.ctx, snippet.node("C", ast.Name))


@pytest.mark.parametrize(
    ("code", "on_cpu"),
    [
        ('save(torch.zeros(4, device="cpu").to(torch.float8_e4m3fn))\n', True),
        ('save(torch.zeros(4, dtype=torch.float8_e4m3fn, device="cpu"))\n', True),
        ('save(torch.zeros(4, device="cpu").to(torch.float8_e4m3fn).cuda())\n', False),
        ('save(torch.zeros(4, dtype=torch.float8_e4m3fn, device="cuda"))\n', False),
        ('save(torch.zeros(4, device="cpu", layout=torch.float8_e4m3fn))\n', False),
    ],
)
def test_cpu_data_is_encoding_neutral(code: str, on_cpu: bool) -> None:
    snippet = parse("import torch\n" + code)
    dtype = snippet.node("torch.float8_e4m3fn", ast.Attribute)
    assert fp8.cpu_data(snippet.ctx, dtype) is on_cpu
    assert fp8.encoding_neutral_use(snippet.ctx, dtype) is on_cpu


_TO_FNUZ = "def to_fnuz(w):\n    return w.view(torch.float8_e4m3fnuz)\n"


@pytest.mark.parametrize(
    ("code", "converted"),
    [
        pytest.param(
            "def f(w, q=torch.float8_e4m3fn):\n    w = w.to(q)\n    if IS_ROCM:\n        w = to_fnuz(w)\n",
            True,
            id="call",
        ),
        pytest.param(
            "def f(w):\n    w = w.to(torch.float8_e4m3fn)\n    if IS_ROCM:\n        w = w.view(torch.float8_e4m3fnuz)\n",
            True,
            id="named-in-the-branch",
        ),
        pytest.param(
            "class L:\n    def make(self):\n        self.w = torch.empty(4, dtype=torch.float8_e4m3fn)\n"
            "    def load(self):\n        if IS_ROCM:\n            self.w = to_fnuz(self.w)\n",
            False,
            id="another-method-of-the-class",
        ),
        pytest.param(
            "def f(w):\n    w = w.to(torch.float8_e4m3fn)\n    return to_fnuz(w)\n", False, id="not-rocm-only"
        ),
        pytest.param(
            "def f(w):\n    w = w.to(torch.float8_e4m3fn)\n    if IS_ROCM:\n        w = w.float()\n",
            False,
            id="no-fnuz",
        ),
        pytest.param("w = w.to(torch.float8_e4m3fn)\nif IS_ROCM:\n    w = to_fnuz(w)\n", False, id="module-level"),
    ],
)
def test_converted_on_rocm(code: str, converted: bool) -> None:
    snippet = parse("import torch\nIS_ROCM = torch.version.hip is not None\n" + _TO_FNUZ + code)
    node = snippet.node("torch.float8_e4m3fn", ast.Attribute)
    assert fp8.converted_on_rocm(snippet.ctx, node) is converted


@pytest.mark.parametrize(
    ("code", "storage"),
    [
        pytest.param("cast(m, storage_dtype=torch.float8_e4m3fn, compute_dtype=torch.bfloat16)", True, id="storage"),
        pytest.param("cast(m, storage_dtype=torch.float8_e4m3fn)", False, id="no-compute-dtype"),
        pytest.param("Float8WeightOnlyConfig(weight_dtype=torch.float8_e4m3fn)", True, id="weight-only-config"),
        pytest.param("Float8DynamicConfig(weight_dtype=torch.float8_e4m3fn)", False, id="weight-and-activation-config"),
        pytest.param("cast(m, dtype=torch.float8_e4m3fn, compute_dtype=torch.bfloat16)", False, id="other-keyword"),
        pytest.param(
            "def f(m):\n    storage_dtype = torch.float8_e4m3fn\n    compute_dtype = m.dtype\n    cast(m)",
            True,
            id="storage-variable-beside-compute-variable",
        ),
        pytest.param(
            "def f(m):\n    storage_dtype = torch.float8_e4m3fn\n    cast(m, storage_dtype)",
            False,
            id="no-compute-variable",
        ),
        pytest.param(
            "def f(m):\n    storage_dtype = torch.float8_e4m3fn\n"
            "    m.enable_layerwise_casting(compute_dtype=d, storage_dtype=storage_dtype)",
            True,
            id="storage-variable-beside-compute-argument",
        ),
        pytest.param("storage_dtype = torch.float8_e4m3fn\ncompute_dtype = torch.bfloat16", False, id="module-level"),
        pytest.param(
            "def f(m):\n    dtype = torch.float8_e4m3fn\n    compute_dtype = m.dtype\n    cast(m)",
            False,
            id="other-name",
        ),
        pytest.param(
            "def cast(m, storage_dtype=torch.float8_e4m3fn, compute_dtype=None): pass", True, id="parameter-default"
        ),
        pytest.param("def cast(m, *, storage_dtype=torch.float8_e4m3fn, compute_dtype): pass", True, id="keyword-only"),
        pytest.param("def cast(m, storage_dtype=torch.float8_e4m3fn): pass", False, id="default-no-compute-parameter"),
        pytest.param(
            "def cast(m, dtype=torch.float8_e4m3fn, compute_dtype=None): pass", False, id="default-other-name"
        ),
        pytest.param(
            "def run(storage_dtype, compute_dtype): pass\nrun(torch.float8_e4m3fn, torch.float32)",
            True,
            id="positional",
        ),
        pytest.param(
            "def run(compute_dtype, storage_dtype): pass\nrun(torch.float8_e4m3fn, torch.float32)",
            False,
            id="positional-other-parameter",
        ),
        pytest.param(
            "class T:\n    def run(self, storage_dtype, compute_dtype): pass\n"
            "    def test(self):\n        self.run(torch.float8_e4m3fn, torch.float32)",
            True,
            id="method-skips-self",
        ),
        pytest.param("run(torch.float8_e4m3fn, torch.float32)", False, id="unknown-callee"),
    ],
)
def test_storage_only(code: str, storage: bool) -> None:
    snippet = parse("import torch\n" + code + "\n")
    assert fp8.storage_only(snippet.ctx, snippet.node("torch.float8_e4m3fn", ast.Attribute)) is storage


_TABLE = 'FORMATS = {"fp8": {"dtype": torch.float8_e4m3fn, "max": 448.0}}\n'


@pytest.mark.parametrize(
    ("code", "adds"),
    [
        pytest.param(_TABLE + 'FORMATS["fp8_fnuz"] = {"dtype": torch.float8_e4m3fnuz}\n', True, id="entry-added"),
        pytest.param(
            _TABLE + 'if hasattr(torch, "float8_e4m3fnuz"):\n    FORMATS["e4m3fnuz"] = make()\n', True, id="guarded"
        ),
        pytest.param(_TABLE + 'OTHER["fp8_fnuz"] = {"dtype": torch.float8_e4m3fnuz}\n', False, id="another-table"),
        pytest.param(_TABLE + 'FORMATS["fp8_e5m2"] = {"dtype": torch.float8_e5m2}\n', False, id="no-fnuz-entry"),
        pytest.param(
            'w = torch.float8_e4m3fn\nFORMATS["fp8_fnuz"] = {"dtype": torch.float8_e4m3fnuz}\n', False, id="no-table"
        ),
    ],
)
def test_table_adds_fnuz(code: str, adds: bool) -> None:
    snippet = parse("import torch\n" + code)
    assert fp8.table_adds_fnuz(snippet.ctx, snippet.node("torch.float8_e4m3fn", ast.Attribute)) is adds


_F8 = "torch.float8_e4m3fn"


@pytest.mark.parametrize(
    ("code", "decodes"),
    [
        pytest.param(
            f'CODES = {{"BOOL": torch.bool, "I8": torch.int8, "F8_E4M3": {_F8}}}', True, id="file-format-codes"
        ),
        pytest.param(f'CODES = {{"U8": torch.uint8, "F8_E4M3": {_F8}}}', True, id="unsigned"),
        pytest.param(f'CODES = {{"bf16": torch.bfloat16, "fp8": {_F8}}}', False, id="float-choices-only"),
        pytest.param(f'KV = {{"int8": torch.int8, "fp8_inc": {_F8}}}', False, id="lower-case-choices"),
        pytest.param(f'CODES = {{"I8": torch.int8, "F8": {_F8}, "X": make()}}', False, id="not-all-dtypes"),
        pytest.param(f'CODES = {{torch.int8: 1, "F8": {_F8}}}', False, id="not-string-keys"),
        pytest.param(f'CODES = {{"I8": torch.int8, "F8": cast({_F8})}}', False, id="not-a-value"),
        pytest.param(
            f"TO_TORCH = {{dtypes.int8: torch.int8, dtypes.float8_e4m3: {_F8}}}", True, id="another-type-system"
        ),
        pytest.param(f"TO_TORCH = {{dtypes.int8: torch.int8, dtypes.fp8: {_F8}}}", False, id="key-names-no-format"),
        pytest.param(
            f"TO_TORCH = {{dtypes.int8: torch.int8, dtypes.float8_e4m3fnuz: {_F8}}}", False, id="fnuz-key-to-ocp"
        ),
        pytest.param(f"TO_TORCH = {{dtypes.int8: torch.int8, other.float8_e4m3: {_F8}}}", False, id="two-namespaces"),
        pytest.param(f"CAST = {{torch.int8: torch.int8, torch.float8_e4m3fnuz: {_F8}}}", False, id="torch-keys"),
    ],
)
def test_in_format_dtype_table(code: str, decodes: bool) -> None:
    snippet = parse("import torch\n" + code + "\n")
    node = snippet.node(_F8, ast.Attribute)
    assert fp8.in_format_dtype_table(snippet.ctx, node) is decodes


@pytest.mark.parametrize(
    ("code", "block_scales"),
    [
        pytest.param("sc = (sc.float() * ratio).to(D)\n", True, id="assigned-to-scales"),
        pytest.param("scale_e4m3 = (amax / 6.0).to(D)\n", True, id="scale-word"),
        pytest.param("def f(scale_u8):\n    return packed, scale_u8.view(D)\n", True, id="scale-tensor-viewed"),
        pytest.param("def _recast_scale(t):\n    return t.to(D)\n", True, id="def-returning-scales"),
        pytest.param("sfa = torch.empty(4, 16, dtype=D)\n", True, id="factory"),
        pytest.param("q = (w / scale).to(D)\n", False, id="data-scaled-by-a-scale"),
        pytest.param("x_f8 = x.div(x_s).to(D)\n", False, id="activation"),
        pytest.param("scale = amax / torch.finfo(D).max\n", False, id="finfo-for-a-scale"),
        pytest.param("torch.empty(4, dtype=D)\n", False, id="unnamed"),
        pytest.param(
            'm.register_parameter(p + "_scale", nn.Parameter(torch.empty(4, dtype=D)))\n', True, id="registered-name"
        ),
        pytest.param('m.register_parameter("bias", nn.Parameter(torch.empty(4, dtype=D)))\n', False, id="other-name"),
        pytest.param("wscales = torch.empty(4, dtype=x if int4 else D)\n", True, id="conditional-arm-one-operand"),
        pytest.param("upscaled = torch.empty(4, dtype=D)\n", False, id="not-a-scale-word"),
        pytest.param(
            "def _optimal_block_scales(base):\n    best = base.to(D)\n    return pick(best)\n",
            True,
            id="def-named-scales",
        ),
        pytest.param("def compute_scales(amax):\n    s = (amax / 6.0).to(D)\n", True, id="def-ending-in-scales"),
        pytest.param("def scales_to_data(x):\n    q = x.to(D)\n", False, id="def-not-ending-in-scales"),
    ],
)
def test_fp4_block_scales(code: str, block_scales: bool) -> None:
    """In a file named for NVFP4; the same code in a file naming no 4-bit float format near it is a per-tensor or
    int4 recipe's own choice of FP8 scales."""
    snippet = parse("import torch\n" + code, path="pkg/nvfp4_quant.py")
    assert fp8.fp4_block_scales(snippet.ctx, snippet.node("D", ast.Name)) is block_scales
    plain = parse("import torch\n" + code, path="pkg/quant.py")
    assert not fp8.fp4_block_scales(plain.ctx, plain.node("D", ast.Name))


@pytest.mark.parametrize(
    ("body", "block_scales"),
    [
        pytest.param("scales = amax.clamp(max=torch.finfo(fp8).max).to(fp8)\n", True, id="finfo-and-cast"),
        pytest.param("scales = torch.empty(m, k // 16, dtype=fp8)\nreturn out, scales\n", True, id="factory"),
        pytest.param("scales = s.to(fp8)\nq = (x / s).to(fp8)\n", False, id="data-too"),
        pytest.param("max_fp8 = torch.finfo(fp8).max\n", False, id="only-its-range"),
        pytest.param("return fp8\n", False, id="returned"),
    ],
)
def test_fp4_block_scales_through_a_variable(body: str, block_scales: bool) -> None:
    """`fp8_dtype = torch.float8_e4m3fn` in a def named for NVFP4: scales when every read makes scales or reads the
    range of their dtype, and one makes them."""
    code = "import torch\ndef scale_activations_nvfp4(x, amax):\n    fp8 = D\n" + textwrap.indent(body, "    ")
    snippet = parse(code, path="pkg/quant.py")
    assert fp8.fp4_block_scales(snippet.ctx, snippet.node("D", ast.Name)) is block_scales


def test_fp4_format_named_in_the_same_def() -> None:
    code = "import torch\ndef quantize_nvfp4(x, sc):\n    packed = pack_e2m1(x)\n    sc = sc.to(D)\n"
    snippet = parse(code, path="pkg/quant.py")
    assert fp8.fp4_block_scales(snippet.ctx, snippet.node("D", ast.Name))
    # An int4 kernel's FP8 group scales (W4A8) in a file whose other defs handle NVFP4: the kernel's choice.
    int4 = parse(
        "import torch\ndef w4a8_scales(s):\n    return s.to(D)\nFP4_DTYPE = torch.uint8\n", path="pkg/quant.py"
    )
    assert not fp8.fp4_block_scales(int4.ctx, int4.node("D", ast.Name))


_AUTOGRAD = """
import torch
class Activation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, fp8_store):
        kept = x.to(D) if fp8_store else x
{forward}
        ctx.orig_dtype = x.dtype
        return act(x, w)
    @staticmethod
    def backward(ctx, grad):
{backward}
        return act_grad(x, w, grad), None, None
"""


@pytest.mark.parametrize(
    ("forward", "backward", "round_trip"),
    [
        pytest.param(
            "ctx.save_for_backward(kept, w)",
            "x, w = ctx.saved_tensors\nx = x.to(ctx.orig_dtype) if ctx.fp8_store else x",
            True,
            id="unpacked-and-cast-back",
        ),
        pytest.param(
            "kept.offloaded = True\nctx.save_for_backward(w, kept)",
            "w = ctx.saved_tensors[0]\nx = ctx.saved_tensors[1]\nx = x.float()",
            True,
            id="indexed-and-marked",
        ),
        pytest.param(
            "ctx.save_for_backward(kept, w)",
            "x, w = ctx.saved_tensors\ny = torch._scaled_mm(x, w)\nx = x.to(ctx.orig_dtype)",
            False,
            id="fp8-matmul-first",
        ),
        pytest.param(
            "ctx.save_for_backward(w, kept)",
            "x, w = ctx.saved_tensors\nx = x.to(ctx.orig_dtype)",
            False,
            id="another-position-cast",
        ),
        pytest.param(
            "ctx.save_for_backward(kept, w)\nctx.out = kept.to('cuda')",
            "x, w = ctx.saved_tensors\nx = x.to(ctx.orig_dtype)",
            False,
            id="moved-to-a-device",
        ),
        pytest.param("ctx.save_for_backward(kept, w)", "x, w = ctx.saved_tensors", False, id="never-cast-back"),
    ],
)
def test_saved_and_cast_back(forward: str, backward: str, round_trip: bool) -> None:
    """FP8 only holds an activation between forward and backward: cast in, saved, cast back before any other use."""
    code = _AUTOGRAD.format(forward=textwrap.indent(forward, " " * 8), backward=textwrap.indent(backward, " " * 8))
    snippet = parse(code)
    assert fp8.saved_and_cast_back(snippet.ctx, snippet.node("D", ast.Name)) is round_trip


_PATCHED_AUTOGRAD = """
import torch
def patch(fn):
    @staticmethod
    def _forward(ctx, x, fp8_store):
        ctx.orig_dtype = x.dtype
        kept = x.to(D) if fp8_store else x
        ctx.save_for_backward(kept)
        return act(x)

    @staticmethod
    def _backward(ctx, grad):
        x = ctx.saved_tensors[0]
        x = {first_read}
        return act_grad(x, grad), None

    fn.forward = _forward
    {patched}.backward = _backward
"""


@pytest.mark.parametrize(
    ("first_read", "patched", "round_trip"),
    [
        pytest.param("x.to(ctx.orig_dtype)", "fn", True, id="patched-beside-the-forward"),
        pytest.param("x.to(ctx.orig_dtype)", "other", False, id="another-class-patched"),
        pytest.param("torch._scaled_mm(x, x)", "fn", False, id="fp8-matmul-first"),
    ],
)
def test_saved_and_cast_back_in_a_patched_backward(first_read: str, patched: str, round_trip: bool) -> None:
    """An autograd function's forward and backward patched in by defs side by side (`Fn.forward = _forward`)."""
    snippet = parse(_PATCHED_AUTOGRAD.format(first_read=first_read, patched=patched))
    assert fp8.saved_and_cast_back(snippet.ctx, snippet.node("D", ast.Name)) is round_trip


@pytest.mark.parametrize(
    ("body", "compared"),
    [
        pytest.param("expected = D if quantized else torch.bfloat16\nassert w.dtype == expected\n", True, id="arm"),
        pytest.param("expected = D\nassert w.dtype in (expected,), f'{str(expected)}'\n", True, id="member-and-text"),
        pytest.param("expected = D\nassert w.dtype == expected\nq = w.to(expected)\n", False, id="also-produced"),
        pytest.param("expected = D\n", False, id="never-read"),
    ],
)
def test_compared_alias(body: str, compared: bool) -> None:
    """A def's variable holding an FP8 dtype that is only compared is matched against, not produced."""
    code = "import torch\ndef check(w, quantized):\n" + textwrap.indent(body, "    ")
    snippet = parse(code)
    assert fp8.compared_alias(snippet.ctx, snippet.node("D", ast.Name)) is compared


@pytest.mark.parametrize(
    ("code", "round_trip"),
    [
        pytest.param("w_ref = w.to(D).to(torch.bfloat16)\n", True, id="rounded-reference"),
        pytest.param("q = x.to(D)\nref = q.float() * scale\n", True, id="cast-back-later"),
        pytest.param("q = x.to(D)\ny = torch._scaled_mm(q, w)\n", False, id="fp8-matmul"),
        pytest.param("q = x.to(D).to('cuda')\n", False, id="moved"),
    ],
)
def test_cast_straight_back(code: str, round_trip: bool) -> None:
    snippet = parse("import torch\n" + code)
    assert fp8.saved_and_cast_back(snippet.ctx, snippet.node("D", ast.Name)) is round_trip


@pytest.mark.parametrize(
    ("setting", "reported"),
    [
        ("import enum\nuse_fnuz_dtype = False\n", [32, 33]),  # only ever False: never taken on MI300
        ("import torch\nuse_fnuz_dtype = torch.version.hip is not None\n", []),  # set per vendor
        ("import os\nuse_fnuz_dtype = os.getenv('USE_FNUZ') == '1'\n", []),  # unknown at lint time
    ],
)
def test_a_fnuz_arm_behind_another_modules_setting(tmp_path: Path, setting: str, reported: list[int]) -> None:
    """torchao's `e4m3_dtype = torch.float8_e4m3fn if not config.use_fnuz_dtype else torch.float8_e4m3fnuz`:
    the choice is per arch only when the setting may differ between the vendors."""
    padding = "\n" * 29  # the choices on lines 32 and 33
    utils = (
        f"import torch\nimport pkg.config as config\n{padding}"
        "e4m3_dtype = torch.float8_e4m3fn if not config.use_fnuz_dtype else torch.float8_e4m3fnuz\n"
        "e5m2_dtype = torch.float8_e5m2 if not config.use_fnuz_dtype else torch.float8_e5m2fnuz\n"
    )
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/config.py": setting, "pkg/utils.py": utils})
    report = Engine().check_path(root / "pkg/utils.py", Settings(root=root))
    assert [d.location.line for d in report.diagnostics if d.code == "ROC107"] == reported


@pytest.mark.parametrize(
    ("code", "both"),
    [
        pytest.param("ok = []\nok.append(D)\nok.append(torch.float8_e4m3fnuz)\n", True, id="fnuz-appended-too"),
        pytest.param(
            "ok = set()\nif hasattr(torch, 'x'):\n    ok.add(torch.float8_e4m3fnuz)\nok.add(D)\n", True, id="set"
        ),
        pytest.param(
            "ok = []\nok.append(D)\nother = []\nother.append(torch.float8_e4m3fnuz)\n", False, id="other-list"
        ),
        pytest.param("ok = []\nok.append(D)\nok.append(torch.bfloat16)\n", False, id="no-fnuz"),
        pytest.param(
            "ok = [D]\nfor name in ('float8_e4m3fnuz',):\n    value = getattr(torch, name, None)\n    ok.append(value)\n",
            True,
            id="literal-then-fnuz-by-name",
        ),
        pytest.param(
            "ok = [D]\nfor name in ('float8_e4m3fn',):\n    ok.append(getattr(torch, name))\n",
            False,
            id="literal-then-ocp-by-name",
        ),
        pytest.param(
            "ok = [D]\nother = []\nfor name in ('float8_e4m3fnuz',):\n    other.append(getattr(torch, name))\n",
            False,
            id="fnuz-by-name-into-another-list",
        ),
        pytest.param("ok = [D]\nok.append(torch.float8_e4m3fnuz)\n", True, id="literal-then-fnuz"),
        pytest.param(
            "def make(dtype):\n    return dtype\nq8 = make(D)\nq8_fnuz = make(torch.float8_e4m3fnuz)\n",
            True,
            id="registry-defined-by-one-def",
        ),
        pytest.param(
            "def make(dtype):\n    return dtype\nq8 = make(D)\nq8_fnuz = other(torch.float8_e4m3fnuz)\n",
            False,
            id="fnuz-defined-by-another-def",
        ),
        pytest.param("q8 = torch.finfo(D)\nq8_fnuz = torch.finfo(torch.float8_e4m3fnuz)\n", False, id="not-own-def"),
        pytest.param(
            "def make(dtype, n=1):\n    return dtype\nq8 = make(D, 2)\nq8_fnuz = make(torch.float8_e4m3fnuz, 2)\n",
            False,
            id="more-than-the-dtype",
        ),
    ],
)
def test_added_beside_fnuz(code: str, both: bool) -> None:
    """An OCP dtype added to a collection that also gets the FNUZ dtype: the collection lists both formats."""
    snippet = parse(
        "import torch\ndef accepted():\n" + textwrap.indent(code.replace("D", "torch.float8_e4m3fn"), "    ")
    )
    node = snippet.node("torch.float8_e4m3fn", ast.Attribute)
    assert fp8.added_beside_fnuz(snippet.ctx, node) is both


_CONVERTER = """
import torch
from safetensors.torch import save_file
def convert(state_dict, path):
    out = {k: v.cuda().to(torch.float8_e4m3fn) for k, v in state_dict.items()}
    EXTRA
    save_file(out, path)
if __name__ == "__main__":
    convert(torch.load("in.pt"), "out.safetensors")
"""
_UPCASTING = """
import torch
def upcast(weight, dtype):
    return weight.to(dtype)
class Fp8CastLinear(torch.nn.Linear):
    def forward(self, x):
        FORWARD
def to_fp8(layer):
    layer.weight = torch.nn.Parameter(torch.empty(layer.weight.shape, dtype=torch.float8_e4m3fn))
"""
_APPLYING = """
import torch
class Fp8StorageMethod:
    def create_weights(self, layer, rows, cols):
        layer.weight = torch.nn.Parameter(torch.empty(rows, cols, dtype=torch.float8_e4m3fn))
    def apply(self, layer, x, bias=None):
        APPLY
"""


@pytest.mark.parametrize(
    ("code", "stored"),
    [
        pytest.param(_CONVERTER.replace("EXTRA", "pass"), True, id="checkpoint-writing-script"),
        pytest.param(_CONVERTER.replace("EXTRA", "y = torch._scaled_mm(a, b)"), False, id="script-with-fp8-matmul"),
        pytest.param(
            _CONVERTER.replace("EXTRA", "pass").replace("save_file(out, path)", "run(out)"), False, id="no-write"
        ),
        pytest.param(_CONVERTER.replace("EXTRA", "pass").split("if __name__")[0], False, id="not-a-script"),
        pytest.param(
            _CONVERTER.replace("EXTRA", "pass").split("if __name__")[0]
            + "args = argparse.ArgumentParser().parse_args()\nconvert(torch.load(args.src), args.dst)\n",
            True,
            id="script-reading-its-command-line",
        ),
        pytest.param(
            _CONVERTER.replace("EXTRA", "pass").split("if __name__")[0]
            + "def main():\n    args = argparse.ArgumentParser().parse_args()\n",
            False,
            id="command-line-read-in-a-def",
        ),
        pytest.param(
            _UPCASTING.replace("FORWARD", "return F.linear(x, upcast(self.weight, x.dtype))"), True, id="upcast"
        ),
        pytest.param(_UPCASTING.replace("FORWARD", "return F.linear(x, self.weight.to(x.dtype))"), True, id="to-input"),
        pytest.param(
            _UPCASTING.replace("FORWARD", "w = self.weight.to(x.dtype)\n        return fp8_gemm(x, self.weight)"),
            False,
            id="weight-also-used-as-is",
        ),
        pytest.param(
            _UPCASTING.replace("FORWARD", "return F.linear(x, self.weight.float())"), False, id="not-to-input"
        ),
        pytest.param(
            _UPCASTING.replace(
                "FORWARD",
                "w = self.weight.detach()\n        w = w.to(dtype=self.compute_dtype if self.compute_dtype else x.dtype)"
                "\n        return F.linear(x, w)",
            ),
            True,
            id="local-rebound-to-its-cast",
        ),
        pytest.param(
            _UPCASTING.replace(
                "FORWARD",
                "w = self.weight.detach()\n        y = fp8_op(x, w)\n        w = w.to(x.dtype)\n        return y",
            ),
            False,
            id="local-used-before-its-cast",
        ),
        pytest.param(
            _UPCASTING.replace(
                "FORWARD",
                "w = self.weight\n        w = w.to(self.fp8_dtype if fast else self.qdtype)\n        return w",
            ),
            False,
            id="cast-to-no-input-dtype",
        ),
        pytest.param(
            _APPLYING.replace(
                "APPLY",
                "w = layer.weight\n        out: torch.dtype = w.output_dtype\n"
                "        return F.linear(x.to(dtype=out), w.to(dtype=out) * layer.scale, bias)",
            ),
            True,
            id="apply-casts-weight-and-input-alike",
        ),
        pytest.param(
            _APPLYING.replace("APPLY", "return F.linear(x, layer.weight.to(x.dtype), bias)"), True, id="apply-to-input"
        ),
        pytest.param(
            _APPLYING.replace("APPLY", "w = layer.weight\n        return fp8_op(x, w, w.output_dtype)"),
            False,
            id="apply-weight-as-stored",
        ),
        pytest.param(
            _APPLYING.replace("APPLY", "q = torch.float8_e4m3fn\n        return fp8_op(x.to(q), layer.weight.to(q))"),
            False,
            id="apply-input-quantized-to-fp8",
        ),
        pytest.param(
            _APPLYING.replace("APPLY", "return fp8_op(x.to(self.fp8_dtype), layer.weight.to(self.fp8_dtype))"),
            False,
            id="apply-cast-to-no-name",
        ),
        pytest.param(
            _APPLYING.replace("def apply(self, layer, x", "def run(self, layer, x").replace(
                "APPLY", "return F.linear(x, layer.weight.to(x.dtype), bias)"
            ),
            False,
            id="not-a-linear-method",
        ),
    ],
)
def test_fp8_only_stored(code: str, stored: bool) -> None:
    """A file whose FP8 tensors are written to checkpoints, or are weights upcast to the input's dtype, and which
    multiplies no matrices in FP8."""
    snippet = parse(code)
    assert fp8.fp8_only_stored(snippet.ctx) is stored


def test_a_test_saving_a_checkpoint_is_no_converter() -> None:
    """A test run as a script that saves a quantized model tests that model: its FP8 is compute, not a file format."""
    snippet = parse(_CONVERTER.replace("EXTRA", "pass"), path="tests/test_quantized_save.py")
    assert fp8.fp8_only_stored(snippet.ctx) is False


_Q8_LINEAR = """
import torch
try:
    from q8_kernels.functional.linear import fp8_linear
except ImportError:
    fp8_linear = None
class Q8Linear(torch.nn.Module):
    def __init__(self, n, k):
        self.register_buffer("weight", torch.empty((n, k), dtype=D))
    def forward(self, x):
        FORWARD
"""


@pytest.mark.parametrize(
    ("forward", "nvidia_only"),
    [
        pytest.param("q, s = quant(x)\n        return fp8_linear(q, self.weight, s)", True, id="q8-kernels"),
        pytest.param("torch.ops._C.cutlass_scaled_mm(out, x, self.weight)", True, id="cutlass-operator"),
        pytest.param("torch.ops._C.scaled_mm(out, x, self.weight)", False, id="other-operator"),
        pytest.param(
            "if torch.version.hip:\n            return x\n        return fp8_linear(x, self.weight)",
            False,
            id="returns-first",
        ),
        pytest.param("return fp8_linear(x, self.weight) if fp8_linear else x", False, id="only-if-installed"),
        pytest.param("return torch._scaled_mm(x, self.weight)", False, id="portable"),
    ],
)
def test_made_for_nvidia_only_forward(forward: str, nvidia_only: bool) -> None:
    """FP8 weights a module makes in `__init__` for a `forward` that first calls a package with no ROCm build."""
    snippet = parse(_Q8_LINEAR.replace("FORWARD", forward))
    assert fp8.made_for_nvidia_only_forward(snippet.ctx, snippet.node("D", ast.Name)) is nvidia_only


@pytest.mark.parametrize(
    ("body", "dead"),
    [
        pytest.param("dtype = D\ncheck(q)\n", True, id="never-read"),
        pytest.param("dtype = D\n# q.view(dtype)\nreturn q\n", True, id="read-only-in-a-comment"),
        pytest.param("if q:\n    dtype = D\nelse:\n    check(dtype)\n", True, id="read-in-the-other-branch"),
        pytest.param("check(dtype)\ndtype = D\n", True, id="read-before"),
        pytest.param("dtype = D\nreturn q.view(dtype)\n", False, id="read-later"),
        pytest.param("if q:\n    dtype = D\ncheck(dtype)\n", False, id="read-after-the-branch"),
        pytest.param("for x in q:\n    check(dtype)\n    dtype = D\n", False, id="read-in-the-next-pass"),
        pytest.param("f = lambda: dtype\ndtype = D\nreturn f()\n", False, id="read-by-a-lambda-called-later"),
        pytest.param("dtype = D\nreturn locals()\n", False, id="locals"),
    ],
)
def test_never_read(body: str, dead: bool) -> None:
    """An FP8 dtype assigned to a def's variable nothing reads afterwards makes no tensor."""
    snippet = parse("import torch\ndef check_cache(q, dtype):\n" + textwrap.indent(body, "    "))
    assert fp8.never_read(snippet.ctx, snippet.node("D", ast.Name)) is dead


def test_a_module_variable_may_be_read_elsewhere() -> None:
    snippet = parse("import torch\nFP8 = D\n")
    assert not fp8.never_read(snippet.ctx, snippet.node("D", ast.Name))


@pytest.mark.parametrize(
    ("body", "fake"),
    [
        pytest.param("return Float8FakeQuantizeConfig(dtype=D)\n", True, id="keyword"),
        pytest.param(
            "dt = None\nif fp8:\n    dt = D\nkwargs = {'group_size': 32}\nif dt is not None:\n"
            "    kwargs['activation_dtype'] = dt\nreturn Int4WeightFakeQuantizeConfig(**kwargs)\n",
            True,
            id="through-a-keyword-dict",
        ),
        pytest.param("return fake_quantize_fp8(x, out_dtype=D)\n", True, id="op"),
        pytest.param("return Float8FakeQuantizeConfig(granularity=D)\n", False, id="not-a-dtype-keyword"),
        pytest.param("return Float8QuantizeConfig(dtype=D)\n", False, id="real-quantization"),
        pytest.param(
            "kwargs = {}\nkwargs['dtype'] = D\nquantize_(model, **kwargs)\nreturn FakeQuantizeConfig(**kwargs)\n",
            False,
            id="dict-also-unpacked-elsewhere",
        ),
        pytest.param("dt = D\nif dt is not None:\n    pass\n", False, id="only-compared"),
        pytest.param("dt = D\ncfg = FakeQuantizeConfig(dtype=dt)\nreturn x.to(dt)\n", False, id="also-cast"),
    ],
)
def test_fake_quantized(body: str, fake: bool) -> None:
    """An FP8 dtype only configuring fake quantizations (QAT rounds to it and back in the compute dtype)."""
    snippet = parse("import torch\ndef qat_config(x, fp8, model):\n" + textwrap.indent(body, "    "))
    assert fp8.fake_quantized(snippet.ctx, snippet.node("D", ast.Name)) is fake


@pytest.mark.parametrize(
    ("body", "exported"),
    [
        pytest.param("q = w.to(D)\nreturn {'': q.reshape(n, k).cpu()}\n", True, id="local-moved-to-cpu"),
        pytest.param("return {'': w.to(D).contiguous().cpu()}\n", True, id="moved-at-once"),
        pytest.param("q = w.to(D)\nreturn {'': q.cpu(), 'raw': q}\n", False, id="also-kept-on-the-gpu"),
        pytest.param("q = w.to(D)\nreturn (q * 2).cpu()\n", False, id="computed-with-first"),
        pytest.param("q = w.to(D).cpu()\nreturn q.cuda()\n", False, id="moved-back"),
    ],
)
def test_exported_to_cpu(body: str, exported: bool) -> None:
    """FP8 quantized for a checkpoint and moved to the CPU, in a file writing checkpoints and multiplying no matrices."""
    code = "import torch\nfrom safetensors.torch import save_file\ndef requant(w, n, k):\n"
    snippet = parse(code + textwrap.indent(body, "    ") + "def write(t, path):\n    save_file(t, path)\n")
    assert fp8.exported_to_cpu(snippet.ctx, snippet.node("D", ast.Name)) is exported


@pytest.mark.parametrize(
    ("tail", "exported"),
    [
        pytest.param("", False, id="no-checkpoint-written"),
        pytest.param("save_file(t, path)\ny = torch.mm(a, b)\n", False, id="multiplies-matrices"),
    ],
)
def test_exported_to_cpu_needs_a_checkpoint_writer_without_gemms(tail: str, exported: bool) -> None:
    code = "import torch\nfrom safetensors.torch import save_file\ndef requant(w):\n    return w.to(D).cpu()\n"
    snippet = parse(code + "def write(t, path, a, b):\n" + textwrap.indent(tail or "pass\n", "    "))
    assert fp8.exported_to_cpu(snippet.ctx, snippet.node("D", ast.Name)) is exported


_FP8_TEST = """import torch
from {module} import {callee}
def test_split():
    a = torch.rand(16, dtype=torch.bfloat16)
    scale = {callee}(a, torch.float8_e4m3fn)
"""


@pytest.mark.parametrize(
    ("module", "callee", "reported"),
    [
        pytest.param("fastlib.float8.scaling", "tensor_to_scale", [5], id="fp8-module"),
        pytest.param("fastlib.fp8", "Float8Tensor", [5], id="fp8-package"),
        pytest.param("fastlib.utils", "tensor_to_scale", [], id="other-module"),
    ],
)
def test_cpu_test_data_handed_to_an_fp8_library(tmp_path: Path, module: str, callee: str, reported: list[int]) -> None:
    """A test keeping its tensors on the CPU is still reported where it hands the dtype to a module of FP8 support
    (torchao's `torchao.float8`): the library's tensor types and layers take it into their FP8 matmuls."""
    files = {
        "fastlib/__init__.py": "",
        "fastlib/" + module.split(".", 1)[1].replace(".", "/") + ".py": f"def {callee}(x, dtype):\n    return x\n",
        "tests/test_split.py": _FP8_TEST.format(module=module, callee=callee),
    }
    root = write_tree(tmp_path, files)
    report = Engine().check_path(root / "tests/test_split.py", Settings(root=root))
    assert [d.location.line for d in report.diagnostics if d.code == "ROC107"] == reported


_DECODER = """import torch
def decode(raw, code, shape, b):
    if code == "F8_E4M3" and hasattr(torch, "float8_e4m3fn"):
        return raw.view(torch.float8_e4m3fn).reshape(shape)
    if code == "F8_E5M2":
        return raw.view(torch.float8_e5m2) * b
"""


@pytest.mark.parametrize(
    ("tail", "reported"),
    [
        pytest.param("", [], id="decoder"),
        pytest.param("def gemm(a, b):\n    return torch._scaled_mm(a, b)\n", [4], id="beside-a-gemm"),
    ],
)
def test_a_decoders_reinterpretation(tmp_path: Path, tail: str, reported: list[int]) -> None:
    """Stored bytes viewed as the dtype a type code names are data in the file's format; arithmetic on the view is
    computing with it (still reported), and a file multiplying matrices may compute with either."""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/store.py": _DECODER + tail})
    report = Engine().check_path(root / "pkg/store.py", Settings(root=root))
    assert [d.location.line for d in report.diagnostics if d.code == "ROC107"] == [*reported, 6]
