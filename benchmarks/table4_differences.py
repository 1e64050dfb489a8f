"""Experiments behind the largest Table 4 differences at the paper's protocol (issue #13, deliverable 3).

Each function below tests one hypothesis about one Table 4 cell of the archive
``results/archive/utility_large`` (Cervical best-of-25 at the 10,000-iteration cap; Epileptic
best-of-4 at a 2,000-iteration cap) and returns a small table. The scorecard's
:data:`pategan_audit.scorecard.DIAGNOSES` names these functions as the evidence of each
recorded cause; ``tests/test_scorecard.py`` checks that every name it gives exists here.

    nice -n 19 .venv/bin/python benchmarks/table4_differences.py [--quick] [--only NAME ...]

``--quick`` runs every experiment at a reduced size (fewer models/tables/iterations; minutes on
a loaded 2-core machine); the full size is what the results below were measured with. One torch
thread; results print as tables (``--json PATH`` also writes them).

Experiments and measured results (full size unless stated; 2026-11-22, a 2-core machine whose
two cores were busy with an archive job, load average 3.3-4.2; this job ran at ``nice 19``):

``turing_label_decoding`` (turing, Cervical). Hypothesis: the paper's 0.5000 (AUPRC 0.0640 = the
    test prevalence, so all 25 tables had one label class) comes from how the authors' harness
    encodes the label, not from the network. In ``code/pate_gans/turing/turing.py`` (class
    ``PG_TURING``, the one ``eval_utility_cli.py`` uses) ``create_metadata`` makes a column
    categorical only if its pandas dtype is ``category``; every column of the authors' Cervical
    and Epileptic pickles is int/float, so the label ``Biopsy`` is an INTEGER column: encoded as
    ``y/(1 + 1e-8)`` and decoded as ``astype(int)`` of ``v (1 + 1e-8)`` with ``v`` a float32
    sigmoid output, i.e. 1 only where the sigmoid saturates to exactly 1.0 (bug B4).
    ``nfeatures = d + 1`` adds one column that ``_encode_data`` never fills (``np.empty``; zeros
    for an array this size), reproduced here as a constant zero column. Our preset instead
    one-hot encodes the label and decodes it by argmax (and rounds integers, the audit
    variant's fix). Same fitted models, three decodings: ``harness`` (INTEGER label, truncate),
    ``integer_round`` (INTEGER label, round: ``PG_TURING_AUDIT``'s decode), and ``preset`` (the
    current preset, separately fitted models). Measured (2026-11-25, load 5.0 -> 6.8, 248 s
    wall), 3 models x 3 tables, 10,000 iterations, k = 2: harness 0.5000 / AUPRC 0.0640 with 9
    of 9 tables single-class (exactly the paper's 0.5000 / 0.0640); integer_round 0.9679 /
    0.7768, none single-class; preset 0.9850 / 0.7968 (the archive: 0.9885). A first probe (2
    models) gave label outputs with maximum 0.997 and 0.982, 6.3 % and 7.7 % of rows above 0.5,
    none equal to 1.0: truncation gives 0 positives, rounding about the real 6.4 %.
    Verdict: explained; the preset's label encoding differs from the harness.
``turing_epileptic_labels`` (turing, Epileptic). The same harness decoding on Epileptic, where
    the paper prints 0.7425 (two label classes): the mechanism predicts that some label outputs
    saturate to 1.0 there (the division by ``max`` maps many Epileptic values above 1, pushing
    the sigmoid layer into saturation). Measures the positive-label fraction of harness-decoded
    tables. Measured (2026-11-25, load 6.1, 159 s wall), 1 model x 2 tables at 2,000 iterations
    (the archive's cap), k = 9: 0 and 0 positive labels, 0.5000 / 0.2000; at 500 iterations the
    label output peaks at 0.56. Verdict: not settled. At our cap the harness decoding would
    print 0.5 on Epileptic, not 0.7425. At the paper's 10,000 iterations
    (``max_iter=10000``; 2026-11-25, load ~5, about 12 min wall for one model): the label output
    reaches 1.0 for a few rows, 17 and 14 positive labels of 7,360, best-of-2 AUROC 0.6939
    (per-table mean 0.6626), AUPRC 0.5076, beside the paper's best-of-25 0.7425. Verdict:
    explained; the harness decoding gives two-class tables on Epileptic at the paper's length,
    single-class ones on Cervical, as the paper's numbers show.
``original_second_draw`` (original, Cervical; ours 0.716 vs 0.9265). Hypothesis: draw-to-draw
    variance (3 of our 5 models emit only one label class; the paper's number is one draw of the
    authors' single seed-13 stream). Trains a second, independent set of models with the
    archive's pipeline (``evaluate_cell`` of a ``UtilityCell``, master seed 1) and reports the
    per-model single-class share and the best-of-n. Measured (2026-11-25, load 4.2 -> 5.0,
    155 s wall), 5 x 5, 10,000 iterations: 0.8954 / AUPRC 0.5240 (paper 0.9265 / 0.5280;
    archive draw 0.7158 / 0.3126), 1 of 5 models single-class (archive 3 of 5), per-model mean
    AUROC 0.77, 0.75, 0.62, 0.69, 0.50. Verdict: explained by draw-to-draw variance.
``smartnoise_draws`` (smartnoise, Cervical; ours 0.918 vs 0.8025, just outside the bootstrap
    tolerance). Hypothesis: draw-to-draw variance of a maximum over 25 weak tables. Four more
    independent best-of-25 cells through the archive's pipeline (master seeds 1-4). Measured
    (2026-11-25, load 2.6 -> 3.1, 318 s wall at nice 19): AUROC 0.8316, 0.8602, 0.8430, 0.8064
    (AUPRC 0.4648, 0.5078, 0.4451, 0.3540) against the archive's 0.9180 / 0.5553 and the paper's
    0.8025 / 0.4536; per-table mean AUROC 0.52-0.56 in every draw, 33 iterations, no single-class
    table. Verdict: explained; the archive's draw is the highest of five, the paper's value is
    inside the range of the others.
``borealis_best_of_n`` (borealis, Epileptic; ours 0.542 best-of-4 at 2,000 iterations vs
    0.6730 best-of-25). Hypotheses: (a) the 2,000-iteration cap (the paper's run stops on the
    budget, under 10,000); (b) n: the best-of-n of near-chance tables grows with n. Trains
    models at the paper's cap (budget-stopped) and reports the iterations, the per-table mean
    (the records' Fig. 8 statistic: 0.5060 +- 0.0060 over 25 tables) and the best-of-n for
    n = 1..N over our tables. Measured (2026-11-25, load 4.9 -> 3.2, 673 s wall), 3 x 3: the
    budget stops borealis at 3,252 iterations; per-table mean 0.524 (sd 0.021; archive 0.494 at
    2,000); best-of-n 0.532, 0.546, 0.587, 0.605, 0.607, 0.607, 0.607, 0.609, 0.615 for n =
    1..9, against the archive's best-of-4 0.542, the records' best-of-9 at eps 0.5 / 5 of 0.625
    / 0.606 and the paper's best-of-25 0.673 (records' per-table mean at eps 1: 0.506, no better
    than at eps 0.5 / 5). Verdict: explained by the cap and n.
``epileptic_mean_vs_records`` (every Epileptic cell, no training). Compares the archive's
    per-table mean AUROC (Fig. 8's statistic) with the authors' records at epsilon = 1, to tell
    a difference in per-table quality from a difference in the number of tables behind the max.
    Measured (2026-11-25, 2 s): ours - records = -0.032 (original, z -5.8), -0.010 (updated,
    z -0.9), +0.007 (synthcity, z 0.5), +0.044 (turing, z 2.9), -0.012 (borealis, z -1.3),
    +0.060 (smartnoise, z 1.6); iterations run 2,000, 158, 8, 2,000, 2,000, 33.
``updated_draws`` (updated, Cervical; archive AUPRC 0.2876 against 0.5129, its AUROC 0.7987
    passing only on a wide interval). Four more best-of-25 draws at the protocol (master seeds
    1-4, the panel's SAMME.R AdaBoost). Measured (2026-11-25, load 4.2 -> 5.1, 552 s wall):
    AUROC / AUPRC 0.7828 / 0.3667, 0.7713 / 0.4090, 0.7799 / 0.3325, 0.7263 / 0.2949; per-table
    mean AUROC 0.43-0.47 (below chance), 158 iterations, no single-class table. Verdict:
    unexplained; every draw is below the paper's 0.8739 / 0.5129, so it is not draw variance.
``setting_a_seed_spread`` (Setting A, Cervical: AdaBoost, Bagging, GBM, MLP outside the 0.01
    floor). The randomised classifiers refitted with 25 random states (the authors pass none).
    Measured (2026-11-25, load 3.2 -> 4.2, 53 s wall): AUROC min / median / max (record, its
    quantile): AdaBoost (SAMME.R) 0.9034 for every state (0.8899, 0); Bagging 0.9410 / 0.9619 /
    0.9783 (0.9644, 0.60); GBM 0.9752 / 0.9774 / 0.9802 (0.9667, 0); MLP 0.8735 / 0.9170 /
    0.9684 (0.9667, 0.96). Verdict: Bagging and MLP explained (one draw); GBM and AdaBoost not.
``setting_a_mean_spread`` (Table 7's Cervical AUPRC, the mean over the twelve in Setting A).
    Measured (2026-11-25, load 4.6 -> 4.9, 79 s wall), 25 states with SAMME.R: mean AUROC
    0.9254 / 0.9337 / 0.9426 (record 0.9400, quantile 0.96), mean AUPRC 0.6161 / 0.6350 / 0.6568
    (record 0.6192, quantile 0.04); SAMME at one state 0.9366 / 0.6426 (archive 0.6506).
    Verdict: explained (the record lies inside the spread).

    The same experiment under the authors' scikit-learn (2026-11-25, 59 s wall, load 3.0), from a
    separate venv; the project's loader and classifier panel are pure NumPy / pandas /
    scikit-learn and import there (Python 3.11)::

        python3 -m venv .venv-sklearn14          # git-ignored, from the repository root
        .venv-sklearn14/bin/pip install numpy==1.26.4 scipy==1.12.0 pandas==2.2.1 scikit-learn==1.4.1.post1 xgboost==2.0.3
        PYTHONPATH=src .venv-sklearn14/bin/python benchmarks/table4_differences.py --only setting_a_seed_spread

    gives AdaBoost 0.9034 for every state, Bagging 0.9410 / 0.9619 / 0.9783, GBM 0.9752 / 0.9780 /
    0.9797, MLP 0.8735 / 0.9170 / 0.9684: the library version moves nothing (GBM's record stays
    below every state). On Credit's archive split that venv gives GaussianNB 0.9008 (1.9.1: 0.9010)
    and GBM 0.9982 at the same state as 1.9.1.

``credit_setting_a_splits`` (Setting A on Credit: 12 classifier cells and Table 7's row outside the
    0.01 floor; ours higher on 11 of 12). Only the authors' 20 % test split is bundled, so our
    test split holds 20 frauds (theirs 98) and our classifiers train on 45,569 rows (theirs
    227,845). The twelve refitted on 8 stratified 80/20 splits of the bundled rows (seed 13 is the
    archive's split, checked equal) at one random state, and on the archive's split at 10 states
    (17 fits). Measured (2026-11-25, 1,331 s wall, load 2.6 -> 3.0, beside two archive jobs):
    min / median / max AUROC: LogisticRegression 0.9216 / 0.9980 / 0.9980 (record 0.9442),
    RandomForest 0.8710 / 0.9740 / 0.9996 (0.9213), GaussianNB 0.8227 / 0.9010 / 0.9425 (0.5000),
    BernoulliNB 0.4973 / 0.5473 / 0.6468 (0.5582), DecisionTree 0.7495 / 0.9245 / 0.9498 (0.8519),
    GBM 0.5750 / 0.9979 / 0.9980 (0.3672), XGB 0.8037 / 0.9708 / 0.9708 (0.9389); the mean of the
    twelve 0.8536 / 0.9348 / 0.9432 (Table 7: 0.8176), mean AUPRC 0.4875 / 0.6899 / 0.7081
    (0.5475). Which frauds land in the test split moves every classifier by 0.05-0.2; the random
    state moves GBM from 0.998 to 0.575 on the same split (the archive's state gives 0.575).
    Verdict: 10 of 12 records and Table 7's AUPRC lie inside the spread (explained as split and
    state draws, a proxy for the full data); GaussianNB's 0.5000, GBM's 0.3672 and Table 7's AUROC
    lie below every fit (unexplained). An earlier run of this experiment that split the rows in
    another order (8 other splits, not kept) gave GBM 0.385-0.912 and GaussianNB 0.840-0.941.

``adaboost_samme_r`` (AdaBoost: the archives' SAMME against the authors' SAMME.R). Measured
    (2026-11-25, load 2.6 -> 5.8, 2,609 s wall at nice 10). Setting A AUROC SAMME / SAMME.R /
    record: Cervical 0.9881 / 0.9034 / 0.8899; Epileptic 0.9733 / 0.9754 / 0.9754; ISOLET 0.9697 /
    0.9942 / 0.9942; Credit (bundled 20 % split, not the paper's data) 0.9954 / 0.9983 / 0.9539.
    Setting B, Epileptic, the archive's cells, AdaBoost's best of 4 SAMME / SAMME.R / archive /
    paper: original 0.8438 / 0.7840 / 0.8138 / 0.9162; synthcity 0.3498 / 0.6124 / 0.3159 /
    0.7588; borealis 0.5815 / 0.6156 / 0.4578 / 0.8582; smartnoise 0.7057 / 0.6583 / 0.7057 /
    0.7572; updated 0.6659 / 0.6540 / 0.6659 / 0.6752 (SAMME differs from the archive where the
    classifier's random state, which changes with its place in the panel, breaks ties between
    stumps). Verdict: SAMME.R reproduces Setting A; on synthetic tables it moves AdaBoost both
    ways and closes none of Table 5's AdaBoost differences. Writes
    ``results/experiments/per_classifier_adaboost.csv``.
``original_epileptic_long`` (original, Epileptic; the archive stops it at 2,000 iterations, the
    paper runs 10,000). 1 model x 2 tables at 10,000 iterations, master seed 1, SAMME.R panel.
    Measured (2026-11-25, load 4.5 -> 7.1, 1,662 s wall at nice 5): per-table mean AUROC 0.6399
    (sd 0.0060) against the records' 0.6261 +- 0.0030 and the archive's 0.5941; best of 2 AUROC
    0.6484 / AUPRC 0.5227 (archive best of 4 at 2,000: 0.6365 / 0.5222; paper best of 25: 0.6867
    / 0.5854). Verdict: the cap explains the per-table AUROC; AUPRC does not move. Writes each
    classifier's best to ``results/experiments/per_classifier_original_10k.csv``.

``per_classifier_epileptic_seizure_original_eps<ε>_10k`` (Figures 1, 8 and 9: original's Epileptic
    points off ε = 1, where the sweep archive stops at 2,000 iterations and the paper runs 10,000).
    ``sweep_draw_again(max_iter=10000)``: the sweep's cell at that ε, 1 x 2 new tables at master
    seed 1 (as ``original_epileptic_long`` at ε = 1), with Figure 8's per-table mean beside the
    authors' records. Measured 2026-11-26 beside one archive job (load 2.1 -> 3.2), 896 / 812 / 794 s
    wall at ε = 10 / 5 / 50: per-table mean AUROC 0.7815 / 0.7185 / 0.7688 against the records'
    0.7629 / 0.7524 / 0.7406 and the archive's 0.6342 / 0.6583 / 0.6330; best of 2 AUROC 0.7867 /
    0.7285 / 0.7759 (paper's best of 9: 0.8011 / 0.7868 / 0.7769; archive's best of 4: 0.6762 /
    0.6990 / 0.6515) and AUPRC 0.6851 / 0.5929 / 0.6713 (paper 0.7060 / 0.6796 / 0.6895). Verdict:
    the 2,000 cap explains Figure 8 at ε = 10 and 50 and Figure 1 at ε = 50 (the longer run crosses
    the paper's value); at ε = 5 the mean rises by 0.06 but stays 0.034 below the records; AUPRC
    rises by about 0.1 at ε = 10 and 50 yet stays below the paper's best of 9. Below ε = 1 the
    longer run does worse (861 / 813 s wall at ε = 0.5 / 0.1, load 1.1 -> 3.9): per-table mean
    0.5090 / 0.4944 against the archive's 0.5803 / 0.5516 and the records' 0.6036 / 0.5510, best of
    2 AUROC 0.5212 / 0.5490 (paper 0.6607 / 0.6907), AUPRC 0.3926 / 0.4147 (paper 0.5597 / 0.5720):
    at original's label noise there (σ = 2.42 / ε, V14 and V17) more iterations lower utility (why is
    not measured), so the cap does not explain the low-ε points; the authors' records there score
    like our 2,000-iteration tables (ε = 0.1: 0.5510 against 0.5516). At ε = 0.05 (772 s wall) the
    mean falls from 0.5434 to 0.4836 across the records' 0.4993 (best of 2 AUROC 0.5288, paper
    0.6026), so the cap accounts for Figure 8's point there: our 2,000-iteration tables score above
    the authors'.

``per_classifier_best_of_n`` (synthcity and updated, Epileptic: Tables 5 and 10 per classifier,
    and Table 4). 3 x 3 new tables of the archive's protocol at master seed 1 (SAMME.R panel).
    Measured (2026-11-25, load 4.5 -> 5.4, 6,293 s wall at nice 5 beside three other jobs):
    12-classifier best of 4 / of 9: synthcity 0.6541 / 0.6667 (archive 0.5989, paper 0.7165),
    updated 0.5725 / 0.5951 (archive 0.5356, paper 0.6187); per-table mean 0.512 and 0.485.
    Each classifier's best of 9 is in ``results/experiments/per_classifier_best_of_n.csv``; the
    scorecard explains a cell where it reaches the paper's value.

``per_classifier_credit_smartnoise`` and ``per_classifier_credit_borealis`` (Credit, Tables 8 and 9
    and Table 4's cell: ``per_classifier_best_of_n(dataset="credit")``, 3 x 3 new tables at master
    seed 1 beside the archive's best of 9 at seed 0). Measured 2026-11-25 beside two or three
    other jobs: smartnoise (2,713 s wall, 33 iterations) best of 9 AUROC 0.8063 / AUPRC 0.2521
    against the archive's 0.6131 / 0.0977 and the paper's 0.7358 / 0.1174, so the two draws bracket
    the paper's values (14 of 24 cells explained this way); borealis (1,369 s wall, 3,252
    iterations) 0.7393 / 0.1806 against 0.7266 / 0.1135 and the paper's 0.6300 / 0.1635: its AUROC
    stays above the paper in both draws (4 of 21 cells explained). ``per_classifier_credit_synthcity``
    (3,584 s wall, load 1.2 -> 5.6 beside two archive jobs, 9 iterations): best of 9 0.8648 / AUPRC
    0.3620 against the archive's 0.8970 / 0.2710 and the paper's 0.5172 / 0.0320 (per-table mean
    AUROC 0.641, sd 0.102): both draws lie far above the paper, so Table 4's Credit cell stays
    *unexplained: tried*; the per-classifier cells the two draws bracket are explained.

``per_classifier_credit_smartnoise_eps0.5``, ``_eps5``, ``_eps10`` (Figures 6 and 7: smartnoise's
    Credit points off ε = 1, where the paper's curve swings 0.49 / 0.74 / 0.47 / 0.80 at ε = 0.5, 1, 5,
    10 and the sweep archive's best of 4 is flat at 0.55-0.68). ``sweep_draw_again``: the sweep's cell
    at that ε with 3 x 3 new tables (the paper's n) at master seed 1. Measured 2026-11-26, the three
    side by side on a 2-core machine (load 3.0), 2,841 / 3,047 / 3,107 s wall: best of 9 AUROC 0.8276 /
    0.7861 / 0.7404 and AUPRC 0.2576 / 0.1518 / 0.0496 (per-table mean AUROC 0.625 / 0.546 / 0.524)
    against the archive's 0.6138 / 0.6204 / 0.6802 (AUPRC 0.0750 / 0.0665 / 0.0820) and the paper's
    0.4935 / 0.4716 / 0.7971 (AUPRC 0.0234 / 0.0288 / 0.2742). At ε = 0.5 and 5 the paper's best of 9
    lies below both draws' best and below our tables' mean; at ε = 10 above both. No draw brackets a
    paper point: the six stay *unexplained: tried*.

``sweep_mean_vs_records`` (Figures 1, 8 and 9: every archived Epileptic sweep point off ε = 1; no
    training, 1 s). Each point's tables against the authors' records at the same ε: our per-table
    mean AUROC over the sweep's 4 tables against the records' over their 9 (Figure 8's mean ± SE),
    the z of the difference, the iterations run and the archive's 2,000 cap. It places a gap but
    explains none: where the means agree (|z| <= 2) the gap lies in the best of 4 against the
    paper's best of 9; otherwise in the training (the cap, when it stopped the run). First
    measured 2026-11-26 on smartnoise at ε = 0.5 and 5: z = 0.5 and -0.8, so the ε = 5 points of
    Figures 1 and 9 (best of 4 0.5370 / 0.3993 against the paper's 0.6218 / 0.4989) differ in the
    best-of-n, not in the tables. Rerun after each archive session; the committed file must equal
    the experiment on the committed archive (a test checks it).

``hyperparameter_draws`` (Table 12's P on Cervical: original, updated, synthcity drawn again at
    master seeds 1-3, best of 5 x 5; 1,728 s wall, load 4.2 -> 4.9 beside three other jobs):
    original 0.6594 / 0.7270 / 0.6915 (3-4 of 5 models single-class; archive 0.6370, paper 0.8531),
    updated 0.8352 / 0.8178 / 0.8553 (archive 0.8477, paper 0.6581), synthcity 0.8259 / 0.7821 /
    0.8086 (archive 0.8456, paper 0.6867); per-table means 0.48-0.54 for updated and synthcity.
    ``best_of_n_curve`` (no training, the archive's Cervical P cells): best of 1 / 2 / 4 / 9 / 25
    for updated 0.560 / 0.618 / 0.719 / 0.781 / 0.848, synthcity 0.486 / 0.600 / 0.698 / 0.770 /
    0.846, smartnoise 0.487 / 0.571 / 0.637 / 0.699 / 0.757 (paper 0.7699), borealis 0.489 / 0.562
    / 0.632 / 0.692 / 0.768 (paper 0.8140).

``per_classifier_isolet_smartnoise`` (ISOLET, Table 4's cell drawn again at the archive's 2 x 2,
    master seed 1; 1,895 s wall beside two to four other jobs, 33 iterations): best of 4 0.6119 /
    AUPRC 0.2634 (per-table mean 0.543, sd 0.063) against the archive's 0.5386 / 0.2148 and the
    paper's 0.6152 / 0.2683: the two draws bracket the paper's value (within the 0.005 slack for
    its four printed decimals).

``per_classifier_isolet_borealis`` (ISOLET, the same for borealis; 1,798 s wall beside
    one to three other jobs, 3,252 iterations, the budget's stop): best of 4 0.5535 / AUPRC 0.2272
    (per-table mean 0.476, sd 0.023) against the archive's 0.5266 / 0.2066 and the paper's 0.6219 /
    0.2889: both draws lie below the paper's value, whose tables would have to be far better than
    ours (our per-table mean is below chance), so the cell stays unexplained with this tried.

``per_classifier_isolet_original`` (ISOLET, the same for original; 3,432 s wall beside one other
    job, every fit at the 10,000-iteration cap): best of 4 0.8039 / AUPRC 0.5324 (per-table mean
    0.786, sd 0.003) against the archive's 0.8117 / 0.5437 and the paper's 0.8342 / 0.5766: both
    draws lie below the paper's value and the tables barely vary, so the cell stays unexplained
    with this tried.

``original_conditional_epileptic_long`` (Table 6, Epileptic, the conditional original at the paper's
    10,000 iterations, 1 x 2; 1,248 s wall beside four other jobs): best of 1 / 2 0.6247 / 0.6336,
    per-table mean 0.6273 (sd 0.0037), against the archive's 0.6224 (2,000 iterations, best of 4)
    and the paper's 0.7029: the cap does not explain it.

``original_conditional`` (Table 6, Cervical): the conditional original drawn again at master seeds
    1-3, best of 5 x 5 at the protocol, through the archive's pipeline. Measured 2026-11-25 (944 s
    wall, load 3.6 -> 5.8 beside three other jobs): best-of-25 0.8336, 0.9762, 0.8183 (per-table
    means 0.52, 0.78, 0.54; per-model means 0.37-0.95) against the archive's 0.7559 (seed 0) and the
    paper's 0.9330: the draws bracket the paper's value.

Since 2026-11-25 the panel's AdaBoost is SAMME.R (the authors' scikit-learn 1.4.1); the
experiments measured before that date ran SAMME, like the archives.

The measured numbers of the full runs are kept in ``RESULTS`` below (copied from the printed
output) so that the book and the scorecard can cite them without rerunning.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone

import numpy as np
import pandas as pd

PAD = "__turing_nfeatures_pad__"  # the harness' never-filled column d+1 (nfeatures = #columns + 1)
KNOBS = {"mlp_max_iter": 1000, "xgb_n_jobs": 1}  # as the archive utility_large

#: Results of the full-size runs (module docstring), copied from the printed output: best-of-n
#: AUROC / AUPRC per variant, n tables, share of single-class tables.
RESULTS: dict[str, object] = {
    "turing_label_decoding": {"harness": (0.5000, 0.0640, 9, 1.0), "integer_round": (0.9679, 0.7768, 9, 0.0),
                              "preset": (0.9850, 0.7968, 9, 0.0)},
    "turing_epileptic_labels": {"harness": (0.5000, 0.2000, 2, 1.0)},
    "original_second_draw": {"seed 1": (0.8954, 0.5240, 25, 0.20), "archive, seed 0": (0.7158, 0.3126, 25, 0.64)},
    "borealis_best_of_n": {"n=4": (0.6045, 0.4195, 4, 0.0), "n=9": (0.6154, 0.4446, 9, 0.0)},
}


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _torch_one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _load(dataset: str):
    from pategan_audit.utility.run import load_dataset

    return load_dataset(dataset, None)


def _score(synth: pd.DataFrame, data, seed: int) -> pd.DataFrame:
    """The archive's evaluation of one synthetic table: cast back to the training dtypes, 12
    classifiers trained on it and scored on the real test split."""
    from pategan_audit.classifiers import ClassifierKnobs, evaluate_table
    from pategan_audit.utility.cells import to_training_dtypes

    synth = to_training_dtypes(synth, data.train)
    scores = evaluate_table(synth, data.test, seed=seed, knobs=ClassifierKnobs(**KNOBS))
    return scores.assign(positives=int(synth[data.label].sum()), single_class=bool(synth[data.label].nunique() < 2))


def _best_of_n(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean over classifiers of the per-classifier max over tables (the paper's statistic), the
    per-table mean (Fig. 8's), the share of single-class tables, and n."""
    per_cls = rows.groupby([*by, "classifier"])[["auroc", "auprc"]].max().groupby(by).mean()
    per_tab = rows.groupby([*by, "model", "table"])["auroc"].mean().groupby(by)
    single = rows.groupby([*by, "model", "table"])["single_class"].first().groupby(by).mean()
    return per_cls.assign(mean_table_auroc=per_tab.mean(), n=per_tab.count(), single_class_share=single).reset_index()


