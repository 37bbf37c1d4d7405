//! The ops of issue 16 run on the CPU reference and compared with plain Rust
//! computations: the split batch norm (genstats, bn_finalize, dbn_weight),
//! block-scale quantize / dequantize, and the MoE grouped matmul with its
//! weight gradient; and bad input to each giving the library's message.
mod common;

use common::{assert_close, data};
use cudnnfe::*;

type TestResult = Result<(), Error>;

fn run_cpu(g: Graph, buffers: &[(Tensor, HostBuffer<'_>)]) -> TestResult {
    let built = g.build(&BuildOptions::cpu_reference())?;
    built.execute_host(&mut Handle::new()?, buffers)
}

#[track_caller]
fn expect_err<T: std::fmt::Debug>(result: Result<T, Error>, parts: &[&str]) {
    let err = result.expect_err("the call should have failed");
    for part in parts {
        assert!(
            err.message.contains(part),
            "message {:?} lacks {part:?}",
            err.message
        );
    }
}

/// Per channel of x [n, c, s]: (sum, sum of squares), in f64.
fn channel_sums(x: &[f32], n: usize, c: usize, s: usize) -> Vec<(f64, f64)> {
    (0..c)
        .map(|ch| {
            let vals = (0..n).flat_map(|ni| (0..s).map(move |si| (ni * c + ch) * s + si));
            vals.fold((0.0, 0.0), |(a, b), i| {
                let v = x[i] as f64;
                (a + v, b + v * v)
            })
        })
        .collect()
}

fn f32s(v: impl IntoIterator<Item = f64>) -> Vec<f32> {
    v.into_iter().map(|x| x as f32).collect()
}

#[test]
fn genstats_then_bn_finalize_with_running_statistics() -> TestResult {
    let (n, c, s) = (3usize, 4usize, 5usize);
    let (eps, momentum, m) = (1e-3f64, 0.25f64, (n * s) as f64);
    let x_d = data(n * c * s, 1);
    let scale_d: Vec<f32> = data(c, 2).iter().map(|v| v + 1.5).collect();
    let bias_d = data(c, 3);
    let prev_mean_d = data(c, 4);
    let prev_var_d: Vec<f32> = data(c, 5).iter().map(|v| v + 2.0).collect();
    let per_c = [1, c as i64, 1];

    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[n as i64, c as i64, s as i64])?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let bias = g.input("bias", DataType::Float, &per_c)?;
    let prev_mean = g.input("prev_mean", DataType::Float, &per_c)?;
    let prev_var = g.input("prev_var", DataType::Float, &per_c)?;
    let epsilon = g.scalar("epsilon", DataType::Float, eps)?;
    let count = g.scalar("accum_count", DataType::Int64, m)?;
    let momentum_t = g.scalar("momentum", DataType::Float, momentum)?;
    let stats = g.genstats(x, &GenstatsOptions::default().name("gs"))?;
    let running = RunningStats {
        prev_running_mean: prev_mean,
        prev_running_var: prev_var,
        momentum: momentum_t,
    };
    let o = g.bn_finalize(
        stats.sum,
        stats.sq_sum,
        scale,
        bias,
        epsilon,
        count,
        Some(running),
        &BnFinalizeOptions::default().name("fin"),
    )?;
    let (next_mean, next_var) = (o.next_running_mean.unwrap(), o.next_running_var.unwrap());
    let outs = [
        stats.sum,
        stats.sq_sum,
        o.eq_scale,
        o.eq_bias,
        o.mean,
        o.inv_variance,
        next_mean,
        next_var,
    ];
    for &t in &outs {
        g.set_output(t, true)?;
    }
    let mut got = vec![vec![f32::NAN; c]; outs.len()];
    let mut buffers = vec![
        (x, HostBuffer::input(&x_d)),
        (scale, HostBuffer::input(&scale_d)),
        (bias, HostBuffer::input(&bias_d)),
        (prev_mean, HostBuffer::input(&prev_mean_d)),
        (prev_var, HostBuffer::input(&prev_var_d)),
    ];
    for (&t, out) in outs.iter().zip(got.iter_mut()) {
        buffers.push((t, HostBuffer::output(out)));
    }
    run_cpu(g, &buffers)?;
    drop(buffers);

    let sums = channel_sums(&x_d, n, c, s);
    let mean: Vec<f64> = sums.iter().map(|p| p.0 / m).collect();
    let var: Vec<f64> = sums
        .iter()
        .zip(&mean)
        .map(|(p, mu)| p.1 / m - mu * mu)
        .collect();
    let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
    let eq_scale: Vec<f64> = (0..c).map(|i| scale_d[i] as f64 * inv[i]).collect();
    assert_close(&got[0], &f32s(sums.iter().map(|p| p.0)), 1e-5, 1e-5);
    assert_close(&got[1], &f32s(sums.iter().map(|p| p.1)), 1e-5, 1e-5);
    assert_close(&got[2], &f32s(eq_scale.iter().copied()), 1e-5, 1e-5);
    assert_close(
        &got[3],
        &f32s((0..c).map(|i| bias_d[i] as f64 - mean[i] * eq_scale[i])),
        1e-5,
        1e-5,
    );
    assert_close(&got[4], &f32s(mean.iter().copied()), 1e-6, 1e-5);
    assert_close(&got[5], &f32s(inv.iter().copied()), 1e-5, 1e-5);
    let next_mean_ref =
        (0..c).map(|i| (1.0 - momentum) * prev_mean_d[i] as f64 + momentum * mean[i]);
    let next_var_ref =
        (0..c).map(|i| (1.0 - momentum) * prev_var_d[i] as f64 + momentum * var[i] * m / (m - 1.0));
    assert_close(&got[6], &f32s(next_mean_ref), 1e-6, 1e-5);
    assert_close(&got[7], &f32s(next_var_ref), 1e-6, 1e-5);
    Ok(())
}

#[test]
fn dbn_weight_matches_the_formulas() -> TestResult {
    let (n, c, s) = (2usize, 3usize, 4usize);
    let m = (n * s) as f64;
    let x_d = data(n * c * s, 6);
    let dy_d = data(n * c * s, 7);
    let mean_d = data(c, 8);
    let inv_d: Vec<f32> = data(c, 9).iter().map(|v| v + 1.5).collect();
    let scale_d: Vec<f32> = data(c, 10).iter().map(|v| v + 0.5).collect();
    let dims = [n as i64, c as i64, s as i64];
    let per_c = [1, c as i64, 1];

    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &dims)?;
    let x = g.input("x", DataType::Float, &dims)?;
    let mean = g.input("mean", DataType::Float, &per_c)?;
    let inv = g.input("inv_variance", DataType::Float, &per_c)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let o = g.dbn_weight(dy, x, mean, inv, scale, &DbnWeightOptions::default())?;
    let outs = [o.dscale, o.dbias, o.eq_scale_dy, o.eq_scale_x, o.eq_bias];
    for &t in &outs {
        g.set_output(t, true)?;
    }
    let mut got = vec![vec![f32::NAN; c]; outs.len()];
    let mut buffers = vec![
        (dy, HostBuffer::input(&dy_d)),
        (x, HostBuffer::input(&x_d)),
        (mean, HostBuffer::input(&mean_d)),
        (inv, HostBuffer::input(&inv_d)),
        (scale, HostBuffer::input(&scale_d)),
    ];
    for (&t, out) in outs.iter().zip(got.iter_mut()) {
        buffers.push((t, HostBuffer::output(out)));
    }
    run_cpu(g, &buffers)?;
    drop(buffers);

    let mut want = vec![vec![0f64; c]; 5];
    for ch in 0..c {
        let (mu, iv) = (mean_d[ch] as f64, inv_d[ch] as f64);
        for i in (0..n).flat_map(|ni| (0..s).map(move |si| (ni * c + ch) * s + si)) {
            want[0][ch] += dy_d[i] as f64 * (x_d[i] as f64 - mu) * iv;
            want[1][ch] += dy_d[i] as f64;
        }
        want[2][ch] = scale_d[ch] as f64 * iv;
        want[3][ch] = -want[2][ch] * iv * want[0][ch] / m;
        want[4][ch] = want[2][ch] * (mu * iv * want[0][ch] - want[1][ch]) / m;
    }
    for (got, want) in got.iter().zip(want) {
        assert_close(got, &f32s(want), 1e-5, 1e-4);
    }
    Ok(())
}

