"""The "paper" hyperparameters as one table, per preset (audit paper ``ganev2025elusive`` Table 3,
the [49] column; implementation notes §utility.paper-hyperparameters).

Table 3 of the audit paper lists, beside each implementation's own settings, the settings of the
benchmark the paper compares against ([49]): 1-layer teachers, a 3-layer student ``{d, d, 1}``, a
generator ``{d, d/2, d}``, batch 64, n_T = n_S = 5. ``hyperparameters="paper"`` switches a preset
to them as far as its structure allows; what that means differs per preset (a WGAN has no teachers,
synthcity's generator ends in its encoder's output head), and this module is the one place that
says it. Every preset reads its row here (:func:`paper_setting`); the implementations page prints
the table (:func:`paper_table`).

========== ====== ===== ===== ================ ========= =============================================
preset     batch  n_T   n_S   generator output optimiser what stays the preset's own
========== ====== ===== ===== ================ ========= =============================================
original   64     –     –     sigmoid          (own)     critic, Adam, z_dim, critic steps (no teachers)
turing     64     –     –     sigmoid          (own)     as original
updated    (own)  5     5     sigmoid          Adam      logistic teachers unless B1 is fixed
synthcity  64*    (own) 5     encoder head     (own)     teacher rounds, conditional vectors
borealis   (own)  (own) (own) sigmoid          (own)     already n_T = n_S = 5, B = 64
smartnoise (own)  (own) (own) tanh             (own)     data in [-1, 1], hence tanh (deviation)
========== ====== ===== ===== ================ ========= =============================================

``*`` synthcity: ``min(64, ⌊N/k⌋)`` even as released (its own batch rule would otherwise apply).
``corrected`` and ``gnmax`` are built on the [49] architecture and have no switch.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

__all__ = ["PaperSetting", "PAPER_HYPERPARAMETERS", "paper_sizes", "paper_setting", "resolved", "paper_table"]


@dataclass(frozen=True)
class PaperSetting:
    """What ``hyperparameters="paper"`` sets in one preset; ``None`` leaves the preset's own value.

    batch_size: B. teacher_rounds: n_T (teacher steps per iteration). student_rounds: n_S (student
    steps per iteration). generator_output: the generator's output activation. optimiser: of
    generator and student (None: the preset's). keeps: what the switch leaves as released."""

    batch_size: int | None
    teacher_rounds: int | None
    student_rounds: int | None
    generator_output: str
    optimiser: str | None
    keeps: str


PAPER_HYPERPARAMETERS: dict[str, PaperSetting] = {
    "original": PaperSetting(64, None, None, "sigmoid", None, "critic, Adam, z_dim and the critic-step count (no teachers)"),
    "turing": PaperSetting(64, None, None, "sigmoid", None, "as original"),
    "updated": PaperSetting(None, 5, 5, "sigmoid", "adam", "the logistic teachers unless B1 is fixed; the student's weight clip"),
    "synthcity": PaperSetting(64, None, 5, "encoder head", None, "the teacher rounds, the conditional vectors, the encoder"),
    "borealis": PaperSetting(None, None, None, "sigmoid", None, "n_T = n_S = 5 and B = 64 already; the conditional label column"),
    "smartnoise": PaperSetting(None, None, None, "tanh", None, "its transformer puts the data in [-1, 1], hence tanh (deviation)"),
}


def paper_sizes(*, latent_dim: int, width: int) -> dict[str, list[int]]:
    """Layer sizes of the [49] column of the audit paper's Table 3: 1-layer teachers ``{1}``,
    3-layer student ``{d, d, 1}``, generator ``{d, d/2, d}``; ``width`` is the model-space width D.
    Deviation: [49] gives no student widths; we use D."""
    d = int(width)
    return {"teacher": [d, 1], "student": [d, d, d, 1], "generator": [int(latent_dim), d, max(1, d // 2), d]}


def paper_setting(name: str, config: Any) -> PaperSetting | None:
    """The row of preset ``name`` when its ``config.hyperparameters`` is "paper", else None."""
    if getattr(config, "hyperparameters", "default") != "paper":
        return None
    try:
        return PAPER_HYPERPARAMETERS[name]
    except KeyError:
        raise ValueError(f"{name} has no 'paper' hyperparameters; presets with one: {', '.join(PAPER_HYPERPARAMETERS)}") from None


def resolved(setting: PaperSetting | None, field: str, own: Any) -> Any:
    """``setting.<field>`` where the paper row sets it, else the preset's ``own`` value."""
    value = None if setting is None else getattr(setting, field)
    return own if value is None else value


def paper_table() -> pd.DataFrame:
    """:data:`PAPER_HYPERPARAMETERS` as a table (one row per preset; "(own)" where the preset keeps its value)."""
    rows = []
    for name, setting in PAPER_HYPERPARAMETERS.items():
        row = {"preset": name}
        for f in fields(setting):
            value = getattr(setting, f.name)
            row[f.name.replace("_", " ")] = "(own)" if value is None else value
        rows.append(row)
    return pd.DataFrame(rows).set_index("preset")
