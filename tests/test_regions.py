"""Parsing only the regions triggers land in changes no position and no diagnostic."""

from __future__ import annotations

import re
import textwrap

import pytest

import rocmlint.python.frontend as frontend
from rocmlint.config import Settings
from rocmlint.diagnostics import Diagnostic
from rocmlint.engine import Engine
from rocmlint.python.regions import reduce_source
from rocmlint.registry import all_rules

_FILLER = '''

def transform_{n}(values, factor={n}):
    """Scale and shift a list of numbers ({n})."""
    result = []
    for index, value in enumerate(values):
        if index % 3 == 0:
            result.append(value * factor + {n})
    return result


class Block{n}:
    def __init__(self, width={n}):
        self.width = width

    @staticmethod
    def forward(x):
        return transform_{n}(x)
'''


# The unit holding a file's first indented line always stays (libcst reads the default indentation
# there): this prelude holds it, so each test's units are kept or dropped by the rule under test alone.
_PRELUDE = "if False:\n    pass\n"


def _reduce(code: str, *needles: str) -> str | None:
    code = _PRELUDE + textwrap.dedent(code)
    reduced = reduce_source(
        code, [match.start() for needle in needles for match in re.finditer(re.escape(needle), code)]
    )
    return None if reduced is None else reduced.text


def test_unrelated_definitions_are_blanked_and_lines_stay_in_place():
    code = textwrap.dedent(
        """\
        import torch

        @decorate
        def unrelated():
            return 1

        class Model:
            size = 3

            def helper(self):
                return 2

            def run(self):
                torch.backends.cuda.matmul.allow_tf32 = True

        def also_unrelated():
            pass
        """
    )
    reduced = _reduce(code, "allow_tf32")
    assert reduced is not None
    code = _PRELUDE + code
    assert len(reduced.splitlines()) == len(code.splitlines())
    for original, kept in zip(code.splitlines(), reduced.splitlines(), strict=True):
        assert kept in (original, "", "    pass"), (original, kept)
    assert "unrelated" not in reduced and "@decorate" not in reduced
    assert "    pass" in reduced and "def helper" not in reduced  # a dropped method leaves its class a body
    assert "allow_tf32" in reduced and "size = 3" in reduced


def test_crlf_line_endings_are_kept():
    code = "import torch\r\nif False:\r\n    pass\r\n\r\ndef a():\r\n    return 1\r\n\r\ndef b():\r\n    torch.version.cuda\r\n"
    reduction = reduce_source(code, [code.index("version.cuda")])
    assert reduction is not None
    reduced = reduction.text
    assert reduced.count("\r\n") == code.count("\r\n")
    assert "def a" not in reduced and "def b" in reduced


def test_a_guard_function_that_kept_code_calls_is_kept():
    reduced = _reduce(
        """\
        import torch

        def is_hip():
            return torch.version.hip is not None

        def setup():
            if not is_hip():
                torch.backends.cuda.matmul.allow_tf32 = True

        def unrelated():
            return 0
        """,
        "allow_tf32",
    )
    assert reduced is not None
    assert "def is_hip" in reduced and "def unrelated" not in reduced


def test_callers_of_a_kept_function_are_kept():
    reduced = _reduce(
        """\
        import torch

        def cuda_only():
            torch.backends.cuda.matmul.allow_tf32 = True

        def main():
            if torch.version.cuda:
                cuda_only()

        def unrelated():
            return 0
        """,
        "allow_tf32",
    )
    assert reduced is not None
    assert "def main" in reduced and "def unrelated" not in reduced


def test_readers_of_a_variable_a_trigger_assigns_are_kept():
    reduced = _reduce(
        """\
        import torch

        MODE = "reduce-overhead"

        def build(model):
            return torch.compile(model, mode=MODE)

        def unrelated():
            return 0
        """,
        "reduce-overhead",
    )
    assert reduced is not None
    assert "def build" in reduced and "def unrelated" not in reduced


