#!/usr/bin/env bash
# The MLIR family through upstream mlir-opt 22 -> SPIR-V -> Mesa 26 lavapipe (issue 18), on a 2-core Debian 12
# machine: the tools beside the system (scripts/mlir-tools.sh), the driver too (scripts/lavapipe.sh).
#   bash reports/lavapipe-mlir/run.sh
set -eu
export CTS_MLIR_TOOLS=$(bash scripts/mlir-tools.sh .cache/mlir)
bash scripts/lavapipe.sh .cache/lavapipe .venv/bin/python
. .cache/lavapipe/env.sh
D=reports/lavapipe-mlir
"$LVP_PYTHON" scripts/vulkan_facts.py $D --device llvmpipe > /dev/null
"$LVP_PYTHON" -m pytest cases/test_mlir_mma.py --backend vulkan --device llvmpipe -q -rs -n 2 -p no:cacheprovider \
  --expectations expectations/mlir-22-vulkan.txt --report-dir /tmp/lavapipe-mlir > $D/pytest.log 2>&1 || true
"$LVP_PYTHON" -m pytest tests/test_mlir_vulkan.py -v -rs -p no:cacheprovider > $D/mutants.log 2>&1
cp /tmp/lavapipe-mlir/report.* /tmp/lavapipe-mlir/results.csv $D/
cat /tmp/lavapipe-mlir/journal/*/*.jsonl | gzip > $D/journal.jsonl.gz
tail -1 $D/pytest.log $D/mutants.log
