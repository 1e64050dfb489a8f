"""Profiles of the utility benchmark and the experiment builders that turn a profile into cells.

``paper`` is the full protocol (implementation notes §utility.best-of-n, §utility.paper-hyperparameters: all datasets, the ε grid, 10,000
iterations, best-of-25 / best-of-9 exactly where the authors used them). ``book`` is the fast
profile of implementation notes §profiles.fast, extended to cover every table and figure of §5/App. C on a 2-core
machine; ``large`` is the archived run of :mod:`pategan_audit.archive` (Table 4 and Setting A on
Cervical and Epileptic at ε = 1 only, as large as a 2-core session allows); ``smoke`` exercises every code path in about a minute (CI). Every knob a profile
changes (iteration cap, training subsample, M x S, classifier knobs) is a field of the cells it
produces and is therefore recorded with the results.

Experiments (one builder each; the notebook runs their union through ``run_cells``):

===========================  ==========================================  =====================
builder                      paper item                                  protocol
===========================  ==========================================  =====================
``main_cells``               Tables 1, 4, 5, 8, 9, 10; DPGAN count        implementation notes §utility.best-of-n, §utility.settings, §utility.dpgan, §utility.auroc-delta
``epsilon_sweep_cells``      Figs. 1, 8, 9 (Epileptic), 6, 7 (Credit)    implementation notes §utility.best-of-n, §utility.figures
``teacher_sweep_cells``      Table 11                                    implementation notes §utility.teacher-sweep
``conditional_cells``        Table 6                                     implementation notes §utility.conditional
``hyperparameter_cells``     Table 12                                    implementation notes §utility.paper-hyperparameters
``mnist_cells``              Fig. 10                                     implementation notes §utility.figures (two classifiers)
``setting_a_cells``          Table 7 AUROC/AUPRC, captions               implementation notes §utility.setting-a
===========================  ==========================================  =====================
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..classifiers import CLASSIFIERS, DETERMINISTIC_CLASSIFIERS, MAJORITY, MULTICLASS_CLASSIFIERS
from .cells import PAPER_TRAIN_SIZES, SettingACell, UtilityCell, teacher_count

__all__ = [
    "PAPER_IMPLEMENTATIONS",
    "TEACHER_SWEEP_IMPLEMENTATIONS",
    "EPSILON_GRID",
    "MAIN_EPSILON",
    "UtilityProfile",
    "UTILITY_PROFILES",
    "get_profile",
    "main_cells",
    "epsilon_sweep_cells",
    "teacher_sweep_cells",
    "teacher_sweep_k",
    "conditional_cells",
    "hyperparameter_cells",
    "mnist_cells",
    "setting_a_cells",
]

PAPER_IMPLEMENTATIONS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
TEACHER_SWEEP_IMPLEMENTATIONS = ("updated", "synthcity", "borealis", "smartnoise")  # implementation notes §utility.teacher-sweep
EPSILON_GRID = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0)  # implementation notes §utility.settings
MAIN_EPSILON = 1.0  # the paper's ε of Tables 4-12
PAPER_DATASETS = ("credit", "cervical_cancer", "isolet", "epileptic_seizure")  # Table 4 row order


@dataclass(frozen=True)
class UtilityProfile:
    """All knobs of one profile (see the module docstring).

    datasets: Table 4 rows (and Tables 1, 6, 12 unless narrowed below).
    subsample: training rows per dataset (None = full split; stratified, seed 13).
    max_iter: generator iteration cap (paper 10,000).
    max_iter_by_dataset: per-dataset caps overriding ``max_iter`` (fast profiles: wide ISOLET).
    main_tables: (M, S) per dataset at the main ε (implementation notes §utility.best-of-n: 5 x 5, Credit 3 x 3).
    sweep_tables: (M, S) for every other sweep point (implementation notes §utility.best-of-n: 3 x 3).
    sweep_epsilons: ε values per dataset of the ε-sweep figures.
    teacher_ratios, teacher_tables, teacher_max_iter: Table 11 (implementation notes §utility.teacher-sweep); k from the paper's N.
    conditional_datasets, hyperparameter_datasets, hyperparameter_tables: Tables 6 and 12.
    mnist: None (Fig. 10 skipped) or dict(subsample, epsilons, tables, max_iter).
    setting_a: per dataset (subsample, classifiers) for Setting A.
    mlp_max_iter, xgb_n_jobs: classifier knobs.
    """

    name: str
    datasets: tuple[str, ...]
    subsample: dict = field(default_factory=dict)
    max_iter: int | None = 10_000
    max_iter_by_dataset: dict = field(default_factory=dict)
    main_tables: dict = field(default_factory=dict)
    sweep_tables: tuple[int, int] = (3, 3)
    sweep_epsilons: dict = field(default_factory=dict)
    teacher_ratios: tuple[int, ...] = (50, 100, 500, 1000, 5000)
    teacher_tables: tuple[int, int] = (3, 3)
    teacher_max_iter: int | None = 10_000
    conditional_datasets: tuple[str, ...] = PAPER_DATASETS
    hyperparameter_datasets: tuple[str, ...] = PAPER_DATASETS
    hyperparameter_tables: dict = field(default_factory=dict)
    mnist: dict | None = None
    setting_a: dict = field(default_factory=dict)
    mlp_max_iter: int = 1000
    xgb_n_jobs: int | None = None
    description: str = ""

    def tables_for(self, dataset: str) -> tuple[int, int]:
        return tuple(self.main_tables.get(dataset, self.sweep_tables))

    def max_iter_for(self, dataset: str) -> int | None:
        return self.max_iter_by_dataset.get(dataset, self.max_iter)

    def knobs(self) -> dict:
        return {"mlp_max_iter": self.mlp_max_iter, "xgb_n_jobs": self.xgb_n_jobs}


_PAPER_MAIN = {"credit": (3, 3), "cervical_cancer": (5, 5), "isolet": (5, 5), "epileptic_seizure": (5, 5)}

UTILITY_PROFILES: dict[str, UtilityProfile] = {
    "paper": UtilityProfile(
        name="paper",
        datasets=PAPER_DATASETS,
        main_tables=_PAPER_MAIN,
        sweep_epsilons={"epileptic_seizure": EPSILON_GRID, "credit": EPSILON_GRID},
        hyperparameter_tables=_PAPER_MAIN,
        mnist={"subsample": None, "epsilons": EPSILON_GRID, "tables": (3, 3), "max_iter": 10_000},
        setting_a={d: (None, CLASSIFIERS + (MAJORITY,)) for d in (*PAPER_DATASETS, "mnist")},
        description="full protocol (paper §5, App. C): 10,000 iterations, full data, best-of-25 (Credit and sweeps 9)",
    ),
    "book": UtilityProfile(
        name="book",
        datasets=PAPER_DATASETS,
        subsample={"epileptic_seizure": 1000, "credit": 10_000, "isolet": 500},
        max_iter=200,
        max_iter_by_dataset={"isolet": 100},
        main_tables={"credit": (1, 1), "cervical_cancer": (2, 2), "isolet": (1, 1), "epileptic_seizure": (1, 2)},
        sweep_tables=(1, 1),
        sweep_epsilons={"epileptic_seizure": (0.1, 1.0, 10.0), "credit": (1.0, 10.0)},
        teacher_ratios=(500, 1000, 5000),
        teacher_tables=(1, 1),
        teacher_max_iter=100,
        conditional_datasets=("credit", "cervical_cancer", "epileptic_seizure"),
        hyperparameter_datasets=("cervical_cancer", "epileptic_seizure"),
        hyperparameter_tables={"cervical_cancer": (1, 2), "epileptic_seizure": (1, 1)},
        mnist={"subsample": 300, "epsilons": (1.0, 10.0), "tables": (1, 1), "max_iter": 50},
        setting_a={
            "cervical_cancer": (None, CLASSIFIERS + (MAJORITY,)),
            "epileptic_seizure": (None, CLASSIFIERS + (MAJORITY,)),
            "credit": (10_000, CLASSIFIERS + (MAJORITY,)),
            "isolet": (500, CLASSIFIERS + (MAJORITY,)),
            "mnist": (300, MULTICLASS_CLASSIFIERS),
        },
        mlp_max_iter=200,
        xgb_n_jobs=1,
        description="fast profile (implementation notes §profiles.fast): 200 iterations (ISOLET 100, MNIST 50), subsampled training splits, 1-4 tables per cell",
    ),
    "large": UtilityProfile(
        name="large",
        datasets=("cervical_cancer", "epileptic_seizure"),
        max_iter=10_000,
        max_iter_by_dataset={"epileptic_seizure": 2000},
        main_tables={"cervical_cancer": (5, 5), "epileptic_seizure": (2, 2)},
        sweep_tables=(1, 1),
        teacher_ratios=(),
        conditional_datasets=(),
        hyperparameter_datasets=(),
        mnist=None,
        setting_a={
            "cervical_cancer": (None, CLASSIFIERS + (MAJORITY,)),
            "epileptic_seizure": (None, CLASSIFIERS + (MAJORITY,)),
        },
        mlp_max_iter=1000,
        xgb_n_jobs=1,
        description="archived run (ε = 1 only): full training splits; Cervical exactly the paper's protocol "
                    "(10,000-iteration cap, best-of-25), Epileptic 2,000-iteration cap and best-of-4",
    ),
    "smoke": UtilityProfile(
        name="smoke",
        datasets=("cervical_cancer", "epileptic_seizure"),
        subsample={"epileptic_seizure": 100},
        max_iter=5,
        main_tables={"cervical_cancer": (1, 1), "epileptic_seizure": (1, 1)},
        sweep_tables=(1, 1),
        sweep_epsilons={"epileptic_seizure": (1.0, 10.0)},
        teacher_ratios=(1000, 5000),
        teacher_tables=(1, 1),
        teacher_max_iter=5,
        conditional_datasets=("cervical_cancer",),
        hyperparameter_datasets=("cervical_cancer",),
        hyperparameter_tables={"cervical_cancer": (1, 1)},
        mnist=None,
        setting_a={
            "cervical_cancer": (None, CLASSIFIERS + (MAJORITY,)),
            "epileptic_seizure": (None, DETERMINISTIC_CLASSIFIERS + (MAJORITY,)),
        },
        mlp_max_iter=50,
        xgb_n_jobs=1,
        description="CI smoke run: 5 iterations, Cervical + Epileptic-100, one table per cell",
    ),
}


def get_profile(name: str | UtilityProfile) -> UtilityProfile:
    if isinstance(name, UtilityProfile):
        return name
    if name not in UTILITY_PROFILES:
        raise ValueError(f"unknown utility profile {name!r}; choose one of {', '.join(UTILITY_PROFILES)}")
    return UTILITY_PROFILES[name]


def _datasets(datasets, default) -> tuple[str, ...]:
    """The profile's datasets for an experiment, or the caller's explicit choice."""
    from ..datasets import DATASETS

    chosen = tuple(default if datasets is None else datasets)
    unknown = [d for d in chosen if d not in DATASETS]
    if unknown:
        raise ValueError(f"unknown datasets {unknown}; choose from {', '.join(DATASETS)}")
    return chosen


def _cell(profile: UtilityProfile, dataset: str, implementation: str, epsilon: float, tables, seed: int, **kw) -> UtilityCell:
    m, s = tables
    kw.setdefault("max_iter", profile.max_iter_for(dataset))
    return UtilityCell(
        dataset=dataset, implementation=implementation, epsilon=epsilon, n_models=m, n_tables=s,
        subsample=profile.subsample.get(dataset), seed=seed, **profile.knobs(), **kw,
    )


def main_cells(profile, *, epsilon: float = MAIN_EPSILON, implementations=PAPER_IMPLEMENTATIONS, datasets=None, seed: int = 0):
    """Table 4 (and 1, 5, 8, 9, 10): every implementation on every dataset at ``epsilon``."""
    p = get_profile(profile)
    return [
        _cell(p, d, impl, epsilon, p.tables_for(d), seed)
        for d in _datasets(datasets, p.datasets) for impl in implementations
    ]


def epsilon_sweep_cells(profile, *, dataset: str, implementations=PAPER_IMPLEMENTATIONS, seed: int = 0):
    """Figs. 1, 8, 9 (Epileptic) and 6, 7 (Credit): the ε grid; the ε = 1 point uses the main
    run's M x S (as the authors: best-of-25 at ε = 1 for Epileptic, 9 elsewhere; implementation notes §utility.best-of-n)."""
    p = get_profile(profile)
    eps_values = p.sweep_epsilons.get(dataset, ())
    return [
        _cell(p, dataset, impl, e, p.tables_for(dataset) if e == MAIN_EPSILON else p.sweep_tables, seed)
        for e in eps_values for impl in implementations
    ]


