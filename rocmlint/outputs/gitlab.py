"""GitLab Code Quality report: a JSON array of Code Climate issues (`artifacts: reports: codequality`).

Fingerprints leave out the line number, so an issue keeps its identity when lines move and GitLab's merge
request widget shows only what a change introduced or fixed; the same message twice in one file is told
apart by its order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocmlint.diagnostics import Diagnostic, Severity
from rocmlint.outputs.paths import unicode_path

# Code Climate severities are info, minor, major, critical and blocker; rocmlint has three levels.
_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def render(diagnostics: Sequence[Diagnostic]) -> str:
    seen: Counter[str] = Counter()
    issues = []
    for diagnostic in diagnostics:
        path = _report_path(diagnostic.path)
        identity = "\0".join((path, diagnostic.code, diagnostic.message))
        issues.append(_issue(diagnostic, path, _fingerprint(identity, seen[identity])))
        seen[identity] += 1
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _issue(diagnostic: Diagnostic, path: str, fingerprint: str) -> dict[str, Any]:
    return {
        "description": f"{diagnostic.code}: {diagnostic.message}",
        "check_name": diagnostic.code,
        "fingerprint": fingerprint,
        "severity": _SEVERITY[diagnostic.severity],
        "location": {"path": path, "lines": {"begin": diagnostic.location.line}},
    }


def _report_path(path: str) -> str:
    """Relative to the working directory (the repository root in a GitLab job), with `/` separators."""
    absolute = Path(os.path.abspath(path))
    try:
        return unicode_path(absolute.relative_to(Path.cwd()).as_posix())
    except ValueError:
        return unicode_path(absolute.as_posix())


def _fingerprint(identity: str, occurrence: int) -> str:
    return hashlib.sha256(f"{identity}\0{occurrence}".encode("utf-8", errors="surrogatepass")).hexdigest()
