# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Reproduction scorecard
#
# Every number the paper prints that this book regenerates — its tables, the points of its
# figures, the audit bounds, the training-trace counts, the code-review facts of Tables 2 and 3 —
# with our value at the profile the book was built with, the difference, a tolerance and a
# verdict. Paper values come from `pategan_audit.reference` (each with its provenance: printed,
# or derived from the authors' released records); ours are the values the section pages computed
# in this build (`results/<section>/scorecard.csv`), the presets' own configuration (Tables 2
# and 3, no training) and rows derived from those (Table 6's non-conditional column is Table 4's
# original column; the AUROC-Δ rows of Tables 1, 6 and 12 once all four datasets are run).
#
# **Tolerances come from spread.** A cell's tolerance is the run-to-run spread of its statistic
# where one is measured: a 90 % bootstrap interval over the generator models and their synthetic
# tables for best-of-n numbers, the standard errors for Figure 8 (ours and the paper's printed
# ones), the bootstrap of the test counts for ε_emp. The paper's value is one draw of the same
# statistic, so it gets the same spread unless it prints its own: `sqrt(h_ours² + h_paper²)`,
# never below a floor. Where nothing is measurable (one synthetic table per cell at reduced
# profiles, one classifier fit, one trace) the row says so and a stated fallback applies. AUPRC
# is judged against its base rate π: its floor is at most π and its fallback is a share of the
# excess over π, so a Credit AUPRC (π = 0.0017) of 0.03 against 0.0017 differs.
#
# **Verdicts.** *reproduced*: the difference is within the tolerance; *at chance (both)*: an
# AUROC or AUPRC where both numbers are at chance (AUROC within ±0.02 of 0.5, AUPRC at most
# 1.5 π) — agreement about nothing, counted apart from reproductions; *differs*: outside the
# tolerance, *with cause* where a known difference explains it, else *unexplained*; *reproduced
# up to ceiling* / *profile too small to certify*: an audit bound at a reduced profile whose
# number of shadow models cannot certify the paper's value; *not yet run*: this build's profile
# does not compute that cell. Reduced profiles leave many cells *not yet run* and make utility
# numbers lower (fewer iterations, fewer synthetic tables, subsampled data): a *differs* at the
# `book` profile is a statement about that profile, not about the paper's protocol. Every rule
# has a row in the tests that it must judge *differs*.

# %% tags=["parameters", "remove-cell"]
profile: str = "book"  # profile the section pages were built with (for the caption only)
seed: int = 0  # unused: nothing random happens on this page
results_dir: str = "results"  # where the section notebooks wrote their scorecard.csv files

# %% tags=["remove-input"]
# Check the parameters (papermill's -p values included) before anything runs: an unknown or misspelled
# name, a non-integer seed, an unknown profile or an out-of-range value stops here with the valid choices.
# Then the page's display settings (no truncated table, figure text >= 9 pt, our warnings silenced) and
# the parameters of this run as a table (the parameters cell itself is hidden in the HTML).
from pategan_audit.display import parameters_table, setup_page
from pategan_audit.params import validate_notebook_parameters

validate_notebook_parameters(globals(), section="scorecard")
setup_page()
parameters_table(globals())

# %% tags=["hide-input"]
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from pategan_audit import scorecard
from pategan_audit.runner import REPO_ROOT, atomic_write_text

root = Path(results_dir) if Path(results_dir).is_absolute() else REPO_ROOT / results_dir
ours = pd.concat([scorecard.collect_ours(root), scorecard.collect_code()], ignore_index=True)
card = scorecard.build(ours)
atomic_write_text(root / "scorecard.csv", card.to_csv(index=False))
counts = card["verdict"].value_counts()
display(Markdown(
    f"**{len(card)} numbers** of the paper are tracked; at this build: "
    + ", ".join(f"{v} {k}" for k, v in counts.items()) + "."
))

# %% [markdown]
# ## Verdicts per table or figure
#
# *compared* = *within tolerance* + *at chance (both)* + *ceiling-limited* + *outside with
# cause* + *outside unexplained*; *tracked* = *compared* + *not yet run*. Every number outside its
# tolerance carries a `status` in the tables below: *explained* (a cause an experiment supports),
# *unexplained: tried …* (what was tried and what it showed), or *unexplained: not diagnosed*
# (no experiment has looked at it yet; counted in *of which not diagnosed*). The experiments were
# run against the archived rows (the section after next), so at a reduced profile (`smoke`, `book`)
# a differing row reads *not diagnosed at the … profile*: a cause found at the paper's protocol
# is not a cause of a number from fewer iterations, rows or tables. Facts of the data or of a
# formula (Table 7's bundled Credit split, Figure 4's floor) hold at every scale and label every row.

