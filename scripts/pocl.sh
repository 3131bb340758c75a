#!/usr/bin/env bash
# Prepare PoCL 6.0 (trixie; OpenCL 3.0 on the CPU: cl_intel_subgroups, cl_intel_subgroups_short,
# cl_intel_required_subgroup_size, cl_khr_subgroups, SPIR-V 1.0-1.2) beside a Debian 12 system,
# without changing the system's packages (scripts/cpu-opencl.sh says how).
#
#   bash scripts/pocl.sh DIR [PYTHON]
#
# Writes DIR/env.sh; `. DIR/env.sh` then sets OCL_ICD_VENDORS (PoCL only), POCL_CACHE_DIR and
# POCL_PYTHON, an interpreter that runs PYTHON's Python under Debian 13's glibc with PYTHON's
# site-packages and the checkout on PYTHONPATH:
#
#   . DIR/env.sh && "$POCL_PYTHON" -m pytest cases/test_intel_mma.py --backend opencl --device Portable \
#       --opencl-prelude builtin -n 2
#
# Exit 3: the Debian archive cannot be reached or the packages are missing (nothing judged).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: pocl.sh DIR [PYTHON]" >&2; exit 2; }
. "$(dirname "$0")/cpu-opencl.sh"
prepare_cpu_opencl pocl "$1" "${2:-python3}"
