"""Checks many files: cache lookups in this process, the misses over a process pool (`--jobs`).

Work goes out in chunks of files (one task per chunk keeps IPC small: each chunk carries its few
distinct Settings once) and comes back as FileReports placed by index, so the output never depends
on which worker finished first: `--jobs 2` prints exactly what `--jobs 1` prints.

Each worker builds its own Engine (and so its own ProjectIndex, the cross-module cache) on first
use. The C++ files that need a project model are checked by a process of their own, forked before the Python
files' import index is built: it builds the C++ model and forks their pool, while this process builds the index
and runs the Python files' pool, so the two serial builds run side by side. A worker that dies (a crash in a native parser, the OOM killer) breaks the whole pool in
concurrent.futures; the files of every unfinished chunk are then re-run one at a time in a fresh
single-worker pool, and a file that kills that worker too is reported as ROC900 instead of hanging
or aborting the run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmlint.cache import Cache, Dependencies, Stat, content_hash, stat_of, stat_tuple
from rocmlint.collector import batch_collection_paused, collection_paused
from rocmlint.config import Settings
from rocmlint.discovery import Candidate
from rocmlint.file_report import FileReport
from rocmlint.source import language_of

if TYPE_CHECKING:
    import multiprocessing.connection
    import multiprocessing.context
    from concurrent.futures import Future, ProcessPoolExecutor

    from rocmlint.cuda.project import ProjectVerdict
    from rocmlint.engine import Engine

# Below this many files to check, starting workers costs more than it saves.
POOL_MIN_FILES = 16
# Files per chunk: small enough that one slow file does not leave a core idle at the end, large
# enough that IPC and scheduling stay a small fraction of the work.
CHUNK_MAX_FILES = 32
CHUNKS_PER_WORKER = 8

Warn = Callable[[str], None]


def default_jobs() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Checked:
    """One file's report plus what the cache needs to remember it."""

    report: FileReport
    stat: Stat | None = None  # taken before reading the checked bytes
    digest: bytes | None = None  # hash of the checked bytes; None when they were not read
    dependencies: Dependencies = ()  # other files the result depends on (Python cross-module), with stats


@dataclass(frozen=True)
class EngineOptions:
    remember: bool = False  # record what the cache needs (hash, dependencies)
    prefilter: bool = True


# The engine imports tree-sitter and (on first use) every rule module: only files that are
# checked for real need it, so a run served entirely from the cache never imports it.


def make_engine(options: EngineOptions) -> Engine:
    from rocmlint.dependencies import DependencyRecorder
    from rocmlint.engine import Engine
    from rocmlint.python.project import ProjectIndex

    project = DependencyRecorder() if options.remember else ProjectIndex()
    return Engine(project, prefilter=options.prefilter)


def check_file(engine: Engine, path: Path, settings: Settings, remember: bool) -> Checked:
    """What Engine.check_path does, keeping the stat, hash and dependencies of what was checked."""
    from rocmlint.dependencies import DependencyRecorder, package_chain
    from rocmlint.engine import MAX_FILE_BYTES

    display = str(path)
    since = time.time_ns()  # before the stat and the read: see cache.stat_of on racy stats
    try:
        status = os.stat(display)
        if status.st_size > MAX_FILE_BYTES:
            return Checked(engine.check_path(path, settings))
        with open(display, "rb") as handle:
            data = handle.read()
    except OSError:
        return Checked(engine.check_path(path, settings))  # it words the warning
    if not remember:
        return Checked(engine.check_bytes(display, data, settings))
    recorder = engine.project if isinstance(engine.project, DependencyRecorder) else None
    if recorder is not None:
        recorder.start_file()
    try:
        report = engine.check_bytes(display, data, settings)
    finally:
        dependencies = recorder.finish_file() if recorder is not None else {}
    if not report.skipped and language_of(display) == "python":
        # Stat-ed after the check read them: one that changed since `since` comes back untrusted
        # and never matches, so the stored stat never describes newer bytes than were read.
        for marker in package_chain(display):
            dependencies.setdefault(marker, stat_of(marker, since))
    return Checked(report, stat_tuple(status, since), content_hash(data), tuple(sorted(dependencies.items())))


def preload_engine(cuda: bool) -> None:
    """Import the engine and every rule module here, before forking workers, so each inherits them
    instead of importing them again; with `cuda`, compile the C++ front end's queries too."""
    from rocmlint.engine import compile_cuda_queries
    from rocmlint.registry import all_rules

    all_rules()
    if cuda:
        compile_cuda_queries()


