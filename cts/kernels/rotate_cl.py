"""OpenCL C kernels for ``cl_khr_subgroup_rotate`` (cl_khr_subgroup_rotate).

One kernel per (gentype, required subgroup size) switches over the rotate
variants (plain, and each power-of-two cluster size); a sweep builds one
program per gentype and control flow holding the kernel of every size the
device has; a case's own program (one kernel) is what a run falls back to
where that program fails.  The kernel:

* reads its value and the work-group's delta (``deltas[get_group_id(0)]``:
  uniform in every subgroup, and not a compile-time constant, so the
  compiler cannot fold it);
* writes ``sub_group_rotate(v, d)`` or ``sub_group_clustered_rotate(v, d, C)``
  (C an integer constant expression, as the extension requires);
* reports ``get_sub_group_id``, ``get_sub_group_local_id``,
  ``get_sub_group_size`` and ``get_max_sub_group_size`` so the host derives
  the expected values from the device's own subgroup map.

The required size comes from ``intel_reqd_sub_group_size``
(cl_intel_required_subgroup_size).
"""

from __future__ import annotations

__all__ = [
    "rotate_cl_program",
    "rotate_cl_sizes_program",
    "rotate_cl_sized_entry",
    "rotate_cl_entry",
    "HOST_DTYPE",
]

# host buffer dtype of each gentype (raw bits)
HOST_DTYPE = {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}

_PRAGMAS = {
    "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    "double": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
}


def rotate_cl_entry(cluster: int = 0) -> str:
    """All variants share one kernel; ``sel[0]`` picks the variant."""
    return "rotate_k"


def _clusters(sg: int) -> list[int]:
    out, c = [], 1
    while c <= sg:
        out.append(c)
        c *= 2
    return out


def rotate_cl_program(t: str, sg: int, nonuniform: bool = False, reqd: bool = True) -> str:
    """The program for gentype ``t`` and required subgroup size ``sg``: one
    kernel whose ``switch`` on ``sel[0]`` (0 = plain, else the cluster size)
    calls the built-in with a constant cluster size (as the OpenCL-CTS does;
    one kernel compiles 2-3x faster than one kernel per variant).
    ``nonuniform``: the switch runs only where the subgroup local id % 3 !=
    2 (the built-ins "need not be encountered by all work-items"); the other
    work-items keep their value.  A case's own program: what a run falls
    back to where :func:`rotate_cl_sizes_program` fails.  ``reqd`` False: no
    ``intel_reqd_sub_group_size`` (a device whose only subgroup size is
    ``sg`` and that lacks cl_intel_required_subgroup_size)."""
    what = f"required subgroup size {sg}" if reqd else f"subgroup size {sg}, the device's only one"
    return _head(t, what) + _kernel(t, sg, nonuniform, rotate_cl_entry(), reqd)


def rotate_cl_sizes_program(t: str, sgs: tuple[int, ...], nonuniform: bool = False) -> str:
    """One program holding the kernel of :func:`rotate_cl_program` for each
    required size in ``sgs``, named :func:`rotate_cl_sized_entry`: a sweep
    builds one program per gentype and control flow instead of one per size
    (on Intel's CPU runtime the five sizes' kernels built in 0.37-0.41 s as
    one program, 0.53-0.60 s as five)."""
    sizes = ", ".join(map(str, sgs))
    return _head(t, f"required subgroup sizes {sizes}") + "".join(
        _kernel(t, sg, nonuniform, rotate_cl_sized_entry(sg)) for sg in sgs
    )


def rotate_cl_sized_entry(sg: int) -> str:
    """The kernel of required size ``sg`` in :func:`rotate_cl_sizes_program`."""
    return f"rotate_k{sg}"


def _head(t: str, what: str) -> str:
    return f"/* cl_khr_subgroup_rotate: {t}, {what} */\n" + _PRAGMAS.get(t, "")


