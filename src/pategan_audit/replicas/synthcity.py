"""Replica step of the ``synthcity`` preset (the inner ``PATEGAN`` class of synthcity, audit paper
``ganev2025elusive`` §4; implementation notes §synthcity.loop): the preset's only iteration.
``fit`` runs it at R = 1 (:func:`~pategan_audit.replicas.loop.fit_one`), ``fit_many`` at any R.

One replica on the CPU trains the model's own networks, optimisers and teachers (the teacher
phase by the model's strategy, the votes by its teachers) and runs its networks with one model's
kernels (:meth:`SynthcityStep._generate_one`, :meth:`SynthcityStep._critic_one`), so a fit is the
straightforward single-fit loop bit for bit (kept as the test oracle
``tests/replicas/oracle_synthcity.py``) and the model is current after every iteration. Otherwise:

R replicas become one generator and one WGAN-GP critic (the student) of R networks each, with
their parameters stacked along a leading replica axis ([R, in, out] weights, [R, 1, out] biases,
as :class:`~pategan_audit.components.networks.BatchedLinear` holds them), and one logistic teacher
ensemble of ``R·k`` problems:

* teachers (B2): every iteration the ``R·k`` logistic regressions are re-fitted in **one** call
  of the exact batched solver (:meth:`~pategan_audit.components.teachers.LogisticTeachers.refit`),
  warm-started from the previous iteration's ``R·k`` fits as each single fit warm-starts from its
  own k. The problems are independent inside the solver (per-problem Newton steps, line
  searches and stopping); above 64 features its float32/float64 switch and preconditioner
  refresh are shared by the batch, which changes the path to the unique optimum, not the
  optimum (to the solver's 1e-10 gradient tolerance), so the hard votes are the single fit's.
  With ``teacher_model="neural_persistent"`` (B2 fixed) the teachers are one
  :class:`~pategan_audit.components.teachers.NeuralTeachers` of ``R·k`` networks
  (:func:`~pategan_audit.replicas.neural.stack_teachers`);
* votes: replica r's k teachers score its own generated rows (one batched float64 product), and
  each replica releases its labels with its own noise stream, O4 skip rule and accountant
  (:func:`~pategan_audit.replicas.loop.release_votes`);
* student and generator steps: the losses are sums of the replicas' losses, so every slice gets
  exactly its own gradient; gradient-norm clipping (``clip_grad_norm_`` of one network) is done
  per replica (the norm over that replica's slices of all parameters, each slice scaled by its
  own factor); Adam with weight decay is element-wise, so one optimiser over the stacked
  parameters equals R separate ones.

Randomness: every draw comes from the replica's own streams in the single fit's order:
``partition_rng`` (NumPy) for the teacher partitions and rows; ``train_gen`` for latent codes,
conditional vectors, real-batch permutations, Gumbel noise of the output head (one draw per
one-hot width group, as :class:`~pategan_audit.components.generators.BlockHead`), dropout masks of
the critic (one per forward pass), the gradient penalty's interpolation weights and pairs
(``student_reads_real=False``; their ranges depend on the replica's labels) and the neural
teachers' batches; ``noise_gen`` for the vote noise. Draws are made on the CPU and moved to ``device``.

A replica that stops (budget spent or cap reached) is written back at once (networks, optimiser
state, teacher fits) and dropped from the stacks, so it draws nothing more from its streams.

Every setting of the preset is batched (``supports`` is always True). Deviation from a single
fit: float rounding only (a batched matrix product over R > 1 replicas may sum in another order
than a single fit's).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ..components.generators import ResidualConcatGenerator
from ..components.logistic import LogisticFit
from ..components.networks import adam
from ..components.partition import permutation_blocks
from ..components.teachers import LogisticTeachers
from ..implementations.engine import PateGenerator
from .loop import ReplicaStep, record_seen, release_votes, run_pate_replicas
from .neural import replica_votes, stack_teachers
from .stack import copy_optimizer_state, keep_replicas, keep_rows, state_slice, solver_replicas, shape_signature, unstack_into

__all__ = ["SynthcityStep", "StackedNet", "clip_per_replica", "supports", "run"]


class StackedNet:
    """The parameters of R one-model networks (every parameter has a leading model axis of 1)
    stacked into ``[R, ...]`` leaf tensors, in ``named_parameters`` order, with a fresh Adam of
    the single fit's settings; or, with ``own`` (one network: :meth:`SynthcityStep.trains_own_networks`),
    the network's own parameters, already one-model stacks, and its own optimiser ``opt``,
    trained in place."""

    def __init__(self, nets: Sequence[nn.Module], opt: torch.optim.Optimizer, device: torch.device, *, own: bool = False):
        self.names = [n for n, _ in nets[0].named_parameters()]
        if own:
            if len(nets) != 1:
                raise ValueError(f"a step trains its own network only for one replica, got {len(nets)}")
            self.params = [p for _, p in nets[0].named_parameters()]
            self.opt = opt
            return
        self.params = []
        for name in self.names:
            parts = [dict(net.named_parameters())[name].detach() for net in nets]
            if any(p.shape[0] != 1 for p in parts):
                raise ValueError(f"parameter {name} has no one-model leading axis")
            self.params.append(nn.Parameter(torch.cat(parts).to(device).contiguous()))
        g = opt.param_groups[0]
        self.opt = adam(self.params, lr=g["lr"], betas=g["betas"], weight_decay=g["weight_decay"])

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.params[self.names.index(name)]

    def keep(self, positions: torch.Tensor) -> None:
        """Keep only the replicas at ``positions`` (parameters and optimiser state)."""
        keep_rows(self.params, self.opt, positions)

    @torch.no_grad()
    def write_back(self, pos: int, net: nn.Module, opt: torch.optim.Optimizer) -> None:
        """Copy replica ``pos``'s slices into ``net`` and its Adam state into ``opt``."""
        own = dict(net.named_parameters())
        for name, q in zip(self.names, self.params):
            p = own[name]
            p.copy_(q[pos:pos + 1].to(p.device))
            if q in self.opt.state:
                opt.state[p] = state_slice(self.opt, q, slice(pos, pos + 1), p.device)

    def step(self, grads: Sequence[torch.Tensor], max_norm: float) -> None:
        """Per-replica gradient-norm clipping (if ``max_norm > 0``), then one Adam step."""
        if max_norm > 0:
            clip_per_replica(grads, max_norm)
        for p, g in zip(self.params, grads):
            p.grad = g
        self.opt.step()
        for p in self.params:
            p.grad = None


