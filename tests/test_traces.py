"""Training traces (paper §6.1, protocols spec C): pure summaries, orchestration, and the
paper's qualitative findings on the real presets with tiny iteration caps."""
from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib
import numpy as np
import pandas as pd
import pytest

from pategan_audit import accounting, runner, traces
from pategan_audit.implementations.base import BaseConfig, BaseGenerator
from pategan_audit.traces import fitting

matplotlib.use("Agg")

KINDS5 = ("updated", "synthcity", "borealis", "smartnoise", "corrected")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch, use_cache):
    use_cache(tmp_path / "cache")


# -- Fig. 2: only / shared ----------------------------------------------------------------------
def test_seen_counts_by_hand():
    # rows 0,1 only teacher 0; row 2 teachers 0 and 1; row 3 only teacher 1; row 4 only teacher 2
    got = traces.seen_counts([{0, 1, 2}, [2, 3, 3], np.array([4])])
    assert got.only.tolist() == [2, 1, 1]
    assert got.shared.tolist() == [1, 1, 0]
    assert got.seen.tolist() == [3, 2, 1]


def test_seen_counts_disjoint_and_identical():
    blocks = np.array_split(np.arange(686), 5)
    disjoint = traces.seen_counts([set(b) for b in blocks])
    assert (disjoint.shared == 0).all() and disjoint.only.tolist() == [138, 137, 137, 137, 137]
    same = traces.seen_counts([set(blocks[-1])] * 5)
    assert (same.only == 0).all() and (same.shared == 137).all()


def test_seen_counts_rejects_empty():
    with pytest.raises(ValueError, match="no teacher"):
        traces.seen_counts([])


# -- Figs. 3/11: loss lines -----------------------------------------------------------------------
def _hand_ce(iterations=3, k=5):
    # CE[i, t, j] = 100 i + 10 t + j: every summary can be worked out by hand
    i, t, j = np.meshgrid(np.arange(iterations), np.arange(k), np.arange(k), indexing="ij")
    return (100.0 * i + 10.0 * t + j).astype(float)


def test_loss_lines_paper_and_notebook_definitions():
    frame = traces.loss_frame(_hand_ce(), implementation="x", seed=0, epsilon=1.0)
    assert len(frame) == 3 * 5 * 5 and frame.iteration.min() == 1
    paper = traces.loss_lines(frame, definition="paper").pivot(index="iteration", columns="line", values="cross_entropy")
    note = traces.loss_lines(frame, definition="notebook").pivot(index="iteration", columns="line", values="cross_entropy")
    base = 100.0 * np.arange(3)
    np.testing.assert_allclose(paper["own"], base)  # CE[0][., 0]
    np.testing.assert_allclose(paper["others"], base + 25.0)  # mean_{t=1..4} 10 t (subset 0)
    np.testing.assert_allclose(note["own"], base)
    np.testing.assert_allclose(note["others"], base + 27.5)  # mean_{t=1..4} (10 t + t)
    with pytest.raises(ValueError, match="definition"):
        traces.loss_lines(frame, definition="caption")


def test_loss_bands_over_seeds():
    frames = [traces.loss_frame(_hand_ce() + s, implementation="x", seed=s, epsilon=1.0) for s in (0, 1, 2)]
    lines = traces.loss_lines(pd.concat(frames, ignore_index=True))
    bands = traces.loss_bands(lines)
    own1 = bands[(bands.line == "own") & (bands.iteration == 1)].iloc[0]
    assert (own1["mean"], own1["min"], own1["max"], own1["runs"]) == (1.0, 0.0, 2.0, 3)


def test_loss_frame_rejects_bad_shape():
    with pytest.raises(ValueError, match="iterations, k, k"):
        traces.loss_frame(np.zeros((2, 3, 4)))


# -- Fig. 4: one stream, several accountants -----------------------------------------------------
def _stream(votes, lam, k=5, delta=1e-5):
    return traces.VoteStream(votes=tuple(np.asarray(v) for v in votes), num_teachers=k, lam=lam, delta=delta)


