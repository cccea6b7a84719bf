"""The shared pieces rules ask the Python front end for: `Semantic`'s name and value helpers,
`rocmlint.python.idioms`, the condition walks of `rocmlint.python.conditions`, and `PythonContext.report`'s
answer. Snippets are parsed by tests/snippets.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import pytest
from snippets import in_order, parse

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python import conditions, idioms
from rocmlint.python.semantic import MAX_DEPTH, Semantic
from rocmlint.rule import Rule


# --- Semantic: values -----------------------------------------------------------------------------------
def test_comparison_pairs() -> None:
    snippet = parse("x = a < b <= c\n")
    comparison = snippet.value_as("x", ast.Compare)
    code = snippet.code
    pairs = [(code(left), type(op).__name__, code(right)) for left, op, right in Semantic.comparison_pairs(comparison)]
    assert pairs == [("a", "Lt", "b"), ("b", "LtE", "c")]


def test_dict_key_of() -> None:
    snippet = parse('d = {"ARCH": a, **b, "k": {"inner": c}}\n')
    keys = {name: snippet.semantic.dict_key_of(snippet.node(name, ast.Name)) for name in "abc"}
    assert snippet.code(keys["a"]) == '"ARCH"' and snippet.code(keys["c"]) == '"inner"'
    assert keys["b"] is None
    assert snippet.semantic.dict_key_of(snippet.value("d")) is None


def test_local_function() -> None:
    snippet = parse("def f():\n    pass\ng = f\nx = f\ny = g\nz = len\n")
    found = {name: snippet.semantic.local_function(snippet.value(name)) for name in "xyz"}
    assert found["x"] is not None and found["x"].name == "f"
    assert found["y"] is None and found["z"] is None


@pytest.mark.parametrize(
    ("code", "follow_names", "expected"),
    [
        pytest.param("x = a if c else b\n", True, ["a", "b"], id="both-arms"),
        pytest.param(
            'B = "y"\nx = "a" if c else ("z" if d else B)\n', True, ['"a"', '"z"', '"y"'], id="nested-and-name"
        ),
        pytest.param('B = "y"\nx = "a" if c else B\n', False, ['"a"', "B"], id="names-not-followed"),
        pytest.param("x = f(1)\n", True, ["f(1)"], id="plain-value"),
        # Each round costs two steps of the tracer's depth (the name, then the conditional).
        pytest.param('x = "a" if c else x\n', True, ['"a"'] * (MAX_DEPTH // 2), id="self-reference-stops"),
    ],
)
def test_arms(code: str, follow_names: bool, expected: list[str]) -> None:
    snippet = parse(code)
    arms = snippet.ctx.values.arms(snippet.value("x"), follow_names=follow_names)
    assert snippet.codes(arms) == expected


def test_string_sources_of_a_self_referencing_name_terminate() -> None:
    snippet = parse('x = "mpi" if c else x\ny = x\n')
    assert {string for string, _ in snippet.ctx.values.string_sources(snippet.value("y"))} == {"mpi"}


@pytest.mark.parametrize(
    ("code", "placeholder", "expected"),
    [
        pytest.param('x = "mov.b32 $0;"\n', " ", "mov.b32 $0;", id="literal"),
        pytest.param('x = f"sm_{major}{minor}"\n', " ", "sm_  ", id="f-string"),
        pytest.param('x = f"arch=compute_{cc}"\n', "{}", "arch=compute_{}", id="f-string-template"),
        pytest.param('x = "cvt." f"rn {a}"\n', " ", "cvt.rn  ", id="concatenated"),
        pytest.param('A = "abs.f32"\nx = A\n', " ", "abs.f32", id="name-assigned-once"),
        pytest.param("x = name\n", " ", None, id="unknown"),
    ],
)
def test_static_text(code: str, placeholder: str, expected: str | None) -> None:
    snippet = parse(code)
    assert snippet.semantic.static_text(snippet.value("x"), placeholder) == expected


def test_argument_by_keyword_then_position() -> None:
    snippet = parse('f("a", "b", asm="c")\ng("a", "b")\n')
    f_call, g_call = (snippet.node(code, ast.Call) for code in ('f("a", "b", asm="c")', 'g("a", "b")'))
    semantic = snippet.semantic
    assert snippet.code(semantic.argument(f_call, "asm", 0)) == '"c"'
    assert snippet.code(semantic.argument(g_call, "asm", 1)) == '"b"'
    assert semantic.argument(g_call, "asm", None) is None
    assert semantic.argument(g_call, None, 2) is None


def test_unpacked_values() -> None:
    snippet = parse(
        """
        major, minor = torch.cuda.get_device_capability()
        a, (b, c) = 1, (2, 3)
        for x, y in pairs:
            pass
        with open(p) as handle:
            pass
        def f():
            major, minor = 0, 0
        """
    )
    module = snippet.module
    values = snippet.semantic.unpacked_values
    assert snippet.codes(values(module, "major")) == ["torch.cuda.get_device_capability()"]
    assert snippet.codes(values(module, "a")) == ["1"]
    assert values(module, "b") == [None]  # a nested target is not followed
    assert values(module, "x") == [None] and values(module, "handle") == [None]
    function = next(n for n in in_order(module) if isinstance(n, ast.FunctionDef))
    assert snippet.codes(values(function, "minor")) == ["0"]
    assert values(module, "missing") == []


# --- Semantic: names ------------------------------------------------------------------------------------
def test_is_reference_and_is_store() -> None:
    snippet = parse(
        """
        import os
        from m import n as alias
        def f(p, q=v):
            x = p.attr
            y += x
            g(key=x)
            del z
            for w in x:
                pass
        """
    )
    semantic = snippet.semantic

    def name(code: str, index: int = 0) -> ast.Name:
        return snippet.node(code, ast.Name, index)

    def reads(word: str) -> list[str]:
        return [snippet.code(read) for read in semantic.name_reads(snippet.module, word)]

    # An attribute's name, a keyword argument's, a parameter, a def and an imported name are no names read.
    assert reads("attr") == [] and reads("key") == [] and reads("f") == [] and reads("alias") == []
    assert semantic.is_reference(name("p"))  # `p.attr` reads it
    assert reads("p") == ["p"]  # only there: the parameter itself is no read
    assert semantic.is_reference(name("v"))  # a default value is read
    assert semantic.is_store(name("x")) and semantic.is_store(name("y"))
    assert semantic.is_store(name("z")) and semantic.is_store(name("w"))
    assert not semantic.is_store(name("x", 1))


def test_name_reads_and_reads_of_one_binding() -> None:
    snippet = parse(
        """
        configs = []
        configs.append(1)
        def f():
            use(configs)
        def g(configs):
            use(configs)
        configs = other
        other.configs = 1
        """
    )
    semantic = snippet.semantic
    every = list(semantic.name_reads(snippet.module, "configs"))
    assert len(every) == 3  # `configs.append`, and `use(configs)` in f and in g; no targets, no attributes
    binding = semantic.lookup("configs", snippet.module)
    assert binding is not None
    reads = semantic.reads("configs", binding)
    assert len(reads) == 2  # g's parameter is another variable
    for read in reads:
        resolved = semantic.lookup("configs", read)
        assert resolved is not None and resolved.scope is binding.scope


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("for w in [4, 8]:\n    use(w)\n", ("[4, 8]", None), id="for"),
        pytest.param("for b, w in pairs:\n    use(w)\n", ("pairs", 1), id="tuple-target"),
        pytest.param("xs = [use(w) for b in bs for w in ws]\n", ("ws", None), id="comprehension"),
        pytest.param("for w in ws:\n    pass\nuse(w)\n", None, id="after-the-loop"),
        pytest.param("for w in ws:\n    f = lambda: use(w)\n", None, id="lambda-runs-later"),
        pytest.param("for w in ws:\n    def f():\n        use(w)\n", None, id="def-runs-later"),
    ],
)
def test_loop_target(code: str, expected: tuple[str, int | None] | None) -> None:
    snippet = parse(code)
    found = snippet.semantic.loop_target(snippet.used())
    assert (None if found is None else (snippet.code(found.iterable), found.position)) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("for w in [4, 8, 32]:\n    use(w)\n", ["4", "8", "32"], id="list"),
        pytest.param("WS = (4, 32)\nfor w in WS:\n    use(w)\n", ["4", "32"], id="name-assigned-once"),
        pytest.param("for b, w in [(64, 4), (128, 32), (1,)]:\n    use(w)\n", ["4", "32"], id="tuple-items"),
        pytest.param(
            "import itertools\nfor b, w in itertools.product([64], [8, 32]):\n    use(w)\n", ["8", "32"], id="product"
        ),
        pytest.param("for w in range(4):\n    use(w)\n", [], id="unknown-iterable"),
        pytest.param("w = 4\nuse(w)\n", None, id="no-loop"),
    ],
)
def test_loop_values(code: str, expected: list[str] | None) -> None:
    snippet = parse(code)
    values = snippet.semantic.loop_values(snippet.used())
    assert (None if values is None else snippet.codes(values)) == expected


def test_descendants_and_is_within() -> None:
    snippet = parse("x = f(a, [b, c])\n")
    value = snippet.value("x")
    names = [snippet.code(n) for n in snippet.semantic.descendants(value) if isinstance(n, ast.Name)]
    assert sorted(names) == ["a", "b", "c", "f"]
    c = snippet.node("c", ast.Name)
    assert snippet.semantic.is_within(c, value) and snippet.semantic.is_within(value, value)
    assert not snippet.semantic.is_within(value, c)


# --- idioms: names, calls, values -----------------------------------------------------------------------
def test_small_syntactic_idioms() -> None:
    snippet = parse('a.b.c()\nd()\nx = None\ny = os.environ["K"]\nz = s[1:2]\nt = f"hip:{r}"\n')
    assert idioms.last_name(snippet.node("a.b.c", ast.Attribute)) == "c"
    assert idioms.last_name(snippet.node("d", ast.Name)) == "d"
    assert idioms.last_name(snippet.node("d()", ast.Call)) == ""
    assert idioms.is_none(snippet.value("x")) and not idioms.is_none(snippet.value("t"))
    assert snippet.code(idioms.subscript_key(snippet.value("y"))) == '"K"'
    assert idioms.subscript_key(snippet.value("z")) is None
    assert idioms.fstring_prefix(snippet.value_as("t", ast.JoinedStr)) == "hip:"


@pytest.mark.parametrize(
    ("code", "truthy"),
    [("x = True\n", True), ("x = 1\n", True), ("x = 0\n", False), ("x = False\n", False), ('x = "1"\n', False)],
)
def test_is_truthy_constant(code: str, truthy: bool) -> None:
    snippet = parse(code)
    assert idioms.is_truthy_constant(snippet.value("x")) is truthy


def test_called_function_and_unpacked_keyword() -> None:
    snippet = parse(
        """
        import functools, torch
        a = functools.partial(torch.compile, mode="max-autotune")
        b = torch.compile(m, **{"mode": "reduce-overhead"}, **kwargs)
        """
    )
    partial, compile_call = snippet.value_as("a", ast.Call), snippet.value_as("b", ast.Call)
    assert idioms.called_function(snippet.ctx, partial) == "torch.compile"
    assert idioms.called_function(snippet.ctx, compile_call) == "torch.compile"
    found = idioms.unpacked_keyword(snippet.ctx, compile_call, "mode")
    assert [snippet.code(value) for _, value in found] == ['"reduce-overhead"']
    assert idioms.unpacked_keyword(snippet.ctx, compile_call, "options") == []


def test_rocm_arm_skips_arms_gated_away_from_rocm() -> None:
    snippet = parse(
        """
        import torch
        a = True if torch.version.cuda else False
        b = False if torch.version.cuda else True
        c = 0 if flag else (2 if other else 1)
        """
    )
    wanted: Callable[[ast.expr], bool] = idioms.is_truthy_constant
    assert idioms.rocm_arm(snippet.ctx, snippet.value("a"), wanted) is None  # only NVIDIA turns it on
    assert snippet.code(idioms.rocm_arm(snippet.ctx, snippet.value("b"), wanted)) == "True"
    assert snippet.code(idioms.rocm_arm(snippet.ctx, snippet.value("c"), wanted)) == "2"


def test_report_site_is_the_literal_only_when_written_in_the_argument() -> None:
    snippet = parse('MODE = "mpi"\nf(backend="ucc")\nf(backend=MODE)\n')
    inline, named = snippet.node('backend="ucc"', ast.keyword), snippet.node("backend=MODE", ast.keyword)
    literal = snippet.node('"ucc"', ast.Constant)
    assert idioms.report_site(snippet.ctx, literal, inline) is literal
    elsewhere = snippet.node('"mpi"', ast.Constant)
    assert idioms.report_site(snippet.ctx, elsewhere, named) is named


# --- idioms: os.environ -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "kept"),
    [
        pytest.param('saved = os.getenv("V")\nos.environ["V"] = saved', True, id="restore"),
        pytest.param('os.environ["V"] = os.environ.get("V")', True, id="read-back"),
        pytest.param('os.environ["V"] = os.environ["V"]', True, id="subscript"),
        pytest.param('saved = os.getenv("V")\nos.environ["V"] = merge(saved)', True, id="amended-by-own-function"),
        pytest.param('saved = os.getenv("V")\nnew = merge(saved)\nos.environ["V"] = new', True, id="amended-via-name"),
        pytest.param('os.environ["V"] = os.getenv("V", "8.0;9.0")', False, id="own-default"),
        pytest.param('os.environ["V"] = os.getenv("W")', False, id="another-variable"),
        pytest.param('saved = os.getenv("V")\nos.environ["V"] = merge(saved, "9.0a")', False, id="own-argument"),
        pytest.param('saved = os.getenv("V")\nos.environ["V"] = imported(saved)', False, id="function-elsewhere"),
        pytest.param('saved = os.getenv("V")\nsaved = "9.0"\nos.environ["V"] = saved', False, id="reassigned"),
        pytest.param('os.environ["V"] = "8.0"', False, id="literal"),
        pytest.param('a = b\nb = a\nos.environ["V"] = a', False, id="names-assigned-each-other"),
    ],
)
def test_keeps_user_setting(code: str, kept: bool) -> None:
    snippet = parse(
        "import os\nfrom elsewhere import imported\ndef merge(*parts):\n    return ';'.join(parts)\n" + code
    )
    write = [node for node in in_order(snippet.module) if isinstance(node, ast.Assign)][-1]
    assert idioms.keeps_user_setting(snippet.ctx, "V", write.value) is kept


def test_environ_writes() -> None:
    snippet = parse(
        """
        import os
        os.environ["A"] = os.environ["B"] = "1"
        env["C"] = "x"
        os.environ.setdefault("D", "2")
        os.putenv(E, "3")
        CONF = {"G": "5"}
        os.environ.update({"F": "4"}, CONF, H="6")
        os.environ.get("I", "7")
        """
    )
    writes = []
    for node in in_order(snippet.module):
        if isinstance(node, (ast.Assign, ast.Call)):
            for write in idioms.environ_writes(snippet.ctx, node):
                writes.append((write.key, snippet.code(write.value), snippet.code(write.site)))
    assert writes == [
        ("A", '"1"', '"1"'),
        ("B", '"1"', '"1"'),
        ("D", '"2"', '"2"'),  # the argument
        (None, '"3"', '"3"'),  # the variable's name is not known
        ("F", '"4"', '"4"'),
        ("G", '"5"', "CONF"),  # the dict is written elsewhere: the argument
        ("H", '"6"', 'H="6"'),  # the keyword argument
    ]


# --- idioms: what is only shown ---------------------------------------------------------------------------
def test_only_displayed() -> None:
    snippet = parse(
        """
        print("built:", "sm_90" in archs)
        logger.info("ampere: %s", major >= 8)
        ok = "sm_80" in archs
        print(lambda: "sm_70" in archs)
        """
    )
    expected = {'"sm_90" in archs': True, "major >= 8": True, '"sm_80" in archs': False, '"sm_70" in archs': False}
    displayed = {code: idioms.only_displayed(snippet.ctx, snippet.node(code, ast.Compare)) for code in expected}
    assert displayed == expected


def test_is_display_call_is_one_list_for_every_rule() -> None:
    snippet = parse(
        """
        import logging, warnings, click
        from rich import print as rprint
        from logging import info
        print("a")
        logger.info("b")
        logging.fatal("c")
        log.log(10, "d")
        warnings.warn("e")
        click.secho("f")
        console.print("g")
        info("h")
        rprint("i")
        subprocess.run("j")
        flags.append("k")
        check("l")
        """
    )
    calls = [n for n in in_order(snippet.module) if isinstance(n, ast.Call)]
    shown = {snippet.code(call.args[-1]): idioms.is_display_call(snippet.ctx, call) for call in calls}
    # `rprint` is rich's print under another name: neither its name nor its qualified name is listed.
    assert [text for text, is_shown in shown.items() if is_shown] == [f'"{letter}"' for letter in "abcdefgh"]


def test_in_message() -> None:
    snippet = parse(
        """
        logger.warning("a")
        raise RuntimeError(f"{'b'}")
        assert ok, "c"
        assert "d" in archs
        @pytest.mark.parametrize("arch", ["e"])
        def test(arch): ...
        run("f", msg=print("g"))
        """
    )
    strings = [n for n in in_order(snippet.module) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    shown = {snippet.code(s).strip("'\""): idioms.in_message(snippet.ctx, s) for s in strings}
    assert shown == {"a": True, "b": True, "c": True, "d": False, "arch": True, "e": True, "f": False, "g": True}


def test_literal_text() -> None:
    snippet = parse('NAME = "-O3"\nx = ["-arch", "-O" "3", f"-gencode={arch}", NAME, 3]\n')
    elements = snippet.value_as("x", ast.List).elts
    assert [idioms.literal_text(snippet.ctx, e) for e in elements] == ["-arch", "-O3", "-gencode={}", None, None]


def test_is_looked_for() -> None:
    snippet = parse(
        """
        a = arch == "x1"
        b = table["x2"]
        c = {"x3": "x4"}
        d = name.startswith("x5")
        e = re.match("x6", name)
        f = parser.add_argument("--arch", choices=["x7"])
        g = config.get("x8", "x9")
        h = self.assertEqual(arch, "x10")
        i = build("x11", target="x12")
        j = flags.pop("x13", "x14")
        k = hasattr(torch, "x15")
        depends_on("x16", when="x17")
        """
    )
    strings = [n for n in in_order(snippet.module) if isinstance(n, ast.Constant) and "x" in str(n.value)]
    looked_for = {snippet.code(s).strip('"'): idioms.is_looked_for(snippet.ctx, s) for s in strings}
    assert looked_for == {
        "x1": True,
        "x2": True,
        "x3": True,
        "x4": False,
        "x5": True,
        "x6": True,
        "x7": False,
        "x8": True,
        "x9": False,
        "x10": True,
        "x11": False,
        "x12": False,
        "x13": True,
        "x14": False,
        "x15": True,
        "x16": False,
        "x17": True,
    }
    choices = snippet.node('["x7"]', ast.List)
    assert idioms.is_looked_for(snippet.ctx, choices)


# --- idioms: control flow -------------------------------------------------------------------------------
def test_whole_condition() -> None:
    snippet = parse("ok = not (a > 8 or (a == 8 and b >= 9))\n")
    assert snippet.code(conditions.whole_condition(snippet.ctx, snippet.node("b >= 9", ast.Compare))) == (
        "not (a > 8 or (a == 8 and b >= 9))"
    )


def test_deciding_tests() -> None:
    snippet = parse(
        """
        import sys
        def f(ws):
            if early:
                sys.exit(1)
            if late:
                log()
            for w in ws:
                if IS_ROCM and w > 16:
                    continue
                x = [HAZARD(v) for v in vs if keep(v)] if flag else None
        """
    )
    hazard = snippet.node("HAZARD(v)", ast.Call)
    tests = [snippet.code(test) for test in conditions.deciding_tests(snippet.ctx, hazard)]
    assert tests == ["keep(v)", "flag", "IS_ROCM and w > 16", "early"]


@pytest.mark.parametrize(
    ("code", "guarded"),
    [
        pytest.param("if ready:\n    HAZARD()\n", True, id="if-body"),
        pytest.param("if not ready:\n    pass\nelse:\n    HAZARD()\n", True, id="else-of-negation"),
        pytest.param("x = ready and HAZARD()\n", True, id="and-right"),
        pytest.param("x = HAZARD() if ready else None\n", True, id="conditional-expression"),
        pytest.param("def f():\n    if not ready:\n        return\n    HAZARD()\n", True, id="early-return"),
        pytest.param("def f():\n    if not ready:\n        raise E\n    HAZARD()\n", False, id="raise-is-not-quiet"),
        pytest.param("if other:\n    HAZARD()\n", False, id="unrelated-test"),
        pytest.param("if ready:\n    def f():\n        HAZARD()\n", False, id="stops-at-the-def"),
        pytest.param("x = ready or HAZARD()\n", False, id="or-right-needs-false"),
    ],
)
def test_guarded_by_uses_the_rules_predicate(code: str, guarded: bool) -> None:
    snippet = parse(code)
    hazard = snippet.node("HAZARD()", ast.Call)

    def holds(test: ast.expr, taken: bool) -> bool:
        text = snippet.code(test)
        return (text == "ready" and taken) or (text == "not ready" and not taken)

    assert conditions.guarded_by(snippet.ctx, hazard, holds, idioms.leaves_quietly) is guarded


def test_guarded_by_counts_any_exit_by_default() -> None:
    snippet = parse("def f():\n    if missing:\n        raise E\n    HAZARD()\n")
    hazard = snippet.node("HAZARD()", ast.Call)
    assert conditions.guarded_by(snippet.ctx, hazard, lambda test, taken: snippet.code(test) == "missing" and not taken)


@pytest.mark.parametrize(
    ("code", "decided"),
    [
        pytest.param("if missing:\n    HAZARD()\n", True, id="if-body"),
        pytest.param("if missing: HAZARD()\n", True, id="one-line-if"),
        pytest.param("if present:\n    pass\nelse:\n    HAZARD()\n", True, id="else"),
        pytest.param("def f():\n    if present:\n        return\n    HAZARD()\n", True, id="after-an-exit"),
        pytest.param("if present:\n    x = 1\nHAZARD()\n", False, id="after-no-exit"),
        pytest.param("if missing:\n    if other:\n        HAZARD()\n", False, id="only-the-closest-if"),
        pytest.param("while HAZARD():\n    pass\n", False, id="in-a-header"),
        pytest.param("if present:\n    HAZARD()\n", False, id="wrong-arm"),
    ],
)
def test_runs_right_under(code: str, decided: bool) -> None:
    snippet = parse(code)
    hazard = snippet.node("HAZARD()", ast.Call)
    wanted = {True: "missing", False: "present"}
    assert (
        conditions.runs_right_under(snippet.ctx, hazard, lambda test, taken: snippet.code(test) == wanted[taken])
        is decided
    )


def test_statements_before_and_leaves_quietly() -> None:
    snippet = parse("a()\nif x:\n    return\nif y:\n    raise E\nif z:\n    log(); continue\nif w: break\nb()\n")
    body = list(snippet.module.body)
    returns, raises, continues, breaks = body[1:5]
    assert isinstance(returns, ast.If) and isinstance(raises, ast.If)
    assert isinstance(continues, ast.If) and isinstance(breaks, ast.If)
    assert idioms.statements_before(snippet.module.body, raises) == body[:2]
    assert idioms.leaves_quietly(returns.body)
    assert not idioms.leaves_quietly(raises.body)
    assert idioms.leaves_quietly(continues.body)  # the last line ends in `continue`
    assert idioms.leaves_quietly(breaks.body)


# --- idioms: try/except fallbacks ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("handler", "handled"),
    [
        pytest.param("except (pynvml.NVMLError, OSError):\n    pass", True, id="tuple"),
        pytest.param("except:\n    pass", True, id="bare"),
        pytest.param("except Exception:\n    log()\n    raise", False, id="re-raises"),
        pytest.param("except ValueError:\n    pass", False, id="other-exception"),
    ],
)
def test_handled_by_try(handler: str, handled: bool) -> None:
    snippet = parse(f"def f():\n    try:\n        HAZARD()\n    {handler.replace(chr(10), chr(10) + '    ')}\n")
    hazard = snippet.node("HAZARD()", ast.Call)
    assert idioms.handled_by_try(snippet.ctx, hazard, frozenset({"NVMLError", "OSError", "Exception"})) is handled


def test_handled_by_try_stops_at_the_function() -> None:
    snippet = parse("try:\n    def f():\n        HAZARD()\nexcept OSError:\n    pass\n")
    assert not idioms.handled_by_try(snippet.ctx, snippet.node("HAZARD()", ast.Call), frozenset({"OSError"}))


_SNAPSHOT = (
    "def _init():\n    HAZARD()\n"
    "def _device(i):\n    return _init()\n"
    "def snapshot():\n    try:\n        return [_device(i) for i in range(2)]\n"
    "    except Exception:\n        return []\n"
)

_METHOD = (
    "class C:\n    def _init(self):\n        HAZARD()\n    def run(self):\n        try:\n"
    "            self._init()\n        except Exception:\n            pass\n"
)


# A backend class whose constructor fails off NVIDIA, tried in turn with another one: construction fails over.
_BACKENDS = (
    "class _Nvml:\n    def __init__(self):\n        HAZARD()\n"
    "def init_backend():\n    backends = [('NVML', _Nvml), ('sysfs', _Sysfs)]\n"
    "    for name, cls in backends:\n        try:\n            return cls()\n"
    "        except Exception:\n            continue\n"
)


@pytest.mark.parametrize(
    ("code", "handled"),
    [
        pytest.param(_BACKENDS, True, id="constructor-of-a-backend-tried-in-turn"),
        pytest.param(
            _BACKENDS.replace("backends = [('NVML', _Nvml), ('sysfs', _Sysfs)]", "backends = [_Nvml, _Sysfs]").replace(
                "for name, cls in", "for cls in"
            ),
            True,
            id="backend-classes-tried-in-turn",
        ),
        pytest.param(_BACKENDS + "gpu = _Nvml()\n", False, id="constructed-once-without-try"),
        pytest.param(_BACKENDS.replace("            continue", "            raise"), False, id="failure-re-raised"),
        pytest.param(_BACKENDS + "    return backends\n", False, id="records-handed-on"),
        pytest.param(_BACKENDS.replace("for name, cls in", "for cls, name in"), False, id="other-record-field-called"),
        pytest.param(_SNAPSHOT, True, id="private-defs-called-in-a-caught-try"),
        pytest.param(_SNAPSHOT + "def probe():\n    return _device(0)\n", False, id="one-caller-without-try"),
        pytest.param(_SNAPSHOT + "callbacks = [_init]\n", False, id="used-as-a-value"),
        pytest.param(_SNAPSHOT.replace("_init", "init"), False, id="public-def-others-may-call"),
        pytest.param("def _init():\n    HAZARD()\n", False, id="never-called"),
        pytest.param(_METHOD, True, id="private-method-called-in-a-caught-try"),
        pytest.param(_METHOD.replace("_init", "init"), False, id="public-method-others-may-call"),
        pytest.param(
            _METHOD + "    def probe(self):\n        self._init()\n", False, id="method-one-caller-without-try"
        ),
        pytest.param("def f():\n    " + _METHOD.replace("\n", "\n    "), False, id="method-of-a-local-class"),
    ],
)
def test_handled_by_callers(code: str, handled: bool) -> None:
    snippet = parse(code)
    hazard = snippet.node("HAZARD()", ast.Call)
    assert idioms.handled_by_callers(snippet.ctx, hazard, frozenset({"Exception"})) is handled


@pytest.mark.parametrize(
    ("code", "actionable"),
    [
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except ImportError as e:\n        raise ImportError(HINT) from e\n",
            True,
            id="lazy-with-hint",
        ),
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except ImportError:\n        raise RuntimeError('pip install x')\n",
            True,
            id="other-error-with-message",
        ),
        pytest.param(
            "try:\n    import pkg\nexcept ImportError as e:\n    raise ImportError(HINT) from e\n", False, id="module"
        ),
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except ImportError:\n        raise\n", False, id="bare"
        ),
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except ValueError:\n        raise RuntimeError('x')\n",
            False,
            id="other-exception",
        ),
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except Exception as e:\n        raise RuntimeError('needs pkg') from e\n",
            True,
            id="broad-handler",
        ),
        pytest.param(
            "def load():\n    try:\n        import pkg\n    except:\n        raise RuntimeError('needs pkg')\n",
            True,
            id="bare-handler",
        ),
        pytest.param("def load():\n    import pkg\n", False, id="no-try"),
    ],
)
def test_lazy_import_with_actionable_error(code: str, actionable: bool) -> None:
    snippet = parse(code)
    statement = next(node for node in ast.walk(snippet.module) if isinstance(node, ast.Import))
    assert idioms.lazy_import_with_actionable_error(snippet.ctx, statement) is actionable


def test_caught_names_and_re_raises() -> None:
    snippet = parse("try:\n    x()\nexcept (a.B, C):\n    raise\nexcept:\n    pass\n")
    statement = snippet.module.body[0]
    assert isinstance(statement, ast.Try)
    first, bare = statement.handlers
    assert idioms.caught_names(first) == ["B", "C"] and idioms.re_raises(first)
    assert idioms.caught_names(bare) == [] and not idioms.re_raises(bare)


# --- PythonContext.report ---------------------------------------------------------------------------------
class _Probe(Rule):
    code = "ROC999"
    name = "probe"
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE


def test_report_says_whether_it_emitted() -> None:
    snippet = parse("import torch\nif torch.version.cuda:\n    HAZARD('nvidia')\nHAZARD('both')\n")
    snippet.ctx.rule = _Probe
    assert not snippet.ctx.report(snippet.node("HAZARD('nvidia')", ast.Call), "gated")
    assert snippet.ctx.report(snippet.node("HAZARD('both')", ast.Call), "emitted")
    assert [d.message for d in snippet.ctx.diagnostics] == ["emitted"]


def test_name_words() -> None:
    assert idioms.name_words("NVCC_ARGS_v2") == ("nvcc", "args", "v2")
    assert idioms.name_words("getCudaVersion") == ("getcudaversion",)
    assert idioms.name_words("__") == ()


def test_raised_name() -> None:
    snippet = parse(
        """
        raise errors.MissingCUDAException("no nvcc")
        raise RuntimeError
        raise
        """
    )
    raises = [n for n in in_order(snippet.module) if isinstance(n, ast.Raise)]
    assert [idioms.raised_name(r) for r in raises] == ["MissingCUDAException", "RuntimeError", ""]


def test_if_tests_taken_are_the_tests_a_node_runs_under() -> None:
    snippet = parse("if a:\n    if b:\n        x = 1\n    else:\n        y = 2\nelse:\n    z = 3\n")
    taken = {name: snippet.codes(snippet.semantic.if_tests_taken(snippet.value(name))) for name in "xyz"}
    assert taken == {"x": ["b", "a"], "y": ["a"], "z": []}


def test_switches_off_by_default_are_store_true_flags_without_a_truthy_default() -> None:
    snippet = parse(
        "p.add_argument('--allow-tf32', action='store_true')\n"
        "p.add_argument('-q', '--quiet-run', action='store_true', default=False)\n"
        "p.add_argument('--tf32', action='store_true', default=True)\n"
        "p.add_argument('--x', action='store_true', dest='use_x')\n"
        "p.add_argument('--steps', type=int)\n"
    )
    assert snippet.semantic.switches_off_by_default() == {"allow_tf32", "quiet_run", "use_x"}


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("args.allow_tf32", True),
        ("args.allow_tf32 and torch.cuda.is_available()", True),
        ("not args.allow_tf32", False),
        ("args.allow_tf32 or fast", False),
        ("args.enable_tf32", False),
        ("args.fast", False),
        # A value compared with the option's name is no switch.
        ('dtype == "tf32"', False),
        ("kind == DataType.TFLOAT_32", False),
        # A data type asked whether it is the option.
        ("config.train_dtype.enable_tf()", True),
        ("config.train_dtype.enable_tf(strict)", False),
        ("config.model.enable_tf()", False),
        ("config.train_dtype.is_half()", False),
    ],
)
def test_opted_in_by_switch(test: str, expected: bool) -> None:
    switches = frozenset({"allow_tf32", "fast"})
    option = re.compile(r"(?<![a-z])tf(?:loat)?_?32(?![0-9])|(?<![a-z])tf$")
    assert idioms.opted_in_by_switch(ast.parse(test, mode="eval").body, option, switches.__contains__) is expected


@pytest.mark.parametrize(
    ("declarations", "expected"),
    [
        ("class C:\n    allow_tf32: bool = False\n", True),
        ("class C:\n    allow_tf32: Optional[bool] = None\n", True),
        ("class C:\n    allow_tf32 = field(default=False, metadata={})\n", True),
        ("class C:\n    allow_tf32: bool = Field(False, description='x')\n", True),
        # A true or computed default, or one of two declarations true: not off by default.
        ("class C:\n    allow_tf32: bool = True\n", False),
        ("class C:\n    allow_tf32: bool = os.environ.get('TF32') == '1'\n", False),
        ("class C:\n    allow_tf32 = False\nclass D:\n    allow_tf32 = True\n", False),
        # Not a class field: a module variable, a def's local, no default; a store_true switch is one.
        ("allow_tf32 = False\n", False),
        ("def f():\n    allow_tf32 = False\n", False),
        ("class C:\n    allow_tf32: bool\n", False),
        ("p.add_argument('--allow-tf32', action='store_true')\n", True),
    ],
)
def test_off_by_default_options_are_switches_and_false_class_fields(declarations: str, expected: bool) -> None:
    assert parse(declarations).ctx.off_by_default("allow_tf32") is expected


_OOM_HANDLERS = """
try:
    step()
except FIRST:
    retry()
except RuntimeError as e:
    if "CUDA out of memory" in str(e):
        retry()
"""


@pytest.mark.parametrize(
    ("first", "caught"),
    [
        pytest.param("torch.cuda.OutOfMemoryError", True, id="typed-clause-first"),
        pytest.param("(ValueError, torch.OutOfMemoryError)", True, id="in-a-tuple"),
        pytest.param("ValueError", False, id="another-exception"),
    ],
)
def test_caught_earlier(first: str, caught: bool) -> None:
    snippet = parse("import torch\n" + _OOM_HANDLERS.replace("FIRST", first))
    node = snippet.node('"CUDA out of memory"', ast.Constant)
    assert idioms.caught_earlier(snippet.ctx, node, "OutOfMemoryError") is caught


def test_caught_earlier_needs_the_typed_clause_before() -> None:
    code = _OOM_HANDLERS.replace("FIRST", "ValueError") + "except torch.cuda.OutOfMemoryError:\n    pass\n"
    snippet = parse("import torch\n" + code)
    node = snippet.node('"CUDA out of memory"', ast.Constant)
    assert not idioms.caught_earlier(snippet.ctx, node, "OutOfMemoryError")
