"""rocmlint/data/hip_undeclared.toml: the device intrinsics and CUB macros HIP lacks, which ROC217 reports."""

from __future__ import annotations

from rocmlint.cuda.hip_gaps import no_hip_equivalents
from rocmlint.data import load
from rocmlint.registry import all_rules
from rocmlint.testing import run_example


def test_every_name_has_a_reason_and_only_listed_names_have_a_version() -> None:
    table = load("hip_undeclared")
    assert set(table["names"].values()) == set(table["reasons"])
    assert set(table["since"]) <= set(table["names"])
    assert list(table["names"]) == sorted(table["names"])
    assert no_hip_equivalents().declared_since == {"__syncwarp": "7.0"}


def test_roc217_reports_cub_warp_macros_hipcub_lacks_and_syncwarp_as_a_warning() -> None:
    rule = next(r for r in all_rules() if r.code == "ROC217")
    code = (
        "template <int LOGICAL_WARP_THREADS>\n"
        "struct WarpReverseScan {\n"
        "  static constexpr bool IS_ARCH_WARP = (LOGICAL_WARP_THREADS == CUB_WARP_THREADS(0));\n"
        "};\n"
        "__global__ void k() { __syncwarp(); }\n"
    )
    found = [(d.location.line, d.severity.value, d.message.split(":")[0]) for d in run_example(rule, code)]
    assert found == [(3, "error", "`CUB_WARP_THREADS`"), (5, "warning", "`__syncwarp`")]
