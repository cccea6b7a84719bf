"""A content-addressed result cache: `.rocmlint_cache/` next to the configuration (or project root).

One index file holds, per checked file (by absolute path): the path as displayed, a key of the
file's Settings, its (size, mtime_ns), the hash of its bytes, the other files its result depends on
(each with its (size, mtime_ns), or None for "did not exist"), and the FileReport in a compact form.

A warm run therefore costs discovery plus one stat per file and per dependency: bytes are hashed
only when a file's size is unchanged but its mtime moved (a `touch`, a checkout), and a matching
hash keeps the stored report. The whole index is dropped when the rocmlint version or its code
(rules included: an editable install changes under the same version) differs.

Integrity: the index is one marshal payload behind a magic, a format number and a BLAKE2 digest; a
truncated or altered file fails the digest and is discarded with a warning, a structurally bad entry
is discarded on its own. marshal (not pickle) because loading it never runs code, whatever the
bytes. Writes go to a temporary file in the cache folder, then os.replace: two concurrent runs never
leave a torn index (the last writer wins; the loser's new entries are simply recomputed next time).

Python results can depend on other modules (ProjectIndex follows `from pkg.env import IS_ROCM`), so
the engine used for cache misses is given a DependencyRecorder: every module file it looked up or
read (found or not), and every `__init__.py` that decided a file's package, becomes a dependency of
the file being checked. Changing, adding or removing any of them invalidates just the files that
looked at them.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint import __version__
from rocmlint.config import Settings
from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from rocmlint.engine import FileReport
from rocmlint.python.project import ProjectIndex

CACHE_DIR_NAME = ".rocmlint_cache"
INDEX_NAME = "index.bin"
ENV_CACHE_DIR = "ROCMLINT_CACHE_DIR"
_MAGIC = b"RLCACHE\0"
_FORMAT = 2
_DIGEST_SIZE = 32
# A file modified this close to "now" may be modified again within the same mtime tick without its
# stat changing (git's "racy clean" problem): such stats are stored as untrusted, forcing a re-hash.
_RACY_NS = 2_000_000_000
_UNTRUSTED_MTIME = -1
_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")

Stat = tuple[int, int]  # (st_size, st_mtime_ns)
Dependencies = tuple[tuple[str, "Stat | None"], ...]
Warn = Callable[[str], None]


def content_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def stat_of(path: str) -> Stat | None:
    """(size, mtime_ns) of a file, None when it does not exist; racy mtimes come back untrusted."""
    try:
        result = os.stat(path)
    except OSError:
        return None
    return _trusted(result.st_size, result.st_mtime_ns)


def _trusted(size: int, mtime_ns: int) -> Stat:
    if mtime_ns > time.time_ns() - _RACY_NS:
        return (size, _UNTRUSTED_MTIME)
    return (size, mtime_ns)


# ---------------------------------------------------------------------------------------------------
# Where the cache lives


def cache_dir_for(start: Path, config_path: Path | None) -> Path:
    """`$ROCMLINT_CACHE_DIR`, else next to the configuration file that applies, else in the nearest
    folder above `start` that looks like a project root (.git, pyproject.toml, setup.py), else in
    `start` itself."""
    override = os.environ.get(ENV_CACHE_DIR)
    if override:
        return Path(override)
    if config_path is not None:
        return Path(os.path.abspath(config_path)).parent / CACHE_DIR_NAME
    folder = Path(os.path.abspath(start))
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in _PROJECT_MARKERS):
            return candidate / CACHE_DIR_NAME
    return folder / CACHE_DIR_NAME


def clean(cache_dir: Path) -> bool:
    """Remove a cache folder; False when there was none. Refuses folders that are not ours."""
    if not cache_dir.is_dir():
        return False
    if not (cache_dir / "CACHEDIR.TAG").is_file() and not (cache_dir / INDEX_NAME).is_file():
        raise OSError(f"{cache_dir} does not look like a rocmlint cache, not removing it")
    shutil.rmtree(cache_dir)
    return True


# ---------------------------------------------------------------------------------------------------
# Keys


def code_fingerprint() -> str:
    """rocmlint's version plus the stat of every module and data file it runs (rules included), so an
    edited rule in a development checkout never serves results computed by its old code."""
    import rocmlint
    import rocmlint.rules

    digest = hashlib.blake2b(__version__.encode(), digest_size=16)
    folders = {Path(p) for p in rocmlint.__path__} | {Path(p) for p in rocmlint.rules.__path__}
    for folder in sorted(folders):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".toml")):
                    stat = os.stat(os.path.join(dirpath, name))
                    digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    for package in ("libcst", "tree-sitter", "tree-sitter-cuda"):
        digest.update(_distribution_version(package).encode())
    return digest.hexdigest()


def _distribution_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{name}={version(name)};"
    except PackageNotFoundError:
        return f"{name}=?;"


def settings_key(settings: Settings) -> str:
    """Everything in Settings that can change one file's diagnostics (not exclude/gitignore, which
    only decide which files are checked)."""
    # The selection as written, not `enabled_codes`: resolving it imports every rule module, which a
    # warm run otherwise never needs. Same key for the same rules (the code fingerprint covers them).
    parts = (
        str(settings.root),
        (settings.select, settings.extend_select, settings.ignore, settings.command_line),
        settings.per_file_ignores,
        settings.rocm_guards,
        settings.rocm_macros,
        settings.portable_macros,
        settings.target_archs,
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


# ---------------------------------------------------------------------------------------------------
# Reports <-> compact tuples (marshal-able: str, int, bytes, tuples, None)


def encode_report(report: FileReport) -> tuple:
    # Tracebacks too: a rule that hits a RecursionError (ROC001 "nested too deep") does so on every
    # run, and --verbose still shows why.
    return (tuple(_encode_diagnostic(d, report.path) for d in report.diagnostics), tuple(report.tracebacks))


def _encode_diagnostic(d: Diagnostic, path: str) -> tuple:
    fix = None
    if d.fix is not None:
        edits = tuple(
            (e.start, e.end, e.content, e.location.line, e.location.column, e.end_location.line, e.end_location.column)
            for e in d.fix.edits
        )
        fix = (d.fix.message, edits, d.fix.applicability.value)
    return (
        None if d.path == path else d.path,  # the file's own path is implied by the entry
        d.code,
        d.name,
        d.message,
        d.severity.value,
        d.location.line,
        d.location.column,
        d.end_location.line,
        d.end_location.column,
        fix,
        d.url,
        d.noqa_line,
    )


def decode_report(path: str, encoded: tuple) -> FileReport:
    """Raises (TypeError, ValueError, ...) on anything malformed; the caller discards the entry."""
    diagnostics, tracebacks = encoded
    if not all(isinstance(trace, str) for trace in tracebacks):
        raise TypeError("traceback is not a string")
    return FileReport(path, [_decode_diagnostic(item, path) for item in diagnostics], tracebacks=list(tracebacks))


def _decode_diagnostic(item: tuple, path: str) -> Diagnostic:
    own_path, code, name, message, severity, line, column, end_line, end_column, fix, url, noqa_line = item
    decoded_fix = None
    if fix is not None:
        fix_message, edits, applicability = fix
        decoded_fix = Fix(
            fix_message,
            tuple(Edit(s, e, content, Location(l1, c1), Location(l2, c2)) for s, e, content, l1, c1, l2, c2 in edits),
            Applicability(applicability),
        )
    for text in (code, name, message):
        if not isinstance(text, str):
            raise TypeError("diagnostic text is not a string")
    return Diagnostic(
        path=path if own_path is None else own_path,
        code=code,
        name=name,
        message=message,
        severity=Severity(severity),
        location=Location(int(line), int(column)),
        end_location=Location(int(end_line), int(end_column)),
        fix=decoded_fix,
        url=url,
        noqa_line=noqa_line,
    )


def cacheable(report: FileReport) -> bool:
    """Filesystem warnings and rule crashes (ROC900) are worth retrying next time, not remembering."""
    return not report.warnings and all(d.code != "ROC900" for d in report.diagnostics)


# ---------------------------------------------------------------------------------------------------
# Dependencies of Python results on other files


class DependencyRecorder(ProjectIndex):
    """A ProjectIndex that notes every file its answers depended on, per checked file.

    The index caches symbol values across files, so the files one symbol's value was computed from
    are remembered with it and credited again to every later file that asks for the same symbol.
    """

    def __init__(self, rocm_guards: frozenset[str] = frozenset()) -> None:
        super().__init__(rocm_guards)
        self._frames: list[set[str]] = []
        self._symbol_files: dict[tuple[Path, str, frozenset[str]], frozenset[str]] = {}

    def start_file(self) -> None:
        self._frames = [set()]

    def finish_file(self) -> set[str]:
        found = self._frames[0] if self._frames else set()
        self._frames = []
        return found

    def _note(self, *paths: str) -> None:
        if self._frames:
            self._frames[-1].update(paths)

    def _find_module(self, parts: tuple[str, ...], roots: tuple[Path, ...]) -> Path | None:
        # Every candidate, found or not: creating `pkg/env.py` later can change the answer.
        for root in roots:
            base = root.joinpath(*parts)
            self._note(str(base.with_suffix(".py")), str(base / "__init__.py"))
        return super()._find_module(parts, roots)

    def _symbol(self, module_file: Path, symbol: str, guards: frozenset[str]) -> object:
        key = (module_file, symbol, guards)
        known = self._symbol_files.get(key)
        if known is not None:
            self._note(*known)
            return super()._symbol(module_file, symbol, guards)
        if key in self._in_progress:  # an import cycle: the answer depends on that module too
            self._note(str(module_file))
            return super()._symbol(module_file, symbol, guards)
        self._frames.append(set())
        try:
            return super()._symbol(module_file, symbol, guards)
        finally:
            files = self._frames.pop()
            files.add(str(module_file))
            files.update(package_chain(str(module_file)))
            self._symbol_files[key] = frozenset(files)
            self._note(*files)


def package_chain(path: str) -> list[str]:
    """The `__init__.py` files package_of() looks at for `path` (each one found, and the first
    missing one): they decide the file's package name and import roots."""
    found = []
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        marker = os.path.join(folder, "__init__.py")
        found.append(marker)
        if not os.path.isfile(marker) or os.path.dirname(folder) == folder:
            return found
        folder = os.path.dirname(folder)


