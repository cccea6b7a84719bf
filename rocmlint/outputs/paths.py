"""How paths are shown: relative to the working directory when below it, control characters escaped."""

from __future__ import annotations

import os
from pathlib import Path

STDIN = "-"  # the name of stdin read without --stdin-filename


def display_path(path: str) -> str:
    if path == STDIN:
        return STDIN
    absolute = os.path.abspath(path)
    try:
        shown = str(Path(absolute).relative_to(Path.cwd()))
    except ValueError:
        shown = absolute
    return escape_control(shown)


def absolute_path(path: str) -> str:
    return STDIN if path == STDIN else unicode_path(os.path.abspath(path))


def unicode_path(path: str) -> str:
    """A path fit for JSON: a file name that is not UTF-8 holds lone surrogates (Python's
    surrogateescape), which no UTF-8 output can carry; they become visible `\\xff` escapes."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def escape_control(value: str) -> str:
    """Make control characters (newlines, ANSI escapes) visible instead of acting on the terminal."""
    if value.isprintable():
        return value
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in value)
