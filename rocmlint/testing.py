"""Checks a rule against its own VALID/INVALID examples (used by the test suite and by rule authors)."""

from __future__ import annotations

from pathlib import Path

from rocmlint.config import Settings
from rocmlint.diagnostics import Diagnostic
from rocmlint.engine import Engine
from rocmlint.fix import apply_fixes
from rocmlint.rule import Invalid, Rule
from rocmlint.source import detect_python_encoding


def run_example(rule: type[Rule], code: str, path: str | None = None) -> list[Diagnostic]:
    """The rule's diagnostics on `code`, with the default rules on too (so noqa checks see real hazards)."""
    path = path or ("example.cu" if rule.language == "cuda" else "example.py")
    settings = Settings(root=Path.cwd(), extend_select=(rule.code,))
    report = Engine().check_bytes(path, code.encode("utf-8"), settings)
    return [d for d in report.diagnostics if d.code == rule.code]


def check_invalid(rule: type[Rule], example: Invalid) -> list[str]:
    """Problems with one INVALID example (empty when it behaves as declared)."""
    found = run_example(rule, example.code, example.path)
    if not found:
        return [f"{rule.code} did not report:\n{example.code}"]
    problems = []
    first = found[0]
    if example.line is not None and first.location.line != example.line:
        problems.append(f"expected line {example.line}, got {first.location.line}: {first.message}")
    if example.message is not None and example.message not in first.message:
        problems.append(f"expected message containing {example.message!r}, got {first.message!r}")
    if example.no_fix and any(d.fix is not None for d in found):
        problems.append(f"expected no fix, got: {[d.fix.message for d in found if d.fix is not None]}")
    if example.fixed is not None:
        data = example.code.encode("utf-8")
        # `fixed` is the file after the rule's fix, safe or not (unsafe fixes are applied on request).
        fixes = [d.fix for d in found if d.fix is not None]
        fixed, _ = apply_fixes(data, fixes, detect_python_encoding(data), unsafe=True)
        if fixed.decode("utf-8") != example.fixed:
            problems.append(f"fix gave:\n{fixed.decode('utf-8')}\nexpected:\n{example.fixed}")
    return problems
