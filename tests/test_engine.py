"""The engine: prefilter skipping, ROC001 parse errors, ROC900 crashes, per-file-ignores, robustness."""

from __future__ import annotations

import ast
import gc
import itertools
import random
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import HAZARD, write_tree
from rocmlint.rules.roc101_reduce_overhead_compile import ReduceOverheadCompile

import rocmlint.engine as engine_module
from rocmlint.config import Settings
from rocmlint.engine import Engine, FileReport, Prefilter, prefilter_for
from rocmlint.registry import all_rules
from rocmlint.source import SourceFile, language_of

CALL = 'm = torch.compile(m, mode="reduce-overhead")'
# A call to boom() makes the patched ROC101 crash; the calls before it are still reported.
CRASHING = f"import torch\n{CALL}\nboom()\n{CALL}\n"


def check(settings: Settings, code: str | bytes, path: str = "a.py") -> FileReport:
    data = code.encode("utf-8") if isinstance(code, str) else code
    return Engine().check_bytes(path, data, settings)


def summary(report: FileReport) -> list[tuple[str, int, int]]:
    return [(d.code, d.location.line, d.location.column) for d in report.diagnostics]


@pytest.fixture
def crashing_roc101(monkeypatch: pytest.MonkeyPatch) -> None:
    """ROC101 raises on a call to `boom()`, and works as usual elsewhere."""
    original = ReduceOverheadCompile.visit_Call

    def visit_call(self, node: ast.Call, ctx) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "boom":
            raise KeyError("boom")
        original(self, node, ctx)

    monkeypatch.setattr(ReduceOverheadCompile, "visit_Call", visit_call)


# --- prefilter ---------------------------------------------------------------------------------------


def test_file_without_triggers_is_skipped_unparsed(settings, monkeypatch):
    def no_decoding(*args, **kwargs):
        raise AssertionError("a file without triggers must not be decoded")

    monkeypatch.setattr(SourceFile, "from_bytes", no_decoding)
    report = check(settings, "def broken(:\n    torch.compile(m)\n")
    assert report.skipped is True and report.diagnostics == []
    assert check(settings, b"\xff\xfe binary \x00").skipped is True


def test_file_with_a_trigger_is_parsed(settings):
    report = check(settings, "# reduce-overhead is mentioned in a comment only\nx = 1\n")
    assert report.skipped is False and report.diagnostics == []


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _every_trigger(language: str) -> Prefilter:
    return prefilter_for(language, frozenset(rule.code for rule in all_rules()))


def _substring_scan(prefilter: Prefilter, data: bytes) -> set[bytes]:
    return {trigger for trigger in prefilter.triggers if trigger in data}


