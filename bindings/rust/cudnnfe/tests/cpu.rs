//! The whole safe API on the CPU reference, numerics included: every result
//! is compared with a plain Rust computation.
mod common;

use std::sync::Arc;

use common::{assert_close, data, logical, Attn, Conv2d};
use cudnnfe::*;

type TestResult = Result<(), Error>;

fn cpu() -> BuildOptions {
    BuildOptions::cpu_reference()
}

// ---------------------------------------------------------------- matmul

#[test]
fn matmul_bias_relu_matches_plain_rust() -> TestResult {
    let (batch, m, k, n) = (2, 5, 7, 3);
    let mut g = Graph::named("mlp")?;
    let a = g.input("a", DataType::Float, &[batch, m, k])?;
    let b = g.input("b", DataType::Float, &[batch, k, n])?;
    let bias = g.input("bias", DataType::Float, &[1, 1, n])?;
    let c = g.matmul(
        a,
        b,
        &MatmulOptions::default()
            .name("mm")
            .compute_dtype(DataType::Float),
    )?;
    let z = g.pointwise(
        PointwiseMode::Add,
        &[c, bias],
        &PointwiseOptions::default().name("add"),
    )?;
    let y = g.unary(PointwiseMode::ReluFwd, z)?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;

    let a_d = data((batch * m * k) as usize, 1);
    let b_d = data((batch * k * n) as usize, 2);
    let bias_d = data(n as usize, 3);
    let mut y_d = vec![0f32; (batch * m * n) as usize];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_d)),
            (b, HostBuffer::input(&b_d)),
            (bias, HostBuffer::input(&bias_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let mut expected = common::matmul(
        &a_d,
        &b_d,
        batch as usize,
        m as usize,
        k as usize,
        n as usize,
    );
    for (i, e) in expected.iter_mut().enumerate() {
        *e = (*e + bias_d[i % n as usize]).max(0.0);
    }
    assert_close(&y_d, &expected, 1e-5, 1e-5);
    Ok(())
}

#[test]
fn matmul_broadcasts_batch_and_reads_transposed_strides() -> TestResult {
    let (batch, m, k, n) = (3usize, 4usize, 6usize, 5usize);
    let mut g = Graph::new()?;
    let a = g.input("a", DataType::Float, &[batch as i64, m as i64, k as i64])?;
    // b is one [k, n] matrix for every batch, stored transposed (n-major).
    let b = g.add_tensor(
        &TensorDesc::new([1, k as i64, n as i64])
            .name("b_t")
            .dtype(DataType::Float)
            .strides([(k * n) as i64, 1, k as i64]),
    )?;
    let c = g.matmul(a, b, &MatmulOptions::default())?;
    g.set_output(c, true)?;
    assert_eq!(g.dims(c)?, [batch as i64, m as i64, n as i64]);
    let built = g.build(&cpu())?;

    let a_d = data(batch * m * k, 10);
    let b_t = data(k * n, 11); // b_t[j][p] = b[p][j]
    let mut b_rowmajor = vec![0f32; batch * k * n];
    for bi in 0..batch {
        for p in 0..k {
            for j in 0..n {
                b_rowmajor[(bi * k + p) * n + j] = b_t[j * k + p];
            }
        }
    }
    let mut c_d = vec![0f32; batch * m * n];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, a_d.as_slice().into()),
            (b, b_t.as_slice().into()),
            (c, c_d.as_mut_slice().into()),
        ],
    )?;
    assert_close(
        &c_d,
        &common::matmul(&a_d, &b_rowmajor, batch, m, k, n),
        1e-5,
        1e-5,
    );
    Ok(())
}

#[test]
fn stride_zero_broadcast_input_spans_one_row() -> TestResult {
    let (m, n) = (4i64, 3i64);
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[m, n])?;
    let row = g.add_tensor(
        &TensorDesc::new([m, n])
            .name("row")
            .dtype(DataType::Float)
            .strides([0, 1]),
    )?;
    let y = g.binary(PointwiseMode::Mul, x, row)?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;
    assert_eq!(
        built.buffer_len(row)?,
        n as usize,
        "a stride-0 dim spans one element"
    );
    assert_eq!(built.buffer_bytes(row)?, 4 * n as usize);

    let x_d = data((m * n) as usize, 20);
    let row_d = [2.0f32, -1.0, 0.5];
    let mut y_d = vec![0f32; (m * n) as usize];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (row, HostBuffer::input(&row_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = x_d
        .iter()
        .enumerate()
        .map(|(i, v)| v * row_d[i % 3])
        .collect();
    assert_close(&y_d, &expected, 0.0, 0.0);
    Ok(())
}

// ------------------------------------------------------- FP16 and BF16

#[test]
fn half_io_with_float_compute() -> TestResult {
    let (m, k, n) = (3usize, 8usize, 4usize);
    let mut g = Graph::new()?;
    g.set_io_dtype(DataType::Half)?
        .set_compute_dtype(DataType::Float)?;
    let a = g.input("a", DataType::NotSet, &[1, m as i64, k as i64])?;
    let b = g.input("b", DataType::NotSet, &[1, k as i64, n as i64])?;
    let c = g.matmul(a, b, &MatmulOptions::default())?;
    g.set_output(c, true)?;
    assert_eq!(
        g.dtype(a)?,
        DataType::NotSet,
        "not resolved before validation"
    );
    g.validate()?;
    assert_eq!(g.dtype(a)?, DataType::Half);
    assert_eq!(g.dtype(c)?, DataType::Half);
    let built = g.build(&cpu())?;

    let a_h = f16_vec_from_f32(&data(m * k, 30));
    let b_h = f16_vec_from_f32(&data(k * n, 31));
    let mut c_h = vec![0u16; m * n];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_h)),
            (b, HostBuffer::input(&b_h)),
            (c, HostBuffer::output(&mut c_h)),
        ],
    )?;
    let expected = common::matmul(&f16_vec_to_f32(&a_h), &f16_vec_to_f32(&b_h), 1, m, k, n);
    assert_close(&f16_vec_to_f32(&c_h), &expected, 2e-3, 2e-3);
    Ok(())
}

#[test]
fn bf16_inputs_with_a_float_output() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::BFloat16, &[2, 8])?;
    let y = g.input("y", DataType::BFloat16, &[2, 8])?;
    let z = g.binary(PointwiseMode::Mul, x, y)?;
    g.set_output(z, true)?.set_dtype(z, DataType::Float)?;
    let built = g.build(&cpu())?;
    assert_eq!(built.dtype(z)?, DataType::Float);

    let x_b = bf16_vec_from_f32(&data(16, 40));
    let y_b = bf16_vec_from_f32(&data(16, 41));
    let mut z_f = vec![0f32; 16];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_b)),
            (y, HostBuffer::input(&y_b)),
            (z, HostBuffer::output(&mut z_f)),
        ],
    )?;
    let expected: Vec<f32> = x_b
        .iter()
        .zip(&y_b)
        .map(|(&a, &b)| bf16_to_f32(a) * bf16_to_f32(b))
        .collect();
    assert_close(&z_f, &expected, 1e-6, 1e-6);
    Ok(())
}

