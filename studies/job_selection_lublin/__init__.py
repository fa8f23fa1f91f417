"""Job selection on lublin_256 with RLScheduler's protocol."""
