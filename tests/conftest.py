"""Shared fixtures (the trace helpers live in ``trace_files.py`` so tests can import them), and
the ``slow`` marks of tests that do not mark themselves."""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_files import trace_path

TESTS = Path(__file__).resolve().parent

#: Folders whose every test is ``slow``: real Batsim runs (tens of seconds each).
SLOW_FOLDERS = ("batsim",)
#: Tests (and parameter cases) of about a second or more on an idle 2-core machine
#: (``pytest --durations``), marked ``slow`` here so that their own files stay as they are.
#: ``make test`` leaves them out; ``make test-full`` (CI) runs them.
SLOW_TESTS = frozenset(
    {
        "analysis/test_visual.py::test_series_match_evalys_compute_load",
        "environment/test_env.py::test_stable_baselines3_ppo_trains",
        "environment/test_env_digest.py::test_gaia_window_digest[normal-edp-True]",
        "environment/test_objective_reward.py::test_gaia_window_returns_match_metrics",
        "experiment/test_cush_agent.py::test_policy_selector_learns_the_lower_penalty_policy",
        "experiment/test_logs.py::test_gaia_log_size_does_not_depend_on_the_window",
        "protocol/test_zmtp.py::test_a_peer_that_stops_reading_cannot_block_a_send_forever",
        "scheduling/test_carried_refusals.py::test_carried_refusals_change_no_start[conservative]",
        "scheduling/test_refusal_capacity.py::test_the_capacity_changes_no_start[conservative]",
        "scheduling/test_thesis_easy.py::test_best_triple_end_to_end_on_kth_head",
        "sweep/test_sweep.py::test_same_table_and_folders_on_serial_and_processes",
        "test_docs.py::test_page_runs[docs/gallery.md]",
        "test_docs.py::test_page_runs[docs/learning.md]",
        "test_docs.py::test_page_runs[docs/rl_libraries.md]",
        "test_docs.py::test_page_runs[docs/sweep.md]",
        "test_property_gpus.py::test_malformed_gpu_platforms_name_file_and_key",
        "thesis/test_seed003_realistic.py::test_gaia_script_short_run",
        "training/test_ppo.py::test_ppo_learns_the_thesis_scenario",
        "training/test_validation.py::test_validation_keeps_the_best_checkpoint_on_the_thesis_scenario",
    }
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen = set()
    for item in items:
        try:
            path = item.path.relative_to(TESTS)
        except ValueError:
            continue
        test_id = path.as_posix() + "::" + item.nodeid.split("::", 1)[1]
        if test_id in SLOW_TESTS or path.parts[0] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)
            seen.add(test_id)
    # On a whole-suite collection, a renamed test must not drop out of the list unnoticed.
    if not config.option.file_or_dir and (missing := SLOW_TESTS - seen):
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names unknown tests: {missing}")


@pytest.fixture
def gaia_trace() -> Path:
    """The UniLu Gaia 2014 trace (51,899 jobs)."""
    return trace_path("UniLu-Gaia-2014-1.swf.gz")
