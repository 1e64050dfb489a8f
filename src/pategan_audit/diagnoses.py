"""Diagnosed differences between the paper's numbers and ours (issue #13, deliverable 3).

Each :class:`Diagnosis` names one scorecard cell ``(table, row, column)``, the cause found, whether
an experiment supports it (``explained``) or what was tried (``unexplained: tried ...``), the
experiment (``benchmarks/<script>.py::<function>(...)``; ``tests/test_scorecard.py`` checks it
exists) and its numbers. The hand-written diagnoses come first; the per-classifier ones of
Tables 5 and 10 are read from the committed experiment outputs under ``results/experiments/``
(:func:`per_classifier_diagnoses`). :func:`aliases` carries a diagnosis to the other names the
paper prints the same runs under, :data:`EXPLANATIONS` holds the explained ones (and two data
facts), and :func:`status` says where any cell outside its tolerance stands. The scorecard
(:mod:`pategan_audit.scorecard`) shows all of it beside each verdict; implementation notes
§utility.table4-differences.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import reference as R
from .runner import REPO_ROOT

__all__ = ["Diagnosis", "DIAGNOSES", "DIAGNOSED", "EXPLANATIONS", "NOT_DIAGNOSED", "EXPERIMENTS_DIR", "SCALE_FREE", "aliases",
           "diagnoses_table", "per_classifier_diagnoses", "setting_a_spread_diagnoses", "status",
           "sweep_records_diagnoses"]

#: An archived AUROC within this of the paper's is inside every tolerance (= ``scorecard.FLOOR_AUROC``).
SMALLEST_TOLERANCE = 0.01
#: ... and an AUPRC within this: the scorecard's AUPRC floor is the base rate where that is smaller
#: (Credit's 0.0017; ``scorecard._floor``).
SMALLEST_AUPRC_TOLERANCE = min(SMALLEST_TOLERANCE, *R.base_rates().values())


@dataclass(frozen=True)
class Diagnosis:
    """The diagnosed cause of one scorecard difference (issue #13, deliverable 3).

    key: ``(table, row, column)`` as in the scorecard.
    cause: what makes the numbers differ, in a few words.
    status: ``"explained"`` when an experiment supports the cause; otherwise
        ``"unexplained: tried ..."`` naming what was tried and what it showed.
    experiment: how to reproduce the evidence: ``benchmarks/<script>.py::<function>(<arguments>)``
        (``tests/test_scorecard.py`` checks that the function exists).
    measured: the experiment's numbers (date and machine load in the script's docstring).
    preset_bug: where the cause is a preset that behaves unlike the authors' harness, what
        differs (the lead decides on the fix); empty otherwise.
    scale_free: the cause is a fact of the data, the code or a formula, true of the number at every
        profile; otherwise it was measured against the archived row and labels only rows at an
        archived scale (:data:`SCALE_FREE`, ``scorecard.REDUCED_PROFILES``).
    """

    key: tuple[str, str, str]
    cause: str
    status: str
    experiment: str
    measured: str
    preset_bug: str = ""
    scale_free: bool = False

    @property
    def explained(self) -> bool:
        return self.status == "explained"


_T4 = "benchmarks/table4_differences.py"

#: Every diagnosed difference, explained or not (implementation notes
#: §utility.table4-differences). Only the explained ones enter :data:`EXPLANATIONS` (and so the
#: "outside with cause" count); the others stay here with what was tried.
DIAGNOSES: tuple[Diagnosis, ...] = (
    *(Diagnosis(
        key=(table, "cervical_cancer", "turing"),
        cause="the authors' harness decodes the label as an INTEGER column by truncation (astype(int), B4): "
              "it is 1 only where the float32 sigmoid saturates to 1.0, which never happens on Cervical, so "
              "all 25 tables are single-class (AUROC 0.5, AUPRC = prevalence 0.0640); the preset one-hot "
              "encoded the label until 2026-11-25 (archive then: 0.9885)",
        status="explained",
        experiment=f"{_T4}::turing_label_decoding(dataset='cervical_cancer', n_models=3, n_tables=3)",
        measured="same 3 models x 3 tables, 10,000 iterations: harness decoding 0.5000 / 0.0640 (9 of 9 tables "
                 "single-class; in a 2-model probe label outputs peaked at 0.997 and 0.982, none at 1.0); rounding instead of truncation "
                 "0.9679 / 0.7768 (0 single-class); the one-hot label 0.9850 / 0.7968; the archive recomputed with "
                 "the fixed preset (5 x 5, 10,000 iterations): 0.5000 / 0.0640, 25 of 25 tables single-class",
        preset_bug="fixed 2026-11-25: turing's label_encoding='harness' is the default (an INTEGER label plus "
                   "the unfilled nfeatures = d + 1 column) and the utility benchmark applies the utility "
                   "harness's truncation and B = 128 (UTILITY_HARNESS_OVERRIDES)",
    ) for table in ("table4", "table4_auprc")),
    *(Diagnosis(
        key=(table, "cervical_cancer", "original"),
        cause="draw-to-draw variance of best-of-25 over 5 models: the archive's draw has 3 of 5 models that emit "
              "one label class only; a second draw reaches the paper's value, which is one draw of the "
              "authors' seed-13 stream (the bootstrap over our 5 models cannot exceed our best table)",
        status="explained",
        experiment=f"{_T4}::original_second_draw(n_models=5, n_tables=5, seed=1)",
        measured="second draw (master seed 1, archive pipeline): 0.8954 / 0.5240 (paper 0.9265 / 0.5280), 1 of 5 "
                 "models single-class, per-model mean AUROC 0.77, 0.75, 0.62, 0.69, 0.50; archive draw (seed 0): "
                 "0.7158 / 0.3126, 3 of 5 models single-class; preset settings k = 2, B = 128, 10,000 iterations, "
                 "sigma from int(-log10 1e-5) = 5 match the harness",
    ) for table in ("table4", "table4_auprc")),
    *(Diagnosis(
        key=(table, "cervical_cancer", "smartnoise"),
        cause="draw-to-draw variance of best-of-25: the archive's draw (master seed 0) is the highest of five "
              "independent draws at the protocol; the paper's value lies inside the range of the other four "
              "(its number is one draw of the authors' seed-13 stream)",
        status="explained",
        experiment=f"{_T4}::smartnoise_draws(seeds=(1, 2, 3, 4), n_models=5, n_tables=5)",
        measured="best-of-25 AUROC / AUPRC at master seeds 1-4 (archive pipeline, 33 iterations each): "
                 "0.8316 / 0.4648, 0.8602 / 0.5078, 0.8430 / 0.4451, 0.8064 / 0.3540; archive (seed 0) "
                 "0.9180 / 0.5553; paper 0.8025 / 0.4536; per-table mean AUROC 0.52-0.56 in every draw, "
                 "no single-class table",
    ) for table in ("table4", "table4_auprc")),
    Diagnosis(
        key=("table4", "epileptic_seizure", "borealis"),
        cause="the archive's 2,000-iteration cap (at the paper's cap the budget stops borealis at 3,252) and "
              "best-of-4 instead of best-of-25: the tables are near chance in both runs and their best-of-n "
              "grows with n; the authors' records show the same jump from their best-of-9 to best-of-25",
        status="explained",
        experiment=f"{_T4}::borealis_best_of_n(n_models=3, n_tables=3)",
        measured="3 models x 3 tables at the paper's cap (3,252 iterations): per-table mean 0.524 (records 0.506 "
                 "+- 0.006 over 25; archive 0.494 at 2,000), best-of-n 0.532 (n=1), 0.605 (n=4), 0.615 (n=9) "
                 "against the archive's best-of-4 0.542 and the records' best-of-9 at eps 0.5 / 5 of 0.625 / "
                 "0.606; the paper's 0.673 is best-of-25 at a per-table mean equal to its eps 0.5 / 5 runs",
    ),
    Diagnosis(
        key=("table11", "borealis", "N/5000"),
        cause="best-of-4 instead of the paper's best-of-25: with k = 2 teachers borealis's tables are near chance "
              "(per-table mean AUROC 0.502 at the paper's cap) and their best-of-n grows with n, as at N/1000; at "
              "n = 9 it is within the scorecard's tolerance of the paper's value (the cap alone does not move it: "
              "best-of-4 0.5814 at 3,252 iterations, 0.5819 in the archive at 2,000)",
        status="explained",
        experiment=f"{_T4}::borealis_best_of_n(n_models=3, n_tables=3, num_teachers=2)",
        measured="2026-11-27, 2,187 s wall-clock at load 3.3-4.8 (2 cores): 3 models x 3 tables at the paper's cap "
                 "(budget stop at 3,252 iterations), master seed 1: best-of-n AUROC 0.5237 (n = 1), 0.5814 (4), "
                 "0.6097 (7), 0.6105 (9); AUPRC 0.3552 / 0.4220 / 0.4579 (n = 1 / 4 / 9); per-table mean AUROC "
                 "0.5021 (sd 0.0210); the paper's best-of-25 0.6363",
    ),
    Diagnosis(
        key=("table12", "epileptic_seizure", "borealis P"),
        cause="not settled: with [49]'s hyperparameters borealis's tables are single-class at the archive's "
              "2,000-iteration cap (4 of 4) and at chance at the paper's cap (the budget stops it at 3,252 "
              "iterations: one model's two tables single-class, the other's per-table AUROC 0.485 and 0.509); the "
              "paper's 0.6069 is a best of 25 tables; whether 25 tables at chance reach it is not tested",
        status="unexplained: tried the paper's cap (budget stop at 3,252 iterations), 2 models x 2 tables at "
               "master seed 1: best-of-n 0.5000 / 0.5000 / 0.5223 / 0.5488 (n = 1-4), per-table mean AUROC 0.4987, "
               "2 of 4 tables single-class, against the archive's 0.5000 at 2,000 (4 of 4 single-class) and the "
               "paper's best-of-25 0.6069; best-of-25 at the paper's cap not run",
        experiment=f"{_T4}::borealis_best_of_n(n_models=2, n_tables=2, overrides={{'hyperparameters': 'paper'}})",
        measured="2026-11-27, 585 s wall-clock at load 2.4-4.8 (2 cores): AUROC best-of-4 0.5488, AUPRC 0.3910; "
                 "per-table mean AUROC 0.4987 (sd 0.0099), AUPRC 0.2703; 3,252 iterations, 123 s of fitting per model",
    ),
    Diagnosis(
        key=("table12", "epileptic_seizure", "original P"),
        cause="the archive's 2,000-iteration cap (original always runs 10,000 in the paper): with [49]'s "
              "hyperparameters original's label output has not left one class by 2,000 iterations (4 of 4 tables "
              "single-class, AUROC 0.5); at the paper's 10,000 both tables keep two classes and best of 2 is "
              "within 0.01 of the paper's best of 25, as for the default hyperparameters (Table 4's cell)",
        status="explained",
        experiment=f"{_T4}::best_of_n_at_cap(implementation='original', n_models=1, n_tables=2, overrides={{'hyperparameters': 'paper'}})",
        measured="2026-11-27, 441 s wall-clock at load 0.7-2.1 (2 cores): 1 model x 2 tables at 10,000 iterations, "
                 "master seed 1: best of 1 / 2 AUROC 0.6708 / 0.6783, AUPRC 0.5313 / 0.5400, per-table mean AUROC "
                 "0.6705 (sd 0.0005), no table single-class; the archive (2,000 iterations, best of 4) 0.5000; the "
                 "paper's best of 25 0.6876",
    ),
    Diagnosis(
        key=("table4", "epileptic_seizure", "turing"),
        cause="the archive's 2,000-iteration cap: with the harness's truncated INTEGER label the label output "
              "reaches 1.0 for a few rows only after longer training; at 2,000 iterations no row does, so every "
              "table is single-class (AUROC 0.5); at the paper's 10,000 iterations the tables keep two classes "
              "and score near the paper",
        status="explained",
        experiment=f"{_T4}::turing_epileptic_labels(n_models=1, n_tables=2, max_iter=10000)",
        measured="harness decoding, 1 model x 2 tables, 10,000 iterations (2026-11-25, load ~5): 17 and 14 "
                 "positive labels of 7,360, best-of-2 AUROC 0.6939 (per-table mean 0.6626), AUPRC 0.5076, against "
                 "the paper's best-of-25 0.7425; at 2,000 iterations: 0 positive labels (AUROC 0.5), as in the "
                 "archive recomputed with the fixed preset (best-of-4 0.5000, 4 of 4 tables single-class; "
                 "with the one-hot label it was 0.6881)",
        preset_bug="fixed 2026-11-25 (see the Cervical row); the cell needs the paper's 10,000-iteration cap "
                   "on Epileptic, which the archive does not run",
    ),
    *(Diagnosis(
        key=(table, clf, "turing"),
        cause="the same as Table 4's turing on Epileptic: at the archive's 2,000-iteration cap the harness's "
              "truncated INTEGER label is never 1, every synthetic table is single-class, and every classifier "
              f"scores {'AUROC 0.5' if table == 'table5' else 'AUPRC = the test prevalence (0.20)'}",
        status="explained",
        experiment=f"{_T4}::turing_epileptic_labels(n_models=1, n_tables=2, max_iter=10000)",
        measured="archive (fixed preset, 2 x 2 tables at 2,000 iterations): 4 of 4 tables single-class; at "
                 "10,000 iterations the label saturates for 17 and 14 of 7,360 rows",
        preset_bug="",
    ) for table in ("table5", "table10") for clf in R.CLASSIFIERS),
    *(Diagnosis(
        key=("table4", "epileptic_seizure", impl),
        cause="best-of-4 instead of best-of-25 (likely): the per-table mean agrees with the records and the "
              f"budget stops {impl} long before the 2,000 cap",
        status=f"unexplained: tried per-table means against the records ({note}); 9 new tables of the same "
               f"protocol (master seed 1): best of 4 {b4}, of 9 {b9}, still below the paper; best-of-25 not run",
        experiment=f"{_T4}::epileptic_mean_vs_records()",
        measured=note,
    ) for impl, note, b4, b9 in (
        ("updated", "ours 0.4833 +- 0.0076, records 0.4935 +- 0.0082, z = -0.9; 158 iterations", "0.5725", "0.5951"),
        ("synthcity", "ours 0.5233 +- 0.0100, records 0.5166 +- 0.0082, z = 0.5; 8 iterations", "0.6541", "0.6667"),
    )),
    Diagnosis(
        key=("table4", "epileptic_seizure", "original"),
        cause="the archive's 2,000-iteration cap (original always runs 10,000 in the paper): at 10,000 iterations "
              "the per-table mean reaches the records'; what remains is best of 2-4 tables against 25",
        status="explained",
        experiment=f"{_T4}::original_epileptic_long(n_models=1, n_tables=2, max_iter=10000)",
        measured="per-table mean AUROC 0.6399 (sd 0.0060, 2 tables) at 10,000 iterations against the records' 0.6261 "
                 "+- 0.0030 and the archive's 0.5941 at 2,000; best of 2 at 10,000: 0.6484; archive best of 4: "
                 "0.6365; paper best of 25: 0.6867",
    ),
    # --- the same Epileptic runs in AUPRC (Table 4's second half; Figure 9's ε = 1 point by alias)
    Diagnosis(
        key=("table4_auprc", "epileptic_seizure", "turing"),
        cause="the archive's 2,000-iteration cap, as in AUROC: the harness's truncated INTEGER label is never 1 "
              "there, every table is single-class and AUPRC is the test prevalence (0.20); at the paper's "
              "10,000 iterations the tables keep two classes",
        status="explained",
        experiment=f"{_T4}::turing_epileptic_labels(n_models=1, n_tables=2, max_iter=10000)",
        measured="1 model x 2 tables at 10,000 iterations: AUPRC best-of-2 0.5076 (17 and 14 positive labels of "
                 "7,360) against the paper's best-of-25 0.5856; at 2,000 iterations 0.2000 (0 positives)",
    ),
    Diagnosis(
        key=("table4_auprc", "epileptic_seizure", "borealis"),
        cause="partly the archive's 2,000-iteration cap and best-of-4: both raise AUPRC, but not to the paper's value",
        status="unexplained: tried the paper's cap (budget stop at 3,252 iterations) and n up to 9: AUPRC 0.4195 "
               "(n = 4) and 0.4446 (n = 9) against the archive's 0.3849 and the paper's best-of-25 0.5301; "
               "best-of-25 at the protocol not run",
        experiment=f"{_T4}::borealis_best_of_n(n_models=3, n_tables=3)",
        measured="3 x 3 at the paper's cap: AUPRC best-of-n 0.4195 (n=4), 0.4446 (n=9); archive 0.3849",
    ),
    *(Diagnosis(
        key=("table4_auprc", "epileptic_seizure", impl),
        cause="best-of-4 instead of best-of-25 (likely), as for the AUROC of the same runs",
        status=f"unexplained: tried per-table AUROC means against the records ({note}); best-of-25 at the "
               "protocol not run for this cell",
        experiment=f"{_T4}::epileptic_mean_vs_records()",
        measured=note,
    ) for impl, note in (
        ("updated", "ours 0.4833 +- 0.0076, records 0.4935 +- 0.0082, z = -0.9; 158 iterations"),
        ("synthcity", "ours 0.5233 +- 0.0100, records 0.5166 +- 0.0082, z = 0.5; 8 iterations"),
    )),
    Diagnosis(
        key=("table4_auprc", "epileptic_seizure", "original"),
        cause="not settled: the longer training that closes the AUROC gap does not move AUPRC",
        status="unexplained: tried the paper's 10,000 iterations (1 model x 2 tables): best of 2 AUPRC 0.5227 "
               "against the archive's best of 4 at 2,000 (0.5222) and the paper's best of 25 (0.5854)",
        experiment=f"{_T4}::original_epileptic_long(n_models=1, n_tables=2, max_iter=10000)",
        measured="AUPRC per-table mean 0.5156 at 10,000 iterations; best of 2 0.5227; archive 0.5222; paper 0.5854",
    ),
    Diagnosis(
        key=("table4_auprc", "cervical_cancer", "updated"),
        cause="not settled: not draw-to-draw variance; our updated tables are consistently worse than the paper's "
              "on Cervical (per-table mean AUROC below 0.5)",
        status="unexplained: tried four more best-of-25 draws at the protocol (master seeds 1-4): AUPRC 0.3667, "
               "0.4090, 0.3325, 0.2949 and AUROC 0.7828, 0.7713, 0.7799, 0.7263, all below the paper's 0.5129 / "
               "0.8739 (the archive's AUROC 0.7987 passes only on its wide interval)",
        experiment=f"{_T4}::updated_draws(seeds=(1, 2, 3, 4), n_models=5, n_tables=5)",
        measured="best-of-25 AUROC / AUPRC at seeds 1-4: 0.7828 / 0.3667, 0.7713 / 0.4090, 0.7799 / 0.3325, "
                 "0.7263 / 0.2949; per-table mean AUROC 0.43-0.47; 158 iterations; no single-class table; "
                 "archive (seed 0) AUPRC 0.2876",
    ),
    # --- the audit at 1,000 shadow models per world (Figures 5 and 12)
    Diagnosis(
        key=("figure5", "updated", "querybased"),
        cause="all of updated's Querybased leakage is the output-size channel (4 vs 5 rows), which a generator "
              "that ignores its data also shows; two of our runs of that channel at the same AUC give 2.48 and "
              "3.04, so the threshold picked on the validation split moves the bound by more than its interval",
        status="unexplained: tried the channel decomposition and the calibration line: equal sizes 0.00 and "
               "controlled 0.00 (all of the 3.04 is the size channel); the ignore-data generator 2.48 at AUC "
               "0.835 against updated's 3.04 at AUC 0.837; the paper's 2.18 lies below both",
        experiment="benchmarks/figure5_differences.py::audit_cells()",
        measured="CP 3.04 (AUC 0.837, test FN 307 / TP 93, FP 0) paper channel; 0.00 fixed size and controlled; "
                 "ignore-data generator 2.48 (AUC 0.835); paper 2.18",
    ),
    Diagnosis(
        key=("figure5", "synthcity", "groundhog"),
        cause="not settled: our synthcity's encoder keeps data-derived category lists (V12) and the target is the "
              "unique maximum of two such columns, so our attack is perfect in both channels; the paper's attack "
              "made errors",
        status="unexplained: tried the controlled channel (bounds fixed in advance): 4.67, still perfect (AUC "
               "1.000), because the category lists stay data-derived; what made the authors' run imperfect was "
               "not found",
        experiment="benchmarks/figure5_differences.py::audit_cells()",
        measured="CP 4.68 paper channel (0 test errors), 4.67 controlled (3 errors of 800); paper 3.90",
    ),
    Diagnosis(
        key=("figure5", "turing", "groundhog"),
        cause="not settled: the label encoding is not it",
        status="unexplained: tried the authors' harness label (INTEGER, truncated; 2.95, AUC 0.946) and the "
               "one-hot label (3.05, AUC 0.953), both at 1,000 per world; both lie above the paper's 2.05",
        experiment="benchmarks/figure5_differences.py::audit_cells()",
        measured="CP 2.95 (test FN 214 / TP 186, FP 3), Bayesian 3.27; one-hot (dropped rows, meta) 3.05; paper 2.05",
    ),
    Diagnosis(
        key=("figure12", "synthcity", "querybased"),
        cause="our near-perfect attack made two wrong guesses among 800 test outputs where the paper's made none: "
              "the Clopper-Pearson bound barely moves (4.67 against 4.68, within Figure 5's tolerance) but the "
              "Bayesian bound falls from the zero-error 6.29 to 5.52",
        status="explained",
        experiment="benchmarks/figure5_differences.py::audit_cells()",
        measured="AUC 0.998, test errors 2 of 800 in every channel; CP 4.67, Bayesian 5.52; the paper's Figure 12 "
                 "value implied by its zero-error Figure 5 cell: 6.29",
    ),
    # --- Table 6: original in its conditional mode (utility_variants_large)
    Diagnosis(
        key=("table6", "cervical_cancer", "conditional"),
        cause="draw-to-draw variance of best-of-25 over 5 models: a conditional model either learns how the "
              "features depend on the label it is fed (per-model mean AUROC up to 0.95) or does not (down to "
              "0.37); the archive's draw (master seed 0) is the lowest of four, and the paper's value lies "
              "inside the range of the other three",
        status="explained",
        experiment=f"{_T4}::original_conditional(seeds=(1, 2, 3), n_models=5, n_tables=5)",
        measured="best-of-25 AUROC / AUPRC at master seeds 1-3 (archive pipeline, 10,000 iterations): 0.8336 / "
                 "0.3394, 0.9762 / 0.7060, 0.8183 / 0.3287; per-table means 0.52, 0.78, 0.54; archive (seed 0) "
                 "0.7559 / 0.3128; paper 0.9330",
    ),
    Diagnosis(
        key=("table6", "epileptic_seizure", "conditional"),
        cause="not settled: the archive's 2,000-iteration cap is not it (at the paper's 10,000 the tables score "
              "about the same), and the tables vary too little for best of 25 to reach the paper's value",
        status="unexplained: tried the paper's 10,000 iterations (1 model x 2 tables): best of 2 0.6336, per-table "
               "mean 0.6273 (sd 0.0037), against the archive's 0.6224 (2,000 iterations, best of 4) and the "
               "paper's 0.7029",
        experiment=f"{_T4}::original_conditional_epileptic_long(n_models=1, n_tables=2, max_iter=10000)",
        measured="10,000 iterations: best of 1 / 2 0.6247 / 0.6336, AUPRC 0.5235, per-table mean AUROC 0.6273 (sd "
                 "0.0037); archive (2,000 iterations, best of 4) 0.6224; paper 0.7029",
    ),
    # --- Table 12: [49]'s hyperparameters (P) on Cervical (utility_variants_large)
    Diagnosis(
        key=("table12", "cervical_cancer", "original P"),
        cause="not settled: with [49]'s hyperparameters most of original's models emit one label class (3-4 "
              "of 5 in every draw), which caps best-of-25 near 0.7; the paper's 0.853 needs most models to "
              "keep both classes",
        status="unexplained: tried three more draws at the protocol (best-of-25 0.6594, 0.7270, 0.6915; the "
               "archive 0.6370): all below the paper's 0.8531, with 3-4 of 5 models single-class in each",
        experiment=f"{_T4}::hyperparameter_draws(presets=('original', 'updated', 'synthcity'), seeds=(1, 2, 3))",
        measured="master seeds 1-3: 0.6594 / 0.7270 / 0.6915 (single-class tables 80 %, 68 %, 80 %); archive "
                 "(seed 0) 0.6370; paper 0.8531",
    ),
    *(Diagnosis(
        key=("table12", "cervical_cancer", f"{preset} P"),
        cause="not settled: with [49]'s hyperparameters the tables are at chance (per-table mean AUROC ~0.5) and "
              "best-of-25 of chance tables is ~0.8 on Cervical's 172 test rows; the paper's value is what best "
              f"of {n} such tables gives, while its smartnoise and borealis P values match best of 25",
        status=f"unexplained: tried three more draws at the protocol ({draws}): all above the paper's {paper}; "
               f"the archive's own best-of-n: {curve}",
        experiment=f"{_T4}::hyperparameter_draws(presets=('original', 'updated', 'synthcity'), seeds=(1, 2, 3))",
        measured=f"best-of-25 at master seeds 1-3: {draws}; per-table means {means}; archive (seed 0) best of 1 / "
                 f"2 / 4 / 9 / 25 (best_of_n_curve): {curve}; paper {paper}",
    ) for preset, n, draws, means, curve, paper in (
        ("updated", "2-3", "0.8352, 0.8178, 0.8553", "0.51, 0.48, 0.54", "0.560 / 0.618 / 0.719 / 0.781 / 0.848",
         "0.6581"),
        ("synthcity", "3-4", "0.8259, 0.7821, 0.8086", "0.49, 0.51, 0.50", "0.486 / 0.600 / 0.698 / 0.770 / 0.846",
         "0.6867"),
    )),
    # --- Figure 4: the first moment after 1,000 iterations of one vote stream (traces_paper)
    *(Diagnosis(
        key=("figure4", preset, "e1 after 1000 iterations"),
        cause="the paper's ≈ 320k lies below what V8/V9's formula gives for any vote stream of 320,000 queries: "
              "a unanimous vote is the smallest increment (1.1569 at λ = 1, k = 5), so e(1) >= 370,216; ours sits "
              "1.7 % above that floor and the paper's value 13.6 % below it (an approximate reading, '≈', of a "
              "log axis spanning eight decades)",
        status="explained",
        experiment="benchmarks/trace_differences.py::first_moment_floor()",
        measured="per-query first-moment increments by vote split n1 = 0..5: 1.1569, 2.0879, 1.5339, 1.5339, "
                 "2.0879, 1.1569; floor 370,216; ours 376,571 (the stream unanimous on 96.4 % of queries); paper "
                 "≈ 320,000; updated's floor 46,647 against its ≈ 50k (reproduced)",
        scale_free=True,  # the paper's value lies below the formula's floor, whatever our run gives
    ) for preset in ("borealis", "smartnoise")),
    # --- Figure 8: the per-table mean AUROC at ε = 1 (the records' statistic)
    Diagnosis(
        key=("figure8", "turing", "auroc eps=1"),
        cause="the archive's 2,000-iteration cap: every table is single-class (AUROC 0.5 for every classifier); "
              "at the paper's 10,000 iterations the per-table mean is near the records'",
        status="explained",
        experiment=f"{_T4}::turing_epileptic_labels(n_models=1, n_tables=2, max_iter=10000)",
        measured="per-table mean AUROC 0.6626 over 2 tables at 10,000 iterations against the records' 0.6085; "
                 "0.5000 at 2,000",
    ),
    Diagnosis(
        key=("figure8", "original", "auroc eps=1"),
        cause="the archive's 2,000-iteration cap: at the paper's 10,000 iterations the per-table mean reaches "
              "the records'",
        status="explained",
        experiment=f"{_T4}::original_epileptic_long(n_models=1, n_tables=2, max_iter=10000)",
        measured="per-table mean AUROC 0.5941 +- 0.0047 at 2,000 iterations (archive), 0.6399 (sd 0.0060, 2 tables) "
                 "at 10,000; records 0.6261 +- 0.0030",
    ),
    # --- Setting A on Cervical: one fit per classifier, the authors' without a random state
    Diagnosis(
        key=("setting_a", "AdaBoost", "cervical_cancer"),
        cause="mostly the library version: the authors' scikit-learn 1.4.1 ran SAMME.R, the archive's 1.9 runs "
              "SAMME (the panel now runs SAMME.R, pategan_audit.adaboost; the archives keep SAMME)",
        status="unexplained: tried SAMME.R, which reproduces the records on Epileptic (0.9754) and ISOLET "
               "(0.9942) to four decimals and moves Cervical from 0.9881 to 0.9034 (record 0.8899); the "
               "remaining 0.0135 is the same for 25 random states",
        experiment=f"{_T4}::adaboost_samme_r()",
        measured="Setting A AUROC SAMME / SAMME.R / record: Cervical 0.9881 / 0.9034 / 0.8899, Epileptic 0.9733 / "
                 "0.9754 / 0.9754, ISOLET 0.9697 / 0.9942 / 0.9942",
        preset_bug="fixed 2026-11-25 in the classifier panel (AdaBoost = SAMME.R by default); the archives keep "
                   "SAMME (archive.ARCHIVE_ADABOOST)",
    ),
    *(Diagnosis(
        key=("setting_a", clf, "cervical_cancer"),
        cause=f"one draw of {clf}'s randomness: the authors pass no random state, and the record lies inside the "
              "spread of 25 refits with different states",
        status="explained",
        experiment=f"{_T4}::setting_a_seed_spread(dataset='cervical_cancer', seeds=25)",
        measured=note,
    ) for clf, note in (
        ("Bagging", "25 states: AUROC 0.9410-0.9783 (median 0.9619, sd 0.0090); record 0.9644 at the 60th "
                    "percentile; archive 0.9763"),
        ("MLP", "25 states: AUROC 0.8735-0.9684 (median 0.9170, sd 0.0275); record 0.9667 at the 96th "
                "percentile; archive 0.9198"),
    )),
    Diagnosis(
        key=("setting_a", "GBM", "cervical_cancer"),
        cause="not settled: GBM's random state only breaks ties between equal splits and moves AUROC by ~0.001",
        status="unexplained: tried 25 random states (AUROC 0.9752-0.9802, sd 0.0011) and the authors' "
               "scikit-learn 1.4.1 (25 states: 0.9752-0.9797): the record 0.9667 lies below all of them",
        experiment=f"{_T4}::setting_a_seed_spread(dataset='cervical_cancer', seeds=25)",
        measured="25 states: 0.9752 / 0.9774 / 0.9802 (min / median / max); the same function run "
                 "under scikit-learn 1.4.1.post1 (a separate venv, benchmarks/table4_differences.py's docstring) "
                 "0.9752 / 0.9780 / 0.9797; record 0.9667; archive 0.9785",
    ),
    Diagnosis(
        key=("table7", "cervical_cancer", "auprc"),
        cause="Setting A's mean AUPRC over the twelve classifiers: SAMME instead of the authors' SAMME.R, and one "
              "draw of the randomised classifiers; the record lies inside the spread of 25 refits with SAMME.R",
        status="explained",
        experiment=f"{_T4}::setting_a_mean_spread(dataset='cervical_cancer', seeds=25)",
        measured="25 states with SAMME.R: mean AUPRC 0.6161-0.6568 (median 0.6350), record 0.6192 at the 4th "
                 "percentile; SAMME at one state 0.6426, archive 0.6506",
    ),
)


#: Committed results of the experiments in ``benchmarks/`` that write rows the scorecard reads.
EXPERIMENTS_DIR = REPO_ROOT / "results" / "experiments"
#: Slack when the paper's value is compared with our best of n (four decimals printed, ties).
_REACH_SLACK = 0.005


def _n_archive(row) -> int:
    """How many archived tables a per-classifier row's ``archive`` value is the best of (files
    written before ``n_archive`` existed compare with Epileptic's best of 4)."""
    n = getattr(row, "n_archive", None)
    return 4 if n is None or pd.isna(n) else int(n)


