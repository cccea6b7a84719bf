"""`rocmlint check --fix/--unsafe-fixes/--diff/--show-fixes/--fix-only` and the safe-write rules: atomic,
only when unchanged, never on read-only files, keeping encoding, BOM, line endings and permissions.
ROC224 (`__nanosleep`, a gated C++ fix) and ROC002 (unused noqa) stand in for any fixable rule."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import write_tree

from rocmlint.diagnostics import Applicability, Edit, Fix, Location
from rocmlint.fix import WriteRefused, apply_fixes, fix_content, write_if_unchanged

NO_FIX = 'import subprocess\nsubprocess.run(["nvidia-smi"])\n'  # ROC116: report only
SLEEP = "__device__ void backoff(unsigned ns) {\n  __nanosleep(ns);\n}\n"
FIXED = (
    "__device__ void backoff(unsigned ns) {\n"
    "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
    "  __builtin_amdgcn_s_sleep(1);\n"
    "#else\n"
    "  __nanosleep(ns);\n"
    "#endif\n"
    "}\n"
)


def test_fix_rewrites_and_reports_what_remains(project, cli):
    write_tree(project, {"k.cu": SLEEP, "m.py": NO_FIX})
    result = cli("check", "--fix", ".")
    assert (project / "k.cu").read_text() == FIXED
    assert result.code == 1  # ROC116 in m.py has no fix
    assert "k.cu" not in result.stdout and "m.py:2:" in result.stdout and "Fixed 1 diagnostic" in result.stdout


def test_fixing_twice_equals_fixing_once(project, cli):
    write_tree(project, {"k.cu": SLEEP})
    cli("check", "--fix", ".")
    once = (project / "k.cu").read_bytes()
    result = cli("check", "--fix", ".")
    assert (project / "k.cu").read_bytes() == once and result.code == 0


def test_diff_prints_and_writes_nothing(project, cli):
    write_tree(project, {"k.cu": SLEEP})
    result = cli("check", "--diff", ".")
    assert (project / "k.cu").read_text() == SLEEP
    assert result.code == 1
    assert "--- a/k.cu" in result.stdout and "+  __builtin_amdgcn_s_sleep(1);" in result.stdout
    assert "Would fix 1 diagnostic" in result.stderr


def test_show_fixes_and_fix_only(project, cli):
    write_tree(project, {"k.cu": SLEEP, "m.py": NO_FIX})
    result = cli("check", "--fix-only", "--show-fixes", ".")
    assert result.code == 0 and "ROC116" not in result.stdout
    assert "k.cu: fixed 1 x ROC224 (nanosleep)" in result.stderr
    assert (project / "k.cu").read_text() == FIXED


def test_fix_keeps_crlf_bom_and_permissions(project, cli):
    data = ("\ufeff" + SLEEP.replace("\n", "\r\n")).encode("utf-8")
    write_tree(project, {"k.cu": data})
    (project / "k.cu").chmod(0o640)
    cli("check", "--fix", ".")
    fixed = (project / "k.cu").read_bytes()
    assert fixed == ("\ufeff" + FIXED.replace("\n", "\r\n")).encode("utf-8")
    assert stat.S_IMODE((project / "k.cu").stat().st_mode) == 0o640
    assert [p.name for p in project.iterdir() if p.name.endswith(".rocmlint-tmp")] == []


def test_python_coding_cookie_is_kept(project, cli):
    code = "# -*- coding: latin-1 -*-\n# caf\xe9\nimport os  # noqa: ROC101\n"
    write_tree(project, {"m.py": code.encode("latin-1")})
    cli("check", "--fix", "--extend-select", "ROC002", ".")
    assert (project / "m.py").read_bytes() == "# -*- coding: latin-1 -*-\n# caf\xe9\nimport os\n".encode("latin-1")


def test_read_only_file_is_reported_not_chmodded(project, cli, monkeypatch):
    # As root every file is writable, so the check rocmlint makes (os.access) is what is simulated.
    write_tree(project, {"k.cu": SLEEP})
    (project / "k.cu").chmod(0o444)
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda path, mode: False if str(path).endswith("k.cu") else real_access(path, mode)
    )
    result = cli("check", "--fix", ".")
    assert (project / "k.cu").read_text() == SLEEP and "read-only" in result.stderr
    assert stat.S_IMODE((project / "k.cu").stat().st_mode) == 0o444


def test_file_changed_under_us_is_left_alone(tmp_path):
    target = tmp_path / "k.cu"
    target.write_text(SLEEP + "// edited meanwhile\n")
    with pytest.raises(WriteRefused, match="changed"):
        write_if_unchanged(target, SLEEP.encode(), FIXED.encode())
    assert target.read_text() == SLEEP + "// edited meanwhile\n"
    assert [p.name for p in tmp_path.iterdir()] == ["k.cu"]


def test_file_saved_while_fixing_is_reported_and_kept(project, cli, monkeypatch):
    import rocmlint.fix as fix_module

    write_tree(project, {"k.cu": SLEEP})
    real_fix_content = fix_module.fix_content

    def editor_saves_meanwhile(data, check, unsafe=False):
        (project / "k.cu").write_text(SLEEP + "// saved by the editor\n")
        return real_fix_content(data, check, unsafe)

    monkeypatch.setattr(fix_module, "fix_content", editor_saves_meanwhile)
    result = cli("check", "--fix", ".")
    assert (project / "k.cu").read_text() == SLEEP + "// saved by the editor\n"
    assert "changed while it was being fixed" in result.stderr


def _edit(start: int, end: int, content: str) -> Edit:
    return Edit(start, end, content, Location(1, start + 1), Location(1, end + 1))


def test_overlapping_fixes_wait_for_the_next_pass_and_identical_edits_are_shared():
    shared = _edit(0, 0, "H;")
    first = Fix("a", (shared, _edit(2, 3, "X")))
    second = Fix("b", (shared, _edit(5, 6, "Y")))
    overlapping = Fix("c", (_edit(2, 4, "Z"),))
    data, applied = apply_fixes(b"0123456789", [first, second, overlapping])
    assert (data, applied) == (b"H;01X34Y6789", 2)


def test_unsafe_fixes_need_opt_in():
    unsafe = Fix("u", (_edit(0, 1, "X"),), Applicability.UNSAFE)
    assert apply_fixes(b"abc", [unsafe]) == (b"abc", 0)
    assert apply_fixes(b"abc", [unsafe], unsafe=True) == (b"Xbc", 1)


def test_passes_are_bounded_when_a_fix_never_converges():
    calls = []

    def check(data: bytes):
        calls.append(data)
        fix = Fix("grow", (_edit(0, 0, "x"),))
        from rocmlint.diagnostics import Diagnostic, Severity

        location = Location(1, 1)
        return [Diagnostic("a.cu", "ROC224", "n", "m", Severity.ERROR, location, location, fix, "u", 1)], "utf-8"

    outcome = fix_content(b"", check)
    assert len(calls) == 10 and outcome.data == b"x" * 10
