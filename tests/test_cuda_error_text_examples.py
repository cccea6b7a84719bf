"""More examples of ROC133 cuda-error-text than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): the ROCm wording matched in a chain of conditional expressions, and a cuDNN allocation
failure matched beside vendor-neutral OOM text."""

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
    # A cuDNN allocation failure is one more OOM marker beside vendor-neutral "out of memory", which ROCm's OOMs match.
    Valid(
        """
        def is_oom(message: str) -> bool:
            markers = ("resource_exhausted", "out of memory", "cuda out of memory", "cudnn_status_alloc_failed")
            return any(marker in message for marker in markers)
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
    # A cuDNN allocation failure matched alone: no OOM text beside it that ROCm's errors would match.
    Invalid(
        """
        def is_cudnn_oom(message: str) -> bool:
            return "CUDNN_STATUS_ALLOC_FAILED" in message
        """,
        expect=("2:12-2:39",),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(CudaErrorText, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(CudaErrorText, example) == []
