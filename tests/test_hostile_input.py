"""Hostile files and filesystems: each gives at most a clear ROC001 (or a warning on stderr), and the run
goes on with a meaningful exit code (docs/robustness.md).

Every hostile file carries a trigger word of an enabled rule (`pynvml`, `__shfl_xor_sync`): the
engine only decodes and parses files whose raw bytes could make a rule fire, so without one the file
would be skipped unread and the test would prove nothing.
"""

from __future__ import annotations

import ast
import builtins
import codecs
import io
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import HAZARD, Result, write_tree
from rocmlint.rules.roc101_reduce_overhead_compile import ReduceOverheadCompile
from rocmlint.rules.roc224_nanosleep import Nanosleep

import rocmlint.cli as cli_module
from rocmlint.config import Settings
from rocmlint.engine import Engine, FileReport

PY = b"import torch\nimport pynvml\n"  # ROC104 on line 2
CU = b"__global__ void k(int v) { v = __shfl_xor_sync(0xffffffff, v, 1); }\n"  # ROC210 on line 1
PY_CODE, CU_CODE = "ROC104", "ROC210"


def _binary(seed: int, trigger: bytes) -> bytes:
    noise = random.Random(seed).randbytes(4096)
    return noise[:2048] + trigger + noise[2048:]


# name -> (content, the codes it may give). ROC001 where the content is not source rocmlint can read.
HOSTILE: dict[str, tuple[bytes, set[str]]] = {
    "binary.py": (_binary(1, b"import pynvml"), {"ROC001"}),
    "binary.cu": (_binary(2, b"__shfl_xor_sync("), {"ROC001"}),
    "nul.py": (PY + b"x = 1\x00\n", {"ROC001"}),
    "nul.cu": (CU + b"\x00", {"ROC001"}),
    "invalid_utf8.py": (PY + b"s = '\xff\xfe\xc3'\n", {"ROC001"}),
    "invalid_utf8.cu": (CU + b"// \xff\xfe\xc3\n", {"ROC001"}),
    "latin1_cookie.py": (b"# -*- coding: latin-1 -*-\n" + PY + b"s = '\xe9t\xe9'\n", {PY_CODE}),
    "unknown_cookie.py": (b"# -*- coding: no-such-codec -*-\n" + PY, {"ROC001"}),
    "bom.py": (codecs.BOM_UTF8 + PY, {PY_CODE}),
    "bom.cu": (codecs.BOM_UTF8 + CU, {CU_CODE}),
    # UTF-16 holds NUL bytes between ASCII letters; with the trigger spelled in ASCII it is read.
    "utf16.py": (b"# import pynvml\n" + PY.decode().encode("utf-16"), {"ROC001"}),
    "utf16.cu": (b"// __shfl_xor_sync(\n" + CU.decode().encode("utf-16"), {"ROC001"}),
    "crlf.py": (PY.replace(b"\n", b"\r\n"), {PY_CODE}),
    "crlf.cu": (CU.replace(b"\n", b"\r\n"), {CU_CODE}),
    "lone_cr.py": (PY.replace(b"\n", b"\r"), {PY_CODE}),
    "lone_cr.cu": (b"#include <cuda.h>\r" + CU.replace(b"\n", b"\r"), {CU_CODE, "ROC205", "ROC204"}),
    "tabs_spaces.py": (
        b"import torch\nif True:\n\tx = 1\n        import pynvml\n",
        {"ROC001"},
    ),
    "truncated_string.py": (PY + b"x = '''never closed", {"ROC001"}),
    "truncated_string.cu": (CU + b'const char* s = "never closed', {CU_CODE}),
    "unterminated_if.cu": (b"#if defined(FOO)\n#ifdef BAR\n" + CU, {CU_CODE}),
    "stray_endif.cu": (b"#endif\n#else\n#elif X\n" + CU + b"}}}}\n", {CU_CODE}),
    "empty_trigger.py": (b"# pynvml", set()),
    "deep_parens.py": (PY + b"x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b"\n", {"ROC001"}),
    "deep_brackets.py": (PY + b"x = " + b"[" * 10_000 + b"]" * 10_000 + b"\n", {"ROC001"}),
    "deep_unary.py": (PY + b"x = " + b"not " * 10_000 + b"y\n", {"ROC001"}),
    "deep_indent.py": (
        PY + b"".join(b" " * i + b"if x:\n" for i in range(1_000)) + b" " * 1_000 + b"pass\n",
        {"ROC001"},
    ),
    "deep_braces.cu": (CU + b"void f() " + b"{" * 10_000 + b"}" * 10_000 + b"\n", {CU_CODE}),
    "deep_parens.cu": (CU + b"int x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b";\n", {CU_CODE}),
    "deep_if.cu": (CU + b"#if A\n" * 10_000 + b"int x;\n" + b"#endif\n" * 10_000, {CU_CODE}),
    "long_line.py": (PY + b"x = '" + b"a" * 1_000_000 + b"'\n", {PY_CODE}),
    # 1,000,000 characters of one left-nested expression: 500,000 levels of tree-sitter tree.
    "long_line.cu": (CU + b"int x = " + b"1+" * 500_000 + b"1;\n", {CU_CODE}),
}
EMPTY = {"empty.py": b"", "empty.cu": b"", "newline_only.py": b"\n", "bom_only.cu": codecs.BOM_UTF8}


# A parser without guards crashes the process on these (a native stack overflow) or runs for minutes
# (tree-sitter's query cursor below 65,000 levels): they are checked in a real process, with a time limit.
IN_SUBPROCESS = frozenset({"deep_parens.py", "deep_brackets.py", "deep_unary.py", "long_line.cu"})


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - IN_SUBPROCESS))
def test_hostile_content_gives_at_most_roc001(name: str, settings: Settings) -> None:
    data, allowed = HOSTILE[name]
    report = Engine().check_bytes(name, data, settings)
    codes = {d.code for d in report.diagnostics}
    assert codes <= allowed, [(d.code, d.message) for d in report.diagnostics]
    if "ROC001" in allowed:
        assert codes == {"ROC001"} and len(report.diagnostics) == 1
        assert report.diagnostics[0].message  # says why, not just that
    assert not report.tracebacks


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_files_give_nothing(name: str, settings: Settings) -> None:
    assert Engine().check_bytes(name, EMPTY[name], settings).diagnostics == []


