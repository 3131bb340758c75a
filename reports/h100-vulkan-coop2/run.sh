#!/usr/bin/env bash
# The NV cooperative matrix 2 family (cases/test_coop_matrix2.py) on the GPU machine.
# Recipe: shared/DEVICE.md and reports/h100-vulkan/setup.sh (same wheels and loader).
# The device runs a copy of the main checkout; the branch under test travels as a
# snapshot in an ignored folder of it:
#   rsync -a --exclude .git --exclude .venv --exclude .cache --exclude reports <worktree>/ /work/main/.cache/h-coop2/
#   run: bash .cache/h-coop2/reports/h100-vulkan-coop2/run.sh   carry: .whl .gl .cache/h-coop2
# Writes to $OUT: nvidia-smi.txt, coop2.json (features, properties, flexible-dimension
# entries as the driver reports them), pytest.log, report.md/html, results.csv, journal.jsonl, seed2.log.
set -u
ROOT=$PWD
SNAP=${SNAP:-$ROOT/.cache/h-coop2}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$ROOT"/.whl/*.whl 2>/dev/null
for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
cd "$SNAP" || exit 1
export PYTHONPATH=/tmp/site:$PWD CTS_CACHE=/tmp/cts-cache
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 60 python3 - > "$OUT/coop2.json" 2>"$OUT/coop2.err" <<'PY'
import json
from cts.backends.vulkan import VulkanBackend
b = VulkanBackend.from_options()
p = b.coop2_props()
d = b.describe().as_dict()
print(json.dumps({"device": d["name"], "driver": d["driver"], "version": d["version"],
                  "coop2": b.info.extra.get("coop2"), "coop_properties": b.info.extra.get("coop_properties"),
                  "subgroup": b.info.extra.get("subgroup"), "source": p.source}, indent=1))
PY
echo "coop2.json rc=$?: $(head -c 300 "$OUT/coop2.json")"
s=$(date +%s)
timeout 400 python3 -m pytest cases/test_coop_matrix2.py --backend vulkan -p no:cacheprovider -q -rs -n 8 \
  --report-dir "$OUT/run" > "$OUT/pytest.log" 2>&1
echo "run rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/pytest.log")"
grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -40
s=$(date +%s)  # a second seed: other data, same verdicts expected
timeout 200 python3 -m pytest cases/test_coop_matrix2.py --backend vulkan -p no:cacheprovider -q -n 8 --seed 2 \
  --report-dir /tmp/seed2 > "$OUT/seed2.log" 2>&1
echo "seed2 rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/seed2.log")"
cp "$OUT"/run/report.md "$OUT"/run/report.html "$OUT"/run/results.csv "$OUT"/ 2>/dev/null
find "$OUT/run" -name "*.jsonl" -exec cat {} + > "$OUT/journal.jsonl" 2>/dev/null
rm -rf "$OUT/run"
[ -s "$OUT/coop2.err" ] || rm -f "$OUT/coop2.err"
