"""``python -m cts numerics``: the numerics fingerprint of a device, per type
combination, with the evidence, the inferred model and the ``model`` tier on
random tiles.  Writes ``fingerprint.json`` and ``fingerprint.md``
(for the report room) under ``--out``.

Backends: ``emulator`` (the float MMA of the emulator, optionally through a
device model: ``--emulator-model NAME``) and ``vulkan`` (cooperative matrix
through ``cts.backends.vulkan`` (``cts.runs.coop.device_muladd``), else the
self-contained runner ``cts.numerics.vk``) and ``cuda`` (joint_matrix's
WMMA PTX, ``cts.numerics.cuda``).  ``--save-results`` keeps the
device's results of the random tiles (.npz) so the model tier can be
recomputed elsewhere with ``--from-saved DIR`` (no device needed).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from cts.families.float_mma import INTEL_FLOAT_ROWS
from cts.numerics.model import fingerprint, model_check
from cts.numerics.probes import Target
from cts.numerics.report import markdown
from reference.devmodel import MODELS
from reference.dtypes import etype

__all__ = ["main", "targets_for"]

_ROWS = INTEL_FLOAT_ROWS
VK_TARGETS = (("f16", "f32", 16, 16, 16), ("f16", "f16", 16, 16, 16), ("bf16", "f32", 16, 16, 16))


def _parse_targets(text: str | None, default) -> list[tuple]:
    if not text:
        return list(default)
    out = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"--targets item {item!r}: expected A:C or A:C:MxNxK")
        a, c = parts[0], parts[1]
        etype(a), etype(c)
        if len(parts) == 3:
            try:
                M, N, K = (int(x) for x in parts[2].lower().split("x"))
            except ValueError:
                raise ValueError(f"--targets item {item!r}: shape must be MxNxK") from None
        else:
            match = [d for d in default if d[0] == a and d[1] == c]
            if not match:
                raise ValueError(
                    f"--targets {a}:{c} is not offered; known: {', '.join(f'{d[0]}:{d[1]}' for d in default)}"
                )
            M, N, K = match[0][2:]
        out.append((a, c, M, N, K))
    return out


def targets_for(
    backend: str,
    emulator_model: str | None,
    selection: str | None,
    vk_runner: str = "auto",
    device: str | None = None,
    prelude: str | None = None,
    emulator_fault: str | None = None,
) -> list[Target]:
    if emulator_fault and backend != "emulator":
        raise ValueError("--emulator-fault needs --backend emulator")
    if backend == "emulator":
        from cts.backends.emu_numerics import NumericsEmulation
        from cts.backends.emulator import EmulatorBackend

        emu = EmulatorBackend()
        if not hasattr(emu, "run_float_mma"):
            raise ValueError("the emulator has no float MMA entry (cts.backends.emu_numerics not registered)")
        emu.set_model(emulator_model)
        if emulator_fault:
            if emulator_fault not in NumericsEmulation.FAULTS:
                known = ", ".join(NumericsEmulation.FAULTS)
                raise ValueError(f"unknown --emulator-fault {emulator_fault!r}; known: {known}")
            emu.faults = frozenset({emulator_fault})
        name = "emulator" + (f" (model {emulator_model})" if emulator_model else "")
        name += f" (fault {emulator_fault})" if emulator_fault else ""
        return [
            Target(
                name,
                M,
                N,
                K,
                a,
                c,
                lambda A, B, C, a=a, c=c, M=M, N=N, K=K: emu.run_float_mma(a, c, M, N, K, A, B, C),
            )
            for a, c, M, N, K in _parse_targets(selection, emu.numerics_targets())
        ]
    if backend == "vulkan":
        if emulator_model:
            raise ValueError("--emulator-model needs --backend emulator")
        run, name, offered = _vulkan_entry(vk_runner)
        wanted = _parse_targets(selection, offered or VK_TARGETS)
        lacking = [w for w in wanted if offered and w not in offered]
        if lacking:
            a, c, M, N, K = lacking[0]
            have = ", ".join(f"{x[0]}:{x[1]}:{x[2]}x{x[3]}x{x[4]}" for x in offered)
            raise ValueError(
                f"--targets {a}:{c}:{M}x{N}x{K}: the device reports no such entry; it reports {have}"
            )
        return [
            Target(name, M, N, K, a, c, lambda A, B, C, a=a, c=c, M=M, N=N, K=K: run(a, c, M, N, K, A, B, C))
            for a, c, M, N, K in wanted
        ]
    if backend in ("opencl", "emulator-intel"):
        from cts.backends import make_backend
        from cts.numerics.intel import intel_targets

        if backend == "opencl":
            b = make_backend("opencl", device=device, opencl_prelude=prelude)
        else:  # the emulator's Intel built-ins (register images and all), optionally modelled
            b = make_backend("emulator")
            b.set_model(emulator_model)
        sel = {tuple(x[:2]) for x in _parse_targets(selection, [(a, c, 8, 16, 16) for a, c in _ROWS])}
        name = b.describe().name
        return [t for t in intel_targets(b, name) if (t.a_type, t.c_type) in sel]
    if backend == "cuda":  # joint_matrix's WMMA PTX through the CUDA driver (cts.numerics.cuda)
        from cts.numerics.cuda import CUDA_TARGETS, cuda_targets

        if emulator_model:
            raise ValueError("--emulator-model needs --backend emulator")
        return cuda_targets(_parse_targets(selection, CUDA_TARGETS))
    raise ValueError(f"unknown backend {backend!r}; known: emulator, emulator-intel, opencl, vulkan, cuda")


_FLOATS = ("f16", "bf16", "f32")


def _float_entries(rows) -> list[tuple]:
    """The float multiply-accumulate entries a device reports, as targets
    (A, C, M, N, K): A = B and C = Result float types, subgroup scope."""
    out = []
    for r in rows:
        if r["A"] in _FLOATS and r["A"] == r["B"] and r["C"] in _FLOATS and r["C"] == r["R"]:
            if (
                r.get("scope", "subgroup") == "subgroup"
                and (r["A"], r["C"], r["M"], r["N"], r["K"]) not in out
            ):
                out.append((r["A"], r["C"], r["M"], r["N"], r["K"]))
    return out


def _vulkan_entry(runner: str = "auto"):
    """(run(a, c, M, N, K, A, B, C) -> D, device name, the device's float
    entries as targets): the cooperative-matrix room's backend
    (``cts.runs.coop.device_muladd``) or this module's own runner."""
    if runner in ("auto", "backend"):
        try:
            from cts.backends.vulkan import VulkanBackend
            from cts.families.coop import CoopEntry
            from cts.runs.coop import device_muladd

            vb = VulkanBackend.from_options()
            if getattr(vb, "reason", None):
                raise RuntimeError(vb.reason)

            def run(a, c, M, N, K, A, B, C):
                return device_muladd(vb, CoopEntry(M, N, K, a, a, c, c), A, B, C)

            import dataclasses

            rows = [dataclasses.asdict(e) for e in vb.entries]
            return (
                run,
                f"{vb.describe().name} (Vulkan cooperative matrix, cts.backends.vulkan)",
                _float_entries(rows),
            )
        except Exception as e:  # noqa: BLE001 - fall back to the own runner
            if runner == "backend":
                raise ValueError(f"cts.backends.vulkan is not usable: {type(e).__name__}: {e}") from None
    from cts.numerics.vk import VkCoopRunner, VkUnavailable

    try:
        r = VkCoopRunner()
    except VkUnavailable as e:
        raise ValueError(f"no Vulkan cooperative-matrix device: {e}") from None
    from cts.families.coop import SCOPES, VK_COMPONENT

    rows = [
        {
            **p,
            **{k: VK_COMPONENT.get(int(p[k]), "?") for k in ("A", "B", "C", "R")},
            "scope": SCOPES.get(int(p["scope"]), "?"),
        }
        for p in r.properties()
    ]
    return r.mma, f"{r.name} (Vulkan cooperative matrix, driver {r.driver})", _float_entries(rows)


