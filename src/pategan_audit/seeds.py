"""The one seed derivation of the experiments: independent streams from integer parts.

Every derived seed of the book (a utility model, table or classifier panel; a shadow model of
the audit game; a target-selection model; the fixed latent batch of a trace) is the first word
of ``numpy.random.SeedSequence(parts)``, reduced to a seed width:

| reduction | value | used for |
|---|---|---|
| ``"mod31"`` | ``word % (2**31 - 1)`` | utility cells: model m, table s, classifier panel |
| ``"shift31"`` | ``word >> 1`` | audit shadow models (game) and target-selection models |
| ``"u32"`` | ``word`` | training traces (e.g. the fixed latent batch of Fig. 3) |

The three reductions predate this module and stay as they were: cached results and the
committed archives are addressed by the seeds they produce (``tests/test_pinned_keys.py``).
The paper fixes none of these streams (the authors seed one global stream, ``ganev2025elusive``
App. C); giving every model its own stream is what makes the runs independent of the order and
the number of workers they run on.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["REDUCTIONS", "derive_seed", "training_streams", "torch_generator"]

Reduction = Literal["mod31", "shift31", "u32"]
REDUCTIONS: tuple[str, ...] = ("mod31", "shift31", "u32")


def derive_seed(*parts: int, reduce: Reduction = "mod31") -> int:
    """A seed derived from integer ``parts`` (numpy ``SeedSequence``), reduced as ``reduce``
    says (module table): distinct parts give independent streams."""
    word = int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0])
    if reduce == "mod31":
        return word % (2**31 - 1)
    if reduce == "shift31":
        return word >> 1
    if reduce == "u32":
        return word
    raise ValueError(f"unknown seed reduction {reduce!r}; use one of {REDUCTIONS}")


def training_streams(entropy: int | list[int] | None, count: int) -> list[np.random.SeedSequence]:
    """``count`` independent streams of one fit, spawned from ``SeedSequence(entropy)``; ``None``
    draws fresh OS entropy. Both training engines take their streams here (the PATE engine: init,
    training draws, vote noise, partitions, DP bounds noise from the config seed; the WGAN loop of
    original/turing: init, training draws, partitions from ``[seed, 2019]``)."""
    return list(np.random.SeedSequence(entropy).spawn(int(count)))


def torch_generator(stream: np.random.SeedSequence):
    """A ``torch.Generator`` seeded with the stream's first 64-bit word shifted to 63 bits."""
    import torch

    return torch.Generator().manual_seed(int(stream.generate_state(1, np.uint64)[0] >> np.uint64(1)))