# ---------------------------------------------------------------------------------------------------
# The index


@dataclass
class Entry:
    display: str
    settings: str
    stat: Stat
    digest: bytes
    dependencies: Dependencies
    report: tuple

    def as_tuple(self) -> tuple:
        return (self.display, self.settings, self.stat, self.digest, self.dependencies, self.report)

    @classmethod
    def from_tuple(cls, value: object) -> Entry:
        display, settings, stat, digest, dependencies, report = value  # type: ignore[misc]
        if not (isinstance(display, str) and isinstance(settings, str) and isinstance(digest, bytes)):
            raise TypeError("bad entry fields")
        size, mtime = stat
        deps = tuple((str(p), None if s is None else (int(s[0]), int(s[1]))) for p, s in dependencies)
        if not isinstance(report, tuple):
            raise TypeError("bad report")
        return cls(display, settings, (int(size), int(mtime)), digest, deps, report)


@dataclass
class Lookup:
    """A candidate's cache state: its absolute path, settings key, and (on a hit) the stored report."""

    key: str
    settings: str
    report: FileReport | None = None


@dataclass
class Cache:
    folder: Path
    warn: Warn
    entries: dict[str, Entry] = field(default_factory=dict)
    fingerprint: str = ""
    dirty: bool = False
    _stats: dict[str, Stat | None] = field(default_factory=dict)
    _settings_keys: dict[int, tuple[Settings, str]] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path, warn: Warn) -> Cache:
        cache = cls(folder, warn, fingerprint=code_fingerprint())
        cache._load()
        return cache

    # -- reading ------------------------------------------------------------------------------------

    def _load(self) -> None:
        path = self.folder / INDEX_NAME
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as error:
            self.warn(f"{path}: cannot read the cache ({error.strerror or error}), checking without it")
            return
        payload = _verified_payload(blob)
        if payload is None:
            self.warn(f"{path}: the cache index is corrupted or truncated, discarded")
            return
        try:
            header, raw_entries = marshal.loads(payload)
        except Exception:  # noqa: BLE001 - any malformed payload means "no cache", never a crash
            self.warn(f"{path}: the cache index cannot be decoded, discarded")
            return
        if header != (_FORMAT, self.fingerprint) or not isinstance(raw_entries, dict):
            return  # another rocmlint version or code: silently start over
        for key, raw in raw_entries.items():
            try:
                self.entries[key] = Entry.from_tuple(raw)
            except Exception:  # noqa: BLE001 - one bad entry is dropped, the rest are fine
                self.warn(f"{path}: discarded a malformed cache entry for {key}")
                self.dirty = True

    def settings_key(self, settings: Settings) -> str:
        memo = self._settings_keys.get(id(settings))
        if memo is None or memo[0] is not settings:
            memo = (settings, settings_key(settings))
            self._settings_keys[id(settings)] = memo
        return memo[1]

    def stat(self, path: str) -> Stat | None:
        """Memoised per run: an `__init__.py` is a dependency of every module in its package."""
        if path not in self._stats:
            self._stats[path] = stat_of(path)
        return self._stats[path]

    def lookup(self, path: Path, settings: Settings) -> Lookup:
        display = str(path)
        key = os.path.abspath(display)
        lookup = Lookup(key, self.settings_key(settings))
        entry = self.entries.get(key)
        if entry is None or entry.display != display or entry.settings != lookup.settings:
            return lookup
        if not self._content_unchanged(key, entry):
            return lookup
        if any(self.stat(dep) != stat for dep, stat in entry.dependencies):
            return lookup
        try:
            lookup.report = decode_report(display, entry.report)
        except Exception:  # noqa: BLE001 - a malformed stored report is discarded, never trusted
            self.warn(f"{self.folder / INDEX_NAME}: discarded a malformed cache entry for {display}")
            del self.entries[key]
            self.dirty = True
        return lookup

    def _content_unchanged(self, key: str, entry: Entry) -> bool:
        current = self.stat(key)
        if current is None or current[0] != entry.stat[0]:
            return False
        if current == entry.stat and current[1] != _UNTRUSTED_MTIME:
            return True
        # Same size, other (or untrusted) mtime: the bytes decide.
        try:
            with open(key, "rb") as handle:
                digest = content_hash(handle.read())
        except OSError:
            return False
        if digest != entry.digest:
            return False
        entry.stat = current
        self.dirty = True
        return True

    # -- writing ------------------------------------------------------------------------------------

    def store(
        self, lookup: Lookup, report: FileReport, stat: Stat | None, digest: bytes | None, dependencies: Iterable[str]
    ) -> None:
        """Remember a freshly computed report; `stat`/`digest` are of the bytes that were checked."""
        if stat is None or digest is None or not cacheable(report):
            if self.entries.pop(lookup.key, None) is not None:
                self.dirty = True
            return
        deps = tuple((dep, self.stat(dep)) for dep in sorted(set(dependencies) - {lookup.key}))
        stat = _trusted(*stat)
        self.entries[lookup.key] = Entry(report.path, lookup.settings, stat, digest, deps, encode_report(report))
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_markers(self.folder)
            payload = marshal.dumps(((_FORMAT, self.fingerprint), {k: e.as_tuple() for k, e in self.entries.items()}))
            blob = _MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() + payload
            _atomic_write(self.folder / INDEX_NAME, blob)
            self.dirty = False
        except OSError as error:
            self.warn(f"{self.folder}: cannot write the cache ({error.strerror or error})")


def _verified_payload(blob: bytes) -> bytes | None:
    header = len(_MAGIC) + _DIGEST_SIZE
    if len(blob) < header or not blob.startswith(_MAGIC):
        return None
    digest, payload = blob[len(_MAGIC) : header], blob[header:]
    if hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() != digest:
        return None
    return payload


def _write_markers(folder: Path) -> None:
    """Keep the cache out of git and out of backups (the CACHEDIR.TAG convention), as ruff does."""
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Created by rocmlint automatically.\n*\n")
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# Created by rocmlint: https://bford.info/cachedir/\n")


def _atomic_write(path: Path, blob: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(blob)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
