//! Ragged (packed, "THD") and paged K/V attention on the CPU reference,
//! through the safe options (`SdpaOptions::ragged_offset_q` .. `_o`,
//! `page_table_k`, `page_table_v`, `max_seq_len_kv`): the same numbers as a
//! padded dense attention computed here, as
//! tests/test_cpu_attention_ragged.cpp checks in C.
mod common;

use common::data;
use cudnnfe::*;

type TestResult = Result<(), Error>;

/// Padded attention over dense [b, h, s, d] buffers with per-batch lengths:
/// o for the valid rows (others 0).
#[allow(clippy::too_many_arguments)]
fn padded_attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    (b, h, h_kv, s_q, s_kv, d): (usize, usize, usize, usize, usize, usize),
    len_q: &[i32],
    len_kv: &[i32],
) -> Vec<f32> {
    let scale = 1.0 / (d as f64).sqrt();
    let mut o = vec![0f32; b * h * s_q * d];
    for n in 0..b {
        for hh in 0..h {
            let hk = hh / (h / h_kv);
            for i in 0..len_q[n] as usize {
                let scores: Vec<f64> = (0..len_kv[n] as usize)
                    .map(|j| {
                        (0..d)
                            .map(|c| {
                                q[((n * h + hh) * s_q + i) * d + c] as f64
                                    * k[((n * h_kv + hk) * s_kv + j) * d + c] as f64
                            })
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                for c in 0..d {
                    o[((n * h + hh) * s_q + i) * d + c] = scores
                        .iter()
                        .enumerate()
                        .map(|(j, s)| {
                            (s - max).exp() / sum * v[((n * h_kv + hk) * s_kv + j) * d + c] as f64
                        })
                        .sum::<f64>()
                        as f32;
                }
            }
        }
    }
    o
}

/// The valid rows of a dense [b, h, s, w] tensor packed by sequence
/// (token-major, then head): the buffer (b*s*h*w elements, the tail NaN)
/// and the element offset of each sequence (b + 1 of them).
fn pack_thd(
    dense: &[f32],
    (b, h, s, w): (usize, usize, usize, usize),
    lens: &[i32],
) -> (Vec<f32>, Vec<i32>) {
    let mut buf = vec![f32::NAN; b * s * h * w];
    let mut offsets = vec![0i32; b + 1];
    let mut at = 0usize;
    for n in 0..b {
        offsets[n] = at as i32;
        for i in 0..lens[n] as usize {
            for hh in 0..h {
                let src = ((n * h + hh) * s + i) * w;
                let dst = at + (i * h + hh) * w;
                buf[dst..dst + w].copy_from_slice(&dense[src..src + w]);
            }
        }
        at += lens[n] as usize * h * w;
    }
    offsets[b] = at as i32;
    (buf, offsets)
}

fn thd(name: &str, (b, h, s, w): (usize, usize, usize, usize)) -> TensorDesc {
    TensorDesc::new([b as i64, h as i64, s as i64, w as i64])
        .name(name)
        .dtype(DataType::Float)
        .strides([(s * h * w) as i64, w as i64, (h * w) as i64, 1])
}

#[test]
fn ragged_attention_matches_padded() -> TestResult {
    let (b, h, h_kv, s_q, s_kv, d) = (2, 2, 1, 4, 5, 4);
    let (len_q, len_kv) = ([3i32, 4], [5i32, 2]);
    let (q_d, k_d, v_d) = (
        data(b * h * s_q * d, 51),
        data(b * h_kv * s_kv * d, 52),
        data(b * h_kv * s_kv * d, 53),
    );
    let (q_p, off_q) = pack_thd(&q_d, (b, h, s_q, d), &len_q);
    let (k_p, off_kv) = pack_thd(&k_d, (b, h_kv, s_kv, d), &len_kv);
    let (v_p, _) = pack_thd(&v_d, (b, h_kv, s_kv, d), &len_kv);

    let mut g = Graph::named("ragged")?;
    let q = g.add_tensor(&thd("q", (b, h, s_q, d)))?;
    let k = g.add_tensor(&thd("k", (b, h_kv, s_kv, d)))?;
    let v = g.add_tensor(&thd("v", (b, h_kv, s_kv, d)))?;
    let lq = g.input("seq_len_q", DataType::Int32, &[b as i64, 1, 1, 1])?;
    let lkv = g.input("seq_len_kv", DataType::Int32, &[b as i64, 1, 1, 1])?;
    let rq = g.input("ragged_q", DataType::Int32, &[b as i64 + 1, 1, 1, 1])?;
    let rkv = g.input("ragged_kv", DataType::Int32, &[b as i64 + 1, 1, 1, 1])?;
    let opts = SdpaOptions::default()
        .padding(lq, lkv)
        .ragged_offset_q(rq)
        .ragged_offset_k(rkv)
        .ragged_offset_v(rkv)
        .ragged_offset_o(rq);
    assert_eq!(opts.ragged_offset_o, Some(rq));
    let out = g.sdpa(q, k, v, &opts)?;
    g.set_output(out.o, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    let mut o = vec![f32::NAN; b * s_q * h * d];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_p)),
            (k, HostBuffer::input(&k_p)),
            (v, HostBuffer::input(&v_p)),
            (lq, HostBuffer::input(&len_q)),
            (lkv, HostBuffer::input(&len_kv)),
            (rq, HostBuffer::input(&off_q)),
            (rkv, HostBuffer::input(&off_kv)),
            (out.o, HostBuffer::output(&mut o)),
        ],
    )?;
    let want = padded_attention(
        &q_d,
        &k_d,
        &v_d,
        (b, h, h_kv, s_q, s_kv, d),
        &len_q,
        &len_kv,
    );
    let (want, _) = pack_thd(&want, (b, h, s_q, d), &len_q);
    let packed = off_q[b] as usize;
    common::assert_close(&o[..packed], &want[..packed], 1e-5, 1e-4);
    // Nothing past the packed rows is written.
    assert!(
        o[packed..].iter().all(|x| x.is_nan()),
        "o written past the packed rows"
    );
    Ok(())
}