def test_methods_feeding_self_attributes_of_kept_methods_are_kept():
    reduced = _reduce(
        """\
        import torch

        class Runner:
            def __init__(self):
                self.use_hip = torch.version.hip is not None

            @property
            def on_amd(self):
                return self.use_hip

            def unrelated(self):
                return 0

            def run(self):
                if not self.on_amd:
                    torch.backends.cuda.matmul.allow_tf32 = True
        """,
        "allow_tf32",
    )
    assert reduced is not None
    assert "def __init__" in reduced and "def on_amd" in reduced and "def unrelated" not in reduced


def test_rebinding_globals_keeps_the_function():
    reduced = _reduce(
        """\
        import torch

        MODE = "default"

        def configure():
            global MODE
            MODE = "other"

        def build(model):
            return torch.compile(model, mode="reduce-overhead")

        def unrelated():
            return 0
        """,
        "reduce-overhead",
    )
    assert reduced is not None
    assert "def configure" in reduced and "def unrelated" not in reduced


def test_nothing_to_drop_gives_none():
    assert _reduce("import torch\nx = torch.version.cuda\n", "version.cuda") is None
    assert _reduce("def f():\n    return torch.version.cuda\n", "version.cuda") is None


def test_strings_holding_definitions_are_not_units():
    reduced = _reduce(
        '''\
        TEMPLATE = """
        def not_a_function():
            pass
        """

        def kernel():
            return TEMPLATE + "allow_tf32"

        def unrelated():
            return 0
        ''',
        "allow_tf32",
    )
    assert reduced is not None
    assert "def not_a_function" in reduced and "def unrelated" not in reduced


def _python_examples():
    for rule in all_rules():
        if rule.language != "python":
            continue
        for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid)):
            for index, example in enumerate(examples):
                yield pytest.param(rule, example.code, id=f"{rule.code}-{kind}-{index}")


