"""Regenerate the joint-beta reference values pinned in ``test_bounds.py``.

Run (slow: the library integrates in 2-D, roughly 1-5 minutes per table)::

    .venv/bin/python tests/auditing/joint_beta_reference.py

It prints ``(FP, TN, FN, TP): eps_lo`` from ``privacy_estimates`` 0.1.0.post1 (the package the
paper pins). The authors' ``code/utils/attack.py`` calls
``compute_eps_lo_hi(count, delta=1e-5, alpha=0.1, method="joint-beta")[0]``, whose lower end is
``Beta(count).eps_lo(delta=1e-5, alpha=0.05)``; we call that directly because
``compute_eps_lo_hi`` also computes the *upper* end and raises when it exceeds 10 (e.g. for
the D.7 table (0, 400, 356, 44)), which the authors' wrapper would record as -1.
"""
from __future__ import annotations

import sys
import time

TABLES = [  # (FP, TN, FN, TP)
    (0, 12, 0, 12),      # perfect attack, 12 test outputs per world (F.3: 2.71)
    (0, 400, 356, 44),   # updated / Querybased counts quoted in protocols spec D.7
    (2, 398, 330, 70),   # turing / GroundHog counts quoted in protocols spec D.7
    (3, 17, 5, 15),      # a small, noisy book-profile table
    (10, 190, 60, 140),  # a mid-sized table
]


def main(tables=TABLES) -> dict:
    from privacy_estimates import AttackResults
    from privacy_estimates.joint_density import Beta

    out = {}
    for fp, tn, fn, tp in tables:
        start = time.time()
        count = AttackResults(FN=fn, FP=fp, TN=tn, TP=tp)
        eps = Beta(count).eps_lo(delta=1e-5, alpha=0.1 / 2)
        out[(fp, tn, fn, tp)] = eps
        print(f"{(fp, tn, fn, tp)}: {eps!r}  ({time.time() - start:.0f} s)", flush=True)
    return out


if __name__ == "__main__":
    sel = [TABLES[int(i)] for i in sys.argv[1:]] or TABLES
    main(sel)
