#!/usr/bin/env bash
# One lease of an accelerator machine (16 cores, one GPU), prepared to fit in ~9 minutes:
#   1. the replica axis on the GPU (benchmarks/replicas_device.py), pinned to cores 0-1;
#   2. beside it, the GroundHog target selection (archive audit_targets_large) resumed from the
#      committed records on cores 2-15 (14 CPU workers), stopped at ARCHIVE_SECONDS; it saves
#      after every step, so what finished comes back under $OUT/archive and is copied into
#      results/archive by hand (the session's meta says device and cpus).
# Usage (on the device machine, repository root): OUT=/some/dir bash benchmarks/device_lease.sh
set -u
: "${OUT:?set OUT to the folder that comes back}"
ARCHIVE_SECONDS=${ARCHIVE_SECONDS:-480}
BENCH_SECONDS=${BENCH_SECONDS:-300}
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 PATEGAN_AUDIT_CACHE=/tmp/pategan-cache
PY=${PY:-python3}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia.txt" 2>&1
$PY -c "import torch, sklearn, pandas, scipy, joblib, tqdm; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
  | tee "$OUT/env.txt" || exit 1
mkdir -p "$OUT/archive"
cp -r results/archive/audit_targets_large "$OUT/archive/"
( PATEGAN_AUDIT_DEVICE=cpu timeout "$ARCHIVE_SECONDS" taskset -c 2-15 \
    $PY -m pategan_audit.archive audit_targets_large --n-jobs 14 --directory "$OUT/archive" > "$OUT/targets.log" 2>&1 ) &
timeout "$BENCH_SECONDS" taskset -c 0-1 $PY benchmarks/replicas_device.py --device cuda --out "$OUT/replicas_device.json" \
  > "$OUT/bench.log" 2>&1
tail -n 20 "$OUT/bench.log"
wait
tail -c 1500 "$OUT/targets.log"
$PY - "$OUT/archive/audit_targets_large/meta.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
print("targets:", m.get("candidates_done"), "of", len(m.get("candidates", [])), "sessions", len(m.get("sessions", [])))
EOF
