//! Layer norm, RMS norm, softmax and attention backward on the CPU
//! reference, each compared with a plain Rust computation.
mod common;

use common::{assert_close, data, Attn};
use cudnnfe::*;

type TestResult = Result<(), Error>;

fn cpu() -> BuildOptions {
    BuildOptions::cpu_reference()
}

/// Per-row statistics of a [rows, cols] matrix: (mean, 1/sqrt(var + eps)).
fn row_moments(x: &[f32], cols: usize, eps: f64) -> Vec<(f64, f64)> {
    x.chunks(cols)
        .map(|row| {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
            (mean, 1.0 / (var + eps).sqrt())
        })
        .collect()
}

fn inv_rms(x: &[f32], cols: usize, eps: f64) -> Vec<f64> {
    x.chunks(cols)
        .map(|row| {
            1.0 / (row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / cols as f64 + eps).sqrt()
        })
        .collect()
}

#[test]
fn layernorm_forward_training_and_inference() -> TestResult {
    let (rows, cols) = (6usize, 16usize);
    let x_d: Vec<f32> = data(rows * cols, 1).iter().map(|v| v * 3.0 + 0.5).collect();
    let scale_d = data(cols, 2);
    let bias_d = data(cols, 3);
    let eps = 1e-5;
    let moments = row_moments(&x_d, cols, eps);
    let expected: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (mean, inv) = moments[i / cols];
            ((x_d[i] as f64 - mean) * inv * scale_d[i % cols] as f64 + bias_d[i % cols] as f64)
                as f32
        })
        .collect();

    // Training: y, mean and inv_variance.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
    let scale = g.input("scale", DataType::Float, &[1, cols as i64])?;
    let bias = g.input("bias", DataType::Float, &[1, cols as i64])?;
    let out = g.layernorm(
        x,
        scale,
        bias,
        &NormOptions::default().name("ln").epsilon(eps),
    )?;
    let (mean, inv_var) = (
        out.mean.expect("training writes mean"),
        out.inv_variance.expect("and inv_variance"),
    );
    assert_eq!(g.dims(mean)?, [rows as i64, 1]);
    g.set_output(out.y, true)?
        .set_output(mean, true)?
        .set_output(inv_var, true)?;
    let built = g.build(&cpu())?;
    let (mut y_d, mut mean_d, mut inv_d) =
        (vec![0f32; rows * cols], vec![0f32; rows], vec![0f32; rows]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
            (out.y, HostBuffer::output(&mut y_d)),
            (mean, HostBuffer::output(&mut mean_d)),
            (inv_var, HostBuffer::output(&mut inv_d)),
        ],
    )?;
    assert_close(&y_d, &expected, 1e-5, 1e-5);
    assert_close(
        &mean_d,
        &moments.iter().map(|m| m.0 as f32).collect::<Vec<_>>(),
        1e-6,
        1e-6,
    );
    assert_close(
        &inv_d,
        &moments.iter().map(|m| m.1 as f32).collect::<Vec<_>>(),
        1e-6,
        1e-5,
    );

    // Inference, zero-centred gamma: y only, with (1 + scale).
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
    let scale = g.input("scale", DataType::Float, &[1, cols as i64])?;
    let bias = g.input("bias", DataType::Float, &[1, cols as i64])?;
    let out = g.layernorm(
        x,
        scale,
        bias,
        &NormOptions::default()
            .phase(NormPhase::Inference)
            .zero_centered_gamma(true)
            .epsilon(eps),
    )?;
    assert_eq!((out.mean, out.inv_variance), (None, None));
    g.set_output(out.y, true)?;
    let built = g.build(&cpu())?;
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
            (out.y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (mean, inv) = moments[i / cols];
            ((x_d[i] as f64 - mean) * inv * (1.0 + scale_d[i % cols] as f64)
                + bias_d[i % cols] as f64) as f32
        })
        .collect();
    assert_close(&y_d, &expected, 1e-5, 1e-5);
    Ok(())
}

