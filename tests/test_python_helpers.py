"""Front-end helpers rules share: import analysis (rocmlint/python/imports.py), syntactic conditions
(conditions.py), statements around a node (statements.py), text search (text_search.py), value uses
(uses.py), settings (settings.py), PyTorch device arguments (torch_api.py), ctypes libraries (native.py) and
trigger patterns (lexical.py).

Each case parses a snippet and indexes it the way `check_python` does; nodes are found by their code.
"""

from __future__ import annotations

import ast
import re

import pytest
from snippets import Snippet, in_order, parse

from rocmlint.python import conditions, imports, native, settings, statements, text_search, torch_api, uses
from rocmlint.python.fixes import also_searched, gate_expression
from rocmlint.python.idioms import leaves_quietly
from rocmlint.python.lexical import assigned_attribute_pattern, called_name_pattern, setting_key_pattern
from rocmlint.python.positions import CodeRange


# --- imports ------------------------------------------------------------------------------------------
def test_imported_modules() -> None:
    snippet = parse("import a.b as c, d\nfrom e.f import g\nfrom . import h\nfrom .i import j\n")
    plain, from_import, relative, relative_module = snippet.imports()
    found = imports.imported_modules(plain)
    assert [(m.module, _written(snippet, imports.module_name_range(snippet.ctx, m))) for m in found] == [
        ("a.b", "a.b"),
        ("d", "d"),
    ]
    assert [snippet.code(m.alias) for m in found if m.alias is not None] == ["a.b as c", "d"]
    from_modules = imports.imported_modules(from_import)
    assert [(m.module, m.alias) for m in from_modules] == [("e.f", None)]
    assert [_written(snippet, imports.module_name_range(snippet.ctx, m)) for m in from_modules] == ["e.f"]
    assert imports.imported_modules(relative) == imports.imported_modules(relative_module) == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import a.b, c as d\n", ["a", "d"]),
        ("from m import x, y as z\n", ["x", "z"]),
        ("from m import *\n", None),
    ],
)
def test_bound_names(code: str, expected: list[str] | None) -> None:
    assert imports.bound_names(parse(code).imports()[0]) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import torch\n", True),
        ("import torch.utils.cpp_extension as ext\n", True),
        ("try:\n    from torch.utils import cpp_extension\nexcept ImportError:\n    pass\n", True),
        ("def build():\n    import torch\n", True),
        ("import torchvision, tensorflow as tf\n", False),
        ("from .torch import x\n", False),
        ("x = 'import torch'\n", False),
    ],
)
def test_imports_package(code: str, expected: bool) -> None:
    assert imports.imports_package(parse(code).ctx, "torch") == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("from m import x\n", ("x", "x")),
        ("from m import x as y\n", ("x", "y")),
        ("from m import x, y\n", None),
        ("from m import *\n", None),
    ],
)
def test_sole_imported_name(code: str, expected: tuple[str, str] | None) -> None:
    snippet = parse(code)
    assert imports.sole_imported_name(snippet.first(ast.ImportFrom)) == expected


@pytest.mark.parametrize(
    ("code", "runs"),
    [
        ("import pynvml\n", True),
        ("if TYPE_CHECKING:\n    import pynvml\n", False),
        ("import typing as t\nif t.TYPE_CHECKING:\n    pass\nelse:\n    import pynvml\n", True),
        ("if not ready:\n    if TYPE_CHECKING:\n        import pynvml\n", False),
        ("def f():\n    import pynvml\n", False),
        ("f = lambda: __import__('x')\nif ready:\n    import pynvml\n", True),
    ],
)
def test_runs_at_import(code: str, runs: bool) -> None:
    snippet = parse(code)
    assert imports.runs_at_import(snippet.ctx, snippet.node("import pynvml", ast.Import)) is runs


def _written(snippet: Snippet, span: CodeRange) -> str:
    """The source text a range covers."""
    source = snippet.ctx.source
    start = source.char_offset(span.start.line, span.start.column)
    return source.text[start : source.char_offset(span.end.line, span.end.column)]


def test_module_path_names() -> None:
    snippet = parse("x = 1\n", path="hopper/flash_attn_3/ops.py", package="flash_attn_3")
    assert imports.module_path_names(snippet.ctx) == ["flash_attn_3", "ops"]
    assert imports.top_level("a.b.c") == "a"


# --- conditions ---------------------------------------------------------------------------------------


def test_in_def_named() -> None:
    snippet = parse(
        "def flash_attn_fwd(q):\n    import a\n    def inner():\n        import b\n"
        "def forward(q):\n    import c\nimport d\n"
    )
    pattern = re.compile("flash_?attn")
    found = {
        statement.names[0].name: conditions.in_def_named(snippet.ctx, statement, pattern)
        for statement in in_order(snippet.module)
        if isinstance(statement, ast.Import)
    }
    assert found == {"a": True, "b": True, "c": False, "d": False}


