import os

# One BLAS thread in the harness processes (before numpy is imported): the suite's matrices are far
# below BLAS's threading sizes, xdist workers then do not start workers x cores BLAS threads, and a
# process with no other thread may build its report in forked children (cts/report/aside.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

pytest_plugins = ["cts.plugin"]
