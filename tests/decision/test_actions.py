"""Action space construction and a fixed pair's choice."""

from __future__ import annotations

import pytest

from hdeeprm.agents import Agent
from hdeeprm.decision import (
    CORE_POLICIES,
    JOB_POLICIES,
    Action,
    ActionSpace,
    FixedPair,
    parse_action_name,
)
from hdeeprm.errors import InputError


def test_default_space_is_36_pairs_plus_void_in_spec_order() -> None:
    space = ActionSpace()
    # 6 job policies x 6 core policies + void = 37
    assert len(space) == 37
    assert space.names[0] == "random-random"
    assert space.names[1] == "random-high_gflops"
    assert space.names[6] == "first-random"  # job policies outer, core policies inner
    assert space.names[35] == "low_mem_bw-low_power"
    assert space.names[36] == "void"
    assert space[36].is_void and space.has_void
    assert len(ActionSpace(void=False)) == 36


def test_selection_keeps_written_order_and_appends_void_last() -> None:
    selection = [{"shortest": ["high_gflops", "high_mem"]}, {"first": ["high_mem_bw"]}]
    space = ActionSpace.from_selection(selection, void=True)
    assert space.names == ["shortest-high_gflops", "shortest-high_mem", "first-high_mem_bw", "void"]
    assert space[2] == Action("first", "high_mem_bw")
    assert space.index("first-high_mem_bw") == 2
    assert space.index(("shortest", "high_mem")) == 1
    assert ActionSpace.from_selection(selection, void=False).names[-1] == "first-high_mem_bw"


def test_policy_names_match_the_options_schema() -> None:
    schema = pytest.importorskip("hdeeprm.options.schema")
    assert schema.JOB_POLICIES == JOB_POLICIES
    assert schema.CORE_POLICIES == CORE_POLICIES


@pytest.mark.parametrize(
    ("selection", "where", "fragment"),
    [
        ({"shortest": ["high_gflops"]}, "env.actions.selection", "expected a list"),
        ([{"longest": ["high_gflops"]}], "env.actions.selection[0].longest", "unknown job policy"),
        ([{"first": ["fastest"]}], "env.actions.selection[0].first[0]", "unknown core policy"),
        ([{"first": []}], "env.actions.selection[0].first", "non-empty list"),
        ([{"first": ["random", "random"]}], "env.actions.selection[0].first[1]", "duplicate"),
    ],
)
def test_bad_selection_names_file_and_json_path(selection, where, fragment) -> None:
    with pytest.raises(InputError) as err:
        ActionSpace.from_selection(selection, path="opts.json", where="env.actions.selection")
    assert err.value.path == "opts.json"
    assert err.value.where == where
    assert fragment in str(err.value)


def test_empty_space_and_bad_names_rejected() -> None:
    with pytest.raises(InputError, match="empty"):
        ActionSpace([], void=False)
    with pytest.raises(InputError, match="JOBPOLICY-COREPOLICY"):
        parse_action_name("shortest_high_gflops")
    assert parse_action_name("void").is_void


def test_classic_agent_returns_its_pairs_index_not_zero() -> None:
    # The thesis 5.4 action space: the original answered 0 (shortest-high_gflops) whatever
    # the options said.
    space = ActionSpace.from_selection(
        [
            {"shortest": ["high_gflops", "high_mem_bw", "low_power"]},
            {"first": ["high_gflops", "high_mem_bw"]},
        ],
        void=False,
    )
    agent = FixedPair(space, "first-high_mem_bw")
    assert agent.decide(agent.observe(object())) == 4
    assert FixedPair(space, ("shortest", "low_power")).decide() == 2
    assert FixedPair(ActionSpace(), "void").decide() == 36
    assert FixedPair(ActionSpace(), "smallest-high_cores").decide() == 3 * 6 + 2


def test_fixed_pair_rejects_a_pair_outside_the_space() -> None:
    space = ActionSpace.from_selection([{"first": ["high_gflops"]}], void=False)
    with pytest.raises(InputError) as err:
        FixedPair(space, "shortest-high_gflops")
    assert err.value.where == "agent.policy_pair"
    assert "first-high_gflops" in str(err.value)


class _Env:
    def __init__(self) -> None:
        self.steps: list[int] = []

    def observation(self) -> list[float]:
        return [0.5]

    def step(self, action: int) -> str:
        self.steps.append(action)
        return "stepped"

    def reward(self) -> float:
        return -2.0


class _Sixth(Agent):
    def decide(self, observation: object) -> int:
        return 6


def test_agent_verbs_use_the_environment() -> None:
    env = _Env()
    agent = _Sixth()
    assert agent.observe(env) == [0.5]
    assert agent.alter(agent.decide(None), env) == "stepped"
    assert env.steps == [6]
    assert agent.rewarded(env) == -2.0 and agent.rewards == [-2.0]
    with pytest.raises(NotImplementedError):
        Agent().decide(None)