def test_hostile_corpus_through_the_cli_keeps_reporting(cli: Callable[..., Result], project: Path) -> None:
    """The whole corpus in one run: every file reported or skipped, the real hazard still found."""
    write_tree(project, {**{f"hostile/{n}": d for n, (d, _) in HOSTILE.items()}, **EMPTY, "real.py": HAZARD})
    result = cli("check", "--no-cache", "--jobs", "1", "--output-format", "json")
    assert result.code == 1, result.stderr
    found = json.loads(result.stdout)
    assert {d["code"] for d in found} <= {"ROC001", "ROC101", PY_CODE, CU_CODE, "ROC204", "ROC205"}
    assert any(d["code"] == "ROC101" and d["filename"].endswith("real.py") for d in found)
    assert "Traceback" not in result.stderr


def test_native_stack_overflow_and_quadratic_depth_are_contained(project: Path) -> None:
    """Deep nesting must end in ROC001 (CPython's parser raises instead of overflowing its stack), and
    tree-sitter's query cursor crawls on very deep trees; a real process with a time limit shows either."""
    write_tree(project, {name: HOSTILE[name][0] for name in IN_SUBPROCESS})
    write_tree(project, {"chain.py": PY + b"x = " + b" and ".join([b"a"] * 20_000) + b"\n"})
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocmlint",
            "check",
            "--no-cache",
            "--jobs",
            "1",
            "--output-format",
            "json",
            *IN_SUBPROCESS,
            "chain.py",
        ],
        cwd=project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, (completed.returncode, completed.stderr[-2000:])
    found = json.loads(completed.stdout)
    for name in IN_SUBPROCESS:
        codes = {d["code"] for d in found if d["filename"].endswith(name)}
        assert codes and codes <= HOSTILE[name][1], (name, codes)
    assert "too many nested parentheses" in completed.stdout.decode()
    # A long flat chain CPython accepts parses on the big stack; a rule may then run out of Python stack.
    chain = {(d["code"], d["location"]["row"]) for d in found if d["filename"].endswith("chain.py")}
    assert chain in ({("ROC001", 1)}, {(PY_CODE, 2)}), chain


