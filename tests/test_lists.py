"""How a list variable is built up (rocmlint/python/lists.py): additions, consuming reads, reaching definitions."""

from __future__ import annotations

import ast

from snippets import in_order, parse

from rocmlint.python import lists
from rocmlint.python.values import Through

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
    names = [n for n in in_order(snippet.module) if isinstance(n, ast.Name) and n.id == "flags"]
    added = [lists.addition(snippet.ctx, name) for name in names]
    found = [snippet.code(a) for a in added if a is not None]
    assert found == ['flags += ["-g"]', 'flags.append("-lineinfo")', 'flags.insert(0, "-DX")']
    values = [snippet.codes(lists.added_values(a)) for a in added if a is not None]
    assert values == [['["-g"]'], ['"-lineinfo"'], ['"-DX"']]


def test_consuming_reads_leave_out_additions_redefinitions_and_displays() -> None:
    snippet = parse(FLAGS)
    target = snippet.node("flags", ast.Name)  # `flags = ["-O3"]`
    reads = lists.consuming_reads(snippet.ctx, target)
    lines = [snippet.ctx.code_range(read).start.line for read in reads]
    assert lines == [9, 11, 14, 16]  # the three `use(flags)` and the one in `build`


def test_reaching_definitions_stop_at_a_replacing_assignment() -> None:
    snippet = parse(FLAGS)
    uses = [n for n in in_order(snippet.module) if isinstance(n, ast.Call) and snippet.code(n.func) == "use"]
    reaching = [
        [snippet.ctx.code_range(d).start.line for d in lists.reaching_definitions(snippet.ctx, u.args[0])]
        for u in uses
        if isinstance(u.args[0], ast.Name)
    ]
    # first: everything up to `flags = flags + [...]` (which keeps them); second: `flags = ["-O2"]` replaced
    # them; third: the ROCm-only assignment replaces it on ROCm; in `build` every definition is seen.
    assert reaching[0] == [3, 8, 4, 5, 6]
    assert reaching[1] == [10]
    assert reaching[2] == [13]
    assert sorted(reaching[3]) == [3, 4, 5, 6, 8, 10, 13]


ITEMS = """
def with_threads(args):
    return args + ["--threads", "4"]
def hipify(args):
    return ["-DHIP"]
base = ["-O3"]
extra = []
extra.append("-lineinfo")
flags = with_threads(list(base) + extra)
more = hipify(["-X"]) + "-G -g".split() + [name, {"nvcc": ["-c"]}]
"""


def _strings(node: ast.expr) -> list[ast.expr] | Through | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.Dict):
        return Through(tuple(node.values))
    return None


def test_list_items_follow_names_additions_and_passing_calls() -> None:
    snippet = parse(ITEMS)

    def items(name: str) -> list[tuple[str, list[str]]]:
        value = snippet.ctx.single_value(snippet.node(name, ast.Name))
        assert value is not None
        found = lists.list_items(snippet.ctx, value, _strings, lambda helper: helper.name != "hipify")
        return [(snippet.code(leaf), [snippet.code(step) for step in path]) for leaf, path in found]

    call = "with_threads(list(base) + extra)"
    assert items("flags") == [
        ('"-O3"', [call, "list(base)", "base"]),
        ('"-lineinfo"', [call, "extra"]),
        ('"--threads"', [call]),
        ('"4"', [call]),
    ]
    # `hipify` is not followed, `name` has no definition here, the dict is the rule's own step.
    assert items("more") == [('"-G -g"', ['"-G -g".split()']), ('"-c"', [])]


def test_reached_reads() -> None:
    snippet = parse(FLAGS)
    target = snippet.node("flags", ast.Name)  # `flags = ["-O3"]`
    value = snippet.node('["-O3"]', ast.List)
    lines = [snippet.ctx.code_range(read).start.line for read in lists.reached_reads(snippet.ctx, target, value) or []]
    assert lines == [9, 16]  # not past `flags = ["-O2"]`; in `build` every definition is seen
    unread = parse('nvcc_flags = ["-O3"]\n')
    name = unread.node("nvcc_flags", ast.Name)
    assert lists.reached_reads(unread.ctx, name, unread.node('["-O3"]', ast.List)) is None
