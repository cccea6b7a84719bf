"""The one Diagnostic and one Fix type that flow from rules to every output.

Positions are 1-based lines and 1-based columns counted in Unicode code points (ruff's convention);
edits also carry byte offsets into the file's raw bytes, which is what the fixer applies.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    """How much a fix can be trusted: `safe` keeps the NVIDIA path's exact tokens, `unsafe` needs review."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class FixAvailability(str, enum.Enum):
    """What a rule promises about its fixes (the `fix` column of `rocmlint rules` and docs/rules/),
    checked against the fixes its INVALID examples produce (tests/test_rule_examples.py).

    `safe` and `unsafe`: every fix the rule emits has that applicability (a form it cannot fix gets
    none). `sometimes` (as ruff's `FixAvailability::Sometimes`, by applicability here): safe fixes for
    some forms and unsafe ones for others, its doc's "Fix safety" section says which. `none`: no fix.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    SOMETIMES = "sometimes"
    NONE = "none"


@dataclass(frozen=True, order=True)
class Location:
    line: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the original file with `content` (encoded in the file's encoding)."""

    start: int
    end: int
    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE


@dataclass(frozen=True)
class Diagnostic:
    path: str
    code: str
    name: str
    message: str
    severity: Severity
    location: Location
    end_location: Location
    fix: Fix | None = None
    url: str | None = None
    # The line whose `noqa` comment suppresses this diagnostic (its first line).
    noqa_line: int | None = field(default=None, compare=False)

    @property
    def fixable(self) -> bool:
        """`--fix` would fix it: it has a safe fix (unsafe ones need `--unsafe-fixes`)."""
        return self.fix is not None and self.fix.applicability is Applicability.SAFE

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.location.line, self.location.column, self.code)