def _seeds(seed: int, n: int) -> list[int]:
    from pategan_audit.seeds import derive_seed

    return [derive_seed(seed, 1000 + m) for m in range(n)]


def _save_rows(table: pd.DataFrame, out: str) -> None:
    """Write experiment rows the scorecard reads (CSV, atomic; parent folders created)."""
    from pategan_audit.runner import atomic_write_text

    atomic_write_text(out, table.to_csv(index=False))


# ------------------------------------------------------------------------------------------------
# experiments
# ------------------------------------------------------------------------------------------------
def turing_label_decoding(dataset: str = "cervical_cancer", *, n_models: int = 3, n_tables: int = 3,
                          max_iter: int = 10_000, with_preset: bool = True, seed: int = 0) -> pd.DataFrame:
    """turing with the authors' utility-harness label handling against our preset.

    ``harness``: every column INTEGER (the label too), the extra zero column, ``astype(int)``
    truncation (PG_TURING); ``integer_round``: the same models decoded with rounding
    (PG_TURING_AUDIT); ``preset``: ``create("turing")`` as the archive ran it (one-hot label,
    argmax). k = max(2, N // 1000) as the harness. Returns the best-of-n summary per decoding.
    """
    from pategan_audit.implementations import fit_many
    from pategan_audit.utility.cells import teacher_count, teacher_ratio

    _torch_one_thread()
    data = _load(dataset)
    k = teacher_count(n_train=len(data.train), ratio=teacher_ratio(dataset))
    n = len(data.train)
    seeds = _seeds(seed, n_models)
    padded = pd.concat([data.train, pd.DataFrame({PAD: 0}, index=data.train.index)], axis=1)
    rows = []
    harness_models = fit_many("turing", padded, seeds=seeds, label=None, num_teachers=k, max_iter=max_iter,
                              integer_decode="truncate", record=False)
    for m, model in enumerate(harness_models):
        for decode in ("truncate", "round"):
            model.encoder.integer_decode = decode
            for s in range(n_tables):
                synth = model.sample(n, seed=seeds[m] + 7 * s).drop(columns=[PAD])
                variant = "harness" if decode == "truncate" else "integer_round"
                rows.append(_score(synth, data, seed=seeds[m] + s).assign(variant=variant, model=m, table=s))
    if with_preset:
        preset_models = fit_many("turing", data.train, seeds=seeds, label=data.label, num_teachers=k,
                                 max_iter=max_iter, record=False)
        for m, model in enumerate(preset_models):
            for s in range(n_tables):
                synth = model.sample(n, seed=seeds[m] + 7 * s)
                rows.append(_score(synth, data, seed=seeds[m] + s).assign(variant="preset", model=m, table=s))
    out = _best_of_n(pd.concat(rows, ignore_index=True), ["variant"])
    return out.assign(dataset=dataset, max_iter=max_iter, num_teachers=k)