def return_freed_memory() -> None:
    """Hand the C heap's free pages back to the system: before forking workers, and in each worker after a chunk.
    Building a project model reads every file of its tree and frees the texts after (PyTorch: about 45 MB for the
    C++ model, 13 MB for the import index), and CPython's parser takes about one and a half times the tree it
    returns while it builds it (a 0.5 MB module: a 39 MB tree, 55 MB more freed after); glibc keeps freed pages
    mapped, so every process forked after would map them too, and a worker would keep what its largest files freed
    until it exits. About a millisecond per call. Where the C library has no `malloc_trim` (musl, macOS), nothing is
    done."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _needs_project_model(candidate: Candidate) -> bool:
    return candidate.settings.project_model and language_of(candidate.display) == "cuda"


# ---------------------------------------------------------------------------------------------------
# The worker side

_worker_engine: Engine | None = None
_worker_options: EngineOptions | None = None

Chunk = tuple[tuple[Settings, ...], tuple[tuple[str, int], ...]]  # (settings table, (path, settings index))


def _init_worker(options: EngineOptions) -> None:
    global _worker_engine, _worker_options
    _worker_options = options
    _worker_engine = None  # built on first use, after any fork-inherited state is gone


def _run_chunk(chunk: Chunk) -> list[Checked]:
    global _worker_engine
    assert _worker_options is not None
    if _worker_engine is None:
        _worker_engine = make_engine(_worker_options)
    table, items = chunk
    with batch_collection_paused():
        checked = [
            check_file(_worker_engine, Path(path), table[index], _worker_options.remember) for path, index in items
        ]
    return_freed_memory()  # the chunk's trees and parses are freed: their pages go back before the next chunk
    return checked


# ---------------------------------------------------------------------------------------------------
# The parent side


def check_candidates(
    candidates: Sequence[Candidate],
    jobs: int,
    cache: Cache | None,
    warn: Warn,
    prefilter: bool = True,
    pool_min_files: int = POOL_MIN_FILES,
    keep_models: bool = False,
) -> list[FileReport]:
    """Reports for `candidates`, in their order: cached ones from `cache`, the rest computed. `keep_models`: build
    the C++ project models in this process, which checks again after (fixing) and would otherwise build them again."""
    reports: list[FileReport | None] = [None] * len(candidates)
    with collection_paused():
        lookups = [cache.lookup(c.display, c.absolute, c.settings) for c in candidates] if cache is not None else None
    todo = [i for i in range(len(candidates)) if lookups is None or lookups[i].report is None]
    if lookups is not None:
        for i, lookup in enumerate(lookups):
            reports[i] = lookup.report
    options = EngineOptions(remember=cache is not None, prefilter=prefilter)
    tasks = [candidates[i] for i in todo]
    if not tasks:
        results: list[Checked] = []
    elif jobs <= 1 or len(tasks) < max(pool_min_files, 2):
        engine = make_engine(options)
        with batch_collection_paused():
            results = [check_file(engine, c.path, c.settings, options.remember) for c in tasks]
    else:
        results = _check_in_pool(tasks, jobs, options, warn, cache, keep_models)
    # Storing makes no cycles either, and after checking, the heap holds the engine's many objects.
    with collection_paused():
        for i, checked in zip(todo, results, strict=True):
            reports[i] = checked.report
            if cache is not None and lookups is not None:
                cache.store(lookups[i], checked.report, checked.stat, checked.digest, checked.dependencies)
        if cache is not None:
            cache.save()
    return [r for r in reports if r is not None]


def _chunks(tasks: Sequence[Candidate], jobs: int) -> list[list[int]]:
    size = max(1, min(CHUNK_MAX_FILES, -(-len(tasks) // (jobs * CHUNKS_PER_WORKER))))
    return [list(range(start, min(start + size, len(tasks)))) for start in range(0, len(tasks), size)]


def _payload(tasks: Sequence[Candidate], indices: list[int]) -> Chunk:
    """Each distinct Settings once per chunk (there are few: one per configuration file)."""
    table: list[Settings] = []
    position: dict[int, int] = {}
    items = []
    for i in indices:
        settings = tasks[i].settings
        if id(settings) not in position:
            position[id(settings)] = len(table)
            table.append(settings)
        items.append((tasks[i].display, position[id(settings)]))
    return tuple(table), tuple(items)


def _size_hint(tasks: Sequence[Candidate], indices: list[int], cache: Cache | None) -> int:
    """Bytes in a chunk, from the cache's memoised stats when there is one (the lookups took them)."""
    total = 0
    for i in indices:
        if cache is not None:
            stat = cache.stat(tasks[i].absolute)
            total += stat[0] if stat else 0
            continue
        with contextlib.suppress(OSError):
            total += os.stat(tasks[i].absolute).st_size
    return total


# The pool's modules (concurrent.futures, multiprocessing and what they import) are imported only
# when a pool runs: a run served from the cache, or with a few misses, never starts one.