def test_in_def_named_follows_private_callers() -> None:
    """A private module-level def whose every use is a call from a def so named (a few defs up) is on that path;
    one also called from elsewhere, or only passed as a value, is not."""
    snippet = parse(
        "def _step(q):\n    import a\ndef _block(q):\n    return _step(q)\n"
        "def flash_attn_fwd(q):\n    return _block(q)\n"
        "def _shared(q):\n    import b\ndef flash_attn_bwd(q):\n    _shared(q)\ndef sdpa(q):\n    _shared(q)\n"
        "def _hook(q):\n    import c\ndef flash_attn_register():\n    register(_hook)\n"
        "def _unused(q):\n    import d\n"
    )
    pattern = re.compile("flash_?attn")
    found = {
        statement.names[0].name: conditions.in_def_named(snippet.ctx, statement, pattern)
        for statement in in_order(snippet.module)
        if isinstance(statement, ast.Import)
    }
    assert found == {"a": True, "b": False, "c": False, "d": False}


ENCLOSED = """
if outer:
    def f():
        if not ready:
            return
        if quit:
            raise E
        if a:
            pass
        else:
            use(x)
"""


def test_enclosing_tests() -> None:
    snippet = parse(ENCLOSED)
    use = snippet.node("use(x)", ast.Call)
    assert [snippet.code(t) for t in conditions.enclosing_tests(snippet.ctx, use)] == ["a", "outer"]
    early = conditions.exit_tests(snippet.ctx, use, leaves_quietly)
    assert [snippet.code(t) for t in early] == ["not ready"]


def test_earlier_exit_tests_count_an_if_with_else_only_when_asked() -> None:
    snippet = parse("if a:\n    return\nelse:\n    pass\nif b:\n    return\nif c:\n    raise E\nuse(x)\n")
    statement = snippet.module.body[-1]
    found = conditions.earlier_exit_tests(snippet.module.body, statement, leaves_quietly)
    assert [snippet.code(t) for t in found] == ["a", "b"]
    found = conditions.earlier_exit_tests(snippet.module.body, statement, leaves_quietly, with_else=False)
    assert [snippet.code(t) for t in found] == ["b"]


def test_probed_before_finds_the_packages_a_test_skips_without() -> None:
    snippet = parse(
        "import pytest\n"
        "pytest.importorskip('triton')\n"
        "def test_a():\n"
        "    mod = pytest.importorskip('flash_attn')\n"
        "    if ok:\n"
        "        use(1)\n"
        "    pytest.importorskip('later')\n"
        "def test_b():\n"
        "    importorskip('not_pytest')\n"
        "    use(2)\n"
    )
    first = snippet.node("use(1)", ast.Call)
    assert list(conditions.probed_before(snippet.ctx, first)) == ["flash_attn", "triton"]
    second = snippet.node("use(2)", ast.Call)
    assert list(conditions.probed_before(snippet.ctx, second)) == ["triton"]


def test_requirements_before_finds_the_raising_checks_of_a_package() -> None:
    snippet = parse(
        'HAS_NVML = find_spec("pynvml") is not None\n'
        "if not HAS_NVML:\n"
        "    raise ImportError('needs pynvml')\n"
        "def f():\n"
        "    if not ok:\n"
        "        raise ValueError('other')\n"
        "    if not is_pynvml_available():\n"
        "        return None\n"
        "    if not is_pynvml_available():\n"
        "        log(); raise RuntimeError('needs pynvml')\n"
        "    use(1)\n"
    )
    found = conditions.requirements_before(snippet.ctx, snippet.node("use(1)", ast.Call), re.compile("pynvml"))
    assert [snippet.code(t) for t in found] == ["not is_pynvml_available()", "not HAS_NVML"]


def test_chain_tests() -> None:
    snippet = parse('if "a" in m and ok:\n    pass\nelif "b" in m:\n    pass\nelse:\n    pass\nx = "c" in m or y\n')
    second = snippet.node('"b" in m', ast.Compare)
    assert [snippet.code(t) for t in conditions.chain_tests(snippet.ctx, second)] == ['"a" in m and ok', '"b" in m']
    alone = snippet.node('"c" in m', ast.Compare)
    assert [snippet.code(t) for t in conditions.chain_tests(snippet.ctx, alone)] == ['"c" in m or y']


