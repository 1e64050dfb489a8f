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
# # Training traces
#
# Paper §6.1: what each teacher sees (Figure 2), the teachers' losses (Figures 3 and 11) and the moments accountants (Figure 4).

# %% tags=["parameters"]
profile: str = "book"  # "smoke" (CI, seconds), "book" (default of the book build), "paper" (full protocol)
eps: float = 1.0  # privacy budget epsilon of this section's main results
seed: int = 0  # master seed: the same seed gives the same numbers
n_jobs: int = 2  # parallel workers for independent trainings
results_dir: str = "results"  # tables and figures are also written to <results_dir>/training_traces/

# %%
import warnings

from pategan_audit import datasets
from pategan_audit.report import Section

sec = Section("training_traces", profile=profile, eps=eps, seed=seed, results_dir=results_dir)
print(f"profile={sec.profile}, eps={sec.eps}, seed={sec.seed}")

# %% [markdown]
# ## Datasets (Table 7)
#
# Computed from the bundled data beside the paper's Table 7.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t7 = datasets.table7(("cervical_cancer", "isolet", "epileptic_seizure", "credit"))
sec.table(t7, "table7_summary")
