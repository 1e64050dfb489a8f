"""Counter-based streams on an accelerator (issue 40, item 2: "the same numbers at R = 1 and
R = 512, chunked or not, CPU and (when lent) GPU"). Skipped where torch sees no CUDA device; a
session lent one runs this file there (``pytest tests/replicas/test_streams_device.py``).

The words are integers and must be bit-identical on both devices. Fits are compared as
tests/replicas/test_streams.py compares a replica at R = 1 with one inside R = 64: everything
discrete (iterations, teacher rows, label flips, votes) equal, weights to float rounding.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations import fit_many
from pategan_audit.replicas import streams as S

from ..implementations.conftest import CERVICAL

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_words_identical_on_cpu_and_gpu_at_r512_and_chunked():
    seeds = list(range(100, 612))
    for step in (0, 17, 2**33 + 5):
        cpu = S.words(S.stream_keys(seeds, 3), step, 401, draw=2)
        gpu = S.words(S.stream_keys(seeds, 3, device="cuda"), step, 401, draw=2)
        assert gpu.device.type == "cuda"
        assert torch.equal(cpu, gpu.cpu())
        chunks = [S.words(S.stream_keys(seeds[i:i + 128], 3, device="cuda"), step, 401, draw=2)
                  for i in range(0, 512, 128)]
        assert torch.equal(gpu, torch.cat(chunks))
        alone = S.words(S.stream_keys([seeds[137]], 3, device="cuda"), step, 401, draw=2)
        assert torch.equal(gpu[137], alone[0])
    # integer-valued draws are exact; uniforms are words scaled, so exact as well
    keys_c, keys_g = S.stream_keys(seeds, 1), S.stream_keys(seeds, 1, device="cuda")
    assert torch.equal(S.permutation(keys_c, 4, 97), S.permutation(keys_g, 4, 97).cpu())
    assert torch.equal(S.uniform(keys_c, 4, (33,)), S.uniform(keys_g, 4, (33,)).cpu())
    # normals: float64 log/cos may differ by one float32 ulp at a rounding boundary (streams.py)
    zc, zg = S.normal(keys_c, 4, (33,)), S.normal(keys_g, 4, (33,)).cpu()
    assert float((zc - zg).abs().max()) <= 1e-6


@pytest.fixture(scope="module")
def cervical_small() -> pd.DataFrame:
    return pd.read_csv(CERVICAL).head(120)


def _networks(m):
    nets = [getattr(m, a) for a in ("G", "D", "gen_net", "student") if isinstance(getattr(m, a, None), torch.nn.Module)]
    net = getattr(getattr(m, "teachers", None), "net", None)  # neural teachers (logistic ones have none)
    return nets + ([net] if isinstance(net, torch.nn.Module) else [])


def _same(a, b, atol, streams="counter"):
    """Everything discrete equal; weights to ``atol`` (float rounding, amplified by training)."""
    assert a.trace.extra["streams"] == b.trace.extra["streams"] == streams
    assert a.trace.iterations == b.trace.iterations
    assert a.trace.teacher_rows == b.trace.teacher_rows
    if "label_flips" in a.trace.extra:
        np.testing.assert_array_equal(a.trace.extra["label_flips"], b.trace.extra["label_flips"])
    for key in ("votes", "labels"):
        for p, q in zip(getattr(a.trace, key) or [], getattr(b.trace, key) or [], strict=True):
            np.testing.assert_array_equal(np.asarray(p), np.asarray(q))
    for na, nb in zip(_networks(a), _networks(b), strict=True):
        for p, q in zip(na.parameters(), nb.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), atol=atol, rtol=0)


CASES = {
    "original": {"num_teachers": 2, "max_iter": 4, "label": "Biopsy"},
    "borealis": {"num_teachers": 3, "max_iter": 4, "label": "Biopsy", "record": True},
    "updated": {"num_teachers": 3, "max_iter": 4, "label": "Biopsy", "record": True},
    "synthcity": {"num_teachers": 3, "max_iter": 2, "label": "Biopsy", "record": True},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_counter_fit_same_at_r1_r512_chunked_and_on_cpu(name, cervical_small):
    kw = CASES[name]
    R = 64 if name == "synthcity" else 512  # synthcity draws about 1.25 M words per replica-iteration
    seeds, chunk = list(range(R)), R // 4
    whole = fit_many(name, cervical_small, seeds=seeds, streams="counter", device="cuda", **kw)
    chunked = fit_many(name, cervical_small, seeds=seeds, streams="counter", device="cuda", max_replicas=chunk, **kw)
    for i in (0, chunk - 1, chunk, R - 1):
        alone = fit_many(name, cervical_small, seeds=[i], streams="counter", device="cuda", **kw)[0]
        on_cpu = fit_many(name, cervical_small, seeds=[i], streams="counter", device="cpu", **kw)[0]
        _same(alone, whole[i], 1e-5)
        _same(alone, chunked[i], 1e-5)
        _same(on_cpu, whole[i], 1e-4)
        sa = alone.sample(40, seed=7).to_numpy(float)
        np.testing.assert_allclose(sa, whole[i].sample(40, seed=7).to_numpy(float), atol=1e-3)
        np.testing.assert_allclose(sa, on_cpu.sample(40, seed=7).to_numpy(float), atol=1e-3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_streams_fit_on_the_gpu(name, cervical_small):
    """The default streams draw on each replica's CPU generators, so a GPU fit takes the CPU fit's
    draws, at R = 1 (each family's single-model path) and R = 3."""
    kw = CASES[name]
    for seeds in ([3], [3, 4, 5]):
        gpu = fit_many(name, cervical_small, seeds=seeds, device="cuda", **kw)
        cpu = fit_many(name, cervical_small, seeds=seeds, device="cpu", **kw)
        for a, b in zip(gpu, cpu, strict=True):
            _same(a, b, 1e-4, streams="torch")
