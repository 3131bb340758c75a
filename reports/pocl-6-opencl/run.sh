#!/usr/bin/env bash
# Recipe of this report (PoCL 6.0 (Debian trixie), CPU device, 2-core Debian 12 machine), from the checkout root:
#   bash reports/pocl-6-opencl/run.sh
set -euo pipefail
R=reports/pocl-6-opencl
bash scripts/pocl.sh .cache/pocl .venv/bin/python
. .cache/pocl/env.sh
"$POCL_PYTHON" -m cts devices --device Portable > $R/device.md
"$POCL_PYTHON" -m cts devices --device Portable --json > $R/device.json
rm -rf $R/run && mkdir -p $R/run
# the Intel MMA families through the shipped prelude (cl_intel_subgroups), cold program cache
"$POCL_PYTHON" -m pytest cases/test_intel_mma.py --backend opencl --device Portable --opencl-prelude builtin -n 2 -q \
  -p no:cacheprovider --report-dir $R/prelude --opencl-cache-dir off > $R/prelude.log 2>&1 || true
# the subgroup built-ins (OpenCL C + SPIR-V), rotate (skips: no cl_khr_subgroup_rotate), SPIR-V capability rejection
"$POCL_PYTHON" -m pytest cases/test_subgroup_builtins.py cases/test_subgroup_rotate.py cases/test_spirv_intel_mma.py \
  --backend opencl --device Portable -n 2 -q -p no:cacheprovider -k "builtins or rotate or rejected" \
  --expectations expectations/pocl-6-opencl.txt --report-dir $R/run --opencl-cache-dir off > $R/pytest.log 2>&1 || true
# the same without the expectations file: the built-in's verdict as it is
"$POCL_PYTHON" -m pytest cases/test_subgroup_builtins.py --backend opencl --device Portable -q -p no:cacheprovider \
  --no-report > $R/builtins-plain.log 2>&1 || true
"$POCL_PYTHON" $R/repro/sub_group_size_partial.py Portable > $R/repro/observed.txt 2>&1 || true
# the committed shape: report.md / report.html / results.csv at the top, the journal as one gzip file
for d in run prelude; do
  [ -d $R/$d ] || continue
  dest=$R; [ $d = prelude ] && dest=$R/prelude-report && mkdir -p $dest
  cp $R/$d/report.md $R/$d/report.html $R/$d/results.csv $dest/
  cat $R/$d/journal/*/*.jsonl | gzip -9 > $dest/journal.jsonl.gz
  rm -rf $R/$d
done
