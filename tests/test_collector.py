"""The cyclic collector stays paused for a whole batch of files, which is sound only while a check leaves no
reference cycle behind (rocmlint/collector.py)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmlint.collector import batch_collection_paused
from rocmlint.config import Settings
from rocmlint.parallel import EngineOptions, check_file, make_engine
from rocmlint.source import language_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIXTURE_FILES = sorted(path for path in FIXTURES.rglob("*") if path.is_file() and language_of(str(path)) is not None)


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    """`gc.garbage` filled with what each collection finds unreachable, instead of freed."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_the_fixtures_hold_both_languages() -> None:
    languages = Counter(language_of(str(path)) for path in FIXTURE_FILES)
    assert languages["python"] >= 10
    assert languages["cuda"] >= 10


def test_checking_a_file_leaves_no_reference_cycle(saved_garbage: list[object]) -> None:
    engine = make_engine(EngineOptions(remember=True, prefilter=True))
    settings = Settings(root=FIXTURES)
    cycles: dict[str, Counter[str]] = {}
    for path in FIXTURE_FILES:
        gc.collect()
        saved_garbage.clear()
        check_file(engine, path, settings, remember=True)
        gc.collect()  # what it finds, and what any collection since the check found, is in saved_garbage
        if saved_garbage:
            cycles[str(path.relative_to(FIXTURES))] = Counter(type(item).__name__ for item in saved_garbage)
    assert cycles == {}


def test_a_batch_leaves_the_collector_as_it_found_it_and_its_survivors_frozen() -> None:
    frozen_before = gc.get_freeze_count()
    try:
        with batch_collection_paused():
            assert not gc.isenabled()
            survivor = [object()]
            assert any(item is survivor for item in gc.get_objects(generation=0))
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen_before
        # Frozen: in no generation, so no later collection rescans it.
        assert not any(item is survivor for generation in range(3) for item in gc.get_objects(generation=generation))
        gc.disable()
        with batch_collection_paused():
            pass
        assert not gc.isenabled()  # a collector paused before the batch stays paused
    finally:
        gc.enable()
        gc.unfreeze()
