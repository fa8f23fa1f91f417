"""Learning EASY's queue ordering: a learned SCORE(a,b,c), a bandit and PPO per pass."""
