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
# figures, the audit bounds, the training-trace counts — with our value at the profile the book
# was built with, the difference, and a verdict. Paper values come from
# `pategan_audit.reference` (each with its provenance: printed, or derived from the authors'
# released records); ours are the values the section pages computed in this build
# (`results/<section>/scorecard.csv`).
#
# **Verdicts.** *reproduced*: the difference is within the stated tolerance; *differs*: it is
# not; *reproduced up to ceiling*: an audit bound reaches the largest value the profile's number
# of shadow models can certify, which is below the paper's value; *not yet run*: this build's
# profile does not compute that cell. Reduced profiles leave many cells *not yet run* and make
# utility numbers lower (fewer iterations, fewer synthetic tables, subsampled data): a *differs*
# at the `book` profile is a statement about that profile, not about the paper's protocol.

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
card = scorecard.build(scorecard.collect_ours(root))
atomic_write_text(root / "scorecard.csv", card.to_csv(index=False))
counts = card["verdict"].value_counts()
display(Markdown(
    f"**{len(card)} numbers** of the paper are tracked; at this build: "
    + ", ".join(f"{v} {k}" for k, v in counts.items()) + "."
))

# %% [markdown]
# ## Summary per table or figure

# %% tags=["hide-input"]
scorecard.summary(card)

# %% [markdown]
# ## Tolerances and why

# %% tags=["hide-input"]
pd.DataFrame([{"table": t, "tolerance": f"{tol.value:g} ({'relative' if tol.kind == 'rel' else 'absolute'})",
               "justification": tol.why} for t, tol in scorecard.TOLERANCES.items()]).set_index("table")

# %% [markdown]
# ## Every number
#
# First, once per table, the profile and the runs behind our values; then every number with the
# paper's value, ours, the difference, the tolerance and the verdict.

# %% tags=["hide-input"]
# what stands behind our values is the same for every number of a table: listed once per table
display(card.dropna(subset=["runs"])[["table", "profile", "runs"]].drop_duplicates().set_index("table"))
card.drop(columns=["profile", "runs"]).set_index(["table", "row", "column"]).round(4)

# %% [markdown]
# ## The same numbers at the archived `large` profile
#
# Two runs too large for a book build are committed as archives (`results/archive/`, see the
# utility and auditing pages): Table 4 and Setting A on Cervical Cancer (exactly the paper's
# protocol) and Epileptic Seizure (full data, 2,000-iteration cap, best of 4) at ε = 1, and the
# Querybased audit with the paper's 1,000 shadow models per world. Their numbers, judged with
# the same tolerances:

# %% tags=["hide-input"]
archived = scorecard.collect_archived()
if archived.empty:
    display(Markdown("*No archive is present (run `python -m pategan_audit.archive …`).*"))
else:
    card_large = scorecard.build(archived)
    card_large = card_large[card_large["ours"].notna()]
    atomic_write_text(root / "scorecard_archived.csv", card_large.to_csv(index=False))
    counts_large = card_large["verdict"].value_counts()
    display(Markdown(f"**{len(card_large)} numbers** from the archives: "
                     + ", ".join(f"{v} {k}" for k, v in counts_large.items()) + "."))
    display(scorecard.summary(card_large))
    display(card_large.dropna(subset=["runs"])[["table", "profile", "runs"]].drop_duplicates().set_index("table"))
    display(card_large.set_index(["table", "row", "column"]).drop(columns=["provenance", "profile", "runs"]).round(4))
