"""paged_cache_load on the CPU reference against a NumPy reference written here (fancy
indexing, independent of the library): a paged K/V container [num_pages, h, page_size, d]
gathered by a page table [b, 1, pages, 1] and lengths [b, 1, 1, 1] (INT32) into
[b, h, s, d]; rows past a sequence's length are 0 on the CPU reference. Row-major and
K^T-strided outputs, a shortened s, HALF values, the node's port names, and the bad inputs
(shape and type at add/validate, page numbers and lengths at execute)."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import graph, run


def numpy_paged_cache_load(container, seq_len, page_table, s):
    """y[n, h, j] = container[page_table[n, 0, j // P, 0], h, j % P] for j < seq_len[n]."""
    page_size = container.shape[2]
    j = np.arange(s)
    pages = page_table[:, 0, j // page_size, 0]                 # [b, s]
    rows = container[pages, :, j % page_size, :]                # [b, s, h, d]
    y = rows.transpose(0, 2, 1, 3).astype(np.float64)           # [b, h, s, d]
    valid = j[None, :] < seq_len.reshape(-1, 1)                 # [b, s]
    return np.where(valid[:, None, :, None], y, 0.0)


def make(rng, b=3, h=2, page_size=4, pages=3, d=5, spare=2, dtype=np.float32):
    num_pages = b * pages + spare
    container = rng.standard_normal((num_pages, h, page_size, d)).astype(dtype)
    table = rng.permutation(num_pages)[: b * pages].astype(np.int32).reshape(b, 1, pages, 1)
    return container, table


def add(g, container, table, dtype=data_type.FLOAT, name="load"):
    b = table.shape[0]
    c = g.tensor(name="container", dim=list(container.shape),
                 stride=[int(x) // container.itemsize for x in container.strides], data_type=dtype)
    lens = g.tensor(name="seq_len", dim=[b, 1, 1, 1], stride=[1, 1, 1, 1],
                    data_type=data_type.INT32)
    t = g.tensor(name="page_table", dim=list(table.shape),
                 stride=[table.shape[2], table.shape[2], 1, 1], data_type=data_type.INT32)
    return c, lens, t, g.paged_cache_load(c, lens, t, name=name)


def test_row_major_matches_numpy(rng):
    container, table = make(rng)
    lengths = np.array([12, 5, 1], np.int32).reshape(3, 1, 1, 1)
    g = graph()
    c, lens, t, y = add(g, container, table)
    y.set_output(True)
    assert y.get_name() == "load::yOut"
    assert y.get_dim() == [3, 2, 12, 5] and y.get_stride() == [120, 60, 5, 1]
    (got,) = run(g, {c: container, lens: lengths, t: table}, [y])
    np.testing.assert_array_equal(got, numpy_paged_cache_load(container, lengths, table, 12))


def test_keys_transposed_and_shortened(rng):
    # K^T's layout (s innermost) and s = 10 < pages * page_size (ceil(10 / 4) = 3 pages).
    container, table = make(rng, b=2)
    lengths = np.array([10, 7], np.int32).reshape(2, 1, 1, 1)
    g = graph()
    c, lens, t, y = add(g, container, table)
    y.set_dim([2, 2, 10, 5]).set_stride([100, 50, 1, 10]).set_output(True)
    (got,) = run(g, {c: container, lens: lengths, t: table}, [y])
    assert got.strides == tuple(4 * x for x in (100, 50, 1, 10))
    np.testing.assert_array_equal(got, numpy_paged_cache_load(container, lengths, table, 10))


def test_half_values_are_copied_exactly(rng):
    container, table = make(rng, dtype=np.float16)
    lengths = np.array([3, 12, 8], np.int32).reshape(3, 1, 1, 1)
    g = graph(io_data_type=data_type.HALF)
    c, lens, t, y = add(g, container, table, dtype=data_type.HALF)
    y.set_output(True)
    assert y.get_data_type() == data_type.HALF
    (got,) = run(g, {c: container, lens: lengths, t: table}, [y])
    np.testing.assert_array_equal(got.astype(np.float64),
                                  numpy_paged_cache_load(container, lengths, table, 12))


def test_bad_shapes_and_types_name_node_port_and_rule(rng):
    g = graph()
    c = g.tensor(name="cache", dim=[6, 2, 4, 8], stride=[64, 32, 8, 1], data_type=data_type.FLOAT)
    lens = g.tensor(name="lengths", dim=[2, 1, 1, 1], stride=[1, 1, 1, 1],
                    data_type=data_type.INT32)
    wide = g.tensor(name="wide", dim=[2, 1, 3, 2], stride=[6, 6, 2, 1],
                    data_type=data_type.INT32)
    with pytest.raises(cudnnfe.InvalidGraphError,
                       match=r'paged_cache_load "load".*page_table "wide" is \[2,1,3,2\]'):
        g.paged_cache_load(c, lens, wide, name="load")
    g = graph()
    c = g.tensor(name="cache", dim=[6, 2, 4, 8], stride=[64, 32, 8, 1], data_type=data_type.FLOAT)
    lens = g.tensor(name="lengths", dim=[2, 1, 1, 1], stride=[1, 1, 1, 1],
                    data_type=data_type.INT32)
    ftable = g.tensor(name="ftable", dim=[2, 1, 3, 1], stride=[3, 3, 1, 1],
                      data_type=data_type.FLOAT)
    g.paged_cache_load(c, lens, ftable, name="load").set_output(True)
    with pytest.raises(cudnnfe.InvalidGraphError, match=r'page_table "ftable" is FLOAT; '
                                                        r'expected an integer type'):
        g.validate()


def test_bad_page_numbers_and_lengths_fail_at_execute(rng):
    container, table = make(rng, b=2, spare=0)
    bad_table = table.copy()
    bad_table[1, 0, 2, 0] = 6  # the container has pages 0..5
    g = graph()
    c, lens, t, y = add(g, container, table)
    y.set_output(True)
    ok = np.array([12, 12], np.int32).reshape(2, 1, 1, 1)
    with pytest.raises(cudnnfe.InvalidArgumentError, match=r"page_table\[1\]\[2\] = 6"):
        run(g, {c: container, lens: ok, t: bad_table}, [y])
    too_long = np.array([12, 13], np.int32).reshape(2, 1, 1, 1)
    with pytest.raises(cudnnfe.InvalidArgumentError, match=r"seq_len\[1\] = 13 is outside 0..12"):
        run(g, {c: container, lens: too_long, t: table}, [y])
