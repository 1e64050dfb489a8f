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
  (:func:`~pategan_audit.implementations.engine.release_votes`);
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

Stream mode (``streams="counter"``, :class:`CounterSynthcityStep`, issue 40 item 2; audit paper
§6.2's many shadow models): the draws of an iteration come from :mod:`.streams` instead, on
stream id 4 (the WGAN loop's is 1, the neural family's 2, ``updated``'s 3). Each kind and round has
its own draw id (``kind << 16 | round``) and each element its own index, so a replica's numbers
depend only on its seed, the iteration, the draw and the element: the same at any R, chunking and
device, but not the single fit's. Initial weights, the fixed partition, the student's row pool
and its fixed conditional vectors (set-up draws) still come from the replica's own streams, as
in the other families; the logistic teachers' fits draw nothing. Same distributions as the
default: N(0, 1) latents, conditional vectors by the replica's category frequencies, Gumbel and
dropout uniforms, a uniform partition and uniform rows of each block, uniform real batches of the
pool, uniform penalty pairs, Laplace vote noise as the difference of two exponentials. A
replica-iteration takes about a million words at the benchmark's sizes, so the words are
evaluated one phase at a time (the teacher phase, each epoch's batches, each critic step, each
generator step), one vectorised call per phase for every live replica.
"""
from __future__ import annotations

from typing import Callable, ClassVar, Sequence

import numpy as np
import torch
from torch import nn

from ..components.generators import ResidualConcatGenerator
from ..components.logistic import LogisticFit
from ..components.networks import adam
from ..components.partition import permutation_blocks
from ..components.teachers import LogisticTeachers
from ..implementations.engine import PateGenerator, release_votes
from .loop import ReplicaStep, record_seen, run_pate_replicas
from .neural import replica_votes, stack_teachers
from .stack import copy_optimizer_state, keep_replicas, keep_rows, state_slice, solver_replicas, shape_signature, unstack_into
from .streams import (Draws, as_integers, as_laplace, as_normal, as_permutation, as_uniform, as_uniform64, stream_keys,
                      uniform_at_least)

__all__ = ["SynthcityStep", "CounterSynthcityStep", "StackedNet", "clip_per_replica", "supports", "run", "STREAM_MODES"]

#: the ``streams`` this family's batched step runs (see :func:`pategan_audit.implementations.fit_many`)
STREAM_MODES = ("torch", "counter")
#: stream id of this family's training draws (the WGAN loop's is 1, the neural family's 2, updated's 3)
STREAM_ID = 4
#: the draw kinds of an iteration; a draw's id is ``kind << 16 | round`` (teacher round, epoch,
#: critic step or generator step of the iteration, or 0)
(ROWS, TEACHER_Z, TEACHER_COND, TEACHER_GUMBEL, BATCH, CRITIC_Z, CRITIC_COND, CRITIC_GUMBEL, CRITIC_DROP,
 CRITIC_E, NOISE, PAIRS, GEN_Z, GEN_COND, GEN_GUMBEL, GEN_DROP) = range(1, 17)


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
    """One iteration of R ``synthcity`` replicas (see the module docstring), each replica drawing
    from its own streams in the single fit's order."""

    #: the stream mode of this step (:data:`STREAM_MODES`)
    streams: ClassVar[str] = "torch"

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

    def _compact(self, active: np.ndarray) -> list[int] | None:
        """Drop the stopped replicas (already written back) from every stack; returns the kept
        positions in the old stacks, or None when nothing was dropped."""
        keep = [pos for pos, i in enumerate(self.live) if active[i]]
        if len(keep) == len(self.live) or self.own:
            return None
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
        return keep

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

    def _latent_fakes(self, models: Sequence[PateGenerator], n: int, rnd: int = 0) -> torch.Tensor:
        """Generated rows from ``training_latent(n)`` of every replica without gradients -> [R, n, D]
        (CPU), for teacher round ``rnd`` (in the single fit's order: the round is the order itself)."""
        latent, *uniforms = self._stack(models, lambda m: (m.training_latent(n), *self._gumbel_draws(n, m.train_gen)))
        with torch.no_grad():
            return self._generate(latent, uniforms).cpu()

    # -- one iteration ------------------------------------------------------------------------
    def _teacher_phase(self, models: list[PateGenerator], it: int, on: np.ndarray) -> None:
        k, R = self.k, len(models)
        if self.own:  # the model's own teachers, by its strategy
            models[0].train_teachers(it)
            return
        X = self.X.cpu()
        if not self.logistic:  # B2 fixed: persistent neural teachers on their fixed blocks
            B = self.B
            for rnd in range(models[0].teacher_phase_.rounds):  # the single fit's strategy
                rows = self._neural_rows(models, rnd)  # [R, k, B]
                record_seen(models, rows, on)
                fake = self._latent_fakes(models, k * B, rnd)
                real = X[torch.arange(R)[:, None, None], rows]
                self.teachers.train_step(real.reshape(R * k, B, -1), fake.reshape(R * k, B, -1))
            for m in models:
                m.keep_first_subsets(m.fixed_blocks_)
            return
        rows_t = self._refit_rows(models)  # [R, k, n_fit]
        rows = list(rows_t)
        n_fit = rows_t.shape[2]
        fake = self._latent_fakes(models, k * n_fit)
        real = X[torch.arange(R)[:, None, None], rows_t]  # [R, k, n_fit, D]
        self.teachers.refit(real.reshape(R * k, n_fit, -1), fake.reshape(R * k, n_fit, -1))  # B2, warm start per replica
        record_seen(models, rows_t, on)
        for m, r in zip(models, rows):
            m.keep_first_subsets([x.numpy() for x in r])

    def _neural_rows(self, models: Sequence[PateGenerator], rnd: int) -> torch.Tensor:
        """``[R, k, B]`` row positions of neural teacher round ``rnd`` (each replica's sampler)."""
        return torch.stack([m.sampler.sample(self.B, generator=m.train_gen) for m in models])

    def _refit_rows(self, models: Sequence[PateGenerator]) -> torch.Tensor:
        """``[R, k, n_fit]`` rows of the logistic teachers' fits (B2): a shuffled harness batch (released:
        the whole block) of each block of the fixed partition, or of a new one (V5), from each
        replica's ``partition_rng``."""
        cfg, k = self.cfg, self.k
        rows = []
        for m in models:
            N = m.X_.shape[0]
            blocks = permutation_blocks(N, k, rng=m.partition_rng) if cfg.partition == "resample_each_iteration" else m.fixed_blocks_
            n_fit = min(m.batch_size_, len(blocks[0])) if cfg.harness else len(blocks[0])
            rows.append(torch.as_tensor(np.stack([m.partition_rng.permutation(b)[:n_fit] for b in blocks])))
        return torch.stack(rows)

    def _real_batches(self, models: Sequence[PateGenerator], epoch: int) -> list[torch.Tensor]:
        """Epoch ``epoch``'s real batches ``[R, b]`` (int64 positions, CPU): each replica's
        permutation of its pool (``real_batches``)."""
        batches = [m.real_batches() for m in models]
        return [torch.as_tensor(np.stack([bs[j] for bs in batches]), dtype=torch.int64) for j in range(len(batches[0]))]

    def _vote_noise(self, step: int) -> torch.Tensor | None:
        """The vote noise of critic step ``step`` for every replica, or None: each replica draws
        its own from ``noise_gen`` when it releases
        (:func:`~pategan_audit.implementations.engine.release_votes`)."""
        return None

    def _begin_draws(self, it: int) -> None:
        """Before iteration ``it``'s draws (the counter streams key them by it)."""

    def _end_draws(self) -> None:
        """After the iteration (or its failure): drop what :meth:`_begin_draws` held."""

    def _critic_draws(self, models: Sequence[PateGenerator], b: int, step: int) -> tuple:
        """The draws of critic step ``step`` on batches of ``b`` rows, stacked ``[R, ...]`` on the
        device: ``(z, uniforms, keep1, keep2, e, keep3)`` with ``student_reads_real`` (z, the head's
        uniforms, the dropout masks of the fake, real and penalty passes, the penalty's weights),
        else ``(cond, z, uniforms, keep1)``; each replica's in the single fit's order."""
        ng, nd = len(self.groups), len(self.st_dropout)
        if not self.reads_real:
            cond, z, *rest = self._stack(models, self._fresh_cond_draw(b))  # cond, z, head, dropout(fake)
            return cond, z, rest[:ng], rest[ng:]

        def draw(m: PateGenerator):
            g = m.train_gen  # single-fit order: z, head, dropout(fake), dropout(real), e, dropout(penalty)
            z = torch.randn(b, self.H, generator=g)
            u = self._gumbel_draws(b, g)
            d1, d2 = self._dropout_draws(b, g), self._dropout_draws(b, g)
            e = torch.rand(b, 1, generator=g)
            return (z, *u, *d1, *d2, e, *self._dropout_draws(b, g))

        z, *rest = self._stack(models, draw)
        return (z, rest[:ng], rest[ng:ng + nd], rest[ng + nd:ng + 2 * nd], rest[ng + 2 * nd], rest[ng + 2 * nd + 1:])

    def _generator_draws(self, models: Sequence[PateGenerator], b: int, step: int) -> tuple:
        """The draws of generator step ``step``: ``(cond or None, z, uniforms, keeps)`` (cond
        drawn only when the student does not read real rows), stacked on the device."""
        ng = len(self.groups)
        if self.reads_real:
            def draw(m: PateGenerator):
                g = m.train_gen  # single-fit order: z, head, dropout(critic)
                return (torch.randn(b, self.H, generator=g), *self._gumbel_draws(b, g), *self._dropout_draws(b, g))

            z, *rest = self._stack(models, draw)
            return None, z, rest[:ng], rest[ng:]
        cond, z, *rest = self._stack(models, self._fresh_cond_draw(b))  # cond, z, head, dropout(critic)
        return cond, z, rest[:ng], rest[ng:]

    def _fresh_cond_draw(self, b: int) -> Callable[[PateGenerator], tuple]:
        """A replica's draws when the student does not read real rows (``student_reads_real``
        off), in the single fit's order: fresh conditional vectors, z, Gumbel noise, one dropout mask."""
        H = self.H

        def draw(m: PateGenerator) -> tuple:
            g = m.train_gen
            cond = m.cond_sampler.sample(b, generator=g)
            return (cond, torch.randn(b, H, generator=g), *self._gumbel_draws(b, g), *self._dropout_draws(b, g))

        return draw

    def _critic_step(self, models: list[PateGenerator], rows: torch.Tensor, on: np.ndarray, step: int = 0) -> None:
        """One student (WGAN-GP critic, upstream ``plugins/core/models/gan.py``) step of every replica
        on its real batch ``rows`` [R, b] (positions into its table): the fakes are labelled by the
        noisy teacher vote (votes, noise, the O4 skip rule, accountant:
        :func:`~pategan_audit.implementations.engine.release_votes`).
        With ``student_reads_real`` (O1) the real rows are "real" examples and the gradient penalty
        interpolates real and fake rows; otherwise only the labelled fakes enter (positives = label
        1). Loss ``−mean(D(real ∪ fakes labelled 1)) + mean(D(fakes labelled 0)) + w·GP``, the
        gradient norm clipped per replica, one Adam step. ``step``: the critic step's index in the iteration."""
        cfg, dev = self.cfg, self.device
        R, b = rows.shape
        ar = torch.arange(R, device=dev)[:, None]
        rows_d = rows.to(dev)
        zero = torch.zeros((), device=dev)
        if self.reads_real:
            z, u, keep1, keep2, e, keep3 = self._critic_draws(models, b, step)
            cond = self.cond[ar, rows_d]  # [R, b, C]
        else:
            cond, z, u, keep1 = self._critic_draws(models, b, step)
        with torch.no_grad():
            fake_raw = self._generate(torch.cat([z, cond], dim=-1), u)
        labels = release_votes(models, self._votes(fake_raw), on, noise=self._vote_noise(step)).to(dev).bool()  # [R, b]
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
            a, c, e, keep3, gp = self._penalty_pairs(models, fake, labels, step)
        x = (e * a + (1.0 - e) * c).detach().requires_grad_(True)
        d = self._critic(x, keep3)
        (grad,) = torch.autograd.grad(d.sum(), x, create_graph=True)
        penalty = cfg.gp_weight * ((grad.norm(2, dim=-1) - 1.0) ** 2).mean(dim=1)
        if gp is not None:
            penalty = torch.where(gp, penalty, zero)
        loss = (-err_real + err_fake + penalty).sum()
        grads = torch.autograd.grad(loss, self.student.params)
        self.student.step(list(grads), float(cfg.clipping_value))

    def _penalty_pairs(self, models: list[PateGenerator], fake: torch.Tensor, labels: torch.Tensor, step: int = 0):
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

    def _generator_step(self, models: list[PateGenerator], rows: torch.Tensor, step: int = 0) -> None:
        """One generator step of every replica: ``−mean(D(G(z) ⊕ cond))`` plus the conditional loss,
        the gradient norm clipped per replica, one Adam step. ``step``: its index in the iteration."""
        cfg = self.cfg
        R, b = rows.shape
        cond, z, u, keeps = self._generator_draws(models, b, step)
        if self.reads_real:
            cond = self.cond[torch.arange(R, device=self.device)[:, None], rows.to(self.device)]
            cond_np = self.cond_np[np.arange(R)[:, None], rows.numpy()]
        else:
            cond_np = cond.cpu().numpy()
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
        epochs, d_steps = self.schedule
        self._begin_draws(it)
        try:
            self._teacher_phase(models, it, on)
            s = g = 0  # critic and generator steps of this iteration
            for epoch in range(epochs):
                for rows in self._real_batches(models, epoch):  # [R, b]: each replica's permutation of its pool
                    for _ in range(d_steps):
                        if rows.shape[1] == 0:
                            continue
                        self._critic_step(models, rows, on, s)
                        s += 1
                    self._generator_step(models, rows, g)
                    g += 1
        finally:
            self._end_draws()

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


class CounterSynthcityStep(SynthcityStep):
    """:class:`SynthcityStep` with every draw of an iteration from counter-based streams
    (:mod:`.streams`; the module docstring's stream mode). Layout of replica r's words, per draw:
    a latent's ``Z`` (``n·H`` normals, row i's at ``i·H .. i·H + H − 1``), ``COND`` (the first n
    words pick each row's discrete column, the next 2n its category's float64 uniform), ``GUMBEL``
    (``n·G`` uniforms, the head's width groups side by side in each row); ``ROWS`` of the logistic
    teachers: word i keys table position i (a new partition: a permutation of the rows cut into
    the k blocks of ``⌊N/k⌋``, then the first ``n_fit`` of each), or word ``j·k + t`` position j of
    fixed block t; of a neural round, word ``t·W + j`` position j of teacher t's block (the B
    smallest keys pick its rows); ``BATCH`` of an epoch: word i keys position i of the student's
    pool; per critic step ``CRITIC_DROP`` (the fake, real and penalty passes' keep masks),
    ``CRITIC_E`` (the penalty's weights), ``NOISE`` (four words per Laplace value, ``[b]`` or
    ``[b, 2]``) and ``PAIRS`` (b positives then b negatives, ``student_reads_real=False``); per
    generator step ``GEN_DROP``. A replica's key is its training streams' seed (``_seed()``: with
    ``reseed_each_fit``, O2, seed 0 for all, so they draw alike, as in the default mode; only the
    set-up's upstream data sampler reads the user's seed). Element indices never depend on the group's other tables (padded
    rows and pools are ordered last), so a replica of a group of several tables draws what it draws
    alone. Even one replica trains stacked copies (no single fit has these draws)."""

    streams: ClassVar[str] = "counter"

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        seeds = [m.stream_root() for m in models]  # the training streams' root: 0 for every replica under O2's reseeding
        bad = [s for s in seeds if s is None or isinstance(s, bool) or int(s) < 0]
        if bad:
            raise ValueError(f"streams='counter' keys each replica by its seed; got seed {bad[0]!r}, pass non-negative seeds")
        super().__init__(models, device)
        m0, k, B, R = self.models[0], self.k, self.B, len(self.models)
        self.scale = float(m0.laplace_scale())
        self.two_noise = self.cfg.vote_mechanism == "two_noise_argmax"
        self.keys = stream_keys([int(s) for s in seeds], STREAM_ID, device)  # [R, 2], every replica of the group
        self.widths = [int(np.prod(s)) for s in self.group_shapes]  # the head's uniforms per row and group
        self.Wd = int(sum(self.st_dropout))
        if self.C:  # each replica's category frequencies (its own table's: D and D' differ)
            self.cum_probs = torch.stack([m.cond_sampler.cum_probs for m in self.models]).to(device)  # [R, J, w]
            self.offsets = torch.tensor(m0.cond_sampler.offsets, dtype=torch.int64, device=device)  # a copy: snapshots
        self.N = torch.as_tensor([int(m.X_.shape[0]) for m in self.models])
        pools = [torch.as_tensor(np.asarray(m.student_pool_), dtype=torch.int64) for m in self.models]
        self.P = torch.as_tensor([len(p) for p in pools])
        self.pool = torch.zeros(R, int(self.P.max()), dtype=torch.int64)  # padded: positions past P_r sort last
        for r, p in enumerate(pools):
            self.pool[r, :len(p)] = p
        teacher: dict[int, int] = {}
        if self.logistic:
            m_first = len(m0.fixed_blocks_[0])
            self.n_fit = min(B, m_first) if self.cfg.harness else m_first  # equal in a group (signature)
            self.resample = self.cfg.partition == "resample_each_iteration"
            if self.resample:
                teacher[ROWS << 16] = int(self.N.max())
            else:
                self.m_r = torch.as_tensor([len(m.fixed_blocks_[0]) for m in self.models])
                self.fixed = torch.zeros(R, k, int(self.m_r.max()), dtype=torch.int64)
                for r, m in enumerate(self.models):
                    self.fixed[r, :, :int(self.m_r[r])] = torch.as_tensor(np.stack(m.fixed_blocks_))
                teacher[ROWS << 16] = k * int(self.m_r.max())
            self._latent_sizes(teacher, (TEACHER_Z, TEACHER_COND, TEACHER_GUMBEL), 0, k * self.n_fit)
            rounds = 1
        else:
            for m in self.models:  # what the default sampler checks at every draw, once
                m.sampler.check(B)
            self.table = torch.stack([m.sampler.table for m in self.models])  # [R, k, W] (equal blocks: signature)
            self.W = int(self.table.shape[-1])
            rounds = int(m0.teacher_phase_.rounds)
            for rnd in range(rounds):
                teacher[ROWS << 16 | rnd] = k * self.W
                self._latent_sizes(teacher, (TEACHER_Z, TEACHER_COND, TEACHER_GUMBEL), rnd, k * B)
        epochs, d_steps = self.schedule
        P0 = int(self.P[0])  # rows per real batch are equal in a group (signature)
        self.one_batch = bool(self.cfg.harness or m0.paper_hyperparameters())
        sizes = [min(B, P0)] if self.one_batch else [min(B, P0 - i) for i in range(0, P0, B)]
        steps = epochs * len(sizes)
        if max(rounds, epochs, steps * d_steps) >= 1 << 16:
            raise ValueError(f"streams='counter' numbers at most 65,535 teacher rounds, epochs and critic steps per iteration, "
                             f"got {rounds}, {epochs} and {steps * d_steps}")
        phases = [teacher] + [{BATCH << 16 | e: int(self.P.max())} for e in range(epochs)]
        s = 0
        for g, b in enumerate(sizes * epochs):
            for _ in range(d_steps):
                phases.append(self._critic_sizes(b, s))
                s += 1
            gen: dict[int, int] = {}
            self._latent_sizes(gen, (GEN_Z, GEN_COND, GEN_GUMBEL), g, b, cond=not self.reads_real)
            if self.Wd:
                gen[GEN_DROP << 16 | g] = b * self.Wd
            phases.append(gen)
        self.phase_sizes = phases
        self.phase_of = {d: p for p, ds in enumerate(phases) for d in ds}
        self._rekey(None)
        self._it: int | None = None
        self._held: tuple[int, dict[int, torch.Tensor]] | None = None

    def _latent_sizes(self, sizes: dict[int, int], kinds: tuple[int, int, int], rnd: int, n: int, *, cond: bool = True) -> None:
        """Words of n latent rows (z, conditional vectors where drawn, the head's uniforms) into ``sizes``."""
        kz, kc, kg = kinds
        sizes[kz << 16 | rnd] = n * self.H + (n * self.H) % 2  # as_normal reads pairs
        if cond and self.C:
            sizes[kc << 16 | rnd] = 3 * n
        if self.widths:
            sizes[kg << 16 | rnd] = n * sum(self.widths)

    def _critic_sizes(self, b: int, s: int) -> dict[int, int]:
        sizes: dict[int, int] = {}
        self._latent_sizes(sizes, (CRITIC_Z, CRITIC_COND, CRITIC_GUMBEL), s, b, cond=not self.reads_real)
        if self.Wd:
            sizes[CRITIC_DROP << 16 | s] = 3 * b * self.Wd
        sizes[CRITIC_E << 16 | s] = b
        sizes[NOISE << 16 | s] = 4 * b * (2 if self.two_noise else 1)
        if not self.reads_real:
            sizes[PAIRS << 16 | s] = 2 * b
        return sizes

    def _rekey(self, backend: str | None) -> None:
        """One :class:`~.streams.Draws` per phase of an iteration, for the live replicas' keys."""
        self.phases = [Draws(self.keys, sizes, backend=backend) for sizes in self.phase_sizes]

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        return False

    def _compact(self, active: np.ndarray) -> list[int] | None:
        kept = super()._compact(active)
        if kept is None:
            return None
        keep = torch.as_tensor(kept)  # positions in the old stacks
        self.keys = self.keys[keep.to(self.keys.device)]
        self._rekey(self.phases[0].backend)
        self.N, self.P, self.pool = self.N[keep], self.P[keep], self.pool[keep]
        if self.C:
            self.cum_probs = self.cum_probs[keep.to(self.device)]
        if not self.logistic:
            self.table = self.table[keep]
        elif not self.resample:
            self.m_r, self.fixed = self.m_r[keep], self.fixed[keep]
        return kept

    def _begin_draws(self, it: int) -> None:
        self._it, self._held = it, None

    def _end_draws(self) -> None:
        self._it, self._held = None, None  # views of one array: never part of a snapshot

    def _words(self, kind: int, rnd: int = 0) -> torch.Tensor:
        """Words ``[R, n]`` of draw ``kind << 16 | rnd`` at this iteration; its phase's draws are
        evaluated in one call the first time one of them is read, and held until the next phase's."""
        d = kind << 16 | rnd
        p = self.phase_of[d]
        if self._held is None or self._held[0] != p:
            self._held = (p, self.phases[p](self._it))
        return self._held[1][d]

    # -- draws from words ---------------------------------------------------------------------
    def _z(self, kind: int, rnd: int, n: int) -> torch.Tensor:
        return as_normal(self._words(kind, rnd))[:, :n * self.H].reshape(-1, n, self.H)

    def _cond_vectors(self, kind: int, rnd: int, n: int) -> torch.Tensor:
        """``[R, n, C]`` conditional vectors as :class:`~pategan_audit.implementations.synthcity.ConditionalSampler`
        draws them (a discrete column uniformly, a category by the replica's frequencies)."""
        R = len(self.live)
        if not self.C:
            return torch.zeros(R, n, 0, device=self.device)
        w = self._words(kind, rnd)
        col = as_integers(w[:, :n], len(self.blocks))  # [R, n]
        u = as_uniform64(w[:, n:])  # [R, n]
        cp = torch.gather(self.cum_probs, 1, col[..., None].expand(-1, -1, self.cum_probs.shape[-1]))  # [R, n, w]
        cat = (cp > u[..., None]).to(torch.int64).argmax(dim=-1)
        cond = torch.zeros(R, n, self.C, device=w.device)
        return cond.scatter_(2, (self.offsets[col] + cat)[..., None], 1.0)

    def _uniforms(self, kind: int, rnd: int, n: int) -> list[torch.Tensor]:
        """The head's uniforms ``[R, n, blocks, width]`` per width group."""
        if not self.widths:
            return []
        u = as_uniform(self._words(kind, rnd)).reshape(-1, n, sum(self.widths))
        out, a = [], 0
        for shape, size in zip(self.group_shapes, self.widths):
            out.append(u[..., a:a + size].reshape(-1, n, *shape))
            a += size
        return out

    def _keeps(self, kind: int, rnd: int, n: int, passes: int, p: int) -> list[torch.Tensor]:
        """The critic's dropout keep masks ``[R, n, width]`` of forward pass ``p`` of ``passes``."""
        if not self.Wd:
            return []
        keep = uniform_at_least(self._words(kind, rnd).reshape(-1, passes, n, self.Wd)[:, p], self.st_p)
        out, a = [], 0
        for w in self.st_dropout:
            out.append(keep[..., a:a + w])
            a += w
        return out

    # -- the hooks of SynthcityStep -----------------------------------------------------------
    def _latent_fakes(self, models: Sequence[PateGenerator], n: int, rnd: int = 0) -> torch.Tensor:
        latent = torch.cat([self._z(TEACHER_Z, rnd, n), self._cond_vectors(TEACHER_COND, rnd, n)], dim=-1)
        with torch.no_grad():
            return self._generate(latent, self._uniforms(TEACHER_GUMBEL, rnd, n)).cpu()

    def _neural_rows(self, models: Sequence[PateGenerator], rnd: int) -> torch.Tensor:
        pos = as_permutation(self._words(ROWS, rnd).reshape(len(models), self.k, self.W), first=self.B)
        return torch.gather(self.table, 2, pos.cpu())

    def _refit_rows(self, models: Sequence[PateGenerator]) -> torch.Tensor:
        R, k, n_fit = len(models), self.k, self.n_fit
        w = self._words(ROWS, 0)
        j = torch.arange(n_fit)
        if self.resample:  # the first N_r entries of row r permute range(N_r); block t is entries t·m .. t·m + m − 1
            perm = as_permutation(w, lengths=self.N.to(w.device)).cpu()
            idx = torch.arange(k)[None, :, None] * (self.N // k)[:, None, None] + j  # [R, k, n_fit]
            return torch.gather(perm, 1, idx.reshape(R, -1)).reshape(R, k, n_fit)
        keys = w.reshape(R, -1, k).transpose(1, 2)  # [R, k, W]: word j·k + t keys position j of block t
        pos = as_permutation(keys, lengths=self.m_r[:, None].to(w.device), first=n_fit).cpu()
        return torch.gather(self.fixed, 2, pos)

    def _real_batches(self, models: Sequence[PateGenerator], epoch: int) -> list[torch.Tensor]:
        w = self._words(BATCH, epoch)
        lengths = self.P.to(w.device)
        if self.one_batch:
            return [torch.gather(self.pool, 1, as_permutation(w, lengths=lengths, first=min(self.B, int(self.P[0]))).cpu())]
        order = torch.gather(self.pool, 1, as_permutation(w, lengths=lengths).cpu())
        return [order[:, i:i + self.B].contiguous() for i in range(0, int(self.P[0]), self.B)]

    def _vote_noise(self, step: int) -> torch.Tensor:
        noise = as_laplace(self._words(NOISE, step), self.scale)  # [R, b] or [R, 2b]
        return noise.reshape(noise.shape[0], -1, 2) if self.two_noise else noise

    def _critic_draws(self, models: Sequence[PateGenerator], b: int, step: int) -> tuple:
        z, u = self._z(CRITIC_Z, step, b), self._uniforms(CRITIC_GUMBEL, step, b)
        keep1 = self._keeps(CRITIC_DROP, step, b, 3, 0)
        if not self.reads_real:
            return self._cond_vectors(CRITIC_COND, step, b), z, u, keep1
        e = as_uniform(self._words(CRITIC_E, step)).reshape(-1, b, 1)
        return z, u, keep1, self._keeps(CRITIC_DROP, step, b, 3, 1), e, self._keeps(CRITIC_DROP, step, b, 3, 2)

    def _generator_draws(self, models: Sequence[PateGenerator], b: int, step: int) -> tuple:
        cond = None if self.reads_real else self._cond_vectors(GEN_COND, step, b)
        return cond, self._z(GEN_Z, step, b), self._uniforms(GEN_GUMBEL, step, b), self._keeps(GEN_DROP, step, b, 1, 0)

    def _penalty_pairs(self, models: list[PateGenerator], fake: torch.Tensor, labels: torch.Tensor, step: int = 0):
        """As :meth:`SynthcityStep._penalty_pairs`, vectorised: b positives and b negatives drawn
        uniformly (with replacement) per replica from ``PAIRS``; replicas without both get no penalty."""
        R, b, _ = fake.shape
        dev = self.device
        lab = labels.cpu()
        n_pos = lab.sum(dim=1)
        n_neg = b - n_pos
        gp = (n_pos > 0) & (n_neg > 0)
        w = self._words(PAIRS, step).cpu()
        i = as_integers(w[:, :b], n_pos.clamp_min(1)[:, None])
        j = as_integers(w[:, b:], n_neg.clamp_min(1)[:, None])
        order = torch.argsort((~lab).to(torch.int64), dim=1, stable=True)  # each replica's positives, then its negatives
        pos_idx = torch.gather(order, 1, i)
        neg_idx = torch.gather(order, 1, (n_pos[:, None] + j).clamp_max(b - 1))
        ar = torch.arange(R, device=dev)[:, None]
        e = as_uniform(self._words(CRITIC_E, step)).reshape(R, b, 1).to(dev)
        keeps = [k.to(dev) for k in self._keeps(CRITIC_DROP, step, b, 3, 2)]
        return fake[ar, pos_idx.to(dev)], fake[ar, neg_idx.to(dev)], e, keeps, gp.to(dev)


def supports(config) -> bool:
    """Every setting of ``synthcity`` is batched: as benchmarked and as released (harness,
    hyperparameters), both teacher models (B2), partitions (V5), the switches O1-O4 and O10, vote
    mechanisms, accountants and stopping rules (the last three are per replica)."""
    return True


def run(models, frames, label, *, device, on_done=None, streams: str = "torch") -> None:
    """Fit ``models`` as one batched computation per stackable group (:func:`~.loop.run_pate_replicas`);
    ``streams``: "torch" (each replica's own generators, the single fit's numbers) or "counter"
    (:class:`CounterSynthcityStep`)."""
    if streams not in STREAM_MODES:
        raise ValueError(f"streams must be one of {STREAM_MODES}, got {streams!r}")
    step = CounterSynthcityStep if streams == "counter" else SynthcityStep
    run_pate_replicas(models, frames, label, step, device=device, on_done=on_done)
