#!/usr/bin/env bash
# The real run of the cooperative-matrix family on the GPU machine (recipe:
# shared/DEVICE.md).  Carry .whl, .gl and .cache/coopmat (pre-compiled modules).
#   bash reports/h100-vulkan/run.sh            (writes under $OUT)
# 1. device facts + element-to-invocation mapping (collect.py -> device.md)
# 2. the family, default profile, seed 1 (the report of this directory)
# 3. seed 2 with 512 subgroups per case (more data, same verdicts expected)
# 4. float MulAdd/chain/gemm under --tolerance-profile strict (round-to-nearest
#    assumed; the driver truncates, DEVICE.md: does the suite notice?)
# 5. SYCL joint_matrix through the cooperative-matrix path (cases/test_joint_matrix.py)
# 6. --device selection: a bad index is a one-line usage error, a name selects
set -u
. reports/h100-vulkan/setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 120 python3 reports/h100-vulkan/collect.py "$OUT" > "$OUT/collect.log" 2>&1; echo "collect rc=$?"
P="python3 -m pytest cases/test_coop_matrix.py --backend vulkan -p no:cacheprovider -q"
s=$(date +%s)
timeout 300 $P -n 6 --report-dir "$OUT/run" > "$OUT/pytest.log" 2>&1
echo "run rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/pytest.log)"
s=$(date +%s)
timeout 300 $P -n 1 --report-dir "$OUT/serial" > "$OUT/serial.log" 2>&1
echo "serial rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/serial.log)"
s=$(date +%s)
timeout 200 $P -n 8 --seed 2 --subgroups 512 --report-dir "$OUT/seed2" > "$OUT/seed2.log" 2>&1
echo "seed2 rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/seed2.log)"
s=$(date +%s)
timeout 120 $P -n 8 --tolerance-profile strict -k "muladd or chain or gemm" --subgroups 128 \
  --report-dir "$OUT/strict" > "$OUT/strict.log" 2>&1
echo "strict rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/strict.log)"
grep -E "FAILED on" "$OUT/strict.log" | head -20
s=$(date +%s)
timeout 200 python3 -m pytest cases/test_joint_matrix.py::test_joint_matrix_coop --backend vulkan -p no:cacheprovider \
  -q -rs -n 8 --report-dir "$OUT/joint" > "$OUT/joint.log" 2>&1
echo "joint rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/joint.log)"
$P --device 7 -k length > "$OUT/device7.log" 2>&1; echo "device 7 rc=$?: $(grep -i error $OUT/device7.log | head -2)"
$P --device H100 -k "length and C16x16-f32" > "$OUT/deviceH100.log" 2>&1; echo "device H100 rc=$?: $(tail -1 $OUT/deviceH100.log)"
# keep every journal (each run writes <report-dir>/journal/<run id>/*.jsonl): gzipped in place,
# `python -m cts report` reads *.jsonl.gz (an earlier version globbed one level too shallow and
# archived empty files)
find "$OUT" -path '*/journal/*' -name '*.jsonl' -exec gzip -9 {} +
# the machine returns at most 8 files: everything comes back as one archive (and pytest.log)
(cd "$OUT" && tar -czf /tmp/bundle.tgz --exclude pytest.log . && find . -mindepth 1 ! -name pytest.log -delete \
  && mv /tmp/bundle.tgz bundle.tgz)