#[test]
fn split_batchnorm_bad_input_names_node_and_tensor() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x1d", DataType::Float, &[6])?;
    expect_err(
        g.genstats(x, &GenstatsOptions::default().name("gs")),
        &["gs", "x1d"],
    );

    let mut g = Graph::new()?;
    let per_c = [1, 3, 1];
    let sum = g.input("sum", DataType::Float, &per_c)?;
    let sq = g.input("sq_sum", DataType::Float, &per_c)?;
    let scale = g.input("scale", DataType::Float, &[1, 4, 1])?;
    let bias = g.input("bias", DataType::Float, &per_c)?;
    let eps = g.scalar("epsilon", DataType::Float, 1e-5)?;
    let count = g.scalar("accum_count", DataType::Int64, 8.0)?;
    let r = g.bn_finalize(
        sum,
        sq,
        scale,
        bias,
        eps,
        count,
        None,
        &BnFinalizeOptions::default().name("fin"),
    );
    expect_err(r.and_then(|_| g.validate()), &["fin", "scale"]);

    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &[2, 3, 4])?;
    let x = g.input("x_other", DataType::Float, &[2, 3, 5])?;
    let mean = g.input("mean", DataType::Float, &per_c)?;
    let inv = g.input("inv_variance", DataType::Float, &per_c)?;
    let scale = g.input("scale", DataType::Float, &per_c)?;
    let r = g.dbn_weight(
        dy,
        x,
        mean,
        inv,
        scale,
        &DbnWeightOptions::default().name("dbw"),
    );
    expect_err(r.and_then(|_| g.validate()), &["dbw", "x_other"]);
    Ok(())
}

