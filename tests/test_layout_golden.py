"""Golden tests: every worked example of "Mapping Matrix Data to Invocations"
in SPV_INTEL_subgroup_matrix_multiply_accumulate, reproduced
exactly by reference/layout.py, plus the Intel built-in tables (cl_intel_subgroup_matrix_multiply_accumulate
and its _tf32 companion).

Expected register images are transcribed by hand from the example text as
lists of (row, col) element names per invocation; each element is encoded
as a distinct code so a misplaced element cannot go unnoticed.
"""

import numpy as np
import pytest

from reference import layout


def code(r, c):
    """A distinct non-zero code per element, small enough for 8 bits."""
    return 16 * r + c + 1


def logical(M, K):
    return np.array([[[code(r, c) for c in range(K)] for r in range(M)]], dtype=np.uint64)


def packed(elems, bits):
    """Elements listed low bits first (as the examples write 'hi | lo' we list lo first)."""
    v = 0
    for t, (r, c) in enumerate(elems):
        v |= code(r, c) << (t * bits)
    return v


def test_a_n_equals_k():
    # M=2, K=4, N=4: invocation i passes column i, rows 0 and 1.
    regs = layout.a_register_image(logical(2, 4), N=4, elem_bits=8)
    expected = [[code(0, i), code(1, i)] for i in range(4)]
    assert regs[0].tolist() == expected


def test_a_n_less_than_k():
    # M=2, K=8, N=4: "Invocation 0 passes 0,1 | 0,0 and 1,1 | 1,0", ... lower column in lower bits.
    text = {
        0: [[(0, 0), (0, 1)], [(1, 0), (1, 1)]],
        1: [[(0, 2), (0, 3)], [(1, 2), (1, 3)]],
        2: [[(0, 4), (0, 5)], [(1, 4), (1, 5)]],
        3: [[(0, 6), (0, 7)], [(1, 6), (1, 7)]],
    }
    for bits in (8, 16):
        regs = layout.a_register_image(logical(2, 8), N=4, elem_bits=bits)
        for inv, comps in text.items():
            assert regs[0, inv].tolist() == [packed(c, bits) for c in comps], (bits, inv)


def test_a_n_greater_than_k():
    # M=4, K=2, N=4: inv0 {(0,0),(2,0)}, inv1 {(0,1),(2,1)}, inv2 {(1,0),(3,0)}, inv3 {(1,1),(3,1)}.
    regs = layout.a_register_image(logical(4, 2), N=4, elem_bits=32)
    expected = [
        [code(0, 0), code(2, 0)],
        [code(0, 1), code(2, 1)],
        [code(1, 0), code(3, 0)],
        [code(1, 1), code(3, 1)],
    ]
    assert regs[0].tolist() == expected


def test_a_m1_ignored_lanes():
    # M=1, K=2, N=4: inv0 passes (0,0), inv1 passes (0,1); data of inv2 and inv3 is ignored.
    regs = layout.a_register_image(logical(1, 2), N=4, elem_bits=32)
    assert regs[0, 0].tolist() == [code(0, 0)]
    assert regs[0, 1].tolist() == [code(0, 1)]
    assert layout.a_ignored_lanes(1, 2, 4) == [(2, 0), (3, 0)]
    # the inverse must not read the ignored lanes
    junk = regs.copy()
    junk[0, 2:, 0] = 0xDEAD
    assert np.array_equal(layout.a_from_registers(junk, 1, 2, 32), logical(1, 2))


def test_b_8bit():
    # K=8, N=4, 8-bit: inv j passes (3,j|2,j|1,j|0,j) and (7,j|6,j|5,j|4,j).
    B = logical(8, 4)
    regs = layout.b_register_image(B, elem_bits=8)
    for j in range(4):
        assert regs[0, j].tolist() == [
            packed([(0, j), (1, j), (2, j), (3, j)], 8),
            packed([(4, j), (5, j), (6, j), (7, j)], 8),
        ]


def test_b_16bit():
    # K=4, N=4, 16-bit: inv j passes (1,j|0,j) and (3,j|2,j).
    regs = layout.b_register_image(logical(4, 4), elem_bits=16)
    for j in range(4):
        assert regs[0, j].tolist() == [packed([(0, j), (1, j)], 16), packed([(2, j), (3, j)], 16)]


def test_b_32bit():
    # K=2, N=4, 32-bit: inv j passes (0,j) and (1,j).
    regs = layout.b_register_image(logical(2, 4), elem_bits=32)
    for j in range(4):
        assert regs[0, j].tolist() == [code(0, j), code(1, j)]


def test_c_and_result():
    # M=2, N=4: inv j passes / is assigned (0,j) and (1,j).
    C = logical(2, 4)
    regs = layout.c_register_image(C)
    assert regs[0].tolist() == [[code(0, j), code(1, j)] for j in range(4)]
    assert np.array_equal(layout.c_from_registers(regs), C)


# --- the Intel built-in tables (cl_intel_subgroup_matrix_multiply_accumulate; cl_intel_subgroup_matrix_multiply_accumulate_tf32) -------------------


