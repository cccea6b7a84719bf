"""Per-vendor records of a device registry (rocmlint/python/vendor_records.py, GateAnalyzer's record conditions)."""

from __future__ import annotations

import pytest
from test_gating import BOTH, NVIDIA_ONLY, everywhere

ROCM_FIRST = """
import torch
REGISTRY = [
    Spec(name="rocm", available=lambda: torch.version.hip is not None, info=HAZARD("rocm")),
    Spec(name="cuda", available=torch.cuda.is_available, info=HAZARD("cuda")),
    Spec(name="xpu", available=torch.xpu.is_available, info=HAZARD("xpu")),
]
"""


def test_an_nvidia_record_after_the_rocm_one_is_nvidia_only() -> None:
    assert everywhere(ROCM_FIRST) == {"rocm": BOTH, "cuda": NVIDIA_ONLY, "xpu": BOTH}


def test_functions_only_named_in_the_nvidia_record_are_nvidia_only() -> None:
    code = """
    import torch
    def _query(index):
        HAZARD("query")
    def nvidia_info():
        return collect(_query)
    REGISTRY = (
        Spec("rocm", info=lambda: {}),
        Spec("cuda", info=nvidia_info),
    )
    """
    assert everywhere(code) == {"query": NVIDIA_ONLY}


@pytest.mark.parametrize(
    "registry",
    [
        pytest.param('[Spec(name="cuda", info=HAZARD()), Spec(name="rocm", info=None)]', id="nvidia-first"),
        pytest.param('[Spec(name="rocm", info=None), Other(name="cuda", info=HAZARD())]', id="two-constructors"),
        pytest.param('[Spec(name="rocm", info=None), Spec(name="cuda", info=HAZARD()), make()]', id="not-all-records"),
        pytest.param('[Spec(name="rocm", info=None), Spec(name="cuda", alias="hip", info=HAZARD())]', id="both-names"),
        pytest.param('[Spec(name="gpu", info=None), Spec(name="cuda", info=HAZARD())]', id="no-rocm-record"),
    ],
)
def test_records_that_prove_nothing(registry: str) -> None:
    assert everywhere(f"REGISTRY = {registry}\n") == {"": BOTH}
