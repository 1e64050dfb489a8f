"""Replica step of original and turing: R WGAN-GP fits (:mod:`pategan_audit.implementations.wgan`,
implementation notes §original.architecture, §original.loop, §turing.architecture, §turing.loop) run as one batched computation.

Every replica is set up exactly as :meth:`WganGenerator._fit` does (``_accept``, ``_streams``,
``_prepare``, ``_build``: its own initial weights, scaler/encoder, critic-step count, batch size,
sigma and, with ``critic_batch_source="own_partition"``, its own blocks). Replicas whose
networks and tables have the same shapes are then stacked: generator and critic become
:class:`StackedMlp` networks with a leading replica axis (weights ``[R, in, out]``, biases
``[R, 1, out]``) and one fused Adam each.

One iteration of a group:

* draws: for each replica, from its own ``train_gen`` in the single fit's order (per critic
  slot t: rows, z, indicator noise, interpolation e; then the generator step's label rows when
  conditional and its z), so replica i consumes exactly the numbers of ``models[i].fit``;
* maths: the k critic steps and the generator step over all replicas at once. The stacked loss
  is the *sum* of the replicas' losses, so each replica's gradient (the gradient penalty's
  ``autograd.grad`` included: a critic's output on a row depends on that row only) is its own,
  and Adam, being element-wise, updates each slice as a separate optimiser would.

There is no accountant: every replica runs its ``max_iter_`` iterations (equal inside a group).
At the end each replica's slice (and its Adam moments) is copied back into its own ``G``/``D``
and its trace is filled as ``_fit``'s ``finally`` block does. Networks match a single fit up to
float rounding (batched vs plain matrix products); draws, traces and label flips match exactly.

Stream mode (``streams="counter"``, issue 40 item 2): the training draws of an iteration come
from :mod:`.streams` instead, one Philox evaluation for all replicas and all draw kinds on
``device`` (no per-replica loop, no CPU round trip). Each kind has its own draw id, so a
replica's numbers depend only on its seed, the iteration and the element: the same at any R,
chunking and device, but not the single fit's numbers (initial weights and blocks still come
from the replica's own ``init_gen``/``partition_rng``). Same distributions: rows as B distinct
rows (all rows, or the replica's block t), z and e uniform, the indicator noise normal.
"""
from __future__ import annotations

import copy
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..components.networks import adam
from ..implementations.wgan import GP_EPS, Mlp, WganGenerator
from .stack import shape_signature
from .streams import Draws, as_normal, as_permutation, as_uniform, stream_keys

__all__ = ["StackedMlp", "signature", "supports", "run", "STREAM_MODES"]

#: the ``streams`` this family's batched step runs (see :func:`pategan_audit.implementations.fit_many`)
STREAM_MODES = ("torch", "counter")
#: stream id of the WGAN loop's training draws, and the draw id of each kind inside an iteration
STREAM_ID = 1
ROWS, Z, NOISE, E, G_ROWS, G_Z = 1, 2, 3, 4, 5, 6


class StackedMlp(nn.Module):
    """R :class:`~pategan_audit.implementations.wgan.Mlp` networks of one architecture with a
    leading replica axis: layer j holds ``weight[j]`` = the replicas' ``nn.Linear`` weights
    transposed and stacked (``[R, in, out]``) and ``bias[j]`` (``[R, 1, out]``). ``forward``
    maps ``[R, n, in] -> [R, n, out]``; an input width of 0 (z_dim = 0) gives the biases."""

    def __init__(self, replicas: Sequence[Mlp]):
        super().__init__()
        layers = [[mod for mod in m.net if isinstance(mod, nn.Linear)] for m in replicas]
        self.acts = nn.ModuleList(copy.deepcopy(mod) for mod in replicas[0].net if not isinstance(mod, nn.Linear))
        with torch.no_grad():
            self.weight = nn.ParameterList(
                nn.Parameter(torch.stack([lins[j].weight.detach().T for lins in layers]).contiguous())
                for j in range(len(layers[0]))
            )
            self.bias = nn.ParameterList(
                nn.Parameter(torch.stack([lins[j].bias.detach()[None] for lins in layers]).contiguous())
                for j in range(len(layers[0]))
            )

    def pairs(self) -> list[tuple[nn.Parameter, nn.Parameter]]:
        """(weight, bias) per layer, in the order of the single ``Mlp``'s parameters."""
        return list(zip(self.weight, self.bias))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for w, b, act in zip(self.weight, self.bias, self.acts):
            h = act(torch.baddbmm(b, h, w))
        return h

    @torch.no_grad()
    def write_back(self, r: int, target: Mlp) -> None:
        """Copy replica ``r``'s weights into ``target`` (an ``Mlp`` on any device)."""
        lins = [mod for mod in target.net if isinstance(mod, nn.Linear)]
        for lin, (w, b) in zip(lins, self.pairs()):
            lin.weight.copy_(w[r].T)
            lin.bias.copy_(b[r, 0])


