"""The training step of gnmax (:class:`~pategan_audit.implementations.gnmax.GNMax`; PATE-GAN
Alg. 1, ``jordon2019pategan``, with the Confident-GNMax aggregation of ``papernot2018scalable``):
its one iteration. A single fit runs it at R = 1 (:func:`~pategan_audit.replicas.loop.fit_one`),
``fit_many`` at any R. One iteration:

1. ``n_T`` teacher rounds: every teacher takes an Adam step on BCE of ``B`` rows of its own block
   (label 1) and one batch of ``B`` generated rows shared by the replica's k teachers (label 0);
2. ``query_batch`` generated rows are labelled by Confident-GNMax (one query each, every query
   charged); the answered ones join the replay buffer (the most recent ``replay_size`` kept);
3. ``steps_per_iteration_`` times: ``student_iters`` student steps on ``student_batch`` rows
   drawn from the buffer (none while it is empty), then one generator step on
   ``BCE(S(G(z)), 1)`` over ``student_batch`` rows.

What is batched (one tensor operation for all R replicas, networks stacked along their model
axis, :func:`~pategan_audit.replicas.stack.stack_modules`):

* the teacher rounds: one ensemble of ``R·k`` teachers; replica r's k teachers share one batch of
  B fakes per round, as in the single fit (``NeuralRounds(shared_fakes=True)``);
* the teachers' votes on each replica's ``query_batch`` generated rows, computed with the same
  per-teacher products as :meth:`NeuralTeachers._forward` (:func:`shared_votes`);
* the ``steps_per_iteration_`` × (``student_iters`` student steps on the replay buffer + one
  generator step): one stacked student and one stacked generator, whose losses are the sums of
  the replicas' mean losses, so each slice gets its own gradient and the element-wise Adam
  updates it as the replica's own optimiser would.

What stays per replica, in the single fit's order (so every stream gives replica r exactly the
numbers of ``create("gnmax", seed=s_r).fit``): every random draw (block keys and fill, latent
codes, the replay mini-batch indices from ``train_gen``; the Confident-GNMax noise from
``noise_gen``), the release itself (the model's own ``release_votes``: noise,
threshold, RDP charge, records), the replay buffer (kept on the model, ``replay_rows_`` /
``replay_labels_``, trimmed to ``replay_size`` as in the single fit) and the trace.

Adam's step count: a single fit's student takes no step until its replay buffer holds a row
(an iteration whose queries are all unanswered leaves it empty), so replicas' students may start
at different iterations. The students are therefore held in stacks of replicas that started
together (:class:`StudentStacks`), each with its own Adam (one step counter per stack); replicas
not yet started sit in a stack without optimiser (their students only pass gradients through
to the generator, as in the single fit).

One replica (R = 1, ``fit``): on the CPU the step trains the model's own networks with its own
optimisers (stacking one replica is the identity, and the model is current after every
iteration, for its callbacks); on any device it runs the kernels of one network: the first layer
of the generator and the student reads the ``[n, in]`` rows, the teachers vote through
:meth:`NeuralTeachers.votes`, each loss is one mean, so a fit's numbers do not depend on whether
it ran alone or in a group of one. R > 1: everything discrete (rows, latent draws, votes, noise,
labels, answered counts, accountant, ε̂, iterations) equals the replicas' single fits; the
networks are equal up to float rounding, as for every preset on the replica axis: a batched
product (``baddbmm`` of ``[R, n, in] @ [R, in, out]``) and one network's
``matmul([n, in], [1, in, out])`` dispatch to different kernels (MKL, shape-dependent), which
differ in the last bits for some shapes.

Replicas are stacked when they have the same table shape, teachers, batch size, networks and
plan (``planned_iterations_``, ``steps_per_iteration_``); fit_many fits the others in groups of
their own. ``analysis="data_dependent"`` is not batched (:func:`supports`): it keeps fitting one
by one.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..components.networks import adam
from ..components.teachers import NeuralTeachers, _matmul
from .loop import ReplicaStep, record_seen, run_pate_replicas
from .neural import generator_step, replica_bce, replica_votes, stack_teachers
from .stack import StackedBlockSampler, keep_replicas, shape_signature, stack_modules, unstack_into

__all__ = ["GNMaxStep", "StudentStacks", "shared_votes", "supports", "run"]


def shared_votes(teachers: NeuralTeachers, x: torch.Tensor, k: int) -> torch.Tensor:
    """``n1`` [R, n] of a stacked ensemble (``R·k`` teachers) on per-replica rows ``x`` [R, n, D]:
    the products of :meth:`NeuralTeachers._forward` (``[n, D] @ [k, D, out]`` through NumPy),
    with the replica as one more broadcast axis, so each teacher's logits are computed by the
    same matrix product as in a single fit."""
    if teachers._slope is None:  # not a piecewise-linear activation: the autograd network
        return replica_votes(teachers, x, k)
    R = x.shape[0]
    layers, slope = teachers.net.layers, teachers._slope
    with torch.no_grad():
        h = x.detach()[:, None]  # [R, 1, n, D]: replica r's k teachers read one batch
        for i, layer in enumerate(layers):
            a = _matmul(h, layer.weight.reshape(R, k, *layer.weight.shape[1:]))
            a += layer.bias.detach().reshape(R, k, *layer.bias.shape[1:])
            if i < len(layers) - 1:
                h = F.leaky_relu(a, slope) if slope else F.relu(a)
    return (a[..., 0] > 0).to(torch.int64).sum(dim=1)


@dataclass
class _Stack:
    replicas: np.ndarray  # positions (in the step's replica order) held by ``net``, in order
    net: nn.Module
    opt: torch.optim.Optimizer | None  # None: students that have not taken a step yet


class StudentStacks:
    """The R students, stacked in groups whose Adam has taken the same number of steps (see the
    module docstring). ``forward`` runs every student on its replica's rows; ``step`` takes one
    Adam step of the started students. ``own``: the optimiser of a single student trained in
    place (R = 1 on the CPU: ``students[0]`` itself, which starts with that optimiser)."""

    def __init__(self, students: Sequence[nn.Module], settings: dict, device: torch.device, *,
                 own: torch.optim.Optimizer | None = None):
        self.R = len(students)
        self.settings = settings
        if own is not None and self.R != 1:
            raise ValueError(f"only one student trains in place, got {self.R}")
        self._own = own
        net = students[0] if own is not None else stack_modules(students).to(device)
        self.stacks = [_Stack(np.arange(self.R), net, None)]
        self._refresh()

    def _refresh(self) -> None:
        order = np.concatenate([s.replicas for s in self.stacks])
        self._identity = len(self.stacks) == 1
        self._inverse = torch.as_tensor(np.argsort(order))
        self.started = np.zeros(self.R, dtype=bool)
        for s in self.stacks:
            if s.opt is not None:
                self.started[s.replicas] = True
        self.started_stacks = [s for s in self.stacks if s.opt is not None]
        self.started_order = np.concatenate([s.replicas for s in self.started_stacks]) if self.started_stacks \
            else np.empty(0, dtype=np.int64)

    def start(self, replicas: np.ndarray) -> None:
        """Replicas whose replay buffer has just received its first rows: from now on their
        students take steps, with a fresh Adam (a single fit's student had taken none)."""
        replicas = np.asarray(replicas, dtype=np.int64)
        if len(replicas) == 0:
            return
        pool = next(s for s in self.stacks if s.opt is None)
        if np.isin(replicas, pool.replicas, invert=True).any():
            raise ValueError("only students that have not started can start")
        if len(replicas) == len(pool.replicas):
            moved, pool_left = pool, None
        else:
            where = np.flatnonzero(np.isin(pool.replicas, replicas))
            rest = np.flatnonzero(~np.isin(pool.replicas, replicas))
            net = copy.deepcopy(pool.net)
            keep_replicas(net, None, 1, where.tolist())
            keep_replicas(pool.net, None, 1, rest.tolist())
            moved = _Stack(pool.replicas[where], net, None)
            pool.replicas = pool.replicas[rest]
            pool_left = pool
        moved.opt = self._own if self._own is not None else adam(moved.net.parameters(), **self.settings)
        self.stacks = [s for s in self.stacks if s is not pool] + [moved] + ([pool_left] if pool_left else [])
        self._refresh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits [R, n] of every replica's student on its rows ``x`` [R, n, D] (R = 1: the
        student reads the ``[n, D]`` rows, as one network does)."""
        if self.R == 1:
            return self.stacks[0].net(x[0])[..., 0]
        if self._identity:
            return self.stacks[0].net(x)[..., 0]
        outs = [s.net(x[torch.as_tensor(s.replicas)])[..., 0] for s in self.stacks]
        return torch.cat(outs)[self._inverse]

    def step(self, x: torch.Tensor, y: torch.Tensor) -> None:
        """One Adam step of every started student on BCE of rows ``x`` [S, n, D] with labels
        ``y`` [S, n], S the started replicas in ``started_order``. R = 1: rows ``[n, D]`` and
        labels ``[n]`` (no replica axis), as one network reads them, and the loss is one mean
        (:func:`~.neural.replica_bce`)."""
        if self.R == 1:
            s = self.started_stacks[0]
            loss = replica_bce(s.net(x)[0, :, 0], y)
            s.opt.zero_grad(set_to_none=True)
            loss.backward()
            s.opt.step()
            return
        start = 0
        losses = []
        for s in self.started_stacks:
            n = len(s.replicas)
            logits = s.net(x[start:start + n])[..., 0]
            losses.append(F.binary_cross_entropy_with_logits(logits, y[start:start + n], reduction="none").mean(dim=1).sum())
            start += n
            s.opt.zero_grad(set_to_none=True)
        sum(losses).backward()
        for s in self.started_stacks:
            s.opt.step()

    def write_back(self, r: int, target: nn.Module) -> None:
        if self._own is not None:  # the student was trained in place
            return
        for s in self.stacks:
            hit = np.flatnonzero(s.replicas == r)
            if len(hit):
                unstack_into(s.net, target, int(hit[0]))
                return
        raise KeyError(r)


class GNMaxStep(ReplicaStep):
    """One iteration of R gnmax replicas (see the module docstring)."""

    def __init__(self, models, device: torch.device):
        super().__init__(models, device)
        m0 = models[0]
        self.R, self.k, self.B = len(models), m0.num_teachers_, m0.batch_size_
        self.cfg = cfg = m0.config
        phase = m0.teacher_phase_
        if not phase.shared_fakes or phase.separate:
            raise ValueError(f"{type(m0).__name__}: the gnmax step needs teachers that share their fakes")
        self.rounds = int(phase.rounds)
        self.q, self.sb, self.si = int(cfg.query_batch), int(cfg.student_batch), int(cfg.student_iters)
        self.replay_size = int(cfg.replay_size)
        self.steps = int(m0.steps_per_iteration_)
        g0, s0 = m0.opt_generator.param_groups[0], m0.opt_student.param_groups[0]
        student_settings = dict(lr=s0["lr"], betas=s0["betas"], weight_decay=s0["weight_decay"])
        self.own = self.trains_own_networks(self.R, device)
        if self.own:
            self.gen_net, self.opt_generator, self.teachers = m0.gen_net, m0.opt_generator, m0.teachers
            self.students = StudentStacks([m0.student], student_settings, device, own=m0.opt_student)
        else:
            self.gen_net = stack_modules([m.gen_net for m in models]).to(device)
            self.opt_generator = adam(self.gen_net.parameters(), lr=g0["lr"], betas=g0["betas"], weight_decay=g0["weight_decay"])
            self.students = StudentStacks([m.student for m in models], student_settings, device)
            self.teachers = stack_teachers([m.teachers for m in models])
            self.teachers.net.to(device)
        self.X = torch.stack([m.X_ for m in models]).to(device)  # [R, N, D]
        self.X0 = self.X[0] if self.R == 1 else None  # R = 1: the rows, indexed without the replica axis
        self.sampler = StackedBlockSampler([m.sampler for m in models])
        self.train_gens = [m.train_gen for m in models]
        self.D = self.X.shape[-1]
        self.width = int(m0.model_width_)
        self.replay = torch.zeros((self.R, 1, self.D))
        self.replay_y = torch.zeros((self.R, 1))
        self.replay_len = np.zeros(self.R, dtype=np.int64)

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        """Whether the step trains the model's own networks with its own optimisers (one replica
        on the CPU); else it trains stacked copies and writes them back (:meth:`write_back`)."""
        return replicas == 1 and device.type == "cpu"

    @staticmethod
    def signature(model) -> tuple:
        return (type(model).__name__, tuple(model.X_.shape), model.num_teachers_, model.batch_size_, model.sampler.small,
                model.planned_iterations_, model.steps_per_iteration_,
                shape_signature(model.gen_net, model.student, model.teachers.net))

    # -- per-replica draws -----------------------------------------------------------------------
    def _latents(self, n: int, active: np.ndarray) -> torch.Tensor:
        """[R, n, width] latent codes, replica r's from its own training stream (zeros for a
        replica that has stopped: it draws nothing more); at R = 1 the replica's own ``[n, width]``."""
        if self.R == 1:  # the loop runs an iteration only for an active replica
            z = self.models[0].training_latent(n)
            return z if self.own else z.to(self.device)
        out = torch.zeros((self.R, n, self.width))
        for r in np.flatnonzero(active):
            m = self.models[r]
            out[r] = m.training_latent(n)
        return out.to(self.device)

    def _generate(self, latent: torch.Tensor) -> torch.Tensor:
        """Generated rows [R, n, D] from ``latent`` [R, n, width]. At R = 1 the generator reads the
        ``[n, width]`` codes (:meth:`_latents`), as one network does (its first layer a broadcast
        product plus bias, not a batched one: other kernels, other rounding)."""
        return self.gen_net(latent)

    def _votes(self, u: torch.Tensor) -> torch.Tensor:
        """Vote counts ``n1`` [R, n] of each replica's teachers on its rows ``u`` [R, n, D] (R = 1:
        the teachers' own :meth:`NeuralTeachers.votes`)."""
        if self.R == 1:
            return self.teachers.votes(u[0])[None]
        return shared_votes(self.teachers, u, self.k)

    # -- the iteration -----------------------------------------------------------------------------
    def _teacher_rounds(self, active: np.ndarray) -> None:
        R, k, B = self.R, self.k, self.B
        ar = torch.arange(R)[:, None, None] if R > 1 else None
        for _ in range(self.rounds):
            if R == 1:  # the replica's own sampler: the same draws and rows, without the padding
                rows = self.sampler.samplers[0].sample(B, generator=self.train_gens[0])[None]
            else:
                rows = self.sampler.sample(B, self.train_gens)  # [R, k, B], each replica's keys from its stream
            record_seen(self.models, rows, active, has_rows=self.sampler.has_rows if self.sampler.any_empty else None)
            at = rows if self.own else rows.to(self.device)
            real = (self.X0[at[0]] if R == 1 else self.X[ar, at]).reshape(R * k, B, -1)
            with torch.no_grad():
                fake = self._generate(self._latents(B, active))  # [R, B, D]: one batch per replica ...
            fake = fake[:, None].expand(R, k, B, -1).reshape(R * k, B, -1)  # ... shared by its k teachers
            weight = self.sampler.has_rows.reshape(R * k).float().to(self.device) if self.sampler.any_empty else None
            self.teachers.train_step(real, fake, separate=False, real_weight=weight)

    def _query(self, active: np.ndarray) -> np.ndarray:
        """Label ``query_batch`` generated rows per replica (each replica's own release) and
        update the replay buffers; returns the replicas whose buffer holds rows."""
        with torch.no_grad():
            u = self._generate(self._latents(self.q, active))  # [R, q, D]
        n1 = self._votes(u).to("cpu")
        u = u.to("cpu")
        for r in np.flatnonzero(active):
            m = self.models[r]
            labels = m.release_votes(n1[r].clone())  # gnmax's release: its noise stream, charge and records
            keep = m.answered_
            m.trace.extra["answered"].append(int(keep.sum()))
            if keep.any():
                m.replay_rows_.append(u[r][keep])
                m.replay_labels_.append(labels[keep])
            rows = torch.cat(m.replay_rows_) if m.replay_rows_ else torch.empty(0)
            if len(rows) > self.replay_size:  # keep the most recent answered queries (as the single fit)
                rows = rows[-self.replay_size:]
                m.replay_rows_ = [rows]
                m.replay_labels_ = [torch.cat(m.replay_labels_)[-self.replay_size:]]
            self.replay_len[r] = len(rows)
        self._stack_replay(active)
        return np.flatnonzero(active & (self.replay_len > 0))

    def _stack_replay(self, active: np.ndarray) -> None:
        L = max(1, int(self.replay_len.max()))
        self.replay = torch.zeros((self.R, L, self.D))
        self.replay_y = torch.zeros((self.R, L))
        for r in np.flatnonzero(active & (self.replay_len > 0)):
            m = self.models[r]
            n = int(self.replay_len[r])
            self.replay[r, :n] = torch.cat(m.replay_rows_)
            self.replay_y[r, :n] = torch.cat(m.replay_labels_)
        self.replay = self.replay.to(self.device)
        self.replay_y = self.replay_y.to(self.device)
        if self.R == 1:  # the one replica's buffer, indexed without the replica axis
            self.replay0, self.replay_y0 = self.replay[0], self.replay_y[0]

    def _replay_batch(self, order: np.ndarray, draw: np.ndarray, rows_idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One student mini-batch per started replica (``order``): rows [S, sb, D] and labels
        [S, sb] drawn from its replay buffer by the single fit's ``torch.randint`` on its training
        stream (replicas not in ``draw``, stopped, draw nothing and read row 0); at R = 1 the
        replica's ``[sb, D]`` and ``[sb]`` (:meth:`StudentStacks.step`)."""
        if self.R == 1:  # a started replica is active and has rows
            pick = torch.randint(int(self.replay_len[0]), (self.sb,), generator=self.train_gens[0])
            pick = pick if self.own else pick.to(self.device)
            return self.replay0[pick], self.replay_y0[pick]
        pick = torch.zeros((len(order), self.sb), dtype=torch.int64)
        for j in np.flatnonzero(draw):
            r = order[j]
            pick[j] = torch.randint(int(self.replay_len[r]), (self.sb,), generator=self.train_gens[r])
        pick = pick.to(self.device)
        return self.replay[rows_idx, pick], self.replay_y[rows_idx, pick]

    def iteration(self, it: int, active: np.ndarray) -> None:
        self._teacher_rounds(active)
        with_rows = self._query(active)
        self.students.start(with_rows[~self.students.started[with_rows]])
        order = self.students.started_order
        draw = active[order] & (self.replay_len[order] > 0) if len(order) else np.zeros(0, dtype=bool)
        rows_idx = torch.as_tensor(order)[:, None]
        for _ in range(self.steps):
            if len(order):
                for _ in range(self.si):
                    self.students.step(*self._replay_batch(order, draw, rows_idx))
            generator_step(self.students.forward(self._generate(self._latents(self.sb, active))), self.opt_generator)

    def write_back(self, r: int) -> None:
        if self.own:  # the model's own networks were trained
            return
        m = self.models[r]
        unstack_into(self.gen_net, m.gen_net, r)
        self.students.write_back(r, m.student)
        unstack_into(self.teachers.net, m.teachers.net, r)


def supports(config) -> bool:
    """The default (data-independent) analysis is batched; ``analysis="data_dependent"`` fits
    one by one (its release after training reads each replica's answered votes; not batched yet)."""
    return getattr(config, "analysis", "data_independent") == "data_independent"


def run(models, frames, label, *, device, on_done=None) -> None:
    run_pate_replicas(models, frames, label, GNMaxStep, device=device, on_done=on_done)
