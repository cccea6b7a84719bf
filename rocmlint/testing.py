"""Checks a rule against its own VALID/INVALID examples (used by the test suite and by rule authors).

An INVALID example pins every diagnostic of its rule (start and end, how many, in output order). One
whose diagnostics carry fixes is fixed, re-checked and fixed again until nothing changes, unsafe fixes
included: no fixable diagnostic of the rule may be left, and the result must be its `fixed=` when it
gives one. A rule's declared fix availability must be what its examples' fixes show.
"""

from __future__ import annotations

import re
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.diagnostics import Applicability, Diagnostic, FixAvailability
from rocmlint.engine import Engine
from rocmlint.fix import FixOutcome, fix_content
from rocmlint.rule import Invalid, Rule, Valid
from rocmlint.source import detect_python_encoding

SPAN = re.compile(r"(\d+):(\d+)-(\d+):(\d+)")


def run_example(rule: type[Rule], code: str, path: str | None = None) -> list[Diagnostic]:
    """The rule's diagnostics on `code`, with the default rules on too (so noqa checks see real hazards)."""
    return _diagnostics(rule, code.encode("utf-8"), path)


def span(diagnostic: Diagnostic) -> str:
    """`line:column-end_line:end_column`, the form an INVALID example's `expect` holds."""
    start, end = diagnostic.location, diagnostic.end_location
    return f"{start.line}:{start.column}-{end.line}:{end.column}"


def check_valid(rule: type[Rule], example: Valid) -> list[str]:
    """Problems with one VALID example: every diagnostic the rule reports on it."""
    found = run_example(rule, example.code, example.path)
    return [f"{rule.code} reported {span(d)}: {d.message}\n{example.code}" for d in found]


def check_invalid(rule: type[Rule], example: Invalid) -> list[str]:
    """Problems with one INVALID example (empty when it behaves as declared)."""
    malformed = [s for s in example.expect if not SPAN.fullmatch(s)]
    if malformed or not example.expect:
        return [f"expect needs one 'line:column-end_line:end_column' per diagnostic, got {example.expect!r}"]
    found = run_example(rule, example.code, example.path)
    problems = _span_problems(example, found)
    if found and example.message is not None and example.message not in found[0].message:
        problems.append(f"expected message containing {example.message!r}, got {found[0].message!r}")
    if example.no_fix and any(d.fix is not None for d in found):
        problems.append(f"expected no fix, got: {[d.fix.message for d in found if d.fix is not None]}")
    if example.fixed is not None or any(d.fix is not None for d in found):
        problems += _fix_problems(rule, example)
    return problems


def fix_example(rule: type[Rule], code: str, path: str | None = None) -> FixOutcome:
    """`code` fixed pass after pass with the rule's own fixes, unsafe ones included, until nothing changes."""

    def check(data: bytes) -> tuple[list[Diagnostic], str]:
        return _diagnostics(rule, data, path), detect_python_encoding(data)

    return fix_content(code.encode("utf-8"), check, unsafe=True)


def fix_availability_seen(rule: type[Rule]) -> FixAvailability:
    """The availability the fixes on the rule's INVALID examples show (what `fix_availability` must declare)."""
    seen = {
        d.fix.applicability
        for example in rule.invalid
        for d in run_example(rule, example.code, example.path)
        if d.fix is not None
    }
    if seen == {Applicability.SAFE, Applicability.UNSAFE}:
        return FixAvailability.SOMETIMES
    if seen == {Applicability.SAFE}:
        return FixAvailability.SAFE
    if seen == {Applicability.UNSAFE}:
        return FixAvailability.UNSAFE
    return FixAvailability.NONE


def _diagnostics(rule: type[Rule], data: bytes, path: str | None) -> list[Diagnostic]:
    path = path or ("example.cu" if rule.language == "cuda" else "example.py")
    settings = Settings(root=Path.cwd(), extend_select=(rule.code,))
    report = Engine().check_bytes(path, data, settings)
    return [d for d in report.diagnostics if d.code == rule.code]


def _span_problems(example: Invalid, found: list[Diagnostic]) -> list[str]:
    if tuple(span(d) for d in found) == example.expect:
        return []
    got = "".join(f"\n  {span(d)} {d.message}" for d in found) or " nothing"
    expected = f"expected {len(example.expect)} diagnostic(s) at {', '.join(example.expect)}"
    return [f"{expected}; got{got}\n(expect={tuple(span(d) for d in found)!r})\n{example.code}"]


def _fix_problems(rule: type[Rule], example: Invalid) -> list[str]:
    outcome = fix_example(rule, example.code, example.path)
    fixed = outcome.data.decode("utf-8")
    problems = []
    if example.fixed is not None and fixed != example.fixed:
        problems.append(f"fix gave:\n{fixed}\nexpected:\n{example.fixed}")
    left = [d for d in outcome.remaining if d.fix is not None]
    if left:
        problems.append(f"the fixed file still has fixable diagnostics: {[f'{span(d)} {d.message}' for d in left]}")
    return problems
