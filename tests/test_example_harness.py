"""The example harness itself (rocmlint/testing.py): it fails when an example's expected column, count or
fixed text is wrong, and example strings read as dedented blocks."""

from __future__ import annotations

import dataclasses

import pytest

from rocmlint.diagnostics import FixAvailability
from rocmlint.registry import rule_by_code
from rocmlint.rule import Invalid, Rule, Valid, example_text
from rocmlint.testing import check_invalid, check_valid, fix_availability_seen

ROC101 = rule_by_code("ROC101")
assert ROC101 is not None
RULE: type[Rule] = ROC101
FIXED_EXAMPLE = next(example for example in RULE.invalid if example.fixed is not None)


def test_a_block_loses_its_first_newline_and_indentation() -> None:
    assert example_text("\n    import torch\n    if x:\n        y()\n    ") == "import torch\nif x:\n    y()\n"
    assert example_text("\n    x = 1") == "x = 1"  # closing quotes on the last line: no final newline
    assert example_text("\n\n    x = 1\n") == "\nx = 1\n"
    assert example_text("  x = 1  \n") == "  x = 1  \n"  # not a block: taken as it is
    assert Valid("\n    a\n    ").code == "a\n"
    assert Invalid("\n  a\n", expect=("1:1-1:2",), fixed="\n  b\n").fixed == "b\n"


def test_the_examples_as_written_pass() -> None:
    assert check_invalid(RULE, FIXED_EXAMPLE) == []
    assert all(check_valid(RULE, example) == [] for example in RULE.valid)


def test_a_moved_column_fails() -> None:
    line, rest = FIXED_EXAMPLE.expect[0].split(":", 1)
    column, end = rest.split("-", 1)
    moved = dataclasses.replace(FIXED_EXAMPLE, expect=(f"{line}:{int(column) + 1}-{end}",))
    (problem,) = check_invalid(RULE, moved)
    assert problem.startswith("expected 1 diagnostic(s)") and f"expect=({FIXED_EXAMPLE.expect[0]!r},)" in problem


def test_a_missing_or_extra_diagnostic_fails() -> None:
    twice = dataclasses.replace(FIXED_EXAMPLE, expect=FIXED_EXAMPLE.expect * 2)
    (extra,) = check_invalid(RULE, twice)
    assert extra.startswith("expected 2 diagnostic(s)")
    (missing,) = check_invalid(RULE, Invalid(RULE.valid[0].code, expect=("1:1-1:2",)))
    assert missing.startswith("expected 1 diagnostic(s) at 1:1-1:2; got nothing")


def test_a_wrong_fixed_file_fails() -> None:
    assert FIXED_EXAMPLE.fixed is not None
    wrong = dataclasses.replace(FIXED_EXAMPLE, fixed=FIXED_EXAMPLE.fixed + "# more\n")
    (problem,) = check_invalid(RULE, wrong)
    assert problem.startswith("fix gave:")


def test_a_valid_example_that_is_reported_fails() -> None:
    (problem,) = check_valid(RULE, Valid(FIXED_EXAMPLE.code))
    assert problem.startswith(f"ROC101 reported {FIXED_EXAMPLE.expect[0]}:")


def test_a_declared_availability_the_examples_do_not_show_fails() -> None:
    declared_none = type("DeclaresNoFix", (RULE,), {"fix_availability": FixAvailability.NONE})
    assert fix_availability_seen(declared_none) is FixAvailability.SAFE  # what test_rule_examples compares


def test_no_fix_and_a_fixed_file_contradict() -> None:
    with pytest.raises(ValueError, match="no_fix"):
        Invalid("x\n", expect=("1:1-1:2",), no_fix=True, fixed="y\n")


def test_a_malformed_expect_fails() -> None:
    for expect in ((), ("2:30",), ("2:30-53",)):
        (problem,) = check_invalid(RULE, dataclasses.replace(FIXED_EXAMPLE, expect=expect))
        assert problem.startswith("expect needs")
