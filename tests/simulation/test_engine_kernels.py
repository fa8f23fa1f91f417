"""The compiled per-host loops of the engine (``_engine_kernels.c``) against the pure-Python
reference: random platforms, workloads and decisions, run on a native engine and on a
reference one (``native=False``), must give the same messages and the same engine state after
every ``proceed``, every float bit for bit."""

from __future__ import annotations

import pickle
from array import array
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hdeeprm.simulation.engine as engine_module
from hdeeprm import _native
from hdeeprm.errors import SimulationError
from hdeeprm.simulation import (
    CallMeLater,
    Engine,
    ExecuteJob,
    KillJobs,
    RejectJob,
    SetResourceState,
    SimPlatform,
)
from hdeeprm.simulation.engine import KERNELS, RUNNING, SUBMITTED, SimJob
from hdeeprm.simulation.events import HostIds, Message
from hdeeprm.workload.model import JobSpec, Profile, Workload

GF = 1e9

kernels_built = pytest.mark.skipif(
    _native.load(KERNELS) is None,
    reason=f"the engine kernels are not in use: {_native.report().get(KERNELS)}",
)

# --- random inputs ------------------------------------------------------------------------------
watts = st.floats(0.0, 400.0, allow_nan=False, allow_infinity=False)


@st.composite
def hosts(draw: st.DrawFn, index: int) -> tuple[str, tuple[float, ...], int, tuple, tuple]:
    """One host: P0 its fastest P-state, then slower ones, maybe a sleep state (speed 0, or
    a speed tiny enough to count as 0); idle and full watts of its own in each."""
    top = draw(st.sampled_from([1 * GF, 1.5 * GF, 2.2 * GF, 3.7 * GF]))
    speeds = [top]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["slower", "slower", "sleep", "tiny"]))
        if kind == "slower":
            speeds.append(top * draw(st.floats(0.05, 0.99)))
        else:
            speeds.append(0.0 if kind == "sleep" else top * 1e-7)
    nb = len(speeds)
    idle = tuple(draw(watts) for _ in range(nb))
    full = tuple(draw(watts) for _ in range(nb))
    return (f"h{index}", tuple(speeds), draw(st.integers(0, nb - 1)), idle, full)


@st.composite
def platforms(draw: st.DrawFn) -> SimPlatform:
    nb = draw(st.integers(1, 9))
    return SimPlatform.from_hosts([draw(hosts(i)) for i in range(nb)])


@st.composite
def workloads(draw: st.DrawFn, nb_hosts: int) -> Workload:
    specs, profiles = [], {}
    for index in range(draw(st.integers(1, 12))):
        jid = f"j{index}"
        ptype = draw(
            st.sampled_from(["delay", "parallel_homogeneous", "parallel_homogeneous_total"])
        )
        if ptype == "delay":
            profiles[jid] = Profile(
                jid,
                ptype,
                delay=draw(st.sampled_from([0.0, 1.0, 7.25])) or draw(st.floats(0.0, 60.0)),
            )
        else:
            profiles[jid] = Profile(
                jid, ptype, cpu=draw(st.sampled_from([0.0, 1e10])) or draw(st.floats(0.0, 5e10))
            )
        subtime = draw(st.sampled_from([0.0, 3.0, 10.0]) | st.floats(0.0, 80.0))
        walltime = draw(st.none() | st.sampled_from([1.0, 7.25]) | st.floats(0.5, 90.0))
        specs.append(JobSpec(jid, subtime, draw(st.integers(1, nb_hosts)), jid, walltime))
    specs.sort(key=lambda spec: spec.subtime)
    return Workload(nb_hosts, specs, profiles, "w")


def host_set(draw: st.DrawFn, among: list[int]) -> Any:
    """Some hosts among ``among``: a HostIds (ascending) or a list in any order."""
    chosen = draw(st.lists(st.sampled_from(among), min_size=1, unique=True))
    return HostIds(sorted(chosen)) if draw(st.booleans()) else chosen


