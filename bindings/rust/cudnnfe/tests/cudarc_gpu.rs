//! GPU tests of feature `cudarc`: execute and bind on cudarc buffers and
//! streams, compared with the CPU reference, and the checks of each buffer
//! against its tensor on real device buffers. Without a GPU each test prints
//! `SKIPPED <test>: <reason>` and passes (the convention of tests/gpu.rs);
//! the same checks on host values run everywhere (tests/errors.rs,
//! `device_buffer_checks_name_the_tensor_and_the_rule`).
//!
//! cargo test --release --features cudarc --test cudarc_gpu
mod common;
#[path = "../examples/cudarc_sdpa.rs"]
mod example;

use std::sync::Arc;

use common::{assert_close, data, expect_err, skip};
use cudnnfe::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use cudnnfe::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A stream on GPU 0, or None (and a printed reason) when there is no GPU.
/// cudarc is touched only after the library has seen a GPU: without a CUDA
/// driver, cudarc's loader panics.
fn stream(test: &str) -> Option<Arc<CudaStream>> {
    if common::gpu_count() == 0 {
        skip(test, "no GPU (cudnnfe_device_count() == 0)");
        return None;
    }
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("a GPU but no CUDA context: {e}"));
    Some(ctx.new_stream().expect("a CUDA stream"))
}

fn not_supported(test: &str, e: &(dyn std::error::Error + 'static)) -> bool {
    let refused = e
        .downcast_ref::<Error>()
        .is_some_and(|e| e.kind == ErrorKind::NotSupported);
    if refused {
        skip(test, &format!("the GPU build is not supported here: {e}"));
    }
    refused
}

/// The example (examples/cudarc_sdpa.rs) at `geometry`: every output within
/// its tolerance of the CPU reference.
fn gqa(test: &str, geometry: &example::Geometry) -> TestResult {
    if stream(test).is_none() {
        return Ok(());
    }
    let (comparisons, plans) = match example::run(geometry, 0) {
        Err(e) if not_supported(test, e.as_ref()) => return Ok(()),
        other => other?,
    };
    for c in &comparisons {
        eprintln!("NOTE {test}: {c}");
    }
    eprintln!("NOTE {test}: plans {plans:?}");
    let failed: Vec<String> = comparisons
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.to_string())
        .collect();
    assert!(failed.is_empty(), "off the CPU reference: {failed:#?}");
    Ok(())
}

#[test]
fn cudarc_causal_gqa_sdpa_bf16_forward_backward_matches_cpu_reference() -> TestResult {
    gqa(
        "cudarc_causal_gqa_sdpa_bf16_forward_backward_matches_cpu_reference",
        &example::GQA_BF16,
    )
}

#[test]
fn cudarc_causal_gqa_sdpa_fp16_forward_backward_matches_cpu_reference() -> TestResult {
    gqa(
        "cudarc_causal_gqa_sdpa_fp16_forward_backward_matches_cpu_reference",
        &example::Geometry {
            dtype: DataType::Half,
            s: 256,
            ..example::GQA_BF16
        },
    )
}

const M: i64 = 64;
const K: i64 = 32;
const N: i64 = 16;

/// y = a @ b in FP16: [1, M, K] @ [1, K, N]; (graph, [a, b, y]).
fn matmul_graph() -> Result<(Graph, [Tensor; 3])> {
    let mut g = Graph::named("cudarc_matmul")?;
    g.set_io_dtype(DataType::Half)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    let a = g.input("a", DataType::Half, &[1, M, K])?;
    let b = g.input("b", DataType::Half, &[1, K, N])?;
    let y = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(y, true)?;
    Ok((g, [a, b, y]))
}

/// Host inputs and the CPU reference's y.
fn matmul_reference() -> Result<(Vec<u16>, Vec<u16>, Vec<f32>)> {
    let a = f16_vec_from_f32(&data((M * K) as usize, 71));
    let b = f16_vec_from_f32(&data((K * N) as usize, 72));
    let (g, [ta, tb, ty]) = matmul_graph()?;
    let mut y = vec![0u16; (M * N) as usize];
    g.build(&BuildOptions::cpu_reference())?.execute_host(
        &mut Handle::new()?,
        &[
            (ta, HostBuffer::input(&a)),
            (tb, HostBuffer::input(&b)),
            (ty, HostBuffer::output(&mut y)),
        ],
    )?;
    Ok((a, b, f16_vec_to_f32(&y)))
}

