"""Does imitating a simulation-based teacher pay? The Gaia learning benchmark, by imitation.

Usage: ``python -m studies.imitation.imitation_benchmark [--mode quick|medium|full]
[--objective avg_job_slowdown|energy_consumption] [--observation queue|minimal|...]
[--pair NAME] [--candidates PAIR [PAIR ...]] [--segment N] [--tolerance T] [--teacher-windows N]
[--teacher-seed S] [--teacher-sampling uniform|load] [--dagger-rounds N] [--biases B [B ...]]
[--epochs N] [--hidden N] [--weight-decay W] [--seed S] [--students K] [--quorums Q [Q ...]]
[--ignore-head] [--workers N] [--out DIR] [--no-held-out] [--demonstrations NPZ [NPZ ...]]
[--no-pairs] [--window-jobs N] [--train-jobs START END] [--eval-jobs START END]
[--train-windows N] [--eval-windows N]``

The same data, platform and split as ``studies/ppo_policy_pairs/learning_benchmark.py``
(Gaia trace, the thesis's 2,280-core Gaia platform; medium mode: 4,000-job windows, training part
jobs 0-15,000, held-out part jobs 15,000-23,000), with a learner that imitates instead of trial and
error:

1. **The pair** a practitioner would deploy: every pair of the action space plays the 8 fixed
   pair-choice windows of the training part (``--pair`` skips this); the best mean wins.
2. **Teacher** (:mod:`studies.imitation.rollout`): on ``--teacher-windows`` windows drawn
   (seed ``--teacher-seed``; uniformly, or with ``--teacher-sampling load`` in proportion to
   their offered load, so that busy windows, where placement matters, are taught more) from
   the training part, the rollout algorithm improves the pair
   segment by segment (``--segment`` decisions), comparing ``--candidates`` (default: the
   pair's job policy with every core policy) by simulating each to the window's end; a
   candidate replaces the pair for a segment only if it improves the window's objective by
   more than ``--tolerance`` (relative; default 0.1%, so quiet windows where every choice
   is within noise teach the pair). It sees the future; the student only sees observations.
3. **Student** (:mod:`studies.imitation.imitation`): the PPO network's actor, trained by
   cross-entropy on the teacher's decisions, its action space the teacher's candidates;
   then ``--dagger-rounds`` DAgger rounds (the student plays the teacher windows, the
   teacher labels the states it reached, the student is retrained on everything so far).
   ``--demonstrations`` trains the student on earlier runs' ``demonstrations.npz`` instead
   (no teacher: e.g. other student seeds on the same decisions, or the decisions of several
   runs together). ``--students K`` trains K students on the final decisions (seeds
   ``--seed`` and up; DAgger uses the first) and deploys their ensemble (the mean of their
   action probabilities, or a quorum vote). ``--ignore-head`` trains students blind to the
   ``queue`` observation's head jobs (:func:`~studies.imitation.imitation.head_job_features`).
4. **Deployment**, chosen on the training part only: the student's preference for the pair
   is raised by each logit of ``--biases`` (:func:`~studies.imitation.imitation.bias_action`),
   and with ``--students K`` each of ``--quorums`` is a quorum vote of the K students with
   the pair as fallback (:class:`~hdeeprm.training.ensemble.PolicyEnsemble`); each plays
   greedily on the 8 pair-choice windows; the best mean is deployed if it is better than the
   pair's there, the pair otherwise (a gate).
5. **Held-out**: the deployed policy, the unbiased student, every pair and random choice
   play the same windows of the held-out part (8 of jobs 15,000-23,000 in medium mode); the
   verdict compares the deployed policy with the pair of step 1.

``--trace``, ``--platform`` and the window options (``--window-jobs``, ``--train-jobs``,
``--eval-jobs``, ``--train-windows``: the pair-choice windows, ``--eval-windows``) run the
same on any trace and platform, as ``learning_benchmark.py`` does.

Writes ``options.json``, ``student_options.json`` (the same with the student's action space),
``teacher.csv`` (per teacher window and round: the pair's objective, the teacher's or the
student's, segments away from the pair), ``demonstrations.npz``, ``student.pt`` and
``model.pt`` (PPO checkpoints: ``hdeeprm-evaluate student_options.json --model model.pt``
plays the deployed student), ``evaluation.csv`` and ``evaluation.png`` in ``--out``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from hdeeprm._atomic import write_text
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ensemble import PolicyEnsemble
from hdeeprm.training.ppo import PPOTrainer
from studies.imitation.imitation import (
    CloneConfig,
    Demonstrations,
    accuracy,
    bias_action,
    clone,
    head_job_features,
    student_policy,
)
from studies.imitation.rollout import RolloutTeacher, TeacherResult
from studies.ppo_policy_pairs import learning_benchmark as lb


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=sorted(lb.MODES), default="medium")
    parser.add_argument("--objective", default="avg_job_slowdown")
    parser.add_argument("--observation", default="queue")
    parser.add_argument("--trace", type=Path, default=lb.TRACE)
    parser.add_argument("--platform", type=Path, default=lb.PLATFORM)
    parser.add_argument("--data-seed", type=int, default=1)
    parser.add_argument("--pair", help="the base pair (default: chosen on training windows)")
    parser.add_argument(
        "--candidates",
        nargs="+",
        help="pairs the teacher compares (default: the pair's job policy with every core policy)",
    )
    parser.add_argument("--segment", type=int, default=200, help="decisions per teacher choice")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=1e-3,
        help="relative gain a segment's candidate needs over the pair to replace it",
    )
    parser.add_argument("--teacher-windows", type=int, default=16)
    parser.add_argument("--teacher-seed", type=int, default=1)
    parser.add_argument(
        "--teacher-sampling",
        choices=["uniform", "load"],
        default="uniform",
        help="teacher windows drawn uniformly or in proportion to their offered load",
    )
    parser.add_argument("--dagger-rounds", type=int, default=1)
    parser.add_argument("--biases", type=float, nargs="+", default=[0.0, 1.0, 2.0, 3.0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0, help="the student's weights and batches")
    parser.add_argument(
        "--quorums",
        type=int,
        nargs="*",
        default=[],
        help="with --students K: quorum votes (pair as fallback) among the deployment choices",
    )
    parser.add_argument(
        "--ignore-head",
        action="store_true",
        help="students blind to the queue observation's head jobs",
    )
    lb.add_window_arguments(parser)
    parser.add_argument(
        "--students",
        type=int,
        default=1,
        help="students trained on the same decisions (seeds seed, seed + 1, ...), deployed "
        "as an ensemble of their mean probabilities",
    )
    parser.add_argument("--workers", type=int, default=1, help="teacher processes")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-held-out", action="store_true")
    parser.add_argument(
        "--demonstrations",
        type=Path,
        nargs="+",
        help="train the students on these demonstrations.npz of earlier runs (no teacher)",
    )
    parser.add_argument(
        "--no-pairs",
        action="store_true",
        help="held-out: only the pair chosen on the training windows beside the student",
    )
    args = parser.parse_args(argv)
    if min(args.teacher_windows, args.segment, args.students) < 1 or args.dagger_rounds < 0:
        parser.error(
            "--teacher-windows, --segment and --students must be >= 1, --dagger-rounds >= 0"
        )
    if any(not 1 <= q <= args.students for q in args.quorums):
        parser.error(f"--quorums must be between 1 and --students ({args.students})")
    if args.quorums and args.students < 2:
        parser.error("--quorums needs --students 2 or more")
    lb.check_window_arguments(parser, args)
    return args


def teacher_inputs(inputs, mode: dict, windows: int, seed: int, sampling: str = "uniform"):
    """``inputs`` whose ``val`` split is ``windows`` windows (seed ``seed``) of the training
    part, drawn uniformly or in proportion to their offered load (``sampling``): the
    teacher's windows."""
    return lb.with_val_windows(inputs, mode["train_jobs"], windows, seed, sampling)


