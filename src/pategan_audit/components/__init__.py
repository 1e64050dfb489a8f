"""Shared building blocks of the seven presets (audit paper Table 3; implementation notes, one section per implementation).

| module | what |
|---|---|
| :mod:`.networks` | batched dense layers and MLPs (k teachers = one network), initialisations, fused Adam |
| :mod:`.generators` | synthcity's residual generator and Gumbel heads, smartnoise's LayerNorm generator, TF1 RMSProp |
| :mod:`.teachers` | persistent neural teacher ensemble, logistic-regression teachers re-fitted each iteration |
| :mod:`.votes` | teacher votes, single-noise threshold and PATE's two-noise argmax |
| :mod:`.partition` | partition schemes and the vectorised per-teacher batch sampler |
| :mod:`.logistic` | exact batched logistic-regression solver |
| :mod:`.transforms` | scalers and encoders of every implementation (re-exports) |
"""
from .generators import BlockHead, ResidualConcatGenerator, ResidualLayerNormGenerator, TF1RMSProp, gumbel_softmax
from .networks import BatchedLinear, BatchedMLP, activation, adam
from .partition import (
    BlockSampler,
    are_disjoint,
    array_split_blocks,
    assign_blocks,
    balanced_blocks,
    contiguous_blocks,
    permutation_blocks,
)
from .teachers import LogisticTeachers, NeuralTeachers, bce_union
from .votes import MECHANISMS, VoteResult, aggregate, count_votes, laplace, single_noise_vote, two_noise_argmax_vote

__all__ = [
    "BatchedLinear",
    "BatchedMLP",
    "activation",
    "adam",
    "BlockHead",
    "ResidualConcatGenerator",
    "ResidualLayerNormGenerator",
    "TF1RMSProp",
    "gumbel_softmax",
    "BlockSampler",
    "are_disjoint",
    "array_split_blocks",
    "assign_blocks",
    "balanced_blocks",
    "contiguous_blocks",
    "permutation_blocks",
    "LogisticTeachers",
    "NeuralTeachers",
    "bce_union",
    "MECHANISMS",
    "VoteResult",
    "aggregate",
    "count_votes",
    "laplace",
    "single_noise_vote",
    "two_noise_argmax_vote",
]
