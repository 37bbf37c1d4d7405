"""Options and output structs are built with the _sized init functions at this package's size.

The header's ``cudnnfe_X_init(ptr)`` is a C macro passing ``sizeof``; cffi sees only
``cudnnfe_X_init_sized(ptr, struct_size)``, which the package must call with the size of
the struct it allocated (``cudnnfe._structs.new``).
"""
import re
from pathlib import Path

import pytest

import cudnnfe
from cudnnfe import _cdef, _structs, ffi, lib

PACKAGE = Path(cudnnfe.__file__).resolve().parent
SIZED = sorted(set(re.findall(r"typedef struct (cudnnfe_\w+) \{\s*size_t struct_size;",
                              _cdef.CDEF)))


def test_every_sized_struct_has_an_init_sized_function():
    assert len(SIZED) >= 15
    for name in SIZED:
        assert hasattr(lib, name + "_init_sized"), name


@pytest.mark.parametrize("name", SIZED)
def test_new_initializes_at_the_package_size(name):
    ctype = name + "_t"
    obj = _structs.new(ctype)
    assert obj.struct_size == ffi.sizeof(ctype)


def test_appended_fields_get_their_defaults():
    o = _structs.new("cudnnfe_sdpa_options_t")
    assert (o.window_left, o.window_right, o.attn_scale_tensor, o.dropout_probability) == \
        (-1, -1, 0, 0.0)
    assert o.diagonal_alignment == lib.CUDNNFE_DIAGONAL_TOP_LEFT
    b = _structs.new("cudnnfe_sdpa_backward_options_t")
    assert (b.window_left, b.window_right, b.dropout_scale_inv) == (-1, -1, 0)
    n = _structs.new("cudnnfe_norm_options_t")
    assert n.momentum == pytest.approx(0.1) and n.epsilon == pytest.approx(1e-5)
    r = _structs.new("cudnnfe_resample_options_t")
    assert list(r.window) == [2, 2, 2] and r.mode == lib.CUDNNFE_RESAMPLE_MAXPOOL
    assert _structs.new("cudnnfe_build_options_t").max_workspace_size == -1


def test_the_library_writes_only_the_size_it_is_given():
    """An older caller's smaller struct (the sdpa options before the attention options
    were appended) is initialized without a byte written past it."""
    ctype = "cudnnfe_sdpa_options_t"
    old_size = ffi.offsetof(ctype, "attn_scale_tensor")
    full = ffi.sizeof(ctype)
    buf = ffi.new("unsigned char[]", full)
    for i in range(full):
        buf[i] = 0xAB
    _structs.init_function(ctype)(ffi.cast(ctype + " *", buf), old_size)
    o = ffi.cast(ctype + " *", buf)
    assert o.struct_size == old_size and o.attn_scale == 0.0 and o.causal_mask == 0
    assert bytes(ffi.buffer(buf, full)[old_size:]) == b"\xab" * (full - old_size)


def test_no_call_site_uses_the_unsized_init_name():
    for path in PACKAGE.glob("*.py"):
        if path.name == "_cdef.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"lib\.cudnnfe_\w+_init\(", text), path.name
        assert "_init_sized(" not in text or path.name == "_structs.py", path.name


def test_every_op_builds_its_options_at_the_package_size(monkeypatch):
    made = []
    real = _structs.new

    def spy(ctype):
        obj = real(ctype)
        made.append((ctype, obj.struct_size))
        return obj

    monkeypatch.setattr(_structs, "new", spy)
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT,
                        target=cudnnfe.target.CPU_REFERENCE)
    x = g.tensor(dim=[2, 3, 4, 4])
    c = g.tensor(dim=[1, 3, 1, 1])
    q = g.tensor(dim=[1, 2, 4, 8])
    g.sdpa(q, q, q)
    g.sdpa_backward(q, q, q, q, q, g.tensor(dim=[1, 2, 4, 1]))
    g.batchnorm(x, c, c)
    g.instancenorm("training", x, c, c)
    g.resample(x)
    g.rng([4], seed=1)
    g.reshape(x, dim=[96])
    y = g.relu(x).set_output(True)
    g.build()
    assert {ctype for ctype, _ in made} >= {
        "cudnnfe_sdpa_options_t", "cudnnfe_sdpa_backward_options_t", "cudnnfe_norm_options_t",
        "cudnnfe_resample_options_t", "cudnnfe_rng_options_t", "cudnnfe_layout_options_t",
        "cudnnfe_pointwise_options_t", "cudnnfe_build_options_t"}
    for ctype, size in made:
        assert size == ffi.sizeof(ctype), ctype
    assert y.get_is_output()
