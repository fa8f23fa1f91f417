"""Behaviour cloning: a rule learnt from demonstrations, masks respected, determinism, the
pair bias by hand, demonstrations files, and the student as an ordinary PPO checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hdeeprm.errors import InputError
from hdeeprm.training.ensemble import load_policy
from hdeeprm.training.ppo import PPOTrainer
from studies.imitation.imitation import (
    CloneConfig,
    Demonstrations,
    accuracy,
    bias_action,
    clone,
    head_job_features,
    student_policy,
)

NAMES = ["s-a", "s-b", "s-c"]


def rule_demos(n: int = 2000, seed: int = 0) -> Demonstrations:
    """Action 1 when the first value is above 0.5, action 0 otherwise; action 2 is masked
    out on every tenth decision (and never demonstrated)."""
    rng = np.random.default_rng(seed)
    obs = rng.random((n, 3)).astype(np.float32)
    actions = (obs[:, 0] > 0.5).astype(np.int64)
    masks = np.ones((n, 3), bool)
    masks[::10, 2] = False
    return Demonstrations(obs, masks, actions)


def test_clone_learns_a_rule_and_generalises() -> None:
    student = clone(rule_demos(), NAMES, CloneConfig(hidden=16, epochs=20, seed=1))
    assert accuracy(student, rule_demos()) > 0.97
    unseen = rule_demos(500, seed=9)
    assert accuracy(student, unseen) > 0.95
    # the normaliser holds the demonstrations' statistics (uniform on [0, 1]: mean 1/2)
    np.testing.assert_allclose(student.model.obs_rms.mean.numpy(), 0.5, atol=0.03)


def test_ignored_features_are_never_used() -> None:
    # the rule reads value 0 alone; ignoring value 0 leaves the student blind to it, so its
    # actions cannot depend on it, while ignoring value 2 (noise) still learns the rule
    demos = rule_demos()
    blind = clone(demos, NAMES, CloneConfig(hidden=16, epochs=5, seed=1, ignore=(0,)))
    assert torch.count_nonzero(blind.model.actor[0].weight[:, 0]) == 0
    probe = np.repeat(rule_demos(50, seed=3).observations, 2, axis=0)
    probe[::2, 0], probe[1::2, 0] = 0.0, 1.0  # pairs differing in value 0 only
    with torch.no_grad():
        logits = blind.model.actor(blind.model.normalized(torch.from_numpy(probe)))
    torch.testing.assert_close(logits[::2], logits[1::2])
    sighted = clone(demos, NAMES, CloneConfig(hidden=16, epochs=20, seed=1, ignore=(2,)))
    assert torch.count_nonzero(sighted.model.actor[0].weight[:, 2]) == 0
    assert accuracy(sighted, rule_demos(500, seed=9)) > 0.95
    with pytest.raises(ValueError, match="outside the observation"):
        clone(demos, NAMES, CloneConfig(epochs=1, ignore=(3,)))
    with pytest.raises(ValueError, match="observation indices"):
        CloneConfig(ignore=(-1,))


def test_head_job_features_are_the_queue_observations_head() -> None:
    # queue observation: 20 statistics + variation ratio (0..20), queue length (21), then
    # 8 head jobs of 6 values (22..69), then 2 values per processor type
    assert head_job_features(84) == tuple(range(22, 70))
    with pytest.raises(ValueError, match="no head jobs"):
        head_job_features(21)


def test_masked_actions_are_never_chosen_and_cloning_is_deterministic() -> None:
    demos = rule_demos(400)
    a = clone(demos, NAMES, CloneConfig(hidden=8, epochs=3, seed=4))
    b = clone(demos, NAMES, CloneConfig(hidden=8, epochs=3, seed=4))
    for key, value in a.model.state_dict().items():
        assert torch.equal(value, b.model.state_dict()[key]), key
    only_c = np.array([False, False, True])
    assert int(a.predict(demos.observations[0], action_mask=only_c)) == 2
    choose = student_policy(a)
    assert choose(demos.observations[0], only_c) == 2
    c = clone(demos, NAMES, CloneConfig(hidden=8, epochs=3, seed=5))
    assert not torch.equal(a.model.actor[0].weight, c.model.actor[0].weight)


def test_bias_towards_an_action_by_hand() -> None:
    student = clone(rule_demos(200), NAMES, CloneConfig(hidden=8, epochs=1))
    obs = np.zeros((1, 3), np.float32)
    with torch.no_grad():
        logits = student.model.logits(torch.from_numpy(obs))[0]
    gap = float(logits.max() - logits[2])
    # action 2 is preferred by exactly `gap` + 0.1 logits more: it becomes the greedy action,
    # with a probability ratio of e^0.1 over the former best
    biased = bias_action(student, "s-c", gap + 0.1)
    assert int(biased.predict(obs[0])) == 2
    with torch.no_grad():
        new = biased.model.logits(torch.from_numpy(obs))[0]
    assert float(new[2] - logits.max()) == pytest.approx(0.1, abs=1e-5)
    # the original is untouched, and a zero bias changes nothing
    with torch.no_grad():
        assert torch.equal(student.model.logits(torch.from_numpy(obs))[0], logits)
    same = bias_action(student, "s-a", 0.0)
    assert (
        same.predict(rule_demos(50).observations).tolist()
        == student.predict(rule_demos(50).observations).tolist()
    )
    with pytest.raises(ValueError, match="not an action"):
        bias_action(student, "nope", 1.0)
    with pytest.raises(ValueError, match="finite"):
        bias_action(student, "s-a", float("inf"))


def test_the_student_is_a_ppo_checkpoint(tmp_path) -> None:
    demos = rule_demos(300)
    student = clone(demos, NAMES, CloneConfig(hidden=8, epochs=2))
    path = student.save(tmp_path / "student.pt")
    again = load_policy(path)
    assert isinstance(again, PPOTrainer) and again.action_names == NAMES
    obs = demos.observations
    assert again.predict(obs).tolist() == student.predict(obs).tolist()


def test_demonstrations_are_checked_and_saved_without_pickle(tmp_path) -> None:
    demos = rule_demos(20)
    path = demos.save(tmp_path / "demos.npz")
    again = Demonstrations.load(path)
    np.testing.assert_array_equal(again.observations, demos.observations)
    assert again.actions.tolist() == demos.actions.tolist()
    both = Demonstrations.concat([demos, again])
    assert len(both) == 40
    bad = demos.masks.copy()
    bad[3, demos.actions[3]] = False
    with pytest.raises(ValueError, match="masked out"):
        Demonstrations(demos.observations, bad, demos.actions)
    with pytest.raises(ValueError, match="observations"):
        Demonstrations(demos.observations[:5], demos.masks, demos.actions)
    (tmp_path / "junk.npz").write_text("not numpy")
    with pytest.raises(InputError, match="junk.npz"):
        Demonstrations.load(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="no demonstrations"):
        Demonstrations.concat([])
    with pytest.raises(ValueError, match="actions"):
        clone(demos, NAMES[:2])
    with pytest.raises(ValueError, match="epochs"):
        CloneConfig(epochs=0)
