"""flake8 plugin: `flake8` reports rocmlint's Python diagnostics as `ROCxxx` (entry point `ROC`).

The same engine, rules and gate analysis as `rocmlint check`, on the lines flake8 already read. Rule
options (rocm-guards, target-archs, per-file-ignores, select) come from rocmlint's own configuration
closest to the file; flake8's `--select`/`--extend-ignore` then filter what the plugin reports, and
flake8 applies `# noqa` itself, so rocmlint's line-level noqa is not applied here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from rocmlint import __version__
from rocmlint.config import ConfigResolver, Overrides, Settings
from rocmlint.engine import Engine
from rocmlint.lsp.text import encode_text

# flake8's name for text read from stdin when --stdin-display-name is not given.
_STDIN_NAMES = frozenset({"stdin", "-"})


@lru_cache(maxsize=1)
def _engine() -> Engine:
    # One engine per flake8 process: its project index (imported ROCm flags) is shared between files.
    return Engine()


@lru_cache(maxsize=1)
def _resolver() -> ConfigResolver:
    return ConfigResolver(Overrides())


def _settings_for(filename: str) -> Settings:
    resolver = _resolver()
    if filename in _STDIN_NAMES:
        return resolver.default()
    return resolver.for_file(Path(filename))


class RocmlintChecker:
    """A flake8 `tree` plugin (flake8 picks the plugin type from the `tree` parameter's name)."""

    name = "rocmlint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        del tree  # rocmlint parses the file its own way; flake8 needs the parameter to call us once per file
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type[RocmlintChecker]]]:
        data = encode_text("".join(self.lines), "python")
        report = _engine().check_bytes(self.filename, data, _settings_for(self.filename), "python", apply_noqa=False)
        for diagnostic in report.diagnostics:
            # flake8 wants a 0-based column and adds 1 when it prints; rocmlint's columns are 1-based.
            column = diagnostic.location.column - 1
            yield diagnostic.location.line, column, f"{diagnostic.code} {diagnostic.message}", type(self)
