//! The ops added with the norms / layout / attention-options release of the
//! C header, run on the CPU reference and compared with plain Rust
//! computations: batch, instance and adaptive layer norm (forward, inference,
//! backward), attention with padding, diagonal bands, ALiBi, a scale tensor,
//! given dropout and dBias, pooling, reshape / transpose / slice /
//! concatenate, rng, FP8 attention, and bad input giving the library's
//! messages.
mod common;

use common::{assert_close, data, expect_err, logical};
use cudnnfe::*;

type TestResult = Result<(), Error>;

fn cpu() -> BuildOptions {
    BuildOptions::cpu_reference()
}

/// Runs `built` on `inputs`, returning each of `outputs` as f32 (buffers
/// pre-filled with NaN, so that unwritten elements show).
fn run<'a>(
    built: &BuiltGraph,
    inputs: Vec<(Tensor, HostBuffer<'a>)>,
    outputs: &[Tensor],
) -> Result<Vec<Vec<f32>>, Error> {
    let mut outs = outputs
        .iter()
        .map(|&t| Ok(vec![f32::NAN; built.shape(t)?.element_span()]))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut buffers = inputs;
    for (&t, out) in outputs.iter().zip(outs.iter_mut()) {
        buffers.push((t, HostBuffer::output(out)));
    }
    built.execute_host(&mut Handle::new()?, &buffers)?;
    drop(buffers);
    Ok(outs)
}

fn f32s(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

// ------------------------------------------------------------- batch norm

/// x [n, c, s] (packed, s = product of the spatial dims): per-channel mean
/// and biased variance.
fn channel_moments(x: &[f32], n: usize, c: usize, s: usize) -> Vec<(f64, f64)> {
    (0..c)
        .map(|ch| {
            let vals: Vec<f64> = (0..n)
                .flat_map(|ni| (0..s).map(move |si| (ni * c + ch) * s + si))
                .map(|i| x[i] as f64)
                .collect();
            let m = vals.len() as f64;
            let mean = vals.iter().sum::<f64>() / m;
            let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / m;
            (mean, var)
        })
        .collect()
}

#[test]
fn batchnorm_training_with_running_statistics() -> TestResult {
    let (n, c, h, w) = (2usize, 3usize, 2usize, 3usize);
    let s = h * w;
    let (eps, momentum) = (1e-3, 0.25);
    let x_d: Vec<f32> = data(n * c * s, 1).iter().map(|v| v * 2.0 + 0.3).collect();
    let scale_d = data(c, 2);
    let bias_d = data(c, 3);
    let prev_mean_d = data(c, 4);
    let prev_var_d: Vec<f32> = data(c, 5).iter().map(|v| v.abs() + 0.5).collect();

    let mut g = Graph::named("bn")?;
    let dims = [n as i64, c as i64, h as i64, w as i64];
    let per_c = [1, c as i64, 1, 1];
    let x = g.input("x", DataType::Float, &dims)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let bias = g.input("bias", DataType::Float, &per_c)?;
    let pm = g.input("prev_mean", DataType::Float, &per_c)?;
    let pv = g.input("prev_var", DataType::Float, &per_c)?;
    let out = g.batchnorm(
        x,
        scale,
        bias,
        Some((pm, pv)),
        &NormOptions::default()
            .name("bn")
            .epsilon(eps)
            .momentum(momentum),
    )?;
    let (next_mean, next_var) = (
        out.next_running_mean
            .expect("running statistics were given"),
        out.next_running_var.expect("and the variance"),
    );
    assert_eq!(g.dims(out.mean)?, per_c);
    assert_eq!(g.tensor_name(out.inv_variance)?, "bn::inv_variance");
    let outputs = [out.y, out.mean, out.inv_variance, next_mean, next_var];
    for t in outputs {
        g.set_output(t, true)?;
    }
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
            (pm, HostBuffer::input(&prev_mean_d)),
            (pv, HostBuffer::input(&prev_var_d)),
        ],
        &outputs,
    )?;

    let moments = channel_moments(&x_d, n, c, s);
    let m = (n * s) as f64;
    let y_ref: Vec<f64> = (0..n * c * s)
        .map(|i| {
            let ch = (i / s) % c;
            let (mean, var) = moments[ch];
            (x_d[i] as f64 - mean) / (var + eps).sqrt() * scale_d[ch] as f64 + bias_d[ch] as f64
        })
        .collect();
    let mean_ref: Vec<f64> = moments.iter().map(|m| m.0).collect();
    let inv_ref: Vec<f64> = moments.iter().map(|m| 1.0 / (m.1 + eps).sqrt()).collect();
    let next_mean_ref: Vec<f64> = (0..c)
        .map(|ch| (1.0 - momentum) * prev_mean_d[ch] as f64 + momentum * moments[ch].0)
        .collect();
    let next_var_ref: Vec<f64> = (0..c)
        .map(|ch| {
            (1.0 - momentum) * prev_var_d[ch] as f64 + momentum * moments[ch].1 * m / (m - 1.0)
        })
        .collect();
    assert_close(&got[0], &f32s(&y_ref), 1e-5, 1e-5);
    assert_close(&got[1], &f32s(&mean_ref), 1e-6, 1e-5);
    assert_close(&got[2], &f32s(&inv_ref), 1e-5, 1e-5);
    assert_close(&got[3], &f32s(&next_mean_ref), 1e-6, 1e-5);
    assert_close(&got[4], &f32s(&next_var_ref), 1e-6, 1e-5);

    // Without running statistics there are no next_* outputs.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &dims)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let bias = g.input("bias", DataType::Float, &per_c)?;
    let out = g.batchnorm(x, scale, bias, None, &NormOptions::default())?;
    assert_eq!((out.next_running_mean, out.next_running_var), (None, None));
    Ok(())
}