def _row_key(r) -> tuple[str, str, str]:
    """The scorecard key of an experiment row: ``(table, classifier, implementation)``, or for a
    point of an ε-sweep figure (a row with ``epsilon``; ``sweep_draw_again``) ``(figure,
    implementation, "<metric> eps=<ε>")``, the key :mod:`pategan_audit.scorecard` gives that point."""
    eps = getattr(r, "epsilon", None)
    if eps is None or pd.isna(eps):
        return (r.table, r.classifier, r.implementation)
    return (r.table, r.implementation, f"{r.metric} eps={float(eps):g}")


#: ``per_classifier_<dataset>_<preset>_eps<ε>.csv``: an ε-sweep point drawn again (``sweep_draw_again``)
#: (``_<n>k``: trained to n thousand iterations instead of the archive's cap)
_SWEEP_STEM = re.compile(r"per_classifier_(?P<dataset>[a-z_]+?)_(?P<preset>[a-z]+)_eps(?P<eps>[0-9.]+?)"
                         r"(?:_(?P<thousands>[0-9]+)k)?")


def _sweep_call(stem: str) -> str:
    """The experiment call behind a committed file without an entry of its own: an ε-sweep point's
    ``sweep_draw_again``, else the per-classifier default."""
    m = _SWEEP_STEM.fullmatch(stem)
    if m is None:
        return "per_classifier_best_of_n()"
    longer = "" if m["thousands"] is None else f", n_models=1, n_tables=2, max_iter={int(m['thousands']) * 1000}"
    return (f"sweep_draw_again(dataset='{m['dataset']}', implementation='{m['preset']}', "
            f"epsilon={float(m['eps']):g}{longer})")


