//! GPU tests: each graph is built twice, for the GPU and for the CPU
//! reference, run on the same data, and the results compared. They run when
//! the library sees a GPU (cudnnfe_device_count) and otherwise skip with a
//! printed reason.
mod common;

use std::time::Instant;

use common::cuda::{Cuda, DeviceBuffer};
use common::{assert_close, data, skip};
use cudnnfe::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// None (and a printed reason) when there is no GPU to test on.
fn gpu(test: &str) -> Option<&'static Cuda> {
    let count = common::gpu_count();
    if count == 0 {
        skip(test, "no GPU (cudnnfe_device_count() == 0)");
        return None;
    }
    let cuda = Cuda::get()
        .unwrap_or_else(|e| panic!("{count} GPU(s) but no CUDA runtime for the test: {e}"));
    Some(cuda)
}

/// A graph-building function run twice: for the GPU and the CPU reference.
type Build = dyn Fn() -> Result<(Graph, Vec<Tensor>), Error>;

/// Host data of one bound tensor, in its storage type.
#[derive(Clone)]
enum Data {
    F16(Vec<u16>),
    Bf16(Vec<u16>),
    F32(Vec<f32>),
}

impl Data {
    fn zeros_like(&self) -> Data {
        match self {
            Data::F16(v) => Data::F16(vec![0; v.len()]),
            Data::Bf16(v) => Data::Bf16(vec![0; v.len()]),
            Data::F32(v) => Data::F32(vec![0.0; v.len()]),
        }
    }
    fn to_f32(&self) -> Vec<f32> {
        match self {
            Data::F16(v) => f16_vec_to_f32(v),
            Data::Bf16(v) => bf16_vec_to_f32(v),
            Data::F32(v) => v.clone(),
        }
    }
    fn bytes(&self) -> usize {
        match self {
            Data::F16(v) | Data::Bf16(v) => v.len() * 2,
            Data::F32(v) => v.len() * 4,
        }
    }
    fn host_input(&self) -> HostBuffer<'_> {
        match self {
            Data::F16(v) | Data::Bf16(v) => HostBuffer::input(v),
            Data::F32(v) => HostBuffer::input(v),
        }
    }
    fn host_output(&mut self) -> HostBuffer<'_> {
        match self {
            Data::F16(v) | Data::Bf16(v) => HostBuffer::output(v),
            Data::F32(v) => HostBuffer::output(v),
        }
    }
}