def _kernel(t: str, sg: int, nonuniform: bool, name: str, reqd: bool = True) -> str:
    cases = "\n".join(
        f"    case {c}: r = sub_group_clustered_rotate(v, d, {c}u); break;" for c in _clusters(sg)
    )
    branch = "if (get_sub_group_local_id() % 3 != 2)\n    " if nonuniform else ""
    attr = f"\n__attribute__((intel_reqd_sub_group_size({sg})))" if reqd else ""
    return f"""{attr}
kernel void {name}(global const {t}* in, global const int* deltas, global {t}* out,
                     global uint* info, global const int* sel)
{{
    size_t g = get_global_id(0);
    int d = deltas[get_group_id(0)];
    {t} v = in[g];
    {t} r = v;
    {branch}switch (sel[0]) {{
    case 0: r = sub_group_rotate(v, d); break;
{cases}
    }}
    out[g] = r;
    info[4 * g + 0] = get_sub_group_id();
    info[4 * g + 1] = get_sub_group_local_id();
    info[4 * g + 2] = get_sub_group_size();
    info[4 * g + 3] = get_max_sub_group_size();
}}
"""


# ----------------------------------------------------------------- MLIR
_CTYPE = {
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "int32": "int",
    "int8": "char",
    "uint8": "uchar",
    "int16": "short",
    "int64": "long",
}
_ELEM_C = {"f16": "half", "f32": "float", "f64": "double", "i32": "int", "si8": "char", "ui8": "uchar"}
_ELEM_C.update({"i8": "char", "i16": "short", "i64": "long"})  # gpu.rotate's signless integers