def test_rocm_arm_after() -> None:
    snippet = parse(
        "import torch\nIS_ROCM = torch.version.hip is not None\n"
        "if torch.cuda.is_available():\n    pass\nelif mps:\n    pass\nelif IS_ROCM and ok:\n    pass\n"
        "if a:\n    pass\nelif torch.version.cuda:\n    pass\nelse:\n    if torch.version.hip:\n        pass\n"
    )
    first, _, rocm, second, nvidia, _ = [n for n in in_order(snippet.module) if isinstance(n, ast.If)]
    arm = conditions.rocm_arm_after(snippet.ctx, first)
    assert arm is rocm and snippet.code(arm.test) == "IS_ROCM and ok"
    assert conditions.rocm_arm_after(snippet.ctx, rocm) is None
    # An NVIDIA arm is no ROCm arm, nor is an `if` nested in an `else:` (not part of the chain).
    assert conditions.rocm_arm_after(snippet.ctx, second) is None
    assert conditions.rocm_arm_after(snippet.ctx, nvidia) is None


def test_alternatives() -> None:
    snippet = parse("x = a if t else b\n")
    choice = snippet.first(ast.IfExp)
    assert [snippet.code(n) for n in conditions.alternatives(choice, choice.body)] == ["t", "b"]
    assert [snippet.code(n) for n in conditions.alternatives(choice, choice.orelse)] == ["t", "a"]
    assert conditions.alternatives(choice, choice.test) == []


def test_choices_around() -> None:
    snippet = parse("def f():\n    if t:\n        x = [a if c else b, d]\n")
    choices = conditions.choices_around(snippet.ctx, snippet.node("a", ast.Name))
    assert [snippet.code(n) for n in choices] == ["c", "b", "[a if c else b, d]", "t"]


def test_test_codes_follow_once_assigned_names() -> None:
    snippet = parse('HAS = find_spec("flash_attn") is not None\nif not HAS:\n    pass\n')
    test = snippet.node("not HAS", ast.UnaryOp)
    assert list(conditions.test_codes(snippet.ctx, test)) == ["not HAS", 'find_spec("flash_attn") is not None']


def test_test_mentions() -> None:
    snippet = parse('HAS = find_spec("flash_attn") is not None\nif not HAS:\n    pass\nif ok:\n    pass\n')
    flash = re.compile("flash_?attn")
    assert conditions.test_mentions(snippet.ctx, snippet.node("not HAS", ast.UnaryOp), flash)
    assert not conditions.test_mentions(snippet.ctx, snippet.node("ok", ast.Name), flash)


@pytest.mark.parametrize(
    ("code", "decided"),
    [
        ("if not V:\n    pass\n", "if"),
        ("x = 1 if bool(V) and ok else 2\n", "ifexp"),
        ("assert V is not None\n", "assert"),
        ("if V == 3:\n    pass\n", None),
        ("if f(V):\n    pass\n", None),
        ("if ok:\n    use(V)\n", None),
    ],
)
def test_decided_test(code: str, decided: str | None) -> None:
    snippet = parse(code)
    found = conditions.decided_test(snippet.ctx, snippet.node("V", ast.Name))
    kinds = {ast.If: "if", ast.IfExp: "ifexp", ast.Assert: "assert"}
    assert (None if found is None else kinds[type(found)]) == decided


def test_outermost_conditional() -> None:
    snippet = parse('d = "a" if c else ("b" if e else "x")\nf("b2")\n')
    choice = conditions.outermost_conditional(snippet.ctx, snippet.node('"b"', ast.Constant))
    assert choice is not None and snippet.code(choice) == '"a" if c else ("b" if e else "x")'
    assert conditions.outermost_conditional(snippet.ctx, snippet.node('"b2"', ast.Constant)) is None


# --- statements ---------------------------------------------------------------------------------------
CAPTURE = """
with torch.cuda.graph(g), other():
    def later():
        with inner():
            use(1)
    use(2)
g.capture_begin()
use(3)
g.capture_end()
use(4)
if ok:
    use(5)
"""


def test_with_items_around() -> None:
    snippet = parse(CAPTURE)
    first, second = (snippet.node(f"use({n})", ast.Call) for n in (1, 2))
    assert [snippet.code(e) for e in statements.with_items_around(snippet.ctx, first)] == ["inner()"]
    assert [snippet.code(e) for e in statements.with_items_around(snippet.ctx, second)] == [
        "torch.cuda.graph(g)",
        "other()",
    ]


@pytest.mark.parametrize(("number", "inside"), [(2, False), (3, True), (4, False), (5, False)])
def test_after_open_call(number: int, inside: bool) -> None:
    snippet = parse(CAPTURE)
    node = snippet.node(f"use({number})", ast.Call)
    assert statements.after_open_call(snippet.ctx, node, "capture_begin", "capture_end") is inside


