"""More examples of ROC113 capability-compare than its module has room for, checked the same way as the module's
own (tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc113_capability_compare import CapabilityCompare

from rocmlint.rule import Valid
from rocmlint.testing import check_valid

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
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(CapabilityCompare, example) == []
