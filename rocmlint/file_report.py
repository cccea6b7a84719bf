"""What checking one file gives: its diagnostics, warnings and tracebacks.

A module of its own, apart from rocmlint/engine.py, because the cache builds reports too: a warm run
served from the cache never imports the engine (nor tree-sitter and the rule modules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocmlint.diagnostics import Diagnostic


@dataclass
class FileReport:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # filesystem problems, for stderr
    tracebacks: list[str] = field(default_factory=list)  # of rules that crashed (ROC900), for --verbose
    gated_notes: list[str] = field(default_factory=list)  # findings the project model gated away, for --verbose
    skipped: bool = False  # no enabled rule could fire: the file was never decoded or parsed
