"""Suite-wide setup: one torch/BLAS thread per test process.

Torch's default of one thread per core makes the many tiny networks of these tests much
slower on a 2-core machine under load (measured: 11 s vs 47 s for the preset tests)."""
from pategan_audit.runner import single_thread

single_thread()
