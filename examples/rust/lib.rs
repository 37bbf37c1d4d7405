//! Helpers shared by the cudnnfe Rust examples (`matmul_bias.rs`,
//! `sdpa_causal.rs`): deterministic data, choosing the target from the
//! command line, and running a built graph on host or device buffers.
//!
//! Run the examples from `bindings/rust`:
//!
//! ```text
//! cargo run --example matmul_bias            # the GPU if there is one, else the CPU reference
//! cargo run --example sdpa_causal -- --cpu   # force the CPU reference
//! cargo run --example sdpa_causal -- --gpu   # force the GPU (fails without one)
//! ```

use std::error::Error;

use cudnnfe::{BuiltGraph, DeviceBinding, Element, Handle, HostBuffer, Target, Tensor};

pub mod cuda;

/// Deterministic values in [-1, 1) (xorshift), so that runs are repeatable.
pub fn data(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Largest |a - b| over two equally long slices.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// `--gpu` → [`Target::Gpu`], `--cpu` → [`Target::CpuReference`], neither
/// → [`Target::Auto`] (the GPU when cuDNN and a GPU load).
pub fn target_from_args() -> Target {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--gpu") {
        Target::Gpu
    } else if args.iter().any(|a| a == "--cpu") {
        Target::CpuReference
    } else {
        Target::Auto
    }
}

/// Runs `built` wherever it was built for: on the host slices directly for
/// the CPU reference, or through device copies (with a workspace) for the
/// GPU. `outputs` receive the results either way.
pub fn execute<T: Element>(
    built: &BuiltGraph,
    handle: &mut Handle,
    inputs: &[(Tensor, &[T])],
    outputs: &mut [(Tensor, &mut [T])],
) -> Result<(), Box<dyn Error>> {
    if built.target() == Target::CpuReference {
        let mut buffers: Vec<(Tensor, HostBuffer<'_>)> = inputs
            .iter()
            .map(|(t, d)| (*t, HostBuffer::input(d)))
            .collect();
        buffers.extend(outputs.iter_mut().map(|(t, d)| (*t, HostBuffer::output(d))));
        built.execute_host(handle, &buffers)?;
        return Ok(());
    }
    // GPU: copy the inputs over, allocate outputs and the workspace.
    let device_inputs = inputs
        .iter()
        .map(|(_, d)| cuda::DeviceBuffer::from_slice(d))
        .collect::<Result<Vec<_>, _>>()?;
    let device_outputs = outputs
        .iter()
        .map(|(t, _)| cuda::DeviceBuffer::zeroed(built.buffer_bytes(*t)?).map_err(Into::into))
        .collect::<Result<Vec<_>, Box<dyn Error>>>()?;
    let workspace = cuda::DeviceBuffer::zeroed(built.workspace_size())?;
    let bindings: Vec<DeviceBinding> = inputs
        .iter()
        .map(|(t, _)| *t)
        .zip(&device_inputs)
        .chain(outputs.iter().map(|(t, _)| *t).zip(&device_outputs))
        .map(|(t, buffer)| DeviceBinding::new(t, buffer.ptr()))
        .collect();
    for ((t, d), buffer) in inputs.iter().zip(&device_inputs) {
        if buffer.len_bytes() != built.buffer_bytes(*t)? {
            return Err(format!("input {t}: {} elements do not span the tensor", d.len()).into());
        }
    }
    // SAFETY: each device buffer spans its tensor (checked above, or
    // allocated from buffer_bytes), the workspace holds workspace_size()
    // bytes, nothing else uses them, and the default stream is used.
    unsafe {
        built.execute(
            handle,
            &bindings,
            workspace.ptr(),
            workspace.len_bytes(),
            std::ptr::null_mut(),
        )?;
    }
    cuda::Cuda::get()?.synchronize()?;
    for ((_, out), buffer) in outputs.iter_mut().zip(&device_outputs) {
        buffer.copy_to(out)?;
    }
    Ok(())
}
