"""The warm start's command-line options the study scripts share; the cloning itself is
:mod:`hdeeprm.training.cloning`.
"""

from __future__ import annotations


def add_cloning_arguments(group) -> None:
    """The options every warm start shares: cloning epochs and learning rate, then the PPO
    updates that fit the critic alone (``TwoStepConfig.critic_warmup``)."""
    group.add_argument("--warm-epochs", type=int, default=20)
    group.add_argument("--warm-lr", type=float, default=1e-3)
    group.add_argument(
        "--critic-warmup",
        type=int,
        default=0,
        help="TwoStepConfig.critic_warmup: the first PPO updates fit the critic alone",
    )
