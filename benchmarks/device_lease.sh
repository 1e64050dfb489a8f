#!/usr/bin/env bash
# One lease of an accelerator machine (16 cores, one GPU), prepared to fit in ~9 minutes:
#   1. the replica axis on the GPU (benchmarks/replicas_device.py), pinned to cores 0-1;
#   2. beside it, a resumable archive (ARCHIVE, default the GroundHog target selection
#      audit_targets_large; ARCHIVE_ARGS e.g. "--only borealis") resumed from the committed
#      records on cores 2-15 (14 CPU workers), stopped at ARCHIVE_SECONDS; it saves after every
#      step, so what finished comes back under $OUT/archive and is copied into results/archive by
#      hand (the session's meta says device and cpus; set its git_commit from the source hash if
#      the machine's copy carried older git metadata).
#   ARCHIVE_DEVICE=cuda fits the archive's models on the GPU (fit_many's $PATEGAN_AUDIT_DEVICE);
#   if that run fails within its first FALLBACK_SECONDS it is rerun on the CPU for the time left.
#   BENCH=0 skips the benchmark and gives the archive all cores.
#   PYDEPS: a folder of extra packages put on PYTHONPATH (the utility archives need xgboost, which
#   the device lacks: carry .venv/lib/python3.11/site-packages/xgboost and xgboost_cpu.libs and pass
#   PYDEPS=.venv/lib/python3.11/site-packages).
# Usage (on the device machine, repository root): OUT=/some/dir bash benchmarks/device_lease.sh
# Session 13 (H200): 7 target candidates in 297 s beside the benchmark. Session 20 (H200, BENCH=0):
# 14 Credit cells of utility_sweep_large in 290 s. Session 21 (H200, BENCH=0, utility_variants_large
# --only smartnoise,updated): 1 of 14 cells in 520 s (Credit updated P, single-class); a cell runs on one
# worker, and scoring twelve classifiers on an Epileptic cell's four two-class tables takes longer than a
# lease (smartnoise at k = 2 here: 33 iterations, 2 s of fitting, 4 and 6 min for its first two tables on
# one core beside CI); the snapshot tarball exceeded the 16 MiB that comes back.
set -u
: "${OUT:?set OUT to the folder that comes back}"
ARCHIVE=${ARCHIVE:-audit_targets_large}
ARCHIVE_ARGS=${ARCHIVE_ARGS:-}
ARCHIVE_SECONDS=${ARCHIVE_SECONDS:-480}
BENCH_SECONDS=${BENCH_SECONDS:-300}
ARCHIVE_DEVICE=${ARCHIVE_DEVICE:-cpu}
BENCH=${BENCH:-1}
FALLBACK_SECONDS=${FALLBACK_SECONDS:-120}
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 PATEGAN_AUDIT_CACHE="$PWD/results/cache"
PY=${PY:-python3}
[ -n "${PYDEPS:-}" ] && export PYTHONPATH="$PYTHONPATH:$PWD/$PYDEPS"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia.txt" 2>&1
$PY -c "import torch, sklearn, pandas, scipy, joblib, tqdm; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
  | tee "$OUT/env.txt" || exit 1
if [ -n "${PYDEPS:-}" ]; then
  $PY -c "import xgboost; print('xgboost', xgboost.__version__)" | tee -a "$OUT/env.txt" || exit 1
fi
mkdir -p "$OUT/archive"
[ -d "results/archive/$ARCHIVE" ] && cp -r "results/archive/$ARCHIVE" "$OUT/archive/"
if [ "$BENCH" = 1 ]; then CORES=2-15 JOBS=14; else CORES=0-15 JOBS=16; fi
archive() {  # archive DEVICE SECONDS LOG
  PATEGAN_AUDIT_DEVICE="$1" timeout "$2" taskset -c "$CORES" \
    $PY -m pategan_audit.archive "$ARCHIVE" $ARCHIVE_ARGS --n-jobs "$JOBS" --directory "$OUT/archive" > "$3" 2>&1
}
(
  start=$SECONDS
  archive "$ARCHIVE_DEVICE" "$ARCHIVE_SECONDS" "$OUT/archive.log"; rc=$?
  used=$((SECONDS - start))
  if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$ARCHIVE_DEVICE" != cpu ] && [ "$used" -lt "$FALLBACK_SECONDS" ]; then
    echo "archive on $ARCHIVE_DEVICE failed (rc $rc) after ${used} s; rerunning on the CPU" | tee -a "$OUT/archive.log"
    archive cpu "$((ARCHIVE_SECONDS - used))" "$OUT/archive_cpu.log"
  fi
) &
if [ "$BENCH" = 1 ]; then
  timeout "$BENCH_SECONDS" taskset -c 0-1 $PY benchmarks/replicas_device.py --device cuda --agreement-presets original updated synthcity turing corrected borealis smartnoise --out "$OUT/replicas_device.json" \
    > "$OUT/bench.log" 2>&1
  tail -n 20 "$OUT/bench.log"
fi
wait
[ -f "$OUT/archive_cpu.log" ] && tail -c 1500 "$OUT/archive_cpu.log"
tail -c 1500 "$OUT/archive.log"
# unfinished cells' snapshots nest too deep to come back as files: one tarball instead
# (tar -xzf snapshots.tar.gz -C results/archive/$ARCHIVE to resume them here)
if [ -d "$OUT/archive/$ARCHIVE/snapshots" ]; then
  tar -czf "$OUT/snapshots.tar.gz" -C "$OUT/archive/$ARCHIVE" snapshots && rm -rf "$OUT/archive/$ARCHIVE/snapshots"
fi
$PY - "$OUT/archive/$ARCHIVE/meta.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
print(m["name"], m.get("runs"), "complete" if m.get("complete") else "incomplete", "sessions", len(m.get("sessions", [])))
EOF