// ------------------------------------------------------------ pointwise

/// Runs `mode` on FLOAT operands of shape [n] and returns the output.
fn pointwise(
    mode: PointwiseMode,
    options: &PointwiseOptions,
    operands: &[&[f32]],
) -> Result<Vec<f32>, Error> {
    let n = operands[0].len() as i64;
    let mut g = Graph::new()?;
    let inputs: Vec<Tensor> = (0..operands.len())
        .map(|i| g.input(&format!("in{i}"), DataType::Float, &[n]))
        .collect::<Result<_, _>>()?;
    let y = g.pointwise(mode, &inputs, options)?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;
    let mut out = vec![0f32; n as usize];
    let mut buffers: Vec<(Tensor, HostBuffer<'_>)> = inputs
        .iter()
        .zip(operands)
        .map(|(&t, d)| (t, HostBuffer::input(d)))
        .collect();
    buffers.push((y, HostBuffer::output(&mut out)));
    built.execute_host(&mut Handle::new()?, &buffers)?;
    Ok(out)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn unary_pointwise_modes() -> TestResult {
    let x: Vec<f32> = data(64, 50).iter().map(|v| v * 2.5).collect();
    let positive: Vec<f32> = data(64, 51).iter().map(|v| v.abs() + 0.1).collect();
    let half_x: Vec<f32> = x.iter().map(|v| v * 0.5).collect(); // tan without poles
    let gelu_tanh = |x: f64| {
        0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
    };
    #[allow(clippy::type_complexity)]
    let cases: Vec<(PointwiseMode, &[f32], Box<dyn Fn(f64) -> f64>)> = vec![
        (PointwiseMode::Neg, &x, Box::new(|v| -v)),
        (PointwiseMode::Abs, &x, Box::new(f64::abs)),
        (PointwiseMode::Ceil, &x, Box::new(f64::ceil)),
        (PointwiseMode::Floor, &x, Box::new(f64::floor)),
        (PointwiseMode::Reciprocal, &positive, Box::new(|v| 1.0 / v)),
        (PointwiseMode::Sqrt, &positive, Box::new(f64::sqrt)),
        (
            PointwiseMode::Rsqrt,
            &positive,
            Box::new(|v| 1.0 / v.sqrt()),
        ),
        (PointwiseMode::Exp, &x, Box::new(f64::exp)),
        (PointwiseMode::Log, &positive, Box::new(f64::ln)),
        (PointwiseMode::Sin, &x, Box::new(f64::sin)),
        (PointwiseMode::Cos, &x, Box::new(f64::cos)),
        (PointwiseMode::Tan, &half_x, Box::new(f64::tan)),
        (PointwiseMode::Erf, &x, Box::new(common::erf)),
        (PointwiseMode::Identity, &x, Box::new(|v| v)),
        (PointwiseMode::ReluFwd, &x, Box::new(|v| v.max(0.0))),
        (PointwiseMode::TanhFwd, &x, Box::new(f64::tanh)),
        (PointwiseMode::SigmoidFwd, &x, Box::new(sigmoid)),
        (
            PointwiseMode::EluFwd,
            &x,
            Box::new(|v| if v > 0.0 { v } else { v.exp_m1() }),
        ),
        (
            PointwiseMode::GeluFwd,
            &x,
            Box::new(|v| 0.5 * v * (1.0 + common::erf(v / 2f64.sqrt()))),
        ),
        (PointwiseMode::GeluApproxTanhFwd, &x, Box::new(gelu_tanh)),
        (
            PointwiseMode::SoftplusFwd,
            &x,
            Box::new(|v| v.exp().ln_1p()),
        ),
        (PointwiseMode::SwishFwd, &x, Box::new(|v| v * sigmoid(v))),
    ];
    for (mode, input, f) in cases {
        let got = pointwise(mode, &PointwiseOptions::default(), &[input])?;
        let expected: Vec<f32> = input.iter().map(|&v| f(v as f64) as f32).collect();
        eprintln!("pointwise mode {mode:?}");
        assert_close(&got, &expected, 1e-5, 1e-5);
    }
    Ok(())
}

#[test]
fn binary_and_backward_pointwise_modes() -> TestResult {
    let a: Vec<f32> = data(64, 60).iter().map(|v| v * 2.0).collect();
    let b: Vec<f32> = data(64, 61).iter().map(|v| v * 2.0).collect();
    let pa: Vec<f32> = a.iter().map(|v| v.abs() + 0.5).collect();
    let pb: Vec<f32> = b.iter().map(|v| v.abs() + 0.5).collect();
    let dsig = |x: f64| sigmoid(x) * (1.0 - sigmoid(x));
    #[allow(clippy::type_complexity)]
    let cases: Vec<(PointwiseMode, &[f32], &[f32], Box<dyn Fn(f64, f64) -> f64>)> = vec![
        (PointwiseMode::Add, &a, &b, Box::new(|x, y| x + y)),
        (PointwiseMode::AddSquare, &a, &b, Box::new(|x, y| x + y * y)),
        (PointwiseMode::Sub, &a, &b, Box::new(|x, y| x - y)),
        (PointwiseMode::Mul, &a, &b, Box::new(|x, y| x * y)),
        (PointwiseMode::Div, &a, &pb, Box::new(|x, y| x / y)),
        (PointwiseMode::Max, &a, &b, Box::new(f64::max)),
        (PointwiseMode::Min, &a, &b, Box::new(f64::min)),
        (PointwiseMode::Mod, &pa, &pb, Box::new(|x, y| x % y)),
        (PointwiseMode::Pow, &pa, &b, Box::new(f64::powf)),
        (PointwiseMode::Atan2, &a, &b, Box::new(f64::atan2)),
        // *Bwd: in0 = dy, in1 = x.
        (
            PointwiseMode::ReluBwd,
            &a,
            &b,
            Box::new(|dy, x| if x > 0.0 { dy } else { 0.0 }),
        ),
        (
            PointwiseMode::TanhBwd,
            &a,
            &b,
            Box::new(|dy, x| dy * (1.0 - x.tanh().powi(2))),
        ),
        (
            PointwiseMode::SigmoidBwd,
            &a,
            &b,
            Box::new(move |dy, x| dy * dsig(x)),
        ),
        (
            PointwiseMode::EluBwd,
            &a,
            &b,
            Box::new(|dy, x| if x > 0.0 { dy } else { dy * x.exp() }),
        ),
        (
            PointwiseMode::SoftplusBwd,
            &a,
            &b,
            Box::new(|dy, x| dy * sigmoid(x)),
        ),
        (
            PointwiseMode::SwishBwd,
            &a,
            &b,
            Box::new(move |dy, x| dy * (sigmoid(x) + x * dsig(x))),
        ),
    ];
    for (mode, x, y, f) in cases {
        let got = pointwise(mode, &PointwiseOptions::default(), &[x, y])?;
        eprintln!("pointwise mode {mode:?}");
        let expected: Vec<f32> = x
            .iter()
            .zip(y)
            .map(|(&p, &q)| f(p as f64, q as f64) as f32)
            .collect();
        assert_close(&got, &expected, 1e-5, 1e-5);
    }
    Ok(())
}

#[test]
fn pointwise_options_are_honoured() -> TestResult {
    let x: Vec<f32> = data(32, 70).iter().map(|v| v * 3.0).collect();
    let leaky = pointwise(
        PointwiseMode::ReluFwd,
        &PointwiseOptions::default().relu_lower_clip_slope(0.1),
        &[&x],
    )?;
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| if v >= 0.0 { v } else { 0.1 * v })
        .collect();
    assert_close(&leaky, &expected, 1e-6, 1e-6);

    let clipped = pointwise(
        PointwiseMode::ReluFwd,
        &PointwiseOptions::default().relu_clip(0.0, 1.0),
        &[&x],
    )?;
    let expected: Vec<f32> = x.iter().map(|&v| v.clamp(0.0, 1.0)).collect();
    assert_close(&clipped, &expected, 0.0, 0.0);

    let elu = pointwise(
        PointwiseMode::EluFwd,
        &PointwiseOptions::default().elu_alpha(0.5),
        &[&x],
    )?;
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| {
            if v > 0.0 {
                v
            } else {
                0.5 * (v as f64).exp_m1() as f32
            }
        })
        .collect();
    assert_close(&elu, &expected, 1e-6, 1e-5);

    let swish = pointwise(
        PointwiseMode::SwishFwd,
        &PointwiseOptions::default().swish_beta(2.0),
        &[&x],
    )?;
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| (v as f64 * sigmoid(2.0 * v as f64)) as f32)
        .collect();
    assert_close(&swish, &expected, 1e-5, 1e-5);

    let softplus = pointwise(
        PointwiseMode::SoftplusFwd,
        &PointwiseOptions::default().softplus_beta(2.0),
        &[&x],
    )?;
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| ((2.0 * v as f64).exp().ln_1p() / 2.0) as f32)
        .collect();
    assert_close(&softplus, &expected, 1e-5, 1e-5);
    Ok(())
}

