"""Batched networks, initialisations, generators and the TF1 optimiser (components.networks/generators)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pategan_audit.components.generators import (
    BlockHead,
    ResidualConcatGenerator,
    ResidualLayerNormGenerator,
    TF1RMSProp,
    gumbel_softmax,
)
from pategan_audit.components.networks import BatchedLinear, BatchedMLP, activation, adam, dropout


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_batched_linear_equals_one_matmul_per_model():
    layer = BatchedLinear(3, 4, 2, generator=gen())
    x = torch.randn(3, 5, 4, generator=gen(1))
    out = layer(x)
    for t in range(3):
        torch.testing.assert_close(out[t], x[t] @ layer.weight[t] + layer.bias[t])
    shared = torch.randn(5, 4, generator=gen(2))  # [n, in]: every model reads the same rows
    torch.testing.assert_close(layer(shared), torch.stack([shared @ layer.weight[t] + layer.bias[t] for t in range(3)]))


def test_batched_mlp_gradients_are_per_model():
    """Summing the models' losses gives each model exactly the gradient of its own loss."""
    k = 4
    net = BatchedMLP(k, [6, 5, 1], hidden_activation="relu", generator=gen())
    x = torch.randn(k, 8, 6, generator=gen(3))
    y = torch.rand(k, 8, 1, generator=gen(4))
    ((net(x) - y) ** 2).mean(dim=(1, 2)).sum().backward()
    for t in range(k):
        w1 = net.layers[0].weight[t].detach().clone().requires_grad_(True)
        b1 = net.layers[0].bias[t].detach().clone().requires_grad_(True)
        w2 = net.layers[1].weight[t].detach().clone().requires_grad_(True)
        b2 = net.layers[1].bias[t].detach().clone().requires_grad_(True)
        loss = (((torch.relu(x[t] @ w1 + b1) @ w2 + b2) - y[t]) ** 2).mean()
        loss.backward()
        torch.testing.assert_close(net.layers[0].weight.grad[t], w1.grad)
        torch.testing.assert_close(net.layers[1].bias.grad[t], b2.grad)


@pytest.mark.parametrize("init,expected_std", [
    ("he_normal", math.sqrt(2.0 / 400)),  # N(0, 2/fan_in): the TF "xavier_init" of updated (spec §3.2)
    ("xavier_uniform", math.sqrt(6.0 / 700) / math.sqrt(3)),  # U(±sqrt(6/(in+out))): std = bound/sqrt(3)
    ("torch_default", (1 / math.sqrt(400)) / math.sqrt(3)),  # U(±1/sqrt(fan_in))
])
def test_weight_initialisations(init, expected_std):
    layer = BatchedLinear(2, 400, 300, weight_init=init, bias_init=0.01, generator=gen())
    assert layer.weight.std().item() == pytest.approx(expected_std, rel=0.02)
    assert torch.all(layer.bias == 0.01)  # borealis' bias fill (spec §6.2)
    assert torch.all(BatchedLinear(1, 3, 2, bias_init="zero").bias == 0)


def test_initialisation_is_seeded():
    a = BatchedMLP(3, [4, 3, 1], generator=gen(7))
    b = BatchedMLP(3, [4, 3, 1], generator=gen(7))
    c = BatchedMLP(3, [4, 3, 1], generator=gen(8))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.layers[0].weight, c.layers[0].weight)


def test_bad_sizes_and_names_raise():
    with pytest.raises(ValueError, match="positive sizes"):
        BatchedLinear(0, 3, 2)
    with pytest.raises(ValueError, match="weight_init"):
        BatchedLinear(1, 3, 2, weight_init="orthogonal")
    with pytest.raises(ValueError, match="activation"):
        activation("swish")
    with pytest.raises(ValueError, match="does not fit"):
        BatchedLinear(2, 3, 2)(torch.zeros(3, 4, 3))


def test_dropout_is_seeded_and_off_in_eval():
    x = torch.ones(1000, 10)
    a = dropout(x, p=0.1, generator=gen(1), training=True)
    b = dropout(x, p=0.1, generator=gen(1), training=True)
    assert torch.equal(a, b)
    assert (a == 0).float().mean().item() == pytest.approx(0.1, abs=0.01)
    assert a.mean().item() == pytest.approx(1.0, abs=0.02)  # inverted dropout keeps the mean
    assert torch.equal(dropout(x, p=0.1, generator=gen(1), training=False), x)


