"""Golden examples of reference/coop2.py, worked by hand from the extension
texts (SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing)."""

import numpy as np
import pytest

from reference import coop2 as rc2


def test_reduce_modes():
    x = np.arange(16, dtype=np.int64).reshape(1, 4, 4)
    assert rc2.reduce(x, "row", "sum", 4, 2)[0].tolist() == [[6, 6], [22, 22], [38, 38], [54, 54]]
    assert rc2.reduce(x, "col", "max", 1, 4)[0].tolist() == [[12, 13, 14, 15]]
    assert rc2.reduce(x, "rowcol", "min", 3, 2)[0].tolist() == [[0, 0]] * 3
    assert rc2.reduce(x, "2x2", "sum", 2, 2)[0].tolist() == [
        [0 + 1 + 4 + 5, 2 + 3 + 6 + 7],
        [8 + 9 + 12 + 13, 10 + 11 + 14 + 15],
    ]
    with pytest.raises(ValueError):
        rc2.reduce(x, "2x2", "sum", 4, 4)  # 2x2 halves both dimensions


def test_set_dimension_strides_count_blocks():
    # stride[L-1] = 1, stride[i] = stride[i+1] * ceil(Dim[i+1] / blockSize[i+1])
    t = rc2.create_layout(3).set_block(1, 2, 4).set_dimension(5, 6, 10)
    assert t.stride == (3 * 3, 3, 1) and t.span == (5, 6, 10) and t.offset == (0, 0, 0)


def test_view_set_dimension_strides():
    v = rc2.create_view(3, True, 0, 1, 2).set_dimension(2, 3, 4)
    assert v.view_stride == (12, 4, 1) and v.clip == (0, 0xFFFFFFFF, 0, 0xFFFFFFFF)


def test_slice_offsets_add_and_address():
    t = rc2.create_layout(2).set_dimension(4, 6).slice(1, 2, 2, 3).slice(1, 2, 0, 3)
    assert t.offset == (2, 2) and t.span == (2, 3)
    idx, _, _ = rc2.tensor_addresses(t, 2, 3)
    assert idx.tolist() == [[2 * 6 + 2, 2 * 6 + 3, 2 * 6 + 4], [3 * 6 + 2, 3 * 6 + 3, 3 * 6 + 4]]


@pytest.mark.parametrize(
    "mode, want",
    [
        # one row of a 1 x 5 layout read from offset -3 over 10 columns
        ("edge", [0, 0, 0, 0, 1, 2, 3, 4, 4, 4]),
        ("repeat", [2, 3, 4, 0, 1, 2, 3, 4, 0, 1]),
        # c smod 8, then 8 - c where c >= 5
        ("mirror", [3, 2, 1, 0, 1, 2, 3, 4, 3, 2]),
        ("const", [-2, -2, -2, 0, 1, 2, 3, 4, -2, -2]),
    ],
)
def test_clamp_modes(mode, want):
    t = rc2.create_layout(1, mode).set_dimension(5).slice(-3, 10)
    idx, _, _ = rc2.tensor_addresses(t, 1, 10)
    assert idx[0].tolist() == want


def test_store_out_of_bounds_is_discarded_in_every_mode():
    t = rc2.create_layout(1, "edge").set_dimension(5).slice(-1, 3)
    idx, _, _ = rc2.tensor_addresses(t, 1, 3, store=True)
    assert idx[0].tolist() == [rc2.CLIPPED, 0, 1]


def test_undefined_mode_out_of_bounds_refused():
    t = rc2.create_layout(1).set_dimension(5).slice(-1, 3)
    with pytest.raises(ValueError):
        rc2.tensor_addresses(t, 1, 3)


def test_view_clip_and_permutation():
    t = rc2.create_layout(2).set_dimension(2, 3)
    v = rc2.create_view(2, False, 1, 0).set_clip(0, 2, 1, 2)
    idx, _, _ = rc2.tensor_addresses(t, 2, 3, v=v)
    # width = min(3, 2) = 2; index = r*2 + (c-1); view coords split with dims (2, 3)
    # permuted: vc[0] = i % 2, vc[1] = (i // 2) % 3; linear = vc0*3 + vc1
    assert idx.tolist() == [[rc2.CLIPPED, 0, 3], [rc2.CLIPPED, 1, 4]]


def test_block_coordinates():
    t = rc2.create_layout(2).set_block(2, 2).set_dimension(4, 4)
    idx, blk, inb = rc2.tensor_addresses(t, 4, 4)
    assert idx[3, 1] == 1 * 2 + 0 and blk[3, 1].tolist() == [1, 0] and inb[3, 1].tolist() == [1, 1]
