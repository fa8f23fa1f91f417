"""The workload manager ignores ``RESOURCE_STATE_CHANGED``: runs with and without them are
the same run (same decisions, same output files bit for bit), only with fewer messages."""

from __future__ import annotations

from pathlib import Path

from decision_helpers import hetero_platform

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.simulation import Engine, Message, load_platform_xml, run, write_outputs
from hdeeprm.workload.model import JobSpec, Profile, Workload


class Told:
    """The manager behind a wrapper that does not say it ignores confirmations: the loop
    sends them, and every reply is recorded."""

    def __init__(self, manager: WorkloadManager) -> None:
        self.manager = manager
        self.replies: list[tuple[float, list]] = []

    def handle(self, message: Message) -> list:
        reply = self.manager.handle(message)
        self.replies.append((message.now, list(reply)))
        return reply


def _workload() -> Workload:
    # Overlapping jobs of 1-4 cores with memory and bandwidth, some sharing a processor
    # (P2 mates, P1 over-subscription on the 12-20 GB/s processors), released and re-used at
    # one instant (t = 2: b ends, d starts).
    jobs = [
        ("a", 0.0, 2, 8e9, {"req_time": 9.0, "mem": 1000.0, "mem_bw": 10.0}),
        ("b", 0.0, 1, 4e9, {"req_time": 2.0, "mem": 0.0, "mem_bw": 14.0}),
        ("c", 1.0, 4, 6e9, {"req_time": 5.0, "mem": 500.0, "mem_bw": 3.0}),
        ("d", 2.0, 1, 2e9, {"req_time": 1.0, "mem": 0.0, "mem_bw": 30.0}),
        ("e", 2.0, 3, 9e9, {"req_time": 4.0, "mem": 2000.0, "mem_bw": 1.0}),
        ("f", 3.5, 2, 1e9, {"req_time": 3.0, "mem": 0.0, "mem_bw": 0.0}),
    ]
    specs, profiles = [], {}
    for jid, subtime, res, cpu, extra in jobs:
        profiles[jid] = Profile(jid, "parallel_homogeneous", cpu=cpu, extra=extra)
        specs.append(JobSpec(jid, subtime, res, jid))
    return Workload(9, specs, profiles, "w0")


def _manager(platform, scheduler: str | None) -> WorkloadManager:
    actions = ActionSpace()
    sched = BackfillScheduler(parse_scheduler(scheduler)) if scheduler else None
    return WorkloadManager(
        platform, actions, FixedPair(actions, "shortest-high_gflops"), seed=1, scheduler=sched
    )


def test_runs_with_and_without_confirmations_are_the_same(tmp_path: Path) -> None:
    platform = hetero_platform()
    write_platform_xml(platform, tmp_path / "platform.xml")
    sim_platform = load_platform_xml(tmp_path / "platform.xml")
    for scheduler in (None, "easy"):
        told = Told(_manager(platform, scheduler))
        loud = Engine(sim_platform, _workload())
        run(loud, told)
        blind = _manager(platform, scheduler)
        quiet = Engine(sim_platform, _workload())
        run(quiet, blind)
        assert loud.state_change_events and not quiet.state_change_events
        # Every switch decision is confirmed in a message of its own: exactly those go.
        assert loud.nb_messages - quiet.nb_messages == sum(
            1
            for _, reply in told.replies
            if any(type(d).__name__ == "SetResourceState" for d in reply)
        )
        assert loud.nb_grouped_switches == quiet.nb_grouped_switches > 0
        assert [job.finish_time for job in loud.finished_jobs] == [
            job.finish_time for job in quiet.finished_jobs
        ]
        assert told.manager.pool.episodes == blind.pool.episodes
        files_loud = write_outputs(loud, tmp_path / f"loud_{scheduler}")
        files_quiet = write_outputs(quiet, tmp_path / f"quiet_{scheduler}")
        for name, path in files_loud.items():
            assert path.read_bytes() == files_quiet[name].read_bytes(), name
