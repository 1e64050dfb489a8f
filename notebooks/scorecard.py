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

# %% tags=["parameters"]
profile: str = "book"  # profile the section pages were built with (for the caption only)
seed: int = 0  # unused: nothing random happens on this page
results_dir: str = "results"  # where the section notebooks wrote their scorecard.csv files

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

# %% tags=["hide-input"]
pd.set_option("display.max_rows", 2000)
card.set_index(["table", "row", "column"]).round(4)
