"""The backfilling agent as a learner of the comparison: the environment it learns in plays
EASY as the comparison's replay does (by hand, and job for job on KTH-SP2 windows), and the
learner runs through the protocol and the command, deterministically."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from test_comparison import synthetic_jobs, write_setting
from trace_files import PLATFORM_EXAMPLES, trace_path

from hdeeprm.cli.compare import main as compare_main
from hdeeprm.comparison.backfill_agent import (
    BackfillAgentLearner,
    BackfillEnsemble,
    play_windows,
)
from hdeeprm.comparison.protocol import Protocol, compare, play_fixed
from hdeeprm.comparison.setting import JobRange, TraceSetting, Windows, load_setting
from hdeeprm.comparison.variants import PREDICTIONS, variant
from hdeeprm.environment.backfill_choice import easy_pick, sjbf_pick
from hdeeprm.scheduling.config import HeuristicTriple

# 4 cores. A (2 cores, 100 s) runs from 0. B (3 cores) waits from 1: reserved at 100, when
# A's cores free, with 2 + 2 - 3 = 1 core spare. C and D (1 core each) come at 2: C ends by
# 2 + 98 = 100, on time, and D (500 s) takes the spare core, so EASY starts both at 2.
# Starts 0, 100, 2, 2: waits 0, 99, 0, 0; bounded slowdowns 1, (99 + 100) / 100, 1, 1.
# (Recomputing the reservation after C starts would count C's core, which frees at 100 too,
# after B's need is met, and leave D no spare core.)
TIE = [(0, 100, 2, 100), (1, 100, 3, 100), (2, 98, 1, 98), (2, 500, 1, 500)]


def test_reservation_kept_through_the_pass_worked_by_hand(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, TIE))
    windows = Windows(setting, 4, (0,))
    (score,) = play_windows(windows, easy_pick)
    assert score.max_wait == 99.0
    assert score.mean_bsld == pytest.approx((1 + 1.99 + 1 + 1) / 4)
    assert play_fixed(variant(), windows) == [score]


# 4 cores. A and A2 (1 core each, 100 s) asked for 10 s and 20 s: from then on they may end at
# any instant. B (3 cores) and C (1 core, 500 s) come at 30: B is reserved "now", counting
# both overdue cores (2 free + 2 = 4, 1 spare), so EASY starts C at 30 on the spare core and B
# at 100. Waits 0, 0, 70, 0; bounded slowdowns 1, 1, (70 + 100) / 100, 1. (Counting only the
# overdue cores B needs would leave none spare, and C would wait to 100.)
OVERDUE = [(0, 100, 1, 10), (0, 100, 1, 20), (30, 100, 3, 100), (30, 500, 1, 500)]


def test_jobs_past_their_request_count_as_free_now_worked_by_hand(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, OVERDUE))
    windows = Windows(setting, 4, (0,))
    (score,) = play_windows(windows, easy_pick)
    assert score.max_wait == 70.0
    assert score.mean_bsld == pytest.approx((1 + 1 + 1.7 + 1) / 4)
    assert play_fixed(variant(), windows) == [score]


# 4 cores, AVE2. A (user 1, 1 core) asked for 100 s and ran 10 s. H (user 2, 2 cores, 100 s)
# starts at 20; R (user 3, 4 cores, 50 s) comes at 21 and is reserved at 120, no core spare.
# C (user 1, 1 core, 10 s, asked for 200 s) comes at 22: AVE2 predicts 10 s, A's run, so C
# ends by 120 and backfills at 22; with the user estimates it ends after 120 and waits for R
# (120-170). Waits 0, 0, 99, 0 (148 with estimates); bounded slowdowns 1, 1, 149 / 50, 1 (with
# estimates (148 + 10) / 10 = 15.8).
PREDICTED = [(0, 10, 1, 100, 1), (20, 100, 2, 100, 2), (21, 50, 4, 50, 3), (22, 10, 1, 200, 1)]


def test_reservation_with_the_variants_predictor_worked_by_hand(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, PREDICTED))
    windows = Windows(setting, 4, (0,))
    (ave2,) = play_windows(windows, easy_pick, triple=HeuristicTriple("ave2"))
    assert (ave2.max_wait, ave2.mean_bsld) == (99.0, pytest.approx((1 + 1 + 2.98 + 1) / 4))
    assert play_fixed(variant(predictor="ave2"), windows) == [ave2]
    (estimates,) = play_windows(windows, easy_pick)
    assert estimates.max_wait == 148.0
    assert estimates.mean_bsld == pytest.approx((1 + 1 + 2.98 + 15.8) / 4)
    seen = []  # the one offer: C, observed with the run time planned for it, AVE2's 10 s

    def look(env) -> int:
        (job,) = env.visible_jobs
        seen.append((job.req_time, env.predicted(job), env.observation()[1]))
        return 0

    play_windows(windows, look, triple=HeuristicTriple("ave2"))
    ((requested, predicted, observed),) = seen
    assert (requested, predicted) == (200.0, 10.0)
    assert observed == pytest.approx(10.0 / 200.0)  # scaled by the longest request, 200 s


@pytest.mark.parametrize(
    "ordering,predictor,correction",
    [
        ("SPF", "ave2", "requested"),
        ("F4", "ave2", "incremental"),
        ("UNICEP", "regression", "doubling"),
    ],
)
def test_environment_reserves_as_the_predicting_variants_on_kth(
    ordering, predictor, correction
) -> None:
    """AVE2 and E-Loss predictions, with each correction, order the queue, make the
    reservation and decide what ends by it, as the variant's scheduler does (two loaded
    500-job windows of KTH-SP2: predictions that are too short are corrected while jobs run)."""
    setting = load_setting(
        trace_path("KTH-SP2-1996-2.1-cln.swf.gz"), PLATFORM_EXAMPLES / "kth_sp2.json"
    )
    windows = Windows(setting, 500, (16000, 26000))
    triple = HeuristicTriple(predictor, correction)
    for pick, backfill in ((easy_pick, "FCFS"), (sjbf_pick, "SPF")):
        got = play_windows(windows, pick, ordering=ordering, triple=triple)
        assert got == play_fixed(variant(ordering, backfill, predictor, correction), windows)
    assert got != play_windows(windows, sjbf_pick, ordering=ordering)  # the predictor matters


@pytest.mark.parametrize("ordering", ["FCFS", "F4", "UNICEP"])
def test_environment_is_easy_job_for_job_on_kth(ordering) -> None:
    """Both backfill rules under three primary orderings (static, F4; dynamic, UNICEP) on
    three loaded 500-job windows of KTH-SP2 (jobs running past their requests included)."""
    setting = load_setting(
        trace_path("KTH-SP2-1996-2.1-cln.swf.gz"), PLATFORM_EXAMPLES / "kth_sp2.json"
    )
    windows = Windows(setting, 500, (16000, 20000, 26000))
    for pick, backfill in ((easy_pick, "FCFS"), (sjbf_pick, "SPF")):
        got = play_windows(windows, pick, ordering=ordering)
        assert got == play_fixed(variant(ordering, backfill), windows)


def test_unknown_ordering_is_refused(tmp_path) -> None:
    setting = load_setting(*write_setting(tmp_path, TIE))
    with pytest.raises(ValueError, match="unknown ordering 'XYZ'"):
        play_windows(Windows(setting, 4, (0,)), easy_pick, ordering="XYZ")
    windows = Windows(setting, 4, (0,))
    with pytest.raises(ValueError, match="unknown predictor 'oracle'"):
        play_windows(windows, easy_pick, triple=HeuristicTriple("oracle"))
    with pytest.raises(ValueError, match="unknown correction 'halving'"):
        play_windows(windows, easy_pick, triple=HeuristicTriple("ave2", "halving"))


def small_comparison(tmp_path) -> tuple[TraceSetting, Protocol]:
    """A loaded 8-core trace of 400 jobs: 50-job windows, 2 of 3 pool windows per seed, 2
    held-out windows, the 36 variants with user estimates."""
    setting = load_setting(*write_setting(tmp_path, synthetic_jobs(400), cores=8))
    protocol = Protocol(
        JobRange(0, 200),
        JobRange(200, 400),
        window_jobs=50,
        pool_windows=3,
        train_windows=2,
        test_windows=2,
        predictions=PREDICTIONS[:1],
    )
    return setting, protocol


TINY = BackfillAgentLearner(timesteps=256, num_envs=1, num_steps=128, minibatch=64)


def test_learner_through_the_protocol_is_deterministic(tmp_path) -> None:
    setting, protocol = small_comparison(tmp_path)
    runs = [compare(setting, protocol, [0], learner=TINY) for _ in range(2)]
    first, second = (run.seeds[0] for run in runs)
    assert runs[0].learner == "backfill-choice"
    assert len(first.learned_test) == 2
    assert first.learned_test == second.learned_test
    assert first.learned.describe().startswith(f"EASY({first.baseline.primary}/agent")
    with pytest.raises(ValueError, match="timesteps must be >= 1"):
        BackfillAgentLearner(timesteps=0)
    undiscounted = dataclasses.replace(TINY, gamma=1.0)
    (seed,) = compare(setting, protocol, [0], learner=undiscounted).seeds
    assert seed.learned.agent.config.gamma == 1.0 and first.learned.agent.config.gamma == 0.99
    assert seed.learned.describe().endswith("PPO 256 steps (gamma 1)")
    for gamma in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\]"):
            BackfillAgentLearner(gamma=gamma)


def test_command_with_the_backfilling_agent(tmp_path) -> None:
    trace, platform = write_setting(tmp_path, synthetic_jobs(400), cores=8)
    out = tmp_path / "out"
    args = [str(trace), str(platform), "--window-jobs", "50", "--seeds", "0"]
    args += ["--train", "0:200", "--test", "200:400", "--pool-windows", "3", "--train-windows", "2"]
    args += ["--test-windows", "2", "--predictions", "estimates"]
    args += ["--learner", "backfill-choice", "--timesteps", "256", "--members", "2"]
    args += ["--gamma", "1", "--out", str(out)]
    result = CliRunner().invoke(compare_main, args)
    assert result.exit_code == 0, result.output
    assert "learned: backfill-choice" in result.output
    saved = json.loads((out / "results.json").read_text())
    assert saved["protocol"]["learner"] == "backfill-choice"
    assert (
        "/agent; estimates), 2 agents averaged, each PPO 256 steps (gamma 1)"
        in saved["seeds"][0]["learned"]
    )


def test_warm_start_clones_the_chosen_backfill_rule(tmp_path) -> None:
    """Cloned on 4 training windows (300 epochs: few decisions), the agent agrees with the
    chosen variant's backfill rule on 93% of its decisions (90% of those with a choice)."""
    setting, protocol = small_comparison(tmp_path)
    learner = BackfillAgentLearner(
        timesteps=256,
        num_envs=1,
        num_steps=128,
        minibatch=64,
        learning_rate=1e-9,
        warm_windows=4,
        warm_epochs=300,
    )
    (result,) = compare(setting, protocol, [0], learner=learner).seeds
    warm = result.learned.warm
    assert warm.rule == f"{result.baseline.primary}/{result.baseline.backfill}"
    assert warm.windows == 4 and warm.picks > 50
    assert warm.agreement >= 0.9 and warm.choice_agreement >= 0.85
    assert "after cloning" in result.learned.describe()


