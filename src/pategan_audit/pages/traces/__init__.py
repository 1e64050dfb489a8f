"""The training-traces page (``notebooks/training_traces.py``; ``ganev2025elusive`` §6.1) as
library calls: the notebook runs :func:`run_page` once and shows what each builder returns.

=============  ==========================================================================================  =============
module         builders                                                                                    paper
=============  ==========================================================================================  =============
``context``    ``run_page``, ``settings``                                                                  (every knob)
``seen``       ``figure2``, ``seen_table``, ``seen_values``                                                Figure 2
``losses``     ``figure3``, ``iterations_table``, ``archived_iterations``, ``levels_table``, ``figure11``  Figures 3, 11
``moments``    ``figure4``, ``first_moment_table``, ``moment_values``, ``final_table``                     Figure 4
``scorecard``  ``scorecard_entries``                                                                       Figures 2-4
=============  ==========================================================================================  =============

Each builder takes the :class:`TracesPage` and returns blocks (:mod:`pategan_audit.pages.blocks`);
``page.show(blocks)`` writes them under ``results/training_traces/`` and displays them.
"""
from . import losses, moments, scorecard, seen
from .context import TracesPage, run_page, settings

__all__ = ["TracesPage", "losses", "moments", "run_page", "scorecard", "seen", "settings"]
