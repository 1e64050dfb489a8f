"""The page "Implementations": the seven presets' Table 3 read off instantiated models, Table 2
generated from the presets' violation switches, and the moments accountants compared per query
(``ganev2025elusive`` §4, Tables 2, 3 and 7, Appendix A).

Every function returns a table (or the text of one paragraph) for the notebook to write with
:meth:`pategan_audit.pages.report.Section.table`; nothing here writes files. Only
:func:`describe_presets` trains, one iteration per preset and dataset.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .. import accounting, datasets, reference
from ..implementations.hyperparameters import paper_table

__all__ = [
    "TABLE7_DATASETS", "LAMBDAS", "table7", "table3_datasets", "describe_presets", "table3_generated",
    "paper_hyperparameters", "table3_paper_flagged", "violation_switches", "table2_generated", "violation_count", "switches_table",
    "accountant_table", "largest_disagreement", "eps_hat_64_queries", "gaussian_sigma", "scorecard_rows", "table13",
    "table2_probed",
]

TABLE7_DATASETS = ("credit", "cervical_cancer", "isolet", "epileptic_seizure", "mnist")
LAMBDAS = (1e-3, 1.0)  # the λ the paper used, and one at which the accountants' bugs bite
_NO_CODE = ("", "nan", "None", "<NA>")
_TABLE7_COLUMNS = {"N": "N (ours)", "d": "d (ours)", "imbalance": "imbalance (ours)"}


def table7(names: tuple[str, ...] = TABLE7_DATASETS) -> pd.DataFrame:
    """Our dataset summary beside the paper's Table 7 (:func:`pategan_audit.datasets.table7`),
    the loaders' warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return datasets.table7(names)


def table3_datasets(profile: str) -> list[tuple[str, int]]:
    """(dataset, k) pairs Table 3 is read on: Cervical with k = 5, and at every profile but
    smoke also Epileptic Seizure with the paper's k = ⌊N/1000⌋ = 9."""
    return [("cervical_cancer", 5)] if profile == "smoke" else [("cervical_cancer", 5), ("epileptic_seizure", 9)]


def describe_presets(pairs: list[tuple[str, int]], *, epsilon: float, seed: int) -> dict[tuple[str, str], dict]:
    """Per (dataset, preset): :func:`~pategan_audit.implementations.describe.describe` of the
    preset fitted for one iteration with k teachers (public bounds where the preset takes them).
    "Max iterations" is the preset's default, and a logistic-regression teacher's iterations read
    "1 fit"."""
    from ..implementations import PRESETS, create
    from ..implementations.describe import describe

    described = {}
    for ds_name, k in pairs:
        ds = datasets.load(ds_name)
        for name in PRESETS:
            extra = {"public_bounds": ds.bounds} if create(name).config.bounds == "public" else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = create(name, epsilon=epsilon, seed=seed, max_iter=1, num_teachers=k, **extra)
                model.fit(ds.train, label=ds.label)
            info = describe(model)
            info["Max iterations"] = create(name).config.max_iter  # the preset default (1 was used only to instantiate)
            if info["Teacher layers"] == "LogisticRegression":
                info["Teacher iterations"] = "1 fit"
            described[(ds_name, name)] = info
    return described


def _merge(first, second) -> str:
    return first if str(first) == str(second) else f"{first} / {second}"


def table3_generated(described: dict[tuple[str, str], dict], pairs: list[tuple[str, int]]) -> pd.DataFrame:
    """Table 3 from :func:`describe_presets`: one column per preset, "Cervical / other" in a
    cell where the two datasets differ (the other is the last of ``pairs``)."""
    from ..implementations import PRESETS

    second = pairs[-1][0]
    return pd.DataFrame({name: {row: _merge(described[("cervical_cancer", name)][row], described[(second, name)][row])
                                for row in described[("cervical_cancer", name)]} for name in PRESETS})


def paper_hyperparameters() -> pd.DataFrame:
    """What ``hyperparameters="paper"`` (the [49] column of Table 3) sets in each preset: the table
    the presets read (:func:`pategan_audit.implementations.hyperparameters.paper_table`)."""
    return paper_table()