def random_decisions(draw: st.DrawFn, engine: Engine) -> list:
    """Starts on random free hosts, P-state switches of random hosts, kills and rejections,
    in a random order, and a wake-up so that the simulation never stalls for good."""
    n = engine.nb_hosts
    free = [h for h in range(n) if engine.host_job(h) is None]
    jobs = sorted(engine.jobs.values(), key=lambda job: job._index)
    decisions: list = []
    for job in (job for job in jobs if job.state is SUBMITTED):
        action = draw(st.sampled_from(["start", "start", "wait", "reject"]))
        if action == "start" and free:
            alloc = host_set(draw, free)
            free = [h for h in free if h not in alloc]
            decisions.append(ExecuteJob(job.id, alloc))
        elif action == "reject":
            decisions.append(RejectJob(job.id))
    busy = [list(job.alloc) for job in jobs if job.state is RUNNING and len(job.alloc) > 1]
    for _ in range(draw(st.integers(0, 3))):
        # Often some hosts of one running job (its pace and its hosts by speed move), else
        # any hosts.
        among = draw(st.sampled_from(busy)) if busy and draw(st.booleans()) else range(n)
        chosen = host_set(draw, list(among))
        most = min(len(engine._speeds[h]) for h in chosen)
        decisions.append(SetResourceState(chosen, draw(st.integers(0, most - 1))))
    running = [job.id for job in jobs if job.state is RUNNING]
    if running and draw(st.integers(0, 4)) == 0:
        decisions.append(KillJobs(draw(st.lists(st.sampled_from(running), min_size=1))))
    decisions = list(draw(st.permutations(decisions)))
    decisions.append(
        CallMeLater(engine.now + draw(st.sampled_from([0.5, 2.0]) | st.floats(0.01, 30.0)))
    )
    return decisions


def closing_decisions(engine: Engine) -> list:
    """Every host to P0 (fast) and every waiting job started where hosts are free: the
    simulation then ends."""
    free = [h for h in range(engine.nb_hosts) if engine.host_job(h) is None]
    decisions: list = []
    if any(p != 0 for p in engine.pstates):
        decisions.append(SetResourceState(range(engine.nb_hosts), 0))
    for job in sorted(engine.jobs.values(), key=lambda job: job._index):
        if job.state is SUBMITTED and free:
            take, free = free[: job.res], free[job.res :]
            decisions.append(ExecuteJob(job.id, take))
    return decisions


# --- what is compared ---------------------------------------------------------------------------
def exact(value: Any) -> Any:
    """``value`` with each float as its hex form (bit for bit; -0.0 differs from 0.0) and each
    job as its id: comparable across two engines."""
    if type(value) is float:
        return ("float", value.hex())
    if isinstance(value, SimJob):
        return ("job", value.id)
    if isinstance(value, dict):
        return tuple((exact(k), exact(v)) for k, v in value.items())
    if isinstance(value, (list, tuple, array)):
        return (type(value).__name__, tuple(exact(v) for v in value))
    return value


JOB_FIELDS = (
    "id", "state", "start_time", "finish_time", "alloc", "energy", "_delay", "_total", "_work",
    "_rate", "_last", "_version", "_power", "_e_last", "_kill_requested", "_index", "_paces",
    "service_factor",
)  # fmt: skip
ENGINE_FIELDS = (
    "_now", "_energy", "_power", "_wattmin", "_pstate", "_cur_speed", "_cur_idle", "_cur_full",
    "_host_job", "_host_energy", "_host_since", "_state_since", "_dirty", "_heap", "_seq",
    "_nb_waiting", "_nb_running", "_nb_calls", "_nb_computing", "_sub_idx", "_nomore_sent",
    "time_idle", "time_computing", "nb_grouped_switches", "nb_machine_switches",
    "energy_first_submission", "energy_last_completion", "finished_jobs", "nb_events",
    "nb_messages", "_energy_rows", "_machine_rows", "_pstate_rows", "_pstate_hosts",
)  # fmt: skip


def state(engine: Engine, message: Message) -> Any:
    """The message and everything the engine keeps, exactly."""
    events = [
        (exact(e.timestamp), e.type, exact(e.data) if e.type != "SIMULATION_BEGINS" else None)
        for e in message.events
    ]
    jobs = [
        tuple(exact(getattr(job, name)) for name in JOB_FIELDS)
        for job in sorted(engine.jobs.values(), key=lambda job: job._index)
    ]
    fields = [exact(getattr(engine, name)) for name in ENGINE_FIELDS]
    energies = exact(engine.host_energy()) if engine._host_energies else None
    return exact(message.now), events, jobs, fields, energies


