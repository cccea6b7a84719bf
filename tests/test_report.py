"""`rocmlint report`: golden Markdown and JSON on the fixture projects, the model's decisions, escaping,
the progress bar, and the HTML page rendered by headless Chromium.

Regenerate the goldens after a reviewed change (new rules change them on purpose):
    ROCMLINT_UPDATE_GOLDEN=1 python -m pytest tests/test_report.py
then read the diff of tests/golden/report/.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import HAZARD, require_tool, write_tree

from rocmlint.engine import FileReport
from rocmlint.report import html, markdown
from rocmlint.report.facts import scan_bytes
from rocmlint.report.model import build_model
from rocmlint.report.progress import Progress, bar_line
from rocmlint.report.text import fix_summary

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden" / "report"
PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
FORMATS = {"markdown": "md", "json": "json"}


def run_report(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", "report", "--no-progress", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


# -- goldens --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_report_matches_golden(project: Path, fmt: str) -> None:
    result = run_report(project, "--format", fmt, ".")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    golden = GOLDEN / f"{project.name}.{FORMATS[fmt]}"
    if os.environ.get("ROCMLINT_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(result.stdout, encoding="utf-8")
    assert golden.exists(), f"no golden {golden.name}: run with ROCMLINT_UPDATE_GOLDEN=1"
    assert result.stdout == golden.read_text(encoding="utf-8")


def test_every_golden_has_a_fixture() -> None:
    """A renamed or deleted fixture must take its goldens with it (update mode deletes them)."""
    expected = {f"{p.name}.{ext}" for p in PROJECTS for ext in FORMATS.values()}
    stale = sorted(p for p in GOLDEN.iterdir() if p.name not in expected)
    if os.environ.get("ROCMLINT_UPDATE_GOLDEN"):
        for path in stale:
            path.unlink()
        stale = []
    assert stale == []


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_report_counts_agree_with_check(project: Path) -> None:
    check = subprocess.run(
        [sys.executable, "-m", "rocmlint", "check", "--output-format", "json", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    diagnostics = json.loads(check.stdout)
    report = json.loads(run_report(project, "--format", "json", ".").stdout)
    assert report["total"] == len(diagnostics)
    assert sorted((f["code"], f["line"]) for f in report["findings"]) == sorted(
        (d["code"], d["location"]["row"]) for d in diagnostics
    )
    assert sum(r["count"] for r in report["rules"]) == report["total"] == report["directories"]["total"]
    assert sum(report["fixability"]["by_rule"].values()) == report["total"]


def test_report_is_deterministic_and_relative() -> None:
    """Run from another folder: paths are still relative to the reported folder, with no timestamps."""
    project = FIXTURES / "train_pkg"
    from_inside = run_report(project, "--format", "json", ".").stdout
    from_repo = run_report(REPO, "--format", "json", str(project.relative_to(REPO))).stdout
    assert from_inside == from_repo
    assert str(REPO) not in from_inside


# -- the model ------------------------------------------------------------------------------------

PORTING_PROJECT = {
    "setup.py": "from torch.utils.cpp_extension import CUDAExtension\nsetup(ext_modules=[CUDAExtension('x', ['k.cu'])])\n",
    "csrc/gemm.cu": '#include "cutlass/gemm/device/gemm.h"\n__global__ void k() {}\n',
    "csrc/mma.cu": "#include <mma.h>\nusing namespace nvcuda;\n__global__ void k() { wmma::fragment<int> f; }\n",
    "model/attn.py": "from flash_attn import flash_attn_func\n",
    "model/train.py": HAZARD,
    "model/kern.py": "import triton\n\n@triton.jit\ndef k(x):\n    pass\n",
}


def report_json(cli: Any, *args: str) -> dict[str, Any]:
    result = cli("report", "--format", "json", "--no-progress", *args)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_decision_tree_from_the_code(cli: Any, project: Path) -> None:
    write_tree(project, PORTING_PROJECT)
    data = report_json(cli, "--isolated")
    answers = {a["key"]: a for a in data["answers"]}
    assert {k for k, a in answers.items() if a["answer"]} == {
        "cuda_kernels",
        "custom_extension",
        "flash_attn",
        "cutlass",
        "torch_compile",
        "triton",
    }
    assert [e["path"] for e in answers["cuda_kernels"]["evidence"]] == ["csrc/gemm.cu", "csrc/mma.cu"]
    assert answers["custom_extension"]["evidence"][0] == {"path": "setup.py", "line": 2, "source": "scan"}
    assert answers["torch_compile"]["evidence"] == [{"path": "model/train.py", "line": 2, "source": "ROC101"}]
    phases = {p["number"]: p for p in data["phases"]}
    assert all(phases[n]["applies"] for n in (0, 1, 2, 3, 4, 5, 6, 8))
    assert not phases[7]["applies"]
    assert phases[6]["codes"] == [{"code": "ROC101", "count": 1}]


def test_pure_python_project_skips_the_cpp_phases(cli: Any, project: Path) -> None:
    write_tree(project, {"train.py": HAZARD})
    data = report_json(cli, "--isolated")
    phases = {p["number"]: p for p in data["phases"]}
    assert [n for n in range(9) if not phases[n]["applies"]] == [2, 3, 4, 5, 7]
    assert "skip" in phases[2]["reasons"][0]


def test_rewrite_falls_back_to_a_text_scan_when_the_rule_did_not_run(cli: Any, project: Path) -> None:
    write_tree(project, PORTING_PROJECT)
    rewrites = {r["key"]: r for r in report_json(cli, "--isolated", "--ignore", "ROC206,ROC217")["rewrites"]}
    assert rewrites["cutlass"]["unchecked_codes"] == ["ROC206"]
    assert rewrites["cutlass"]["scanned_files"] == [{"path": "csrc/gemm.cu", "line": 1, "source": "scan"}]
    assert [e["path"] for e in rewrites["wmma"]["scanned_files"]] == ["csrc/mma.cu"]


def test_directory_tree_totals_and_targets(cli: Any, project: Path) -> None:
    write_tree(
        project,
        {
            "a/b/one.py": HAZARD,
            "a/two.py": HAZARD + HAZARD.replace("m = ", "n = "),
            "top.py": HAZARD,
            "rocmlint.toml": 'target-archs = ["gfx942", "gfx1100"]\n',
        },
    )
    data = report_json(cli)
    root = data["directories"]
    assert (root["total"], root["own"], root["files"]) == (4, 1, 3)
    (a,) = root["children"]
    assert (a["path"], a["total"], a["own"], a["files"]) == ("a", 3, 2, 2)
    assert [(c["path"], c["total"]) for c in a["children"]] == [("a/b", 1)]
    assert [f["path"] for f in data["top_files"]] == ["a/two.py", "a/b/one.py", "top.py"]
    assert data["target_archs"] == ["gfx1100", "gfx942"]
    targets = {t["key"]: t for t in data["targets"]}
    assert targets["wave64"]["configured"] == ["gfx942"]  # gfx1100 is RDNA: wave32
    assert targets["fp8_fnuz"]["configured"] == ["gfx942"]


def test_fixability_counts_follow_the_rules_fix_availability() -> None:
    from rocmlint.diagnostics import Diagnostic, Location, Severity

    def diag(code: str) -> Diagnostic:
        return Diagnostic("x.py", code, "n", "m", Severity.ERROR, Location(1, 1), Location(1, 2))

    reports = [FileReport("x.py", [diag("ROC101"), diag("ROC107"), diag("ROC116"), diag("ROC116")])]
    model = build_model(reports, [], Path.cwd(), frozenset())
    assert model.fixability.by_rule == {"safe": 1, "unsafe": 1, "sometimes": 0, "none": 2}
    assert "some forms" not in fix_summary(model)


def test_attached_fixes_are_counted_by_their_own_safety() -> None:
    """ROC202's availability is `sometimes`: its `__popc` fix is safe, its `__clz` fix is not."""
    from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity

    def diag(applicability: Applicability) -> Diagnostic:
        edit = Edit(0, 1, "x", Location(1, 1), Location(1, 2))
        fix = Fix("use the 64-bit form", (edit,), applicability)
        return Diagnostic("k.cu", "ROC202", "n", "m", Severity.ERROR, Location(1, 1), Location(1, 2), fix)

    reports = [FileReport("k.cu", [diag(Applicability.SAFE), diag(Applicability.UNSAFE)])]
    model = build_model(reports, [], Path.cwd(), frozenset())
    assert model.fixability.by_rule == {"safe": 0, "unsafe": 0, "sometimes": 2, "none": 0}
    assert (model.fixability.attached_safe, model.fixability.attached_unsafe) == (1, 1)
    assert "2 from rules whose fix is safe for some forms only" in fix_summary(model)
    assert '<div class="card"><b>2</b>fix safe for some forms</div>' in html.render(model)


