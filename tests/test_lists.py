"""How a list variable is built up (rocmlint/python/lists.py): additions, consuming reads, reaching definitions."""

from __future__ import annotations

import libcst as cst
from test_idioms import _in_order, parse

from rocmlint.python import lists

FLAGS = """
import torch
IS_ROCM = torch.version.hip is not None
flags = ["-O3"]
flags += ["-g"]
flags.append("-lineinfo")
flags.insert(0, "-DX")
print("flags:", flags)
flags = flags + ["-v"]
first = use(flags)
flags = ["-O2"]
second = use(flags)
if IS_ROCM:
    flags = ["--offload-arch=gfx942"]
third = use(flags)
def build():
    return use(flags)
"""


def test_additions_and_what_they_add() -> None:
    snippet = parse(FLAGS)
    names = [n for n in _in_order(snippet.module) if isinstance(n, cst.Name) and n.value == "flags"]
    added = [lists.addition(snippet.ctx, name) for name in names]
    found = [snippet.code(a) for a in added if a is not None]
    assert found == ['flags += ["-g"]', 'flags.append("-lineinfo")', 'flags.insert(0, "-DX")']
    values = [snippet.codes(lists.added_values(a)) for a in added if a is not None]
    assert values == [['["-g"]'], ['"-lineinfo"'], ['"-DX"']]


def test_consuming_reads_leave_out_additions_redefinitions_and_displays() -> None:
    snippet = parse(FLAGS)
    target = snippet.node("flags", cst.Name)  # `flags = ["-O3"]`
    reads = lists.consuming_reads(snippet.ctx, target)
    lines = [snippet.ctx.code_range(read).start.line for read in reads]
    assert lines == [9, 11, 14, 16]  # the three `use(flags)` and the one in `build`


def test_reaching_definitions_stop_at_a_replacing_assignment() -> None:
    snippet = parse(FLAGS)
    uses = [n for n in _in_order(snippet.module) if isinstance(n, cst.Call) and snippet.code(n.func) == "use"]
    reaching = [
        [snippet.ctx.code_range(d).start.line for d in lists.reaching_definitions(snippet.ctx, u.args[0].value)]
        for u in uses
        if isinstance(u.args[0].value, cst.Name)
    ]
    # first: everything up to `flags = flags + [...]` (which keeps them); second: `flags = ["-O2"]` replaced
    # them; third: the ROCm-only assignment replaces it on ROCm; in `build` every definition is seen.
    assert reaching[0] == [3, 8, 4, 5, 6]
    assert reaching[1] == [10]
    assert reaching[2] == [13]
    assert sorted(reaching[3]) == [3, 4, 5, 6, 8, 10, 13]