# --- the teacher, one process per worker ---------------------------------------------------------
_TEACHER: RolloutTeacher | None = None


def _start_teacher(
    inputs, base: int, candidates: list[int], segment: int, maximize: bool, tolerance: float
) -> None:
    global _TEACHER
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    env = HeterogeneousClusterEnv(inputs=inputs, split="val")
    _TEACHER = RolloutTeacher(
        env, base, candidates, segment=segment, maximize=maximize, tolerance=tolerance
    )


def _label(task: tuple[int, dict | None]) -> TeacherResult:
    window, student = task
    assert _TEACHER is not None
    if student is None:
        return _TEACHER.improve(window)
    trainer = PPOTrainer(
        student["config"], None, spaces=(student["observation_size"], student["action_names"])
    )
    trainer.model.load_state_dict(student["model"])
    trainer.model._refresh()
    return _TEACHER.relabel(window, student_policy(trainer))


def label_windows(
    pool: ProcessPoolExecutor | None, windows: list[int], student: PPOTrainer | None
) -> list[TeacherResult]:
    """The teacher's results for ``windows`` (its own trajectories, or DAgger's on the
    student's), in window order, in the worker processes when there are several."""
    payload = None
    if student is not None:
        payload = {
            "config": student.config,
            "observation_size": student.observation_size,
            "action_names": student.action_names,
            "model": student.model.state_dict(),
        }
    tasks = [(w, payload) for w in windows]
    if pool is None:
        return [_label(t) for t in tasks]
    return list(pool.map(_label, tasks))