#[test]
fn comparisons_logic_select_and_gen_index() -> TestResult {
    let n = 16usize;
    let a: Vec<f32> = data(n, 80).iter().map(|v| (v * 3.0).round()).collect();
    let b: Vec<f32> = data(n, 81).iter().map(|v| (v * 3.0).round()).collect();
    let mut g = Graph::new()?;
    let ta = g.input("a", DataType::Float, &[n as i64])?;
    let tb = g.input("b", DataType::Float, &[n as i64])?;
    let modes = [
        PointwiseMode::CmpEq,
        PointwiseMode::CmpNeq,
        PointwiseMode::CmpGt,
        PointwiseMode::CmpGe,
        PointwiseMode::CmpLt,
        PointwiseMode::CmpLe,
    ];
    let mut cmp = Vec::new();
    for mode in modes {
        let t = g.binary(mode, ta, tb)?;
        g.set_output(t, true)?;
        cmp.push(t);
    }
    let and = g.binary(PointwiseMode::LogicalAnd, cmp[2], cmp[1])?; // a > b && a != b
    let or = g.binary(PointwiseMode::LogicalOr, cmp[0], cmp[4])?; // a == b || a < b
    let not = g.unary(PointwiseMode::LogicalNot, cmp[0])?;
    let sel = g.select(cmp[2], ta, tb)?; // max(a, b)
    for t in [and, or, not, sel] {
        g.set_output(t, true)?;
    }
    g.validate()?;
    for &t in cmp.iter().chain([&and, &or, &not]) {
        assert_eq!(g.dtype(t)?, DataType::Boolean);
    }
    let built = g.build(&cpu())?;

    let mut outs: Vec<Vec<u8>> = vec![vec![0u8; n]; 9];
    let mut sel_out = vec![0f32; n];
    let mut buffers = vec![(ta, HostBuffer::input(&a)), (tb, HostBuffer::input(&b))];
    let tensors: Vec<Tensor> = cmp.iter().copied().chain([and, or, not]).collect();
    for (t, out) in tensors.iter().zip(outs.iter_mut()) {
        buffers.push((*t, HostBuffer::output(out)));
    }
    buffers.push((sel, HostBuffer::output(&mut sel_out)));
    built.execute_host(&mut Handle::new()?, &buffers)?;
    drop(buffers);

    let expect = |f: &dyn Fn(f32, f32) -> bool| -> Vec<u8> {
        a.iter().zip(&b).map(|(&x, &y)| f(x, y) as u8).collect()
    };
    assert_eq!(outs[0], expect(&|x, y| x == y));
    assert_eq!(outs[1], expect(&|x, y| x != y));
    assert_eq!(outs[2], expect(&|x, y| x > y));
    assert_eq!(outs[3], expect(&|x, y| x >= y));
    assert_eq!(outs[4], expect(&|x, y| x < y));
    assert_eq!(outs[5], expect(&|x, y| x <= y));
    assert_eq!(outs[6], expect(&|x, y| x > y && x != y));
    assert_eq!(outs[7], expect(&|x, y| x <= y));
    assert_eq!(outs[8], expect(&|x, y| x != y));
    let max: Vec<f32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| if x > y { x } else { y })
        .collect();
    assert_eq!(sel_out, max);

    // GEN_INDEX: each element's index along an axis, INT32.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[2, 3, 4])?;
    let idx = g.pointwise(
        PointwiseMode::GenIndex,
        &[x],
        &PointwiseOptions::default().axis(1),
    )?;
    g.set_output(idx, true)?;
    let built = g.build(&cpu())?;
    assert_eq!(built.dtype(idx)?, DataType::Int32);
    let mut out = vec![-1i32; 24];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&[0f32; 24])),
            (idx, HostBuffer::output(&mut out)),
        ],
    )?;
    let expected: Vec<i32> = (0..24).map(|i| i / 4 % 3).collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn scalars_are_passed_by_value() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[6])?;
    let s = g.scalar("two_and_a_half", DataType::Float, 2.5)?;
    let y = g.binary(PointwiseMode::Mul, x, s)?;
    g.set_output(y, true)?;
    assert!(!g.is_bound(s)?);
    assert_eq!(g.dims(s)?, [1]);
    assert_eq!(g.scalar_value(s)?, 2.5);
    assert_eq!(
        g.scalar_value(x).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let built = g.build(&cpu())?;
    assert_eq!(built.bound_tensors(), [x, y]);
    let x_d = data(6, 90);
    let mut y_d = [0f32; 6];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = x_d.iter().map(|v| v * 2.5).collect();
    assert_close(&y_d, &expected, 0.0, 0.0);

    // The value travels in the serialized graph.
    let reloaded = Graph::from_json(&built.to_json()?)?.build(&cpu())?;
    assert!(!reloaded.is_bound(s)?);
    let mut y2 = [0f32; 6];
    reloaded.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (y, HostBuffer::output(&mut y2)),
        ],
    )?;
    assert_eq!(y2, y_d);
    Ok(())
}