def test_intel_sg16_int8_a_two_columns_per_lane():
    # N=16, 8-bit, k32: WI sg holds columns 2sg (low byte) and 2sg+1 (high byte) in a short.
    A = np.arange(8 * 32, dtype=np.uint64).reshape(1, 8, 32) & 0xFF
    regs = layout.a_register_image(A, N=16, elem_bits=8)
    for sg in range(16):
        for m in range(8):
            assert regs[0, sg, m] == A[0, m, 2 * sg] | (A[0, m, 2 * sg + 1] << 8)


def test_intel_sg8_int4_a_eight_nibbles():
    # N=8, 4-bit, k64: WI sg holds columns 8sg..8sg+7, nibble j = column 8sg+j.
    rng = np.random.default_rng(0)
    A = rng.integers(0, 16, size=(1, 2, 64)).astype(np.uint64)
    regs = layout.a_register_image(A, N=8, elem_bits=4)
    for sg in range(8):
        want = sum(int(A[0, 1, 8 * sg + j]) << (4 * j) for j in range(8))
        assert int(regs[0, sg, 1]) == want


def test_intel_tf32_a_mapping():
    # N=16 > K=8: component c of WI sg is row 2c + sg // 8, column sg % 8.
    M = 8
    A = logical(M, 8)
    regs = layout.a_register_image(A, N=16, elem_bits=32)
    assert regs.shape == (1, 16, 4)  # float4 for M = 8
    for sg in range(16):
        for c in range(4):
            assert regs[0, sg, c] == code(2 * c + sg // 8, sg % 8)


def test_intel_b_vnni_dwords():
    # b.sj of WI n holds rows 4j..4j+3 of column n (8-bit), lower row in lower bits.
    rng = np.random.default_rng(1)
    B = rng.integers(0, 256, size=(1, 32, 8)).astype(np.uint64)
    regs = layout.b_register_image(B, elem_bits=8)
    assert regs.shape == (1, 8, 8)
    for n in range(8):
        for j in range(8):
            assert int(regs[0, n, j]) == sum(int(B[0, 4 * j + t, n]) << (8 * t) for t in range(4))


@pytest.mark.parametrize(
    "M,K,N,bits",
    [(1, 32, 8, 8), (8, 64, 16, 4), (4, 16, 16, 16), (2, 16, 8, 16), (8, 8, 16, 32), (1, 8, 16, 32)],
)
def test_a_inverse_round_trip(M, K, N, bits):
    rng = np.random.default_rng(M * K * N)
    A = rng.integers(0, 1 << bits, size=(3, M, K)).astype(np.uint64)
    regs = layout.a_register_image(A, N, bits)
    assert np.array_equal(layout.a_from_registers(regs, M, K, bits), A)


@pytest.mark.parametrize("K,bits", [(32, 8), (64, 4), (16, 16), (8, 32)])
def test_b_inverse_round_trip(K, bits):
    rng = np.random.default_rng(K)
    B = rng.integers(0, 1 << bits, size=(2, K, 16)).astype(np.uint64)
    assert np.array_equal(layout.b_from_registers(layout.b_register_image(B, bits), K, bits), B)


def test_split_rows():
    # split: the first subgroup passes rows 0..M/2-1, the second rows M/2..M-1.
    A = logical(4, 32)
    regs = layout.split_a_register_images(A, N=8, elem_bits=8)
    assert regs.shape == (1, 2, 8, 2)
    first = layout.a_from_registers(regs[:, 0], 2, 32, 8)
    second = layout.a_from_registers(regs[:, 1], 2, 32, 8)
    assert np.array_equal(first[0], A[0, :2]) and np.array_equal(second[0], A[0, 2:])


# cl_intel_subgroup_matrix_multiply_accumulate, table "Matrix A": (N, element bits, K) -> columns per work-item and
# the width of the container that packs them (lower column in lower bits).
A_TABLE = [
    (8, 8, 32, 4, 32),
    (8, 4, 64, 8, 32),
    (8, 16, 16, 2, 32),
    (16, 8, 32, 2, 16),
    (16, 4, 64, 4, 16),
    (16, 16, 16, 1, 16),
]


@pytest.mark.parametrize("N,bits,K,per,container", A_TABLE)
def test_intel_a_table(N, bits, K, per, container):
    rng = np.random.default_rng(N * K + bits)
    M = 8
    A = rng.integers(0, 1 << bits, size=(1, M, K)).astype(np.uint64)
    regs = layout.a_register_image(A, N=N, elem_bits=bits)
    assert regs.shape == (1, N, M)
    for sg in range(N):
        for m in range(M):
            want = sum(int(A[0, m, per * sg + j]) << (bits * j) for j in range(per))
            assert int(regs[0, sg, m]) == want and want < (1 << container), (sg, m)


# cl_intel_subgroup_matrix_multiply_accumulate, table "Matrix B": dword b.sj of work-item n packs rows
# j*per .. j*per+per-1 of column n (lower row in lower bits); K = 8 * per.
@pytest.mark.parametrize("bits,per", [(4, 8), (8, 4), (16, 2), (32, 1)])
def test_intel_b_table(bits, per):
    rng = np.random.default_rng(bits)
    K, N = 8 * per, 16
    B = rng.integers(0, 1 << bits, size=(1, K, N)).astype(np.uint64)
    regs = layout.b_register_image(B, elem_bits=bits)
    assert regs.shape == (1, N, 8)
    for n in range(N):
        for j in range(8):
            want = sum(int(B[0, per * j + t, n]) << (bits * t) for t in range(per))
            assert int(regs[0, n, j]) == want, (n, j)
