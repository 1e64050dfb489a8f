"""The training step of original and turing: R WGAN-GP fits (:mod:`pategan_audit.implementations.wgan`,
implementation notes §original.architecture, §original.loop, §turing.architecture, §turing.loop) run as
one batched computation. A single ``fit()`` is this step at R = 1 (:func:`run_group`); ``fit_many``
runs it over many replicas (:func:`run`).

Every replica is set up by its model's ``begin_fit`` (its own streams, initial weights,
scaler/encoder, critic-step count, batch size, sigma and, with
``critic_batch_source="own_partition"``, its own blocks). Replicas whose networks and tables have
the same shapes are then stacked: generator and critic become :class:`StackedMlp` networks with a
leading replica axis (weights ``[R, in, out]``, biases ``[R, 1, out]``) and one fused Adam each.

One iteration of a group (:class:`WganStep`):

* draws: for each replica, from its own ``train_gen`` in the upstream loop's order (per critic
  slot t: rows, z, indicator noise, interpolation e; then the generator step's label rows when
  conditional and its z);
* maths: the k critic steps and the generator step over all replicas at once. The stacked loss
  is the *sum* of the replicas' losses, so each replica's gradient (the gradient penalty's
  included: a critic's output on a row depends on that row only) is its own, and Adam, being
  element-wise, updates each slice as a separate optimiser would.

There is no accountant: every replica runs its ``max_iter_`` iterations (equal inside a group).
At the end each replica's slice (and its Adam moments) is copied back into its own ``G``/``D``
and its trace is filled (``end_fit``). At R = 1 the networks use the kernels of ``nn.Linear`` on
``[out, in]`` weights (:meth:`StackedMlp.forward`), so a single fit's numbers are those of the
upstream-shaped loop bit for bit (``tests/replicas/oracle_wgan.py``); at R > 1 the batched
products round differently (baddbmm), by a few ulps per product.

Inside :func:`.checkpoint.checkpointing`, a group writes snapshots of its state between
iterations and goes on from one when it finds it: a fit stopped mid-way resumes to the numbers
of the fit never stopped (a single fit too).

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
from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..components.networks import Mlp, adam
from . import checkpoint
from .stack import shape_signature
from .streams import Draws, as_normal, as_permutation, as_uniform, stream_keys

__all__ = ["GP_EPS", "StackedMlp", "WganModel", "WganStep", "signature", "supports", "run", "run_group", "STREAM_MODES"]

GP_EPS = 1e-8  # ZERO_TOL inside the gradient-norm square root (implementation notes §original.loop)

#: the ``streams`` this family's batched step runs (see :func:`pategan_audit.implementations.fit_many`)
STREAM_MODES = ("torch", "counter")
#: stream id of the WGAN loop's training draws, and the draw id of each kind inside an iteration
STREAM_ID = 1
ROWS, Z, NOISE, E, G_ROWS, G_Z = 1, 2, 3, 4, 5, 6


class WganModel(Protocol):
    """What the step reads and calls on a model (:class:`~pategan_audit.implementations.wgan.WganGenerator`).

    ``begin_fit(df, label, prepared=None)`` validates the table and sets the model up (streams,
    data, networks, optimisers, the fitted sizes below) and returns what the table alone
    determined, which a replica of equal settings (``prepares_like``) on the same table takes
    instead of preparing it again; ``end_iteration(it)`` counts an iteration and runs the
    model's callbacks; ``end_fit(seen, flips)`` fills the trace from the rows seen ``[k, N]`` and
    the label flips per iteration."""

    config: Any
    trace: Any
    callbacks: list
    fitted_: bool
    X_: torch.Tensor
    cond_: torch.Tensor | None
    blocks_: list[torch.Tensor] | None
    num_teachers_: int
    batch_size_: int
    z_dim_: int
    max_iter_: int
    sigma_: float
    gp_weight_: float
    G: Mlp
    D: Mlp
    opt_G: torch.optim.Optimizer
    opt_D: torch.optim.Optimizer
    train_gen: torch.Generator

    def begin_fit(self, df: pd.DataFrame, label: str | None, prepared: dict | None = None) -> dict: ...

    def prepares_like(self, other: Any) -> bool: ...

    def end_iteration(self, iteration: int) -> None: ...

    def end_fit(self, seen: np.ndarray, flips: torch.Tensor) -> None: ...


class StackedMlp(nn.Module):
    """R :class:`~pategan_audit.components.networks.Mlp` networks of one architecture with a
    leading replica axis: layer j holds ``weight[j]`` = the replicas' ``nn.Linear`` weights
    transposed and stacked (``[R, in, out]``) and ``bias[j]`` (``[R, 1, out]``). ``forward``
    maps ``[R, n, in] -> [R, n, out]``; an input width of 0 (z_dim = 0) gives the biases.

    One replica (R = 1) keeps ``nn.Linear``'s parameters as they are (weight ``[out, in]``, bias
    ``[out]``) and its kernels (``forward`` on ``[n, in]``): a single ``Mlp``'s numbers bit for bit,
    its Adam moments included (the fused Adam's vectorised body and scalar tail round differently,
    so the elements' order matters)."""

    def __init__(self, replicas: Sequence[Mlp]):
        super().__init__()
        layers = [[mod for mod in m.net if isinstance(mod, nn.Linear)] for m in replicas]
        self.acts = nn.ModuleList(copy.deepcopy(mod) for mod in replicas[0].net if not isinstance(mod, nn.Linear))
        self.single = len(replicas) == 1
        with torch.no_grad():
            if self.single:
                self.weight = nn.ParameterList(nn.Parameter(lin.weight.detach().clone()) for lin in layers[0])
                self.bias = nn.ParameterList(nn.Parameter(lin.bias.detach().clone()) for lin in layers[0])
                return
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

    def _layers(self) -> Iterator[tuple[nn.Parameter, nn.Parameter, nn.Module]]:
        """(weight, bias, activation) per layer, read from the containers' own dicts: iterating a
        ``ParameterList`` indexes it element by element through ``__getitem__`` and ``len``, which
        cost a single fit of ``original`` about 25,000 Python calls per 100 iterations. The dicts
        hold the current parameters (also after ``.to(device)`` replaces them)."""
        return zip(self.weight._parameters.values(), self.bias._parameters.values(), self.acts._modules.values())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.single:  # nn.Linear's kernels, as a single Mlp computes
            h = x.squeeze(0)  # a view (x[0]'s backward would allocate and copy)
            for w, b, act in self._layers():
                h = act(F.linear(h, w, b))
            return h.unsqueeze(0)
        h = x
        for w, b, act in self._layers():
            h = act(torch.baddbmm(b, h, w))
        return h

    def replica(self, r: int, value: torch.Tensor, kind: str) -> torch.Tensor:
        """Replica ``r``'s slice of ``value`` (a layer's stacked ``"weight"`` or ``"bias"``, or its
        Adam moment) in the layout of a single ``nn.Linear``'s parameter."""
        if self.single:
            return value
        return value[r].T if kind == "weight" else value[r, 0]

    @torch.no_grad()
    def write_back(self, r: int, target: Mlp) -> None:
        """Copy replica ``r``'s weights into ``target`` (an ``Mlp`` on any device)."""
        lins = [mod for mod in target.net if isinstance(mod, nn.Linear)]
        for lin, (w, b) in zip(lins, self.pairs()):
            lin.weight.copy_(self.replica(r, w, "weight"))
            lin.bias.copy_(self.replica(r, b, "bias"))


def _write_back_adam(stacked_opt: torch.optim.Optimizer, net: StackedMlp, r: int,
                     target_opt: torch.optim.Optimizer, target: Mlp) -> None:
    """Give ``target_opt`` replica r's Adam state (step, moments), as after a single fit."""
    lins = [mod for mod in target.net if isinstance(mod, nn.Linear)]
    for lin, (w, b) in zip(lins, net.pairs()):
        for p_single, p_stacked, kind in ((lin.weight, w, "weight"), (lin.bias, b, "bias")):
            st = stacked_opt.state.get(p_stacked)
            if not st:
                continue
            out = {}
            for key, val in st.items():
                if not torch.is_tensor(val) or val.dim() == 0:  # the step counter
                    out[key] = val.detach().clone().to(p_single.device) if torch.is_tensor(val) else val
                else:
                    v = net.replica(r, val, kind)
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
    """Gradients of the WGAN-GP critic loss (:meth:`WganStep.iteration`) for R stacked
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


def signature(model: WganModel) -> tuple:
    """Replicas with equal signatures are stacked together."""
    return (type(model).__name__, tuple(model.X_.shape), model.cond_ is not None, model.num_teachers_,
            model.batch_size_, model.z_dim_, model.max_iter_, model.sigma_, model.gp_weight_,
            model.blocks_ is None, float(model.config.learning_rate), shape_signature(model.G, model.D))


def supports(config) -> bool:
    """Every setting of original and turing is batched."""
    return True


def run(models: Sequence[WganModel], frames: Sequence[pd.DataFrame], label: str | None, *,
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
    prepared: dict[int, tuple[WganModel, dict]] = {}  # per table: its first replica's preparation
    for m, df in zip(models, frames):  # the set-up of a single fit, replica by replica
        first = prepared.get(id(df))
        if first is not None and first[0].prepares_like(m):
            m.begin_fit(df, label, first[1])
        else:
            prepared[id(df)] = (m, m.begin_fit(df, label))
        m.trace.extra["streams"] = streams
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(signature(m), []).append(i)
    for idx in groups.values():
        done = (lambda j, idx=idx: on_done(idx[j])) if on_done else None
        run_group([models[i] for i in idx], device=device, on_done=done, streams=streams)


class _CounterDraws:
    """One iteration's draws of a group in stream mode, all on ``device``: the same kinds and
    distributions as the per-replica draws of :meth:`WganStep.iteration` (see the module docstring)."""

    def __init__(self, models: list[WganModel], device: torch.device):
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


class WganStep:
    """One WGAN-GP iteration (``k`` critic steps, one generator step) of R replicas that share a
    :func:`signature`, and everything the group's training changes: stacked networks and their
    Adam, rows seen and label flips so far. A snapshot (:mod:`.checkpoint`) stores it whole."""

    def __init__(self, models: Sequence[WganModel], device: torch.device, streams: str = "torch"):
        self.models = list(models)
        self.device = device
        R, m0 = len(self.models), self.models[0]
        self.N = int(m0.X_.shape[0])
        self.k, self.B, self.zd, self.T = m0.num_teachers_, m0.batch_size_, m0.z_dim_, m0.max_iter_
        self.sigma, self.gp = m0.sigma_, m0.gp_weight_
        self.cond = m0.cond_ is not None
        self.all_rows = m0.blocks_ is None
        k, B, N, zd = self.k, self.B, self.N, self.zd
        self.G = StackedMlp([m.G for m in self.models]).to(device)
        self.D = StackedMlp([m.D for m in self.models]).to(device)
        lr = float(m0.config.learning_rate)
        self.opt_G = adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_D = adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))
        d_params = list(self.D.parameters())
        # the critic's gradients written out by hand (critic_grads) round differently from autograd's
        # double backward through nn.Linear: at R = 1 autograd, the single fit's kernels
        self.manual = (R > 1 and _is_relu_critic(self.D)
                       and [id(p) for p in d_params] == [id(p) for p in [*self.D.weight, *self.D.bias]])
        self.X = torch.stack([m.X_ for m in self.models]).to(device)  # [R, N, d]
        self.C = torch.stack([m.cond_ for m in self.models]).to(device) if self.cond else None  # [R, N]
        self.ar = torch.arange(R, device=device)[:, None]
        self.g_params = list(self.G.parameters())
        self.base = torch.cat([torch.ones(B), torch.zeros(B)])
        self.counter = _CounterDraws(self.models, device) if streams == "counter" else None
        if self.counter is None:  # per-iteration draw buffers (CPU), filled from each replica's own stream
            self.seen = np.zeros((R, k, N), dtype=bool)
            self.at_r, self.at_k = np.arange(R)[:, None, None], np.arange(k)[None, :, None]
            self.flips = torch.zeros(R, self.T, dtype=torch.int64)
            # zeros, not empty: a snapshot's digest of the starting state reads them
            self.perm = torch.zeros(R, k, N, dtype=torch.int64)
            self.rows = torch.zeros(R, k, B, dtype=torch.int64)
            self.z = torch.zeros(R, k, B, zd)
            self.noise = torch.zeros(R, k, 2 * B)
            self.e = torch.zeros(R, k, B, 1)
            self.g_perm = torch.zeros(R, N, dtype=torch.int64)
            self.g_z = torch.zeros(R, B, zd)
        else:  # draws, flips and rows seen stay on the device
            self.base = self.base.to(device)
            self.seen = torch.zeros(R, k, N, dtype=torch.bool, device=device)
            self.flips = torch.zeros(R, self.T, dtype=torch.int64, device=device)

    def _torch_draws(self):
        """The iteration's draws from each replica's ``train_gen``, in the order a single fit of
        the upstream loop consumes them (per critic slot t: rows, z, indicator noise,
        interpolation e; then the generator step's label rows when conditional, and its z)."""
        k, B, N = self.k, self.B, self.N
        for r, m in enumerate(self.models):
            g = m.train_gen
            for t in range(k):
                if self.all_rows:  # B distinct rows of all N (V3/V6): randperm(N)[:B]
                    torch.randperm(N, generator=g, out=self.perm[r, t])
                else:  # B distinct rows of block t
                    block = m.blocks_[t]
                    self.rows[r, t] = block[torch.randperm(len(block), generator=g)[:B]]
                torch.rand(B, self.zd, generator=g, out=self.z[r, t])  # U(0, 1), mapped to U(-1, 1) below
                torch.randn(2 * B, generator=g, out=self.noise[r, t])
                torch.rand(B, 1, generator=g, out=self.e[r, t])
            if self.cond:
                torch.randperm(N, generator=g, out=self.g_perm[r])
            torch.rand(B, self.zd, generator=g, out=self.g_z[r])
        if self.all_rows:
            self.rows.copy_(self.perm[:, :, :B])
        M = ((self.base + self.noise * self.sigma) > 0.5).to(torch.float32)  # [R, k, 2B]: 1[M + N(0, s^2) > 0.5]
        dev = self.device
        return (self.rows.to(dev), (self.z * 2.0 - 1.0).to(dev), M.to(dev), self.e.to(dev),
                self.g_perm[:, :B].to(dev) if self.cond else None, (self.g_z * 2.0 - 1.0).to(dev), M)

    def iteration(self, it: int) -> None:
        """Iteration ``it`` of every replica: its draws, then the k critic steps and the
        generator step over all replicas at once."""
        B, G, D, ar, C = self.B, self.G, self.D, self.ar, self.C
        if self.counter is None:
            rows_d, z_d, M_d, e_d, g_rows_d, g_z_d, M = self._torch_draws()
            self.flips[:, it] = (M != self.base).sum(dim=(1, 2))
            self.seen[self.at_r, self.at_k, self.rows.numpy()] = True
        else:  # one call for every replica and draw kind
            rows_d, z_d, noise_d, e_d, g_rows_d, g_z_d = self.counter(it)
            M_d = ((self.base + noise_d * self.sigma) > 0.5).to(torch.float32)
            self.flips[:, it] = (M_d != self.base).sum(dim=(1, 2))
            R = len(self.models)
            self.seen[torch.arange(R, device=self.device)[:, None, None],
                      torch.arange(self.k, device=self.device)[None, :, None], rows_d] = True

        for t in range(self.k):  # the critic steps
            rt = rows_d[:, t]
            real = self.X[ar, rt]  # [R, B, d]
            y = C[ar, rt] if self.cond else None
            with torch.no_grad():
                fake = G(_with_cond(z_d[:, t], y))
            et, Mt = e_d[:, t], M_d[:, t]
            if self.manual:
                x_hat = et * real + (1.0 - et) * fake
                x2 = _with_cond(torch.cat([real, fake], dim=1), None if y is None else torch.cat([y, y], dim=1))
                for p, gr in zip(D.parameters(), critic_grads(D, x2, x_hat, y, Mt, self.gp)):
                    p.grad = gr
                self.opt_D.step()
                continue
            x_hat = (et * real + (1.0 - et) * fake).requires_grad_(True)
            yy = None if y is None else torch.cat([y, y, y], dim=1)
            out = D(_with_cond(torch.cat([real, fake, x_hat], dim=1), yy))[..., 0]  # [R, 3B]: one pass, the critic is row-wise
            d_all, d_hat = out[:, : 2 * B], out[:, 2 * B:]
            (grad,) = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
            norm = torch.sqrt((grad * grad + GP_EPS).sum(dim=-1))
            loss = (((1.0 - Mt) * d_all).mean(dim=1) - (Mt * d_all).mean(dim=1)
                    + self.gp * ((norm - 1.0) ** 2).mean(dim=1)).sum()
            self.opt_D.zero_grad(set_to_none=True)
            loss.backward()
            self.opt_D.step()

        # the generator step on -mean(D(G(z))); only G's gradients
        y = C[ar, g_rows_d] if self.cond else None
        fake = G(_with_cond(g_z_d, y))
        loss_g = -D(_with_cond(fake, y))[..., 0].mean(dim=1).sum()
        for p, gr in zip(self.g_params, torch.autograd.grad(loss_g, self.g_params)):
            p.grad = gr
        self.opt_G.step()

    def write_back(self, r: int) -> None:
        """Copy replica ``r``'s networks and their Adam state into its own model."""
        m = self.models[r]
        self.G.write_back(r, m.G)
        self.D.write_back(r, m.D)
        _write_back_adam(self.opt_G, self.G, r, m.opt_G, m.G)
        _write_back_adam(self.opt_D, self.D, r, m.opt_D, m.D)

    @torch.no_grad()
    def to_host(self) -> None:
        """Move what :meth:`write_back` and :meth:`records` read (networks, Adam state, rows seen,
        flips) to the CPU in one transfer per tensor, instead of one per replica and tensor; the
        group does not train after this (the end of :func:`run_group`)."""
        if self.device.type == "cpu":
            return
        self.G.to("cpu")
        self.D.to("cpu")
        for opt in (self.opt_G, self.opt_D):
            for st in opt.state.values():
                for key, val in st.items():
                    if torch.is_tensor(val):
                        st[key] = val.cpu()
        if self.counter is not None:
            self.seen, self.flips = self.seen.cpu(), self.flips.cpu()
        self.device = torch.device("cpu")

    def records(self, r: int) -> tuple[np.ndarray, torch.Tensor]:
        """Replica ``r``'s rows seen ``[k, N]`` (bool) and indicator-label flips per iteration ``[T]``."""
        if self.counter is None:
            return self.seen[r], self.flips[r]
        return self.seen[r].cpu().numpy(), self.flips[r].cpu()


def run_group(models: Sequence[WganModel], *, device: torch.device | str = "cpu",
              on_done: Callable[[int], None] | None = None, streams: str = "torch") -> None:
    """Train ``models`` (set up by ``begin_fit``, equal :func:`signature`) for their ``max_iter_``
    iterations as one :class:`WganStep`; a single fit is this at R = 1. Each replica's
    ``end_iteration`` runs after every iteration (its callbacks see its networks current) and
    ``end_fit`` at the end or on an exception; ``on_done(r)`` when replica r is fitted.

    Inside :func:`.checkpoint.checkpointing` the group writes snapshots between iterations and
    goes on from one it finds (a stopped fit resumes to the same numbers)."""
    models = list(models)
    device = torch.device(device)
    ckpt = checkpoint.current()
    slot = ckpt.open_group() if ckpt is not None else None
    step = WganStep(models, device, streams)
    it = 0
    if slot is not None:
        slot.begin(models, step)
        saved = slot.load(models)
        if saved is not None:  # the replicas' own state was restored in place
            step, it = saved["step"], int(saved["it"])
    T = step.T
    finished = False
    try:
        while it < T:
            step.iteration(it)
            for r, m in enumerate(models):
                if m.callbacks:  # a callback reads the model: give it the replica's current state
                    step.write_back(r)
                m.end_iteration(it)
            it += 1
            if slot is not None and it < T and slot.due():
                slot.save(models, step=step, it=it)
        if slot is not None:  # the finished group: a later call under this directory loads it
            slot.save(models, step=step, it=it)
        finished = True
    finally:
        step.to_host()
        for r, m in enumerate(models):
            step.write_back(r)
            m.end_fit(*step.records(r))
    if finished:
        for r, m in enumerate(models):
            m.fitted_ = True
            if on_done:
                on_done(r)