#[test]
fn next_output_goes_into_a_tensor_the_caller_made() -> TestResult {
    let mut g = Graph::new()?;
    let a = g.input("a", DataType::Float, &[4])?;
    let b = g.input("b", DataType::Float, &[4])?;
    let sum = g.input("sum", DataType::Float, &[4])?;
    // A port the op lacks: refused naming it, and the request is used up.
    g.set_next_output("y", sum)?;
    let err = g.binary(PointwiseMode::Add, a, b).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.message().contains("has no output \"y\""),
        "{}",
        err.message()
    );
    g.set_next_output("out", sum)?;
    let y = g.binary(PointwiseMode::Add, a, b)?;
    assert_eq!(y, sum);
    assert_eq!(g.tensor_name(y)?, "sum");
    let built = g.build(&cpu())?;
    let (a_d, b_d) = (data(4, 3), data(4, 5));
    let mut y_d = [0f32; 4];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_d)),
            (b, HostBuffer::input(&b_d)),
            (sum, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = a_d.iter().zip(&b_d).map(|(x, y)| x + y).collect();
    assert_close(&y_d, &expected, 0.0, 0.0);
    Ok(())
}

#[test]
fn unread_inputs_leave_a_pruning_graph() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4])?;
    let unused = g.input("epsilon_bwd", DataType::Float, &[1])?;
    let y = g.unary(PointwiseMode::Neg, x)?;
    g.set_output(y, true)?.set_prune_unread_inputs(true)?;
    assert!(g.pruned_tensors()?.is_empty());
    g.validate()?;
    assert_eq!(g.pruned_tensors()?, vec![unused]);
    assert_eq!(g.tensor_count()?, 2);
    // A call naming it says that it left the graph.
    let err = g.binary(PointwiseMode::Add, x, unused).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.message().contains("left the graph"),
        "{}",
        err.message()
    );
    let built = g.build(&cpu())?;
    let x_d = data(4, 3);
    let mut y_d = [0f32; 4];
    // Its binding is accepted and ignored.
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (unused, HostBuffer::input(&[1f32])),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = x_d.iter().map(|v| -v).collect();
    assert_close(&y_d, &expected, 0.0, 0.0);
    Ok(())
}

#[test]
fn pass_by_value_inputs_are_read_at_every_execute() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4])?;
    let s = g.input("s", DataType::Float, &[1])?;
    let y = g.binary(PointwiseMode::Mul, x, s)?;
    g.set_output(y, true)?;
    assert!(!g.is_pass_by_value(s)?);
    g.set_pass_by_value(s, true)?;
    assert!(g.is_pass_by_value(s)? && g.is_bound(s)?);
    assert!(g.set_pass_by_value(x, true).is_err()); // four elements
    let built = g.build(&cpu())?;
    let x_d = data(4, 7);
    for scale in [2.0f32, -0.5] {
        let mut y_d = [0f32; 4];
        built.execute_host(
            &mut Handle::new()?,
            &[
                (x, HostBuffer::input(&x_d)),
                (s, HostBuffer::input(&[scale])),
                (y, HostBuffer::output(&mut y_d)),
            ],
        )?;
        let expected: Vec<f32> = x_d.iter().map(|v| v * scale).collect();
        assert_close(&y_d, &expected, 0.0, 0.0);
    }
    Ok(())
}

#[test]
fn a_scalar_takes_the_rank_of_its_pointwise_op() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[2, 3, 4])?;
    let s = g.scalar("bias", DataType::Float, -0.25)?;
    let y = g.binary(PointwiseMode::Add, x, s)?;
    g.set_output(y, true)?;
    assert_eq!(g.dims(y)?, [2, 3, 4]);
    let built = g.build(&cpu())?;
    let x_d = data(24, 95);
    let mut y_d = vec![0f32; 24];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let expected: Vec<f32> = x_d.iter().map(|v| v - 0.25).collect();
    assert_close(&y_d, &expected, 0.0, 0.0);
    Ok(())
}

// ------------------------------------------------------------ reduction

#[test]
fn reduction_modes_over_one_axis_and_all() -> TestResult {
    let dims = [2usize, 3, 4];
    let mut x_d = data(24, 100);
    x_d[5] = 0.0; // for MUL_NO_ZEROS
    type Fold = fn(&[f64]) -> f64;
    let modes: [(ReductionMode, Fold); 9] = [
        (ReductionMode::Add, |v| v.iter().sum()),
        (ReductionMode::Mul, |v| v.iter().product()),
        (ReductionMode::Min, |v| {
            v.iter().cloned().fold(f64::INFINITY, f64::min)
        }),
        (ReductionMode::Max, |v| {
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        }),
        (ReductionMode::Amax, |v| {
            v.iter().fold(0.0, |a, x| f64::max(a, x.abs()))
        }),
        (ReductionMode::Avg, |v| {
            v.iter().sum::<f64>() / v.len() as f64
        }),
        (ReductionMode::Norm1, |v| v.iter().map(|x| x.abs()).sum()),
        (ReductionMode::Norm2, |v| {
            v.iter().map(|x| x * x).sum::<f64>().sqrt()
        }),
        (ReductionMode::MulNoZeros, |v| {
            v.iter().filter(|&&x| x != 0.0).product()
        }),
    ];
    for (mode, f) in modes {
        // Over axis 1: y [2, 1, 4].
        let mut g = Graph::new()?;
        let x = g.input("x", DataType::Float, &[2, 3, 4])?;
        let y = g.reduction(
            mode,
            x,
            &ReductionOptions::default()
                .reduce_axis(1)
                .compute_dtype(DataType::Float),
        )?;
        let total = g.reduction(mode, x, &ReductionOptions::default().name("all"))?;
        g.set_output(y, true)?.set_output(total, true)?;
        assert_eq!(g.dims(y)?, [2, 1, 4]);
        assert_eq!(g.dims(total)?, [1, 1, 1]);
        let built = g.build(&cpu())?;
        let mut y_d = [0f32; 8];
        let mut total_d = [0f32; 1];
        built.execute_host(
            &mut Handle::new()?,
            &[
                (x, HostBuffer::input(&x_d)),
                (y, HostBuffer::output(&mut y_d)),
                (total, HostBuffer::output(&mut total_d)),
            ],
        )?;
        let mut expected = Vec::new();
        for a in 0..dims[0] {
            for c in 0..dims[2] {
                let column: Vec<f64> = (0..dims[1])
                    .map(|b| x_d[(a * 3 + b) * 4 + c] as f64)
                    .collect();
                expected.push(f(&column) as f32);
            }
        }
        assert_close(&y_d, &expected, 1e-6, 1e-5);
        let all: Vec<f64> = x_d.iter().map(|&v| v as f64).collect();
        assert_close(&total_d, &[f(&all) as f32], 1e-6, 1e-5);
    }
    Ok(())
}

