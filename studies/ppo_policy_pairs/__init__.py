"""PPO choosing policy pairs on the Gaia trace: the learning benchmark and its checks."""
