"""The audit paper's catalogue of privacy violations (V1-V19) and other bugs (B1-B5), plus the
additional findings O1-O11 (beyond the paper), as data (Table 2; implementation notes §violations.catalogue, §violations.findings; switch names from the shared presets contract).

Each entry names the config ``field`` of its preset that reproduces it (``violating``) and the
value that fixes it in place (``fixed``; ``None`` when it cannot be switched in place, with a
``note`` saying where the fix lives). :func:`fix_overrides` and :func:`all_fixed_overrides` turn
entries into ``create(...)`` overrides for ablations. Counting the ``kind == "privacy"`` entries
per implementation gives Table 2's 6/3/3/4/2/1 = 19 violations and the ``"bug"`` entries 5
(implementation notes §violations.count: this total needs Labels Distribution counted as a privacy violation).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["Violation", "VIOLATIONS", "BY_ID", "violations_for", "fix_overrides", "all_fixed_overrides", "as_frame"]

PATE_PRESETS = ("updated", "synthcity", "borealis", "smartnoise")
_CORRECTED = "not switchable in place: fixed by the `corrected` preset"


@dataclass(frozen=True)
class Violation:
    """One catalogue entry.

    id: "V1".."V19", "B1".."B5", "O1".."O11". paper_column: Table 2 column (None for findings).
    kind: "privacy" | "bug" | "finding". implementations: presets it applies to.
    field / violating / fixed: the config switch (fixed None = not switchable in place).
    also: further overrides applied together with the fix (e.g. public bounds need values).
    """

    id: str
    paper_column: str | None
    kind: str
    implementations: tuple[str, ...]
    field: str | None
    violating: Any
    fixed: Any
    description: str
    how_to_test: str
    note: str = ""
    also: dict = field(default_factory=dict)

    @property
    def switchable(self) -> bool:
        return self.field is not None and self.fixed is not None


def _v(id_, column, kind, impls, fld, bad, good, description, how, note="", also=None):
    return Violation(id_, column, kind, tuple(impls), fld, bad, good, description, how, note, dict(also or {}))


_PUBLIC = "needs public_bounds={column: (lo, hi)} as well (e.g. datasets.load(name).bounds)"

VIOLATIONS: tuple[Violation, ...] = (
    _v("V1", "PATE", "privacy", ["original"], "use_pate", False, None,
       "One WGAN-GP critic replaces k teachers and a student; num_teachers only counts critic steps; no accountant, "
       "niter iterations whatever epsilon is.", "exactly one critic; iteration count equals niter for eps in {1e-6, 1e6}", _CORRECTED),
    _v("V2", "PATE", "privacy", ["turing"], "use_pate", False, None, "As V1 (n_iters iterations, num_teachers critic steps).",
       "as V1", _CORRECTED),
    _v("V3", "Data Partition", "privacy", ["original"], "critic_batch_source", "all_rows", "own_partition",
       "Every critic step draws B rows uniformly from all N rows.",
       "rows per critic-step slot cover far more than N/k rows; their union is all rows"),
    _v("V4", "Data Partition", "privacy", ["updated"], "partition", "last_block", "disjoint",
       "Data cut into k blocks, but every teacher fits on the last block (stale loop index i = k-1); the other "
       "blocks and the N mod k remainder are never seen.", "seen[t] equals block k-1 for every teacher t"),
    _v("V5", "Data Partition", "privacy", ["synthcity"], "partition", "resample_each_iteration", "disjoint",
       "The permutation is redrawn every iteration, so each teacher eventually sees almost every row.",
       "seen[t] grows toward N with the number of iterations"),
    _v("V6", "Data Partition", "privacy", ["turing"], "critic_batch_source", "all_rows", "own_partition", "As V3.", "as V3"),
    _v("V7", "Moments Acc.", "privacy", ["synthcity"], "accountant", "synthcity", "paper",
       "Exponent 2λ(l-1)+1 instead of 2λl (indexing bug) and a lower clip at 0.",
       "accountant values at λ = 1 for votes (4, 1), (5, 0), (3, 2) (implementation notes §accountants.examples)"),
    _v("V8", "Moments Acc.", "privacy", ["borealis"], "accountant", "borealis", "paper",
       "log missing on the data-dependent term (conservative: overestimates epsilon).",
       "accountant values at λ = 1 for votes (4, 1), (5, 0), (3, 2) and at λ = 0.5 for (3, 2) "
       "(implementation notes §accountants.examples)"),
    _v("V9", "Moments Acc.", "privacy", ["smartnoise"], "accountant", "smartnoise", "paper", "As V8.", "as V8"),
    _v("V10", "Metadata", "privacy", ["original"], "bounds", "data", "public", "Scaling min/max read from the training data.",
       "scaler bounds equal the column min and max", _PUBLIC),
    _v("V11", "Metadata", "privacy", ["updated"], "bounds", "data", "public",
       "MinMaxScaler fitted on the data (upstream: train and test together).", "as V10", _PUBLIC),
    _v("V12", "Metadata", "privacy", ["synthcity"], "bounds", "data", "public",
       "Decoding clips to the training min/max; mixtures and category lists are fitted on the data.",
       "outputs stay inside the training [min, max]", _PUBLIC + "; the mixtures and categories stay data-derived"),
    _v("V13", "Metadata", "privacy", ["borealis"], "bounds", "data", "public",
       "As benchmarked: MinMaxScaler on the training data (upstream leaves processing to the user).", "as V10", _PUBLIC),
    _v("V14", "Laplace Noise", "privacy", ["original"], "label_noise", "gaussian_indicator", None,
       "Gaussian noise N(0, σ²) on the real/fake indicator labels instead of Laplace noise on votes.",
       "label flip rate ≈ 0.418 at eps = 1", _CORRECTED),
    _v("V15", "Laplace Noise", "privacy", ["updated"], "laplace_scale_convention", "scale_lambda", "inverse_lambda",
       "Lap(scale = λ) while the accountant assumes scale 1/λ.",
       "at λ = 1e-3 the labels equal the majority vote whenever |n1 - k/2| >= 0.5"),
    _v("V16", "Laplace Noise", "privacy", ["turing"], "label_noise", "gaussian_indicator", None, "As V14.",
       "flip rate ≈ 0.227 at eps = 1, delta = 1e-5", _CORRECTED),
    _v("V17", "δ Scale", "privacy", ["original"], "delta_mode", "xor_exponent", "textbook",
       "10 ^ delta is XOR: 1.25·15 instead of 1.25·10^5 (delta passed as the exponent 5).", "σ = 2.421236772 at eps = 1"),
    _v("V18", "δ Scale", "privacy", ["turing"], "delta_mode", "power", "textbook", "1.25·10**δ instead of 1.25/δ.",
       "σ = 0.6680816973 at eps = 1, delta = 1e-5"),
    _v("V19", "Labels Distribution", "privacy", ["original"], "conditional", True, False,
       "The generator is conditioned on the real Y_train row by row and Y_train is returned as the synthetic labels "
       "(released; the benchmark harness is unconditional).", "synthetic label multiset equals the training one"),
    _v("B1", "Teachers", "bug", ["updated"], "teacher_model", "logistic_refit", "neural_persistent",
       "Teachers are LogisticRegression models re-created and fitted from scratch every iteration.",
       "teacher objects are new every iteration and logistic"),
    _v("B2", "Teachers", "bug", ["synthcity"], "teacher_model", "logistic_refit", "neural_persistent",
       "As B1 (solver sag, max_iter 1e4).", "as B1"),
    _v("B3", "Processing", "bug", ["updated"], "inverse_transform", False, True,
       "Output left in [0, 1], never inverse-transformed (released).", "released output lies in (0, 1)"),
    _v("B4", "Processing", "bug", ["turing"], "integer_decode", "truncate", "round",
       "INTEGER columns decoded with astype(int), which truncates (released).", "decode(v) = floor(v·(max+1e-8)+min)"),
    _v("B5", "Processing", "bug", ["borealis"], "inverse_transform", False, True,
       "Raw linear generator output, not inverse-transformed (released).", "released output not in the original scale"),
    _v("O1", None, "finding", ["synthcity"], "student_reads_real", True, False,
       "The student (a WGAN-GP critic) trains on real rows, its gradient penalty interpolates real rows and the "
       "generator's conditional loss reads the real batch.", "the student's real rows are recorded (trace.extra['student_rows'])"),
    _v("O2", None, "finding", ["synthcity"], "reseed_each_fit", True, False,
       "Upstream reseeds numpy/torch/random with 0 on every fit: noise and partitions are a function of the data.",
       "two fits with different seeds are identical"),
    _v("O3", None, "finding", ["synthcity"], "conditional_sampler", "empirical", "none",
       "Conditional vectors use category frequencies counted on the training data, at training and generation.",
       "conditional probabilities equal the (log-)frequencies of the training categories"),
    _v("O4", None, "finding", ["synthcity"], "skip_majority_batches", True, False,
       "A batch whose noisy labels are at least half 1 is relabelled 0 and not charged to the accountant.",
       "uncharged queries are recorded (trace.extra['charged'])"),
    _v("O5", None, "finding", ["borealis"], "conditional", True, False,
       "Released default for classification: labels drawn from the exact training class ratios.",
       "generated label frequencies follow the training class ratios"),
    _v("O6", None, "finding", ["borealis", "smartnoise"], "generation_noise", "normal", "uniform",
       "Latent noise U(0,1) in training but N(0,1) at generation.", "generation latent distribution"),
    _v("O7", None, "finding", ["turing"], None, None, None,
       "Scaling divides by max, not max - min; the gradient-penalty weight equals num_teachers.", "encoder round trip",
       "see the turing preset"),
    _v("O8", None, "finding", ["synthcity"], None, None, None,
       "Integer columns with more than 10 values are decoded through a float->int cast, which truncates.",
       "decoded integers never exceed the truncated value", "part of the synthcity encoder"),
    _v("O9", None, "finding", list(PATE_PRESETS), "vote_mechanism", "single_noise", "two_noise_argmax",
       "One Laplace draw on n1 instead of PATE's two-noise argmax; no Theorem-3 condition; stopping overshoots by "
       "one iteration.", "labels vs votes; final eps-hat <= eps with stopping='safe'", also={"stopping": "safe"}),
    _v("O10", None, "finding", ["synthcity"], "ignore_user_delta", True, False,
       "A user-supplied delta is silently replaced by N^{-3/2}.", "trace.extra['delta'] == N**-1.5 for any delta"),
    _v("O11", None, "finding", ["original"], None, None, None,
       "The released function also outputs a synthetic test set conditioned on the real Y_test.", "-",
       "outside the fit/sample API"),
)

BY_ID: dict[str, Violation] = {v.id: v for v in VIOLATIONS}


def violations_for(name: str, *, kinds: Iterable[str] = ("privacy", "bug", "finding")) -> list[Violation]:
    """Catalogue entries that apply to preset ``name`` (in catalogue order)."""
    kinds = tuple(kinds)
    return [v for v in VIOLATIONS if name in v.implementations and v.kind in kinds]


def fix_overrides(name: str, ids: Iterable[str]) -> dict[str, Any]:
    """``create(name, **fix_overrides(name, ids))`` fixes the listed entries in place.

    Raises a ValueError for unknown ids, ids that do not apply to ``name`` and entries that
    cannot be switched in place (use the ``corrected`` preset for those).
    """
    out: dict[str, Any] = {}
    for vid in ids:
        if vid not in BY_ID:
            raise ValueError(f"unknown catalogue id {vid!r}; valid ids are {', '.join(BY_ID)}")
        v = BY_ID[vid]
        if name not in v.implementations:
            valid = [w.id for w in violations_for(name)]
            raise ValueError(f"{vid} does not apply to {name!r}; its entries are {valid}")
        if not v.switchable:
            raise ValueError(f"{vid} ({name}) is {v.note or 'not switchable in place'}")
        out[v.field] = v.fixed
        out.update(v.also)
    return out


def all_fixed_overrides(name: str, *, include_findings: bool = False) -> dict[str, Any]:
    """Overrides fixing every switchable violation and bug of ``name`` (and findings if asked).
    Entries fixed to ``bounds="public"`` still need ``public_bounds``."""
    kinds = ("privacy", "bug", "finding") if include_findings else ("privacy", "bug")
    return fix_overrides(name, [v.id for v in violations_for(name, kinds=kinds) if v.switchable])


def as_frame():
    """The catalogue as a pandas DataFrame (one row per entry)."""
    import pandas as pd

    rows = [{"id": v.id, "paper_column": v.paper_column, "kind": v.kind, "implementations": ", ".join(v.implementations),
             "field": v.field, "violating": v.violating, "fixed": v.fixed, "description": v.description,
             "how_to_test": v.how_to_test, "note": v.note} for v in VIOLATIONS]
    return pd.DataFrame(rows)
