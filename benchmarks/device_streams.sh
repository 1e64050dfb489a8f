#!/usr/bin/env bash
# One short lease of an accelerator machine for issue 40, items 2 and 3 (about 6 minutes; ITER, REPEATS,
# GRID, NEURAL_GRID, NEURAL_ITER and the *_SECONDS limits below size it):
#   1. the counter streams' device tests (tests/replicas/test_streams_device.py: the same words on
#      CPU and GPU, the same fit at R = 1, inside R = 512 and chunked, on the GPU and the CPU);
#   2. benchmarks/many_models.py --streams-grid on the GPU: GroundHog-shaped fits of `original`
#      (R = 1 ... 4,096) in both stream modes, same process, alternating; then the neural family;
#   3. with PROFILE=1, benchmarks/profile_counter_step.py's operator table of one counter group on the GPU.
# SRC: the package folder to import (default ./src).
# Each part has its own time limit, so one that fails or runs long leaves the rest their time;
# everything goes to $OUT (logs, JSON), which comes back.
# Usage (on the device machine, repository root): OUT=/some/dir bash benchmarks/device_streams.sh
set -u
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH="${SRC:-$PWD/src}" PYTHONUNBUFFERED=1 PATEGAN_AUDIT_CACHE="$OUT/cache"
PY=${PY:-python3}
ITER=${ITER:-50}
REPEATS=${REPEATS:-1}
GRID=${GRID:-1 16 64 256 1024 1600 4096}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia.txt" 2>&1
$PY -c "import torch, sklearn, pandas, scipy, pytest; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
  | tee "$OUT/env.txt" || exit 1
nproc >> "$OUT/env.txt"; cat /proc/loadavg >> "$OUT/env.txt"
start=$SECONDS
timeout "${TEST_SECONDS:-150}" $PY -m pytest -q -p no:cacheprovider tests/replicas/test_streams_device.py \
  ${TEST_ARGS:-} --durations=5 > "$OUT/tests.log" 2>&1
echo "tests rc $? in $((SECONDS - start)) s" | tee -a "$OUT/tests.log"; tail -n 12 "$OUT/tests.log"
start=$SECONDS
timeout "${GRID_SECONDS:-200}" $PY benchmarks/many_models.py --streams-grid $GRID \
  --scenarios groundhog --presets original --streams-iterations "$ITER" --streams-repeats "$REPEATS" --device cuda \
  --streams-out "$OUT/many_models_streams_cuda.json" > "$OUT/grid_original.log" 2>&1
echo "grid original rc $? in $((SECONDS - start)) s" | tee -a "$OUT/grid_original.log"; grep -E "R =|ratio" "$OUT/grid_original.log"
start=$SECONDS
timeout "${NEURAL_SECONDS:-120}" $PY benchmarks/many_models.py --streams-grid ${NEURAL_GRID:-1 64 1024} \
  --scenarios groundhog --presets borealis smartnoise --streams-iterations "${NEURAL_ITER:-20}" --streams-repeats "$REPEATS" --device cuda \
  --streams-out "$OUT/many_models_streams_cuda.json" > "$OUT/grid_neural.log" 2>&1
echo "grid neural rc $? in $((SECONDS - start)) s" | tee -a "$OUT/grid_neural.log"; grep -E "R =|ratio" "$OUT/grid_neural.log"
cat /proc/loadavg
if [ "${PROFILE:-0}" = 1 ]; then  # where a counter group's time goes on the GPU (operator table)
  timeout "${PROFILE_SECONDS:-120}" $PY benchmarks/profile_counter_step.py --device cuda --replicas 1600 --iterations 20 \
    --out "$OUT/profile_counter_step.txt" > "$OUT/profile.log" 2>&1
  echo "profile rc $?"; head -n 4 "$OUT/profile_counter_step.txt"
fi
