"""The auditing page (``notebooks/auditing.py``; ``ganev2025elusive`` §6.2, Figures 5 and 12)
as library calls: the notebook starts the page once (:func:`start_page`) and shows what each
builder returns, in the page's order.

===============  ===================================================================  ==========================
module           builders                                                             paper
===============  ===================================================================  ==========================
``context``      ``start_page``, ``profile_summary``                                  (every knob)
``limits``       ``profile_limits``                                                   ceilings (implementation notes §audit.ceiling)
``calibration``  ``calibration``                                                      (beyond the paper)
``targets``      ``target_selection``                                                 GroundHog target (implementation notes §audit.groundhog)
``figure5``      ``figure5``, ``figure5_table``, ``figure12``, ``null_floor``         Figures 5, 12
``paper_scale``  ``figure5_large``, ``figure12_large``, ``channels_large``            Figures 5, 12 (archives)
``past_ceiling`` ``past_ceiling``                                                     Figure 5 past its ceiling (archives)
``channels``     ``channels``                                                         side channels (implementation notes §audit.channels)
``diagnostics``  ``synthcity_categories``, ``released_rows``                          (beyond the paper)
``corrected``    ``corrected_profile``, ``corrected_large``, ``corrected``            §7's fixes
``ablation``     ``ablation``, ``coincidences``                                       Table 2's violations
``aggregators``  ``vote_aggregators``, ``at_lambda1``                                 §4, Figure 4's λ = 1
``verdicts``     ``implementation_verdicts``                                          §6.2
``scorecard``    ``scorecard_entries``                                                Figure 5 entries
``compute``      ``compute``                                                          (cost of the page)
===============  ===================================================================  ==========================

Each builder takes the :class:`AuditPage`, keeps on it what later sections read and returns
blocks (:mod:`pategan_audit.pages.blocks`); ``page.show(blocks)`` writes them under ``results/auditing/`` and
displays them. The paper-scale sections read the committed archives through
:mod:`pategan_audit.auditing.verdicts`; the page never recomputes them.
"""
from . import (
    ablation,
    aggregators,
    archived_runs,
    calibration,
    channels,
    compute,
    corrected,
    diagnostics,
    figure5,
    limits,
    paper_scale,
    past_ceiling,
    scorecard,
    targets,
    verdicts,
)
from .context import AuditPage, profile_summary, runs_text, start_page

__all__ = ["AuditPage", "ablation", "aggregators", "archived_runs", "calibration", "channels", "compute", "corrected",
           "diagnostics", "figure5", "limits", "paper_scale", "past_ceiling", "profile_summary", "runs_text", "scorecard", "start_page",
           "targets", "verdicts"]
