"""Past the ceiling: how far the leak goes where the paper-scale audit was perfect
(``ganev2025elusive`` §6.2, Figure 5; issue 40).

At 1,000 shadow models per world (400 test outputs) a perfect attack reads ε_emp = 4.68
(Clopper-Pearson, α = 0.1): "at least 4.68" is then a property of the game's size, not of the
implementation. The archives ``audit_past_ceiling_querybased`` (10,000 test outputs per world,
ceiling 7.90) and ``audit_past_ceiling_groundhog`` (2,000 on CPU, ceiling 6.29) rerun the channels
that were within 0.2 of that ceiling with the same attack: the random forest is trained and its
threshold chosen on the same first 400 / 200 shadow models per world (same seeds), and only the
test split grows. :func:`past_ceiling_table` sets the two side by side, with

* whether the attack is the archived one (:func:`same_attack`: the same threshold, direction and
  validation counts, or the same validation outcome read from the score's other direction, where
  the larger test split makes ``1 - s`` bound higher than ``s``; the same seeds give the same shadow
  models only while the code computes them as it did then, so where the code changed since the
  1,000-per-world run this can be False: a new attack on its own game),
* the status: ``at the new ceiling`` (still a perfect test; the leak is at least the new ceiling) or
  ``below the ceiling`` (the lower bound is the measured leak),
* the Bayesian bound and the ROC-based μ-GDP estimate (Nasr et al. 2023) with the ε it implies
  *if* the mechanism's trade-off curve is Gaussian (an assumption, not a bound on every mechanism),
* which violation opens the channel, from the ablation archive of the same attack where it ran in
  that channel (:func:`opened_by`; Querybased's at 1,000 shadow models per world, GroundHog's at
  200, the ``resolvable`` profile),
* ``same outputs as``: the earlier cell of the same archive whose shadow models produced exactly the
  same outputs (equal ``outputs_digest``): closing that channel changed no synthetic table, so
  the two rows are one measurement, shown twice, never two pieces of evidence.
"""
from __future__ import annotations

import pandas as pd

from ..archive_store import read_archive
from .bounds import perfect_attack_ceiling

__all__ = ["PAST_CEILING_ARCHIVES", "BEFORE_ARCHIVES", "ABLATION_ARCHIVES", "past_ceiling_table", "opened_by",
           "leak_sentences", "same_attack"]

#: archive -> attack
PAST_CEILING_ARCHIVES = {"audit_past_ceiling_querybased": "querybased", "audit_past_ceiling_groundhog": "groundhog"}
#: the 1,000-per-world archives the cells were chosen from (attack, channel) -> archive
BEFORE_ARCHIVES = {("querybased", "fixed_size"): "audit_querybased_fixed_size_large",
                   ("querybased", "controlled"): "audit_querybased_controlled_large",
                   ("groundhog", "paper"): "audit_groundhog_large", ("groundhog", "controlled"): "audit_groundhog_large"}
#: attack -> (ablation archive, the channel it ran in)
ABLATION_ARCHIVES = {"querybased": ("audit_ablation_querybased_large", "fixed_size"),
                     "groundhog": ("audit_ablation_groundhog_large", "paper")}
_ATTACK_KEYS = ("threshold", "direction", "valid_FP", "valid_TN", "valid_FN", "valid_TP")


_MIRROR = {"valid_FP": "valid_TN", "valid_TN": "valid_FP", "valid_FN": "valid_TP", "valid_TP": "valid_FN"}


def same_attack(before, after) -> bool:
    """Whether two Clopper-Pearson records hold the same attack on the same validation outputs.

    A record keeps the direction of the score (``s`` or ``1 - s``) whose test ε is larger
    (:func:`~pategan_audit.auditing.attacks.evaluate_scores`), with that direction's threshold and
    validation counts. The same forest on the same validation outputs is therefore recorded either
    with the same threshold, direction and counts, or, when a larger test split makes the other
    direction bound higher, with the other direction and the mirrored validation counts (false
    positives of one are the true negatives of the other, false negatives the true positives)."""
    if all(before[k] == after[k] for k in _ATTACK_KEYS):
        return True
    return before["direction"] != after["direction"] and all(before[k] == after[m] for k, m in _MIRROR.items())


def _read(name: str, directory=None) -> pd.DataFrame | None:
    arch = read_archive(name, directory=directory)
    return None if arch is None else arch.records


def opened_by(ablation: pd.DataFrame, implementation: str, *, epsilon: float = 1.0) -> str:
    """What the ablation says opens ``implementation``'s channel (Clopper-Pearson records of one
    ablation archive): the single fixes that bring ε_emp to ``epsilon`` or below ("closed by fixing
    V10 alone"), else what "all fixed" leaves ("no single fix closes it; all fixed: 4.68")."""
    r = ablation[(ablation["implementation"] == implementation) & (ablation["method"] == "clopper_pearson")]
    if r.empty:
        return "not in the ablation"
    eps = dict(zip(r["variant"], r["epsilon_emp"]))
    single = [v for v in eps if v not in ("as benchmarked", "all fixed")]
    closing = [v.replace(" (beyond Table 2)", "").removesuffix(" fixed") for v in single if eps[v] <= epsilon]
    if closing:
        return f"closed by fixing {' or '.join(closing)} alone"
    rest = f"; all fixed: {eps['all fixed']:.2f}" if "all fixed" in eps else ""
    return f"no single fix closes it{rest}"


def _errors(record) -> int:
    """Test outputs the attack's rule gets wrong, both worlds together (in the direction it chose:
    ``1-s`` flips which side of the threshold means "in")."""
    if record["direction"] == "1-s":
        return int(record["test_TN"]) + int(record["test_TP"])
    return int(record["test_FP"]) + int(record["test_FN"])


