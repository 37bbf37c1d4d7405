"""The cudnn-frontend attention keywords the C ABI lacks: every keyword that the attention
methods pass to ``_refuse`` has a description (a missing one was a KeyError from
``sdpa_fp8(paged_attention_max_seq_len_kv=...)``, cudnn-frontend's test_mhas_v2 FP8 path),
and values cudnn-frontend treats as unset (None, False, 0 for a length) are not "given"."""
import ast
import pathlib

import pytest

import cudnnfe
from cudnnfe import _attention, data_type
from cpu_helpers import graph


def _refuse_keywords():
    source = pathlib.Path(_attention.__file__).read_text()
    keys = set()
    for call in ast.walk(ast.parse(source)):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "_refuse":
            given = call.args[1]
            assert isinstance(given, ast.Call) and given.func.id == "dict", \
                "_refuse takes dict(keyword=value, ...) so that this test can read its keys"
            keys.update(kw.arg for kw in given.keywords)
    return keys


def test_every_refused_keyword_has_a_description():
    keys = _refuse_keywords()
    assert {"rng_dump", "score_max", "sink_token"} <= keys
    missing = keys - set(_attention._FEATURES)
    assert not missing, f"_FEATURES lacks {sorted(missing)}"


@pytest.mark.parametrize("value", [None, False])
def test_unset_values_are_not_given(value):
    assert _attention._refuse("n", dict(rng_dump=value, score_mod=value)) is None


def test_zero_is_unset_for_lengths():
    assert _attention._refuse("n", dict(max_total_seq_len_q=0, max_total_seq_len_kv=0)) is None
    assert "max_total_seq_len_q" in str(_attention._refuse("n", dict(max_total_seq_len_q=128)))


def test_sdpa_fp8_takes_a_max_seq_len_without_page_tables():
    # test_mhas_v2's FP8 path passes paged_attention_max_seq_len_kv=s_kv with no tables.
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    o, _, _, _ = g.sdpa_fp8(q, q, q, *[1.0] * 6, is_inference=True,
                            paged_attention_k_table=None, paged_attention_v_table=None,
                            paged_attention_max_seq_len_kv=16)
    assert o.get_dim() == [1, 2, 16, 16]


def test_sdpa_fp8_takes_page_tables():
    # Paged K/V is offered for FP8 attention (cudnn-frontend's paged_attention_* keywords).
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    container = g.tensor(dim=[2, 2, 8, 16])
    table = g.tensor(dim=[1, 1, 2, 1], data_type=data_type.INT32)
    lengths = g.tensor(dim=[1, 1, 1, 1], data_type=data_type.INT32)
    o, _, _, _ = g.sdpa_fp8(q, container, container, *[1.0] * 6, is_inference=True,
                            use_padding_mask=True, seq_len_q=lengths, seq_len_kv=lengths,
                            paged_attention_k_table=table, paged_attention_v_table=table,
                            paged_attention_max_seq_len_kv=16)
    assert o.get_dim() == [1, 2, 16, 16]

def test_sdpa_fp8_refuses_a_packed_page_table_by_name():
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    container = g.tensor(dim=[2, 2, 8, 16])
    table = g.tensor(dim=[1, 1, 2, 1], data_type=data_type.INT32)
    table.set_ragged_offset(g.tensor(dim=[2, 1, 1, 1], data_type=data_type.INT32))
    lengths = g.tensor(dim=[1, 1, 1, 1], data_type=data_type.INT32)
    # Raised at validation, where cudnn-frontend refuses a graph (its tests skip there).
    o, _, amax_s, amax_o = g.sdpa_fp8(q, container, container, *[1.0] * 6, is_inference=True,
                                      use_padding_mask=True, seq_len_q=lengths,
                                      seq_len_kv=lengths, paged_attention_k_table=table,
                                      paged_attention_v_table=table)
    for t in (o, amax_s, amax_o):
        t.set_output(True)
    with pytest.raises(cudnnfe.NotOfferedError, match=r"paged_attention_k_table has ragged"):
        g.validate()
