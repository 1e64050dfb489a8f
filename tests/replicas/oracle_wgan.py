"""The WGAN-GP loop of original and turing written as the upstream code runs it, one model at a
time on its own ``nn.Linear`` networks (implementation notes §original.loop, §turing.loop): the
test oracle of the one training step, :mod:`pategan_audit.replicas.wgan`, which ``fit()`` runs
at R = 1 and must match bit for bit.

One iteration: k critic steps (rows, z ~ U(-1, 1), indicator noise, interpolation e, drawn in
this order from ``train_gen``; loss ``mean((1 - M) D) - mean(M D) + w_gp mean((||grad|| - 1)^2)``
over one critic pass on [real; fake; x_hat]), then a generator step on ``-mean(D(G(z)))``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from pategan_audit.replicas.wgan import GP_EPS


def _with_cond(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
    return x if y is None else torch.cat([x, y[:, None]], dim=1)


def _latent(model, n: int) -> torch.Tensor:
    return torch.rand(n, model.z_dim_, generator=model.train_gen) * 2.0 - 1.0


def _draw_rows(model, t: int, N: int) -> torch.Tensor:
    B, gen = model.batch_size_, model.train_gen
    if model.blocks_ is None:  # V3/V6: B distinct rows from all N rows
        return torch.randperm(N, generator=gen)[:B]
    block = model.blocks_[t]
    return block[torch.randperm(len(block), generator=gen)[:B]]


def _critic_step(model, rows: torch.Tensor) -> torch.Tensor:
    B, gen = len(rows), model.train_gen
    real = model.X_[rows]
    y = None if model.cond_ is None else model.cond_[rows]
    with torch.no_grad():
        fake = model.G(_with_cond(_latent(model, B), y))
    base = torch.cat([torch.ones(B), torch.zeros(B)])
    M = ((base + torch.randn(2 * B, generator=gen) * model.sigma_) > 0.5).to(torch.float32)
    e = torch.rand(B, 1, generator=gen)
    x_hat = (e * real + (1.0 - e) * fake).requires_grad_(True)
    yy = None if y is None else torch.cat([y, y, y])
    out = model.D(_with_cond(torch.cat([real, fake, x_hat]), yy))[:, 0]
    d_all, d_hat = out[: 2 * B], out[2 * B:]
    (grad,) = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
    norm = torch.sqrt((grad * grad + GP_EPS).sum(dim=1))
    loss = ((1.0 - M) * d_all).mean() - (M * d_all).mean() + model.gp_weight_ * ((norm - 1.0) ** 2).mean()
    model.opt_D.zero_grad(set_to_none=True)
    loss.backward()
    model.opt_D.step()
    return (M != base).sum()


def _generator_step(model, N: int) -> None:
    B, gen = model.batch_size_, model.train_gen
    y = None if model.cond_ is None else model.cond_[torch.randperm(N, generator=gen)[:B]]
    fake = model.G(_with_cond(_latent(model, B), y))
    loss = -model.D(_with_cond(fake, y)).mean()
    model.opt_G.zero_grad(set_to_none=True)
    loss.backward()
    model.opt_G.step()


def oracle_fit(model, df: pd.DataFrame, label: str | None = None):
    """Fit ``model`` (an unfitted original/turing) with the upstream-shaped loop; returns it."""
    model.begin_fit(df, label)
    N = int(model.X_.shape[0])
    k = model.num_teachers_
    seen = np.zeros((k, N), dtype=bool)
    flips = torch.zeros(model.max_iter_, dtype=torch.int64)
    for it in range(model.max_iter_):
        for t in range(k):
            rows = _draw_rows(model, t, N)
            seen[t, rows.numpy()] = True
            flips[it] += _critic_step(model, rows)
        _generator_step(model, N)
        model.end_iteration(it)
    model.end_fit(seen, flips)
    model.fitted_ = True
    return model
