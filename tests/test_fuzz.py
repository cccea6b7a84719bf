"""Property tests over both front ends and the fixer: real sources from fixtures/, mutated, and random bytes.

For every input: no rule or front end crashes (no ROC900), every diagnostic's range lies inside the
file, fixing is idempotent (fixing the fixed content changes nothing), fixed Python still parses when
the original did, and fixed C++ has no more tree-sitter ERROR nodes than the original.

CI runs a few examples per property, derandomized so CI never flakes; the long run (docs/robustness.md)
explores: ROCMLINT_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py.
"""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

import pytest
import tree_sitter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocmlint.cli import _encoding_of
from rocmlint.config import Settings
from rocmlint.cuda.frontend import _language, parse
from rocmlint.diagnostics import Diagnostic
from rocmlint.engine import Engine
from rocmlint.fix import fix_content
from rocmlint.source import DecodeError, SourceFile, language_of

ROOT = Path(__file__).resolve().parent.parent
LONG_RUN = "ROCMLINT_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("ROCMLINT_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not LONG_RUN,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# Tokens that open or close structure, or that rules look for: mutations built from these reach the
# error-recovery paths of both parsers and the rules' odd cases.
TOKENS = [
    b"#if",
    b"#ifdef __HIP_PLATFORM_AMD__\n",
    b"#else\n",
    b"#endif\n",
    b"#define WARP 32\n",
    b'"""',
    b"'''",
    b'"',
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"\\\n",
    b"\r",
    b"\r\n",
    b"\t",
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b"# noqa",
    b"// noqa: ROC210",
    b"__shfl_xor_sync(0xffffffff, v, 1)",
    b"__nanosleep(ns);",
    b"allow_tf32 = True",
    b'torch.compile(m, mode="reduce-overhead")',
    b"if torch.version.hip:\n",
    b"load_inline(",
    b"warpSize",
    b"__ballot_sync(0xffffffff, p)",
    b"import pynvml\n",
    b"\xc3",
    "é€😀".encode(),
    b"# -*- coding: latin-1 -*-\n",
]
TRIGGERS = [b"allow_tf32", b"__shfl_xor_sync(", b"__nanosleep", b"reduce-overhead", b"warpSize", b"load_inline"]


@lru_cache(maxsize=1)
def seeds() -> tuple[tuple[str, bytes], ...]:
    found = []
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file() and language_of(path.name) is not None and path.stat().st_size < 64_000:
            found.append((path.name, path.read_bytes()))
    return tuple(found)


@st.composite
def mutated_source(draw: st.DrawFn) -> tuple[str, bytes]:
    name, data = draw(st.sampled_from(seeds()))
    lines = data.splitlines(keepends=True) or [b""]
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "token", "bytes", "truncate"]))
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind in ("token", "bytes"):
            insert = draw(st.sampled_from(TOKENS)) if kind == "token" else draw(st.binary(min_size=1, max_size=8))
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + insert + lines[i][at:]
        elif kind == "truncate":
            joined = b"".join(lines)
            lines = [joined[: draw(st.integers(0, len(joined)))]]
    return name, b"".join(lines)


@st.composite
def random_source(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["r.py", "r.cu", "r.cuh", "r.cpp"]))
    parts = draw(
        st.lists(st.one_of(st.binary(max_size=40), st.sampled_from(TOKENS), st.sampled_from(TRIGGERS)), max_size=30)
    )
    return name, b"".join(parts)


def _engine_check(engine: Engine, name: str, project: Settings) -> object:
    def check(data: bytes) -> tuple[list[Diagnostic], str]:
        return engine.check_bytes(name, data, project).diagnostics, _encoding_of(name, data)

    return check


def _line_count(data: bytes, name: str) -> int:
    try:
        return max(1, len(SourceFile.from_bytes(name, data, language_of(name) or "python").lines))
    except DecodeError:
        return max(1, data.count(b"\n") + 1)


def _assert_ranges_inside(diagnostics: list[Diagnostic], data: bytes, name: str) -> None:
    last_line = _line_count(data, name) + 1  # an end position may sit just past the last line
    for d in diagnostics:
        assert 1 <= d.location.line <= last_line and d.location.column >= 1, d
        assert (d.location.line, d.location.column) <= (d.end_location.line, d.end_location.column), d
        assert d.end_location.line <= last_line, d
        for edit in d.fix.edits if d.fix else ():
            assert 0 <= edit.start <= edit.end <= len(data), (d, edit)


