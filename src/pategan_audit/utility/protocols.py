"""Which archived run stands for each Table 4 cell at ε = 1 (ganev2025elusive §5, Tables 4, 5, 7-10,
Appendix C): one rule, read by the scorecard, the utility page and the experiments alike.

Several archives hold Table 4's ε = 1 cells at different protocols (``utility_large``: Cervical at
the paper's best of 5 × 5, Epileptic at 2 × 2 with a 2,000-iteration cap; ``utility_tables_large``:
Credit 3 × 3, ISOLET 2 × 2; ``utility_best25_large``: Epileptic and ISOLET at the paper's 5 × 5 with
the 10,000-iteration cap, filled cell by cell). For each (dataset, implementation), Setting A
(``real``) included, the record set run at the largest protocol wins (:meth:`Protocol.rank`: tables
per number, then the iteration cap, then the authors' AdaBoost SAMME.R over SAMME); a cell one
archive lacks keeps another's, so a partial archive mixes protocols between cells, never within
one. Each chosen cell says its protocol in its own words (:meth:`Protocol.text`).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..archive_store import read_archive
from .archives import ARCHIVE_ADABOOST, TABLE4_ARCHIVES, TABLES_ADABOOST
from .cells import PAPER_TRAIN_SIZES, teacher_count, teacher_ratio

__all__ = ["ARCHIVES", "Protocol", "protocol_of", "choose", "Chosen", "chosen_from", "table4_records", "bundled_credit"]

#: the archives holding Table 4's ε = 1 cells and Setting A, oldest first (a later one wins a tie)
ARCHIVES = TABLE4_ARCHIVES
#: the column a chosen record carries naming its archive, and the one with its protocol in words
ARCHIVE_COLUMN, RUNS_COLUMN = "archive", "runs"


@dataclass(frozen=True)
class Protocol:
    """How one archived cell was run: its archive, best of ``n_models`` × ``n_tables`` (0 × 0 for
    Setting A, which trains no generator), the iteration cap, the classifiers' AdaBoost, and the
    training rows and teachers (Credit's bundled 20 % split differs from the paper's data)."""

    archive: str
    dataset: str
    n_models: int
    n_tables: int
    max_iter: int | None
    adaboost: str
    n_train: int | None = None
    num_teachers: int | None = None

    def rank(self) -> tuple[int, int, bool]:
        """Larger is the larger protocol: tables per number, then the cap, then SAMME.R (the
        authors' scikit-learn 1.4.1 AdaBoost, Appendix C) over SAMME."""
        return self.n_models * self.n_tables, self.max_iter or 0, self.adaboost == TABLES_ADABOOST

    def text(self) -> str:
        """The protocol in words, naming the archive: e.g. "best of 5 × 5 = 25, 10,000-iteration cap,
        AdaBoost SAMME.R (utility_best25_large)"; Credit's adds the bundled split against the paper's data."""
        if self.n_models * self.n_tables == 0:
            what = f"one fit per classifier on the real split, AdaBoost {self.adaboost}"
        else:
            cap = "upstream default cap" if not self.max_iter else f"{self.max_iter:,}-iteration cap"
            what = (f"best of {self.n_models} × {self.n_tables} = {self.n_models * self.n_tables}, {cap}, "
                    f"AdaBoost {self.adaboost}")
        return f"{what}{self.data_text()} ({self.archive})"

    def data_text(self) -> str:
        """"" for a dataset trained on its full split; for Credit, "; " and :func:`bundled_credit`."""
        said = bundled_credit(self.n_train, self.num_teachers) if self.dataset == "credit" else ""
        return f"; {said}" if said else ""


def bundled_credit(n_train, num_teachers=None) -> str:
    """What a Credit number was measured on when it is the bundled 20 % split (only the authors' 20 %
    test split of Kaggle Credit is bundled, :mod:`pategan_audit.datasets`): its training rows and
    teachers beside the paper's full data (the benchmark's k = N/5,000 on both); "" for the full data."""
    paper_n = PAPER_TRAIN_SIZES["credit"]
    if n_train is None or pd.isna(n_train) or int(n_train) >= paper_n:
        return ""
    paper_k = teacher_count(n_train=paper_n, ratio=teacher_ratio("credit"))
    teachers = num_teachers is not None and not pd.isna(num_teachers)  # Setting A trains no generator
    ours_k, theirs_k = (f", k = {int(num_teachers)} teachers", f", k = {paper_k}") if teachers else ("", "")
    return (f"the bundled 20 % split of Kaggle Credit: {int(n_train):,} training rows{ours_k} "
            f"(the paper: the full data, {paper_n:,} rows{theirs_k})")


def _one(part: pd.DataFrame, column: str, what: str):
    values = part[column].dropna().unique() if column in part.columns else []
    if len(values) > 1:
        raise ValueError(f"archive {what}: {column} takes {sorted(map(str, values))} within one cell; a cell is one "
                         "protocol: rerun the cell (python -m pategan_audit.archive <name> --redo ...)")
    return values[0] if len(values) else None


def protocol_of(part: pd.DataFrame, archive: str) -> Protocol:
    """The :class:`Protocol` of one archived cell's records (an archive without an ``adaboost``
    column ran the older archives' SAMME, :data:`pategan_audit.archive.ARCHIVE_ADABOOST`)."""
    dataset = str(part["dataset"].iloc[0])
    what = f"{archive}, {dataset}/{part['implementation'].iloc[0]}"
    m, s, cap = (_one(part, c, what) for c in ("n_models", "n_tables", "max_iter"))
    real = str(part["implementation"].iloc[0]) == "real"
    if not real and m is None:  # records without the shape columns: the models and tables they hold
        m, s = part["model"].nunique(), part.groupby("model")["table"].nunique().max()
    n_train, k = _one(part, "n_train", what), _one(part, "num_teachers", what)
    return Protocol(archive=archive, dataset=dataset, n_models=0 if real or m is None else int(m),
                    n_tables=0 if real or s is None else int(s), max_iter=None if real or cap is None else int(cap),
                    adaboost=str(_one(part, "adaboost", what) or ARCHIVE_ADABOOST),
                    n_train=None if n_train is None else int(n_train), num_teachers=None if k is None else int(k))


def _eps1(records: pd.DataFrame) -> pd.DataFrame:
    """The ε = 1 records and Setting A's (whose ε is empty)."""
    eps = pd.to_numeric(records["epsilon"], errors="coerce")
    return records[(records["implementation"] == "real") | (eps == 1.0)]


def choose(archives: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The records of each (dataset, implementation) at ε = 1 from the archive, of ``archives``
    (name -> records, oldest first), with the largest :class:`Protocol`, plus the columns
    ``archive`` and ``runs`` (:meth:`Protocol.text`); datasets in first-seen order."""
    best: dict[tuple[str, str], tuple[Protocol, pd.DataFrame]] = {}
    for name, records in archives.items():
        for key, part in _eps1(records).groupby(["dataset", "implementation"], sort=False):
            proto = protocol_of(part, name)
            if key not in best or proto.rank() >= best[key][0].rank():
                best[key] = (proto, part)
    frames = [part.assign(**{ARCHIVE_COLUMN: p.archive, RUNS_COLUMN: p.text()}) for p, part in best.values()]
    if not frames:
        return pd.DataFrame(columns=[ARCHIVE_COLUMN, RUNS_COLUMN])
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Chosen:
    """:func:`choose`'s ``records`` and the ``archives`` they were chosen from (each an
    :class:`pategan_audit.archive.Archive`, oldest first)."""

    records: pd.DataFrame
    archives: tuple

    @property
    def used(self) -> list:
        """The archives at least one chosen cell comes from, oldest first."""
        names = set(self.records[ARCHIVE_COLUMN]) if ARCHIVE_COLUMN in self.records else set()
        return [a for a in self.archives if a.name in names]


def chosen_from(archives) -> Chosen:
    """:func:`choose` over ``archives`` (:class:`pategan_audit.archive.Archive` objects, oldest first)."""
    archives = tuple(archives)
    return Chosen(choose({a.name: a.records for a in archives}), archives)


def table4_records(directory=None) -> Chosen:
    """:func:`chosen_from` the :data:`ARCHIVES` present under ``directory`` (default
    :func:`pategan_audit.archive.archive_dir`)."""
    return chosen_from(a for a in (read_archive(n, directory=directory) for n in ARCHIVES) if a is not None)
