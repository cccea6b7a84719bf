"""The project around a checked file (rocmlint/python/project.py)."""

from __future__ import annotations

import pytest

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
    ],
)
def test_is_test_file(path: str, is_test: bool) -> None:
    assert is_test_file(path) is is_test
