"""A content-addressed result cache: `.rocmlint_cache/` next to the configuration in use (else in the cwd).

One index file holds, per checked file (by absolute path): the path as displayed, a key of the
file's Settings, its stat (size, mtime_ns, inode, ctime_ns), the hash of its bytes, the other files
its result depends on, and the FileReport in a compact form. The dependencies are rows of one table
of distinct (path, stat or None for "did not exist") pairs that the entries name by number: a C++
result depends on its whole include closure, which hundreds of files share (PyTorch: 380,000 pairs,
3,900 distinct), and each row is checked once per run however many entries name it.

A warm run therefore costs discovery plus one stat per file and per dependency, as git's index and
ruff's cache do: a file whose stat is unchanged keeps its result unread. Any other stat (a `touch`,
a checkout, an edit whose mtime was set back: the ctime still moves) makes the bytes decide, and a
matching hash keeps the stored report. A stat taken less than RACY_NS after the file last changed
is stored untrusted ("racy git"): the file may change again within the same timestamp tick without
its stat changing, so its bytes are hashed on the next run, and such a dependency never matches.
The whole index is dropped when the rocmlint version or its code (rules included: an editable
install changes under the same version) differs.

Integrity: the index is one marshal payload behind a magic, a format number and a BLAKE2 digest; a
truncated or altered file fails the digest and is discarded with a warning, a structurally bad entry
is discarded on its own. marshal (not pickle) because loading it never runs code, whatever the
bytes. Writes go to a temporary file in the cache folder, then os.replace: two concurrent runs never
leave a torn index (the last writer wins; the loser's new entries are simply recomputed next time).

Nothing here imports the engine, a front end or a rule module: a run served entirely from the cache never
loads them. The dependencies of Python results are recorded by rocmlint/dependencies.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import rocmlint
from rocmlint import __version__
from rocmlint.config import Settings
from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from rocmlint.file_report import FileReport
from rocmlint.registry import rules_package

CACHE_DIR_NAME = ".rocmlint_cache"
INDEX_NAME = "index.bin"
ENV_CACHE_DIR = "ROCMLINT_CACHE_DIR"
_MAGIC = b"RLCACHE\0"
_FORMAT = 4
_DIGEST_SIZE = 32
# A file that changed this close to the moment its stat was taken may change again within the same
# timestamp tick without its stat changing (git's "racy clean" problem; FAT's mtime ticks are 2 s):
# such stats are stored untrusted.
RACY_NS = 2_000_000_000
_UNTRUSTED_MTIME = -1
_PARSERS = ("tree_sitter", "tree_sitter_cuda")  # modules whose version changes results

Stat = tuple[int, int, int, int]  # (st_size, st_mtime_ns or _UNTRUSTED_MTIME, st_ino, st_ctime_ns)
Dependency = tuple[str, "Stat | None"]  # another file a result depends on, with its stat then
Dependencies = tuple[Dependency, ...]
Warn = Callable[[str], None]


def content_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def stat_of(path: str, since_ns: int | None = None) -> Stat | None:
    """The stat of a file, None when it does not exist. `since_ns` is a time no later than the moment
    the file's bytes were (or will be) read, by default now: a file that changed less than RACY_NS
    before it comes back untrusted."""
    since_ns = time.time_ns() if since_ns is None else since_ns
    try:
        status = os.stat(path)
    except OSError:
        return None
    return stat_tuple(status, since_ns)


def stat_tuple(status: os.stat_result, since_ns: int) -> Stat:
    """What the cache keeps of `os.stat`'s result, untrusted when racy (see stat_of)."""
    # ctime too: setting the mtime back (os.utime, `touch -d`, `cp -p`) moves the ctime.
    last_change = max(status.st_mtime_ns, status.st_ctime_ns)
    mtime = _UNTRUSTED_MTIME if last_change > since_ns - RACY_NS else status.st_mtime_ns
    return (status.st_size, mtime, status.st_ino, status.st_ctime_ns)


def trusted(stat: Stat | None) -> bool:
    return stat is None or stat[1] != _UNTRUSTED_MTIME


# ---------------------------------------------------------------------------------------------------
# Where the cache lives


