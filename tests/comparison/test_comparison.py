"""The comparison of a learned EASY with EASY variants: schedules and figures worked out by
hand on a 4-core platform, the online learner's choice, the window draws, the protocol's
determinism and the command's errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hdeeprm.cli.compare import main as compare_main
from hdeeprm.comparison.online import OnlineTunedEasy, OnlineTuning
from hdeeprm.comparison.protocol import GUARD_HOURS, Protocol, compare, worst_wait_ratio
from hdeeprm.comparison.replay import WindowScore, replay
from hdeeprm.comparison.setting import JobRange, draw_windows, load_setting
from hdeeprm.comparison.variants import easy_variants, label, variant
from hdeeprm.scheduling import BackfillScheduler

ROOT = Path(__file__).resolve().parents[2]


def swf_line(jid: int, submit: float, run: float, procs: int, req: float, user: int = 1) -> str:
    return f"{jid} {submit:g} 0 {run:g} {procs} -1 -1 {procs} {req:g} -1 1 {user} 1 -1 -1 -1 -1 -1"


def write_setting(tmp_path: Path, jobs: list[tuple], cores: int = 4):
    """An SWF of ``(submit, run, cores, requested[, user])`` jobs (user 1 by default) and a
    ``cores``-node platform."""
    raw = json.loads((ROOT / "platform_examples/kth_sp2.json").read_text())
    raw["clusters"][0]["nodes"][0]["number"] = cores
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(raw))
    trace = tmp_path / "trace.swf"
    trace.write_text("\n".join(swf_line(i + 1, *job) for i, job in enumerate(jobs)) + "\n")
    return trace, platform


def test_replay_worked_by_hand(tmp_path) -> None:
    """J1 takes the 4 cores for 100 s; J2 (2 cores, 50 s) and J3 (1 core, 10 s) cannot
    backfill beside it and both start at 100: waits 0, 90, 80 s; bounded slowdowns 1,
    (90 + 50) / 50 = 2.8 and (80 + 10) / 10 = 9."""
    trace, platform = write_setting(tmp_path, [(0, 100, 4, 100), (10, 50, 2, 50), (20, 10, 1, 20)])
    setting = load_setting(trace, platform)
    score = replay(setting, setting.workload, BackfillScheduler(variant()))
    assert score.nb_jobs == 3
    assert score.mean_wait == pytest.approx(170 / 3)
    assert score.max_wait == pytest.approx(90)
    assert score.mean_bsld == pytest.approx((1 + 2.8 + 9) / 3)
    assert score.max_bsld == pytest.approx(9)
    mean = WindowScore.mean_of([score, WindowScore(1.0, 0.0, 200.0, 1.0, 5)])
    assert (mean.mean_bsld, mean.max_wait, mean.nb_jobs) == (pytest.approx(2.6333333), 200.0, 8)


# Period 1 (100 s): A holds the 4 cores to t = 50; B (4 cores, 40 s) and C (1 core, 5 s) wait.
# FCFS starts B at 50 and C at 90: bounded slowdowns 1, (49 + 40) / 40, (88 + 5) / 10, sum
# 12.525. SPF starts C at 50 and B at 55: 1, (54 + 40) / 40, (48 + 5) / 10, sum 8.65.
# D at t = 150 closes period 1.
TWO_PERIODS = [(0, 50, 4, 50), (1, 40, 4, 40), (2, 5, 1, 5), (150, 1, 1, 1)]


def test_online_learner_switches_to_the_cheaper_ordering(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, TWO_PERIODS))
    tuning = OnlineTuning((("FCFS", "FCFS"), ("SPF", "FCFS")), period=100.0)
    learner = OnlineTunedEasy(setting, setting.workload, variant(), tuning)
    score = replay(setting, setting.workload, learner)
    assert learner.history == [0]  # FCFS ran period 1
    assert learner.totals.tolist() == pytest.approx([12.525, 8.65])
    assert learner.choice == 1 and learner.inner.primary == "SPF"
    # Period 1 ran FCFS: C waited 88 s.
    assert score.max_wait == pytest.approx(88)
    # Waits as the cost: FCFS 0 + 49 + 88, SPF 0 + 54 + 48.
    waits = OnlineTuning(tuning.candidates, period=100.0, cost="wait")
    learner = OnlineTunedEasy(setting, setting.workload, variant(), waits)
    replay(setting, setting.workload, learner)
    assert learner.totals.tolist() == pytest.approx([137, 102])


def test_online_learner_decay_and_reset(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, TWO_PERIODS))
    tuning = OnlineTuning((("FCFS", "FCFS"), ("SPF", "FCFS")), period=100.0, decay=0.5)
    learner = OnlineTunedEasy(setting, setting.workload, variant(), tuning)
    first = replay(setting, setting.workload, learner)
    learner.reset()
    assert learner.choice == 0 and learner.history == [] and learner.inner.primary == "FCFS"
    assert replay(setting, setting.workload, learner) == first


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"candidates": ()}, "at least one candidate"),
        ({"period": 0.0}, "period"),
        ({"decay": 0.0}, "decay"),
        ({"cost": "energy"}, "cost"),
    ],
)
def test_bad_tuning(kwargs, match) -> None:
    base = {"candidates": (("FCFS", "FCFS"),)}
    with pytest.raises(ValueError, match=match):
        OnlineTuning(**{**base, **kwargs})


@settings(max_examples=200, deadline=None)
@given(
    first=st.integers(0, 1000),
    length=st.integers(1, 1000),
    window=st.integers(1, 100),
    count=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_windows_lie_in_their_range(first, length, window, count, seed) -> None:
    span = JobRange(first, first + length)
    if window > length:
        with pytest.raises(ValueError):
            draw_windows(span, window, count, seed)
        return
    starts = draw_windows(span, window, count, seed)
    assert starts == sorted(starts) == draw_windows(span, window, count, seed)
    assert len(starts) == count
    assert all(first <= s and s + window <= first + length for s in starts)
    if count <= length - window + 1:
        assert len(set(starts)) == count


def test_variant_grid_and_labels() -> None:
    grid = easy_variants()
    assert len(grid) == 18 * 2 * 7 == len(set(grid))
    assert label(variant()) == "EASY(FCFS/FCFS; estimates)"
    assert label(variant("F2", "SPF", "regression", "incremental")) == (
        "EASY(F2/SPF; E-Loss, incremental)"
    )
    assert variant("SAF", "SPF").triple.variant == "easy-sjbf"


def synthetic_jobs(n: int, seed: int = 7) -> list[tuple[float, float, int, float]]:
    """A loaded 8-core trace: runs 10-3,000 s, estimates 1-4 times the run."""
    import numpy as np

    rng = np.random.default_rng(seed)
    t, jobs = 0.0, []
    for _ in range(n):
        t += float(rng.exponential(120.0))
        run = float(rng.integers(10, 3000))
        jobs.append((round(t), run, int(rng.integers(1, 9)), run * float(rng.integers(1, 5))))
    return jobs


def test_protocol_is_deterministic_and_reads_no_held_out_job(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, synthetic_jobs(400), cores=8))
    protocol = Protocol(
        JobRange(0, 200),
        JobRange(200, 400),
        window_jobs=50,
        pool_windows=4,
        train_windows=2,
        test_windows=3,
        orderings=("FCFS", "SPF", "SAF", "F1"),
        predictions=(("requested", "requested"),),
        top_k=3,
        period=3600.0,
    )
    one = compare(setting, protocol, [0, 1])
    two = compare(setting, protocol, [0, 1])
    assert all(s + 50 <= 200 for s in one.pool_starts)
    assert all(s >= 200 for s in one.test_starts)
    for a, b in zip(one.seeds, two.seeds):
        assert a.baseline == b.baseline and a.learned == b.learned
        assert a.learned_test == b.learned_test and a.baseline_test == b.baseline_test
        assert set(a.train_starts) <= set(one.pool_starts) and len(a.train_starts) == 2
        # The learned scheduler starts from the chosen variant, guarded by its worst wait.
        assert a.learned.tuning.candidates[0] == (a.baseline.primary, a.baseline.backfill)
        guards = {a.baseline_train.max_wait, *(h * 3600.0 for h in GUARD_HOURS)}
        assert a.learned.base.theta in guards
        assert len(a.learned_test) == 3


def test_command_end_to_end(tmp_path) -> None:
    trace, platform = write_setting(tmp_path, synthetic_jobs(400), cores=8)
    out = tmp_path / "out"
    args = [str(trace), str(platform), "--window-jobs", "50", "--seeds", "0,1"]
    args += ["--train", "0:200", "--test", "200:400", "--pool-windows", "3", "--train-windows", "2"]
    args += ["--test-windows", "2", "--predictions", "estimates", "--top-k", "2", "--period", "1"]
    result = CliRunner().invoke(compare_main, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "seed 0: learned" in result.output and "seed 1: learned" in result.output
    assert "EASY-SJBF (estimates)" in result.output
    saved = json.loads((out / "results.json").read_text())
    assert [s["seed"] for s in saved["seeds"]] == [0, 1]
    assert len(saved["seeds"][0]["learned_test"]) == 2
    assert saved["protocol"]["variants"] == 36
    assert all(math.isfinite(s["train_cpu_s"]) for s in saved["seeds"])
    # Never overwritten.
    again = CliRunner().invoke(compare_main, [*args, "--out", str(out)])
    assert again.exit_code == 2 and "exists" in again.output


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--train", "0:20"], "fewer jobs than one window"),
        (["--train", "0-20"], "expected FIRST:STOP"),
        (["--test", "300:500"], "within the trace's 400 jobs"),
        (["--seeds", "a,b"], "expected integers"),
        (["--test-platform", "x.json"], "needs --test-trace"),
    ],
)
def test_command_bad_options(tmp_path, extra, message) -> None:
    trace, platform = write_setting(tmp_path, synthetic_jobs(400), cores=8)
    result = CliRunner().invoke(
        compare_main, [str(trace), str(platform), "--window-jobs", "50", *extra]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_command_missing_trace(tmp_path) -> None:
    _, platform = write_setting(tmp_path, synthetic_jobs(10))
    result = CliRunner().invoke(compare_main, [str(tmp_path / "none.swf"), str(platform)])
    assert result.exit_code == 2 and "none.swf" in result.output


def test_worst_wait_ratio_by_hand() -> None:
    def w(max_wait: float) -> WindowScore:
        return WindowScore(1.0, 0.0, max_wait, 1.0, 1)

    assert worst_wait_ratio([w(10), w(30)], [w(20), w(20)]) == 1.5
    assert worst_wait_ratio([w(0)], [w(0)]) == 1.0
    assert worst_wait_ratio([w(5)], [w(0)]) == math.inf
    with pytest.raises(ValueError):
        worst_wait_ratio([w(1)], [w(1), w(2)])


def test_command_reuses_its_grid(tmp_path) -> None:
    trace, platform = write_setting(tmp_path, synthetic_jobs(400), cores=8)
    args = [str(trace), str(platform), "--window-jobs", "50", "--seeds", "0"]
    args += ["--train", "0:200", "--test", "200:400", "--pool-windows", "3"]
    args += ["--train-windows", "2", "--test-windows", "2", "--predictions", "estimates"]
    first = CliRunner().invoke(compare_main, [*args, "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    kept = tmp_path / "a" / "results.json"
    again = CliRunner().invoke(
        compare_main, [*args, "--reuse-grid", str(kept), "--out", str(tmp_path / "b")]
    )
    assert again.exit_code == 0, again.output
    assert "EASY variants on the" not in again.output  # nothing replayed
    one, two = (json.loads((tmp_path / d / "results.json").read_text()) for d in "ab")
    for key in ("seeds", "references", "grid"):
        if key == "seeds":
            for x, y in zip(one[key], two[key]):
                x.pop("train_cpu_s"), y.pop("train_cpu_s")
        assert one[key] == two[key]
    other = [*args, "--data-seed", "5"]
    wrong = CliRunner().invoke(compare_main, [*other, "--reuse-grid", str(kept)])
    assert wrong.exit_code == 2 and "pool windows start at" in wrong.output