def turing_epileptic_labels(*, n_models: int = 1, n_tables: int = 2, max_iter: int = 2_000,
                            evaluate: bool = True, seed: int = 0) -> pd.DataFrame:
    """The harness decoding of turing on Epileptic: positive labels per table (and, with
    ``evaluate``, the 12-classifier scores of the harness-decoded tables)."""
    from pategan_audit.implementations import fit_many
    from pategan_audit.utility.cells import teacher_count, teacher_ratio

    _torch_one_thread()
    dataset = "epileptic_seizure"
    data = _load(dataset)
    k = teacher_count(n_train=len(data.train), ratio=teacher_ratio(dataset))
    n = len(data.train)
    seeds = _seeds(seed, n_models)
    models = fit_many("turing", pd.concat([data.train, pd.DataFrame({PAD: 0}, index=data.train.index)], axis=1),
                      seeds=seeds, label=None, num_teachers=k, max_iter=max_iter, integer_decode="truncate",
                      record=False)
    rows, raw_max, raw_ones = [], [], []
    for m, model in enumerate(models):
        raw = _raw_label_outputs(model, data.label, n, seeds[m])
        raw_max.append(float(raw.max()))
        raw_ones.append(float((raw >= 1.0).mean()))
        for s in range(n_tables):
            synth = model.sample(n, seed=seeds[m] + 7 * s).drop(columns=[PAD])
            if evaluate:
                rows.append(_score(synth, data, seed=seeds[m] + s).assign(variant="harness", model=m, table=s))
            else:
                pos = int(synth[data.label].sum())
                rows.append(pd.DataFrame([{"variant": "harness", "model": m, "table": s, "classifier": "-",
                                           "auroc": np.nan, "auprc": np.nan, "positives": pos,
                                           "single_class": pos in (0, n)}]))
    rows = pd.concat(rows, ignore_index=True)
    pos = rows.groupby(["model", "table"])["positives"].first()
    out = _best_of_n(rows, ["variant"]) if evaluate else pd.DataFrame({"variant": ["harness"]})
    return out.assign(dataset=dataset, max_iter=max_iter, num_teachers=k,
                      positive_share=float(pos.mean() / n), positives_per_table=str(pos.tolist()),
                      label_output_max=str([round(v, 6) for v in raw_max]), label_output_share_1=str(raw_ones))