#[test]
fn paged_attention_matches_contiguous() -> TestResult {
    let (b, h, h_kv, s_q, d, page_size, pages) = (2, 2, 1, 3, 4, 2, 3);
    let (s_kv, num_pages) = (page_size * pages, b * pages + 1);
    let (len_q, len_kv) = ([3i32, 2], [5i32, 6]);
    // Batch n's slot p lives in page table[n][p], scrambled; page 3 unused.
    let table = [4i32, 0, 6, 2, 5, 1];
    let (q_d, k_d, v_d) = (
        data(b * h * s_q * d, 61),
        data(b * h_kv * s_kv * d, 62),
        data(b * h_kv * s_kv * d, 63),
    );
    let to_pages = |dense: &[f32]| {
        let mut out = data(num_pages * h_kv * page_size * d, 64); // unread pages hold junk
        for n in 0..b {
            for hh in 0..h_kv {
                for j in 0..s_kv {
                    let (page, row) = (table[n * pages + j / page_size] as usize, j % page_size);
                    let dst = ((page * h_kv + hh) * page_size + row) * d;
                    let src = ((n * h_kv + hh) * s_kv + j) * d;
                    out[dst..dst + d].copy_from_slice(&dense[src..src + d]);
                }
            }
        }
        out
    };
    let (k_pages, v_pages) = (to_pages(&k_d), to_pages(&v_d));

    let mut g = Graph::named("paged")?;
    let i64s = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    let q = g.input("q", DataType::Float, &i64s(&[b, h, s_q, d]))?;
    let container = i64s(&[num_pages, h_kv, page_size, d]);
    let k = g.input("k_pages", DataType::Float, &container)?;
    let v = g.input("v_pages", DataType::Float, &container)?;
    let lq = g.input("seq_len_q", DataType::Int32, &[b as i64, 1, 1, 1])?;
    let lkv = g.input("seq_len_kv", DataType::Int32, &[b as i64, 1, 1, 1])?;
    let tk = g.input("page_table_k", DataType::Int32, &i64s(&[b, 1, pages, 1]))?;
    let tv = g.input("page_table_v", DataType::Int32, &i64s(&[b, 1, pages, 1]))?;
    let opts = SdpaOptions::default()
        .padding(lq, lkv)
        .page_table_k(tk)
        .page_table_v(tv)
        .max_seq_len_kv(s_kv as i64);
    let out = g.sdpa(q, k, v, &opts)?;
    g.set_output(out.o, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    assert_eq!(built.shape(out.o)?.dims, i64s(&[b, h, s_q, d]));
    let mut o = vec![f32::NAN; b * h * s_q * d];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_d)),
            (k, HostBuffer::input(&k_pages)),
            (v, HostBuffer::input(&v_pages)),
            (lq, HostBuffer::input(&len_q)),
            (lkv, HostBuffer::input(&len_kv)),
            (tk, HostBuffer::input(&table)),
            (tv, HostBuffer::input(&table)),
            (out.o, HostBuffer::output(&mut o)),
        ],
    )?;
    let want = padded_attention(
        &q_d,
        &k_d,
        &v_d,
        (b, h, h_kv, s_q, s_kv, d),
        &len_q,
        &len_kv,
    );
    // Padding rows: 0 on the CPU reference, as the padded attention.
    common::assert_close(&o, &want, 1e-5, 1e-4);
    Ok(())
}

