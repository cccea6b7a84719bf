"""The Python value tracer (rocmlint/python/values.py): each construct it follows, and where it stops.

Each case traces the value assigned to `x` (the last `x = ...`) and lists the code of the leaves: with
`_literals`, every string or integer literal reached.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from snippets import in_order

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
    return_values,
)


@dataclass
class _Parsed:
    text: str
    module: ast.Module
    semantic: Semantic

    def code(self, node: ast.AST) -> str | None:
        return ast.get_source_segment(self.text, node)

    def assigned(self, name: str) -> ast.expr:
        """The value of the last `name = ...`."""
        values = [
            node.value
            for node in in_order(self.module)
            if isinstance(node, ast.Assign) and self.code(node.targets[0]) == name
        ]
        assert values, f"no assignment to {name}"
        return values[-1]


def _parse(code: str) -> _Parsed:
    text = textwrap.dedent(code).lstrip("\n")
    module = ast.parse(text)
    semantic = Semantic(module, None, text)
    walk(module, semantic.parents, {}, semantic.mentions)
    return _Parsed(text, module, semantic)


def _values(semantic: Semantic) -> Values:
    return Values(semantic, References(semantic))


def _literals(expr: ast.expr) -> Sequence[ast.expr] | None:
    """String and integer literals (not `True`, `False` or `None`)."""
    is_literal = isinstance(expr, ast.Constant) and type(expr.value) in (str, bytes, int)
    return [expr] if is_literal else None


def _trace(code: str, follow: Follow = PLAIN, target: str = "x") -> list[str | None]:
    parsed = _parse(code)
    leaves = _values(parsed.semantic).trace(parsed.assigned(target), _literals, follow)
    return [parsed.code(leaf) for leaf in leaves]


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
        pytest.param('x = "a" + "b" % c\n', Follow(operators=(ast.Add,)), ['"a"'], id="operators-chosen"),
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
        pytest.param(
            'class C:\n    def m(self):\n        return "a"\n    def n(self):\n        x = self.m()\n',
            Follow(returns=True),
            ['"a"'],
            id="method-returns",
        ),
        pytest.param(
            'def f():\n    if c:\n        return 1, "b"\n    return 2, "c"\n_, y = f()\nx = y\n',
            Follow(names=Names.ALL, returns=True),
            ['"b"', '"c"'],
            id="unpacked-return-element",
        ),
        pytest.param(
            'def f():\n    if c:\n        return g()\n    return 1, "b"\n_, y = f()\nx = y\n',
            Follow(names=Names.AGREEING, returns=True),
            [],
            id="unpacked-return-not-a-tuple",
        ),
        pytest.param(
            'def f():\n    return 1, "b"\n_, y = f()\nx = y\n', Follow(names=Names.ALL), [], id="unpacked-returns-off"
        ),
        pytest.param(
            'class C:\n    def __init__(self):\n        self.v = "a"\n    def m(self):\n        x = self.v\n',
            Follow(attributes=True),
            ['"a"'],
            id="attribute-across-methods",
        ),
        pytest.param(
            'class C:\n    v = "a"\n    def m(self):\n        self.v = "b"\n        x = self.v\n',
            Follow(names=Names.ALL, attributes=True),
            ['"a"', '"b"'],
            id="attribute-all-values",
        ),
        pytest.param(
            'class C:\n    def m(self):\n        self.v = "b"\n        self.v += "c"\n        x = self.v\n',
            Follow(names=Names.AGREEING, attributes=True),
            [],
            id="attribute-agreeing-rejects-unknown",
        ),
        pytest.param(
            'class C:\n    def m(self):\n        self.v = "b"\n        x = self.v\n', Follow(), [], id="attributes-off"
        ),
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
    parsed = _parse("y = 1\nx = [y for y in g()]\n")
    comprehension = parsed.assigned("x")
    assert isinstance(comprehension, ast.ListComp) and isinstance(comprehension.elt, ast.Name)
    assert parsed.semantic.assigned_values(comprehension.elt) == [None]
    assert _values(parsed.semantic).trace(comprehension.elt, _literals, Follow(names=Names.AGREEING)) == []


def test_depth_cut_off() -> None:
    """A chain of MAX_DEPTH names is followed to its literal; one more is not."""
    chain = "".join(f"A{i + 1} = A{i}\n" for i in range(MAX_DEPTH))
    assert _trace(f'A0 = "a"\n{chain}x = A{MAX_DEPTH - 1}\n') == ['"a"']
    assert _trace(f'A0 = "a"\n{chain}x = A{MAX_DEPTH}\n') == []


def test_self_reference_stops() -> None:
    """Each round of `x = x + "b"` is two steps (the operand, the name)."""
    leaves = _trace('x = "a"\nx = x + "b"\n', Follow(names=Names.ALL, operators=(ast.Add,)))
    assert leaves.count('"b"') == MAX_DEPTH // 2


def test_rule_steps_and_dead_ends() -> None:
    """`visit` returns leaves (a dead end when empty), `Through` to see through a construct of its own,
    or None for the generic constructs."""
    parsed = _parse('A = "a"\nx = int(A) if c else str(A)\n')

    def visit(expr: ast.expr) -> Sequence[str] | Through | None:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            return Through(tuple(expr.args)) if expr.func.id == "int" else []
        return [expr.value] if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None

    assert _values(parsed.semantic).trace(parsed.assigned("x"), visit) == ["a"]


def test_nested_traces_continue_the_depth() -> None:
    """A trace started inside `visit` counts on from the expression visited, so nesting cannot recurse forever."""
    parsed = _parse("x = [x]\n")
    values = _values(parsed.semantic)
    depths: list[int] = []

    def visit(expr: ast.expr) -> Sequence[int] | None:
        if isinstance(expr, ast.List):
            depths.append(len(depths))
            return values.trace(expr.elts[0], visit)
        return None

    assert values.trace(parsed.assigned("x"), visit) == []
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
    parsed = _parse(code)
    found = _values(parsed.semantic).collection_elements(parsed.assigned("x"))
    assert [parsed.code(element) for element in found] == elements


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
    assert is_literal_constant(ast.parse(code, mode="eval").body) is constant


# --- where a value goes -----------------------------------------------------------------------------------
def _described(parsed: _Parsed, destination: Destination | None) -> str | None:
    if destination is None:
        return None
    if destination.call is not None:
        return f"call {parsed.code(destination.call.func)}"
    if destination.reads:
        return "reads " + " ".join(read.id for read in destination.reads)
    return "calls " + " ".join(str(parsed.code(call)) for call in destination.calls)


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
    parsed = _parse(code)
    call = next(node for node in in_order(parsed.module) if isinstance(node, ast.Call) and parsed.code(node) == "c(7)")
    assert _described(parsed, _values(parsed.semantic).destination(call)) == expected


def test_collection_of() -> None:
    parsed = _parse(
        """
        a = frozenset(["x1", "x2"]) + extra
        b = call("x3")
        c = sorted(("x4",))[0]
        d = [*("x5",)] if big else ["x6"]
        e = [w for w in "x7"]
        f = ["x8" for w in ws]
        """
    )
    strings = [n for n in in_order(parsed.module) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    values = _values(parsed.semantic)
    whole = {node.value: parsed.code(values.collection_of(node)) for node in strings}
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
    parsed = _parse("x = 1\ny += 1\nz: int = 1\na = b = 1\nc.d = 1\n")
    names = [assigned_name(statement) for statement in parsed.module.body]  # type: ignore[arg-type]
    assert [name.id if name is not None else None for name in names] == ["x", "y", "z", None, None]


def test_assignment_targets() -> None:
    parsed = _parse("x = 1\ny += 1\nz: int = 1\na = b = 1\nc.d, e = 1, 2\n")
    statements = parsed.module.body
    targets = [[parsed.code(t) for t in assignment_targets(statement)] for statement in statements]  # type: ignore[arg-type]
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
    call = ast.parse(code, mode="eval").body
    assert isinstance(call, ast.Call)
    receiver = list_added_to(call)
    assert (ast.get_source_segment(code, receiver) if receiver is not None else None) == expected


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
    parsed = _parse(code)
    assert [(v.value, v.looped) for v in _values(parsed.semantic).int_values(parsed.assigned("x"))] == expected


def test_int_values_through_every_assignment_and_a_helper() -> None:
    parsed = _parse(
        "def settings(n):\n    warps = 4\n    if n > 8192:\n        warps = 32\n    return n, warps\n"
        "block, w = settings(n)\nx = w\n"
    )
    values = _values(parsed.semantic)
    assert values.int_values(parsed.assigned("x")) == []
    assert [v.value for v in values.int_values(parsed.assigned("x"), Follow(names=Names.ALL, returns=True))] == [4, 32]


def test_texts() -> None:
    parsed = _parse('A = "mov.b32"\nx = (A if c else f"cvt.{t}") if d else "{}".format(y)\n')
    found = [(text, parsed.code(node)) for text, node in _values(parsed.semantic).texts(parsed.assigned("x"))]
    assert found == [("mov.b32", '"mov.b32"'), ("cvt. ", 'f"cvt.{t}"'), ("{}", '"{}"')]


def test_return_values_are_the_defs_own_in_source_order() -> None:
    """Returns of nested defs, classes and lambdas belong to them; the order is the order written, so
    callers that list what a helper returns list it as the author did."""
    module = ast.parse(
        textwrap.dedent(
            """
            def f(x):
                if x:
                    return "a"
                def inner():
                    return "nested"
                for item in x:
                    if item:
                        return "b"
                key = lambda: "lambda"
                class C:
                    def m(self):
                        return "method"
                try:
                    return "c"
                finally:
                    pass
                return
            """
        )
    )
    function = module.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [ast.literal_eval(value) for value in return_values(function)] == ["a", "b", "c"]
