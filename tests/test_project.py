"""The project around a checked file (rocmlint/python/project.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, write_tree

from rocmlint.python.project import is_test_file


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_ops.py", True),
        ("pkg/ops_test.py", True),
        ("pkg/conftest.py", True),
        ("repo/test/unit/helpers.py", True),
        ("home/tests/project/pkg/setup.py", False),  # a checkout under ~/tests is not a test suite
        ("pkg/testing_utils.py", False),
        ("app_tests/integration_tests/llm/device_settings.py", True),  # a folder named for a kind of tests
        ("pkg/latests/model.py", False),
    ],
)
def test_is_test_file(path: str, is_test: bool) -> None:
    assert is_test_file(path) is is_test


def test_settings_table_in_a_folder_named_for_a_kind_of_tests_is_not_checked_by_a_product_only_rule(
    project: Path, cli: Callable[..., Result]
) -> None:
    """ROC105 checks no test suite's files: a per-target settings table in `integration_tests/` is test support,
    while the same table in the product is reported."""
    table = 'GFX942 = ("--iree-hip-target=gfx942",)\nTARGETS = {"gfx942": GFX942}\ndef flags(arch):\n    return TARGETS[arch]\n'
    write_tree(project, {"app_tests/integration_tests/llm/device_settings.py": table, "pkg/device_settings.py": table})
    result = cli("check", ".", "--select", "ROC105", "--output-format", "json", "--no-cache", "--exit-zero")
    paths = {finding["filename"] for finding in json.loads(result.stdout)}
    assert [path.endswith("pkg/device_settings.py") for path in paths] == [True]
