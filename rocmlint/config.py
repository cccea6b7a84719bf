"""Configuration: `[tool.rocmlint]` in pyproject.toml, `rocmlint.toml` or `.rocmlint.toml`.

The closest configuration file to each checked file wins (no merging between files, as in ruff);
command-line options are applied on top of whichever file applies.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from rocmlint.registry import RuleInfo, is_valid_selector, rule_infos, select_rules
from rocmlint.vendor import DEFAULT_ROCM_CONDITION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILES = (".rocmlint.toml", "rocmlint.toml", "pyproject.toml")
DEFAULT_EXCLUDE = ("build", "dist", "_build", "node_modules", "site-packages", "*.egg-info", "third_party")
_ARCH_RE = re.compile(r"^gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*$")
_MACRO_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ROCMLINT_TABLE_RE = re.compile(r"^\s*\[\s*tool\s*\.\s*rocmlint\s*[\].]", re.MULTILINE)
_DOTTED_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


class ConfigError(Exception):
    """A configuration file or option that cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class Selection:
    """One layer of ruff-style rule selection: the command line on top of a configuration file.

    A layer with `select` starts over; one without only adds (`extend-select`) and removes (`ignore`)
    rules, the most specific selector of the layer deciding, with ties going to `ignore`.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, enabled: frozenset[str]) -> frozenset[str]:
        """The codes enabled after this layer, given those the layers below enabled."""
        if self.select is not None:
            return select_rules(self.select, self.ignore, self.extend_select)
        if not self.extend_select and not self.ignore:
            return enabled
        added = select_rules((), self.ignore, self.extend_select)
        removed = {rule.code for rule in rule_infos() if any(_selects(s, rule) for s in self.ignore)}
        return frozenset((enabled - removed) | added)


def _selects(selector: str, rule: RuleInfo) -> bool:
    return selector == "ALL" or rule.code.startswith(selector)


@dataclass(frozen=True)
class Settings:
    root: Path  # the folder of the config file (or the working directory); patterns are relative to it
    config_path: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    rocm_guards: tuple[str, ...] = ()
    rocm_macros: tuple[str, ...] = ()
    portable_macros: tuple[str, ...] = ()
    nvidia_macros: tuple[str, ...] = ()
    target_archs: tuple[str, ...] = ()
    # The preprocessor test C++ fixes put in front of the ROCm text (`#if <rocm-condition>`).
    rocm_condition: str = DEFAULT_ROCM_CONDITION
    # Learn C++ gates, constants and build mode from the project's own files (rocmlint/cuda/project.py).
    project_model: bool = True
    # Report, at info, the CUDA includes a build that hipifies its sources (torch's CUDAExtension) swaps on its
    # own (true), or leave them out (false; `check --verbose` says which, and why). Unset, the project model decides:
    # left out where the project already builds for ROCm through that hipify, notes before a first port and in files
    # the port left to NVIDIA (a hand-written HIP twin).
    show_hipified: bool | None = None
    force_exclude: bool = field(default=False, compare=False)
    # The baseline file of `check` (relative to `root`), read from the configuration that applies to the
    # working directory; no file's diagnostics depend on it.
    baseline: str | None = field(default=None, compare=False)
    # The command line's --select/--extend-select/--ignore, a layer above the file's own selection.
    command_line: Selection = Selection()

    @cached_property
    def enabled_codes(self) -> frozenset[str]:
        return self.command_line.apply(select_rules(self.select, self.ignore, self.extend_select))

    @property
    def exclude_patterns(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude


@dataclass(frozen=True)
class Overrides:
    """Options given on the command line; None means "not given"."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    show_hipified: bool = False  # `show_hipified` on, whatever the configuration says
    hide_hipified: bool = False  # `show_hipified` off, whatever the configuration says

    def apply(self, settings: Settings) -> Settings:
        return replace(
            settings,
            command_line=Selection(self.select, self.extend_select, self.ignore),
            per_file_ignores=settings.per_file_ignores + self.per_file_ignores,
            exclude=self.exclude if self.exclude is not None else settings.exclude,
            extend_exclude=settings.extend_exclude + self.extend_exclude,
            force_exclude=self.force_exclude,
            show_hipified=self._show_hipified(settings.show_hipified),
        )

    def _show_hipified(self, configured: bool | None) -> bool | None:
        if self.hide_hipified:
            return False
        return True if self.show_hipified else configured


