"""More examples of ROC210 sync-mask-32bit than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py): masks whose value depends on the warp size the build sets per target."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc210_sync_mask_32bit import SyncMask32Bit

from rocmlint.rule import Valid
from rocmlint.testing import check_valid

VALID = (
    # The mask follows the warp size the build sets per target: a wave64 ROCm target takes the 64-bit arm.
    Valid(
        """
        #if PROJ_WARP_SIZE == 64
        #define PROJ_FULL_MASK 0xFFFFFFFFFFFFFFFF
        #else
        #define PROJ_FULL_MASK 0xFFFFFFFF
        #endif
        __device__ int pair_sum(int v) { return v + __shfl_xor_sync(PROJ_FULL_MASK, v, 1); }
        """,
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(SyncMask32Bit, example) == []