class _Saved:
    """A device replayed from saved results: returns the saved D chunk by
    chunk, after checking that the inputs are the same tiles."""

    def __init__(self, path: Path):
        z = np.load(path)
        self.chunks = [z[f"d{i}"] for i in range(int(z["n"]))]
        self.types = (str(z["a"]), str(z["c"]))
        self.i = 0

    def __call__(self, A, B, C):
        d = self.chunks[self.i]
        self.i += 1
        if d.shape[0] != A.shape[0]:
            raise ValueError("saved results do not match the requested tiles")
        return etype(self.types[1]).decode(d)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m cts numerics", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--backend",
        default="emulator",
        help="emulator (default; its float MMA), emulator-intel (the emulator's Intel built-ins through "
        "their register images), opencl (Intel built-ins on an OpenCL device), vulkan, cuda (joint_matrix's "
        "WMMA PTX: f16/bf16/tf32 + f32, f16 + f16, f64)",
    )
    ap.add_argument("--device", default=None, help="opencl: device index or name substring")
    ap.add_argument("--opencl-prelude", default=None, help="opencl: FILE or 'builtin' (layered built-ins)")
    ap.add_argument(
        "--emulator-model", default=None, help=f"device model of the emulator: {', '.join(MODELS)}"
    )
    ap.add_argument(
        "--emulator-fault",
        default=None,
        help="emulator: a float-MMA fault of cts.backends.emu_numerics (a device no model of the space explains)",
    )
    ap.add_argument("--targets", default=None, help="comma list A:C[:MxNxK], e.g. f16:f32,bf16:f32")
    ap.add_argument(
        "--tiles",
        type=int,
        default=200,
        help="random tiles of the model tier, per distribution (default 200)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="reports/latest/numerics", help="where fingerprint.json/.md go")
    ap.add_argument("--save-results", action="store_true", help="keep the device results of the random tiles")
    ap.add_argument("--no-check", action="store_true", help="run the random tiles but leave the model check")
    ap.add_argument("--from-saved", default=None, help="recompute the model tier from a saved run's folder")
    ap.add_argument(
        "--vk-runner",
        default="auto",
        help="vulkan: 'backend' (cts.backends.vulkan through cts.runs.coop.device_muladd), 'own' (cts.numerics.vk), auto (default)",
    )
    ap.add_argument(
        "--dist",
        default="mixed,wide,cancel",
        help="random tile data: mixed, wide, cancel; comma list (default: all three)",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="worker processes for the model evaluation (default 1)"
    )
    args = ap.parse_args(argv)
    if args.tiles < 0:
        raise ValueError("--tiles must be >= 0")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from cts.numerics.model import DISTS

    bad = [d for d in args.dist.split(",") if d.strip() and d.strip() not in DISTS]
    if bad or not args.dist.strip():
        raise ValueError(f"unknown --dist {', '.join(bad) or '(none)'}; known: {', '.join(DISTS)}")
    if args.from_saved:
        return _from_saved(Path(args.from_saved), out, args)
    if args.emulator_model and args.emulator_model not in MODELS:
        raise ValueError(f"unknown --emulator-model {args.emulator_model!r}; known: {', '.join(MODELS)}")
    results = []
    if args.vk_runner not in ("auto", "backend", "own"):
        raise ValueError(f"unknown --vk-runner {args.vk_runner!r}; known: auto, backend, own")
    for t in targets_for(
        args.backend,
        args.emulator_model,
        args.targets,
        args.vk_runner,
        args.device,
        args.opencl_prelude,
        args.emulator_fault,
    ):
        t0 = time.time()
        try:
            fp = fingerprint(t)
        except Exception as e:  # noqa: BLE001 - a device failure ends this target only (one line)
            results.append({"device": t.device, "target": t.key, "error": f"{type(e).__name__}: {e}"})
            print(f"{t.key}: could not run: {type(e).__name__}: {str(e)[:300]}")
            continue
        rec = fp.as_dict()
        rec["seconds_fingerprint"] = round(time.time() - t0, 3)
        if args.tiles:
            t1 = time.time()
            if args.save_results or args.no_check:
                rec["model_tier"] = _tiles(t, fp.model, args, out)
            else:
                _settle(t, fp, rec, args)
            rec["seconds_model_tier"] = round(time.time() - t1, 3)
        results.append(rec)
        print(f"{t.key}: {rec.get('status', 'model')}: {rec['model_summary']}")
    _write(results, out)
    print((out / "fingerprint.md").read_text())
    return 0


def _settle(t: Target, fp, rec: dict, args) -> None:
    """Random tiles judge the probe-inferred model (cts.numerics.select):
    the record says ``status`` (model / selected / unexplained) and, for a
    selected model, that model replaces the inferred one."""
    from cts.numerics.model import replay_model
    from cts.numerics.select import settle

    dists = [d.strip() for d in args.dist.split(",") if d.strip()]
    got = settle(t, fp.model, args.tiles, args.seed, dists, args.jobs)
    checks = list(got["checks"].values())
    rec["model_tier"] = {**checks[0], "more": checks[1:]} if len(checks) > 1 else checks[0]
    rec["status"] = got["status"]
    rec["selection"] = {
        k: got[k] for k in ("candidates", "changes", "refuted", "best_on_fresh_tiles") if k in got
    }
    if got["status"] == "selected":
        rec["probe_model_summary"] = rec["model_summary"]
        rec["model"] = got["model"].as_dict()
        rec["model_summary"] = got["model"].summary()
        rec["replay"] = replay_model(fp, got["model"])


def _tiles(t: Target, model, args, out: Path) -> dict:
    from cts.numerics.model import DISTS

    dists = [d.strip() for d in args.dist.split(",") if d.strip()]
    bad = [d for d in dists if d not in DISTS]
    if bad or not dists:
        raise ValueError(f"unknown --dist {', '.join(bad) or '(none)'}; known: {', '.join(DISTS)}")
    chunks: list[np.ndarray] = []
    ct = etype(t.c_type)
    if args.save_results or args.no_check:
        inner = t.mma

        def keep(A, B, C):
            D = inner(A, B, C)
            chunks.append(ct.encode(D).astype({16: np.uint16, 32: np.uint32}[ct.bits]))
            return D

        t = Target(t.device, t.M, t.N, t.K, t.a_type, t.c_type, keep)
    if args.no_check:
        from cts.numerics.model import random_operands

        for i, start in enumerate(range(0, args.tiles, 2000)):
            S = min(2000, args.tiles - start)
            t.mma(*random_operands(t.a_type, t.c_type, S, t.M, t.N, t.K, args.seed * 100003 + i))
        res = {"tiles": args.tiles, "seed": args.seed, "chunk": 2000, "checked": False}
    else:
        res = model_check(t, model, args.tiles, seed=args.seed, jobs=args.jobs, dist=dists[0])
        for d in dists[1:]:
            res.setdefault("more", []).append(
                {
                    k: v
                    for k, v in model_check(
                        t, model, args.tiles, seed=args.seed, jobs=args.jobs, dist=d
                    ).items()
                }
            )
    if chunks:
        name = f"results_{t.a_type}_{t.c_type}_{t.M}x{t.N}x{t.K}.npz"
        np.savez_compressed(
            out / name, n=len(chunks), a=t.a_type, c=t.c_type, **{f"d{i}": d for i, d in enumerate(chunks)}
        )
        res["saved"] = name
    return res


def _from_saved(src: Path, out: Path, args) -> int:
    from reference.devmodel import DevModel

    results = json.loads((src / "fingerprint.json").read_text())
    for rec in results:
        mt = rec.get("model_tier") or {}
        if "saved" not in mt:
            continue
        m = DevModel(**rec["model"])
        a, c = rec["target"].split("*")[0], rec["target"].split("+")[1].split("->")[0]
        M, N, K = (int(x) for x in rec["target"].split()[-1].split("x"))
        t = Target(rec["device"], M, N, K, a, c, _Saved(src / mt["saved"]))
        t0 = time.time()
        res = model_check(
            t,
            m,
            mt["tiles"],
            seed=mt["seed"],
            chunk=mt.get("chunk", 2000),
            jobs=args.jobs,
            dist=mt.get("dist", "mixed"),
        )
        res["saved"] = mt["saved"]
        res["recomputed_from_saved"] = True
        rec["model_tier"] = res
        rec["seconds_model_tier"] = round(time.time() - t0, 3)
        print(f"{rec['target']}: {res['tiles_bit_exact']}/{res['tiles']} tiles bit-exact")
    _write(results, out)
    print((out / "fingerprint.md").read_text())
    return 0


def _write(results: list[dict], out: Path) -> None:
    (out / "fingerprint.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "fingerprint.md").write_text(markdown(results))
