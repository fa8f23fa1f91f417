"""Classic runs decide with a torch-free fixed pair: its pair's index in the action space."""

import subprocess
import sys

import pytest

from hdeeprm.decision import ActionSpace, FixedPair
from hdeeprm.errors import InputError


@pytest.mark.parametrize("pair", ["first-high_mem_bw", ("shortest", "low_power"), "void"])
def test_fixed_pair_answers_its_index(pair):
    space = ActionSpace()
    assert FixedPair(space, pair).decide() == space.index(pair)
    assert FixedPair(space, pair).observe(None) is None


def test_unknown_pair_names_the_key():
    with pytest.raises(InputError) as info:
        FixedPair(ActionSpace(), "nosuch-high_gflops")
    assert info.value.where == "agent.policy_pair"


def test_classic_runs_do_not_import_torch():
    code = (
        "import sys, hdeeprm.experiment.run, hdeeprm.sweep; "
        "sys.exit(1 if 'torch' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
