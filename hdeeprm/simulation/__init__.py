"""The embedded Batsim-compatible discrete-event simulation engine."""