def _forks() -> bool:
    """Whether pools fork: workers start in milliseconds with rocmlint, tree-sitter and the rules already imported.
    Not on macOS, where forking a process that touched system frameworks is unsafe."""
    return sys.platform.startswith("linux")


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    return multiprocessing.get_context("fork") if _forks() else multiprocessing.get_context()


def _check_in_pool(
    tasks: Sequence[Candidate], jobs: int, options: EngineOptions, warn: Warn, cache: Cache | None, keep_models: bool
) -> list[Checked]:
    """Files that need no C++ project model start in a first pool, forked once the Python files' import indexes
    are built (rocmlint/python/importers.py: inherited by its workers). The files that need one are checked by a
    process forked before that (`_ModelledRun`): it builds the C++ models and forks a pool of its own, whose workers
    inherit them, so the index and the models are built side by side. Without fork (or with `keep_models`) this
    process builds the models once the first pool runs, and forks the second pool after that."""
    results: list[Checked | None] = [None] * len(tasks)
    lost: list[int] = []
    modelled = [i for i, task in enumerate(tasks) if _needs_project_model(task)]
    plain = [i for i, task in enumerate(tasks) if not _needs_project_model(task)]
    groups = [(group, language) for group, language in ((plain, "python"), (modelled, "cuda")) if group]
    aside_runs = len(groups) == 2 and _forks() and not keep_models
    # The C++ queries are compiled here only for pools this process forks: a process checking the modelled files
    # aside compiles them itself, beside this process's import index instead of before both.
    cuda_here = any(language_of(tasks[i].display) == "cuda" for i in (plain if aside_runs else range(len(tasks))))
    preload_engine(cuda=cuda_here)
    aside = None
    if aside_runs:
        aside = _ModelledRun(tasks, modelled, jobs, options, cache)
        groups = groups[:1]
    verdicts = aside.verdicts if aside is not None else None
    # The import index is read by up to `jobs` processes, unless the C++ models are being built beside it.
    index_processes = jobs if aside is None and _forks() else 1
    lost += _check_groups(
        tasks, groups, jobs, options, cache, results, verdicts_from=verdicts, index_processes=index_processes
    )
    if aside is not None:
        lost += aside.finish(results)
    if lost:
        warn(f"a worker process died; checking the {len(lost)} unfinished files one at a time")
        for i, checked in zip(sorted(lost), _check_isolated([tasks[i] for i in sorted(lost)], options), strict=True):
            results[i] = checked
    return [r if r is not None else Checked(FileReport(tasks[i].display)) for i, r in enumerate(results)]


def _check_groups(
    tasks: Sequence[Candidate],
    groups: list[tuple[list[int], str]],
    jobs: int,
    options: EngineOptions,
    cache: Cache | None,
    results: list[Checked | None],
    verdicts_to: Callable[[dict[Path, ProjectVerdict]], None] | None = None,
    verdicts_from: Callable[[], dict[Path, ProjectVerdict]] | None = None,
    index_processes: int = 1,
) -> list[int]:
    """Check each group of `tasks` (indices, with the language whose project models it needs) in a pool of its own,
    forked once those models are built here; the next group's models are built while the pools before it run.
    Whether projects are written for AMD goes `verdicts_to` another process, or comes `verdicts_from` one (see
    `build_project_models`); the Python files' import index is read by up to `index_processes` processes. Results
    go to `results`; returns the indices whose worker died."""
    from concurrent.futures import ProcessPoolExecutor

    from rocmlint.engine import build_project_models, compile_cuda_queries

    lost: list[int] = []
    executors: list[ProcessPoolExecutor] = []
    futures: dict[Future[list[Checked]], list[int]] = {}
    try:
        for group, language in groups:
            files = [(tasks[i].path, tasks[i].settings) for i in group]
            # A build leaves next to no cyclic garbage (9 objects on PyTorch): collections would only rescan it.
            with collection_paused():
                build_project_models(
                    files,
                    language,
                    verdicts_to=verdicts_to,
                    verdicts_from=verdicts_from,
                    index_processes=index_processes,
                )
            return_freed_memory()
            if language == "cuda":  # compiled once the verdicts are sent (see _check_in_pool), for the workers
                compile_cuda_queries()
            executor = ProcessPoolExecutor(
                max_workers=jobs, mp_context=_pool_context(), initializer=_init_worker, initargs=(options,)
            )
            executors.append(executor)
            futures.update(_submit(executor, tasks, group, jobs, cache, lost))
        _collect(futures, results, lost)
    finally:
        for executor in executors:
            executor.shutdown(wait=True, cancel_futures=True)
    return lost