// ---------------------------------------------------------- convolution

#[test]
fn conv_fprop_dgrad_wgrad_match_plain_loops() -> TestResult {
    let p = Conv2d {
        n: 2,
        c: 3,
        k: 4,
        h: 7,
        w: 6,
        r: 3,
        s: 3,
        pad: 1,
        stride: 2,
        dilation: 1,
    };
    let (oh, ow) = (p.out_h() as i64, p.out_w() as i64);
    let (n, c, k, h, w, r, s) = (
        p.n as i64, p.c as i64, p.k as i64, p.h as i64, p.w as i64, p.r as i64, p.s as i64,
    );
    let opts = ConvOptions::default()
        .padding([1, 1])
        .stride([2, 2])
        .dilation([1, 1]);

    let x_d = data(p.n * p.c * p.h * p.w, 110);
    let w_d = data(p.k * p.c * p.r * p.s, 111);
    let dy_d = data((n * k * oh * ow) as usize, 112);

    // Forward.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[n, c, h, w])?;
    let wt = g.input("w", DataType::Float, &[k, c, r, s])?;
    let y = g.conv_fprop(x, wt, &opts.clone().name("conv"))?;
    g.set_output(y, true)?;
    assert_eq!(g.dims(y)?, [n, k, oh, ow]);
    let built = g.build(&cpu())?;
    let mut y_d = vec![0f32; (n * k * oh * ow) as usize];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (wt, HostBuffer::input(&w_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    // Convolution outputs are channels-last unless their strides are set.
    assert_eq!(built.strides(y)?, [k * oh * ow, 1, ow * k, k]);
    let y_d = logical(&y_d, &built.dims(y)?, &built.strides(y)?);
    assert_close(&y_d, &p.fprop(&x_d, &w_d), 1e-5, 1e-5);

    // Data gradient: dx's spatial size is ambiguous at stride 2; set it.
    let mut g = Graph::new()?;
    let dy = g.input("dy", DataType::Float, &[n, k, oh, ow])?;
    let wt = g.input("w", DataType::Float, &[k, c, r, s])?;
    let dx = g.conv_dgrad(dy, wt, &opts)?;
    g.set_dims(dx, &[n, c, h, w])?.set_output(dx, true)?;
    let built = g.build(&cpu())?;
    let mut dx_d = vec![0f32; p.n * p.c * p.h * p.w];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (dy, HostBuffer::input(&dy_d)),
            (wt, HostBuffer::input(&w_d)),
            (dx, HostBuffer::output(&mut dx_d)),
        ],
    )?;
    let dx_d = logical(&dx_d, &built.dims(dx)?, &built.strides(dx)?);
    assert_close(&dx_d, &p.dgrad(&dy_d, &w_d), 1e-5, 1e-5);

    // Weight gradient.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[n, c, h, w])?;
    let dy = g.input("dy", DataType::Float, &[n, k, oh, ow])?;
    let dw = g.conv_wgrad(x, dy, &opts)?;
    g.set_dims(dw, &[k, c, r, s])?.set_output(dw, true)?;
    let built = g.build(&cpu())?;
    let mut dw_d = vec![0f32; p.k * p.c * p.r * p.s];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (dy, HostBuffer::input(&dy_d)),
            (dw, HostBuffer::output(&mut dw_d)),
        ],
    )?;
    let dw_d = logical(&dw_d, &built.dims(dw)?, &built.strides(dw)?);
    assert_close(&dw_d, &p.wgrad(&x_d, &dy_d), 1e-4, 1e-5);
    Ok(())
}

#[test]
fn dilated_conv_in_convolution_mode() -> TestResult {
    // CONVOLUTION mode flips the filter: compare with cross-correlation of
    // the flipped filter.
    let p = Conv2d {
        n: 1,
        c: 2,
        k: 2,
        h: 6,
        w: 6,
        r: 2,
        s: 3,
        pad: 0,
        stride: 1,
        dilation: 2,
    };
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[1, 2, 6, 6])?;
    let wt = g.input("w", DataType::Float, &[2, 2, 2, 3])?;
    let y = g.conv_fprop(
        x,
        wt,
        &ConvOptions::default()
            .dilation([2, 2])
            .mode(ConvMode::Convolution),
    )?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;
    let x_d = data(72, 120);
    let w_d = data(24, 121);
    let mut flipped = w_d.clone();
    for kc in 0..4 {
        for r in 0..2 {
            for s in 0..3 {
                flipped[kc * 6 + r * 3 + s] = w_d[kc * 6 + (1 - r) * 3 + (2 - s)];
            }
        }
    }
    let mut y_d = vec![0f32; 2 * p.out_h() * p.out_w()];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&x_d)),
            (wt, HostBuffer::input(&w_d)),
            (y, HostBuffer::output(&mut y_d)),
        ],
    )?;
    let y_d = logical(&y_d, &built.dims(y)?, &built.strides(y)?);
    assert_close(&y_d, &p.fprop(&x_d, &flipped), 1e-5, 1e-5);
    Ok(())
}

// ------------------------------------------------------------ attention

/// (o, reference o, stats, reference stats).
type SdpaRun = (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>);