def cache_dir_for(config_path: Path | None, cwd: Path) -> Path:
    """`$ROCMLINT_CACHE_DIR`, else in the folder of the configuration file in use (`config_path`: the one
    `--config` names or the one found from the working directory up), else in the working directory: where
    ruff puts `.ruff_cache/`. Never chosen from the checked paths: `rocmlint check sub/` from the project
    root must not leave a cache in `sub/`."""
    override = os.environ.get(ENV_CACHE_DIR)
    if override:
        return Path(override)
    folder = Path(os.path.abspath(config_path)).parent if config_path is not None else cwd
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
    edited rule in a development checkout never serves results computed by its old code; plus the
    installed versions of the parsers, and CPython's version (its `ast` is the Python parser)."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=16)
    digest.update(sys.version.encode())
    folders = {Path(p) for p in rocmlint.__path__} | {Path(p) for p in rules_package().__path__}
    for folder in sorted(folders):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".toml")):
                    stat = os.stat(os.path.join(dirpath, name))
                    digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    for module in _PARSERS:
        digest.update(f"{module}={_installed_version(module)};".encode())
    return digest.hexdigest()


def _installed_version(module: str) -> str:
    """The `<name>-<version>.dist-info` folder next to an installed package (what importlib.metadata
    would read, without its 30 ms of imports on every run), or '?' when there is none."""
    from importlib.util import find_spec

    spec = find_spec(module)
    if spec is None or spec.origin is None:
        return "?"
    site = os.path.dirname(os.path.dirname(spec.origin))
    try:
        names = os.listdir(site)
    except OSError:
        return "?"
    found = sorted(
        name for name in names if name.startswith(f"{module}-") and name.endswith((".dist-info", ".egg-info"))
    )
    return ",".join(found) or "?"


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
        settings.nvidia_macros,
        settings.target_archs,
        settings.rocm_condition,  # the `#if` C++ fixes write
        settings.project_model,
        settings.show_hipified,
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


# ---------------------------------------------------------------------------------------------------
# Reports <-> compact tuples (marshal-able: str, int, bytes, tuples, None)


def encode_report(report: FileReport) -> tuple:
    # Tracebacks too: a rule that hits a RecursionError (ROC001 "nested too deep") does so on every
    # run, and --verbose still shows why.
    return (
        tuple(_encode_diagnostic(d, report.path) for d in report.diagnostics),
        tuple(report.tracebacks),
        tuple(report.gated_notes),
    )


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
    diagnostics, tracebacks, gated_notes = encoded
    if not all(isinstance(text, str) for text in (*tracebacks, *gated_notes)):
        raise TypeError("a traceback or note is not a string")
    found = [_decode_diagnostic(item, path) for item in diagnostics]
    return FileReport(path, found, tracebacks=list(tracebacks), gated_notes=list(gated_notes))


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
# The index


