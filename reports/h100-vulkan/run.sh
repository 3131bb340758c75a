#!/usr/bin/env bash
# The real run of the cooperative-matrix family on the GPU machine (recipe:
# shared/DEVICE.md).  Carry .whl, .gl and .cache (pre-compiled modules).
#   bash reports/h100-vulkan/run.sh            (writes under $OUT)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
# the GLX ICD of nvidia_icd.json fails headless; the EGL library of the same driver works
# (found by the numerics room, reports/numerics/README.md)
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
export CTS_CACHE=$PWD/.cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 120 python3 reports/h100-vulkan/collect.py "$OUT" > "$OUT/collect.log" 2>&1; echo "collect rc=$?"
tail -5 "$OUT/collect.log"
start=$(date +%s)
timeout ${CASES_TIMEOUT:-360} python3 -m pytest cases/test_coop_matrix.py --backend vulkan -n ${WORKERS:-4} -q \
  -p no:cacheprovider --report-dir "$OUT/run" ${EXTRA:-} > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
tail -15 "$OUT/pytest.log"
