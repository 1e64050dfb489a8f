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
# # DP auditing
#
# Paper §6.2: black-box distinguishing games — **Querybased** on the worst-case dataset and
# **GroundHog** on Cervical Cancer — turned into ε lower bounds ε_emp (Figure 5: Clopper-Pearson;
# Figure 12: Bayesian). A bound above the theoretical ε = 1 is evidence that an implementation
# does not satisfy the differential privacy it claims. Beyond the paper, this page (1) calibrates
# the audit with two reference generators, (2) separates the two side channels that the paper's
# game leaves open — the *size* of the synthetic table and the *bounds* read from the training
# data (protocols spec D.9) — from the PATE mechanism itself, (3) audits the corrected PATE-GAN in
# the same settings, and (4) switches each violation off one at a time.
#
# How to read the numbers: ε_emp is a lower confidence bound, so it can never exceed the *ceiling*
# set by the number of test outputs (a perfect attack): 4.68 with the paper's 400 test outputs per
# world, far less in the faster profiles. A value at the ceiling means "the attack was perfect",
# not "ε equals the ceiling".

# %% tags=["parameters"]
profile: str = "book"  # "smoke" (CI, seconds), "book" (default of the book build), "paper" (full protocol)
eps: float = 1.0  # privacy budget epsilon of this section's main results
seed: int = 0  # master seed: the same seed gives the same numbers
n_jobs: int = 2  # parallel workers for independent trainings
results_dir: str = "results"  # tables and figures are also written to <results_dir>/auditing/
implementations: list = ["original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected"]  # presets audited
attacks: list = ["querybased", "groundhog"]  # "querybased" (worst case, Fig. 5a) and/or "groundhog" (Cervical, Fig. 5b)
groundhog_target: int = 397  # target row of the Cervical training split (paper: 397), or -1 for the row our mini-MIAs pick
run_ablation: bool = True  # audit each violation switched off alone and all together (profile's attacks/presets)
backend: str = "loky"  # joblib backend for the shadow models: "loky" (local processes) or "dask" (needs a Client)

# %% tags=["hide-input"]
import warnings

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from pategan_audit import auditing, reference
from pategan_audit.auditing import (
    AUDIT_PROFILES,
    PresetFactory,
    ablation_settings,
    get_profile,
    make_settings,
    min_test_outputs,
    perfect_attack_ceiling,
    rank_candidates,
    run_calibration,
    run_settings,
    select_target,
)
from pategan_audit.plotting.auditing import plot_ablation, plot_channels, plot_figure5
from pategan_audit.report import Section

warnings.filterwarnings("ignore", category=UserWarning)
sec = Section("auditing", profile=profile, eps=eps, seed=seed, results_dir=results_dir)
prof = get_profile(sec.profile)
n_train, n_valid, n_test = prof.split
ceiling_cp, ceiling_bayes = prof.ceiling("clopper_pearson"), prof.ceiling("bayesian")
run_kwargs = dict(seed=sec.seed, n_jobs=int(n_jobs), backend=None if backend == "loky" else backend)
settings_kwargs = dict(**run_kwargs, progress=False)
runs = (f"{prof.n_per_world} shadow models per world and setting ({n_train} train / {n_valid} validation / "
        f"{n_test} test), {prof.querybased_iterations} iterations (Querybased), "
        f"≤ {prof.groundhog_iterations} (GroundHog)")
print(f"profile={sec.profile}, eps={sec.eps}, seed={sec.seed}: {runs}")

# %% [markdown]
# ## What this profile can show
#
# The ceiling is the bound a *perfect* attack reaches with this many test outputs per world
# (protocols spec D.6, F.3); the second table is the minimum number of perfect test outputs per
# world for ε_emp to exceed a given value. With the paper's 2 : 1 : 2 split the `book` profile's
# 16 test outputs per world can show ε_emp > 1 but nothing near the paper's 4.68.