def per_classifier_diagnoses(paths=None) -> tuple[Diagnosis, ...]:
    """Tables 5 and 10 (Epileptic, each classifier's best over n tables; Tables 8 and 9 and Table
    4's cell on Credit) from the committed
    ``per_classifier_*.csv`` of ``benchmarks/table4_differences.py`` (``per_classifier_best_of_n``:
    9 new tables of the archive's protocol; ``original_epileptic_long``:
    original at the paper's 10,000 iterations; ``adaboost_samme_r``: Table 5's AdaBoost with SAMME.R).
    Each row says what was changed (``tried``) and
    gives the classifier's best over the archive's tables and over the experiment's. A cell is
    explained when the paper's value lies between the archive's best and the experiment's (within
    a slack for ties): the change, or another draw of the same protocol, moves the value across the
    paper's, from below or from above; otherwise it stays unexplained with every change tried and
    its numbers. Cells whose archived value is within the smallest
    tolerance of the paper's are left out; no file, no diagnoses."""
    if paths is None:
        paths = sorted(EXPERIMENTS_DIR.glob("per_classifier_*.csv"))
    elif isinstance(paths, (str, Path)):
        paths = [paths]
    found: dict[tuple[str, str, str], list] = {}
    experiments = {"per_classifier_best_of_n": "per_classifier_best_of_n()",
                   "per_classifier_borealis_smartnoise": "per_classifier_best_of_n(presets=('borealis', 'smartnoise'))",
                   "per_classifier_original_10k": "original_epileptic_long()",
                   "per_classifier_adaboost": "adaboost_samme_r()"}
    # per_classifier_<dataset>_<preset>.csv: that preset's Credit or ISOLET cell drawn again at the archive's M x S
    experiments.update({f"per_classifier_credit_{p}": f"per_classifier_best_of_n(presets=('{p}',), dataset='credit')"
                        for p in R.IMPLEMENTATIONS})
    experiments.update({f"per_classifier_isolet_{p}": f"per_classifier_best_of_n(presets=('{p}',), dataset='isolet', "
                                                      "n_models=2, n_tables=2)" for p in R.IMPLEMENTATIONS})
    for path in map(Path, paths):
        if not path.exists():
            continue
        call = f"benchmarks/table4_differences.py::{experiments.get(path.stem) or _sweep_call(path.stem)}"
        for r in pd.read_csv(path).itertuples():
            limit = SMALLEST_AUPRC_TOLERANCE if r.metric == "auprc" else SMALLEST_TOLERANCE
            if abs(float(r.archive) - float(r.paper)) <= limit:  # inside every tolerance
                continue
            found.setdefault(_row_key(r), []).append((r, call))
    out = []
    for key, tries in found.items():
        def numbers(r) -> str:
            if getattr(r, "statistic", None) == "mean":  # Figure 8's point: per-table means, not bests
                return (f"{r.tried}: per-table mean AUROC {float(r.best_of_all):.4f} after {int(r.iterations):,} "
                        f"iterations (the archive's {_n_archive(r)} tables' {float(r.archive):.4f})")
            mean = getattr(r, "mean_table_auroc", None)  # written by sweep_draw_again
            per_table = "" if mean is None or pd.isna(mean) else f"; the new tables' mean AUROC {float(mean):.4f}"
            return (f"{r.tried}: best {float(r.best_of_all):.4f} after {int(r.iterations):,} iterations (archive's "
                    f"best of {_n_archive(r)} {float(r.archive):.4f}{per_table})")

        def longer(r) -> bool:  # trained past the archive's cap (sweep_draw_again's max_iter)
            cap, archived_cap = getattr(r, "max_iter", None), getattr(r, "archive_max_iter", None)
            return cap is not None and not pd.isna(cap) and int(cap) > int(archived_cap)
        paper = float(tries[0][0].paper)
        def between(r) -> bool:  # the archive's value and the experiment's bracket the paper's
            lo, hi = sorted((float(r.archive), float(r.best_of_all)))
            return lo - _REACH_SLACK <= paper <= hi + _REACH_SLACK

        reached = [(r, call) for r, call in tries if between(r)]
        measured = f"{tries[0][0].metric.upper()}; paper {paper:.4f}; " + "; ".join(numbers(r) for r, _ in tries)
        if reached:
            r, call = reached[0]
            what = ("per-table mean" if getattr(r, "statistic", None) == "mean" else
                    "best-of-n" if key[0].startswith(("table4", "figure")) else "classifier's best")
            cause = (f"the archive's {int(r.archive_max_iter):,}-iteration cap: with {r.tried} the {what} moves "
                     "across the paper's value" if longer(r) else
                     f"the archive's protocol or its draw: with {r.tried} the {what} moves across the paper's value")
            out.append(Diagnosis(key=key, cause=cause, status="explained", experiment=call, measured=measured))
        else:
            def where(r) -> str:
                return "above" if paper > max(float(r.archive), float(r.best_of_all)) + _REACH_SLACK else "below"
            tried = "; ".join(f"{numbers(r)}, the paper's {paper:.4f} {where(r)} it" for r, _ in tries)
            longest = max((r for r, _ in tries if longer(r)), key=lambda r: int(r.max_iter), default=None)
            if not key[0].startswith("figure"):
                cause = "not settled: neither more tables nor longer training closes the gap"
            elif longest is None:
                cause = ("not settled: another draw of the same protocol, at the paper's number of tables, does not "
                         "reach the paper's point")
            else:  # a figure's point trained past the archive's cap: say how far it moved
                statistic = "mean" if getattr(longest, "statistic", None) == "mean" else "best"
                cause = (f"not settled: at a {int(longest.max_iter):,}-iteration cap the point moves from "
                         f"{float(longest.archive):.4f} to {float(longest.best_of_all):.4f} ({statistic} of "
                         f"{int(longest.n_all)} new tables), {'short of' if where(longest) == 'above' else 'past'} "
                         f"the paper's {paper:.4f}; more tables at that cap not run")
            out.append(Diagnosis(key=key, cause=cause,
                                 status=f"unexplained: tried {tried}", experiment=tries[0][1], measured=measured))
    return tuple(out)


