# Two commands: `make book` (build the Jupyter Book) and `make test` (run the test suite).
# Both create .venv when missing and install the project into it first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: install lint test test-fast book book-smoke browser-test benchmarks archives venv-alt clean-book

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	@touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks
	$(BIN)/pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow and not browser" $(PYTEST_ARGS)

book: $(STAMP)
	$(BIN)/jupyter-book build book -W

book-smoke: $(STAMP)
	PATEGAN_AUDIT_PROFILE=smoke $(BIN)/jupyter-book build book -W

browser-test: $(STAMP)
	PATEGAN_AUDIT_BROWSER=1 $(BIN)/pytest -m browser tests/test_browser.py $(PYTEST_ARGS)

benchmarks: $(STAMP)
	$(BIN)/python benchmarks/train_speed.py
	$(BIN)/python benchmarks/audit_throughput.py
	$(BIN)/python benchmarks/many_models.py

# The committed large-profile runs (hours on 2 cores; resumable): results/archive/<name>/
archives: $(STAMP)
	$(BIN)/python -m pategan_audit.archive utility_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_querybased_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_querybased_controlled_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_groundhog_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_querybased_fixed_size_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_calibration_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_calibration_channels_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_corrected_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_gnmax_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_gnmax_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_sweep_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_tables_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_best25_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_ablation_querybased_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_targets_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive audit_ablation_groundhog_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_variants_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive utility_mnist_large --n-jobs 2
	$(BIN)/python -m pategan_audit.archive traces_paper --n-jobs 2
	# the sweep's points against the authors' records (no training; the scorecard's diagnoses read it)
	$(BIN)/python benchmarks/table4_differences.py --only sweep_mean_vs_records

# The marginal mechanisms (MST, AIM, PrivBayes: the `alternatives` extra, dpmm) in an environment of
# their own: dpmm pins numpy, pandas and scikit-learn below the main environment's versions
venv-alt:
	@test -x .venv-alt/bin/python || $(PYTHON) -m venv .venv-alt
	.venv-alt/bin/python -m pip install --quiet --upgrade pip
	.venv-alt/bin/python -m pip install --quiet -e '.[alternatives,test]'

clean-book:
	rm -rf book/_build book/*.ipynb book/.nbhash
