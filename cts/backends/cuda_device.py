"""The CUDA driver work of backend ``cuda``, in a child process of its own
(``python -m cts.backends.cuda_device [DEVICE]``).

A kernel fault on CUDA (``misaligned address``, an illegal access) is
sticky: every later call of that process fails with it, and not even a
reset of the primary context recovers (measured on the H100).  So the
driver lives here: the parent (cts.backends.cuda) sends jobs, a fault ends
this process after its answer, and the parent starts a fresh one for the
next case.  Messages are length-prefixed pickles on stdin / stdout (the
real stdout goes to stderr).

* first answer: ``("info", {...})`` or ``("none", reason)`` or
  ``("usage", message)`` (a bad --device);
* job ``(ptx, entry, block, rows)`` -> ``("ok", outputs)`` or
  ``("fault", message)`` (and the process ends) or ``("error", message)``.

Each subgroup row runs as one launch of one block, in allocations of its
own (the kernel's block id and base are 0): a row starts where cuMemAlloc
aligns it, so only the case's own offsets decide the alignment WMMA needs.
Each 1-D memref argument is five parameters: allocated pointer, aligned
pointer, offset, size, stride.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys

import numpy as np

__all__ = ["send", "recv", "serve"]


def send(f, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)) + data)
    f.flush()


def recv(f):
    head = f.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the pipe")
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(f.read(n))


class _Fault(Exception):
    pass


class _Driver:
    def __init__(self, cu):
        self.cu = cu
        self.modules: dict[str, object] = {}

    def check(self, err, what: str) -> None:
        if int(err) != 0:
            ok, text = self.cu.cuGetErrorString(err)
            raise RuntimeError(f"CUDA {what}: {text.decode() if int(ok) == 0 and text else err}")

    def call(self, ret, what: str):
        self.check(ret[0], what)
        return ret[1] if len(ret) == 2 else ret[1:]

    def name(self, dev) -> str:
        return (
            self.call(self.cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
            .split(b"\0", 1)[0]
            .decode(errors="replace")
        )

    def open(self, selector: str):
        cu = self.cu
        self.check(cu.cuInit(0)[0], "cuInit")
        n = self.call(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        if not n:
            return ("none", "no CUDA device")
        names = [self.name(self.call(cu.cuDeviceGet(i), "cuDeviceGet")) for i in range(n)]
        if selector in ("", None):
            idx = 0
        elif selector.isdigit():
            if int(selector) >= n:
                return ("usage", f"--device {selector}: only {n} CUDA device(s): {', '.join(names)}")
            idx = int(selector)
        else:
            hits = [i for i, nm in enumerate(names) if selector.lower() in nm.lower()]
            if len(hits) != 1:
                return (
                    "usage",
                    f"--device {selector!r} matches {len(hits)} CUDA devices: {', '.join(names)}",
                )
            idx = hits[0]
        self.dev = self.call(cu.cuDeviceGet(idx), "cuDeviceGet")
        self.ctx = self.call(cu.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
        self.check(cu.cuCtxSetCurrent(self.ctx)[0], "cuCtxSetCurrent")
        a = cu.CUdevice_attribute

        def attr(x):
            return int(self.call(cu.cuDeviceGetAttribute(x, self.dev), "cuDeviceGetAttribute"))

        version = int(self.call(cu.cuDriverGetVersion(), "cuDriverGetVersion"))
        return (
            "info",
            {
                "name": names[idx],
                "major": attr(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                "minor": attr(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                "warp": attr(a.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
                "driver": f"CUDA driver {version // 1000}.{version % 1000 // 10}",
            },
        )

    def function(self, ptx: str, entry: str):
        if ptx not in self.modules:
            self.modules[ptx] = self.call(self.cu.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        return self.call(
            self.cu.cuModuleGetFunction(self.modules[ptx], entry.encode()), "cuModuleGetFunction"
        )

    def run(self, ptx: str, entry: str, block: int, rows: dict) -> dict:
        cu = self.cu
        fn = self.function(ptx, entry)
        out = {n: np.empty_like(x) for n, x in rows.items()}
        for p in range(next(iter(rows.values())).shape[0]):
            ptrs, params = {}, []
            try:
                for n, x in rows.items():
                    r = np.ascontiguousarray(x[p])
                    d = self.call(cu.cuMemAlloc(max(r.nbytes, 4)), "cuMemAlloc")
                    ptrs[n] = d
                    self.check(cu.cuMemcpyHtoD(d, r.ctypes.data, r.nbytes)[0], "cuMemcpyHtoD")
                    params += [int(d), int(d), 0, r.size, 1]
                words = [np.array([v], dtype=np.uint64) for v in params]
                argv = np.array([w.ctypes.data for w in words], dtype=np.uint64)
                self.check(
                    cu.cuLaunchKernel(fn, 1, 1, 1, block, 1, 1, 0, 0, argv.ctypes.data, 0)[0], "launch"
                )
                err = cu.cuCtxSynchronize()[0]
                if int(err) != 0:
                    ok, text = cu.cuGetErrorString(err)
                    raise _Fault(f"the kernel failed (subgroup {p}): {text.decode() if text else err}")
                for n in rows:
                    r = np.empty_like(rows[n][p])
                    self.check(cu.cuMemcpyDtoH(r.ctypes.data, ptrs[n], r.nbytes)[0], "cuMemcpyDtoH")
                    out[n][p] = r
            finally:
                for d in ptrs.values():
                    cu.cuMemFree(d)
        return out


def serve(inp, outp, selector: str) -> None:
    try:
        from cuda.bindings import driver as cu
    except Exception as e:  # noqa: BLE001 - ImportError without the package
        send(outp, ("none", f"no CUDA Python bindings (pip install -e '.[cuda]': cuda-bindings): {e}"))
        return
    drv = _Driver(cu)
    try:
        first = drv.open(selector)
    except Exception as e:  # noqa: BLE001 - no driver library (no GPU), an old driver, ...
        first = ("none", f"no CUDA driver: {type(e).__name__}: {str(e)[:200]}")
    send(outp, first)
    if first[0] != "info":
        return
    while True:
        try:
            ptx, entry, block, rows = recv(inp)
        except EOFError:
            return
        try:
            send(outp, ("ok", drv.run(ptx, entry, block, rows)))
        except _Fault as e:  # sticky: this process is done
            send(outp, ("fault", str(e)))
            return
        except Exception as e:  # noqa: BLE001 - a refused module, a launch error: this case only
            send(outp, ("error", f"{type(e).__name__}: {str(e)[:300]}"))


if __name__ == "__main__":
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else written to stdout goes to stderr, not into the protocol
    serve(sys.stdin.buffer, proto, sys.argv[1] if len(sys.argv) > 1 else "")