def _hostile_texts(triggers: tuple[bytes, ...]) -> list[bytes]:
    """Bytes an automaton could get wrong: triggers glued (one inside another: `hip` in `hipMalloc`), each one
    byte short of itself before the next, at the very start and end, cut by a NUL, in upper case, amid random
    and non-ASCII bytes, and nothing."""
    noise = random.Random(17).randbytes(8192)
    glued = b"".join(triggers)
    overlapping = b"".join(a[:-1] + b for a, b in itertools.pairwise(triggers))
    return [
        b"",
        noise,
        glued,
        glued[::-1],
        overlapping,
        triggers[0] + noise + triggers[-1],
        b"\x00".join(t[: len(t) // 2] + b"\x00" + t[len(t) // 2 :] for t in triggers),
        glued.upper(),
        bytes(range(128, 256)) + glued + bytes(range(128, 256)),
        noise[:4096] + overlapping + noise[4096:],
    ]


@pytest.mark.parametrize("language", ["python", "cuda"])
def test_prefilter_finds_what_a_substring_scan_finds_in_the_fixtures(language: str) -> None:
    prefilter = _every_trigger(language)
    files = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file() and language_of(str(p)) == language]
    assert len(files) > 20
    found_any = False
    for path in files:
        data = path.read_bytes()
        expected = _substring_scan(prefilter, data)
        assert prefilter.triggers_in(data) == expected, path
        found_any = found_any or bool(expected)
    assert found_any


@pytest.mark.parametrize("language", ["python", "cuda"])
def test_prefilter_finds_what_a_substring_scan_finds_in_hostile_bytes(language: str) -> None:
    prefilter = _every_trigger(language)
    for data in _hostile_texts(prefilter.triggers):
        assert prefilter.triggers_in(data) == _substring_scan(prefilter, data), data[:80]
    assert prefilter.triggers_in(b"".join(prefilter.triggers)) == set(prefilter.triggers)


@pytest.mark.parametrize("language", ["python", "cuda"])
def test_context_matchers_find_what_a_substring_scan_of_the_lowered_bytes_finds(language: str) -> None:
    prefilter = _every_trigger(language)
    assert prefilter.context_matchers  # ROC108, ROC119, ROC130 (Python); ROC208 (C++)
    for rule, matcher in prefilter.context_matchers.items():
        words = rule.also_requires
        texts = [*_hostile_texts(words), *(w[:-1] for w in words), *(w.upper() for w in words)]
        texts += [b"".join(p.read_bytes() for p in sorted(FIXTURES.rglob("*")) if language_of(str(p)) == language)]
        for data in texts:
            lowered = data.lower()
            assert bool(matcher.find_matches_as_indexes(lowered)) == any(w in lowered for w in words), data[:80]


def test_triggers_of_disabled_rules_do_not_count(settings):
    report = check(replace(settings, ignore=("ROC101",)), "def broken(:\n    'reduce-overhead'\n")
    assert report.skipped is True and report.diagnostics == []


def test_noqa_triggers_parsing_only_when_unused_noqa_is_on(settings):
    assert check(settings, "x = 1  # noqa: ROC101\n").skipped is True
    report = check(replace(settings, extend_select=("ROC002",)), "x = 1  # NOQA: ROC101\n")
    assert report.skipped is False and [d.code for d in report.diagnostics] == ["ROC002"]


def test_a_test_file_gets_only_the_rules_that_apply_to_tests(settings):
    code = f'import torch\n{CALL}\nif torch.cuda.get_device_capability() >= (9, 0):\n    attention = "fa3"\n'
    assert [d.code for d in check(settings, code, "pkg/model.py").diagnostics] == ["ROC101", "ROC113"]
    assert [d.code for d in check(settings, code, "tests/test_model.py").diagnostics] == ["ROC113"]
    # No rule left that could fire: the test file is not even parsed.
    assert check(settings, f"def broken(:\n    {CALL}\n", "tests/test_model.py").skipped is True


def test_unknown_language_is_not_checked(settings):
    assert check(settings, HAZARD, path="notes.txt").diagnostics == []
    assert summary(Engine().check_bytes("-", HAZARD.encode(), settings, language="python")) == [("ROC101", 2, 22)]


def test_cuda_files_are_decoded_and_suppressions_read(settings):
    report = check(replace(settings, extend_select=("ROC002",)), "int x;  // noqa: ROC101\n", path="k.cu")
    assert [d.code for d in report.diagnostics] == ["ROC002"]
    # No CUDA rule looks for anything here, so only ROC002 makes the broken file worth decoding.
    assert check(settings, b"\xff\xfe // noqa: ROC101", path="k.cu").skipped is True
    report = check(replace(settings, extend_select=("ROC002",)), b"\xff\xfe // noqa: ROC101", path="k.cu")
    assert [d.code for d in report.diagnostics] == ["ROC001"]


# --- ROC001 ------------------------------------------------------------------------------------------


def test_syntax_error_gives_one_roc001_at_the_precise_position(settings):
    # The unclosed '(' is at code-point column 26 of line 2, after non-ASCII text.
    source = 'import torch\ns = "é€🎉"; m = torch.compile(m, mode="reduce-overhead"\n'
    report = check(settings, source)
    [diagnostic] = report.diagnostics
    assert diagnostic.code == "ROC001" and diagnostic.name == "parse-error"
    assert (diagnostic.location.line, diagnostic.location.column) == (2, source.splitlines()[1].index("(") + 1)
    assert "SyntaxError" in diagnostic.message and "never closed" in diagnostic.message


def test_syntax_error_position_with_crlf(settings):
    source = "import torch\r\n\r\nmode = 'reduce-overhead'\r\nif True:\r\nx = 1\r\n"
    [diagnostic] = check(settings, source).diagnostics
    assert (diagnostic.code, diagnostic.location.line) == ("ROC001", 5)
    assert "indented block" in diagnostic.message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"import torch\nx = 'reduce-overhead \xff'\n", "cannot decode"),
        (b"# -*- coding: latin-1 -*-\nimport torch\n\x00\x01 reduce-overhead\n", "NUL bytes"),
        (b"# -*- coding: klingon -*-\nmode = 'reduce-overhead'\n", "cannot decode"),
    ],
    ids=["bad-utf8", "binary", "unknown-coding"],
)
def test_undecodable_file_gives_one_roc001(settings, data, message):
    [diagnostic] = check(settings, data).diagnostics
    assert diagnostic.code == "ROC001" and message in diagnostic.message
    assert (diagnostic.location.line, diagnostic.location.column) == (1, 1)


