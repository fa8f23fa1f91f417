"""hdeeprm._gc: full collections suspended inside a replay, young ones kept, state restored;
the heap frozen around a training run."""

from __future__ import annotations

import gc
import weakref

import pytest

from hdeeprm._gc import gc_paused, heap_frozen, young_collections_only


class Node:
    """A tracked object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def generations_collected(work) -> list[int]:  # noqa: ANN001
    """Generations of the automatic collections that ran during ``work()``."""
    seen: list[int] = []

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(callback)
    try:
        work()
    finally:
        gc.callbacks.remove(callback)
    return seen


def grow_long_lived_heap() -> list[list[None]]:
    """Keep as many new tracked objects as the heap already holds: enough young collections
    (10 gen1 ones) and long-lived growth (over a quarter) for CPython to start a full one."""
    size = max(200_000, len(gc.get_objects()))
    return [[None] for _ in range(size)]


@pytest.fixture(autouse=True)
def collector_on():
    """Each test starts from a just-collected heap with the collector on, and restores it."""
    enabled = gc.isenabled()
    thresholds = gc.get_threshold()
    gc.enable()
    gc.collect()
    yield
    gc.set_threshold(*thresholds)
    if not enabled:
        gc.disable()


def test_full_collections_happen_without_the_block() -> None:
    """The control: the same growth does trigger a full collection normally."""
    kept: list = []
    assert 2 in generations_collected(lambda: kept.append(grow_long_lived_heap()))


def test_no_full_collection_inside_the_block_and_thresholds_restored() -> None:
    before = gc.get_threshold()
    kept: list = []
    with young_collections_only():
        assert gc.get_threshold()[:2] == before[:2]
        seen = generations_collected(lambda: kept.append(grow_long_lived_heap()))
    assert seen and 2 not in seen  # young collections ran, no full one
    assert gc.get_threshold() == before


def test_young_collections_still_free_cycles_inside_the_block() -> None:
    with young_collections_only():
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
        # Enough allocations for young collections (gen0 every 700, gen1 every 10 of those).
        churn = [[None] for _ in range(50_000)]
        assert alive() is None
        del churn


def test_thresholds_restored_after_an_exception() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), young_collections_only():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before


def test_gc_paused_switches_the_collector_off_and_back() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: still off, and the outer block turns it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()  # it was off before: left off


@pytest.fixture
def nothing_frozen():
    """Objects an earlier test may have frozen go back to the collector, so that
    ``heap_frozen`` freezes for itself."""
    gc.unfreeze()


@pytest.mark.usefixtures("nothing_frozen")
def test_heap_frozen_keeps_older_objects_out_and_hands_them_back() -> None:
    old = Node()
    old.other = old  # a cycle alive before the block, garbage inside it
    was = weakref.ref(old)
    with heap_frozen():
        assert gc.get_freeze_count() > 0
        del old
        gc.collect()
        assert was() is not None  # frozen: no collection inside the block reaches it
        young = Node()
        young.other = young
        now = weakref.ref(young)
        del young
        gc.collect()
        assert now() is None  # objects made inside the block are collected as usual
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert was() is None  # handed back: collected after the block


@pytest.mark.usefixtures("nothing_frozen")
def test_heap_frozen_leaves_a_callers_freeze_alone(monkeypatch) -> None:
    """Neither freezes nor unfreezes (the frozen count itself is no witness: it drops
    whenever a frozen object is freed, which other tests' leftovers may do at any time)."""
    gc.freeze()
    calls: list[str] = []
    try:
        monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
        monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
        with heap_frozen():
            pass
        assert calls == []
    finally:
        monkeypatch.undo()
        gc.unfreeze()


@pytest.mark.usefixtures("nothing_frozen")
def test_heap_frozen_unfreezes_after_an_exception() -> None:
    with pytest.raises(RuntimeError), heap_frozen():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0