def test_twenty_megabyte_file_is_refused_with_roc001(settings: Settings, project: Path) -> None:
    big = project / "big.py"
    with big.open("wb") as handle:
        handle.write(PY)
        handle.truncate(20 * 1024 * 1024)  # sparse: quick to make
    report = Engine().check_path(big, settings)
    assert [d.code for d in report.diagnostics] == ["ROC001"]
    assert "too large" in report.diagnostics[0].message


# --- the filesystem ---------------------------------------------------------------------------------


def _symlink_or_skip(target: str, link: Path) -> None:
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):
        pytest.skip("symlinks are not available here")


def test_symlink_loops_and_dangling_links_do_not_stop_the_run(cli: Callable[..., Result], project: Path) -> None:
    write_tree(project, {"real.py": HAZARD})
    _symlink_or_skip("loop_b.py", project / "loop_a.py")
    _symlink_or_skip("loop_a.py", project / "loop_b.py")
    _symlink_or_skip("missing.py", project / "dangling.py")
    _symlink_or_skip(".", project / "self_dir")  # a folder loop
    walked = cli("check", "--no-cache", "--jobs", "1")
    assert walked.code == 1 and "real.py:2:22: ROC101" in walked.stdout
    named = cli("check", "--no-cache", "--jobs", "1", "loop_a.py", "dangling.py", "real.py")
    assert named.code == 1 and "real.py:2:22: ROC101" in named.stdout
    assert "loop_a.py: cannot read" in named.stderr and "dangling.py: cannot read" in named.stderr