def load_config(path: Path) -> Settings:
    """Read one configuration file; raises ConfigError naming the file and key for anything invalid."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 text (at line {line})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {_with_line(str(error), data)}") from None
    if path.name == "pyproject.toml":
        tool = document.get("tool")
        table = tool.get("rocmlint") if isinstance(tool, dict) else None
        if table is None:
            raise ConfigError(f"{path}: has no [tool.rocmlint] table")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: 'tool.rocmlint' must be a table, got {table!r}")
        where = f"{path}: [tool.rocmlint]"
    else:
        table = document
        where = str(path)
    return _settings_from_table(table, path.parent.resolve(), path, where)


def _with_line(message: str, data: bytes) -> str:
    """tomllib says "(at end of document)" for an unclosed construct: name the last line too."""
    if "(at end of document)" not in message:
        return message
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return message.replace("(at end of document)", f"(at end of document, line {max(lines, 1)})")


def has_rocmlint_table(path: Path) -> bool:
    if path.name != "pyproject.toml":
        return True
    try:
        with path.open("rb") as handle:
            tool = tomllib.load(handle).get("tool")
        return isinstance(tool, dict) and "rocmlint" in tool
    except (OSError, ValueError):  # ValueError: TOMLDecodeError, UnicodeDecodeError
        # A broken pyproject.toml without our table is not ours to report; with it, load_config reports.
        try:
            return _ROCMLINT_TABLE_RE.search(path.read_text(errors="replace")) is not None
        except OSError:
            return False


def _settings_from_table(table: dict[str, Any], root: Path, path: Path, where: str) -> Settings:
    known = {
        "select": lambda v, k: _selectors(v, k, where),
        "extend-select": lambda v, k: _selectors(v, k, where),
        "ignore": lambda v, k: _selectors(v, k, where),
        "per-file-ignores": lambda v, k: _per_file_ignores(v, k, where),
        "exclude": lambda v, k: _strings(v, k, where),
        "extend-exclude": lambda v, k: _strings(v, k, where),
        "respect-gitignore": lambda v, k: _boolean(v, k, where),
        "rocm-guards": lambda v, k: _strings(v, k, where, _DOTTED_RE, "a dotted Python name"),
        "rocm-macros": lambda v, k: _strings(v, k, where, _MACRO_RE, "a C identifier"),
        "portable-macros": lambda v, k: _strings(v, k, where, _MACRO_RE, "a C identifier"),
        "nvidia-macros": lambda v, k: _strings(v, k, where, _MACRO_RE, "a C identifier"),
        "target-archs": lambda v, k: _strings(v, k, where, _ARCH_RE, "a gfx target such as gfx90a or gfx942"),
        "rocm-condition": lambda v, k: _condition(v, k, where),
        "project-model": lambda v, k: _boolean(v, k, where),
        "baseline": lambda v, k: _file_name(v, k, where),
        "show-hipified": lambda v, k: _boolean(v, k, where),
    }
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            suggestion = _closest(key, known)
            hint = f" (did you mean '{suggestion}'?)" if suggestion else ""
            raise ConfigError(f"{where}: unknown key '{key}'{hint}")
        values[key.replace("-", "_")] = known[key](value, key)
    return Settings(root=root, config_path=path, **values)


def _closest(key: str, known: dict[str, Any]) -> str | None:
    import difflib

    matches = difflib.get_close_matches(key, list(known), n=1)
    return matches[0] if matches else None


def _strings(
    value: Any, key: str, where: str, pattern: re.Pattern[str] | None = None, what: str = ""
) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings, got {value!r}")
    for item in value:
        if pattern is not None and not pattern.match(item):
            raise ConfigError(f"{where}: '{key}' has {item!r}, which is not {what}")
    return tuple(value)


def _condition(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ConfigError(f"{where}: '{key}' must be a one-line preprocessor condition, got {value!r}")
    return value.strip()


def _file_name(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ConfigError(f"{where}: '{key}' must be a file name, got {value!r}")
    return value


def _boolean(value: Any, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: '{key}' must be true or false, got {value!r}")
    return value


def _selectors(value: Any, key: str, where: str) -> tuple[str, ...]:
    selectors = _strings(value, key, where)
    for selector in selectors:
        check_selector(selector, f"{where}: '{key}'")
    return selectors


def check_selector(selector: str, where: str) -> None:
    if not is_valid_selector(selector) or not any(_selects(selector, rule) for rule in rule_infos()):
        raise ConfigError(f"{where} has {selector!r}, which is not a rule code or prefix (see `rocmlint rules`)")


def _per_file_ignores(value: Any, key: str, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: '{key}' must be a table of glob = [codes], got {value!r}")
    return tuple((pattern, _selectors(codes, f"{key}.{pattern}", where)) for pattern, codes in value.items())


class ConfigResolver:
    """Finds the settings for each file: --config, --isolated, or the closest configuration file."""

    def __init__(
        self,
        overrides: Overrides,
        config_path: Path | None = None,
        isolated: bool = False,
        cwd: Path | None = None,
    ) -> None:
        self.overrides = overrides
        self.cwd = (cwd or Path.cwd()).resolve()
        self._fixed: Settings | None = None
        if isolated:
            self._fixed = overrides.apply(Settings(root=self.cwd))
        elif config_path is not None:
            self._fixed = overrides.apply(load_config(config_path))
        self._by_folder: dict[Path, Settings] = {}

    def default(self) -> Settings:
        """The settings for the working directory (used for discovery roots and stdin)."""
        return self.for_folder(self.cwd)

    def for_file(self, path: Path) -> Settings:
        return self.for_folder(Path(os.path.abspath(path)).parent)

    def for_folder(self, folder: Path, names: Collection[str] | None = None) -> Settings:
        """The settings for files in the absolute `folder`. `names`, the folder's entries when the
        caller has listed it, spares looking for configuration files that are not among them."""
        if self._fixed is not None:
            return self._fixed
        cached = self._by_folder.get(folder)
        if cached is not None:
            return cached
        settings = self._discover(folder, names)
        self._by_folder[folder] = settings
        return settings

    def _discover(self, folder: Path, names: Collection[str] | None) -> Settings:
        for candidate in CONFIG_FILES:
            if names is not None and candidate not in names:
                continue
            path = folder / candidate
            if path.is_file() and has_rocmlint_table(path):
                return self.overrides.apply(load_config(path))
        parent = folder.parent
        if parent == folder:
            return self.overrides.apply(Settings(root=self.cwd))
        return self.for_folder(parent)