def setting_a_spread_diagnoses(path=None) -> tuple[Diagnosis, ...]:
    """Credit's Setting A (Table 7's row and each classifier's record) from the committed
    ``credit_setting_a_splits.csv`` of ``benchmarks/table4_differences.py::credit_setting_a_splits``:
    the twelve classifiers fitted on other 80/20 splits of the bundled rows (only the authors' 20 %
    test split is bundled, so our test split holds 20 frauds) and at other random states. A cell is
    explained when the paper's value (measured on the full data) lies inside the range of these
    fits, i.e. one draw of split and state could give it; otherwise it stays unexplained with the
    range it falls outside of. No file, no diagnoses."""
    path = Path(path) if path is not None else EXPERIMENTS_DIR / "credit_setting_a_splits.csv"
    if not path.exists():
        return ()
    fits = pd.read_csv(path)
    call = "benchmarks/table4_differences.py::credit_setting_a_splits()"
    n_splits, n_states = fits["split_seed"].nunique(), fits["state"].nunique()
    what = f"{n_splits} splits of the bundled rows and {n_states} random states ({len(fits.groupby(['split_seed', 'state']))} fits)"
    t7 = R.table7()
    cells = [(("setting_a", clf, "credit"), g["auroc"], float(g["paper"].iloc[0]), "AUROC")
             for clf, g in fits.groupby("classifier")]
    means = fits.groupby(["split_seed", "state"])[["auroc", "auprc"]].mean()
    cells += [(("table7", "credit", m), means[m], float(t7[(t7["row"] == "credit") & (t7["column"] == m)]["value"].iloc[0]),
               f"mean {m.upper()} of the twelve") for m in ("auroc", "auprc")]
    out = []
    for key, values, paper, label in cells:
        lo, mid, hi = float(values.min()), float(values.median()), float(values.max())
        measured = (f"{label} over {what}: {lo:.4f} / {mid:.4f} / {hi:.4f} (min / median / max); "
                    f"paper {paper:.4f} on the full data")
        if lo <= paper <= hi:
            out.append(Diagnosis(key=key, status="explained", experiment=call, measured=measured,
                                 cause="which frauds land in the test split (20 in ours, 98 in the authors') and one "
                                       "draw of the classifier's random state: the record lies inside the range of "
                                       "our splits and states (a proxy: ours train on 45,569 bundled rows, the "
                                       "authors' on 227,845)"))
        else:
            side = "below" if paper < lo else "above"
            out.append(Diagnosis(key=key, experiment=call, measured=measured,
                                 cause="not settled: the full Kaggle data (227,845 training rows) is not bundled",
                                 status=f"unexplained: tried {what}; the paper's {paper:.4f} lies {side} all of them "
                                        f"({lo:.4f}-{hi:.4f})"))
    return tuple(out)


