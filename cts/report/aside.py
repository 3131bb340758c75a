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

import faulthandler
import os
import signal

__all__ = ["aside", "one_thread"]


def one_thread() -> bool:
    """This process has no other OS thread (Linux ``/proc``; elsewhere: False)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            return any(ln.split() == ["Threads:", "1"] for ln in fh)
    except OSError:
        return False


class _Result:
    """The getter of work done aside: call it for the value (the child's,
    or computed here if the child failed or could not be waited for);
    ``discard()`` ends and reaps a child whose value is no longer wanted
    (the caller failed before asking for it), so no child is left blocked
    writing into a pipe nobody reads."""

    def __init__(self, fn, args, pid: int | None = None, fd: int | None = None, value=None):
        self.fn, self.args, self.pid, self.fd, self.value = fn, args, pid, fd, value

    def __call__(self) -> str:
        if self.pid is None:
            return self.value
        data, ok = b"", False
        try:
            with os.fdopen(self.fd, "rb") as fh:
                data = fh.read()
            self.fd = None
            _, status = os.waitpid(self.pid, 0)
            ok = os.waitstatus_to_exitcode(status) == 0
        except ChildProcessError:  # reaped elsewhere: its status is unknown, so its data is not used
            ok = False
        finally:
            self.pid = None
        self.value = data.decode("utf-8", "surrogatepass") if ok else self.fn(*self.args)
        return self.value

    def discard(self) -> None:
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        if self.fd is not None:
            os.close(self.fd)
        self.pid = self.fd = None


def aside(fn, *args) -> _Result:
    """``fn(*args)`` (a str) computed by a forked child; returns the getter
    of its value (``_Result``).  In line where this process has another
    thread or fork fails.  A child that fails hands the work back: the
    getter then computes it here, so an error is raised by this process, as
    without the child."""
    if not one_thread():
        return _Result(fn, args, value=fn(*args))
    try:
        r, w = os.pipe()
        pid = os.fork()
    except (OSError, AttributeError):
        return _Result(fn, args, value=fn(*args))
    if pid == 0:  # the child: compute, send, leave without the parent's exit handlers
        code = 1
        try:
            faulthandler.disable()  # a crash here is not the parent's: keep it out of its fault log
            os.close(r)
            data = fn(*args).encode("utf-8", "surrogatepass")  # journal text may hold lone surrogates
            with os.fdopen(w, "wb") as fh:
                fh.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return _Result(fn, args, pid=pid, fd=r)