/// The FP8_E4M3 scale byte (E8M0: the exponent + 127) of a block whose
/// largest magnitude is `amax`: amax / 448 rounded up to a power of two.
fn e8m0_of(amax: f32) -> u8 {
    let exp = ((amax as f64) / 448.0).log2().ceil() as i32;
    (exp + 127) as u8
}

#[test]
fn block_scale_quantize_dequantize_round_trip() -> TestResult {
    let (rows, cols, block) = (3usize, 64usize, 32usize);
    let x_d: Vec<f32> = data(rows * cols, 11)
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1 + i % 7) as f32)
        .collect();
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[rows as i64, cols as i64])?;
    let q = g.block_scale_quantize(x, &BlockScaleOptions::default().name("q"))?;
    let z = g.block_scale_dequantize(q.y, q.scale, &BlockScaleOptions::default().name("dq"))?;
    g.set_dtype(z, DataType::Float)?;
    for t in [q.y, q.scale, z] {
        g.set_output(t, true)?;
    }
    assert_eq!(g.dims(q.scale)?, [rows as i64, (cols / block) as i64]);
    let (mut y, mut scale, mut back) = (
        vec![0u8; rows * cols],
        vec![0u8; rows * cols / block],
        vec![f32::NAN; rows * cols],
    );
    run_cpu(
        g,
        &[
            (x, HostBuffer::input(&x_d)),
            (q.y, HostBuffer::output(&mut y)),
            (q.scale, HostBuffer::output(&mut scale)),
            (z, HostBuffer::output(&mut back)),
        ],
    )?;
    for (b, chunk) in x_d.chunks(block).enumerate() {
        let amax = chunk.iter().fold(0f32, |a, v| a.max(v.abs()));
        assert_eq!(scale[b], e8m0_of(amax), "block {b} (amax {amax})");
        let step = 2f32.powi(scale[b] as i32 - 127);
        for (i, &v) in chunk.iter().enumerate() {
            let got = back[b * block + i];
            // E4M3 keeps 3 mantissa bits: half an ulp is 1/16 of the value,
            // or half the smallest subnormal (2^-9) times the scale.
            let tol = (v.abs() / 16.0).max(step * 2f32.powi(-10)) * 1.0001;
            assert!(
                (got - v).abs() <= tol,
                "element {}: {v} came back as {got}",
                b * block + i
            );
        }
    }
    Ok(())
}