#: |z| of a per-table mean against the records' within which the tables "score like the authors'"
_Z_AGREE = 2.0


def sweep_records_diagnoses(path=None) -> tuple[Diagnosis, ...]:
    """The Epileptic ε-sweep points off ε = 1 (Figures 1, 8, 9) from the committed
    ``sweep_mean_vs_records.csv`` of ``benchmarks/table4_differences.py::sweep_mean_vs_records``:
    each point's tables against the authors' records at the same ε (per-table mean AUROC, ours
    over the sweep's 4 tables, theirs over 9) and the iterations the archive ran. No training
    lies behind it, so every cell stays unexplained; the cause says where the gap sits: in the
    best of 4 against the paper's best of 9 when the means agree (|z| <= 2), in the training
    otherwise (the archive's 2,000-iteration cap against the paper's 10,000 when it stopped the
    run). A point drawn again (:func:`per_classifier_diagnoses`) keeps that diagnosis. Points
    within the smallest tolerance are left out; no file, no diagnoses."""
    path = Path(path) if path is not None else EXPERIMENTS_DIR / "sweep_mean_vs_records.csv"
    if not path.exists():
        return ()
    call = "benchmarks/table4_differences.py::sweep_mean_vs_records()"
    out = []
    for r in pd.read_csv(path).itertuples():
        limit = SMALLEST_AUPRC_TOLERANCE if r.metric == "auprc" else SMALLEST_TOLERANCE
        if abs(float(r.ours) - float(r.paper)) <= limit:
            continue
        eps = float(r.epsilon)
        compared = (f"per-table mean AUROC at epsilon = {eps:g}: ours {r.ours_mean:.4f} +- {r.ours_se:.4f} over "
                    f"{int(r.n_ours)} tables, the authors' records {r.records_mean:.4f} +- {r.records_se:.4f} over "
                    f"{int(r.n_paper)} (z = {r.z:.1f}); {int(r.iterations):,} iterations run, cap {int(r.max_iter):,}")
        capped = int(r.iterations) >= int(r.max_iter) and int(r.max_iter) < int(r.paper_max_iter)
        training = (f"the archive's {int(r.max_iter):,}-iteration cap stopped the run (the paper's is "
                    f"{int(r.paper_max_iter):,}): longer training is the first candidate, not run" if capped else
                    f"the budget stopped training at {int(r.iterations):,} iterations, inside the archive's cap")
        side = ("beside the authors' without a z (the records give no standard error here: every table "
                "of theirs single-class)" if pd.isna(r.z) else
                f"like the authors' on average (|z| <= {_Z_AGREE:g})" if abs(r.z) <= _Z_AGREE else
                f"{'below' if r.z < 0 else 'above'} the authors' on average")
        if r.statistic == "mean":
            cause = f"not settled: our tables score {side}; {training}"
            status = f"unexplained: tried the comparison with the authors' records only ({compared}); no experiment run"
        else:
            gap = (f"the gap is then in the best of {int(r.n_ours)} tables against the paper's best of "
                   f"{int(r.n_paper)}; not drawn again at the paper's n" if abs(r.z) <= _Z_AGREE else training)
            # (a NaN z compares False: the gap is then placed in the training)
            cause = f"not settled: our tables score {side}; {gap}"
            status = f"unexplained: tried the per-table mean against the authors' records ({compared})"
        out.append(Diagnosis(key=(r.table, r.implementation, f"{r.metric} eps={eps:g}"), cause=cause,
                             status=status, experiment=call,
                             measured=f"{r.metric.upper()} {r.statistic}: ours {float(r.ours):.4f}, paper "
                                      f"{float(r.paper):.4f}; {compared}"))
    return tuple(out)


