//! Causal scaled dot-product attention in BF16 (FLOAT math), with grouped
//! query heads (8 query heads over 2 key/value heads), built for the GPU
//! when there is one and for the CPU reference otherwise, and checked
//! against a plain Rust softmax(Q·Kᵀ/√d)·V.
//!
//! ```text
//! cd bindings/rust
//! cargo run --example sdpa_causal            # GPU if available, else CPU reference
//! cargo run --example sdpa_causal -- --cpu   # CPU reference
//! ```
use std::error::Error;

use cudnnfe::{
    bf16_vec_from_f32, bf16_vec_to_f32, BuildOptions, DataType, Graph, Handle, SdpaOptions, Target,
};
use cudnnfe_examples::{data, execute, max_abs_diff, target_from_args};

/// Builds and runs the graph for `target`; returns (target used, max error).
pub fn run(target: Target) -> Result<(Target, f32), Box<dyn Error>> {
    let (b, h_q, h_kv, s, d) = (1usize, 8usize, 2usize, 128usize, 64usize);
    let dims = |h: usize| [b as i64, h as i64, s as i64, d as i64];

    let mut g = Graph::named("causal_attention")?;
    g.set_io_dtype(DataType::BFloat16)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    let q = g.input("q", DataType::BFloat16, &dims(h_q))?;
    let k = g.input("k", DataType::BFloat16, &dims(h_kv))?;
    let v = g.input("v", DataType::BFloat16, &dims(h_kv))?;
    // attn_scale 0 (the default) means 1/sqrt(d).
    let out = g.sdpa(
        q,
        k,
        v,
        &SdpaOptions::default().name("attn").causal_mask(true),
    )?;
    g.set_output(out.o, true)?;

    let built = g.build(&BuildOptions::default().target(target))?;
    println!(
        "built for {:?}: plan {:?}, workspace {} bytes",
        built.target(),
        built.plan_name(),
        built.workspace_size()
    );

    let q_h = bf16_vec_from_f32(&data(b * h_q * s * d, 11));
    let k_h = bf16_vec_from_f32(&data(b * h_kv * s * d, 12));
    let v_h = bf16_vec_from_f32(&data(b * h_kv * s * d, 13));
    let mut o_h = vec![0u16; b * h_q * s * d];
    execute(
        &built,
        &mut Handle::new()?,
        &[(q, &q_h), (k, &k_h), (v, &v_h)],
        &mut [(out.o, &mut o_h)],
    )?;

    // Plain Rust: row i of each head attends to columns 0..=i; query head h
    // reads key/value head h / (h_q / h_kv).
    let (qf, kf, vf) = (
        bf16_vec_to_f32(&q_h),
        bf16_vec_to_f32(&k_h),
        bf16_vec_to_f32(&v_h),
    );
    let scale = 1.0 / (d as f64).sqrt();
    let mut expected = vec![0f32; o_h.len()];
    for bi in 0..b {
        for h in 0..h_q {
            let hk = h / (h_q / h_kv);
            let q_head = &qf[(bi * h_q + h) * s * d..][..s * d];
            let k_head = &kf[(bi * h_kv + hk) * s * d..][..s * d];
            let v_head = &vf[(bi * h_kv + hk) * s * d..][..s * d];
            for i in 0..s {
                let q_row = &q_head[i * d..][..d];
                let scores: Vec<f64> = (0..=i)
                    .map(|j| {
                        let k_row = &k_head[j * d..][..d];
                        q_row
                            .iter()
                            .zip(k_row)
                            .map(|(&x, &y)| x as f64 * y as f64)
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let weights: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                let total: f64 = weights.iter().sum();
                let mut acc = vec![0f64; d];
                for (j, w) in weights.iter().enumerate() {
                    for (a, &x) in acc.iter_mut().zip(&v_head[j * d..][..d]) {
                        *a += w * x as f64;
                    }
                }
                let o_row = &mut expected[((bi * h_q + h) * s + i) * d..][..d];
                for (o, a) in o_row.iter_mut().zip(acc) {
                    *o = (a / total) as f32;
                }
            }
        }
    }
    let error = max_abs_diff(&bf16_vec_to_f32(&o_h), &expected);
    println!("max |o - reference| = {error:.2e}");
    // BF16 output of values below 1: half an ulp is about 2e-3.
    if error > 1e-2 {
        return Err(format!("result differs from the reference by {error}").into());
    }
    Ok((built.target(), error))
}

fn main() {
    match run(target_from_args()) {
        Ok((target, _)) => println!("sdpa_causal: OK on {target:?}"),
        Err(e) => {
            eprintln!("sdpa_causal failed: {e}");
            std::process::exit(1);
        }
    }
}
