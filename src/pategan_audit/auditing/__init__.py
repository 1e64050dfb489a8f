"""Black-box DP auditing of the PATE-GAN implementations (paper §6.2; Figs. 5 and 12).

Map (the section of the book's implementation notes in brackets):

| module | what it holds |
|---|---|
| ``bounds`` | ``AttackCounts``; Clopper-Pearson and Bayesian (joint-beta) ε lower bounds [implementation notes §audit.bounds, §audit.ceiling] |
| ``featurisers`` | Querybased counts of {0,1}³, F_naive (+ histogram, correlation) [implementation notes §audit.querybased, §audit.groundhog] |
| ``attacks`` | random-forest attack, threshold on validation, both score directions [implementation notes §audit.attack] |
| ``game`` | the distinguishing game over any fit/sample generator, parallel + cached [implementation notes §audit.game] |
| ``batching`` | shadow models of a preset in chunks through ``implementations.fit_many`` (replica axis) |
| ``targets`` | GroundHog target selection by mini-MIAs [implementation notes §audit.groundhog] |
| ``settings`` | the paper's two settings and their size/bounds channel controls [implementation notes §audit.querybased, §audit.groundhog, §audit.channels] |
| ``profiles`` | ``AUDIT_PROFILES``: smoke / book / paper scales [implementation notes §profiles.fast, §audit.ceiling] |
| ``calibration`` | reference generators that release / ignore their data (audit sanity checks) |
| ``audit`` | end-to-end runs → tidy records (H schema), the violation ablation |
| ``diagnostics`` | checks that explain results: do released rows move with training, vote unanimity, encoder categories |
| ``summaries`` | channel decomposition (paper → fixed_size → controlled) and the ablation table [implementation notes §audit.channels] |
| ``fdp`` | the Gaussian-DP (μ-GDP) estimate from an attack's ROC curve and the ε it implies if the trade-off curve is Gaussian |
| ``mechanism``, ``mechanism_gnmax`` | one-query audits of the vote aggregators themselves (no training) |
| ``probes`` | Table 2 observed: each violation looked for in a fitted model's behaviour |
| ``past_ceiling`` | audits with more test outputs where the paper-scale audit was perfect (issue 40) |
| ``verdicts`` | the archived audits as Figure 5 / 12 rows and verdicts beside the paper |
| ``archives`` | the audit archives' specs (settings, profiles, resumable per setting) |
"""
from .attacks import AttackResult, DirectionResult, counts_at_threshold, evaluate_scores, random_forest_attack, select_threshold, split_sizes
from .audit import (
    ABLATION_PRESETS,
    CALIBRATION_GENERATORS,
    FINDING_SUFFIX,
    ablation_noops,
    ablation_settings,
    ablation_variants,
    audit_generator,
    make_settings,
    run_calibration,
    run_setting,
    run_settings,
)
from .bounds import (
    METHODS,
    AttackCounts,
    bayesian_eps_lower,
    bayesian_probability_private,
    clopper_pearson_eps_lower,
    clopper_pearson_interval,
    eps_from_rates,
    eps_lower,
    min_test_outputs,
    perfect_attack_ceiling,
)
from .calibration import IgnoreFactory, IgnoreTrainingData, ReleaseFactory, ReleaseTrainingData
from .diagnostics import encoder_categories, released_rows_move, student_labels, vote_unanimity
from .featurisers import CorrelationFeaturiser, HistogramFeaturiser, NaiveFeaturiser, QueryFeaturiser, RowCountFeaturiser
from .game import GameOutputs, run_game, shadow_seed
from .profiles import ABLATION_CHANNELS, AUDIT_PROFILES, AuditProfile, get_profile
from .settings import (
    ATTACKS,
    CHANNELS,
    GROUNDHOG_TARGET,
    AuditSetting,
    PresetFactory,
    attack_data,
    cervical_public_bounds,
    worst_case_public_bounds,
)
from .summaries import ablation_table, channel_sentences, channel_table
from .targets import TargetSelection, critic_score, rank_candidates, select_target, vulnerability_distances

__all__ = [
    "AttackResult", "DirectionResult", "counts_at_threshold", "evaluate_scores", "random_forest_attack",
    "select_threshold", "split_sizes",
    "ABLATION_PRESETS", "CALIBRATION_GENERATORS", "FINDING_SUFFIX", "ablation_noops", "ablation_settings", "ablation_variants", "audit_generator", "make_settings", "run_calibration", "run_setting",
    "run_settings",
    "METHODS", "AttackCounts", "bayesian_eps_lower", "bayesian_probability_private", "clopper_pearson_eps_lower",
    "clopper_pearson_interval", "eps_from_rates", "eps_lower", "min_test_outputs", "perfect_attack_ceiling",
    "IgnoreFactory", "IgnoreTrainingData", "ReleaseFactory", "ReleaseTrainingData",
    "encoder_categories", "released_rows_move", "student_labels", "vote_unanimity",
    "CorrelationFeaturiser", "HistogramFeaturiser", "NaiveFeaturiser", "QueryFeaturiser", "RowCountFeaturiser",
    "GameOutputs", "run_game", "shadow_seed",
    "ABLATION_CHANNELS", "AUDIT_PROFILES", "AuditProfile", "get_profile",
    "ablation_table", "channel_sentences", "channel_table",
    "ATTACKS", "CHANNELS", "GROUNDHOG_TARGET", "AuditSetting", "PresetFactory", "attack_data",
    "cervical_public_bounds", "worst_case_public_bounds",
    "TargetSelection", "critic_score", "rank_candidates", "select_target", "vulnerability_distances",
]
