"""``hdeeprm-launch``: run an experiment described by an options file.

Generates whatever of ``platform.xml``, ``res_hierarchy.json``, ``workload.json`` and
``job_limits.json`` is missing in the run folder, simulates on the embedded engine (or, with
``--simulator batsim``, on a Batsim 4.x process), writes Batsim's output files plus
``insights.log``, and prints a short metrics summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import click

from hdeeprm.cli import _options
from hdeeprm.cli._report import Command, guarded, reported


class BatsimChoice(NamedTuple):
    """``--simulator batsim``: which executable, and how long to wait for each message."""

    executable: str
    timeout: float


def _say(quiet: bool, message: str) -> None:
    if not quiet:
        click.echo(message, err=True)


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("options_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-a",
    "--agent",
    "agent_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Python file defining a learning agent class (LEARNING agents without a built-in "
    "'algorithm').",
)
@_options.custom_workload
@click.option(
    "-im",
    "--in-model",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Load model and optimiser state from this file before running.",
)
@click.option(
    "-om",
    "--out-model",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save model and optimiser state to this file after running.",
)
@click.option(
    "-nr",
    "--nb-runs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Episodes to run (learning), or repetitions with seeds seed+k (classic).",
)
@_options.output_dir(
    "Run folder for generated inputs and outputs [default: the options file's folder]."
)
@click.option(
    "--simulator",
    type=click.Choice(("embedded", "batsim")),
    default=None,
    help="Simulate on the embedded engine (default) or on a Batsim 4.x process.",
)
@click.option(
    "--batsim",
    "batsim_path",
    default=None,
    help="Batsim executable, a name on PATH or a path [default: $HDEEPRM_BATSIM, else batsim "
    "on PATH, else ~/.cache/hdeeprm-batsim/bin/batsim]; any program taking "
    "Batsim's flags works, e.g. hdeeprm-sim. Implies --simulator batsim.",
)
@click.option(
    "--batsim-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Longest wait for one Batsim message, in seconds.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the metrics summary.")
def main(
    options_file: Path,
    agent_file: Path | None,
    custom_workload: Path | None,
    in_model: Path | None,
    out_model: Path | None,
    nb_runs: int,
    output_dir: Path | None,
    simulator: str | None,
    batsim_path: str | None,
    batsim_timeout: float,
    quiet: bool,
) -> None:
    """Run the experiment in OPTIONS_FILE (thesis appendix F format)."""
    if simulator == "embedded" and batsim_path is not None:
        raise click.UsageError("--batsim is for --simulator batsim")
    batsim = None
    if simulator == "batsim" or batsim_path is not None:
        from hdeeprm.protocol.client import default_batsim

        batsim = BatsimChoice(batsim_path or default_batsim(), batsim_timeout)
    with reported():
        _launch(
            options_file,
            agent_file,
            custom_workload,
            in_model,
            out_model,
            nb_runs,
            output_dir,
            quiet,
            batsim,
        )


def _launch(
    options_file: Path,
    agent_file: Path | None,
    custom_workload: Path | None,
    in_model: Path | None,
    out_model: Path | None,
    nb_runs: int,
    output_dir: Path | None,
    quiet: bool,
    batsim: BatsimChoice | None = None,
) -> None:
    from hdeeprm._inputfile import check_input_file
    from hdeeprm.errors import InputError
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options

    check_input_file(options_file, "options file")
    options = load_options(options_file)
    learning = options.agent.type == "LEARNING"
    if not learning:
        for flag, value in (("-a", agent_file), ("-im", in_model), ("-om", out_model)):
            if value is not None:
                raise InputError(
                    f"{flag} is only for LEARNING agents; this options file "
                    "asks for a CLASSIC agent",
                    options.source,
                    "pybatsim.agent.type",
                )
    elif batsim is not None:
        raise InputError(
            "--simulator batsim runs CLASSIC agents only for now; train LEARNING agents on "
            "the embedded engine (same platform and workload semantics)",
            options.source,
            "pybatsim.agent.type",
        )
    elif options.agent.algorithm is not None:
        if agent_file is not None:
            raise InputError(
                f"-a is for agents written in a file; this options file asks for the built-in "
                f"algorithm '{options.agent.algorithm}'",
                options.source,
                "pybatsim.agent.algorithm",
            )
        if nb_runs != 1:
            raise InputError(
                "-nr counts episodes of file agents; a built-in algorithm trains for "
                "params.total_timesteps decisions",
                options.source,
                "pybatsim.agent.params.total_timesteps",
            )
    elif agent_file is None:
        raise InputError(
            "a LEARNING agent needs its class file: pass -a AGENT.py (templates in "
            "agent_examples/)",
            options.source,
            "pybatsim.agent.type",
        )
    for flag, what, value in (("-a", "agent file", agent_file), ("-im", "model file", in_model)):
        if value is not None:
            check_input_file(value, what, flag)
    if out_model is not None:
        from hdeeprm._atomic import check_writable

        check_writable(out_model)  # before training, not after it
    inputs = prepare_inputs(
        options, output_dir, custom_workload=custom_workload, log=lambda m: _say(quiet, m)
    )
    if inputs.conversion is not None:
        _say(quiet, str(inputs.conversion))
    out = inputs.output_dir
    _say(
        quiet,
        f"platform: {len(inputs.platform.cores)} cores; workload: "
        f"{len(inputs.workload.jobs)} jobs; run folder: {out}",
    )

    if learning and options.agent.algorithm == "ppo":
        from hdeeprm.training.ppo_run import run_ppo

        click.echo(
            run_ppo(inputs, in_model=in_model, out_model=out_model, progress=not quiet).summary()
        )
        return
    if learning:
        from hdeeprm.experiment.run import insights_log
        from hdeeprm.training import run_learning

        assert agent_file is not None
        with insights_log(out, options.log_level):
            result = run_learning(
                inputs,
                agent_file=agent_file,
                in_model=in_model,
                out_model=out_model,
                nb_runs=nb_runs,
                progress=not quiet,
            )
        click.echo(result.summary())
        return

    from hdeeprm.experiment.run import run_classic

    if batsim is not None:
        from hdeeprm.protocol.client import find_executable
        from hdeeprm.protocol.experiment import run_classic_batsim

        executable = find_executable(batsim.executable)  # fail before any run starts
        _say(quiet, f"simulator: {executable}")
    pair = options.agent.policy_pair
    for k in range(nb_runs):
        run_dir = out if nb_runs == 1 else out / f"run_{k:03d}"
        seed = options.seed + k
        if batsim is not None:
            run_result = run_classic_batsim(
                inputs,
                run_dir,
                seed=seed,
                progress=not quiet,
                executable=executable,
                timeout=batsim.timeout,
            )
        else:
            run_result = run_classic(inputs, run_dir, seed=seed, progress=not quiet)
        title = f"{pair}" + ("" if nb_runs == 1 else f" (run {k}, seed {seed})")
        click.echo(f"== {title} ==")
        for line in run_result.metrics.lines():
            click.echo("  " + line)
        _say(quiet, f"  outputs: {run_dir}")


if __name__ == "__main__":  # pragma: no cover
    main()
