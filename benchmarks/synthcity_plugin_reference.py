"""Reference numbers from the real synthcity 0.2.12 ``pategan`` plugin (project issue #13).

Regenerates ``tests/implementations/data/synthcity_plugin_reference.json``, which
``tests/implementations/test_synthcity_plugin.py`` checks the ``synthcity`` preset's plugin
variant (``PLUGIN_OVERRIDES``) against. It needs the real library, which the project venv does
not have (synthcity pins ``torch<2.3`` and ``numpy<2``), so run it from a **separate venv**
(``.venv-synthcity``, git-ignored), made like this (seen working with Python 3.11 on CPU)::

    python3 -m venv .venv-synthcity
    .venv-synthcity/bin/pip install torch==2.13.0          # any recent torch: the pin is overridden
    .venv-synthcity/bin/pip install --no-deps synthcity==0.2.12
    .venv-synthcity/bin/pip install 'numpy<2' 'pandas>=2.1,<3' 'scikit-learn>=1.2' scipy \\
        'pydantic>=2' loguru tqdm tenacity cloudpickle importlib-metadata 'xgboost<3' optuna \\
        pillow torchvision opacus monai tsai shap geomloss 'lifelines<0.30' torchtuples pycox \\
        xgbse redis
    .venv-synthcity/bin/pip uninstall -y pyarrow            # pulled in by one of the above; needs numpy 2

(``synthcity/__init__`` imports most of the plugin zoo, hence the long list; ``torchvision``
replaces torch 2.13.0 by the matching 2.14.1.) Then, from the repository root::

    PYTHONPATH=src nice -n 5 .venv-synthcity/bin/python benchmarks/synthcity_plugin_reference.py

It loads the Cervical Cancer training split with the project's own loader (pure pandas /
scikit-learn, so it imports in that venv too), fits ``Plugins().get("pategan", ...)`` exactly as
a user would (only ``n_iter`` lowered, and ``epsilon`` = 1) for three ``random_state`` values,
and records per seed, read off the library by wrapping (not changing) its methods:

* ``charged`` / ``queries`` / ``skipped_batches`` per iteration: the rows passed to
  ``PATEGAN._update_alpha`` (the moments-accountant update, i.e. what is charged), all rows the
  teachers labelled (``Teachers.pate_lamda``), and the batches the O4 rule did not charge;
* ``eps_hat`` per iteration, as the library logs it (``[pategan it i] epsilon_hat = ...``);
* ``rows_per_epoch``: ``len(ConditionalDatasetSampler._train_idx)`` (the rows one "epoch" visits);
* ``delta``, ``num_teachers``, ``samples_per_teacher``;
* a digest of the trained generator's weights and of ``generate(50, random_state=0)``, to tell
  whether the seeds give different models.

Besides, ``rows_per_epoch_over_seeds``: M for ``SAMPLER_SEEDS`` seeds of the global NumPy state,
building only the data sampler (``ConditionalDatasetSampler`` on the fitted encoder's output, as
``TabularGAN`` does), to compare the law of M with the preset's ``data_sampler="upstream"``.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parents[1] / "tests" / "implementations" / "data" / "synthcity_plugin_reference.json"
SEEDS = (0, 1, 2)
N_ITER = 20  # the plugin's default is 200; the ε = 1 budget stops it after a handful of iterations
EPSILON = 1.0
SAMPLER_SEEDS = 200


def main() -> None:
    torch.set_num_threads(1)
    from importlib.metadata import version

    import synthcity.logger as sc_log
    from synthcity.plugins import Plugins
    from synthcity.plugins.privacy import plugin_pategan as pg
    from synthcity.utils import samplers

    from pategan_audit.datasets import load

    df = load("cervical_cancer").train
    state: dict = {}

    def on_teachers_fit(orig):
        def wrapped(self, X, generator):
            state["charged"].append(0)
            state["queries"].append(0)
            state["skipped"].append(0)
            return orig(self, X, generator)
        return wrapped

    def on_pate_lamda(orig):
        def wrapped(self, x):
            n0, n1, out = orig(self, x)
            state["queries"][-1] += int(len(out))
            if np.sum(out) >= len(out) / 2:  # the plugin's O4 rule: zeroed and not charged
                state["skipped"][-1] += 1
            return n0, n1, out
        return wrapped

    def on_update_alpha(orig):
        def wrapped(self, n0, n1):
            state["charged"][-1] += int(len(n0))
            return orig(self, n0, n1)
        return wrapped

    def on_sampler_init(orig):
        def wrapped(self, *args, **kwargs):
            orig(self, *args, **kwargs)
            state["rows_per_epoch"] = int(len(self._train_idx))
        return wrapped

    def on_info(orig):
        def wrapped(msg, *args, **kwargs):
            m = re.match(r"\[pategan it (\d+)\] epsilon_hat = (\S+)\.", str(msg))
            if m:
                state["eps_hat"].append(float(m.group(2)))
            return orig(msg, *args, **kwargs)
        return wrapped

    pg.Teachers.fit = on_teachers_fit(pg.Teachers.fit)
    pg.Teachers.pate_lamda = on_pate_lamda(pg.Teachers.pate_lamda)
    pg.PATEGAN._update_alpha = on_update_alpha(pg.PATEGAN._update_alpha)
    samplers.ConditionalDatasetSampler.__init__ = on_sampler_init(samplers.ConditionalDatasetSampler.__init__)
    sc_log.info = on_info(sc_log.info)

    runs = []
    workspace = Path(tempfile.mkdtemp())  # the plugin makes its (unused) workspace folder; keep it out of the repo
    for seed in SEEDS:
        state.clear()
        state.update(charged=[], queries=[], skipped=[], eps_hat=[])
        plugin = Plugins().get("pategan", n_iter=N_ITER, epsilon=EPSILON, random_state=seed, workspace=workspace)
        plugin.fit(df)
        model = plugin.model
        weights = hashlib.sha256(b"".join(p.detach().cpu().numpy().tobytes()
                                          for p in model.model.model.generator.parameters())).hexdigest()
        sample = plugin.generate(50, random_state=0).dataframe()
        runs.append({
            "seed": seed,
            "iterations": len(state["eps_hat"]),
            "rows_per_epoch": state["rows_per_epoch"],
            "charged": state["charged"],
            "queries": state["queries"],
            "skipped_batches": state["skipped"],
            "eps_hat": state["eps_hat"],
            "delta": float(model.delta),
            "num_teachers": int(model.n_teachers),
            "samples_per_teacher": int(model.samples_per_teacher),
            "generator_sha256": weights,
            "sample_sha256": hashlib.sha256(sample.to_csv(index=False).encode()).hexdigest(),
        })
        print(json.dumps(runs[-1]), flush=True)

    encoder = plugin.model.model.encoder  # the last plugin's; the encoder is seed-free (random_state=0)
    encoded = encoder.transform(df)
    rows_over_seeds = []
    for seed in range(SAMPLER_SEEDS):
        np.random.seed(seed)
        rows_over_seeds.append(int(len(samplers.ConditionalDatasetSampler(encoded, encoder.layout())._train_idx)))

    ref = {
        "source": f"synthcity {version('synthcity')} Plugins().get('pategan', n_iter={N_ITER}, epsilon={EPSILON}, "
                  "random_state=seed).fit(cervical_cancer train split), other arguments at their defaults",
        "library_versions": {"synthcity": version("synthcity"), "torch": torch.__version__, "numpy": np.__version__,
                             "python": sys.version.split()[0]},
        "dataset": "cervical_cancer",
        "n_rows": int(len(df)),
        "n_iter": N_ITER,
        "epsilon": EPSILON,
        "lamda": 1e-3,
        "alpha": 100,
        "generator_n_iter": 10,
        "batch_size": 200,
        "runs": runs,
        "rows_per_epoch_over_seeds": rows_over_seeds,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(ref, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
