# Two commands do all the set-up on a fresh machine (Python 3.10+ with pip):
#   make demo   install hdeeprm and run the quick-start experiment on the embedded simulator
#   make test   install hdeeprm with its test tools and run the fast tests (the default set)
#   make test-full   the same, then every test, the ones marked slow too (what CI runs)
# They install into the Python that runs them (use a virtual environment if you prefer one).

PYTHON ?= python3
# PyTorch first, pinned, so that the CPU build is used where one is available; the package's
# own dependency range (torch>=2.0,<3) is then already satisfied.
TORCH ?= torch==2.13.0
# pip's normal output, not --quiet: a first install takes a minute or more (PyTorch alone is
# hundreds of MB), and each step (collecting, downloading with a progress bar, building,
# installing) shows as it happens instead of a silent wait.
PIP = $(PYTHON) -m pip install --disable-pip-version-check --progress-bar on

# Where `make batsim` builds Batsim 4.2.1 + pybatsim (outside the clone; reused when present).
BATSIM_PREFIX ?= $(HOME)/.cache/hdeeprm-batsim

.PHONY: install install-test demo test test-full lint bench batsim traces

install:
	@echo "==> 1/2 installing $(TORCH) (CPU build where one is cached)"
	$(PIP) "$(TORCH)"
	@echo "==> 2/2 installing hdeeprm (editable) and its dependencies"
	$(PIP) -e .

install-test:
	@echo "==> 1/2 installing $(TORCH) (CPU build where one is cached)"
	$(PIP) "$(TORCH)"
	@echo "==> 2/2 installing hdeeprm (editable) with its test tools and the rl extra (SB3, sb3-contrib, TensorBoard are tested)"
	$(PIP) -e ".[test,rl]"

demo: install
	hdeeprm-launch data/quickstart/options.json --output-dir runs/quickstart

# pytest deselects the tests marked slow by default (pyproject.toml); -m "" selects them all.
test: install-test
	$(PYTHON) -m pytest -q

test-full: install-test
	$(PYTHON) -m pytest -q -m ""

lint:
	$(PYTHON) -m ruff check hdeeprm tests benchmarks studies agent_examples thesis_experiments
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy hdeeprm

# The speed suite on the traces it finds (docs/traces.md; others skipped and listed): one table,
# also written to bench.json. `python -m benchmarks --help` for --quick, --compare REV...
bench: install
	$(PYTHON) -m benchmarks

# The real traces into the per-user cache (~/.cache/hdeeprm/traces), SHA-256 checked; traces
# already found in $HDEEPRM_TRACES or the cache are not downloaded again (docs/traces.md).
traces: install
	hdeeprm-traces fetch --all

# Real Batsim 4.2.1 (tools/batsim/README.md: Debian packages through apt-get as root, sources
# downloaded or taken from BATSIM_SOURCES; 3-4 min, idempotent). The tests marked `batsim` and
# `hdeeprm-launch --simulator batsim` then find it there.
batsim:
	tools/batsim/build.sh "$(BATSIM_PREFIX)"
