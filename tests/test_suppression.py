"""`# noqa` directives (line and file level, Python and C++) and ROC002 unused-noqa with its fix."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rocmlint.config import Settings
from rocmlint.diagnostics import Diagnostic
from rocmlint.engine import Engine
from rocmlint.fix import apply_fixes
from rocmlint.source import SourceFile
from rocmlint.suppression import comment_lines, find_suppressions

CALL = 'm = torch.compile(m, mode="reduce-overhead")'


def check(settings: Settings, code: str, path: str = "a.py", extend: tuple[str, ...] = ()) -> list[Diagnostic]:
    settings = replace(settings, extend_select=extend)
    return Engine().check_bytes(path, code.encode("utf-8"), settings).diagnostics


def codes(settings: Settings, code: str, extend: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    return [(d.code, d.location.line) for d in check(settings, code, extend=extend)]


def with_roc002(settings: Settings, code: str) -> list[Diagnostic]:
    return check(settings, code, extend=("ROC002",))


def fixed(code: str, diagnostics: list[Diagnostic]) -> str:
    data, _ = apply_fixes(code.encode("utf-8"), [d.fix for d in diagnostics if d.fix is not None])
    return data.decode("utf-8")


# --- line directives ---------------------------------------------------------------------------------


def test_unsuppressed_hazard_is_reported(settings):
    assert codes(settings, f"import torch\n{CALL}\n") == [("ROC101", 2)]


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa",
        "#noqa",
        "# NOQA",
        "# NoQa",
        "# noqa: ROC101",
        "# noqa:ROC101",
        "# noqa : ROC101",
        "# noqa: roc101",
        "# noqa: ROC102, ROC101",
        "# noqa: ROC102,ROC101",
        "# noqa: E501 ROC101",
        "# type: ignore  # noqa: ROC101",
        "# noqa: ROC101 -- reduce-overhead is fine on NVIDIA only",
    ],
)
def test_line_directive_suppresses(settings, comment):
    assert codes(settings, f"import torch\n{CALL}  {comment}\n") == []


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: ROC102",
        "# noqa: ROC1",  # codes are exact, not prefixes
        "# noqa: E501",
        "# this is not a noqa comment",
        "# noqa-like",
        "# snoqa",
    ],
)
def test_line_directive_that_does_not_suppress(settings, comment):
    assert codes(settings, f"import torch\n{CALL}  {comment}\n") == [("ROC101", 2)]


def test_directive_applies_to_its_own_line_only(settings):
    source = f"import torch  # noqa\n{CALL}\nx = 1  # noqa: ROC101\n"
    assert codes(settings, source) == [("ROC101", 2)]


def test_noqa_inside_a_string_does_not_count(settings):
    source = f'import torch\n{CALL[:-1]}, note="# noqa: ROC101")\ns = """\n# rocmlint: noqa\n"""\n'
    assert codes(settings, source) == [("ROC101", 2)]


def test_multi_line_diagnostic_is_suppressed_on_its_first_line_only(settings):
    first = 'import torch\nm = torch.compile(\n    m, mode=(  # noqa: ROC101\n        "reduce-overhead"\n    ),\n)\n'
    assert codes(settings, first) == []
    for line in (4, 5):
        lines = first.replace("  # noqa: ROC101", "").splitlines()
        lines[line - 1] += "  # noqa: ROC101"
        assert codes(settings, "\n".join(lines) + "\n") == [("ROC101", 3)], line


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_directives_with_other_line_endings(settings, newline):
    source = f"import torch\n{CALL}  # noqa: ROC101\n{CALL}\n".replace("\n", newline)
    assert codes(settings, source) == [("ROC101", 3)]


# --- file directives ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("directive", "reported"),
    [
        ("# rocmlint: noqa", []),
        ("# rocmlint: NOQA", []),
        ("#rocmlint:noqa", []),
        ("# rocmlint: noqa: ROC101", []),
        ("# rocmlint: noqa: ROC102, ROC101", []),
        ("# rocmlint: noqa: ROC102", [("ROC101", 3)]),
        ("# not rocmlint: noqa", [("ROC101", 3)]),
    ],
)
def test_file_directive(settings, directive, reported):
    assert codes(settings, f"import torch\n{directive}\n{CALL}\n") == reported


def test_file_directive_anywhere_in_the_file(settings):
    assert codes(settings, f"import torch\n{CALL}\n\n# rocmlint: noqa: ROC101\n") == []


def test_file_directive_does_not_hide_parse_errors(settings):
    source = "# rocmlint: noqa\nimport torch\nm = torch.compile(m, mode='reduce-overhead'\n"
    assert [d.code for d in check(settings, source)] == ["ROC001"]


# --- ROC002 unused-noqa ------------------------------------------------------------------------------


def test_unused_noqa_is_off_by_default(settings):
    assert codes(settings, "x = 1  # noqa: ROC101\n") == []


def test_unused_codes_are_reported_and_removed(settings):
    source = f"import torch\n{CALL}  # noqa: ROC101, ROC105\nx = 1  # noqa: ROC101\ny = 2  # noqa: E501, ROC102\n"
    found = with_roc002(settings, source)
    assert [(d.code, d.location.line, d.message) for d in found if d.code == "ROC002"] == [
        ("ROC002", 2, "Unused `noqa` directive (unused: ROC105)"),
        ("ROC002", 3, "Unused `noqa` directive (unused: ROC101)"),
        ("ROC002", 4, "Unused `noqa` directive (unused: ROC102)"),
    ]
    assert all(d.fix is not None and d.fix.applicability.value == "safe" for d in found)
    assert fixed(source, found) == f"import torch\n{CALL}  # noqa: ROC101\nx = 1\ny = 2  # noqa: E501\n"