fn run_sdpa(p: Attn, options: SdpaOptions, with_bias: bool) -> Result<SdpaRun, Error> {
    let (b, hq, hkv, sq, skv, d, dv) = (
        p.b as i64,
        p.h_q as i64,
        p.h_kv as i64,
        p.s_q as i64,
        p.s_kv as i64,
        p.d as i64,
        p.d_v as i64,
    );
    let mut g = Graph::named("attention")?;
    let q = g.input("q", DataType::Float, &[b, hq, sq, d])?;
    let k = g.input("k", DataType::Float, &[b, hkv, skv, d])?;
    let v = g.input("v", DataType::Float, &[b, hkv, skv, dv])?;
    let bias = if with_bias {
        Some(g.input("bias", DataType::Float, &[b, hq, sq, skv])?)
    } else {
        None
    };
    let mut options = options.generate_stats(true);
    options.bias = bias;
    let out = g.sdpa(q, k, v, &options)?;
    let stats = out.stats.expect("stats were asked for");
    g.set_output(out.o, true)?.set_output(stats, true)?;
    assert_eq!(g.dims(out.o)?, [b, hq, sq, dv]);
    assert_eq!(g.dims(stats)?, [b, hq, sq, 1]);
    let built = g.build(&cpu())?;

    let q_d = data(p.b * p.h_q * p.s_q * p.d, 130);
    let k_d = data(p.b * p.h_kv * p.s_kv * p.d, 131);
    let v_d = data(p.b * p.h_kv * p.s_kv * p.d_v, 132);
    let bias_d = data(p.b * p.h_q * p.s_q * p.s_kv, 133);
    let mut o_d = vec![0f32; p.b * p.h_q * p.s_q * p.d_v];
    let mut stats_d = vec![0f32; p.b * p.h_q * p.s_q];
    let mut buffers = vec![
        (q, HostBuffer::input(&q_d)),
        (k, HostBuffer::input(&k_d)),
        (v, HostBuffer::input(&v_d)),
        (out.o, HostBuffer::output(&mut o_d)),
        (stats, HostBuffer::output(&mut stats_d)),
    ];
    if let Some(bias) = bias {
        buffers.push((bias, HostBuffer::input(&bias_d)));
    }
    built.execute_host(&mut Handle::new()?, &buffers)?;
    drop(buffers);
    let (o_ref, stats_ref) = common::sdpa(&q_d, &k_d, &v_d, with_bias.then_some(&bias_d[..]), p);
    Ok((o_d, o_ref, stats_d, stats_ref))
}

#[test]
fn sdpa_variants_match_plain_attention() -> TestResult {
    let base = Attn {
        b: 2,
        h_q: 2,
        h_kv: 2,
        s_q: 5,
        s_kv: 5,
        d: 8,
        d_v: 8,
        scale: 1.0 / 8f32.sqrt(),
        causal: false,
        causal_bottom_right: false,
    };
    let cases = [
        ("plain", base, SdpaOptions::default(), false),
        (
            "causal",
            Attn {
                causal: true,
                ..base
            },
            SdpaOptions::default().causal_mask(true),
            false,
        ),
        (
            "causal bottom-right, s_q < s_kv",
            Attn {
                s_q: 3,
                s_kv: 7,
                causal_bottom_right: true,
                ..base
            },
            SdpaOptions::default().causal_mask_bottom_right(true),
            false,
        ),
        (
            "GQA 4:2, d_v != d",
            Attn {
                h_q: 4,
                h_kv: 2,
                d_v: 4,
                ..base
            },
            SdpaOptions::default(),
            false,
        ),
        (
            "MQA 2:1 with bias",
            Attn { h_kv: 1, ..base },
            SdpaOptions::default(),
            true,
        ),
        (
            "explicit scale, causal",
            Attn {
                scale: 0.3,
                causal: true,
                ..base
            },
            SdpaOptions::default().attn_scale(0.3).causal_mask(true),
            false,
        ),
    ];
    for (what, p, options, bias) in cases {
        let (o, o_ref, stats, stats_ref) = run_sdpa(p, options.name("attn"), bias)?;
        eprintln!("sdpa case: {what}");
        assert_close(&o, &o_ref, 1e-5, 1e-5);
        assert_close(&stats, &stats_ref, 1e-5, 1e-5);
    }
    Ok(())
}

#[test]
fn sdpa_half_with_bshd_storage() -> TestResult {
    // q and o stored [b, s, h, d] (BSHD) while dims stay logical BHSD.
    let p = Attn {
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
    };
    let (h, s, d) = (2i64, 6i64, 8i64);
    let mut g = Graph::new()?;
    g.set_io_dtype(DataType::Half)?
        .set_compute_dtype(DataType::Float)?;
    let bshd = [s * h * d, d, h * d, 1];
    let q = g.add_tensor(&TensorDesc::new([1, h, s, d]).name("q").strides(bshd))?;
    let k = g.input("k", DataType::NotSet, &[1, h, s, d])?;
    let v = g.input("v", DataType::NotSet, &[1, h, s, d])?;
    let out = g.sdpa(q, k, v, &SdpaOptions::default().causal_mask(true))?;
    g.set_output(out.o, true)?;
    assert_eq!(out.stats, None);
    assert_eq!(g.strides(out.o)?, bshd, "o takes q's dimension order");
    let built = g.build(&cpu())?;

    let q_bhsd = data(96, 140);
    let mut q_bshd = vec![0u16; 96];
    for hi in 0..2 {
        for si in 0..6 {
            for di in 0..8 {
                q_bshd[(si * 2 + hi) * 8 + di] = f16_from_f32(q_bhsd[(hi * 6 + si) * 8 + di]);
            }
        }
    }
    let k_h = f16_vec_from_f32(&data(96, 141));
    let v_h = f16_vec_from_f32(&data(96, 142));
    let mut o_bshd = vec![0u16; 96];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_bshd)),
            (k, HostBuffer::input(&k_h)),
            (v, HostBuffer::input(&v_h)),
            (out.o, HostBuffer::output(&mut o_bshd)),
        ],
    )?;
    let q_rounded: Vec<f32> = q_bhsd
        .iter()
        .map(|&v| f16_to_f32(f16_from_f32(v)))
        .collect();
    let (o_ref, _) = common::sdpa(
        &q_rounded,
        &f16_vec_to_f32(&k_h),
        &f16_vec_to_f32(&v_h),
        None,
        p,
    );
    let mut o_bhsd = vec![0f32; 96];
    for hi in 0..2 {
        for si in 0..6 {
            for di in 0..8 {
                o_bhsd[(hi * 6 + si) * 8 + di] = f16_to_f32(o_bshd[(si * 2 + hi) * 8 + di]);
            }
        }
    }
    assert_close(&o_bhsd, &o_ref, 2e-3, 2e-3);
    Ok(())
}

// --------------------------------------------------- queries and setters

