"""The compact over-subscription record reads like the list of episodes it replaced, and its
vectorised merge gives exactly the rows of the one-episode-at-a-time merge."""

from __future__ import annotations

import random
from typing import Any

from hdeeprm.decision.oversubscription import OverSubscriptionRecord, merged_spans, span_rows


def reference_merge(episodes: list[list[Any]]) -> list[tuple[int, float, float | None]]:
    """The merge as it was written before the record (sort the lists, merge in one pass)."""
    open_span: dict[int, list[Any]] = {}
    spans: list[list[Any]] = []
    for proc, begin, end in sorted(episodes, key=lambda e: (e[1], e[0])):
        last = open_span.get(proc)
        if last is not None and last[2] is not None and last[2] == begin:
            last[2] = end
            continue
        span = [proc, begin, end]
        spans.append(span)
        open_span[proc] = span
    return [(int(p), b, e) for p, b, e in spans]


def test_record_reads_as_a_list_of_episodes() -> None:
    record = OverSubscriptionRecord()
    first = record.open(3, 1.5)
    second = record.open(0, 2.0)
    record.close(first, 4.25)
    assert len(record) == 2
    assert record == [[3, 1.5, 4.25], [0, 2.0, None]]
    assert record[0] == [3, 1.5, 4.25] and record[1][2] is None
    assert [e[0] for e in record] == [3, 0]
    record.close(second, 9.0)
    assert list(record) == [[3, 1.5, 4.25], [0, 2.0, 9.0]]
    assert record != [[3, 1.5, 4.25]]
    record.clear()
    assert len(record) == 0 and merged_spans(record) == []


def random_episodes(rng: random.Random, n: int) -> list[list[Any]]:
    """Episodes as the pool records them: per processor, one after the other in time, often
    back to back (a job ends as another starts), several at one instant, the last maybe open."""
    clock = {p: 0.0 for p in range(5)}
    episodes: list[list[Any]] = []
    for _ in range(n):
        proc = rng.randrange(5)
        start = clock[proc] if rng.random() < 0.5 else clock[proc] + rng.choice([0.5, 1.0, 2.0])
        end = start + rng.choice([0.0, 0.5, 1.0, 3.0])
        clock[proc] = end
        episodes.append([proc, start, end])
    for proc in range(5):  # leave the last episode of some processors open
        last = [e for e in episodes if e[0] == proc]
        if last and rng.random() < 0.5:
            last[-1][2] = None
    episodes.sort(key=lambda e: e[1])  # the pool appends them in order of start
    return episodes


def test_vectorised_merge_matches_the_one_pass_merge() -> None:
    rng = random.Random(7)
    for n in (1, 2, 5, 40, 300):
        for _ in range(20):
            episodes = random_episodes(rng, n)
            record = OverSubscriptionRecord()
            for proc, start, end in episodes:
                index = record.open(proc, start)
                if end is not None:
                    record.close(index, end)
            expected = reference_merge([list(e) for e in episodes])
            assert merged_spans(record) == expected
            assert merged_spans(episodes) == expected  # plain lists too
            chunks = list(span_rows(record, 7))  # what the CSV writer streams
            assert all(len(c) == 7 for c in chunks[:-1])
            assert [row for chunk in chunks for row in chunk] == expected
