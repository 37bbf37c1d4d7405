//! `y = a @ b + bias` in FP16 (FLOAT math), built for the GPU when there is
//! one and for the CPU reference otherwise, and checked against plain Rust.
//!
//! ```text
//! cd bindings/rust
//! cargo run --example matmul_bias            # GPU if available, else CPU reference
//! cargo run --example matmul_bias -- --cpu   # CPU reference
//! cargo run --example matmul_bias -- --gpu   # GPU only
//! ```
use std::error::Error;

use cudnnfe::{
    f16_vec_from_f32, f16_vec_to_f32, BuildOptions, DataType, Graph, Handle, MatmulOptions,
    PointwiseMode, PointwiseOptions, Target,
};
use cudnnfe_examples::{data, execute, max_abs_diff, target_from_args};

/// Builds and runs the graph for `target`; returns (target used, max error).
pub fn run(target: Target) -> Result<(Target, f32), Box<dyn Error>> {
    let (batch, m, k, n) = (2usize, 64usize, 128usize, 32usize);

    // 1. Describe the graph: inputs, then operations; shapes are inferred.
    let mut g = Graph::named("matmul_bias")?;
    g.set_io_dtype(DataType::Half)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    let a = g.input("a", DataType::Half, &[batch as i64, m as i64, k as i64])?;
    let b = g.input("b", DataType::Half, &[batch as i64, k as i64, n as i64])?;
    let bias = g.input("bias", DataType::Half, &[1, 1, n as i64])?; // broadcast
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    let y = g.pointwise(
        PointwiseMode::Add,
        &[c, bias],
        &PointwiseOptions::default().name("add_bias"),
    )?;
    g.set_output(y, true)?;
    println!("y = {:?} {}", g.dims(y)?, g.tensor_name(y)?);

    // 2. Build it (the graph is consumed; the plan is immutable and Sync).
    let built = g.build(&BuildOptions::default().target(target))?;
    println!(
        "built for {:?}: plan {:?}, workspace {} bytes",
        built.target(),
        built.plan_name(),
        built.workspace_size()
    );

    // 3. Data: FP16 values are u16 bit patterns.
    let a_h = f16_vec_from_f32(&data(batch * m * k, 1));
    let b_h = f16_vec_from_f32(&data(batch * k * n, 2));
    let bias_h = f16_vec_from_f32(&data(n, 3));
    let mut y_h = vec![0u16; batch * m * n];

    // 4. Run it (host slices for the CPU reference, device copies for the GPU).
    let mut handle = Handle::new()?;
    execute(
        &built,
        &mut handle,
        &[(a, &a_h), (b, &b_h), (bias, &bias_h)],
        &mut [(y, &mut y_h)],
    )?;

    // 5. Check against plain Rust on the same (FP16-rounded) inputs.
    let (a_f, b_f, bias_f) = (
        f16_vec_to_f32(&a_h),
        f16_vec_to_f32(&b_h),
        f16_vec_to_f32(&bias_h),
    );
    let mut expected = vec![0f32; batch * m * n];
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|p| a_f[(bi * m + i) * k + p] as f64 * b_f[(bi * k + p) * n + j] as f64)
                    .sum();
                expected[(bi * m + i) * n + j] = (dot + bias_f[j] as f64) as f32;
            }
        }
    }
    let error = max_abs_diff(&f16_vec_to_f32(&y_h), &expected);
    println!("max |y - reference| = {error:.2e}");
    // FP16 output: half an ulp of values up to ~8 is about 4e-3.
    if error > 2e-2 {
        return Err(format!("result differs from the reference by {error}").into());
    }
    Ok((built.target(), error))
}

fn main() {
    match run(target_from_args()) {
        Ok((target, _)) => println!("matmul_bias: OK on {target:?}"),
        Err(e) => {
            eprintln!("matmul_bias failed: {e}");
            std::process::exit(1);
        }
    }
}
