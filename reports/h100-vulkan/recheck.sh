#!/usr/bin/env bash
# Re-check of the final tree on the GPU machine (same set-up as run.sh): the
# cooperative-matrix family, joint_matrix through it, the numerics model tier
# (pytest) and the --device errors.  Writes summaries under $OUT.
set -u
. reports/h100-vulkan/setup.sh
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
