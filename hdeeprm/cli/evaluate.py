"""``hdeeprm-evaluate``: a trained model beside every fixed policy pair and random choice.

Every policy plays the same held-out episodes (the evaluation windows of the options'
``pybatsim.env.episodes`` block, or the options' one workload); the model decides greedily.
Prints a table (mean and median objective, mean slowdown and bounded slowdown, per-window
values, the best pair named) and writes ``evaluation.csv`` and ``evaluation.png`` in the
output folder.
"""

from __future__ import annotations

from pathlib import Path

import click

from hdeeprm.cli import _options
from hdeeprm.cli._report import Command, guarded, reported


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("options_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--model",
    type=click.Path(dir_okay=False, path_type=Path),
    help="PPO model (hdeeprm-launch -om, PPOTrainer.save or PolicyEnsemble.save) to "
    "evaluate greedily.",
)
@_options.custom_workload
@_options.output_dir(
    "Folder for inputs, evaluation.csv and evaluation.png [default: the options' folder]."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of every evaluation episode and of random choice.",
)
@click.option(
    "--windows",
    type=click.IntRange(min=1),
    default=None,
    help="Evaluate the first N evaluation windows only [default: all].",
)
@click.option("--no-pairs", is_flag=True, help="Skip the fixed policy pairs.")
@click.option("--no-random", is_flag=True, help="Skip random choice.")
@click.option("--no-plot", is_flag=True, help="Do not write evaluation.png.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the table.")
@click.option("-v", "--verbose", is_flag=True, help="Also print one line per evaluated window.")
def main(
    options_file: Path,
    model: Path | None,
    custom_workload: Path | None,
    output_dir: Path | None,
    seed: int,
    windows: int | None,
    no_pairs: bool,
    no_random: bool,
    no_plot: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Evaluate MODEL, the fixed pairs and random choice on OPTIONS_FILE's held-out windows."""
    with reported():
        _evaluate(
            options_file,
            model,
            custom_workload,
            output_dir,
            seed,
            windows,
            no_pairs,
            no_random,
            no_plot,
            quiet,
            verbose,
        )


def _evaluate(
    options_file: Path,
    model: Path | None,
    custom_workload: Path | None,
    output_dir: Path | None,
    seed: int,
    windows: int | None,
    no_pairs: bool,
    no_random: bool,
    no_plot: bool,
    quiet: bool,
    verbose: bool = False,
) -> None:
    from hdeeprm.environment import HeterogeneousClusterEnv
    from hdeeprm.errors import InputError
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options
    from hdeeprm.training import evaluate as ev
    from hdeeprm.training.ensemble import load_policy

    options = load_options(options_file)
    inputs = prepare_inputs(options, output_dir, custom_workload=custom_workload)
    episodes = options.env.episodes
    split = "eval" if episodes is not None and episodes.eval_jobs is not None else "all"
    env = HeterogeneousClusterEnv(inputs=inputs, split=split)
    policies: dict[str, ev.Chooser] = {}
    highlight: list[str] = []
    if model is not None:
        trainer = load_policy(model)  # a PPO checkpoint or an ensemble of them
        if trainer.action_names != env.action_names:
            raise InputError(
                "the model was trained for other actions ("
                f"{', '.join(trainer.action_names)}) than this options file's",
                str(model),
            )
        if trainer.observation_size != env.observation_size:
            raise InputError(
                f"the model expects {trainer.observation_size} observation values, this "
                f"options file's environment gives {env.observation_size}",
                str(model),
            )
        policies["model"] = ev.model_policy(trainer)
        highlight.append("model")
    baselines = ev.baseline_policies(env.action_names, seed)
    pair_names = [n for n in baselines if n != ev.RANDOM]
    if not no_pairs:
        policies.update({n: baselines[n] for n in pair_names})
    if not no_random:
        policies[ev.RANDOM] = baselines[ev.RANDOM]
    if not policies:
        raise InputError("nothing to evaluate: give --model or drop --no-pairs/--no-random")
    ids = ev.window_ids(env)
    if windows is not None:
        ids = ids[:windows]
    if not quiet:
        click.echo(
            f"{len(policies)} policies x {len(ids)} window(s), objective {options.env.objective}",
            err=True,
        )

    def progress(result: ev.WindowResult) -> None:
        if verbose and not quiet:
            click.echo(
                f"  {result.policy} window {result.window}: {result.objective:.6g} "
                f"({result.steps} steps, {result.wall_time:.1f} s)",
                err=True,
            )

    results = ev.evaluate(env, policies, seed=seed, windows=ids, on_result=progress)
    out = inputs.output_dir
    click.echo(
        ev.format_table(results, options.env.objective, highlight=highlight, pair_names=pair_names)
    )
    csv_path = ev.write_csv(results, out / "evaluation.csv")
    click.echo(f"per-window results: {csv_path}")
    if not no_plot:
        png = ev.plot_comparison(
            results, options.env.objective, out / "evaluation.png", highlight=highlight
        )
        click.echo(f"plot: {png}")


if __name__ == "__main__":  # pragma: no cover
    main()
