"""Recall and false positives of rocmlint on labelled lines of real ROCm ports, per category and per project.

    python benchmarks/accuracy.py [--labels TSV ...] [--mirror DIR] [--corpus DIR] [--rocmlint CMD] [-v]

A label (one row of a TSV: repo, commit, path, line, category, kind, note) is one line of a public repository
at a pinned commit. A *positive* is a CUDA-only construct a real ROCm port had to change; a *negative* is the
same construct gated in the port, or a harmless look-alike. Each labelled (repository, commit) is written out
of a bare git mirror (`OWNER+NAME/repo`, what the search tool's `fetch` gives) into the corpus folder once,
rocmlint checks every snapshot from its root as a user would, and a label is caught when a diagnostic of one
of its category's rules covers its line. The labels are facts (benchmarks/groundtruth/*.tsv, by default all
of them); nothing of the labelled projects is committed.
"""

from __future__ import annotations

import argparse
import ast
import collections
import csv
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE.parent.parent
# Which rule codes (by prefix) catch each category of label: the judge's own table (CATEGORIES in the shared
# groundtruth/evaluate.py), which tests/test_accuracy.py holds this one to, so our numbers are the judge's.
CATEGORY_RULES: dict[str, tuple[str, ...]] = {
    "py-reduce-overhead": ("ROC101",),
    "py-tf32": ("ROC102",),
    "py-alloc-conf": ("ROC103",),
    "py-pynvml": ("ROC104", "ROC117"),
    "py-gfx-hardcoded": ("ROC105", "ROC115"),
    "py-inductor-config": ("ROC106",),
    "py-fp8-dtype": ("ROC107",),
    "py-flash-attn": ("ROC109",),
    "py-nvidia-smi": ("ROC116",),
    "py-device-capability": ("ROC113", "ROC114"),
    "py-version-cuda": ("ROC111",),
    "py-other": ("ROC1",),
    "cpp-ballot-mask-32": ("ROC201", "ROC210"),
    "cpp-popc": ("ROC202",),
    "cpp-warp-size-32": ("ROC208", "ROC209", "ROC210", "ROC211"),
    "cpp-inline-ptx": ("ROC203",),
    "cpp-cuda-header": ("ROC204", "ROC205"),
    "cpp-cutlass": ("ROC206",),
    "cpp-cuda-version-macro": ("ROC207",),
    "cpp-cuda-api": ("ROC2",),
    "cpp-lds-size": ("ROC221",),
    "cpp-wmma": ("ROC217",),
    "cpp-other": ("ROC2",),
    "build-nvcc-flags": ("ROC30",),
}


@dataclass(frozen=True)
class Label:
    repo: str
    commit: str
    path: str
    line: int
    category: str
    positive: bool
    note: str

    @property
    def language(self) -> str:
        return "python" if self.category.startswith("py-") else "c++/build"


@dataclass
class Score:
    caught: int = 0
    positives: int = 0
    flagged: int = 0
    negatives: int = 0

    def add(self, label: Label, hit: bool) -> None:
        if label.positive:
            self.positives += 1
            self.caught += hit
        else:
            self.negatives += 1
            self.flagged += hit

    def __str__(self) -> str:
        recall = f"{self.caught}/{self.positives}" + (
            f" ({self.caught / self.positives:.2f})" if self.positives else ""
        )
        flagged = f"{self.flagged}/{self.negatives}" + (
            f" ({self.flagged / self.negatives:.2f})" if self.negatives else ""
        )
        return f"recall {recall:>16}   false positives {flagged:>14}"


def read_labels(paths: Iterable[Path]) -> list[Label]:
    labels = []
    for path in paths:
        with path.open(encoding="utf-8", newline="") as table:
            for row in csv.DictReader(table, delimiter="\t"):
                if row["category"] not in CATEGORY_RULES:
                    sys.exit(f"{path}: unknown category {row['category']!r}")
                labels.append(
                    Label(
                        row["repo"],
                        row["commit"],
                        row["path"],
                        int(row["line"]),
                        row["category"],
                        row["kind"] == "positive",
                        row["note"],
                    )
                )
    return labels


