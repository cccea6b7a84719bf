"""Rule pages (docs/rules/ROCxxx.md), the rules index page and rocmlint/rule_index.py (the metadata
the registry reads without importing rule modules), generated from the rule modules.

`python -m rocmlint.docs` rewrites them; `python -m rocmlint.docs --check` fails when they are stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rocmlint.registry import INDEX_FILE, discover_rules, index_module_text
from rocmlint.rule import Rule

LANGUAGE_LABEL = {"python": "Python", "cuda": "CUDA C++", "any": "any file"}
_FENCE = {"python": "python", "cuda": "cpp", "any": "python"}
_EXAMPLES_SHOWN = 3


def rule_page(rule: type[Rule]) -> str:
    facts = [
        f"Severity: {rule.severity.value}",
        f"Language: {LANGUAGE_LABEL[rule.language]}",
        f"Fix: {rule.fix_availability.value}",
        f"Enabled by default: {'yes' if rule.enabled_by_default else 'no'}",
    ]
    if rule.language == "python":
        facts.append(f"Test files: {'checked' if rule.applies_to_tests else 'not checked'}")
    parts = [f"# {rule.name} ({rule.code})", "", " · ".join(facts), "", rule.doc(), ""]
    if rule.language == "python":
        parts += ["## Repository tooling", "", _TOOLING_NOTE, ""]
    if rule.language == "cuda":
        parts += ["## With the project model", "", _project_model_note(rule), ""]
    fence = _FENCE[rule.language]
    if rule.invalid:
        parts += ["## Flagged (from the rule's tests)", ""]
        for example in rule.invalid[:_EXAMPLES_SHOWN]:
            parts += [f"```{fence}", example.code.rstrip("\n"), "```", ""]
    if rule.valid:
        parts += ["## Not flagged (from the rule's tests)", ""]
        for valid in rule.valid[:_EXAMPLES_SHOWN]:
            parts += [f"```{fence}", valid.code.rstrip("\n"), "```", ""]
    return "\n".join(parts).rstrip("\n") + "\n"


# Where hidden tooling folders stand (rocmlint/python/importers.py, `ImportIndex.tooling_base`).
_TOOLING_NOTE = (
    "Modules in a hidden folder at the project root (`.github/scripts/`, `.claude/skills/`) are the repository's "
    "tooling, run by its CI or its maintainers. They are checked when some hidden folder or file at the root (a "
    "workflow's runner label, `.gitlab-ci.yml`, a container image, a script, a note) names ROCm or an AMD GPU (`rocm`, "
    "`mi300`, `gfx942`, `hipcc`); "
    "otherwise they run on the project's own NVIDIA machines and are not reported (`check --verbose` says so)."
)


def _project_model_note(rule: type[Rule]) -> str:
    """What the C++ project model (README, "The C++ project model") changes for a CUDA rule, from its attributes."""
    amd_code = (
        "code written for AMD (a project whose build compiles HIP only; a file calling `__builtin_amdgcn_*` or "
        "defining a 64-lane warp size outside vendor branches, or including such a header there; a file whose `#if`s "
        "test only AMD targets such as "
        "`__gfx942__`; a path naming a gfx target such as `gfx1250/` or `_gfx942.cuh`)"
    )
    hip_code = (
        "HIP code that may be ported CUDA (a `.hip` file, a file including the HIP runtime outside vendor branches, "
        "itself or through project headers)"
    )
    if rule.applies_to_rocm_sources and not rule.reports_a_cuda_habit:
        native = (
            f"It still applies to {hip_code} and to {amd_code}: what it reports is wrong on AMD hardware whoever "
            "wrote it."
        )
    elif rule.applies_to_rocm_sources:
        native = (
            f"It still applies to {hip_code}: a 32-lane assumption hipify carried over is as wrong on 64-lane CDNA "
            f"there. It does not apply to {amd_code}: AMD's authors choose 32-lane groups knowingly (width-32 "
            "shuffles, DPP row operations, MFMA half-waves), so a 32 there is no CUDA habit."
        )
    else:
        native = f"It does not apply to {hip_code} or to {amd_code}: there is no CUDA code to port."
    if rule.reports_gated:
        gated = "It also reports code ROCm does not compile: what it flags is the gate itself."
    else:
        gated = (
            "Code the ROCm build does not compile is not reported: branches of the project's own vendor macros "
            "(learned from its build files and headers), headers included only from NVIDIA-only branches, sources "
            "the build compiles for NVIDIA only, and calls of names a header remaps for ROCm "
            "(`check --verbose` says which evidence decided; `project-model = false` turns it off)."
        )
    return f"{native} {gated}"


def index_page(rules: tuple[type[Rule], ...]) -> str:
    lines = [
        "# rocmlint rules",
        "",
        "Generated from the rule modules by `python -m rocmlint.docs`; do not edit by hand.",
        "",
        "| code | name | language | severity | fix | default |",
        "|---|---|---|---|---|---|",
    ]
    for rule in rules:
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {LANGUAGE_LABEL[rule.language]} | "
            f"{rule.severity.value} | {rule.fix_availability.value} | {'on' if rule.enabled_by_default else 'off'} |"
        )
    return "\n".join(lines) + "\n"


def expected_files() -> dict[str, str]:
    # The rule modules themselves, not all_rules(): that one refuses to run while the index is stale.
    rules = discover_rules()
    files = {f"{rule.code}.md": rule_page(rule) for rule in rules}
    files["README.md"] = index_page(rules)
    return files


def stale_files(folder: Path) -> list[str]:
    """Names of generated files that are missing, different, or no longer generated."""
    expected = expected_files()
    stale = [name for name, text in expected.items() if _read(folder / name) != text]
    stale += [p.name for p in folder.glob("*.md") if p.name not in expected]
    return sorted(stale)


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    expected = expected_files()
    for path in folder.glob("*.md"):
        if path.name not in expected:
            path.unlink()
    for name, text in expected.items():
        (folder / name).write_text(text, encoding="utf-8")


def rule_index_is_current(index_file: Path = INDEX_FILE) -> bool:
    return _read(index_file) == index_module_text(discover_rules())


def write_rule_index(index_file: Path = INDEX_FILE) -> None:
    """Rewritten only when it changes: its mtime is part of the result cache's code fingerprint."""
    if not rule_index_is_current(index_file):
        index_file.write_text(index_module_text(discover_rules()), encoding="utf-8")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocmlint.docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the checked-in pages are stale")
    parser.add_argument("--dir", type=Path, default=Path("docs/rules"))
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.dir)
        index_current = rule_index_is_current()
        if stale:
            print(f"stale rule docs in {args.dir}: {', '.join(stale)}; run `python -m rocmlint.docs`", file=sys.stderr)
        if not index_current:
            print(f"stale rule index {INDEX_FILE}; run `python -m rocmlint.docs`", file=sys.stderr)
        return 0 if not stale and index_current else 1
    write(args.dir)
    write_rule_index()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