#[test]
fn ragged_and_paged_defaults_are_unset() {
    let f = SdpaOptions::default();
    assert_eq!(
        (
            f.ragged_offset_q,
            f.ragged_offset_o,
            f.page_table_k,
            f.page_table_v,
            f.max_seq_len_kv
        ),
        (None, None, None, None, None)
    );
    let b = SdpaBackwardOptions::default().ragged_offset_k(Tensor::from_uid(7));
    assert_eq!(
        (b.ragged_offset_q, b.ragged_offset_k),
        (None, Some(Tensor::from_uid(7)))
    );
}

#[test]
fn paged_cache_load_gathers_pages() -> TestResult {
    // Two sequences of 3 pages of 2 rows; lengths end inside a page.
    let (b, h, page_size, pages, d, num_pages) = (2usize, 2usize, 2usize, 3usize, 3usize, 7usize);
    let s = pages * page_size;
    let lengths = [5i32, 2];
    let table = [4i32, 0, 6, 2, 5, 1];
    let container = data(num_pages * h * page_size * d, 71);
    let mut g = Graph::named("paged_cache_load")?;
    let i64s = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    let c = g.input("cache", DataType::Float, &i64s(&[num_pages, h, page_size, d]))?;
    let l = g.input("lengths", DataType::Int32, &i64s(&[b, 1, 1, 1]))?;
    let t = g.input("table", DataType::Int32, &i64s(&[b, 1, pages, 1]))?;
    let y = g.paged_cache_load(c, l, t, &PagedCacheLoadOptions::default().name("load"))?;
    g.set_output(y, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    assert_eq!(built.shape(y)?.dims, i64s(&[b, h, s, d]));
    let mut out = vec![f32::NAN; b * h * s * d];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (c, HostBuffer::input(&container)),
            (l, HostBuffer::input(&lengths)),
            (t, HostBuffer::input(&table)),
            (y, HostBuffer::output(&mut out)),
        ],
    )?;
    for n in 0..b {
        for hh in 0..h {
            for j in 0..s {
                for x in 0..d {
                    let want = if j < lengths[n] as usize {
                        let page = table[n * pages + j / page_size] as usize;
                        container[((page * h + hh) * page_size + j % page_size) * d + x]
                    } else {
                        0.0
                    };
                    assert_eq!(out[((n * h + hh) * s + j) * d + x], want, "y[{n},{hh},{j},{x}]");
                }
            }
        }
    }
    // A page table of the wrong shape names the node, the port and the rule.
    let mut bad = Graph::named("bad")?;
    let c = bad.input("cache", DataType::Float, &[7, 2, 2, 3])?;
    let l = bad.input("lengths", DataType::Int32, &[2, 1, 1, 1])?;
    let t = bad.input("wide", DataType::Int32, &[2, 1, 3, 2])?;
    let err = bad
        .paged_cache_load(c, l, t, &PagedCacheLoadOptions::default().name("load"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph);
    assert!(err.to_string().contains("page_table \"wide\""), "{err}");
    Ok(())
}
