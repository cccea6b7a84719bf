"""What the subcommands' parsers share (rocmlint/cli.py, rocmlint/report/command.py): option value types and
the error a command line that cannot run raises. Below both, so neither imports the other."""

from __future__ import annotations

import argparse


class UsageError(Exception):
    """The command line asks for something that cannot be done (exit 2 with the message)."""


def codes(value: str) -> tuple[str, ...]:
    """`--select ROC1,roc201` -> ("ROC1", "ROC201")."""
    return tuple(part.strip().upper() for part in value.split(",") if part.strip())


def patterns(value: str) -> tuple[str, ...]:
    """`--exclude a,b/*` -> ("a", "b/*")."""
    return tuple(p for p in value.split(",") if p)


def per_file_ignore(value: str) -> tuple[str, tuple[str, ...]]:
    """`--per-file-ignores GLOB:CODES` -> (GLOB, CODES); the glob may hold colons itself."""
    pattern, sep, selected = value.rpartition(":")
    if not sep or not pattern or not selected:
        raise argparse.ArgumentTypeError(f"expected GLOB:CODES, got {value!r}")
    return pattern, codes(selected)
