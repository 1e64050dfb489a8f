"""SAMME.R AdaBoost (pategan_audit.adaboost): the authors' scikit-learn 1.4.1 default."""
import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from pategan_audit.adaboost import SAMMERealAdaBoost
from pategan_audit.classifiers import ClassifierKnobs, evaluate_table, make_classifier


def _toy(n=300, d=5, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    logits = X[:, 0] - 0.7 * X[:, 1] + 0.3 * rng.normal(size=n)
    y = (logits > 0).astype(int) if classes == 2 else np.digitize(logits, [-0.5, 0.5])
    return X, y


def _real_adaboost_two_class(X, y, Xt, *, n_estimators, seed):
    """Friedman, Hastie and Tibshirani's Real AdaBoost (2000, Algorithm 2) written independently:
    labels in {-1, +1}, f_m = 1/2 log(p / (1 - p)), w *= exp(-y f_m), P(y = 1 | x) = sigmoid(2 F)
    with F the mean of the f_m (SAMME.R with K = 2 reduces to this)."""
    eps = np.finfo(float).eps
    ypm = np.where(y == 1, 1.0, -1.0)
    w = np.full(len(y), 1 / len(y))
    rng = np.random.RandomState(seed)
    F, rounds = np.zeros(len(Xt)), 0
    for m in range(n_estimators):
        stump = DecisionTreeClassifier(max_depth=1, random_state=rng.randint(np.iinfo(np.int32).max)).fit(X, y, sample_weight=w)
        p_train = np.clip(stump.predict_proba(X), eps, None)
        p_test = np.clip(stump.predict_proba(Xt), eps, None)
        F += 0.5 * np.log(p_test[:, 1] / p_test[:, 0])
        rounds += 1
        if np.sum(w * (p_train.argmax(1) != y)) <= 0 or m == n_estimators - 1:
            break
        w = w * np.exp(-ypm * 0.5 * np.log(p_train[:, 1] / p_train[:, 0]))
        w = w / w.sum()
    return 1 / (1 + np.exp(-2 * F / rounds))


@pytest.mark.parametrize("n_estimators", [1, 7, 50])
def test_two_class_samme_r_equals_real_adaboost_computed_independently(n_estimators):
    X, y = _toy()
    Xt, _ = _toy(seed=1)
    ours = SAMMERealAdaBoost(n_estimators=n_estimators, random_state=3).fit(X, y).predict_proba(Xt)[:, 1]
    reference = _real_adaboost_two_class(X, y, Xt, n_estimators=n_estimators, seed=3)
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-12)


def test_three_classes_give_probabilities_and_the_argmax_as_prediction():
    X, y = _toy(classes=3)
    model = SAMMERealAdaBoost(random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert (model.predict(X) == model.classes_[proba.argmax(1)]).all()
    assert (model.predict(X) == y).mean() > 0.7  # it learns the ordered classes


def test_a_separable_stump_stops_boosting_after_one_round():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    model = SAMMERealAdaBoost().fit(X, y)
    assert len(model.estimators_) == 1
    assert (model.predict(X) == y).all()


def test_bad_input_names_the_problem():
    X, y = _toy()
    with pytest.raises(ValueError, match="two classes"):
        SAMMERealAdaBoost().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="n_estimators"):
        SAMMERealAdaBoost(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="adaboost must be one of"):
        ClassifierKnobs(adaboost="SAMME.X")


def test_the_panel_runs_samme_r_unless_told_samme():
    assert isinstance(make_classifier("AdaBoost", seed=0), SAMMERealAdaBoost)
    assert type(make_classifier("AdaBoost", seed=0, knobs=ClassifierKnobs(adaboost="SAMME"))).__name__ == "AdaBoostClassifier"


def test_cervical_setting_a_adaboost_moves_toward_the_authors_record():
    """Worked numbers (2026-11-25): on the Cervical Setting A split SAMME scores 0.9881 and SAMME.R
    0.9034 (the authors' record: 0.8899); the rest of the gap is not explained (scorecard.DIAGNOSES)."""
    from pategan_audit.utility.run import load_dataset

    data = load_dataset("cervical_cancer", None)
    scores = {a: float(evaluate_table(data.train, data.test, classifiers=("AdaBoost",), seed=0,
                                      knobs=ClassifierKnobs(adaboost=a))["auroc"].iloc[0]) for a in ("SAMME", "SAMME.R")}
    assert scores["SAMME"] == pytest.approx(0.9881, abs=1e-4)
    assert scores["SAMME.R"] == pytest.approx(0.9034, abs=1e-4)


@pytest.mark.slow
def test_epileptic_setting_a_adaboost_reproduces_the_authors_record():
    """SAMME.R reproduces the authors' Setting A AdaBoost on Epileptic (0.9754) to four decimals,
    SAMME does not (0.9733)."""
    from pategan_audit.reference import setting_a_reference
    from pategan_audit.utility.run import load_dataset

    data = load_dataset("epileptic_seizure", None)
    paper = setting_a_reference(wide=True).loc["AdaBoost", "epileptic_seizure"]
    ours = float(evaluate_table(data.train, data.test, classifiers=("AdaBoost",), seed=0)["auroc"].iloc[0])
    assert paper == 0.9754 and round(ours, 4) == paper