def test_called_method() -> None:
    module = ast.parse("g.capture_begin()\nx = g.capture_end()\nf()\n")
    assert [statements.called_method(statement) for statement in module.body] == ["capture_begin", None, None]


# --- text search --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "needle"),
    [
        ('msg.startswith("a")', '"a"'),
        ('re.search(r"a", msg)', 'r"a"'),
        ('self.assertRaisesRegex(E, "a")', '"a"'),
        ('self.assertIn("a", msg)', '"a"'),
        ('pytest.raises(E, match="a")', '"a"'),
        ('print("a")', None),
        ('other.search("a", msg)', None),
    ],
)
def test_searched_text(call: str, needle: str | None) -> None:
    snippet = parse(f"import re\nimport pytest\n{call}\n")
    found = text_search.searched_text(snippet.ctx, snippet.node(call, ast.Call))
    assert (None if found is None else snippet.code(found)) == needle


def test_membership_needle() -> None:
    snippet = parse('a = "x" in m\nb = "x" == m\nc = "x" in m in n\n')
    needle = text_search.membership_needle(snippet.node('"x" in m', ast.Compare))
    assert needle is not None and snippet.code(needle) == '"x"'
    assert text_search.membership_needle(snippet.node('"x" == m', ast.Compare)) is None
    assert text_search.membership_needle(snippet.node('"x" in m in n', ast.Compare)) is None


def test_needles() -> None:
    snippet = parse(
        """
        MARKERS = ("a", "b", f(x))
        WORD = "w" if c else "v"
        use(MARKERS)
        use(WORD)
        for marker in ("l1", "l2"):
            use(marker)
        for marker, code in PAIRS:
            use(marker)
        """
    )
    tuple_needles, word, looped, unpacked = (text_search.needles(snippet.ctx, used) for used in snippet.all_used())
    members = [(n.text, n.siblings, n.from_loop) for n in tuple_needles]
    assert members == [("a", ("a", "b"), False), ("b", ("a", "b"), False)]
    assert [(n.text, n.from_loop) for n in word] == [("w", False), ("v", False)]
    assert [(n.text, n.from_loop) for n in looped] == [("l1", True), ("l2", True)]
    assert unpacked == []


def test_string_texts_and_text_of_name() -> None:
    snippet = parse('ok = "a" in m or f"{x}" in m or "b" in str(e)\n')
    condition = snippet.first(ast.BoolOp)
    assert sorted(text_search.string_texts(snippet.ctx, condition)) == ["a", "b"]
    for code, expected in (("m", True), ("str(e)", True), ("e.args", True), ("f(e)", False), ("str(a, b)", False)):
        expr = ast.parse(code, mode="eval").body
        assert text_search.is_text_of_name(snippet.ctx, expr) is expected, code


@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        ('ok = "a" in msg\n', 'ok = "a" in msg or "b" in msg\n'),
        ('if "a" not in str(e):\n    pass\n', 'if "a" not in str(e) and "b" not in str(e):\n    pass\n'),
        ('ok = "a" in msg and ready\n', 'ok = ("a" in msg or "b" in msg) and ready\n'),
    ],
)
def test_also_searched(code: str, fixed: str) -> None:
    snippet = parse(code)
    edit = also_searched(snippet.ctx, snippet.first(ast.Compare), '"b"')
    data = code.encode()
    assert (data[: edit.start] + edit.content.encode() + data[edit.end :]).decode() == fixed


@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        # Parentheses of its own stay around the replacement; a call's or a class's are not its own.
        ("ok = (a)\n", "ok = ((not G) and a)\n"),
        ("ok = f(a)\n", "ok = f((not G) and (a))\n"),
        ("ok = f((a),)\n", "ok = f(((not G) and a),)\n"),
        ("class A((a)): pass\n", "class A(((not G) and a)): pass\n"),
        ("ok = (  # why\n    a\n)\n", "ok = (  # why\n    (not G) and a\n)\n"),
        ("ok = f'{(a)}'\n", "ok = f'{((not G) and a)}'\n"),
        ("ok = x or a\n", "ok = x or (not G) and (a)\n"),
        ("ok = -a\n", "ok = -((not G) and (a))\n"),
    ],
)
def test_gate_expression(code: str, fixed: str) -> None:
    snippet = parse(code)
    edit = gate_expression(snippet.ctx, snippet.node("a", ast.Name), "G")
    data = code.encode()
    assert (data[: edit.start] + edit.content.encode() + data[edit.end :]).decode() == fixed