def run_both(
    data: st.DataObject,
    platform: SimPlatform,
    workload: Workload,
    *,
    trace: bool,
    host_energies: bool,
    state_change_events: bool,
) -> None:
    native, reference = (
        Engine(
            platform,
            workload,
            trace=trace,
            host_energies=host_energies,
            state_change_events=state_change_events,
            native=flag,
        )
        for flag in (True, False)
    )
    assert native.native and not reference.native
    assert state(native, native.start()) == state(reference, reference.start())
    for _ in range(data.draw(st.integers(1, 30), label="random steps")):
        if reference.finished:
            break
        decisions = random_decisions(data.draw, reference)
        expected = state(reference, reference.proceed(decisions))
        assert state(native, native.proceed(decisions)) == expected, decisions
    for _ in range(1000):
        if reference.finished:
            break
        decisions = closing_decisions(reference)
        expected = state(reference, reference.proceed(decisions))
        assert state(native, native.proceed(decisions)) == expected, decisions
    assert reference.finished and native.finished


@kernels_built
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    platform=platforms(),
    trace=st.booleans(),
    host_energies=st.booleans(),
    state_change_events=st.booleans(),
    paces_from=st.sampled_from([1, 2, 3, engine_module.PACES_FROM]),
)
def test_native_engine_matches_the_reference(
    data: st.DataObject,
    platform: SimPlatform,
    trace: bool,
    host_energies: bool,
    state_change_events: bool,
    paces_from: int,
) -> None:
    workload = data.draw(workloads(len(platform.hosts)), label="workload")
    saved = engine_module.PACES_FROM  # small: jobs count their hosts by speed (job._paces)
    engine_module.PACES_FROM = paces_from
    try:
        run_both(
            data,
            platform,
            workload,
            trace=trace,
            host_energies=host_energies,
            state_change_events=state_change_events,
        )
    finally:
        engine_module.PACES_FROM = saved


def small_engine(**options: Any) -> Engine:
    platform = SimPlatform.homogeneous(4, (GF, 0.5 * GF, 0.0), (10.0, 7.5, 1.25), (95.5, 61.0, 3.0))
    profiles = {"p": Profile("p", "parallel_homogeneous", cpu=1e10)}
    jobs = [JobSpec(f"j{i}", float(i), 2, "p", None) for i in range(4)]
    return Engine(platform, Workload(4, jobs, profiles, "w"), **options)


def drive(engine: Engine) -> list[Any]:
    """A fixed little run: starts, a switch of busy and idle hosts, to the end."""
    states = [state(engine, engine.start())]
    plan = [
        [],
        [ExecuteJob("w!j0", [0, 1])],
        [SetResourceState([1, 2], 1), ExecuteJob("w!j1", HostIds((2, 3)))],
        [SetResourceState(HostIds((0, 1, 2, 3)), 0)],
    ]
    for decisions in plan:
        states.append(state(engine, engine.proceed(decisions)))
    while not engine.finished:
        free = [h for h in range(4) if engine.host_job(h) is None]
        waiting = [j.id for j in engine.jobs.values() if j.state is SUBMITTED]
        decisions = [ExecuteJob(waiting[0], free[:2])] if waiting and len(free) >= 2 else []
        states.append(state(engine, engine.proceed(decisions)))
    return states


@kernels_built
def test_a_pickled_native_engine_goes_on_natively() -> None:
    engine = small_engine(native=True)
    engine.start()
    engine.proceed([])
    engine.proceed([ExecuteJob("w!j0", [0, 1])])
    copy = pickle.loads(pickle.dumps(engine))
    assert copy.native
    copy.proceed([SetResourceState([0, 3], 1)])
    assert copy._host_job[0] is copy.jobs["w!j0"]