# %% tags=["hide-input"]
limits = pd.DataFrame(
    [{"profile": p.name, "shadow models per world": p.n_per_world, "test outputs per world": p.split[2],
      "ceiling (Clopper-Pearson)": round(p.ceiling("clopper_pearson"), 4),
      "ceiling (Bayesian)": round(p.ceiling("bayesian"), 4)} for p in AUDIT_PROFILES.values()]
).set_index("profile")
needed = pd.DataFrame(
    [{"target ε_emp": t, "Clopper-Pearson, α = 0.1": min_test_outputs(target_epsilon=t),
      "Clopper-Pearson, α = 0.05": min_test_outputs(target_epsilon=t, alpha=0.05)} for t in (0.5, 1, 2, 3, 4, 4.5)]
).set_index("target ε_emp")
sec.table(limits, "ceilings")
display(limits)
sec.table(needed, "min_test_outputs")

# %% [markdown]
# ## Calibrating the audit
#
# Two reference generators bracket the audit: one *releases its training data* (no privacy), one
# *ignores it* and outputs uniform draws from {0, 1}³ (perfectly private). On the worst-case
# dataset the first must reach the ceiling and the second must stay near 0 — once the synthetic
# size is the same in both worlds ("controlled"). In the paper's game ("paper" channel) the
# out world yields 4 rows and the in world 5, a difference the attack can see without any
# privacy leak of the mechanism (see the channel section below).

# %% tags=["hide-input"]
calib = run_calibration(prof, **run_kwargs)
calib_view = calib.pivot_table(index=["implementation", "channel"], columns="method", values="epsilon_emp")
sec.table(calib, "calibration_records", index=False)
calib_view.round(3)

# %% [markdown]
# ## Choosing the GroundHog target (mini-MIAs)
#
# Protocols spec D.3: rank the rows of the Cervical training split by their mean distance to
# their 5 nearest neighbours (min-max scaled), then for the most isolated candidates train
# `original` models with and without the candidate and score each by its critic's output on the
# candidate (white-box); the target is the candidate with the highest in-vs-out AUC. The paper
# ran 64 candidates × 100 + 100 models (1,000 iterations) and chose row 397 (AUC 0.6659).

# %% tags=["hide-input"]
train = auditing.attack_data("groundhog")[1]
ranked = rank_candidates(train, n_candidates=max(64, prof.target_candidates))
ref_dist = reference.target_selection_reference()
ref_dist = ref_dist[ref_dist["ranking"] == "distance_rank"].set_index("rank")
dist_cmp = pd.DataFrame({
    "row (ours)": ranked["row"].head(5).to_numpy(), "distance (ours)": ranked["distance"].head(5).round(4).to_numpy(),
    "row (paper)": ref_dist["row_index"].to_numpy(), "distance (paper)": ref_dist["value"].to_numpy(),
}, index=pd.Index(range(1, 6), name="rank"))
sec.table(dist_cmp, "target_distances")
display(dist_cmp)
print(f"64th largest distance: {ranked['distance'].iloc[63]:.4f} (paper: 1.0855)")

selection = select_target(
    train, PresetFactory("original", epsilon=sec.eps, overrides={"num_teachers": 5, "max_iter": prof.target_iterations}),
    n_candidates=prof.target_candidates, n_models=prof.target_models, seed=sec.seed, n_jobs=int(n_jobs),
    backend=run_kwargs["backend"],
)
sec.table(selection.candidates, "target_selection", index=False)
target = selection.target if int(groundhog_target) < 0 else int(groundhog_target)
display(Markdown(
    f"Our mini-MIAs ({prof.target_candidates} candidates × {prof.target_models} + {prof.target_models} `original` "
    f"models, {prof.target_iterations} iterations) pick **row {selection.target}** with AUC "
    f"**{selection.target_auc:.3f}** (paper: row 397, AUC 0.6659 from 100 + 100 models per candidate). "
    f"The GroundHog audit below uses **row {target}**"
    + (" (the paper's target, for comparability)." if int(groundhog_target) >= 0 else " (our choice).")
))
selection.candidates.round(4)

# %% [markdown]
# ## Figure 5: ε_emp with Clopper-Pearson bounds
#
# Each implementation as benchmarked by the paper (D.2, D.3), plus the corrected PATE-GAN
# (which always takes public bounds). Bars: ours; black ticks: the paper's values (D.7); dashed
# line: ε = 1; dotted line: the ceiling of this profile.

