"""data_type.BOOLEAN graph inputs and outputs are cuDNN's bit-packed booleans (C
BOOLEAN_PACKED: element offset o is bit o % 8, least significant first, of byte o / 8), as
cudnn-frontend's samples 26 and 30 use them; on the CPU reference, checked against NumPy."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import graph


def _mask_graph(shape):
    g = graph()
    x = g.tensor(name="x", dim=list(shape))
    mask = g.cmp_gt(x, 0.0, name="cmp").set_output(True).set_data_type(data_type.BOOLEAN)
    g.build()
    return g, x, mask


def test_boolean_output_is_bit_packed_into_a_full_size_bool_array(rng):
    g, x, mask = _mask_graph((4, 12))
    assert mask.get_data_type() == data_type.BOOLEAN_PACKED
    xa = rng.standard_normal((4, 12)).astype(np.float32)
    out = np.zeros((4, 12), np.bool_)  # cudnn-frontend's samples pass torch.bool of the shape
    g.execute({x: xa, mask: out})
    packed = np.packbits((xa > 0).reshape(-1), bitorder="little")
    np.testing.assert_array_equal(out.view(np.uint8).reshape(-1)[:6], packed)
    assert not out.reshape(-1)[6:].any()  # bytes past ceil(48 / 8) are not written


def test_boolean_output_into_a_packed_uint8_array(rng):
    g, x, mask = _mask_graph((4, 16, 1, 1))
    xa = rng.standard_normal((4, 16, 1, 1)).astype(np.float32)
    out = np.zeros((4, 2, 1, 1), np.uint8)  # sample 26: [N, C // 8, 1, 1] uint8
    g.execute({x: xa, mask: out})
    unpacked = np.unpackbits(out.reshape(-1), bitorder="little").reshape(4, 16, 1, 1)
    np.testing.assert_array_equal(unpacked.astype(bool), xa > 0)


def test_boolean_input_is_read_bit_packed(rng):
    g = graph()
    dy = g.tensor(name="dy", dim=[3, 8])
    bits = g.tensor(name="bits", dim=[3, 8], data_type=data_type.BOOLEAN)
    out = g.mul(dy, bits, name="drelu").set_output(True)
    g.build()
    dya = rng.standard_normal((3, 8)).astype(np.float32)
    keep = rng.random((3, 8)) < 0.5
    got = np.empty((3, 8), np.float32)
    g.execute({dy: dya, bits: np.packbits(keep.reshape(-1), bitorder="little"), out: got})
    np.testing.assert_array_equal(got, np.where(keep, dya, 0))


def test_packed_arrays_are_checked():
    g, x, mask = _mask_graph((4, 12))
    xa = np.zeros((4, 12), np.float32)
    with pytest.raises(ValueError, match="needs 6 bytes but its array"):
        g.execute({x: xa, mask: np.zeros(5, np.uint8)})
    with pytest.raises(ValueError, match="one-byte elements"):
        g.execute({x: xa, mask: np.zeros(48, np.float32)})


def test_an_unset_comparison_output_stays_one_byte(rng):
    g = graph()
    x = g.tensor(name="x", dim=[2, 3])
    mask = g.cmp_gt(x, 0.0).set_output(True)
    g.build()
    assert mask.get_data_type() == data_type.BOOLEAN
    xa = rng.standard_normal((2, 3)).astype(np.float32)
    out = np.empty((2, 3), np.bool_)
    g.execute({x: xa, mask: out})
    np.testing.assert_array_equal(out, xa > 0)


def test_bit_packed_type_survives_graph_json():
    g = graph()
    x = g.tensor(name="x", dim=[2, 8])
    g.cmp_gt(x, 0.0, name="cmp").set_output(True).set_data_type(data_type.BOOLEAN)
    data = g.serialize()
    assert b'"BOOLEAN_PACKED"' in data
    g2 = cudnnfe.pygraph.deserialize(data, build=False)
    assert g2.get_tensor("cmp::OUT_0").get_data_type() == data_type.BOOLEAN_PACKED


def test_graph_wrapper_allocates_a_packed_output(rng):
    """cudnn-frontend's sample 30: a Graph whose outputs include a BOOLEAN mask, called
    without output arrays; the wrapper allocates one byte per element."""
    from cpu_helpers import CPU, F32

    x = rng.standard_normal((2, 8)).astype(np.float32)
    with cudnnfe.Graph(target=CPU, inputs=["cmp::0"], outputs=["mask"], **F32) as g:
        g.cmp_gt(x, 0.0, name="cmp").set_output(True).set_data_type(data_type.BOOLEAN) \
            .set_name("mask")
    out = g(x)
    mask = out[0] if isinstance(out, (tuple, list)) else out
    assert mask.dtype == np.bool_ and mask.shape == (2, 8)
    np.testing.assert_array_equal(mask.view(np.uint8).reshape(-1)[:2],
                                  np.packbits((x > 0).reshape(-1), bitorder="little"))