#[test]
fn graph_queries_and_setters() -> TestResult {
    let mut g = Graph::named("queries")?;
    let a = g.input("a", DataType::Float, &[2, 3])?;
    let b = g.add_tensor(&TensorDesc::new([3, 4]).dtype(DataType::Float))?; // automatic name
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    let d = g.unary(PointwiseMode::Abs, c)?;
    g.set_output(d, true)?;

    assert_eq!(g.tensor_count()?, 4);
    assert_eq!(g.node_count()?, 2);
    assert_eq!(g.tensors()?, [a, b, c, d]);
    assert_eq!(g.find_tensor("a")?, a);
    assert_eq!(g.tensor_name(c)?, "mm::c");
    assert_eq!(g.find_tensor("mm::c")?, c);
    assert!(!g.tensor_name(b)?.is_empty());
    assert_eq!(
        g.shape(c)?,
        Shape {
            dims: vec![2, 4],
            strides: vec![4, 1]
        }
    );
    assert!(g.is_bound(a)? && g.is_bound(d)? && !g.is_bound(c)?);
    assert_eq!(g.dtype(c)?, DataType::NotSet);

    g.set_tensor_name(b, "b")?;
    assert_eq!(g.find_tensor("b")?, b);
    g.set_strides(a, &[1, 2])?; // a becomes column-major
    assert_eq!(g.strides(a)?, [1, 2]);
    g.set_dims(a, &[2, 3])?;
    let d = g.set_uid(d, 1000)?;
    assert_eq!(d.uid(), 1000);
    assert_eq!(g.tensor_name(d)?, g.tensor_name(Tensor::from_uid(1000))?);
    g.set_name("renamed")?
        .set_intermediate_dtype(DataType::Float)?;
    assert_eq!(format!("{g:?}"), "Graph { tensors: 4, nodes: 2 }");

    g.validate()?;
    assert_eq!(
        g.dtype(c)?,
        DataType::Float,
        "virtual tensors take the intermediate type"
    );
    let built = g.build(&cpu())?;
    assert_eq!(built.name()?, "renamed");
    assert_eq!(built.target(), Target::CpuReference);
    assert_eq!(built.workspace_size(), 0);
    assert_eq!(built.plan_name(), "cpu_reference");
    assert_eq!(built.bound_tensors(), [a, b, d]);
    assert_eq!(built.tensor_count()?, 4);
    assert_eq!(built.find_tensor("b")?, b);
    assert_eq!(built.buffer_len(a)?, 6);
    assert_eq!(built.buffer_bytes(d)?, 8 * 4);
    assert!(
        built.buffer_len(c).is_err(),
        "virtual tensors take no buffer"
    );

    let a_colmajor = [1.0f32, -4.0, 2.0, -5.0, 3.0, -6.0]; // [[1,2,3],[-4,-5,-6]]
    let b_d = data(12, 150);
    let mut d_d = [0f32; 8];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_colmajor)),
            (b, HostBuffer::input(&b_d)),
            (d, HostBuffer::output(&mut d_d)),
        ],
    )?;
    let expected: Vec<f32> = common::matmul(&[1.0, 2.0, 3.0, -4.0, -5.0, -6.0], &b_d, 1, 2, 3, 4)
        .iter()
        .map(|v| v.abs())
        .collect();
    assert_close(&d_d, &expected, 1e-6, 1e-6);
    Ok(())
}

#[test]
fn default_options_are_the_c_defaults() {
    let conv = ConvOptions::default();
    assert_eq!(
        (
            conv.pre_padding,
            conv.post_padding,
            conv.stride,
            conv.dilation
        ),
        ([0; 3], [0; 3], [1; 3], [1; 3])
    );
    assert_eq!(
        (conv.spatial_dims, conv.mode, conv.compute_dtype, conv.name),
        (0, ConvMode::CrossCorrelation, DataType::NotSet, None)
    );
    let pw = PointwiseOptions::default();
    assert_eq!(
        (
            pw.relu_lower_clip,
            pw.relu_lower_clip_slope,
            pw.elu_alpha,
            pw.softplus_beta,
            pw.swish_beta,
            pw.axis
        ),
        (0.0, 0.0, 1.0, 1.0, 1.0, 0)
    );
    assert!(pw.relu_upper_clip >= 3.4e38);
    let red = ReductionOptions::default();
    assert_eq!((red.axes_mask, red.deterministic), (0, false));
    let sdpa = SdpaOptions::default();
    assert_eq!(
        (
            sdpa.attn_scale,
            sdpa.generate_stats,
            sdpa.causal_mask,
            sdpa.causal_mask_bottom_right,
            sdpa.bias
        ),
        (0.0, false, false, false, None)
    );
    assert_eq!(MatmulOptions::default().compute_dtype, DataType::NotSet);
    let build = BuildOptions::default();
    assert_eq!(
        (build.target, build.heur_modes),
        (Target::Auto, vec![HeurMode::A, HeurMode::Fallback])
    );
}

#[test]
fn library_information() -> TestResult {
    assert!(version() >= HEADER_VERSION);
    check_version(HEADER_VERSION, ABI_VERSION)?;
    assert_eq!(DataType::BFloat16.name(), "BFLOAT16");
    assert_eq!(DataType::Half.size(), 2);
    assert_eq!(DataType::Other(99).size(), 0);
    assert_eq!(DataType::from_raw(3), DataType::BFloat16);
    assert_eq!(DataType::from_raw(77), DataType::Other(77));
    assert_eq!(i32::from(PointwiseMode::GenIndex), 101);
    assert_eq!(ReductionMode::from_raw(5), ReductionMode::Amax);
    let _ = device_count()?; // never an error, with or without a GPU
    let mut h = Handle::for_device(0)?; // creating a context never touches the GPU
    assert_eq!(h.last_error(), "");
    assert!(!h.as_raw().is_null());
    Ok(())
}

// -------------------------------------------------------- serialization

fn small_graph() -> Result<(Graph, Tensor, Tensor, Tensor), Error> {
    let mut g = Graph::named("ser")?;
    let x = g.input("x", DataType::Float, &[2, 4])?;
    let w = g.input("w", DataType::Float, &[4, 3])?;
    let y = g.matmul(x, w, &MatmulOptions::default().name("mm"))?;
    let y = g.pointwise(
        PointwiseMode::ReluFwd,
        &[y],
        &PointwiseOptions::default().relu_lower_clip_slope(0.5),
    )?;
    let y = g.reduction(
        ReductionMode::Add,
        y,
        &ReductionOptions::default().reduce_axis(1).name("sum"),
    )?;
    g.set_output(y, true)?;
    Ok((g, x, w, y))
}

fn run_small(built: &BuiltGraph, x: Tensor, w: Tensor, y: Tensor) -> Result<Vec<f32>, Error> {
    let mut out = vec![0f32; 2];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&data(8, 160))),
            (w, HostBuffer::input(&data(12, 161))),
            (y, HostBuffer::output(&mut out)),
        ],
    )?;
    Ok(out)
}

