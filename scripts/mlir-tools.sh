#!/usr/bin/env bash
# Make upstream MLIR 22's mlir-opt / mlir-translate (Debian's mlir-22-tools) usable on a system
# whose own archive lacks them (Debian 12: the package is in Debian 13 and needs glibc 2.38),
# without changing the system's packages.
#
#   bash scripts/mlir-tools.sh DIR
#
# Prints the folder to give the suite: `export CTS_MLIR_TOOLS=DIR/bin`.  Where the system has the
# package (`apt-get install mlir-22-tools`: /usr/lib/llvm-22/bin) nothing of this is needed.
# How: `apt-get download` (a private sources list and state; the Debian archive this machine
# already uses, suite trixie) of mlir-22-tools, libmlir-22, libllvm22 and the libraries they
# load; `dpkg -x` into DIR/root; DIR/bin/mlir-opt and DIR/bin/mlir-translate run the binaries
# through trixie's dynamic loader with trixie's libraries.  A second call with a ready DIR only
# re-checks it.  Exit 3: the archive cannot be reached or a package is missing.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: mlir-tools.sh DIR" >&2; exit 2; }
DIR=$(realpath -m "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$DIR/root
LIB=$ROOT/usr/lib/x86_64-linux-gnu
mkdir -p "$DIR"

ready() { "$DIR/bin/mlir-opt" --version >"$DIR/version.txt" 2>&1 && "$DIR/bin/mlir-translate" --version >/dev/null 2>&1; }
if ready; then echo "$DIR/bin"; exit 0; fi

rm -rf "$ROOT" "$DIR/debs" "$DIR/bin"
mkdir -p "$DIR/apt/lists/partial" "$DIR/debs" "$ROOT" "$DIR/bin"
. "$HERE/private-apt.sh"
private_apt mlir-tools trixie
cd "$DIR/debs"
NEEDS="mlir-22-tools libmlir-22 libllvm22 libc6 libstdc++6 libgcc-s1 libz3-4 libzstd1 zlib1g libedit2 libffi8
  libxml2 libtinfo6 libicu76 liblzma5 libbsd0 libmd0"
for p in $NEEDS; do "${APT[@]}" download "$p/trixie" || { echo "mlir-tools: cannot download $p" >&2; exit 3; }; done
for f in *.deb; do dpkg -x "$f" "$ROOT"; done
for tool in mlir-opt mlir-translate; do
  cat > "$DIR/bin/$tool" <<WRAP
#!/bin/sh
exec "$LIB/ld-linux-x86-64.so.2" --library-path "$LIB:$ROOT/usr/lib/llvm-22/lib" --argv0 $tool \\
  "$ROOT/usr/lib/llvm-22/bin/$tool" "\$@"
WRAP
  chmod +x "$DIR/bin/$tool"
done
cd "$DIR" && rm -rf "$DIR/debs" "$DIR/apt"
ready || { echo "mlir-tools: prepared in $DIR but mlir-opt does not start: $(cat "$DIR/version.txt")" >&2; exit 1; }
echo "$DIR/bin"
