"""The training step of the presets with persistent neural teachers and a BCE student: borealis,
smartnoise and corrected (PATE-GAN Alg. 1 as these implementations run it, ``jordon2019pategan``;
audit paper §4). It is their one iteration: a single fit
(:class:`~pategan_audit.implementations.neural_loop.NeuralPateGenerator`) runs it at R = 1,
``fit_many`` at any R. One iteration:

1. ``n_T`` rounds: every teacher takes an Adam step on BCE of ``B`` real rows drawn from its own
   block (label 1) and ``B`` generated rows (label 0); all teachers in one batched pass;
2. ``n_S`` rounds: generate ``B`` rows, label them with the noisy teacher vote (one query each,
   charged to the accountant), one student step on ``BCE(S(u), r)``;
3. one generator step on the non-saturating loss ``BCE(S(G(z)), 1)``.

R replicas with ``k`` teachers each become one teacher ensemble of ``R·k`` networks, one student
of ``R`` networks and one generator of ``R`` networks (:func:`~pategan_audit.replicas.stack.stack_modules`).
Every random draw (teacher batches, latent codes, vote noise) still comes from the replica's own
streams in the single fit's order; the vote counts of all replicas are computed in one pass and
each replica releases its labels with its own noise and accountant
(:func:`~pategan_audit.implementations.engine.release_votes`). At R = 1 on the CPU the
step trains the model's own networks with its own optimisers (stacking one replica is the identity) and runs the
kernels of one network: the first layer reads the ``[n, in]`` rows, each loss is one mean, and
smartnoise's generator keeps its ``nn.LayerNorm``; so a fit's numbers do not depend on whether
it ran alone or in a group of one.

Stream mode (``streams="counter"``, :class:`CounterNeuralStep`, issue 40 item 2): the draws of an
iteration come from :mod:`.streams` instead, one Philox evaluation for every replica, round and
kind on ``device``. Each kind and round has its own draw id (``kind << 16 | round``) and each
element its own index in a layout fixed by the replica's own shapes, so a replica's numbers
depend only on its seed, the iteration, the draw and the element: the same at any R, chunking
and device, but not the single fit's (initial weights and partitions still come from the
replica's own streams). Same distributions as the default: B distinct rows of each teacher's
block (with independent assignment, blocks smaller than B filled with replacement, as
:class:`~pategan_audit.components.partition.BlockSampler`), latents uniform (borealis,
smartnoise; borealis' conditional class by the data's class ratios) or normal (corrected), and
Laplace vote noise as the difference of two exponentials.
"""
from __future__ import annotations

import copy
from typing import ClassVar, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..components.generators import ResidualLayerNormGenerator
from ..components.networks import adam
from ..components.teachers import NeuralTeachers
from ..implementations.engine import PateGenerator, release_votes
from .loop import ReplicaStep, record_seen, run_pate_replicas
from .stack import StackedBlockSampler, replica_slice, shape_signature, stack_modules, unstack_into
from .streams import Draws, as_integers, as_laplace, as_normal, as_permutation, as_uniform, stream_keys

__all__ = ["NeuralStep", "CounterNeuralStep", "BatchedResidualLayerNormGenerator", "stack_teachers", "replica_votes",
           "replica_bce", "generator_step", "latent_law", "supports", "run", "STREAM_MODES"]

#: the ``streams`` this family's batched step runs (see :func:`pategan_audit.implementations.fit_many`)
STREAM_MODES = ("torch", "counter")
#: stream id of this family's training draws (the WGAN loop's is 1), and the draw kinds of an
#: iteration; a draw's id is ``kind << 16 | round`` (teacher round, student round, or 0)
STREAM_ID = 2
ROWS, FILL, TEACHER_Z, TEACHER_C, STUDENT_Z, STUDENT_C, NOISE, GENERATOR_Z, GENERATOR_C = range(1, 10)
#: the class draw that goes with each latent draw (borealis' conditional latents)
CLASS_OF = {TEACHER_Z: TEACHER_C, STUDENT_Z: STUDENT_C, GENERATOR_Z: GENERATOR_C}