#[test]
fn rmsnorm_forward_with_and_without_bias() -> TestResult {
    let (rows, cols) = (4usize, 32usize);
    let x_d: Vec<f32> = data(rows * cols, 10).iter().map(|v| v * 2.0).collect();
    let scale_d = data(cols, 11);
    let bias_d = data(cols, 12);
    let inv = inv_rms(&x_d, cols, 1e-5);
    for with_bias in [false, true] {
        let mut g = Graph::new()?;
        // [tokens, hidden, 1, 1], like an LLM's activations.
        let x = g.input("x", DataType::Float, &[rows as i64, cols as i64, 1, 1])?;
        let scale = g.input("scale", DataType::Float, &[1, cols as i64, 1, 1])?;
        let bias = if with_bias {
            Some(g.input("bias", DataType::Float, &[1, cols as i64, 1, 1])?)
        } else {
            None
        };
        let out = g.rmsnorm(x, scale, bias, &NormOptions::default())?;
        let r = out.inv_rms.expect("training writes inv_rms");
        assert_eq!(g.dims(r)?, [rows as i64, 1, 1, 1]);
        g.set_output(out.y, true)?.set_output(r, true)?;
        let built = g.build(&cpu())?;
        let (mut y_d, mut r_d) = (vec![0f32; rows * cols], vec![0f32; rows]);
        let mut buffers = vec![
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (out.y, HostBuffer::output(&mut y_d)),
            (r, HostBuffer::output(&mut r_d)),
        ];
        if let Some(bias) = bias {
            buffers.push((bias, HostBuffer::input(&bias_d)));
        }
        built.execute_host(&mut Handle::new()?, &buffers)?;
        drop(buffers);
        let expected: Vec<f32> = (0..rows * cols)
            .map(|i| {
                let b = if with_bias {
                    bias_d[i % cols] as f64
                } else {
                    0.0
                };
                (x_d[i] as f64 * inv[i / cols] * scale_d[i % cols] as f64 + b) as f32
            })
            .collect();
        assert_close(&y_d, &expected, 1e-5, 1e-5);
        assert_close(
            &r_d,
            &inv.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            1e-6,
            1e-5,
        );
    }
    Ok(())
}

