"""More examples of ROC107 fp8-dtype than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): mentions that are no value, and code written for ROCm with and without a per-arch
choice of the format in its file."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc107_fp8_dtype import Fp8Dtype

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # A support query (uses.is_inspected: a call named for whether its arguments are supported) asks about the
    # dtype and makes nothing in it.
    Valid(
        """
        import torch
        def device_supports_native_fp8(device):
            return device_supports_dtype(device, torch.float8_e4m3fn, require_validation=False)
        def test_support():
            assert is_dtype_supported(torch.float8_e5m2) is True
        """,
    ),
    # Modules converted in place to store their weights in FP8 (fp8.modules_converted_in_place): a dropped `.to`
    # result is a module's, and PyTorch's layers multiply no FP8 weights.
    Valid(
        """
        import torch
        def load(args, unet, weight_dtype):
            unet_dtype = weight_dtype
            if args.fp8_base:
                unet_dtype = torch.float8_e4m3fn
            logger.info(f"U-Net dtype {unet_dtype}")
            unet.to(dtype=unet_dtype)
            unet.to(args.device, dtype=unet_dtype if args.cast else None)
        """,
    ),
    # Weights downcast where a def patched in as the layer's forward upcasts them to the input's dtype first
    # (fp8._patched_forward): FP8 only stores them.
    Valid(
        """
        import torch
        def downcast(key, value):
            return key, value.to(dtype=torch.float8_e4m3fn)
        def replace_forward(layer):
            def new_forward(*args, **kwargs):
                x = args[0]
                return torch.nn.functional.linear(x, upcast(layer.weight, x.dtype), None)
            layer.forward = new_forward
        """,
    ),
    # A default the file overrides on MI300 (torchao's Float8TypeConfig).
    Valid(
        """
        import torch
        class Float8TypeConfig:
            e4m3_dtype = torch.float8_e4m3fn
            def __post_init__(self):
                if torch.version.hip and is_MI300():
                    self.e4m3_dtype = torch.float8_e4m3fnuz
        """,
    ),
    # Names bound, not read: the fallback of a failed import (fp8.ocp_fp8_dtype).
    Valid(
        """
        try:
            from ml_dtypes import float8_e4m3fn, float8_e5m2
        except ImportError:
            float8_e4m3fn = float8_e5m2 = None
        """,
    ),
    # A decoder translating a record's dtype name in place, and one reinterpreting stored bytes as the dtype a
    # stored name says (fp8_data.named_by_text): the data's format is the file's.
    Valid(
        """
        import ml_dtypes, torch
        def load(rec, raw):
            dtype = rec["dtype"]
            if dtype == "float8_e4m3fn":
                if ml_dtypes is not None:
                    dtype = ml_dtypes.float8_e4m3fn
            return np.frombuffer(raw, dtype=dtype)
        def to_numpy(param):
            dtype = str(param.dtype)
            if dtype == "torch.bfloat16":
                param = param.view(torch.float16)
            elif dtype == "torch.float8_e4m3fn":
                param = param.view(torch.uint8).cpu().numpy().view(ml_dtypes.float8_e4m3fn)
            return param
        """,
    ),
    # An activation only kept in FP8 for backward, cast back there first (fp8.saved_and_cast_back).
    Valid(
        """
        import torch
        class SwiGLU(torch.autograd.Function):
            def forward(ctx, x):
                ctx.save_for_backward(x.to(torch.float8_e4m3fn))
                return swiglu(x)
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return swiglu_back(grad, x.to(torch.bfloat16))
        """,
    ),
    # Another library's dtypes translated to torch's (fp8.in_format_dtype_table): that library chose the format.
    Valid(
        """
        import torch
        from mylib.ir import dtypes
        def dtype_to_torch(dtype):
            mapping = {dtypes.float32: torch.float32, dtypes.float8_e4m3: torch.float8_e4m3fn, dtypes.int8: torch.int8}
            return mapping[dtype]
        """,
    ),
    # A reference encoding read back at once (fp8_data.read_back): converted elementwise, never computed with.
    Valid(
        """
        import torch
        def test_float_to_fp8(x):
            assert encode(x) == torch.tensor(x, dtype=torch.float8_e4m3fn).view(torch.uint8).item()
            assert decode(x) == torch.tensor(x, dtype=torch.uint8).view(torch.float8_e5m2).float().item()
        """,
        path="test/test_dtype.py",
    ),
    # A membership test's collection lists every format: OCP as a literal, FNUZ added by name where torch has it.
    Valid(
        """
        import torch
        def float8_types():
            dtypes = [torch.float8_e4m3fn, torch.float8_e5m2]
            for name in ("float8_e4m3fnuz", "float8_e5m2fnuz"):
                value = getattr(torch, name, None)
                if value is not None:
                    dtypes.append(value)
            return tuple(dtypes)
        def is_fp8(tensor):
            return tensor.dtype in float8_types()
        """,
    ),
    # A registry a def of the file fills with every format, FNUZ too (fp8.added_beside_fnuz): users pick from it.
    Valid(
        """
        import torch
        def qfloat(dtype):
            return QType(dtype, torch.finfo(dtype).max)
        qfloat8_e4m3fn = qfloat(torch.float8_e4m3fn)
        qfloat8_e4m3fnuz = qfloat(torch.float8_e4m3fnuz)
        qfloat8_e5m2 = qfloat(torch.float8_e5m2)
        """,
    ),
    # The FNUZ arm chosen by a flag a vendor test sets: a choice per vendor.
    Valid(
        """
        import torch
        use_fnuz_dtype = torch.version.hip is not None
        e4m3_dtype = torch.float8_e4m3fn if not use_fnuz_dtype else torch.float8_e4m3fnuz
        """,
    ),
    # A helper that is a ROCm test by what it returns: every AMD GPU's gcnArchName starts with "gfx".
    Valid(
        """
        import torch
        def amd_gpu():
            return torch.cuda.get_device_properties(0).gcnArchName.startswith("gfx")
        FP8 = torch.bfloat16 if amd_gpu() else torch.float8_e4m3fn
        """,
    ),
    # MX code (a def named for an MX format) in code written for ROCm: OCP by the MX spec, run on gfx950.
    Valid(
        """
        import flydsl.compiler as flyc
        import torch
        def dynamic_mxfp8_quant(x, quant_dtype=torch.float8_e4m3fn):
            return x.to(quant_dtype)
        """,
    ),
    # The same MX def in any code: the MX spec fixes OCP elements (on MI300, which has no MX, the format is the
    # hazard, and FNUZ would break it); so is a def whose own names or strings say MX.
    Valid(
        """
        import torch
        MXFP8_BLOCK_SIZE = 32
        def dynamic_mxfp8_quant(x, quant_dtype=torch.float8_e4m3fn):
            return x.to(quant_dtype)
        def quantize(x):
            assert x.shape[-1] % MXFP8_BLOCK_SIZE == 0
            return torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
        def quant_x(x):
            \"\"\"Emits an MXFP8-quantized X with e8m0 scales.\"\"\"
            return x.to(torch.float8_e4m3fn)
        def forward(x, input_dtype):
            if input_dtype in [DType.MXFP8]:
                x, scales = scale_activations(x, w_dtype=torch.float8_e4m3fn)
            return x
        """,
    ),
    # MX code by what its def or class says (an E8M0 scale, "MXFP8" in a docstring), or at module level its module's
    # docstring, in code written for ROCm.
    Valid(
        """
        \"\"\"Static init for FP8 GEMM benchmarks with E8M0 block scales.\"\"\"
        import flydsl.compiler as flyc
        import torch
        FP8_E4M3 = torch.float8_e4m3fn
        def quant_x(x, quant_dtype=None):
            \"\"\"Emits an MXFP8-quantized X.\"\"\"
            return x.to(quant_dtype or torch.float8_e4m3fn)
        def reference(x, x_scales):
            return x.view(torch.float8_e4m3fn).float() * e8m0_to_f32(x_scales)
        class MegaMoE:
            def __init__(self):
                self.dispatch_dtype = torch.float8_e4m3fn
            def quant(self, x):
                return per_1x32_mx_quant(x)
        """,
    ),
    # A module-level table of buffer dtypes in code written for ROCm, read only by defs naming an MX format.
    Valid(
        """
        import flydsl.expr as fx
        import torch
        _BUFFER_DTYPES = {"pool": torch.bfloat16, "pool_fp8": torch.float8_e4m3fn, "pool_scale": torch.uint8}
        def buffer_spec(offsets, use_mxfp8=False):
            return {name: (offset, _BUFFER_DTYPES[name]) for name, offset in offsets.items()}
        """,
    ),
    # Code written for ROCm (a module importing the ROCm-only FlyDSL) that picks the format per gfx arch itself.
    Valid(
        """
        import flydsl.compiler as flyc
        import torch
        def kv_dtype(arch):
            return torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn
        def mx_transport(x):
            return x.to(torch.float8_e4m3fn)
        """,
    ),
    # The token in a docstring, a comment and log messages.
    Valid(
        """
        \"\"\"Quantize to torch.float8_e4m3fn.\"\"\"
        import logging, torch
        logger = logging.getLogger(__name__)
        # torch.float8_e4m3fn on H100
        logging.info("using torch.float8_e4m3fn")
        logger.warning("casting to %s", torch.float8_e4m3fn)
        print(f"fp8 dtype: {torch.float8_e5m2}")
        """,
    ),
    # A test's helper only called from tests that keep every tensor on the CPU (a checkpoint in the OCP format), a
    # test method whose class's other tests use the GPU, and a dtype asserted with unittest.
    Valid(
        """
        import unittest, torch
        def block_scales(w, block):
            return (w.abs().amax(-1) / 6.0).to(torch.float8_e4m3fn)
        def test_scales():
            assert block_scales(torch.randn(4, 16), 16).shape == (4,)
        class TestLoad(unittest.TestCase):
            def test_on_gpu(self):
                x = torch.ones(2, device="cuda")
            def test_cpu_checkpoint(self):
                w = torch.randn(4, 4).to(torch.float8_e4m3fn)
                self.assertEqual(w.dtype, torch.float8_e4m3fn)
        """,
        path="tests/test_checkpoint.py",
    ),
    # The e4m3 block scales of NVFP4 (E2M1 elements): OCP by the format, decoded in software where FP4 is missing.
    Valid(
        """
        import torch
        def nvfp4_quantize(x, per_tensor_scale):
            blocks = x.float().reshape(-1, 16)
            scale_e4m3 = (blocks.abs().amax(-1) / 6.0 / per_tensor_scale).to(torch.float8_e4m3fn)
            return pack_e2m1(blocks, scale_e4m3), scale_e4m3
        """,
    ),
    # A test module skipped on every CDNA GPU (where test suites run on ROCm): Blackwell's FP8 kernels' tests.
    Valid(
        """
        import pytest, torch
        pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() < (10, 0), reason="needs sm100")
        def test_fp8_dx():
            w = torch.zeros(4, 4, dtype=torch.float8_e4m3fn, device="cuda")
        """,
        path="tests/test_fp8_dx.py",
    ),
    # A lookup's default in a set of storage dtypes only tested for membership.
    Valid(
        """
        import torch
        QUANT_DTYPES = {torch.uint8, getattr(torch, "float8_e5m2", torch.float8_e4m3fn)}
        """,
    ),
    # `and` short-circuit on a NVIDIA-only test.
    Valid(
        """
        import torch
        w8 = torch.version.cuda is not None and w.to(torch.float8_e5m2)
        """,
    ),
    # A script writing checkpoints, multiplying no matrices (fp8.fp8_only_stored): the OCP format of its files.
    Valid(
        """
        import torch
        from safetensors.torch import save_file
        def convert(state_dict, path):
            save_file({k: v.cuda().to(torch.float8_e4m3fn) for k, v in state_dict.items()}, path)
        if __name__ == "__main__":
            convert(torch.load("in.pt"), "out.safetensors")
        """,
    ),
    # Weights stored in FP8 by a module whose forward upcasts them to the input's dtype (fp8.fp8_only_stored).
    Valid(
        """
        import torch
        class Fp8CastLinear(torch.nn.Linear):
            def forward(self, x):
                return torch.nn.functional.linear(x, self.weight.to(x.dtype))
        def to_fp8(layer):
            layer.__class__ = Fp8CastLinear
            layer.weight = torch.nn.Parameter(layer.weight.to(torch.float8_e4m3fn))
        """,
    ),
    # The same through a local the next statement rebinds to its cast, to the module's compute dtype or the input's.
    Valid(
        """
        import torch
        class LinearFp8(torch.nn.Linear):
            def __init__(self, *args):
                self.fp8_dtype = torch.float8_e4m3fn
            def forward(self, x):
                weight = self.weight.detach()
                weight = weight.to(dtype=self.compute_dtype if self.compute_dtype is not None else x.dtype)
                return torch.nn.functional.linear(x, weight, self.bias)
        """,
    ),
    # FP8 weights of a module whose forward first calls a package with no ROCm build (fp8.made_for_nvidia_only_forward).
    Valid(
        """
        import torch
        try:
            from q8_kernels.functional.linear import fp8_linear
        except ImportError:
            fp8_linear = None
        class Q8Linear(torch.nn.Module):
            def __init__(self, n, k):
                self.register_buffer("weight", torch.empty((n, k), dtype=torch.float8_e4m3fn))
            def forward(self, x):
                return fp8_linear(x, self.weight)
        """,
    ),
    # A quantized linear method's `apply(self, layer, x)` casting the FP8 weight to the dtype it casts the input to
    # (fp8.fp8_only_stored): a checkpoint's storage format, dequantized before an ordinary linear.
    Valid(
        """
        import torch
        from torch import nn
        class Fp8StorageLinearMethod:
            def create_weights(self, layer, rows, cols):
                layer.register_parameter("weight", nn.Parameter(torch.empty(rows, cols, dtype=torch.float8_e4m3fn)))
            def apply(self, layer, x, bias=None):
                weight = layer.weight
                out_dtype: torch.dtype = weight.output_dtype
                dequantized = weight.to(dtype=out_dtype) * layer.weight_scale.to(out_dtype)
                return nn.functional.linear(x.to(dtype=out_dtype), dequantized, bias)
        """,
    ),
    # A variable left behind when the code reading it was commented out (fp8.never_read): it makes no tensor.
    Valid(
        """
        import torch
        def test_reshape_and_cache(kv_cache, ref_kv_cache, kv_cache_dtype, dtype):
            if kv_cache_dtype == "fp8":
                dtype = torch.float8_e4m3fn
                # assert_close(kv_cache.view(dtype), ref_kv_cache.view(dtype))
                torch.testing.assert_close(kv_cache, ref_kv_cache)
            else:
                assert_close(kv_cache, ref_kv_cache, dtype)
        """,
        path="tests/test_cache.py",
    ),
    # Fake quantization for QAT (fp8.fake_quantized): rounded to FP8 and back, computed in the compute dtype.
    Valid(
        """
        import torch
        def qat_config(weight_dtype, activation_dtype, group_size):
            activation_dt = None
            if activation_dtype == "fp8":
                activation_dt = torch.float8_e4m3fn
            kwargs = {"group_size": group_size}
            if activation_dt is not None:
                kwargs["activation_dtype"] = activation_dt
            if weight_dtype == "int4":
                return Int4WeightFakeQuantizeConfig(**kwargs)
            return Float8FakeQuantizeConfig(dtype=torch.float8_e4m3fn)
        """,
    ),
    # Re-quantized for a checkpoint and moved to the CPU in a file writing checkpoints (fp8.exported_to_cpu).
    Valid(
        """
        import torch
        from safetensors.torch import save_file
        def requantize(w, scale_inv):
            q = (w / scale_inv).clamp_(-448, 448).to(torch.float8_e4m3fn)
            return {"": q.reshape(w.shape).cpu(), "_scale_inv": scale_inv.cpu()}
        def write_shard(tensors, path):
            save_file(tensors, path)
        """,
    ),
    # A UI's option table: labels spelling the dtype for settings that hold it (fp8_data.named_by_text).
    Valid(
        """
        import torch
        storage_dtype_options = {
            "Automatic": (None, False),
            "float8-e4m3fn (fp16 LoRA)": (torch.float8_e4m3fn, True),
            "float8-e5m2": (torch.float8_e5m2, False),
        }
        """,
    ),
    # Definitions of the format, no choice of it (fp8_definitions.py): integer dtype codes a native backend passes,
    # a type system's entry under the dtype's own name, a class of constants describing the format it holds.
    Valid(
        """
        import ml_dtypes, numpy, torch
        DTYPE_CODE_TO_DTYPE = {0: torch.float32, 2: torch.bfloat16, 5: torch.float8_e4m3fn, 6: torch.float8_e5m2}
        float8_e4m3fn = typeclass(ml_dtypes.float8_e4m3fn)
        float8_e5m2 = typeclass(ml_dtypes.float8_e5m2)
        class FP8_E4M3_DATA(FloatArgs):
            \"\"\"The E4M3 format.\"\"\"
            exponent = 4
            mantissa = 3
            max = torch.finfo(torch.float8_e4m3fn).max
            dtype = torch.float8_e4m3fn
        """,
    ),
    # Tensors on the meta device: a shape and a dtype, no data (fp8_definitions.on_meta_device).
    Valid(
        """
        import torch
        def test_validate():
            with torch.device("meta"):
                tensors = {"w": torch.empty(256, 256, dtype=torch.float8_e4m3fn)}
            scale = torch.empty(4, dtype=torch.float8_e4m3fn, device="meta")
        """,
        path="tests/test_convert.py",
    ),
    # NVFP4 block scales in a dtype a setting may override (`x or <dtype>`, fp8._dtype_variable_reads).
    Valid(
        """
        import torch
        class NVFP4Compressor:
            def _compress_scale(cls, scale, weights):
                scale_dtype = weights.scale_dtype or torch.float8_e4m3fn
                return scale.to(scale_dtype)
        """,
    ),
)

INVALID = (
    # A call named for what is supported, not asking whether it is, may give the dtype to compute in.
    Invalid(
        """
        import torch
        def quantize(x):
            return x.to(supported_dtype(torch.float8_e4m3fn))
        """,
        expect=("3:33-3:52",),
    ),
    # The same dtype also kept with a tensor's cast, or handed to another def; a dropped conversion in a file
    # multiplying matrices (a custom model may compute with its FP8 weights).
    Invalid(
        """
        import torch
        def load(args, unet, x):
            unet_dtype = torch.float8_e4m3fn
            unet.to(dtype=unet_dtype)
            return x.to(unet_dtype)
        def load_te(te):
            te_dtype = torch.float8_e5m2
            te.to(te_dtype)
            prepare(te, te_dtype)
        """,
        expect=("3:18-3:37", "7:16-7:33"),
    ),
    Invalid(
        """
        import torch
        def load(model, a, b):
            model.to(dtype=torch.float8_e4m3fn)
            return torch._scaled_mm(a, b)
        """,
        expect=("3:20-3:39",),
    ),
    # A patched forward that also reads the FP8 weight as it is: an operand stored and used in FP8.
    Invalid(
        """
        import torch
        def downcast(key, value):
            return key, value.to(dtype=torch.float8_e4m3fn)
        def replace_forward(layer):
            def new_forward(*args, **kwargs):
                x = args[0]
                y = fp8_linear(x, layer.weight)
                return y + torch.nn.functional.linear(x, upcast(layer.weight, x.dtype), None)
            layer.forward = new_forward
        """,
        expect=("3:32-3:51",),
    ),
    # A decoder's branch that converts (`.to`), or assigns another name than the one tested: values made in the
    # format, then used; and the same reinterpretation in a file multiplying matrices.
    Invalid(
        """
        import torch
        def load(rec, raw):
            if rec["dtype"] == "float8_e4m3fn":
                w = raw.to(torch.float8_e4m3fn)
            if rec["dtype"] == "float8_e5m2":
                qdtype = torch.float8_e5m2
            return w, qdtype
        """,
        expect=("4:20-4:39", "6:18-6:35"),
    ),
    Invalid(
        """
        import torch
        def gemm(raw, code, b):
            if code == "F8_E4M3":
                return torch._scaled_mm(raw.view(torch.float8_e4m3fn), b)
        """,
        expect=("4:42-4:61",),
    ),
    # An FP8 library's call given a CPU tensor made in the dtype (fp8.handed_to_fp8_library).
    Invalid(
        """
        import torch
        from torchao.float8.float8_tensor import Float8Tensor
        def test_copy():
            t = Float8Tensor(torch.empty(16, dtype=torch.float8_e4m3fn), scale, torch.bfloat16)
        """,
        path="test/test_base.py",
        expect=("4:44-4:63",),
    ),
    # `torch.cuda.is_available()` is true on ROCm: not a gate.
    Invalid("import torch\nif torch.cuda.is_available():\n    FP8 = torch.float8_e4m3fn\n", expect=("3:11-3:30",)),
    # Beside a checkpoint writer, FP8 also multiplied or moved back to the GPU.
    Invalid(
        """
        import torch
        from safetensors.torch import save_file
        def requantize(w, scale_inv):
            q = (w / scale_inv).to(torch.float8_e4m3fn)
            return {"": q.cpu(), "check": torch._scaled_mm(q, q.t(), scale_inv, scale_inv)}
        """,
        expect=("4:28-4:47",),
    ),
    Invalid(
        """
        import torch
        from safetensors.torch import save_file
        def reload(w):
            q = w.to(torch.float8_e4m3fn).cpu()
            save_file({"w": q}, "w.safetensors")
            return q.cuda()
        """,
        expect=("4:14-4:33",),
    ),
    # A variable read later, a dtype both fake-quantized and cast to, a label not spelling the dtype.
    Invalid(
        """
        import torch
        def quantize(x, per_tensor):
            dtype = torch.float8_e4m3fn
            if per_tensor:
                x = x * 2
            return x.to(dtype)
        def qat_and_cast(x):
            dt = torch.float8_e4m3fn
            cfg = Float8FakeQuantizeConfig(dtype=dt)
            return cfg, x.to(dt)
        LOW_BITS = {"low bits": (torch.float8_e5m2, False)}
        """,
        expect=("3:13-3:32", "8:10-8:29", "11:26-11:43"),
    ),
    # The same method shape where the weight reaches a kernel as stored, or the input is quantized to FP8 too.
    Invalid(
        """
        import torch
        class Fp8LinearMethod:
            def create_weights(self, layer, rows, cols):
                layer.weight = torch.empty(rows, cols, dtype=torch.float8_e4m3fn)
            def apply(self, layer, x, bias=None):
                weight = layer.weight
                return fp8_linear(x, weight.to(dtype=x.dtype) if bias is None else weight, bias)
        class Fp8ActivationMethod:
            def create_weights(self, layer, rows, cols):
                layer.weight = torch.empty(rows, cols, dtype=torch.float8_e4m3fn)
            def apply(self, layer, x, bias=None):
                fp8 = torch.float8_e4m3fn
                return fp8_linear(x.to(fp8), layer.weight.to(fp8), bias)
        """,
        expect=("4:54-4:73", "10:54-10:73", "12:15-12:34"),
    ),
    # The same table also read by a def that says nothing of MX: its FP8 may be per-tensor FP8, FNUZ on MI300.
    Invalid(
        """
        import flydsl.expr as fx
        import torch
        _BUFFER_DTYPES = {"pool": torch.bfloat16, "pool_fp8": torch.float8_e4m3fn}
        def buffer_spec(offsets, use_mxfp8=False):
            return {name: (offset, _BUFFER_DTYPES[name]) for name, offset in offsets.items()}
        def quantize(x):
            return x.to(_BUFFER_DTYPES["pool_fp8"])
        """,
        expect=("3:55-3:74",),
    ),
    # Names defined by a callee that is no def of the file, or not from the dtype alone: no registry of formats.
    Invalid(
        """
        import torch
        E4M3 = torch.finfo(torch.float8_e4m3fn)
        E4M3_FNUZ = torch.finfo(torch.float8_e4m3fnuz)
        def qfloat(dtype, name):
            return dtype
        q8 = qfloat(torch.float8_e4m3fn, "fn")
        q8_fnuz = qfloat(torch.float8_e4m3fnuz, "fnuz")
        """,
        expect=("2:20-2:39", "6:13-6:32"),
    ),
    # Keywords of other calls than an MX config's are values.
    Invalid("import torch\nconfig = Float8LinearConfig(weight_dtype=torch.float8_e4m3fn)\n", expect=("2:42-2:61",)),
    # The FNUZ arm behind a setting only ever False (torchao's `config.use_fnuz_dtype`): nothing picks it on MI300.
    Invalid(
        """
        import torch
        use_fnuz_dtype = False
        e4m3_dtype = torch.float8_e4m3fn if not use_fnuz_dtype else torch.float8_e4m3fnuz
        e5m2_dtype = torch.float8_e5m2 if not use_fnuz_dtype else torch.float8_e5m2fnuz
        """,
        expect=("3:14-3:33", "4:14-4:31"),
    ),
    # Made on the CPU, then moved to the GPU (also below, without the blank line).
    Invalid(
        """
        import torch

        def load_weight(layer, weight):
            weight_fp8 = weight.detach().cpu().to(torch.float8_e4m3fn)
            layer.weight = torch.nn.Parameter(weight_fp8.cuda())
        """,
        expect=("4:43-4:62",),
    ),
    # The same test where the module's skip lets MI200/MI300 in (`major >= 9` is true on every CDNA GPU).
    Invalid(
        """
        import pytest, torch
        pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason="needs sm90")
        def test_fp8_dx():
            w = torch.zeros(4, 4, dtype=torch.float8_e4m3fn, device="cuda")
        """,
        path="tests/test_fp8_dx.py",
        expect=("4:33-4:52",),
    ),
    # FP8 data (not its scales) of a file that also handles NVFP4.
    Invalid(
        """
        import torch
        def quantize(x, scale):
            x_fp8 = (x / scale).to(torch.float8_e4m3fn)
            return x_fp8 if x.dtype != torch.float4_e2m1fn_x2 else x
        """,
        path="pkg/quant.py",
        expect=("3:28-3:47",),
    ),
    # The same helper called from a test that uses the GPU.
    Invalid(
        """
        import torch
        def block_scales(w, block):
            return (w.abs().amax(-1) / 6.0).to(torch.float8_e4m3fn)
        def test_scales():
            assert block_scales(torch.randn(4, 16, device="cuda"), 16).shape == (4,)
        """,
        path="tests/test_checkpoint.py",
        expect=("3:40-3:59",),
    ),
    # E8M0 scales alone are no MX: per-token FP8 rounds its scales to powers of two too.
    Invalid(
        """
        import torch
        def per_token_cast(x, use_ue8m0):
            sf = x.abs().amax(dim=-1, keepdim=True) / 448.0
            sf = ceil_to_ue8m0(sf) if use_ue8m0 else sf
            return (x / sf).to(torch.float8_e4m3fn), sf
        """,
        expect=("5:24-5:43",),
    ),
    # A def handling several formats: its MX arm says nothing of the arm beside it.
    Invalid(
        """
        import torch
        def quant_config(kind):
            if kind == "mxfp4":
                return MXQuantizeConfig(block_size=32)
            elif kind == "float8":
                return Float8QuantizeConfig(dtype=torch.float8_e4m3fn)
        """,
        expect=("6:43-6:62",),
    ),
    # Outside code written for ROCm, a class that names MX in another method says nothing of this def.
    Invalid(
        """
        import torch
        class Quantizer:
            def mx_scales(self, x):
                return x.to(torch.float8_e8m0fnu)
            def per_tensor(self, x):
                return x.to(torch.float8_e4m3fn)
        """,
        expect=("6:21-6:40",),
    ),
    # Code written for ROCm whose def and module say nothing of MX (another def's E8M0 scale is no MX of this one).
    Invalid(
        """
        import flydsl.compiler as flyc
        import torch
        def per_token_quant(x):
            return x.to(torch.float8_e4m3fn)
        def scales(n):
            return torch.empty(n, dtype=torch.float8_e8m0fnu)
        """,
        expect=("4:17-4:36",),
    ),
    # An E8M0 layout named only in a comment (of another branch of the def).
    Invalid(
        """
        import flydsl.compiler as flyc
        import torch
        def insert(cache, cache_dtype):
            if cache_dtype == torch.uint8:
                pass  # the UE8M0 paged layout
            else:
                return torch.zeros_like(cache, dtype=torch.float8_e4m3fn)
        """,
        expect=("7:46-7:65",),
    ),
    # The same per-arch file without the ROCm-only import: it may run on NVIDIA and MI300 alike.
    Invalid(
        """
        import torch
        def kv_dtype(arch):
            return torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn
        def transport(x):
            return x.to(torch.float8_e4m3fn)
        """,
        expect=("5:17-5:36",),
    ),
    # Code written for ROCm that never picks the format per arch: OCP FP8 is wrong on MI300 whoever wrote it. A
    # "gfx" in a comment, a docstring or a message is no choice.
    Invalid(
        """
        import mori.shmem as ms
        import torch
        # gfx942 only
        def quantize(x):
            \"\"\"For gfx942.\"\"\"
            print(f"arch={'gfx942' if on_gfx942() else 'gfx950'}")
            return x.to(torch.float8_e4m3fn)
        """,
        expect=("7:17-7:36",),
    ),
    # Not definitions: a quantizer's instance attributes beside the format's widths (its pick), a class whose widths
    # are another format's, a code table mixing in another library, a bare alias, meta tensors a file materialises.
    Invalid(
        """
        import torch
        class FloatQuantizer:
            def __init__(self):
                self.e_bits = 4
                self.m_bits = 3
                self.fp_dtype = torch.float8_e4m3fn
        class FP8_E5M2_DATA:
            exponent = 4
            mantissa = 3
            dtype = torch.float8_e5m2
        CODES = {0: torch.float32, 5: torch.float8_e4m3fn, 7: jnp.float8_e5m2}
        fp8_dtype = typeclass(torch.float8_e4m3fn)
        float8_e4m3fn = torch.float8_e4m3fn
        def init(model):
            w = torch.empty(4, dtype=torch.float8_e4m3fn, device="meta")
            return w.to_empty(device="cuda")
        """,
        expect=("6:25-6:44", "10:13-10:30", "11:31-11:50", "12:23-12:42", "13:17-13:36", "15:30-15:49"),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(Fp8Dtype, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(Fp8Dtype, example) == []
