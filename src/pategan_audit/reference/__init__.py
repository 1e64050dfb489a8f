"""The paper's printed numbers (and a few derived from the authors' records), as data.

Ganev, Annamalai, De Cristofaro, *The Elusive Pursuit of Reproducing PATE-GAN* (TMLR 2025).
Every value carries its provenance: ``"printed"`` (in the paper), ``"derived from the authors'
records"`` (``spalabucr/pategan-audit:data/results``, recomputed with the rules of the book's implementation notes),
``"hand-read from [49]'s figures"`` or ``"computed by us (implementation notes)"`` (our own computation, stated in the book's implementation notes).

Numeric tables come in long format (``table, row, column, value, provenance, note``; rows and
columns use the package's keys: :data:`DATASETS`, :data:`IMPLEMENTATIONS`, :data:`CLASSIFIERS`,
``"paper49"`` for [49], ``"average"``); pass ``wide=True`` for the printed layout.

* :mod:`.utility`: Tables 1, 4-12, Setting A, DPGAN, captions, numbers quoted in §5;
* :mod:`.figures`: series of Figs. 1, 6, 7, 8, 9 and [49]'s tick marks;
* :mod:`.review`: Tables 2, 3, 13;
* :mod:`.audit_traces`: Figs. 2-5 (implementation notes §traces.seen, §traces.losses, §traces.moments, §audit.groundhog, §audit.ceiling, §audit.figures).
"""
from ._schema import (
    AVERAGE,
    CLASSIFIER_DISPLAY_NAMES,
    CLASSIFIERS,
    DATASETS,
    DISPLAY_NAMES,
    EPS_GRID,
    HAND_READ,
    IMPLEMENTATIONS,
    LONG_COLUMNS,
    PAPER49,
    PRINTED,
    RECORDS,
    SPEC,
    to_wide,
)
from .audit_traces import (
    AUDIT_CEILING,
    AUDIT_CEILING_BAYESIAN,
    AUDIT_CEILING_BY_ALPHA,
    AUDIT_TARGET_ROW,
    AUDIT_TEST_OUTPUTS_PER_WORLD,
    FIG4_SETTINGS,
    audit_reference,
    moments_reference,
    target_selection_reference,
    teacher_loss_reference,
    teacher_seen_reference,
    trace_iterations_reference,
)
from .figures import FIGURE_YLIM_LOWER, FIGURES, figure_series, paper49_marks
from .review import TABLE2_CATEGORIES, table2, table3, table13
from .utility import (
    base_rates,
    DELTA_ROW,
    DPGAN,
    TEACHER_SWEEP_COLUMNS,
    TEACHER_SWEEP_K,
    PER_CLASSIFIER_TABLES,
    caption_values,
    paper49_teacher_sweep,
    setting_a_reference,
    table1,
    table4,
    table4_auprc,
    table5,
    table6,
    table7,
    table8,
    table9,
    table10,
    table11,
    table12,
    text_numbers,
)

__all__ = [
    "AUDIT_CEILING", "AUDIT_CEILING_BAYESIAN", "AUDIT_CEILING_BY_ALPHA", "AUDIT_TARGET_ROW",
    "AUDIT_TEST_OUTPUTS_PER_WORLD", "AVERAGE", "CLASSIFIERS", "CLASSIFIER_DISPLAY_NAMES", "DATASETS", "DELTA_ROW",
    "DISPLAY_NAMES", "DPGAN", "EPS_GRID", "FIG4_SETTINGS", "FIGURES", "FIGURE_YLIM_LOWER", "HAND_READ",
    "IMPLEMENTATIONS", "LONG_COLUMNS", "PAPER49", "PRINTED", "RECORDS", "SPEC", "TABLE2_CATEGORIES",
    "TEACHER_SWEEP_COLUMNS", "TEACHER_SWEEP_K", "PER_CLASSIFIER_TABLES", "audit_reference", "base_rates", "caption_values", "figure_series",
    "moments_reference", "paper49_marks", "paper49_teacher_sweep", "setting_a_reference", "table1", "table2",
    "table3", "table4", "table4_auprc", "table5", "table6", "table7", "table8", "table9", "table10", "table11",
    "table12", "table13", "target_selection_reference", "teacher_loss_reference", "teacher_seen_reference",
    "text_numbers", "to_wide", "trace_iterations_reference",
]  # fmt: skip
