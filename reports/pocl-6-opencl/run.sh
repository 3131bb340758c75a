#!/usr/bin/env bash
# Recipe of this report (PoCL 6.0, Debian trixie, CPU device, 2-core Debian 12 machine), from the checkout root:
#   bash reports/pocl-6-opencl/run.sh
# The two pytest commands are CI's (.ci/run, "OpenCL on PoCL 6"), with a cold program cache.
set -euo pipefail
R=reports/pocl-6-opencl
bash scripts/pocl.sh .cache/pocl .venv/bin/python
. .cache/pocl/env.sh
"$POCL_PYTHON" -m cts devices --device Portable > $R/device.md
"$POCL_PYTHON" -m cts devices --device Portable --json > $R/device.json
rm -rf .cache/opencl-programs .cache/pocl/cache reports/ci-pocl-prelude reports/ci-pocl
# (CI runs these cases with pytest -n 2; the committed run used the suite's own sweep, which builds each
# program in one shard: 340 s against 368 s, same cases, same verdicts)
"$POCL_PYTHON" -m cts sweep -j 2 cases/test_intel_mma.py --backend opencl --device Portable --opencl-prelude builtin \
  -q -p no:cacheprovider --report-dir reports/ci-pocl-prelude --opencl-cache-dir .cache/opencl-programs \
  > $R/prelude.log 2>&1
"$POCL_PYTHON" -m pytest cases/test_subgroup_builtins.py cases/test_subgroup_rotate.py cases/test_spirv_intel_mma.py \
  --backend opencl --device Portable -n 2 -q -p no:cacheprovider -k "builtins or rotate or rejected" \
  --expectations expectations/pocl-6-opencl.txt --report-dir reports/ci-pocl --opencl-cache-dir .cache/opencl-programs \
  > $R/pytest.log 2>&1
# the built-ins without the expectations file: the defects' verdicts as they are (exit 1)
"$POCL_PYTHON" -m pytest cases/test_subgroup_builtins.py --backend opencl --device Portable -q -p no:cacheprovider \
  --no-report > $R/builtins-plain.log 2>&1 || true
"$POCL_PYTHON" $R/repro/sub_group_size_partial.py Portable > $R/repro/observed.txt 2>&1 || true
# the committed shape: report.md / report.html / results.csv, the journal as one gzip file
for d in ci-pocl:. ci-pocl-prelude:prelude; do
  src=reports/${d%%:*}; dest=$R/${d##*:}; mkdir -p $dest
  cp $src/report.md $src/report.html $src/results.csv $dest/
  cat $src/journal/*/*.jsonl | gzip -9 > $dest/journal.jsonl.gz
done
