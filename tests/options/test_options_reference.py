"""docs/options.md documents every key the options validator accepts, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from hdeeprm.options import schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "options.md"

#: Where each key tuple of the schema lives in an options file.
PREFIXES = {
    "TOP_KEYS": "",
    "PYBATSIM_KEYS": "pybatsim.",
    "ENV_KEYS": "pybatsim.env.",
    "ACTIONS_KEYS": "pybatsim.env.actions.",
    "EPISODES_KEYS": "pybatsim.env.episodes.",
    "AGENT_KEYS": "pybatsim.agent.",
    "SYNTHETIC_KEYS": "synthetic_workload.",
}


def _schema_keys() -> set[str]:
    tuples = {name for name in dir(schema) if name.endswith("_KEYS")}
    assert tuples == set(PREFIXES), "a new key group in schema.py: map it in PREFIXES"
    return {PREFIXES[name] + key for name in PREFIXES for key in getattr(schema, name)}


def _documented_rows() -> set[str]:
    """The first cell of every table row: `` `key` ``."""
    return set(re.findall(r"^\| `([a-z_.]+)` \|", DOC.read_text(encoding="utf-8"), re.M))


def test_every_accepted_key_has_a_row() -> None:
    missing = _schema_keys() - _documented_rows()
    assert not missing, f"docs/options.md lacks {sorted(missing)}"


def test_every_row_is_an_accepted_key() -> None:
    stale = _documented_rows() - _schema_keys()
    assert not stale, f"docs/options.md documents keys the schema rejects: {sorted(stale)}"


def test_every_allowed_value_is_listed() -> None:
    text = DOC.read_text(encoding="utf-8")
    values = (
        schema.OBJECTIVES
        + tuple(schema.OBJECTIVE_ALIASES)
        + schema.OBSERVATIONS
        + schema.REWARDS
        + schema.LOG_LEVELS
        + schema.AGENT_TYPES
        + schema.RUN_TYPES
        + schema.SYNTHETIC_MODELS
        + schema.JOB_POLICIES
        + schema.CORE_POLICIES
    )
    missing = [value for value in values if f"`{value}`" not in text]
    assert not missing, f"docs/options.md does not list {missing}"
