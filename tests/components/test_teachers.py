"""Teacher ensembles (components.teachers): batched training equals per-teacher training, hard
votes, logistic teachers equal scikit-learn's, the Fig. 3 cross-entropy."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from pategan_audit.components.logistic import LogisticFit
from pategan_audit.components.teachers import LogisticTeachers, NeuralTeachers, bce_union


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


ACTIVATIONS = {"relu": torch.nn.ReLU, "leaky_relu:0.2": lambda: torch.nn.LeakyReLU(0.2), "tanh": torch.nn.Tanh}


def _loop_reference(teachers: NeuralTeachers, real, fake, steps, separate, activation):
    """k separate nn.Modules, each with its own Adam, trained one after the other."""
    k = teachers.num_teachers
    models, opts = [], []
    for t in range(k):
        modules = []
        for i, layer in enumerate(teachers.net.layers):
            linear = torch.nn.Linear(layer.in_features, layer.out_features)
            with torch.no_grad():
                linear.weight.copy_(layer.weight[t].T)
                linear.bias.copy_(layer.bias[t, 0])
            modules += [linear] if i == len(teachers.net.layers) - 1 else [linear, ACTIVATIONS[activation]()]
        models.append(torch.nn.Sequential(*modules))
        opts.append(torch.optim.Adam(models[-1].parameters(), lr=1e-2))
    bce = torch.nn.BCEWithLogitsLoss()
    for s in range(steps):
        for t in range(k):
            r, f = real[s][t], fake[s][t]
            if separate:
                opts[t].zero_grad()
                bce(models[t](r)[:, 0], torch.ones(len(r))).backward()
                opts[t].step()
                opts[t].zero_grad()
                bce(models[t](f)[:, 0], torch.zeros(len(f))).backward()
                opts[t].step()
            else:
                opts[t].zero_grad()
                (bce(models[t](r)[:, 0], torch.ones(len(r))) + bce(models[t](f)[:, 0], torch.zeros(len(f)))).backward()
                opts[t].step()
    return models


@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("activation,hidden", [("relu", [5]), ("leaky_relu:0.2", [5, 4]), ("tanh", [5])])
def test_batched_teachers_equal_a_loop_over_separate_teachers(separate, activation, hidden):
    """One batched step for k teachers == k modules with k optimisers (design.md §4): the
    hand-written backward (ReLU, leaky ReLU) and the autograd one (tanh) alike."""
    k, d, B, steps = 3, 6, 8, 4
    teachers = NeuralTeachers(k, [d, *hidden, 1], hidden_activation=activation, weight_init="xavier_uniform",
                              bias_init=0.01, lr=1e-2, generator=gen())
    assert (teachers._slope is None) == (activation == "tanh")
    real = [torch.randn(k, B, d, generator=gen(10 + s)) for s in range(steps)]
    fake = [torch.randn(k, B + 3, d, generator=gen(20 + s)) + 1.0 for s in range(steps)]
    models = _loop_reference(teachers, real, fake, steps, separate, activation)
    for s in range(steps):
        losses = teachers.train_step(real[s], fake[s], separate=separate)
    assert losses.shape == (k,) and not losses.requires_grad
    x = torch.randn(7, d, generator=gen(99))
    expected = torch.stack([m(x)[:, 0] for m in models])
    with torch.no_grad():
        torch.testing.assert_close(teachers.logits(x), expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(teachers.logits(x).detach(), expected.detach(), rtol=1e-4, atol=1e-5)


def test_logits_keep_gradients_when_enabled_and_votes_do_not():
    teachers = NeuralTeachers(2, [3, 4, 1], hidden_activation="relu", weight_init="he_normal", bias_init="zero", generator=gen())
    x = torch.randn(5, 3, generator=gen(1))
    with_grad = teachers.logits(x)
    assert with_grad.requires_grad  # autograd path: differentiable
    with torch.no_grad():
        manual = teachers.logits(x)  # hand-written forward
    torch.testing.assert_close(manual, with_grad.detach(), rtol=1e-6, atol=1e-6)
    assert not teachers.predict(x).requires_grad and not teachers.votes(x).requires_grad


def test_votes_count_teachers_whose_probability_exceeds_half():
    teachers = NeuralTeachers(5, [4, 3, 1], hidden_activation="relu", weight_init="he_normal", bias_init="zero", generator=gen())
    x = torch.randn(30, 4, generator=gen(1))
    logits = teachers.logits(x)
    assert torch.equal(teachers.predict(x), (torch.sigmoid(logits) > 0.5).to(torch.int64))
    assert torch.equal(teachers.votes(x), (logits > 0).sum(dim=0))
    assert teachers.votes(x).min() >= 0 and teachers.votes(x).max() <= 5


def test_logistic_teachers_match_sklearn_and_are_new_each_refit():
    rng = np.random.default_rng(0)
    k, m, d = 3, 60, 4
    real = torch.as_tensor(rng.normal(0.3, 1.0, size=(k, m, d)))
    fake = torch.as_tensor(rng.normal(-0.3, 1.0, size=(k, m, d)))
    teachers = LogisticTeachers(k)
    teachers.refit(real, fake)
    first = teachers.fit
    assert isinstance(first, LogisticFit)
    x = torch.as_tensor(rng.normal(size=(40, d)))
    for t in range(k):
        X = np.concatenate([real[t].numpy(), fake[t].numpy()])
        y = np.r_[np.ones(m), np.zeros(m)]
        ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(X, y)  # sklearn defaults otherwise (spec §3.2)
        np.testing.assert_allclose(teachers.logits(x)[t].numpy(), ref.decision_function(x.numpy()), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(teachers.predict(x)[t].numpy(), ref.predict(x.numpy()))
    teachers.refit(real, fake)
    assert teachers.fit is not first  # B1/B2: re-created every iteration
    np.testing.assert_allclose(teachers.fit.coef.numpy(), first.coef.numpy(), atol=1e-8)  # same unique optimum
    with pytest.raises(RuntimeError, match="not been fitted"):
        LogisticTeachers(2).logits(x)


def test_cross_entropy_matches_hand_computation():
    teachers = NeuralTeachers(2, [3, 1], hidden_activation="relu", weight_init="he_normal", bias_init="zero", generator=gen())
    subsets = [torch.randn(4, 3, generator=gen(1)), torch.randn(6, 3, generator=gen(2))]
    fake = torch.randn(5, 3, generator=gen(3))
    ce = teachers.cross_entropy(subsets, fake)
    assert ce.shape == (2, 2)
    for t in range(2):
        for j, real in enumerate(subsets):
            p_real = torch.sigmoid(teachers.logits(real)[t])
            p_fake = torch.sigmoid(teachers.logits(fake)[t])
            manual = -(torch.log(p_real).sum() + torch.log(1 - p_fake).sum()) / (len(real) + len(fake))
            assert ce[t, j] == pytest.approx(manual.item(), rel=1e-5)
    # bce_union: a perfect separator has (almost) zero loss
    assert bce_union(torch.full((1, 3), 30.0), torch.full((1, 2), -30.0)).item() < 1e-12


def test_teacher_output_layer_must_be_one_logit():
    with pytest.raises(ValueError, match="end with 1"):
        NeuralTeachers(2, [3, 2], hidden_activation="relu", weight_init="he_normal", bias_init="zero")


def test_logistic_teachers_with_more_features_than_rows_match_sklearn():
    """The row-span reduction (m < D) gives scikit-learn's optimum."""
    rng = np.random.default_rng(3)
    k, m, d = 2, 15, 40
    real = torch.as_tensor(rng.normal(0.2, 1.0, size=(k, m, d)))
    fake = torch.as_tensor(rng.normal(-0.2, 1.0, size=(k, m, d)))
    teachers = LogisticTeachers(k)
    teachers.refit(real, fake)
    teachers.refit(real + 0.01, fake)  # warm start from the previous coefficients
    for t in range(k):
        X = np.concatenate([real[t].numpy() + 0.01, fake[t].numpy()])
        ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000).fit(X, np.r_[np.ones(m), np.zeros(m)])
        np.testing.assert_allclose(teachers.fit.coef[t].numpy(), ref.coef_[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(teachers.fit.intercept[t].item(), ref.intercept_[0], rtol=1e-5, atol=1e-6)


def test_real_weight_zero_trains_a_teacher_on_fakes_only():
    """An empty block (independent assignment) gives its teacher real weight 0: its update equals
    a step on its fake rows alone, and the other teachers are untouched by the mask."""
    torch.manual_seed(0)
    real, fake = torch.randn(3, 4, 5), torch.randn(3, 4, 5)
    a = NeuralTeachers(3, [5, 3, 1], hidden_activation="relu", weight_init="xavier_uniform", bias_init="zero",
                       generator=torch.Generator().manual_seed(1))
    b = NeuralTeachers(3, [5, 3, 1], hidden_activation="relu", weight_init="xavier_uniform", bias_init="zero",
                       generator=torch.Generator().manual_seed(1))
    c = NeuralTeachers(3, [5, 3, 1], hidden_activation="relu", weight_init="xavier_uniform", bias_init="zero",
                       generator=torch.Generator().manual_seed(1))
    a.train_step(real, fake, real_weight=torch.tensor([1.0, 0.0, 1.0]))
    b.train_step(real, fake)
    c._step(fake, 0)
    for la, lb, lc in zip(a.net.layers, b.net.layers, c.net.layers):
        for t in (0, 2):
            torch.testing.assert_close(la.weight[t], lb.weight[t])
        torch.testing.assert_close(la.weight[1], lc.weight[1])
        assert not torch.allclose(la.weight[1], lb.weight[1])
