"""More examples of ROC105 hardcoded-gfx-arch than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): the spellings of a target the trigger must still find, and texts that spell none."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc105_hardcoded_gfx_arch import HardcodedGfxArch

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

INVALID = (
    # Not a rename: the arm taken when the name differs from the compared text, or compared with another name.
    Invalid(
        """
        import os
        arch = os.environ.get("ARCH")
        os.environ["PYTORCH_ROCM_ARCH"] = arch if arch == "gfx90a" else "gfx942"
        os.environ["GPU_ARCHS"] = arch if other != "gfx900:xnack-" else "gfx900"
        """,
        expect=("3:65-3:73", "4:65-4:73"),
    ),
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

VALID = (
    # Targets as a declaration's condition (`when=`, a package recipe's per-target requirement), not a build list;
    # a user's target renamed for a dependency (flow.renames_tested_value).
    Valid(
        """
        depends_on("llvm-amdgpu@5.7.0:", when="amdgpu_target=gfx942")
        conflicts("+asan", when="amdgpu_target=gfx90a:xnack-")
        for tgt in amdgpu_targets:
            dep_tgt = tgt if tgt != "gfx900:xnack-" else "gfx900"
            depends_on(f"rocblas amdgpu_target={dep_tgt}", when=f"amdgpu_target={tgt}")
        """,
    ),
    # Registry keys passed positionally, a set of supported targets, and a family prefix.
    Valid(
        """
        from .registry import detect_arch, register_kernels
        from .configs import GEMM_CONFIGS_942

        register_kernels("gfx942", GEMM_CONFIGS_942)
        ARCH_OK, DETECTED_ARCH = detect_arch({"gfx950", "gfx942"})
        FAMILY_PREFIX = "gfx9"
        """,
    ),
    # The arch comes from the user or the device; the literals only document it.
    Valid(
        """
        import os
        import torch

        def offload_flags():
            \"\"\"Returns e.g. ["--offload-arch=gfx942"].\"\"\"
            archs = os.environ.get("PYTORCH_ROCM_ARCH")
            if not archs:
                archs = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
            return [f"--offload-arch={arch}" for arch in archs.split(";")]
        """,
    ),
    # Normalising the runtime name is string manipulation, not a target choice.
    Valid(
        """
        def base_arch(name: str) -> str:
            return name.replace("gfx90a:sramecc+:xnack-", "gfx90a").removesuffix(":xnack-")
        """,
    ),
    # "gfx" only in names, family prefixes, file names, a regex and upper case: no target spelled.
    Valid(
        r"""
        import re
        import torch

        def _gfx942_default_tile_fits_lds(on_gfx9: bool) -> bool:
            arch = torch.cuda.get_device_properties(0).gcnArchName
            version = re.match(r"gfx(\d+)", arch)
            table = "configs/gfx942_fp8.json" if arch.startswith("gfx94") else "GFX950"
            return on_gfx9 and version is not None and bool(table)
        """,
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid_example_is_not_reported(example: Valid) -> None:
    assert check_valid(HardcodedGfxArch, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid_example_is_reported(example: Invalid) -> None:
    problems = check_invalid(HardcodedGfxArch, example)
    assert not problems, "\n".join(problems)