@pytest.mark.parametrize(
    ("code", "gated", "fixed"),
    [
        # `(not G) and a or b` would still be true on ROCm whenever b is.
        ("if (a or b) and c:\n    pass\n", "a or b", "if ((not G) and (a or b)) and c:\n    pass\n"),
        ("ok = (a if c else b)\n", "a if c else b", "ok = ((not G) and (a if c else b))\n"),
        ("ok = (a.b)\n", "a.b", "ok = ((not G) and a.b)\n"),
        ("ok = (a and b)\n", "a and b", "ok = ((not G) and a and b)\n"),
    ],
)
def test_gate_expression_keeps_a_looser_operand_whole(code: str, gated: str, fixed: str) -> None:
    snippet = parse(code)
    edit = gate_expression(snippet.ctx, snippet.node(gated, ast.expr), "G")
    data = code.encode()
    assert (data[: edit.start] + edit.content.encode() + data[edit.end :]).decode() == fixed


# --- uses ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "inspected"),
    [
        ("ok = x.dtype == D", True),
        ("ok = x.dtype in (D, E)", True),
        ("ok = x.dtype in {D}", True),
        ("v = TABLE[D]", True),
        ("t = {D: 1}", True),
        ("t = {1: D}", False),
        ("s = f'{D}'", True),
        ("n = D.itemsize", True),
        ("ok = isinstance(D, T)", True),
        ("s = frozenset([D, E])", True),
        ("logger.info('%s', D)", True),
        ("y = x.to(D)", False),
        ("y = torch.empty(3, dtype=D)", False),
        ("y = [D, E]", False),
    ],
)
def test_is_inspected(code: str, inspected: bool) -> None:
    snippet = parse(code + "\n")
    assert uses.is_inspected(snippet.ctx, snippet.node("D", ast.Name)) is inspected