def test_facts_are_found_by_language() -> None:
    cu = scan_bytes("k.cu", b'#include <cute/tensor.hpp>\nasm volatile("mov.u32 %0, %%laneid;" : "=r"(x));\n')
    assert dict(cu.lines) == {"cuda_kernels": 1, "cutlass": 1, "inline_ptx": 2}
    py = scan_bytes("m.py", b'# asm("x")\nimport torch\nfn = torch.compile(f)\n')
    assert dict(py.lines) == {"torch_compile": 3}  # asm is looked for in C++ only


# -- escaping -------------------------------------------------------------------------------------

NASTY = 'we<i>rd & "q" \'s`|*_.py'


def test_paths_and_messages_are_escaped(cli: Any, project: Path, tmp_path: Path) -> None:
    write_tree(project, {NASTY: HAZARD})
    page = cli("report", "--format", "html", "--no-progress", "--isolated").stdout
    assert "<i>" not in page and "we&lt;i&gt;rd &amp; &quot;q&quot; &#x27;s`|*_.py" in page
    parser = TagCollector()
    parser.feed(page)
    assert "i" not in parser.tags
    md = cli("report", "--format", "markdown", "--no-progress", "--isolated").stdout
    outside_code = re.sub(r"``.*?``|`[^`]*`", "", md)  # in a code span `<i>` is shown as text
    assert "<i>" not in outside_code
    table_row = next(line for line in md.splitlines() if line.startswith("| ") and "ROC101" in line and ".py:" in line)
    assert table_row.count(" | ") == 4  # the pipe in the path did not split the cell


