"""The Python value tracer (rocmlint/python/values.py): each construct it follows, and where it stops.

Each case traces the value assigned to `x` (the last `x = ...`) and lists the code of the leaves: with
`_literals`, every string or integer literal reached.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import libcst as cst
import pytest

from rocmlint.python.references import References
from rocmlint.python.semantic import MAX_DEPTH, Semantic
from rocmlint.python.tree import walk
from rocmlint.python.values import (
    ALL_OPERATORS,
    PLAIN,
    Destination,
    Follow,
    Names,
    Through,
    Values,
    assigned_name,
    assignment_targets,
    is_literal_constant,
    list_added_to,
)


def _parse(code: str) -> tuple[cst.Module, Semantic]:
    module = cst.parse_module(textwrap.dedent(code).lstrip("\n"))
    semantic = Semantic(module, None)
    walk(module, semantic.parents, {})
    return module, semantic


def _values(semantic: Semantic) -> Values:
    return Values(semantic, References(semantic))


def _walk(root: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node under `root`, in source order."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


def _assigned(module: cst.Module, name: str) -> cst.BaseExpression:
    """The value of the last `name = ...`."""
    values = [
        node.value
        for node in _walk(module)
        if isinstance(node, cst.Assign) and module.code_for_node(node.targets[0].target) == name
    ]
    assert values, f"no assignment to {name}"
    return values[-1]


def _literals(expr: cst.BaseExpression) -> Sequence[cst.BaseExpression] | None:
    return [expr] if isinstance(expr, (cst.SimpleString, cst.Integer)) else None


def _trace(code: str, follow: Follow = PLAIN, target: str = "x") -> list[str]:
    module, semantic = _parse(code)
    leaves = _values(semantic).trace(_assigned(module, target), _literals, follow)
    return [module.code_for_node(leaf) for leaf in leaves]


@pytest.mark.parametrize(
    ("code", "follow", "expected"),
    [
        pytest.param('x = "a"\n', Follow(), ['"a"'], id="leaf"),
        pytest.param('A = "a"\nB = A\nx = B\n', Follow(), ['"a"'], id="names-assigned-once"),
        pytest.param('A = "a"\nif c:\n    A = "b"\nx = A\n', Follow(), [], id="single-skips-reassigned"),
        pytest.param('A = "a"\nif c:\n    A = "b"\nx = A\n', Follow(names=Names.ALL), ['"a"', '"b"'], id="all"),
        pytest.param("A = 1\nfor A in f():\n    pass\nx = A\n", Follow(names=Names.ALL), ["1"], id="all-skips-unknown"),
        pytest.param(
            "A = 1\nfor A in f():\n    pass\nx = A\n", Follow(names=Names.AGREEING), [], id="agreeing-rejects-unknown"
        ),
        pytest.param(
            "try:\n    A = g(7)\nexcept E:\n    A = (0, 0)\nx = A\n",
            Follow(names=Names.AGREEING, subscripts=True),
            [],
            id="agreeing-constant-leads-nowhere",
        ),
        pytest.param(
            "try:\n    A = 7\nexcept E:\n    A = g()\nx = A\n",
            Follow(names=Names.AGREEING),
            [],
            id="agreeing-rejects-other-value",
        ),
        pytest.param("major, minor = 8, 9\nx = minor\n", Follow(names=Names.ALL), ["9"], id="tuple-unpacking-element"),
        pytest.param("def f(p):\n    x = p\n", Follow(names=Names.ALL), [], id="parameter-unknown"),
        pytest.param('x = "a" if c else ("b" if d else "c")\n', Follow(), ['"a"', '"b"', '"c"'], id="arms"),
        pytest.param('x = "a" if c else "b"\n', Follow(arms=False), [], id="arms-off"),
        pytest.param('x = "a" + "b" % c\n', Follow(operators=(cst.Add,)), ['"a"'], id="operators-chosen"),
        pytest.param("x = 2 * 3 - 1\n", Follow(operators=ALL_OPERATORS), ["2", "3", "1"], id="all-operators"),
        pytest.param('A = ["a"]\nx = A[0]\n', Follow(subscripts=True, elements=True), ['"a"'], id="subscript"),
        pytest.param('x = ("a", ["b"], {"c"})\n', Follow(elements=True), ['"a"', '"b"', '"c"'], id="elements"),
        pytest.param('x = ("a", "b")\n', Follow(), [], id="elements-off"),
        pytest.param('A = "a"\nx = f"{A}-{3}"\n', Follow(fields=True), ['"a"', "3"], id="f-string-fields"),
        pytest.param('P = ["a", "b"]\nx = ",".join(P)\n', Follow(joins=True, elements=True), ['"a"', '"b"'], id="join"),
        pytest.param("for w in [4, 32]:\n    x = w\n", Follow(loops=True), ["4", "32"], id="loop-elements"),
        pytest.param(
            "for b, w in [(1, 4), (2, 32)]:\n    x = w\n", Follow(loops=True), ["4", "32"], id="loop-tuple-target"
        ),
        pytest.param(
            "import itertools\nfor b, w in itertools.product([1], [4, 8]):\n    x = w\n",
            Follow(loops=True),
            ["4", "8"],
            id="loop-product",
        ),
        pytest.param(
            "for w in f([4]):\n    x = w\n", Follow(loops=True, returns=True), [], id="loop-over-unknown-iterable"
        ),
        pytest.param(
            "def f():\n    return [4]\nfor w in f():\n    x = w\n",
            Follow(loops=True, returns=True, elements=True),
            ["4"],
            id="loop-element-is-the-iterable",
        ),
        pytest.param(
            'def f():\n    def g():\n        return "no"\n    return "yes"\nx = f()\n',
            Follow(returns=True),
            ['"yes"'],
            id="local-function-returns",
        ),
        pytest.param("def f():\n    return 1\nx = f()\n", Follow(), [], id="returns-off"),
        pytest.param("x = [y for y in [1]][0]\n", Follow(subscripts=True, names=Names.ALL), [], id="comprehension"),
        pytest.param('x = sorted(set(("a",)))\n', Follow(conversions=True, elements=True), ['"a"'], id="conversions"),
        pytest.param('x = sorted(("a",))\n', Follow(elements=True), [], id="conversions-off"),
        pytest.param('x = " {} ".format(1).strip()\n', Follow(text_methods=True), ['" {} "'], id="text-methods"),
        pytest.param('x = "a".replace("a", "")\n', Follow(text_methods=True), [], id="other-methods-not"),
    ],
)
def test_follows(code: str, follow: Follow, expected: list[str]) -> None:
    assert _trace(code, follow) == expected


def test_comprehension_variable_is_unknown() -> None:
    module, semantic = _parse("y = 1\nx = [y for y in g()]\n")
    comprehension = _assigned(module, "x")
    assert isinstance(comprehension, cst.ListComp) and isinstance(comprehension.elt, cst.Name)
    assert semantic.assigned_values(comprehension.elt) == [None]
    assert _values(semantic).trace(comprehension.elt, _literals, Follow(names=Names.AGREEING)) == []


def test_depth_cut_off() -> None:
    """A chain of MAX_DEPTH names is followed to its literal; one more is not."""
    chain = "".join(f"A{i + 1} = A{i}\n" for i in range(MAX_DEPTH))
    assert _trace(f'A0 = "a"\n{chain}x = A{MAX_DEPTH - 1}\n') == ['"a"']
    assert _trace(f'A0 = "a"\n{chain}x = A{MAX_DEPTH}\n') == []


def test_self_reference_stops() -> None:
    """Each round of `x = x + "b"` is two steps (the operand, the name)."""
    leaves = _trace('x = "a"\nx = x + "b"\n', Follow(names=Names.ALL, operators=(cst.Add,)))
    assert leaves.count('"b"') == MAX_DEPTH // 2


def test_rule_steps_and_dead_ends() -> None:
    """`visit` returns leaves (a dead end when empty), `Through` to see through a construct of its own,
    or None for the generic constructs."""
    module, semantic = _parse('A = "a"\nx = int(A) if c else str(A)\n')

    def visit(expr: cst.BaseExpression) -> Sequence[str] | Through | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            return Through(tuple(arg.value for arg in expr.args)) if expr.func.value == "int" else []
        return [expr.evaluated_value] if isinstance(expr, cst.SimpleString) else None  # type: ignore[list-item]

    assert _values(semantic).trace(_assigned(module, "x"), visit) == ["a"]


def test_nested_traces_continue_the_depth() -> None:
    """A trace started inside `visit` counts on from the expression visited, so nesting cannot recurse forever."""
    module, semantic = _parse("x = [x]\n")
    values = _values(semantic)
    depths: list[int] = []

    def visit(expr: cst.BaseExpression) -> Sequence[int] | None:
        if isinstance(expr, cst.List):
            depths.append(len(depths))
            return values.trace(expr.elements[0].value, visit)
        return None

    assert values.trace(_assigned(module, "x"), visit) == []
    assert 0 < len(depths) <= MAX_DEPTH


@pytest.mark.parametrize(
    ("code", "elements"),
    [
        pytest.param('x = ("a", "b")\n', ['"a"', '"b"'], id="tuple"),
        pytest.param('A = {"a": 1}\nx = A\n', ['"a"'], id="dict-keys-through-name"),
        pytest.param('x = frozenset({"a"})\n', ['"a"'], id="frozenset"),
        pytest.param('x = "ab"\n', [], id="a-string-is-no-collection"),
    ],
)
def test_collection_elements(code: str, elements: list[str]) -> None:
    module, semantic = _parse(code)
    found = _values(semantic).collection_elements(_assigned(module, "x"))
    assert [module.code_for_node(element) for element in found] == elements


@pytest.mark.parametrize(
    ("code", "constant"),
    [
        ("0", True),
        ("-1", True),
        ("(0, 0)", True),
        ("[]", True),
        ("None", True),
        ('"x"', True),
        ("f()", False),
        ("(0, a)", False),
    ],
)
def test_is_literal_constant(code: str, constant: bool) -> None:
    assert is_literal_constant(cst.parse_expression(code)) is constant


# --- where a value goes -----------------------------------------------------------------------------------
def _described(module: cst.Module, destination: Destination | None) -> str | None:
    if destination is None:
        return None
    if destination.call is not None:
        return f"call {module.code_for_node(destination.call.func)}"
    if destination.reads:
        return "reads " + " ".join(read.value for read in destination.reads)
    return "calls " + " ".join(module.code_for_node(call) for call in destination.calls)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("prune(list([c(7)] + [c(8)]))\n", "call prune", id="argument-through-collections"),
        pytest.param("prune(c(7) if a else None)\n", "call prune", id="arm"),
        pytest.param("x = [c(7) for w in ws]\nuse(x)\nx.append(1)\n", "reads x", id="variable-reads"),
        pytest.param("x = []\nx.append(c(7))\nuse(x)\n", "reads x", id="added-to-variable"),
        pytest.param("def f():\n    return [c(7)]\nuse(f())\nf\n", "calls f()", id="returned"),
        pytest.param("a, b = [c(7)], 1\n", None, id="unpacked"),
        pytest.param("prune(c(7).x)\n", None, id="attribute-of-it"),
    ],
)
def test_destination(code: str, expected: str | None) -> None:
    """Where the collection holding the call `c(7)` goes."""
    module, semantic = _parse(code)
    call = next(node for node in _walk(module) if isinstance(node, cst.Call) and module.code_for_node(node) == "c(7)")
    assert _described(module, _values(semantic).destination(call)) == expected


def test_collection_of() -> None:
    module, semantic = _parse(
        """
        a = frozenset(["x1", "x2"]) + extra
        b = call("x3")
        c = sorted(("x4",))[0]
        d = [*("x5",)] if big else ["x6"]
        e = [w for w in "x7"]
        f = ["x8" for w in ws]
        """
    )
    strings = {module.code_for_node(n): n for n in _walk(module) if isinstance(n, cst.SimpleString)}
    values = _values(semantic)
    whole = {text.strip('"'): module.code_for_node(values.collection_of(node)) for text, node in strings.items()}
    assert whole == {
        "x1": 'frozenset(["x1", "x2"]) + extra',
        "x2": 'frozenset(["x1", "x2"]) + extra',
        "x3": '"x3"',
        "x4": 'sorted(("x4",))',
        "x5": '[*("x5",)] if big else ["x6"]',
        "x6": '[*("x5",)] if big else ["x6"]',
        "x7": '"x7"',
        "x8": '["x8" for w in ws]',
    }


def test_assigned_name() -> None:
    module, _ = _parse("x = 1\ny += 1\nz: int = 1\na = b = 1\nc.d = 1\n")
    statements = [line.body[0] for line in module.body if isinstance(line, cst.SimpleStatementLine)]
    names = [assigned_name(statement) for statement in statements]  # type: ignore[arg-type]
    assert [name.value if name is not None else None for name in names] == ["x", "y", "z", None, None]


def test_assignment_targets() -> None:
    module, _ = _parse("x = 1\ny += 1\nz: int = 1\na = b = 1\nc.d, e = 1, 2\n")
    statements = [line.body[0] for line in module.body if isinstance(line, cst.SimpleStatementLine)]
    code = module.code_for_node
    targets = [[code(t) for t in assignment_targets(statement)] for statement in statements]  # type: ignore[arg-type]
    assert targets == [["x"], ["y"], ["z"], ["a", "b"], ["c.d, e"]]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("flags.append(a)", "flags"),
        ("self.flags.extend(a)", "self.flags"),
        ("args['nvcc'].insert(0, a)", "args['nvcc']"),
        ("flags.add(a)", None),
        ("append(a)", None),
    ],
)
def test_list_added_to(code: str, expected: str | None) -> None:
    call = cst.parse_expression(code)
    assert isinstance(call, cst.Call)
    receiver = list_added_to(call)
    assert (cst.Module([]).code_for_node(receiver) if receiver is not None else None) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("B = 1024\nx = B // 32\n", [(32, False)], id="constant-arithmetic"),
        pytest.param("x = (1 << 5) - 2 * 3 + 1\n", [(27, False)], id="nested-arithmetic"),
        pytest.param("x = 8 // 0\n", [], id="no-division-by-zero"),
        pytest.param("x = 1 << 100\n", [], id="no-huge-shift"),
        pytest.param("x = 2 ** 5\n", [], id="power-not-folded"),
        pytest.param("x = max(4, min(32, 64))\n", [(32, False)], id="min-max"),
        pytest.param("x = max(4, n)\n", [], id="min-max-of-unknown"),
        pytest.param("x = 8 if c else 32\n", [(8, False), (32, False)], id="arms"),
        pytest.param("for w in [4, 32]:\n    x = w\n", [(4, True), (32, True)], id="loop"),
        pytest.param("for w in [4, 32]:\n    x = w * 2\n", [], id="looped-operand-is-no-constant"),
        pytest.param("def f(w):\n    x = w\n", [], id="parameter"),
    ],
)
def test_int_values(code: str, expected: list[tuple[int, bool]]) -> None:
    module, semantic = _parse(code)
    assert [(v.value, v.looped) for v in _values(semantic).int_values(_assigned(module, "x"))] == expected


def test_texts() -> None:
    module, semantic = _parse('A = "mov.b32"\nx = (A if c else f"cvt.{t}") if d else "{}".format(y)\n')
    found = [(text, module.code_for_node(node)) for text, node in _values(semantic).texts(_assigned(module, "x"))]
    assert found == [("mov.b32", '"mov.b32"'), ("cvt. ", 'f"cvt.{t}"'), ("{}", '"{}"')]