@pytest.mark.parametrize(
    ("code", "used"),
    [
        ('FLAGS = ["-arch=sm_80"]', True),
        ('run(["nvcc", "-arch=sm_80"])', True),
        ('"""-arch=sm_80"""', False),
        ('print("-arch=sm_80")', False),
        ('raise ValueError("-arch=sm_80")', False),
        ('ok = flag == "-arch=sm_80"', False),
        ('t = {"-arch=sm_80": 1}', False),
        ('t = {1: "-arch=sm_80"}', True),
        ('ok = flag.startswith("-arch=sm_80")', False),
        ('ok = flag.rindex("-arch=sm_80")', False),
        ('rest = flag.removeprefix("-arch=sm_80")', False),
        ('x = os.environ.get("ARCH", "-arch=sm_80")', False),
    ],
)
def test_is_string_value_use(code: str, used: bool) -> None:
    snippet = parse(code + "\n")
    string = next(n for n in in_order(snippet.module) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    assert uses.is_string_value_use(snippet.ctx, string) is used


def test_outermost_collection_member() -> None:
    snippet = parse("ok = x in (a, (D, b))\n")
    member = uses.outermost_collection_member(snippet.ctx, snippet.node("D", ast.Name))
    assert snippet.code(member) == "(a, (D, b))"


@pytest.mark.parametrize(
    ("code", "listed"),
    [
        ("_ALLOWED_DTYPES = (V, b)\n", True),
        ("SUPPORTED = [a, (V,)]\n", True),
        ("self.known_types = [V]\n", True),
        ("DTYPES = (V, b)\n", False),  # a name that does not say it lists accepted values
        ("allowed = V\n", False),  # no collection
        ("check(allowed=(V, b))\n", False),  # not assigned
        # A table every read of which only looks values up, filtered or not.
        ("FP8 = tuple(d for d in (V, b) if d is not None)\nok = x.dtype in FP8\n", True),
        ("FP8 = (V, b)\nok = isinstance(x, FP8) or y not in FP8\n", True),
        ("FP8 = (V, b)\nif not FP8 or x in FP8:\n    pass\n", True),  # emptiness tested too
        ("FP8 = (V, b)\nok = x in FP8\nmake(FP8)\n", False),  # also passed on
        ("FP8 = (V, b)\n", False),  # never read
        ("FP8 = sorted(d for d in (V, b))\nok = x in FP8\n", False),  # not a collecting call
        ("FP8: tuple[int, ...] = (V, b)\nok = x not in FP8\n", True),  # annotated
        ("FP8: tuple[int, ...] = (V, b)\nmake(FP8)\n", False),  # annotated, passed on
        ("_ALLOWED: list[int] = [V]\n", True),  # annotated, named for what it lists
    ],
)
def test_in_allow_list(code: str, listed: bool) -> None:
    snippet = parse(code)
    assert uses.in_allow_list(snippet.ctx, snippet.node("V", ast.Name)) is listed


# --- settings -----------------------------------------------------------------------------------------
def test_patch_settings() -> None:
    snippet = parse(
        """
        OPTIONS = {"max_autotune": True}
        KEY = "memory_planning"
        config.patch(KEY, True)
        config.patch(OPTIONS, coordinate_descent_tuning=False)
        config.patch({"triton.cudagraphs": 1})
        """
    )
    calls = [c for c in in_order(snippet.module) if isinstance(c, ast.Call)]
    found = [[(s.key, snippet.code(s.site)) for s in settings.patch_settings(snippet.ctx, c)] for c in calls]
    assert found == [
        [("memory_planning", "True")],
        [("max_autotune", "OPTIONS"), ("coordinate_descent_tuning", "coordinate_descent_tuning=False")],
        [("triton.cudagraphs", "1")],
    ]
    values = [snippet.code(s.value) for c in calls for s in settings.patch_settings(snippet.ctx, c)]
    assert values == ["True", "True", "False", "1"]


def test_option_settings() -> None:
    snippet = parse("torch.compile(m, options=dict(max_autotune=True))\n")
    options = snippet.ctx.semantic.keyword(snippet.first(ast.Call), "options")
    assert options is not None
    assert [(s.key, snippet.code(s.site)) for s in settings.option_settings(snippet.ctx, options)] == [
        ("max_autotune", "True")
    ]


def test_compile_options() -> None:
    snippet = parse(
        """
        import functools, torch
        torch.compile(m, options={"max_autotune": True})
        functools.partial(torch.compile, options={"memory_planning": True})
        other.compile(m, options={"max_autotune": True})
        torch.compile(m)
        """
    )
    calls = [c for c in in_order(snippet.module) if isinstance(c, ast.Call)]
    found = [[s.key for s in settings.compile_options(snippet.ctx, c)] for c in calls]
    assert found == [["max_autotune"], ["memory_planning"], [], []]


def test_config_assignments() -> None:
    snippet = parse(
        """
        import torch._inductor.config as c
        from torch._inductor import config
        c.triton.cudagraphs = config.max_autotune = other.max_autotune = True
        c.coordinate_descent_tuning = True
        """
    )
    module, wanted = "torch._inductor.config", {"cudagraphs", "max_autotune"}
    assigns = [n for n in in_order(snippet.module) if isinstance(n, ast.Assign)]
    found = [
        [(s.key, snippet.code(s.site)) for s in settings.config_assignments(snippet.ctx, a, module, wanted)]
        for a in assigns
    ]
    assert found == [[("triton.cudagraphs", "c.triton.cudagraphs"), ("max_autotune", "config.max_autotune")], []]


# --- torch_api ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "devices"),
    [
        ("torch.empty(3, device=D)", ["D"]),
        ("torch.load(f, map_location=D)", ["D"]),
        ("x.to(D, non_blocking=True)", ["D"]),
        ("torch.device(D)", ["D"]),
        ("torch.autocast(device_type=D)", ["D"]),
        ("torch.amp.GradScaler(D)", ["D"]),
        ("other.autocast(device_type=D)", []),
        ("f(D)", []),
    ],
)
def test_device_arguments(call: str, devices: list[str]) -> None:
    snippet = parse(f"import torch\n{call}\n")
    found = torch_api.device_arguments(snippet.ctx, snippet.node(call, ast.Call))
    assert [snippet.code(value) for value in found] == devices


@pytest.mark.parametrize(
    ("call", "sites"),
    [
        ('dist.init_process_group("mpi")', [('"mpi"', '"mpi"')]),
        ("dist.new_group([0, 1], None, backend=B)", [("B", "B")]),
        ("dist.new_group([0, 1], None, B)", [("B", "B")]),
        ("deepspeed.init_distributed(dist_backend=B)", [("B", "B")]),
        ('dist.init_process_group(**{"backend": "ucc"})', [('**{"backend": "ucc"}', '"ucc"')]),
        ("dist.init_process_group(world_size=2)", []),
        ("other.init_process_group(B)", []),
    ],
)
def test_backend_arguments(call: str, sites: list[tuple[str, str]]) -> None:
    snippet = parse(f"import deepspeed\nimport torch.distributed as dist\n{call}\n")
    found = torch_api.backend_arguments(snippet.ctx, snippet.node(call, ast.Call))
    assert [(snippet.code(site), snippet.code(value)) for site, value in found] == sites


@pytest.mark.parametrize(
    ("value", "backends"),
    [
        ('"MPI"', ["mpi"]),
        ('"cpu:gloo,cuda:mpi"', ["gloo", "mpi"]),
        ("dist.Backend.UCC", ["ucc"]),
        ("args.backend", []),
        ('", "', []),
    ],
)
def test_backend_names(value: str, backends: list[str]) -> None:
    snippet = parse(f"import torch.distributed as dist\nB = {value}\n")
    assigned = snippet.first(ast.Assign).value
    assert torch_api.backend_names(snippet.ctx, assigned) == backends