def test_markdown_text_escaping() -> None:
    assert markdown.text("a <b> & c|d *e* [f](g) max_split_size_mb _x_") == (
        r"a &lt;b&gt; &amp; c\|d \*e\* \[f\](g) max_split_size_mb \_x\_"
    )
    assert markdown.code("a`b|c") == "``a`b\\|c``"
    assert markdown.message('use `x.split(":")[0]` now') == 'use `x.split(":")[0]` now'
    assert markdown.message("odd ` tick") == "odd \\` tick"


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


# -- the CLI --------------------------------------------------------------------------------------


def test_report_writes_the_output_file_and_exits_0(cli: Any, project: Path) -> None:
    write_tree(project, {"train.py": HAZARD})
    result = cli("report", "--format", "html", "-o", "out/report.html", "--no-progress", "--isolated")
    assert (result.code, result.stdout) == (0, "")
    page = (project / "out" / "report.html").read_text(encoding="utf-8")
    assert 'href="../train.py#L2"' in page  # links are relative to where the page is written
    template = cli(
        "report", "--format", "html", "--isolated", "--source-url", "https://git.example/blob/main/{path}#L{line}"
    )
    assert 'href="https://git.example/blob/main/train.py#L2"' in template.stdout


@pytest.mark.parametrize("args", [("--config", "x.toml", "--isolated"), ("-",), ("--format", "pdf")])
def test_report_usage_errors(cli: Any, args: tuple[str, ...]) -> None:
    assert cli("report", *args).code == 2