def teacher_sweep_k(ratio: int, *, dataset: str = "epileptic_seizure") -> int:
    """Table 11's k for a column "N/ratio": the rule on the paper's N (9200 -> 184, 92, 18, 9, 2)."""
    return teacher_count(n_train=PAPER_TRAIN_SIZES[dataset], ratio=ratio)


def teacher_sweep_cells(profile, *, implementations=TEACHER_SWEEP_IMPLEMENTATIONS, seed: int = 0):
    """Table 11 (implementation notes §utility.teacher-sweep): Epileptic, ε = 1, k from each ratio, the sweep's own M x S."""
    p = get_profile(profile)
    if "epileptic_seizure" not in p.datasets:
        return []
    return [
        _cell(p, "epileptic_seizure", impl, MAIN_EPSILON, p.teacher_tables, seed,
              num_teachers=teacher_sweep_k(r), max_iter=p.teacher_max_iter)
        for r in p.teacher_ratios for impl in implementations
    ]


def conditional_cells(profile, *, datasets=None, seed: int = 0):
    """Table 6 (implementation notes §utility.conditional): original in its released conditional mode (the non-conditional column is
    the main run)."""
    p = get_profile(profile)
    return [
        _cell(p, d, "original", MAIN_EPSILON, p.tables_for(d), seed, overrides={"conditional": True})
        for d in _datasets(datasets, p.conditional_datasets)
    ]


