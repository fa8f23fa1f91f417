"""Agents choosing actions at decision points: :class:`Agent`, :class:`ClassicAgent` and the
learning agents (:class:`LearningAgent`, :class:`PolicyLearningAgent`,
:class:`ValueLearningAgent`)."""

from hdeeprm.agents.base import Agent, ClassicAgent, Environment
from hdeeprm.agents.learning import LearningAgent, PolicyLearningAgent, ValueLearningAgent
from hdeeprm.agents.loader import build_agent, load_agent_class

__all__ = [
    "Agent",
    "ClassicAgent",
    "Environment",
    "LearningAgent",
    "PolicyLearningAgent",
    "ValueLearningAgent",
    "build_agent",
    "load_agent_class",
]
