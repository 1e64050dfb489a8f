"""Tables that read the audit records: the channel decomposition (implementation notes §audit.channels) and the
violation ablation.

Channel decomposition, per attack and implementation (ε_emp of one bound method):

    ε(paper) = [ε(paper) − ε(fixed_size)]  +  [ε(fixed_size) − ε(controlled)]  +  ε(controlled)
                 size channel                  bounds channel                    what remains

Each term is a difference of two *lower confidence bounds* from independent games, so it is
indicative, not a bound itself: a small negative term is noise, and a term between two values at
the ceiling is unknown (the attack stayed perfect; the channel may or may not matter on its own).
"""
from __future__ import annotations

import math

import pandas as pd

from .bounds import perfect_attack_ceiling
from .settings import CHANNELS

__all__ = ["channel_table", "channel_sentences", "ablation_table", "near_ceiling"]

_NEEDED = ["attack", "implementation", "channel", "variant", "method", "epsilon_emp", "auc", "run_id"]


def _check(records: pd.DataFrame, what: str) -> None:
    missing = [c for c in _NEEDED if c not in records.columns]
    if missing:
        raise ValueError(f"{what} needs audit records (run_settings output) with columns {_NEEDED}; missing {missing}")


def channel_table(records: pd.DataFrame, *, method: str = "clopper_pearson") -> pd.DataFrame:
    """One row per (attack, implementation): ε_emp and AUC per channel, the part of ε_emp the
    size and the bounds channel account for, and which channels ran the same shadow models.

    Columns: ``ε paper``, ``ε fixed_size``, ``ε controlled``, ``size channel``,
    ``bounds channel``, ``remains``, ``AUC <channel>``, ``same runs``. A channel missing from
    the records is NaN; channels sharing a ``run_id`` are listed in ``same runs``.
    """
    _check(records, "channel_table")
    sel = records[(records["method"] == method) & (records["variant"] == "as benchmarked")]
    if sel.empty:
        raise ValueError(f"no 'as benchmarked' records for method={method!r}")
    rows = []
    for (attack, impl), g in sel.groupby(["attack", "implementation"], sort=False):
        by = g.drop_duplicates("channel").set_index("channel")
        eps = {c: float(by.loc[c, "epsilon_emp"]) if c in by.index else math.nan for c in CHANNELS}
        row = {"attack": attack, "implementation": impl}
        row.update({f"ε {c}": eps[c] for c in CHANNELS})
        row["size channel"] = eps["paper"] - eps["fixed_size"]
        row["bounds channel"] = eps["fixed_size"] - eps["controlled"]
        row["remains"] = eps["controlled"]
        row.update({f"AUC {c}": float(by.loc[c, "auc"]) if c in by.index else math.nan for c in CHANNELS})
        groups = [list(chs) for _, chs in by.groupby("run_id", sort=False).groups.items() if len(chs) > 1]
        ordered = [sorted(chs, key=CHANNELS.index) for chs in groups]
        row["same runs"] = "; ".join(" = ".join(chs) for chs in ordered)
        rows.append(row)
    return pd.DataFrame(rows).set_index(["attack", "implementation"])


def _fmt(value: float, ceiling: float | None) -> str:
    if math.isnan(value):
        return "n/a"
    at_ceiling = ceiling is not None and value >= ceiling - 1e-9
    return f"{value:.2f}" + (" (ceiling)" if at_ceiling else "")