class BatchedResidualLayerNormGenerator(nn.Module):
    """R smartnoise generators (:class:`ResidualLayerNormGenerator`) with a replica axis: the
    bias-free layers stacked, LayerNorm's affine parameters as ``[R, 1, width]`` tensors."""

    def __init__(self, replicas: Sequence[ResidualLayerNormGenerator]):
        super().__init__()
        self.lin = nn.ModuleList(stack_modules([g.lin[i] for g in replicas]) for i in range(3))
        self.gamma = nn.ParameterList(nn.Parameter(torch.stack([g.norms[i].weight.detach() for g in replicas])[:, None].clone())
                                      for i in range(3))
        self.beta = nn.ParameterList(nn.Parameter(torch.stack([g.norms[i].bias.detach() for g in replicas])[:, None].clone())
                                     for i in range(3))
        self.eps = [float(g.eps) for g in replicas[0].norms]
        self.act = copy.deepcopy(replicas[0].act)

    def _block(self, i: int, h: torch.Tensor) -> torch.Tensor:
        a = self.lin[i](h)
        a = torch.addcmul(self.beta[i], F.layer_norm(a, (a.shape[-1],), eps=self.eps[i]), self.gamma[i])
        return self.act(a)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self._block(0, z) + z
        h = self._block(1, h) + h
        return self._block(2, h)

    @torch.no_grad()
    def write_back(self, r: int, target: ResidualLayerNormGenerator) -> None:
        for i in range(3):
            target.lin[i].weight.copy_(self.lin[i].weight[replica_slice(1, r)])
            target.norms[i].weight.copy_(self.gamma[i][r, 0])
            target.norms[i].bias.copy_(self.beta[i][r, 0])


def stack_generators(nets: Sequence[nn.Module]) -> nn.Module:
    if isinstance(nets[0], ResidualLayerNormGenerator):
        return BatchedResidualLayerNormGenerator(nets)
    return stack_modules(nets)


def write_back_generator(stacked: nn.Module, r: int, target: nn.Module) -> None:
    if isinstance(stacked, BatchedResidualLayerNormGenerator):
        stacked.write_back(r, target)
    else:
        unstack_into(stacked, target, r)


def stack_teachers(teachers: Sequence[NeuralTeachers]) -> NeuralTeachers:
    """One :class:`NeuralTeachers` of ``R·k`` networks holding the replicas' ensembles in order,
    with a fresh Adam of the same settings (no step has been taken when replicas are stacked)."""
    if any(t.optimizer.state for t in teachers):
        raise RuntimeError("teachers can only be stacked before their first optimiser step")
    out = copy.copy(teachers[0])
    out.net = stack_modules([t.net for t in teachers])
    out.num_teachers = sum(t.num_teachers for t in teachers)
    group = teachers[0].optimizer.param_groups[0]
    out.optimizer = adam(out.net.parameters(), lr=group["lr"], betas=group["betas"], weight_decay=group["weight_decay"])
    out._targets_cache = {}
    return out


