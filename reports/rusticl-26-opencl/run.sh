#!/usr/bin/env bash
# Recipe of this report (Mesa rusticl 26.1.6 on llvmpipe, 2-core Debian 12 machine), from the checkout root:
#   bash reports/rusticl-26-opencl/run.sh
set -euo pipefail
R=reports/rusticl-26-opencl
bash scripts/rusticl.sh .cache/rusticl .venv/bin/python
. .cache/rusticl/env.sh
"$RUSTICL_PYTHON" -m cts devices --device rusticl > $R/device.md
"$RUSTICL_PYTHON" -m cts devices --device rusticl --json > $R/device.json
rm -rf $R/run && mkdir -p $R/run
# the subgroup built-ins and rotate (OpenCL C + SPIR-V), then the MLIR rotate ops; cold program cache
"$RUSTICL_PYTHON" -m pytest cases/test_subgroup_builtins.py cases/test_subgroup_rotate.py cases/test_mlir_mma.py \
  --backend opencl --device rusticl -n 2 -q -p no:cacheprovider -k "builtins or subgroup_rotate or rotate" \
  --expectations expectations/rusticl-26-opencl.txt --report-dir $R/run --opencl-cache-dir off -rX \
  > $R/pytest.log 2>&1 || true
# the same without the expectations file: the built-in's verdict as it is
"$RUSTICL_PYTHON" -m pytest cases/test_subgroup_builtins.py --backend opencl --device rusticl -q -p no:cacheprovider \
  --no-report > $R/builtins-plain.log 2>&1 || true
"$RUSTICL_PYTHON" $R/repro/sub_group_size_partial.py rusticl > $R/repro/observed.txt 2>&1 || true
# the committed shape: report.md / report.html / results.csv at the top, the journal as one gzip file
for d in run prelude; do
  [ -d $R/$d ] || continue
  dest=$R; [ $d = prelude ] && dest=$R/prelude-report && mkdir -p $dest
  cp $R/$d/report.md $R/$d/report.html $R/$d/results.csv $dest/
  cat $R/$d/journal/*/*.jsonl | gzip -9 > $dest/journal.jsonl.gz
  rm -rf $R/$d
done