def test_report_respects_select_and_exclude(cli: Any, project: Path) -> None:
    write_tree(project, {"a.py": HAZARD, "vendored/b.py": HAZARD})
    assert report_json(cli, "--isolated")["total"] == 2
    assert report_json(cli, "--isolated", "--extend-exclude", "vendored")["total"] == 1
    assert report_json(cli, "--isolated", "--select", "ROC3")["total"] == 0


# -- progress -------------------------------------------------------------------------------------


def test_progress_bar_only_on_a_terminal() -> None:
    quiet = io.StringIO()
    bar = Progress(10, stream=quiet)  # a StringIO is not a terminal
    bar.update(10, "x.py")
    bar.close()
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    bar = Progress(2, stream=loud, enabled=True)
    bar.update(2, "src/x.py")
    bar.close()
    assert "2/2 files src/x.py" in loud.getvalue() and loud.getvalue().endswith("\r\x1b[K")


def test_progress_line_fits_the_terminal() -> None:
    line = bar_line(5, 10, "a/" * 100 + "long.py", width=80)
    assert len(line) < 80 and line.startswith("[" + "#" * 15 + "-" * 15 + "] 5/10 files ...")


# -- HTML in a real browser -----------------------------------------------------------------------


def chromium() -> str:
    for name in ("chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return require_tool("chromium")  # skipped with the reason outside CI, a failure in CI


def run_chromium(*args: str) -> subprocess.CompletedProcess[bytes]:
    # --no-sandbox: CI runs as root; --disable-gpu: no display. A fresh profile keeps runs independent.
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        timeout=120,
    )


def test_html_report_renders_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = run_report(FIXTURES / "mixed_project", "--format", "html", "-o", str(page), ".")
    assert result.returncode == 0, result.stderr
    profile = f"--user-data-dir={tmp_path / 'profile'}"

    dom = run_chromium(profile, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    rendered = dom.stdout.decode("utf-8")
    assert len(re.findall(r"<svg[^>]*class=\"chart\"", rendered)) == 2
    assert len(re.findall(r"<rect ", rendered)) >= 10
    for section in (
        "decision-tree",
        "phases",
        "charts",
        "rules",
        "rewrites",
        "targets",
        "directories",
        "top-files",
        "findings",
    ):
        assert f'id="{section}"' in rendered
    assert rendered.count("<table") >= 7
    assert "docs/rules/ROC301.md" in rendered  # findings link to their rule page
    assert "<script" not in rendered and "http://" not in rendered.replace("http://www.w3.org/2000/svg", "")

    shot = tmp_path / "report.png"
    result_shot = run_chromium(profile, f"--screenshot={shot}", "--window-size=1200,3600", page.as_uri())
    assert result_shot.returncode == 0 and shot.exists(), result_shot.stderr.decode(errors="replace")[-2000:]
    assert shot.stat().st_size > 20_000
    check_screenshot(shot)


def check_screenshot(shot: Path) -> None:
    """Not blank: many colours, mostly white background, and the chart's error red is on screen."""
    from PIL import Image

    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1200, 3600)
        colours = rgb.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50
    total = sum(count for count, _ in colours)
    white = sum(count for count, c in colours if min(c) > 245)
    assert 0.3 < white / total < 0.995
    error_red = sum(
        count for count, (r, g, b) in colours if abs(r - 0xC6) < 12 and abs(g - 0x28) < 12 and abs(b - 0x28) < 12
    )
    assert error_red > 2000  # the red bars of the charts (and severity badges) were painted
