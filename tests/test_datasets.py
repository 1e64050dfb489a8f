"""Datasets: counts (Table 7), the authors' splits, checksums and error messages."""
import shutil
import warnings
from dataclasses import replace

import pandas as pd
import pytest

from pategan_audit import datasets as D
from pategan_audit import runner


@pytest.mark.parametrize("name,label,train_rows,test_rows,d,pos_train", [
    ("cervical_cancer", "Biopsy", 686, 172, 29, 44),           # data/README.md §1 (authors' split)
    ("epileptic_seizure", "y", 9200, 2300, 179, 1840),         # data/README.md §2
    ("isolet", "class", 6238, 6238, 618, 1200),                # test = train (authors' script bug, A.2 #1)
])
def test_counts(name, label, train_rows, test_rows, d, pos_train):
    ds = D.load(name)
    assert ds.label == label and list(ds.train.columns)[-1] == label
    assert ds.train.shape == (train_rows, d) and len(ds.test) == test_rows
    assert int(ds.train[label].sum()) == pos_train
    assert set(ds.train[label].unique()) == {0, 1}


@pytest.mark.parametrize("name", ["cervical_cancer", "epileptic_seizure"])
def test_split_reproduces_authors_pickles(name):
    """The spec's cleaning + split reproduces the authors' published split exactly (values and dtypes)."""
    ds = D.load(name)
    for part, frame in (("train", ds.train), ("test", ds.test)):
        authors = pd.read_csv(D.DATA_DIR / name / "authors_split" / f"{part}_{name}.csv.gz")
        pd.testing.assert_frame_equal(frame, authors)


def test_table7_matches_paper():
    t = D.table7(("cervical_cancer", "isolet", "epileptic_seizure", "mnist"))
    for name in t.index:
        assert t.loc[name, "N (ours)"] == t.loc[name, "N (paper)"]
        assert abs(t.loc[name, "imbalance (ours)"] - t.loc[name, "imbalance (paper)"]) <= 1e-4
    # Cervical: the paper prints the raw width (36); the authors' code keeps 28 features + label.
    assert t.loc["cervical_cancer", "d (ours)"] == 29 and t.loc["cervical_cancer", "d (paper)"] == 36
    assert t.loc["isolet", "d (ours)"] == 618 and t.loc["epileptic_seizure", "d (ours)"] == 179


def test_isolet_real_test_split():
    ds = D.load("isolet", isolet_test="isolet5")
    assert len(ds.test) == 1559 and int(ds.test["class"].sum()) == 300


def test_credit_bundled_subset_warns():
    with pytest.warns(UserWarning, match="only the authors' 20% test split"):
        ds = D.load("credit")
    assert len(ds.train) + len(ds.test) == 56_962
    assert int(ds.train["Class"].sum() + ds.test["Class"].sum()) == 98
    assert str(ds.train["Class"].dtype) == "int16" and str(ds.train["V1"].dtype) == "float16"


def test_credit_rows_are_what_load_splits():
    """credit_rows gives the bundled rows in file order: the loader's split of them is the
    stratified 80/20 split at SPLIT_SEED, so an experiment that re-splits them at another seed
    changes only which rows land in the test split."""
    from sklearn.model_selection import train_test_split

    rows, full = D.credit_rows()
    assert not full and len(rows) == 56_962 and int(rows["Class"].sum()) == 98
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = D.load("credit")
    _, test = train_test_split(rows, test_size=0.2, stratify=rows["Class"], random_state=D.SPLIT_SEED)
    pd.testing.assert_frame_equal(test.reset_index(drop=True), ds.test)


def test_credit_user_file(tmp_path, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sub = D.load("credit").test
    full = sub.astype(float).assign(Time=0.0)
    path = tmp_path / "creditcard.csv"
    full.to_csv(path, index=False)
    runner.activate(replace(runner.current_options(), credit_csv=str(path)))  # as PATEGAN_AUDIT_CREDIT_CSV at an entry point
    ds = D.load("credit")
    assert len(ds.train) + len(ds.test) == len(sub) and ds.summary["N"] == len(sub)
    bad = tmp_path / "bad.csv"
    full.drop(columns=["V3"]).to_csv(bad, index=False)
    with pytest.raises(D.DataError, match="lacks columns"):
        D.load("credit", credit_path=bad)
    with pytest.raises(D.DataError, match="does not exist"):
        D.load("credit", credit_path=tmp_path / "nope.csv")


def test_mnist_counts():
    ds = D.load("mnist")
    assert ds.train.shape == (60_000, 785) and ds.test.shape == (10_000, 785)
    assert ds.train["label"].value_counts().sort_index().tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]


def test_subsample_is_stratified_and_deterministic():
    a = D.load("epileptic_seizure", subsample=1000)
    b = D.load("epileptic_seizure", subsample=1000)
    assert len(a.train) == 1000 and a.train.equals(b.train)
    assert int(a.train["y"].sum()) == 200 and len(a.test) == 2300


def test_bounds_and_worst_case():
    ds = D.load("cervical_cancer")
    assert ds.bounds["STDs_number"] == (0.0, 4.0)
    out, inn = D.worst_case("out"), D.worst_case("in")
    assert out.shape == (4, 3) and inn.shape == (5, 3) and inn.iloc[-1].tolist() == [1, 1, 1]
    assert (out.to_numpy() == 0).all()
    assert D.teachers_for(686) == 2 and D.teachers_for(9200) == 9 and D.teachers_for(227_845, ratio=5000) == 45


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown dataset 'adult'"):
        D.load("adult")
    with pytest.raises(ValueError, match="world must be"):
        D.worst_case("both")
    # altered file -> checksum error naming the file and the fix
    copy = tmp_path / "data"
    shutil.copytree(D.DATA_DIR / "cervical_cancer", copy / "cervical_cancer")
    target = copy / "cervical_cancer" / "data.csv.gz"
    target.write_bytes(target.read_bytes()[:-10])
    monkeypatch.setattr(D, "DATA_DIR", copy)
    with pytest.raises(D.DataError, match=r"cervical_cancer/data.csv.gz has SHA-256 .*git checkout"):
        D.load("cervical_cancer")
    target.unlink()
    D._checked.cache_clear()
    with pytest.raises(D.DataError, match="is missing"):
        D.load("cervical_cancer")
    D._checked.cache_clear()


def test_the_data_folder_is_a_run_option(tmp_path):
    """``RunOptions.data_dir`` (PATEGAN_AUDIT_DATA at an entry point) moves the data: the files are
    read from there, and checked against the same checksums."""
    copy = tmp_path / "data"
    shutil.copytree(D.DATA_DIR / "cervical_cancer", copy / "cervical_cancer")
    with runner.using(runner.RunOptions(data_dir=str(copy))):
        assert D.data_dir() == copy
        assert D.load("cervical_cancer").train.equals(D.load("cervical_cancer").train)
        (copy / "cervical_cancer" / "data.csv.gz").unlink()
        D._checked.cache_clear()
        with pytest.raises(D.DataError, match=f"missing under {copy}.*data_dir"):
            D.load("cervical_cancer")
    D._checked.cache_clear()
    assert D.load("cervical_cancer").train.shape == (686, 29)  # the default folder again


def test_data_readme_lists_every_checksum():
    """data/README.md documents each bundled file with the SHA-256 the loader checks."""
    from pathlib import Path

    from pategan_audit.datasets import CHECKSUMS

    text = (Path(__file__).resolve().parents[1] / "data" / "README.md").read_text()
    for relpath, digest in CHECKSUMS.items():
        assert f"`{relpath}` | `{digest}`" in text, relpath
