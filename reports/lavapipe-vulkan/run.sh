#!/usr/bin/env bash
# The Vulkan families on Mesa 26 lavapipe (a real Vulkan driver on the CPU), on any Debian 12 x86 machine.
#   bash reports/lavapipe-vulkan/run.sh [OUT]      (default OUT: reports/lavapipe-vulkan)
set -euo pipefail
OUT=${1:-reports/lavapipe-vulkan}
s=$(date +%s); bash scripts/lavapipe.sh .cache/lavapipe .venv/bin/python; echo "prepare: $(( $(date +%s) - s )) s"
. .cache/lavapipe/env.sh
"$LVP_PYTHON" scripts/vulkan_facts.py "$OUT" --device llvmpipe > /dev/null
s=$(date +%s)
"$LVP_PYTHON" -m pytest cases/test_coop_matrix.py cases/test_subgroup_rotate.py --backend vulkan --device llvmpipe \
  -n 2 -q -rs -p no:cacheprovider --report-dir "$OUT/run" > "$OUT/pytest.log" 2>&1 || true
echo "sweep: $(( $(date +%s) - s )) s: $(tail -1 "$OUT/pytest.log")"
CTS_VULKAN_DEVICE=llvmpipe "$LVP_PYTHON" -m pytest tests/test_rotate_vulkan.py -v -rP -p no:cacheprovider \
  > "$OUT/mutants.log" 2>&1 || true
echo "mutants: $(tail -1 "$OUT/mutants.log")"
cat "$OUT"/run/journal/*/*.jsonl | gzip > "$OUT/journal.jsonl.gz"
mv "$OUT"/run/report.md "$OUT"/run/report.html "$OUT"/run/results.csv "$OUT"/ && rm -rf "$OUT/run"
