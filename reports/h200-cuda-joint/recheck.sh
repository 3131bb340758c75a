#!/usr/bin/env bash
# Second look on the GPU machine (same carry as run.sh): the whole joint_matrix module with
# --backend cuda (every architecture's row: the non-NVIDIA ones must skip with one line), seed 2,
# 128 tiles a case; and the CUDA numerics fingerprint on 10,000 random tiles per distribution.
#   bash reports/h200-cuda-joint/recheck.sh    (writes under $OUT)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
s=$(date +%s)
timeout 280 python3 -m pytest cases/test_joint_matrix.py --backend cuda -p no:cacheprovider -q -rs -n 8 \
  --seed 2 --subgroups 128 --report-dir "$OUT/seed2" > "$OUT/seed2.log" 2>&1
echo "seed2 rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/seed2.log")"
grep -E "FAILED|^ERROR" "$OUT/seed2.log" | head -20
s=$(date +%s)
timeout 250 python3 -m cts numerics --backend cuda --tiles 10000 --jobs 16 --out "$OUT/numerics10k" \
  > "$OUT/numerics10k.log" 2>&1
echo "numerics rc=$? $(( $(date +%s) - s )) s"; grep -E "^[a-z0-9]+\*" "$OUT/numerics10k.log"
cp "$OUT/numerics10k/fingerprint.md" "$OUT/fingerprint-cuda-10k.md" 2>/dev/null
for d in "$OUT"/*/journal; do [ -d "$d" ] && cat "$d"/*/*.jsonl | gzip > "$d.jsonl.gz" && rm -rf "$d"; done
(cd "$OUT" && tar czf recheck.tar.gz seed2 numerics10k numerics10k.log && rm -rf seed2 numerics10k numerics10k.log)
ls -la "$OUT"