#[test]
fn norm_backward_matches_the_analytic_gradients() -> TestResult {
    let (rows, cols) = (5usize, 12usize);
    let eps = 1e-5;
    let x_d = data(rows * cols, 20);
    let dy_d = data(rows * cols, 21);
    let scale_d = data(cols, 22);

    // Layer norm: xhat = (x - mean) * inv, g = dy * scale,
    // dx = inv * (g - mean(g) - xhat * mean(g * xhat)).
    let moments = row_moments(&x_d, cols, eps);
    let mut dx_ref = vec![0f32; rows * cols];
    let (mut dscale_ref, mut dbias_ref) = (vec![0f64; cols], vec![0f64; cols]);
    for r in 0..rows {
        let (mean, inv) = moments[r];
        let xhat: Vec<f64> = (0..cols)
            .map(|c| (x_d[r * cols + c] as f64 - mean) * inv)
            .collect();
        let g: Vec<f64> = (0..cols)
            .map(|c| dy_d[r * cols + c] as f64 * scale_d[c] as f64)
            .collect();
        let g_mean = g.iter().sum::<f64>() / cols as f64;
        let gx_mean = g.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / cols as f64;
        for c in 0..cols {
            dx_ref[r * cols + c] = (inv * (g[c] - g_mean - xhat[c] * gx_mean)) as f32;
            dscale_ref[c] += dy_d[r * cols + c] as f64 * xhat[c];
            dbias_ref[c] += dy_d[r * cols + c] as f64;
        }
    }
    let mean_d: Vec<f32> = moments.iter().map(|m| m.0 as f32).collect();
    let inv_d: Vec<f32> = moments.iter().map(|m| m.1 as f32).collect();

    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &[rows as i64, cols as i64])?;
    let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
    let scale = g.input("scale", DataType::Float, &[1, cols as i64])?;
    let mean = g.input("mean", DataType::Float, &[rows as i64, 1])?;
    let inv = g.input("inv_variance", DataType::Float, &[rows as i64, 1])?;
    let grads = g.layernorm_backward(
        dy,
        x,
        scale,
        mean,
        inv,
        &NormOptions::default().epsilon(eps),
    )?;
    let dbias = grads.dbias.expect("layer norm has a bias gradient");
    g.set_output(grads.dx, true)?
        .set_output(grads.dscale, true)?
        .set_output(dbias, true)?;
    assert_eq!(g.dims(grads.dscale)?, [1, cols as i64]);
    let built = g.build(&cpu())?;
    let (mut dx_d, mut dscale_d, mut dbias_d) =
        (vec![0f32; rows * cols], vec![0f32; cols], vec![0f32; cols]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (dy, HostBuffer::input(&dy_d)),
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (mean, HostBuffer::input(&mean_d)),
            (inv, HostBuffer::input(&inv_d)),
            (grads.dx, HostBuffer::output(&mut dx_d)),
            (grads.dscale, HostBuffer::output(&mut dscale_d)),
            (dbias, HostBuffer::output(&mut dbias_d)),
        ],
    )?;
    assert_close(&dx_d, &dx_ref, 1e-4, 1e-4);
    assert_close(
        &dscale_d,
        &dscale_ref.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        1e-5,
        1e-5,
    );
    assert_close(
        &dbias_d,
        &dbias_ref.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        1e-5,
        1e-5,
    );

    // RMS norm: xhat = x * inv_rms, dx = inv_rms * (g - xhat * mean(g * xhat)).
    let inv_r = inv_rms(&x_d, cols, eps);
    let mut dx_ref = vec![0f32; rows * cols];
    let mut dscale_ref = vec![0f64; cols];
    for r in 0..rows {
        let xhat: Vec<f64> = (0..cols)
            .map(|c| x_d[r * cols + c] as f64 * inv_r[r])
            .collect();
        let g: Vec<f64> = (0..cols)
            .map(|c| dy_d[r * cols + c] as f64 * scale_d[c] as f64)
            .collect();
        let gx_mean = g.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / cols as f64;
        for c in 0..cols {
            dx_ref[r * cols + c] = (inv_r[r] * (g[c] - xhat[c] * gx_mean)) as f32;
            dscale_ref[c] += dy_d[r * cols + c] as f64 * xhat[c];
        }
    }
    let inv_r_d: Vec<f32> = inv_r.iter().map(|&v| v as f32).collect();
    for with_bias in [false, true] {
        let mut g = Graph::new()?;
        let dy = g.input("dy", DataType::Float, &[rows as i64, cols as i64])?;
        let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
        let scale = g.input("scale", DataType::Float, &[1, cols as i64])?;
        let r = g.input("inv_rms", DataType::Float, &[rows as i64, 1])?;
        let grads = g.rmsnorm_backward(dy, x, scale, r, with_bias, &NormOptions::default())?;
        assert_eq!(grads.dbias.is_some(), with_bias);
        g.set_output(grads.dx, true)?
            .set_output(grads.dscale, true)?;
        if let Some(dbias) = grads.dbias {
            g.set_output(dbias, true)?;
        }
        let built = g.build(&cpu())?;
        let (mut dx_d, mut dscale_d, mut dbias_d) =
            (vec![0f32; rows * cols], vec![0f32; cols], vec![0f32; cols]);
        let mut buffers = vec![
            (dy, HostBuffer::input(&dy_d)),
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (r, HostBuffer::input(&inv_r_d)),
            (grads.dx, HostBuffer::output(&mut dx_d)),
            (grads.dscale, HostBuffer::output(&mut dscale_d)),
        ];
        if let Some(dbias) = grads.dbias {
            buffers.push((dbias, HostBuffer::output(&mut dbias_d)));
        }
        built.execute_host(&mut Handle::new()?, &buffers)?;
        drop(buffers);
        assert_close(&dx_d, &dx_ref, 1e-4, 1e-4);
        assert_close(
            &dscale_d,
            &dscale_ref.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            1e-5,
            1e-5,
        );
        if with_bias {
            assert_close(
                &dbias_d,
                &dbias_ref.iter().map(|&v| v as f32).collect::<Vec<_>>(),
                1e-5,
                1e-5,
            );
        }
    }
    Ok(())
}

