//! Causal grouped-query attention (GQA), forward and backward, on device
//! buffers allocated with cudarc (feature `cudarc`), checked against the
//! library's CPU reference.
//!
//! ```text
//! cd bindings/rust
//! CUDNNFE_LIBRARY=$PWD/../../build/libcudnnfe.so.0 \
//!   cargo run --release --features cudarc --example cudarc_sdpa
//! ```
//!
//! b 2, 8 query heads sharing 2 key/value heads, 128 tokens, head dim 64, in
//! BF16 (FP32 softmax statistics). The forward's o and stats stay on the
//! device and feed the backward, as in training. The CPU reference runs the
//! same graphs on the same inputs (its backward reads the GPU's o and stats,
//! so each pass is checked on its own). Prints the largest absolute error of
//! each output and exits 1 on a mismatch; without a GPU it prints why it
//! skipped and exits 0. The GPU test `tests/cudarc_gpu.rs` runs this file.
#![allow(dead_code)] // tests/cudarc_gpu.rs includes this file for `run`

use std::error::Error as StdError;
use std::process::ExitCode;

use cudnnfe::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use cudnnfe::*;

type AnyResult<T> = Result<T, Box<dyn StdError>>;

/// Shape and type of the attention.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub b: i64,
    pub h_q: i64,
    pub h_kv: i64,
    pub s: i64,
    pub d: i64,
    /// BFloat16 or Half (inputs, o and gradients; stats are FLOAT).
    pub dtype: DataType,
}

/// What the example runs.
pub const GQA_BF16: Geometry = Geometry {
    b: 2,
    h_q: 8,
    h_kv: 2,
    s: 128,
    d: 64,
    dtype: DataType::BFloat16,
};

impl Geometry {
    fn q_dims(&self) -> [i64; 4] {
        [self.b, self.h_q, self.s, self.d]
    }
    fn kv_dims(&self) -> [i64; 4] {
        [self.b, self.h_kv, self.s, self.d]
    }
    fn q_len(&self) -> usize {
        (self.b * self.h_q * self.s * self.d) as usize
    }
    fn kv_len(&self) -> usize {
        (self.b * self.h_kv * self.s * self.d) as usize
    }
    fn stats_len(&self) -> usize {
        (self.b * self.h_q * self.s) as usize
    }
    fn bits(&self, values: &[f32]) -> Vec<u16> {
        match self.dtype {
            DataType::Half => f16_vec_from_f32(values),
            _ => bf16_vec_from_f32(values),
        }
    }
    fn values(&self, bits: &[u16]) -> Vec<f32> {
        match self.dtype {
            DataType::Half => f16_vec_to_f32(bits),
            _ => bf16_vec_to_f32(bits),
        }
    }
    /// Tolerances (atol = rtol) of the forward's o and of the gradients:
    /// one or two units in the last place of the 16-bit type at the values'
    /// size, as tests/gpu.rs uses for causal SDPA.
    fn tolerances(&self) -> (f32, f32) {
        match self.dtype {
            DataType::Half => (5e-3, 2e-2),
            _ => (2e-2, 3e-2),
        }
    }
}

/// A new graph with 16-bit I/O and FP32 intermediates and compute.
fn attention_graph(name: &str, g: &Geometry) -> Result<Graph> {
    let mut graph = Graph::named(name)?;
    graph
        .set_io_dtype(g.dtype)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    Ok(graph)
}

/// Forward: `[q, k, v, o, stats]`.
fn forward_graph(g: &Geometry) -> Result<(Graph, [Tensor; 5])> {
    let mut graph = attention_graph("cudarc_gqa_forward", g)?;
    let q = graph.input("q", g.dtype, &g.q_dims())?;
    let k = graph.input("k", g.dtype, &g.kv_dims())?;
    let v = graph.input("v", g.dtype, &g.kv_dims())?;
    let out = graph.sdpa(
        q,
        k,
        v,
        &SdpaOptions::default()
            .name("attention")
            .causal_mask(true)
            .generate_stats(true),
    )?;
    let stats = out.stats.expect("generate_stats gives stats");
    graph.set_output(out.o, true)?.set_output(stats, true)?;
    Ok((graph, [q, k, v, out.o, stats]))
}

