"""Many independent PATE-GANs trained as one batched computation (the replica axis).

Entry point: :func:`pategan_audit.implementations.fit_many`. Each preset family has a *replica
step* here that runs one training iteration of R replicas with stacked networks
(:mod:`.stack`), while the per-replica bookkeeping (streams, votes' noise, accountant, stopping,
traces) stays with each replica's model, driven through its public hooks by :mod:`.loop`. A
single fit (``model.fit``) is the same step at R = 1.
"""
from .loop import ReplicaStep, release_votes, record_seen, run_pate_replicas
from .stack import replica_slice, shape_signature, stack_draws, stack_modules, unstack_into

__all__ = ["ReplicaStep", "release_votes", "record_seen", "run_pate_replicas", "replica_slice", "shape_signature",
           "stack_draws", "stack_modules", "unstack_into"]