#[test]
fn block_scale_bad_input_names_node_and_tensor() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x_odd", DataType::Float, &[2, 48])?;
    let r = g.block_scale_quantize(x, &BlockScaleOptions::default().name("q"));
    expect_err(r.and_then(|_| g.validate()), &["q", "x_odd", "48"]);

    let mut g = Graph::new()?;
    let x = g.add_tensor(&TensorDesc::new([2, 64]).name("x8").dtype(DataType::Fp8E4M3))?;
    let s = g.add_tensor(
        &TensorDesc::new([2, 3])
            .name("scale_bad")
            .dtype(DataType::Fp8E8M0),
    )?;
    let r = g.block_scale_dequantize(x, s, &BlockScaleOptions::default().name("dq"));
    expect_err(r.and_then(|_| g.validate()), &["dq", "scale_bad"]);
    Ok(())
}

/// token [1, t, k] and weight [e, k, n] (strides [k*n, 1, k], cudnn-frontend's
/// layout) and the group starts `offsets` as graph inputs.
fn moe_inputs(
    g: &mut Graph,
    t: i64,
    k: i64,
    e: i64,
    n: i64,
    groups: i64,
) -> Result<[Tensor; 3], Error> {
    let token = g.input("token", DataType::Float, &[1, t, k])?;
    let weight = g.add_tensor(
        &TensorDesc::new([e, k, n])
            .name("weight")
            .dtype(DataType::Float)
            .strides([k * n, 1, k]),
    )?;
    let offsets = g.input("first_token_offset", DataType::Int32, &[groups, 1, 1])?;
    Ok([token, weight, offsets])
}

/// Integer values in [-3, 3], exact in f32 sums.
fn ints(len: usize, seed: u64) -> Vec<f32> {
    data(len, seed).iter().map(|v| (v * 3.5).round()).collect()
}

