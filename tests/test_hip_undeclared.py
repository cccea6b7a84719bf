"""rocmlint/data/hip_undeclared.toml: the device intrinsics HIP lacks, which ROC217 reports."""

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


def test_roc217_reports_syncwarp_as_a_warning_and_other_intrinsics_as_errors() -> None:
    rule = next(r for r in all_rules() if r.code == "ROC217")
    code = "__global__ void k(int* x) {\n  x[0] = __dp4a(x[1], x[2], 0);\n  __syncwarp();\n}\n"
    found = [(d.location.line, d.severity.value, d.message.split(":")[0]) for d in run_example(rule, code)]
    assert found == [(2, "error", "`__dp4a`"), (3, "warning", "`__syncwarp`")]
