"""Reference series of the ε-sweep figures (Figs. 1, 6, 7, 8, 9) and [49]'s tick marks.

Values derived from the authors' records (``spalabucr/pategan-audit:data/results``) with the best-of-n statistic
(implementation notes §utility.best-of-n); Fig. 8 under our mean ± standard-error definition. Plot conventions:
implementation notes §utility.figures.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._schema import DATASETS, EPS_GRID, HAND_READ, IMPLEMENTATIONS, RECORDS, check_key

FIGURES: dict[int, dict] = {
    1: dict(dataset="epileptic_seizure", metric="auroc", statistic="mean of best-of-n", baseline=0.5),
    6: dict(dataset="credit", metric="auroc", statistic="mean of best-of-n", baseline=0.5),
    7: dict(dataset="credit", metric="auprc", statistic="mean of best-of-n", baseline=0.0017),
    8: dict(dataset="epileptic_seizure", metric="auroc", statistic="mean ± SE over tables (proposed)", baseline=0.5),
    9: dict(dataset="epileptic_seizure", metric="auprc", statistic="mean of best-of-n", baseline=0.2),
}
# y-axis lower limits used in the authors' notebook (implementation notes §utility.figures)
FIGURE_YLIM_LOWER: dict[tuple[str, str], float] = {
    ("credit", "auroc"): 0.21,
    ("epileptic_seizure", "auroc"): 0.32,
    ("epileptic_seizure", "auprc"): -0.07,
}

NR = None  # "not run" in the series below
_SERIES: dict[int, dict[str, list]] = {
    1: {
        "original": [0.5000, 0.6026, 0.6907, 0.6607, 0.6867, 0.7868, 0.8011, 0.7769],
        "updated": [0.6396, 0.6290, 0.6236, 0.6351, 0.6187, 0.5000, 0.5000, 0.5000],
        "synthcity": [0.6250, 0.6216, 0.6239, 0.6696, 0.7165, 0.7238, 0.7374, 0.7829],
        "turing": [0.5000, 0.5000, 0.5000, 0.7252, 0.7425, 0.6962, 0.5000, 0.5000],
        "borealis": [0.6123, 0.5912, 0.6054, 0.6247, 0.6730, 0.6060, 0.5981, 0.6046],
        "smartnoise": [NR, NR, NR, 0.6531, 0.6963, 0.6218, 0.6849, 0.5951],
    },
    9: {
        "original": [0.2000, 0.4590, 0.5720, 0.5597, 0.5854, 0.6796, 0.7060, 0.6895],
        "updated": [0.4924, 0.5015, 0.4835, 0.5130, 0.4892, 0.2000, 0.2000, 0.2000],
        "synthcity": [0.4671, 0.4666, 0.4598, 0.5144, 0.5643, 0.5860, 0.5913, 0.6963],
        "turing": [0.2000, 0.2000, 0.2000, 0.5718, 0.5856, 0.5118, 0.2000, 0.2000],
        "borealis": [0.4572, 0.4414, 0.4506, 0.4666, 0.5301, 0.4404, 0.4384, 0.4417],
        "smartnoise": [NR, NR, NR, 0.5417, 0.5774, 0.4989, 0.5435, 0.4693],
    },
    6: {
        "original": [0.5000] * 8,
        "updated": [0.5000] * 8,
        "synthcity": [0.4265, 0.4244, 0.4222, 0.4352, 0.5172, 0.7815, 0.8451, 0.8660],
        "turing": [0.5000] * 8,
        "borealis": [0.6552, 0.7289, 0.6342, 0.5000, 0.6300, 0.6235, 0.6219, 0.5662],
        "smartnoise": [NR, NR, NR, 0.4935, 0.7358, 0.4716, 0.7971, 0.7645],
    },
    7: {
        "original": [0.0017] * 8,
        "updated": [0.0017] * 8,
        "synthcity": [0.0222, 0.0197, 0.0230, 0.0259, 0.0320, 0.2081, 0.2542, 0.1490],
        "turing": [0.0017] * 8,
        "borealis": [0.1326, 0.1556, 0.1445, 0.0017, 0.1635, 0.0962, 0.0778, 0.0670],
        "smartnoise": [NR, NR, NR, 0.0234, 0.1174, 0.0288, 0.2742, 0.2311],
    },
    8: {  # (mean, SE); SE None for a bare 0.5 (constant single-class score)
        "original": [(0.5000, 0.0000), (0.4993, 0.0058), (0.5510, 0.0160), (0.6036, 0.0064), (0.6261, 0.0030),
                     (0.7524, 0.0097), (0.7629, 0.0077), (0.7406, 0.0059)],
        "updated": [(0.5175, 0.0134), (0.5057, 0.0141), (0.4973, 0.0160), (0.5225, 0.0184), (0.4935, 0.0082),
                    (0.5, None), (0.5, None), (0.5, None)],
        "synthcity": [(0.5286, 0.0163), (0.5322, 0.0141), (0.5314, 0.0134), (0.5612, 0.0132), (0.5166, 0.0082),
                      (0.6593, 0.0097), (0.6771, 0.0044), (0.7630, 0.0022)],
        "turing": [(0.5, None), (0.5, None), (0.5, None), (0.6421, 0.0058), (0.6085, 0.0121), (0.5480, 0.0246),
                   (0.5, None), (0.5, None)],
        "borealis": [(0.5100, 0.0112), (0.5045, 0.0118), (0.5044, 0.0106), (0.5108, 0.0124), (0.5060, 0.0060),
                     (0.4868, 0.0117), (0.4990, 0.0077), (0.4854, 0.0098)],
        "smartnoise": [NR, NR, NR, (0.5456, 0.0231), (0.5029, 0.0177), (0.4793, 0.0190), (0.5305, 0.0201),
                       (0.4413, 0.0101)],
    },
}  # fmt: skip


def _n_tables(dataset: str, epsilon: float) -> int:
    """Tables behind each point (implementation notes §utility.best-of-n): 25 at ε = 1 except Credit, else 9."""
    return 25 if (epsilon == 1.0 and dataset != "credit") else 9


def figure_series(fig: int, *, wide: bool = False) -> pd.DataFrame:
    """Reference series of Fig. 1, 6, 7, 8 or 9, one row per (implementation, ε ∈ EPS_GRID).

    Columns: ``figure, dataset, metric, statistic, implementation, epsilon, value, se, ran,
    n_tables, provenance``. Points that were not run (smartnoise below its accountant floor) have
    ``value = NaN`` and ``ran = False``; ``se`` is only given for Fig. 8 (NaN for a bare
    0.5). ``wide=True`` returns implementations × ε values.
    """
    if fig not in _SERIES:
        raise ValueError(f"no reference series for figure {fig!r}; choose one of {sorted(_SERIES)}")
    meta = FIGURES[fig]
    records = []
    for impl in IMPLEMENTATIONS:
        for eps, point in zip(EPS_GRID, _SERIES[fig][impl]):
            mean, se = point if isinstance(point, tuple) else (point, None)
            records.append(
                dict(
                    figure=fig, dataset=meta["dataset"], metric=meta["metric"], statistic=meta["statistic"],
                    implementation=impl, epsilon=eps,
                    value=math.nan if mean is None else float(mean),
                    se=math.nan if se is None else float(se),
                    ran=mean is not None, n_tables=_n_tables(meta["dataset"], eps), provenance=RECORDS,
                )
            )  # fmt: skip
    df = pd.DataFrame.from_records(records)
    if wide:
        return df.pivot(index="implementation", columns="epsilon", values="value").loc[list(IMPLEMENTATIONS)]
    return df


_MARKS = {
    ("credit", "auroc"): dict(zip(EPS_GRID, (0.675, 0.755, 0.820, 0.855, 0.870, 0.875, 0.880, 0.885))),
    ("credit", "auprc"): dict(zip(EPS_GRID, (0.075, 0.150, 0.250, 0.325, 0.330, 0.340, 0.345, 0.345))),
    ("epileptic_seizure", "auroc"): {1.0: 0.765, 10.0: 0.870},
    ("epileptic_seizure", "auprc"): {1.0: 0.650, 10.0: 0.765},
    ("cervical_cancer", "auroc"): {1.0: 0.910},
    ("cervical_cancer", "auprc"): {1.0: 0.550},
}


def paper49_marks(dataset: str, metric: str) -> pd.DataFrame:
    """The "Paper" tick marks of Figs. 1, 6, 7, 9: [49]'s values read off [49]'s figures by the
    authors (rounded; at ε = 1 Credit AUROC reads 0.870 vs the printed 0.8737). Columns
    ``epsilon, value, provenance, note``; empty for ISOLET (no marks). Cervical's marks exist in
    the notebook but are not drawn in any figure."""
    check_key(dataset, DATASETS, "dataset")
    check_key(metric, ("auroc", "auprc"), "metric")
    marks = _MARKS.get((dataset, metric), {})
    note = "not drawn in any figure" if dataset == "cervical_cancer" else ""
    return pd.DataFrame(
        {
            "epsilon": np.array(list(marks), dtype=float),
            "value": np.array(list(marks.values()), dtype=float),
            "provenance": HAND_READ,
            "note": note,
        }
    )