def mlir_rotate_kernel(
    program: list, buffers: dict, sg: int, reqd: bool = True
) -> tuple[str, tuple[str, ...], set[str]]:
    """OpenCL C for an MLIR program of the rotate-based ops (``cts/runs/mlir.py``
    documents the program form): one subgroup of ``sg`` work-items per
    work-group, one buffer row per subgroup.  A matrix is a private array per
    work-item (element e = i * sg + lane in row-major order: this lowering's
    thread-local map, which the suite reads back and checks);
    ``gpu.rotate`` becomes ``sub_group_clustered_rotate(v, offset, width)``
    (the SPIR-V lowering with ClusterSize = width) and the mma_rotate
    lowering's rotate ``sub_group_rotate(v, offset)``.

    ``reqd`` False: no ``intel_reqd_sub_group_size`` (a device whose only
    subgroup size is ``sg``, without cl_intel_required_subgroup_size).

    Returns (source, argument names, names of the buffers written)."""
    names = tuple(buffers)
    size = {k: int(v.shape[1]) for k, v in buffers.items()}
    ctype = {k: _CTYPE[str(v.dtype)] for k, v in buffers.items()}
    written: set[str] = set()
    mats: dict[str, tuple[str, int, int, int]] = {}  # name -> (C type, n, rows, cols)
    regs: dict[str, str] = {}  # program register -> current C variable
    rtype: dict[str, str] = {}  # C variable -> C type
    vwidth: dict[str, int] = {}  # C variable -> components, for vector values
    body: list[str] = []
    counter = [0]

    def fresh(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def at(buf: str, index: str) -> str:
        return f"{buf}[p * {size[buf]} + ({index})]"

    for op in program:
        kind = op[0]
        if kind == "load":
            _, dst, buf, row, col, lead, tr, rows, cols, elem, _tag = op
            n = rows * cols // sg
            t = _ELEM_C[elem]
            mats[dst] = (t, n, rows, cols)
            body.append(f"{t} m_{dst}[{n}];")
            for i in range(n):
                e = f"({i} * {sg} + lane)"
                r, c = f"({e} / {cols})", f"({e} % {cols})"
                addr = f"{row * lead + col} + " + (f"{c} * {lead} + {r}" if tr else f"{r} * {lead} + {c}")
                body.append(f"m_{dst}[{i}] = {at(buf, addr)};")
        elif kind == "store":
            _, src, buf, row, col, lead, tr = op
            t, n, rows, cols = mats[src]
            written.add(buf)
            for i in range(n):
                e = f"({i} * {sg} + lane)"
                r, c = f"({e} / {cols})", f"({e} % {cols})"
                addr = f"{row * lead + col} + " + (f"{c} * {lead} + {r}" if tr else f"{r} * {lead} + {c}")
                body.append(f"{at(buf, addr)} = m_{src}[{i}];")
        elif kind == "constant":
            _, dst, value, rows, cols, elem, _tag = op
            n = rows * cols // sg
            t = _ELEM_C[elem]
            mats[dst] = (t, n, rows, cols)
            body.append(f"{t} m_{dst}[{n}];")
            body += [f"m_{dst}[{i}] = ({t})({value!r});" for i in range(n)]
        elif kind == "extract_all":
            _, buf, m = op
            t, n, _, _ = mats[m]
            written.add(buf)
            body += [f"{at(buf, f'lane * {n} + {i}')} = m_{m}[{i}];" for i in range(n)]
        elif kind == "extract":
            _, reg, m, i = op
            v = fresh("x")
            body.append(f"{mats[m][0]} {v} = m_{m}[{i}];")
            regs[reg], rtype[v] = v, mats[m][0]
        elif kind == "insert":
            _, dst, m, reg, i = op
            if dst != m:
                t, n, rows, cols = mats[m]
                mats[dst] = mats[m]
                body.append(f"{t} m_{dst}[{n}];")
                body += [f"m_{dst}[{j}] = m_{m}[{j}];" for j in range(n)]
            body.append(f"m_{dst}[{i}] = {regs[reg]};")
        elif kind == "lane_ge":
            _, reg, k = op
            v = fresh("c")
            body.append(f"int {v} = lane >= {k};")
            regs[reg], rtype[v] = v, "int"
        elif kind == "select":
            _, reg, cond, a, b = op
            v = fresh("s")
            t = rtype[regs[a]]
            body.append(f"{t} {v} = {regs[cond]} ? {regs[a]} : {regs[b]};")
            regs[reg], rtype[v] = v, t
        elif kind == "sg_rotate":
            _, reg, src, off = op
            v = fresh("r")
            t = rtype[regs[src]]
            body.append(f"{t} {v} = sub_group_rotate({regs[src]}, {off});")
            regs[reg], rtype[v] = v, t
        elif kind == "gpu_rotate":
            _, reg, valid, src, off, width = op
            v, ok = fresh("r"), fresh("ok")
            t, x = rtype[regs[src]], regs[src]
            if x in vwidth:  # vector value: the built-ins are scalar, rotate each component
                body.append(f"{t} {v};")
                body += [
                    f"{v}.s{j:x} = sub_group_clustered_rotate({x}.s{j:x}, {off}, {width}u);"
                    for j in range(vwidth[x])
                ]
                vwidth[v] = vwidth[x]
            else:
                body.append(f"{t} {v} = sub_group_clustered_rotate({x}, {off}, {width}u);")
            body.append(f"int {ok} = lane < {width};")
            regs[reg], regs[valid], rtype[v], rtype[ok] = v, ok, t, "int"
        elif kind == "read_lane":
            reg, buf, elem = op[1:4]
            nv = op[4] if len(op) > 4 else 1
            v = fresh("v")
            if nv > 1:
                parts = ", ".join(at(buf, f"lane * {nv} + {j}") for j in range(nv))
                body.append(f"{_ELEM_C[elem]}{nv} {v} = ({_ELEM_C[elem]}{nv})({parts});")
                regs[reg], rtype[v], vwidth[v] = v, f"{_ELEM_C[elem]}{nv}", nv
            else:
                body.append(f"{_ELEM_C[elem]} {v} = {at(buf, 'lane')};")
                regs[reg], rtype[v] = v, _ELEM_C[elem]
        elif kind == "write_lane":
            buf, reg = op[1:3]
            nv = op[3] if len(op) > 3 else 1
            written.add(buf)
            if nv > 1:  # components .s0 .. .s9, .sa .. .sf
                body += [
                    f"{at(buf, f'lane * {nv} + {j}')} = ({ctype[buf]}){regs[reg]}.s{j:x};" for j in range(nv)
                ]
            else:
                body.append(f"{at(buf, 'lane')} = ({ctype[buf]}){regs[reg]};")
        else:
            raise ValueError(f"MLIR op {kind!r} has no OpenCL C realization here")
    params = ", ".join(f"global {'' if k in written else 'const '}{ctype[k]}* {k}" for k in names)
    pragmas = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" if "half" in "".join(body) + params else ""
    if "double" in "".join(body) + params:
        pragmas += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    src = (
        f"/* MLIR gpu dialect program, rotate-based lowering, subgroup size {sg} */\n{pragmas}"
        + (f"__attribute__((intel_reqd_sub_group_size({sg})))\n" if reqd else "")
        + f"kernel void mlir_k({params})\n{{\n"
        "    size_t p = get_group_id(0);\n    uint lane = get_sub_group_local_id();\n"
        + "".join(f"    {line}\n" for line in body)
        + "}\n"
    )
    return src, names, written