#[test]
fn batchnorm_inference_and_backward() -> TestResult {
    let (n, c, s) = (3usize, 2usize, 5usize);
    let eps = 1e-5;
    let x_d = data(n * c * s, 10);
    let dy_d = data(n * c * s, 11);
    let scale_d: Vec<f32> = data(c, 12).iter().map(|v| v + 1.5).collect();
    let bias_d = data(c, 13);
    let moments = channel_moments(&x_d, n, c, s);
    let mean_d: Vec<f32> = moments.iter().map(|m| m.0 as f32).collect();
    let inv_d: Vec<f32> = moments
        .iter()
        .map(|m| (1.0 / (m.1 + eps).sqrt()) as f32)
        .collect();
    let dims = [n as i64, c as i64, s as i64];
    let per_c = [1, c as i64, 1];

    // Inference with the given statistics.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &dims)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let bias = g.input("bias", DataType::Float, &per_c)?;
    let mean = g.input("mean", DataType::Float, &per_c)?;
    let inv = g.input("inv_variance", DataType::Float, &per_c)?;
    let y = g.batchnorm_inference(x, scale, bias, mean, inv, &NormOptions::default())?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
            (mean, HostBuffer::input(&mean_d)),
            (inv, HostBuffer::input(&inv_d)),
        ],
        &[y],
    )?;
    let y_ref: Vec<f64> = (0..n * c * s)
        .map(|i| {
            let ch = (i / s) % c;
            (x_d[i] as f64 - mean_d[ch] as f64) * inv_d[ch] as f64 * scale_d[ch] as f64
                + bias_d[ch] as f64
        })
        .collect();
    assert_close(&got[0], &f32s(&y_ref), 1e-5, 1e-5);

    // Backward: per channel over its M values,
    // dx = scale * inv / M * (M dy - sum(dy) - xhat * sum(dy xhat)).
    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &dims)?;
    let x = g.input("x", DataType::Float, &dims)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let mean = g.input("mean", DataType::Float, &per_c)?;
    let inv = g.input("inv_variance", DataType::Float, &per_c)?;
    let grads = g.batchnorm_backward(dy, x, scale, mean, inv, &NormOptions::default())?;
    let dbias = grads.dbias.expect("batch norm has a bias gradient");
    for t in [grads.dx, grads.dscale, dbias] {
        g.set_output(t, true)?;
    }
    assert_eq!(g.dims(grads.dscale)?, per_c);
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (dy, HostBuffer::input(&dy_d)),
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (mean, HostBuffer::input(&mean_d)),
            (inv, HostBuffer::input(&inv_d)),
        ],
        &[grads.dx, grads.dscale, dbias],
    )?;
    let m = (n * s) as f64;
    let idx = |ni: usize, ch: usize, si: usize| (ni * c + ch) * s + si;
    let (mut dx_ref, mut dscale_ref, mut dbias_ref) =
        (vec![0f64; n * c * s], vec![0f64; c], vec![0f64; c]);
    for ch in 0..c {
        let xhat = |i: usize| (x_d[i] as f64 - mean_d[ch] as f64) * inv_d[ch] as f64;
        for ni in 0..n {
            for si in 0..s {
                let i = idx(ni, ch, si);
                dbias_ref[ch] += dy_d[i] as f64;
                dscale_ref[ch] += dy_d[i] as f64 * xhat(i);
            }
        }
        for ni in 0..n {
            for si in 0..s {
                let i = idx(ni, ch, si);
                dx_ref[i] = scale_d[ch] as f64 * inv_d[ch] as f64 / m
                    * (m * dy_d[i] as f64 - dbias_ref[ch] - xhat(i) * dscale_ref[ch]);
            }
        }
    }
    assert_close(&got[0], &f32s(&dx_ref), 1e-5, 1e-4);
    assert_close(&got[1], &f32s(&dscale_ref), 1e-5, 1e-5);
    assert_close(&got[2], &f32s(&dbias_ref), 1e-5, 1e-5);
    Ok(())
}

#[test]
fn instance_and_adaptive_layer_norm() -> TestResult {
    // Instance norm: x [N, C, S], statistics per (n, c) over S.
    let (n, c, s) = (2usize, 3usize, 4usize);
    let eps = 1e-5;
    let x_d: Vec<f32> = data(n * c * s, 20).iter().map(|v| v * 3.0).collect();
    let scale_d = data(c, 21);
    let bias_d = data(c, 22);
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[n as i64, c as i64, s as i64])?;
    let scale = g.input("scale", DataType::Float, &[1, c as i64, 1])?;
    let bias = g.input("bias", DataType::Float, &[1, c as i64, 1])?;
    let out = g.instancenorm(x, scale, bias, &NormOptions::default().epsilon(eps))?;
    let (mean, inv) = (
        out.mean.expect("training"),
        out.inv_variance.expect("training"),
    );
    assert_eq!(g.dims(mean)?, [n as i64, c as i64, 1]);
    for t in [out.y, mean, inv] {
        g.set_output(t, true)?;
    }
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
        ],
        &[out.y, mean, inv],
    )?;
    let groups: Vec<(f64, f64)> = x_d
        .chunks(s)
        .map(|grp| {
            let mean = grp.iter().map(|&v| v as f64).sum::<f64>() / s as f64;
            let var = grp.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / s as f64;
            (mean, 1.0 / (var + eps).sqrt())
        })
        .collect();
    let y_ref: Vec<f64> = (0..n * c * s)
        .map(|i| {
            let (mean, inv) = groups[i / s];
            let ch = (i / s) % c;
            (x_d[i] as f64 - mean) * inv * scale_d[ch] as f64 + bias_d[ch] as f64
        })
        .collect();
    assert_close(&got[0], &f32s(&y_ref), 1e-5, 1e-5);
    assert_close(
        &got[1],
        &f32s(&groups.iter().map(|g| g.0).collect::<Vec<_>>()),
        1e-6,
        1e-5,
    );
    assert_close(
        &got[2],
        &f32s(&groups.iter().map(|g| g.1).collect::<Vec<_>>()),
        1e-5,
        1e-5,
    );

    // Adaptive layer norm: x [B, S, F], per (b, s) over F, per-sample scale
    // and bias [B, 1, F], zero-centred gamma (1 + scale).
    let (b, t, f) = (2usize, 3usize, 5usize);
    let x_d = data(b * t * f, 30);
    let scale_d = data(b * f, 31);
    let bias_d = data(b * f, 32);
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[b as i64, t as i64, f as i64])?;
    let scale = g.input("scale", DataType::Float, &[b as i64, 1, f as i64])?;
    let bias = g.input("bias", DataType::Float, &[b as i64, 1, f as i64])?;
    let out = g.adalayernorm(
        x,
        scale,
        bias,
        &NormOptions::default()
            .phase(NormPhase::Inference)
            .zero_centered_gamma(true),
    )?;
    assert_eq!((out.mean, out.inv_variance), (None, None));
    g.set_output(out.y, true)?;
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (x, HostBuffer::input(&x_d)),
            (scale, HostBuffer::input(&scale_d)),
            (bias, HostBuffer::input(&bias_d)),
        ],
        &[out.y],
    )?;
    let mut y_ref = vec![0f64; b * t * f];
    for (row, grp) in x_d.chunks(f).enumerate() {
        let bi = row / t;
        let mean = grp.iter().map(|&v| v as f64).sum::<f64>() / f as f64;
        let var = grp.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / f as f64;
        for fi in 0..f {
            y_ref[row * f + fi] = (grp[fi] as f64 - mean) / (var + eps).sqrt()
                * (1.0 + scale_d[bi * f + fi] as f64)
                + bias_d[bi * f + fi] as f64;
        }
    }
    assert_close(&got[0], &f32s(&y_ref), 1e-5, 1e-5);

    // The backward ops exist and shape their gradients as the C header says.
    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &[b as i64, t as i64, f as i64])?;
    let x = g.input("x", DataType::Float, &[b as i64, t as i64, f as i64])?;
    let scale = g.input("scale", DataType::Float, &[b as i64, 1, f as i64])?;
    let mean = g.input("mean", DataType::Float, &[b as i64, t as i64, 1])?;
    let inv = g.input("inv", DataType::Float, &[b as i64, t as i64, 1])?;
    let grads = g.adalayernorm_backward(dy, x, scale, mean, inv, &NormOptions::default())?;
    assert_eq!(g.dims(grads.dscale)?, [b as i64, 1, f as i64]);
    let x4 = g.input("x4", DataType::Float, &[2, 3, 4, 4])?;
    let dy4 = g.input("dy4", DataType::Float, &[2, 3, 4, 4])?;
    let s4 = g.input("s4", DataType::Float, &[1, 3, 1, 1])?;
    let m4 = g.input("m4", DataType::Float, &[2, 3, 1, 1])?;
    let v4 = g.input("v4", DataType::Float, &[2, 3, 1, 1])?;
    let grads = g.instancenorm_backward(dy4, x4, s4, m4, v4, &NormOptions::default())?;
    assert_eq!(g.dims(grads.dx)?, [2, 3, 4, 4]);
    assert_eq!(g.dims(grads.dbias.expect("dbias"))?, [1, 3, 1, 1]);
    Ok(())
}

