"""The utility page (``notebooks/utility.py``; ``ganev2025elusive`` §5 and Appendix C) as
library calls: the notebook runs :func:`run_page` once and shows what each builder returns.

==========================  ======================================================  =====================
module                      builders                                                paper
==========================  ======================================================  =====================
``context``                 ``run_page``, ``settings``                              (every knob)
``setting_a``               ``table7``, ``classifiers``                             Table 7, Setting A
``table4``                  ``table4``, ``table4_auprc``, ``table1``, ``dpgan``     Tables 1, 4; §5
``large``                   ``large_profile``                                       Tables 4, 7 (archive)
``per_classifier``          ``per_classifier_tables``                               Tables 5, 8, 9, 10
``sweeps``                  ``sweep_figures``, ``not_trained``, ``figure10``        Figures 1, 6-10
``ablations``               ``table11``, ``table6``, ``table12``                    Tables 6, 11, 12
``variants_large``          ``variants_large``                                      Tables 6, 11, 12 (archive)
``mnist_large``             ``figure10_large``                                      Figure 10 (archive)
``spread``                  ``intervals``, ``interval``, ``attach``                 (scorecard intervals)
==========================  ======================================================  =====================

Each builder takes the :class:`UtilityPage` and returns blocks (:mod:`pategan_audit.pages.blocks`);
``page.show(blocks)`` writes them under ``results/utility/`` and displays them. Every best-of-n
scorecard row carries the 90 % bootstrap interval of its cell (``spread``; NaN for one table).
"""
from . import ablations, large, mnist_large, per_classifier, setting_a, spread, sweeps, table4, variants_large
from .context import UtilityPage, page_cells, run_page, settings

__all__ = ["UtilityPage", "ablations", "large", "mnist_large", "page_cells", "per_classifier", "run_page", "settings", "setting_a",
           "spread", "sweeps", "table4", "variants_large"]
