"""Generator architectures that are not plain MLPs, and the TF1 RMSProp optimiser.

* :class:`ResidualConcatGenerator`: synthcity's residual MLP (implementation notes §synthcity.architecture):
  ``h1 = [ReLU(W1 x); x]``, ``h2 = [ReLU(W2 h1); h1]``, ``out = W3 h2`` followed by a per-block
  output head (identity for continuous values, Gumbel-softmax with τ = 0.2 for one-hot blocks).
* :class:`ResidualLayerNormGenerator`: smartnoise's generator (implementation notes §smartnoise.architecture): three bias-free
  linear layers each followed by LayerNorm and LeakyReLU(0.2) (tanh when ``binary``), with
  residual connections around the first two.
* :class:`TF1RMSProp`: TensorFlow 1's ``RMSPropOptimizer`` as updated uses it (implementation notes §updated.architecture):
  accumulator initialised to 1, decay 0.9, ε = 1e-10 *inside* the square root, no momentum.
  PyTorch's ``RMSprop`` initialises the accumulator to 0 and adds ε outside the root.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from .networks import BatchedLinear, activation

__all__ = ["gumbel_softmax", "BlockHead", "ResidualConcatGenerator", "ResidualLayerNormGenerator", "TF1RMSProp"]


def gumbel_softmax(logits: torch.Tensor, *, tau: float, generator: torch.Generator | None) -> torch.Tensor:
    """Soft Gumbel-softmax sample (``hard=False``) along the last axis, with an explicit generator."""
    u = torch.rand(logits.shape, generator=generator, dtype=logits.dtype)
    exp_draw = -torch.log(u.clamp_min(1e-20))  # Exp(1)
    gumbel = -torch.log(exp_draw.clamp_min(1e-20))
    return torch.softmax((logits + gumbel) / tau, dim=-1)


class BlockHead(nn.Module):
    """Output activation per encoder block: ``blocks`` is a list of ``(kind, width)`` with kind
    ``"continuous"`` (identity) or ``"onehot"`` (Gumbel-softmax, τ = ``tau``).

    One-hot blocks of equal width are processed together (one gather, one softmax, one scatter
    per distinct width), which is the same computation as a loop over blocks."""

    def __init__(self, blocks: Sequence[tuple[str, int]], *, tau: float = 0.2):
        super().__init__()
        for kind, width in blocks:
            if kind not in ("continuous", "onehot") or width < 1:
                raise ValueError(f"invalid output block {(kind, width)}; kinds are 'continuous' and 'onehot'")
        self.blocks = [(str(k), int(w)) for k, w in blocks]
        self.tau = float(tau)
        self.generator: torch.Generator | None = None
        groups: dict[int, list[int]] = {}
        start = 0
        for kind, width in self.blocks:
            if kind == "onehot":
                groups.setdefault(width, []).append(start)
            start += width
        # per width: index matrix [n_blocks, width] of the columns of each block
        self._groups = [torch.as_tensor([[s + j for j in range(w)] for s in starts]) for w, starts in sorted(groups.items())]

    @property
    def width(self) -> int:
        return sum(w for _, w in self.blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._groups:
            return x
        out = x.clone()
        for idx in self._groups:
            chunk = x[:, idx]  # [n, blocks, width]
            out[:, idx] = gumbel_softmax(chunk, tau=self.tau, generator=self.generator)
        return out


class ResidualConcatGenerator(nn.Module):
    """synthcity generator: two residual-concatenation ReLU layers of ``hidden`` units, then a
    linear layer to ``out_features`` and the :class:`BlockHead` (implementation notes §synthcity.architecture; PyTorch default init)."""

    def __init__(self, in_features: int, hidden: int, head: BlockHead, *, generator: torch.Generator | None = None):
        super().__init__()
        w1 = in_features + hidden
        self.layer1 = BatchedLinear(1, in_features, hidden, generator=generator)
        self.layer2 = BatchedLinear(1, w1, w1, generator=generator)
        self.out = BatchedLinear(1, 2 * w1, head.width, generator=generator)
        self.act = nn.ReLU()
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h1 = torch.cat([self.act(self.layer1(x)[0]), x], dim=-1)
        h2 = torch.cat([self.act(self.layer2(h1)[0]), h1], dim=-1)
        return self.head(self.out(h2)[0])


class ResidualLayerNormGenerator(nn.Module):
    """smartnoise generator (implementation notes §smartnoise.architecture): ``h0 = a(LN(W0 z)) + z``, ``h1 = a(LN(W1 h0)) + h0``,
    ``out = a(LN(W2 h1))``; bias-free Linear layers with Xavier-uniform weights, affine LayerNorm,
    ``a`` = LeakyReLU(0.2) (tanh if ``binary``)."""

    def __init__(self, latent_dim: int, out_features: int, *, binary: bool = False,
                 generator: torch.Generator | None = None):
        super().__init__()
        kw = dict(bias=False, weight_init="xavier_uniform", generator=generator)
        self.lin = nn.ModuleList([
            BatchedLinear(1, latent_dim, latent_dim, **kw),
            BatchedLinear(1, latent_dim, latent_dim, **kw),
            BatchedLinear(1, latent_dim, out_features, **kw),
        ])
        self.norms = nn.ModuleList([nn.LayerNorm(latent_dim), nn.LayerNorm(latent_dim), nn.LayerNorm(out_features)])
        self.act = activation("tanh" if binary else "leaky_relu:0.2")

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self.act(self.norms[0](self.lin[0](z)[0])) + z
        h = self.act(self.norms[1](self.lin[1](h)[0])) + h
        return self.act(self.norms[2](self.lin[2](h)[0]))


class TF1RMSProp(torch.optim.Optimizer):
    """``tf.train.RMSPropOptimizer(lr)`` with TF1 defaults (decay 0.9, momentum 0, ε = 1e-10):

    ``ms ← decay·ms + (1 − decay)·g²`` with ``ms`` initialised to **1**, then
    ``θ ← θ − lr·g / sqrt(ms + ε)``.
    """

    def __init__(self, params, lr: float = 1e-4, decay: float = 0.9, eps: float = 1e-10):
        if lr <= 0 or not 0 <= decay < 1 or eps < 0:
            raise ValueError(f"invalid RMSProp settings lr={lr}, decay={decay}, eps={eps}")
        super().__init__(params, dict(lr=lr, decay=decay, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):  # noqa: D401 - torch API
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "ms" not in state:
                    state["ms"] = torch.ones_like(p)
                ms = state["ms"]
                ms.mul_(group["decay"]).addcmul_(p.grad, p.grad, value=1.0 - group["decay"])
                p.addcdiv_(p.grad, (ms + group["eps"]).sqrt_(), value=-group["lr"])
        return None