def _raw_label_outputs(model, label: str, n: int, seed: int) -> np.ndarray:
    """The generator's float32 sigmoid output for the label column (before decoding)."""
    import torch

    col = next(c for c in model.encoder.meta if c.name == label)
    raw = model._generate(n, None, torch.Generator().manual_seed(int(seed)))
    return raw[:, col.start]


def _draw(implementation: str, *, n_models: int, n_tables: int, max_iter: int, seed: int, epsilon: float = 1.0,
          overrides: dict | None = None) -> dict:
    """One best-of-(M x S) cell on Cervical through the archive's own pipeline (``evaluate_cell``)
    at master seed ``seed``: best-of-n, per-table mean, single-class share, the per-model picture."""
    from pategan_audit.utility import aggregate
    from pategan_audit.utility.cells import UtilityCell
    from pategan_audit.utility.run import evaluate_cell

    cell = UtilityCell("cervical_cancer", implementation, epsilon, n_models=n_models, n_tables=n_tables,
                       max_iter=max_iter, seed=seed, overrides=overrides, **KNOBS)
    res = evaluate_cell(cell)
    best = aggregate.best_of_n(res)
    per_table = res.groupby(["model", "table"]).agg(auroc=("auroc", "mean"), single=("single_class", "first"))
    per_model = per_table.groupby("model").agg(mean_auroc=("auroc", "mean"), single_tables=("single", "sum"))
    return {
        "dataset": "cervical_cancer", "implementation": implementation, "epsilon": epsilon,
        "variant": cell.variant, "seed": seed, "n": int(best["n"].iloc[0]),
        "auroc": float(best["auroc"].iloc[0]), "auprc": float(best["auprc"].iloc[0]),
        "mean_table_auroc": float(per_table["auroc"].mean()), "single_class_share": float(per_table["single"].mean()),
        "models_all_single": int((per_model["single_tables"] == n_tables).sum()),
        "per_model_mean_auroc": str(per_model["mean_auroc"].round(3).tolist()),
        "iterations": int(res["iterations"].max()),
    }


def original_second_draw(*, n_models: int = 5, n_tables: int = 5, max_iter: int = 10_000, seed: int = 1) -> pd.DataFrame:
    """original on Cervical through the archive's own pipeline (``evaluate_cell``) with another
    master seed: best-of-n, per-table mean, single-class share, and the per-model picture."""
    _torch_one_thread()
    return pd.DataFrame([_draw("original", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=seed)])


def original_conditional(*, seeds: tuple[int, ...] = (1, 2, 3), n_models: int = 5, n_tables: int = 5,
                         max_iter: int = 10_000) -> pd.DataFrame:
    """Table 6's conditional original on Cervical, best-of-25 at the protocol, drawn again at other
    master seeds through the archive's pipeline: is the archive's 0.756 against the paper's 0.933
    one draw of a wide distribution? (A conditional model either learns the features' dependence
    on the label it is fed or collapses; the per-model means show which.)"""
    _torch_one_thread()
    return pd.DataFrame([_draw("original", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=s,
                               overrides={"conditional": True}) for s in seeds])


def hyperparameter_draws(*, presets: tuple[str, ...] = ("original", "updated", "synthcity"),
                         seeds: tuple[int, ...] = (1, 2, 3), n_models: int = 5, n_tables: int = 5,
                         max_iter: int = 10_000) -> pd.DataFrame:
    """Table 12's P cells on Cervical ([49]'s hyperparameters), best-of-25 at the protocol, drawn
    again at other master seeds through the archive's pipeline: does the paper's value lie inside
    the spread of draws?"""
    _torch_one_thread()
    return pd.DataFrame([_draw(p, n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=s,
                               overrides={"hyperparameters": "paper"}) for p in presets for s in seeds])


def best_of_n_curve(*, archive: str = "utility_variants_large", dataset: str = "cervical_cancer",
                    variant: str = "hyperparameters=paper", sizes: tuple[int, ...] = (1, 2, 4, 9, 25),
                    repeats: int = 50, seed: int = 0) -> pd.DataFrame:
    """No training: each preset's best-of-n in an archived cell as a function of n, the mean over
    ``repeats`` random subsets of n of its tables (all of them for the largest n): which n would
    give the paper's value from tables like ours?"""
    from pategan_audit import reference as R
    from pategan_audit.archive import read_archive
    from pategan_audit.utility import best_of_n

    rec = read_archive(archive).records
    rec = rec[(rec["dataset"] == dataset) & (rec["variant"] == variant) & (rec["implementation"] != "real")]
    paper = R.table12(wide=True) if variant == "hyperparameters=paper" else None
    rng = np.random.default_rng(seed)
    rows = []
    for impl, part in rec.groupby("implementation", sort=False):
        order = part[["model", "table"]].drop_duplicates().reset_index(drop=True)
        row = {"implementation": impl, "tables": len(order)}
        for n in (k for k in sizes if k <= len(order)):
            draws = [np.arange(n)] if n == len(order) else [rng.choice(len(order), n, replace=False) for _ in range(repeats)]
            row[f"best of {n}"] = float(np.mean([best_of_n(part.merge(order.iloc[i], on=["model", "table"]))["auroc"].iloc[0]
                                                 for i in draws]))
        if paper is not None:
            row["paper"] = float(paper.loc[dataset, (impl, "P")])
        rows.append(row)
    return pd.DataFrame(rows)


def smartnoise_draws(*, seeds: tuple[int, ...] = (1, 2, 3, 4), n_models: int = 5, n_tables: int = 5,
                     max_iter: int = 10_000) -> pd.DataFrame:
    """smartnoise on Cervical, best-of-25 at the protocol, drawn again at other master seeds: is the
    archive's 0.918 against the paper's 0.8025 one draw of a wide distribution?"""
    _torch_one_thread()
    return pd.DataFrame([_draw("smartnoise", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=s)
                         for s in seeds])


