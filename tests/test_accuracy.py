"""benchmarks/accuracy.py on a labelled repository made here: snapshots out of a bare mirror, scores per line."""

from __future__ import annotations

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
    accuracy = _accuracy()
    judge = _judge_script(tmp_path, {category: list(codes) for category, codes in accuracy.CATEGORY_RULES.items()})
    args = ["--labels", str(labels), "--mirror", str(folder), "--corpus", str(tmp_path / "corpus"), "-v"]
    assert accuracy.main([*args, "--judge", str(judge)]) == 0
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


def _judge_script(tmp_path: Path, table: dict[str, list[str]]) -> Path:
    """A scorer shaped like the judge's: a CATEGORIES literal among other statements."""
    script = tmp_path / "evaluate.py"
    script.write_text(f"import os\nHERE = os.path.dirname(__file__)\nCATEGORIES = {table!r}\n\ndef main():\n    pass\n")
    return script


def test_the_judges_table_is_read_without_running_the_script(tmp_path: Path) -> None:
    script = _judge_script(tmp_path, {"cpp-popc": ["ROC202"], "py-other": ["ROC1"]})
    assert _accuracy().judge_categories(script) == {"cpp-popc": ("ROC202",), "py-other": ("ROC1",)}


def test_scoring_with_another_table_than_the_judges_is_refused(tmp_path: Path) -> None:
    accuracy = _accuracy()
    same = {category: list(codes) for category, codes in accuracy.CATEGORY_RULES.items()}
    accuracy.require_judges_categories(_judge_script(tmp_path, same))  # equal: accepted
    lenient = {**same, "cpp-warp-size-32": [*same["cpp-warp-size-32"], "ROC240"]}
    with pytest.raises(SystemExit, match="differs from the judge's table"):
        accuracy.require_judges_categories(_judge_script(tmp_path, lenient))
