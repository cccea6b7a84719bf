"""More INVALID examples of ROC105 hardcoded-gfx-arch than its module has room for, checked the same way as the
module's own (tests/test_rule_examples.py): the spellings of a target the trigger must still find."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc105_hardcoded_gfx_arch import HardcodedGfxArch

from rocmlint.rule import Invalid
from rocmlint.testing import check_invalid

INVALID = (
    # Spellings the trigger_pattern must still find: implicit concatenation, a target split across the
    # pieces (with a comment between them), a line continuation inside the literal, escapes before,
    # inside and after a target (`\x3d` is "=", `\t` and U+00A0 are spaces), a bytes flag, a
    # generic target.
    Invalid(
        """
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;" "gfx942"
        """,
        expect=("2:35-2:53",),
        message='"gfx90a;gfx942"',
    ),
    Invalid(
        """
        import os
        os.environ['GPU_ARCHS'] = (
            'gfx9'  # MI300
            '42'
        )
        """,
        expect=("3:5-4:9",),
        message='"gfx942"',
    ),
    Invalid(
        r"""
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;\
        gfx942"
        """,
        expect=("2:35-3:8",),
    ),
    Invalid(
        r"""
        cc_flag = []
        cc_flag.append("--offload-arch\x3dgfx942")
        """,
        expect=("2:16-2:42",),
        message="--offload-arch=gfx942",
    ),
    Invalid(
        r"""
        import os
        os.environ["HIP_ARCHITECTURES"] = "gfx94\x32"
        """,
        expect=("2:35-2:46",),
        message='"gfx942"',
    ),
    Invalid(
        r"""
        from triton.backends.compiler import GPUTarget

        def aot_target(arch="\tgfx950"):
            return GPUTarget("hip", arch, 64)
        """,
        expect=("3:21-3:31",),
    ),
    Invalid(
        """
        import os
        os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a,gfx942\xa0"
        """,
        expect=("2:35-2:51",),
    ),
    Invalid(
        """
        from hip import hiprtc

        def compile_program(prog):
            return hiprtc.hiprtcCompileProgram(prog, 2, [b"--offload-arch=gfx90a", b"-O3"])
        """,
        expect=("4:50-4:74",),
    ),
    Invalid(
        """
        from .aot import compile_kernel

        compile_kernel("attn.hip", target="gfx9-4-generic")
        """,
        expect=("3:35-3:51",),
        message="gfx9-4-generic",
    ),
)


@pytest.mark.parametrize("example", INVALID)
def test_invalid_example_is_reported(example: Invalid) -> None:
    problems = check_invalid(HardcodedGfxArch, example)
    assert not problems, "\n".join(problems)