def replica_bce(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The loss of R stacked replicas on ``logits`` and ``labels`` [R, n]: each replica's mean BCE,
    summed, so each slice gets the gradient of its own loss. At R = 1 the mean itself (one
    reduction, as a single network's loss is computed, to the last bit); there ``logits`` may be
    the one replica's ``[n]`` (the step's R = 1 tensors carry no replica axis)."""
    if logits.dim() == 1:
        return F.binary_cross_entropy_with_logits(logits, labels if labels.dim() == 1 else labels[0])
    if logits.shape[0] == 1:
        return F.binary_cross_entropy_with_logits(logits[0], labels[0])
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none").mean(dim=1).sum()


def generator_step(logits: torch.Tensor, optimizer: torch.optim.Optimizer) -> None:
    """One generator step of R stacked replicas: the student's ``logits`` [R, n] on generated rows
    scored against "real" (:func:`replica_bce`)."""
    loss = replica_bce(logits, torch.ones_like(logits))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def replica_votes(teachers: NeuralTeachers, x: torch.Tensor, k: int) -> torch.Tensor:
    """``n1`` [R, n] of the stacked ensemble (``R·k`` teachers) on per-replica rows ``x`` [R, n, D]:
    replica r's k teachers all read ``x[r]``, as a single fit's teachers read one batch."""
    R, n, D = x.shape
    with torch.no_grad():
        if teachers._slope is None:
            logits = teachers.net(x[:, None].expand(R, k, n, D).reshape(R * k, n, D))[..., 0]
        else:  # broadcast [R, 1, n, D] against the weights viewed [R, k, in, out], as a single fit's [n, D]
            h = x[:, None]
            layers = teachers.net.layers
            for i, layer in enumerate(layers):
                w = layer.weight.detach().reshape(R, k, *layer.weight.shape[1:])
                b = layer.bias.detach().reshape(R, k, *layer.bias.shape[1:])
                h = torch.matmul(h, w) + b
                if i < len(layers) - 1:
                    h = F.leaky_relu(h, teachers._slope) if teachers._slope else F.relu(h)
            logits = h[..., 0].reshape(R * k, n)
    return (logits > 0).to(torch.int64).reshape(R, k, n).sum(dim=1)


def latent_law(model: PateGenerator) -> tuple[str, int, bool]:
    """How ``model.training_latent(n)`` draws its training latents: (``"uniform"``
    or ``"normal"``, the width of the noise part, whether a class column follows, drawn by the
    data's class ratios). borealis: U[0, 1)^z_dim (+ class); smartnoise: U[0, 1)^latent_dim;
    corrected: N(0, 1)^width (implementation notes §borealis.architecture,
    §smartnoise.architecture, §corrected.generation): each preset says it
    (:meth:`~pategan_audit.implementations.neural_loop.NeuralPateGenerator.latent_law`)."""
    return model.latent_law()


class NeuralStep(ReplicaStep):
    """One iteration of R borealis / smartnoise / corrected replicas (see the module docstring),
    each replica drawing from its own torch generators in the single fit's order."""

    #: the stream mode of this step (:data:`STREAM_MODES`)
    streams: ClassVar[str] = "torch"

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        super().__init__(models, device)
        m0 = models[0]
        self.R, self.k, self.B = len(models), m0.num_teachers_, m0.batch_size_
        self.cfg = m0.config
        phase = m0.teacher_phase_  # the model's teacher-phase strategy (implementations.teacher_phase)
        if phase.shared_fakes:
            raise ValueError(f"{type(m0).__name__}: no batched step for teachers that share their fakes")
        self.separate, self.n_teacher = phase.separate, phase.rounds
        self.own = self.trains_own_networks(self.R, device)
        if self.own:
            self.gen_net, self.student, self.teachers = m0.gen_net, m0.student, m0.teachers
            self.opt_generator, self.opt_student = m0.opt_generator, m0.opt_student
        else:
            if self.R == 1:  # on an accelerator: a copy of the model's own networks
                self.gen_net = copy.deepcopy(m0.gen_net).to(device)
            else:
                self.gen_net = stack_generators([m.gen_net for m in models]).to(device)
            self.student = stack_modules([m.student for m in models]).to(device)
            self.teachers = stack_teachers([m.teachers for m in models])
            self.teachers.net.to(device)
            g0, s0 = m0.opt_generator.param_groups[0], m0.opt_student.param_groups[0]
            self.opt_generator = adam(self.gen_net.parameters(), lr=g0["lr"], betas=g0["betas"], weight_decay=g0["weight_decay"])
            self.opt_student = adam(self.student.parameters(), lr=s0["lr"], betas=s0["betas"], weight_decay=s0["weight_decay"])
        self.X = torch.stack([m.X_ for m in models]).to(device)  # [R, N, D]
        self.X0 = self.X[0] if self.R == 1 else None  # R = 1: the rows, indexed without the replica axis
        self.conditional = bool(getattr(self.cfg, "conditional", False))
        self.sampler = StackedBlockSampler([m.sampler for m in models])
        self.train_gens = [m.train_gen for m in models]

    @staticmethod
    def trains_own_networks(replicas: int, device: torch.device) -> bool:
        """Whether the step trains the model's own networks with its own optimisers (one replica
        on the CPU: stacking one replica is the identity, and the model is current after every
        iteration); else it trains stacked copies (one replica on an accelerator: copies there)
        and writes them back (:meth:`write_back`)."""
        return replicas == 1 and device.type == "cpu"

    @staticmethod
    def signature(model: PateGenerator) -> tuple:
        # the sampler's table width is not part of it: StackedBlockSampler pads tables of random widths
        return (type(model).__name__, tuple(model.X_.shape), model.num_teachers_, model.batch_size_,
                model.sampler.small, shape_signature(model.gen_net, model.student, model.teachers.net))

    # -- per-replica draws, batched maths -------------------------------------------------------
    def _begin_draws(self, it: int) -> None:
        """Before iteration ``it``'s draws (the counter streams evaluate them all here)."""

    def _end_draws(self) -> None:
        """After the iteration (or its failure): drop what :meth:`_begin_draws` held."""

    def _teacher_rows(self, rnd: int) -> torch.Tensor:
        """``[R, k, B]`` row positions of teacher round ``rnd``."""
        if self.R == 1:  # the replica's own sampler: the same draws and rows, without the padding
            return self.sampler.samplers[0].sample(self.B, generator=self.train_gens[0])[None]
        return self.sampler.sample(self.B, self.train_gens)

    def _latents(self, n: int, kind: int = TEACHER_Z, rnd: int = 0) -> torch.Tensor:
        """``[R, n, width]`` training latents of draw ``kind`` in round ``rnd`` (each replica's
        ``train_gen``, in the single fit's order: kind and round are the order itself); at R = 1
        the replica's own ``[n, width]`` (the R = 1 tensors of this step carry no replica axis)."""
        if self.R == 1:
            z = self.models[0].training_latent(n)
            return z if self.own else z.to(self.device)
        return torch.stack([m.training_latent(n) for m in self.models]).to(self.device)

    def _vote_noise(self, rnd: int) -> torch.Tensor | None:
        """The vote noise of student round ``rnd`` for every replica, or None: each replica draws
        its own from ``noise_gen`` when it releases
        (:func:`~pategan_audit.implementations.engine.release_votes`)."""
        return None

    def _net(self, net: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """``net`` on per-replica rows ``x`` [R, n, in] -> [R, n, out]. At R = 1 rows and result
        are ``[n, in]`` -> ``[n, out]``, as one network computes them (its first layer a broadcast
        product plus bias, not a batched one: other kernels, other rounding)."""
        if self.R != 1:
            return net(x)
        out = net(x)
        return out[0] if out.dim() == 3 else out  # a stacked copy of one replica (an accelerator) adds the axis

    def _votes(self, u: torch.Tensor) -> torch.Tensor:
        """Vote counts ``n1`` [R, n] of each replica's teachers on its rows ``u`` [R, n, D] (at
        R = 1, ``[n, D]``)."""
        if self.R == 1:
            return self.teachers.votes(u)[None]
        return replica_votes(self.teachers, u, self.k)

    def _fakes(self, latent: torch.Tensor) -> torch.Tensor:
        """Generated rows ``[R, n, D]`` (teacher-input space) from ``latent`` [R, n, width]; at R = 1
        ``[n, D]`` from ``[n, width]`` (or the counter streams' ``[1, n, width]``), computed on
        ``[n, ...]`` tensors throughout, as one generator computes them (the layout of a tensor
        decides which elements an element-wise kernel rounds in its vector body)."""
        if self.R == 1:
            z = latent[0] if latent.dim() == 3 else latent
            out = self.gen_net(z)
            out = out[0] if out.dim() == 3 else out
            if self.conditional:
                out = torch.cat([out, z[:, -1:]], dim=1)
            return out
        out = self.gen_net(latent)
        if self.conditional:  # borealis O5: teachers and student see [G(z, c); c]
            out = torch.cat([out, latent[..., -1:]], dim=-1)
        return out

    def iteration(self, it: int, active: np.ndarray) -> None:
        R, k, B = self.R, self.k, self.B
        ar = torch.arange(R, device=self.device)[:, None, None] if R > 1 else None
        self._begin_draws(it)
        try:
            for rnd in range(self.n_teacher):
                rows = self._teacher_rows(rnd)  # [R, k, B]
                record_seen(self.models, rows, active, has_rows=self.sampler.has_rows if self.sampler.any_empty else None)
                at = rows if self.own else rows.to(self.device)
                real = (self.X0[at[0]] if R == 1 else self.X[ar, at]).reshape(R * k, B, -1)
                with torch.no_grad():
                    fake = self._fakes(self._latents(k * B, TEACHER_Z, rnd))
                weight = self.sampler.has_rows.reshape(R * k).float().to(self.device) if self.sampler.any_empty else None
                self.teachers.train_step(real, fake.reshape(R * k, B, -1), separate=self.separate, real_weight=weight)
            for rnd in range(int(self.cfg.student_iters)):
                with torch.no_grad():
                    u = self._fakes(self._latents(B, STUDENT_Z, rnd))
                # labels [R, n]: every active replica's noisy release of its teachers' votes
                labels = release_votes(self.models, self._votes(u), active, noise=self._vote_noise(rnd))
                labels = labels if self.own else labels.to(self.device)
                loss_s = replica_bce(self._net(self.student, u)[..., 0], labels)
                self.opt_student.zero_grad(set_to_none=True)
                loss_s.backward()
                self.opt_student.step()
            fake = self._fakes(self._latents(B, GENERATOR_Z, 0))
            generator_step(self._net(self.student, fake)[..., 0], self.opt_generator)
        finally:
            self._end_draws()

    def write_back(self, r: int) -> None:
        if self.own:  # the model's own networks were trained
            return
        m = self.models[r]
        if self.R == 1:
            unstack_into(self.gen_net, m.gen_net, r)
        else:
            write_back_generator(self.gen_net, r, m.gen_net)
        unstack_into(self.student, m.student, r)
        unstack_into(self.teachers.net, m.teachers.net, r)


class CounterNeuralStep(NeuralStep):
    """:class:`NeuralStep` with every draw of an iteration from one counter-based call
    (:mod:`.streams`; the module docstring's stream mode). Layout of replica r's words, per
    teacher round: ``ROWS``, word ``t·W_r + j`` keys position j of teacher t's block (``W_r``:
    the replica's own table width, so padding to the group's widest table changes nothing);
    ``FILL``, ``t·B + b`` the with-replacement row b of a block smaller than B; latents
    ``i·width + c`` (row i, column c), their class ``i``; per student round ``NOISE``, four
    words per Laplace value (``[B]``, or ``[B, 2]`` for the two-noise argmax)."""

    streams: ClassVar[str] = "counter"

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        super().__init__(models, device)
        seeds = [m.config.seed for m in self.models]
        bad = [s for s in seeds if s is None or isinstance(s, bool) or int(s) < 0]
        if bad:
            raise ValueError(f"streams='counter' keys each replica by its seed; got seed {bad[0]!r}, pass non-negative seeds")
        m0, R, k, B, dev = self.models[0], self.R, self.k, self.B, device
        n_student = int(self.cfg.student_iters)
        if max(self.n_teacher, n_student) >= 1 << 16:
            raise ValueError(f"streams='counter' numbers at most 65,535 teacher and student rounds per iteration, got "
                             f"teacher_iters={self.n_teacher}, student_iters={n_student}")
        self.law, self.width, self.conditional_latent = latent_law(m0)
        # the stacked sampler's tables on the device: each replica's own width W_r, padded to the widest
        samplers = self.sampler.samplers
        for s in samplers:  # what the default sampler checks at every draw, once
            s.check(B)
        self.table = self.sampler.table.to(dev)
        self.sizes = self.sampler.sizes.to(dev)
        self.W = int(self.table.shape[-1])
        widths = torch.as_tensor(self.sampler.widths, dtype=torch.int64, device=dev)
        if bool((widths == self.W).all()):
            self.row_words = None
        else:  # [R, k, W]: word t·W_r + min(j, W_r − 1) (positions j >= W_r are padding, masked by sizes)
            j = torch.arange(self.W, device=dev)
            t = torch.arange(k, device=dev)[:, None]
            self.row_words = (t * widths[:, None, None] + torch.minimum(j, widths[:, None, None] - 1)).reshape(R, k * self.W)
        self.fill = any(s.needs_fill(B) for s in samplers)
        if self.conditional_latent:  # borealis: the class by inverse CDF of each replica's class ratios
            C = max(len(m.class_values_) for m in self.models)
            cum = torch.full((R, max(C - 1, 0)), 2.0, dtype=torch.float64)
            values = torch.zeros((R, C), dtype=torch.float32)
            for r, m in enumerate(self.models):
                ratios = torch.as_tensor(m.class_ratios_, dtype=torch.float64)
                cum[r, :len(ratios) - 1] = torch.cumsum(ratios, 0)[:-1]
                values[r, :len(ratios)] = torch.as_tensor(m.class_values_, dtype=torch.float32)
            self.class_cum, self.class_values = cum.to(dev), values.to(dev)
        self.two_noise = self.cfg.vote_mechanism == "two_noise_argmax"
        self.scale = float(m0.laplace_scale())
        per_row = self.width
        sizes: dict[int, int] = {}

        def latents(kind: int, rnd: int, n: int) -> None:
            count = n * per_row
            sizes[kind << 16 | rnd] = count + count % 2 if self.law == "normal" else count
            if self.conditional_latent:
                sizes[CLASS_OF[kind] << 16 | rnd] = n

        for rnd in range(self.n_teacher):
            sizes[ROWS << 16 | rnd] = k * self.W
            if self.fill:
                sizes[FILL << 16 | rnd] = k * B
            latents(TEACHER_Z, rnd, k * B)
        for rnd in range(n_student):
            latents(STUDENT_Z, rnd, B)
            sizes[NOISE << 16 | rnd] = 4 * B * (2 if self.two_noise else 1)
        latents(GENERATOR_Z, 0, B)
        self.draws = Draws(stream_keys([int(s) for s in seeds], STREAM_ID, dev), sizes)
        self._words: dict[int, torch.Tensor] | None = None

    def _begin_draws(self, it: int) -> None:
        self._words = self.draws(it)  # one call: every replica, round and kind of this iteration

    def _end_draws(self) -> None:
        self._words = None  # views of one array: never part of a snapshot

    def _teacher_rows(self, rnd: int) -> torch.Tensor:
        R, k, B, W = self.R, self.k, self.B, self.W
        w = self._words[ROWS << 16 | rnd]
        if self.row_words is not None:
            w = torch.gather(w, 1, self.row_words)
        pos = as_permutation(w.reshape(R, k, W), self.sizes, first=B)  # B distinct positions of each block
        if B > W:  # every block is smaller than B: all rows come from the fill below
            pos = torch.zeros((R, k, B), dtype=torch.int64, device=w.device)
        if self.fill:
            small = (self.sizes < B)[..., None]
            drawn = as_integers(self._words[FILL << 16 | rnd].reshape(R, k, B), self.sizes.clamp(min=1)[..., None])
            pos = torch.where(small, drawn, pos)
        return torch.gather(self.table, 2, pos)

    def _latents(self, n: int, kind: int = TEACHER_Z, rnd: int = 0) -> torch.Tensor:
        w = self._words[kind << 16 | rnd]
        count = n * self.width
        z = (as_uniform(w) if self.law == "uniform" else as_normal(w)[:, :count]).reshape(self.R, n, self.width)
        if not self.conditional_latent:
            return z
        u = self._words[CLASS_OF[kind] << 16 | rnd].to(torch.float64) * 2.0 ** -32  # [R, n] in [0, 1)
        idx = (u[..., None] >= self.class_cum[:, None, :]).sum(dim=-1)
        c = torch.gather(self.class_values, 1, idx)
        return torch.cat([z, c[..., None]], dim=-1)

    def _vote_noise(self, rnd: int) -> torch.Tensor:
        noise = as_laplace(self._words[NOISE << 16 | rnd], self.scale)  # [R, B] or [R, 2B]
        return noise.reshape(self.R, self.B, 2) if self.two_noise else noise


def supports(config) -> bool:
    """Every setting of borealis, smartnoise and corrected is batched."""
    return True


def run(models, frames, label, *, device, on_done=None, streams: str = "torch") -> None:
    """Fit ``models`` as one batched computation per stackable group (:func:`~.loop.run_pate_replicas`);
    ``streams``: "torch" (each replica's own generators, the single fit's numbers) or "counter"
    (:class:`CounterNeuralStep`)."""
    if streams not in STREAM_MODES:
        raise ValueError(f"streams must be one of {STREAM_MODES}, got {streams!r}")
    step = CounterNeuralStep if streams == "counter" else NeuralStep
    run_pate_replicas(models, frames, label, step, device=device, on_done=on_done)
