"""Work done by a forked child while this process goes on (the sweep
launcher builds the HTML report in a child while it writes the markdown
and CSV).

Only where this process has no other OS thread: a fork copies only the
calling thread, and a lock another thread held would stay held in the
child forever.  The launcher makes that so (one BLAS thread,
``OPENBLAS_NUM_THREADS=1``, set before numpy is imported); a pytest
process usually has more (numpy's BLAS workers, xdist's I/O threads), so
there the work is done in line."""

from __future__ import annotations

import os

__all__ = ["aside", "one_thread"]


def one_thread() -> bool:
    """This process has no other OS thread (Linux ``/proc``; elsewhere: False)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            return any(ln.split() == ["Threads:", "1"] for ln in fh)
    except OSError:
        return False


def aside(fn, *args):
    """``fn(*args)`` (a str) computed by a forked child; returns the getter
    of its value.  In line where this process has another thread or fork
    fails.  A child that fails hands the work back: the getter then
    computes it here, so an error is raised by this process, as without
    the child."""
    if not one_thread():
        value = fn(*args)
        return lambda: value
    try:
        r, w = os.pipe()
        pid = os.fork()
    except (OSError, AttributeError):
        value = fn(*args)
        return lambda: value
    if pid == 0:  # the child: compute, send, leave without the parent's exit handlers
        code = 1
        try:
            os.close(r)
            data = fn(*args).encode("utf-8")
            with os.fdopen(w, "wb") as fh:
                fh.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def get() -> str:
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(pid, 0)
        return data.decode("utf-8") if os.waitstatus_to_exitcode(status) == 0 else fn(*args)

    return get