def teach(
    args: argparse.Namespace,
    mode: dict,
    student_inputs,
    student_names: list[str],
    base: int,
    config: CloneConfig,
    out: Path,
) -> tuple[PPOTrainer, Demonstrations]:
    """The teacher on the teacher windows, then ``--dagger-rounds`` DAgger rounds: the last
    student and every demonstration; ``teacher.csv`` in ``out``."""
    maximize = args.objective not in ev.MINIMIZED
    best = student_names[base]
    candidates = list(range(len(student_names)))
    t_inputs = teacher_inputs(
        student_inputs, mode, args.teacher_windows, args.teacher_seed, args.teacher_sampling
    )
    starts = HeterogeneousClusterEnv(inputs=t_inputs, split="val").windows.val_starts
    windows = list(range(len(starts)))
    print(
        f"teacher: rollout of {best} over {', '.join(student_names)}, segments of "
        f"{args.segment} decisions, {len(windows)} windows of the training part (first jobs "
        f"{starts}); {args.dagger_rounds} DAgger round(s); {args.workers} process(es)"
    )
    rows = ["round,window,first_job,pair,value,segments_away,episodes,decisions,cpu_s"]
    parts: list[Demonstrations] = []
    student = None
    init = (t_inputs, base, candidates, args.segment, maximize, args.tolerance)
    pool = None
    if args.workers > 1:
        pool = ProcessPoolExecutor(args.workers, initializer=_start_teacher, initargs=init)
    else:
        _start_teacher(*init)
    try:
        for round_ in range(args.dagger_rounds + 1):
            results = label_windows(pool, windows, student)
            who = "teacher" if student is None else "student"
            for r in results:
                away = sum(a != base for a in r.segment_actions)
                rows.append(
                    f"{round_},{r.window},{starts[r.window]},{r.base_value!r},{r.value!r},"
                    f"{away},{r.episodes},{r.decisions},{r.cpu_seconds:.2f}"
                )
                print(
                    f"  round {round_} window {r.window} (job {starts[r.window]}): pair "
                    f"{r.base_value:.5g}, {who} {r.value:.5g} ({r.improvement:+.1%}); "
                    f"teacher leaves the pair on {away} of {len(r.segment_actions)} "
                    f"segments; {r.episodes} episodes in {r.cpu_seconds:.0f} s CPU",
                    flush=True,
                )
            parts += [r.demonstrations for r in results]
            demos = Demonstrations.concat(parts)
            student = clone(demos, student_names, config)
            print(
                f"round {round_}: {who} mean {np.mean([r.value for r in results]):.6g} vs "
                f"pair {np.mean([r.base_value for r in results]):.6g}; student trained on "
                f"{len(demos)} decisions ({np.mean(demos.actions != base):.1%} away from "
                f"the pair), accuracy {accuracy(student, demos):.3f}",
                flush=True,
            )
    finally:
        if pool is not None:
            pool.shutdown()
    assert student is not None
    write_text(out / "teacher.csv", "\n".join(rows) + "\n")
    return student, demos


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for path in (args.trace, args.platform, *(args.demonstrations or [])):
        if path is not None and not path.is_file():
            print(f"not found: {path}", file=sys.stderr)
            return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    mode = lb.mode_with_windows(args)
    maximize = args.objective not in ev.MINIMIZED
    sign = -1.0 if maximize else 1.0
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        raw = lb.options_for(
            mode, args.objective, args.observation, args.data_seed, args.trace, args.platform
        )
        options_path = out / "options.json"
        write_text(options_path, json.dumps(raw, indent=2))
        inputs = prepare_inputs(options_from_json(raw, options_path), out)

        # 1. the pair, on the fixed pair-choice windows of the training part
        choice_inputs = lb.pair_choice_inputs(inputs, mode)
        choice_env = HeterogeneousClusterEnv(inputs=choice_inputs, split="val")
        names = choice_env.action_names
        pairs = {n: p for n, p in ev.baseline_policies(names, 0).items() if n != ev.RANDOM}
        if args.pair is not None:
            if args.pair not in pairs:
                print(f"--pair {args.pair!r} is not a pair of the action space", file=sys.stderr)
                return 2
            best = args.pair
            choice = ev.evaluate(choice_env, {best: pairs[best]}, seed=0)
        else:
            choice = ev.evaluate(choice_env, pairs, seed=0)
            best = ev.best_pair(ev.summarize(choice), args.objective, list(pairs))
        pair_values = [r.objective for r in choice if r.policy == best]
        pair_mean = math.fsum(pair_values) / len(pair_values)
        print(
            f"pair chosen on {len(pair_values)} training windows "
            f"(first jobs {choice_env.windows.val_starts}): {best} "
            f"({args.objective} {pair_mean:.6g})"
        )
        job_policy = best.split("-", 1)[0]
        candidate_names = args.candidates or [
            f"{job_policy}-{core}" for core in CORE_POLICIES if f"{job_policy}-{core}" in names
        ]
        if best not in candidate_names:
            candidate_names = [best, *candidate_names]
        unknown = [c for c in candidate_names if c not in names]
        if unknown:
            print(f"--candidates not in the action space: {', '.join(unknown)}", file=sys.stderr)
            return 2
        # the student's action space is the teacher's candidates (so its mask is theirs)
        student_inputs = lb.with_selection(inputs, candidate_names)
        student_raw = json.loads(json.dumps(raw))
        student_raw["pybatsim"]["env"]["actions"] = lb.selection_block(candidate_names)
        write_text(out / "student_options.json", json.dumps(student_raw, indent=2))
        student_names = HeterogeneousClusterEnv(inputs=student_inputs, split="eval").action_names
        base = student_names.index(best)

        # 2-3. teacher and student on the teacher windows (or saved demonstrations)
        ignore = ()
        if args.ignore_head:
            size = HeterogeneousClusterEnv(inputs=student_inputs, split="eval").observation_size
            try:
                ignore = head_job_features(size)
            except ValueError as exc:
                print(f"--ignore-head: {exc}", file=sys.stderr)
                return 2
        config = CloneConfig(
            hidden=args.hidden,
            epochs=args.epochs,
            weight_decay=args.weight_decay,
            seed=args.seed,
            ignore=ignore,
        )
        t_teacher = time.perf_counter()
        if args.demonstrations is not None:
            sources = ", ".join(str(p) for p in args.demonstrations)
            try:
                demos = Demonstrations.concat([Demonstrations.load(p) for p in args.demonstrations])
                student = clone(demos, student_names, config)
            except (InputError, ValueError) as exc:
                print(f"{sources}: {exc}", file=sys.stderr)
                return 2
            print(
                f"student trained on {len(demos)} decisions of {sources} "
                f"({np.mean(demos.actions != base):.1%} away from the pair), accuracy "
                f"{accuracy(student, demos):.3f}"
            )
        else:
            student, demos = teach(args, mode, student_inputs, student_names, base, config, out)
        # --students K: K - 1 more students on the same decisions (seeds seed + 1, ...),
        # acting on their mean probabilities (hdeeprm.training.ensemble)
        members = [student] + [
            clone(demos, student_names, dataclasses.replace(config, seed=args.seed + i))
            for i in range(1, args.students)
        ]
        teacher_wall = time.perf_counter() - t_teacher
        demos.save(out / "demonstrations.npz")
        student.save(out / "student.pt")

        def policy_of(bias: float) -> PPOTrainer | PolicyEnsemble:
            """The student(s) with the pair preferred by ``bias`` more."""
            shifted = [bias_action(m, best, bias) for m in members]
            return shifted[0] if len(shifted) == 1 else PolicyEnsemble.from_trainers(shifted)

        # 4. deployment, on the pair-choice windows (training part only); on a tie the more
        # conservative choice (a larger bias, a larger quorum) wins
        choices: dict[str, PPOTrainer | PolicyEnsemble] = {
            f"bias {b:g}": policy_of(b) for b in sorted(args.biases)
        }
        for q in sorted(args.quorums):
            choices[f"vote {q} of {len(members)}"] = PolicyEnsemble.from_trainers(
                members, quorum=q, fallback=base
            )
        student_choice_env = HeterogeneousClusterEnv(
            inputs=lb.pair_choice_inputs(student_inputs, mode), split="val"
        )
        val = ev.evaluate(
            student_choice_env, {k: ev.model_policy(m) for k, m in choices.items()}, seed=0
        )
        val_means = {s.policy: s.mean_objective for s in ev.summarize(val)}
        order = list(choices)
        chosen = min(order, key=lambda k: (sign * val_means[k], -order.index(k)))
        chosen_mean = val_means[chosen]
        gate_open = sign * chosen_mean < sign * pair_mean
        print(
            "training windows: "
            + ", ".join(f"{k} {val_means[k]:.6g}" for k in order)
            + f"; pair {pair_mean:.6g}; chosen {chosen}; "
            + ("gate open: the student is deployed" if gate_open else "gate closed: the pair")
        )
        deployed = choices[chosen]
        deployed.save(out / "model.pt")
        if args.no_held_out:
            print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
            return 0

        # 5. held-out windows
        student_env = HeterogeneousClusterEnv(inputs=student_inputs, split="eval")
        label = f"student ({chosen})"
        students = {label: ev.model_policy(deployed)}
        if chosen != "bias 0":
            students["student (bias 0)"] = ev.model_policy(policy_of(0.0))
        results = ev.evaluate(student_env, students, seed=0)
        eval_env = HeterogeneousClusterEnv(inputs=inputs, split="eval")
        others = {best: pairs[best]} if args.no_pairs else dict(pairs)
        others[f"{ev.RANDOM} (seed 0)"] = ev.random_policy(0)
        results += ev.evaluate(eval_env, others, seed=0)
        held, per = lb.report_held_out(results, args.objective, label, list(pairs), out)
        ids = sorted({r.window for r in results})
        model = held[label] if gate_open else held[best]
        name = label if gate_open else best
        pair = held[best]
        wins = sum(sign * per[(name, w)] < sign * per[(best, w)] for w in ids)
        losses = sum(sign * per[(name, w)] > sign * per[(best, w)] for w in ids)
        gain = sign * (pair.mean_objective - model.mean_objective) / abs(pair.mean_objective)
        verdict, direction = lb.verdict_words(gain)
        hindsight = ev.best_pair(list(held.values()), args.objective, list(pairs))
        print(
            f"\nteacher and student: {teacher_wall:.0f} s wall; whole run "
            f"{time.perf_counter() - wall_start:.0f} s wall, {time.process_time() - cpu_start:.0f}"
            f" s CPU in this process"
        )
        print(
            f"held-out: deployed {name} {model.mean_objective:.6g} (bounded slowdown "
            f"{model.mean_bounded_slowdown:.4g}) vs {best} (chosen on training windows) "
            f"{pair.mean_objective:.6g} (bounded {pair.mean_bounded_slowdown:.4g}): {verdict} it "
            f"({abs(gain):.2%} {direction}), better on {wins} and "
            f"worse on {losses} of {len(ids)} windows; best pair in hindsight {hindsight} "
            f"{held[hindsight].mean_objective:.6g}"
        )
        print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    lb.run_main(main)
