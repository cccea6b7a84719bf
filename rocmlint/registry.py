"""Finds every rule in the `rocmlint.rules` package and resolves `select`/`ignore` prefixes to rules."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from functools import lru_cache

from rocmlint.rule import Rule

CODE_RE = re.compile(r"^ROC\d{3}$")
SELECTOR_RE = re.compile(r"^(ALL|ROC\d{0,3})$")


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, ordered by code."""
    import rocmlint.rules as package

    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if _is_rule_class(value, module.__name__):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"two rules claim {value.code}: {found[value.code]} and {value}")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def _is_rule_class(value: object, module_name: str) -> bool:
    return (
        isinstance(value, type)
        and issubclass(value, Rule)
        and value.__module__ == module_name
        and "code" in vars(value)
    )


def rule_by_code(code: str) -> type[Rule] | None:
    code = code.upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None


def is_valid_selector(selector: str) -> bool:
    return bool(SELECTOR_RE.match(selector))


def select_rules(
    select: Iterable[str] | None,
    ignore: Iterable[str] = (),
    extend_select: Iterable[str] = (),
) -> frozenset[str]:
    """The codes enabled by ruff-style selection.

    The most specific matching selector decides; on a tie `ignore` wins. With no `select`, the default set
    is every rule that is on by default. Rules that are off by default (ROC002, ROC216) are enabled only
    by their exact code or `ALL`, never by a shorter prefix.
    """
    selected = list(select) if select is not None else None
    extend = list(extend_select)
    ignored = list(ignore)
    enabled: set[str] = set()
    for rule in all_rules():
        if _decide(rule, selected, extend, ignored):
            enabled.add(rule.code)
    return frozenset(enabled)


def _decide(rule: type[Rule], select: list[str] | None, extend: list[str], ignore: list[str]) -> bool:
    chosen = [s for s in (select or []) + extend if _matches(s, rule)]
    best_select = max((_specificity(s) for s in chosen), default=-1)
    if select is None and rule.enabled_by_default:
        best_select = max(best_select, 0)
    best_ignore = max((_specificity(s) for s in ignore if _prefix_matches(s, rule.code)), default=-1)
    return best_select >= 0 and best_select > best_ignore


def _matches(selector: str, rule: type[Rule]) -> bool:
    if not _prefix_matches(selector, rule.code):
        return False
    return rule.enabled_by_default or selector in ("ALL", rule.code)


def _prefix_matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)