#[test]
fn cudarc_buffers_are_checked_against_their_tensors() -> TestResult {
    let test = "cudarc_buffers_are_checked_against_their_tensors";
    let Some(stream) = stream(test) else {
        return Ok(());
    };
    let (g, [a, b, y]) = matmul_graph()?;
    let mut handle = Handle::for_device(0)?;
    let built = match g.build_with_handle(&mut handle, &BuildOptions::gpu()) {
        Err(e) if not_supported(test, &e) => return Ok(()),
        other => other?,
    };
    let (a_host, b_host, expected) = matmul_reference()?;
    let a_dev = stream.clone_htod(&a_host)?;
    let b_dev = stream.clone_htod(&b_host)?;
    let mut y_dev: CudaSlice<u16> = stream.alloc_zeros((M * N) as usize)?;
    let mut ws = built.cudarc_workspace(&stream)?;

    // Element type: f32 for a HALF tensor.
    let a_f32: CudaSlice<f32> = stream.alloc_zeros((M * K) as usize)?;
    expect_err(
        built.execute_cudarc(
            &mut handle,
            &mut [
                (a, CudaBuffer::input(&a_f32)),
                (b, CudaBuffer::input(&b_dev)),
                (y, CudaBuffer::output(&mut y_dev)),
            ],
            ws.as_mut(),
            &stream,
        ),
        ErrorKind::InvalidArgument,
        &[
            "buffer 0",
            "tensor \"a\"",
            "is HALF but the buffer holds f32",
        ],
    );
    // Length: a view one element short of b's span.
    let b_short = b_dev.slice(..(K * N) as usize - 1);
    expect_err(
        built.execute_cudarc(
            &mut handle,
            &mut [
                (a, CudaBuffer::input(&a_dev)),
                (b, CudaBuffer::input(&b_short)),
                (y, CudaBuffer::output(&mut y_dev)),
            ],
            ws.as_mut(),
            &stream,
        ),
        ErrorKind::InvalidArgument,
        &[
            "buffer 1",
            "tensor \"b\"",
            "needs at least 512 elements",
            "511 x u16",
        ],
    );
    // Direction: the output given read-only.
    expect_err(
        built.execute_cudarc(
            &mut handle,
            &mut [
                (a, CudaBuffer::input(&a_dev)),
                (b, CudaBuffer::input(&b_dev)),
                (y, CudaBuffer::input(&y_dev)),
            ],
            ws.as_mut(),
            &stream,
        ),
        ErrorKind::InvalidArgument,
        &["buffer 2", "written by the graph", "CudaBuffer::output"],
    );
    // A handle of another device.
    if let Ok(mut other) = Handle::for_device(1) {
        expect_err(
            built.execute_cudarc(&mut other, &mut [], ws.as_mut(), &stream),
            ErrorKind::InvalidArgument,
            &["handle is for CUDA device 1", "stream is on device 0"],
        );
    }
    // A workspace too small (when the plan needs one).
    if built.workspace_size() > 0 {
        let mut small: CudaSlice<u8> = stream.alloc_zeros(built.workspace_size() - 1)?;
        expect_err(
            built.execute_cudarc(
                &mut handle,
                &mut [
                    (a, CudaBuffer::input(&a_dev)),
                    (b, CudaBuffer::input(&b_dev)),
                    (y, CudaBuffer::output(&mut y_dev)),
                ],
                Some(&mut small),
                &stream,
            ),
            ErrorKind::InvalidArgument,
            &["needs a workspace of"],
        );
    }
    // A missing tensor is the library's to refuse.
    let err = built
        .execute_cudarc(
            &mut handle,
            &mut [(a, CudaBuffer::input(&a_dev))],
            ws.as_mut(),
            &stream,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument, "{err}");

    // Refused calls wrote nothing; views work: a from a longer slice at an
    // offset, y into a view of a longer one (offsets of 16 and 32 bytes keep
    // the 16-byte alignment cuDNN's kernels expect).
    assert!(stream.clone_dtoh(&y_dev)?.iter().all(|&v| v == 0));
    let mut padded = vec![0u16; 8];
    padded.extend_from_slice(&a_host);
    let a_padded = stream.clone_htod(&padded)?;
    let a_view = a_padded.slice(8..);
    let mut y_big: CudaSlice<u16> = stream.alloc_zeros((M * N) as usize + 32)?;
    let mut y_view = y_big.slice_mut(16..);
    built.execute_cudarc(
        &mut handle,
        &mut [
            (a, CudaBuffer::input(&a_view)),
            (b, CudaBuffer::input(&b_dev)),
            (y, CudaBuffer::output(&mut y_view)),
        ],
        ws.as_mut(),
        &stream,
    )?;
    let y_all = f16_vec_to_f32(&stream.clone_dtoh(&y_big)?);
    assert!(
        y_all[..16].iter().all(|&v| v == 0.0),
        "wrote before the view"
    );
    assert_close(&y_all[16..16 + (M * N) as usize], &expected, 2e-2, 1e-2);
    Ok(())
}