def _python_parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@lru_cache(maxsize=1)
def _error_query() -> tuple[tree_sitter.Query, tree_sitter.Query]:
    return tree_sitter.Query(_language(), "(ERROR) @e"), tree_sitter.Query(_language(), "(MISSING) @m")


def _cpp_errors(data: bytes) -> int:
    tree = parse(data)
    return sum(
        len(tree_sitter.QueryCursor(q).captures(tree.root_node).get(k, []))
        for q, k in zip(_error_query(), "em", strict=True)
    )


def _check_properties(name: str, data: bytes, project: Settings) -> None:
    engine = Engine()
    report = engine.check_bytes(name, data, project)
    assert not [d for d in report.diagnostics if d.code == "ROC900"], (report.diagnostics, report.tracebacks)
    _assert_ranges_inside(report.diagnostics, data, name)
    check = _engine_check(engine, name, project)
    once = fix_content(data, check)  # type: ignore[arg-type]
    if not once.changed:
        return
    twice = fix_content(once.data, check)  # type: ignore[arg-type]
    assert not twice.changed and twice.data == once.data, "fixing is not idempotent"
    assert not [d for d in once.remaining if d.code == "ROC900"]
    _assert_ranges_inside(once.remaining, once.data, name)
    if language_of(name) == "python":
        assert _python_parses(once.data) or not _python_parses(data), "the fix broke the syntax"
    elif not _lone_cr(data):  # tree-sitter-cuda ends a directive at \n only; compilers accept a lone \r
        # Only for input tree-sitter parsed cleanly: on broken input its error recovery is chaotic
        # (one more #if/#else around an include regroups the damage: 2 ERROR nodes become 3).
        assert _cpp_errors(once.data) == 0 or _cpp_errors(data) > 0, "the fix added parse errors"


def _lone_cr(data: bytes) -> bool:
    return data.count(b"\r") > data.count(b"\r\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(root=tmp_path_factory.mktemp("fuzz"))


def test_seeds_exist() -> None:
    names = {name.rsplit(".", 1)[-1] for name, _ in seeds()}
    assert {"py", "cu"} <= names and len(seeds()) >= 10


@FUZZ
@given(source=mutated_source())
def test_mutated_fixtures(source: tuple[str, bytes], project: Settings) -> None:
    _check_properties(*source, project)


@FUZZ
@given(source=random_source())
def test_random_bytes_with_triggers(source: tuple[str, bytes], project: Settings) -> None:
    _check_properties(*source, project)


# Found by the long run (docs/robustness.md), kept as regressions.
FOUND = [
    ("attention.py", b'""b"mixes str and bytes"""\nimport torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n'),
    ("r.cu", b"\r__nanosleep();"),
    # The ROC101 fix put `import torch` between a decorator and its `def`.
    (
        "test_compile.py",
        (
            b'\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")\n'
            b"def test_reduce_overhead_matches_eager():\n    model = torch.nn.Linear(8, 8).cuda()\n"
            b'    compiled = torch.compile(model, mode="reduce-overhead")\n    x = torch.randn(4, 8, device="cuda")\n'
            b"    torch.testing.assert_close(compiled(x), model(x))\n"
        ),
    ),
]


@pytest.mark.parametrize(("name", "data"), FOUND)
def test_inputs_the_long_run_found(name: str, data: bytes, project: Settings) -> None:
    _check_properties(name, data, project)


def test_line_holding_only_a_backslash_continuation(project: Settings) -> None:
    """A parser that dropped such a line would put every later position a line off."""
    data = b"\n\\\nimport os\n\nimport torch\nimport torch._inductor.config as inductor_config\n\ninductor_config.triton.cudagraphs = True\n"
    _check_properties("compile.py", data, project)


@pytest.mark.parametrize(("name", "data"), seeds(), ids=[name for name, _ in seeds()])
def test_every_seed_unmutated(name: str, data: bytes, project: Settings) -> None:
    _check_properties(name, data, project)
