"""Replica step of the ``updated`` preset (the 2020 ``mlforhealthlabpub`` PATE-GAN, audit paper §4;
implementation notes §updated.partition, §updated.votes): the preset's only iteration. ``fit`` runs
it at R = 1 (:func:`~pategan_audit.replicas.loop.fit_one`), ``fit_many`` at any R.

One replica on the CPU trains the model's own networks, optimisers and teachers with the single
fit's kernels (one-model passes on ``[n, in]`` inputs, the teacher phase of the model's strategy,
the model's own vote count), so a fit is the straightforward single-fit loop bit for bit (kept
as the test oracle ``tests/replicas/oracle_updated.py``) and the model is current after every
iteration. Otherwise:

R replicas become one generator and one WGAN student of R networks each
(:func:`~pategan_audit.replicas.stack.stack_modules`) and one teacher ensemble of ``R·k``
teachers:

* ``teacher_model="logistic_refit"`` (B1): every iteration the ``R·k`` logistic-regression
  teachers are re-fitted in **one** call of the exact batched solver
  (:meth:`~pategan_audit.components.teachers.LogisticTeachers.refit`), warm-started from the
  previous iteration's ``R·k`` fits as each single fit warm-starts from its own k. The problems
  are independent inside the solver (per-problem Newton steps, line searches and stopping; for
  more than 64 features its float32/float64 switch is shared, which changes the path, not the
  unique optimum), so each replica's teachers are its single fit's up to the solver tolerance.
* ``teacher_model="neural_persistent"``: one :class:`~pategan_audit.components.teachers.NeuralTeachers`
  of ``R·k`` networks with a fresh Adam (element-wise, so per-slice exact).

Every random draw (latent codes, teacher batches, vote noise) comes from the replica's own
streams in the single fit's order; vote counts of all replicas are computed in one pass and each
replica releases its labels with its own noise stream and accountant
(:func:`~pategan_audit.implementations.engine.release_votes`). Student and generator losses are the sums
of the replicas' losses, so each slice gets exactly its own gradient, and TF1 RMSProp / Adam are
element-wise.

A replica that stops (budget spent or cap reached) is written back at once and then dropped from
the stacks (parameters, optimiser state, teacher fits, data), so it draws nothing more from its
streams and costs nothing more.

Stream mode (``streams="counter"``, :class:`CounterUpdatedStep`, issue 40 item 2; audit paper
§6.2's many shadow models): the draws of an iteration come from :mod:`.streams` instead, one
Philox evaluation for every replica, round and kind on ``device``. Each kind and round has its own
draw id (``kind << 16 | round``) and each element its own index, so a replica's numbers depend
only on its seed, the iteration, the draw and the element: the same at any R, chunking and
device, but not the single fit's (initial weights and partitions still come from the replica's
own streams, as in the other families; the logistic teachers' fits draw nothing). Same
distributions as the default: latents U(-1, 1)^d, B distinct rows of each neural teacher's
block, Laplace vote noise as the difference of two exponentials.
"""
from __future__ import annotations

from typing import ClassVar, Sequence

import numpy as np
import torch

from ..components.generators import TF1RMSProp
from ..components.logistic import LogisticFit
from ..components.networks import adam
from ..components.teachers import LogisticTeachers, NeuralTeachers
from ..implementations.engine import PateGenerator, release_votes
from .loop import ReplicaStep, record_seen, run_pate_replicas
from .stack import copy_optimizer_state, keep_replicas, replica_rows, solver_replicas, replica_slice, shape_signature, stack_draws, stack_modules, unstack_into
from .streams import Draws, as_laplace, as_permutation, stream_keys

__all__ = ["UpdatedStep", "CounterUpdatedStep", "uniform_pm1", "student_step", "supports", "run", "WEIGHT_CLIP", "STREAM_MODES"]

WEIGHT_CLIP = 0.01  # updated clips every student parameter to [-0.01, 0.01] (WGAN)

#: the ``streams`` this family's batched step runs (see :func:`pategan_audit.implementations.fit_many`)
STREAM_MODES = ("torch", "counter")
#: stream id of this family's training draws (the WGAN loop's is 1, the neural family's 2), and
#: the draw kinds of an iteration; a draw's id is ``kind << 16 | round`` (teacher round, student round, or 0)
STREAM_ID = 3
ROWS, TEACHER_Z, STUDENT_Z, NOISE, GENERATOR_Z = range(1, 6)