class Entry(NamedTuple):
    """One file's remembered result. Stored as a plain tuple (marshal takes no tuple subclasses) and
    checked field by field only when looked up: a field of the wrong type never compares equal, and
    one that cannot even be read makes the entry malformed."""

    display: str
    settings: str
    stat: Stat
    digest: bytes
    dependencies: tuple[int, ...]  # rows of Cache.dependency_table
    report: tuple


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
    # The distinct dependencies the entries name by row number, and each one's row.
    dependency_table: list[Dependency] = field(default_factory=list)
    _rows: dict[Dependency, int] = field(default_factory=dict)
    _stats: dict[str, Stat | None] = field(default_factory=dict)
    _settings_keys: dict[int, tuple[Settings, str]] = field(default_factory=dict)
    # The rows judged this run, and those of them whose file changed.
    _judged: set[int] = field(default_factory=set)
    _changed: set[int] = field(default_factory=set)

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
            header, *body = marshal.loads(payload)
            if header != (_FORMAT, self.fingerprint):
                return  # another rocmlint version or code: silently start over
            table, raw_entries = body
            if not isinstance(table, tuple) or not isinstance(raw_entries, dict):
                raise TypeError("not a table and a dict of entries")
            self._rows = dict(zip(table, range(len(table)), strict=True))
        except Exception:  # noqa: BLE001 - any malformed payload means "no cache", never a crash
            self.warn(f"{path}: the cache index cannot be decoded, discarded")
            return
        self.dependency_table = list(table)
        for key, raw in raw_entries.items():
            try:
                self.entries[key] = Entry(*raw)
            except TypeError:  # not a tuple of six fields: dropped, the rest are fine
                self._discard(key)

    def _discard(self, key: str) -> None:
        self.warn(f"{self.folder / INDEX_NAME}: discarded a malformed cache entry for {key}")
        self.entries.pop(key, None)
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

    def lookup(self, display: str, absolute: str, settings: Settings) -> Lookup:
        """The cache state of the file shown as `display`, whose absolute path is `absolute`."""
        lookup = Lookup(absolute, self.settings_key(settings))
        entry = self.entries.get(absolute)
        if entry is None or entry.display != display or entry.settings != lookup.settings:
            return lookup
        try:
            if self._content_unchanged(absolute, entry) and self._dependencies_unchanged(entry):
                lookup.report = decode_report(display, entry.report)
        except Exception:  # noqa: BLE001 - a malformed entry is discarded, never trusted
            self._discard(absolute)
        return lookup

    def _content_unchanged(self, key: str, entry: Entry) -> bool:
        current = self.stat(key)
        if current is None or current[0] != entry.stat[0]:
            return False
        if current == entry.stat and trusted(current):
            return True
        # Same size, another (or a racy) stat: the bytes decide.
        try:
            with open(key, "rb") as handle:
                digest = content_hash(handle.read())
        except OSError:
            return False
        if digest != entry.digest:
            return False
        if current != entry.stat:
            self.entries[key] = entry._replace(stat=current)
            self.dirty = True
        return True

    def _dependencies_unchanged(self, entry: Entry) -> bool:
        """Each row is judged at most once per run, however many entries name it; the set tests run in C."""
        rows = entry.dependencies
        if type(rows) is not tuple:
            raise TypeError("the dependencies are not a tuple of rows")
        if not self._judged.issuperset(rows):
            for row in rows:
                if row not in self._judged:
                    self._judge(row)
        return not self._changed or self._changed.isdisjoint(rows)

    def _judge(self, row: int) -> None:
        if not 0 <= row < len(self.dependency_table):  # a negative number would index from the end
            raise IndexError("a dependency is not a row of the table")
        dependency, stored = self.dependency_table[row]
        if not isinstance(dependency, str):
            raise TypeError("a dependency is not a path")
        if not trusted(stored) or self.stat(dependency) != stored:
            self._changed.add(row)
        self._judged.add(row)

    # -- writing ------------------------------------------------------------------------------------

    def store(
        self, lookup: Lookup, report: FileReport, stat: Stat | None, digest: bytes | None, dependencies: Dependencies
    ) -> None:
        """Remember a freshly computed report: `stat` and `digest` are of the bytes that were checked,
        `dependencies` the other files it depends on with their stats (taken by whoever checked it)."""
        if stat is None or digest is None or not cacheable(report):
            if self.entries.pop(lookup.key, None) is not None:
                self.dirty = True
            return
        rows = tuple(self._row_of(dependency) for dependency in dependencies if dependency[0] != lookup.key)
        self.entries[lookup.key] = Entry(report.path, lookup.settings, stat, digest, rows, encode_report(report))
        self.dirty = True

    def _row_of(self, dependency: Dependency) -> int:
        row = self._rows.setdefault(dependency, len(self.dependency_table))
        if row == len(self.dependency_table):
            self.dependency_table.append(dependency)
        return row

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_markers(self.folder)
            payload = marshal.dumps(((_FORMAT, self.fingerprint), *self._live_index()))
            blob = _MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() + payload
            atomic_write(self.folder / INDEX_NAME, blob)
            self.dirty = False
        except OSError as error:
            self.warn(f"{self.folder}: cannot write the cache ({error.strerror or error})")

    def _live_index(self) -> tuple[tuple[Dependency, ...], dict[str, tuple]]:
        """What save writes: the rows some entry names (renumbered when others died: a dependency's old
        stat once its importers were checked again) and the entries. An entry naming a number outside the
        table (malformed, and not looked up this run) is left out: it was never trusted."""
        table = frozenset(range(len(self.dependency_table)))
        entries = {key: entry for key, entry in self.entries.items() if _only_rows_of(entry.dependencies, table)}
        named: set[int] = set().union(*(entry.dependencies for entry in entries.values()))
        if len(named) == len(table):
            return tuple(self.dependency_table), {key: tuple(entry) for key, entry in entries.items()}
        live = [row for row in range(len(self.dependency_table)) if row in named]
        renumbered = dict(zip(live, range(len(live)), strict=True))
        rows = tuple(self.dependency_table[row] for row in live)
        return rows, {
            key: tuple(entry._replace(dependencies=tuple(map(renumbered.__getitem__, entry.dependencies))))
            for key, entry in entries.items()
        }


def _only_rows_of(rows: object, table: frozenset[int]) -> bool:
    try:
        return type(rows) is tuple and table.issuperset(rows)
    except TypeError:  # an unhashable element
        return False


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
        tag.write_text(
            "Signature: 8a477f597d28d172789f06886806bc55\n# Created by rocmlint: https://bford.info/cachedir/\n"
        )


def atomic_write(path: Path, blob: bytes) -> None:
    """Replace `path` with `blob` through a temporary in its folder: a reader sees the old or the new
    content, never part of it, and a failed write leaves no temporary behind."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(blob)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
