"""File names and messages with spaces, quotes, newlines, `::`, `%` and ANSI escapes, in every format.

A file name is attacker-controlled in a pull request: it must not forge a GitHub workflow command,
break a JSON document, or drive the terminal.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import HAZARD, Result, write_tree

from rocmlint.diagnostics import Diagnostic, Location, Severity
from rocmlint.outputs import FORMATS

NASTY_NAMES = [
    "with space.py",
    "quo\"te's.py",
    "new\nline.py",
    "carriage\rreturn.py",
    "\x1b[31mred\x1b[0m.py",
    "bell\x07.py",
    "pct%0A%25.py",
    "::error file=x::forged.py",
    "comma,colon:.py",
    "tab\there.py",
    "caf\udce9.py",  # a Latin-1 byte in a file name, as Python decodes it (surrogateescape)
]
NASTY_MESSAGE = "line one\n::error::forged\r%0A 100% \x1b[2J done"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _diagnostic(path: str, message: str = "plain message") -> Diagnostic:
    return Diagnostic(
        path, "ROC101", "reduce-overhead-compile", message, Severity.WARNING, Location(2, 22), Location(2, 44)
    )


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", NASTY_NAMES)
def test_text_output_escapes_control_characters(name: str) -> None:
    out = FORMATS["text"]([_diagnostic(name, NASTY_MESSAGE)])
    assert out.count("\n") == 1 and not _CONTROL.search(out.rstrip("\n")), repr(out)
    assert "\udce9" not in out  # printable on a UTF-8 terminal
    out.encode("utf-8")


@pytest.mark.parametrize("name", NASTY_NAMES)
def test_github_output_cannot_forge_a_workflow_command(name: str) -> None:
    out = FORMATS["github"]([_diagnostic(name, NASTY_MESSAGE)])
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::warning file=")
    properties, _, data = lines[0][len("::warning ") :].partition("::")
    # Exactly one `::` separates properties from data; no raw `,`/`:` inside a property value.
    assert [p.split("=", 1)[0] for p in properties.split(",")] == [
        "file",
        "line",
        "col",
        "endLine",
        "endColumn",
        "title",
    ]
    # No raw line break, so nothing in the data can start a command line of its own.
    assert (
        "\n" not in data
        and "\r" not in data
        and data.startswith("ROC101 line one%0A::error::forged%0D%250A 100%25 \\x1b[2J")
    )
    assert not _CONTROL.search(lines[0])


@pytest.mark.parametrize("output_format", ["json", "sarif", "gitlab"])
def test_json_formats_round_trip_nasty_names_and_messages(output_format: str) -> None:
    diagnostics = [_diagnostic(name, NASTY_MESSAGE) for name in NASTY_NAMES]
    out = FORMATS[output_format](diagnostics)
    out.encode("utf-8")  # no lone surrogates: a UTF-8 stdout can carry it
    document = json.loads(out)
    text = json.dumps(document)
    assert "::error::forged" in text  # the message is data, kept whole
    assert "line one\\n" in text


def test_sarif_uris_are_percent_encoded() -> None:
    document = json.loads(FORMATS["sarif"]([_diagnostic(name) for name in NASTY_NAMES]))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]]
    assert "caf%E9.py" in uris and "with%20space.py" in uris and "new%0Aline.py" in uris
    assert all(re.fullmatch(r"[A-Za-z0-9._~%/:!$&'()*+,;=@-]+", uri) for uri in uris), uris


def test_warnings_and_diffs_do_not_carry_raw_escapes(cli: Callable[..., Result], project: Path) -> None:
    """stderr names files too: the warning for a missing path, and --diff/--show-fixes headers."""
    name = "\x1b[31mevil\nname.py"
    write_tree(project, {name: HAZARD})
    missing = cli("check", "--no-cache", "\x1b]0;title\x07missing.py")
    assert "\x1b" not in missing.stderr and "\\x1b]0;title\\x07missing.py" in missing.stderr
    diff = cli("check", "--no-cache", "--diff")
    assert "\x1b" not in diff.stdout and "--- a/\\x1b[31mevil\\nname.py" in diff.stdout
    fixes = cli("check", "--no-cache", "--fix", "--show-fixes")
    assert "\x1b" not in fixes.stderr + fixes.stdout
    assert os.path.exists(project / name)