_FALLBACK = 'import os, torch\nV = os.getenv("CUDA_VERSION") or torch.version.cuda\n'


@pytest.mark.parametrize(
    ("code", "unguarded"),
    [
        pytest.param("V.split('.')", True, id="read-with-no-guard"),
        pytest.param("if V:\n    V.split('.')", False, id="under-if-name"),
        pytest.param("V and V.split('.')", False, id="after-and"),
        pytest.param("if V is not None:\n    V.split('.')", False, id="is-not-none"),
        pytest.param("def f():\n    if not V:\n        return\n    V.split('.')", False, id="after-early-exit"),
        pytest.param("if not V:\n    V.split('.')", True, id="where-it-is-false"),
        pytest.param("if V or other:\n    V.split('.')", True, id="or-guards-nothing"),
        pytest.param("V = 'x'\nV.split('.')", True, id="another-assignment-too"),
        pytest.param("if not V:\n    V = DEFAULT\nV.split('.')", False, id="set-to-a-default-when-false"),
        pytest.param("if not V:\n    V = None\nV.split('.')", True, id="set-to-none-when-false"),
        pytest.param("if not V:\n    log(V)\nV.split('.')", True, id="only-logged-when-false"),
    ],
)
def test_unguarded_fallback_to(code: str, unguarded: bool) -> None:
    snippet = parse(_FALLBACK + code + "\n")
    read = [node for node in ast.walk(snippet.module) if isinstance(node, ast.Name) and node.id == "V"][-1]
    assert torch_api.unguarded_fallback_to(snippet.ctx, read, "torch.version.cuda") is unguarded


@pytest.mark.parametrize(
    "assigned",
    ['os.getenv("CUDA_VERSION", "12.1")', "torch.version.cuda or os.getenv('CUDA_VERSION')", "torch.version.hip"],
)
def test_no_fallback_to_the_cuda_version(assigned: str) -> None:
    """A literal default, the version first in an `or` (a falsy None goes on to the next), another attribute."""
    snippet = parse(f"import os, torch\nV = {assigned}\nV.split('.')\n")
    read = [node for node in ast.walk(snippet.module) if isinstance(node, ast.Name) and node.id == "V"][-1]
    assert not torch_api.unguarded_fallback_to(snippet.ctx, read, "torch.version.cuda")


def test_a_fallback_assigned_only_where_the_version_is_set_is_no_none() -> None:
    """`if torch.version.cuda: v = torch.version.cuda` runs on NVIDIA builds only: `v` is a string there."""
    snippet = parse(
        "import torch\nif torch.version.cuda:\n    v = torch.version.cuda\nelif torch.version.hip:\n"
        "    v = torch.version.hip\nelse:\n    v = None\nv.split('.')\n"
    )
    read = [node for node in ast.walk(snippet.module) if isinstance(node, ast.Name) and node.id == "v"][-1]
    assert not torch_api.unguarded_fallback_to(snippet.ctx, read, "torch.version.cuda")


def test_flag_from_test_of() -> None:
    snippet = parse("import torch\nuse_cuda = torch.version.cuda is not None\nif use_cuda:\n    pass\n")
    assert torch_api.flag_from_test_of(snippet.ctx, snippet.node("use_cuda", ast.Name, 1), "torch.version.cuda")
    assert not torch_api.flag_from_test_of(snippet.ctx, snippet.node("use_cuda", ast.Name, 1), "torch.version.hip")


# --- native -------------------------------------------------------------------------------------------
def test_loaded_library_names() -> None:
    snippet = parse(
        """
        import ctypes
        import ctypes.util
        from ctypes import cdll
        NAME = "/usr/lib/libnvidia-ml.so.1" if linux else "nvml.dll"
        ctypes.CDLL(NAME)
        cdll.LoadLibrary(ctypes.util.find_library("nvidia-ml"))
        ctypes.CDLL()
        other.CDLL("x")
        """
    )
    finder = "ctypes.util.find_library"
    calls = [n for n in in_order(snippet.module) if isinstance(n, ast.Call) and snippet.code(n.func) != finder]
    libraries = [native.loaded_library(snippet.ctx, call) for call in calls]
    assert [None if lib is None else snippet.code(lib) for lib in libraries] == [
        "NAME",
        'ctypes.util.find_library("nvidia-ml")',
        None,
        None,
    ]
    names = [[name for name, _ in native.library_names(snippet.ctx, lib)] for lib in libraries if lib is not None]
    assert names == [["libnvidia-ml.so.1", "nvml.dll"], ["nvidia-ml"]]


