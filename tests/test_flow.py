"""Where a value goes (rocmlint/python/flow.py): the forward walk to its uses, and what most uses say; and the
string literals a value holds (`idioms.literal_value`, `idioms.literals_in`)."""

from __future__ import annotations

import ast

import pytest
from snippets import Snippet, parse

from rocmlint.python import flow, idioms

_FOLLOWED = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension)


def _uses(snippet: Snippet, literal: str) -> list[str]:
    """The uses the walk from the string literal `literal` reaches, as `<code> in <parent type>`; stores
    nothing reads as `<code> stored`."""

    def visit(value: ast.AST) -> list[str] | None:
        parent = snippet.ctx.parent(value)
        if snippet.semantic.is_store(value):
            return [f"{snippet.code(value)} stored"]
        if isinstance(parent, _FOLLOWED) or (
            isinstance(parent, ast.Call) and parent.func is not value and idioms.last_name(parent.func) == "append"
        ):
            return None
        return [f"{snippet.code(value)} in {type(parent).__name__}"]

    return flow.value_uses(snippet.ctx, snippet.node(literal, ast.Constant), visit)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            'ARCH = "gfx942"\nflags = [f"--arch={ARCH}"]\nuse(ARCH)\n',
            ["ARCH in FormattedValue", "ARCH in Call"],
            id="assignment-reads",
        ),
        pytest.param(
            'for arch in ["gfx90a", "gfx942"]:\n    use(arch)\nprint(arch)\n',
            ["arch in Call"],
            id="loop-variable-read-inside-the-loop",
        ),
        pytest.param(
            'ARCHS = ["gfx90a"]\nflags = [f"-a={a}" for a in ARCHS]\n',
            ["a in FormattedValue"],
            id="comprehension",
        ),
        pytest.param(
            'flags = []\nflags.append("gfx90a")\nrun(flags)\n',
            ["flags in Attribute", "flags in Call"],
            id="list-added-to",
        ),
        pytest.param('self.flags.append("gfx90a")\n', ["self.flags in Attribute"], id="attribute-list-added-to"),
        pytest.param('config.rocm.arch = ["gfx90a"]\n', ["config.rocm.arch stored"], id="unread-attribute"),
        pytest.param('os.environ["ARCH"] = "gfx90a"\n', ['os.environ["ARCH"] stored'], id="subscript-target"),
        pytest.param('UNUSED = "gfx90a"\n', ["UNUSED stored"], id="unread-name"),
        pytest.param(
            'A = "gfx90a"\nB = A\nC = B\nD = C\nuse(C)\nuse(D)\n', ["C in Call"], id="three-variables-at-most"
        ),
        pytest.param('use(("gfx90a", "gfx942"))\n', ['("gfx90a", "gfx942") in Call'], id="whole-collection"),
    ],
)
def test_value_uses(code: str, expected: list[str]) -> None:
    snippet = parse(code)
    assert _uses(snippet, '"gfx90a"' if '"gfx90a"' in code else '"gfx942"') == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param('ok = arch == "x"\n', True, id="compared"),
        pytest.param('ok = arch.startswith("x")\n', True, id="matched"),
        pytest.param('ok = {"x"}\n', True, id="set-display"),
        pytest.param('ok = frozenset(["x"])\n', True, id="frozenset"),
        pytest.param('ok = table["x"]\n', True, id="subscript-key"),
        pytest.param('ok = ["x"]\n', False, id="list"),
    ],
)
def test_is_tested(code: str, expected: bool) -> None:
    snippet = parse(code)
    literal = snippet.node('"x"', ast.Constant)
    assert flow.is_tested(snippet.ctx, snippet.ctx.values.collection_of(literal)) is expected