// -------------------------------------------------------------- attention

/// What a row sees, for [`attention`].
#[derive(Clone, Copy, Default)]
struct Masks<'a> {
    seq_q: Option<&'a [i32]>,
    seq_kv: Option<&'a [i32]>,
    causal: bool,
    left: Option<i64>,
    right: Option<i64>,
    bottom_right: bool,
    alibi: bool,
    /// Given dropout: a [b, h, s_q, s_kv] mask and its scale.
    dropout: Option<(&'a [f32], f64)>,
    bias: Option<&'a [f32]>,
}

#[derive(Clone, Copy)]
struct Geo {
    b: usize,
    h: usize,
    h_kv: usize,
    s_q: usize,
    s_kv: usize,
    d: usize,
}

/// cudnn-frontend's ALiBi slope of head `h` of `heads`.
fn alibi_slope(h: usize, heads: usize) -> f64 {
    let n = 1usize << (usize::BITS - 1 - heads.leading_zeros()); // largest power of 2 <= heads
    if h < n {
        2f64.powf(-8.0 * (h + 1) as f64 / n as f64)
    } else {
        2f64.powf(-4.0 * (2 * (h - n) + 1) as f64 / n as f64)
    }
}

/// Attention with the masks of docs/attention.md, over packed BHSD buffers:
/// (o, stats, P per (b, h) before dropout, masked entries 0).
fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    g: Geo,
    scale: f64,
    m: Masks<'_>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut o = vec![0f64; g.b * g.h * g.s_q * g.d];
    let mut stats = vec![f64::NEG_INFINITY; g.b * g.h * g.s_q];
    let mut probs = vec![0f64; g.b * g.h * g.s_q * g.s_kv];
    for n in 0..g.b {
        let lq = m.seq_q.map_or(g.s_q as i64, |s| s[n] as i64);
        let lkv = m.seq_kv.map_or(g.s_kv as i64, |s| s[n] as i64);
        for h in 0..g.h {
            let hk = h / (g.h / g.h_kv);
            for i in 0..g.s_q {
                let ii = i as i64;
                if ii >= lq {
                    continue; // padding row: o = 0, stats = -inf
                }
                let diag = if m.bottom_right { ii + lkv - lq } else { ii };
                let row = ((n * g.h + h) * g.s_q + i) * g.s_kv;
                let mut scores = vec![None; g.s_kv];
                for (j, sc) in scores.iter_mut().enumerate() {
                    let jj = j as i64;
                    let visible = jj < lkv
                        && (!m.causal || jj <= diag)
                        && m.left.map_or(true, |l| jj > diag - l)
                        && m.right.map_or(true, |r| jj <= diag + r);
                    if !visible {
                        continue;
                    }
                    let mut dot = 0f64;
                    for c in 0..g.d {
                        dot += q[((n * g.h + h) * g.s_q + i) * g.d + c] as f64
                            * k[((n * g.h_kv + hk) * g.s_kv + j) * g.d + c] as f64;
                    }
                    let mut s = dot * scale;
                    if let Some(bias) = m.bias {
                        s += bias[(h * g.s_q + i) * g.s_kv + j] as f64; // [1, h, s_q, s_kv]
                    }
                    if m.alibi {
                        s += alibi_slope(h, g.h) * (jj - ii) as f64;
                    }
                    *sc = Some(s);
                }
                let max = scores
                    .iter()
                    .flatten()
                    .cloned()
                    .fold(f64::NEG_INFINITY, f64::max);
                if max == f64::NEG_INFINITY {
                    continue;
                }
                let sum: f64 = scores.iter().flatten().map(|s| (s - max).exp()).sum();
                stats[(n * g.h + h) * g.s_q + i] = max + sum.ln();
                for (j, sc) in scores.iter().enumerate() {
                    let Some(s) = sc else { continue };
                    let p = (s - max).exp() / sum;
                    probs[row + j] = p;
                    let keep = m
                        .dropout
                        .map_or(1.0, |(mask, sc)| mask[row + j] as f64 * sc);
                    for c in 0..g.d {
                        o[((n * g.h + h) * g.s_q + i) * g.d + c] +=
                            p * keep * v[((n * g.h_kv + hk) * g.s_kv + j) * g.d + c] as f64;
                    }
                }
            }
        }
    }
    (o, stats, probs)
}

