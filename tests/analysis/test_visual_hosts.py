"""``hdeeprm-visual core_bubbles`` refuses jobs that ran on hosts the run's platform does not
have, instead of counting idle cores against the wrong total."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hdeeprm.cli import visual as visual_cli


def test_core_bubbles_refuses_hosts_outside_the_platform(run_dir: Path, tmp_path: Path) -> None:
    jobs = run_dir / "out_jobs.csv"
    # Job 4 (line 4) ran on core 2; move it to cores 3-6 of a 4-core platform.
    jobs.write_text(jobs.read_text().replace(",1.000000,2,1600", ",1.000000,3-6,1600"))
    figure = tmp_path / "bubbles.png"
    result = CliRunner().invoke(visual_cli.main, [str(run_dir), "core_bubbles", "-s", str(figure)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: {jobs}, line 4: job '4' ran on host 4, which the platform of this run folder "
        "(res_hierarchy.json: 4 cores, hosts 0-3) does not have; these outputs come from "
        "another platform: run again into a fresh folder (-o), or put the run's own "
        "res_hierarchy.json beside them"
    )
    assert not figure.exists()


def test_core_bubbles_of_a_consistent_run(run_dir: Path, tmp_path: Path) -> None:
    figure = tmp_path / "bubbles.png"
    result = CliRunner().invoke(visual_cli.main, [str(run_dir), "core_bubbles", "-s", str(figure)])
    assert result.exit_code == 0, result.output
    assert figure.is_file()
