"""Keys, provenance labels and the long-format helpers shared by the reference tables."""
from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

IMPLEMENTATIONS: tuple[str, ...] = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
DATASETS: tuple[str, ...] = ("credit", "cervical_cancer", "isolet", "epileptic_seizure")
PAPER49 = "paper49"  # column key of the PATE-GAN paper's own numbers ([49] in the audit paper)
DISPLAY_NAMES: dict[str, str] = {
    "credit": "Kaggle Credit",
    "cervical_cancer": "Kaggle Cervical Cancer",
    "isolet": "UCI ISOLET",
    "epileptic_seizure": "UCI Epileptic Seizure",
    "mnist": "MNIST",
    PAPER49: "[49]",
}
# Names as in the authors' records (implementation notes §utility.classifiers) -> names as printed in Tables 5, 8-10.
CLASSIFIERS: tuple[str, ...] = (
    "LogisticRegression", "RandomForest", "GaussianNB", "BernoulliNB", "LinearSVM", "DecisionTree",
    "LDA", "AdaBoost", "Bagging", "GBM", "MLP", "XGB",
)  # fmt: skip
CLASSIFIER_DISPLAY_NAMES: dict[str, str] = dict(
    zip(
        CLASSIFIERS,
        ("Logistic Regression", "Random Forest", "Gaussian NB", "Bernoulli NB", "Linear SVM", "Decision Tree",
         "LDA", "AdaBoost", "Bagging", "GBM", "MLP", "XGBoost"),
    )
)  # fmt: skip
AVERAGE = "average"
EPS_GRID: tuple[float, ...] = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0)

PRINTED = "printed"
RECORDS = "derived from the authors' records"
HAND_READ = "hand-read from [49]'s figures (hard-coded in the authors' notebook)"
SPEC = "computed by us (implementation notes)"

LONG_COLUMNS: tuple[str, ...] = ("table", "row", "column", "value", "provenance", "note")


def long_frame(
    table: str,
    rows: Sequence[str],
    columns: Sequence[str],
    values: Iterable[Iterable[float | None]],
    *,
    provenance: str = PRINTED,
    notes: dict[tuple[str, str], str] | None = None,
) -> pd.DataFrame:
    """A row-major grid of numbers as a long table (``None`` cells are skipped)."""
    notes = notes or {}
    records = []
    grid = [list(r) for r in values]
    if len(grid) != len(rows) or any(len(r) != len(columns) for r in grid):
        raise AssertionError(f"{table}: grid shape does not match {len(rows)} rows x {len(columns)} columns")
    for row, line in zip(rows, grid):
        for column, value in zip(columns, line):
            if value is None:
                continue
            records.append((table, row, column, float(value), provenance, notes.get((row, column), "")))
    df = pd.DataFrame.from_records(records, columns=list(LONG_COLUMNS))
    df.attrs["row_order"], df.attrs["column_order"] = list(rows), list(columns)
    return df


def to_wide(long: pd.DataFrame, *, index: str = "row", columns: str = "column", values: str = "value") -> pd.DataFrame:
    """Pivot a long reference table back to the printed layout (printed order where known,
    else first-seen order)."""
    present_rows, present_cols = set(long[index]), set(long[columns])
    row_order = [r for r in long.attrs.get("row_order", []) if r in present_rows]
    col_order = [c for c in long.attrs.get("column_order", []) if c in present_cols]
    row_order += [r for r in dict.fromkeys(long[index]) if r not in row_order]
    col_order += [c for c in dict.fromkeys(long[columns]) if c not in col_order]
    wide = long.pivot(index=index, columns=columns, values=values)
    return wide.loc[row_order, col_order].rename_axis(index=None, columns=None)


def grid(text: str) -> list[list[float | None]]:
    """Parse a whitespace grid of numbers; ``-`` marks an empty cell."""
    return [[None if tok == "-" else float(tok) for tok in line.split()] for line in text.strip().splitlines()]


def check_key(value: str, allowed: Sequence, what: str):
    if value not in allowed:
        raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(map(str, allowed))}")
    return value


__all__ = [
    "AVERAGE", "CLASSIFIERS", "CLASSIFIER_DISPLAY_NAMES", "DATASETS", "DISPLAY_NAMES", "EPS_GRID", "HAND_READ",
    "IMPLEMENTATIONS", "LONG_COLUMNS", "PAPER49", "PRINTED", "RECORDS", "SPEC", "check_key", "grid", "long_frame",
    "to_wide",
]  # fmt: skip