def channel_sentences(table: pd.DataFrame, *, ceiling: float | None = None, noise: float = 0.1) -> list[str]:
    """One Markdown sentence per row of :func:`channel_table`: how much of ε_emp the size and
    bounds channels account for and what remains. ``noise``: |difference| below this is called
    "nothing measurable"; ``ceiling``: values at it are marked and differences between two
    ceiling values are called unknown (ignored when ≤ 0: such a profile cannot show any leak)."""
    if ceiling is not None and ceiling <= 0:
        ceiling = None
    out = []
    for (attack, impl), r in table.iterrows():
        p, f, c = r["ε paper"], r["ε fixed_size"], r["ε controlled"]
        chain = f"{_fmt(p, ceiling)} → {_fmt(f, ceiling)} → {_fmt(c, ceiling)}"

        def part(name: str, hi: float, lo: float) -> str:
            if math.isnan(hi) or math.isnan(lo):
                return f"the {name} channel was not measured"
            if ceiling is not None and hi >= ceiling - 1e-9 and lo >= ceiling - 1e-9:
                return f"closing the {name} channel left the attack perfect (its own share unknown)"
            d = hi - lo
            if abs(d) < noise:
                return f"the {name} channel accounts for nothing measurable ({d:+.2f})"
            return f"the {name} channel accounts for {d:.2f}" if d > 0 else f"closing the {name} channel *raised* ε_emp by {-d:.2f} (noise)"

        same = f" Same runs: {r['same runs']}." if r["same runs"] else ""
        out.append(f"**{impl}**, {attack} (paper → same size → public bounds: {chain}): {part('size', p, f)}; "
                   f"{part('bounds', f, c)}; {_fmt(c, ceiling)} remains.{same}")
    return out


def ablation_table(records: pd.DataFrame, *, method: str = "clopper_pearson",
                   channel_records: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ablation per (attack, implementation, variant): channel, ε_emp, AUC, change of ε_emp
    against "as benchmarked", and what the switch did to the shadow models' outputs:
    ``identical outputs`` (not one synthetic table changed), ``= <other variant>`` (same run),
    or ``changed``; ``channel_records`` (the main audit's records) adds "= <channel> channel"
    where a variant ran exactly the shadow models of a channel setting (e.g. a bounds fix)."""
    _check(records, "ablation_table")
    channel_runs: dict[str, str] = {}
    if channel_records is not None:
        main = channel_records[channel_records["variant"] == "as benchmarked"]
        for run_id, channel in zip(main["run_id"], main["channel"]):
            channel_runs.setdefault(run_id, channel)
    if "outputs_digest" not in records.columns:
        raise ValueError("ablation_table needs the outputs_digest column of run_settings records")
    sel = records[records["method"] == method]
    rows = []
    for (attack, impl), g in sel.groupby(["attack", "implementation"], sort=False):
        g = g.drop_duplicates("variant")
        base = g[g["variant"] == "as benchmarked"]
        b = base.iloc[0] if len(base) else None
        seen: dict[str, str] = {}
        for _, r in g.iterrows():
            if b is None or r["variant"] == "as benchmarked":
                effect = ""
            elif r["run_id"] == b["run_id"]:
                effect = "= as benchmarked (same run)"
            elif r["outputs_digest"] == b["outputs_digest"]:
                effect = "identical outputs"
            elif r["run_id"] in seen:
                effect = f"= {seen[r['run_id']]} (same run)"
            else:
                effect = "changed"
            seen.setdefault(r["run_id"], r["variant"])
            if r["variant"] != "as benchmarked" and r["run_id"] in channel_runs:
                effect += f"{'; ' if effect else ''}= {channel_runs[r['run_id']]} channel (same run)"
            rows.append({"attack": attack, "implementation": impl, "variant": r["variant"], "channel": r["channel"],
                         "ε_emp": float(r["epsilon_emp"]), "AUC": float(r["auc"]),
                         "Δε vs as benchmarked": float(r["epsilon_emp"] - b["epsilon_emp"]) if b is not None else math.nan,
                         "outputs": effect})
    return pd.DataFrame(rows).set_index(["attack", "implementation", "variant"])


def near_ceiling(records: pd.DataFrame, *, margin: float = 0.2, alpha: float = 0.1) -> set[tuple[str, str, str]]:
    """(attack, implementation, channel) of the ``as benchmarked`` Clopper-Pearson records whose
    ε_emp is within ``margin`` of the ceiling their own test split allows, the paper's Querybased
    game excluded (a constant generator reaches the ceiling there through the output size alone,
    so a higher ceiling measures nothing): the channels to audit with more test outputs."""
    r = records[(records["method"] == "clopper_pearson") & (records["variant"] == "as benchmarked")
                & ~((records["attack"] == "querybased") & (records["channel"] == "paper"))]
    return {(a, i, c) for a, i, c, n, e, d in r[["attack", "implementation", "channel", "n_test", "epsilon_emp", "delta"]]
            .itertuples(index=False, name=None)
            if e >= perfect_attack_ceiling(n_per_world=int(n), alpha=alpha, delta=float(d)) - margin}