# --- lexical ------------------------------------------------------------------------------------------
_SETTING = re.compile(setting_key_pattern(("max_autotune",), ("cudagraphs",)))


@pytest.mark.parametrize(
    "code",
    [
        "config.max_autotune = True",
        "(config.max_autotune) \\\n    = True",
        "patch(max_autotune  # why\n    =True)",
        '{"max_autotune": True}',
        '"max_autotune\\\n"',
        '{"triton.cudagraphs": True}',
        '"triton\\x2ecudagraphs"',
        '"triton."  # note\n    r"cudagraphs"',
    ],
)
def test_setting_key_pattern_matches(code: str) -> None:
    assert _SETTING.search(code)


@pytest.mark.parametrize(
    "code",
    [
        "if config.max_autotune == True: pass",
        "config.max_autotune_gemm_backends = 'TRITON'",
        "use_cudagraphs = True",
        'mode = "max-autotune-no-cudagraphs"',
        '"max_" "autotune"',
        "# turn on max_autotune for speed",
    ],
)
def test_setting_key_pattern_skips(code: str) -> None:
    assert not _SETTING.search(code)


def test_assigned_attribute_and_called_name_patterns() -> None:
    assigned = re.compile(assigned_attribute_pattern("allow_tf32"))
    assert assigned.search("torch.backends.cudnn.allow_tf32 = True")
    assert assigned.search("(torch.backends.cudnn\n    .allow_tf32) = True")
    assert not assigned.search("if torch.backends.cudnn.allow_tf32 == True: pass")
    assert not assigned.search("flags(allow_tf32=True)")
    called = re.compile(called_name_pattern("set_precision"))
    assert called.search("torch.set_precision('high')")
    assert not any(called.search(code) for code in ("f(set_precision, x)", "x.set_precision.y", "'set_precision'"))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param('import re\nx = re.search(r"sm_", arch)\n', ('r"sm_"', "arch"), id="function"),
        pytest.param('import re\nP = re.compile("sm_")\nx = P.match(arch)\n', ('"sm_"', "arch"), id="compiled"),
        pytest.param('import regex\nx = regex.match("sm_", arch)\n', ('"sm_"', "arch"), id="regex-package"),
        pytest.param('import re\nx = re.compile("sm_", flags)\n', (None, None), id="compile-itself"),
        pytest.param("x = P.match(arch)\n", (None, None), id="unknown-receiver"),
        pytest.param('import re\nx = re.sub("a", "b", s)\n', (None, None), id="other-function"),
    ],
)
def test_regex_operands(code: str, expected: tuple[str | None, str | None]) -> None:
    snippet = parse(code)
    call = snippet.value_as("x", ast.Call)
    found = text_search.regex_operands(snippet.ctx, call)
    assert tuple(snippet.code(part) if part is not None else None for part in found) == expected


@pytest.mark.parametrize(
    ("test", "picked"),
    [
        pytest.param('re.search(r"Strix Halo|8060S", text)', True, id="regex"),
        pytest.param('"890M" in text or name.startswith("Radeon 8")', True, id="membership-or-prefix"),
        pytest.param('not text == "Krackan"', True, id="negated-equality"),
        pytest.param('hip and "890M" in text', False, id="and-another-test"),
        pytest.param("IS_HIP", False, id="no-text"),
        pytest.param("needle in text", False, id="needle-not-written-out"),
        pytest.param('"rocm" in torch.__version__', False, id="a-vendor-test"),
    ],
)
def test_picked_by_text(test: str, picked: bool) -> None:
    code = f"import re, torch\ndef arch(text, name, hip, needle):\n    if {test}:\n        return 'gfx1151'\n"
    other = "    if 'Strix Point' in text:\n        return 'gfx1150'\n"
    snippet = parse(code + other)
    assert text_search.picked_by_text(snippet.ctx, snippet.first(ast.Return)) is picked


def test_a_single_text_match_is_no_table() -> None:
    snippet = parse("def arch(name):\n    if 'AMD' in name:\n        return 'gfx942'\n    return None\n")
    assert text_search.picked_by_text(snippet.ctx, snippet.first(ast.Return)) is False


def test_a_nested_defs_text_match_is_not_the_outer_defs_table() -> None:
    """The other entry of a table is a return of the same def: a helper nested in it returns for itself."""
    code = (
        "def arch(name):\n    if 'AMD' in name:\n        return 'gfx942'\n"
        "    def other(text):\n        if 'Strix Point' in text:\n            return 'gfx1150'\n"
        "    return None\n"
    )
    snippet = parse(code)
    assert text_search.picked_by_text(snippet.ctx, snippet.first(ast.Return)) is False
