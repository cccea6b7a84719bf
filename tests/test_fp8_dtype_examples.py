"""More examples of ROC107 fp8-dtype than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): mentions that are no value, and code written for ROCm with and without a per-arch
choice of the format in its file."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc107_fp8_dtype import Fp8Dtype

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
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
    # `and` short-circuit on a NVIDIA-only test.
    Valid(
        """
        import torch
        w8 = torch.version.cuda is not None and w.to(torch.float8_e5m2)
        """,
    ),
)

INVALID = (
    # The same MX def in code that may run on MI300 (ported code emulating MX there).
    Invalid(
        """
        import torch
        def dynamic_mxfp8_quant(x, quant_dtype=torch.float8_e4m3fn):
            return x.to(quant_dtype)
        """,
        expect=("2:40-2:59",),
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
    # MX code by what its docstring says, in code that may run on MI300.
    Invalid(
        """
        import torch
        def quant_x(x):
            \"\"\"Emits an MXFP8-quantized X with e8m0 scales.\"\"\"
            return x.to(torch.float8_e4m3fn)
        """,
        expect=("4:17-4:36",),
    ),
    # The same per-arch file without the ROCm-only import: it may run on NVIDIA and MI300 alike.
    Invalid(
        """
        import torch
        def kv_dtype(arch):
            return torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn
        def mx_transport(x):
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
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(Fp8Dtype, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(Fp8Dtype, example) == []
