#!/usr/bin/env bash
# The MLIR family on the NVIDIA H100 (issue 18): through mlir-opt -> SPIR-V -> Vulkan and
# mlir-opt -> PTX -> CUDA, on the GPU machine (no package registry, no MLIR tools there).
# Prepared where mlir-opt is (CPU machine), then carried: .whl (vulkan, cffi, pycparser,
# cuda-bindings, cuda-pathfinder, pytest-timeout for Python 3.12), .gl (libvulkan1 + glvnd debs;
# shared/DEVICE.md) and .cache/h100-mlir, the lowered binaries and refusals made by
#   python scripts/mlir_prelower.py .cache/h100-mlir --vulkan-facts reports/h100-vulkan-rotate/device.json --cuda-chip sm_90
# (CTS_MLIR_CARRIED=1 runs only what that cache holds: a text it lacks is a harness error, never run).
#   bash reports/h100-mlir/run.sh        (writes under $OUT)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
export CTS_MLIR_CARRIED=1 CTS_CACHE_DIR=$PWD/.cache/h100-mlir
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 60 python3 scripts/vulkan_facts.py "$OUT" > "$OUT/facts.log" 2>&1; echo "facts rc=$?"
for b in vulkan cuda; do
  s=$(date +%s)
  timeout 280 python3 -m pytest cases/test_mlir_mma.py --backend $b -p no:cacheprovider -q -rs -n 8 \
    --expectations expectations/mlir-22-$b.txt --report-dir "$OUT/$b" > "$OUT/$b.log" 2>&1
  echo "$b rc=$? $(( $(date +%s) - s )) s: $(tail -1 "$OUT/$b.log")"
done
grep -h "FAILED\|^ERROR" "$OUT"/vulkan.log "$OUT"/cuda.log | head -30
for d in "$OUT"/*/journal; do cat "$d"/*/*.jsonl | gzip > "$d.jsonl.gz"; rm -rf "$d"; done
tar czf "$OUT/runs.tar.gz" -C "$OUT" vulkan cuda facts.log && rm -rf "$OUT"/{vulkan,cuda,facts.log}
ls -la "$OUT"
