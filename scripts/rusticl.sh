#!/usr/bin/env bash
# Prepare Mesa rusticl 26 (trixie-backports; OpenCL 3.0 on llvmpipe: cl_khr_subgroup_rotate,
# SPV_KHR_subgroup_rotate, one subgroup size, 8) beside a Debian 12 system, without changing the
# system's packages (scripts/cpu-opencl.sh says how).
#
#   bash scripts/rusticl.sh DIR [PYTHON]
#
# Writes DIR/env.sh; `. DIR/env.sh` then sets OCL_ICD_VENDORS (rusticl only), RUSTICL_ENABLE=llvmpipe
# and RUSTICL_PYTHON, an interpreter that runs PYTHON's Python under Debian 13's glibc with PYTHON's
# site-packages and the checkout on PYTHONPATH:
#
#   . DIR/env.sh && "$RUSTICL_PYTHON" -m pytest cases/test_subgroup_rotate.py --backend opencl --device rusticl -n 2
#
# Exit 3: the Debian archive cannot be reached or the packages are missing (nothing judged).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: rusticl.sh DIR [PYTHON]" >&2; exit 2; }
. "$(dirname "$0")/cpu-opencl.sh"
prepare_cpu_opencl rusticl "$1" "${2:-python3}"
