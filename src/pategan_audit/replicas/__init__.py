"""Many independent PATE-GANs trained as one batched computation (the replica axis).

Entry point: :func:`pategan_audit.implementations.fit_many`. Each preset family has a *replica
step* here that runs one training iteration of R replicas with stacked networks
(:mod:`.stack`), while the per-replica bookkeeping (streams, votes' noise, accountant, stopping,
traces) stays with each replica's model, driven through its public hooks by :mod:`.loop`. A
single fit (``model.fit``) is the same step at R = 1.

``loop`` (the loop over iterations and its hooks), ``stack`` (the replica axis of networks and
optimisers), one step per family: ``neural`` (borealis, smartnoise, corrected), ``updated``,
``synthcity``, ``gnmax``, ``wgan`` (original, turing); ``streams`` (the opt-in counter streams),
``checkpoint`` (stop and resume to the same numbers).
"""
from .loop import ReplicaStep, release_votes, record_seen, run_pate_replicas
from .stack import replica_slice, shape_signature, stack_draws, stack_modules, unstack_into

__all__ = ["ReplicaStep", "release_votes", "record_seen", "run_pate_replicas", "replica_slice", "shape_signature",
           "stack_draws", "stack_modules", "unstack_into"]
