"""benchmarks/accuracy.py on a labelled repository made here: snapshots out of a bare mirror, scores per line."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ACCURACY = Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy.py"
KERNEL = """\
__device__ float warp_sum(float v) {
  for (int i = 16; i > 0; i >>= 1) v += __shfl_down_sync(0xffffffff, v, i);
  return v;
}
#ifndef USE_ROCM
__device__ unsigned lane() { unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }
#endif
"""


def _accuracy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("accuracy", ACCURACY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["accuracy"] = module
    spec.loader.exec_module(module)
    return module


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str]:
    """A bare mirror `owner+kernels/repo` holding one commit with a hazard (line 2) and a gated one (line 6)."""
    work = tmp_path / "work"
    (work / "csrc").mkdir(parents=True)
    (work / "csrc" / "reduce.cu").write_text(KERNEL, encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "kernels", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    _git("clone", "-q", "--bare", str(work), str(tmp_path / "mirror" / "owner+kernels" / "repo"), cwd=tmp_path)
    return tmp_path / "mirror", commit


def test_scores_positives_and_negatives_per_line(
    tmp_path: Path, mirror: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, commit = mirror
    labels = tmp_path / "labels.tsv"
    rows = [
        "repo\tcommit\tpath\tline\tcategory\tkind\tnote",
        f"owner/kernels\t{commit}\tcsrc/reduce.cu\t2\tcpp-warp-size-32\tpositive\t32-bit mask, ungated",
        f"owner/kernels\t{commit}\tcsrc/reduce.cu\t6\tcpp-inline-ptx\tnegative\tPTX under #ifndef USE_ROCM",
        f"owner/kernels\t{commit}\tcsrc/reduce.cu\t3\tcpp-inline-ptx\tpositive\tno PTX here: a miss",
        f"owner/absent\t{commit}\tx.cu\t1\tcpp-other\tpositive\tnot in the mirror",
    ]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["--labels", str(labels), "--mirror", str(folder), "--corpus", str(tmp_path / "corpus"), "-v"]
    assert _accuracy().main(args) == 0
    out = capsys.readouterr().out
    assert "left out: owner/absent" in out
    assert "MISS owner/kernels" in out and "reduce.cu:3" in out
    assert "FALSE-POSITIVE" not in out
    assert " ".join(out.splitlines()[-1].split()) == "total recall 1/2 (0.50) false positives 0/1 (0.00)"
    assert (tmp_path / "corpus" / "owner+kernels" / commit[:12] / "csrc" / "reduce.cu").read_text() == KERNEL


def test_an_unknown_category_is_refused(tmp_path: Path) -> None:
    labels = tmp_path / "labels.tsv"
    labels.write_text("repo\tcommit\tpath\tline\tcategory\tkind\tnote\nr/x\tabc\ta.cu\t1\tcpp-nope\tpositive\tn\n")
    with pytest.raises(SystemExit, match="unknown category 'cpp-nope'"):
        _accuracy().read_labels([labels])


def _judge_script() -> Path:
    """The judge's scorer, `shared/groundtruth/evaluate.py` beside the main checkout (a worktree finds the main
    checkout through its common git folder)."""
    repository = ACCURACY.parents[1]
    common = Path(_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository))
    for checkout in (repository, common.parent):
        script = checkout.parent / "shared" / "groundtruth" / "evaluate.py"
        if script.is_file():
            return script
    raise AssertionError(f"no shared/groundtruth/evaluate.py beside {repository} or {common.parent}")


def _judge_categories(script: Path) -> dict[str, tuple[str, ...]]:
    """evaluate.py's CATEGORIES table, read as a literal (the script is never run)."""
    for statement in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "CATEGORIES" for t in statement.targets
        ):
            table = ast.literal_eval(statement.value)
            return {category: tuple(codes) for category, codes in table.items()}
    raise AssertionError(f"no CATEGORIES table in {script}")


def test_categories_are_the_judges() -> None:
    """Our scorer counts a label as caught by exactly the rule codes the judge's does, so our numbers are its."""
    assert _judge_categories(_judge_script()) == _accuracy().CATEGORY_RULES
