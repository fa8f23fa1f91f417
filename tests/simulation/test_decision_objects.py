"""The hot decisions (``ExecuteJob``, ``SetResourceState``) build through their slots' own
setters: they must still behave as the frozen dataclasses they were (fields, defaults,
keywords, equality, hashing, repr, immutability, ``dataclasses.replace``)."""

from __future__ import annotations

import dataclasses

import pytest

from hdeeprm.simulation.events import ExecuteJob, HostIds, SetResourceState


def test_execute_job_fields_default_and_keywords() -> None:
    job = ExecuteJob("w0!3", (4, 5))
    assert (job.job_id, job.alloc, job.gpus) == ("w0!3", (4, 5), ())
    assert ExecuteJob(job_id="w0!3", alloc=(4, 5), gpus=(1,)).gpus == (1,)
    assert [f.name for f in dataclasses.fields(ExecuteJob)] == ["job_id", "alloc", "gpus"]
    assert ExecuteJob.__match_args__ == ("job_id", "alloc", "gpus")


def test_execute_job_equality_hash_repr() -> None:
    job = ExecuteJob("7", (0, 1), (2,))
    assert job == ExecuteJob("7", (0, 1), (2,))
    assert hash(job) == hash(ExecuteJob("7", (0, 1), (2,)))
    assert job != ExecuteJob("7", (0, 1))
    assert job != ("7", (0, 1), (2,))  # not a tuple: another class never equals it
    assert repr(job) == "ExecuteJob(job_id='7', alloc=(0, 1), gpus=(2,))"
    assert dataclasses.replace(job, gpus=()) == ExecuteJob("7", (0, 1))


def test_set_resource_state_fields_equality_repr() -> None:
    change = SetResourceState(HostIds((1, 3)), 2)
    assert (change.resources, change.state) == ((1, 3), 2)
    assert change == SetResourceState(resources=(1, 3), state=2)  # HostIds is a tuple
    assert repr(change) == "SetResourceState(resources=(1, 3), state=2)"
    assert dataclasses.astuple(change) == ((1, 3), 2)


@pytest.mark.parametrize(
    ("decision", "name"),
    [(ExecuteJob("1", (0,)), "alloc"), (SetResourceState((0,), 1), "state")],
)
def test_decisions_stay_immutable(decision: object, name: str) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(decision, name, 9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(decision, name)


def test_missing_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        ExecuteJob("1")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SetResourceState((0,))  # type: ignore[call-arg]
