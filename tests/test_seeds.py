"""The one seed derivation (:mod:`pategan_audit.seeds`) and its three reductions."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.seeds import REDUCTIONS, derive_seed


def test_the_three_reductions_of_one_word():
    word = int(np.random.SeedSequence([4, 2]).generate_state(1)[0])
    assert derive_seed(4, 2, reduce="u32") == word
    assert derive_seed(4, 2, reduce="shift31") == word >> 1
    assert derive_seed(4, 2) == derive_seed(4, 2, reduce="mod31") == word % (2**31 - 1)
    assert set(REDUCTIONS) == {"mod31", "shift31", "u32"}


def test_streams_are_distinct_and_deterministic():
    seeds = {derive_seed(0, m, s) for m in range(20) for s in range(20)}
    assert len(seeds) == 400
    assert derive_seed(7, 1) == derive_seed(np.int64(7), 1)
    assert all(0 <= derive_seed(s, reduce=r) < 2**32 for s in range(10) for r in REDUCTIONS)
    assert all(derive_seed(s, reduce="shift31") < 2**31 for s in range(50))


def test_unknown_reduction():
    with pytest.raises(ValueError, match="reduction"):
        derive_seed(1, reduce="mod32")