def test_declared_encoding_is_honoured(settings):
    data = "# -*- coding: latin-1 -*-\nimport torch\ns = 'é'; m = torch.compile(m, mode='reduce-overhead')\n"
    assert summary(check(settings, data.encode("latin-1"))) == [("ROC101", 3, 31)]


def test_parse_error_does_not_stop_the_run(cli, project):
    write_tree(
        project,
        {
            "a_broken.py": "import torch\nm = torch.compile(m, mode='reduce-overhead'\n",
            "b.py": HAZARD,
            "c.py": b"reduce-overhead\xff\n",
        },
    )
    result = cli("check", "--quiet")
    assert result.code == 1
    assert [line.split(": ")[0] + " " + line.split()[1] for line in result.lines] == [
        "a_broken.py:2:18 ROC001",  # the '(' that is never closed
        "b.py:2:22 ROC101",
        "c.py:1:1 ROC001",
    ]


def test_parse_errors_can_be_ignored_per_file(settings):
    settings = replace(settings, per_file_ignores=(("a.py", ("ROC001",)),))
    assert check(settings, "import torch\nmode = 'reduce-overhead\n").diagnostics == []


def test_too_large_file_gives_roc001(settings, project, monkeypatch):
    monkeypatch.setattr(engine_module, "MAX_FILE_BYTES", 10)
    write_tree(project, {"a.py": HAZARD})
    [diagnostic] = Engine().check_path(Path("a.py"), settings).diagnostics
    assert diagnostic.code == "ROC001" and "too large" in diagnostic.message


def test_unreadable_path_is_a_warning(settings, project):
    report = Engine().check_path(project / "missing.py", settings)
    assert report.diagnostics == [] and "cannot read" in report.warnings[0]


# --- ROC900 ------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("crashing_roc101")
def test_crashing_rule_gives_roc900_and_the_rest_goes_on(settings):
    report = check(replace(settings, extend_select=("ROC002",)), CRASHING + "x = 1  # noqa: ROC102\n")
    assert summary(report) == [("ROC900", 1, 1), ("ROC101", 2, 22), ("ROC002", 5, 8)]
    crash = report.diagnostics[0]
    assert crash.message == "rule ROC101 (reduce-overhead-compile) crashed on this file: KeyError: 'boom'"
    assert len(report.tracebacks) == 1 and "KeyError: 'boom'" in report.tracebacks[0]
    # The other files are checked as usual.
    assert summary(check(settings, HAZARD, path="b.py")) == [("ROC101", 2, 22)]


