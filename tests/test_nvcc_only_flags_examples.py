"""More examples of ROC301 nvcc-only-flags than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rocmlint.rules.roc301_nvcc_only_flags import NvccOnlyFlags
from test_cuda_project import write_tree

from rocmlint.config import Settings
from rocmlint.engine import Engine
from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # A private module-level list nothing reads: no compiler receives it.
    Valid(
        """
        _COMMON_NVCC_FLAGS = ["-D__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr"]
        """,
    ),
)

INVALID = (
    # A public one may be read by a module importing it: without the project's import index, it counts.
    Invalid(
        """
        COMMON_NVCC_FLAGS = ["-D__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr"]
        """,
        expect=("1:54-1:80",),
    ),
    # An f-string arch flag in a DeepSpeed-style `nvcc_args` method.
    Invalid(
        """
        class QuantizerBuilder:
            def nvcc_args(self):
                major, minor = 8, 0
                return ["-O3", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"]
        """,
        expect=("4:24-4:86",),
        message="--offload-arch=gfx",
    ),
)


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(NvccOnlyFlags, example) == []


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(NvccOnlyFlags, example) == []


@pytest.mark.parametrize(
    ("importer", "reported"),
    [("", False), ("from pkg.ext import COMMON_NVCC_FLAGS\nFLAGS = list(COMMON_NVCC_FLAGS)\n", True)],
)
def test_a_public_list_counts_when_a_module_of_the_project_imports_it(
    tmp_path: Path, importer: str, reported: bool
) -> None:
    flags = 'COMMON_NVCC_FLAGS = ["--expt-relaxed-constexpr"]\n'
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/ext.py": flags, "pkg/build.py": importer})
    report = Engine().check_path(root / "pkg/ext.py", Settings(root=root, select=("ROC301",)))
    assert [d.code for d in report.diagnostics] == (["ROC301"] if reported else [])