def test_snapshot_kept_is_the_best_on_the_training_windows(tmp_path) -> None:
    """With a warm start and 2 snapshots, three networks are compared on the seed's training
    windows (the clone, after 1 update, after 2): the kept one's training figures are the
    lowest of the three, and it plays the held-out windows."""
    setting, protocol = small_comparison(tmp_path)
    learner = BackfillAgentLearner(
        timesteps=256, num_envs=1, num_steps=128, minibatch=64, warm_windows=2, snapshots=2
    )
    (result,) = compare(setting, protocol, [0], learner=learner).seeds
    trained = result.learned
    names = [name for name, _ in trained.candidates]
    assert names == ["clone", "update 1 of 2", "update 2 of 2"]
    best = min(mean for _, mean in trained.candidates)
    assert result.learned_train.mean_bsld == best
    assert trained.kept.startswith(names[[m for _, m in trained.candidates].index(best)])
    assert trained.play(Windows(setting, 50, tuple(result.train_starts)))[0].nb_jobs == 50
    with pytest.raises(ValueError, match="warm_windows must be >= 0"):
        BackfillAgentLearner(warm_windows=-1)


def test_learner_reserves_with_the_chosen_variants_predictor(tmp_path) -> None:
    """Among AVE2 variants only, the chosen one predicts with AVE2 and corrects
    incrementally: the agent's environment does the same (and says so)."""
    setting, protocol = small_comparison(tmp_path)
    protocol = dataclasses.replace(protocol, predictions=(("ave2", "incremental"),))
    (result,) = compare(setting, protocol, [0], learner=TINY).seeds
    assert result.baseline.triple.predictor == "ave2"
    triple = result.learned.triple
    assert (triple.predictor, triple.correction) == ("ave2", "incremental")
    assert "/agent; ave2, incremental), PPO 256 steps" in result.learned.describe()
    with pytest.raises(ValueError, match="slot_order_bias must be >= 0"):
        BackfillAgentLearner(slot_order_bias=-1.0)


