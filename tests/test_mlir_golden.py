"""Golden examples of the MLIR reference (MLIR gpu dialect)."""

import numpy as np
import pytest

from reference import mlir as ref


def _rfc_matrix(first_row: int) -> np.ndarray:
    """The RFC's 4x4 blocks: element "rc" of rows first_row .. first_row+3."""
    return np.array([[10 * (first_row + r) + c for c in range(4)] for r in range(4)])


def test_rfc_mma_rotate_example():
    """Seed 004: MMA0 = rows 00..33, MMA1 = rows 40..73, offset 4 -> rows
    10..43."""
    out = ref.mma_rotate_sequence(_rfc_matrix(0), _rfc_matrix(4), 4)
    assert np.array_equal(out, _rfc_matrix(1))


def test_rfc_lowering_equals_sequence_with_one_element_per_lane():
    """With subgroup 16 and invocation i holding element i (row-major, the
    RFC's arrangement), extract / select / rotate / insert gives the RFC
    sequence semantics for every offset."""
    a, b = _rfc_matrix(0), _rfc_matrix(4)
    for off in range(16):
        low = ref.mma_rotate_lowered(a.reshape(16, 1), b.reshape(16, 1), off)
        assert np.array_equal(low.reshape(4, 4), ref.mma_rotate_sequence(a, b, off))


def test_gpu_rotate_formula_and_valid():
    v = np.arange(16) * 10
    out, valid = ref.gpu_rotate_expected(v, 1, 4)
    assert out[:4].tolist() == [10, 20, 30, 0]
    assert valid.tolist() == [True] * 4 + [False] * 12
    with pytest.raises(ValueError):
        ref.gpu_rotate_expected(v, 4, 4)  # offset must be < width


def test_load_store_lead_dimension_and_transpose():
    mem = np.arange(40)
    m = ref.load_matrix(mem, 1, 2, 8, 2, 3)
    assert m.tolist() == [[10, 11, 12], [18, 19, 20]]
    mt = ref.load_matrix(mem, 0, 0, 8, 2, 3, transpose=True)
    assert mt.tolist() == [[0, 8, 16], [1, 9, 17]]
    back = ref.store_matrix(np.zeros(40, int), mt, 0, 0, 8, transpose=True)
    assert back[[0, 1, 8, 9, 16, 17]].tolist() == [0, 1, 8, 9, 16, 17] and back[2] == 0


def test_elementwise_integer_rules():
    a, b = np.array([-7, 7, -(2**31)]), np.array([2, -2, 1])
    assert ref.elementwise("divs", [a, b], "i32").tolist() == [-3, -3, -(2**31)]
    assert ref.elementwise("divu", [np.array([-2]), np.array([2])], "i32").tolist() == [2**31 - 1]
    assert ref.elementwise("negates", [np.array([-(2**31)])], "i32").tolist() == [-(2**31)]


def test_thread_map_check_finds_duplicates():
    logical = np.arange(8).reshape(2, 4)
    good = np.array([[0, 4], [1, 5], [2, 6], [3, 7]])
    idx, problems = ref.check_thread_map(good, logical)
    assert problems == [] and sorted(idx.reshape(-1).tolist()) == list(range(8))
    bad = good.copy()
    bad[3, 1] = 0
    assert ref.check_thread_map(bad, logical)[1]


def test_elementwise_rules_for_special_values():
    """reference.mlir.ELEMENTWISE_RULES: maxf / minf are arith.maximumf /
    minimumf (NaN-propagating, -0 < +0), not maxnumf; negatef flips the sign
    of zeros; truncf overflows to infinity."""
    import numpy as np

    from reference.mlir import elementwise_special, flush_subnormals

    nan, inf = np.nan, np.inf
    a = np.array([0.0, -0.0, nan, 1.0, -inf, 2.0])
    b = np.array([-0.0, 0.0, 1.0, nan, 3.0, 2.0])
    mx = elementwise_special("maxf", [a, b])
    mn = elementwise_special("minf", [a, b])
    assert np.array_equal(np.signbit(mx[:2]), [False, False]) and np.array_equal(
        np.signbit(mn[:2]), [True, True]
    )
    assert np.isnan(mx[2:4]).all() and np.isnan(mn[2:4]).all()
    assert mx[4] == 3.0 and mn[4] == -inf and mx[5] == mn[5] == 2.0
    neg = elementwise_special("negatef", [np.array([0.0, -0.0])])
    assert np.array_equal(np.signbit(neg), [True, False])
    assert np.isnan(elementwise_special("subf", [np.array([inf]), np.array([inf])])).all()
    assert np.isnan(elementwise_special("mulf", [np.array([0.0]), np.array([-inf])])).all()
    assert elementwise_special("divf", [np.array([-1.0]), np.array([0.0])])[0] == -inf
    with np.errstate(over="ignore"):  # the overflow to infinity is the rule under test
        assert np.float16(elementwise_special("truncf", [np.array([65520.0])])[0]) == np.inf
    f = flush_subnormals(np.array([-(2.0**-130), 2.0**-130, 2.0**-126, nan]), 2.0**-126)
    assert (
        np.array_equal(np.signbit(f[:2]), [True, False])
        and f[0] == 0
        and f[2] == 2.0**-126
        and np.isnan(f[3])
    )
