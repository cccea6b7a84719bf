"""SARIF 2.1.0: one run, every rule described, results with regions and fixes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rocmlint import __version__
from rocmlint.diagnostics import Diagnostic, Location, Severity
from rocmlint.registry import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(diagnostics: Sequence[Diagnostic]) -> str:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "rocmlint",
                "version": __version__,
                "informationUri": "https://github.com/rocmlint/rocmlint",
                "rules": [
                    {
                        "id": rule.code,
                        "name": rule.name,
                        "shortDescription": {"text": rule.summary() or rule.name},
                        "helpUri": rule.url(),
                        "defaultConfiguration": {"level": _LEVEL[rule.severity], "enabled": rule.enabled_by_default},
                        "properties": {"fix": rule.fix_availability.value, "language": rule.language},
                    }
                    for rule in rules
                ],
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index) for d in diagnostics],
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _artifact(path: str) -> dict[str, str]:
    absolute = Path(path).resolve()
    try:
        # A relative URI reference: percent-encoded (spaces, '%', non-ASCII), '/' kept.
        # surrogateescape: a name that is not UTF-8 keeps its raw bytes (%FF), as file URIs do.
        relative = absolute.relative_to(Path.cwd()).as_posix()
        return {"uri": quote(relative, errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _region(start: Location, end: Location) -> dict[str, int]:
    return {"startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column}


def _result(d: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "level": _LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(d.path), "region": _region(d.location, d.end_location)}}
        ],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(d.path),
                        "replacements": [
                            {
                                "deletedRegion": _region(e.location, e.end_location),
                                "insertedContent": {"text": e.content},
                            }
                            for e in d.fix.edits
                        ],
                    }
                ],
            }
        ]
        result["properties"] = {"fixApplicability": d.fix.applicability.value}
    return result