def past_ceiling_table(directory=None, *, epsilon: float = 1.0) -> pd.DataFrame:
    """One row per (attack, implementation, channel) archived past the ceiling: ε_emp and its
    ceiling at 1,000 per world and now, the Bayesian bound and μ-GDP estimate now, AUC, whether
    the attack is the archived one, the status and what opens the channel. Empty when neither
    archive is present."""
    rows = []
    for name, attack in PAST_CEILING_ARCHIVES.items():
        after = _read(name, directory)
        if after is None:
            continue
        ablation_name, ablation_channel = ABLATION_ARCHIVES[attack]
        ablation = _read(ablation_name, directory)
        first_with: dict[str, str] = {}  # outputs digest -> the first cell that produced those outputs
        for (impl, channel), rec in after.groupby(["implementation", "channel"], sort=False):
            cp = rec[rec["method"] == "clopper_pearson"].iloc[0]
            bay = rec[rec["method"] == "bayesian"].iloc[0]
            before_all = _read(BEFORE_ARCHIVES[(attack, channel)], directory)
            before = None
            if before_all is not None:
                b = before_all[(before_all["implementation"] == impl) & (before_all["channel"] == channel)
                               & (before_all["method"] == "clopper_pearson") & (before_all["attack"] == attack)]
                before = b.iloc[0] if len(b) else None
            n_test, delta = int(cp["n_test"]), float(cp["delta"])
            ceiling = perfect_attack_ceiling(n_per_world=n_test, alpha=float(cp["alpha"]), delta=delta)
            at_ceiling = float(cp["epsilon_emp"]) >= ceiling - 1e-9
            if channel != ablation_channel:
                opened = f"the ablation ran in the {ablation_channel} channel only"
            elif ablation is None:
                opened = "ablation not archived"
            else:
                opened = opened_by(ablation, impl, epsilon=epsilon)
            cell, digest = f"{impl} {channel}", str(cp.get("outputs_digest", ""))
            first = first_with.setdefault(digest, cell) if digest else cell
            rows.append({
                "attack": attack, "implementation": impl, "channel": channel,
                "test outputs before": int(before["n_test"]) if before is not None else None,
                "ε_emp before": float(before["epsilon_emp"]) if before is not None else None,
                "ceiling before": (perfect_attack_ceiling(n_per_world=int(before["n_test"]), alpha=float(before["alpha"]),
                                                          delta=float(before["delta"])) if before is not None else None),
                "test outputs": n_test, "ε_emp": float(cp["epsilon_emp"]), "ceiling": ceiling,
                "Bayesian": float(bay["epsilon_emp"]),
                "Bayesian ceiling": perfect_attack_ceiling(n_per_world=n_test, method="bayesian",
                                                           alpha=float(bay["alpha"]), delta=delta),
                "GDP μ_lo": float(cp["gdp_mu_lo"]), "GDP ε if Gaussian": float(cp["gdp_epsilon_lo"]),
                "GDP ε ceiling": float(cp.get("gdp_epsilon_ceiling", float("nan"))),
                "AUC before": float(before["auc"]) if before is not None else None, "AUC": float(cp["auc"]),
                "same attack": same_attack(before, cp) if before is not None else None,
                "direction before": before["direction"] if before is not None else None, "direction": cp["direction"],
                "status": "at the new ceiling" if at_ceiling else "below the ceiling",
                "test errors": _errors(cp),
                "opened by": opened, "shadow-model core-s": float(cp["train_seconds"]),
                "same outputs as": None if first == cell else first,
            })
    return pd.DataFrame(rows)


def leak_sentences(table: pd.DataFrame, *, epsilon: float = 1.0) -> list[str]:
    """One sentence per row: "synthcity leaks at least 7.90 in Querybased, controlled channel (at
    the new ceiling: the attack is still perfect; ...)"."""
    out = []
    for values in table.itertuples(index=False):
        d = dict(zip(table.columns, values))
        where = f"{d['attack']}, {d['channel']} channel"
        digits = 2
        while d["status"] != "at the new ceiling" and digits < 4 and f"{d['ε_emp']:.{digits}f}" == f"{d['ceiling']:.{digits}f}":
            digits += 1
        if d["status"] == "at the new ceiling":
            what = (f"at the new ceiling: the attack is still perfect on {d['test outputs']:,} test outputs per world, "
                    "so the leak may be larger still")
        else:
            what = (f"below the new ceiling {d['ceiling']:.{digits}f}, {d['test errors']:,} of "
                    f"{2 * d['test outputs']:,} test outputs misclassified: a measured lower bound")
        if d["same attack"] is False:
            attack = "; a new attack: the shadow models differ from the archived run's"
        elif d["same attack"] and d["direction"] != d["direction before"]:
            attack = (f"; the same attack, read from its other direction ({d['direction']}), which bounds higher on "
                      f"{d['test outputs']:,} test outputs")
        else:
            attack = ""
        before = "" if pd.isna(d["ε_emp before"]) else f"; at 1,000 per world it read {d['ε_emp before']:.2f}"
        same = d.get("same outputs as")
        if isinstance(same, str):  # None in the table reads back as NaN
            attack += (f"; the very outputs of {same} (the same digest): closing this channel changed no synthetic "
                       "table, so this is that measurement again, not a second one")
        out.append(f"**{d['implementation']}** leaks at least **{d['ε_emp']:.{digits}f}** (claimed ε = {epsilon:g}) in "
                   f"{where} ({what}{before}{attack}); {d['opened by']}.")
    return out
