"""heap.settle: a running service's collector leaves a big snapshot's temporaries alone."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from browserdeck.util import heap


@pytest.fixture
def gc_restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def _collections_during(work: Callable[[], None]) -> int:
    started: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(note)
    try:
        work()
    finally:
        gc.callbacks.remove(note)
    return len(started)


def _snapshot_burst() -> None:
    # As many containers as a snapshot of the 2,000-element table has alive at once (a
    # node, a list of children and a tuple per line, a row per ref), freed at the end.
    alive = [([], (n,)) for n in range(5_000)]
    del alive


def test_a_big_snapshots_temporaries_set_off_no_collection(gc_restored: None) -> None:
    gc.set_threshold(700, 10, 10)  # CPython's default
    assert _collections_during(_snapshot_burst) > 0  # the cost this removes
    heap.settle()
    assert gc.get_threshold()[0] >= heap.YOUNG_THRESHOLD
    assert _collections_during(_snapshot_burst) == 0


def test_what_is_loaded_when_the_service_runs_is_frozen(gc_restored: None) -> None:
    gc.unfreeze()
    heap.settle()
    assert gc.get_freeze_count() > 1000  # modules, classes: out of every collection
    assert gc.get_count()[0] < 1000
