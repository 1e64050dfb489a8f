"""Code-review facts: Table 2 (violations and bugs), Table 3 (hyperparameters), Table 13 (issues).

Sources: the printed Tables 2, 3 and 13 of ``ganev2025elusive``, and for the code-verified values implementation
notes §common.table3, §violations.catalogue, §violations.count (each cell checked against the upstream code).
"""
from __future__ import annotations

import pandas as pd

from ._schema import IMPLEMENTATIONS, PAPER49, PRINTED

# Table 2 columns, in the paper's order, with the group used by the paper's totals.
TABLE2_CATEGORIES: tuple[str, ...] = (
    "pate", "data_partition", "moments_accountant", "metadata", "laplace_noise", "delta_scale",
    "labels_distribution", "teachers", "processing",
)  # fmt: skip
_GROUP = {c: "privacy violation" for c in TABLE2_CATEGORIES[:7]} | {"teachers": "other bug", "processing": "other bug"}

# (implementation, category) -> the code-level id (implementation notes §violations.catalogue).
_TICKS: dict[tuple[str, str], str] = {
    ("original", "pate"): "V1", ("original", "data_partition"): "V3", ("original", "metadata"): "V10",
    ("original", "laplace_noise"): "V14", ("original", "delta_scale"): "V17", ("original", "labels_distribution"): "V19",
    ("updated", "data_partition"): "V4", ("updated", "metadata"): "V11", ("updated", "laplace_noise"): "V15",
    ("updated", "teachers"): "B1", ("updated", "processing"): "B3",
    ("synthcity", "data_partition"): "V5", ("synthcity", "moments_accountant"): "V7",
    ("synthcity", "metadata"): "V12", ("synthcity", "teachers"): "B2",
    ("turing", "pate"): "V2", ("turing", "data_partition"): "V6", ("turing", "laplace_noise"): "V16",
    ("turing", "delta_scale"): "V18", ("turing", "processing"): "B4",
    ("borealis", "moments_accountant"): "V8", ("borealis", "metadata"): "V13", ("borealis", "processing"): "B5",
    ("smartnoise", "moments_accountant"): "V9",
}  # fmt: skip
# Ticks added in the TMLR version (absent from arXiv-v1's Table 1; implementation notes §violations.count).
_NOT_IN_ARXIV_V1 = {"V15", "V19"}


def table2(*, wide: bool = False) -> pd.DataFrame:
    """Table 2: which implementation has which privacy violation / other bug (printed ticks).

    Long columns: ``implementation, category, group, tick, id, in_arxiv_v1, provenance``. ``group``
    follows the reading that reproduces the paper's "19 violations + 5 bugs": Labels Distribution
    counts as a privacy violation (the extracted header places it under "Other Bugs", which would
    give 18 + 6; implementation notes §violations.count). ``wide=True``: implementations × categories of
    ids ("" where no tick).
    """
    records = []
    for impl in IMPLEMENTATIONS:
        for cat in TABLE2_CATEGORIES:
            vid = _TICKS.get((impl, cat), "")
            records.append(
                dict(implementation=impl, category=cat, group=_GROUP[cat], tick=bool(vid), id=vid,
                     in_arxiv_v1=bool(vid) and vid not in _NOT_IN_ARXIV_V1, provenance=PRINTED)
            )  # fmt: skip
    df = pd.DataFrame.from_records(records)
    if wide:
        return df.pivot(index="implementation", columns="category", values="id").loc[
            list(IMPLEMENTATIONS), list(TABLE2_CATEGORIES)
        ]
    return df


