"""Data tables (package lists, later the CUDA->HIP mappings), kept as TOML next to this module."""

from __future__ import annotations

import sys
from functools import cache
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


@cache
def load(name: str) -> dict[str, Any]:
    """The table `<name>.toml` of this package."""
    return tomllib.loads(resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8"))
