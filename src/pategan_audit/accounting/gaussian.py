"""The Gaussian label noise of original and turing (no PATE, no accountant).

Both implementations replace PATE by one WGAN-GP critic and add ``N(0, σ²)`` noise to the 0/1
real/fake indicator labels, keeping ``1[M + noise > 0.5]`` (violations V14, V16). The scale σ
imitates the Gaussian mechanism's ``sqrt(2 ln(1.25/δ))/ε`` with two different bugs
(implementation notes §original.loop, §turing.loop, §accountants.examples, Gaussian scales):

* original (V17): ``sqrt(2·ln(1.25·(10 ^ delta)))/ε`` where ``^`` is Python's bitwise XOR and
  ``delta`` is the *integer exponent* (5 for 1e-5): ``10 XOR 5 = 15``.
* turing (V18): ``sqrt(2·ln(1.25·10**δ))/ε`` with δ the float, i.e. ``10**δ`` where ``1/δ`` is
  meant.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

__all__ = ["SIGMA_KINDS", "gaussian_label_noise_sigma", "label_flip_probability"]

SIGMA_KINDS: tuple[str, ...] = ("original", "turing", "textbook")


def _is_number(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))


def _check_epsilon(epsilon: float) -> float:
    if not _is_number(epsilon):
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}")
    if not math.isfinite(float(epsilon)) or float(epsilon) <= 0:
        raise ValueError(f"epsilon must be a finite number > 0 (e.g. epsilon=1.0), got {epsilon!r}")
    return float(epsilon)


def gaussian_label_noise_sigma(kind: str, *, epsilon: float, delta) -> float:
    """Standard deviation σ of the label noise.

    kind: ``"original"`` (delta = integer exponent, XOR; V17), ``"turing"`` (delta = δ, 10**δ;
        V18) or ``"textbook"`` (Gaussian mechanism, ``sqrt(2 ln(1.25/δ))/ε``).

    >>> round(gaussian_label_noise_sigma("original", epsilon=1.0, delta=5), 9)
    2.421236772
    """
    eps = _check_epsilon(epsilon)
    if kind == "original":
        if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, (int, np.integer)):
            raise ValueError(
                "original takes delta as the integer exponent of 10 (e.g. delta=5 for 1e-5, as its driver and "
                f"the paper's harness pass int(-log10(1e-5))); got {delta!r}"
            )
        base = 10 ^ int(delta)
        if base <= 0:
            raise ValueError(f"10 XOR delta = {base} for delta={delta}; the log needs a positive value (e.g. delta=5)")
        inner = 1.25 * base
    elif kind == "turing":
        if not _is_number(delta) or delta <= 0:
            raise ValueError(f"turing takes delta as the float δ > 0 (e.g. delta=1e-5), got {delta!r}")
        inner = 1.25 * 10.0 ** float(delta)
    elif kind == "textbook":
        if not _is_number(delta) or not (0 < float(delta) < 1):
            raise ValueError(f"textbook delta must lie in (0, 1) (e.g. delta=1e-5), got {delta!r}")
        inner = 1.25 / float(delta)
    else:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(SIGMA_KINDS)}")
    return math.sqrt(2.0 * math.log(inner)) / eps


def label_flip_probability(sigma: float) -> float:
    """P(N(0, σ²) > 0.5): the chance that a real/fake indicator label is flipped by the noise
    (for label 1 the flip is noise < -0.5, with the same probability)."""
    if not _is_number(sigma) or not sigma > 0:
        raise ValueError(f"sigma must be a number > 0, got {sigma!r}")
    if math.isinf(float(sigma)):
        return 0.5
    return float(ndtr(-0.5 / float(sigma)))
