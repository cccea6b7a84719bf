"""`rocmlint verify` and `check --fix --verify` with the real compilers: hipcc (Debian's 5.2.3,
HIP_PLATFORM=amd, gfx90a, no GPU needed) and nvcc -E for the NVIDIA identity check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import require_tool, write_tree
from rocmlint.rules.roc224_nanosleep import Nanosleep

from rocmlint.verify import Toolchain, VerifyOptions, compile_flags, git_original, verify_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SLEEP = "#include <cuda_runtime.h>\n__device__ void backoff(unsigned ns) {\n  __nanosleep(ns);\n}\n"
GATED_INCLUDE = SLEEP.replace(
    "#include <cuda_runtime.h>\n",
    "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime.h>\n#endif\n",
)


@pytest.fixture
def toolchain() -> Toolchain:
    return Toolchain(require_tool("hipcc"), require_tool("nvcc"), ("gfx90a",))


def test_hip_errors_come_back_at_the_users_file_and_line(tmp_path, toolchain):
    path = tmp_path / "k.cu"
    verdict = verify_file(path, GATED_INCLUDE.encode(), None, toolchain, VerifyOptions())
    assert verdict.hip_compiled is False
    assert [(d.code, d.path, d.location.line) for d in verdict.hip_errors] == [("ROC010", str(path), 7)]
    assert "__nanosleep" in verdict.hip_errors[0].message


def test_missing_cuda_header_is_the_error_before_anything_else(tmp_path, toolchain):
    verdict = verify_file(tmp_path / "k.cu", SLEEP.encode(), None, toolchain, VerifyOptions())
    assert [(d.location.line, d.message) for d in verdict.hip_errors] == [(1, "hipcc: 'cuda_runtime.h' file not found")]


def test_cuda_api_names_are_renamed_in_the_compiled_copy_only(tmp_path, toolchain):
    code = (
        GATED_INCLUDE.replace("  __nanosleep(ns);\n", "  (void)ns;\n")
        + "void* grab(size_t n) { void* p; cudaMalloc(&p, n); return p; }\n"
    )
    path = tmp_path / "k.cu"
    path.write_text(code)
    verdict = verify_file(path, code.encode(), None, toolchain, VerifyOptions())
    assert verdict.hip_compiled is True, [d.message for d in verdict.hip_errors]
    assert path.read_text() == code


def test_nvidia_identity(tmp_path, toolchain):
    fixed = GATED_INCLUDE.replace(
        "  __nanosleep(ns);\n",
        "#if defined(__HIP__)\n  __builtin_amdgcn_s_sleep(1);\n#else\n  __nanosleep(ns);\n#endif\n",
    )
    same = verify_file(tmp_path / "k.cu", fixed.encode(), GATED_INCLUDE.encode(), toolchain, VerifyOptions())
    assert same.nvidia_identical is True and same.hip_compiled is True
    changed = verify_file(
        tmp_path / "k.cu",
        GATED_INCLUDE.replace("(ns)", "(ns + 1)").encode(),
        GATED_INCLUDE.encode(),
        toolchain,
        VerifyOptions(),
    )
    assert changed.nvidia_identical is False
    assert [d.code for d in changed.diagnostics if d.code == "ROC011"] == ["ROC011"]


def test_verify_command(project, cli, toolchain):
    write_tree(
        project,
        {"ok.cu": GATED_INCLUDE.replace("  __nanosleep(ns);\n", "  (void)ns;\n"), "bad.cu": SLEEP, "m.py": "x = 1\n"},
    )
    result = cli("verify", "--offload-arch", "gfx90a", ".")
    assert result.code == 1
    assert result.lines[0] == "bad.cu:1:10: ROC010 hipcc: 'cuda_runtime.h' file not found"
    assert "hipcc (gfx90a): 1 of 2 files compile." in result.stdout
    as_json = json.loads(cli("verify", "--output-format", "json", ".").stdout)
    assert [(d["code"], d["filename"].endswith("bad.cu")) for d in as_json] == [("ROC010", True)]


def _copy_fixture(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    (target / ".git").mkdir()
    return target


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run(
        [sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_fixed_fixture_matches_golden_files_and_is_clean(tmp_path):
    project = _copy_fixture("cuda_fixable", tmp_path)
    _run(["check", "--fix", "--quiet", "."], project)
    golden = FIXTURES / "cuda_fixable_fixed"
    sources = sorted(p.relative_to(project) for p in project.rglob("*") if p.suffix in (".cu", ".cuh"))
    if os.environ.get("ROCMLINT_UPDATE_FIXTURES"):
        for relative in sources:
            (golden / relative).parent.mkdir(parents=True, exist_ok=True)
            (golden / relative).write_bytes((project / relative).read_bytes())
    assert sources and all((project / r).read_bytes() == (golden / r).read_bytes() for r in sources)
    again = _run(["check", "--quiet", "--output-format", "json", "."], project)
    assert [d["code"] for d in json.loads(again.stdout) if d["fix"] is not None] == []


def test_every_safe_cpp_fix_compiles_with_hipcc_and_keeps_the_nvidia_path(tmp_path, toolchain):
    project = _copy_fixture("cuda_fixable", tmp_path)
    originals = {p: p.read_bytes() for p in project.rglob("*") if p.suffix in (".cu", ".cuh")}
    before = {
        p: verify_file(p, data, None, toolchain, VerifyOptions()) for p, data in originals.items() if p.suffix == ".cu"
    }
    assert all(v.hip_compiled is False for v in before.values())  # the hazards break the ROCm build
    _run(["check", "--fix", "--quiet", "."], project)
    for path, original in originals.items():
        verdict = verify_file(path, path.read_bytes(), original, toolchain, VerifyOptions())
        assert verdict.hip_compiled is True, (
            path.name,
            [f"{d.location.line}: {d.message}" for d in verdict.hip_errors],
        )
        assert verdict.nvidia_identical is True, path.name


def test_fix_verify_rolls_back_a_broken_fix(project, cli, toolchain, monkeypatch):
    """A test double fix that changes the NVIDIA tokens: `--fix --verify` keeps the original bytes."""

    def broken_visit(self, node, ctx):
        if ctx.call_name(node) == "__nanosleep":
            ctx.report(
                node,
                "nanosleep",
                fix=ctx.fix("broken", ctx.edit(node.start_byte, node.end_byte, "__nanosleep(ns + 1)")),
            )

    monkeypatch.setattr(Nanosleep, "visit_call_expression", broken_visit)
    write_tree(project, {"k.cu": GATED_INCLUDE})
    before = (project / "k.cu").read_bytes()
    result = cli("check", "--fix", "--verify", ".")
    assert (project / "k.cu").read_bytes() == before
    assert "failed verification" in result.stderr and "ROC011" in result.stdout


def test_fix_verify_keeps_a_good_fix(project, cli, toolchain):
    write_tree(project, {"k.cu": GATED_INCLUDE})
    cli("check", "--fix", "--verify", ".")
    assert "__builtin_amdgcn_s_sleep(1);" in (project / "k.cu").read_text()


def test_compile_commands_flags(tmp_path):
    (tmp_path / "build").mkdir()
    entry = {
        "directory": str(tmp_path / "build"),
        "file": "../k.cu",
        "command": "nvcc -I../include -isystem /opt/x -DFOO=1 -O3 -std=c++17 -c ../k.cu",
    }
    (tmp_path / "compile_commands.json").write_text(json.dumps([entry]))
    flags = compile_flags(tmp_path / "k.cu", tmp_path / "compile_commands.json")
    assert flags == (f"-I{tmp_path / 'include'}", "-isystem", "/opt/x", "-DFOO=1", "-std=c++17")


def test_git_original(tmp_path):
    require_tool("git")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "k.cu").write_text("old\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "k.cu"], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )
    (tmp_path / "k.cu").write_text("new\n")
    assert git_original(tmp_path / "k.cu", "HEAD") == b"old\n"
    assert git_original(tmp_path / "untracked.cu", "HEAD") is None