@pytest.mark.usefixtures("crashing_roc101")
def test_codes_of_a_crashed_rule_are_not_called_unused(settings):
    source = f"import torch\nboom()\n{CALL}  # noqa: ROC101, ROC102\n"
    report = check(replace(settings, extend_select=("ROC002",)), source)
    assert [(d.code, d.message) for d in report.diagnostics] == [
        ("ROC900", "rule ROC101 (reduce-overhead-compile) crashed on this file: KeyError: 'boom'"),
        ("ROC002", "Unused `noqa` directive (unused: ROC102)"),
    ]


@pytest.mark.usefixtures("crashing_roc101")
def test_roc900_can_be_suppressed(settings):
    assert summary(check(settings, "# rocmlint: noqa: ROC900\n" + CRASHING)) == [("ROC101", 3, 22)]
    assert summary(check(replace(settings, ignore=("ROC900",)), CRASHING)) == [("ROC101", 2, 22)]


def test_front_end_crash_gives_roc900(settings, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("broken")  # not RecursionError: that one is the input's depth, ROC001

    monkeypatch.setattr(engine_module, "check_python", broken)
    report = check(replace(settings, extend_select=("ROC002",)), f"import torch\n{CALL}  # noqa: ROC101\n")
    assert [(d.code, d.message) for d in report.diagnostics] == [
        ("ROC900", "the Python front end crashed on this file: KeyError: 'broken'")
    ]
    assert "KeyError" in report.tracebacks[0]


@pytest.mark.usefixtures("crashing_roc101")
def test_verbose_prints_the_traceback(cli, project):
    write_tree(project, {"a.py": CRASHING, "b.py": HAZARD})
    quiet = cli("check")
    assert quiet.code == 1 and "Traceback" not in quiet.stderr
    assert "a.py:1:1: ROC900 rule ROC101" in quiet.stdout and "b.py:2:22: ROC101" in quiet.stdout
    verbose = cli("check", "--verbose")
    assert "a.py: ROC101 crashed:\nTraceback (most recent call last):" in verbose.stderr
    assert "KeyError: 'boom'" in verbose.stderr
    assert verbose.stdout == quiet.stdout


# --- per-file-ignores and selection in the engine ----------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "ignored"),
    [
        ("scripts/*", "scripts/a.py", True),
        ("scripts/*", "src/scripts/a.py", False),
        ("bench_*.py", "src/deep/bench_a.py", True),
        ("*.py", "a.py", True),
        ("src/*", "src/x/a.py", True),
        ("a.pyi", "a.py", False),
    ],
)
def test_per_file_ignores_patterns(settings, project, pattern, path, ignored):
    settings = replace(settings, per_file_ignores=((pattern, ("ROC1",)),))
    report = Engine().check_bytes(str(project / path), HAZARD.encode(), settings)
    assert (report.diagnostics == []) is ignored


def test_diagnostics_are_sorted(settings):
    source = f"import torch\n{CALL}; {CALL}\n{CALL}\n"
    assert summary(check(settings, source)) == [("ROC101", 2, 22), ("ROC101", 2, 68), ("ROC101", 3, 22)]


# --- garbage collection ----------------------------------------------------------------------------


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_paused_while_a_file_is_checked_and_restored_after(settings, monkeypatch, enabled_before):
    """Collections during a check would rescan the file's syntax tree again and again; between files
    the collector must run as before (or stay off when the embedding program turned it off)."""
    seen: list[bool] = []
    original = ReduceOverheadCompile.visit_Call

    def visit_call(self, node: ast.Call, ctx) -> None:
        seen.append(gc.isenabled())
        original(self, node, ctx)

    monkeypatch.setattr(ReduceOverheadCompile, "visit_Call", visit_call)
    (gc.enable if enabled_before else gc.disable)()
    try:
        report = check(settings, f"import torch\n{CALL}\n")
        assert [d.code for d in report.diagnostics] == ["ROC101"]
        assert seen == [False]
        assert gc.isenabled() is enabled_before
    finally:
        gc.enable()
