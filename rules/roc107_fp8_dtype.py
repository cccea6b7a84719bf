"""ROC107 fp8-dtype."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import choose_on_rocm, module_definition, torch_name
from rocmlint.python.fp8 import (
    OCP_NAMES,
    OcpFp8,
    default_overridden_with_fnuz,
    encoding_neutral_use,
    finfo_of,
    mx_code,
    ocp_fp8_dtype,
    picked_per_arch_for_rocm,
    selected_per_arch,
    targets_without_fnuz,
)
from rocmlint.python.frontend import PythonContext
from rocmlint.rule import Invalid, Rule, Valid

# Short-circuits on NVIDIA (no device query there); on ROCm it initialises the GPU at import.
_FNUZ_FLAG, _FNUZ_TEST = (
    "_IS_FNUZ",
    'getattr({torch}.version, "hip", None) is not None and {torch}.cuda.is_available() '
    'and "gfx94" in {torch}.cuda.get_device_properties(0).gcnArchName',
)

# Or made FNUZ; or MX code, OCP by the MX specification.
_PER_ARCH_CHOICES = (selected_per_arch, default_overridden_with_fnuz, picked_per_arch_for_rocm, mx_code)


class Fp8Dtype(Rule):
    """
    ## What it does
    Flags `torch.float8_e4m3fn` and `torch.float8_e5m2` used as a value (a `dtype=` argument,
    `.to(torch.float8_e4m3fn)`, an assignment, a default argument, `torch.finfo(torch.float8_e4m3fn).max`) that is
    not selected per GPU architecture; also looked up by name (`getattr(torch, "float8_e4m3fn", None)`) and the same dtypes of JAX (`jnp.float8_e4m3fn`)
    and ml_dtypes (`ml_dtypes.float8_e5m2`).

    Not flagged: the `fnuz` dtypes; comparisons (`x.dtype == torch.float8_e4m3fn`, `in`, a def's variable only
    compared); `isinstance`; lookup tables (dict keys, subscripts `PEAK_TOPS[torch.float8_e4m3fn]`, sets, tuples and
    lists named `*ALLOWED*`/`*SUPPORTED*`/`*VALID*` or only read with `in`, a format's type codes like `F8_E4M3` or
    another library's dtypes (`dtypes.float8_e4m3`); in a file calling no `*mm`/`*gemm*`/`*matmul*`, tables, decoders
    and switches naming the dtype, `{"float8_e4m3fn": torch.float8_e4m3fn}`, labels `{"float8-e5m2": (..., False)}`, `if
    args.fp8_e4m3fn: return ...`); feature probes (`if getattr(torch, "float8_e5m2", None):`); text (`str()`, `print`,
    logging, f-strings); values read back at once (`.item()`); dtype metadata (`.itemsize`, `torch.finfo(...).bits`); MX
    formats, OCP by their spec (`elem_dtype=`, an MX config's `activation_dtype=`/`weight_dtype=`,
    `MXFPInferenceConfig(...)`, a def or module named `*mxfp8*`/`*_mx_*`, a def whose names or strings say MX or E8M0);
    `storage_dtype=` beside `compute_dtype=` (layerwise casting), a def's variable nothing reads later; QAT's fake
    quantization (`Float8FakeQuantizeConfig(dtype=...)`, `**kwargs`); `weight_dtype=` of `*WeightOnly*`;
    `finfo(torch.float8_e5m2)` (e5m2fnuz's max too); collections and branches that also name `fnuz` or test a `gfx` arch
    (not one behind a flag only ever False), tables given `fnuz` entries later, lists also `.append`ed a `fnuz` dtype; a
    default overridden with `fnuz`; a def that converts to `fnuz` on ROCm; FP8 data made and kept on the CPU (`.cpu()`,
    a test's factory without a device; a test and helpers naming no device but the CPU, no tensor fixture; not handed to
    an FP8 library); tensors on the `meta` device; the format's definitions (an integer dtype code's table, a type
    system's type named as the dtype, a class of constants giving its widths); a name bound, not read (`float8_e4m3fn =
    None` when an import fails); a decoder's `.view(dtype)` of stored bytes, or the dtype name it tests put in its place
    (`if dtype == "float8_e4m3fn": dtype = ...`); NVFP4 block scales (`sc.to(...)` in a file naming FP4, a def's dtype
    variable only making them); an activation kept in FP8 for an autograd `backward` that casts it back first; FP8 only
    stored in a file calling no `*mm`/`*gemm*`/`*matmul*`: a script or module (no test) saving checkpoints (`__main__`;
    or a tensor only moved to the CPU), a `forward` (or a def patched in as one) or a linear method's `apply(self,
    layer, x)` upcasting its weight to the input's (cast) type, modules converted in place (`unet.to(dtype=...)`, the
    result dropped); code after a call into a package with no ROCm build (`deep_gemm`, `torch.ops._C.cutlass_*`),
    weights for a `forward` calling one; ROCm-gated code; nothing if `target-archs` names no gfx94x (gfx950/gfx12 OCP).

    ## What is reported
    OCP FP8 where it may reach FP8 compute on MI300: `torch._scaled_mm`, an FP8 GEMM kernel or library, a Triton FP8
    dot, a scale from `finfo(...).max` such a kernel computes with, a library's FP8 tensor types and layers
    (`Float8Tensor`, `tensor_to_scale` of `torchao.float8`: their matmuls take the dtype, even from CPU data). A cast
    works on ROCm: FP8 the code shows only stored, decoded, moved or compared (above) is not reported; FP8 whose use
    is unknown (returned, handed to another module) is, as its caller may compute with it.

    ## Why is this bad on ROCm?
    MI300 (gfx940-gfx942) implements only the FNUZ FP8 encodings (`torch.float8_e4m3fnuz`, `torch.float8_e5m2fnuz`);
    gfx950 and gfx12 implement only the OCP ones (`float8_e4m3fn`, `float8_e5m2`). An OCP dtype on MI300 fails in
    hipBLASLt / `torch._scaled_mm` or silently computes with the wrong encoding: FNUZ has no Inf, a different NaN and
    exponent bias, and its e4m3 maximum is 240 instead of 448, so a scale derived from
    `torch.finfo(torch.float8_e4m3fn).max` overflows. Sources: HIP `docs/reference/fp8_numbers.rst` (gfx940-942 FNUZ
    only, gfx12 OCP only); vLLM `RocmPlatform.fp8_dtype()` / `is_fp8_fnuz()` (returns the fnuz dtype on `"gfx94"`).

    ## In code written for ROCm
    Code only ROCm runs (a ROCm-only branch; a module importing a ROCm-only package such as FlyDSL or MORI, or one that
    does), or any file of a project written for AMD (by its C/C++ or requirements), picks the format per arch when its
    file names a `fnuz` dtype or a gfx arch: not flagged; its MX code (gfx950's) is known by the classes around it, the
    module's docstring and the defs reading a module-level table too. Elsewhere it is: OCP FP8 is wrong on MI300, and a
    def whose GPU check sits in another module (kernels generated for gfx950 only), or whose MX purpose shows only in
    comments or in the code it feeds (a test's input generator), shows nothing that keeps MI300 from running it.

    ## Example
    ```python
    weight_fp8 = weight.to(torch.float8_e4m3fn)
    scale = amax / torch.finfo(torch.float8_e4m3fn).max
    ```

    ## Fix
    ```python
    # added once, after the imports
    _IS_FNUZ = getattr(torch.version, "hip", None) is not None and torch.cuda.is_available() and "gfx94" in torch.cuda.get_device_properties(0).gcnArchName
    weight_fp8 = weight.to(torch.float8_e4m3fnuz if _IS_FNUZ else torch.float8_e4m3fn)
    scale = amax / torch.finfo(torch.float8_e4m3fnuz if _IS_FNUZ else torch.float8_e4m3fn).max
    ```
    (`--unsafe-fixes`). `_IS_FNUZ` reads device 0 when the module is imported on ROCm.

    ## Fix safety
    Unsafe: the right dtype depends on the target arch (FNUZ on gfx94x, OCP on gfx950/gfx12), which a static fix
    cannot know; every scale constant and checkpoint derived from the dtype must be reviewed with it.
    """

    code = "ROC107"
    name = "fp8-dtype"
    severity = Severity.ERROR
    applies_to_tests = True  # a test quantising to the OCP dtype fails or computes wrongly on MI300
    fix_availability = FixAvailability.UNSAFE
    triggers = (b"float8_e4m3fn", b"float8_e5m2")

    def visit_Attribute(self, node: ast.Attribute, ctx: PythonContext) -> None:
        if node.attr in OCP_NAMES:
            self._check(node, ctx)

    def visit_Name(self, node: ast.Name, ctx: PythonContext) -> None:
        # `from torch import float8_e4m3fn` then a bare `float8_e4m3fn`.
        if node.id in OCP_NAMES and ctx.semantic.is_reference(node):
            self._check(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "getattr":  # `getattr(torch, "float8_e4m3fn")`
            self._check(node, ctx)

    def _check(self, node: ast.expr, ctx: PythonContext) -> None:
        dtype = ocp_fp8_dtype(ctx, node)
        if dtype is None or targets_without_fnuz(ctx) or encoding_neutral_use(ctx, node):
            return
        if any(chosen(ctx, node) for chosen in _PER_ARCH_CHOICES):
            return
        in_finfo = finfo_of(ctx, node) is not None
        if in_finfo and dtype.name == "float8_e5m2":
            return  # e5m2 and e5m2fnuz share the same max (57344): the finfo constant is portable
        ctx.report(node, _message(dtype, in_finfo), fix=lambda: _fix(node, dtype, ctx))


def _fix(node: ast.expr, dtype: OcpFp8, ctx: PythonContext) -> Fix | None:
    """`torch.float8_e4m3fnuz if _IS_FNUZ else <orig>` for a torch dtype written as a name, `_IS_FNUZ` defined once
    (ROCm on a gfx94x GPU, from device 0 at import). Unsafe: FNUZ's max is 240, not 448 (scales need review)."""
    guard = module_definition(ctx, node, _FNUZ_FLAG, _FNUZ_TEST) if dtype.library == "torch" else None
    if guard is None or isinstance(node, ast.Call):
        return None
    fnuz = torch_name(ctx) + "." + dtype.fnuz.rsplit(".", 1)[-1]
    edit = choose_on_rocm(ctx, node, fnuz, guard.name)
    return ctx.fix("Select the FP8 dtype per arch (FNUZ on gfx94x)", edit, *guard.edits, safe=False)


def _message(dtype: OcpFp8, in_finfo: bool) -> str:
    if in_finfo:
        return (
            f"finfo({dtype.qualified}).max is 448, but MI300 (gfx942) uses {dtype.fnuz} whose max is 240; "
            "take finfo of the FP8 dtype selected per arch"
        )
    return (
        f"{dtype.qualified} is the OCP FP8 format, which MI300 (gfx942) does not support; "
        f"select the dtype per arch ({dtype.fnuz} on gfx94x, {dtype.qualified} on gfx950/gfx12)"
    )


Fp8Dtype.valid = (
    # FP8 data made and kept on the CPU (cpu_tensors.py): a checkpoint in the OCP format, which MI300 loaders convert.
    Valid(
        """
        import torch
        def write_checkpoint(path, weight):
            weight_fp8 = weight.detach().to(torch.float8_e4m3fn).cpu()
            save_file({"weight": weight_fp8}, path)
        """,
    ),
    # A test that keeps every tensor on the CPU (cpu_tensors.in_gpu_free_test): no device but the CPU, no CUDA.
    Valid(
        """
        import torch
        def test_fp8_storage_is_patched_aside():
            model = torch.nn.Linear(4, 8, device="cpu")
            model.weight.data = model.weight.data.to(torch.float8_e4m3fn)
        """,
        path="tests/test_fp8_storage.py",
    ),
    # vLLM style: the branch selects FNUZ by arch; a ROCm-gated conditional expression (more: test_fp8_dtype_examples).
    Valid(
        """
        import torch
        from vllm.platforms import current_platform
        IS_ROCM = torch.version.hip is not None
        FP8_DTYPE = torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn
        def fp8_dtype():
            if current_platform.is_fp8_fnuz():
                return torch.float8_e4m3fnuz
            else:
                return torch.float8_e4m3fn
        """,
    ),
    # Early return under a ROCm test; a call into a package with no ROCm build first; a def converting to FNUZ on ROCm.
    Valid(
        """
        import torch
        try:
            import deep_gemm
        except ImportError: deep_gemm = None
        def per_block_cast(x):
            padded = x.new_zeros(deep_gemm.ceil_div(x.shape[0], 128) * 128)
            return padded.to(torch.float8_e4m3fn)
        def quantize(w, scale):
            if torch.version.hip:
                return w
            return (w / scale).to(torch.float8_e4m3fn)
        def to_fnuz(w):
            return w.view(torch.float8_e4m3fnuz)
        def fp8_quantize(w, qdtype=torch.float8_e4m3fn):
            q = w.to(qdtype)
            if torch.version.hip:
                q = to_fnuz(q)
            return q
        """,
    ),
    # Known-dtype keys and sets, tables covering both formats (fnuz added later), type codes, layerwise-cast pairs;
    # in a file multiplying no matrices, a table from names spelling the format to dtypes, and feature probes.
    Valid(
        """
        import torch
        CODES = {"BOOL": torch.bool, "I8": torch.int8, "F8_E4M3": torch.float8_e4m3fn}
        DTYPE_MAP = {"bfloat16": torch.bfloat16, "float8_e4m3fn": torch.float8_e4m3fn}
        def decode(raw, code, shape):
            if code == "F8_E4M3" and hasattr(torch, "float8_e4m3fn"):
                return raw.view(torch.float8_e4m3fn).reshape(shape)
        def has_fp8(): return getattr(torch, "float8_e4m3fn", None) and getattr(torch, "float8_e5m2", None)
        if has_fp8(): DTYPE_MAP["float8_e5m2"] = torch.float8_e5m2
        FP8_STORAGE: tuple[torch.dtype, ...] = (torch.float8_e4m3fn,)
        is_fp8 = x.dtype in FP8_STORAGE
        def cast(model, storage_dtype=torch.float8_e4m3fn, compute_dtype=None):
            storage_dtype = torch.float8_e4m3fn
            compute_dtype = torch.bfloat16
        cast(model, torch.float8_e4m3fn, torch.bfloat16)
        FP8_MAX = {torch.float8_e4m3fn: 448.0, torch.float8_e4m3fnuz: 240.0}
        KV_CACHE_DTYPES = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e4m3fnuz": torch.float8_e4m3fnuz}
        FP8_TYPES = {torch.float8_e4m3fn, torch.float8_e5m2}
        FORMATS = {"fp8": {"dtype": torch.float8_e4m3fn, "max": 448.0}}
        FORMATS["fp8_fnuz"] = {"dtype": torch.float8_e4m3fnuz, "max": 240.0}
        E4M3_OK.append(torch.float8_e4m3fn)
        E4M3_OK.append(torch.float8_e4m3fnuz)
        """,
    ),
    # torchao-style allow-lists, a peak-throughput table lookup, finfo bits, an MX element dtype, a storage dtype.
    Valid(
        """
        import torch
        _ALLOWED_DTYPES = (torch.int8, torch.uint8, torch.float8_e5m2, torch.float8_e4m3fn)
        assert dtype in _ALLOWED_DTYPES
        tops = PEAK_TOPS[torch.float8_e4m3fn]
        bytes_per_el = torch.finfo(torch.float8_e4m3fn).bits / 8
        cfg = MXLinearConfig(elem_dtype=torch.float8_e4m3fn, block_size=32)
        apply_layerwise_casting(model, storage_dtype=torch.float8_e4m3fn, compute_dtype=torch.bfloat16)
        """,
    ),
    # An MX format's configuration (OCP FP8 by the MX spec); JAX and ml_dtypes comparisons and FNUZ dtypes.
    Valid(
        """
        import jax.numpy as jnp, ml_dtypes, torch
        from torchao.prototype.mx_formats import MXFPInferenceConfig
        config = MXFPInferenceConfig(activation_dtype=torch.float8_e4m3fn, weight_dtype=torch.float8_e4m3fn)
        is_fp8 = x.dtype in (jnp.float8_e4m3fn, ml_dtypes.float8_e5m2)
        kv_dtype = getattr(torch, "float8_e4m3fnuz", None) or jnp.float8_e4m3fnuz
        def scale_activations_nvfp4(x, amax):  # NVFP4's block scales are OCP e4m3 by its spec, on every GPU
            fp8_dtype = torch.float8_e4m3fn
            scales = (amax / 6.0).clamp(torch.finfo(torch.float8_e4m3fn).tiny, torch.finfo(fp8_dtype).max)
            return pack_e2m1(x), scales.to(fp8_dtype)
        """,
    ),
    # Mentions that are no value: whole comparators, metadata, the fnuz names (text: tests/test_fp8_dtype_examples.py).
    Valid(
        """
        import torch
        def pack(t, w):
            if t.dtype == torch.float8_e4m3fn and w.dtype != torch.float8_e5m2:
                return t.view(torch.uint8), torch.float8_e4m3fn.itemsize
            expected = torch.float8_e4m3fn if t.is_floating_point() else torch.float8_e5m2  # an alias only compared
            checks = [t.dtype == expected, w.dtype in (torch.float8_e4m3fn, torch.float8_e5m2), str(expected)]
            return KV_CACHE_DTYPES.get("float8_e4m3fn", torch.float8_e4m3fnuz), checks
        """,
    ),
)
Fp8Dtype.invalid = (
    Invalid(
        """
        import torch
        weight_fp8 = weight.to(torch.float8_e4m3fn)
        """,
        expect=("2:24-2:43",),
        message="float8_e4m3fnuz",
        fixed="""
        import torch
        _IS_FNUZ = getattr(torch.version, "hip", None) is not None and torch.cuda.is_available() and "gfx94" in torch.cuda.get_device_properties(0).gcnArchName
        weight_fp8 = weight.to(torch.float8_e4m3fnuz if _IS_FNUZ else torch.float8_e4m3fn)
        """,
    ),
    Invalid(
        """
        import torch
        def per_tensor_quant(x):
            if torch.version.hip:
                x = x.float()  # a ROCm branch that converts nothing to FNUZ
            scale = x.abs().max() / torch.finfo(torch.float8_e4m3fn).max
            return (x / scale).to(torch.float8_e4m3fnuz), scale
        """,
        expect=("5:41-5:60",),
        message="max is 240",
    ),
    Invalid(
        """
        import torch

        def quantize_kv(k, v, dtype: torch.dtype = torch.float8_e5m2):
            return k.to(dtype), v.to(dtype)
        """,
        expect=("3:44-3:61",),
        message="float8_e5m2fnuz",
        fixed="""
        import torch
        _IS_FNUZ = getattr(torch.version, "hip", None) is not None and torch.cuda.is_available() and "gfx94" in torch.cuda.get_device_properties(0).gcnArchName

        def quantize_kv(k, v, dtype: torch.dtype = (torch.float8_e5m2fnuz if _IS_FNUZ else torch.float8_e5m2)):
            return k.to(dtype), v.to(dtype)
        """,
    ),
    Invalid(
        """
        import torch
        from torch import float8_e4m3fn
        out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        buf = torch.empty(n, k, dtype=torch.float8_e4m3fn, device='cuda')
        q = x.to(float8_e4m3fn)
        def load_weight(layer, weight):  # made on the CPU, then moved to the GPU as a module's weight
            weight_fp8 = weight.detach().cpu().to(torch.float8_e4m3fn)
            layer.weight = torch.nn.Parameter(weight_fp8.cuda())
        """,
        expect=("4:31-4:50", "5:10-5:23", "7:43-7:62"),
    ),
    Invalid(
        """
        import pytest, torch
        @pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
        def test_cast(dtype):
            assert x.to(dtype).dtype == dtype
        """,
        expect=("2:36-2:55", "2:57-2:74"),
    ),
    # Spellings the trigger pattern must still reach: a value next to a comparator, an operand the next
    # line continues, a name split over a line continuation.
    Invalid(
        """
        import torch
        out = torch.float8_e4m3fn if x.dtype == torch.float8_e4m3fn else torch.bfloat16
        """,
        expect=("2:7-2:26",),
    ),
    Invalid(
        r"""
        import torch
        bits = (code == torch.float8_e5m2
                + 0)
        q = w.to(torch.\
            float8_e4m3fn)
        """,
        expect=("2:17-2:34", "4:10-5:18"),
    ),
    # CPU data in a test, handed to a library's FP8 tensor type, whose matmuls take the dtype (fp8.handed_to_fp8_library).
    Invalid(
        """
        import torch
        from torchao.float8.float8_utils import tensor_to_scale
        def test_scale():
            scale = tensor_to_scale(torch.rand(16), torch.float8_e4m3fn)
        """,
        path="test/test_base.py",
        expect=("4:45-4:64",),
    ),
    # Looked up by name; JAX and ml_dtypes dtypes (no fix: the FNUZ flag reads torch).
    Invalid(
        """
        import jax.numpy as jnp
        import ml_dtypes
        import torch
        FP8 = getattr(torch, "float8_e4m3fn", None)
        def quantize(x):
            return x.astype(jnp.float8_e4m3fn)
        KV_DTYPE = ml_dtypes.float8_e5m2
        """,
        expect=("4:7-4:44", "6:21-6:38", "7:12-7:33"),
        message="torch.float8_e4m3fnuz",
        no_fix=True,
    ),
)
