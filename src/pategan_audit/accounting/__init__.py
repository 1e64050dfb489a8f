"""Privacy accounting of the PATE-GAN implementations (paper App. A; implementation notes §accountants.formulas, §corrected.accountant).

* :mod:`.formulas`: pure per-query moment increments of each accountant kind (``paper``,
  ``updated``, ``synthcity``, ``borealis``, ``smartnoise``, ``corrected``) and ε̂ from moments;
* :mod:`.accountant`: :class:`MomentsAccountant`, the state of one run;
* :mod:`.exact`: exact log-moments of one noisy binary vote (slow reference for the bounds);
* :mod:`.gaussian`: the Gaussian label-noise scales of original and turing.
"""
from .accountant import MomentsAccountant
from .exact import MECHANISMS, exact_vote_moments
from .formulas import (
    KINDS,
    MomentOrderAtEdgeWarning,
    compare_increments,
    data_independent_increment,
    epsilon_from_moments,
    moment_increments,
    moment_terms,
    summed_increments,
    theorem3_threshold,
    vote_q,
)
from .gaussian import SIGMA_KINDS, gaussian_label_noise_sigma, label_flip_probability
from . import gnmax as gnmax  # Confident-GNMax analysis (PATE 2018): accounting.gnmax.*

__all__ = [
    "KINDS",
    "MECHANISMS",
    "SIGMA_KINDS",
    "MomentOrderAtEdgeWarning",
    "MomentsAccountant",
    "compare_increments",
    "data_independent_increment",
    "epsilon_from_moments",
    "exact_vote_moments",
    "gaussian_label_noise_sigma",
    "label_flip_probability",
    "moment_increments",
    "moment_terms",
    "summed_increments",
    "theorem3_threshold",
    "vote_q",
]
