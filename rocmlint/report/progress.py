"""A one-line progress bar on stderr, drawn only when stderr is a terminal (never in logs, pipes or CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rocmlint.outputs.paths import escape_control

BAR_WIDTH = 30
MIN_INTERVAL = 0.1  # seconds between redraws: drawing on every file would slow small-file runs


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, current: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < self.total and now - self._last < MIN_INTERVAL:
            return
        self._last = now
        self.stream.write("\r\x1b[K" + bar_line(done, self.total, current))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar so the next message starts on a clean line."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def bar_line(done: int, total: int, current: str = "", width: int = 80) -> str:
    fraction = done / total if total else 1.0
    filled = int(BAR_WIDTH * fraction)
    head = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{total} files "
    room = max(width - len(head) - 1, 0)
    name = escape_control(current)
    if len(name) > room:
        name = "..." + name[-(room - 3) :] if room > 3 else ""
    return head + name


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