/// Backward: `[q, k, v, o, d_o, stats, dq, dk, dv]`.
fn backward_graph(g: &Geometry) -> Result<(Graph, [Tensor; 9])> {
    let mut graph = attention_graph("cudarc_gqa_backward", g)?;
    let q = graph.input("q", g.dtype, &g.q_dims())?;
    let k = graph.input("k", g.dtype, &g.kv_dims())?;
    let v = graph.input("v", g.dtype, &g.kv_dims())?;
    let o = graph.input("o", g.dtype, &g.q_dims())?;
    let d_o = graph.input("d_o", g.dtype, &g.q_dims())?;
    let stats = graph.input("stats", DataType::Float, &[g.b, g.h_q, g.s, 1])?;
    let grads = graph.sdpa_backward(
        q,
        k,
        v,
        o,
        d_o,
        stats,
        &SdpaBackwardOptions::default()
            .name("attention_backward")
            .causal_mask(true),
    )?;
    graph
        .set_output(grads.dq, true)?
        .set_output(grads.dk, true)?
        .set_output(grads.dv, true)?;
    Ok((
        graph,
        [q, k, v, o, d_o, stats, grads.dq, grads.dk, grads.dv],
    ))
}

/// Deterministic values in [-1, 1) (xorshift).
fn data(len: usize, seed: u64) -> Vec<f32> {
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

/// One output, GPU against the CPU reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub name: &'static str,
    pub max_abs_error: f32,
    pub atol: f32,
    pub rtol: f32,
    /// Elements with |gpu - cpu| > atol + rtol * |cpu|.
    pub misses: usize,
    pub len: usize,
}

impl Comparison {
    fn new(name: &'static str, gpu: &[f32], cpu: &[f32], atol: f32, rtol: f32) -> Self {
        assert_eq!(gpu.len(), cpu.len(), "{name}: lengths differ");
        let mut max_abs_error = 0f32;
        let mut misses = 0;
        for (&a, &e) in gpu.iter().zip(cpu) {
            let err = (a - e).abs();
            // A NaN on either side is a miss.
            if err.is_nan() || err > atol + rtol * e.abs() {
                misses += 1;
            }
            max_abs_error = max_abs_error.max(if err.is_nan() { f32::INFINITY } else { err });
        }
        Comparison {
            name,
            max_abs_error,
            atol,
            rtol,
            misses,
            len: gpu.len(),
        }
    }

    pub fn passed(&self) -> bool {
        self.misses == 0
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<6} max |gpu - cpu| = {:.3e}  (tolerance {} + {} |cpu|): {}",
            self.name,
            self.max_abs_error,
            self.atol,
            self.rtol,
            if self.passed() {
                "ok".to_string()
            } else {
                format!("{} of {} elements off", self.misses, self.len)
            }
        )
    }
}

/// Host inputs of both passes.
struct Inputs {
    q: Vec<u16>,
    k: Vec<u16>,
    v: Vec<u16>,
    d_o: Vec<u16>,
}

impl Inputs {
    fn new(g: &Geometry) -> Self {
        Inputs {
            q: g.bits(&data(g.q_len(), 1)),
            k: g.bits(&data(g.kv_len(), 2)),
            v: g.bits(&data(g.kv_len(), 3)),
            d_o: g.bits(&data(g.q_len(), 4)),
        }
    }
}

/// The GPU's results, copied back.
struct GpuResults {
    o: Vec<u16>,
    stats: Vec<f32>,
    dq: Vec<u16>,
    dk: Vec<u16>,
    dv: Vec<u16>,
    plans: [String; 2],
}

