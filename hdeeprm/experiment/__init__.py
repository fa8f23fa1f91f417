"""Classic runs: a prepared experiment (:mod:`hdeeprm.inputs`) simulated with its fixed policy
pair on the embedded engine, outputs written (:mod:`hdeeprm.experiment.run`)."""

from hdeeprm.experiment.run import RunMetrics, RunResult, run_classic

__all__ = ["RunMetrics", "RunResult", "run_classic"]