#[test]
fn cudarc_refuses_a_cpu_reference_graph() -> TestResult {
    let Some(stream) = stream("cudarc_refuses_a_cpu_reference_graph") else {
        return Ok(());
    };
    let (g, [a, _, _]) = matmul_graph()?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    let a_dev: CudaSlice<u16> = stream.alloc_zeros((M * K) as usize)?;
    expect_err(
        built.execute_cudarc(
            &mut Handle::new()?,
            &mut [(a, CudaBuffer::input(&a_dev))],
            None,
            &stream,
        ),
        ErrorKind::InvalidArgument,
        &["built for CpuReference", "Target::Gpu"],
    );
    Ok(())
}

#[test]
fn cudarc_bind_runs_each_mode_and_matches_cpu_reference() -> TestResult {
    let test = "cudarc_bind_runs_each_mode_and_matches_cpu_reference";
    let Some(stream) = stream(test) else {
        return Ok(());
    };
    let (g, [a, b, y]) = matmul_graph()?;
    let mut handle = Handle::for_device(0)?;
    let built = match g.build_with_handle(&mut handle, &BuildOptions::gpu()) {
        Err(e) if not_supported(test, &e) => return Ok(()),
        other => other?,
    };
    let (a_host, b_host, expected) = matmul_reference()?;
    let a_dev = stream.clone_htod(&a_host)?;
    let b_dev = stream.clone_htod(&b_host)?;
    for mode in [
        CudaGraphMode::Off,
        CudaGraphMode::Capture,
        CudaGraphMode::Auto,
    ] {
        let mut y_dev: CudaSlice<u16> = stream.alloc_zeros((M * N) as usize)?;
        let mut ws = built.cudarc_workspace(&stream)?;
        {
            // Any order; bind puts them in bound_tensors() order.
            let bound = built.bind_cudarc(
                &mut handle,
                vec![
                    (y, CudaBuffer::output(&mut y_dev)),
                    (b, CudaBuffer::input(&b_dev)),
                    (a, CudaBuffer::input(&a_dev)),
                ],
                ws.as_mut(),
                &stream,
                mode,
            );
            let mut bound = match bound {
                Err(e) if mode != CudaGraphMode::Off && e.kind == ErrorKind::NotSupported => {
                    skip(test, &format!("{mode:?}: {e}"));
                    continue;
                }
                other => other?,
            };
            eprintln!(
                "NOTE {test}: {mode:?} runs as {:?}",
                bound.cuda_graph_mode()?
            );
            bound.execute()?;
            bound.execute()?;
        }
        let got = f16_vec_to_f32(&stream.clone_dtoh(&y_dev)?);
        assert_close(&got, &expected, 2e-2, 1e-2);
    }

    // Every bound tensor exactly once.
    let mut y_dev: CudaSlice<u16> = stream.alloc_zeros((M * N) as usize)?;
    let mut ws = built.cudarc_workspace(&stream)?;
    expect_err(
        built
            .bind_cudarc(
                &mut handle,
                vec![
                    (a, CudaBuffer::input(&a_dev)),
                    (y, CudaBuffer::output(&mut y_dev)),
                ],
                ws.as_mut(),
                &stream,
                CudaGraphMode::Off,
            )
            .map(|_| ()),
        ErrorKind::InvalidArgument,
        &["tensor \"b\"", "has no buffer"],
    );
    expect_err(
        built
            .bind_cudarc(
                &mut handle,
                vec![
                    (a, CudaBuffer::input(&a_dev)),
                    (b, CudaBuffer::input(&b_dev)),
                    (a, CudaBuffer::input(&a_dev)),
                ],
                ws.as_mut(),
                &stream,
                CudaGraphMode::Off,
            )
            .map(|_| ()),
        ErrorKind::InvalidArgument,
        &["buffers 0 and 2", "tensor \"a\""],
    );
    Ok(())
}
