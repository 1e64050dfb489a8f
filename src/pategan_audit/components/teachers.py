"""Teacher ensembles: persistent neural teachers (one batched network) and logistic-regression
teachers re-fitted every iteration (bugs B1/B2), behind one interface.

PATE-GAN (ICLR 2019, ``jordon2019pategan``) Alg. 1, teacher update: each teacher ``T_i``
minimises the binary cross-entropy of its own real rows (label 1) against generated rows
(label 0). Votes are hard (implementation notes §common.votes): ``sigmoid(logit) > 0.5``, i.e. ``logit > 0``.

Both classes expose ``num_teachers``, ``logits(x) -> [k, n]``, ``predict(x) -> [k, n]`` (0/1),
``votes(x) -> [n]`` (``n1``) and ``cross_entropy(real_sets, fake) -> [k, J]`` (implementation notes §traces.losses: BCE of teacher t on real subset j labelled 1 together with the fake rows labelled 0).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .networks import BatchedMLP, adam
from .votes import count_votes

__all__ = ["NeuralTeachers", "LogisticTeachers", "bce_union"]

_LEAKY_GRAD = torch.ops.aten.leaky_relu_backward  # (grad, input, slope, self_is_result)
_RELU_GRAD = torch.ops.aten.threshold_backward  # (grad, input, threshold): grad where input > 0


def bce_union(logits_real: torch.Tensor, logits_fake: torch.Tensor) -> torch.Tensor:
    """Mean BCE over the union of ``real`` rows (label 1) and ``fake`` rows (label 0), per model:
    logits ``[k, m]`` and ``[k, n]`` -> ``[k]``."""
    total = F.softplus(-logits_real).sum(dim=1) + F.softplus(logits_fake).sum(dim=1)
    return total / (logits_real.shape[1] + logits_fake.shape[1])


class _TeacherBase:
    num_teachers: int

    def logits(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """Hard votes ``[k, n]`` (int64): 1 where the teacher's probability of "real" is > 0.5."""
        with torch.no_grad():  # a hard vote has no gradient
            return (self.logits(x) > 0).to(torch.int64)

    def votes(self, x: torch.Tensor) -> torch.Tensor:
        """``n1`` per generated row: how many teachers say "real" -> ``[n]`` int64."""
        return count_votes(self.predict(x))

    def cross_entropy(self, real_sets: Sequence[torch.Tensor], fake: torch.Tensor) -> np.ndarray:
        """``CE[t, j]`` = BCE of teacher t on ``real_sets[j]`` (label 1) ∪ ``fake`` (label 0)."""
        with torch.no_grad():
            lf = self.logits(fake)
            cols = [bce_union(self.logits(r), lf) for r in real_sets]
        return torch.stack(cols, dim=1).to(torch.float64).numpy()


