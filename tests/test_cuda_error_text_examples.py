"""More examples of ROC133 cuda-error-text than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): the ROCm wording matched in a chain of conditional expressions, and a cuDNN allocation
failure, which vendor-neutral OOM text beside it does not cover on ROCm."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc133_cuda_error_text import CudaErrorText

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # The chain of conditional expressions also matches the HIP wording (conditions.chain_tests).
    Valid(
        """
        def oom_type(msg: str) -> str:
            return "gpu.cuda" if "cuda out of memory" in msg else "gpu.hip" if "hip out of memory" in msg else "cpu"
        """,
    ),
)

INVALID = (
    # A chain of conditional expressions that never matches the ROCm wording.
    Invalid(
        """
        def oom_type(msg: str) -> str:
            return "gpu.cuda" if "cuda out of memory" in msg else "tpu" if "memory space hbm" in msg else "cpu"
        """,
        expect=("2:26-2:46",),
    ),
    # A cuDNN allocation failure beside vendor-neutral OOM text: MIOpen's allocation failures do not say "out of memory".
    Invalid(
        """
        def is_oom(message: str) -> bool:
            markers = ("out of memory", "cuda out of memory", "cudnn_status_alloc_failed")
            return any(marker in message for marker in markers)
        """,
        expect=("2:55-2:82",),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(CudaErrorText, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(CudaErrorText, example) == []