/// Forward then backward on the GPU: cudarc allocations, one stream, the
/// forward's o and stats used by the backward where they are.
fn run_gpu(g: &Geometry, device: usize, x: &Inputs) -> AnyResult<GpuResults> {
    let ctx = CudaContext::new(device)?;
    let stream = ctx.new_stream()?;
    let mut handle = Handle::for_device(device as i32)?;
    let (graph, [q, k, v, o, stats]) = forward_graph(g)?;
    let forward = graph.build_with_handle(&mut handle, &BuildOptions::gpu())?;
    let (graph, [bq, bk, bv, bo, bd_o, bstats, dq, dk, dv]) = backward_graph(g)?;
    let backward = graph.build_with_handle(&mut handle, &BuildOptions::gpu())?;

    let q_dev = stream.clone_htod(&x.q)?;
    let k_dev = stream.clone_htod(&x.k)?;
    let v_dev = stream.clone_htod(&x.v)?;
    let d_o_dev = stream.clone_htod(&x.d_o)?;
    let mut o_dev: CudaSlice<u16> = stream.alloc_zeros(g.q_len())?;
    let mut stats_dev: CudaSlice<f32> = stream.alloc_zeros(g.stats_len())?;
    let mut dq_dev: CudaSlice<u16> = stream.alloc_zeros(g.q_len())?;
    let mut dk_dev: CudaSlice<u16> = stream.alloc_zeros(g.kv_len())?;
    let mut dv_dev: CudaSlice<u16> = stream.alloc_zeros(g.kv_len())?;

    let mut workspace = forward.cudarc_workspace(&stream)?;
    forward.execute_cudarc(
        &mut handle,
        &mut [
            (q, CudaBuffer::input(&q_dev)),
            (k, CudaBuffer::input(&k_dev)),
            (v, CudaBuffer::input(&v_dev)),
            (o, CudaBuffer::output(&mut o_dev)),
            (stats, CudaBuffer::output(&mut stats_dev)),
        ],
        workspace.as_mut(),
        &stream,
    )?;
    let mut workspace = backward.cudarc_workspace(&stream)?;
    backward.execute_cudarc(
        &mut handle,
        &mut [
            (bq, CudaBuffer::input(&q_dev)),
            (bk, CudaBuffer::input(&k_dev)),
            (bv, CudaBuffer::input(&v_dev)),
            (bo, CudaBuffer::input(&o_dev)),
            (bd_o, CudaBuffer::input(&d_o_dev)),
            (bstats, CudaBuffer::input(&stats_dev)),
            (dq, CudaBuffer::output(&mut dq_dev)),
            (dk, CudaBuffer::output(&mut dk_dev)),
            (dv, CudaBuffer::output(&mut dv_dev)),
        ],
        workspace.as_mut(),
        &stream,
    )?;
    Ok(GpuResults {
        o: download(&stream, &o_dev)?,
        stats: download(&stream, &stats_dev)?,
        dq: download(&stream, &dq_dev)?,
        dk: download(&stream, &dk_dev)?,
        dv: download(&stream, &dv_dev)?,
        plans: [
            forward.plan_name().to_string(),
            backward.plan_name().to_string(),
        ],
    })
}

fn download<T: cudnnfe::cudarc::driver::DeviceRepr>(
    stream: &std::sync::Arc<CudaStream>,
    buffer: &CudaSlice<T>,
) -> AnyResult<Vec<T>> {
    Ok(stream.clone_dtoh(buffer)?) // waits for the stream
}