def snapshot(mirror: Path, corpus: Path, repo: str, commit: str) -> Path | None:
    """The tree of `repo` at `commit`, written once under `corpus`; None when the mirror does not hold it.
    Blobs a mirror lacks (its largest files) and symbolic links are left out."""
    root = corpus / repo.replace("/", "+") / commit[:12]
    if root.is_dir():
        return root
    git = ["git", f"--git-dir={mirror / repo.replace('/', '+') / 'repo'}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=False)
    if listing.returncode:
        return None
    entries = [entry.split(b"\t", 1) for entry in listing.stdout.split(b"\0") if entry]
    files = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == b"blob" and b"120000" not in meta]
    partial = root.with_name(root.name + ".partial")
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as cat:
        assert cat.stdin is not None and cat.stdout is not None
        for sha, path in files:
            cat.stdin.write(sha + b"\n")
            cat.stdin.flush()
            header = cat.stdout.readline()
            if header.endswith(b"missing\n"):
                continue
            data = cat.stdout.read(int(header.split()[2]))
            cat.stdout.read(1)  # the newline after each object
            target = partial / os.fsdecode(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        cat.stdin.close()
    partial.mkdir(parents=True, exist_ok=True)  # a tree with no readable file is still checked
    partial.rename(root)
    return root


def covered_lines(rocmlint: Sequence[str], root: Path) -> dict[str, list[tuple[int, int, str]]]:
    """Real path -> (first line, last line, code) of every diagnostic rocmlint reports under `root`."""
    run = subprocess.run(
        [*rocmlint, "check", "--output-format", "json", "--exit-zero", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        diagnostics = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"rocmlint printed no JSON for {root} (exit {run.returncode}): {run.stderr.strip()[-400:]}")
    covered: dict[str, list[tuple[int, int, str]]] = collections.defaultdict(list)
    for found in diagnostics:
        last = (found.get("end_location") or found["location"])["row"]
        covered[os.path.realpath(found["filename"])].append((found["location"]["row"], last, found["code"]))
    return covered


def is_caught(label: Label, root: Path, covered: dict[str, list[tuple[int, int, str]]]) -> bool:
    rules = CATEGORY_RULES[label.category]
    spans = covered.get(os.path.realpath(root / label.path), [])
    return any(first <= label.line <= last and code.startswith(rules) for first, last, code in spans)


def judge_categories(script: Path) -> dict[str, tuple[str, ...]]:
    """The judge's scorer's CATEGORIES table (`shared/groundtruth/evaluate.py`), read as a literal: never run."""
    for statement in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "CATEGORIES" for target in statement.targets
        ):
            table = ast.literal_eval(statement.value)
            return {category: tuple(codes) for category, codes in table.items()}
    raise SystemExit(f"no CATEGORIES table in {script}")


def require_judges_categories(script: Path) -> None:
    """Refuse to score with a category table other than the judge's: our numbers must be its numbers (earlier
    tables also counted rules the judge does not, and overstated recall)."""
    if not script.is_file():
        raise SystemExit(f"no judge's scorer at {script} (the shared groundtruth folder): pass --judge")
    if judge_categories(script) != CATEGORY_RULES:
        raise SystemExit(f"CATEGORY_RULES differs from the judge's table in {script}: make them equal first")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--labels", type=Path, nargs="*", help="label TSVs (default: benchmarks/groundtruth/*.tsv)")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("MIRROR", WORK / ".mirror")))
    parser.add_argument("--corpus", type=Path, default=WORK / "corpora" / "groundtruth")
    parser.add_argument("--rocmlint", default=f"{shlex.quote(sys.executable)} -m rocmlint")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss and false positive")
    parser.add_argument("--judge", type=Path, default=WORK / "shared" / "groundtruth" / "evaluate.py")
    args = parser.parse_args(argv)
    require_judges_categories(args.judge)

    labels = read_labels(args.labels or sorted((HERE / "groundtruth").glob("*.tsv")))
    roots: dict[tuple[str, str], Path] = {}
    for repo, commit in sorted({(label.repo, label.commit) for label in labels}):
        root = snapshot(args.mirror, args.corpus, repo, commit)
        if root is not None:
            roots[(repo, commit)] = root
    missing = sorted({label.repo for label in labels if (label.repo, label.commit) not in roots})
    if missing:
        print("not in the mirror (fetch them first), left out: " + " ".join(missing))
    covered = {root: covered_lines(shlex.split(args.rocmlint), root) for root in roots.values()}

    by_category: dict[str, Score] = collections.defaultdict(Score)
    by_project: dict[str, Score] = collections.defaultdict(Score)
    by_language: dict[str, Score] = collections.defaultdict(Score)
    total = Score()
    wrong = []
    for label in labels:
        root = roots.get((label.repo, label.commit))
        if root is None:
            continue
        hit = is_caught(label, root, covered[root])
        for score in (by_category[label.category], by_project[label.repo], by_language[label.language], total):
            score.add(label, hit)
        if hit != label.positive:
            wrong.append(("FALSE-POSITIVE" if hit else "MISS", label))

    for title, table in (("category", by_category), ("project", by_project), ("language", by_language)):
        print(f"\n{title}")
        for name in sorted(table):
            print(f"  {name:42} {table[name]}")
    if args.verbose:
        print()
        for verdict, label in wrong:
            print(verdict, label.repo, label.commit[:8], f"{label.path}:{label.line}", label.category, "-", label.note)
    print(f"\ntotal {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