def test_vote_histogram():
    counts = traces.vote_histogram([np.array([0, 5, 5, 2]), np.array([], dtype=int)], num_teachers=5)
    assert counts.tolist() == [[1, 0, 1, 0, 0, 2], [0, 0, 0, 0, 0, 0]]


@pytest.mark.parametrize("lam", [1.0, 0.5, 1e-3])
@pytest.mark.parametrize("kind", accounting.KINDS)
def test_cumulative_moments_equal_direct_sums(kind, lam):
    """The histogram shortcut equals summing accounting.summed_increments query by query."""
    rng = np.random.default_rng(7)
    votes = [rng.integers(0, 6, size=rng.integers(0, 40)) for _ in range(12)]
    alpha = traces.cumulative_moments(_stream(votes, lam), kind=kind, num_moments=20)
    direct = np.cumsum([accounting.summed_increments(kind, n1=v, num_teachers=5, lam=lam, num_moments=20) for v in votes], axis=0)
    assert (alpha[0] == 0).all()
    np.testing.assert_allclose(alpha[1:], direct, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_unanimous_stream_matches_protocol_magnitudes():
    """protocols C.3 [own]: lambda = 1, unanimous votes, 1,000 iterations x 320 queries, L = 100."""
    stream = _stream([np.zeros(320, dtype=int)] * 1000, lam=1.0)
    curves = traces.moment_curves(stream, accountants=("updated", "synthcity", "borealis", "smartnoise"))
    first = curves[(curves.iteration == 1000) & (curves.moment == 1)].set_index("accountant").epsilon
    # per-query first-moment increments, implementations spec §8.2 Example C (k=5, n0=5, lambda=1)
    per_query = {"updated": 0.1457346095, "synthcity": 0.09695801981, "borealis": 1.15688912, "smartnoise": 1.15688912}
    for kind, inc in per_query.items():
        # e_1000(1) uses alpha after 999 iterations (the authors' convention, protocols C.3)
        assert first[kind] == pytest.approx(inc * 999 * 320 + math.log(1e5), rel=1e-8)
    assert first["updated"] == pytest.approx(46.6e3, rel=2e-3)
    assert first["synthcity"] == pytest.approx(31.0e3, rel=2e-3)
    assert first["borealis"] == pytest.approx(370e3, rel=2e-3)
    # the paper's reading of Fig. 4 (~50k / 30k / 320k) agrees to within 20 %
    for kind, paper in {"updated": 50e3, "synthcity": 30e3, "smartnoise": 320e3}.items():
        assert 0.8 < first[kind] / paper < 1.25


def test_fig4_ordering_at_lambda_one_and_equality_at_small_lambda():
    rng = np.random.default_rng(3)
    votes = [rng.integers(0, 6, size=320) for _ in range(50)]
    big = traces.final_epsilons([_stream(votes, 1.0)]).set_index("accountant")
    for col in ("first_moment", "eps_hat"):
        assert big.loc["synthcity", col] < big.loc["updated", col] < big.loc["borealis", col]
        assert big.loc["borealis", col] == big.loc["smartnoise", col]
        assert big.loc["paper", col] == pytest.approx(big.loc["updated", col], rel=1e-12)
    small = traces.final_epsilons([_stream(votes, 1e-3)]).set_index("accountant")
    np.testing.assert_allclose(small.eps_hat, small.loc["updated", "eps_hat"], rtol=1e-12)
    # vote-independent at lambda = 1e-3: every query costs 2 lambda^2 l(l+1) (implementations spec §0.4)
    alpha_1 = 50 * 320 * 2 * 1e-6 * 2
    assert small.loc["updated", "first_moment"] == pytest.approx(alpha_1 + math.log(1e5), rel=1e-12)


def test_vote_stream_validation():
    with pytest.raises(ValueError, match="0..5"):
        _stream([np.array([0, 6])], lam=1.0)
    with pytest.raises(ValueError, match="delta"):
        _stream([np.array([0])], lam=1.0, delta=2.0)
    with pytest.raises(ValueError, match="lam"):
        traces.record_vote_stream(lam=-1.0, iterations=1, seed=0)


# -- profiles ------------------------------------------------------------------------------------
def test_profiles():
    book = traces.get_profile("book")
    assert (book.seen_max_iter, book.loss_max_iter, book.moment_iterations) == (200, 200, 1000)  # protocols F.2
    paper = traces.get_profile("paper")
    assert (paper.seen_max_iter, paper.loss_runs, paper.moment_iterations) == (1000, 10, 1000)  # protocols C.1-C.3
    with pytest.raises(ValueError, match="unknown trace profile"):
        traces.get_profile("huge")
    with pytest.raises(ValueError, match="positive"):
        traces.TraceProfile("x", 0, 1, 1, 1)
    assert traces.run_seeds(5, 3) == [5, 6, 7]


# -- orchestration, with a fake preset ------------------------------------------------------------
@dataclass(frozen=True)
class _FakeConfig(BaseConfig):
    num_teachers: int = 5
    lam: float = 1e-3
    num_moments: int = 100
    scheme: str = "disjoint"


class _FakePreset(BaseGenerator):
    """Tiny stand-in with the PATE presets' introspection API; ``fits`` counts trainings."""

    name = "fake"
    Config = _FakeConfig
    fits = 0

    def _fit(self, df, label):
        type(self).fits += 1
        cfg = self.config
        rng = np.random.default_rng(cfg.seed)
        n, k = len(df), cfg.num_teachers
        blocks = np.array_split(np.arange(n), k)
        self.trace.teacher_rows = [set() for _ in range(k)]
        self._first = None
        for it in range(cfg.max_iter):
            if cfg.scheme == "resample":
                blocks = np.array_split(rng.permutation(n), k)
            for t in range(k):
                self.trace.teacher_rows[t].update(blocks[t].tolist() if cfg.scheme != "last" else blocks[-1].tolist())
            self._first = self._first or [set(b.tolist()) for b in blocks]
            self.trace.votes.append(rng.integers(0, k + 1, size=10))
            self.trace.eps_hat.append(0.0)
            self._after_iteration(it)

    def first_seen_subsets(self):
        return self._first

    def fixed_latent(self, n, seed):
        return np.random.default_rng(seed).random(n)

    def teacher_cross_entropy(self, subsets, latent):
        k = self.config.num_teachers
        return np.add.outer(np.arange(k), np.arange(len(subsets))) + float(latent.mean()) + self.trace.iterations

    def _sample(self, n, rng):
        return pd.DataFrame(rng.random((n, len(self.columns_))), columns=self.columns_)


@pytest.fixture
def fake_presets(monkeypatch):
    schemes = {"updated": "last", "synthcity": "resample"}
    kept = {"lam", "num_teachers", "num_moments", "epsilon", "delta", "seed", "max_iter", "record"}

    def make_generator(name, *, overrides, public_bounds, **create_kwargs):
        settings = {**create_kwargs, **overrides}
        return _FakePreset(_FakeConfig(scheme=schemes.get(name, "disjoint"), **{k: v for k, v in settings.items() if k in kept}))

    monkeypatch.setattr(fitting, "make_generator", make_generator)
    _FakePreset.fits = 0
    return _FakePreset


def test_compute_traces_tables_and_cache(fake_presets, tmp_path):
    profile = traces.TraceProfile("tiny", seen_max_iter=3, loss_max_iter=4, loss_runs=2, moment_iterations=6)
    one_worker = runner.RunOptions.defaulted(None, n_jobs=1)  # the options in force: this test's cache
    res = traces.compute_traces(profile, epsilon=1.0, seed=11, options=one_worker)
    fits = fake_presets.fits
    assert fits == 7 + 5 * 2 + 2  # Fig. 2 runs + Fig. 3/11 runs + two Fig. 4 streams
    assert len(list((tmp_path / "cache" / "traces").glob("*.pkl"))) == fits  # cached here, not in results/cache
    seen = res.seen.set_index(["implementation", "teacher"])
    assert (seen.loc["updated"].only == 0).all() and (seen.loc["updated"].shared == 137).all()
    assert (seen.loc["borealis"].shared == 0).all()
    assert not res.seen[res.seen.implementation == "original"].has_teachers.any()
    assert set(res.losses.seed) == {11, 12} and res.losses.iteration.max() == 4
    assert sorted(set(res.losses.epsilon)) == [1.0, 3.0]  # smartnoise's Fig. 3 runs at epsilon = 3
    assert set(res.moments.lam) == {1.0, 1e-3} and res.moments.iteration.max() == 6
    assert set(res.final.accountant) == set(traces.TABLE_ACCOUNTANTS)
    # a second call reads every run back from the cache
    again = traces.compute_traces(profile, epsilon=1.0, seed=11, options=one_worker)
    assert fake_presets.fits == fits
    pd.testing.assert_frame_equal(again.losses, res.losses)


def test_loss_recorder_fixes_subsets_and_latent(fake_presets):
    rec = traces.TeacherLossRecorder(latent_seed=4)
    fitting.fit_traced("borealis", traces.trace_settings("borealis", epsilon=1.0, seed=0, max_iter=3), callbacks=[rec])
    ce = rec.result()
    assert ce.shape == (3, 5, 5) and rec.iterations == [0, 1, 2]
    latent_mean = np.random.default_rng(4).random(138).mean()  # |P_0| = 138 with array_split(686, 5)
    np.testing.assert_allclose(ce[0], np.add.outer(np.arange(5), np.arange(5)) + latent_mean + 1)


def test_trace_settings():
    s = traces.trace_settings("borealis", epsilon=1.0, seed=2, max_iter=7)
    assert s == dict(epsilon=1.0, delta=1e-5, seed=2, num_teachers=5, max_iter=7, record=True, lam=1e-4)
    assert "lam" not in traces.trace_settings("original", epsilon=1.0, seed=2, max_iter=7)
    with pytest.raises(ValueError, match="max_iter"):
        traces.trace_settings("updated", epsilon=1.0, seed=0, max_iter=0)


def test_plots_draw(fake_presets):
    from pategan_audit.pages.plotting import traces as tplot

    profile = traces.TraceProfile("tiny", seen_max_iter=2, loss_max_iter=3, loss_runs=2, moment_iterations=5)
    res = traces.compute_traces(profile, seed=0, options=runner.RunOptions.defaulted(None, n_jobs=1))
    fig2 = tplot.plot_teacher_seen(res.seen)
    assert len(fig2.axes) == 5
    fig11 = tplot.plot_teacher_losses(traces.loss_lines(res.losses))
    assert len(fig11.axes) == 5 and len(fig11.axes[0].collections) == 2  # two min-max bands
    fig4 = tplot.plot_moments(res.moments, lam=1.0)
    assert fig4.axes[0].get_xscale() == "log" and fig4.axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="pass lam"):
        tplot.plot_moments(res.moments)
    import matplotlib.pyplot as plt

    plt.close("all")