def table3_paper_flagged() -> pd.DataFrame:
    """The paper's Table 3 as printed, a cell the code disagrees with marked ⚠ with the code's value."""
    ref3 = reference.table3()
    printed = ref3.pivot_table(index="parameter", columns="column", values="value", aggfunc="first", sort=False)
    has_code = ~ref3["code"].astype(str).str.strip().isin(_NO_CODE)
    code = ref3[has_code].pivot_table(index="parameter", columns="column", values="code", aggfunc="first")
    flagged = printed.copy()
    for (param, col), val in code.stack().dropna().items():
        flagged.loc[param, col] = f"⚠ {printed.loc[param, col]} (code: {val})"
    return flagged


def violation_switches() -> pd.DataFrame:
    """One row per (implementation, privacy violation or bug): the switch and its violating value,
    whether the preset has it as benchmarked and as released, ``tick`` (either), and the fix."""
    from ..implementations import PRESETS, create, registry, violations

    released = {name: registry.released_overrides(name) for name in PRESETS if name != "corrected"}
    rows = []
    for v in violations.VIOLATIONS:
        if v.kind not in ("privacy", "bug"):
            continue
        for name in v.implementations:
            value_bench = getattr(create(name).config, v.field)
            value_rel = getattr(create(name, **released.get(name, {})).config, v.field)
            rows.append({"implementation": name, "id": v.id, "column": v.paper_column, "kind": v.kind,
                         "switch": f"{v.field}={v.violating!r}", "as benchmarked": value_bench == v.violating,
                         "as released": value_rel == v.violating,
                         "tick": value_bench == v.violating or value_rel == v.violating,
                         "fix": "–" if v.fixed is None else f"{v.field}={v.fixed!r}"})
    return pd.DataFrame(rows)


def _id_key(violation_id: str) -> tuple[str, int]:
    return violation_id[0], int(violation_id[1:])


def _joined_ids(ids) -> str:
    return ", ".join(sorted(set(ids), key=_id_key))


def table2_generated(switches: pd.DataFrame) -> pd.DataFrame:
    """Table 2 from :func:`violation_switches`: per implementation and paper column, the ids of
    its switches (by letter, then number: B2 before V2 before V10); the implementations in the
    paper's order."""
    table = switches.pivot_table(index="implementation", columns="column", values="id", aggfunc=_joined_ids)
    return table.reindex(reference.IMPLEMENTATIONS).fillna("")


def violation_count(switches: pd.DataFrame) -> str:
    """The paragraph (Markdown) that counts the ticked switches as privacy violations + bugs,
    beside the paper's 19 + 5, and checks the ticks against the paper's Table 2."""
    ticked = switches[switches["tick"]]
    n_priv = int((ticked["kind"] == "privacy").sum())
    n_bug = int((ticked["kind"] == "bug").sum())
    n_labels = int((ticked["column"] == "Labels Distribution").sum())
    ref2 = reference.table2()
    ref_ticks = ref2[ref2["tick"].astype(bool)]
    agree = set(zip(ticked["implementation"], ticked["id"])) == set(zip(ref_ticks["implementation"], ref_ticks["id"]))
    return (
        f"**Count from the switches: {n_priv} privacy violations + {n_bug} other bugs** "
        f"(paper: 19 + 5). This count files *Labels Distribution* (V19) under privacy violations, as the paper's text "
        f"does; the extracted header of its Table 2 places that column under \"Other Bugs\", which would give "
        f"{n_priv - n_labels} + {n_bug + n_labels} (implementation notes §violations.count). "
        f"Every ticked (implementation, id) pair agrees with the paper's ticks: **{agree}**."
    )


def switches_table(switches: pd.DataFrame) -> pd.DataFrame:
    """:func:`violation_switches` indexed by (implementation, id), without the ``tick`` column."""
    return switches.drop(columns=["tick"]).set_index(["implementation", "id"])


def accountant_table(lam: float, k: int, orders=(1, 2, 3)) -> pd.DataFrame:
    """Per vote split (n0, n1) of k teachers and moment l in ``orders``: each accountant's
    increment of α(l) for one query (columns in :data:`accounting.KINDS` order), and whether
    Theorem 3's condition holds."""
    cmp = accounting.compare_increments(num_teachers=k, lam=lam, num_moments=max(orders))
    cmp = cmp[cmp["l"].isin(orders)]
    wide = cmp.pivot_table(index=["n0", "n1", "l"], columns="kind", values="increment", dropna=False)
    wide = wide[[c for c in accounting.KINDS if c in wide.columns]]
    valid = cmp.drop_duplicates(["n1"]).set_index("n1")["theorem3_valid"]
    wide["Thm 3 valid"] = [bool(valid[n1]) for _, n1, _ in wide.index]
    return wide


