"""Imitation of simulation teachers (rollout, DAgger, planning) and behaviour cloning."""