/// Runs `built` on the CPU with `inputs`, writing zeroed outputs.
fn run_cpu(
    built: &BuiltGraph,
    inputs: &[(Tensor, Data)],
    outputs: &[(Tensor, Data)],
) -> Result<Vec<Data>, Error> {
    let mut outs: Vec<Data> = outputs.iter().map(|(_, d)| d.zeros_like()).collect();
    let mut buffers: Vec<(Tensor, HostBuffer<'_>)> =
        inputs.iter().map(|(t, d)| (*t, d.host_input())).collect();
    for ((t, _), d) in outputs.iter().zip(outs.iter_mut()) {
        buffers.push((*t, d.host_output()));
    }
    built.execute_host(&mut Handle::new()?, &buffers)?;
    drop(buffers);
    Ok(outs)
}

fn upload(d: &Data) -> Result<DeviceBuffer, String> {
    match d {
        Data::F16(v) | Data::Bf16(v) => DeviceBuffer::from_slice(v),
        Data::F32(v) => DeviceBuffer::from_slice(v),
    }
}

fn download(buffer: &DeviceBuffer, like: &Data) -> Result<Data, String> {
    Ok(match like {
        Data::F16(_) => Data::F16(buffer.to_vec()?),
        Data::Bf16(_) => Data::Bf16(buffer.to_vec()?),
        Data::F32(_) => Data::F32(buffer.to_vec()?),
    })
}

/// Device buffers of one run: inputs uploaded, outputs zeroed, workspace.
struct DeviceRun {
    inputs: Vec<DeviceBuffer>,
    outputs: Vec<DeviceBuffer>,
    workspace: DeviceBuffer,
    bindings: Vec<DeviceBinding>,
}

impl DeviceRun {
    fn new(
        built: &BuiltGraph,
        inputs: &[(Tensor, Data)],
        outputs: &[(Tensor, Data)],
    ) -> Result<DeviceRun, Box<dyn std::error::Error>> {
        let dev_in: Vec<DeviceBuffer> = inputs
            .iter()
            .map(|(_, d)| upload(d))
            .collect::<Result<_, _>>()?;
        let dev_out: Vec<DeviceBuffer> = outputs
            .iter()
            .map(|(t, _)| DeviceBuffer::zeroed(built.buffer_bytes(*t).unwrap()))
            .collect::<Result<_, _>>()?;
        for (t, d) in inputs {
            assert_eq!(d.bytes(), built.buffer_bytes(*t)?, "input size of {t}");
        }
        let workspace = DeviceBuffer::zeroed(built.workspace_size())?;
        let bindings = inputs
            .iter()
            .zip(&dev_in)
            .chain(outputs.iter().zip(&dev_out))
            .map(|((t, _), b)| DeviceBinding::new(*t, b.ptr()))
            .collect();
        Ok(DeviceRun {
            inputs: dev_in,
            outputs: dev_out,
            workspace,
            bindings,
        })
    }

    fn execute(&self, built: &BuiltGraph, handle: &mut Handle) -> Result<(), Error> {
        // SAFETY: every buffer spans its tensor (checked against
        // buffer_bytes), the workspace holds workspace_size() bytes, and
        // this run's buffers are used by no one else; default stream.
        unsafe {
            built.execute(
                handle,
                &self.bindings,
                self.workspace.ptr(),
                self.workspace.len_bytes(),
                std::ptr::null_mut(),
            )
        }
    }

    fn results(&self, outputs: &[(Tensor, Data)]) -> Result<Vec<Data>, String> {
        Cuda::get()?.synchronize()?;
        self.outputs
            .iter()
            .zip(outputs)
            .map(|(b, (_, like))| download(b, like))
            .collect()
    }
}

/// What [`gpu_and_cpu`] gives back.
struct Compared {
    gpu: Vec<Data>,
    cpu: Vec<Data>,
    plan: BuiltGraph,
    tensors: Vec<Tensor>,
}

/// Builds `build` for the GPU and the CPU reference, runs both on `inputs`
/// and returns both outputs with the GPU plan.
fn gpu_and_cpu(
    build: &Build,
    inputs: impl Fn(&[Tensor]) -> Vec<(Tensor, Data)>,
    outputs: impl Fn(&[Tensor]) -> Vec<(Tensor, Data)>,
) -> Result<Compared, Box<dyn std::error::Error>> {
    let (g, tensors) = build()?;
    let mut handle = Handle::for_device(0)?;
    let gpu_plan = g.build_with_handle(&mut handle, &BuildOptions::gpu())?;
    assert_eq!(gpu_plan.target(), Target::Gpu);
    let (g, tensors_cpu) = build()?;
    assert_eq!(tensors, tensors_cpu);
    let cpu_plan = g.build(&BuildOptions::cpu_reference())?;
    let (ins, outs) = (inputs(&tensors), outputs(&tensors));

    let run = DeviceRun::new(&gpu_plan, &ins, &outs)?;
    run.execute(&gpu_plan, &mut handle)?;
    let gpu_out = run.results(&outs)?;
    let cpu_out = run_cpu(&cpu_plan, &ins, &outs)?;
    Ok(Compared {
        gpu: gpu_out,
        cpu: cpu_out,
        plan: gpu_plan,
        tensors,
    })
}

/// For ops the C ABI lets a backend refuse (`NOT_SUPPORTED`: no cuDNN
/// engine or lowering for this GPU and cuDNN): `None`, with the library's
/// message printed as the skip reason. Any other error stays an error.
fn supported_or_skip(
    test: &str,
    result: Result<Compared, Box<dyn std::error::Error>>,
) -> Result<Option<Compared>, Box<dyn std::error::Error>> {
    match result {
        Err(e)
            if e.downcast_ref::<Error>()
                .is_some_and(|e| e.kind == ErrorKind::NotSupported) =>
        {
            skip(test, &format!("the GPU build is not supported here: {e}"));
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// Mean wall time of one execute (after warm-up), synchronised.
fn time_execute(
    built: &BuiltGraph,
    run: &DeviceRun,
    handle: &mut Handle,
    iterations: u32,
) -> Result<f64, Box<dyn std::error::Error>> {
    for _ in 0..3 {
        run.execute(built, handle)?;
    }
    Cuda::get()?.synchronize()?;
    let start = Instant::now();
    for _ in 0..iterations {
        run.execute(built, handle)?;
    }
    Cuda::get()?.synchronize()?;
    Ok(start.elapsed().as_secs_f64() * 1e6 / iterations as f64)
}

/// Prints a measurement past the harness's output capture.
fn note(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("NOTE {text}\n").as_bytes());
}

// --------------------------------------------------------------- tests

#[test]
fn gpu_library_information() -> TestResult {
    let Some(cuda) = gpu("gpu_library_information") else {
        return Ok(());
    };
    let version = cudnn_version()?;
    assert!(version >= 90000, "cuDNN {version}");
    note(&format!(
        "{} GPU(s), cuDNN {version}, test CUDA runtime {}",
        common::gpu_count(),
        cuda.library
    ));
    // Target::Auto picks the GPU when there is one.
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::Half, &[1, 64, 64])?;
    let w = g.input("w", DataType::Half, &[1, 64, 64])?;
    let y = g.matmul(
        x,
        w,
        &MatmulOptions::default().compute_dtype(DataType::Float),
    )?;
    g.set_output(y, true)?;
    let built = g.build(&BuildOptions::default())?;
    assert_eq!(built.target(), Target::Gpu);
    assert!(!built.plan_name().is_empty());
    // Host slices are refused for a GPU plan, in Rust, before any call.
    let mut out = vec![0u16; 64 * 64];
    let err = built
        .execute_host(
            &mut Handle::new()?,
            &[
                (x, HostBuffer::input(&[0u16; 4096])),
                (w, HostBuffer::input(&[0u16; 4096])),
                (y, HostBuffer::output(&mut out)),
            ],
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument);
    assert!(err.message.contains("Target::CpuReference"), "{err}");
    Ok(())
}

fn matmul_bias_graph(batch: i64, m: i64, k: i64, n: i64) -> Result<(Graph, Vec<Tensor>), Error> {
    let mut g = Graph::named("matmul_bias")?;
    g.set_io_dtype(DataType::Half)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    let a = g.input("a", DataType::Half, &[batch, m, k])?;
    let b = g.input("b", DataType::Half, &[batch, k, n])?;
    let bias = g.input("bias", DataType::Half, &[1, 1, n])?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    let y = g.pointwise(
        PointwiseMode::Add,
        &[c, bias],
        &PointwiseOptions::default().name("bias"),
    )?;
    g.set_output(y, true)?;
    Ok((g, vec![a, b, bias, y]))
}

#[test]
fn gpu_matmul_bias_matches_cpu_reference() -> TestResult {
    if gpu("gpu_matmul_bias_matches_cpu_reference").is_none() {
        return Ok(());
    }
    let (batch, m, k, n) = (4i64, 128i64, 256i64, 64i64);
    let build = move || matmul_bias_graph(batch, m, k, n);
    let inputs = |t: &[Tensor]| {
        vec![
            (
                t[0],
                Data::F16(f16_vec_from_f32(&data((batch * m * k) as usize, 1))),
            ),
            (
                t[1],
                Data::F16(f16_vec_from_f32(&data((batch * k * n) as usize, 2))),
            ),
            (t[2], Data::F16(f16_vec_from_f32(&data(n as usize, 3)))),
        ]
    };
    let outputs = |t: &[Tensor]| vec![(t[3], Data::F16(vec![0; (batch * m * n) as usize]))];
    let Compared {
        gpu,
        cpu,
        plan,
        tensors,
    } = gpu_and_cpu(&build, inputs, outputs)?;
    assert_close(&gpu[0].to_f32(), &cpu[0].to_f32(), 2e-2, 1e-2);

    // Timing, for the record.
    let run = DeviceRun::new(&plan, &inputs(&tensors), &outputs(&tensors))?;
    let micros = time_execute(&plan, &run, &mut Handle::for_device(0)?, 200)?;
    note(&format!(
        "matmul+bias {batch}x{m}x{k}x{n} fp16: plan {}, workspace {} B, {micros:.1} us/execute",
        plan.plan_name(),
        plan.workspace_size()
    ));
    Ok(())
}

fn sdpa_graph(
    dtype: DataType,
    b: i64,
    h: i64,
    s: i64,
    d: i64,
) -> Result<(Graph, Vec<Tensor>), Error> {
    let mut g = Graph::named("causal_sdpa")?;
    g.set_io_dtype(dtype)?
        .set_intermediate_dtype(DataType::Float)?
        .set_compute_dtype(DataType::Float)?;
    let q = g.input("q", dtype, &[b, h, s, d])?;
    let k = g.input("k", dtype, &[b, h, s, d])?;
    let v = g.input("v", dtype, &[b, h, s, d])?;
    let out = g.sdpa(
        q,
        k,
        v,
        &SdpaOptions::default()
            .name("attn")
            .causal_mask(true)
            .generate_stats(true),
    )?;
    let stats = out.stats.unwrap();
    g.set_output(out.o, true)?.set_output(stats, true)?;
    Ok((g, vec![q, k, v, out.o, stats]))
}

fn gpu_sdpa(dtype: DataType, test: &str) -> TestResult {
    if gpu(test).is_none() {
        return Ok(());
    }
    let bf16 = dtype == DataType::BFloat16;
    let (b, h, s, d) = (2i64, 4i64, 256i64, 64i64);
    let to_bits = move |v: &[f32]| {
        if bf16 {
            Data::Bf16(bf16_vec_from_f32(v))
        } else {
            Data::F16(f16_vec_from_f32(v))
        }
    };
    let build = move || sdpa_graph(dtype, b, h, s, d);
    let len = (b * h * s * d) as usize;
    let inputs = |t: &[Tensor]| {
        vec![
            (t[0], to_bits(&data(len, 11))),
            (t[1], to_bits(&data(len, 12))),
            (t[2], to_bits(&data(len, 13))),
        ]
    };
    let outputs = move |t: &[Tensor]| {
        let o = if bf16 {
            Data::Bf16(vec![0; len])
        } else {
            Data::F16(vec![0; len])
        };
        vec![
            (t[3], o),
            (t[4], Data::F32(vec![0.0; (b * h * s) as usize])),
        ]
    };
    let Compared {
        gpu,
        cpu,
        plan,
        tensors,
    } = gpu_and_cpu(&build, inputs, outputs)?;
    let tol = if bf16 { 2e-2 } else { 5e-3 };
    assert_close(&gpu[0].to_f32(), &cpu[0].to_f32(), tol, tol);
    assert_close(&gpu[1].to_f32(), &cpu[1].to_f32(), 1e-2, 1e-3);
    let run = DeviceRun::new(&plan, &inputs(&tensors), &outputs(&tensors))?;
    let micros = time_execute(&plan, &run, &mut Handle::for_device(0)?, 100)?;
    note(&format!(
        "causal SDPA b{b} h{h} s{s} d{d} {dtype}: plan {}, workspace {} B, {micros:.1} us/execute",
        plan.plan_name(),
        plan.workspace_size()
    ));
    Ok(())
}

#[test]
fn gpu_causal_sdpa_fp16_matches_cpu_reference() -> TestResult {
    gpu_sdpa(DataType::Half, "gpu_causal_sdpa_fp16_matches_cpu_reference")
}

#[test]
fn gpu_causal_sdpa_bf16_matches_cpu_reference() -> TestResult {
    gpu_sdpa(
        DataType::BFloat16,
        "gpu_causal_sdpa_bf16_matches_cpu_reference",
    )
}

#[test]
fn gpu_conv_fprop_nhwc_matches_cpu_reference() -> TestResult {
    if gpu("gpu_conv_fprop_nhwc_matches_cpu_reference").is_none() {
        return Ok(());
    }
    let (n, c, h, w, k) = (2i64, 32i64, 16i64, 16i64, 64i64);
    let build = move || -> Result<(Graph, Vec<Tensor>), Error> {
        let mut g = Graph::named("conv")?;
        g.set_io_dtype(DataType::Half)?
            .set_intermediate_dtype(DataType::Float)?
            .set_compute_dtype(DataType::Float)?;
        let x = g.add_tensor(&TensorDesc::new([n, c, h, w]).name("x").strides([
            h * w * c,
            1,
            w * c,
            c,
        ]))?;
        let wt =
            g.add_tensor(
                &TensorDesc::new([k, c, 3, 3])
                    .name("w")
                    .strides([9 * c, 1, 3 * c, c]),
            )?;
        let y = g.conv_fprop(x, wt, &ConvOptions::default().padding([1, 1]).name("conv"))?;
        g.set_output(y, true)?;
        Ok((g, vec![x, wt, y]))
    };
    let inputs = |t: &[Tensor]| {
        vec![
            (
                t[0],
                Data::F16(f16_vec_from_f32(&data((n * c * h * w) as usize, 21))),
            ),
            (
                t[1],
                Data::F16(f16_vec_from_f32(&data((k * c * 9) as usize, 22))),
            ),
        ]
    };
    let outputs = |t: &[Tensor]| vec![(t[2], Data::F16(vec![0; (n * k * h * w) as usize]))];
    let Compared { gpu, cpu, plan, .. } = gpu_and_cpu(&build, inputs, outputs)?;
    assert_close(&gpu[0].to_f32(), &cpu[0].to_f32(), 3e-2, 1e-2);
    note(&format!(
        "conv fprop NHWC fp16: plan {}, workspace {} B",
        plan.plan_name(),
        plan.workspace_size()
    ));
    Ok(())
}

#[test]
fn gpu_execute_from_many_threads_and_ordered() -> TestResult {
    if gpu("gpu_execute_from_many_threads_and_ordered").is_none() {
        return Ok(());
    }
    let (batch, m, k, n) = (2i64, 64i64, 64i64, 64i64);
    let (g, t) = matmul_bias_graph(batch, m, k, n)?;
    let built = g.build(&BuildOptions::gpu())?;
    let inputs = vec![
        (
            t[0],
            Data::F16(f16_vec_from_f32(&data((batch * m * k) as usize, 31))),
        ),
        (
            t[1],
            Data::F16(f16_vec_from_f32(&data((batch * k * n) as usize, 32))),
        ),
        (t[2], Data::F16(f16_vec_from_f32(&data(n as usize, 33)))),
    ];
    let outputs = vec![(t[3], Data::F16(vec![0; (batch * m * n) as usize]))];
    let (g, _) = matmul_bias_graph(batch, m, k, n)?;
    let expected =
        run_cpu(&g.build(&BuildOptions::cpu_reference())?, &inputs, &outputs)?[0].to_f32();

    // execute_ordered: pointers in bound_tensors() order (a, b, bias, y).
    let run = DeviceRun::new(&built, &inputs, &outputs)?;
    assert_eq!(built.bound_tensors(), &t[..]);
    let ptrs: Vec<_> = run
        .inputs
        .iter()
        .chain(&run.outputs)
        .map(|b| b.ptr())
        .collect();
    let mut handle = Handle::for_device(0)?;
    // SAFETY: as DeviceRun::execute, in bound order.
    unsafe {
        built.execute_ordered(
            &mut handle,
            &ptrs,
            run.workspace.ptr(),
            run.workspace.len_bytes(),
            std::ptr::null_mut(),
        )?
    };
    assert_close(&run.results(&outputs)?[0].to_f32(), &expected, 2e-2, 1e-2);

    // Eight threads, each with its own handle, workspace and buffers.
    std::thread::scope(|scope| -> TestResult {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (built, inputs, outputs, expected) = (&built, &inputs, &outputs, &expected);
                scope.spawn(move || -> Result<(), String> {
                    let mut handle = Handle::for_device(0).map_err(|e| e.to_string())?;
                    let run = DeviceRun::new(built, inputs, outputs).map_err(|e| e.to_string())?;
                    for _ in 0..20 {
                        run.execute(built, &mut handle).map_err(|e| e.to_string())?;
                    }
                    assert_close(&run.results(outputs)?[0].to_f32(), expected, 2e-2, 1e-2);
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap()?;
        }
        Ok(())
    })?;

    // A workspace that is too small is refused with the library's message.
    if built.workspace_size() > 0 {
        // SAFETY: refused before use.
        let err = unsafe {
            built.execute(
                &mut handle,
                &run.bindings,
                run.workspace.ptr(),
                built.workspace_size() - 1,
                std::ptr::null_mut(),
            )
        }
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArgument);
        assert!(err.message.contains("workspace"), "{err}");
    }
    Ok(())
}

#[test]
fn gpu_layernorm_and_rmsnorm_match_cpu_reference() -> TestResult {
    if gpu("gpu_layernorm_and_rmsnorm_match_cpu_reference").is_none() {
        return Ok(());
    }
    let (tokens, hidden) = (256i64, 1024i64);
    for rms in [false, true] {
        let build = move || -> Result<(Graph, Vec<Tensor>), Error> {
            let mut g = Graph::named(if rms { "rmsnorm" } else { "layernorm" })?;
            g.set_io_dtype(DataType::Half)?
                .set_intermediate_dtype(DataType::Float)?
                .set_compute_dtype(DataType::Float)?;
            let x = g.input("x", DataType::Half, &[tokens, hidden, 1, 1])?;
            let scale = g.input("scale", DataType::Float, &[1, hidden, 1, 1])?;
            let bias = g.input("bias", DataType::Float, &[1, hidden, 1, 1])?;
            let (y, stat) = if rms {
                let out = g.rmsnorm(x, scale, Some(bias), &NormOptions::default())?;
                (out.y, out.inv_rms.unwrap())
            } else {
                let out = g.layernorm(x, scale, bias, &NormOptions::default())?;
                (out.y, out.inv_variance.unwrap())
            };
            g.set_output(y, true)?.set_output(stat, true)?;
            Ok((g, vec![x, scale, bias, y, stat]))
        };
        let inputs = |t: &[Tensor]| {
            vec![
                (
                    t[0],
                    Data::F16(f16_vec_from_f32(&data((tokens * hidden) as usize, 51))),
                ),
                (t[1], Data::F32(data(hidden as usize, 52))),
                (t[2], Data::F32(data(hidden as usize, 53))),
            ]
        };
        let outputs = |t: &[Tensor]| {
            vec![
                (t[3], Data::F16(vec![0; (tokens * hidden) as usize])),
                (t[4], Data::F32(vec![0.0; tokens as usize])),
            ]
        };
        let compared = gpu_and_cpu(&build, inputs, outputs);
        let Some(Compared { gpu, cpu, plan, .. }) =
            supported_or_skip("gpu_layernorm_and_rmsnorm_match_cpu_reference", compared)?
        else {
            continue;
        };
        assert_close(&gpu[0].to_f32(), &cpu[0].to_f32(), 1e-2, 1e-2);
        assert_close(&gpu[1].to_f32(), &cpu[1].to_f32(), 1e-4, 1e-3);
        note(&format!(
            "{} fp16 {tokens}x{hidden}: plan {}",
            if rms { "rmsnorm" } else { "layernorm" },
            plan.plan_name()
        ));
    }
    Ok(())
}

#[test]
fn gpu_sdpa_backward_matches_cpu_reference() -> TestResult {
    if gpu("gpu_sdpa_backward_matches_cpu_reference").is_none() {
        return Ok(());
    }
    let (b, h, s, d) = (1i64, 4i64, 128i64, 64i64);
    let len = (b * h * s * d) as usize;
    // Forward on the CPU reference gives o and stats for the backward.
    let (g, t) = sdpa_graph(DataType::Half, b, h, s, d)?;
    let fwd = g.build(&BuildOptions::cpu_reference())?;
    let (q_d, k_d, v_d) = (
        f16_vec_from_f32(&data(len, 61)),
        f16_vec_from_f32(&data(len, 62)),
        f16_vec_from_f32(&data(len, 63)),
    );
    let fwd_out = run_cpu(
        &fwd,
        &[
            (t[0], Data::F16(q_d.clone())),
            (t[1], Data::F16(k_d.clone())),
            (t[2], Data::F16(v_d.clone())),
        ],
        &[
            (t[3], Data::F16(vec![0; len])),
            (t[4], Data::F32(vec![0.0; (b * h * s) as usize])),
        ],
    )?;
    let do_d = f16_vec_from_f32(&data(len, 64));

    let build = move || -> Result<(Graph, Vec<Tensor>), Error> {
        let mut g = Graph::named("causal_sdpa_backward")?;
        g.set_io_dtype(DataType::Half)?
            .set_intermediate_dtype(DataType::Float)?
            .set_compute_dtype(DataType::Float)?;
        let dims = [b, h, s, d];
        let q = g.input("q", DataType::Half, &dims)?;
        let k = g.input("k", DataType::Half, &dims)?;
        let v = g.input("v", DataType::Half, &dims)?;
        let o = g.input("o", DataType::Half, &dims)?;
        let d_o = g.input("d_o", DataType::Half, &dims)?;
        let stats = g.input("stats", DataType::Float, &[b, h, s, 1])?;
        let grads = g.sdpa_backward(
            q,
            k,
            v,
            o,
            d_o,
            stats,
            &SdpaBackwardOptions::default().causal_mask(true),
        )?;
        g.set_output(grads.dq, true)?
            .set_output(grads.dk, true)?
            .set_output(grads.dv, true)?;
        Ok((
            g,
            vec![q, k, v, o, d_o, stats, grads.dq, grads.dk, grads.dv],
        ))
    };
    let inputs = |t: &[Tensor]| {
        vec![
            (t[0], Data::F16(q_d.clone())),
            (t[1], Data::F16(k_d.clone())),
            (t[2], Data::F16(v_d.clone())),
            (t[3], fwd_out[0].clone()),
            (t[4], Data::F16(do_d.clone())),
            (t[5], fwd_out[1].clone()),
        ]
    };
    let outputs = |t: &[Tensor]| (6..9).map(|i| (t[i], Data::F16(vec![0; len]))).collect();
    let compared = gpu_and_cpu(&build, inputs, outputs);
    let Some(Compared { gpu, cpu, plan, .. }) =
        supported_or_skip("gpu_sdpa_backward_matches_cpu_reference", compared)?
    else {
        return Ok(());
    };
    for (g, c) in gpu.iter().zip(&cpu) {
        assert_close(&g.to_f32(), &c.to_f32(), 2e-2, 2e-2);
    }
    note(&format!(
        "causal SDPA backward b{b} h{h} s{s} d{d} fp16: plan {}, workspace {} B",
        plan.plan_name(),
        plan.workspace_size()
    ));
    Ok(())
}