/// Both passes on the CPU reference; the backward reads the GPU's o and
/// stats. Returns (o, stats, dq, dk, dv).
fn run_cpu(g: &Geometry, x: &Inputs, gpu: &GpuResults) -> AnyResult<[Vec<f32>; 5]> {
    let mut handle = Handle::new()?;
    let (graph, [q, k, v, o, stats]) = forward_graph(g)?;
    let forward = graph.build(&BuildOptions::cpu_reference())?;
    let mut o_cpu = vec![0u16; g.q_len()];
    let mut stats_cpu = vec![0f32; g.stats_len()];
    forward.execute_host(
        &mut handle,
        &[
            (q, HostBuffer::input(&x.q)),
            (k, HostBuffer::input(&x.k)),
            (v, HostBuffer::input(&x.v)),
            (o, HostBuffer::output(&mut o_cpu)),
            (stats, HostBuffer::output(&mut stats_cpu)),
        ],
    )?;
    let (graph, [q, k, v, o, d_o, stats, dq, dk, dv]) = backward_graph(g)?;
    let backward = graph.build(&BuildOptions::cpu_reference())?;
    let mut dq_cpu = vec![0u16; g.q_len()];
    let mut dk_cpu = vec![0u16; g.kv_len()];
    let mut dv_cpu = vec![0u16; g.kv_len()];
    backward.execute_host(
        &mut handle,
        &[
            (q, HostBuffer::input(&x.q)),
            (k, HostBuffer::input(&x.k)),
            (v, HostBuffer::input(&x.v)),
            (o, HostBuffer::input(&gpu.o)),
            (d_o, HostBuffer::input(&x.d_o)),
            (stats, HostBuffer::input(&gpu.stats)),
            (dq, HostBuffer::output(&mut dq_cpu)),
            (dk, HostBuffer::output(&mut dk_cpu)),
            (dv, HostBuffer::output(&mut dv_cpu)),
        ],
    )?;
    Ok([
        g.values(&o_cpu),
        stats_cpu,
        g.values(&dq_cpu),
        g.values(&dk_cpu),
        g.values(&dv_cpu),
    ])
}

/// Runs both passes on GPU `device` and on the CPU reference and compares
/// every output: o, stats, dq, dk, dv. Also returns the two GPU plans' names.
pub fn run(g: &Geometry, device: usize) -> AnyResult<(Vec<Comparison>, [String; 2])> {
    let inputs = Inputs::new(g);
    let gpu = run_gpu(g, device, &inputs)?;
    let [o, stats, dq, dk, dv] = run_cpu(g, &inputs, &gpu)?;
    let (tol_o, tol_grad) = g.tolerances();
    let comparisons = vec![
        Comparison::new("o", &g.values(&gpu.o), &o, tol_o, tol_o),
        Comparison::new("stats", &gpu.stats, &stats, 1e-2, 1e-3),
        Comparison::new("dq", &g.values(&gpu.dq), &dq, tol_grad, tol_grad),
        Comparison::new("dk", &g.values(&gpu.dk), &dk, tol_grad, tol_grad),
        Comparison::new("dv", &g.values(&gpu.dv), &dv, tol_grad, tol_grad),
    ];
    Ok((comparisons, gpu.plans))
}

fn main() -> ExitCode {
    let g = GQA_BF16;
    match device_count() {
        Ok(0) => {
            println!("SKIPPED cudarc_sdpa: no GPU (cudnnfe_device_count() == 0)");
            return ExitCode::SUCCESS;
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("cudarc_sdpa: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "causal GQA attention b{} h_q{} h_kv{} s{} d{} {}, forward and backward, cudarc buffers",
        g.b, g.h_q, g.h_kv, g.s, g.d, g.dtype
    );
    let (comparisons, plans) = match run(&g, 0) {
        Ok(result) => result,
        Err(e) => {
            eprintln!("cudarc_sdpa: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("plans: forward {}, backward {}", plans[0], plans[1]);
    for c in &comparisons {
        println!("  {c}");
    }
    if comparisons.iter().all(Comparison::passed) {
        println!("GPU matches the CPU reference");
        ExitCode::SUCCESS
    } else {
        println!("MISMATCH: the GPU differs from the CPU reference");
        ExitCode::FAILURE
    }
}