def updated_draws(*, seeds: tuple[int, ...] = (1, 2, 3, 4), n_models: int = 5, n_tables: int = 5,
                  max_iter: int = 10_000) -> pd.DataFrame:
    """updated on Cervical, best-of-25 at the protocol, drawn again at other master seeds: is the
    archive's AUPRC 0.288 (AUROC within tolerance) against the paper's 0.5129 one draw of a wide
    distribution?"""
    _torch_one_thread()
    return pd.DataFrame([_draw("updated", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=s)
                         for s in seeds])


def setting_a_seed_spread(*, dataset: str = "cervical_cancer",
                          classifiers: tuple[str, ...] = ("AdaBoost", "Bagging", "GBM", "MLP"),
                          seeds: int = 25) -> pd.DataFrame:
    """Setting A of the randomised classifiers refitted with ``seeds`` random states (the authors
    pass none: their record is one draw), AdaBoost as the authors ran it (SAMME.R): the spread of
    AUROC and AUPRC and where the authors' record falls in it (its quantile among our draws)."""
    from pategan_audit import reference as R
    from pategan_audit.classifiers import ClassifierKnobs, evaluate_table

    data = _load(dataset)
    paper = R.setting_a_reference(wide=True)
    rows = []
    for s in range(seeds):
        res = evaluate_table(data.train, data.test, classifiers=classifiers, seed=1000 + s,
                             knobs=ClassifierKnobs(**KNOBS))
        rows.extend(res.assign(seed=1000 + s).to_dict("records"))
    res = pd.DataFrame(rows)
    out = res.groupby("classifier")["auroc"].agg(["min", "median", "max", "std"]).reset_index()
    out["paper"] = [float(paper.loc[c, dataset]) for c in out["classifier"]]
    out["paper_quantile"] = [float((res.loc[res["classifier"] == c, "auroc"] <= p).mean())
                             for c, p in zip(out["classifier"], out["paper"])]
    return out.assign(dataset=dataset, draws=seeds)


def setting_a_mean_spread(*, dataset: str = "cervical_cancer", seeds: int = 25) -> pd.DataFrame:
    """Table 7's Setting A AUROC / AUPRC (the mean over the twelve classifiers on the real split)
    refitted with ``seeds`` random states, AdaBoost as the authors ran it (SAMME.R), against the
    same statistic with the archives' SAMME at one state: the spread of the mean and where the
    paper's value falls in it."""
    from pategan_audit import reference as R
    from pategan_audit.classifiers import ClassifierKnobs, evaluate_table

    data = _load(dataset)
    t7 = R.table7()
    paper = {c: float(t7[(t7["row"] == dataset) & (t7["column"] == c)]["value"].iloc[0]) for c in ("auroc", "auprc")}
    means = []
    for s in range(seeds):
        res = evaluate_table(data.train, data.test, seed=1000 + s, knobs=ClassifierKnobs(**KNOBS))
        means.append(res[["auroc", "auprc"]].mean())
    means = pd.DataFrame(means)
    samme = evaluate_table(data.train, data.test, seed=1000, knobs=ClassifierKnobs(**KNOBS, adaboost="SAMME"))
    return pd.DataFrame([{"dataset": dataset, "metric": m, "samme_one_state": float(samme[m].mean()),
                          "samme_r_min": means[m].min(), "samme_r_median": means[m].median(),
                          "samme_r_max": means[m].max(), "paper": paper[m],
                          "paper_quantile": float((means[m] <= paper[m]).mean()), "draws": seeds}
                         for m in ("auroc", "auprc")])


def credit_setting_a_splits(*, split_seeds: tuple[int, ...] = (13, 1, 2, 3, 4, 5, 6, 7),
                            states: tuple[int, ...] = tuple(range(1000, 1010)),
                            out: str | None = "results/experiments/credit_setting_a_splits.csv") -> pd.DataFrame:
    """Setting A on Credit (the twelve classifiers, SAMME.R) over other 80/20 splits of the bundled
    rows and over the classifiers' random states. Only the authors' 20 % test split of Kaggle
    Credit is bundled (56,962 rows, 98 frauds): our test split keeps 20 frauds where the authors'
    held 98, so each AUROC rests on 20 positives; the authors pass no random state, so their
    record is one draw of each randomised classifier. Hypothesis: the paper's Setting A (measured
    on the full data) lies inside the spread over which frauds land in the test split and over
    random states. Every split of ``split_seeds`` is fitted at ``states[0]``, the first split (13,
    the archive's: the loader's split of the rows in file order) at every state of ``states``. ``out``: one row per (split, state, classifier)
    (CSV, atomic), which :mod:`pategan_audit.diagnoses` summarises."""
    from sklearn.model_selection import train_test_split

    from pategan_audit import reference as R
    from pategan_audit.classifiers import ClassifierKnobs, evaluate_table
    from pategan_audit.datasets import SPLIT_SEED, credit_rows

    data = _load("credit")
    rows_all, _ = credit_rows()
    paper = R.setting_a_reference(wide=True)
    fits = [(s, states[0]) for s in split_seeds] + [(split_seeds[0], st) for st in states[1:]]
    rows = []
    for split_seed, state in fits:
        train, test = (t.reset_index(drop=True) for t in train_test_split(
            rows_all, test_size=0.2, stratify=rows_all[data.label], random_state=split_seed))
        if split_seed == SPLIT_SEED:  # the archive's own split
            pd.testing.assert_frame_equal(test, data.test)
        res = evaluate_table(train, test, seed=state, knobs=ClassifierKnobs(**KNOBS))
        rows.extend(res.assign(split_seed=split_seed, state=state,
                               test_positives=int(test[data.label].sum())).to_dict("records"))
        print(f"split {split_seed}, state {state}: mean AUROC {res['auroc'].mean():.4f}", flush=True)
    frame = pd.DataFrame(rows)
    frame["paper"] = [float(paper.loc[c, "credit"]) for c in frame["classifier"]]
    if out:
        _save_rows(frame, out)
    return frame


def best_of_n_at_cap(implementation: str, *, dataset: str = "epileptic_seizure", n_models: int = 3,
                     n_tables: int = 3, max_iter: int = 10_000, seed: int = 1,
                     per_classifier: bool = False, overrides: dict | None = None,
                     num_teachers: int | None = None) -> pd.DataFrame:
    """``implementation`` through the archive's pipeline at the paper's cap (10,000 iterations, or
    the budget's stop before it): iterations run, per-table mean AUROC (the records' Fig. 8
    statistic) and AUPRC, and the best-of-n for n = 1 .. M*S (tables in model-major order, so
    n = 4 is comparable with the archive's 2 x 2 only in size); with ``per_classifier`` also each
    classifier's best-of-n (Tables 5 and 10). ``overrides`` (Table 12's ``{"hyperparameters": "paper"}``)
    and ``num_teachers`` (Table 11's k) as the variants archive's cells."""
    from pategan_audit.utility import aggregate
    from pategan_audit.utility.cells import UtilityCell
    from pategan_audit.utility.run import run_cell

    _torch_one_thread()
    cell = UtilityCell(dataset, implementation, 1.0, n_models=n_models, n_tables=n_tables, max_iter=max_iter,
                       seed=seed, overrides=overrides, num_teachers=num_teachers, **KNOBS)
    res = run_cell(cell)  # through the result cache: a run that fails after its fits resumes from them
    order = res[["model", "table"]].drop_duplicates().reset_index(drop=True)
    out = []
    for n in range(1, len(order) + 1):
        part = res.merge(order.iloc[:n], on=["model", "table"])
        best = aggregate.best_of_n(part)
        out.append({"implementation": implementation, "dataset": dataset, "n": n, "classifier": "mean of 12",
                    "auroc": float(best["auroc"].iloc[0]), "auprc": float(best["auprc"].iloc[0])})
        if per_classifier:
            per = part.groupby("classifier")[["auroc", "auprc"]].max()
            out.extend({"implementation": implementation, "dataset": dataset, "n": n, "classifier": c,
                        "auroc": float(r["auroc"]), "auprc": float(r["auprc"])} for c, r in per.iterrows())
    out = pd.DataFrame(out)
    per_table = res.groupby(["model", "table"])[["auroc", "auprc"]].mean()
    return out.assign(iterations=int(res["iterations"].max()), mean_table_auroc=float(per_table["auroc"].mean()),
                      sd_table_auroc=float(per_table["auroc"].std(ddof=1)) if len(per_table) > 1 else np.nan,
                      mean_table_auprc=float(per_table["auprc"].mean()))


def borealis_best_of_n(*, dataset: str = "epileptic_seizure", n_models: int = 3, n_tables: int = 3,
                       max_iter: int = 10_000, seed: int = 1, num_teachers: int | None = None,
                       overrides: dict | None = None) -> pd.DataFrame:
    """borealis at the paper's cap (the budget stops it first): :func:`best_of_n_at_cap`; with
    ``num_teachers`` a Table 11 column (k = 2 for N/5000 on Epileptic), with ``overrides``
    ``{"hyperparameters": "paper"}`` Table 12's P cell."""
    return best_of_n_at_cap("borealis", dataset=dataset, n_models=n_models, n_tables=n_tables, max_iter=max_iter,
                            seed=seed, num_teachers=num_teachers, overrides=overrides)


def original_epileptic_long(*, n_models: int = 1, n_tables: int = 2, max_iter: int = 10_000, seed: int = 1,
                            out: str | None = "results/experiments/per_classifier_original_10k.csv") -> pd.DataFrame:
    """original on Epileptic at the paper's 10,000 iterations (the archive: 2,000): does the per-table
    mean reach the records' 0.6261 (Fig. 8 at ε = 1)? :func:`best_of_n_at_cap`, per classifier;
    ``out``: each classifier's best over these tables beside the archive's best of 4 at 2,000
    iterations (CSV, atomic; :mod:`pategan_audit.scorecard` reads it)."""
    frame = best_of_n_at_cap("original", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=seed,
                             per_classifier=True)
    if out:
        per_classifier_csv(frame, "original", out, tried=f"the paper's {max_iter:,} iterations "
                                                          f"({n_models * n_tables} tables)")
    return frame