def test_synthcity_student_has_dropout_before_the_second_hidden_layer_only():
    """synthcity's discriminator: Linear, act, Dropout, Linear, act, Linear (spec §4.2)."""
    net = BatchedMLP(1, [5, 100, 100, 1], hidden_activation="leaky_relu:0.01", dropout_p=0.5, generator=gen())
    net.dropout_generator = gen(3)
    x = torch.randn(4, 5, generator=gen(4))
    net.eval()
    clean = net.single(x)
    net.train()
    assert not torch.equal(net.single(x), clean)


def test_fused_adam_matches_reference_adam():
    p1 = torch.nn.Parameter(torch.randn(5, 3, generator=gen()))
    p2 = torch.nn.Parameter(p1.detach().clone())
    o1, o2 = adam([p1], lr=1e-2, weight_decay=1e-3), torch.optim.Adam([p2], lr=1e-2, weight_decay=1e-3)
    for step in range(5):
        g = torch.randn(5, 3, generator=gen(step))
        p1.grad, p2.grad = g.clone(), g.clone()
        o1.step()
        o2.step()
    torch.testing.assert_close(p1, p2, rtol=1e-5, atol=1e-7)


def test_tf1_rmsprop_first_steps_by_hand():
    """TF1 RMSProp: ms starts at 1, ms <- 0.9 ms + 0.1 g^2, p <- p - lr g / sqrt(ms + 1e-10) (spec §3.2)."""
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = TF1RMSProp([p], lr=0.1)
    g1, g2 = np.array([0.5, -3.0]), np.array([1.0, 2.0])
    ms = np.ones(2)
    expected = np.array([1.0, -2.0])
    for g in (g1, g2):
        p.grad = torch.tensor(g)
        opt.step()
        ms = 0.9 * ms + 0.1 * g**2
        expected = expected - 0.1 * g / np.sqrt(ms + 1e-10)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12)


def test_block_head_softmax_blocks_and_identity_columns():
    head = BlockHead([("continuous", 1), ("onehot", 3), ("onehot", 2), ("continuous", 1), ("onehot", 3)], tau=0.2)
    head.generator = gen(5)
    x = torch.randn(50, head.width, generator=gen(6))
    y = head(x)
    torch.testing.assert_close(y[:, [0, 6]], x[:, [0, 6]])
    for s, w in [(1, 3), (4, 2), (7, 3)]:
        torch.testing.assert_close(y[:, s:s + w].sum(dim=1), torch.ones(50))
        assert (y[:, s:s + w] >= 0).all()
    head.generator = gen(5)
    assert torch.equal(head(x), y)  # reproducible from the generator
    with pytest.raises(ValueError, match="invalid output block"):
        BlockHead([("gaussian", 2)])


def test_gumbel_softmax_low_temperature_is_nearly_one_hot():
    logits = torch.tensor([[5.0, 0.0, 0.0]]).repeat(2000, 1)
    y = gumbel_softmax(logits, tau=0.2, generator=gen())
    assert (y.max(dim=1).values > 0.9).float().mean() > 0.9
    # P(argmax = 0) for Gumbel-max with logits (5, 0, 0) is e^5 / (e^5 + 2)
    assert (y.argmax(dim=1) == 0).float().mean().item() == pytest.approx(math.exp(5) / (math.exp(5) + 2), abs=0.02)


def test_residual_generators_shapes():
    head = BlockHead([("continuous", 1), ("onehot", 4)])
    g = ResidualConcatGenerator(7, 10, head, generator=gen())
    assert g.layer2.weight.shape == (1, 17, 17) and g.out.weight.shape == (1, 34, 5)  # widths a+h, 2(a+h) (spec §4.2)
    assert g(torch.randn(3, 7, generator=gen(1))).shape == (3, 5)
    s = ResidualLayerNormGenerator(64, 9, generator=gen())
    assert all(layer.bias is None for layer in s.lin)  # bias-free Linear layers (spec §7.2)
    assert s(torch.rand(6, 64, generator=gen(2))).shape == (6, 9)


def test_fused_adam_handles_non_contiguous_gradients():
    """torch's fused CPU Adam mis-updates a non-contiguous gradient; ``adam`` guards against it:
    a transposed gradient gives the default kernel's step."""
    import torch

    from pategan_audit.components.networks import adam

    torch.manual_seed(0)
    p1 = torch.nn.Parameter(torch.randn(4, 3))
    p2 = torch.nn.Parameter(p1.detach().clone())
    fused, plain = adam([p1], lr=0.1), torch.optim.Adam([p2], lr=0.1)
    grad = torch.randn(3, 4).T
    assert not grad.is_contiguous()
    p1.grad, p2.grad = grad, grad.clone()
    fused.step()
    plain.step()
    torch.testing.assert_close(p1.detach(), p2.detach(), rtol=0, atol=1e-6)