# %% tags=["hide-input"]
scorecard.verdict_counts(card)

# %% [markdown]
# ## The rules
#
# One rule per table or figure: the statistic, where its spread is measured, the floor of the
# tolerance and the fallback where no spread is measurable. Each row of the full table below
# repeats the rule as applied to it (column `rule`).

# %% tags=["hide-input"]
scorecard.rules_table()

# %% [markdown]
# ## What is not compared, and why

# %% tags=["hide-input"]
scorecard.not_compared().set_index("artefact")

# %% [markdown]
# ## Every number
#
# First, once per table, the profile and the runs behind our values; then every number with the
# paper's value, ours, the difference, the tolerance, the verdict and how the tolerance was
# obtained.

# %% tags=["hide-input"]
# what stands behind our values is the same for every number of a table: listed once per table
display(card.dropna(subset=["runs"])[["table", "profile", "runs"]].drop_duplicates().set_index("table"))
card.drop(columns=["profile", "runs", "interval_lo", "interval_hi"]).set_index(["table", "row", "column"]).round(4)

# %% [markdown]
# ## The same numbers at the archived `large` profile
#
# Runs too large for a book build are committed as archives (`results/archive/`, see the utility,
# training-traces and auditing pages): Table 4 (and from it Tables 1, 6 and 12's D column),
# Tables 5 and 10 and Setting A on Cervical Cancer (exactly the paper's protocol) and Epileptic
# Seizure (full data, 2,000-iteration cap, best of 4); Table 4's Credit row with Tables 8 and 9
# (bundled 20 % split, best of 9) and its ISOLET row (best of 2 × 2); the ε sweeps of Figures 1,
# 8 and 9; Tables 6, 11 and 12's variants (`utility_variants_large`: the conditional original,
# [49]'s hyperparameters, the teacher counts); Figures 2-4 at the authors' trace sizes
# (`traces_paper`); and the audits with the
# paper's 1,000 shadow models per world (Figure 5, and Figure 12 where the paper's value is
# implied). Tables 2 and 3 (the presets' code) and Table 7's dataset counts (the bundled data)
# are the same at every scale. Here every
# best-of-n number carries its bootstrap interval, so the tolerances are the measured ones. The
# archives' AdaBoost is SAMME (newer scikit-learn), except in `utility_tables_large` (Credit and
# ISOLET); that archive and the book's own runs use SAMME.R, as the authors' scikit-learn 1.4.1
# did (implementation notes {ref}`§utility.classifiers <notes-utility-classifiers>`):

# %% tags=["hide-input"]
archived = scorecard.collect_archived()
if archived.empty:
    display(Markdown("*No archive is present (run `python -m pategan_audit.archive …`).*"))
else:
    card_large = scorecard.build(pd.concat([archived, scorecard.collect_code(), scorecard.collect_data()],
                                           ignore_index=True))
    card_large = card_large[card_large["ours"].notna()]
    atomic_write_text(root / "scorecard_archived.csv", card_large.to_csv(index=False))
    counts_large = card_large["verdict"].value_counts()
    display(Markdown(f"**{len(card_large)} numbers** from the archives, the presets' code and the bundled data: "
                     + ", ".join(f"{v} {k}" for k, v in counts_large.items()) + "."))
    display(scorecard.verdict_counts(card_large))
    display(card_large.dropna(subset=["runs"])[["table", "profile", "runs"]].drop_duplicates().set_index("table"))
    display(card_large.set_index(["table", "row", "column"]).drop(columns=["provenance", "profile", "runs"]).round(4))

# %% [markdown]
# ## Differences diagnosed by experiment
#
# For the largest differences at the paper's protocol (Table 4 first, then the Epileptic figures
# and Setting A), each cause below was tested by an experiment (`benchmarks/table4_differences.py`, one function per row; the script's docstring gives
# the measured numbers, the date and the machine's load). *explained* means the experiment supports
# the cause; *unexplained* rows say what was tried. A "preset bug" is a way our preset behaves
# unlike the harness the authors ran, found by the diagnosis and not fixed yet (implementation notes
# {ref}`§utility.table4-differences <notes-utility-table4-differences>`). Each Epileptic sweep point
# off ε = 1 that no experiment has drawn again carries the comparison of its tables with the
# authors' records at that ε (`sweep_mean_vs_records`, no training): it says whether the gap lies in
# the best of 4 against the paper's best of 9 or in the training, and leaves the point unexplained.

# %% tags=["hide-input"]
scorecard.diagnoses_table()
