"""A job-scoring rule learned by the cross-entropy method on Gaia, and the job picker there."""