#[test]
fn softmax_over_the_last_dim_with_stats() -> TestResult {
    let (rows, cols) = (3usize, 10usize);
    let x_d: Vec<f32> = data(rows * cols, 30).iter().map(|v| v * 4.0).collect();
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[1, rows as i64, cols as i64])?;
    let out = g.softmax(
        x,
        &SoftmaxOptions::default().generate_stats(true).name("sm"),
    )?;
    let stats = out.stats.expect("stats were asked for");
    assert_eq!(g.dims(stats)?, [1, rows as i64, 1]);
    g.set_output(out.y, true)?.set_output(stats, true)?;
    let built = g.build(&cpu())?;
    let (mut y_d, mut s_d) = (vec![0f32; rows * cols], vec![0f32; rows]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (out.y, HostBuffer::output(&mut y_d)),
            (stats, HostBuffer::output(&mut s_d)),
        ],
    )?;
    let mut y_ref = Vec::new();
    let mut s_ref = Vec::new();
    for row in x_d.chunks(cols) {
        let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        y_ref.extend(row.iter().map(|&v| ((v as f64 - max).exp() / sum) as f32));
        s_ref.push((max + sum.ln()) as f32);
    }
    assert_close(&y_d, &y_ref, 1e-6, 1e-5);
    assert_close(&s_d, &s_ref, 1e-5, 1e-5);

    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
    let out = g.softmax(x, &SoftmaxOptions::default())?;
    assert_eq!(out.stats, None);
    Ok(())
}

/// Plain attention backward over packed BHSD buffers (GQA: kv-head
/// gradients sum over their query heads).
#[allow(clippy::too_many_arguments)]
fn sdpa_backward_ref(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    d_o: &[f32],
    p: Attn,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let (o, _) = common::sdpa(q, k, v, None, p);
    let (mut dq, mut dk, mut dv) = (
        vec![0f64; q.len()],
        vec![0f64; k.len()],
        vec![0f64; v.len()],
    );
    let group = p.h_q / p.h_kv;
    for b in 0..p.b {
        for h in 0..p.h_q {
            let hk = h / group;
            let qi = |i: usize, c: usize| q[((b * p.h_q + h) * p.s_q + i) * p.d + c] as f64;
            let kj = |j: usize, c: usize| k[((b * p.h_kv + hk) * p.s_kv + j) * p.d + c] as f64;
            let vj = |j: usize, c: usize| v[((b * p.h_kv + hk) * p.s_kv + j) * p.d_v + c] as f64;
            let doi = |i: usize, c: usize| d_o[((b * p.h_q + h) * p.s_q + i) * p.d_v + c] as f64;
            let oi = |i: usize, c: usize| o[((b * p.h_q + h) * p.s_q + i) * p.d_v + c] as f64;
            for i in 0..p.s_q {
                let last = if p.causal {
                    i.min(p.s_kv - 1)
                } else {
                    p.s_kv - 1
                };
                let s: Vec<f64> = (0..=last)
                    .map(|j| (0..p.d).map(|c| qi(i, c) * kj(j, c)).sum::<f64>() * p.scale as f64)
                    .collect();
                let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = s.iter().map(|x| (x - max).exp()).sum();
                let prob: Vec<f64> = s.iter().map(|x| (x - max).exp() / sum).collect();
                let delta: f64 = (0..p.d_v).map(|c| doi(i, c) * oi(i, c)).sum();
                for (j, &pj) in prob.iter().enumerate() {
                    let dp: f64 = (0..p.d_v).map(|c| doi(i, c) * vj(j, c)).sum();
                    let ds = pj * (dp - delta) * p.scale as f64;
                    for c in 0..p.d_v {
                        dv[((b * p.h_kv + hk) * p.s_kv + j) * p.d_v + c] += pj * doi(i, c);
                    }
                    for c in 0..p.d {
                        dq[((b * p.h_q + h) * p.s_q + i) * p.d + c] += ds * kj(j, c);
                        dk[((b * p.h_kv + hk) * p.s_kv + j) * p.d + c] += ds * qi(i, c);
                    }
                }
            }
        }
    }
    let f = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect();
    (f(dq), f(dk), f(dv))
}