# %% tags=["hide-input"]
main_settings = make_settings(prof, attacks=attacks, implementations=implementations, channels=("paper", "controlled"),
                              epsilon=sec.eps, target=target)
records = run_settings(main_settings, prof, **settings_kwargs)
sec.table(records, "audit_records", index=False)
paper_ref = reference.audit_reference()
ref_by_attack = {a: dict(zip(g["implementation"], g["epsilon_emp"])) for a, g in paper_ref.groupby("attack")}
fig5 = plot_figure5(records, method="clopper_pearson", reference=ref_by_attack, ceiling=ceiling_cp, epsilon=sec.eps)
sec.figure(fig5, "figure5")

# %% [markdown]
# The table puts our AUC and ε_emp beside the paper's (paper channel). "Perfect" marks a test set
# without errors, i.e. a bound at the ceiling.

# %% tags=["hide-input"]
paper_rows = records[(records["channel"] == "paper") & (records["variant"] == "as benchmarked")]
cp = paper_rows[paper_rows["method"] == "clopper_pearson"].set_index(["attack", "implementation"])
by = paper_rows[paper_rows["method"] == "bayesian"].set_index(["attack", "implementation"])
fig5_table = pd.DataFrame({
    "AUC (ours)": cp["auc"].round(4),
    "ε_emp CP (ours)": cp["epsilon_emp"].round(4),
    "ε_emp Bayesian (ours)": by["epsilon_emp"].round(4),
    "perfect": (cp["test_FP"] + cp["test_FN"] == 0) | (cp["test_TN"] + cp["test_TP"] == 0),
})
ref_idx = paper_ref.set_index(["attack", "implementation"])
fig5_table["AUC (paper)"] = ref_idx["auc"].reindex(fig5_table.index)
fig5_table["ε_emp CP (paper)"] = ref_idx["epsilon_emp"].reindex(fig5_table.index)
sec.table(fig5_table, "figure5_table")
fig5_table

# %% [markdown]
# ## Figure 12: the Bayesian (joint-beta) bound
#
# Same attacks and counts, bounded with the Jeffreys-posterior credible region of
# Zanella-Béguelin et al. (2023) instead of Clopper-Pearson intervals (protocols spec D.5). The
# paper gives no values (its code has no path for Fig. 12); for perfect attacks the Bayesian
# ceiling is much higher than the Clopper-Pearson one (6.29 vs 4.68 at 400 test outputs).

# %% tags=["hide-input"]
fig12 = plot_figure5(records, method="bayesian", ceiling=ceiling_bayes, epsilon=sec.eps)
sec.figure(fig12, "figure12")

# %% [markdown]
# ## The corrected PATE-GAN
#
# The corrected preset fixes every violation (implementations spec §9): disjoint partitions,
# two-noise PATE votes, the exact accountant with a safe stopping rule, public bounds. Its audit
# should not exceed ε beyond statistical error *once the game itself leaks nothing*: in the
# paper's Querybased game the out world yields 4 synthetic rows and the in world 5, and that
# difference is an output of the harness, not of the generator.