#[test]
fn serialization_round_trips() -> TestResult {
    let (g, x, w, y) = small_graph()?;
    let json = g.to_json()?;
    assert!(json.contains("cudnnfe.graph"), "{json}");
    assert_eq!(g.to_bytes()?, json.as_bytes());

    let loaded = Graph::from_json(&json)?;
    assert_eq!(loaded.to_json()?, json, "load + save is exact");
    assert_eq!(loaded.tensor_count()?, g.tensor_count()?);
    assert_eq!(loaded.find_tensor("sum::y")?, y);
    let from_bytes = Graph::from_bytes(json.as_bytes())?;
    assert_eq!(from_bytes.to_json()?, json);

    let expected = run_small(&g.build(&cpu())?, x, w, y)?;
    let built = loaded.build(&cpu())?;
    assert_eq!(run_small(&built, x, w, y)?, expected);
    // A built graph serializes too, and reloads to the same results.
    let rebuilt = Graph::from_json(&built.to_json()?)?.build(&cpu())?;
    assert_eq!(run_small(&rebuilt, x, w, y)?, expected);

    // Outputs of a loaded graph are known: a read-only buffer is refused.
    let err = built
        .execute_host(
            &mut Handle::new()?,
            &[
                (x, HostBuffer::input(&[0f32; 8])),
                (w, HostBuffer::input(&[0f32; 12])),
                (y, HostBuffer::input(&[0f32; 2])),
            ],
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument);
    assert!(err.message.contains("HostBuffer::output"), "{err}");
    Ok(())
}

// ------------------------------------------------ raw-pointer execution

#[test]
fn execute_and_execute_ordered_with_host_pointers() -> TestResult {
    let (g, x, w, y) = small_graph()?;
    let built = g.build(&cpu())?;
    let expected = run_small(&built, x, w, y)?;
    let x_d = data(8, 160);
    let w_d = data(12, 161);
    let mut out = vec![0f32; 2];
    let mut handle = Handle::new()?;
    let bindings = [
        DeviceBinding::new(y, out.as_mut_ptr().cast()),
        DeviceBinding::new(x, x_d.as_ptr() as *mut _),
        DeviceBinding::new(w, w_d.as_ptr() as *mut _),
    ];
    assert_eq!(bindings[1].tensor(), x);
    // SAFETY: host buffers of the right sizes for a CPU reference plan.
    unsafe {
        built.execute(
            &mut handle,
            &bindings,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )?
    };
    assert_eq!(out, expected);

    out.fill(0.0);
    let order = built.bound_tensors();
    assert_eq!(order, [x, w, y]);
    let data_ptrs = [
        x_d.as_ptr() as *mut _,
        w_d.as_ptr() as *mut _,
        out.as_mut_ptr().cast(),
    ];
    // SAFETY: as above, in bound_tensors() order.
    unsafe {
        built.execute_ordered(
            &mut handle,
            &data_ptrs,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )?
    };
    assert_eq!(out, expected);
    Ok(())
}

// -------------------------------------------------------------- threads

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}

#[test]
fn thread_rules() -> TestResult {
    assert_send::<Graph>();
    assert_send::<Handle>();
    assert_send::<BuiltGraph>();
    assert_sync::<BuiltGraph>();
    assert_send::<HostBuffer<'static>>();
    assert_send::<Error>();
    assert_sync::<Error>();

    // A graph moves to another thread to be built; a handle moves too.
    let (g, x, w, y) = small_graph()?;
    let built = std::thread::spawn(move || g.build(&cpu()))
        .join()
        .unwrap()?;
    let built = Arc::new(built);
    let expected = run_small(&built, x, w, y)?;

    // One built graph, executed from eight threads at once, each with its
    // own handle and buffers.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let built = Arc::clone(&built);
            std::thread::spawn(move || -> Result<Vec<f32>, Error> {
                let mut last = Vec::new();
                for _ in 0..50 {
                    last = run_small(&built, x, w, y)?;
                }
                Ok(last)
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap()?, expected);
    }

    // Scoped threads share &BuiltGraph without Arc; handles are moved in.
    let handles: Vec<Handle> = (0..4).map(|_| Handle::new()).collect::<Result<_, _>>()?;
    std::thread::scope(|scope| {
        for mut handle in handles {
            let built = &*built;
            let expected = &expected;
            scope.spawn(move || {
                let mut out = vec![0f32; 2];
                built
                    .execute_host(
                        &mut handle,
                        &[
                            (x, HostBuffer::input(&data(8, 160))),
                            (w, HostBuffer::input(&data(12, 161))),
                            (y, HostBuffer::output(&mut out)),
                        ],
                    )
                    .unwrap();
                assert_eq!(&out, expected);
            });
        }
    });

    // Different graphs built concurrently.
    let built: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| -> Result<BuiltGraph, Error> { small_graph()?.0.build(&cpu()) })
        })
        .collect();
    for b in built {
        b.join().unwrap()?;
    }
    Ok(())
}

#[test]
fn try_build_gives_the_graph_back() -> TestResult {
    let (g, x, w, y) = small_graph()?;
    let err = g
        .try_build(None, &BuildOptions::default().target(Target::Other(42)))
        .unwrap_err();
    assert_eq!(err.error.kind, ErrorKind::InvalidArgument);
    assert!(err.error.message.contains("target"), "{}", err.error);
    let g = err.graph.expect("the graph comes back");
    let mut handle = Handle::new()?;
    let built = g.build_with_handle(&mut handle, &cpu())?;
    assert_eq!(run_small(&built, x, w, y)?.len(), 2);
    Ok(())
}

#[test]
fn attention_common_options_reach_every_set() -> TestResult {
    let mut common = AttentionCommon::default();
    assert_eq!(common.window_right, None);
    common.attn_scale = 0.25;
    common.causal_mask = true;
    common.window_left = Some(8);
    common.dropout_probability = 0.1;
    let mut forward = SdpaOptions::default();
    forward.generate_stats = true;
    let forward = forward.common(&common)?;
    assert_eq!(forward.attn_scale, 0.25);
    assert!(forward.causal_mask && forward.generate_stats);
    assert_eq!(forward.window_left, Some(8));
    let backward = SdpaBackwardOptions::default().common(&common)?;
    assert_eq!(backward.attn_scale, 0.25);
    assert_eq!(backward.window_left, Some(8));
    assert_eq!(backward.dropout_probability, 0.1);
    let fp8 = SdpaFp8Options::default().common(&common)?;
    assert!(fp8.causal_mask);
    // The FP8 backward has no ALiBi: refused, naming the field.
    let mut alibi = common.clone();
    alibi.alibi_mask = true;
    let err = SdpaFp8BackwardOptions::default()
        .common(&alibi)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("alibi_mask"), "{}", err.message());
    assert_eq!(
        SdpaFp8BackwardOptions::default()
            .common(&common)?
            .window_left,
        Some(8)
    );
    Ok(())
}