class _FixedScores:
    """A member whose job selector gives fixed logits (masked as the real one)."""

    def __init__(self, logits: list[float]) -> None:
        self.job_net = self
        self._logits = torch.tensor([logits])

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self._logits.masked_fill(~mask, -1e9)


class _State:
    def observation(self) -> np.ndarray:
        return np.zeros(4, dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        return np.array([True, True, False])


def test_ensemble_acts_on_the_mean_probability_worked_by_hand() -> None:
    """Logits (3, 0) give slot 0 probability e^3 / (e^3 + 1) = 0.953; (0, 0.5) give it
    1 / (1 + e^0.5) = 0.378. Two members of the second kind vote for slot 1, but the mean of
    the three puts (0.953 + 2 * 0.378) / 3 = 0.570 on slot 0: the ensemble starts it. A
    masked slot is never chosen, however high its score."""
    ensemble = BackfillEnsemble(
        [
            _FixedScores([3.0, 0.0, 9.0]),
            _FixedScores([0.0, 0.5, 9.0]),
            _FixedScores([0.0, 0.5, 9.0]),
        ]
    )
    assert ensemble.act(_State()) == 0
    assert BackfillEnsemble(ensemble.members[1:]).act(_State()) == 1


def test_ensemble_members_train_with_their_own_seeds(tmp_path) -> None:
    """With 2 members, the first is the single agent of the same seed (same weights) and the
    second differs; the ensemble plays the held-out windows and says what it is."""
    setting, protocol = small_comparison(tmp_path)
    (single,) = compare(setting, protocol, [0], learner=TINY).seeds
    pair = dataclasses.replace(TINY, members=2)
    (result,) = compare(setting, protocol, [0], learner=pair).seeds
    first, second = result.learned.agent.members
    weights = single.learned.agent.job_net.state_dict()
    assert all(torch.equal(v, first.job_net.state_dict()[k]) for k, v in weights.items())
    assert not all(torch.equal(v, second.job_net.state_dict()[k]) for k, v in weights.items())
    assert ", 2 agents averaged, each PPO 256 steps" in result.learned.describe()
    assert len(result.learned_test) == 2 and result.learned_train.nb_jobs > 0
    with pytest.raises(ValueError, match="members must be >= 1"):
        BackfillAgentLearner(members=0)


def test_runs_are_chosen_among_on_the_training_windows(tmp_path) -> None:
    """``runs=2, snapshots=2``: four networks (two per run, seeds 0 and 1000) compared on the
    seed's training windows; the kept one is the lowest, whichever run it is from, and the
    first run alone is the single-run learner's, bit for bit."""
    setting, protocol = small_comparison(tmp_path)
    two = dataclasses.replace(TINY, snapshots=2)
    (single,) = compare(setting, protocol, [0], learner=two).seeds
    (result,) = compare(setting, protocol, [0], learner=dataclasses.replace(two, runs=2)).seeds
    trained = result.learned
    names = [name for name, _ in trained.candidates]
    assert names == [f"run {k} update {u} of 2" for k in (1, 2) for u in (1, 2)]
    # run 1's candidates score as the single run's (same seed, same training)
    assert trained.candidates[:2] == tuple(
        (f"run 1 {name}", mean) for name, mean in single.learned.candidates
    )
    best = min(mean for _, mean in trained.candidates)
    assert result.learned_train.mean_bsld == best
    assert trained.kept.startswith(names[[m for _, m in trained.candidates].index(best)])
    assert ", best of 2 runs of PPO 256 steps" in trained.describe()
    with pytest.raises(ValueError, match="runs above 1 need snapshots >= 2"):
        BackfillAgentLearner(runs=2)
    with pytest.raises(ValueError, match="runs must be >= 1"):
        BackfillAgentLearner(runs=0)


def test_command_refuses_runs_without_snapshots(tmp_path) -> None:
    trace, platform = write_setting(tmp_path, synthetic_jobs(400), cores=8)
    args = [str(trace), str(platform), "--learner", "backfill-choice", "--runs", "2"]
    result = CliRunner().invoke(compare_main, args)
    assert result.exit_code != 0
    assert "--runs" in result.output and "needs --snapshots 2 or more" in result.output


def test_members_runs_never_share_a_seed() -> None:
    """Member k's runs take seeds k * runs, ..., k * runs + runs - 1 (stride 1,000) after the
    training seed: with one run, member k trains with seed + 1,000 k as before."""
    from hdeeprm.training.snapshots import run_seed

    assert [TINY.member_seed(7, k) for k in range(3)] == [7, 1007, 2007]
    both = dataclasses.replace(TINY, snapshots=2, runs=2, members=3)
    seeds = [run_seed(both.member_seed(7, k), j) for k in range(3) for j in range(2)]
    assert seeds == [7, 1007, 2007, 3007, 4007, 5007]
