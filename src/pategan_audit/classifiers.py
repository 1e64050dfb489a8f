"""The twelve downstream classifiers of the utility benchmark and how they are scored.

Paper §5 ("Setting A / Setting B") and App. C; constructors, scores and degenerate cases as
released by the authors (implementation notes §utility.classifiers, §data.postprocessing; ``code/utils/classification.py`` of
``spalabucr/pategan-audit``).

* Constructors: library defaults except ``LogisticRegression(max_iter=2000)``,
  ``LinearSVC(max_iter=10000)``, ``MLPClassifier(max_iter=1000)``; ``XGB`` is an
  ``XGBRegressor`` fitted on the 0/1 label whose ``predict`` output is the ranking score;
  ``LinearSVM`` is scored by ``decision_function``; every other model by ``predict_proba``
  of class 1. ``AdaBoost`` is SAMME.R, the default of the authors' scikit-learn 1.4.1, which
  newer scikit-learn no longer has (:mod:`pategan_audit.adaboost`; knob ``adaboost``).
* Scores: AUROC = ``roc_auc_score``, AUPRC = ``average_precision_score`` (average precision,
  not the trapezoidal PR area).
* Scaling (implementation notes §data.postprocessing): a min-max scaler fitted on the classifier's *training* table only, applied
  unchanged (no clipping) to the test features. Label = last column.
* Degenerate cases (implementation notes §utility.classifiers): NaN scores are replaced by the training-label mode; a training
  table whose label column has one distinct value fits nothing and scores every test row with
  that value (a constant score: AUROC 0.5, AUPRC = test prevalence, exactly).
* ``majority`` (Setting A only, never in the 12-average) scores every test row with the
  training-label mode.
* Multi-class labels (MNIST, Fig. 10): one-vs-rest, macro average over the classes of the
  real test labels (our choice: ``ganev2025elusive`` Table 7 gives MNIST scores without saying how; implementation notes §gaps).

Speed knobs (:class:`ClassifierKnobs`) change only iteration caps and thread counts and are
recorded with every result. Deviation: the authors pass no ``random_state``; we pass one derived
from the caller's seed so that results are repeatable (the paper's numbers are one draw).
Deviation: for a binary task we take the score column of class 1 by its label, not by position,
so a synthetic label column with values outside {0, 1} cannot silently pick a wrong column.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.preprocessing import MinMaxScaler

__all__ = [
    "ADABOOST_ALGORITHMS",
    "CLASSIFIERS",
    "DETERMINISTIC_CLASSIFIERS",
    "MAJORITY",
    "MULTICLASS_CLASSIFIERS",
    "ClassifierKnobs",
    "make_classifier",
    "classifier_scores",
    "score_metrics",
    "split_features_label",
    "evaluate_table",
    "PreparedTable",
    "classifier_seeds",
    "prepare_table",
    "evaluate_classifier",
]

#: The twelve classifiers in the paper's table order (Tables 5, 8, 9, 10; record names of the authors' code).
CLASSIFIERS: tuple[str, ...] = (
    "LogisticRegression",
    "RandomForest",
    "GaussianNB",
    "BernoulliNB",
    "LinearSVM",
    "DecisionTree",
    "LDA",
    "AdaBoost",
    "Bagging",
    "GBM",
    "MLP",
    "XGB",
)
#: Classifiers whose fit has no randomness (implementation notes §utility.classifiers version note: they reproduce the
#: authors' Setting A values to ~1e-4).
DETERMINISTIC_CLASSIFIERS: tuple[str, ...] = ("LogisticRegression", "GaussianNB", "BernoulliNB", "LinearSVM", "LDA")
#: The Setting-A-only pseudo-classifier (implementation notes §utility.classifiers): constant training-label mode.
MAJORITY = "majority"
#: AdaBoost's algorithms (:class:`ClassifierKnobs`): the authors' scikit-learn 1.4.1 default first.
ADABOOST_ALGORITHMS: tuple[str, ...] = ("SAMME.R", "SAMME")
#: The two classifiers of Fig. 10 (MNIST).
MULTICLASS_CLASSIFIERS: tuple[str, ...] = ("LogisticRegression", "RandomForest")


@dataclass(frozen=True)
class ClassifierKnobs:
    """Speed knobs of the panel; the defaults are the paper's constructors (implementation notes §utility.classifiers).

    mlp_max_iter: ``MLPClassifier(max_iter=...)``; paper 1000, fast profiles 200 (implementation notes §profiles.fast).
    xgb_n_jobs: ``XGBRegressor(n_jobs=...)``; paper None (library default: all cores);
        fast profiles 1 (one thread per parallel worker).
    adaboost: ``"SAMME.R"`` (default), what ``AdaBoostClassifier()`` ran in the authors'
        scikit-learn 1.4.1 (:class:`pategan_audit.adaboost.SAMMERealAdaBoost`); ``"SAMME"``, what
        the same constructor runs from scikit-learn 1.6 on (what the older archives ran: an archive's meta
        records the panel's ``adaboost`` where it ran SAMME.R).
        Not a speed knob: it changes AdaBoost's scores (implementation notes §utility.classifiers).
    """

    mlp_max_iter: int = 1000
    xgb_n_jobs: int | None = None
    adaboost: str = "SAMME.R"

    def __post_init__(self) -> None:
        if not isinstance(self.mlp_max_iter, (int, np.integer)) or self.mlp_max_iter < 1:
            raise ValueError(f"mlp_max_iter must be a positive integer (paper: 1000), got {self.mlp_max_iter!r}")
        if self.xgb_n_jobs is not None and (not isinstance(self.xgb_n_jobs, (int, np.integer)) or self.xgb_n_jobs == 0):
            raise ValueError(f"xgb_n_jobs must be None or a non-zero integer, got {self.xgb_n_jobs!r}")
        if self.adaboost not in ADABOOST_ALGORITHMS:
            raise ValueError(f"adaboost must be one of {ADABOOST_ALGORITHMS} (the authors ran 'SAMME.R'), "
                             f"got {self.adaboost!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_classifier(name: str, *, seed: int | None, knobs: ClassifierKnobs = ClassifierKnobs()):
    """A fresh, unfitted classifier with the paper's constructor (implementation notes §utility.classifiers).

    ``seed`` becomes ``random_state`` of the randomised models (None = unseeded, as upstream).
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import AdaBoostClassifier, BaggingClassifier, GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    rs = None if seed is None else int(seed) % (2**31 - 1)
    if name == "LogisticRegression":
        return LogisticRegression(max_iter=2000)
    if name == "RandomForest":
        return RandomForestClassifier(random_state=rs)
    if name == "GaussianNB":
        return GaussianNB()
    if name == "BernoulliNB":
        return BernoulliNB()
    if name == "LinearSVM":
        return LinearSVC(max_iter=10000, random_state=rs)
    if name == "DecisionTree":
        return DecisionTreeClassifier(random_state=rs)
    if name == "LDA":
        return LinearDiscriminantAnalysis()
    if name == "AdaBoost":
        if knobs.adaboost == "SAMME.R":
            from .adaboost import SAMMERealAdaBoost

            return SAMMERealAdaBoost(random_state=rs)
        return AdaBoostClassifier(random_state=rs)
    if name == "Bagging":
        return BaggingClassifier(random_state=rs)
    if name == "GBM":
        return GradientBoostingClassifier(random_state=rs)
    if name == "MLP":
        return MLPClassifier(max_iter=knobs.mlp_max_iter, random_state=rs)
    if name == "XGB":
        from xgboost import XGBRegressor

        return XGBRegressor(n_jobs=knobs.xgb_n_jobs, random_state=0 if rs is None else rs)
    raise ValueError(f"unknown classifier {name!r}; choose from {', '.join(CLASSIFIERS)} (or {MAJORITY!r} in Setting A)")


def split_features_label(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Features and label of a benchmark table: the label is the last column (implementation notes §data.split).

    The features keep the frame's own dtype (float16 for Credit, as upstream: implementation notes §data.cleaning).
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame with the label as last column, got {type(df).__name__}")
    if df.shape[1] < 2 or len(df) == 0:
        raise ValueError(f"a benchmark table needs >= 1 row, >= 1 feature and a label column; got shape {df.shape}")
    X = df.iloc[:, :-1].to_numpy()
    y = df.iloc[:, -1].to_numpy()
    if not np.isfinite(X.astype(float)).all() or not np.isfinite(y.astype(float)).all():
        raise ValueError("the table contains NaN or infinite values; impute or drop them before evaluating classifiers")
    return X, y


def _label_mode(y: np.ndarray) -> float:
    """Most frequent training label (ties: smallest, as ``pandas.Series.mode()[0]``)."""
    return float(pd.Series(y).mode().iloc[0])


def score_metrics(y_true: np.ndarray, score: np.ndarray, *, classes: np.ndarray | None = None) -> tuple[float, float]:
    """(AUROC, AUPRC) of a score against real labels (implementation notes §utility.classifiers).

    Binary: ``score`` has shape (n,), positives are ``y_true == 1``. Multi-class: ``score`` has
    shape (n, len(classes)) and the result is the one-vs-rest macro average over ``classes``.
    """
    y_true = np.asarray(y_true)
    if score.ndim == 1:
        pos = y_true == 1
        if pos.all() or not pos.any():
            raise ValueError("the test labels contain a single class; AUROC/AUPRC are undefined (check the test split)")
        return float(roc_auc_score(pos, score)), float(average_precision_score(pos, score))
    if classes is None or score.shape[1] != len(classes):
        raise ValueError("multi-class scores need `classes` with one entry per score column")
    aurocs, auprcs = [], []
    for j, c in enumerate(classes):
        pos = y_true == c
        aurocs.append(roc_auc_score(pos, score[:, j]))
        auprcs.append(average_precision_score(pos, score[:, j]))
    return float(np.mean(aurocs)), float(np.mean(auprcs))


def _raw_scores(model, name: str, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-class score matrix (n_test, n_fitted_classes) and the fitted classes."""
    if name == "XGB":
        return np.asarray(model.predict(X_test), dtype=float)[:, None], np.array([1])
    if name == "LinearSVM":
        dec = np.asarray(model.decision_function(X_test), dtype=float)
        if dec.ndim == 1:  # binary: decision for classes_[1]
            return np.column_stack([-dec, dec]), model.classes_
        return dec, model.classes_
    return np.asarray(model.predict_proba(X_test), dtype=float), model.classes_


def classifier_scores(
    name: str,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    *,
    seed: int | None,
    knobs: ClassifierKnobs = ClassifierKnobs(),
    classes: np.ndarray | None = None,
) -> np.ndarray:
    """Test-set ranking scores of one classifier trained on (X_train, y_train).

    Features must already be scaled. Binary task (``classes`` None): returns shape (n_test,),
    the score of class 1. Multi-class: shape (n_test, len(classes)) with zeros for classes the
    training table lacks. Single-class training labels and ``majority``: constant score equal to
    the training-label mode (implementation notes §utility.classifiers). NaN scores: replaced by the training-label mode (implementation notes §utility.classifiers).
    """
    mode = _label_mode(y_train)
    n_test = len(X_test)
    constant = name == MAJORITY or len(np.unique(y_train)) < 2
    if constant:
        if classes is None:
            return np.full(n_test, mode)
        return np.tile((np.asarray(classes) == mode).astype(float), (n_test, 1))
    model = make_classifier(name, seed=seed, knobs=knobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of LR/SVM/MLP are expected (capped iterations)
        if name == "XGB":
            model.fit(X_train, y_train.astype(float))
        else:
            model.fit(X_train, y_train)
        raw, fitted = _raw_scores(model, name, X_test)
    if classes is None:
        if name == "XGB":
            score = raw[:, 0]
        else:
            hit = np.flatnonzero(np.asarray(fitted) == 1)
            score = raw[:, hit[0]] if len(hit) else np.zeros(n_test)  # class 1 never generated
    else:
        score = np.zeros((n_test, len(classes)))
        if name == "XGB":
            raise ValueError("XGB (a regressor on the label) has no multi-class score; use LogisticRegression/RandomForest")
        for j, c in enumerate(classes):
            hit = np.flatnonzero(np.asarray(fitted) == c)
            if len(hit):
                score[:, j] = raw[:, hit[0]]
    return np.where(np.isnan(score), mode, score)


@dataclass(frozen=True)
class PreparedTable:
    """One training table made ready for the panel (:func:`prepare_table`): min-max scaled
    features of the training table and of the test split (scaler fitted on the training table
    only), the labels, the test classes (multi-class when more than two) and each classifier's
    random state. Every classifier of the panel can be fitted and scored from it alone
    (:func:`evaluate_classifier`), in any order or process."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    classes: np.ndarray
    multiclass: bool
    classifiers: tuple[str, ...]
    seeds: tuple[int, ...]


def classifier_seeds(seed: int, n: int) -> tuple[int, ...]:
    """The random states of a panel of ``n`` classifiers under ``seed``: classifier ``i`` gets entry
    ``i``, a function of (seed, its position in the panel) only."""
    return tuple(int(s) for s in np.random.SeedSequence([int(seed), 4099]).generate_state(n))


def prepare_table(
    train: pd.DataFrame, test: pd.DataFrame, *, classifiers: tuple[str, ...] = CLASSIFIERS, seed: int
) -> PreparedTable:
    """Validate a (training table, test split) pair and the panel, and scale the features
    (implementation notes §data.postprocessing): the part of :func:`evaluate_table` shared by its
    classifiers."""
    if list(train.columns) != list(test.columns):
        raise ValueError("train and test tables must have the same columns in the same order (label last)")
    unknown = [c for c in classifiers if c not in CLASSIFIERS and c != MAJORITY]
    if unknown:
        raise ValueError(f"unknown classifiers {unknown}; choose from {', '.join(CLASSIFIERS)} or {MAJORITY!r}")
    X_train, y_train = split_features_label(train)
    X_test, y_test = split_features_label(test)
    classes = np.unique(y_test)
    multiclass = len(classes) > 2
    if not multiclass and not set(np.unique(y_test)) <= {0, 1}:
        raise ValueError(f"binary test labels must be 0/1, got values {np.unique(y_test)[:5]}")
    scaler = MinMaxScaler().fit(X_train)
    return PreparedTable(X_train=scaler.transform(X_train), y_train=y_train, X_test=scaler.transform(X_test),
                         y_test=y_test, classes=classes, multiclass=multiclass, classifiers=tuple(classifiers),
                         seeds=classifier_seeds(seed, len(classifiers)))


def evaluate_classifier(table: PreparedTable, index: int, *, knobs: ClassifierKnobs = ClassifierKnobs()) -> dict[str, Any]:
    """Fit and score classifier ``index`` of the panel of a :class:`PreparedTable`: one row
    ``{classifier, auroc, auprc}``. The unit of parallel scoring (``utility.run``): its result
    depends on the table, the index and the knobs, never on which other classifiers ran before."""
    if not 0 <= index < len(table.classifiers):
        raise ValueError(f"classifier index {index} is outside the panel of {len(table.classifiers)} classifiers")
    name = table.classifiers[index]
    classes = table.classes if table.multiclass else None
    score = classifier_scores(name, table.X_train, table.y_train, table.X_test, seed=table.seeds[index], knobs=knobs,
                              classes=classes)
    auroc, auprc = score_metrics(table.y_test, score, classes=classes)
    return {"classifier": name, "auroc": auroc, "auprc": auprc}


def evaluate_table(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    classifiers: tuple[str, ...] = CLASSIFIERS,
    seed: int,
    knobs: ClassifierKnobs = ClassifierKnobs(),
) -> pd.DataFrame:
    """Train each classifier on ``train`` and score it on ``test`` (Setting A or B of §5).

    Returns one row per classifier with columns ``classifier, auroc, auprc``. Scaling follows
    implementation notes §data.postprocessing (fitted on ``train`` only). The task is multi-class when the *test* labels have more
    than two values (then one-vs-rest macro averages). Classifier ``i`` gets the random state
    derived from ``(seed, i)`` (:func:`classifier_seeds`). One after the other; the same rows
    come from :func:`prepare_table` and :func:`evaluate_classifier` per classifier, in any order.
    """
    table = prepare_table(train, test, classifiers=classifiers, seed=seed)
    rows = [evaluate_classifier(table, i, knobs=knobs) for i in range(len(table.classifiers))]
    return pd.DataFrame(rows, columns=["classifier", "auroc", "auprc"])