def _with_measured(static: tuple[Diagnosis, ...]) -> tuple[Diagnosis, ...]:
    """The hand-written diagnoses, then the measured ones (per classifier, Credit's Setting A, the
    Epileptic sweep against the records) for keys left open, the first for each key."""
    taken = {d.key for d in static}
    out = list(static)
    for d in (*per_classifier_diagnoses(), *setting_a_spread_diagnoses(), *sweep_records_diagnoses()):
        if d.key not in taken:  # a point drawn again keeps that diagnosis, not the records comparison
            out.append(d)
            taken.add(d.key)
    return tuple(out)


DIAGNOSES = _with_measured(DIAGNOSES)


def diagnoses_table() -> pd.DataFrame:
    """:data:`DIAGNOSES` as a table: one row per diagnosed cell with its cause, status, the
    experiment that supports it (or what was tried), the measured numbers and any preset bug."""
    return pd.DataFrame([{"table": d.key[0], "row": d.key[1], "column": d.key[2], "cause": d.cause,
                          "status": d.status, "experiment": d.experiment, "measured": d.measured,
                          "preset bug": d.preset_bug} for d in DIAGNOSES]).set_index(["table", "row", "column"])

#: (Table 4 statistic, dataset) -> the figure whose ε = 1 point is that cell (§5.2's curves)
_FIGURE_AT_EPS1 = {("table4", "epileptic_seizure"): "figure1", ("table4_auprc", "epileptic_seizure"): "figure9",
                   ("table4", "credit"): "figure6", ("table4_auprc", "credit"): "figure7"}


