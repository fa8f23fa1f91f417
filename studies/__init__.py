"""Research studies built on hdeeprm: each folder holds one study's scripts, code and README.

The package never imports from here. Run a study's script from the repository root as a
module, e.g. ``python -m studies.ppo_policy_pairs.learning_benchmark --help``.
"""
