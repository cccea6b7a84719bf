"""The rule pages in docs/rules/ are generated from the rule modules and must not drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rocmlint.docs import expected_files, rule_page, stale_files
from rocmlint.registry import all_rules

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def test_generated_rule_docs_are_current() -> None:
    stale = stale_files(DOCS)
    assert not stale, f"stale docs: {stale}; run `python -m rocmlint.docs`"


def test_every_rule_has_a_page_and_an_index_row() -> None:
    files = expected_files()
    index = files["README.md"]
    for rule in all_rules():
        assert f"{rule.code}.md" in files
        assert f"[{rule.code}]({rule.code}.md)" in index


def test_rule_command_prints_the_page() -> None:
    rule = all_rules()[0]
    result = subprocess.run([sys.executable, "-m", "rocmlint", "rule", rule.code], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout == rule_page(rule)


def test_docs_check_mode_detects_drift(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "rocmlint.docs", "--dir", str(tmp_path)], check=True)
    assert stale_files(tmp_path) == []
    page = tmp_path / f"{all_rules()[0].code}.md"
    page.write_text(page.read_text() + "edited by hand\n")
    result = subprocess.run(
        [sys.executable, "-m", "rocmlint.docs", "--check", "--dir", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert page.name in result.stderr


def test_every_python_rule_decides_whether_test_files_are_in_scope() -> None:
    for rule in all_rules():
        if rule.language != "python":
            continue
        assert "applies_to_tests" in vars(rule), f"{rule.code} does not say whether test files are in scope"
        page = rule_page(rule)
        assert f"Test files: {'checked' if rule.applies_to_tests else 'not checked'}" in page
        assert rule.applies_to_tests or "Test files are not checked" in rule.doc(), f"{rule.code}: say why"