@pytest.mark.parametrize(
    ("code", "renames"),
    [
        pytest.param('t = arch if arch != "y" else "x"\n', True, id="not-equal-else"),
        pytest.param('t = "x" if arch == "y" else arch\n', True, id="equal-body"),
        pytest.param('t = "x" if "y" == arch else arch\n', True, id="literal-left"),
        pytest.param('t = arch if arch == "y" else "x"\n', False, id="taken-when-different"),
        pytest.param('t = arch if other != "y" else "x"\n', False, id="another-name-tested"),
        pytest.param('t = arch if arch != limit else "x"\n', False, id="no-literal-compared"),
        pytest.param('t = default if arch != "y" else "x"\n', False, id="arm-not-tested"),
    ],
)
def test_renames_tested_value(code: str, renames: bool) -> None:
    snippet = parse(code)
    assert flow.renames_tested_value(snippet.ctx, snippet.node('"x"', ast.Constant)) is renames


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param('build(arch="x")\n', True, id="keyword-argument"),
        pytest.param('def build(arch="x"): ...\n', True, id="parameter-default"),
        pytest.param('a = os.getenv("ARCH", "x")\n', True, id="fallback"),
        pytest.param('a = os.getenv("x")\n', False, id="key"),
        pytest.param('a = ";".join("x")\n', True, id="join"),
        pytest.param('import subprocess\nsubprocess.run("x")\n', True, id="command-line"),
        pytest.param('from triton.compiler import GPUTarget\nGPUTarget("x")\n', True, id="consumer"),
        pytest.param('register("x")\n', False, id="positional-argument"),
        pytest.param('a = "-a=%s" % "x"\n', True, id="percent-operand"),
        pytest.param('a = "x" % b\n', False, id="percent-template"),
    ],
)
def test_sets_up(code: str, expected: bool) -> None:
    snippet = parse(code)
    literal = snippet.node('"x"', ast.Constant)
    assert flow.sets_up(snippet.ctx, literal, frozenset({"triton.compiler.GPUTarget"})) is expected


def test_sets_up_a_stored_subscript_or_attribute_not_a_name() -> None:
    snippet = parse('os.environ["K"] = v\nconfig.arch = v\nname = v\n')
    targets = [snippet.node('os.environ["K"]', ast.Subscript), snippet.node("config.arch", ast.Attribute)]
    assert [flow.sets_up(snippet.ctx, target) for target in targets] == [True, True]
    assert not flow.sets_up(snippet.ctx, snippet.node("name", ast.Name))


def test_sets_up_an_f_string_field() -> None:
    snippet = parse('a = f"--arch={ARCH}"\n')
    assert flow.sets_up(snippet.ctx, snippet.node("ARCH", ast.Name))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param('x = "gfx942"\n', "gfx942", id="string"),
        pytest.param('x = b"--arch=gfx942"\n', "--arch=gfx942", id="bytes"),
        pytest.param('x = "gfx90a;" "gfx942"\n', "gfx90a;gfx942", id="concatenated"),
    ],
)
def test_literal_value(code: str, expected: str) -> None:
    snippet = parse(code)
    value = snippet.value("x")
    assert isinstance(value, ast.Constant)
    assert idioms.literal_value(snippet.ctx, value) == expected


def test_literals_in_a_value_in_source_order() -> None:
    snippet = parse('x = frozenset(["a", b"b"] + ["c" "d", name, ("e",)])\n')
    assert idioms.literals_in(snippet.ctx, snippet.value("x")) == ["a", "b", "cd", "e"]


@pytest.mark.parametrize(
    ("code", "only_display"),
    [
        pytest.param("if 'x' in text:\n    print('a')\nelse:\n    log.warning('b')\n", True, id="if-else-prints"),
        pytest.param("known = any(m in text for m in M)\nif not known:\n    print('a')\n", True, id="through-name"),
        pytest.param("if 'x' in text or y:\n    pass\nelif z:\n    print('b')\n", True, id="elif-prints"),
        pytest.param("if 'x' in text:\n    print('a')\n    retry()\n", False, id="arm-does-more"),
        pytest.param("known = 'x' in text\nif known:\n    print('a')\nreturn known\n", False, id="also-returned"),
        pytest.param("known = 'x' in text\n", False, id="never-read"),
        pytest.param("return 'x' in text\n", False, id="returned"),
    ],
)
def test_only_picks_display(code: str, only_display: bool) -> None:
    body = "".join(f"    {line}\n" for line in code.splitlines())
    snippet = parse(f"import logging\nlog = logging.getLogger()\ndef f(text, y, z):\n{body}")
    site = next(node for node in ast.walk(snippet.module) if isinstance(node, ast.Compare))
    assert flow.only_picks_display(snippet.ctx, site) is only_display


