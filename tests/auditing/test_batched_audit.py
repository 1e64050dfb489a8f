"""An audit with batched shadow models (fit_many) measures what the same audit with one fit
per shadow model measures (issue: replica axis, equivalence item 3): 200 models per world."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pategan_audit.auditing.audit import run_setting
from pategan_audit.auditing.profiles import get_profile
from pategan_audit.auditing.settings import AuditSetting
from pategan_audit.runner import RunOptions


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["updated", "borealis"])
def test_epsilon_emp_of_batched_audit_equals_single_fit_audit(preset):
    profile = dataclasses.replace(get_profile("book"), name="equivalence-200", n_per_world=200,
                                  querybased_iterations=20, iteration_caps=(), methods=("clopper_pearson",))
    setting = AuditSetting("querybased", preset, iterations=20)
    batched = run_setting(setting, profile, options=RunOptions(n_jobs=1), cache_namespace=None, batched=True)[0]
    single = run_setting(setting, profile, options=RunOptions(n_jobs=1), cache_namespace=None, batched=False)[0]
    # the shadow models' released tables are the same (equal features), hence the same attack
    # and the same epsilon_emp; equality is stronger than "within the confidence interval"
    assert batched["outputs_digest"] == single["outputs_digest"]
    for key in ("epsilon_emp", "auc", "tpr", "fpr"):
        if key in batched:
            assert np.isclose(batched[key], single[key], equal_nan=True), key
