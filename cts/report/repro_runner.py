#!/usr/bin/env python3
"""Standalone rerun of one conformance case (copied into a repro bundle as
run_case.py by ``python -m cts repro``).  Needs numpy; pyopencl only to run
the kernel on a device.  Nothing from the suite is imported.

    python run_case.py                      # run the bundled kernel on the first OpenCL device
    python run_case.py --device "Intel"     # ... on the device whose name contains "Intel" (or an index)
    python run_case.py --actual d.npy       # judge a result you produced yourself (logical layout)
    python run_case.py --bundled            # judge actual_bits.npy recorded when the bundle was made

Acceptance (as in the suite): integer results (rule I) and tf32 conversion
(rule T) bit-exact, any NaN matching NaN; float results within bound.npy of
expected_value.npy (rules E/R: bound 0; rule F: the per-element error bound
of reference/tolerance.py), NaN matches NaN, infinities must match; on the
special tier the flushed-subnormal alternative (*_ftz.npy) is also accepted.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHOW = 8


def load(name):
    p = HERE / name
    return np.load(p) if p.exists() else None


def decode(bits, acc):
    """Raw result bits -> float64 values of the accumulator type."""
    b = np.asarray(bits).astype(np.uint64)
    if acc == "f32":
        return (b & 0xFFFFFFFF).astype(np.uint32).view(np.float32).astype(np.float64)
    if acc == "f16":
        return (b & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    if acc == "bf16":
        return ((b & 0xFFFF).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    v = (b & 0xFFFFFFFF).astype(np.int64)
    return np.where(v >= 2**31, v - 2**32, v).astype(np.float64)


def close(exp, act, bound):
    with np.errstate(invalid="ignore", over="ignore"):
        return (
            (np.isnan(exp) & np.isnan(act))
            | (np.isinf(exp) & (act == exp))
            | (np.isfinite(exp) & np.isfinite(act) & (np.abs(act - exp) <= bound))
            | (np.isfinite(exp) & np.isinf(act) & np.isinf(bound))
        )


def verdict(meta, actual_bits):
    """Print the verdict; return True when the result is accepted."""
    rule, acc = meta["rule"], meta.get("acc", "f32")
    exp_bits = load("expected_bits.npy").astype(np.uint64)
    mask = np.uint64((1 << int(meta.get("result_bits", 32))) - 1)
    act_bits = np.asarray(actual_bits).astype(np.int64).astype(np.uint64).reshape(exp_bits.shape) & mask
    if rule in ("I", "T"):
        ok = exp_bits == act_bits
        if rule == "T":
            ok |= np.isnan(decode(exp_bits, "f32")) & np.isnan(decode(act_bits, "f32"))
        err = bound = None
    else:
        exp, bound = load("expected_value.npy"), load("bound.npy")
        act = decode(act_bits, acc)
        ok = close(exp, act, bound)
        if load("expected_value_ftz.npy") is not None:
            ok |= close(load("expected_value_ftz.npy"), act, load("bound_ftz.npy"))
        with np.errstate(invalid="ignore"):
            err = np.where(np.isfinite(exp) & np.isfinite(act), np.abs(act - exp), 0.0)
    bad = np.argwhere(~ok)
    name = f"{meta['family']}[{meta['case_id']}]"
    if not bad.size:
        print(f"PASS {name}: {ok.size} elements ok (rule {rule})")
        return True
    print(f"FAIL {name}: {len(bad)} of {ok.size} elements wrong (rule {rule})")
    ev, av = decode(exp_bits, acc), decode(act_bits, acc)
    for idx in bad[:SHOW]:
        idx = tuple(int(i) for i in idx)
        where = (
            f"sg {idx[0]} D[{idx[1]},{idx[2]}] (invocation {idx[2]}, component {idx[1]})"
            if len(idx) == 3
            else str(idx)
        )
        line = f"  {where}: expected {ev[idx]!r} (0x{int(exp_bits[idx]):x}) got {av[idx]!r} (0x{int(act_bits[idx]):x})"
        if err is not None:
            line += f" |err| {err[idx]:.3g} bound {bound[idx]:.3g}"
        print(line)
    return False


def run_on_device(meta, device):
    """Build the bundled kernel and launch it as the suite did; returns the
    result bits in the logical layout of expected_bits.npy."""
    k = meta.get("kernel") or {}
    if not (k.get("source_file") or k.get("il_file")):
        why = k.get("unavailable", "the backend that made it gives none")
        sys.exit(f"this bundle has no kernel ({why}): use --bundled or --actual FILE")
    import pyopencl as cl

    try:
        devs = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    except cl.Error as e:
        sys.exit(f"no OpenCL platform ({e}); point OCL_ICD_VENDORS at a folder with your driver's .icd file")
    if device is not None:
        sel = [
            pd
            for i, pd in enumerate(devs)
            if device == str(i) or device.lower() in (pd[0].name + " " + pd[1].name).lower()
        ]
        if not sel:
            sys.exit(f"no OpenCL device matches {device!r}; have: " + "; ".join(d.name for _, d in devs))
        devs = sel
    if not devs:
        sys.exit("no OpenCL device found")
    dev = devs[0][1]
    print(f"device: {dev.name} ({dev.platform.name}, driver {dev.driver_version})")
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    if k.get("il_file"):
        prg = cl.Program(ctx, (HERE / k["il_file"]).read_bytes())
        for spec_id, value in k.get("spec_constants") or ():  # clSetProgramSpecializationConstant
            prg._prg.set_specialization_constant(int(spec_id), np.uint32(value).tobytes())
    else:
        prg = cl.Program(ctx, (HERE / k["source_file"]).read_text())
    try:
        prg.build(options=k.get("options") or "")
    except Exception as e:  # the build log is the driver's answer
        sys.exit(f"build failed: {e}")
    mf = cl.mem_flags
    bufs, host = [], {}
    for name, dtype in zip(k["args"], k["arg_types"]):
        if name in k.get("inputs", {}):
            arr = np.ascontiguousarray(load(k["inputs"][name]))
            dt = np.dtype(dtype)
            if arr.dtype.kind == "f" and dt.kind in "ui" and arr.dtype.itemsize == dt.itemsize:
                arr = arr.view(dt)  # float inputs travel as their bits
            arr = np.ascontiguousarray(arr.astype(dt).reshape(-1))
            bufs.append(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr))
        else:
            host[name] = np.empty(int(k["outputs"][name]), dtype=dtype)
            bufs.append(cl.Buffer(ctx, mf.WRITE_ONLY, host[name].nbytes))
    kern = getattr(prg, k["entry"])
    kern(q, tuple(k["global_size"]), tuple(k["local_size"]) if k.get("local_size") else None, *bufs)
    for name, buf in zip(k["args"], bufs):
        if name in host:
            cl.enqueue_copy(q, host[name], buf)
    q.finish()
    if "sgsize" in host:
        sizes = sorted(set(host["sgsize"].tolist()))
        print(f"subgroup sizes seen: {sizes}")
    if "d" in host:
        c_shape = load("c_regs.npy").shape
        regs = host["d"].astype(np.int64).reshape(-1, c_shape[-2], c_shape[-1])
        return regs.transpose(0, 2, 1)  # registers (S, N, M) -> D (S, M, N)
    if "y" in host:
        return host["y"].reshape(load("x.npy").shape)
    sys.exit(f"do not know how to read the outputs {sorted(host)} of this kernel")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", help="OpenCL device index or name substring")
    ap.add_argument("--actual", help="judge this .npy of result bits (logical layout) instead of running")
    ap.add_argument("--bundled", action="store_true", help="judge actual_bits.npy recorded in the bundle")
    a = ap.parse_args()
    meta = json.loads((HERE / "case.json").read_text())
    print(f"case {meta['family']}[{meta['case_id']}] seed {meta['seed']} ({meta.get('spec_row', '')})")
    if a.actual:
        bits = np.load(a.actual)
    elif a.bundled:
        print(f"result recorded on: {meta['made_on'].get('name')}")
        bits = load("actual_bits.npy")
    else:
        bits = run_on_device(meta, a.device)
    sys.exit(0 if verdict(meta, bits) else 1)


if __name__ == "__main__":
    main()