@pytest.mark.parametrize(
    ("code", "dead"),
    [
        pytest.param("def f(text):\n    known = 'x' in text\n", True, id="local-never-read"),
        pytest.param("def f(text):\n    known = 'x' in text\n    return known\n", False, id="local-read"),
        pytest.param("_known = 'x' in TEXT\n", True, id="private-module-name"),
        pytest.param("KNOWN = 'x' in TEXT\n", False, id="public-module-name-importers-unknown"),
        pytest.param("def f(text):\n    a.known = 'x' in text\n", False, id="attribute"),
        pytest.param("def f(text):\n    return 'x' in text\n", False, id="returned"),
    ],
)
def test_never_read(code: str, dead: bool) -> None:
    snippet = parse(code)
    site = next(node for node in ast.walk(snippet.module) if isinstance(node, ast.Compare))
    assert flow.never_read(snippet.ctx, site) is dead


@pytest.mark.parametrize(
    ("code", "decides"),
    [
        pytest.param("assert all(a in S for a in archs), archs\n", True, id="asserted-through-all"),
        pytest.param("if arch not in S:\n    raise ValueError(arch)\n", True, id="arm-raises"),
        pytest.param("if arch in S and y:\n    go()\nelse:\n    return False\n", True, id="else-returns-false"),
        pytest.param("return any(a in arch for a in S)\n", True, id="returned-predicate"),
        pytest.param("if arch in S:\n    size = 256\n", False, id="picks-a-setting"),
        pytest.param("if arch not in S:\n    log.warning(arch)\n", False, id="only-warns"),
        pytest.param("if arch not in S:\n    return None\n", False, id="returns-none"),
        pytest.param("fast = arch in S\n", False, id="assigned"),
        pytest.param("assert x, arch in S\n", False, id="in-the-message"),
    ],
)
def test_decides_support(code: str, decides: bool) -> None:
    body = "".join(f"    {line}\n" for line in code.splitlines())
    snippet = parse(f"import logging\nlog = logging.getLogger()\nS = []\ndef f(arch, archs, x, y):\n{body}")
    site = next(node for node in ast.walk(snippet.module) if isinstance(node, ast.Compare))
    assert flow.decides_support(snippet.ctx, site) is decides


@pytest.mark.parametrize(
    ("table", "advice"),
    [
        pytest.param('[(P, "Out of GPU memory. Try a smaller batch."), (Q, "Check your network.")]', True, id="advice"),
        pytest.param('((P, "Out of GPU memory: try int4."),)', True, id="tuple-of-pairs"),
        pytest.param('[(P, "oom"), (Q, "network")]', False, id="labels-read-back"),
        pytest.param('[("Out of GPU memory. Try a smaller batch.", P)]', False, id="pattern-second"),
        pytest.param('[(P, "Out of GPU memory. Try a smaller batch.", retry)]', False, id="more-than-a-pair"),
        pytest.param('check(P, "Out of GPU memory. Try a smaller batch.")', False, id="call-arguments"),
    ],
)
def test_pairs_with_advice(table: str, advice: bool) -> None:
    """A pattern paired with a sentence of advice in a table only picks the advice shown."""
    snippet = parse("HINTS = " + table + "\n")
    assert flow.pairs_with_advice(snippet.ctx, snippet.node("P", ast.Name)) is advice
