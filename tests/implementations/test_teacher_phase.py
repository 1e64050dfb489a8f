"""The teacher phase as strategies (implementations.teacher_phase): chosen by ``teacher_model``,
shared by the presets, with the draws each preset's loop made before."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.components.partition import BlockSampler
from pategan_audit.components.teachers import LogisticTeachers, NeuralTeachers
from pategan_audit.implementations import create
from pategan_audit.implementations.teacher_phase import LogisticRefit, NeuralRounds, block_rows, teacher_phase

from .conftest import toy_bounds


def test_teacher_phase_picks_the_strategy_by_name():
    assert teacher_phase("neural_persistent", rounds=3, separate=True) == NeuralRounds(3, separate=True)
    assert teacher_phase("logistic_refit", rounds=3, fake_sampling=True) == LogisticRefit(fake_sampling=True)
    with pytest.raises(ValueError, match="teacher_model must be one of"):
        teacher_phase("forest", rounds=1)
    assert isinstance(NeuralRounds.make_teachers(2, [3, 1], lr=1e-3, hidden_activation="relu",
                                                 weight_init="he_normal", bias_init="zero"), NeuralTeachers)
    assert isinstance(LogisticRefit.make_teachers(2), LogisticTeachers)


class _Model:
    """The attributes a teacher phase reads, with recording teachers."""

    def __init__(self, k=3, B=4, d=2, n=30, empty=()):
        self.num_teachers_, self.batch_size_ = k, B
        self.X_ = torch.arange(n * d, dtype=torch.float32).reshape(n, d)
        blocks = [np.arange(t, n, k) for t in range(k)]
        for t in empty:
            blocks[t] = blocks[t][:0]
        self.sampler = BlockSampler(blocks, small="replace")
        self.train_gen = torch.Generator().manual_seed(0)
        self.seen, self.steps, self.fake_calls = [], [], []
        self.teachers = self

    def _record_seen(self, rows):
        self.seen.append(rows)

    def _teacher_rows_input(self, rows):
        return self.X_[torch.as_tensor(rows)]

    def _latent(self, n, gen, *, sampling):
        self.fake_calls.append((n, sampling))
        return torch.rand(n, self.X_.shape[1], generator=gen)

    def _fakes(self, latent, *, generator=None):
        return latent

    def train_step(self, real, fake, *, separate, real_weight):
        self.steps.append((real, fake, separate, real_weight))


def test_neural_rounds_step_every_teacher_on_its_own_rows_and_its_own_fakes():
    model = _Model()
    NeuralRounds(2, separate=True).run(model, 0)
    assert len(model.steps) == 2 and model.fake_calls == [(12, False), (12, False)]
    real, fake, separate, weight = model.steps[0]
    assert real.shape == fake.shape == (3, 4, 2) and separate and weight is None
    assert not torch.equal(fake[0], fake[1])  # k·B fakes: each teacher its own
    rows = model.seen[0]
    assert torch.equal(real, model.X_[rows])
    assert all(set(rows[t].tolist()) <= set(range(t, 30, 3)) for t in range(3))  # own block only


def test_shared_fakes_and_empty_blocks():
    model = _Model(empty=(1,))
    NeuralRounds(1, shared_fakes=True).run(model, 0)
    real, fake, _, weight = model.steps[0]
    assert model.fake_calls == [(4, False)] and torch.equal(fake[0], fake[2])  # one batch for all
    assert weight.tolist() == [1.0, 0.0, 1.0]  # the empty block's teacher ignores its real term
    assert len(model.seen[0][1]) == 0  # and has seen no row


class _Refit(_Model):
    def __init__(self):
        super().__init__()
        self.refits, self.after = [], []

    def refit(self, real, fake):
        self.refits.append((real, fake))

    def _refit_rows(self, it):
        return block_rows([np.arange(t, 30, 3)[:5] for t in range(3)])

    def _after_refit(self, rows):
        self.after.append(rows)


def test_logistic_refit_fits_new_teachers_on_the_presets_rows():
    model = _Refit()
    LogisticRefit(fake_sampling=True).run(model, 0)
    (real, fake), = model.refits
    assert real.shape == fake.shape == (3, 5, 2) and model.fake_calls == [(15, True)]
    assert torch.equal(model.after[0], model.seen[0])


# borealis, smartnoise and corrected train through their batched step at R = 1, which reads the
# strategy's rounds and separation (tests/replicas/test_neural_one_step.py checks that it runs them)
@pytest.mark.parametrize("name,kw", [
    ("updated", {"teacher_model": "neural_persistent"}), ("synthcity", {"teacher_model": "neural_persistent"}),
])
def test_presets_run_their_rounds_through_the_strategy(name, kw, toy, monkeypatch):
    calls = []
    original = NeuralRounds.run

    def counting(self, model, it):
        calls.append(self.rounds)
        return original(self, model, it)

    monkeypatch.setattr(NeuralRounds, "run", counting)
    if name == "corrected":
        kw = {**kw, "public_bounds": toy_bounds(toy)}
    m = create(name, num_teachers=3, max_iter=2, epsilon=1e6, teacher_iters=4, **kw).fit(toy, label="y")
    assert calls == [4, 4] and m.trace.iterations == 2


@pytest.mark.parametrize("name", ["updated", "synthcity"])
def test_logistic_presets_refit_through_the_strategy(name, toy, monkeypatch):
    calls = []
    original = LogisticRefit.run
    monkeypatch.setattr(LogisticRefit, "run", lambda self, model, it: (calls.append(it), original(self, model, it)))
    create(name, num_teachers=3, max_iter=2, epsilon=1e6).fit(toy, label="y")
    assert calls == [0, 1]