def hyperparameter_cells(profile, *, implementations=PAPER_IMPLEMENTATIONS, datasets=None, seed: int = 0):
    """Table 12 (implementation notes §utility.paper-hyperparameters): every implementation with [49]'s hyperparameters (P); D = main run."""
    p = get_profile(profile)
    return [
        _cell(p, d, impl, MAIN_EPSILON, p.hyperparameter_tables.get(d, p.tables_for(d)), seed,
              overrides={"hyperparameters": "paper"})
        for d in _datasets(datasets, p.hyperparameter_datasets) for impl in implementations
    ]


def mnist_cells(profile, *, implementations=PAPER_IMPLEMENTATIONS, seed: int = 0):
    """Fig. 10: MNIST, mean of LR and RF AUROC (one-vs-rest macro) vs ε; [] if the profile skips it."""
    p = get_profile(profile)
    if p.mnist is None:
        return []
    m = p.mnist
    return [
        UtilityCell(dataset="mnist", implementation=impl, epsilon=e, n_models=m["tables"][0], n_tables=m["tables"][1],
                    subsample=m["subsample"], max_iter=m["max_iter"], classifiers=MULTICLASS_CLASSIFIERS,
                    seed=seed, **p.knobs())
        for e in m["epsilons"] for impl in implementations
    ]


def setting_a_cells(profile, *, datasets=None, seed: int = 0):
    """Setting A (implementation notes §utility.setting-a) per dataset with the profile's subsample and classifier panel."""
    p = get_profile(profile)
    names = tuple(p.setting_a) if datasets is None else tuple(d for d in datasets if d in p.setting_a)
    return [
        SettingACell(dataset=d, subsample=p.setting_a[d][0], classifiers=p.setting_a[d][1], seed=seed, **p.knobs())
        for d in names
    ]
