"""What a rule module declares: metadata, doc, triggers, check, and its own VALID/INVALID examples.

A Python rule defines `visit_<LibcstNodeType>(self, node, ctx)` methods; the Python front end calls all
enabled rules in one traversal. A rule reports through `ctx.report(...)`, which drops the diagnostic when
the front end finds the node gated away from ROCm (set `reports_gated = True` to see those too).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import KW_ONLY, dataclass
from functools import lru_cache
from typing import ClassVar

from rocmlint.diagnostics import FixAvailability, Severity

DOCS_URL = "https://github.com/rocmlint/rocmlint/blob/main/docs/rules/{code}.md"


def example_text(text: str) -> str:
    """An example's source as written in a rule module: a string that opens with a newline is a block.

    A block (opening quotes and a newline, indented lines, closing quotes) loses that first newline and
    its common indentation (`textwrap.dedent`, which also empties whitespace-only lines); end the last
    line with the closing quotes for a file without a final newline. Any other string is taken as it is:
    use one for code that must keep whitespace-only lines or leading indentation.
    """
    return textwrap.dedent(text[1:]) if text.startswith("\n") else text


@dataclass(frozen=True)
class Valid:
    """Code the rule must not report."""

    code: str
    _: KW_ONLY
    path: str | None = None  # defaults to example.py or example.cu by the rule's language

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", example_text(self.code))


@dataclass(frozen=True)
class Invalid:
    """Code the rule must report exactly as `expect` says.

    `expect` holds one `"line:column-end_line:end_column"` span per diagnostic of the rule, in output
    order (1-based columns, as `rocmlint check` prints them): a missing, extra or moved diagnostic fails.
    """

    code: str
    _: KW_ONLY
    expect: tuple[str, ...]
    message: str | None = None  # a substring of the first diagnostic's message
    no_fix: bool = False  # the diagnostics carry no fix (a form the rule's fix deliberately leaves alone)
    fixed: str | None = None  # the file once the rule's fixes (unsafe ones too) are applied until none is left
    path: str | None = None  # defaults to example.py or example.cu by the rule's language

    def __post_init__(self) -> None:
        if self.no_fix and self.fixed is not None:
            raise ValueError("an example with no_fix=True has no fixed file")
        object.__setattr__(self, "code", example_text(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", example_text(self.fixed))


@dataclass(frozen=True)
class AnchoredPattern:
    """A trigger pattern (`pattern`, a regular expression over bytes) searched only where it can match: every match
    holds a match of `anchor` that starts after a run of `skipped` bytes, however long, and at most `reach` other
    bytes of it. The regex engine tries a pattern that starts with no literal at every byte of the file; this finds
    the anchor first (a literal the engine looks for alone) and tries the pattern only at the few starts before
    it, with the same answer as `re.search(pattern, data)`."""

    pattern: str
    anchor: str
    skipped: bytes
    reach: int

    def search(self, data: bytes) -> bool:
        pattern, anchor = _compiled(self.pattern), _compiled(self.anchor)
        found = anchor.search(data)
        while found is not None:
            start = found.start()
            run = start
            while run > 0 and data[run - 1] in self.skipped:
                run -= 1
            if any(pattern.match(data, at) for at in range(max(0, run - self.reach), start + 1)):
                return True
            found = anchor.search(data, start + 1)
        return False


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("ascii"))


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
    # that capture CUDA graphs).
    also_requires: ClassVar[tuple[bytes, ...]] = ()
    # A regular expression (ASCII) sharpening `triggers` when a trigger is also a piece of common words
    # (`-code` in `--trust-remote-code`): once a trigger occurs, the rule runs only if this matches too.
    # It must match wherever the rule could report or read. An AnchoredPattern is the same, searched faster.
    trigger_pattern: ClassVar[str | AnchoredPattern | None] = None
    # Most hazards are NVIDIA-only code reaching ROCm; a rule whose hazard is ROCm code itself opts out.
    reports_gated: ClassVar[bool] = False
    # CUDA rules: `.hip` files and files including the HIP runtime are ROCm sources; only rules about the
    # wave size (which ROCm hardware itself makes 64) still apply there.
    applies_to_rocm_sources: ClassVar[bool] = False
    # CUDA rules whose hazard is a CUDA habit (a 32 written because CUDA warps have 32 lanes) do not apply to code
    # written for AMD (`FileView.rocm_native`: `__builtin_amdgcn_*`, per-gfx-target arms, a path naming a gfx
    # target, a HIP-only build), whose authors choose 32-lane groups knowingly (a width-32 shuffle, a DPP row, an
    # MFMA half-wave). What is wrong on AMD hardware whoever wrote it (a mask kept in 32 bits) still applies.
    reports_a_cuda_habit: ClassVar[bool] = False
    # Python rules: whether a test suite's files (`rocmlint.python.project.is_test_file`) are in scope. A
    # rule whose construct, in a test, is mostly what the test exercises or expects (a compile mode under
    # test, an asserted error text) opts out and says why in its doc; hazards in a suite's own plumbing
    # (choosing devices, skipping by capability, counting GPUs) stay in scope.
    applies_to_tests: ClassVar[bool] = True
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
