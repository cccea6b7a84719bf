"""More examples of ROC301 nvcc-only-flags than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc301_nvcc_only_flags import NvccOnlyFlags

from rocmlint.rule import Invalid
from rocmlint.testing import check_invalid

INVALID = (
    # An f-string arch flag in a DeepSpeed-style `nvcc_args` method.
    Invalid(
        """
        class QuantizerBuilder:
            def nvcc_args(self):
                major, minor = 8, 0
                return ["-O3", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"]
        """,
        expect=("4:24-4:86",),
        message="--offload-arch=gfx",
    ),
)


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(NvccOnlyFlags, example) == []
