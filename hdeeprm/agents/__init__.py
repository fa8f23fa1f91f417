"""Agents choosing actions at decision points: :class:`Agent` and the learning agents
(:class:`LearningAgent`, :class:`PolicyLearningAgent`, :class:`ValueLearningAgent`). A fixed
policy pair is :class:`hdeeprm.decision.FixedPair`."""

from hdeeprm.agents.base import Agent, Environment
from hdeeprm.agents.learning import LearningAgent, PolicyLearningAgent, ValueLearningAgent
from hdeeprm.agents.loader import build_agent, load_agent_class

__all__ = [
    "Agent",
    "Environment",
    "LearningAgent",
    "PolicyLearningAgent",
    "ValueLearningAgent",
    "build_agent",
    "load_agent_class",
]