def original_conditional_epileptic_long(*, n_models: int = 1, n_tables: int = 2, max_iter: int = 10_000,
                                       seed: int = 1) -> pd.DataFrame:
    """Table 6's conditional original on Epileptic at the paper's 10,000 iterations (the variants
    archive: 2,000, as Table 4's Epileptic cell): does the cap explain the difference, as it does
    for the unconditional original (:func:`original_epileptic_long`)?"""
    return best_of_n_at_cap("original", n_models=n_models, n_tables=n_tables, max_iter=max_iter, seed=seed,
                            overrides={"conditional": True})


def archived_cell(dataset: str, implementation: str) -> pd.DataFrame:
    """The records of the archived Table 4 cell an experiment is compared with (the first archive of
    ``UTILITY_TABLE_ARCHIVES`` holding ``dataset``, read from ``results/archive`` or
    ``$PATEGAN_AUDIT_ARCHIVE``). Experiments call it before training, so a missing cell stops them
    at once instead of after an hour of fits."""
    from pategan_audit.archive import UTILITY_TABLE_ARCHIVES, read_archive

    for archive in map(read_archive, UTILITY_TABLE_ARCHIVES):
        if archive is None:
            continue
        rec = archive.records
        cell = rec[(rec["dataset"] == dataset) & (rec["implementation"] == implementation)]
        if len(cell):
            return cell
    raise LookupError(f"no archived Table 4 cell for {implementation} on {dataset} in {UTILITY_TABLE_ARCHIVES}: "
                      "run and commit it first (python -m pategan_audit.archive utility_tables_large), or point "
                      "$PATEGAN_AUDIT_ARCHIVE at the directory that holds it")


def per_classifier_csv(frame: pd.DataFrame, implementation: str, out: str | None, *, tried: str,
                       dataset: str = "epileptic_seizure", archived: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows the scorecard's per-classifier diagnoses read, from a :func:`best_of_n_at_cap` table
    with ``per_classifier``: each classifier's best over all its tables (``best_of_all``) beside the
    archive's best of ``n_archive`` (``archive``; files written before 2026-11-25's Credit runs call
    it ``best_of_4`` too, Epileptic's archive being best of 4) and the
    paper's per-classifier tables of ``dataset`` (Epileptic: Tables 5 and 10 from ``utility_large``;
    Credit: Tables 8 and 9 from ``utility_tables_large``), plus the twelve-classifier mean as Table
    4's cell (``classifier`` = the dataset, Table 4's row); written to ``out`` atomically unless None.
    ``archived``: that cell's records when the caller read them already (else :func:`archived_cell`)."""
    from pategan_audit import reference as R
    from pategan_audit.reference import PER_CLASSIFIER_TABLES
    from pategan_audit.utility.aggregate import best_of_n

    arch = archived_cell(dataset, implementation) if archived is None else archived
    n_archive = len(arch[["model", "table"]].drop_duplicates())
    arch_mean = best_of_n(arch).iloc[0]
    arch = arch.groupby("classifier")[["auroc", "auprc"]].max()
    frame = frame[frame["implementation"] == implementation]
    last = frame[frame["n"] == frame["n"].max()]
    tables = dict((metric, table) for table, metric in PER_CLASSIFIER_TABLES.get(dataset, ()))  # ISOLET: none
    papers = {metric: getattr(R, table)(wide=True) for metric, table in tables.items()}
    table4 = {"auroc": ("table4", R.table4(wide=True)), "auprc": ("table4_auprc", R.table4_auprc(wide=True))}
    rows = []
    for _, r in last.iterrows():
        if r["classifier"] != "mean of 12" and not tables:
            continue
        for metric in ("auroc", "auprc"):
            if r["classifier"] == "mean of 12":
                table, row = table4[metric][0], dataset
                archived, paper = float(arch_mean[metric]), float(table4[metric][1].loc[dataset, implementation])
            else:
                table, row = tables[metric], r["classifier"]
                archived, paper = float(arch.loc[row, metric]), float(papers[metric].loc[row, implementation])
            rows.append({"table": table, "classifier": row, "implementation": implementation, "metric": metric,
                         "best_of_all": float(r[metric]), "n_all": int(r["n"]),
                         "archive": archived, "n_archive": n_archive, "paper": paper,
                         "iterations": int(r["iterations"]), "tried": tried})
    table = pd.DataFrame(rows)
    if out:
        _save_rows(table, out)
    return table


def per_classifier_best_of_n(*, presets: tuple[str, ...] = ("synthcity", "updated"), n_models: int = 3,
                             n_tables: int = 3, seed: int = 1, dataset: str = "epileptic_seizure",
                             out: str | None = "results/experiments/per_classifier_best_of_n.csv") -> pd.DataFrame:
    """Tables 5 and 10 (Epileptic, each classifier's best of n; on ``dataset="credit"`` Tables 8 and
    9) and Table 4's cell for presets the budget stops long before the cap: ``n_models`` x ``n_tables`` new tables of the archive's protocol (master seed
    ``seed``; the panel's SAMME.R AdaBoost). Does each classifier's best over more tables reach the
    paper's best of 25 where the archive's best of 4 falls short? ``out``: each classifier's best
    over the new tables beside the archive's best (:func:`per_classifier_csv`).

    Measured 2026-11-25 for borealis and smartnoise (``per_classifier_borealis_smartnoise``; 7,050 s
    wall-clock at about one core beside two or three archive jobs, 27 min of it paused): borealis stops
    at 3,252 iterations under the 10,000 cap (the archive's 2,000 cap cut it short); 12-classifier mean
    of the best of 9 0.623 (archive best of 4 0.542, paper 0.673), per-table mean AUROC 0.508;
    smartnoise (33 iterations) 0.601 (archive 0.660, paper 0.696), per-table mean 0.441. Per classifier
    the best of 9 reaches the paper's value in 3 + 3 (borealis, AUROC + AUPRC) and 1 + 4 (smartnoise)
    of 12 + 12 cells."""
    # the comparisons it is written for exist: read them before training (a missing one fails now)
    archived = {p: archived_cell(dataset, p) for p in presets} if out else {}
    frames = [best_of_n_at_cap(p, dataset=dataset, n_models=n_models, n_tables=n_tables, seed=seed,
                               per_classifier=True) for p in presets]
    frame = pd.concat(frames, ignore_index=True)
    if out:
        def tried(preset: str) -> str:
            iterations = int(frame.loc[frame["implementation"] == preset, "iterations"].max())
            return (f"{n_models * n_tables} new tables of the same protocol at the paper's 10,000-iteration cap "
                    f"({iterations:,} iterations run; master seed {seed})")
        _save_rows(pd.concat([per_classifier_csv(frame, p, None, tried=tried(p), dataset=dataset, archived=archived[p])
                              for p in presets],
                             ignore_index=True), out)
    return frame


def archived_sweep_cell(dataset: str, implementation: str, epsilon: float) -> pd.DataFrame:
    """The records of the ``utility_sweep_large`` cell an ε-sweep experiment is compared with (read
    from ``results/archive`` or ``$PATEGAN_AUDIT_ARCHIVE``); called before training, so a missing
    cell stops the experiment at once (as :func:`archived_cell`)."""
    from pategan_audit.archive import read_archive

    archive = read_archive("utility_sweep_large")
    rec = archive.records if archive is not None else pd.DataFrame(columns=["dataset", "implementation", "epsilon"])
    cell = rec[(rec["dataset"] == dataset) & (rec["implementation"] == implementation)
               & np.isclose(rec["epsilon"].astype(float), float(epsilon))]
    if not len(cell):
        raise LookupError(f"no archived sweep cell for {implementation} on {dataset} at epsilon={epsilon:g} in "
                          "utility_sweep_large: run and commit it first (python -m pategan_audit.archive "
                          "utility_sweep_large), or point $PATEGAN_AUDIT_ARCHIVE at the directory that holds it")
    return cell