class _ModelledRun:
    """The files of `group` checked by a forked process: it builds their C++ project models, checks them in a pool
    of its own and sends back the results (and the files whose worker died). Forked, so it starts with what this
    process has imported and compiled, and needs nothing pickled. First it sends whether their projects are written
    for AMD (`amd_verdict_for`), which this process's Python files need: decided there from the trees it reads anyway,
    once their build files settle it, so no process reads them again for it."""

    def __init__(
        self, tasks: Sequence[Candidate], group: list[int], jobs: int, options: EngineOptions, cache: Cache | None
    ) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")  # only where pools fork (`_forks`)
        self.group = group
        self._receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(target=_run_modelled, args=(sender, tasks, group, jobs, options, cache))
        self._process.start()
        sender.close()  # this process's copy: the receiver sees the end of the pipe when the child's closes
        self._verdicts: dict[Path, ProjectVerdict] | None = None

    def verdicts(self) -> dict[Path, ProjectVerdict]:
        """The process's first message: its projects' written-for-AMD verdicts (none when it died before sending)."""
        if self._verdicts is None:
            try:
                self._verdicts = self._receiver.recv()
            except (EOFError, OSError):
                self._verdicts = {}
        return self._verdicts

    def finish(self, results: list[Checked | None]) -> list[int]:
        """Wait for the results and put them in `results`; returns the files to check again (all of them when the
        process died before sending)."""
        self.verdicts()
        try:
            found, lost = self._receiver.recv()
        except (EOFError, OSError):
            found, lost = [], list(self.group)
        finally:
            self._receiver.close()
            self._process.join()
        for i, checked in found:
            results[i] = checked
        return lost


def _run_modelled(
    sender: multiprocessing.connection.Connection,
    tasks: Sequence[Candidate],
    group: list[int],
    jobs: int,
    options: EngineOptions,
    cache: Cache | None,
) -> None:
    results: list[Checked | None] = [None] * len(tasks)
    lost = _check_groups(tasks, [(group, "cuda")], jobs, options, cache, results, verdicts_to=sender.send)
    sender.send(([(i, results[i]) for i in group if results[i] is not None], lost))
    sender.close()


def _submit(
    executor: ProcessPoolExecutor,
    tasks: Sequence[Candidate],
    group: list[int],
    jobs: int,
    cache: Cache | None,
    lost: list[int],
) -> dict[Future[list[Checked]], list[int]]:
    """The chunks of `group` (indices into `tasks`), biggest first: a large file started last would leave
    the other cores idle."""
    from concurrent.futures.process import BrokenProcessPool

    members = [tasks[i] for i in group]
    chunks = [[group[j] for j in chunk] for chunk in _chunks(members, jobs)]
    chunks.sort(key=lambda chunk: -_size_hint(tasks, chunk, cache))
    submitted: dict[Future[list[Checked]], list[int]] = {}
    for chunk in chunks:
        try:
            submitted[executor.submit(_run_chunk, _payload(tasks, chunk))] = chunk
        except BrokenProcessPool:  # workers already died: submit refuses new work
            lost.extend(chunk)
    return submitted


def _collect(futures: dict[Future[list[Checked]], list[int]], results: list[Checked | None], lost: list[int]) -> None:
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            chunk = futures[future]
            try:
                for i, checked in zip(chunk, future.result(), strict=True):
                    results[i] = checked
            except BrokenProcessPool:
                lost.extend(chunk)


def _check_isolated(tasks: Sequence[Candidate], options: EngineOptions) -> list[Checked]:
    """One file per task in a single-worker pool, so a file that kills its worker is known exactly;
    the pool is replaced after each death."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    results: list[Checked] = []
    executor: ProcessPoolExecutor | None = None
    try:
        for candidate in tasks:
            if executor is None:
                executor = ProcessPoolExecutor(
                    max_workers=1, mp_context=_pool_context(), initializer=_init_worker, initargs=(options,)
                )
            try:
                results.append(executor.submit(_run_chunk, _payload([candidate], [0])).result()[0])
            except BrokenProcessPool:
                executor.shutdown(wait=True, cancel_futures=True)
                executor = None
                results.append(Checked(_worker_died(candidate)))
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
    return results


def _worker_died(candidate: Candidate) -> FileReport:
    from rocmlint.engine import INTERNAL_ERROR, Engine

    path = candidate.display
    message = "the worker process checking this file died (a crash in a parser or rule, or out of memory)"
    diagnostic = Engine._tool(INTERNAL_ERROR, path, message)
    report = FileReport(path)
    report.diagnostics = Engine()._filter([diagnostic], candidate.settings, path, None)
    report.tracebacks.append(f"{path}: the worker process checking this file died\n")
    return report
