"""GitHub Actions workflow commands (`::error file=...,line=...::message`), escaped against injection."""

from __future__ import annotations

from collections.abc import Sequence

from rocmlint.diagnostics import Diagnostic, Severity
from rocmlint.outputs.paths import display_path, escape_control

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(_command(d) + "\n" for d in diagnostics)


def _command(d: Diagnostic) -> str:
    properties = ",".join(
        f"{key}={_escape_property(str(value))}"
        for key, value in (
            ("file", display_path(d.path)),
            ("line", d.location.line),
            ("col", d.location.column),
            ("endLine", d.end_location.line),
            ("endColumn", d.end_location.column),
            ("title", d.code),
        )
    )
    return f"::{_LEVEL[d.severity]} {properties}::{_escape_data(f'{d.code} {d.message}')}"


def _escape_data(value: str) -> str:
    # Newlines are kept as GitHub's %0A (multi-line annotations); other control characters (ANSI
    # escapes from a file name or a quoted line of code) are made visible, as in the text output.
    return escape_control(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")
