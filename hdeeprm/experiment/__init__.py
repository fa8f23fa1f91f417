"""Classic runs: a prepared experiment (:mod:`hdeeprm.inputs`) simulated with its fixed policy
pair on the embedded engine, outputs written (:mod:`hdeeprm.experiment.run`)."""
