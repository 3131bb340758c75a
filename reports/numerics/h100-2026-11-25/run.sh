#!/usr/bin/env bash
# Numerics fingerprint of the H100 refreshed with the random-tile selection (issue 25), on the GPU
# machine: the default command (targets = every float entry the device reports), 2000 tiles of each
# of mixed / wide / cancel data per target.  Carry .whl, .gl (shared/DEVICE.md) and .cache/coopmat.
#   bash reports/numerics/h100-2026-11-25/run.sh      (writes under $OUT)
set -u
. reports/h100-vulkan/setup.sh
export PATH=/tmp/site/cmeel.prefix/bin:$PATH LD_LIBRARY_PATH=/tmp/site/cmeel.prefix/lib
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
s=$(date +%s)
timeout 420 python3 -m cts numerics --backend vulkan --tiles 2000 --jobs 16 --out "$OUT" > "$OUT/numerics.log" 2>&1
echo "numerics rc=$? $(( $(date +%s) - s )) s"
grep -v '^|' "$OUT/numerics.log" | head -12