def largest_disagreement(table: pd.DataFrame) -> float:
    """The largest spread (max − min) between the accountants on any row of :func:`accountant_table`."""
    kinds = list(accounting.KINDS)
    spread = table[kinds].max(axis=1) - table[kinds].min(axis=1)
    return float(np.nanmax(spread.to_numpy()))


def eps_hat_64_queries(*, delta: float = 1e-5, num_teachers: int = 5) -> pd.DataFrame:
    """The worked check of implementation notes §accountants.examples: ε̂ after 64 queries with votes (n0, n1) = (4, 1), per
    accountant (its default number of moments L) and λ in :data:`LAMBDAS`."""
    rows = []
    for lam in LAMBDAS:
        for kind, num_moments in (("updated", 20), ("synthcity", 100), ("borealis", 100), ("smartnoise", 100), ("corrected", 100)):
            acc = accounting.MomentsAccountant(kind, lam=lam, num_moments=num_moments, delta=delta, num_teachers=num_teachers)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                acc.charge(np.ones(64, dtype=int))
                eps_hat, l_best = accounting.epsilon_from_moments(acc.alpha, delta=delta, warn=False)
            rows.append({"λ": lam, "accountant": kind, "L": num_moments, "ε̂": eps_hat, "argmin l": l_best})
    return pd.DataFrame(rows).pivot_table(index="accountant", columns="λ", values="ε̂")


def gaussian_sigma(epsilon: float) -> pd.DataFrame:
    """σ of the Gaussian label noise per formula of :data:`accounting.SIGMA_KINDS` (original is
    passed δ = 5, as its code does; the others 10⁻⁵) and the probability that it flips a label."""
    rows = []
    for kind in accounting.SIGMA_KINDS:
        delta = 5 if kind == "original" else 1e-5
        sigma = accounting.gaussian_label_noise_sigma(kind, epsilon=epsilon, delta=delta)
        rows.append({"formula": kind, "delta as passed": delta, "σ": sigma, "P(flip)": accounting.label_flip_probability(sigma)})
    return pd.DataFrame(rows).set_index("formula")


def scorecard_rows(t7: pd.DataFrame) -> list[dict]:
    """Scorecard rows of Table 7's N, d and imbalance as computed from the bundled data."""
    return [
        {"table": "table7", "row": ds_name, "column": col, "ours": float(t7.loc[ds_name, ours_col]),
         "runs": "no training (bundled data)"}
        for ds_name in t7.index for col, ours_col in _TABLE7_COLUMNS.items()
    ]


def table13() -> pd.DataFrame:
    """Table 13 of ``ganev2025elusive`` (App. D): the issues the authors opened on the upstream
    repositories, one row per issue (implementation, category as printed) with its address."""
    from .. import reference

    t = reference.table13()
    repo = t["issue"].str.split("#").str[0]
    number = t["issue"].str.split("#").str[1]
    out = t[["implementation", "category", "issue"]].copy()
    out["address"] = "https://github.com/" + repo + "/issues/" + number
    return out.set_index(["implementation", "category"])


def table2_probed(observed: pd.DataFrame) -> pd.DataFrame:
    """Table 2 from behaviour (:func:`pategan_audit.auditing.probes.table2_observed`), wide:
    per implementation and category "✓" where the probe observed the violation, "" where it did
    not, with "(paper: ✓)" / "(paper: -)" added where the printed tick differs. ``corrected`` (not
    in the paper) has no such mark. The evidence stays in the long table."""
    paper = reference.table2().set_index(["implementation", "category"])["tick"]

    def cell(row) -> str:
        mark = "✓" if row["observed"] else ""
        key = (row["implementation"], row["category"])
        if key in paper.index and bool(paper[key]) != bool(row["observed"]):
            mark += " (paper: ✓)" if paper[key] else " (paper: -)"
        return mark.strip()

    cells = observed.assign(cell=observed.apply(cell, axis=1))
    order = list(dict.fromkeys(observed["implementation"]))
    return cells.pivot(index="implementation", columns="category", values="cell").reindex(
        index=order, columns=list(dict.fromkeys(observed["category"])))
