"""The page "PATE-GAN, done right?": the ``gnmax`` preset (:mod:`pategan_audit.implementations.gnmax`)
beside ``corrected`` and the six benchmarked implementations.

Everything here reads the library or the committed archives; nothing is tuned on the data. The
paper (``ganev2025elusive`` §7) leaves "the discrepancies between PATE-GAN and PATE" to future
work; the preset takes PATE 2018's Confident-GNMax and Rényi-DP analysis (``papernot2018scalable``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..implementations.gnmax import public_plan

__all__ = ["DATASETS", "plan_table", "aggregator_audit", "utility_table", "archived", "training_diagnosis", "analysis_table",
           "audit_table"]

DATASETS = ("cervical_cancer", "epileptic_seizure", "isolet", "credit", "mnist")


def plan_table(*, epsilon: float = 1.0, delta: float = 1e-5) -> pd.DataFrame:
    """gnmax's public plan on each bundled training split (:func:`public_plan`)."""
    from ..utility.run import load_dataset

    rows = [{"dataset": d, **public_plan(len(load_dataset(d, None).train), epsilon=epsilon, delta=delta)} for d in DATASETS]
    return pd.DataFrame(rows).set_index("dataset")


def aggregator_audit(plans: pd.DataFrame, *, queries: int = 10**6, seed: int = 0) -> pd.DataFrame:
    """The mechanism-level audit of Confident-GNMax (:mod:`~pategan_audit.auditing.mechanism_gnmax`)
    at each plan's (k, σ): ``queries`` releases on each of two neighbouring vote counts through the
    preset's own aggregator; the columns a reader needs."""
    from ..auditing.mechanism_gnmax import audit_table

    table = audit_table(plans, queries=queries, seed=seed)
    keep = ["teachers", "sigma vote", "n1", "queries per count", "matches_analysis", "eps_lo", "eps_hat", "eps_exact",
            *[c for c in table.columns if c.startswith(("exact RDP", "charged RDP"))],
            "exact / charged (worst pair, max over orders)", "sound"]
    return table[keep]


def utility_table(directory=None) -> pd.DataFrame | None:
    """Best-of-n mean AUROC per dataset: gnmax and corrected from ``utility_gnmax_large``, the six
    from ``utility_large`` where it ran that dataset, and the paper's Table 4 (best of the six);
    None if the gnmax archive is missing."""
    from .. import reference
    from ..archive import read_archive
    from ..utility import best_of_n

    ours = read_archive("utility_gnmax_large", directory=directory)
    if ours is None:
        return None
    frames = [best_of_n(ours.records)]
    six = read_archive("utility_large", directory=directory)
    if six is not None:
        rec = six.records[six.records["implementation"].isin(reference.IMPLEMENTATIONS)]
        frames.append(best_of_n(rec))
    best = pd.concat(frames, ignore_index=True)
    table = best.pivot_table(index="dataset", columns="implementation", values="auroc", aggfunc="first")
    paper = reference.table4().pivot_table(index="row", columns="column", values="value", aggfunc="first")
    table["best of the six (ours)"] = table[[c for c in reference.IMPLEMENTATIONS if c in table]].max(axis=1) \
        if any(c in table for c in reference.IMPLEMENTATIONS) else np.nan
    table["best of the six (paper)"] = paper.reindex(table.index)[list(reference.IMPLEMENTATIONS)].max(axis=1)
    n = ours.records.groupby("dataset")["table"].nunique() * ours.records.groupby("dataset")["model"].nunique()
    table["n (gnmax, corrected)"] = n.reindex(table.index)
    return table


def training_diagnosis(*, seed: int = 0, max_iter: int | None = None) -> pd.DataFrame:
    """One gnmax fit on Cervical (public bounds), per iteration: the mean share of teachers that
    call a generated row real, the share of queries answered, and the share of answers "real"."""
    from .. import datasets
    from ..implementations import create

    ds = datasets.load("cervical_cancer")
    model = create("gnmax", seed=seed, public_bounds=ds.bounds, record=True, max_iter=max_iter)
    model.fit(ds.train, label=ds.label)
    k = model.num_teachers_
    rows = []
    for it, (votes, labels) in enumerate(zip(model.trace.votes, model.trace.labels)):
        answered = labels >= 0
        rows.append({"iteration": it + 1, "teachers calling it real": float(np.mean(votes) / k),
                     "answered": float(answered.mean()),
                     "answered 'real'": float((labels[answered] == 1).mean()) if answered.any() else np.nan})
    return pd.DataFrame(rows).set_index("iteration")


def analysis_table(*, seed: int = 0, epsilon: float = 1.0, max_iter: int | None = None) -> pd.DataFrame:
    """One Cervical fit per analysis (public bounds, same seed, so the same run): what each one
    reports. ``data_independent`` charges every query in full; ``data_dependent`` charges the
    answered queries their Thm 6 cost at the votes and publishes a smooth-sensitivity release of
    the result (the exact data-dependent ε is private and not shown)."""
    from .. import datasets
    from ..implementations import create

    ds = datasets.load("cervical_cancer")
    rows = []
    for analysis in ("data_independent", "data_dependent"):
        model = create("gnmax", epsilon=epsilon, seed=seed, public_bounds=ds.bounds, max_iter=max_iter,
                       analysis=analysis).fit(ds.train, label=ds.label)
        extra = model.trace.extra
        rows.append({"analysis": analysis, "iterations": model.trace.iterations,
                     "queries": int(model.accountant.num_queries),
                     "answered": int(extra.get("answered_queries", np.nan)) if analysis == "data_dependent" else np.nan,
                     "reported ε̂ (published)": float(model.trace.eps_hat[-1]),
                     "worst case over datasets": float(extra.get("eps_worst_case", model.trace.eps_hat[-1])),
                     "guarantee": model.guarantee_})
    return pd.DataFrame(rows).set_index("analysis")


def audit_table(directory=None) -> pd.DataFrame | None:
    """gnmax's black-box audit (``audit_gnmax_large``) beside ``corrected``'s (``audit_corrected_large``):
    Clopper-Pearson ε_emp and AUC per (attack, channel); None while the gnmax archive is missing."""
    from ..archive import read_archive

    frames = []
    for name in ("audit_gnmax_large", "audit_corrected_large"):
        archived = read_archive(name, directory=directory)
        if archived is None:
            if name == "audit_gnmax_large":
                return None
            continue
        rec = archived.records[archived.records["method"] == "clopper_pearson"]
        frames.append(rec[["implementation", "attack", "channel", "epsilon_emp", "auc"]])
    table = pd.concat(frames, ignore_index=True)
    return table.pivot_table(index=["attack", "channel"], columns="implementation", values=["epsilon_emp", "auc"],
                             aggfunc="first")


def archived(name: str, frame: pd.DataFrame | None, archive: str, cost: str) -> list:
    """The page blocks of a table read from ``archive``: the table (written as ``<name>.csv``), or
    the note that names the command computing the archive while it is missing."""
    from .blocks import archive_missing, table

    return [archive_missing(archive, cost)] if frame is None else table(name, frame.round(3))