def aliases(key: tuple[str, str, str]) -> list[tuple[str, str, str]]:
    """The other scorecard keys under which the paper prints the same runs as ``key``
    (:func:`derive`, :func:`_best_of_n_rows`): Table 4's cell is Table 12's "D" column, Table 6's
    non-conditional column (original), the "Average" row of the dataset's per-classifier table
    (:data:`pategan_audit.reference.PER_CLASSIFIER_TABLES`; AUPRC: Tables 9 and 10), on Epileptic
    Table 11's "N/1000", and the ε = 1 point of the dataset's privacy-utility figure: Figure 1
    (AUROC) or 9 (AUPRC) on Epileptic, Figure 6 or 7 on Credit."""
    table, row, column = key
    out = []
    metric = {"table4": "auroc", "table4_auprc": "auprc"}.get(table)
    if table == "table4":
        out.append(("table12", row, f"{column} D"))
        if column == "original":
            out.append(("table6", row, "non_conditional"))
        if row == "epileptic_seizure" and column in R.table11(wide=True).index:
            out.append(("table11", column, "N/1000"))
    figure = _FIGURE_AT_EPS1.get((table, row))
    if figure is not None:
        out.append((figure, column, f"{metric} eps=1"))
    out += [(t, R.AVERAGE, column) for t, m in R.PER_CLASSIFIER_TABLES.get(row, ()) if m == metric]
    return out