# Table 3 as printed (``ganev2025elusive`` Table 3); `code` holds the code-verified value where it differs
# (implementation notes §common.table3).
_TABLE3_COLUMNS = (PAPER49, *IMPLEMENTATIONS)
_TABLE3 = [
    ("uses_pate", "yes | no | yes | yes | no | yes | yes"),
    ("teachers", "N/1,000 | - | 10 | 10 | - | 10 | N/1,000"),
    ("lambda", "- | - | 1 | 1e-3 | - | 1e-4 | 1e-3"),
    ("moments_L", "- | - | 20 | 100 | - | 100 | 100"),
    ("delta", "1e-5 | 1e-5 | 1e-5 | 1/(N√N) | 1e-5 | 1e-5 | 1/(N√N)"),
    ("framework", "- | TensorFlow | TensorFlow | PyTorch | TensorFlow | PyTorch | PyTorch"),
    ("optimizer", "Adam | Adam | RMSProp | Adam | Adam | Adam | Adam"),
    ("learning_rate", "1e-4 | 1e-4 | 1e-4 | 1e-4 | 1e-4 | 1e-4 | 1e-4"),
    ("batch_size", "64 | 128 | 64 | 200 | 128 | 64 | 64"),
    ("max_iterations", "until budget | 10,000 | until budget | 1,000 or until budget | 100 | until budget | until budget"),
    ("teacher_iterations", "5 | - (single disc.) | 1 | 1 (epoch) | - | 5 | 5"),
    ("student_iterations", "5 | 1 | 5 | 10 (epochs) | 1 | 5 | 5"),
    ("generator_iterations", "1 | 1 | 1 | 10 (epochs) | 1 | 1 | 1"),
    ("teacher_layers", "1 layer | - | {1} | {1} | - | {d/2, 1} | {2d/3, d/3, 1}"),
    ("student_layers", "3 layers | {d, d, 1} | {d, 1} | {100, 1} | {d, d, 1} | {d/2, 1} | {2d/3, d/3, 1}"),
    ("noise_dimension", "- | d/4 | d | d | d/4 | d/4 | 64"),
    ("generator_layers", "{d, d/2, d} | {d, d, d} | {4d, 4d, d} | {100, d} | {d, d, d} | {2d, d} | {64, 64, d}"),
]
_TABLE3_CODE = {
    ("delta", "original"): "integer exponent 5, used as 10 XOR 5 (V17)",
    ("delta", "synthcity"): "N^{-3/2}; a user-supplied δ is ignored (O10)",
    ("teachers", "smartnoise"): "⌊N/1000⌋ hard-coded",
    ("student_iterations", "updated"): "1 (code default n_s; the paper's runs used 1)",
    ("student_layers", "synthcity"): "{100, 100, 1}",
    ("noise_dimension", "synthcity"): "100 (+ conditional dims)",
    ("generator_layers", "synthcity"): "residual {100 (+skip), (+skip)} -> d",
    ("generator_layers", "borealis"): "{2·z_dim ≈ d/2, d}",
    ("max_iterations", "synthcity"): "1,000 (inner class); the public plugin uses 200",
}


def table3(*, wide: bool = False) -> pd.DataFrame:
    """Table 3: architectures and hyperparameters as printed, with ``code`` = the code-verified
    value where it differs ("" otherwise). Values are strings."""
    records = []
    for param, line in _TABLE3:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != len(_TABLE3_COLUMNS):
            raise AssertionError(f"Table 3 row {param} has {len(cells)} cells")
        for column, value in zip(_TABLE3_COLUMNS, cells):
            records.append(dict(parameter=param, column=column, value=value,
                                code=_TABLE3_CODE.get((param, column), ""), provenance=PRINTED))  # fmt: skip
    df = pd.DataFrame.from_records(records)
    if wide:
        return df.pivot(index="parameter", columns="column", values="value").loc[
            [p for p, _ in _TABLE3], list(_TABLE3_COLUMNS)
        ]
    return df


def table13() -> pd.DataFrame:
    """Table 13: GitHub issues the authors raised (printed)."""
    rows = [
        ("updated", "data_partition", "vanderschaarlab/mlforhealthlabpub#29"),
        ("updated", "teachers", "vanderschaarlab/mlforhealthlabpub#30"),
        ("updated", "processing & metadata", "vanderschaarlab/mlforhealthlabpub#31"),
        ("updated", "laplace_noise", "vanderschaarlab/mlforhealthlabpub#36"),
        ("synthcity", "data_partition", "vanderschaarlab/synthcity#275"),
        ("synthcity", "moments_accountant", "vanderschaarlab/synthcity#276"),
        ("synthcity", "teachers", "vanderschaarlab/synthcity#277"),
        ("synthcity", "metadata", "vanderschaarlab/synthcity#278"),
        ("borealis", "moments_accountant", "BorealisAI/private-data-generation#11"),
        ("borealis", "processing & metadata", "BorealisAI/private-data-generation#12"),
        ("smartnoise", "moments_accountant", "opendp/smartnoise-sdk#596"),
    ]
    return pd.DataFrame(rows, columns=["implementation", "category", "issue"]).assign(provenance=PRINTED)