#[test]
fn moe_grouped_matmul_none_mode_and_backward_match_loops() -> TestResult {
    let (t, k, e, n) = (10usize, 5usize, 3usize, 4usize);
    let offsets = [0i32, 2, 2]; // the second group is empty
    let bounds = [0usize, 2, 2, t];
    let token_d = ints(t * k, 12);
    let weight_d = ints(e * k * n, 13); // weight[e][kk][nn] at e*k*n + nn*k + kk
    let dout_d = ints(t * n, 14);
    let w = |ei: usize, kk: usize, nn: usize| weight_d[ei * k * n + nn * k + kk];

    let mut g = Graph::new()?;
    let [token, weight, offs] = moe_inputs(&mut g, t as i64, k as i64, e as i64, n as i64, 3)?;
    let opts = MoeGroupedMatmulOptions::default()
        .name("moe")
        .compute_dtype(DataType::Float);
    let out = g.moe_grouped_matmul(token, weight, offs, None, None, &opts)?;
    g.set_output(out, true)?.set_dtype(out, DataType::Float)?;
    assert_eq!(g.dims(out)?, [1, t as i64, n as i64]);
    let mut got = vec![f32::NAN; t * n];
    run_cpu(
        g,
        &[
            (token, HostBuffer::input(&token_d)),
            (weight, HostBuffer::input(&weight_d)),
            (offs, HostBuffer::input(&offsets)),
            (out, HostBuffer::output(&mut got)),
        ],
    )?;
    let mut want = vec![0f32; t * n];
    for grp in 0..e {
        for r in bounds[grp]..bounds[grp + 1] {
            for nn in 0..n {
                want[r * n + nn] = (0..k).map(|kk| token_d[r * k + kk] * w(grp, kk, nn)).sum();
            }
        }
    }
    assert_eq!(got, want);

    let mut g = Graph::new()?;
    let dout = g.input("doutput", DataType::Float, &[1, t as i64, n as i64])?;
    let token = g.input("token", DataType::Float, &[1, t as i64, k as i64])?;
    let offs = g.input("first_token_offset", DataType::Int32, &[3, 1, 1])?;
    let dw = g.moe_grouped_matmul_backward(
        dout,
        token,
        offs,
        &MoeGroupedMatmulOptions::default().name("moe_bwd"),
    )?;
    g.set_output(dw, true)?.set_dtype(dw, DataType::Float)?;
    assert_eq!(g.strides(dw)?, [(k * n) as i64, 1, k as i64]);
    let mut got = vec![f32::NAN; e * k * n];
    run_cpu(
        g,
        &[
            (dout, HostBuffer::input(&dout_d)),
            (token, HostBuffer::input(&token_d)),
            (offs, HostBuffer::input(&offsets)),
            (dw, HostBuffer::output(&mut got)),
        ],
    )?;
    let mut want = vec![0f32; e * k * n];
    for grp in 0..e {
        for r in bounds[grp]..bounds[grp + 1] {
            for kk in 0..k {
                for nn in 0..n {
                    want[grp * k * n + nn * k + kk] += token_d[r * k + kk] * dout_d[r * n + nn];
                }
            }
        }
    }
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn moe_grouped_matmul_gather_matches_loops() -> TestResult {
    let (t, k, e, n, r) = (4usize, 3usize, 2usize, 5usize, 6usize);
    let token_d = ints(t * k, 15);
    let weight_d = ints(e * k * n, 16);
    let index = [3i32, 0, 1, 3, 2, 0];
    let offsets = [0i32, 2];
    let mut g = Graph::new()?;
    let [token, weight, offs] = moe_inputs(&mut g, t as i64, k as i64, e as i64, n as i64, 2)?;
    let ix = g.input("token_index", DataType::Int32, &[1, r as i64, 1])?;
    let opts = MoeGroupedMatmulOptions::default().mode(MoeGroupedMatmulMode::Gather);
    let out = g.moe_grouped_matmul(token, weight, offs, Some(ix), None, &opts)?;
    g.set_output(out, true)?.set_dtype(out, DataType::Float)?;
    let mut got = vec![f32::NAN; r * n];
    run_cpu(
        g,
        &[
            (token, HostBuffer::input(&token_d)),
            (weight, HostBuffer::input(&weight_d)),
            (offs, HostBuffer::input(&offsets)),
            (ix, HostBuffer::input(&index)),
            (out, HostBuffer::output(&mut got)),
        ],
    )?;
    let mut want = vec![0f32; r * n];
    for row in 0..r {
        let ex = usize::from(row >= 2);
        for nn in 0..n {
            want[row * n + nn] = (0..k)
                .map(|kk| {
                    token_d[index[row] as usize * k + kk] * weight_d[ex * k * n + nn * k + kk]
                })
                .sum();
        }
    }
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn moe_bad_input_names_node_and_tensor() -> TestResult {
    let mut g = Graph::new()?;
    let [token, weight, offs] = moe_inputs(&mut g, 4, 5, 2, 3, 2)?;
    let gather = MoeGroupedMatmulOptions::default()
        .name("moe_g")
        .mode(MoeGroupedMatmulMode::Gather);
    let r = g.moe_grouped_matmul(token, weight, offs, None, None, &gather);
    expect_err(r.and_then(|_| g.validate()), &["moe_g", "token_index"]);

    let mut g = Graph::new()?;
    let dout = g.input("doutput", DataType::Float, &[1, 4, 3])?;
    let token = g.input("token_short", DataType::Float, &[1, 5, 2])?;
    let offs = g.input("first_token_offset", DataType::Int32, &[2, 1, 1])?;
    let r = g.moe_grouped_matmul_backward(
        dout,
        token,
        offs,
        &MoeGroupedMatmulOptions::default().name("moe_b"),
    );
    expect_err(r.and_then(|_| g.validate()), &["moe_b", "token_short"]);
    Ok(())
}
