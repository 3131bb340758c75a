#!/usr/bin/env bash
# Re-check of the final tree on the GPU machine (same set-up as run.sh): the
# cooperative-matrix family, joint_matrix through it, the numerics model tier
# (pytest) and the --device errors.  Writes summaries under $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
export CTS_CACHE=$PWD/.cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
P="python3 -m pytest --backend vulkan -p no:cacheprovider -q"
run() { local name=$1; shift; local s; s=$(date +%s)
  timeout 300 $P "$@" --report-dir "$OUT/$name" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/$name.log")"; }
run coop cases/test_coop_matrix.py -n 8
run joint cases/test_joint_matrix.py::test_joint_matrix_coop -n 8 -rs
run joint-strict cases/test_joint_matrix.py::test_joint_matrix_coop -n 8 --tolerance-profile strict
run numerics cases/test_numerics_model.py --tiers model -n 4 -rs
$P cases/test_coop_matrix.py --device nosuch --no-report > "$OUT/device-nosuch.log" 2>&1
echo "device nosuch rc=$?: $(cat "$OUT/device-nosuch.log" | head -2)"
for d in "$OUT"/*/journal; do cat "$d"/*.jsonl > "$d.jsonl"; rm -rf "$d"; done
