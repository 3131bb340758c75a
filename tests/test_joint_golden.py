"""Golden examples for the joint_matrix reference model (reference/joint.py)
taken from the spec text, and the emulator's address generator checked
against the same examples.

Sources: sycl_ext_intel_matrix "Packed Layout Format" examples 1 (8-bit,
8 x 4) and 2 (16-bit, 4 x 4) (old API: "the packed size for B is
(K/2, N*2)", packed A of a column-major A is (K/2, M*2), int8 B declared
tK/4 x tN*4); the intel/llvm SYCL matrix e2e tests (their VNNI helper
dst[i*cols*f + j*f + k] = src[(i*f + k)*cols + j]); sycl_ext_oneapi_matrix
(checked loads give 0 out of bounds, stores are dropped; apply coordinates
are pre-VNNI; tf32 conversion may round or truncate).
"""

import numpy as np
import pytest

from cts.backends.emu_joint import JointEmulation
from reference import joint as J


def _letters(rows, cols):
    """Element names of the spec examples: column j is letter 'abcd'[j],
    row i is number i+1 (a1 b1 c1 d1 / a2 b2 ...)."""
    return np.array([[f"{'abcd'[j]}{i + 1}" for j in range(cols)] for i in range(rows)])


def _codes(names):
    """Names -> distinct integers (so the numeric model can move them)."""
    flat = sorted(set(names.ravel()))
    return np.vectorize(flat.index)(names).astype(np.uint64), flat


def _packed_names(rows, cols, f):
    X, flat = _codes(_letters(rows, cols))
    P = J.pack_vnni(X[None], f)[0]
    return np.vectorize(lambda v: flat[int(v)])(P)


def test_example1_8bit():
    P = _packed_names(8, 4, 4)
    assert P.shape == (2, 16)
    assert list(P[0]) == "a1 a2 a3 a4 b1 b2 b3 b4 c1 c2 c3 c4 d1 d2 d3 d4".split()
    assert list(P[1]) == "a5 a6 a7 a8 b5 b6 b7 b8 c5 c6 c7 c8 d5 d6 d7 d8".split()


def test_example2_16bit_and_seed_bf16():
    P = _packed_names(4, 4, 2)
    assert list(P[0]) == "a1 a2 b1 b2 c1 c2 d1 d2".split()
    assert list(P[1]) == "a3 a4 b3 b4 c3 c4 d3 d4".split()


@pytest.mark.parametrize("bits,f", [(8, 4), (16, 2), (32, 1), (64, 1)])
def test_vnni_factor(bits, f):
    assert J.vnni_factor(bits) == f


def test_packed_shapes_from_seed():
    K, N, M = 32, 16, 8
    assert J.layout_dims(K, N, "packed", 2) == (K // 2, N * 2)  # packed B, bf16
    assert J.layout_dims(K, N, "packed", 4) == (K // 4, N * 4)  # int8 tK/4 x tN*4
    assert J.layout_dims(M, K, "packed_a", 2) == (K // 2, M * 2)  # col-major A, bf16


def test_e2e_vnni_helper_formula():
    rows, cols, f = 8, 6, 4
    src = np.arange(rows * cols, dtype=np.uint64)
    dst = np.zeros_like(src)
    for i in range(rows // f):
        for j in range(cols):
            for k in range(f):
                dst[i * cols * f + j * f + k] = src[(i * f + k) * cols + j]
    P = J.pack_vnni(src.reshape(1, rows, cols), f)
    assert (P.reshape(-1) == dst).all()
    assert (J.unpack_vnni(P, f) == src.reshape(1, rows, cols)).all()


def test_strided_row_and_col_images():
    X = np.arange(6, dtype=np.uint64).reshape(1, 2, 3) + 1
    mem = np.zeros((1, 12), dtype=np.uint64)
    row = J.store_image(mem, X, "row", 1, 5)[0]
    assert list(row) == [1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0]
    col = J.store_image(mem, X, "col", 1, 4)[0]
    assert list(col) == [1, 4, 0, 0, 2, 5, 0, 0, 3, 6, 0, 0]
    assert (J.load_image(col[None], 2, 3, "col", 1, 4) == X).all()


def test_checked_load_store_and_fill_rules():
    # memory matrix 3 x 5 (stride 6, cells numbered 1..), tile 2 x 2 at (2, 4):
    # only (0, 0) -> memory (2, 4) is inside Height 3 x Width 5
    mem = (np.arange(24, dtype=np.uint64) + 1)[None]
    h, w, cx, cy = [np.array([v]) for v in (3, 5, 2, 4)]
    t = J.checked_load(mem, 2, 2, "row", 1, 6, h, w, cx, cy)[0]
    assert t.tolist() == [[2 * 6 + 4 + 1, 0], [0, 0]]
    X = np.full((1, 2, 2), 99, dtype=np.uint64)
    out = J.checked_store(mem, X, "row", 1, 6, h, w, cx, cy)[0]
    changed = np.flatnonzero(out != mem[0])
    assert changed.tolist() == [2 * 6 + 4]
    assert J.checked_fill_mask(2, 2, h, w, cx, cy)[0].tolist() == [[True, False], [False, False]]


def test_apply_coordinates_are_logical_and_distinguish_swaps():
    w = J.apply_coord_weight(4, 4)
    assert w[1, 2] == 10 and w[2, 1] == 17
    vals = np.zeros((1, 2, 3))
    from reference.dtypes import etype

    assert J.apply_expected(vals, etype("f16"))[0].tolist() == [[0, 1, 2], [8, 9, 10]]
    assert J.apply_expected(np.full((1, 1, 1), 127), etype("i8"))[0, 0, 0] == -2  # wraps like int8_t


def test_tf32_round_or_truncate():
    x = np.array([0x3F801000, 0x3F803000, 0x3F801001], dtype=np.uint64)
    rte = np.array([0x3F800000, 0x3F804000, 0x3F802000], dtype=np.uint64)
    trunc = np.array([0x3F800000, 0x3F802000, 0x3F800000], dtype=np.uint64)
    assert J.tf32_accepts(x, rte).all() and J.tf32_accepts(x, trunc).all()
    assert not J.tf32_accepts(x, x)[1:].any()  # not converted at all: wrong


class _Emu(JointEmulation):
    faults = frozenset()


@pytest.mark.parametrize("layout,f,t", [("packed", 4, "u8"), ("packed", 2, "f16"), ("packed_a", 2, "bf16")])
def test_emulator_address_generator_agrees_with_spec_examples(layout, f, t):
    """The emulator computes addresses per element (no shared code with the
    reference); on the spec examples both must give the same memory."""
    R, C = (8, 4) if f == 4 else (4, 4)
    X, _ = _codes(_letters(R, C))
    X = X + 1
    stride = J.min_stride(R, C, layout, f) + 3
    mem = np.zeros((1, J.image_size(R, C, layout, f, stride)), dtype=np.uint64)
    ref = J.store_image(mem, X[None], layout, f, stride)
    emu = _Emu()
    vals = emu._jm_dec(X[None], "u8" if t == "u8" else "i16")
    got = emu._jm_store(mem, vals, layout, "u8" if t == "u8" else "i16", stride)
    assert (got == ref).all()
