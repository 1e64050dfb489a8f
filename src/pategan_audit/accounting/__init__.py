"""Privacy accounting of the PATE-GAN implementations (paper App. A; implementation notes §accountants.formulas, §corrected.accountant).

* :mod:`.formulas`: pure per-query moment increments of each accountant kind (``paper``,
  ``updated``, ``synthcity``, ``borealis``, ``smartnoise``, ``corrected``) and ε̂ from moments;
* :mod:`.ledger`: the one accountant interface (:class:`Accountant`: ``charge`` an event, read ε̂
  at δ) and the :class:`Ledger` of what was charged;
* :mod:`.accountant`: :class:`MomentsAccountant`, the state of one run, and
  :func:`charge_replicas` (many replicas' accountants charged at once);
* :mod:`.rdp`: :class:`RdpAccountant`, the Rényi-DP accountant of gnmax's Confident-GNMax queries;
* :mod:`.exact`: exact log-moments of one noisy binary vote (slow reference for the bounds);
* :mod:`.gaussian`: the Gaussian label-noise scales of original and turing.
"""
from .accountant import MomentsAccountant, charge_replicas
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
from .ledger import Accountant, Ledger
from .rdp import RdpAccountant
from . import gnmax as gnmax  # Confident-GNMax analysis (PATE 2018): accounting.gnmax.*
from . import smooth_sensitivity as smooth_sensitivity  # its private release (GNSS): accounting.smooth_sensitivity.*

__all__ = [
    "Accountant",
    "KINDS",
    "Ledger",
    "MECHANISMS",
    "SIGMA_KINDS",
    "MomentOrderAtEdgeWarning",
    "MomentsAccountant",
    "RdpAccountant",
    "charge_replicas",
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
