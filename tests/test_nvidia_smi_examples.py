"""More examples of ROC116 nvidia-smi than its module has room for, checked the same way as the module's own
(tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from rocmlint.rules.roc116_nvidia_smi import NvidiaSmi

from rocmlint.rule import Invalid, Valid
from rocmlint.testing import check_invalid, check_valid

VALID = (
    # A callback a probe makes after running nvidia-smi in a `try:` that falls through to rocm-smi on OSError:
    # the callback exists only where the probe found the program (commands.made_after_a_run).
    Valid(
        """
        from subprocess import PIPE, Popen
        def gpu_info():
            try:
                info_cmd = ["nvidia-smi", "-L"]
                proc = Popen(info_cmd, stdout=PIPE)
                info = {"ncards": len(proc.stdout.read().splitlines())}
                def used(deviceid=0):
                    return Popen(["nvidia-smi", "--query-gpu=memory.used"], stdout=PIPE).stdout.read()
                info["mem.used"] = used
                return info
            except OSError:
                pass
            return Popen(["rocm-smi", "--showproductname"], stdout=PIPE).stdout.read()
        """,
    ),
)

INVALID = (
    # A callback made before the run, or in a `try:` whose handler does not catch a missing program.
    Invalid(
        """
        from subprocess import PIPE, Popen
        def gpu_info():
            try:
                def used():
                    return Popen(["nvidia-smi", "--query-gpu=memory.used"], stdout=PIPE)
                proc = Popen(["nvidia-smi", "-L"], stdout=PIPE)
                return proc, used
            except OSError:
                pass
        def gpu_info_strict():
            try:
                proc = Popen(["nvidia-smi", "-L"], stdout=PIPE)
                def used():
                    return Popen(["nvidia-smi", "--query-gpu=memory.used"], stdout=PIPE)
                return proc, used
            except ValueError:
                pass
        """,
        expect=("5:26-5:67", "12:22-12:42", "14:26-14:67"),
    ),
)


@pytest.mark.parametrize("example", VALID)
def test_valid(example: Valid) -> None:
    assert check_valid(NvidiaSmi, example) == []


@pytest.mark.parametrize("example", INVALID)
def test_invalid(example: Invalid) -> None:
    assert check_invalid(NvidiaSmi, example) == []
