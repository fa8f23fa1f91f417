"""``JobQueue.head`` (an insertion-ordered slice while jobs arrive in submission order) against
``JobQueue.head_walk`` (the heap walk, whatever the order) and a plain sort of the queue, and
``JobQueue.head_seqs`` against the submission numbers of ``head``, on random pushes (in order,
with ties, or out of order), removals, peeks and clears."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdeeprm.decision import JobQueue, JobRecord

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: push (submission-time step, 0 = a tie, negative = out of order), remove (index into the
#: queue), peek (a policy, which builds heaps as a fixed pair does), head (k) or clear.
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.sampled_from([0.0, 0.0, 1.0, 2.5, 10.0, -1.0])),
        st.tuples(st.just("remove"), st.integers(0, 1_000)),
        st.tuples(st.just("peek"), st.sampled_from(["first", "shortest", "smallest"])),
        st.tuples(st.just("head"), st.integers(0, 12)),
        st.tuples(st.just("clear"), st.just(0)),
    ),
    max_size=120,
)


def _expected(queue: JobQueue, k: int) -> list[JobRecord]:
    return sorted(queue.jobs, key=lambda job: (job.subtime, job.seq))[: max(k, 0)]


@PROPERTY
@given(OPS, st.integers(0, 3))
def test_head_agrees_with_the_walk_and_a_sort(ops: list[tuple[str, float]], seed: int) -> None:
    queue = JobQueue(np.random.default_rng(seed))
    seq, now = 0, 0.0
    for op, value in ops:
        if op == "push":
            now += value
            queue.push(JobRecord(f"j{seq}", seq, now, 1 + seq % 4, float(seq % 7)))
            seq += 1
        elif op == "remove" and queue:
            queue.remove(queue.jobs[int(value) % len(queue)])
        elif op == "peek":
            queue.peek(str(value))
        elif op == "clear":
            queue.clear()
        k = int(value) if op == "head" else 5
        head = queue.head(k)
        assert [j.seq for j in head] == [j.seq for j in queue.head_walk(k)]
        assert [j.seq for j in head] == [j.seq for j in _expected(queue, k)]
        assert queue.head_seqs(k).tolist() == [j.seq for j in head]
    assert [j.seq for j in queue.head(len(queue))] == [j.seq for j in _expected(queue, len(queue))]
