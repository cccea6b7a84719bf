"""Pausing CPython's cyclic garbage collector where it only costs time."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic collector paused for the duration; restored to its previous state after.

    The collector runs whenever allocations outnumber frees by a threshold, and each full collection
    walks every live container object. Building a syntax tree allocates millions of objects that stay
    alive until the file is done, so collections during one file's check rescan that growing tree again
    and again for nothing (over a quarter of the Python CPU time on PyTorch's files), and the warm path
    (discovery, loading the cache index, lookups) allocates a few hundred thousand objects refcounting
    alone frees. Paused per file, not per run: whatever cycles a check leaves behind are collected after
    it, so memory stays bounded by the largest file.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def batch_collection_paused() -> Iterator[None]:
    """The cyclic collector paused while a batch of files is checked (`rocmlint check`), and what the batch
    leaves alive moved out of its reach after.

    A check leaves no reference cycle behind (tests/test_collector.py checks every fixture), so a
    collection between two files finds nothing: it only rescans what the run keeps, the trees of
    neighbour modules and the import index, each time they move up a generation (a tenth of vLLM's CPU
    time). What is alive after the batch is that kept state and the reports; `gc.freeze` moves it to the
    permanent generation, so the collections of the rest of the run (storing, output) do not rescan it
    either. Objects there are still freed by reference counting.
    """
    with collection_paused():
        try:
            yield
        finally:
            gc.freeze()  # before the collector is back on