def sweep_draw_again(*, dataset: str = "credit", implementation: str = "smartnoise", epsilon: float = 0.5,
                     n_models: int = 3, n_tables: int = 3, seed: int = 1, max_iter: int | None = None,
                     out: str | None = None) -> pd.DataFrame:
    """A point of the ε-sweep figures (§5.2: Figures 6 and 7 on Credit, 1 and 9 on Epileptic) drawn
    again: the ``utility_sweep_large`` cell of ``implementation`` at ``epsilon`` (same caps, split,
    classifiers and AdaBoost) with ``n_models`` x ``n_tables`` new tables at master seed ``seed``
    (default 3 x 3 = 9, the tables behind each of the paper's points off ε = 1, against the sweep's
    best of 2 x 2). Does another draw of the same protocol move the best-of-n across the paper's
    point? ``max_iter``: train to this cap instead of the archive's (the paper's 10,000 where the
    archive stops at 2,000: does longer training move the point?). ``out``: the point's rows beside
    the archive's best (:func:`per_classifier_csv`'s columns plus ``epsilon`` and ``statistic``; the
    scorecard keys them to the figure's point); on Epileptic also Figure 8's point, the per-table
    mean AUROC of the new tables beside the archive's tables' mean and the authors' records' mean."""
    import dataclasses

    from pategan_audit import reference as R
    from pategan_audit.archive import sweep_cells
    from pategan_audit.scorecard import SWEEP_FIGURES
    from pategan_audit.utility.aggregate import best_of_n
    from pategan_audit.utility.run import run_cell

    if dataset not in SWEEP_FIGURES:
        raise ValueError(f"dataset={dataset!r} has no ε-sweep figure; choose one of {sorted(SWEEP_FIGURES)}")
    arch = archived_sweep_cell(dataset, implementation, epsilon)  # before any training
    (cell,) = [c for c in sweep_cells("large") if c.dataset == dataset and c.implementation == implementation
               and np.isclose(c.epsilon, epsilon)]
    cap = cell.max_iter
    cell = dataclasses.replace(cell, n_models=n_models, n_tables=n_tables, seed=seed,
                               max_iter=cap if max_iter is None else int(max_iter))
    _torch_one_thread()
    res = run_cell(cell)  # through the result cache: a finished cell is read back, not recomputed
    ours, archived = best_of_n(res).iloc[0], best_of_n(arch).iloc[0]
    n_all = len(res[["model", "table"]].drop_duplicates())
    n_archive = len(arch[["model", "table"]].drop_duplicates())
    iterations = int(res["iterations"].max())
    longer = "" if cell.max_iter == cap else f" at a {cell.max_iter:,}-iteration cap (the archive's: {cap:,})"
    tried = (f"{n_all} new tables of the sweep's protocol at epsilon = {epsilon:g}{longer} "
             f"({iterations:,} iterations run; master seed {seed})")

    def table_mean(records: pd.DataFrame) -> float:
        return float(records.groupby(["model", "table"])["auroc"].mean().mean())

    mean_table_auroc = table_mean(res)
    points = [(figure, metric, "best of n") for figure, metric in SWEEP_FIGURES[dataset]]
    if dataset == "epileptic_seizure":  # Figure 8: the authors' records' per-table mean at each ε
        points.append(("figure8", "auroc", "mean"))
    rows = []
    for figure, metric, statistic in points:
        ref = R.figure_series(int(figure.removeprefix("figure")))
        paper = ref[(ref["implementation"] == implementation) & np.isclose(ref["epsilon"], epsilon)]["value"]
        mean = statistic == "mean"
        rows.append({"table": figure, "classifier": dataset, "implementation": implementation,
                     "metric": metric, "epsilon": float(epsilon), "statistic": statistic,
                     "best_of_all": mean_table_auroc if mean else float(ours[metric]), "n_all": n_all,
                     "archive": table_mean(arch) if mean else float(archived[metric]), "n_archive": n_archive,
                     "paper": float(paper.iloc[0]), "iterations": iterations, "tried": tried,
                     "mean_table_auroc": mean_table_auroc, "max_iter": cell.max_iter, "archive_max_iter": cap})
    table = pd.DataFrame(rows)
    if out:
        _save_rows(table, out)
    return table


#: the paper's iteration cap (§5.1; every harness runs at most 10,000 iterations)
PAPER_MAX_ITER = 10_000


def _z(difference: float, *standard_errors: float) -> float:
    """``difference`` over the combined standard errors; NaN where they are missing or all 0 (a
    side whose every table scores the same, e.g. all single-class: no spread to compare with)."""
    spread = float(np.hypot(*standard_errors))
    return difference / spread if spread > 0 else float("nan")


def sweep_mean_vs_records(*, out: str | None = "results/experiments/sweep_mean_vs_records.csv") -> pd.DataFrame:
    """Every archived Epileptic ε-sweep point off ε = 1 (``utility_sweep_large``: best of 2 x 2 at
    the 2,000-iteration cap) against the authors' records at the same ε: the per-table mean AUROC
    of our tables and of theirs (Figure 8's statistic, the records' mean ± SE over their 9 tables),
    beside the point itself (Figure 1's best-of-n AUROC, Figure 9's AUPRC, Figure 8's mean). Says
    whether a point that differs has tables that score like the authors' on average (then the gap
    is in the best of 4 against their best of 9) or not (then in the training: the iterations run
    and whether the archive's cap stopped it). No training; rerun after the sweep archive gains
    cells (``tests/test_table4_differences.py`` checks the committed file against the archive)."""
    from pategan_audit import reference as R
    from pategan_audit.archive import read_archive
    from pategan_audit.scorecard import SWEEP_FIGURES
    from pategan_audit.utility.aggregate import best_of_n, mean_se

    dataset = "epileptic_seizure"
    archive = read_archive("utility_sweep_large")
    rec = archive.records if archive is not None else pd.DataFrame(columns=["dataset", "implementation", "epsilon"])
    rec = rec[(rec["dataset"] == dataset) & rec["implementation"].isin(R.IMPLEMENTATIONS)
              & ~np.isclose(rec["epsilon"].astype(float), 1.0)]
    rows = []
    if len(rec):
        keys = ["implementation", "epsilon"]
        means = mean_se(rec, keys=keys).set_index(keys)
        best = best_of_n(rec, keys=keys).set_index(keys)
        run = rec.groupby(keys)[["iterations", "max_iter"]].max()
        statistics = [(figure, metric, "best of n") for figure, metric in SWEEP_FIGURES[dataset]]
        statistics.append(("figure8", "auroc", "mean"))
        refs = {figure: R.figure_series(int(figure.removeprefix("figure"))).set_index(keys) for figure, _, _ in statistics}
        fig8 = refs["figure8"]
        for key in means.index:
            if key not in fig8.index or pd.isna(means.loc[key, "mean"]) or not bool(fig8.loc[key, "ran"]):
                continue
            om, ose = float(means.loc[key, "mean"]), float(means.loc[key, "se"])
            rm, rse = float(fig8.loc[key, "value"]), float(fig8.loc[key, "se"])
            for figure, metric, statistic in statistics:
                ref = refs[figure]
                ours = om if statistic == "mean" else float(best.loc[key, metric])
                rows.append({"table": figure, "implementation": key[0], "epsilon": float(key[1]), "metric": metric,
                             "statistic": statistic, "ours": ours, "paper": float(ref.loc[key, "value"]),
                             "n_ours": int(best.loc[key, "n"]), "n_paper": int(ref.loc[key, "n_tables"]),
                             "ours_mean": om, "ours_se": ose, "records_mean": rm, "records_se": rse,
                             "z": _z(om - rm, ose, rse),
                             "iterations": int(run.loc[key, "iterations"]), "max_iter": int(run.loc[key, "max_iter"]),
                             "paper_max_iter": PAPER_MAX_ITER})
    columns = ["table", "implementation", "epsilon", "metric", "statistic", "ours", "paper", "n_ours", "n_paper",
               "ours_mean", "ours_se", "records_mean", "records_se", "z", "iterations", "max_iter", "paper_max_iter"]
    table = pd.DataFrame(rows, columns=columns)
    if out:
        _save_rows(table, out)
    return table


def epileptic_mean_vs_records() -> pd.DataFrame:
    """Archive (Epileptic, best-of-4, 2,000 iterations) against the authors' records at ε = 1:
    per-table mean AUROC (Fig. 8's statistic, records' mean ± SE over 25 tables) and the
    best-of-n (ours n = 4, the paper's n = 25). No training."""
    from pategan_audit import reference as R
    from pategan_audit.archive import read_archive
    from pategan_audit.utility.aggregate import best_of_n, mean_se

    rec = read_archive("utility_large").records
    rec = rec[(rec["dataset"] == "epileptic_seizure") & (rec["implementation"] != "real")]
    ours_mean = mean_se(rec).set_index("implementation")
    ours_best = best_of_n(rec).set_index("implementation")
    fig8 = R.figure_series(8)
    fig8 = fig8[(fig8["epsilon"] == 1.0)].set_index("implementation")
    t4 = R.table4(wide=True).loc["epileptic_seizure"]
    rows = []
    for impl in fig8.index:
        m, se = float(fig8.loc[impl, "value"]), float(fig8.loc[impl, "se"])
        om, ose = float(ours_mean.loc[impl, "mean"]), float(ours_mean.loc[impl, "se"])
        rows.append({"implementation": impl, "records_mean": m, "records_se": se, "ours_mean": om, "ours_se": ose,
                     "mean_difference": om - m, "z": (om - m) / np.hypot(se, ose),
                     "paper_best_of_25": float(t4[impl]), "ours_best_of_4": float(ours_best.loc[impl, "auroc"]),
                     "iterations": int(rec.loc[rec["implementation"] == impl, "iterations"].max())})
    return pd.DataFrame(rows)


def adaboost_samme_r(*, datasets: tuple[str, ...] = ("cervical_cancer", "epileptic_seizure", "isolet", "credit"),
                     presets: tuple[str, ...] = ("original", "synthcity", "borealis", "smartnoise", "updated"),
                     max_iter: int = 2_000,
                     out: str | None = "results/experiments/per_classifier_adaboost.csv") -> pd.DataFrame:
    """AdaBoost as the archives ran it (SAMME, scikit-learn >= 1.6) against the authors'
    scikit-learn 1.4.1 default (SAMME.R, :mod:`pategan_audit.adaboost`). Part 1, Setting A: one fit
    per dataset and algorithm on the real split, beside the authors' record. Part 2, Setting B on
    Epileptic: the archive's own cells (``UtilityCell`` of ``utility_large``: 2 x 2 tables, master
    seed 0, 2,000-iteration cap) re-run with AdaBoost alone under each algorithm; the SAMME row
    must equal the archive's AdaBoost best-of-4 (same tables), the SAMME.R row shows what the
    authors' panel would have scored on them, beside the paper's Table 5 AdaBoost."""
    from pategan_audit import reference as R
    from pategan_audit.archive import read_archive
    from pategan_audit.classifiers import ClassifierKnobs, evaluate_table
    from pategan_audit.utility.cells import UtilityCell
    from pategan_audit.utility.run import evaluate_cell

    _torch_one_thread()
    rows = []
    setting_a = R.setting_a_reference(wide=True)
    for d in datasets:
        data = _load(d)
        for algorithm in ("SAMME", "SAMME.R"):
            auroc = float(evaluate_table(data.train, data.test, classifiers=("AdaBoost",), seed=0,
                                         knobs=ClassifierKnobs(**KNOBS, adaboost=algorithm))["auroc"].iloc[0])
            rows.append({"setting": "A", "dataset": d, "implementation": "real", "adaboost": algorithm,
                         "auroc": auroc, "paper": float(setting_a.loc["AdaBoost", d]), "archive": np.nan})
    archive = read_archive("utility_large").records
    table5 = R.table5(wide=True)
    for impl in presets:
        arch = archive[(archive["dataset"] == "epileptic_seizure") & (archive["implementation"] == impl)
                       & (archive["classifier"] == "AdaBoost")]
        for algorithm in ("SAMME", "SAMME.R"):
            cell = UtilityCell("epileptic_seizure", impl, 1.0, n_models=2, n_tables=2, max_iter=max_iter, seed=0,
                               classifiers=("AdaBoost",), adaboost=algorithm, **KNOBS)
            res = evaluate_cell(cell)
            rows.append({"setting": "B", "dataset": "epileptic_seizure", "implementation": impl, "adaboost": algorithm,
                         "auroc": float(res["auroc"].max()), "paper": float(table5.loc["AdaBoost", impl]),
                         "archive": float(arch["auroc"].max()) if len(arch) else np.nan,
                         "iterations": int(arch["iterations"].max()) if len(arch) else -1})
    frame = pd.DataFrame(rows)
    if out:
        adaboost_csv(frame, out)
    return frame