def _by_key(diagnoses) -> dict[tuple[str, str, str], tuple[Diagnosis, str]]:
    """Each diagnosed key and its aliases -> (diagnosis, prefix naming the source for an alias)."""
    out: dict[tuple[str, str, str], tuple[Diagnosis, str]] = {}
    for d in diagnoses:
        out.setdefault(d.key, (d, ""))
        for a in aliases(d.key):
            out.setdefault(a, (d, f"= {d.key[0].replace('_', ' ')}'s cell ({d.key[1]}, {d.key[2]}): "))
    return out


DIAGNOSED = _by_key(DIAGNOSES)

# Differences we understand, shown beside the verdict (implementation notes §data.cleaning, §gaps,
# §utility.table4-differences): the explained DIAGNOSES (and their aliases) plus two data facts.
_DATA_FACTS: dict[tuple[str, str, str], str] = {
    ("table7", "cervical_cancer", "d"): "the paper prints the raw file's 36 columns; the authors' cleaning keeps 28 features + label",
    ("table7", "credit", "N"): "only the authors' 20 % test split of Kaggle Credit is bundled (point PATEGAN_AUDIT_CREDIT_CSV to the full file)",
}
EXPLANATIONS: dict[tuple[str, str, str], str] = {
    **_DATA_FACTS,
    **{k: f"{prefix}{d.cause} (experiment: {d.experiment})" for k, (d, prefix) in DIAGNOSED.items() if d.explained},
}

#: Causes true at every profile (the data facts and the ``scale_free`` diagnoses): they label a
#: reduced-profile row too; every other cause labels only the archived rows it was measured on.
SCALE_FREE: frozenset[tuple[str, str, str]] = frozenset(_DATA_FACTS) | {
    k for k, (d, _) in DIAGNOSED.items() if d.scale_free}

#: Status of a difference nobody diagnosed yet (:func:`status`).
NOT_DIAGNOSED = "unexplained: not diagnosed"


def status(table: str, row: str, column: str, verdict_: str) -> str:
    """Where a cell outside its tolerance stands: ``"explained"`` (a cause an experiment
    supports, :data:`EXPLANATIONS`), the diagnosis' ``"unexplained: tried ..."``, or
    :data:`NOT_DIAGNOSED`; empty for every other verdict."""
    if verdict_ != "differs":
        return ""
    key = (table, row, column)
    if key in EXPLANATIONS:
        return "explained"
    if key in DIAGNOSED:
        d, prefix = DIAGNOSED[key]
        return d.status if not prefix else f"{d.status} ({prefix.rstrip(': ')})"
    return NOT_DIAGNOSED
