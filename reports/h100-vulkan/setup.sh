# Set-up shared by run.sh and recheck.sh on the GPU machine (recipe: shared/DEVICE.md);
# sourced from the repository root.  Carry .whl, .gl and .cache/coopmat.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
# the GLX ICD of nvidia_icd.json fails headless; the EGL library of the same driver works
# (found by the numerics room, reports/numerics/README.md)
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"/usr/local/nvidia/lib64/libEGL_nvidia.so.0","api_version":"1.4.312"}}' > /tmp/nv_egl.json
export VK_DRIVER_FILES=/tmp/nv_egl.json
export CTS_CACHE=$PWD/.cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