def test_unreadable_file_is_a_warning(
    cli: Callable[..., Result], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permission denied, simulated: the tests run as root, who may read anything (a setuid
    subprocess cannot run Python from root's home either)."""
    write_tree(project, {"secret.py": PY, "real.py": HAZARD})
    _deny_reading(monkeypatch, "secret.py")
    result = cli("check", "--no-cache", "--jobs", "1")
    assert result.code == 1 and "real.py:2:22: ROC101" in result.stdout
    assert "secret.py: cannot read: Permission denied" in result.stderr
    assert "secret.py" not in result.stdout


def _deny_reading(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file).endswith(name) and "r" in mode:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)


def test_file_deleted_between_discovery_and_reading(
    cli: Callable[..., Result], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(project, {"gone.py": PY, "real.py": HAZARD})
    discover = cli_module.discover

    def discover_then_delete(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = list(discover(*args, **kwargs))
        (project / "gone.py").unlink()
        return iter(found)

    monkeypatch.setattr(cli_module, "discover", discover_then_delete)
    result = cli("check", "--no-cache", "--jobs", "1")
    assert result.code == 1 and "real.py:2:22: ROC101" in result.stdout
    assert "gone.py: cannot read: No such file or directory" in result.stderr


def test_only_filesystem_warnings_exit_zero(cli: Callable[..., Result], project: Path) -> None:
    """Exit 1 is for diagnostics; a file that vanished is a warning, not a finding."""
    result = cli("check", "--no-cache", "no_such_file.py")
    assert result.code == 0 and "no such file or directory" in result.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses file names that are not UTF-8")
def test_file_name_that_is_not_utf8(run_cli: Callable[..., Result], project: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")  # Latin-1 bytes: surrogateescape'd by Python
    (project / name).write_bytes(HAZARD.encode())
    text = run_cli("check", "--no-cache")
    assert text.code == 1 and "caf\\udce9.py:2:22: ROC101" in text.stdout
    for output_format in ("json", "gitlab", "sarif"):
        result = run_cli("check", "--no-cache", "--output-format", output_format)
        assert result.code == 1, result.stderr
        assert "caf" in result.stdout and json.loads(result.stdout)


# --- crash containment ------------------------------------------------------------------------------

CUDA_HAZARDS = b"__global__ void k(int v) {\n  __nanosleep(100);\n  v = __shfl_xor_sync(0xffffffff, v, 1);\n}\n"
EMBEDDED = (
    b'from torch.utils.cpp_extension import load_inline\nCUDA = """\n'
    + CUDA_HAZARDS
    + b'"""\nmod = load_inline(name="m", cpp_sources="", cuda_sources=CUDA)\n'
)


@pytest.fixture
def broken_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """ROC101 (Python) and ROC224 (CUDA) raise on every node they visit."""

    def explode(self, node, ctx) -> None:  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("rule bug")

    monkeypatch.setattr(ReduceOverheadCompile, "visit_Call", explode)
    monkeypatch.setattr(Nanosleep, "visit_call_expression", explode)


def _codes(report: FileReport) -> list[str]:
    return [d.code for d in report.diagnostics]


@pytest.mark.usefixtures("broken_rules")
@pytest.mark.parametrize(
    ("name", "data", "crashed", "survivor"),
    [
        ("a.py", HAZARD.encode() + PY, "ROC101", PY_CODE),
        ("a.cu", CUDA_HAZARDS, "ROC224", CU_CODE),
        ("embedded.py", EMBEDDED, "ROC224", CU_CODE),
    ],
)
def test_a_crashing_rule_is_one_roc900_and_other_rules_still_report(
    name: str, data: bytes, crashed: str, survivor: str, settings: Settings
) -> None:
    report = Engine().check_bytes(name, data, settings)
    crashes = [d for d in report.diagnostics if d.code == "ROC900"]
    assert len(crashes) == 1, _codes(report)
    assert crashed in crashes[0].message and "ZeroDivisionError: rule bug" in crashes[0].message
    assert crashes[0].path == name
    assert survivor in _codes(report)
    assert "ZeroDivisionError" in report.tracebacks[0]


@pytest.mark.usefixtures("broken_rules")
def test_crashes_in_every_file_still_check_every_file(cli: Callable[..., Result], project: Path) -> None:
    write_tree(project, {"a.py": HAZARD.encode() + PY, "b.cu": CUDA_HAZARDS, "c.py": EMBEDDED})
    quiet = cli("check", "--no-cache", "--jobs", "1")
    assert quiet.code == 1
    for expected in ("a.py:1:1: ROC900", f"a.py:4:8: {PY_CODE}", "b.cu:1:1: ROC900", "b.cu:3:", "c.py:1:1: ROC900"):
        assert expected in quiet.stdout
    assert "Traceback" not in quiet.stderr
    verbose = cli("check", "--no-cache", "--jobs", "1", "--verbose")
    assert verbose.stderr.count("Traceback") == 3 and "ZeroDivisionError: rule bug" in verbose.stderr


def test_recursion_in_a_rule_on_deep_code_is_a_roc001(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python-level recursion running out on absurdly deep code is the file's property, not a bug."""

    def deep(self, node: ast.Call, ctx) -> None:  # type: ignore[no-untyped-def]
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ReduceOverheadCompile, "visit_Call", deep)
    report = Engine().check_bytes("a.py", HAZARD.encode(), settings)
    assert _codes(report) == ["ROC001"] and "nested too deep" in report.diagnostics[0].message


# --- cache and configuration through the CLI --------------------------------------------------------


def test_corrupted_cache_is_discarded_with_a_warning_through_the_cli(
    cli: Callable[..., Result], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROCMLINT_CACHE_DIR", raising=False)  # the cache where users have it: in the project
    write_tree(project, {"a.py": HAZARD, "b.cu": CU})
    first = cli("check")
    index = project / ".rocmlint_cache" / "index.bin"
    blob = index.read_bytes()
    for damaged in (blob[: len(blob) // 2], blob[:-1] + bytes([blob[-1] ^ 1]), b"", os.urandom(64)):
        index.write_bytes(damaged)
        again = cli("check")
        assert again.stdout == first.stdout and again.code == first.code
        if damaged:
            assert "cache" in again.stderr and "discarded" in again.stderr


def test_cache_key_covers_the_rule_settings(cli: Callable[..., Result], project: Path) -> None:
    write_tree(project, {"a.py": HAZARD + "import pynvml\n"})
    assert "ROC104" in cli("check").stdout
    assert "ROC104" not in cli("check", "--ignore", "ROC104").stdout  # not served the cached result
    assert "ROC104" in cli("check").stdout