def test_unused_noqa_fix_keeps_the_rest_of_the_line(settings):
    source = "x = 'é'  # noqa: ROC101, ROC102\r\nz = 3\r\n"
    found = with_roc002(settings, source)
    assert [d.message for d in found] == ["Unused `noqa` directive (unused: ROC101, ROC102)"]
    assert fixed(source, found) == "x = 'é'\r\nz = 3\r\n"


def test_unused_noqa_ignores_bare_and_foreign_directives(settings):
    assert with_roc002(settings, "x = 1  # noqa\ny = 2  # noqa: E501, F401\n") == []


def test_used_directive_is_not_reported(settings):
    assert with_roc002(settings, f"import torch\n{CALL}  # noqa: ROC101\n") == []


def test_uppercase_directive_is_judged_too(settings):
    found = with_roc002(settings, "x = 1  # NoQA: ROC101\n")
    assert [d.message for d in found] == ["Unused `noqa` directive (unused: ROC101)"]


def test_codes_of_disabled_rules_are_unused(settings):
    found = check(replace(settings, ignore=("ROC101",)), f"import torch\n{CALL}  # noqa: ROC101\n", extend=("ROC002",))
    assert [d.code for d in found] == ["ROC002"]


def test_unused_noqa_silent_on_a_file_that_does_not_parse(settings):
    source = f"import torch\n{CALL}  # noqa: ROC101\ndef broken(:\n"
    assert [d.code for d in with_roc002(settings, source)] == ["ROC001"]


def test_unused_noqa_can_itself_be_suppressed(settings):
    assert with_roc002(settings, "x = 1  # noqa: ROC101, ROC002\n") == []
    assert with_roc002(settings, "# rocmlint: noqa: ROC002\nx = 1  # noqa: ROC101\n") == []


# --- C++ comments ------------------------------------------------------------------------------------


def cpp(text: str):
    return find_suppressions(SourceFile.from_bytes("k.cu", text.encode("utf-8"), "cuda"))


def test_cpp_line_and_block_directives():
    found = cpp("int a;  // noqa: ROC201\nint b; /* NOQA */ int c;\nint d;  // nothing\nint e;  //noqa:roc202,ROC203\n")
    assert {line: d.codes for line, d in found.lines.items()} == {1: ("ROC201",), 2: None, 4: ("ROC202", "ROC203")}
    assert found.file_codes == ()


def test_cpp_file_directives():
    assert cpp("// rocmlint: noqa\nint a;\n").file_codes is None
    assert cpp("/* rocmlint: noqa: ROC201 */\nint a;\n").file_codes == ("ROC201",)
    assert cpp("/*\n * rocmlint: noqa\n */\nint a;\n").file_codes is None


def test_cpp_comment_markers_inside_literals_do_not_count():
    source = (
        'const char* u = "http://example.com // noqa";\n'
        'const char* v = "/* noqa */";\n'
        "char w = '/'; int x = 1; // real noqa: ROC201\n"
        'auto y = R"(// noqa )"; int z;\n'
        'const char* q = "escaped \\" // noqa";\n'
        "int r; // noqa: ROC202\n"
    )
    found = cpp(source)
    assert set(found.lines) == {6}
    assert found.lines[6].codes == ("ROC202",)


# --- lines that cannot end in a comment ------------------------------------------------------------


def test_comment_lines_map_string_and_continuation_lines_to_the_next_line_that_can_take_a_comment():
    python = SourceFile.from_bytes(
        "a.py", b'a = """x\ny\n"""  # c\nb = 1 + \\\n  2\nc = "\\\\"  # not a continuation\ns = "a\\\nb"\n', "python"
    )
    assert comment_lines(python) == {1: 3, 2: 3, 4: 5, 7: 8}
    cuda = SourceFile.from_bytes("k.cu", b'#define A \\\n  1\nconst char* s = R"(a\nb)"; // x\n', "cuda")
    assert comment_lines(cuda) == {3: 4}  # a macro line takes a /* */ comment before its backslash


def test_comment_lines_count_crlf_and_cr_line_breaks_as_one():
    crlf = SourceFile.from_bytes("a.py", b'x = """a\r\nb\r\n"""\r\ny = 1 + \\\r\n  2\r\n', "python")
    assert comment_lines(crlf) == {1: 3, 2: 3, 4: 5}
    cr = SourceFile.from_bytes("a.py", b'x = """a\rb\r"""\ry = 1', "python")
    assert comment_lines(cr) == {1: 3, 2: 3}


def test_noqa_after_a_multi_line_string_covers_the_lines_inside(settings):
    embedded = "__global__ void k(float v) { __shfl_xor_sync(0xffffffff, v, 16); }"

    def code(comment: str) -> str:
        return f'from torch.utils.cpp_extension import load_inline\nsrc = """\n{embedded}\n"""{comment}\nload_inline("k", cuda_sources=src)\n'

    assert {c for c, _ in codes(settings, code(""))} == {"ROC208", "ROC210"}
    assert codes(settings, code("  # noqa: ROC208, ROC210")) == []
    assert [c for c, _ in codes(settings, code("  # noqa: ROC208"))] == ["ROC210"]


def test_noqa_on_the_line_after_a_continuation_covers_the_continued_line(settings):
    continued = 'import torch\nm = torch.compile(m, mode="reduce-overhead") + \\\n  0{}\n'
    assert codes(settings, continued.format("")) == [("ROC101", 2)]
    assert codes(settings, continued.format("  # noqa: ROC101")) == []
