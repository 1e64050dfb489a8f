"""Utility benchmark of paper §5 and Appendix C (implementation notes §utility.classifiers to §utility.setting-a).

``cells`` — frozen experiment configs, teacher rule, synthetic-table post-processing;
``run`` — train/sample/score one cell, cached, and grids in parallel;
``aggregate`` — best-of-n, mean ± SE, AUROC-Δ, DPGAN count;
``profiles`` — the smoke / book / paper profiles and one builder per table or figure;
``twins`` — sweep cells held by the iteration cap at a smaller ε, which need no training;
``tables`` — the printed tables' layouts (arrangement only);
``protocols`` — which archive (and protocol) each Table 4 cell is read from;
``archives`` — the utility archives' specs (cells, resumable per cell).
"""
from .aggregate import CELL_KEYS, auroc_delta, auroc_delta_undefined, best_of_n, best_per_classifier, dpgan_count, mean_auroc_delta, mean_se, setting_a_scores
from .cells import PAPER_TRAIN_SIZES, SettingACell, UtilityCell, derive_seed, teacher_count, teacher_ratio, to_training_dtypes, variant_label
from .profiles import (
    EPSILON_GRID,
    MAIN_EPSILON,
    PAPER_IMPLEMENTATIONS,
    TEACHER_SWEEP_IMPLEMENTATIONS,
    UTILITY_PROFILES,
    UtilityProfile,
    conditional_cells,
    epsilon_sweep_cells,
    get_profile,
    hyperparameter_cells,
    main_cells,
    mnist_cells,
    setting_a_cells,
    teacher_sweep_cells,
    teacher_sweep_k,
)
from . import twins  # noqa: F401  (U.twins)
from .run import (COLUMNS, cell_id, evaluate_cell, evaluate_setting_a, iter_cells, load_dataset, resolve_teachers, run_cell,
                  run_cells)

__all__ = [
    "CELL_KEYS", "COLUMNS", "cell_id", "EPSILON_GRID", "MAIN_EPSILON", "PAPER_IMPLEMENTATIONS", "PAPER_TRAIN_SIZES",
    "TEACHER_SWEEP_IMPLEMENTATIONS", "UTILITY_PROFILES", "SettingACell", "UtilityCell", "UtilityProfile",
    "auroc_delta", "auroc_delta_undefined", "best_of_n", "best_per_classifier", "conditional_cells", "derive_seed", "dpgan_count",
    "epsilon_sweep_cells", "evaluate_cell", "evaluate_setting_a", "get_profile", "hyperparameter_cells",
    "load_dataset", "main_cells", "mean_auroc_delta", "mean_se", "mnist_cells", "resolve_teachers", "run_cell",
    "run_cells", "iter_cells", "setting_a_cells", "setting_a_scores", "teacher_count", "teacher_ratio", "teacher_sweep_cells",
    "teacher_sweep_k", "to_training_dtypes", "variant_label",
]
