//! Bound executions (`BuiltGraph::bind`) on the CPU reference: a bound run
//! reads the bound buffers and pass-by-value values at each run, and CUDA
//! graph modes are refused there with NotSupported.
mod common;

use std::ffi::c_void;

use common::{assert_close, data};
use cudnnfe::*;

type TestResult = Result<(), Error>;

fn cpu() -> BuildOptions {
    BuildOptions::cpu_reference()
}

#[test]
fn bound_runs_read_buffers_and_pass_by_value_at_each_run() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4])?;
    let s = g.input("s", DataType::Float, &[1])?;
    let y = g.binary(PointwiseMode::Mul, x, s)?;
    g.set_output(y, true)?;
    g.set_pass_by_value(s, true)?;
    let built = g.build(&cpu())?;
    let mut handle = Handle::new()?;
    let x_d = data(4, 7);
    let mut x_buf = x_d.clone();
    let mut s_buf = [2.0f32];
    let mut y_buf = [0f32; 4];
    let (x_p, s_p, y_p): (*mut f32, *mut f32, *mut f32) =
        (x_buf.as_mut_ptr(), s_buf.as_mut_ptr(), y_buf.as_mut_ptr());
    let order: Vec<*mut c_void> = built
        .bound_tensors()
        .iter()
        .map(|t| {
            (if *t == x {
                x_p
            } else if *t == s {
                s_p
            } else {
                y_p
            })
            .cast()
        })
        .collect();
    // SAFETY: the buffers outlive `run` and are host memory for the CPU reference.
    let mut run = unsafe {
        built.bind(
            &mut handle,
            &order,
            std::ptr::null_mut(),
            0,
            CudaGraphMode::Off,
        )?
    };
    assert_eq!(run.cuda_graph_mode()?, CudaGraphMode::Off);
    for scale in [2.0f32, -0.5] {
        // SAFETY: the scale's buffer, written between runs through its pointer.
        unsafe { *s_p = scale };
        // SAFETY: the default stream; the buffers above outlive the run.
        unsafe { run.execute(std::ptr::null_mut()) }?;
        // SAFETY: the output buffer, read between runs.
        let got = unsafe { std::slice::from_raw_parts(y_p, 4) }.to_vec();
        let expected: Vec<f32> = x_d.iter().map(|v| v * scale).collect();
        assert_close(&got, &expected, 0.0, 0.0);
    }
    Ok(())
}

#[test]
fn cuda_graph_modes_are_refused_on_the_cpu_reference() -> TestResult {
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Float, &[4])?;
    let y = g.unary(PointwiseMode::ReluFwd, x)?;
    g.set_output(y, true)?;
    let built = g.build(&cpu())?;
    let mut handle = Handle::new()?;
    let mut x_d = [0f32; 4];
    let mut y_d = [0f32; 4];
    let order: Vec<*mut c_void> = vec![x_d.as_mut_ptr().cast(), y_d.as_mut_ptr().cast()];
    for mode in [
        CudaGraphMode::Native,
        CudaGraphMode::Capture,
        CudaGraphMode::Auto,
    ] {
        // SAFETY: host buffers that outlive the call.
        let err = unsafe { built.bind(&mut handle, &order, std::ptr::null_mut(), 0, mode) }
            .err()
            .expect("a CUDA graph on the CPU reference is refused");
        assert_eq!(err.kind(), ErrorKind::NotSupported);
        assert!(err.message().contains("CPU reference"), "{}", err.message());
    }
    // SAFETY: as above; one pointer short.
    let err = unsafe {
        built.bind(
            &mut handle,
            &order[..1],
            std::ptr::null_mut(),
            0,
            CudaGraphMode::Off,
        )
    }
    .err()
    .expect("a short pointer list is refused");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    Ok(())
}