# The teachers' generated rows (k·m per replica and iteration: most of the arithmetic of a fit)
# are generated in chunks of replicas whose widest activation holds about this many values
# (2 MiB of float32): memory-bound element-wise maps such as tanh run ~2x faster on activations
# that stay in cache than on one [R, k·m, 4d] tensor (measured on the Cervical shapes).
_CHUNK_VALUES = 1 << 19


def _like(opt: torch.optim.Optimizer, params) -> torch.optim.Optimizer:
    """A fresh optimiser of the same kind and settings as ``opt`` over ``params``."""
    g = opt.param_groups[0]
    if isinstance(opt, TF1RMSProp):
        return TF1RMSProp(params, lr=g["lr"], decay=g["decay"], eps=g["eps"])
    if isinstance(opt, torch.optim.Adam):
        return adam(params, lr=g["lr"], betas=g["betas"], weight_decay=g["weight_decay"])
    raise TypeError(f"no batched counterpart for optimiser {type(opt).__name__}")  # pragma: no cover


def student_step(student: torch.nn.Module, optimizer: torch.optim.Optimizer, scores: torch.Tensor,
                 labels: torch.Tensor) -> None:
    """One step of updated's student, a WGAN critic (implementation notes §updated.architecture): maximise
    ``mean(r·S(u)) − mean((1 − r)·S(u))`` over the B labelled rows (last axis), then clip every
    parameter to ±``WEIGHT_CLIP``. ``scores``/``labels``: ``[B]`` for one model or ``[R, B]``
    for R stacked replicas (the per-replica objectives are summed: each slice gets its own gradient)."""
    loss = -(torch.mean(labels * scores, dim=-1) - torch.mean((1.0 - labels) * scores, dim=-1)).sum()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for p in student.parameters():
            p.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)


def _generator_step(scores: torch.Tensor, student_params: Sequence[torch.nn.Parameter],
                    optimizer: torch.optim.Optimizer) -> None:
    """One generator step on ``−mean(S(G(z)))`` (the critic's scores ``scores``, one mean per
    replica, summed), the student's parameters ``student_params`` held out of the backward pass."""
    for p in student_params:  # the generator step needs no student gradient
        p.requires_grad_(False)
    try:
        loss_g = -scores.mean(dim=tuple(range(1, scores.dim()))).sum() if scores.dim() > 2 else -torch.mean(scores)
        optimizer.zero_grad(set_to_none=True)
        loss_g.backward()
    finally:
        for p in student_params:
            p.requires_grad_(True)
    optimizer.step()


