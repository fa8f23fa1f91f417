"""Training runs of learning agents: episodes, updates, checkpoints and logs."""

from hdeeprm.training.learning_runs import (
    LOG_COLUMNS,
    LOG_FILE,
    EpisodeLog,
    TrainingResult,
    episode_seed,
    load_checkpoint,
    log_header,
    run_episode,
    run_learning,
    save_checkpoint,
)

__all__ = [
    "LOG_COLUMNS",
    "LOG_FILE",
    "EpisodeLog",
    "TrainingResult",
    "episode_seed",
    "load_checkpoint",
    "log_header",
    "run_episode",
    "run_learning",
    "save_checkpoint",
]
