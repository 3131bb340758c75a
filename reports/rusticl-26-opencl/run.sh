#!/usr/bin/env bash
# Recipe of this report (Mesa rusticl 26.1.6 on llvmpipe, 2-core Debian 12 machine), from the checkout root:
#   bash reports/rusticl-26-opencl/run.sh
# The two pytest commands are CI's (.ci/run, "OpenCL on Mesa rusticl 26"), with a cold program cache.
set -euo pipefail
R=reports/rusticl-26-opencl
bash scripts/rusticl.sh .cache/rusticl .venv/bin/python
. .cache/rusticl/env.sh
"$RUSTICL_PYTHON" -m cts devices --device rusticl > $R/device.md
"$RUSTICL_PYTHON" -m cts devices --device rusticl --json > $R/device.json
rm -rf .cache/opencl-programs reports/ci-rusticl reports/ci-rusticl-mlir-rotate
CTS_ROTATE_SPIRV_VECTORS=1 "$RUSTICL_PYTHON" -m pytest cases/test_subgroup_builtins.py cases/test_subgroup_rotate.py --backend opencl \
  --device rusticl -n 2 -q -p no:cacheprovider --expectations expectations/rusticl-26-opencl.txt \
  --report-dir reports/ci-rusticl --opencl-cache-dir .cache/opencl-programs > $R/pytest.log 2>&1
"$RUSTICL_PYTHON" -m pytest cases/test_mlir_mma.py --backend opencl --device rusticl -n 2 -q -k rotate \
  -p no:cacheprovider --report-dir reports/ci-rusticl-mlir-rotate --opencl-cache-dir .cache/opencl-programs \
  > $R/mlir-rotate.log 2>&1
# the built-ins without the expectations file: the defect's verdict as it is (exit 1)
"$RUSTICL_PYTHON" -m pytest cases/test_subgroup_builtins.py --backend opencl --device rusticl -q -p no:cacheprovider \
  --no-report > $R/builtins-plain.log 2>&1 || true
"$RUSTICL_PYTHON" $R/repro/sub_group_size_partial.py rusticl > $R/repro/observed.txt 2>&1 || true
# the committed shape: report.md / report.html / results.csv, the journal as one gzip file
for d in ci-rusticl:. ci-rusticl-mlir-rotate:mlir-rotate; do
  src=reports/${d%%:*}; dest=$R/${d##*:}; mkdir -p $dest
  cp $src/report.md $src/report.html $src/results.csv $dest/
  cat $src/journal/*/*.jsonl | gzip -9 > $dest/journal.jsonl.gz
done
