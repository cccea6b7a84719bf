"""The rule index (rocmlint/rule_index.py) describes the rule modules exactly, and a stale one is caught."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint import registry
from rocmlint.docs import rule_index_is_current, write_rule_index
from rocmlint.registry import (
    INDEX_FILE,
    StaleRuleIndex,
    discover_rules,
    index_module_text,
    info_of,
    rule_infos,
    select_rules,
)


def test_the_checked_in_index_is_current() -> None:
    assert rule_index_is_current(), "rocmlint/rule_index.py is stale: run `python -m rocmlint.docs`"


def test_the_index_describes_every_rule_module() -> None:
    assert rule_infos() == tuple(info_of(rule) for rule in discover_rules())
    assert [info.code for info in rule_infos()] == [rule.code for rule in registry.all_rules()]


def test_the_index_is_read_without_importing_rule_modules(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from rocmlint.registry import rule_infos, select_rules\n"
        "assert rule_infos() and select_rules(None)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rocmlint.rules.', 'rocmlint.python.', 'tree_sitter'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert result.stdout == "[]\n"


def test_all_rules_refuses_a_stale_index(monkeypatch) -> None:
    first, *rest = rule_infos()
    edited = dataclasses.replace(first, enabled_by_default=not first.enabled_by_default)
    monkeypatch.setattr(registry, "rule_infos", lambda: (edited, *rest))
    with pytest.raises(StaleRuleIndex, match=first.code):
        registry.all_rules.__wrapped__()


def test_all_rules_refuses_an_index_missing_a_rule(monkeypatch) -> None:
    missing = rule_infos()[-1]
    monkeypatch.setattr(registry, "rule_infos", lambda: rule_infos.__wrapped__()[:-1])
    with pytest.raises(StaleRuleIndex, match=missing.code):
        registry.all_rules.__wrapped__()


def test_write_rule_index_regenerates_a_stale_file_and_leaves_a_current_one_alone(tmp_path: Path) -> None:
    index = tmp_path / "rule_index.py"
    index.write_text(INDEX_FILE.read_text().replace("True", "False", 1))
    assert not rule_index_is_current(index)
    write_rule_index(index)
    assert index.read_text() == index_module_text(discover_rules())
    stamp = index.stat().st_mtime_ns
    write_rule_index(index)
    assert index.stat().st_mtime_ns == stamp, "an unchanged index is not rewritten (its mtime keys the cache)"


def test_selection_follows_the_index_metadata() -> None:
    by_code = {info.code: info for info in rule_infos()}
    default = select_rules(None)
    assert default == {code for code, info in by_code.items() if info.enabled_by_default}
    off = next(code for code, info in by_code.items() if not info.enabled_by_default)
    assert off not in select_rules(["ROC"]) and off in select_rules(["ALL"]) and off in select_rules([off])