@torch.no_grad()
def clip_per_replica(grads: Sequence[torch.Tensor], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` applied to each replica's network separately: the
    total norm of replica r is the 2-norm of the norms of its slices of every parameter, and its
    slices are scaled by ``min(1, max_norm / (norm + 1e-6))`` (in place)."""
    norms = torch.stack([g.flatten(1).norm(2, dim=1) for g in grads])  # [P, R]
    total = torch.linalg.vector_norm(norms, 2, dim=0)  # [R]
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.reshape(-1, *([1] * (g.dim() - 1))))


def _gumbel_softmax(logits: torch.Tensor, u: torch.Tensor, tau: float) -> torch.Tensor:
    """:func:`~pategan_audit.components.generators.gumbel_softmax` with the uniforms ``u`` given."""
    exp_draw = -torch.log(u.clamp_min(1e-20))
    gumbel = -torch.log(exp_draw.clamp_min(1e-20))
    return torch.softmax((logits + gumbel) / tau, dim=-1)


class SynthcityStep(ReplicaStep):
    """One iteration of R ``synthcity`` replicas (see the module docstring)."""

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        super().__init__(models, device)
        m0 = models[0]
        cfg = self.cfg = m0.config
        self.k, self.B, self.D = m0.num_teachers_, m0.batch_size_, m0.model_width_
        self.C = m0.cond_sampler.width
        self.H = int(cfg.n_units_hidden)
        self.schedule = m0.student_schedule_  # (epochs, critic steps per real batch)
        self.reads_real = bool(cfg.student_reads_real)
        self.logistic = cfg.teacher_model == "logistic_refit"
        self.live = list(range(len(models)))  # stack position -> index into self.models
        self.own = self.trains_own_networks(len(models), device)
        # generator: synthcity's residual network, or an MLP ("paper"), then the output head
        self.residual = isinstance(m0.gen_net, ResidualConcatGenerator)
        self.gen_net, self.student_net = (m0.gen_net, m0.student) if self.own else (None, None)
        self.gen = StackedNet([m.gen_net for m in models], m0.opt_generator, device, own=self.own)
        if self.residual:
            self.gen_act = m0.gen_net.act
            self.gen_layers = [("layer1.weight", "layer1.bias"), ("layer2.weight", "layer2.bias"), ("out.weight", "out.bias")]
        else:
            mlp = m0.gen_net.mlp
            if mlp.dropout_p > 0:  # pragma: no cover - the "paper" generator has no dropout
                raise ValueError("a generator with dropout is not batched")
            self.gen_act, self.gen_out_act = mlp.hidden_activation, mlp.output_activation
            self.gen_layers = [(f"mlp.layers.{i}.weight", f"mlp.layers.{i}.bias") for i in range(len(mlp.layers))]
        self.tau = m0.head.tau
        self.groups = [idx.to(device) for idx in m0.head._groups]  # [n_blocks, width] per one-hot width
        self.group_shapes = [tuple(idx.shape) for idx in m0.head._groups]
        # student (critic): BatchedMLP(1, [D + C, h, h, 1]) with dropout after the first hidden layer
        st = m0.student
        self.student = StackedNet([m.student for m in models], m0.opt_student, device, own=self.own)
        self.st_layers = [(f"layers.{i}.weight", f"layers.{i}.bias") for i in range(len(st.layers))]
        self.st_act, self.st_out_act = st.hidden_activation, st.output_activation
        self.st_p = float(st.dropout_p)
        last = len(st.layers) - 1
        # dropout after hidden layer i for i < last - 1 (BatchedMLP.forward); its width
        self.st_dropout = [st.layers[i].out_features for i in range(last) if self.st_p > 0 and i < last - 1]
        # teachers stay on the CPU: the logistic solver and NeuralTeachers' passes are NumPy BLAS
        if self.own:  # the model's own teachers, trained by its teacher-phase strategy
            self.teachers = m0.teachers
        elif self.logistic:
            t0 = m0.teachers
            n_fit = min(self.B, m0.X_.shape[0] // self.k) if cfg.harness else m0.X_.shape[0] // self.k
            self.teachers = LogisticTeachers(len(models) * self.k, C=t0.C, warm_start=t0.warm_start,
                                             group=self.k * solver_replicas(k=self.k, rows=2 * n_fit, width=self.D))
        else:
            self.teachers = stack_teachers([m.teachers for m in models])
        # data, padded to the largest table: encoded rows, fixed conditional vectors, and the
        # column of each discrete block's category in every row (the conditional loss' targets)
        n_max = max(m.X_.shape[0] for m in models)
        R = len(models)
        self.X = torch.zeros(R, n_max, self.D)
        self.cond = torch.zeros(R, n_max, self.C)
        self.blocks = list(m0.cond_sampler.blocks)
        targets = np.zeros((R, n_max, len(self.blocks)), dtype=np.int64)
        for r, m in enumerate(models):
            n = m.X_.shape[0]
            self.X[r, :n] = m.X_
            self.cond[r, :n] = m.dataset_cond_
            x = m.X_.numpy()
            for j, (s, w) in enumerate(self.blocks):
                targets[r, :n, j] = s + np.argmax(x[:, s:s + w], axis=1)
        self.cond_np = self.cond.numpy().copy()
        self.X, self.cond = self.X.to(device), self.cond.to(device)
        self.targets = torch.from_numpy(targets).to(device)

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        """Whether the step trains the model's own networks, optimisers and teachers (one replica
        on the CPU: the model current after every iteration, no copies); else it trains stacked
        copies and writes them back (:meth:`write_back`)."""
        return replicas == 1 and device.type == "cpu"

    @staticmethod
    def signature(model: PateGenerator) -> tuple:
        cfg, N, k = model.config, model.X_.shape[0], model.num_teachers_
        pool = len(model.student_pool_)
        # rows per real batch (harness and "paper": one batch of min(B, pool) rows; released: every
        # batch of the pool, so the pool size); rows per teacher fit; teacher blocks (neural teachers)
        batches = min(model.batch_size_, pool) if (cfg.harness or model.paper_hyperparameters()) else pool
        if cfg.teacher_model == "logistic_refit":
            teacher = (min(model.batch_size_, N // k) if cfg.harness else N // k,)
            nets = (model.gen_net, model.student)
        else:
            teacher = tuple(len(b) for b in model.fixed_blocks_)
            nets = (model.gen_net, model.student, model.teachers.net)
        return (type(model).__name__, model.model_width_, k, model.batch_size_, batches, teacher, model.cond_sampler.width,
                tuple(model.head.blocks), tuple(model.cond_sampler.blocks), shape_signature(*nets))

    # -- helpers ------------------------------------------------------------------------------
    @property
    def _models(self) -> list[PateGenerator]:
        return [self.models[i] for i in self.live]

    def _compact(self, active: np.ndarray) -> None:
        """Drop the stopped replicas (already written back) from every stack."""
        keep = [pos for pos, i in enumerate(self.live) if active[i]]
        if len(keep) == len(self.live) or self.own:
            return
        pos = torch.as_tensor(keep, dtype=torch.int64)
        self.gen.keep(pos)
        self.student.keep(pos)
        if self.logistic:
            rows = torch.cat([torch.arange(p * self.k, (p + 1) * self.k) for p in keep])
            f = self.teachers.fit
            if f is not None:
                self.teachers.fit = LogisticFit(coef=f.coef[rows], intercept=f.intercept[rows], n_iter=f.n_iter[rows],
                                                converged=f.converged[rows], n_cg=f.n_cg)
        else:
            keep_replicas(self.teachers.net, self.teachers.optimizer, self.k, keep)
        self.teachers.num_teachers = len(keep) * self.k
        self.X = self.X[pos.to(self.device)]
        self.cond = self.cond[pos.to(self.device)]
        self.cond_np = self.cond_np[keep]
        self.targets = self.targets[pos.to(self.device)]
        self.live = [self.live[p] for p in keep]

    def _stack(self, models: Sequence[PateGenerator], draw: Callable[[PateGenerator], tuple]) -> list[torch.Tensor]:
        """``draw(m)`` (a tuple of tensors, drawn from m's own streams in single-fit order) for
        every replica, stacked per component and moved to the device."""
        outs = [draw(m) for m in models]
        return [torch.stack(parts).to(self.device) for parts in zip(*outs)]

    def _gumbel_draws(self, n: int, gen: torch.Generator) -> list[torch.Tensor]:
        """The head's uniforms for n rows: one ``[n, blocks, width]`` draw per width group."""
        return [torch.rand((n, *shape), generator=gen, dtype=torch.float32) for shape in self.group_shapes]

    def _dropout_draws(self, n: int, gen: torch.Generator) -> list[torch.Tensor]:
        """The critic's keep-masks of one forward pass over n rows (``dropout``: ``rand >= p``)."""
        return [torch.rand((1, n, w), generator=gen, dtype=torch.float32)[0] >= self.st_p for w in self.st_dropout]

    # -- networks -----------------------------------------------------------------------------
    def _generate(self, x: torch.Tensor, uniforms: Sequence[torch.Tensor]) -> torch.Tensor:
        """The stacked generator on ``x`` [R, n, latent] with the head's uniforms per group."""
        if self.own:
            return self._generate_one(x[0], [u[0] for u in uniforms])[None]
        g = self.gen
        if self.residual:
            (w1, b1), (w2, b2), (w3, b3) = [(g[a], g[b]) for a, b in self.gen_layers]
            h1 = torch.cat([self.gen_act(torch.matmul(x, w1) + b1), x], dim=-1)
            h2 = torch.cat([self.gen_act(torch.matmul(h1, w2) + b2), h1], dim=-1)
            out = torch.matmul(h2, w3) + b3
        else:
            h = x
            last = len(self.gen_layers) - 1
            for i, (a, b) in enumerate(self.gen_layers):
                h = torch.matmul(h, g[a]) + g[b]
                h = self.gen_act(h) if i < last else self.gen_out_act(h)
            out = h
        if not self.groups:
            return out
        res = out.clone()
        for idx, u in zip(self.groups, uniforms):
            res[:, :, idx] = _gumbel_softmax(out[:, :, idx], u, self.tau)
        return res

    def _generate_one(self, x: torch.Tensor, uniforms: Sequence[torch.Tensor]) -> torch.Tensor:
        """The model's own generator on ``x`` [n, latent] (one replica), with its layers' kernels: a
        layer reading ``[n, in]`` rows is a broadcast product plus bias, one reading ``[1, n, in]``
        a fused ``baddbmm`` (other kernels than the stack's, other rounding); the head with the
        uniforms given, on the ``[n, blocks, width]`` layout of :class:`~pategan_audit.components.generators.BlockHead`."""
        net = self.gen_net
        if self.residual:
            h1 = torch.cat([net.act(net.layer1(x)[0]), x], dim=-1)
            h2 = torch.cat([net.act(net.layer2(h1)[0]), h1], dim=-1)
            out = net.out(h2)[0]
        else:  # "paper": an MLP without dropout, then the head
            out = net.mlp.single(x)
        if not self.groups:
            return out
        res = out.clone()
        for idx, u in zip(self.groups, uniforms):
            res[:, idx] = _gumbel_softmax(out[:, idx], u, self.tau)
        return res

    def _critic_one(self, x: torch.Tensor, keeps: Sequence[torch.Tensor]) -> torch.Tensor:
        """The model's own student on ``x`` [n, D + C] (one replica), with its layers' kernels
        (:meth:`_generate_one`) and the dropout keep-masks given ``[1, n, width]`` -> [n]."""
        s = self.student_net
        h, j = x, 0
        last = len(s.layers) - 1
        for i, layer in enumerate(s.layers):
            h = layer(h)
            if i < last:
                h = s.hidden_activation(h)
                if self.st_p > 0 and i < last - 1:
                    h = h * keeps[j] / (1.0 - self.st_p)
                    j += 1
        return s.output_activation(h)[0][:, 0]

    def _critic(self, x: torch.Tensor, keeps: Sequence[torch.Tensor]) -> torch.Tensor:
        """The stacked student on ``x`` [R, n, D + C] with the given dropout keep-masks -> [R, n]."""
        if self.own:
            return self._critic_one(x[0], keeps)[None]
        s = self.student
        h, j = x, 0
        last = len(self.st_layers) - 1
        for i, (a, b) in enumerate(self.st_layers):
            h = torch.matmul(h, s[a]) + s[b]
            if i < last:
                h = self.st_act(h)
                if self.st_p > 0 and i < last - 1:
                    h = h * keeps[j] / (1.0 - self.st_p)
                    j += 1
        return self.st_out_act(h)[..., 0]

    def _votes(self, fake: torch.Tensor) -> torch.Tensor:
        """``n1`` [R, n]: replica r's k teachers vote on its rows ``fake[r]`` (CPU)."""
        R, n, D = fake.shape
        fake = fake.detach().cpu()
        if self.own:  # the model's own teachers count their votes
            with torch.no_grad():
                return self.teachers.votes(fake[0])[None]
        if not self.logistic:
            return replica_votes(self.teachers, fake, self.k)
        f = self.teachers.fit  # float64 as LogisticFit.decision_function: coef @ x.T + b
        with torch.no_grad():
            logits = torch.matmul(f.coef.reshape(R, self.k, D), fake.to(torch.float64).mT) + f.intercept.reshape(R, self.k, 1)
        return (logits > 0).to(torch.int64).sum(dim=1)

    def _latent_fakes(self, models: Sequence[PateGenerator], n: int) -> torch.Tensor:
        """Generated rows from ``training_latent(n)`` of every replica without gradients -> [R, n, D] (CPU)."""
        latent, *uniforms = self._stack(models, lambda m: (m.training_latent(n), *self._gumbel_draws(n, m.train_gen)))
        with torch.no_grad():
            return self._generate(latent, uniforms).cpu()

    # -- one iteration ------------------------------------------------------------------------
    def _teacher_phase(self, models: list[PateGenerator], it: int, on: np.ndarray) -> None:
        cfg, k, R = self.cfg, self.k, len(models)
        if self.own:  # the model's own teachers, by its strategy
            models[0].train_teachers(it)
            return
        X = self.X.cpu()
        if not self.logistic:  # B2 fixed: persistent neural teachers on their fixed blocks
            B = self.B
            for _ in range(models[0].teacher_phase_.rounds):  # the single fit's strategy
                rows = torch.stack([m.sampler.sample(B, generator=m.train_gen) for m in models])  # [R, k, B]
                record_seen(models, rows, on)
                fake = self._latent_fakes(models, k * B)
                real = X[torch.arange(R)[:, None, None], rows]
                self.teachers.train_step(real.reshape(R * k, B, -1), fake.reshape(R * k, B, -1))
            for m in models:
                m.keep_first_subsets(m.fixed_blocks_)
            return
        rows = []
        for m in models:
            N = m.X_.shape[0]
            blocks = permutation_blocks(N, k, rng=m.partition_rng) if cfg.partition == "resample_each_iteration" else m.fixed_blocks_
            n_fit = min(m.batch_size_, len(blocks[0])) if cfg.harness else len(blocks[0])
            rows.append(torch.as_tensor(np.stack([m.partition_rng.permutation(b)[:n_fit] for b in blocks])))
        rows_t = torch.stack(rows)  # [R, k, n_fit]
        n_fit = rows_t.shape[2]
        fake = self._latent_fakes(models, k * n_fit)
        real = X[torch.arange(R)[:, None, None], rows_t]  # [R, k, n_fit, D]
        self.teachers.refit(real.reshape(R * k, n_fit, -1), fake.reshape(R * k, n_fit, -1))  # B2, warm start per replica
        record_seen(models, rows_t, on)
        for m, r in zip(models, rows):
            m.keep_first_subsets([x.numpy() for x in r])

    def _fresh_cond_draw(self, b: int) -> Callable[[PateGenerator], tuple]:
        """A replica's draws when the student does not read real rows (``student_reads_real``
        off), in the single fit's order: fresh conditional vectors, z, Gumbel noise, one dropout mask."""
        H = self.H

        def draw(m: PateGenerator) -> tuple:
            g = m.train_gen
            cond = m.cond_sampler.sample(b, generator=g)
            return (cond, torch.randn(b, H, generator=g), *self._gumbel_draws(b, g), *self._dropout_draws(b, g))

        return draw

    def _critic_step(self, models: list[PateGenerator], rows: torch.Tensor, on: np.ndarray) -> None:
        """One student (WGAN-GP critic, upstream ``plugins/core/models/gan.py``) step of every replica
        on its real batch ``rows`` [R, b] (positions into its table): the fakes are labelled by the
        noisy teacher vote (votes, noise, the O4 skip rule, accountant: :func:`~.loop.release_votes`).
        With ``student_reads_real`` (O1) the real rows are "real" examples and the gradient penalty
        interpolates real and fake rows; otherwise only the labelled fakes enter (positives = label
        1). Loss ``−mean(D(real ∪ fakes labelled 1)) + mean(D(fakes labelled 0)) + w·GP``, the
        gradient norm clipped per replica, one Adam step."""
        cfg, H, dev = self.cfg, self.H, self.device
        R, b = rows.shape
        ar = torch.arange(R, device=dev)[:, None]
        rows_d = rows.to(dev)
        nd, ng = len(self.st_dropout), len(self.groups)
        zero = torch.zeros((), device=dev)
        if self.reads_real:
            def draw(m: PateGenerator):
                g = m.train_gen  # single-fit order: z, head, dropout(fake), dropout(real), e, dropout(penalty)
                z = torch.randn(b, H, generator=g)
                u = self._gumbel_draws(b, g)
                d1, d2 = self._dropout_draws(b, g), self._dropout_draws(b, g)
                e = torch.rand(b, 1, generator=g)
                return (z, *u, *d1, *d2, e, *self._dropout_draws(b, g))

            z, *rest = self._stack(models, draw)
            u, keep1, keep2 = rest[:ng], rest[ng:ng + nd], rest[ng + nd:ng + 2 * nd]
            e, keep3 = rest[ng + 2 * nd], rest[ng + 2 * nd + 1:]
            cond = self.cond[ar, rows_d]  # [R, b, C]
        else:
            cond, z, *rest = self._stack(models, self._fresh_cond_draw(b))  # cond, z, head, dropout(fake)
            u, keep1 = rest[:ng], rest[ng:]
        with torch.no_grad():
            fake_raw = self._generate(torch.cat([z, cond], dim=-1), u)
        labels = release_votes(models, self._votes(fake_raw), on).to(dev).bool()  # [R, b]
        fake = torch.cat([fake_raw, cond], dim=-1)
        d_fake = self._critic(fake, keep1)  # [R, b]
        n_pos = labels.sum(dim=1)
        n_neg = b - n_pos
        pos_sum = torch.where(labels, d_fake, zero).sum(dim=1)
        # mean of D over the fakes labelled 0, or 0 when there are none
        err_fake = torch.where(n_neg > 0, torch.where(labels, zero, d_fake).sum(dim=1) / n_neg.clamp_min(1), zero)
        if self.reads_real:  # O1: real rows are "real" examples; the penalty interpolates real and fake
            for m, r in zip(models, rows.numpy()):
                m.trace.extra["student_rows"].update(int(x) for x in r)
            real = torch.cat([self.X[ar, rows_d], cond], dim=-1)
            d_real = self._critic(real, keep2)
            err_real = (d_real.sum(dim=1) + pos_sum) / (b + n_pos)  # mean over real rows and fakes labelled 1
            a, c, gp = real, fake, None
        else:  # only the PATE-labelled fakes; the penalty pairs random positives and negatives
            err_real = torch.where(n_pos > 0, pos_sum / n_pos.clamp_min(1), zero)
            a, c, e, keep3, gp = self._penalty_pairs(models, fake, labels)
        x = (e * a + (1.0 - e) * c).detach().requires_grad_(True)
        d = self._critic(x, keep3)
        (grad,) = torch.autograd.grad(d.sum(), x, create_graph=True)
        penalty = cfg.gp_weight * ((grad.norm(2, dim=-1) - 1.0) ** 2).mean(dim=1)
        if gp is not None:
            penalty = torch.where(gp, penalty, zero)
        loss = (-err_real + err_fake + penalty).sum()
        grads = torch.autograd.grad(loss, self.student.params)
        self.student.step(list(grads), float(cfg.clipping_value))

    def _penalty_pairs(self, models: list[PateGenerator], fake: torch.Tensor, labels: torch.Tensor):
        """``student_reads_real=False``: each replica with both positive and negative fakes draws
        b random positives and b random negatives (``randint`` from its ``train_gen``), then the
        penalty's weights and dropout masks; the others draw nothing and get no penalty."""
        R, b, W = fake.shape
        lab = labels.cpu().numpy()
        pos_idx = np.zeros((R, b), dtype=np.int64)
        neg_idx = np.zeros((R, b), dtype=np.int64)
        e = torch.zeros(R, b, 1)
        keeps = [torch.zeros(R, b, w, dtype=torch.bool) for w in self.st_dropout]
        gp = np.zeros(R, dtype=bool)
        for r, m in enumerate(models):
            pos, neg = np.flatnonzero(lab[r]), np.flatnonzero(~lab[r])
            if len(pos) == 0 or len(neg) == 0:
                continue
            g = m.train_gen  # single-fit order: i, j, e, dropout(penalty)
            i = torch.randint(len(pos), (b,), generator=g).numpy()
            j = torch.randint(len(neg), (b,), generator=g).numpy()
            pos_idx[r], neg_idx[r], gp[r] = pos[i], neg[j], True
            e[r] = torch.rand(b, 1, generator=g)
            for keep, mask in zip(keeps, self._dropout_draws(b, g)):
                keep[r] = mask
        dev = self.device
        ar = torch.arange(R, device=dev)[:, None]
        a = fake[ar, torch.from_numpy(pos_idx).to(dev)]
        c = fake[ar, torch.from_numpy(neg_idx).to(dev)]
        return a, c, e.to(dev), [k.to(dev) for k in keeps], torch.from_numpy(gp).to(dev)

    def _generator_step(self, models: list[PateGenerator], rows: torch.Tensor) -> None:
        """One generator step of every replica: ``−mean(D(G(z) ⊕ cond))`` plus the conditional loss,
        the gradient norm clipped per replica, one Adam step."""
        cfg, H = self.cfg, self.H
        R, b = rows.shape
        ng = len(self.groups)
        if self.reads_real:
            def draw(m: PateGenerator):
                g = m.train_gen  # single-fit order: z, head, dropout(critic)
                return (torch.randn(b, H, generator=g), *self._gumbel_draws(b, g), *self._dropout_draws(b, g))

            z, *rest = self._stack(models, draw)
            cond = self.cond[torch.arange(R, device=self.device)[:, None], rows.to(self.device)]
            cond_np = self.cond_np[np.arange(R)[:, None], rows.numpy()]
        else:
            cond, z, *rest = self._stack(models, self._fresh_cond_draw(b))  # cond, z, head, dropout(critic)
            cond_np = cond.cpu().numpy()
        u, keeps = rest[:ng], rest[ng:]
        fake_raw = self._generate(torch.cat([z, cond], dim=-1), u)
        for p in self.student.params:  # the generator step needs no critic gradient
            p.requires_grad_(False)
        try:
            loss = -self._critic(torch.cat([fake_raw, cond], dim=-1), keeps).mean(dim=1)  # [R]
        finally:
            for p in self.student.params:
                p.requires_grad_(True)
        loss = loss + self._conditional_loss(fake_raw, cond_np, rows)
        grads = torch.autograd.grad(loss.sum(), self.gen.params)
        self.gen.step(list(grads), float(cfg.clipping_value))

    def _conditional_loss(self, fake_raw: torch.Tensor, cond: np.ndarray, rows: torch.Tensor) -> torch.Tensor:
        """Upstream's ``TabularGAN._generator_cond_loss`` per replica -> [R], divided by the batch
        size: for each discrete block, the NLL of the generated block at the target category
        (the real row's, O1; or the conditional vector's when the student must not read real
        data) over the rows whose conditional vector is active in ``[cond_idx, cond_idx + width)``;
        ``cond_idx`` advances only past blocks with an active row (the upstream quirk), so it is
        tracked per replica. ``cond``: the batch's conditional vectors [R, b, C]."""
        R, b, _ = fake_raw.shape
        J = len(self.blocks)
        if J == 0:
            return fake_raw.new_zeros(R)
        masks = np.zeros((R, b, J), dtype=bool)
        cond_targets = np.zeros((R, b, J), dtype=np.int64)
        cond_idx = np.zeros(R, dtype=np.int64)
        for j, (start, width) in enumerate(self.blocks):
            cols = cond_idx[:, None, None] + np.arange(width)[None, None, :]  # within bounds: cond_idx <= the block's offset
            window = np.take_along_axis(cond, np.broadcast_to(cols, (R, b, width)), axis=2)
            mask = window.sum(axis=2) > 0  # [R, b]
            masks[:, :, j] = mask
            cond_targets[:, :, j] = start + window.argmax(axis=2)
            cond_idx = cond_idx + width * mask.any(axis=1)
        dev = self.device
        if self.reads_real:
            targets = self.targets[torch.arange(R, device=dev)[:, None], rows.to(dev)]  # [R, b, J]
        else:
            targets = torch.from_numpy(cond_targets).to(dev)
        m = torch.from_numpy(masks).to(dev)
        logp = torch.log(torch.gather(fake_raw, 2, targets) + 1e-8)
        count = m.sum(dim=1)  # [R, J]
        zero = torch.zeros((), device=dev)
        nll = -torch.where(m, logp, zero).sum(dim=1) / count.clamp_min(1)
        return torch.where(count > 0, nll, zero).sum(dim=1) / b

    def iteration(self, it: int, active: np.ndarray) -> None:
        self._compact(active)
        models = self._models
        on = np.ones(len(models), dtype=bool)
        for m in models:
            m.trace.extra["skipped_batches"].append(0)
        self._teacher_phase(models, it, on)
        epochs, d_steps = self.schedule
        for _ in range(epochs):
            batches = [m.real_batches() for m in models]  # each replica's permutation of its pool
            for j in range(len(batches[0])):
                rows = torch.as_tensor(np.stack([bs[j] for bs in batches]), dtype=torch.int64)  # [R, b]
                for _ in range(d_steps):
                    if rows.shape[1] == 0:
                        continue
                    self._critic_step(models, rows, on)
                self._generator_step(models, rows)

    def write_back(self, r: int) -> None:
        if self.own:  # the model's own networks were trained
            return
        pos = self.live.index(r)
        m = self.models[r]
        self.gen.write_back(pos, m.gen_net, m.opt_generator)
        self.student.write_back(pos, m.student, m.opt_student)
        if not self.logistic:
            unstack_into(self.teachers.net, m.teachers.net, pos)
            copy_optimizer_state(self.teachers.optimizer, self.teachers.net, m.teachers.optimizer, m.teachers.net, pos)
            return
        f = self.teachers.fit
        if f is not None:
            sl = slice(pos * self.k, (pos + 1) * self.k)
            m.teachers.fit = LogisticFit(coef=f.coef[sl].clone(), intercept=f.intercept[sl].clone(), n_iter=f.n_iter[sl].clone(),
                                         converged=f.converged[sl].clone(), n_cg=f.n_cg)


def supports(config) -> bool:
    """Every setting of ``synthcity`` is batched: as benchmarked and as released (harness,
    hyperparameters), both teacher models (B2), partitions (V5), the switches O1-O4 and O10, vote
    mechanisms, accountants and stopping rules (the last three are per replica)."""
    return True


def run(models, frames, label, *, device, on_done=None) -> None:
    run_pate_replicas(models, frames, label, SynthcityStep, device=device, on_done=on_done)