# %% tags=["hide-input"]
def corrected_verdict(recs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    sel = recs[(recs["implementation"] == "corrected") & (recs["variant"] == "as benchmarked")]
    for (attack, channel, method), g in sel.groupby(["attack", "channel", "method"]):
        r = g.iloc[0]
        rows.append({"attack": attack, "channel": channel, "bound": method, "ε_emp": round(r["epsilon_emp"], 4),
                     "AUC": round(r["auc"], 4), "exceeds ε": bool(r["epsilon_emp"] > sec.eps),
                     "test counts (FP, TN, FN, TP)": (r["test_FP"], r["test_TN"], r["test_FN"], r["test_TP"])})
    return pd.DataFrame(rows)


if "corrected" in implementations:
    verdict = corrected_verdict(records)
    sec.table(verdict, "corrected_audit", index=False)
    display(verdict)
    ctrl = verdict[verdict["channel"] == "controlled"]
    paper_ch = verdict[verdict["channel"] == "paper"]
    text = (f"**Controlled channel** (same synthetic size, public bounds): the corrected preset's ε_emp "
            f"{'exceeds' if ctrl['exceeds ε'].any() else 'does not exceed'} ε = {sec.eps:g} "
            f"(largest bound {ctrl['ε_emp'].max():.3f}; each bound holds with ≥ 95 % confidence, 90 % for the "
            f"max over two score directions). ")
    if paper_ch["exceeds ε"].any():
        worst = paper_ch.loc[paper_ch["ε_emp"].idxmax()]
        text += (f"**Paper channel**: ε_emp reaches {worst['ε_emp']:.3f} on {worst['attack']} — with the paper's "
                 "game the attack reads the world off the synthetic table's size (4 vs 5 rows), which the generator "
                 "does not control; this is a property of the harness, not a DP violation of the mechanism.")
    else:
        text += "**Paper channel**: no bound exceeds ε either."
    display(Markdown(text))

# %% [markdown]
# ## Leakage channels: paper game vs controlled game
#
# "Controlled" fixes the synthetic size (5 rows in both worlds on the worst case; GroundHog already
# uses 686) and gives every preset bounds fixed in advance as public metadata ({0, 1} for A, B, C;
# on Cervical the bounds of D′ widened so no row of either world is clipped — they do not depend on
# the target's presence). What remains of ε_emp in the controlled game is what the PATE mechanism
# (or its violations other than the metadata) leaks.

# %% tags=["hide-input"]
fig_ch = plot_channels(records, method="clopper_pearson", ceiling=ceiling_cp, epsilon=sec.eps)
sec.figure(fig_ch, "channels")
channels = records[(records["variant"] == "as benchmarked")].pivot_table(
    index=["attack", "implementation"], columns=["method", "channel"], values="epsilon_emp").round(4)
sec.table(channels, "channels_table")
channels

# %% [markdown]
# ## Ablation: one violation fixed at a time
#
# For the PATE-based implementations, each privacy violation that can be switched in place
# (violation catalogue, `pategan_audit.implementations.violations`) is fixed alone, then all
# switchable violations and bugs together, in the paper's game. V1, V2, V14 and V16 (no PATE /
# Gaussian indicator noise) have no in-place switch: the corrected preset is their fix.
#
# Reading the table: a switch that leaves ε_emp (and the AUC) unchanged did not change the
# released rows at this training length. Several switches act only on the accountant (V7-V9:
# with λ = 10⁻³ every accountant charges the same data-independent term, implementations spec
# §0.4) or on training steps that move the generator very little in a few dozen iterations; on
# the worst case, data-derived bounds of a constant column and the public {0, 1} bounds give the
# same scaling. The size channel, which no switch touches, remains.

# %% tags=["hide-input"]
if run_ablation:
    abl_settings = ablation_settings(prof, epsilon=sec.eps, target=target)
    ablation = run_settings(abl_settings, prof, **settings_kwargs)
    sec.table(ablation, "ablation_records", index=False)
    for attack in prof.ablation_attacks:
        if attack in attacks:
            fig_ab = plot_ablation(ablation, attack=attack, method="clopper_pearson", ceiling=ceiling_cp, epsilon=sec.eps)
            sec.figure(fig_ab, f"ablation_{attack}")
    abl_table = ablation.pivot_table(index=["attack", "implementation", "variant"], columns="method",
                                     values="epsilon_emp", sort=False).round(4)
    sec.table(abl_table, "ablation_table")
    display(abl_table)

# %% [markdown]
# ## Scorecard entries of this page
#
# Figure 5's ε_emp (Clopper-Pearson, paper channel) per implementation and attack, with the ceiling
# of this profile so that a bound limited by the number of shadow models is not read as a mismatch.

# %% tags=["hide-input"]
sec.scorecard([
    {"table": "figure5", "row": impl, "column": attack, "ours": float(r["ε_emp CP (ours)"]),
     "runs": runs, "ceiling": ceiling_cp}
    for (attack, impl), r in fig5_table.iterrows() if impl != "corrected"
]);
display(Markdown(sec.caption("Audit results", runs)))
