"""Hand-built platforms, jobs and messages for the decision-system tests."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from hdeeprm.platform.hierarchy import P2, P3, Cluster, Core, Node, Platform, Processor
from hdeeprm.simulation import events as ev
from hdeeprm.simulation.events import Event, Message
from hdeeprm.workload.model import Profile

#: (clock GHz, dpflops per cycle, mem_bw GB/s, power W, cores) per processor.
ProcSpec = tuple[float, float, float, float, int]


def make_platform(nodes: list[tuple[float, list[ProcSpec]]]) -> Platform:
    """A one-cluster platform: ``nodes`` = [(memory GB, [processor specs])]; ids in order."""
    link = {"type": "10G", "bandwidth": "10GBps", "latency": "1us"}
    cluster = Cluster(0, "c0", local_links=[dict(link)])
    platform = Platform(clusters=[cluster], global_links=[dict(link)])
    for memory_gb, procs in nodes:
        node = Node(len(platform.nodes), "node", cluster, "DDR", memory_gb)
        cluster.nodes.append(node)
        platform.nodes.append(node)
        for clock, dpflops, mem_bw, power, n_cores in procs:
            proc = Processor(
                len(platform.processors),
                "proc",
                node,
                "CPU",
                "x",
                clock,
                dpflops,
                mem_bw,
                10.0,
                power,
            )
            node.processors.append(proc)
            platform.processors.append(proc)
            for _ in range(n_cores):
                core = Core(len(platform.cores), f"cor_{len(platform.cores)}", proc)
                proc.cores.append(core)
                platform.cores.append(core)
    return platform


def hetero_platform() -> Platform:
    """Three nodes, four processors, nine cores; worked figures used by the tests:

    ==== ====== ===== ======= ============ ======= =============
    node mem MB proc  cores   GFLOPS/core  GB/s    W/core
    ==== ====== ===== ======= ============ ======= =============
    0    16000  0     0,1     2.0 (2x1)    16      50 (100/2)
    1     8000  1     2,3     4.4 (2.2x2)  20      60 (120/2)
    1     8000  2     4,5,6   3.0 (1.5x2)  48      30 (90/3)
    2    64000  3     7,8     4.0 (2x2)    12      40 (80/2)
    ==== ====== ===== ======= ============ ======= =============
    """
    return make_platform(
        [
            (16.0, [(2.0, 1.0, 16.0, 100.0, 2)]),
            (8.0, [(2.2, 2.0, 20.0, 120.0, 2), (1.5, 2.0, 48.0, 90.0, 3)]),
            (64.0, [(2.0, 2.0, 12.0, 80.0, 2)]),
        ]
    )


def learning_platform() -> Platform:
    """Thesis 5.4.1: one node, two dual-core processors, 4 / 4.4 GFLOPS, 80 / 100 W, 32 GB/s."""
    return make_platform([(32.0, [(2.0, 2.0, 32.0, 80.0, 2), (2.2, 2.0, 32.0, 100.0, 2)])])


@dataclass
class FakeJob:
    """Stand-in for the engine's job object: the attributes the decision system reads."""

    id: str
    subtime: float
    res: int
    profile: Profile
    walltime: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def job(
    jid: str,
    res: int = 1,
    *,
    subtime: float = 0.0,
    req_time: float | None = 10.0,
    mem: float | None = 0.0,
    mem_bw: float | None = 0.0,
) -> FakeJob:
    extra: dict[str, Any] = {}
    if req_time is not None:
        extra["req_time"] = req_time
    if mem is not None:
        extra["mem"] = mem
    if mem_bw is not None:
        extra["mem_bw"] = mem_bw
    return FakeJob(jid, subtime, res, Profile(f"p{jid}", "delay", delay=1.0, extra=extra))


def msg(now: float, *events: tuple[str, dict[str, Any]]) -> Message:
    return Message(now, [Event(now, kind, data) for kind, data in events])


def begins(nb: int) -> Message:
    return msg(0.0, (ev.SIMULATION_BEGINS, {"nb_resources": nb}))


def submitted(now: float, *jobs: FakeJob) -> Message:
    return msg(now, *[(ev.JOB_SUBMITTED, {"job": j}) for j in jobs])


def completed(now: float, *jobs: FakeJob) -> Message:
    return msg(
        now,
        *[(ev.JOB_COMPLETED, {"job": j, "job_state": ev.COMPLETED_SUCCESSFULLY}) for j in jobs],
    )


def churn_keeps_demand_exact(pool: Any, seed: int, steps: int, most: int) -> None:
    """Random takes (up to ``most`` cores at once, varied bandwidths) and releases on
    ``pool``: after each, every processor's demand is the loop's sum in core order, bit for
    bit, and its free cores are P2 (the processor runs a job) or P3 (it runs none)."""
    draw = random.Random(seed)
    bandwidths = [0.1, 0.2, 0.3, 0.07, 1e-17, 0.15000000000000002, 0.0]
    running: list[list[int]] = []
    for step in range(steps):
        free = list(pool.free_cores)
        if free and (not running or draw.random() < 0.55):
            cores = draw.sample(free, draw.randint(1, min(most, len(free))))
            for core in cores:
                pool.take(core, f"j{step}", 0.0, draw.choice(bandwidths))
            pool.settle(cores, float(step))
            running.append(cores)
        elif running:
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        for proc, members in enumerate(pool.proc_cores):
            expected = 0.0
            for core in members:
                expected += pool.core_bw[core]
            assert pool.proc_demand[proc].hex() == expected.hex(), (step, proc)
            busy = [core for core in members if pool.core_job[core] is not None]
            idle = P2 if busy else P3
            assert all(pool.pstate[c] == idle for c in members if c not in busy), (step, proc)


def pool_state(pool: Any, free_list: bool = True) -> tuple:
    """Everything a core pool holds, floats by ``hex`` (bit for bit); with ``free_list``
    also the free-core list the ``random`` policy draws from (and its index), else the
    pending ``drain()`` (which empties it)."""
    head = (
        list(pool.pstate),
        [x.hex() for x in pool.proc_demand],
        [x.hex() for x in pool.node_free_mem],
    )
    tail = (
        [list(f) for f in pool.proc_free],
        list(pool.proc_busy),
        list(pool.node_busy),
        list(pool.core_job),
        [x.hex() for x in pool.core_mem],
        [x.hex() for x in pool.core_bw],
        pool.free_count,
        list(pool.episodes),
    )
    if free_list:
        return (*head, list(pool.free_cores), list(pool.free_index), *tail)
    return (*head, *tail, pool.drain())
