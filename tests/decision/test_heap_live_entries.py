"""A changing-key heap pushes a changed processor only when its live entry no longer bounds
its current ``(key, lowest free core)`` from below. A take only worsens a key, so the entry a
processor already has stays, and ``high_mem_bw`` is not even told of it: it checks at its next
refresh only the processors it placed from a running demand sum and those released.

Worked on ``hetero_platform`` (``decision_helpers``): ``high_mem_bw`` keys are ``demand -
bandwidth``, so with nothing running processor 2 (cores 4, 5, 6; 48 GB/s) leads with -48,
then processor 1 (-20), 0 (-16) and 3 (-12)."""

from __future__ import annotations

import numpy as np
from decision_helpers import hetero_platform, make_platform

from hdeeprm.decision import CorePool, ResourceManager


def _setup() -> tuple[CorePool, ResourceManager]:
    pool = CorePool(hetero_platform())
    return pool, ResourceManager(pool, np.random.default_rng(0))


def test_a_worsened_processor_keeps_its_entry_and_a_release_pushes_a_new_one() -> None:
    pool, rm = _setup()
    # Job a: one task of 10 GB/s -> processor 2's lowest core, 4; its demand becomes 10
    # (key -38). The take and the settle after it mark nothing: (-48, 4) still bounds
    # (-38, 5) from below.
    assert rm.allocate("a", 1, 0.0, 10.0, "high_mem_bw", 0.0) == [4]
    heap = rm._heap("high_mem_bw")
    assert heap.dirty == set()
    entries, version = len(heap.heap), heap.version[2]
    assert heap.live[2][:2] == (-48.0, 4)
    # Job b: no refresh, no push, same version; the search re-sifts the entry to (-38, 5),
    # still first (processor 1: -20), so core 5. That entry was placed from the demand as
    # it stood, so processor 2 is checked at the next refresh.
    assert rm.allocate("b", 1, 0.0, 10.0, "high_mem_bw", 1.0) == [5]
    assert len(heap.heap) == entries
    assert heap.version[2] == version
    assert heap.live[2][:2] == (-38.0, 5)
    assert heap.dirty == {2}
    # Releasing core 4: demand 10 (core 5 still busy: -38) and lowest free core 4, so
    # (-38, 4) < (-38, 5): the old entry no longer bounds it, a new one is pushed.
    pool.release([4], 2.0)
    assert rm.allocate("c", 1, 0.0, 10.0, "high_mem_bw", 2.0) == [4]
    assert heap.version[2] == version + 1
    assert len(heap.heap) == entries + 1


def _pair(heap, entry: int) -> tuple[int, int]:
    """``high_cores``' packed entry as its ``(-free cores, lowest free core)``."""
    return (entry // heap.scale - heap.most, entry % heap.scale)


def test_a_full_processor_loses_its_live_entry_and_gets_one_back_when_freed() -> None:
    pool, rm = _setup()
    # high_cores: processor 2 has the most free cores (3), so its lowest core, 4.
    assert rm.allocate("a", 1, 0.0, 0.0, "high_cores", 0.0) == [4]
    heap = rm._heap("high_cores")
    # Cores 5 and 6 taken directly: taking tells high_cores nothing, the entry (-3, 4) stays.
    pool.take(5, "b", 0.0, 0.0)
    pool.take(6, "b", 0.0, 0.0)
    pool.settle([5, 6], 0.0)
    assert _pair(heap, heap.live[2]) == (-3, 4)
    # The next search drops that entry (no free core) and forgets it as live; processors 0, 1
    # and 3 have two free cores each: the lowest core id wins, 0 on processor 0.
    assert rm.allocate("c", 1, 0.0, 0.0, "high_cores", 1.0) == [0]
    assert heap.live[2] == -1
    # Freed, processor 2 leads again (3 free cores) through a newly pushed entry.
    pool.release([4, 5, 6], 2.0)
    assert rm.allocate("d", 1, 0.0, 0.0, "high_cores", 2.0) == [4]
    assert _pair(heap, heap.live[2]) == (-3, 4)


def test_high_mem_runs_through_a_node_mate_at_the_same_key() -> None:
    # Node 0: 64 GB, processors 0 (cores 0-3) and 1 (cores 4-7); node 1: 16 GB, processor 2
    # (cores 8-11). high_mem keys: -64000 for processors 0 and 1 (one node), -16000 for 2.
    platform = make_platform(
        [
            (64.0, [(2.0, 1.0, 16.0, 100.0, 4), (2.0, 1.0, 16.0, 100.0, 4)]),
            (16.0, [(2.0, 1.0, 16.0, 100.0, 4)]),
        ]
    )
    pool = CorePool(platform)
    rm = ResourceManager(pool, np.random.default_rng(0))
    runs: list[tuple[int, int]] = []
    take_run = pool.take_run

    def recording(proc: int, count: int, *args: object) -> list[int]:
        runs.append((proc, count))
        return take_run(proc, count, *args)  # type: ignore[arg-type]

    pool.take_run = recording  # type: ignore[method-assign]
    # Three tasks of 1,000 MB: processor 0 leads (-64000, core 0). After each take its key
    # is the node's free memory, 63,000 then 62,000 MB: processor 1 has that same key (same
    # node) and higher cores, processor 2 only -16000, so processor 0 wins all three picks:
    # one run of three cores, where processor 1's entry (-64000, 4) as a bound would have
    # stopped it after one.
    assert rm.allocate("a", 3, 1000.0, 0.0, "high_mem", 0.0) == [0, 1, 2]
    assert runs == [(0, 3)]
