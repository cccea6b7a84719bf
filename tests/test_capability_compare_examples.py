"""More examples of ROC113 capability-compare than its module has room for, checked the same way as the module's
own (tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc113_capability_compare import CapabilityCompare

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # A test module skipped on every CDNA GPU, where test suites run on ROCm (`major in (10, 12)` is false on MI200,
    # MI300 and MI355): a test's own skip decorator inside it decides nothing there.
    Valid(
        """
        import pytest, torch
        _IS_BLACKWELL = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] in (10, 12)
        pytestmark = pytest.mark.skipif(not _IS_BLACKWELL, reason="needs sm100/sm120")
        @pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 8, reason="needs sm80")
        def test_marlin():
            pass
        """,
        path="tests/test_fp4_backends.py",
    ),
    # Mentions that are no capability read (the trigger pattern leaves them out): properties, mocks, a docstring.
    Valid(
        """
        import torch
        from unittest import mock
        from vllm.platforms import current_platform
        def sm_count():
            \"\"\"The SM count, from torch.cuda.get_device_properties\"\"\"
            return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        big_gpu = torch.cuda.get_device_properties(0) .total_memory >= 40 * 1024**3
        sm100 = current_platform.get_device_capability().as_version_str() == "10.0"
        current_platform.has_device_capability.return_value = True
        @mock.patch("vllm.platforms.current_platform.is_device_capability_family", return_value=True)
        def test_blackwell(_):
            with mock.patch.object(torch.cuda, 'get_device_capability', lambda *_: (9, 0)):
                assert sm_count() > 0
        """,
    ),
    # An "Ampere or newer" flag that only turns the flash SDPA backend on, or names it and only enables it: every AMD GPU
    # MI200 on has flash SDPA (verbose: "an Ampere floor that only enables a feature every AMD GPU has").
    Valid(
        """
        import torch
        SUPPORTS_FLASH_ATTENTION = torch.cuda.get_device_capability() >= (8, 0)
        def attention(q, k, v):
            if SUPPORTS_FLASH_ATTENTION:
                torch.backends.cuda.enable_flash_sdp(True)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        """,
    ),
)
INVALID = (
    # Test-suite skips: on MI300 (9.4) the FP8 test runs, on MI250 (9.0) the H100 one; sm_120's skips all CDNA.
    Invalid(
        """
        import pytest, torch
        requires_fp8 = pytest.mark.skipif(torch.cuda.get_device_capability() < (8, 9), reason="needs sm89")
        pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() != (9, 0), reason="needs H100")
        requires_sm120 = pytest.mark.skipif(torch.cuda.get_device_capability()[0] != 12, reason="needs sm120")
        """,
        expect=("2:35-2:78", "3:33-3:77"),
        path="tests/test_fp8_linear.py",
    ),
    # The same flag named for the flash backend, read where a test expects that backend (or asserts the flag): the floor
    # now requires flash SDPA, which MI100 and RDNA GPUs lack, and AMD GPUs pass the "Ampere or newer" test.
    Invalid(
        """
        import torch
        SUPPORTS_FLASH_ATTENTION = torch.cuda.get_device_capability() >= (8, 0)
        def test_sdpa_choice(model, x):
            expected = "EFFICIENT_ATTENTION"
            if SUPPORTS_FLASH_ATTENTION:
                expected = "FLASH_ATTENTION"
            assert model.backend(x) == expected
        USE_BF16 = torch.cuda.get_device_capability()[0] >= 8
        def test_bf16(model):
            assert USE_BF16 and model.dtype == torch.bfloat16
        """,
        expect=("2:28-2:72", "8:12-8:54"),
        path="tests/test_attention.py",
    ),
    # "Ampere or newer" as a test helper (skips of Ampere-only tests): not a floor that only enables a feature.
    Invalid(
        """
        import torch
        def is_ampere_or_newer(device_index=0):
            if not torch.cuda.is_available():
                return False
            major, minor = torch.cuda.get_device_capability(device_index)
            # Ampere starts at compute capability 8.0
            return (major, minor) >= (8, 0)
        """,
        expect=("7:12-7:36",),
        path="tests/testing_utils.py",
    ),
)


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(CapabilityCompare, example) == []


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(CapabilityCompare, example) == []
