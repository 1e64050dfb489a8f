"""An audit setting can train its shadow models in the counter stream mode (issue 40, item 2):
the default leaves every archived setting's records and cache keys as they were; "counter" is
cached and recorded apart, refused before any training for a preset without it, and gives the same
released tables however the shadow models are chunked."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit import runner
from pategan_audit.auditing.game import run_game
from pategan_audit.auditing.settings import AuditSetting
from pategan_audit.implementations.factory import CounterStreamsFactory, PresetFactory


def test_the_default_setting_is_keyed_and_recorded_as_before():
    s = AuditSetting("querybased", "original", channel="fixed_size", iterations=5)
    run = s.resolve()
    assert type(run.factory) is PresetFactory and "streams" not in s.key()
    assert run.effective_key["generator"] == runner.describe_for_cache(
        PresetFactory("original", 1.0, 1e-5, s.overrides(run.d_out)))


def test_counter_streams_are_keyed_and_recorded_apart():
    torch_mode = AuditSetting("querybased", "original", channel="fixed_size", iterations=5).resolve()
    counter = AuditSetting("querybased", "original", channel="fixed_size", iterations=5, streams="counter")
    run = counter.resolve()
    assert isinstance(run.factory, CounterStreamsFactory) and counter.key()["streams"] == "counter"
    assert run.effective_key != torch_mode.effective_key and run.run_id != torch_mode.run_id


def test_a_preset_without_counter_streams_is_refused_when_the_setting_is_made():
    with pytest.raises(ValueError, match="not available for preset 'gnmax'"):
        AuditSetting("querybased", "gnmax", channel="fixed_size", iterations=5, streams="counter")
    with pytest.raises(ValueError, match="streams must be one of"):
        AuditSetting("querybased", "original", iterations=5, streams="philox")


def _raw(df):
    """The released table itself, every value (finer than any featuriser of the paper's attacks)."""
    return df.to_numpy(dtype=float).ravel()


def _tables(streams: str, chunk: int):
    run = AuditSetting("groundhog", "borealis", iterations=3, streams=streams).resolve()
    g = run_game(run.factory, run.d_out, run.d_in, n_per_world=4, n_synth_rows=20, featurise=_raw, seed=0,
                 options=runner.RunOptions(n_jobs=1), cache_namespace=None, chunk_size=chunk)
    return np.r_[g.features_out.ravel(), g.features_in.ravel()]


def test_the_setting_trains_its_shadow_models_in_its_stream_mode():
    """The counter mode's draws replace the default ones (other tables, not rounding apart), and
    do not depend on the chunking: one chunk of four models per world or chunks of one release
    the same tables up to the float rounding of the batched kernels, which depends on the batch
    size in either mode (so equality here is to 1e-4, not to the bit)."""
    counter, default = _tables("counter", 4), _tables("torch", 4)
    assert np.max(np.abs(counter - default)) > 1e-2
    np.testing.assert_allclose(_tables("counter", 1), counter, rtol=0, atol=1e-4)
