"""Logical matrices <-> per-invocation register images (the spec's mapping rules).

Source: SPV_INTEL_subgroup_matrix_multiply_accumulate, "Mapping Matrix Data to
Invocations", which the OpenCL built-ins of
cl_intel_subgroup_matrix_multiply_accumulate follow (and _tf32 for the tf32 row).

Conventions: logical matrices hold raw element bits (uint64) with a leading
batch axis S (one matrix per subgroup): A is (S, M, K), B is (S, K, N), C and
the result are (S, M, N).  Register images are (S, N, components) of raw
container bits (uint64), where N is the subgroup size and axis 1 the
invocation (SubgroupLocalInvocationId).

These functions go from the logical matrix to the registers (what a host or
application must pass); the emulator in ``cts.backends.emulator`` goes the
other way with its own code, so a wrong rule on one side shows up as a
mismatch.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "a_components",
    "a_register_image",
    "a_from_registers",
    "b_components",
    "b_register_image",
    "b_from_registers",
    "c_register_image",
    "c_from_registers",
    "split_a_register_images",
    "a_ignored_lanes",
]


def _u64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.uint64)


def _pack(elems: np.ndarray, per: int, elem_bits: int) -> np.ndarray:
    """(..., n*per) element bits -> (..., n) packed values: value j holds
    elements j*per .. j*per+per-1, element j*per+t in bits t*elem_bits and up
    (the lower element in the lower bits)."""
    fits = elems.size == 0 or elems.max() >> elem_bits == 0
    if elem_bits in (4, 8, 16) and per * elem_bits in (8, 16, 32, 64) and per > 1 and fits:
        # the packed value is the little-endian word of its elements' bytes / halfwords
        if elem_bits == 4:  # two nibbles a byte, the lower element in the low nibble
            small = elems[..., 0::2].astype(np.uint8) | (elems[..., 1::2].astype(np.uint8) << np.uint8(4))
            small = np.ascontiguousarray(small)
        else:
            small = np.ascontiguousarray(elems, dtype=f"<u{elem_bits // 8}")
        return small.view(f"<u{per * elem_bits // 8}").astype(np.uint64)
    packed = np.ascontiguousarray(elems[..., 0::per])
    for t in range(1, per):
        packed |= elems[..., t::per] << np.uint64(t * elem_bits)
    return packed


def a_components(M: int, K: int, N: int) -> int:
    """Number of components of the A operand per invocation.

    N <= K: one value per row (M).  N > K: each invocation carries every
    (N/K)-th row, so ceil(M / (N/K)) values (the tf32 table's ceil(M/2)).
    """
    if N <= K:
        return M
    f = N // K
    return -(-M // f)


def a_register_image(A: np.ndarray, N: int, elem_bits: int) -> np.ndarray:
    """Matrix A (S, M, K) of raw element bits -> registers (S, N, comps).

    * N == K: invocation i passes column i; component r is row r.
    * N <  K: invocation i passes columns i*(K/N) ... i*(K/N)+K/N-1 packed
      into one value per row, the lower column in the lower bits.
    * N >  K (N = f*K): invocation i passes column i mod K of rows
      f*c + i div K for components c; rows past M are not passed (those
      lanes carry data that must be ignored; here zero, see
      ``a_ignored_lanes``).
    """
    A = _u64(A)
    S, M, K = A.shape
    if K % N == 0:
        per = K // N
        packed = _pack(A, per, elem_bits)  # (S, M, N): columns i*per .. i*per+per-1 in value i
        return np.ascontiguousarray(packed.transpose(0, 2, 1))
    if N % K == 0:
        f = N // K
        comps = a_components(M, K, N)
        out = np.zeros((S, N, comps), dtype=np.uint64)
        inv = np.arange(N)[:, None]
        row = f * np.arange(comps)[None, :] + inv // K  # (N, comps): the row invocation i passes in c
        col = np.broadcast_to(inv % K, row.shape)
        keep = row < M
        out[:, keep] = A[:, row[keep], col[keep]]
        return out
    raise ValueError(f"A mapping needs K % N == 0 or N % K == 0 (K={K}, N={N})")


def a_ignored_lanes(M: int, K: int, N: int) -> list[tuple[int, int]]:
    """(invocation, component) slots of A whose data the spec says is ignored."""
    if N <= K:
        return []
    f = N // K
    return [(i, c) for i in range(N) for c in range(a_components(M, K, N)) if f * c + i // K >= M]


def a_from_registers(regs: np.ndarray, M: int, K: int, elem_bits: int) -> np.ndarray:
    """Inverse of ``a_register_image``: registers (S, N, comps) -> A (S, M, K)."""
    regs = _u64(regs)
    S, N, _ = regs.shape
    mask = np.uint64((1 << elem_bits) - 1)
    A = np.zeros((S, M, K), dtype=np.uint64)
    if K % N == 0:
        per = K // N
        for t in range(per):
            vals = (regs[:, :, :M] >> np.uint64(t * elem_bits)) & mask  # (S, N, M)
            A[:, :, t::per] = vals.transpose(0, 2, 1)
        return A
    f = N // K
    for i in range(N):
        for c in range(regs.shape[2]):
            row = f * c + i // K
            if row < M:
                A[:, row, i % K] = regs[:, i, c] & mask
    return A


def split_a_register_images(A: np.ndarray, N: int, elem_bits: int) -> np.ndarray:
    """cl_intel_subgroup_split_matrix_multiply_accumulate: the first subgroup of
    a pair passes rows 0 .. M/2-1 of A, the second rows M/2 .. M-1, each with
    the base extension's packing.  A (P, M, K) -> (P, 2, N, M/2)."""
    A = _u64(A)
    P, M, K = A.shape
    h = M // 2
    first = a_register_image(A[:, :h, :], N, elem_bits)
    second = a_register_image(A[:, h:, :], N, elem_bits)
    return np.stack([first, second], axis=1)


def b_components(K: int, elem_bits: int) -> int:
    return K if elem_bits > 16 else K * elem_bits // 32


def b_register_image(B: np.ndarray, elem_bits: int) -> np.ndarray:
    """Matrix B (S, K, N) -> registers (S, N, comps).

    Invocation i passes column i.  Elements wider than 16 bits: component r is
    row r.  Elements of 16 bits or fewer: 32-bit values each packing 32/bits
    consecutive rows, the lower row in the lower bits ("VNNI").
    """
    B = _u64(B)
    S, K, N = B.shape
    if elem_bits > 16:
        return np.ascontiguousarray(B.transpose(0, 2, 1))
    per = 32 // elem_bits
    return _pack(B.transpose(0, 2, 1), per, elem_bits)  # (S, N, K/per): rows t*per .. in dword t


def b_from_registers(regs: np.ndarray, K: int, elem_bits: int) -> np.ndarray:
    """Inverse of ``b_register_image``: (S, N, comps) -> B (S, K, N)."""
    regs = _u64(regs)
    S, N, _ = regs.shape
    if elem_bits > 16:
        return np.ascontiguousarray(regs[:, :, :K].transpose(0, 2, 1))
    per = 32 // elem_bits
    mask = np.uint64((1 << elem_bits) - 1)
    B = np.zeros((S, K, N), dtype=np.uint64)
    for t in range(per):
        B[:, t::per, :] = ((regs >> np.uint64(t * elem_bits)) & mask).transpose(0, 2, 1)
    return B


def c_register_image(C: np.ndarray) -> np.ndarray:
    """C or the result (S, M, N) -> (S, N, M): invocation i holds column i,
    component r is row r."""
    return np.ascontiguousarray(_u64(C).transpose(0, 2, 1))


def c_from_registers(regs: np.ndarray) -> np.ndarray:
    """Registers (S, N, M) -> matrix (S, M, N)."""
    return np.ascontiguousarray(_u64(regs).transpose(0, 2, 1))
