"""Stacking R single-model networks into one network with a leading replica axis, and back.

Every network of the presets is built from :class:`~pategan_audit.components.networks.BatchedLinear`
layers whose weights already carry a leading model axis (``[k, in, out]``: the k teachers of one
PATE-GAN, or 1 for a generator or student). R independent models are then the same layers with
``R·k`` models: parameters concatenated along that axis (:func:`stack_modules`), trained as one,
and copied back slice by slice (:func:`unstack_into`). Because the loss of the stack is the *sum*
of the replicas' losses, each replica's gradient is exactly its own, and element-wise optimisers
(Adam, RMSProp) update each slice exactly as a separate optimiser would.

The replicas are first built one by one with their own seeds (so their initial weights, partitions
and pre-processing are those of a single fit) and only then stacked.
"""
from __future__ import annotations

import copy
from typing import Sequence

import torch
from torch import nn

from ..components.networks import BatchedLinear
from ..components.partition import pick_rows

__all__ = ["solver_replicas", "replica_rows", "keep_rows", "keep_replicas", "state_slice", "copy_optimizer_state", "stack_modules", "unstack_into", "replica_slice", "stack_draws", "shape_signature"]


def solver_replicas(*, k: int, rows: int, width: int) -> int:
    """Replicas whose logistic-regression teachers (updated, synthcity) are solved in one
    batch of the exact solver. The solver's batch shares its iteration count and precision
    switches, so a batch of all R·k problems waits for the slowest of them: for problems of real
    size (Cervical: k·rows·width ≈ 4·10⁴ values) one replica per batch was 2.3x faster than one
    batch of 32; for tiny ones (the worst-case table: ≈ 10² values) per-call overhead dominates
    and one batch for all is 5x faster. Rule: ``max(1, 5·10⁴ // (k·rows·width))`` replicas;
    the run options' ``solver_replicas`` (``$PATEGAN_AUDIT_SOLVER_REPLICAS`` at an entry point)
    overrides it. With one replica per batch each replica's problems are solved exactly as in its
    single fit."""
    from ..runner import current_options

    given = current_options().solver_replicas  # checked positive by RunOptions
    return int(given) if given is not None else max(1, 50_000 // max(1, int(k) * int(rows) * int(width)))


def _check_same_structure(modules: Sequence[nn.Module]) -> list[str]:
    names = [n for n, _ in modules[0].named_parameters()]
    shapes = [tuple(p.shape) for _, p in modules[0].named_parameters()]
    for m in modules[1:]:
        if [n for n, _ in m.named_parameters()] != names or [tuple(p.shape) for _, p in m.named_parameters()] != shapes:
            raise ValueError("replicas to stack must have the same architecture (group them by shape first)")
    return names


def stack_modules(modules: Sequence[nn.Module]) -> nn.Module:
    """One module holding all ``modules`` along the leading axis of every parameter.

    Every parameter must have a leading model axis (``BatchedLinear``); modules with other
    parameters (e.g. ``nn.LayerNorm``) need a batched counterpart of their own. The result is a
    deep copy of ``modules[0]`` whose ``BatchedLinear`` layers hold ``R·k`` models."""
    if len(modules) == 0:
        raise ValueError("stack_modules needs at least one module")
    names = _check_same_structure(modules)
    for sub in modules[0].modules():
        if not isinstance(sub, BatchedLinear) and any(True for _ in sub.parameters(recurse=False)):
            raise TypeError(f"{type(sub).__name__} has parameters without a model axis; give it a batched counterpart")
    out = copy.deepcopy(modules[0])
    params = dict(out.named_parameters())
    with torch.no_grad():
        for name in names:
            parts = [dict(m.named_parameters())[name].detach() for m in modules]
            params[name].data = torch.cat(parts, dim=0).contiguous()
    for sub in out.modules():
        if isinstance(sub, BatchedLinear):
            sub.num_models = int(sub.weight.shape[0])
    return out


def replica_slice(per_replica: int, r: int) -> slice:
    """The rows of replica ``r`` along a stacked axis holding ``per_replica`` models each."""
    return slice(r * per_replica, (r + 1) * per_replica)


@torch.no_grad()
def unstack_into(stacked: nn.Module, target: nn.Module, r: int) -> None:
    """Copy replica ``r``'s slice of every parameter of ``stacked`` into ``target`` (in place)."""
    src = dict(stacked.named_parameters())
    for name, p in target.named_parameters():
        per = p.shape[0]
        p.copy_(src[name][replica_slice(per, r)])


def stack_draws(generators: Sequence[torch.Generator], draw) -> torch.Tensor:
    """``torch.stack([draw(g) for g in generators])``: one draw per replica from its own stream,
    in the order a single fit would make it, so replica i sees the numbers of a single fit."""
    return torch.stack([draw(g) for g in generators])


def shape_signature(*modules: nn.Module) -> tuple:
    """Parameter shapes of ``modules``: replicas with equal signatures can be stacked."""
    return tuple(tuple(p.shape) for m in modules for p in m.parameters())


class StackedBlockSampler:
    """R :class:`~pategan_audit.components.partition.BlockSampler` s drawn at once: each
    replica's random keys (and, where its blocks are smaller than ``B``, its with-replacement
    fill) come from its own stream exactly as the single sampler draws them, then one masked
    ``topk`` and ``gather`` for all replicas (:func:`~pategan_audit.components.partition.pick_rows`).
    Tables of different widths (independent assignment: random block sizes) are padded with
    masked entries. Returns ``[R, k, B]``; ``has_rows`` is ``[R, k]``."""

    def __init__(self, samplers: Sequence):
        self.samplers = list(samplers)
        R, k = len(self.samplers), self.samplers[0].table.shape[0]
        width = max(s.table.shape[1] for s in self.samplers)
        self.widths = [s.table.shape[1] for s in self.samplers]
        self.table = torch.zeros((R, k, width), dtype=torch.int64)
        self.invalid = torch.ones((R, k, width), dtype=torch.bool)
        for r, s in enumerate(self.samplers):
            self.table[r, :, :s.table.shape[1]] = s.table
            self.invalid[r, :, :s.table.shape[1]] = s.invalid
        self.sizes = torch.stack([s.sizes for s in self.samplers])
        self.has_rows = self.sizes > 0
        self.any_empty = bool((~self.has_rows).any())

    def sample(self, batch_size: int, generators: Sequence[torch.Generator]) -> torch.Tensor:
        if len({s.small for s in self.samplers}) > 1:
            raise ValueError("stacked samplers must share one small-block rule")
        for s in self.samplers:
            s.check(batch_size)
        R, k, _ = self.table.shape
        keys = torch.full(self.table.shape, 2.0)
        fill = None
        for r, (s, g) in enumerate(zip(self.samplers, generators)):
            keys[r, :, :self.widths[r]] = torch.rand(s.table.shape, generator=g)  # = the single sampler's draw
            if s.needs_fill(batch_size):
                if fill is None:
                    fill = torch.zeros((R, k, batch_size))
                fill[r] = torch.rand((k, batch_size), generator=g)
        ordered = self.samplers[0].small == "replace"
        return pick_rows(self.table, self.invalid, self.sizes, keys, batch_size, fill, ordered=ordered)


def replica_rows(per: int, positions: Sequence[int]) -> torch.Tensor:
    """Indices along a stacked axis (``per`` models per replica) of the replicas at ``positions``."""
    return torch.cat([torch.arange(p * per, (p + 1) * per) for p in positions])


@torch.no_grad()
def keep_rows(params: Sequence[torch.Tensor], opt: torch.optim.Optimizer | None, idx: torch.Tensor) -> None:
    """Keep rows ``idx`` of every stacked parameter's leading axis and of its optimiser state."""
    for p in params:
        old = p.shape[0]
        p.data = p.data.index_select(0, idx.to(p.device)).contiguous()
        p.grad = None
        if opt is not None and p in opt.state:
            st = opt.state[p]
            for key, v in list(st.items()):
                if isinstance(v, torch.Tensor) and v.dim() >= 1 and v.shape[0] == old:
                    st[key] = v.index_select(0, idx.to(v.device)).contiguous()


@torch.no_grad()
def keep_replicas(net: nn.Module, opt: torch.optim.Optimizer | None, per: int, positions: Sequence[int]) -> None:
    """Keep only the replicas at ``positions`` of a stacked network (``per`` models each along
    every parameter's leading axis) and of its optimiser state: how a replica step drops the
    replicas that have stopped, so they cost nothing more."""
    keep_rows(list(net.parameters()), opt, replica_rows(per, positions))
    for sub in net.modules():
        if isinstance(sub, BatchedLinear):
            sub.num_models = int(sub.weight.shape[0])


def state_slice(opt: torch.optim.Optimizer, q: torch.Tensor, sl: slice, device: torch.device) -> dict:
    """Optimiser state of stacked parameter ``q`` restricted to rows ``sl`` (scalars such as the
    step counter copied), on ``device``: the state a single fit's optimiser would hold."""
    out = {}
    for key, v in opt.state[q].items():
        if isinstance(v, torch.Tensor):
            v = v[sl] if v.dim() >= 1 and v.shape[0] == q.shape[0] else v
            v = v.detach().to(device).clone()
        out[key] = v
    return out


@torch.no_grad()
def copy_optimizer_state(src_opt: torch.optim.Optimizer, src: nn.Module, dst_opt: torch.optim.Optimizer, dst: nn.Module,
                         pos: int) -> None:
    """Replica ``pos``'s slice of the optimiser state of a stacked network ``src`` into the
    optimiser of its own network ``dst`` (so a written-back model is as a single fit leaves it)."""
    sp = dict(src.named_parameters())
    for name, p in dst.named_parameters():
        q = sp[name]
        if q in src_opt.state:
            dst_opt.state[p] = state_slice(src_opt, q, replica_slice(p.shape[0], pos), p.device)