class UpdatedStep(ReplicaStep):
    """One iteration of R ``updated`` replicas (see the module docstring), each replica drawing
    from its own torch generators in the single fit's order."""

    #: the stream mode of this step (:data:`STREAM_MODES`)
    streams: ClassVar[str] = "torch"

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        super().__init__(models, device)
        m0 = models[0]
        self.cfg = m0.config
        self.k, self.B, self.d = m0.num_teachers_, m0.batch_size_, m0.model_width_
        self.logistic = self.cfg.teacher_model == "logistic_refit"
        self.n_student = m0.student_steps()
        # neural teachers: the single fit's rounds (implementations.teacher_phase); logistic ones refit once
        self.n_teacher = 0 if self.logistic else m0.teacher_phase_.rounds
        self.live = list(range(len(models)))  # stack position -> index into self.models
        self.own = self.trains_own_networks(len(models), device)
        if self.own:
            self.gen_net, self.student, self.teachers = m0.gen_net, m0.student, m0.teachers
            self.opt_generator, self.opt_student = m0.opt_generator, m0.opt_student
            self.student_params = list(self.student.parameters())
            return
        self.gen_net = stack_modules([m.gen_net for m in models]).to(device)
        self.student = stack_modules([m.student for m in models]).to(device)
        self.student_params = list(self.student.parameters())
        self.opt_generator = _like(m0.opt_generator, self.gen_net.parameters())
        self.opt_student = _like(m0.opt_student, self.student.parameters())
        # the teachers stay on the CPU: the logistic solver and NeuralTeachers' hand-written
        # passes are NumPy BLAS calls
        if self.logistic:
            t0 = m0.teachers
            rows = 2 * int(m0.block_table_.shape[1])  # real and generated rows per teacher
            self.teachers = LogisticTeachers(len(models) * self.k, C=t0.C, warm_start=t0.warm_start,
                                             group=self.k * solver_replicas(k=self.k, rows=rows, width=self.d))
            self.block_rows = torch.stack([m.block_table_ for m in models])  # [R, k, m]
            self.real = torch.cat([m.X_[m.block_table_] for m in models])  # [R·k, m, d]
        else:
            if any(m.teachers.optimizer.state for m in models):
                raise RuntimeError("teachers can only be stacked before their first optimiser step")
            self.teachers = NeuralTeachers.__new__(NeuralTeachers)
            self.teachers.__dict__.update(m0.teachers.__dict__)
            self.teachers.net = stack_modules([m.teachers.net for m in models])
            self.teachers.num_teachers = len(models) * self.k
            self.teachers.optimizer = _like(m0.teachers.optimizer, self.teachers.net.parameters())
            self.teachers._targets_cache = {}

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        """Whether the step trains the model's own networks, optimisers and teachers (one replica
        on the CPU: the single fit's kernels, the model current after every iteration); else it
        trains stacked copies and writes them back (:meth:`write_back`)."""
        return replicas == 1 and device.type == "cpu"

    @staticmethod
    def signature(model: PateGenerator) -> tuple:
        nets = [model.gen_net, model.student] + ([] if model.config.teacher_model == "logistic_refit" else [model.teachers.net])
        return (type(model).__name__, model.config.teacher_model, model.config.hyperparameters, tuple(model.X_.shape),
                model.num_teachers_, model.batch_size_, tuple(len(b) for b in model.teacher_blocks_), shape_signature(*nets))

    # -- helpers ------------------------------------------------------------------------------
    @property
    def _models(self) -> list[PateGenerator]:
        return [self.models[i] for i in self.live]

    def _begin_draws(self, it: int) -> None:
        """Before iteration ``it``'s draws (the counter streams evaluate them all here)."""

    def _end_draws(self) -> None:
        """After the iteration (or its failure): drop what :meth:`_begin_draws` held."""

    def _latents(self, models: Sequence[PateGenerator], n: int, kind: int = TEACHER_Z, rnd: int = 0) -> torch.Tensor:
        """[R, n, d] latent codes of draw ``kind`` in round ``rnd``, each replica's from its own
        ``train_gen`` (in the single fit's order: kind and round are the order itself)."""
        m0 = models[0]
        return stack_draws([m.train_gen for m in models], lambda g: m0.training_latent(n, g))

    def _teacher_rows(self, models: Sequence[PateGenerator], rnd: int) -> torch.Tensor:
        """``[R, k, B]`` row positions of neural teacher round ``rnd`` (each replica's sampler)."""
        return torch.stack([mo.sampler.sample(self.B, generator=mo.train_gen) for mo in models])

    def _real_rows(self, models: Sequence[PateGenerator], rows: torch.Tensor) -> torch.Tensor:
        """``[R·k, B, d]``: the training rows at positions ``rows`` [R, k, B] of each replica's table."""
        return torch.cat([mo.X_[rows[r]] for r, mo in enumerate(models)])

    def _vote_noise(self, rnd: int) -> torch.Tensor | None:
        """The vote noise of student round ``rnd`` for every replica, or None: each replica draws
        its own from ``noise_gen`` when it releases
        (:func:`~pategan_audit.implementations.engine.release_votes`)."""
        return None

    def _compact(self, active: np.ndarray) -> list[int] | None:
        """Drop the stopped replicas (already written back) from every stack; returns the kept
        positions in the old stacks, or None when nothing was dropped."""
        keep = [pos for pos, i in enumerate(self.live) if active[i]]
        if len(keep) == len(self.live):
            return None
        k = self.k
        keep_replicas(self.gen_net, self.opt_generator, 1, keep)
        keep_replicas(self.student, self.opt_student, 1, keep)
        if self.logistic:
            idx = replica_rows(k, keep)
            self.real = self.real[idx]
            self.block_rows = self.block_rows[torch.as_tensor(keep)]
            f = self.teachers.fit
            if f is not None:
                self.teachers.fit = LogisticFit(coef=f.coef[idx], intercept=f.intercept[idx], n_iter=f.n_iter[idx],
                                                converged=f.converged[idx], n_cg=f.n_cg)
        else:
            keep_replicas(self.teachers.net, self.teachers.optimizer, k, keep)
        self.teachers.num_teachers = len(keep) * k
        self.live = [self.live[pos] for pos in keep]
        return keep

    @torch.no_grad()
    def _generate(self, z: torch.Tensor) -> torch.Tensor:
        """``G(z)`` without gradient for latent codes ``z`` [R, n, d]; on the CPU in chunks of
        replicas (see ``_CHUNK_VALUES``), each chunk the stacked forward pass on its slices."""
        net = self.gen_net
        R, n = z.shape[0], z.shape[1]
        chunk = max(1, _CHUNK_VALUES // max(1, n * max(net.sizes)))
        if z.device.type != "cpu" or chunk >= R or net.dropout_p > 0:
            return net(z)
        layers, last = net.layers, len(net.layers) - 1
        out = torch.empty(R, n, net.sizes[-1], dtype=z.dtype)
        for s in range(0, R, chunk):
            h = z[s:s + chunk]
            for i, layer in enumerate(layers):  # BatchedLinear.forward on [r, n, in] inputs
                h = torch.baddbmm(layer.bias[s:s + chunk], h, layer.weight[s:s + chunk])
                h = net.hidden_activation(h) if i < last else net.output_activation(h)
            out[s:s + chunk] = h
        return out

    def _votes(self, u: torch.Tensor) -> torch.Tensor:
        """``n1`` [R, n]: replica r's k teachers vote on its rows ``u[r]`` [n, d] (CPU)."""
        R, n, d = u.shape
        k = self.k
        with torch.no_grad():
            if self.logistic:
                f = self.teachers.fit  # as LogisticFit.decision_function on [n, d]: coef @ x.T + b
                logits = torch.matmul(f.coef.reshape(R, k, d), u.to(torch.float64).mT) + f.intercept.reshape(R, k, 1)
            else:
                logits = self.teachers.logits(u[:, None].expand(R, k, n, d).reshape(R * k, n, d)).reshape(R, k, n)
        return (logits > 0).to(torch.int64).sum(dim=1)

    # -- one iteration ------------------------------------------------------------------------
    def _teacher_phase(self, models: list[PateGenerator], on: np.ndarray) -> None:
        R, k, d, dev = len(models), self.k, self.d, self.device
        if self.logistic:
            m = self.real.shape[1]
            with torch.no_grad():
                fake = self._generate(self._latents(models, k * m, TEACHER_Z, 0).to(dev)).cpu().reshape(R * k, m, d)
            self.teachers.refit(self.real, fake)  # B1: new models every iteration (warm start per replica)
            record_seen(models, self.block_rows, on)
            for mo in models:
                mo.trace.extra["teacher_refits"] += 1
            return
        B = self.B
        for rnd in range(self.n_teacher):
            rows = self._teacher_rows(models, rnd)  # [R, k, B]
            record_seen(models, rows, on)
            real = self._real_rows(models, rows)  # [R·k, B, d]
            with torch.no_grad():
                fake = self._generate(self._latents(models, k * B, TEACHER_Z, rnd).to(dev)).cpu().reshape(R * k, B, d)
            self.teachers.train_step(real, fake)

    def _own_iteration(self, it: int) -> None:
        """One iteration of the one replica on its own networks, with the single fit's kernels."""
        m = self.models[0]
        on = np.ones(1, dtype=bool)
        m.teacher_phase_.run(m, it)  # the model's strategy (implementations.teacher_phase)
        B = self.B
        for _ in range(self.n_student):
            with torch.no_grad():
                u = m.fakes(m.training_latent(B))  # [B, d]
                n1 = m.teachers.votes(u)
            r = release_votes(self.models, n1[None], on)[0]
            student_step(m.student, m.opt_student, m.student.single(u)[:, 0], r)
        fake = m.fakes(m.training_latent(B))
        _generator_step(m.student.single(fake), self.student_params, m.opt_generator)

    def iteration(self, it: int, active: np.ndarray) -> None:
        if self.own:
            self._own_iteration(it)
            return
        self._compact(active)
        models = self._models
        on = np.ones(len(models), dtype=bool)
        B, dev = self.B, self.device
        self._begin_draws(it)
        try:
            self._teacher_phase(models, on)
            for rnd in range(self.n_student):
                with torch.no_grad():
                    u = self.gen_net(self._latents(models, B, STUDENT_Z, rnd).to(dev))  # [R, B, d]
                r = release_votes(models, self._votes(u.cpu()), on, noise=self._vote_noise(rnd)).to(dev)
                student_step(self.student, self.opt_student, self.student(u)[..., 0], r)
            fake = self.gen_net(self._latents(models, B, GENERATOR_Z, 0).to(dev))
            _generator_step(self.student(fake), self.student_params, self.opt_generator)
        finally:
            self._end_draws()

    def write_back(self, r: int) -> None:
        if self.own:  # the model's own networks were trained
            return
        pos = self.live.index(r)
        m = self.models[r]
        unstack_into(self.gen_net, m.gen_net, pos)
        unstack_into(self.student, m.student, pos)
        copy_optimizer_state(self.opt_generator, self.gen_net, m.opt_generator, m.gen_net, pos)
        copy_optimizer_state(self.opt_student, self.student, m.opt_student, m.student, pos)
        sl = replica_slice(self.k, pos)
        if self.logistic:
            f = self.teachers.fit
            if f is not None:
                m.teachers.fit = LogisticFit(coef=f.coef[sl].clone(), intercept=f.intercept[sl].clone(), n_iter=f.n_iter[sl].clone(),
                                             converged=f.converged[sl].clone(), n_cg=f.n_cg)
        else:
            unstack_into(self.teachers.net, m.teachers.net, pos)
            copy_optimizer_state(self.teachers.optimizer, self.teachers.net, m.teachers.optimizer, m.teachers.net, pos)


def uniform_pm1(w: torch.Tensor, *, numpy: bool | None = None) -> torch.Tensor:
    """U(-1, 1) float32 values from 32-bit words: ``2·as_uniform(w) − 1``, computed as
    ``(w >> 8)·2^-23 − 1`` (every step exact in float32: the same values on every device).
    numpy (None: on the CPU): in NumPy, whose element-wise maps over the teachers' ``[R, k·m·d]``
    fakes were faster than torch's CPU kernels (R = 64 on Cervical, loaded machine: 6.2 against
    9.1 ms at one thread, 9.8 against 27 ms at two); else torch ops on the words' device."""
    if numpy if numpy is not None else w.device.type == "cpu":
        v = np.multiply(w.numpy() >> 8, np.float32(2.0 ** -23), dtype=np.float32)
        return torch.from_numpy(np.subtract(v, np.float32(1.0), out=v))
    return (w >> 8).to(torch.float32).mul_(2.0 ** -23).sub_(1.0)


class CounterUpdatedStep(UpdatedStep):
    """:class:`UpdatedStep` with every draw of an iteration from one counter-based call
    (:mod:`.streams`; the module docstring's stream mode). Layout of replica r's words: the
    logistic teachers' fakes ``TEACHER_Z`` (round 0), word ``i·d + c`` for generated row i,
    column c (``k·m`` rows, teacher t's rows ``t·m .. t·m + m − 1``); per neural teacher round
    ``ROWS``, word ``t·m + j`` keys position j of teacher t's block (the B smallest keys pick its
    rows), ``TEACHER_Z`` the ``k·B`` fakes as above; per student round ``STUDENT_Z`` (``B`` rows)
    and ``NOISE``, four words per Laplace value (``[B]``, or ``[B, 2]`` for the two-noise
    argmax); ``GENERATOR_Z`` (``B`` rows). Even one replica trains stacked copies (no single
    fit has these draws, so there is no single-fit kernel to match)."""

    streams: ClassVar[str] = "counter"

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        seeds = [m.config.seed for m in models]
        bad = [s for s in seeds if s is None or isinstance(s, bool) or int(s) < 0]
        if bad:
            raise ValueError(f"streams='counter' keys each replica by its seed; got seed {bad[0]!r}, pass non-negative seeds")
        super().__init__(models, device)
        m0, k, B, d = self.models[0], self.k, self.B, self.d
        if max(self.n_teacher, self.n_student) >= 1 << 16:
            raise ValueError(f"streams='counter' numbers at most 65,535 teacher and student rounds per iteration, got "
                             f"{self.n_teacher} teacher and {self.n_student} student rounds")
        self.scale = float(m0.laplace_scale())
        self.two_noise = self.cfg.vote_mechanism == "two_noise_argmax"
        self.keys = stream_keys([int(s) for s in seeds], STREAM_ID, device)  # [R, 2], every replica of the group
        sizes: dict[int, int] = {}
        if self.logistic:
            sizes[TEACHER_Z << 16] = k * int(self.real.shape[1]) * d  # k·m fakes of d columns
        else:
            for m in self.models:  # what the default sampler checks at every draw, once
                m.sampler.check(B)
            self.table = torch.stack([m.sampler.table for m in self.models])  # [R, k, m] (equal blocks: signature)
            self.X = torch.stack([m.X_ for m in self.models])  # [R, N, d], on the CPU with the teachers
            self.W = int(self.table.shape[-1])
            for rnd in range(self.n_teacher):
                sizes[ROWS << 16 | rnd] = k * self.W
                sizes[TEACHER_Z << 16 | rnd] = k * B * d
        for rnd in range(self.n_student):
            sizes[STUDENT_Z << 16 | rnd] = B * d
            sizes[NOISE << 16 | rnd] = 4 * B * (2 if self.two_noise else 1)
        sizes[GENERATOR_Z << 16] = B * d
        self.sizes = sizes
        self.draws = Draws(self.keys, sizes)
        self._words: dict[int, torch.Tensor] | None = None

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        return False

    def _compact(self, active: np.ndarray) -> list[int] | None:
        kept = super()._compact(active)
        if kept is None:
            return None
        keep = torch.as_tensor(kept)  # positions in the old stacks
        self.keys = self.keys[keep.to(self.keys.device)]
        self.draws = Draws(self.keys, self.sizes, backend=self.draws.backend)
        if not self.logistic:
            self.table, self.X = self.table[keep], self.X[keep]
        return kept

    def _begin_draws(self, it: int) -> None:
        self._words = self.draws(it)  # one call: every live replica, round and kind of this iteration

    def _end_draws(self) -> None:
        self._words = None  # views of one array: never part of a snapshot

    def _latents(self, models: Sequence[PateGenerator], n: int, kind: int = TEACHER_Z, rnd: int = 0) -> torch.Tensor:
        return uniform_pm1(self._words[kind << 16 | rnd]).reshape(len(models), n, self.d)  # as Updated._latent

    def _teacher_rows(self, models: Sequence[PateGenerator], rnd: int) -> torch.Tensor:
        R, k, B = len(models), self.k, self.B
        pos = as_permutation(self._words[ROWS << 16 | rnd].reshape(R, k, self.W), first=B)  # B distinct positions
        return torch.gather(self.table, 2, pos.cpu())

    def _real_rows(self, models: Sequence[PateGenerator], rows: torch.Tensor) -> torch.Tensor:
        R = rows.shape[0]
        return self.X[torch.arange(R)[:, None, None], rows].reshape(R * self.k, self.B, self.d)

    def _vote_noise(self, rnd: int) -> torch.Tensor:
        noise = as_laplace(self._words[NOISE << 16 | rnd], self.scale)  # [R, B] or [R, 2B]
        return noise.reshape(noise.shape[0], self.B, 2) if self.two_noise else noise


def supports(config) -> bool:
    """Every setting of ``updated`` is batched (both teacher models, partitions and
    hyperparameter sets; vote mechanisms, scale conventions and stopping rules are per replica)."""
    return True


def run(models, frames, label, *, device, on_done=None, streams: str = "torch") -> None:
    """Fit ``models`` as one batched computation per stackable group (:func:`~.loop.run_pate_replicas`);
    ``streams``: "torch" (each replica's own generators, the single fit's numbers) or "counter"
    (:class:`CounterUpdatedStep`)."""
    if streams not in STREAM_MODES:
        raise ValueError(f"streams must be one of {STREAM_MODES}, got {streams!r}")
    step = CounterUpdatedStep if streams == "counter" else UpdatedStep
    run_pate_replicas(models, frames, label, step, device=device, on_done=on_done)