def adaboost_csv(frame: pd.DataFrame, out: str) -> pd.DataFrame:
    """The Setting B rows of :func:`adaboost_samme_r` as the scorecard's per-classifier rows (Table
    5's AdaBoost column): the archive's best of 4 (SAMME) beside SAMME.R on the same cells."""
    b = frame[(frame["setting"] == "B") & (frame["adaboost"] == "SAMME.R")]
    table = pd.DataFrame({"table": "table5", "classifier": "AdaBoost", "implementation": b["implementation"],
                          "metric": "auroc", "best_of_4": b["archive"], "best_of_all": b["auroc"], "n_all": 4,
                          "archive": b["archive"], "paper": b["paper"], "iterations": b["iterations"],
                          "tried": "AdaBoost as the authors' scikit-learn ran it (SAMME.R) on the archive's 4 tables"})
    _save_rows(table, out)
    return table


#: name -> (function, full-size kwargs, quick kwargs)
EXPERIMENTS = {
    "updated_draws": (updated_draws, {"seeds": (1, 2, 3, 4)}, {"seeds": (1,), "n_models": 2, "n_tables": 2}),
    "setting_a_seed_spread": (setting_a_seed_spread, {}, {"seeds": 3}),
    "setting_a_mean_spread": (setting_a_mean_spread, {}, {"seeds": 2}),
    "adaboost_samme_r": (adaboost_samme_r, {}, {"datasets": ("cervical_cancer",), "presets": ("smartnoise",),
                                                 "max_iter": 50, "out": None}),
    "epileptic_mean_vs_records": (epileptic_mean_vs_records, {}, {}),
    "sweep_mean_vs_records": (sweep_mean_vs_records, {}, {"out": None}),
    "credit_setting_a_splits": (credit_setting_a_splits, {}, {"split_seeds": (13, 1), "states": (1000, 1001),
                                                               "out": None}),
    "turing_label_decoding": (turing_label_decoding, {"n_models": 3, "n_tables": 3},
                              {"n_models": 1, "n_tables": 2, "with_preset": False}),
    "turing_epileptic_labels": (turing_epileptic_labels, {"n_models": 1, "n_tables": 2, "max_iter": 2_000},
                                {"n_models": 1, "n_tables": 2, "max_iter": 500, "evaluate": False}),
    "original_second_draw": (original_second_draw, {"n_models": 5, "n_tables": 5},
                             {"n_models": 2, "n_tables": 2}),
    "original_conditional": (original_conditional, {}, {"seeds": (1,), "n_models": 1, "n_tables": 1, "max_iter": 200}),
    "hyperparameter_draws": (hyperparameter_draws, {},
                             {"presets": ("updated",), "seeds": (1,), "n_models": 1, "n_tables": 1, "max_iter": 200}),
    "best_of_n_curve": (best_of_n_curve, {}, {"repeats": 5}),
    "original_conditional_epileptic_long": (original_conditional_epileptic_long, {}, {"max_iter": 200}),
    "smartnoise_draws": (smartnoise_draws, {"seeds": (1, 2, 3, 4)}, {"seeds": (1,), "n_models": 2, "n_tables": 2}),
    "original_epileptic_long": (original_epileptic_long, {}, {"max_iter": 200, "out": None}),
    "per_classifier_best_of_n": (per_classifier_best_of_n, {}, {"presets": ("smartnoise",), "n_models": 1,
                                                                "n_tables": 2, "out": None}),
    "per_classifier_borealis_smartnoise": (
        per_classifier_best_of_n,
        {"presets": ("borealis", "smartnoise"), "out": "results/experiments/per_classifier_borealis_smartnoise.csv"},
        {"presets": ("smartnoise",), "n_models": 1, "n_tables": 2, "out": None}),
    "borealis_best_of_n": (borealis_best_of_n, {"n_models": 3, "n_tables": 3},
                           {"n_models": 1, "n_tables": 2, "max_iter": 500}),
    "borealis_paper_hyperparameters": (borealis_best_of_n,
                                       {"n_models": 2, "n_tables": 2, "overrides": {"hyperparameters": "paper"}},
                                       {"n_models": 1, "n_tables": 1, "max_iter": 200,
                                        "overrides": {"hyperparameters": "paper"}}),
    "original_paper_hyperparameters": (
        best_of_n_at_cap,
        {"implementation": "original", "n_models": 1, "n_tables": 2, "overrides": {"hyperparameters": "paper"}},
        {"implementation": "original", "n_models": 1, "n_tables": 1, "max_iter": 200,
         "overrides": {"hyperparameters": "paper"}}),
    "borealis_two_teachers": (borealis_best_of_n, {"n_models": 3, "n_tables": 3, "num_teachers": 2},
                              {"n_models": 1, "n_tables": 1, "max_iter": 200, "num_teachers": 2}),
}

# per_classifier_<dataset>_<preset>: that preset's cell drawn again at the archive's M x S (Credit: Tables 8
# and 9 and Table 4's cell; ISOLET: Table 4's cell only)
DRAW_AGAIN = {"credit": ((3, 3), ("smartnoise", "borealis", "synthcity")), "isolet": ((2, 2), ("smartnoise", "borealis", "original", "synthcity"))}
EXPERIMENTS.update({
    f"per_classifier_{d}_{p}": (
        per_classifier_best_of_n,
        {"presets": (p,), "dataset": d, "n_models": m, "n_tables": t, "out": f"results/experiments/per_classifier_{d}_{p}.csv"},
        {"presets": (p,), "dataset": d, "n_models": 1, "n_tables": 1, "out": None})
    for d, ((m, t), presets) in DRAW_AGAIN.items() for p in presets})


# per_classifier_<dataset>_<preset>_eps<ε>: that preset's ε-sweep point drawn again (3 x 3 tables, the paper's n)
SWEEP_DRAW_AGAIN = {("credit", "smartnoise"): (0.5, 5.0, 10.0, 50.0), ("credit", "borealis"): (0.01, 0.1)}
EXPERIMENTS.update({
    f"per_classifier_{d}_{p}_eps{e:g}": (
        sweep_draw_again,
        {"dataset": d, "implementation": p, "epsilon": e, "out": f"results/experiments/per_classifier_{d}_{p}_eps{e:g}.csv"},
        {"dataset": d, "implementation": p, "epsilon": e, "n_models": 1, "n_tables": 1, "out": None})
    for (d, p), epsilons in SWEEP_DRAW_AGAIN.items() for e in epsilons})

# per_classifier_<dataset>_<preset>_eps<ε>_10k: that preset's ε-sweep point trained to the paper's 10,000
# iterations (the archive stops Epileptic at 2,000), 1 x 2 tables as original_epileptic_long at ε = 1
SWEEP_LONG = {("epileptic_seizure", "original"): (5.0, 10.0, 50.0, 0.5, 0.1, 0.05)}
EXPERIMENTS.update({
    f"per_classifier_{d}_{p}_eps{e:g}_10k": (
        sweep_draw_again,
        {"dataset": d, "implementation": p, "epsilon": e, "n_models": 1, "n_tables": 2, "max_iter": PAPER_MAX_ITER,
         "out": f"results/experiments/per_classifier_{d}_{p}_eps{e:g}_10k.csv"},
        {"dataset": d, "implementation": p, "epsilon": e, "n_models": 1, "n_tables": 1, "max_iter": 200, "out": None})
    for (d, p), epsilons in SWEEP_LONG.items() for e in epsilons})


def _load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - platform without getloadavg
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes (minutes)")
    parser.add_argument("--only", nargs="+", choices=sorted(EXPERIMENTS), help="run these experiments only")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    os.environ.setdefault("PATEGAN_AUDIT_TRAIN_THREADS", "1")  # before torch is imported
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    names = args.only or list(EXPERIMENTS)
    out = {}
    pd.set_option("display.width", 200)
    for name in names:
        fn, full, quick = EXPERIMENTS[name]
        kwargs = quick if args.quick else full
        start, load = time.perf_counter(), _load_average()
        table = fn(**kwargs)
        wall = time.perf_counter() - start
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        print(f"\n== {name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())}) "
              f"[{wall:.0f} s wall, load before {load}, after {_load_average()}, {stamp}]")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        sys.stdout.flush()
        out[name] = {"kwargs": kwargs, "wall_seconds": wall, "finished": stamp, "rows": table.to_dict("records")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
