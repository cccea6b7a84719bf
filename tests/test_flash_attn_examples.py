"""More examples of ROC109 flash-attn-no-fallback than its module has room for, checked the same way as the module's
own (tests/test_rule_examples.py): an import inside a def named for flash attention, whose callers chose that path."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc109_flash_attn_no_fallback import FlashAttnNoFallback

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # The flash-attention implementation of a model: callers pick it after their own availability probe.
    Valid(
        """
        def flash_attn_no_pad(qkv, key_padding_mask, causal=False):
            from flash_attn import flash_attn_varlen_qkvpacked_func
            from flash_attn.bert_padding import pad_input, unpad_input
            return flash_attn_varlen_qkvpacked_func(qkv, causal=causal)
        class Attention:
            async def _flash_attention_forward(self, q, k, v):
                import flash_attn_interface
                return flash_attn_interface.flash_attn_func(q, k, v)
        """,
    ),
)

INVALID = (
    # A def named for something else that imports flash-attn itself: every call fails where it is missing.
    Invalid(
        """
        def attention(q, k, v):
            from flash_attn import flash_attn_func
            return flash_attn_func(q, k, v)
        """,
        expect=("2:10-2:20",),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(FlashAttnNoFallback, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(FlashAttnNoFallback, example) == []
