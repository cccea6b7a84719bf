"""The GitHub Action (action.yml) run locally: its `run:` steps execute as the runner would execute them
(bash -eo pipefail, the step's env and working directory, GITHUB_OUTPUT between steps, `if:` conditions),
with the inputs substituted, in a shallow clone of a temporary git repository. The steps that need
GitHub (`uses:` setup-python and upload-sarif) are left out; `pip` is a stand-in that records what the
install step asks for, and the `rocmlint` under test is the one on this interpreter's PATH."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import commit_all, git, write_tree

CHECKOUT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((CHECKOUT / "action.yml").read_text())
COMPILE = 'm = torch.compile(m, mode="reduce-overhead")\n'  # ROC101 at column 22
SHUFFLE = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 16); }\n"  # ROC208, ROC210
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ANNOTATION = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),.*?title=(ROC\d+)::", re.MULTILINE)


@dataclass
class Run:
    """What running the action's steps gave."""

    code: int = 0
    stdout: str = ""
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # per step id
    ran: list[str] = field(default_factory=list)  # the names of the steps that ran or were left out

    def annotations(self) -> set[tuple[str, int, str]]:
        return {(path, int(line), code) for _, path, line, code in ANNOTATION.findall(self.stdout)}


def inputs_with(**given: str) -> dict[str, str]:
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(values)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    return {**values, **{name.replace("_", "-"): value for name, value in given.items()}}


def evaluate(expression: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The expressions action.yml uses: inputs, step outputs and the action's path; anything else fails."""
    if expression.startswith("inputs."):
        return inputs[expression.removeprefix("inputs.")]
    step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
    if step:
        return outputs.get(step[1], {}).get(step[2], "")
    if expression == "github.action_path":
        return str(CHECKOUT)
    raise AssertionError(f"the test does not know the expression {expression!r}; teach it")


def condition(text: str | bool, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> bool:
    """An `if:` of `&&`-joined `always()` and `X == 'v'` / `X != 'v'` terms."""
    result = True
    for term in str(text).split("&&"):
        term = term.strip()
        if term == "always()":
            continue
        match = re.fullmatch(r"([\w.-]+) (==|!=) '([^']*)'", term)
        assert match, f"the test cannot evaluate the condition {term!r}"
        equal = evaluate(match[1], inputs, outputs) == match[3]
        result = result and (equal if match[2] == "==" else not equal)
    return result


def substitute(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    return EXPRESSION.sub(lambda m: evaluate(m[1], inputs, outputs), str(text))


def run_action(workspace: Path, tools: Path, **given: str) -> Run:
    inputs = inputs_with(**given)
    run = Run()
    for index, step in enumerate(ACTION["runs"]["steps"]):
        name = step.get("name", step.get("uses", str(index)))
        # After a failed step only the steps whose condition says `always()` run, as on GitHub.
        if run.code != 0 and "always()" not in str(step.get("if", "")):
            continue
        if "if" in step and not condition(step["if"], inputs, run.outputs):
            continue
        run.ran.append(name)
        if "uses" not in step:  # those need GitHub: setup-python, upload-sarif
            _run_step(step, inputs, run, workspace, tools)
    return run


def _run_step(step: dict[str, Any], inputs: dict[str, str], run: Run, workspace: Path, tools: Path) -> None:
    assert step["shell"] == "bash"
    outputs_file = tools / "github_output"
    outputs_file.write_text("")
    environment = {key: substitute(value, inputs, run.outputs) for key, value in step.get("env", {}).items()}
    environment = {
        **os.environ,
        **environment,
        "GITHUB_OUTPUT": str(outputs_file),
        "PATH": f"{tools}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    script = tools / "step.sh"
    script.write_text(step["run"])
    folder = workspace / substitute(step.get("working-directory", "."), inputs, run.outputs)
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    run.code = run.code or completed.returncode
    run.stdout += completed.stdout
    assert completed.returncode in (0, 1), completed.stderr
    if "id" in step:
        pairs = (line.split("=", 1) for line in outputs_file.read_text().splitlines() if "=" in line)
        run.outputs[step["id"]] = dict(pairs)


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """A folder first on PATH with a `pip` that records its arguments instead of installing."""
    folder = tmp_path / "tools"
    folder.mkdir()
    pip = folder / "pip"
    pip.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{folder}/pip-calls"\n')
    pip.chmod(0o755)
    return folder


@pytest.fixture
def workspace(repository: Path, tmp_path: Path) -> Path:
    """What actions/checkout leaves for a pull request: a one-commit clone of `feature`, whose branch point
    on main lies three commits back; main has moved on since."""
    write_tree(repository, {"model.py": "import torch\n" + COMPILE, "k.cu": SHUFFLE})
    commit_all(repository, "main: the codebase as it is")
    git(repository, "checkout", "-q", "-b", "feature")
    for number in range(3):
        write_tree(repository, {f"step{number}.txt": "history\n"})
        commit_all(repository, f"feature {number}")
    write_tree(repository, {"model.py": "import torch\nx = 1\n" + COMPILE + COMPILE.replace("m = ", "n = ")})
    commit_all(repository, "feature: a new hazard")
    git(repository, "checkout", "-q", "main")
    write_tree(repository, {"later.py": "import torch\n" + COMPILE})
    commit_all(repository, "main moves on")
    clone = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", "--depth=1", "--branch", "feature", repository.as_uri(), str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    return clone


def test_since_fetches_enough_history_and_annotates_only_what_the_branch_added(workspace: Path, tools: Path) -> None:
    run = run_action(workspace, tools, since="main")
    assert run.code == 1
    assert run.outputs["history"]["revision"] == "origin/main"
    assert run.annotations() == {("model.py", 4, "ROC101")}
    assert (tools / "pip-calls").read_text().splitlines() == ["install", "--disable-pip-version-check", str(CHECKOUT)]


def test_without_since_every_diagnostic_is_annotated(workspace: Path, tools: Path) -> None:
    run = run_action(workspace, tools)
    assert "Fetch the history --since needs" not in run.ran
    assert run.code == 1
    assert run.annotations() == {
        ("model.py", 3, "ROC101"),
        ("model.py", 4, "ROC101"),
        ("k.cu", 1, "ROC208"),
        ("k.cu", 1, "ROC210"),
    }


def test_since_a_commit_id_and_a_version_from_pypi(workspace: Path, tools: Path, repository: Path) -> None:
    branch_point = git(repository, "rev-parse", "main~1").strip()
    run = run_action(workspace, tools, since=branch_point, version="1.2.3")
    assert run.outputs["history"]["revision"] == branch_point
    assert run.annotations() == {("model.py", 4, "ROC101")}
    assert "rocmlint==1.2.3" in (tools / "pip-calls").read_text().splitlines()


def test_sarif_is_written_and_handed_to_the_upload_step(workspace: Path, tools: Path) -> None:
    run = run_action(workspace, tools, sarif="true", args="--select ROC2", paths="k.cu")
    assert run.code == 1
    assert run.annotations() == {("k.cu", 1, "ROC208"), ("k.cu", 1, "ROC210")}
    sarif = Path(run.outputs["check"]["sarif-file"])
    assert sarif == workspace / "rocmlint.sarif"
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["ROC208", "ROC210"]
    assert "Upload SARIF to code scanning" in run.ran


def test_a_clean_change_passes(workspace: Path, tools: Path) -> None:
    run = run_action(workspace, tools, since="main", paths="k.cu")
    assert (run.code, run.annotations()) == (0, set())
    assert "Upload SARIF to code scanning" not in run.ran
