"""The fast core pool, core policies and fit counts against their plain statement
(:mod:`hdeeprm.decision.reference`): on random platforms (processors of 1 to 8 cores, 4- and
6-core ones included) and random sequences of allocations under every core policy, releases,
scheduler-chosen placements, picks, fit questions and resets, both give the same answers and
hold the same state after every step, floats compared bit for bit (``hex``). Also the
workload manager's fast reading of an engine job against the general one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from decision_helpers import make_platform
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.decision.fit import NodeFloorFit
from hdeeprm.decision.reference import (
    ReferenceManager,
    ReferencePool,
    episodes_of,
    fit_index_tasks,
    floor_fit_tasks,
)
from hdeeprm.decision.resources import MEM_TOL
from hdeeprm.decision.workload_manager import _plain_job_record, _sim_job_record
from hdeeprm.simulation.engine import SimJob
from hdeeprm.workload.model import JobSpec, Profile

PROPERTY = settings(
    max_examples=800,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Per-task memory (MB) and bandwidth (GB/s): sums that round (0.1 + 0.2), tiny terms, tasks
#: larger than some nodes.
MEMS = [0.0, 0.1, 0.3, 300.0, 1000.0, 2560.0, 3333.3, 4096.5, 7000.0, 20000.0]
BANDWIDTHS = [0.0, 0.1, 0.2, 0.3, 0.07, 0.15000000000000002, 1e-17, 0.45, 1.3, 2.2, 8.0]

processor = st.tuples(
    st.sampled_from([2.0, 2.2]),  # clock: ties between processors on purpose
    st.sampled_from([1.0, 2.0]),  # flops per cycle
    st.sampled_from([0.6, 1.0, 2.5, 12.0]),  # memory bandwidth
    st.sampled_from([80.0, 90.0, 100.0]),  # power
    st.sampled_from([1, 2, 3, 4, 4, 4, 6, 6, 8]),  # cores
)
node = st.tuples(
    st.sampled_from([1.0, 4.0, 10.0, 16.0]), st.lists(processor, min_size=1, max_size=3)
)
quad_node = st.tuples(
    st.sampled_from([1.0, 4.0, 10.0, 16.0]),
    st.lists(
        st.tuples(
            st.sampled_from([2.0, 2.2]),
            st.sampled_from([1.0, 2.0]),
            st.sampled_from([0.6, 1.0, 2.5, 12.0]),
            st.sampled_from([80.0, 90.0, 100.0]),
            st.just(4),
        ),
        min_size=1,
        max_size=3,
    ),
)
#: Mixed shapes, and platforms of 4-core processors only (the settles' unrolled sums).
platforms = st.one_of(
    st.lists(node, min_size=1, max_size=4), st.lists(quad_node, min_size=1, max_size=4)
)

operation = st.one_of(
    st.tuples(
        st.just("allocate"),
        st.integers(1, 12),
        st.sampled_from(MEMS),
        st.sampled_from(BANDWIDTHS),
        st.sampled_from(CORE_POLICIES),
    ),
    st.tuples(st.just("release"), st.integers(0, 50)),
    st.tuples(st.just("give"), st.integers(0, 50)),
    st.tuples(
        st.just("place_on"),
        st.lists(st.integers(0, 200), min_size=1, max_size=6),
        st.sampled_from(MEMS),
        st.sampled_from(BANDWIDTHS),
    ),
    st.tuples(st.just("pick"), st.sampled_from(CORE_POLICIES), st.sampled_from(MEMS)),
    st.tuples(st.just("fit"), st.integers(1, 20), st.sampled_from(MEMS)),
    st.tuples(st.just("reset")),
)


def _fast_state(pool: CorePool) -> tuple:
    return (
        list(pool.pstate),
        list(pool.emitted),
        [x.hex() for x in pool.proc_demand],
        [x.hex() for x in pool.node_free_mem],
        # The free-core list only once built (read or kept from the start: free_order), so
        # that comparing it does not build it.
        None if pool._free_cores is None else (list(pool.free_cores), list(pool.free_index)),
        [list(f) for f in pool.proc_free],
        list(pool.proc_busy),
        list(pool.node_busy),
        list(pool.core_job),
        [x.hex() for x in pool.core_mem],
        [x.hex() for x in pool.core_bw],
        pool.free_count,
        episodes_of(pool.episodes),
        pool.over_subscribed,
        [x.hex() for x in pool.speeds().tolist()],
        [x.hex() for x in pool.powers().tolist()],
    )


def _reference_state(pool: ReferencePool) -> tuple:
    return (
        list(pool.pstate),
        list(pool.emitted),
        [x.hex() for x in pool.proc_demand],
        [x.hex() for x in pool.node_free_mem],
        # The free-core list only once built (read or kept from the start: free_order), so
        # that comparing it does not build it.
        None if pool._free_cores is None else (list(pool.free_cores), list(pool.free_index)),
        pool.proc_free,
        pool.proc_busy,
        pool.node_busy,
        list(pool.core_job),
        [x.hex() for x in pool.core_mem],
        [x.hex() for x in pool.core_bw],
        pool.free_count,
        episodes_of(pool.episodes),
        pool.over_subscribed,
        [x.hex() for x in pool.speeds()],
        [x.hex() for x in pool.powers()],
    )


def _decisions(decisions: list[Any]) -> list[tuple[tuple[int, ...], int]]:
    return [(tuple(d.resources), d.state) for d in decisions]


@PROPERTY
@given(
    shape=platforms,
    ops=st.lists(operation, min_size=10, max_size=80),
    seed=st.integers(0, 2**16),
    free_order=st.booleans(),
)
def test_fast_pool_and_policies_equal_the_reference(
    shape: list, ops: list[tuple], seed: int, free_order: bool
) -> None:
    platform = make_platform(shape)
    pool = CorePool(platform, free_order=free_order)
    rm = ResourceManager(pool, np.random.default_rng(seed))
    floor = NodeFloorFit(pool)
    ref = ReferencePool(platform, free_order=free_order)
    ref_rm = ReferenceManager(ref, np.random.default_rng(seed))
    running: list[tuple[list[int], list[int]]] = []  # (fast cores, reference cores) per job
    for step, op in enumerate(ops):
        now = float(step // 2)  # two steps at each instant: release and start at once
        kind = op[0]
        if kind == "allocate":
            _, res, mem, mem_bw, policy = op
            got = rm.allocate(f"j{step}", res, mem, mem_bw, policy, now)
            want = ref_rm.allocate(f"j{step}", res, mem, mem_bw, policy, now)
            got = None if got is None else list(got)
            assert got == want, (step, op)
            if got is not None:
                running.append((got, want))
        elif kind == "release" and running:
            got, want = running.pop(op[1] % len(running))
            pool.release(got, now)
            ref.release(want, now)
        elif kind == "give" and running:  # one core of a job back, then settled
            got, want = running[op[1] % len(running)]
            core = got.pop(0)
            want.pop(0)  # the same core: the lists were equal
            pool.give(core)
            ref.give(core)
            pool.settle([core], now)
            ref.settle([core], now)
            running[:] = [job for job in running if job[0]]
        elif kind == "place_on":  # a scheduler's own cores (WorkloadManager._place_on)
            _, picks, mem, mem_bw = op
            free = [c for c in range(ref.nb_cores) if ref.core_job[c] is None]
            cores = list(dict.fromkeys(free[i % len(free)] for i in picks)) if free else []
            per_node: dict[int, int] = {}
            for core in cores:
                per_node[ref.core_node[core]] = per_node.get(ref.core_node[core], 0) + 1
            if cores and all(
                ref.node_free_mem[n] + MEM_TOL >= k * mem for n, k in per_node.items()
            ):
                for core in cores:
                    pool.take(core, f"j{step}", mem, mem_bw)
                    ref.take(core, f"j{step}", mem, mem_bw)
                pool.settle(cores, now)
                ref.settle(cores, now)
                running.append((cores, list(cores)))
        elif kind == "pick":
            _, policy, mem = op
            assert rm.pick(policy, mem) == ref_rm.pick(policy, mem), (step, op)
        elif kind == "fit":
            _, res, mem = op
            assert rm.can_fit(res, mem) == ref_rm.fits(res, mem), (step, op)
            if mem > 0.0:
                assert floor.tasks(mem) == floor_fit_tasks(ref, mem), (step, op)
                assert floor.fits(res, mem) == (floor_fit_tasks(ref, mem) >= res), (step, op)
        elif kind == "reset":
            pool.reset()
            rm.reset()
            ref.reset()
            ref_rm.reset()
            running.clear()
        assert _fast_state(pool) == _reference_state(ref), (step, op)
        assert (rm.nb_attempts, rm.nb_refused) == (ref_rm.nb_attempts, ref_rm.nb_refused)
        assert list(rm.fit.tracked) == ref_rm.watched, (step, op)
        for mem in list(rm.fit.tracked) if pool.free_count else []:
            rm.fit.fits(1, mem)  # brings the size's count up to date (with a free core)
            tracker = rm.fit.tracked[mem]
            assert tracker.total == fit_index_tasks(ref, mem), (step, mem)
            ref_rm.fits(1, mem)  # the same "most recently asked" order
        assert _decisions(pool.drain()) == _decisions(ref.drain()), (step, op)
    end = float(len(ops))
    pool.close_episodes(end)
    ref.close_episodes(end)
    assert episodes_of(pool.episodes) == episodes_of(ref.episodes)


# --- the workload manager's reading of an engine job ---------------------------------------

numbers = st.one_of(
    st.floats(min_value=0.0, max_value=1e9, allow_nan=False),
    st.integers(0, 10**6),
    st.just(-0.0),
    st.sampled_from(["12.5", "7", "x", None, True, -1.0, math.nan, math.inf]),
)


@PROPERTY
@given(
    job_id=st.text(min_size=1, max_size=6),
    subtime=st.one_of(st.integers(0, 10**6), st.floats(0.0, 1e7, allow_nan=False)),
    res=st.integers(1, 512),
    walltime=st.one_of(st.none(), st.floats(-1.0, 1e6, allow_nan=False), st.integers(-1, 10**5)),
    fields=st.dictionaries(st.sampled_from(["req_time", "mem", "mem_bw"]), numbers, max_size=3),
    job_extra=st.one_of(
        st.just({}),
        st.fixed_dictionaries(
            {"gpus": st.integers(0, 8)},
            optional={"workload_type": st.sampled_from(["compute", "network", None])},
        ),
    ),
    seq=st.integers(0, 10**6),
)
def test_engine_job_record_equals_the_general_reading(
    job_id: str,
    subtime: float,
    res: int,
    walltime: float | None,
    fields: dict,
    job_extra: dict,
    seq: int,
) -> None:
    profile = Profile("p", "delay", delay=1.0, extra=dict(fields))
    spec = JobSpec(job_id, subtime, res, "p", walltime=walltime, extra=dict(job_extra))
    job = SimJob("w", spec, profile)

    def read(reader: Any) -> Any:
        try:
            record = reader(job, seq)
        except Exception as error:  # noqa: BLE001 - both must fail alike
            return type(error), str(error)
        return (
            record.id,
            record.seq,
            record.subtime.hex(),
            record.res,
            record.req_time.hex(),
            type(record.mem),
            record.mem.hex(),
            type(record.mem_bw),
            record.mem_bw.hex(),
            record.job is job,
            record.gpus,
            record.workload_type,
        )

    assert read(_sim_job_record) == read(_plain_job_record)
