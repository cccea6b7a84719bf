"""`--output-format gitlab`: GitLab's Code Quality report (a JSON array of Code Climate issues)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from conftest import HAZARD, HAZARD_LINE, write_tree

from rocmlint.diagnostics import Diagnostic, Location, Severity
from rocmlint.outputs import FORMATS, gitlab

# What GitLab reads from each issue (docs: "Code Quality report format"), as a schema.
ISSUE_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "pattern": "^ROC[0-9]{3}$"},
            "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "not": {"pattern": "^/|\\\\"}},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def diagnostic(
    line: int, code: str = "ROC101", severity: Severity = Severity.WARNING, path: str = "src/m.py"
) -> Diagnostic:
    return Diagnostic(path, code, "name", "a message", severity, Location(line, 1), Location(line, 5))


def test_gitlab_report_from_the_cli(cli, project):
    write_tree(project, {"src/model.py": HAZARD, "src/gpu.py": "import pynvml\n"})
    result = cli("check", "--output-format", "gitlab", ".")
    assert result.code == 1
    issues = json.loads(result.stdout)
    jsonschema.validate(issues, ISSUE_SCHEMA)
    by_code = {issue["check_name"]: issue for issue in issues}
    assert by_code["ROC101"]["location"] == {"path": "src/model.py", "lines": {"begin": HAZARD_LINE}}
    assert by_code["ROC101"]["severity"] == "minor"  # a warning
    assert by_code["ROC104"]["severity"] == "major"  # an error
    assert by_code["ROC101"]["description"].startswith("ROC101: torch.compile mode")


def test_gitlab_fingerprints_survive_moved_lines_and_tell_duplicates_apart(project):
    before = json.loads(gitlab.render([diagnostic(3), diagnostic(9)]))
    after = json.loads(gitlab.render([diagnostic(5), diagnostic(11)]))  # two lines inserted above
    assert [i["fingerprint"] for i in before] == [i["fingerprint"] for i in after]
    assert before[0]["fingerprint"] != before[1]["fingerprint"]
    other_file = json.loads(gitlab.render([diagnostic(3, path="src/other.py")]))
    assert other_file[0]["fingerprint"] != before[0]["fingerprint"]


def test_gitlab_severities(project):
    levels = [diagnostic(1, severity=s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)]
    assert [i["severity"] for i in json.loads(gitlab.render(levels))] == ["major", "minor", "info"]


def test_gitlab_empty_report_is_an_empty_array(project):
    assert FORMATS["gitlab"]([]) == "[]\n"
