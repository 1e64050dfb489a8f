"""The "paper" hyperparameters table (implementations.hyperparameters): one row per preset, and
the presets really read it (changing a row changes the fit)."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from pategan_audit.implementations import create
from pategan_audit.implementations import hyperparameters as hp
from pategan_audit.implementations.registry import PRESETS


def test_every_preset_with_the_switch_has_a_row_and_corrected_has_none():
    assert set(hp.PAPER_HYPERPARAMETERS) == set(PRESETS) - {"corrected"}
    table = hp.paper_table()
    assert list(table.index) == list(hp.PAPER_HYPERPARAMETERS)
    assert table.loc["updated", "student rounds"] == 5 and table.loc["borealis", "batch size"] == "(own)"


def test_paper_setting_reads_the_config_switch():
    default = create("updated").config
    paper = create("updated", hyperparameters="paper").config
    assert hp.paper_setting("updated", default) is None
    assert hp.paper_setting("updated", paper) is hp.PAPER_HYPERPARAMETERS["updated"]
    with pytest.raises(ValueError, match="no 'paper' hyperparameters"):
        hp.paper_setting("corrected", paper)


def test_resolved_keeps_the_presets_own_value_where_the_row_says_none():
    row = hp.PAPER_HYPERPARAMETERS["borealis"]
    assert hp.resolved(row, "batch_size", 17) == 17
    assert hp.resolved(hp.PAPER_HYPERPARAMETERS["original"], "batch_size", 17) == 64
    assert hp.resolved(None, "student_rounds", 3) == 3


def test_paper_sizes_are_the_49_column():
    assert hp.paper_sizes(latent_dim=7, width=10) == {"teacher": [10, 1], "student": [10, 10, 10, 1],
                                                       "generator": [7, 10, 5, 10]}
    assert hp.paper_sizes(latent_dim=1, width=1)["generator"] == [1, 1, 1, 1]  # d/2 at least 1


def _patched(monkeypatch, name, **changes):
    row = dataclasses.replace(hp.PAPER_HYPERPARAMETERS[name], **changes)
    monkeypatch.setitem(hp.PAPER_HYPERPARAMETERS, name, row)


def test_updated_reads_its_student_and_teacher_rounds_from_the_table(toy, monkeypatch):
    kw = dict(num_teachers=3, max_iter=1, epsilon=1e6, hyperparameters="paper", teacher_model="neural_persistent")
    m = create("updated", **kw).fit(toy, label="y")
    assert m._queries_per_iteration() == 5 * m.batch_size_ and m.teacher_phase_.rounds == 5
    _patched(monkeypatch, "updated", student_rounds=3, teacher_rounds=2)
    m = create("updated", **kw).fit(toy, label="y")
    assert m._queries_per_iteration() == 3 * m.batch_size_ and m.teacher_phase_.rounds == 2
    assert len(m.trace.votes[0]) == 3 * m.batch_size_


@pytest.mark.parametrize("name", ["original", "turing"])
def test_wgan_batch_and_generator_output_come_from_the_table(name, toy, monkeypatch):
    m = create(name, num_teachers=2, max_iter=1, hyperparameters="paper").fit(toy, label="y")
    assert m.batch_size_ == min(64, len(toy) // 2)
    assert isinstance(m.G.net[-1], torch.nn.Sigmoid)
    _patched(monkeypatch, name, batch_size=16, generator_output="tanh")
    m = create(name, num_teachers=2, max_iter=1, hyperparameters="paper").fit(toy, label="y")
    assert m.batch_size_ == 16 and isinstance(m.G.net[-1], torch.nn.Tanh)


def test_smartnoise_generator_output_comes_from_the_table(toy, monkeypatch):
    kw = dict(num_teachers=3, max_iter=1, epsilon=1e6, hyperparameters="paper")
    m = create("smartnoise", **kw).fit(toy, label="y")
    assert isinstance(m.gen_net.output_activation, torch.nn.Tanh)
    _patched(monkeypatch, "smartnoise", generator_output="sigmoid")
    assert isinstance(create("smartnoise", **kw).fit(toy, label="y").gen_net.output_activation, torch.nn.Sigmoid)


def test_synthcity_student_schedule_comes_from_the_table(toy, monkeypatch):
    kw = dict(num_teachers=3, max_iter=1, epsilon=1e6, hyperparameters="paper")
    assert create("synthcity", **kw).fit(toy, label="y")._student_schedule() == (1, 5)
    _patched(monkeypatch, "synthcity", student_rounds=2, batch_size=8)
    m = create("synthcity", **kw).fit(toy, label="y")
    assert m._student_schedule() == (1, 2) and m.batch_size_ == 8
    own = create("synthcity", num_teachers=3, max_iter=1, epsilon=1e6).fit(toy, label="y")
    assert own._student_schedule() == (own.config.generator_n_iter, 1)
