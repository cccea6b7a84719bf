"""ruff-compatible JSON: an array of objects, 1-based rows and columns, plus `severity`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rocmlint.diagnostics import Diagnostic, Location
from rocmlint.outputs.paths import absolute_path


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([to_json(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "message": diagnostic.message,
        "filename": absolute_path(diagnostic.path),
        "location": _location(diagnostic.location),
        "end_location": _location(diagnostic.end_location),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.message,
            "edits": [
                {"content": e.content, "location": _location(e.location), "end_location": _location(e.end_location)}
                for e in fix.edits
            ],
        },
        "noqa_row": diagnostic.noqa_line,
        "url": diagnostic.url,
        "severity": diagnostic.severity.value,
    }


def _location(location: Location) -> dict[str, int]:
    return {"row": location.line, "column": location.column}