def _write_back_adam(stacked_opt: torch.optim.Optimizer, net: StackedMlp, r: int,
                     target_opt: torch.optim.Optimizer, target: Mlp) -> None:
    """Give ``target_opt`` replica r's Adam state (step, moments), as after a single fit."""
    lins = [mod for mod in target.net if isinstance(mod, nn.Linear)]
    for lin, (w, b) in zip(lins, net.pairs()):
        for p_single, p_stacked, transpose in ((lin.weight, w, True), (lin.bias, b, False)):
            st = stacked_opt.state.get(p_stacked)
            if not st:
                continue
            out = {}
            for key, val in st.items():
                if not torch.is_tensor(val) or val.dim() == 0:  # the step counter
                    out[key] = val.detach().clone().to(p_single.device) if torch.is_tensor(val) else val
                else:
                    v = val[r].T if transpose else val[r, 0]
                    out[key] = v.detach().to(p_single.device).clone().contiguous()
            target_opt.state[p_single] = out


def _with_cond(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
    return x if y is None else torch.cat([x, y[..., None]], dim=-1)


def _is_relu_critic(D: StackedMlp) -> bool:
    """The critic of both presets: ``Linear, ReLU, Linear, ReLU, Linear`` (identity output)."""
    kinds = [type(a) for a in D.acts]
    return len(D.weight) == 3 and kinds == [nn.ReLU, nn.ReLU, nn.Identity]


@torch.no_grad()
def critic_grads(D: StackedMlp, x2: torch.Tensor, x_hat: torch.Tensor, y_hat: torch.Tensor | None,
                 M: torch.Tensor, gp: float) -> list[torch.Tensor]:
    """Gradients of the WGAN-GP critic loss of ``WganGenerator._critic_step`` for R stacked
    ReLU critics, written out by hand (no double backward through autograd).

    x2: ``[R, 2B, d_in]`` real then fake rows (with the label column when conditional);
    x_hat: ``[R, B, d]`` interpolates; y_hat: their labels ``[R, B]`` or None; M: ``[R, 2B]``
    noisy indicator labels. Loss per replica:
    ``mean((1 − M)·D(x2)) − mean(M·D(x2)) + gp·mean((‖∇_x D(x̂)‖_ε − 1)²)``.

    For a ReLU network ``D(x) = W3ᵀ relu(W2ᵀ relu(W1ᵀ x + b1) + b2) + b3`` the input gradient is
    ``∇_x D = W1 (m1 ⊙ W2 (m2 ⊙ W3))`` with the activation masks ``m = 1[pre-activation > 0]``,
    which are locally constant, so the penalty's weight gradients follow by the chain rule
    through three products (what autograd's double backward computes, with fewer kernels).
    Returns gradients in the order of ``D.parameters()`` (weights, then biases)."""
    (W1, W2, W3), (b1, b2, _) = list(D.weight), list(D.bias)  # b3 does not enter any gradient
    R, n2, _ = x2.shape
    B, d = x_hat.shape[1], x_hat.shape[2]
    # WGAN term on the 2B real/fake rows
    a1 = torch.baddbmm(b1, x2, W1)
    h1 = a1.clamp_min(0)
    a2 = torch.baddbmm(b2, h1, W2)
    h2 = a2.clamp_min(0)
    d3 = ((1.0 - 2.0 * M) / n2).unsqueeze(-1)  # d loss / d D(x2)

    def bias_grad(delta: torch.Tensor) -> torch.Tensor:
        # summed over all 3B rows the single fit's critic pass holds (the interpolates add
        # exact zeros), in the same reduction: a bias whose exact gradient is 0 (balanced
        # labels) then gets the single fit's rounding, which Adam would otherwise amplify
        return torch.cat([delta, delta.new_zeros(R, B, delta.shape[-1])], dim=1).sum(dim=1, keepdim=True)

    gW3 = torch.bmm(h2.mT, d3)
    gb3 = bias_grad(d3)
    d2 = torch.bmm(d3, W3.mT) * (a2 > 0)
    gW2 = torch.bmm(h1.mT, d2)
    gb2 = bias_grad(d2)
    d1 = torch.bmm(d2, W2.mT) * (a1 > 0)
    gW1 = torch.bmm(x2.mT, d1)
    gb1 = bias_grad(d1)
    # gradient penalty on the interpolates
    xh = x_hat if y_hat is None else torch.cat([x_hat, y_hat[..., None]], dim=-1)
    c1 = torch.baddbmm(b1, xh, W1)
    m1 = (c1 > 0).to(x2.dtype)
    c2 = torch.baddbmm(b2, c1.clamp_min(0), W2)
    m2 = (c2 > 0).to(x2.dtype)
    v2 = m2 * W3.mT  # [R, B, h]
    v1 = m1 * torch.bmm(v2, W2.mT)
    W1x = W1[:, :d]  # the gradient is taken w.r.t. the features only (not the label column)
    g = torch.bmm(v1, W1x.mT)  # [R, B, d] = grad_x D(x_hat)
    norm = torch.sqrt((g * g + GP_EPS).sum(dim=-1, keepdim=True))
    Gg = (2.0 * gp / B) * (norm - 1.0) / norm * g  # d penalty / d g
    gW1[:, :d] += torch.bmm(Gg.mT, v1)
    du1 = m1 * torch.bmm(Gg, W1x)
    gW2 += torch.bmm(du1.mT, v2)
    gW3 += (torch.bmm(du1, W2) * m2).sum(dim=1).unsqueeze(-1)
    return [gW1, gW2, gW3, gb1, gb2, gb3]


def signature(model: WganGenerator) -> tuple:
    """Replicas with equal signatures are stacked together."""
    return (type(model).__name__, tuple(model.X_.shape), model.cond_ is not None, model.num_teachers_,
            model.batch_size_, model.z_dim_, model.max_iter_, model.sigma_, model.gp_weight_,
            model.blocks_ is None, float(model.config.learning_rate), shape_signature(model.G, model.D))


def supports(config) -> bool:
    """Every setting of original and turing is batched."""
    return True


def run(models: Sequence[WganGenerator], frames: Sequence[pd.DataFrame], label: str | None, *,
        device: torch.device | str = "cpu", on_done: Callable[[int], None] | None = None,
        streams: str = "torch") -> None:
    """Fit ``models`` (unfitted original/turing replicas) on ``frames`` as one batched computation
    per group of stackable replicas; ``on_done(i)`` is called when ``models[i]`` is fitted.
    ``streams``: "torch" (each replica's own generator, the single fit's numbers) or "counter"
    (:mod:`.streams`, one call per iteration for all replicas)."""
    if streams not in STREAM_MODES:
        raise ValueError(f"streams must be one of {STREAM_MODES}, got {streams!r}")
    if streams == "counter":
        bad = [m.config.seed for m in models if m.config.seed is None or int(m.config.seed) < 0]
        if bad:
            raise ValueError(f"streams='counter' keys each replica by its seed; got seed {bad[0]!r}, pass non-negative seeds")
    device = torch.device(device)
    for m, df in zip(models, frames):  # the set-up of WganGenerator._fit, replica by replica
        df = m._accept(df, label)
        m._streams()
        m._prepare(df, label)
        m._build(int(m.X_.shape[0]))
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(signature(m), []).append(i)
    for idx in groups.values():
        done = (lambda j, idx=idx: on_done(idx[j])) if on_done else None
        _run_group([models[i] for i in idx], device, done, streams)


class _CounterDraws:
    """One iteration's draws of a group in stream mode, all on ``device``: the same kinds and
    distributions as the per-replica loop of :func:`_run_group` (see the module docstring)."""

    def __init__(self, models: list[WganGenerator], device: torch.device):
        m0 = models[0]
        self.R, self.N = len(models), int(m0.X_.shape[0])
        self.k, self.B, self.zd = m0.num_teachers_, m0.batch_size_, m0.z_dim_
        self.cond = m0.cond_ is not None
        if m0.blocks_ is None:
            self.blocks, self.lengths, self.L = None, None, self.N
        else:  # the replicas' blocks, padded to the longest; padding sorts last (never drawn: B <= N // k)
            self.L = max(len(b) for b in m0.blocks_)
            blocks = torch.zeros(self.R, self.k, self.L, dtype=torch.int64)
            for r, m in enumerate(models):
                for t, b in enumerate(m.blocks_):
                    blocks[r, t, :len(b)] = b
            self.blocks = blocks.to(device)
            self.lengths = torch.tensor([len(b) for b in m0.blocks_], dtype=torch.int64, device=device)
        k, B, zd = self.k, self.B, self.zd
        sizes = {ROWS: k * self.L, Z: k * B * zd, NOISE: k * 2 * B, E: k * B, G_Z: B * zd}
        if self.cond:
            sizes[G_ROWS] = self.N
        self.draws = Draws(stream_keys([int(m.config.seed) for m in models], STREAM_ID, device), sizes)

    def __call__(self, it: int):
        R, k, B, zd = self.R, self.k, self.B, self.zd
        w = self.draws(it)
        order = as_permutation(w[ROWS].reshape(R, k, self.L), self.lengths, first=B)
        rows = order if self.blocks is None else torch.gather(self.blocks, 2, order)
        z = as_uniform(w[Z]).reshape(R, k, B, zd) * 2.0 - 1.0
        noise = as_normal(w[NOISE]).reshape(R, k, 2 * B)
        e = as_uniform(w[E]).reshape(R, k, B, 1)
        g_rows = as_permutation(w[G_ROWS], first=B) if self.cond else None
        g_z = as_uniform(w[G_Z]).reshape(R, B, zd) * 2.0 - 1.0
        return rows, z, noise, e, g_rows, g_z


def _run_group(models: list[WganGenerator], device: torch.device, on_done: Callable[[int], None] | None,
               streams: str = "torch") -> None:
    R, m0 = len(models), models[0]
    N = int(m0.X_.shape[0])
    k, B, zd, T = m0.num_teachers_, m0.batch_size_, m0.z_dim_, m0.max_iter_
    sigma, gp = m0.sigma_, m0.gp_weight_
    cond = m0.cond_ is not None
    all_rows = m0.blocks_ is None
    for m in models:
        m.trace.extra.update(
            sigma=m.sigma_, num_teachers=k, batch_size=B, gp_weight=m.gp_weight_, z_dim=m.z_dim_,
            max_iter=m.max_iter_, num_critics=1,
        )

    G = StackedMlp([m.G for m in models]).to(device)
    D = StackedMlp([m.D for m in models]).to(device)
    lr = float(m0.config.learning_rate)
    opt_G = adam(G.parameters(), lr=lr, betas=(0.5, 0.999))
    opt_D = adam(D.parameters(), lr=lr, betas=(0.5, 0.999))
    g_params = list(G.parameters())
    d_params = list(D.parameters())
    manual = _is_relu_critic(D) and [id(p) for p in d_params] == [id(p) for p in [*D.weight, *D.bias]]
    X = torch.stack([m.X_ for m in models]).to(device)  # [R, N, d]
    C = torch.stack([m.cond_ for m in models]).to(device) if cond else None  # [R, N]
    ar = torch.arange(R, device=device)[:, None]
    base = torch.cat([torch.ones(B), torch.zeros(B)])
    seen = np.zeros((R, k, N), dtype=bool)
    flips = torch.zeros(R, T, dtype=torch.int64)
    gens = [m.train_gen for m in models]
    counter = _CounterDraws(models, device) if streams == "counter" else None
    if counter is not None:  # draws, flips and rows seen stay on the device
        base_dev = base.to(device)
        flips_dev = torch.zeros(R, T, dtype=torch.int64, device=device)
        seen_dev = torch.zeros(R, k, N, dtype=torch.bool, device=device)
        ar3_dev, at3_dev = ar[:, :, None], torch.arange(k, device=device)[None, :, None]
    for m in models:
        m.trace.extra["streams"] = streams

    # per-iteration draw buffers (CPU; filled replica by replica from each replica's own stream)
    perm = torch.empty(R, k, N, dtype=torch.int64)
    rows = torch.empty(R, k, B, dtype=torch.int64)
    z = torch.empty(R, k, B, zd)
    noise = torch.empty(R, k, 2 * B)
    e = torch.empty(R, k, B, 1)
    g_perm = torch.empty(R, N, dtype=torch.int64)
    g_z = torch.empty(R, B, zd)
    ar3 = np.arange(R)[:, None, None]
    at3 = np.arange(k)[None, :, None]

    finished = False
    try:
        for it in range(T):
            if counter is not None:  # one call for every replica and draw kind
                rows_d, z_d, noise_d, e_d, g_rows_d, g_z_d = counter(it)
                M_d = ((base_dev + noise_d * sigma) > 0.5).to(torch.float32)
                flips_dev[:, it] = (M_d != base_dev).sum(dim=(1, 2))
                seen_dev[ar3_dev, at3_dev, rows_d] = True
            for r, g in enumerate(gens if counter is None else ()):  # the single fit's order of draws (see WganGenerator._fit)
                m = models[r]
                for t in range(k):
                    if all_rows:  # _draw_rows: randperm(N)[:B]
                        torch.randperm(N, generator=g, out=perm[r, t])
                    else:
                        rows[r, t] = m._draw_rows(t, N)
                    torch.rand(B, zd, generator=g, out=z[r, t])  # _latent before the "* 2 - 1"
                    torch.randn(2 * B, generator=g, out=noise[r, t])
                    torch.rand(B, 1, generator=g, out=e[r, t])
                if cond:
                    torch.randperm(N, generator=g, out=g_perm[r])
                torch.rand(B, zd, generator=g, out=g_z[r])
            if counter is None:
                if all_rows:
                    rows.copy_(perm[:, :, :B])
                M = ((base + noise * sigma) > 0.5).to(torch.float32)  # [R, k, 2B], as _critic_step
                flips[:, it] = (M != base).sum(dim=(1, 2))
                seen[ar3, at3, rows.numpy()] = True
                rows_d = rows.to(device)
                z_d = (z * 2.0 - 1.0).to(device)
                M_d, e_d = M.to(device), e.to(device)
                g_rows_d = g_perm[:, :B].to(device) if cond else None
                g_z_d = (g_z * 2.0 - 1.0).to(device)

            for t in range(k):  # the critic steps (WganGenerator._critic_step, batched)
                rt = rows_d[:, t]
                real = X[ar, rt]  # [R, B, d]
                y = C[ar, rt] if cond else None
                with torch.no_grad():
                    fake = G(_with_cond(z_d[:, t], y))
                et, Mt = e_d[:, t], M_d[:, t]
                if manual:
                    x_hat = et * real + (1.0 - et) * fake
                    x2 = _with_cond(torch.cat([real, fake], dim=1), None if y is None else torch.cat([y, y], dim=1))
                    for p, gr in zip(d_params, critic_grads(D, x2, x_hat, y, Mt, gp)):
                        p.grad = gr
                    opt_D.step()
                    continue
                x_hat = (et * real + (1.0 - et) * fake).requires_grad_(True)
                yy = None if y is None else torch.cat([y, y, y], dim=1)
                out = D(_with_cond(torch.cat([real, fake, x_hat], dim=1), yy))[..., 0]  # [R, 3B]
                d_all, d_hat = out[:, : 2 * B], out[:, 2 * B:]
                (grad,) = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
                norm = torch.sqrt((grad * grad + GP_EPS).sum(dim=-1))
                loss = (((1.0 - Mt) * d_all).mean(dim=1) - (Mt * d_all).mean(dim=1)
                        + gp * ((norm - 1.0) ** 2).mean(dim=1)).sum()
                opt_D.zero_grad(set_to_none=True)
                loss.backward()
                opt_D.step()

            # the generator step (WganGenerator._generator_step, batched); only G's gradients
            y = C[ar, g_rows_d] if cond else None
            fake = G(_with_cond(g_z_d, y))
            loss_g = -D(_with_cond(fake, y))[..., 0].mean(dim=1).sum()
            grads = torch.autograd.grad(loss_g, g_params)
            for p, gr in zip(g_params, grads):
                p.grad = gr
            opt_G.step()
            for m in models:
                m._after_iteration(it)
        finished = True
    finally:
        if counter is not None:
            seen, flips = seen_dev.cpu().numpy(), flips_dev.cpu()
        for r, m in enumerate(models):  # as _fit's finally block
            G.write_back(r, m.G)
            D.write_back(r, m.D)
            _write_back_adam(opt_G, G, r, m.opt_G, m.G)
            _write_back_adam(opt_D, D, r, m.opt_D, m.D)
            done = m.trace.iterations
            m.trace.teacher_rows = [set(np.flatnonzero(s).tolist()) for s in seen[r]]
            m.trace.extra["label_flips"] = flips[r, :done].numpy() / float(2 * B * k)
            if m.blocks_ is not None:
                m.trace.extra["blocks"] = [b.numpy() for b in m.blocks_]
        if finished:
            for r, m in enumerate(models):
                m.fitted_ = True
                if on_done:
                    on_done(r)
