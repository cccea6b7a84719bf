"""What a rule module declares: metadata, doc, triggers, check, and its own VALID/INVALID examples.

A Python rule defines `visit_<LibcstNodeType>(self, node, ctx)` methods; the Python front end calls all
enabled rules in one traversal. A rule reports through `ctx.report(...)`, which drops the diagnostic when
the front end finds the node gated away from ROCm (set `reports_gated = True` to see those too).
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import ClassVar

from rocmlint.diagnostics import FixAvailability, Severity

DOCS_URL = "https://github.com/rocmlint/rocmlint/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True)
class Valid:
    """Code the rule must not report."""

    code: str
    path: str | None = None  # defaults to example.py or example.cu by the rule's language


@dataclass(frozen=True)
class Invalid:
    """Code the rule must report; `line` is the expected line of its first diagnostic."""

    code: str
    line: int | None = None
    message: str | None = None  # a substring of the first diagnostic's message
    fixed: str | None = None  # the file after applying the rule's fix, when it has one
    no_fix: bool = False  # the diagnostics carry no fix (a form the rule's fix deliberately leaves alone)
    path: str | None = None  # defaults to example.py or example.cu by the rule's language


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    language: ClassVar[str] = "python"  # "python", "cuda", or "any" for tool diagnostics
    enabled_by_default: ClassVar[bool] = True
    # Byte strings of which at least one must occur in a file for the rule to possibly fire there.
    triggers: ClassVar[tuple[bytes, ...]] = ()
    # A second necessary condition, checked only once a trigger matched: at least one of these lower-case
    # words must also occur somewhere in the file, in any case (`rng_state` calls matter only in files
    # that capture CUDA graphs). File-level context: only `triggers` mark the code regions a rule reads.
    also_requires: ClassVar[tuple[bytes, ...]] = ()
    # A regular expression (ASCII) sharpening `triggers` when a trigger is also a piece of common words
    # (`-code` in `--trust-remote-code`): once a trigger occurs, the rule runs only if this matches too,
    # and its matches, not the triggers', mark the code regions the rule reads. It must match wherever
    # the rule could report or read.
    trigger_pattern: ClassVar[str | None] = None
    # Most hazards are NVIDIA-only code reaching ROCm; a rule whose hazard is ROCm code itself opts out.
    reports_gated: ClassVar[bool] = False
    # CUDA rules: `.hip` files and files including the HIP runtime are ROCm sources; only rules about the
    # wave size (which ROCm hardware itself makes 64) still apply there.
    applies_to_rocm_sources: ClassVar[bool] = False
    valid: ClassVar[tuple[Valid, ...]] = ()
    invalid: ClassVar[tuple[Invalid, ...]] = ()

    @classmethod
    def doc(cls) -> str:
        return textwrap.dedent(inspect.getdoc(cls) or "").strip()

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(code=cls.code)

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the doc's 'What it does' section, on one line."""
        lines = cls.doc().splitlines()
        body: list[str] = []
        for line in lines[1:] if lines and lines[0].startswith("## ") else lines:
            if not line.strip():
                if body:
                    break
                continue
            body.append(line.strip())
        return " ".join(body)


class ToolRule(Rule):
    """A diagnostic the engine itself emits (parse errors, unused noqa, internal errors)."""

    language = "any"
