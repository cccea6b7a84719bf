"""Every rule's own VALID and INVALID examples, plus the metadata every rule must carry (its declared fix
availability included: what its examples' fixes show)."""

from __future__ import annotations

import re

import pytest

from rocmlint.diagnostics import FixAvailability
from rocmlint.registry import all_rules
from rocmlint.rule import ToolRule
from rocmlint.testing import check_invalid, check_valid, fix_availability_seen

RULES = all_rules()
VALID = [
    pytest.param(rule, example, id=f"{rule.code}-valid-{i}") for rule in RULES for i, example in enumerate(rule.valid)
]
INVALID = [
    pytest.param(rule, example, id=f"{rule.code}-invalid-{i}")
    for rule in RULES
    for i, example in enumerate(rule.invalid)
]
# Reported by the tool itself, with no source pattern to give as an example: internal errors, and the
# compiler verdicts of `rocmlint verify` (tested in tests/test_verify.py).
WITHOUT_EXAMPLES = {"ROC900", "ROC010", "ROC011"}
CHECKING_RULES = [rule for rule in RULES if rule.code not in WITHOUT_EXAMPLES]


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_valid_example_is_not_reported(rule, example):
    problems = check_valid(rule, example)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_is_reported(rule, example):
    problems = check_invalid(rule, example)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("rule", CHECKING_RULES, ids=lambda r: r.code)
def test_rule_has_examples(rule):
    minimum = 1 if issubclass(rule, ToolRule) else 3
    assert len(rule.valid) >= minimum and len(rule.invalid) >= minimum


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_metadata(rule):
    assert re.fullmatch(r"ROC\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    doc = rule.doc()
    for section in ("## What it does", "## Why is this bad on ROCm?", "## Example", "## Fix safety"):
        assert section in doc, f"{rule.code} doc lacks {section}"
    if not issubclass(rule, ToolRule):
        assert rule.triggers, f"{rule.code} must declare triggers so the prefilter can skip files"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_declared_fix_availability_is_what_the_examples_show(rule):
    # SAFE: only safe fixes, at least one; UNSAFE: only unsafe ones; SOMETIMES: both; NONE: no fix at all.
    assert fix_availability_seen(rule) is rule.fix_availability


@pytest.mark.parametrize(
    "rule", [r for r in RULES if r.fix_availability is not FixAvailability.NONE], ids=lambda r: r.code
)
def test_rules_with_fixes_pin_a_fixed_file(rule):
    assert any(example.fixed is not None for example in rule.invalid), f"{rule.code}: no example pins a fixed file"


def test_codes_and_names_are_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