#[test]
fn sdpa_backward_matches_the_analytic_gradients() -> TestResult {
    for (what, p) in [
        (
            "causal",
            Attn {
                b: 1,
                h_q: 2,
                h_kv: 2,
                s_q: 6,
                s_kv: 6,
                d: 8,
                d_v: 8,
                scale: 1.0 / 8f32.sqrt(),
                causal: true,
                causal_bottom_right: false,
            },
        ),
        (
            "GQA 4:2",
            Attn {
                b: 2,
                h_q: 4,
                h_kv: 2,
                s_q: 5,
                s_kv: 5,
                d: 4,
                d_v: 4,
                scale: 0.5,
                causal: false,
                causal_bottom_right: false,
            },
        ),
    ] {
        eprintln!("sdpa_backward case: {what}");
        let q_d = data(p.b * p.h_q * p.s_q * p.d, 40);
        let k_d = data(p.b * p.h_kv * p.s_kv * p.d, 41);
        let v_d = data(p.b * p.h_kv * p.s_kv * p.d_v, 42);
        let do_d = data(p.b * p.h_q * p.s_q * p.d_v, 43);
        let (o_d, stats_d) = common::sdpa(&q_d, &k_d, &v_d, None, p);
        let (b, hq, hkv, s, d) = (
            p.b as i64,
            p.h_q as i64,
            p.h_kv as i64,
            p.s_q as i64,
            p.d as i64,
        );

        let mut g = Graph::named("attention_backward")?;
        let q = g.input("q", DataType::Float, &[b, hq, s, d])?;
        let k = g.input("k", DataType::Float, &[b, hkv, s, d])?;
        let v = g.input("v", DataType::Float, &[b, hkv, s, d])?;
        let o = g.input("o", DataType::Float, &[b, hq, s, d])?;
        let d_o = g.input("d_o", DataType::Float, &[b, hq, s, d])?;
        let stats = g.input("stats", DataType::Float, &[b, hq, s, 1])?;
        let grads = g.sdpa_backward(
            q,
            k,
            v,
            o,
            d_o,
            stats,
            &SdpaBackwardOptions::default()
                .attn_scale(p.scale as f64)
                .causal_mask(p.causal)
                .name("attn_bwd"),
        )?;
        assert_eq!(g.dims(grads.dk)?, [b, hkv, s, d]);
        g.set_output(grads.dq, true)?
            .set_output(grads.dk, true)?
            .set_output(grads.dv, true)?;
        let built = g.build(&cpu())?;
        let (mut dq_d, mut dk_d, mut dv_d) = (
            vec![0f32; q_d.len()],
            vec![0f32; k_d.len()],
            vec![0f32; v_d.len()],
        );
        built.execute_host(
            &mut Handle::new()?,
            &[
                (q, HostBuffer::input(&q_d)),
                (k, HostBuffer::input(&k_d)),
                (v, HostBuffer::input(&v_d)),
                (o, HostBuffer::input(&o_d)),
                (d_o, HostBuffer::input(&do_d)),
                (stats, HostBuffer::input(&stats_d)),
                (grads.dq, HostBuffer::output(&mut dq_d)),
                (grads.dk, HostBuffer::output(&mut dk_d)),
                (grads.dv, HostBuffer::output(&mut dv_d)),
            ],
        )?;
        let (dq_ref, dk_ref, dv_ref) = sdpa_backward_ref(&q_d, &k_d, &v_d, &do_d, p);
        assert_close(&dq_d, &dq_ref, 1e-5, 1e-4);
        assert_close(&dk_d, &dk_ref, 1e-5, 1e-4);
        assert_close(&dv_d, &dv_ref, 1e-5, 1e-4);
    }
    Ok(())
}

#[test]
fn transformer_ops_reject_bad_shapes_with_messages() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4, 8])?;
    let wrong = g.input("wrong", DataType::Float, &[1, 7])?;
    let err = g
        .layernorm(x, wrong, wrong, &NormOptions::default().name("ln"))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidGraph, "{err}");
    assert!(
        err.message.contains("\"ln\"") && err.message.contains("\"wrong\""),
        "{err}"
    );
    let err = g
        .rmsnorm(x, wrong, None, &NormOptions::default())
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidGraph, "{err}");
    let err = g
        .softmax(Tensor::from_uid(999), &SoftmaxOptions::default())
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument, "{err}");
    assert_eq!(g.node_count()?, 0, "rejected ops leave nothing behind");
    Ok(())
}

#[test]
fn transformer_option_defaults_are_the_c_defaults() {
    let n = NormOptions::default();
    assert_eq!(
        (n.phase, n.epsilon, n.zero_centered_gamma, n.compute_dtype),
        (NormPhase::Training, 1e-5, false, DataType::NotSet)
    );
    let s = SoftmaxOptions::default();
    assert_eq!(
        (s.generate_stats, s.compute_dtype),
        (false, DataType::NotSet)
    );
    let b = SdpaBackwardOptions::default();
    assert_eq!(
        (
            b.attn_scale,
            b.causal_mask,
            b.causal_mask_bottom_right,
            b.bias,
            b.deterministic
        ),
        (0.0, false, false, None, false)
    );
}