def _matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` (batched, broadcasting) through NumPy's BLAS on zero-copy views: the same
    float32 product as ``torch.matmul`` up to summation order. On the AMD EPYC machine of the
    benchmarks, NumPy's OpenBLAS sgemm ran ~1.3x faster single-threaded than torch's MKL for the
    teacher shapes (e.g. [11, 128, 179] @ [11, 179, 119]). Tensors on an accelerator (a batched fit
    with ``device="cuda"``) use ``torch.matmul`` there."""
    if a.device.type != "cpu" or b.device.type != "cpu":
        return torch.matmul(a.detach(), b.detach())
    return torch.from_numpy(np.matmul(a.detach().numpy(), b.detach().numpy()))


class NeuralTeachers(_TeacherBase):
    """``k`` persistent neural teachers trained together (borealis, smartnoise, corrected; the fix
    of B1/B2).

    sizes: ``[in, hidden..., 1]``; the output layer has no activation here because the loss is
    computed on logits (``BCEWithLogits`` = sigmoid + BCE, numerically safer; identical except
    where PyTorch's ``BCELoss`` clamps ``log`` at -100). One Adam optimiser holds all teachers'
    parameters: Adam is element-wise, so this equals k separate optimisers.

    With ReLU / leaky-ReLU hidden layers (every preset's teachers) the forward and backward
    passes of all k teachers run by hand, without an autograd graph: one batched product per
    layer and direction, gradients written straight into ``.grad``, then the fused Adam step.
    It computes what autograd computes (the tests compare with k separate ``nn.Module``
    teachers); other activations, and logits taken with gradients enabled, use autograd.
    """

    def __init__(
        self,
        num_teachers: int,
        sizes: Sequence[int],
        *,
        hidden_activation: str,
        weight_init: str,
        bias_init: float | str,
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.999),
        weight_decay: float = 0.0,
        generator: torch.Generator | None = None,
    ):
        if sizes[-1] != 1:
            raise ValueError(f"a teacher outputs one logit; sizes must end with 1, got {list(sizes)}")
        self.num_teachers = int(num_teachers)
        self.net = BatchedMLP(num_teachers, sizes, hidden_activation=hidden_activation, output_activation="identity",
                              weight_init=weight_init, bias_init=bias_init, generator=generator)
        self.optimizer = adam(self.net.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
        act = self.net.hidden_activation
        # negative-side slope of a piecewise-linear hidden activation; None: use autograd
        self._slope = 0.0 if isinstance(act, nn.ReLU) else float(act.negative_slope) if isinstance(act, nn.LeakyReLU) else None
        self._targets_cache: dict[tuple[int, int, str], tuple[torch.Tensor, torch.Tensor]] = {}

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        if self._slope is None or torch.is_grad_enabled():
            return self.net(x)[..., 0]
        return self._forward(x)[0]

    def _forward(self, x: torch.Tensor):
        """Logits [k, n] of ``x`` ([k, n, D] or shared [n, D]), the input of every layer and the
        pre-activations of the hidden layers (kept for the backward pass)."""
        layers, slope = self.net.layers, self._slope
        inputs, pre = [x], []
        h = x
        for i, layer in enumerate(layers):
            a = _matmul(h, layer.weight)
            a += layer.bias.detach()
            if i < len(layers) - 1:
                pre.append(a)
                h = F.leaky_relu(a, slope) if slope else F.relu(a)
                inputs.append(h)
        return a[..., 0], inputs, pre

    def _targets(self, n_real: int, n_fake: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """Per-row sign (-1 real, +1 fake) and weight (1/size of its group): a teacher's loss is
        ``sum_rows weight * softplus(sign * logit)`` = mean BCE(real, 1) + mean BCE(fake, 0)."""
        key = (n_real, n_fake, str(device))
        if key not in self._targets_cache:
            sign = torch.cat([-torch.ones(n_real), torch.ones(n_fake)])
            weight = torch.cat([torch.full((n_real,), 1.0 / max(n_real, 1)), torch.full((n_fake,), 1.0 / max(n_fake, 1))])
            self._targets_cache[key] = (sign.to(device), weight.to(device))
        return self._targets_cache[key]

    def _step(self, x: torch.Tensor, n_real: int, real_weight: torch.Tensor | None = None) -> torch.Tensor:
        """One Adam step of every teacher on its rows ``x`` [k, n, D], the first ``n_real``
        labelled 1 and the rest 0; returns the per-teacher losses [k]. ``real_weight`` [k]
        scales each teacher's real term (0 for a teacher whose block is empty)."""
        sign, weight = self._targets(n_real, x.shape[1] - n_real, x.device)
        if real_weight is not None:
            weight = weight.expand(x.shape[0], -1).clone()
            weight[:, :n_real] *= real_weight.to(weight.dtype).unsqueeze(1)
        if self._slope is None:
            per_teacher = (F.softplus(self.net(x)[..., 0] * sign) * weight).sum(dim=1)
            self.optimizer.zero_grad(set_to_none=True)
            per_teacher.sum().backward()
            self.optimizer.step()
            return per_teacher.detach()
        layers, slope = self.net.layers, self._slope
        with torch.no_grad():
            z, inputs, pre = self._forward(x)
            signed = z * sign
            per_teacher = (F.softplus(signed) * weight).sum(dim=1)
            # d loss / d logit = sign * weight * sigmoid(sign * logit)
            delta = (torch.sigmoid(signed) * (sign * weight)).unsqueeze(-1)
            for i in range(len(layers) - 1, -1, -1):
                layer = layers[i]
                layer.weight.grad = _matmul(inputs[i].mT, delta)
                layer.bias.grad = delta.sum(dim=1, keepdim=True)
                if i > 0:  # through the activation with the kernels autograd itself uses
                    delta = _matmul(delta, layer.weight.mT)
                    delta = _LEAKY_GRAD(delta, pre[i - 1], slope, False) if slope else _RELU_GRAD(delta, pre[i - 1], 0.0)
        self.optimizer.step()
        return per_teacher

    def train_step(self, real: torch.Tensor, fake: torch.Tensor, *, separate: bool = False,
                   real_weight: torch.Tensor | None = None) -> torch.Tensor:
        """Update all teachers on ``real`` ``[k, B, D]`` (label 1) and ``fake`` ``[k, B', D]``
        (label 0). ``separate=False``: one step on mean BCE(real) + mean BCE(fake) (smartnoise
        backpropagates both terms, then steps once); ``separate=True``: a step on the real term,
        then a step on the fake term (borealis' loop does exactly this). ``real_weight`` [k]
        (0/1): a teacher with weight 0 ignores its real rows (an empty block under independent
        assignment trains on fakes only). Returns the losses [k]."""
        if separate:
            return self._step(real, real.shape[1], real_weight) + self._step(fake, 0)
        return self._step(torch.cat([real, fake], dim=1), real.shape[1], real_weight)


class LogisticTeachers(_TeacherBase):
    """``k`` scikit-learn-equivalent ``LogisticRegression`` teachers (L2, C = 1, intercept),
    re-created and fitted from scratch by :meth:`refit` (B1 updated, B2 synthcity).

    The fit is the exact batched solver :func:`pategan_audit.components.logistic.fit_logistic_batched`
    (converged in float64). ``fit`` holds the current :class:`~pategan_audit.components.logistic.LogisticFit`;
    a *new* object every refit, mirroring the new sklearn objects upstream. ``warm_start`` starts
    Newton's method at the previous iteration's coefficients: the objective is strictly convex,
    so the result is the same unique optimum (to the solver's 1e-10 gradient tolerance), reached
    in fewer steps; nothing else carries over between iterations.
    """

    def __init__(self, num_teachers: int, *, C: float = 1.0, warm_start: bool = True, group: int | None = None):
        self.num_teachers = int(num_teachers)
        self.C = float(C)
        self.warm_start = bool(warm_start)
        self.group = None if group is None else int(group)
        if self.group is not None and self.group < 1:
            raise ValueError(f"group must be a positive number of problems, got {group}")
        self.fit = None

    def refit(self, real: torch.Tensor, fake: torch.Tensor) -> None:
        """Fit every teacher (see :meth:`_refit`). With ``group``, the teachers are solved in
        independent batches of ``group`` consecutive problems: the replica axis stacks R
        replicas' k teachers and passes ``group = k·c``, so a batch's Newton iterations are not
        held up by the slowest of all R·k problems, and with ``c = 1`` every replica's problems
        are solved exactly as its single fit solves them (same batch, same solver path)."""
        from .logistic import LogisticFit

        n = real.shape[0]
        if self.group is None or self.group >= n:
            return self._refit(real, fake)
        prev = self.fit
        parts = []
        for s in range(0, n, self.group):
            sl = slice(s, min(n, s + self.group))
            self.fit = None if prev is None else LogisticFit(coef=prev.coef[sl], intercept=prev.intercept[sl],
                                                             n_iter=prev.n_iter[sl], converged=prev.converged[sl])
            self._refit(real[sl], fake[sl])
            parts.append(self.fit)
        self.fit = LogisticFit(coef=torch.cat([p.coef for p in parts]), intercept=torch.cat([p.intercept for p in parts]),
                               n_iter=torch.cat([p.n_iter for p in parts]), converged=torch.cat([p.converged for p in parts]),
                               n_cg=sum(p.n_cg for p in parts))

    def _refit(self, real: torch.Tensor, fake: torch.Tensor) -> None:
        """Fit every teacher on its rows: ``real`` ``[k, m, D]`` (label 1), ``fake`` ``[k, m', D]`` (label 0).

        When a teacher has fewer rows than features (synthcity's encoded width is ~6x the column
        count), the problem is solved in the span of its rows: the L2-penalised optimum satisfies
        ``w = -C Xᵀ(p - y)``, so ``w = Q β`` with ``Q`` an orthonormal basis of that span (thin QR
        of ``Xᵀ``), and ``‖w‖² = ‖β‖²`` makes the reduced problem on ``X Q`` the same objective.
        Exact, and it turns an O(k·m·D²) Newton step into O(k·m³)."""
        from .logistic import LogisticFit, fit_logistic_batched

        k, m = real.shape[0], real.shape[1]
        X = torch.cat([real.detach(), fake.detach()], dim=1)  # float32 stays float32 (see fit_logistic_batched)
        y = np.concatenate([np.ones((k, m)), np.zeros((k, fake.shape[1]))], axis=1)
        prev = self.fit if self.warm_start and self.fit is not None and self.fit.coef.shape[1] == X.shape[2] else None
        if X.shape[1] >= X.shape[2]:
            self.fit = fit_logistic_batched(X, y, C=self.C, fit_intercept=True, init=prev)
            return
        X = X.to(torch.float64)
        Q = torch.linalg.qr(X.transpose(1, 2), mode="reduced").Q  # [k, D, n]
        init = None
        if prev is not None:
            beta0 = torch.bmm(prev.coef.unsqueeze(1), Q).squeeze(1)
            init = LogisticFit(coef=beta0, intercept=prev.intercept, n_iter=prev.n_iter, converged=prev.converged)
        reduced = fit_logistic_batched(torch.bmm(X, Q), y, C=self.C, fit_intercept=True, init=init)
        coef = torch.bmm(Q, reduced.coef.unsqueeze(-1)).squeeze(-1)
        self.fit = LogisticFit(coef=coef, intercept=reduced.intercept, n_iter=reduced.n_iter, converged=reduced.converged)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        if self.fit is None:
            raise RuntimeError("the logistic teachers have not been fitted yet")
        return self.fit.decision_function(x.detach().to(torch.float64))
