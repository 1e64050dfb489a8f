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
# # Library guide
#
# Executed examples of the `pategan_audit` library: load a dataset, train any of the seven
# PATE-GANs, switch a violation off, read the training trace, score synthetic data with the
# paper's twelve classifiers, and audit *any* generator — including one that is not a PATE-GAN —
# with the black-box distinguishing game. Every cell runs when the book is built (tiny settings,
# seconds).

# %% tags=["parameters", "remove-cell"]
profile: str = "book"  # unused beyond the caption: every example here is tiny
seed: int = 0  # seed of every example
results_dir: str = "results"  # unused (this page writes nothing)

# %% tags=["remove-input"]
# Check the parameters (papermill's -p values included) before anything runs: an unknown or misspelled
# name, a non-integer seed, an unknown profile or an out-of-range value stops here with the valid choices.
# Then the page's display settings (no truncated table, figure text >= 9 pt, our warnings silenced) and
# the parameters of this run as a table (the parameters cell itself is hidden in the HTML).
from pategan_audit.pages.display import parameters_table, setup_page
from pategan_audit.pages.params import validate_notebook_parameters
from pategan_audit.runner import RunOptions, activate

validate_notebook_parameters(globals(), section="library_guide")
setup_page()
run_options = activate(RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once, for the whole page
parameters_table(globals())

# %%
import warnings

import numpy as np
import pandas as pd

from pategan_audit import datasets
from pategan_audit.runner import single_thread

single_thread()  # tiny networks train fastest on one thread
warnings.simplefilter("ignore", category=UserWarning)

# %% [markdown]
# ## Datasets
#
# `datasets.load(name)` applies the authors' cleaning and 80/20 split (checked against their
# published split) and verifies every bundled file's SHA-256.

# %%
ds = datasets.load("cervical_cancer")
ds, ds.summary

# %% [markdown]
# ## Train a PATE-GAN
#
# `create(name, epsilon=, delta=, seed=, **overrides)` gives an unfitted generator; every preset has
# `fit(df, label=)` and `sample(n)`. The defaults are the implementation *as the paper benchmarked it*.

# %%
from pategan_audit.implementations import PRESETS, create

print(PRESETS)
model = create("smartnoise", epsilon=1.0, delta=1e-5, seed=seed, num_teachers=5, max_iter=20)
model.fit(ds.train, label=ds.label)
synth = model.sample(len(ds.train))
synth.head()

# %% [markdown]
# The training trace is the audit harness's introspection (implementation notes
# {ref}`§violations.catalogue <notes-violations-catalogue>`): rows seen by each teacher, votes,
# noise and labels per query, the moments α(l) and ε̂ after every iteration.

# %%
tr = model.trace
print("iterations:", tr.iterations, "| final ε̂:", round(tr.eps_hat[-1], 4))
print("rows seen per teacher:", [len(s) for s in tr.teacher_rows])
print("votes n1 of the first 10 queries:", tr.votes[0][:10], "of k =", model.num_teachers_)

# %% [markdown]
# ## Violations are switches
#
# Every violation and bug of the paper's Table 2 is a named config field. `fix_overrides` turns
# catalogue ids into `create(...)` overrides; `all_fixed_overrides` fixes everything that can be
# fixed in place.

# %%
from pategan_audit.implementations import violations

cat = violations.as_frame()
cat[cat["implementations"].astype(str).str.contains("updated")][["id", "kind", "field", "violating", "fixed"]]

# %%
fixed = violations.fix_overrides("updated", ["V4", "V15"])
print(fixed)
m = create("updated", epsilon=1.0, seed=seed, num_teachers=5, max_iter=5, **fixed).fit(ds.train, label=ds.label)
print("distinct rows seen by the 5 teachers:", len(set().union(*m.trace.teacher_rows)), "(V4 fixed: disjoint blocks)")

# %% [markdown]
# ## Accountants
#
# The per-query formulas of every implementation, and a stateful accountant.

# %%
from pategan_audit import accounting

acc = accounting.MomentsAccountant("corrected", lam=1e-3, num_moments=100, delta=1e-5, num_teachers=5)
acc.charge(np.full(320, 1))  # one iteration of 5 student steps x 64 queries, votes n1 = 1
print("ε̂ after one iteration:", round(acc.epsilon, 6))

# %% [markdown]
# ## Utility: score a synthetic table with the twelve classifiers (Setting B)

# %%
from pategan_audit.classifiers import evaluate_table

scores = evaluate_table(synth, ds.test, seed=seed)
scores

# %% [markdown]
# ## Audit any generator
#
# The distinguishing game needs only a factory `make_generator(seed)` returning an object with
# `fit(df)` and `sample(n)`. Here it audits a generator that is not a PATE-GAN at all: one that
# resamples its training rows (it releases its data, so the audit should find leakage), on the
# paper's worst-case dataset with the Querybased featuriser, at a tiny scale.

# %%
from pategan_audit import auditing


class Bootstrap:
    """Releases a bootstrap resample of its training rows: no privacy at all."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def fit(self, df, label=None):
        self.df = df.reset_index(drop=True)
        return self

    def sample(self, n):
        return self.df.iloc[self.rng.integers(0, len(self.df), n)].reset_index(drop=True)


profile_tiny = auditing.AuditProfile(name="guide", n_per_world=30, querybased_iterations=1, groundhog_iterations=1,
                                     target_candidates=1, target_models=1, target_iterations=1)
records = auditing.audit_generator(Bootstrap, datasets.worst_case("out"), datasets.worst_case("in"),
                                   profile=profile_tiny, featurise=auditing.QueryFeaturiser(), seed=seed,
                                   cache_namespace=None)
pd.DataFrame(records)[["method", "auc", "epsilon_emp", "n_test"]]

# %% [markdown]
# With 12 test outputs per world a perfect attack certifies at most ε ≈ 1.02 with Clopper-Pearson
# (implementation notes {ref}`§audit.ceiling <notes-audit-ceiling>`): the bound is limited by the
# number of shadow models, not by the generator. The auditing page uses more.
#
# ## Caching and parallel runs
#
# `runner.cached(config, compute, namespace=)` stores any result under a hash of the config and the
# package source (atomic writes; interrupted runs resume); `runner.parallel_map(fn, items,
# backend=None | "dask")` runs independent jobs with joblib or on a Dask cluster.

# %%
from pategan_audit import runner

key = {"example": "square", "x": 12}
print(runner.cached(key, lambda: 12 ** 2, namespace="guide", cache_dir_override=None))
print(runner.config_hash(key, namespace="guide"))
