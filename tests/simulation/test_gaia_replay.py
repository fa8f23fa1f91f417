"""End-to-end: the first Gaia jobs on the Gaia platform (skipped without the trace)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from hdeeprm.simulation import (
    COMPLETED_SUCCESSFULLY,
    Engine,
    FirstFitFCFS,
    load_platform_xml,
    run,
    write_outputs,
)

GAIA_JSON = Path(__file__).resolve().parents[2] / "platform_examples" / "gaia.json"


@pytest.mark.parametrize("profile_type", ["delay", "parallel_homogeneous"])
def test_first_gaia_jobs_replay_consistently(
    gaia_trace: Path, tmp_path: Path, profile_type: str
) -> None:
    platform_mod = pytest.importorskip("hdeeprm.platform")
    workload_mod = pytest.importorskip("hdeeprm.workload")
    if not GAIA_JSON.is_file():
        pytest.skip("platform_examples/gaia.json not available")
    hierarchy = platform_mod.load_platform(GAIA_JSON)
    xml_path = tmp_path / "gaia.xml"
    platform_mod.write_platform_xml(hierarchy, xml_path)
    platform = load_platform_xml(xml_path)
    result = workload_mod.convert_swf(
        gaia_trace,
        reference_speed=hierarchy.reference_speed,
        max_cores=platform.nb_hosts,
        seed=1,
        nb_jobs=1500,
        start=4,
        profile_type=profile_type,
    )
    workload = result.workload
    # The hosts start in P3 (speed ~0): put them all in P0 first, as a decision system would.
    engine = Engine(platform, workload)

    class AllP0(FirstFitFCFS):
        def handle(self, message):  # type: ignore[no-untyped-def]
            decisions = super().handle(message)
            if message.events[0].type == "SIMULATION_BEGINS":
                from hdeeprm.simulation import SetResourceState

                decisions.append(SetResourceState(range(platform.nb_hosts), 0))
            return decisions

    run(engine, AllP0())
    jobs = engine.finished_jobs
    assert len(jobs) == 1500 and all(job.state == COMPLETED_SUCCESSFULLY for job in jobs)
    assert engine.nb_events >= 2 * 1500 + 2
    # No host ever runs two jobs at once.
    spans: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for job in jobs:
        assert job.start_time is not None and job.finish_time is not None
        assert job.start_time >= job.spec.subtime
        for host in job.alloc:
            spans[host].append((job.start_time, job.finish_time))
    for host_spans in spans.values():
        host_spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(host_spans, host_spans[1:]))
    # Run times: delay = the trace's run time; flops = cpu / speed of the slowest allocated
    # core in P0 (Gaia's cores differ, the slowest paces the job).
    by_name = {job.spec.id: job for job in jobs}
    for spec in workload.jobs[:200]:
        job = by_name[spec.id]
        profile = workload.profiles[spec.profile]
        if profile_type == "delay":
            assert job.execution_time == pytest.approx(profile.delay)
        else:
            slowest = min(platform.hosts[h].speeds[0] for h in job.alloc)
            assert job.execution_time == pytest.approx(profile.cpu / slowest)
    assert sum(engine.host_energy()) == pytest.approx(engine.consumed_energy, rel=1e-9)
    assert sum(job.energy for job in jobs) < engine.consumed_energy
    paths = write_outputs(engine, tmp_path / "out")
    assert paths["jobs"].read_text().count("\n") == 1501
