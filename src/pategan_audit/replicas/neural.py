"""Replica step of the presets with persistent neural teachers and a BCE student: borealis,
smartnoise and corrected (the iteration of :mod:`pategan_audit.implementations.neural_loop`,
PATE-GAN Alg. 1 as these implementations run it, ``jordon2019pategan``; audit paper §4).

R replicas with ``k`` teachers each become one teacher ensemble of ``R·k`` networks, one student
of ``R`` networks and one generator of ``R`` networks (:func:`~pategan_audit.replicas.stack.stack_modules`).
Every random draw (teacher batches, latent codes, vote noise) still comes from the replica's own
streams in the single fit's order; the vote counts of all replicas are computed in one pass and
each replica releases its labels with its own noise and accountant
(:func:`~pategan_audit.replicas.loop.release_votes`).
"""
from __future__ import annotations

import copy
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..components.generators import ResidualLayerNormGenerator
from ..components.networks import adam
from ..components.teachers import NeuralTeachers
from ..implementations.neural_loop import NeuralPateGenerator
from .loop import ReplicaStep, record_seen, release_votes, run_pate_replicas
from .stack import StackedBlockSampler, replica_slice, shape_signature, stack_modules, unstack_into

__all__ = ["NeuralStep", "BatchedResidualLayerNormGenerator", "stack_teachers", "replica_votes", "supports", "run"]


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


def generator_step(logits: torch.Tensor, optimizer: torch.optim.Optimizer) -> None:
    """One generator step of R stacked replicas: the student's ``logits`` [R, n] on generated rows
    scored against "real"; each replica's loss is its own mean, summed, so each slice gets the
    gradient of its single fit."""
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits), reduction="none").mean(dim=1).sum()
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


class NeuralStep(ReplicaStep):
    """One iteration of R borealis / smartnoise / corrected replicas (see the module docstring)."""

    def __init__(self, models: Sequence[NeuralPateGenerator], device: torch.device):
        super().__init__(models, device)
        m0 = models[0]
        self.R, self.k, self.B = len(models), m0.num_teachers_, m0.batch_size_
        self.cfg = m0.config
        phase = m0.teacher_phase_  # the single fit's strategy (implementations.teacher_phase)
        if phase.shared_fakes:
            raise ValueError(f"{type(m0).__name__}: no batched step for teachers that share their fakes")
        self.separate, self.n_teacher = phase.separate, phase.rounds
        self.gen_net = stack_generators([m.gen_net for m in models]).to(device)
        self.student = stack_modules([m.student for m in models]).to(device)
        self.teachers = stack_teachers([m.teachers for m in models])
        self.teachers.net.to(device)
        g0, s0 = m0.opt_generator.param_groups[0], m0.opt_student.param_groups[0]
        self.opt_generator = adam(self.gen_net.parameters(), lr=g0["lr"], betas=g0["betas"], weight_decay=g0["weight_decay"])
        self.opt_student = adam(self.student.parameters(), lr=s0["lr"], betas=s0["betas"], weight_decay=s0["weight_decay"])
        self.X = torch.stack([m.X_ for m in models]).to(device)  # [R, N, D]
        self.conditional = bool(getattr(self.cfg, "conditional", False))
        self.sampler = StackedBlockSampler([m.sampler for m in models])
        self.train_gens = [m.train_gen for m in models]

    @staticmethod
    def signature(model: NeuralPateGenerator) -> tuple:
        # the sampler's table width is not part of it: StackedBlockSampler pads tables of random widths
        return (type(model).__name__, tuple(model.X_.shape), model.num_teachers_, model.batch_size_,
                model.sampler.small, shape_signature(model.gen_net, model.student, model.teachers.net))

    # -- per-replica draws, batched maths -------------------------------------------------------
    def _latents(self, n: int) -> torch.Tensor:
        return torch.stack([m._latent(n, m.train_gen, sampling=False) for m in self.models]).to(self.device)

    def _fakes(self, latent: torch.Tensor) -> torch.Tensor:
        out = self.gen_net(latent)
        if self.conditional:  # borealis O5: teachers and student see [G(z, c); c]
            out = torch.cat([out, latent[..., -1:]], dim=-1)
        return out

    def iteration(self, it: int, active: np.ndarray) -> None:
        R, k, B = self.R, self.k, self.B
        ar = torch.arange(R, device=self.device)[:, None, None]
        for _ in range(self.n_teacher):
            rows = self.sampler.sample(B, self.train_gens)  # [R, k, B]
            record_seen(self.models, rows, active, has_rows=self.sampler.has_rows if self.sampler.any_empty else None)
            real = self.X[ar, rows.to(self.device)].reshape(R * k, B, -1)
            with torch.no_grad():
                fake = self._fakes(self._latents(k * B))
            weight = self.sampler.has_rows.reshape(R * k).float().to(self.device) if self.sampler.any_empty else None
            self.teachers.train_step(real, fake.reshape(R * k, B, -1), separate=self.separate, real_weight=weight)
        for _ in range(int(self.cfg.student_iters)):
            with torch.no_grad():
                u = self._fakes(self._latents(B))
            labels = release_votes(self.models, replica_votes(self.teachers, u, k), active).to(self.device)
            logits = self.student(u)[..., 0]
            loss_s = F.binary_cross_entropy_with_logits(logits, labels, reduction="none").mean(dim=1).sum()
            self.opt_student.zero_grad(set_to_none=True)
            loss_s.backward()
            self.opt_student.step()
        generator_step(self.student(self._fakes(self._latents(B)))[..., 0], self.opt_generator)

    def write_back(self, r: int) -> None:
        m = self.models[r]
        write_back_generator(self.gen_net, r, m.gen_net)
        unstack_into(self.student, m.student, r)
        unstack_into(self.teachers.net, m.teachers.net, r)


def supports(config) -> bool:
    """Every setting of borealis, smartnoise and corrected is batched."""
    return True


def run(models, frames, label, *, device, on_done=None) -> None:
    run_pate_replicas(models, frames, label, NeuralStep, device=device, on_done=on_done)
