"""CuSH's two-step agent (job selector and policy selector) against the heuristics."""