# -- the paper's findings on the real presets (Cervical, k = 5, tiny caps) --------------------------
CERVICAL_N = 686  # protocols A.2: authors' training split, 686 x 29


def _seen(name, max_iter, seed=0):
    res = traces.seen_run(name, epsilon=1.0, seed=seed, max_iter=max_iter)
    return traces.seen_counts(res["teacher_rows"]), res


def test_updated_teachers_all_see_the_last_block():
    """V4 (protocols C.1 [rec]: 0 only / 137 shared for each of the 5 teachers)."""
    counts, res = _seen("updated", 3)
    assert counts.only.tolist() == [0] * 5 and counts.shared.tolist() == [CERVICAL_N // 5] * 5
    assert all(set(r.tolist()) == set(res["teacher_rows"][0].tolist()) for r in res["teacher_rows"])


@pytest.mark.parametrize("name", ["borealis", "smartnoise"])
def test_disjoint_partitions(name):
    """borealis 137,137,137,137,138 / smartnoise 138,137,... only, 0 shared (protocols C.1 [rec])."""
    counts, _ = _seen(name, 5)
    assert (counts.shared == 0).all()
    assert sorted(counts.only.tolist()) == [137, 137, 137, 137, 138]


def test_corrected_partition_is_disjoint_with_random_sizes():
    """corrected assigns each row to a teacher independently (exact under add/remove): disjoint,
    every row seen by one teacher at most, block sizes Binomial(686, 1/5) rather than 137/138."""
    counts, _ = _seen("corrected", 5)
    assert (counts.shared == 0).all() and counts.only.sum() <= CERVICAL_N
    assert sorted(counts.only.tolist()) != [137, 137, 137, 137, 138]
    assert (abs(counts.only - CERVICAL_N / 5) < 5 * (CERVICAL_N * 0.16) ** 0.5).all()


def test_synthcity_seen_rows_grow_towards_n():
    """V5: a fresh partition every iteration ([rec] after 18 iterations: 670-675 of 686 per teacher)."""
    one, _ = _seen("synthcity", 1)
    six, _ = _seen("synthcity", 6)
    assert (one.shared == 0).all() and one.seen.sum() <= CERVICAL_N
    assert (six.seen > 2 * one.seen).all() and (six.shared > six.only).all()
    assert six.seen.min() > 0.55 * CERVICAL_N  # expected 686 (1 - 0.8^6) = 506


@pytest.mark.parametrize("name", ["original", "turing"])
def test_critic_slots_draw_from_all_rows(name):
    """V1-V3/V6: no teachers; every critic-step slot draws its batches from all N rows."""
    counts, res = _seen(name, 4)
    assert len(counts) == 5 and (counts.seen > 2 * CERVICAL_N / 5).all()
    union = set().union(*(set(r.tolist()) for r in res["teacher_rows"]))
    assert len(union) > 0.9 * CERVICAL_N


def test_teacher_losses_on_real_presets():
    losses = traces.teacher_losses(("updated", "borealis"), seeds=(0,), max_iter=3)
    ce = losses.pivot_table(index=["implementation", "iteration", "teacher"], columns="subset", values="cross_entropy")
    assert np.isfinite(ce.to_numpy()).all() and (ce.to_numpy() > 0).all()
    # updated: all first-seen subsets are the same block, so a teacher's CE is the same on each
    upd = ce.loc["updated"].to_numpy()
    np.testing.assert_allclose(upd, upd[:, :1].repeat(5, axis=1), rtol=1e-6)
    # borealis: disjoint subsets, so the CE differs across subsets
    assert np.ptp(ce.loc["borealis"].to_numpy(), axis=1).max() > 1e-4


def test_vote_stream_from_smartnoise():
    """Fig. 4 pipeline on 4 iterations: the smartnoise formula reproduces the model's own
    accountant, and the paper's ordering / coincidence hold on the real votes."""
    big = traces.record_vote_stream(lam=1.0, iterations=4, seed=0)
    assert big.iterations == 4 and big.queries == 4 * 5 * 64  # 5 student steps x B = 64 per iteration
    table = traces.final_epsilons([big]).set_index("accountant")
    assert table.loc["smartnoise", "eps_hat"] == pytest.approx(table.loc["smartnoise", "model_eps_hat"], rel=1e-9)
    assert table.loc["synthcity", "eps_hat"] < table.loc["updated", "eps_hat"] < table.loc["borealis", "eps_hat"]
    assert table.loc["borealis", "eps_hat"] == table.loc["smartnoise", "eps_hat"]
    small = traces.final_epsilons([traces.record_vote_stream(lam=1e-3, iterations=4, seed=0)])
    np.testing.assert_allclose(small.eps_hat, small.eps_hat.iloc[0], rtol=1e-12)


def test_same_seed_same_trace():
    a = fitting.fit_traced("smartnoise", traces.trace_settings("smartnoise", epsilon=1.0, seed=3, max_iter=2))
    b = fitting.fit_traced("smartnoise", traces.trace_settings("smartnoise", epsilon=1.0, seed=3, max_iter=2))
    assert all(np.array_equal(x, y) for x, y in zip(a.trace.votes, b.trace.votes))
    assert [set(s) for s in a.trace.teacher_rows] == [set(s) for s in b.trace.teacher_rows]
