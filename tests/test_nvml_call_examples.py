"""More examples of ROC117 nvml-call than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): NVML calls behind a flag that a failed first call clears
(conditions.behind_failed_probe)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc117_nvml_call import NvmlCall

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # On AMD nvmlInit raises, the handler clears the flag, and the later calls never run.
    Valid(
        """
        import pynvml
        can_run_pynvml = True
        try:
            pynvml.nvmlInit()
        except Exception:
            can_run_pynvml = False
        def used_memory(index):
            if not can_run_pynvml:
                return 0
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            return pynvml.nvmlDeviceGetMemoryInfo(handle).used
        def name(index):
            if can_run_pynvml:
                return pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index))
        """,
    ),
)

INVALID = (
    # A flag set True again after the try, a handler that re-raises, a flag the try does not probe NVML for.
    Invalid(
        """
        import pynvml, psutil
        ok = True
        try:
            pynvml.nvmlInit()
        except Exception:
            ok = False
        ok = True
        strict = True
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError:
            strict = False
            raise
        fast = True
        try:
            psutil.cpu_count()
        except Exception:
            fast = False
        def used(index):
            if ok and strict and fast:
                return pynvml.nvmlDeviceGetHandleByIndex(index)
        """,
        expect=("10:5-10:22", "21:16-21:56"),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(NvmlCall, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(NvmlCall, example) == []