def _check(
    code: str, regions: bool, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> list[tuple[Diagnostic, int]]:
    with monkeypatch.context() as patch:
        if not regions:
            patch.setattr(frontend, "reduce_source", lambda *arguments: None)
        report = Engine().check_bytes(str(settings.root / "example.py"), code.encode(), settings)
    return [(d, d.noqa_line) for d in report.diagnostics]


@pytest.mark.parametrize(("rule", "code"), list(_python_examples()))
def test_every_example_inside_a_large_file_gives_the_same_diagnostics(rule, code, monkeypatch, settings):
    """Each rule example with unrelated functions and classes after it (large enough for the region
    scan): diagnostics, positions and fixes are those of parsing the whole file."""
    large = code + "".join(_FILLER.format(n=n) for n in range(12))
    assert len(large) > 4096
    with_regions = _check(large, True, monkeypatch, settings)
    assert with_regions == _check(large, False, monkeypatch, settings)


def test_the_large_examples_are_really_reduced():
    reduced = 0
    examples = list(_python_examples())
    for param in examples:
        rule, code = param.values
        large = code + "".join(_FILLER.format(n=n) for n in range(12))
        hits = [m.start() for trigger in rule.triggers for m in re.finditer(re.escape(trigger.decode()), large)]
        reduced += reduce_source(large, hits) is not None
    assert reduced > len(examples) * 0.9


_EMBEDDED = '''import torch
from torch.utils.cpp_extension import load_inline

HEADER = "// spin until the flag is set\\n"
KERNEL = """
__global__ void spin(volatile int* flag) {
  while (*flag == 0) { __nanosleep(100); }
}
"""


def build():
    return load_inline(name="spin", cpp_sources="", cuda_sources=[HEADER, KERNEL], functions=["spin"])
'''


def test_cuda_embedded_in_a_large_file_gives_the_same_diagnostics(monkeypatch, settings):
    """The strings a load_inline call compiles are found through the module constants it names: region
    parsing must keep those statements although no trigger lands in them."""
    large = _EMBEDDED + "".join(_FILLER.format(n=n) for n in range(12))
    with_regions = _check(large, True, monkeypatch, settings)
    assert "ROC224" in {d.code for d, _ in with_regions}
    assert with_regions == _check(large, False, monkeypatch, settings)


# Forms a review found the word fixpoint missing (each reported differently with and without regions
# before it was fixed), padded past the size where the region scan starts.
_PAD = "".join(f"\nX{n} = [{', '.join(map(str, range(30)))}]\n" for n in range(20))
_REVIEW_CASES = {
    "indent-of-a-blanked-function": "import torch\n\ndef helper():\n  return 1\n\ndef setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
    "method-called-through-its-class": (
        "import torch\n\nclass Config:\n    @staticmethod\n    def gpu_kind():\n        return torch.version.hip is not None\n\n"
        "def setup():\n    if not Config.gpu_kind():\n        torch.backends.cuda.matmul.allow_tf32 = True\n"
    ),
    "name-imported-where-a-trigger-lands": (
        "import torch\nfrom torch.version import cuda\n\ndef major():\n    return int(cuda.split('.')[0])\n"
    ),
    "function-named-not-called": (
        "import torch\nimport triton\n\ndef _prune(configs, named_args, **kw):\n    if torch.version.hip:\n"
        "        return configs[:1]\n    return configs\n\n"
        "@triton.autotune(configs=[triton.Config({}, num_warps=32)], key=['n'],\n"
        "                 prune_configs_by={'early_config_prune': _prune})\n@triton.jit\ndef kernel(x, n):\n    pass\n"
    ),
    "function-named-by-kept-code-away-from-the-trigger": (
        "import torch\nimport triton\n\ndef helper():\n    return 1\n\n"  # holds the first indented line
        "def _prune(configs, named_args, **kw):\n    if torch.version.hip:\n"
        "        return [c for c in configs if c.kwargs['BLOCK'] <= 1024]\n    return configs\n\n"
        "CONFIGS = [triton.Config({'BLOCK': 4096}, num_warps=32)]\n\n"
        "@triton.autotune(configs=CONFIGS, key=['n'], prune_configs_by={'early_config_prune': _prune})\n"
        "@triton.jit\ndef kernel(x, n):\n    pass\n"
    ),
    "method-called-from-outside-its-class": (
        "import torch\nfrom torch.utils.cpp_extension import load\n\nclass OpBuilder:\n    def cuda_flags(self):\n"
        "        return ['-O3', '--use_fast_math']\n\ndef build(builder):\n    if torch.version.hip is not None:\n"
        "        return None\n    return load('op', ['op.cu'], extra_cuda_cflags=builder.cuda_flags())\n"
    ),
    "semicolon-joined-statement": "DEBUG = False; import torch as T\n\ndef setup():\n    T.backends.cuda.matmul.allow_tf32 = True\n",
    "bare-continuations-before-a-trigger": (
        "import torch\n\ndef a():\n    \\\n    x = 1\n    \\\n    y = 2\n    \\\n    return x + y\n\n\n"
        "def f():\n    return int(torch.version.cuda)\ndef g():\n    return 1\n"
    ),
    "class-attribute-set-through-cls": (
        "import torch\n\nclass Settings:\n    @classmethod\n    def configure(cls):\n        cls.fast_path = torch.version.hip is None\n\n"
        "    def run(self):\n        if self.fast_path:\n            torch.backends.cuda.matmul.allow_tf32 = True\n"
    ),
    "statement-between-imports": (
        "import torch\nlogger = object()\nimport numpy as np\n\ndef setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    ),
}


@pytest.mark.parametrize("code", list(_REVIEW_CASES.values()), ids=list(_REVIEW_CASES))
def test_forms_the_fixpoint_once_missed(code, monkeypatch, settings):
    large = code + _PAD
    assert reduce_source(large, []) is not None, "the padding alone must be droppable"
    assert _check(large, True, monkeypatch, settings) == _check(large, False, monkeypatch, settings)


# Large literals: the elements no trigger lands in are blanked inside a kept statement.
def _table(rows: int, special: int, special_row: str) -> str:
    body = "".join(
        special_row if n == special else f"    OpInfo('op{n}', dtypes=(torch.float32,), sample_inputs_func=s{n}),\n"
        for n in range(rows)
    )
    return f"import torch\n\nop_db = [\n{body}]\n"


def test_elements_of_a_large_literal_without_a_trigger_are_blanked():
    code = _table(80, 40, "    OpInfo('fp8', dtypes=(torch.float8_e4m3fn,)),\n")
    reduction = reduce_source(code, [code.index("float8_e4m3fn")])
    assert reduction is not None
    reduced = reduction.text
    assert reduced.count("\n") == code.count("\n")
    assert "'fp8'" in reduced and "'op39'" not in reduced and "'op41'" not in reduced
    compile(reduced, "<reduced>", "exec")
    assert reduction.elided == ((3, 43), (44, 83))  # before and after the kept row (0-based line runs)


def test_elements_that_are_only_strings_and_names_stay():
    """A list of sources for load_inline holds no call: its strings are what the embedded-CUDA scan reads."""
    rows = "".join(f'    "__global__ void k{n}() {{}}",\n' for n in range(60))
    code = f"import torch\n\nKERNELS = [\n{rows}]\nif torch.version.cuda:\n    run(KERNELS)\n\ndef unrelated():\n    return 1\n"
    reduction = reduce_source(code, [code.index("version.cuda")])
    assert reduction is not None and "unrelated" not in reduction.text
    assert "k30" in reduction.text and reduction.elided == ()


def test_a_fix_spanning_blanked_elements_is_made_on_the_whole_file(monkeypatch, settings):
    """ROC301's fix rewrites the whole flag list: it must copy every element, so the file is redone whole."""
    rows = "".join(f'    "-I" + os.path.join(ROOT, "include{n}"),\n' for n in range(60))
    code = (
        'import os\nfrom torch.utils.cpp_extension import CUDAExtension\n\nROOT = "."\n'
        f'nvcc_flags = [\n    "-O3",\n{rows}    "--use_fast_math",\n]\n'
        'ext = CUDAExtension("x", ["x.cu"], extra_compile_args={"nvcc": nvcc_flags})\n'
    )
    reduction = reduce_source(code, [code.index("--use_fast_math")])
    assert reduction is not None and reduction.elided, "the list's other elements must be left out at first"
    with_regions = _check(code, True, monkeypatch, settings)
    assert with_regions == _check(code, False, monkeypatch, settings)
    fix = with_regions[0][0].fix
    assert fix is not None and any("include30" in edit.content for edit in fix.edits)


_EMBEDDED_LIST = (
    "from torch.utils.cpp_extension import load_inline\n\nKERNELS = [\n"
    + "".join(f'    "__global__ void k{n}(int* x) {{ x[0] = {n}; }}",\n' for n in range(30))
    + '    "__global__ void spin(volatile int* f) { while (*f == 0) { __nanosleep(100); } }",\n'
    + "".join(f'    "__global__ void m{n}(int* x) {{ x[0] = {n}; }}",\n' for n in range(30))
    + ']\n\n\ndef build():\n    return load_inline(name="k", cpp_sources="", cuda_sources=KERNELS)\n'
)


def test_cuda_sources_in_a_large_list_are_all_scanned(monkeypatch, settings):
    large = _EMBEDDED_LIST + "".join(_FILLER.format(n=n) for n in range(12))
    with_regions = _check(large, True, monkeypatch, settings)
    assert "ROC224" in {d.code for d, _ in with_regions}
    assert with_regions == _check(large, False, monkeypatch, settings)


def test_an_element_reading_a_triggers_binding_stays(monkeypatch, settings):
    """ROC301 follows where `cuda_flags` is read: an element of a large table reading it must stay, or
    the flags look unused there and are reported although the only use is gated (review finding)."""
    rows = "".join(f'    make_ext("a{n}", cuda_flags),\n' for n in range(70))
    code = (
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension\n\n"
        'def make_ext(name, flags):\n    return CUDAExtension(name, [name + ".cu"], extra_compile_args={"nvcc": flags})\n\n'
        'cuda_flags = ["-O3", "--use_fast_math"]\nif IS_HIP_EXTENSION:\n    cuda_flags = ["-O3"]\n'
        f"EXTENSIONS = [\n{rows}]\n\ndef unrelated():\n    return 0\n"
    )
    reduction = reduce_source(code, [code.index("--use_fast_math")])
    assert reduction is not None and "def unrelated" not in reduction.text
    assert "a35" in reduction.text and reduction.elided == ()
    assert _check(code, True, monkeypatch, settings) == _check(code, False, monkeypatch, settings)
