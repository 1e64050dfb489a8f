"""Figures 5 and 12 at the page's profile (``ganev2025elusive`` §6.2, Figure 5: Clopper-Pearson,
Figure 12: Bayesian): every preset audited in all three channels in one pass, Figure 5's bars
beside the paper's values, the table of AUC and ε_emp, and the Bayesian bound's null floor.
"""
from __future__ import annotations

import time

import pandas as pd

from ... import reference
from ..plotting.auditing import plot_figure5
from ...auditing import fdp
from ...auditing.audit import make_settings, run_settings
from ...auditing.settings import CHANNELS
from ..blocks import Block, SaveTable, ShowTable, Text, figure
from .context import AuditPage

__all__ = ["paper_by_attack", "run_audit", "figure5", "paper_channel", "figure5_table", "figure12", "null_floor_note",
           "null_floor"]


def paper_by_attack() -> dict[str, dict[str, float]]:
    """The paper's Figure 5 values (Clopper-Pearson ε_emp), attack -> implementation -> value."""
    return {a: dict(zip(g["implementation"], g["epsilon_emp"])) for a, g in reference.audit_reference().groupby("attack")}


def run_audit(page: AuditPage) -> pd.DataFrame:
    """Audit every (attack, implementation) of the page in the three channels (cached); sets ``page.records``."""
    t0 = time.perf_counter()
    settings = make_settings(page.profile, attacks=page.attacks, implementations=page.implementations, channels=CHANNELS,
                             epsilon=page.eps, target=page.target)
    page.records = run_settings(settings, page.profile, **page.run_kwargs)
    page.time("main audit (3 channels)", t0)
    return page.records


def figure5(page: AuditPage) -> list[Block]:
    """Run the audit (:func:`run_audit`); its records and Figure 5 (paper channel, Clopper-Pearson)."""
    records = run_audit(page)
    save, show = figure("figure5", plot_figure5(records, method="clopper_pearson", reference=paper_by_attack(),
                                                ceiling=page.ceiling_cp, epsilon=page.eps))
    return [SaveTable("audit_records", records, index=False), save, Text(page.caption("Figure 5, paper channel")), show]


def paper_channel(records: pd.DataFrame, method: str) -> pd.DataFrame:
    """The records of the paper channel as benchmarked for one bound, indexed by (attack, implementation)."""
    rows = records[(records["channel"] == "paper") & (records["variant"] == "as benchmarked")]
    return rows[rows["method"] == method].set_index(["attack", "implementation"])


def figure5_table(page: AuditPage) -> list[Block]:
    """Our training length, AUC and ε_emp (both bounds) and whether the attack was perfect, beside
    the paper's AUC and ε_emp (paper channel)."""
    cp, by = paper_channel(page.records, "clopper_pearson"), paper_channel(page.records, "bayesian")
    table = pd.DataFrame({
        "iterations": cp["iterations"],
        "AUC (ours)": cp["auc"].round(4),
        "ε_emp CP (ours)": cp["epsilon_emp"].round(4),
        "ε_emp Bayesian (ours)": by["epsilon_emp"].round(4),
        "perfect": (cp["test_FP"] + cp["test_FN"] == 0) | (cp["test_TN"] + cp["test_TP"] == 0),
    })
    ref = reference.audit_reference().set_index(["attack", "implementation"])
    table["AUC (paper)"] = ref["auc"].reindex(table.index)
    table["ε_emp CP (paper)"] = ref["epsilon_emp"].reindex(table.index)
    return [SaveTable("figure5_table", table), ShowTable(table)]


def figure12(page: AuditPage) -> list[Block]:
    """Figure 12: the same audit bounded with the Bayesian (joint-beta) region (paper channel)."""
    save, show = figure("figure12", plot_figure5(page.records, method="bayesian", ceiling=page.ceiling_bayes,
                                                 epsilon=page.eps))
    return [save, Text(page.caption("Figure 12, paper channel")), show]


def null_floor_note(n_test: int, floor: dict, ceiling: float) -> str:
    return (f"Null floor at {n_test} test outputs per world: 95th percentile of chance attacks "
            f"**{floor['floor']:.2f}**, constant guess **{floor['constant_guess']:.2f}** "
            f"(Bayesian ceiling {ceiling:.2f}).")


def null_floor(page: AuditPage) -> list[Block]:
    """The Bayesian bound of attacks without signal at this profile's test outputs
    (:func:`pategan_audit.auditing.fdp.bayesian_null_floor`)."""
    n_test = page.profile.split[2]
    floor = fdp.bayesian_null_floor(n_test, n_test, n_sims=200, seed=page.seed)
    return [Text(null_floor_note(n_test, floor, page.ceiling_bayes))]
