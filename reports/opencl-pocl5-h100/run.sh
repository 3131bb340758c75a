#!/usr/bin/env bash
# Every family on the GPU machine's PoCL 5.0 CPU device (a real OpenCL driver with
# cl_intel_subgroups; shared/DEVICE.md).  Carry .whl.   OUT=... bash reports/opencl-pocl5-h100/run.sh
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
timeout 60 python3 -m cts devices > "$OUT/devices.txt" 2>&1; echo "devices rc=$?"
grep -E "^\[|Platform|Device|platform|device" "$OUT/devices.txt" | head -8
P="python3 -m pytest -p no:cacheprovider --backend opencl --device Portable -q -rs --timeout 120 --opencl-cache-dir /tmp/clc"
s=$(date +%s)
timeout 280 $P cases -n 12 --report-dir "$OUT/plain" > "$OUT/plain.log" 2>&1
echo "all families, no prelude: rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/plain.log)"
s=$(date +%s)
timeout 200 $P cases/test_intel_mma.py cases/test_mlir_mma.py -n 12 --opencl-prelude builtin --report-dir "$OUT/prelude" > "$OUT/prelude.log" 2>&1
echo "Intel + MLIR with the shipped prelude: rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/prelude.log)"
for d in "$OUT"/*/journal; do cat "$d"/*.jsonl > "$d.jsonl"; rm -rf "$d"; done
for f in plain prelude; do grep -E "^SKIPPED" "$OUT/$f.log" | sed -E 's/SKIPPED \[[0-9]+\] [^ ]+ //' | sort | uniq -c | sort -rn | head -12; done
