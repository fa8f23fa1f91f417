"""``python -m benchmarks``: the speed suite of ``run.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/: run, suite, common

import run  # noqa: E402

sys.exit(run.main())