struct AttnGraph {
    g: Graph,
    q: Tensor,
    k: Tensor,
    v: Tensor,
}

fn attn_graph(geo: Geo) -> Result<AttnGraph, Error> {
    let mut g = Graph::named("attn")?;
    let q = g.input(
        "q",
        DataType::Float,
        &[geo.b as i64, geo.h as i64, geo.s_q as i64, geo.d as i64],
    )?;
    let kv = [geo.b as i64, geo.h_kv as i64, geo.s_kv as i64, geo.d as i64];
    let k = g.input("k", DataType::Float, &kv)?;
    let v = g.input("v", DataType::Float, &kv)?;
    Ok(AttnGraph { g, q, k, v })
}

/// Builds sdpa with `options` (plus extra inputs the closure adds), runs it,
/// and compares o and stats with [`attention`].
fn check_attention(
    geo: Geo,
    masks: Masks<'_>,
    options: impl FnOnce(&mut Graph) -> Result<(SdpaOptions, Vec<(Tensor, HostBuffer<'static>)>), Error>,
) -> TestResult {
    let q_d = data(geo.b * geo.h * geo.s_q * geo.d, 40);
    let k_d = data(geo.b * geo.h_kv * geo.s_kv * geo.d, 41);
    let v_d = data(geo.b * geo.h_kv * geo.s_kv * geo.d, 42);
    let AttnGraph { mut g, q, k, v } = attn_graph(geo)?;
    let (opts, extra) = options(&mut g)?;
    let out = g.sdpa(q, k, v, &opts.generate_stats(true))?;
    let stats = out.stats.expect("stats were asked for");
    g.set_output(out.o, true)?.set_output(stats, true)?;
    let built = g.build(&cpu())?;
    let mut inputs = vec![
        (q, HostBuffer::input(&q_d)),
        (k, HostBuffer::input(&k_d)),
        (v, HostBuffer::input(&v_d)),
    ];
    inputs.extend(extra);
    let got = run(&built, inputs, &[out.o, stats])?;
    let (o_ref, st_ref, _) = attention(&q_d, &k_d, &v_d, geo, 1.0 / (geo.d as f64).sqrt(), masks);
    assert_close(&got[0], &f32s(&o_ref), 1e-5, 1e-4);
    assert_close(&got[1], &f32s(&st_ref), 1e-5, 1e-4);
    Ok(())
}

/// Host data that lives for the test (the extra inputs' buffers).
fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

#[test]
fn attention_with_padding_masks() -> TestResult {
    let geo = Geo {
        b: 2,
        h: 2,
        h_kv: 1,
        s_q: 5,
        s_kv: 6,
        d: 4,
    };
    let (lq, lkv) = (leak(vec![3i32, 5]), leak(vec![4i32, 6]));
    let masks = Masks {
        seq_q: Some(lq),
        seq_kv: Some(lkv),
        ..Default::default()
    };
    check_attention(geo, masks, |g| {
        let sq = g.input("seq_len_q", DataType::Int32, &[2, 1, 1, 1])?;
        let skv = g.input("seq_len_kv", DataType::Int32, &[2, 1, 1, 1])?;
        Ok((
            SdpaOptions::default().padding(sq, skv),
            vec![(sq, HostBuffer::input(lq)), (skv, HostBuffer::input(lkv))],
        ))
    })?;
    // Padding with a bottom-right causal band: the diagonal follows the
    // per-batch lengths.
    let masks = Masks {
        causal: true,
        bottom_right: true,
        ..masks
    };
    check_attention(geo, masks, |g| {
        let sq = g.input("seq_len_q", DataType::Int32, &[2, 1, 1, 1])?;
        let skv = g.input("seq_len_kv", DataType::Int32, &[2, 1, 1, 1])?;
        Ok((
            SdpaOptions::default()
                .padding(sq, skv)
                .causal_mask_bottom_right(true),
            vec![(sq, HostBuffer::input(lq)), (skv, HostBuffer::input(lkv))],
        ))
    })
}

#[test]
fn attention_with_diagonal_bands() -> TestResult {
    let geo = Geo {
        b: 1,
        h: 2,
        h_kv: 2,
        s_q: 6,
        s_kv: 6,
        d: 3,
    };
    let masks = Masks {
        left: Some(2),
        right: Some(1),
        ..Default::default()
    };
    check_attention(geo, masks, |_| {
        Ok((
            SdpaOptions::default().window_left(2).window_right(1),
            vec![],
        ))
    })?;
    let geo = Geo {
        s_q: 4,
        s_kv: 7,
        ..geo
    };
    let masks = Masks {
        left: Some(3),
        right: Some(0),
        bottom_right: true,
        ..Default::default()
    };
    check_attention(geo, masks, |_| {
        Ok((
            SdpaOptions::default()
                .window_left(3)
                .window_right(0)
                .diagonal_alignment(DiagonalAlignment::BottomRight),
            vec![],
        ))
    })
}

#[test]
fn attention_with_alibi_and_a_scale_tensor() -> TestResult {
    // 6 heads: slopes 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3 (docs/attention.md).
    assert_eq!(
        (0..6).map(|h| alibi_slope(h, 6)).collect::<Vec<_>>(),
        [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]
    );
    let geo = Geo {
        b: 1,
        h: 6,
        h_kv: 3,
        s_q: 5,
        s_kv: 5,
        d: 4,
    };
    let masks = Masks {
        causal: true,
        alibi: true,
        ..Default::default()
    };
    check_attention(geo, masks, |_| {
        Ok((
            SdpaOptions::default().causal_mask(true).alibi_mask(true),
            vec![],
        ))
    })?;
    // The default scale 1/sqrt(d) given as a graph input read at execute.
    let scale = leak(vec![1.0f32 / 2.0]);
    check_attention(
        geo,
        Masks {
            causal: true,
            ..Default::default()
        },
        |g| {
            let s = g.input("scale", DataType::Float, &[1, 1, 1, 1])?;
            Ok((
                SdpaOptions::default()
                    .causal_mask(true)
                    .attn_scale_tensor(s),
                vec![(s, HostBuffer::input(scale))],
            ))
        },
    )
}

#[test]
fn attention_with_a_given_dropout_mask() -> TestResult {
    let geo = Geo {
        b: 1,
        h: 2,
        h_kv: 2,
        s_q: 4,
        s_kv: 5,
        d: 3,
    };
    let p = 0.25;
    let mask: Vec<f32> = data(geo.b * geo.h * geo.s_q * geo.s_kv, 50)
        .iter()
        .map(|&r| if r.abs() < 0.5 { 1.0 } else { 0.0 })
        .collect();
    let mask = leak(mask);
    let masks = Masks {
        dropout: Some((mask, 1.0 / (1.0 - p))),
        ..Default::default()
    };
    check_attention(geo, masks, |g| {
        let m = g.input("mask", DataType::Float, &[1, 2, 4, 5])?;
        let s = g.scalar("dropout_scale", DataType::Float, 1.0 / (1.0 - p))?;
        Ok((
            SdpaOptions::default().dropout_mask(m, s),
            vec![(m, HostBuffer::input(mask))],
        ))
    })
}

#[test]
fn attention_backward_with_dbias() -> TestResult {
    let geo = Geo {
        b: 2,
        h: 2,
        h_kv: 2,
        s_q: 3,
        s_kv: 4,
        d: 3,
    };
    let scale = 1.0 / (geo.d as f64).sqrt();
    let (nq, nkv) = (
        geo.b * geo.h * geo.s_q * geo.d,
        geo.b * geo.h * geo.s_kv * geo.d,
    );
    let q_d = data(nq, 60);
    let k_d = data(nkv, 61);
    let v_d = data(nkv, 62);
    let do_d = data(nq, 63);
    let bias_d = data(geo.h * geo.s_q * geo.s_kv, 64);
    let masks = Masks {
        bias: Some(&bias_d),
        ..Default::default()
    };
    let (o_ref, st_ref, probs) = attention(&q_d, &k_d, &v_d, geo, scale, masks);
    let (o_d, st_d) = (f32s(&o_ref), f32s(&st_ref));

    let AttnGraph { mut g, q, k, v } = attn_graph(geo)?;
    let bias = g.input(
        "bias",
        DataType::Float,
        &[1, geo.h as i64, geo.s_q as i64, geo.s_kv as i64],
    )?;
    let o = g.input(
        "o",
        DataType::Float,
        &[geo.b as i64, geo.h as i64, geo.s_q as i64, geo.d as i64],
    )?;
    let d_o = g.input(
        "dO",
        DataType::Float,
        &[geo.b as i64, geo.h as i64, geo.s_q as i64, geo.d as i64],
    )?;
    let stats = g.input(
        "stats",
        DataType::Float,
        &[geo.b as i64, geo.h as i64, geo.s_q as i64, 1],
    )?;
    let grads = g.sdpa_backward_with_dbias(
        q,
        k,
        v,
        o,
        d_o,
        stats,
        &SdpaBackwardOptions::default().bias(bias).name("bwd"),
    )?;
    let dbias = grads.dbias.expect("dbias was asked for");
    assert_eq!(g.tensor_name(dbias)?, "bwd::dBias");
    for t in [grads.dq, grads.dk, grads.dv, dbias] {
        g.set_output(t, true)?;
    }
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![
            (q, HostBuffer::input(&q_d)),
            (k, HostBuffer::input(&k_d)),
            (v, HostBuffer::input(&v_d)),
            (bias, HostBuffer::input(&bias_d)),
            (o, HostBuffer::input(&o_d)),
            (d_o, HostBuffer::input(&do_d)),
            (stats, HostBuffer::input(&st_d)),
        ],
        &[grads.dq, grads.dk, grads.dv, dbias],
    )?;

    // dV = Pᵀ dO; dP = dO Vᵀ; dS = P (dP - rowsum(P dP)); dQ = scale dS K;
    // dK = scale dSᵀ Q; dBias = sum over the batch of dS.
    let (mut dq, mut dk, mut dv) = (vec![0f64; nq], vec![0f64; nkv], vec![0f64; nkv]);
    let mut dbias_ref = vec![0f64; geo.h * geo.s_q * geo.s_kv];
    let qi = |n: usize, h: usize, i: usize, c: usize| ((n * geo.h + h) * geo.s_q + i) * geo.d + c;
    let ki = |n: usize, h: usize, j: usize, c: usize| ((n * geo.h + h) * geo.s_kv + j) * geo.d + c;
    for n in 0..geo.b {
        for h in 0..geo.h {
            for i in 0..geo.s_q {
                let p = |j: usize| probs[((n * geo.h + h) * geo.s_q + i) * geo.s_kv + j];
                let dp: Vec<f64> = (0..geo.s_kv)
                    .map(|j| {
                        (0..geo.d)
                            .map(|c| do_d[qi(n, h, i, c)] as f64 * v_d[ki(n, h, j, c)] as f64)
                            .sum()
                    })
                    .collect();
                let dot: f64 = (0..geo.s_kv).map(|j| p(j) * dp[j]).sum();
                for j in 0..geo.s_kv {
                    let ds = p(j) * (dp[j] - dot);
                    dbias_ref[(h * geo.s_q + i) * geo.s_kv + j] += ds;
                    for c in 0..geo.d {
                        dv[ki(n, h, j, c)] += p(j) * do_d[qi(n, h, i, c)] as f64;
                        dq[qi(n, h, i, c)] += scale * ds * k_d[ki(n, h, j, c)] as f64;
                        dk[ki(n, h, j, c)] += scale * ds * q_d[qi(n, h, i, c)] as f64;
                    }
                }
            }
        }
    }
    assert_close(&got[0], &f32s(&dq), 1e-5, 1e-4);
    assert_close(&got[1], &f32s(&dk), 1e-5, 1e-4);
    assert_close(&got[2], &f32s(&dv), 1e-5, 1e-4);
    assert_close(&got[3], &f32s(&dbias_ref), 1e-5, 1e-4);
    Ok(())
}

// -------------------------------------------------------------- pooling

#[test]
fn pooling_max_with_index_and_average() -> TestResult {
    let (n, c, h, w) = (1usize, 2usize, 5usize, 6usize);
    let (win, stride, pad) = (3usize, 2usize, 1usize);
    let out_h = (h + 2 * pad - win) / stride + 1;
    let out_w = (w + 2 * pad - win) / stride + 1;
    let x_d = data(n * c * h * w, 70);
    // (max, index of the first max, sum, in-image count) of each window.
    let window = |ch: usize, oh: usize, ow: usize| {
        let (mut best, mut best_at, mut sum, mut count) = (f64::NEG_INFINITY, 0usize, 0f64, 0usize);
        for r in 0..win {
            for s in 0..win {
                let ih = (oh * stride + r) as i64 - pad as i64;
                let iw = (ow * stride + s) as i64 - pad as i64;
                if ih < 0 || iw < 0 || ih >= h as i64 || iw >= w as i64 {
                    continue;
                }
                let val = x_d[(ch * h + ih as usize) * w + iw as usize] as f64;
                if val > best {
                    (best, best_at) = (val, r * win + s);
                }
                sum += val;
                count += 1;
            }
        }
        (best, best_at, sum, count)
    };

    let mut g = Graph::new()?;
    let x = g.input(
        "x",
        DataType::Float,
        &[n as i64, c as i64, h as i64, w as i64],
    )?;
    let geometry = |mode| {
        ResampleOptions::default()
            .mode(mode)
            .window([win as i64, win as i64])
            .stride([stride as i64, stride as i64])
            .padding([pad as i64, pad as i64])
    };
    let max = g.resample(
        x,
        &geometry(ResampleMode::MaxPool)
            .generate_index(true)
            .name("maxpool"),
    )?;
    let index = max.index.expect("generate_index");
    assert_eq!(g.dtype(index)?, DataType::Int8);
    let incl = g
        .resample(x, &geometry(ResampleMode::AvgPoolIncludePadding))?
        .y;
    let excl = g
        .resample(x, &geometry(ResampleMode::AvgPoolExcludePadding))?
        .y;
    assert_eq!(
        g.dims(max.y)?,
        [n as i64, c as i64, out_h as i64, out_w as i64]
    );
    for t in [max.y, index, incl, excl] {
        g.set_output(t, true)?;
    }
    let built = g.build(&cpu())?;
    assert_eq!(built.dtype(index)?, DataType::Int8);
    let mut index_d = vec![-1i8; n * c * out_h * out_w];
    let mut outs = vec![vec![f32::NAN; n * c * out_h * out_w]; 3];
    {
        let [y_max, y_incl, y_excl] = &mut outs[..] else {
            unreachable!()
        };
        built.execute_host(
            &mut Handle::new()?,
            &[
                (x, HostBuffer::input(&x_d)),
                (max.y, HostBuffer::output(y_max)),
                (index, HostBuffer::output(&mut index_d)),
                (incl, HostBuffer::output(y_incl)),
                (excl, HostBuffer::output(y_excl)),
            ],
        )?;
    }
    let (mut max_ref, mut idx_ref, mut incl_ref, mut excl_ref) = (vec![], vec![], vec![], vec![]);
    for ch in 0..c {
        for oh in 0..out_h {
            for ow in 0..out_w {
                let (best, at, sum, count) = window(ch, oh, ow);
                max_ref.push(best);
                idx_ref.push(at as i8);
                incl_ref.push(sum / (win * win) as f64);
                excl_ref.push(sum / count as f64);
            }
        }
    }
    // Pooling outputs are channels-last unless their strides are set.
    let dims = built.dims(max.y)?;
    let strides = built.strides(max.y)?;
    assert_eq!(
        strides,
        [(c * out_h * out_w) as i64, 1, (out_w * c) as i64, c as i64]
    );
    assert_close(
        &logical(&outs[0], &dims, &strides),
        &f32s(&max_ref),
        0.0,
        0.0,
    );
    assert_eq!(logical(&index_d, &dims, &built.strides(index)?), idx_ref);
    assert_close(
        &logical(&outs[1], &dims, &built.strides(incl)?),
        &f32s(&incl_ref),
        1e-6,
        1e-5,
    );
    assert_close(
        &logical(&outs[2], &dims, &built.strides(excl)?),
        &f32s(&excl_ref),
        1e-6,
        1e-5,
    );
    Ok(())
}

// ------------------------------------------------ layout ops and rng

#[test]
fn slice_concatenate_reshape_transpose() -> TestResult {
    let x_d = data(4 * 10, 80);
    let y_d = data(4 * 3, 81);
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4, 10])?;
    let y = g.input("y", DataType::Float, &[4, 3])?;
    // x[1:3, 0:10:3] -> [2, 4], a view: copied out by an identity.
    let sliced = g.slice(
        x,
        &[1..3, 0..10],
        Some(&[1, 3]),
        &LayoutOptions::default().name("sl"),
    )?;
    assert_eq!(g.dims(sliced)?, [2, 4]);
    let sliced_out = g.unary(PointwiseMode::Identity, sliced)?;
    // [x | y] along axis 1 -> [4, 13].
    let cat = g.concatenate(&[x, y], 1, &LayoutOptions::default())?;
    assert_eq!(g.dims(cat)?, [4, 13]);
    // reshape y [4, 3] -> [2, 6]; transpose y -> [3, 4].
    let re = g.reshape(y, &[2, 6], &LayoutOptions::default())?;
    let tr = g.transpose(y, &[1, 0], &LayoutOptions::default())?;
    let tr_out = g.unary(PointwiseMode::Identity, tr)?;
    g.set_strides(tr_out, &[4, 1])?;
    for t in [sliced_out, cat, re, tr_out] {
        g.set_output(t, true)?;
    }
    let built = g.build(&cpu())?;
    let got = run(
        &built,
        vec![(x, HostBuffer::input(&x_d)), (y, HostBuffer::input(&y_d))],
        &[sliced_out, cat, re, tr_out],
    )?;
    let slice_ref: Vec<f32> = (1..3)
        .flat_map(|i| (0..10).step_by(3).map(move |j| (i, j)))
        .map(|(i, j)| x_d[i * 10 + j])
        .collect();
    let cat_ref: Vec<f32> = (0..4)
        .flat_map(|i| {
            x_d[i * 10..i * 10 + 10]
                .iter()
                .chain(&y_d[i * 3..i * 3 + 3])
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    let tr_ref: Vec<f32> = (0..3)
        .flat_map(|j| (0..4).map(move |i| (i, j)))
        .map(|(i, j)| y_d[i * 3 + j])
        .collect();
    assert_eq!(got[0], slice_ref);
    assert_eq!(got[1], cat_ref);
    assert_eq!(got[2], y_d);
    assert_eq!(got[3], tr_ref);
    Ok(())
}

/// The CPU reference's generator (docs/layout-ops.md).
fn mix(mut z: u64) -> u64 {
    z ^= z >> 30;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn uniform01(seed: u64, counter: u64) -> f64 {
    let word = mix(mix(seed).wrapping_add((counter + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    ((word >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

#[test]
fn rng_matches_the_documented_generator() -> TestResult {
    let mut g = Graph::new()?;
    let seed = g.input("seed", DataType::Int64, &[1])?;
    let offset = g.input("offset", DataType::Int64, &[1])?;
    let uni = g.rng(
        &[3, 5],
        Some((seed, offset)),
        &RngOptions::default().uniform(-2.0, 3.0),
    )?;
    let ber = g.rng(
        &[16],
        None,
        &RngOptions::default().bernoulli(0.3).seed(99).name("coin"),
    )?;
    assert_eq!(g.tensor_name(ber)?, "coin::y");
    g.set_output(uni, true)?.set_output(ber, true)?;
    let built = g.build(&cpu())?;
    let (seed_d, offset_d) = ([1234i64], [7i64]);
    let got = run(
        &built,
        vec![
            (seed, HostBuffer::input(&seed_d)),
            (offset, HostBuffer::input(&offset_d)),
        ],
        &[uni, ber],
    )?;
    let uni_ref: Vec<f64> = (0..15u64)
        .map(|i| -2.0 + 5.0 * uniform01(1234, 2 * (7 + i)))
        .collect();
    let ber_ref: Vec<f64> = (0..16u64)
        .map(|i| if uniform01(99, 2 * i) < 0.3 { 1.0 } else { 0.0 })
        .collect();
    assert_close(&got[0], &f32s(&uni_ref), 1e-6, 1e-6);
    assert_eq!(got[1], f32s(&ber_ref));
    Ok(())
}

// -------------------------------------------------------- FP8 attention

#[test]
fn fp8_attention_shapes_and_amax() -> TestResult {
    let (b, h, s, d) = (1i64, 2i64, 4i64, 8i64);
    let mut g = Graph::new()?;
    let dims = [b, h, s, d];
    let q = g.input("q", DataType::Fp8E4M3, &dims)?;
    let k = g.input("k", DataType::Fp8E4M3, &dims)?;
    let v = g.input("v", DataType::Fp8E4M3, &dims)?;
    let one = g.scalar("one", DataType::Float, 1.0)?;
    let scales = SdpaFp8Scales {
        descale_q: one,
        descale_k: one,
        descale_v: one,
        descale_s: one,
        scale_s: one,
        scale_o: one,
    };
    let out = g.sdpa_fp8(
        q,
        k,
        v,
        &scales,
        &SdpaFp8Options::default()
            .generate_stats(true)
            .causal_mask(true),
    )?;
    assert_eq!(g.dims(out.o)?, dims);
    assert_eq!(g.dims(out.amax_s)?, [1, 1, 1, 1]);
    let stats = out.stats.expect("stats");
    for t in [out.o, stats, out.amax_s, out.amax_o] {
        g.set_output(t, true)?;
    }
    g.set_dtype(out.o, DataType::Half)?;
    let built = g.build(&cpu())?;
    // All-zero q and k: P is uniform over the visible (causal) columns, 1 /
    // (i + 1) in row i, so amax_s = 1 (row 0 sees one column). P is cast to
    // E4M3 before P·V: 1/3 becomes 0.34375 (mantissa 1.375), so with v = 1
    // row 2 of o is 3 * 0.34375 = 1.03125 and the other rows are exactly 1.
    let zeros = vec![0u8; (b * h * s * d) as usize];
    let ones = vec![0x38u8; (b * h * s * d) as usize]; // 1.0 in E4M3
    let mut o_d = vec![f16_from_f32(f32::NAN); (b * h * s * d) as usize];
    let mut st_d = vec![f32::NAN; (b * h * s) as usize];
    let (mut amax_s, mut amax_o) = ([f32::NAN], [f32::NAN]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&zeros)),
            (k, HostBuffer::input(&zeros)),
            (v, HostBuffer::input(&ones)),
            (out.o, HostBuffer::output(&mut o_d)),
            (stats, HostBuffer::output(&mut st_d)),
            (out.amax_s, HostBuffer::output(&mut amax_s)),
            (out.amax_o, HostBuffer::output(&mut amax_o)),
        ],
    )?;
    let o_ref: Vec<f32> = (0..b * h)
        .flat_map(|_| [1.0, 1.0, 1.03125, 1.0])
        .flat_map(|row| std::iter::repeat(row).take(d as usize))
        .collect();
    assert_close(&f16_vec_to_f32(&o_d), &o_ref, 0.0, 0.0);
    assert_eq!((amax_s[0], amax_o[0]), (1.0, 1.03125));
    let st_ref: Vec<f32> = (0..b * h)
        .flat_map(|_| (0..s).map(|i| ((i + 1) as f32).ln()))
        .collect();
    assert_close(&st_d, &st_ref, 1e-6, 1e-6);

    // The backward's outputs have the documented shapes.
    let mut g = Graph::new()?;
    let t = |g: &mut Graph, name: &str, dims: &[i64], dt| g.input(name, dt, dims);
    let q = t(&mut g, "q", &dims, DataType::Fp8E4M3)?;
    let k = t(&mut g, "k", &dims, DataType::Fp8E4M3)?;
    let v = t(&mut g, "v", &dims, DataType::Fp8E4M3)?;
    let o = t(&mut g, "o", &dims, DataType::Fp8E4M3)?;
    let d_o = t(&mut g, "dO", &dims, DataType::Fp8E4M3)?;
    let st = t(&mut g, "stats", &[b, h, s, 1], DataType::Float)?;
    let one = g.scalar("one", DataType::Float, 1.0)?;
    let scales = SdpaFp8BackwardScales {
        descale_q: one,
        descale_k: one,
        descale_v: one,
        descale_o: one,
        descale_do: one,
        descale_s: one,
        descale_dp: one,
        scale_s: one,
        scale_dq: one,
        scale_dk: one,
        scale_dv: one,
        scale_dp: one,
    };
    let grads = g.sdpa_fp8_backward(
        q,
        k,
        v,
        o,
        d_o,
        st,
        &scales,
        &SdpaFp8BackwardOptions::default().causal_mask(true),
    )?;
    assert_eq!(g.dims(grads.dk)?, dims);
    assert_eq!(g.dims(grads.amax_dp)?, [1, 1, 1, 1]);
    Ok(())
}

// The diagonal band of FP8 attention: zero scores and a window of two
// (window_left 2, right bound 0), so row i averages v's rows i - 1 and i;
// v's row j holds j + 1, so o's rows are 1, 1.5, 2.5, 3.5. A bad bound is
// refused naming the node and the rule.
#[test]
fn fp8_attention_sliding_window() -> TestResult {
    let (s, d) = (4i64, 8i64);
    let dims = [1, 1, s, d];
    let mut g = Graph::new()?;
    let q = g.input("q", DataType::Fp8E4M3, &dims)?;
    let k = g.input("k", DataType::Fp8E4M3, &dims)?;
    let v = g.input("v", DataType::Fp8E4M3, &dims)?;
    let one = g.scalar("one", DataType::Float, 1.0)?;
    let scales = SdpaFp8Scales {
        descale_q: one,
        descale_k: one,
        descale_v: one,
        descale_s: one,
        scale_s: one,
        scale_o: one,
    };
    let band = SdpaFp8Options::default().window_left(2).window_right(0);
    assert_eq!(band.diagonal_alignment, DiagonalAlignment::TopLeft);
    let out = g.sdpa_fp8(q, k, v, &scales, &band)?;
    for t in [out.o, out.amax_s, out.amax_o] {
        g.set_output(t, true)?;
    }
    g.set_dtype(out.o, DataType::Half)?;
    let built = g.build(&cpu())?;
    let zeros = vec![0u8; (s * d) as usize];
    let rows: Vec<u8> = [0x38u8, 0x40, 0x44, 0x48] // 1, 2, 3, 4 in E4M3
        .iter()
        .flat_map(|&c| std::iter::repeat(c).take(d as usize))
        .collect();
    let mut o_d = vec![f16_from_f32(f32::NAN); (s * d) as usize];
    let (mut amax_s, mut amax_o) = ([f32::NAN], [f32::NAN]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&zeros)),
            (k, HostBuffer::input(&zeros)),
            (v, HostBuffer::input(&rows)),
            (out.o, HostBuffer::output(&mut o_d)),
            (out.amax_s, HostBuffer::output(&mut amax_s)),
            (out.amax_o, HostBuffer::output(&mut amax_o)),
        ],
    )?;
    let o_ref: Vec<f32> = [1.0f32, 1.5, 2.5, 3.5]
        .iter()
        .flat_map(|&row| std::iter::repeat(row).take(d as usize))
        .collect();
    assert_close(&f16_vec_to_f32(&o_d), &o_ref, 0.0, 0.0);
    assert_eq!((amax_s[0], amax_o[0]), (1.0, 3.5));

    let mut g = Graph::new()?;
    let q = g.input("q", DataType::Fp8E4M3, &dims)?;
    let one = g.scalar("one", DataType::Float, 1.0)?;
    let scales = SdpaFp8Scales {
        descale_q: one,
        descale_k: one,
        descale_v: one,
        descale_s: one,
        scale_s: one,
        scale_o: one,
    };
    expect_err(
        g.sdpa_fp8(
            q,
            q,
            q,
            &scales,
            &SdpaFp8Options::default().name("f").window_left(0),
        ),
        ErrorKind::InvalidGraph,
        &["sdpa_fp8 \"f\"", "window_left is 0"],
    );
    Ok(())
}

// --------------------------------------------------------------- bad input

#[test]
fn bad_input_gives_the_library_message() -> TestResult {
    let mut g = Graph::named("bad")?;
    let x = g.input("x", DataType::Float, &[4, 10])?;
    let y = g.input("y", DataType::Float, &[5, 3])?;
    expect_err(
        g.slice(
            x,
            &[0..4, 2..11],
            None,
            &LayoutOptions::default().name("sl"),
        ),
        ErrorKind::InvalidGraph,
        &["sl", "x"],
    );
    expect_err(
        g.slice(x, &[0..4, 0..10], Some(&[1]), &LayoutOptions::default()),
        ErrorKind::InvalidArgument,
        &["1 steps for 2 ranges"],
    );
    expect_err(
        g.concatenate(&[x, y], 1, &LayoutOptions::default().name("cat")),
        ErrorKind::InvalidGraph,
        &["cat"],
    );
    expect_err(
        g.reshape(x, &[3, 13], &LayoutOptions::default().name("re")),
        ErrorKind::InvalidGraph,
        &["re"],
    );
    expect_err(
        g.transpose(x, &[0, 0], &LayoutOptions::default().name("tr")),
        ErrorKind::InvalidGraph,
        &["tr", "permutation"],
    );
    let img = g.input("img", DataType::Float, &[1, 1, 4, 4])?;
    expect_err(
        g.resample(
            img,
            &ResampleOptions::default()
                .window([2, 2])
                .padding([2, 2])
                .name("pool"),
        ),
        ErrorKind::InvalidGraph,
        &["pool", "padding"],
    );
    let q = g.input("q", DataType::Float, &[1, 2, 4, 8])?;
    expect_err(
        g.sdpa(q, q, q, &SdpaOptions::default().window_left(0).name("attn")),
        ErrorKind::InvalidGraph,
        &["attn", "window_left"],
    );
    expect_err(
        g.batchnorm(img, img, img, None, &NormOptions::default().name("bn")),
        ErrorKind::InvalidGraph,
        &["bn"],
    );
    // A failed call leaves the graph as it was.
    assert_eq!(g.node_count()?, 0);
    Ok(())
}
