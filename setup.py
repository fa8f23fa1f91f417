"""Build the optional C kernels (hdeeprm/_native.py); the rest of the metadata is in
pyproject.toml.

Each extension is optional: where no compiler is found, the install goes on without it and the
pure-Python reference runs. Every kernel carries the SHA-256 of its source, so that a build
older than its source is noticed and not used."""

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, setup

KERNELS = {
    "hdeeprm.decision._pool_kernels": "hdeeprm/decision/_pool_kernels.c",
    "hdeeprm.simulation._engine_kernels": "hdeeprm/simulation/_engine_kernels.c",
}

# No floating-point contraction (a fused multiply-add rounds once where Python rounds twice):
# the kernels must give the Python reference's results bit for bit.
FLAGS = ["/fp:precise"] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]


def kernel(name: str, source: str) -> Extension:
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return Extension(
        name,
        [source],
        define_macros=[("SOURCE_DIGEST", f'"{digest}"')],
        extra_compile_args=FLAGS,
        optional=True,
    )


setup(ext_modules=[kernel(name, source) for name, source in KERNELS.items()])