@kernels_built
def test_figures_that_are_not_floats_run_the_python_loops() -> None:
    # Int watts (a platform built by hand): the kernels decline them (NotImplemented) before
    # changing anything, and the Python loops give the reference results.
    def engine(native: bool) -> Engine:
        platform = SimPlatform.homogeneous(4, (GF, GF // 2, 0), (10, 7, 1), (95, 61, 3))
        profiles = {"p": Profile("p", "parallel_homogeneous", cpu=1e10)}
        jobs = [JobSpec(f"j{i}", float(i), 2, "p", None) for i in range(4)]
        return Engine(platform, Workload(4, jobs, profiles, "w"), native=native)

    assert drive(engine(True)) == drive(engine(False))


def test_native_false_runs_the_reference() -> None:
    assert not small_engine(native=False).native


def test_native_true_without_kernels_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_native.PURE_PYTHON, "1")
    assert not small_engine().native
    with pytest.raises(SimulationError, match="native=True.*HDEEPRM_PURE_PYTHON is set"):
        small_engine(native=True)


@kernels_built
@pytest.mark.parametrize("host_energies", [True, False])
@pytest.mark.parametrize("trace", [True, False])
def test_a_fixed_run_is_the_same_natively(trace: bool, host_energies: bool) -> None:
    options = {"trace": trace, "host_energies": host_energies}
    assert drive(small_engine(native=True, **options)) == drive(
        small_engine(native=False, **options)
    )


@kernels_built
@pytest.mark.parametrize("paces_from", [1, engine_module.PACES_FROM])
def test_wide_jobs_move_between_paces_the_same_natively(
    paces_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hosts of one job switched in groups (several at one speed, then some of them back):
    # its hosts counted by speed (job._paces) move as in the Python loop.
    monkeypatch.setattr(engine_module, "PACES_FROM", paces_from)
    plan = [
        [SetResourceState([5], 2)],
        [SetResourceState([5], 0)],
        [SetResourceState(range(10), 1)],
        [SetResourceState(range(5), 0), SetResourceState([7, 11], 2)],
        [SetResourceState(range(5, 10), 0)],
        [SetResourceState([3], 3), SetResourceState([11], 0)],
        [SetResourceState([3], 0)],
    ]
    runs = []
    for native in (True, False):
        platform = SimPlatform.homogeneous(
            12, (GF, 0.5 * GF, 0.2 * GF, 1e-6 * GF), (10.0, 8.0, 4.0, 1.0), (100.0, 80.0, 40.0, 9.5)
        )
        profiles = {"p": Profile("p", "parallel_homogeneous", cpu=1e10)}
        engine = Engine(
            platform, Workload(12, [JobSpec("j", 0.0, 12, "p")], profiles, "w"), native=native
        )
        states = [state(engine, engine.start()), state(engine, engine.proceed([]))]
        states.append(
            state(engine, engine.proceed([ExecuteJob("w!j", range(12)), CallMeLater(1.0)]))
        )
        for step, decisions in enumerate(plan):
            wake = [CallMeLater(step + 2.0)] if step + 1 < len(plan) else []
            states.append(state(engine, engine.proceed([*decisions, *wake])))
        while not engine.finished:
            states.append(state(engine, engine.proceed([])))
        runs.append(states)
    assert runs[0] == runs[1]


#: Allocations for j1 while j0 runs on hosts 0 and 1, as made afresh for each engine.
ALLOCS = {
    "free, in any order": lambda: [3, 2],
    "one host": lambda: (2,),
    "an iterator (read once)": lambda: iter([2, 3]),
    "a range": lambda: range(2, 4),
    "not exactly ints": lambda: [True, 2],
    "empty": lambda: [],
    "a busy host": lambda: [1, 2],
    "no such host": lambda: [2, 4],
    "a negative id": lambda: [-1, 2],
    "a duplicate": lambda: [2, 2],
    "a duplicate, unsorted": lambda: [3, 2, 3],
    "a huge id": lambda: [2**70],
}


@kernels_built
@pytest.mark.parametrize("make", ALLOCS.values(), ids=ALLOCS.keys())
def test_allocations_are_checked_the_same_natively(make: Any) -> None:
    outcomes = []
    for native in (True, False):
        engine = small_engine(native=native)
        engine.start()
        engine.proceed([])
        engine.proceed([ExecuteJob("w!j0", HostIds((0, 1)))])
        try:
            message = engine.proceed([ExecuteJob("w!j1", make())])
        except SimulationError as error:
            outcomes.append(("error", str(error), state(engine, Message(0.0, []))))
        else:
            outcomes.append(("ok", state(engine, message)))
    assert outcomes[0] == outcomes[1]
