//! Bad input surfaces as `Err` with the library's message, never as a panic:
//! one or more cases for each error kind the safe API can meet.
mod common;

use cudnnfe::*;

type TestResult = Result<(), Error>;

/// Asserts `result` failed with `kind` and a message containing every part.
#[track_caller]
fn expect_err<T: std::fmt::Debug>(
    result: Result<T, Error>,
    kind: ErrorKind,
    parts: &[&str],
) -> Error {
    let err = common::expect_err(result, kind, parts);
    // Display shows the status name and the message.
    let shown = err.to_string();
    assert!(
        shown.starts_with(kind.name()) && shown.ends_with(&err.message),
        "{shown}"
    );
    err
}

fn two_inputs() -> Result<(Graph, Tensor, Tensor), Error> {
    let mut g = Graph::named("bad")?;
    let a = g.input("a", DataType::Float, &[4, 8])?;
    let b = g.input("b", DataType::Float, &[8, 5])?;
    Ok((g, a, b))
}

/// a @ b -> c (output), built for the CPU reference.
fn built_matmul() -> Result<(BuiltGraph, Tensor, Tensor, Tensor), Error> {
    let (mut g, a, b) = two_inputs()?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(c, true)?;
    Ok((g.build(&BuildOptions::cpu_reference())?, a, b, c))
}

// ------------------------------------------------------ InvalidArgument

#[test]
fn invalid_argument_from_graph_calls() -> TestResult {
    let (mut g, a, b) = two_inputs()?;
    expect_err(
        g.input("a", DataType::Float, &[1]),
        ErrorKind::InvalidArgument,
        &["\"a\" already exists"],
    );
    expect_err(
        g.input("z", DataType::Float, &[]),
        ErrorKind::InvalidArgument,
        &["ndims is 0"],
    );
    expect_err(
        g.input("z", DataType::Float, &[1; 9]),
        ErrorKind::InvalidArgument,
        &["ndims is 9"],
    );
    expect_err(
        g.input("z", DataType::Float, &[2, 0]),
        ErrorKind::InvalidArgument,
        &["dims must be positive"],
    );
    expect_err(
        g.input("z", DataType::Other(77), &[2]),
        ErrorKind::InvalidArgument,
        &["unknown data type 77"],
    );
    expect_err(
        g.scalar("s", DataType::NotSet, 1.0),
        ErrorKind::InvalidArgument,
        &["concrete type"],
    );
    let ghost = Tensor::from_uid(4242);
    expect_err(
        g.matmul(a, ghost, &MatmulOptions::default()),
        ErrorKind::InvalidArgument,
        &["4242"],
    );
    expect_err(
        g.dims(ghost),
        ErrorKind::InvalidArgument,
        &["no tensor has UID 4242"],
    );
    expect_err(
        g.find_tensor("nope"),
        ErrorKind::InvalidArgument,
        &["no tensor named \"nope\""],
    );
    // An input stays one: marking it an output does nothing (an op may take
    // it as its output later); making it virtual is refused.
    g.set_output(a, true)?;
    assert!(g.is_bound(a)?);
    expect_err(
        g.set_output(a, false),
        ErrorKind::InvalidArgument,
        &["\"a\"", "is a graph input, which cannot be made virtual"],
    );
    expect_err(g.set_uid(a, 0), ErrorKind::InvalidArgument, &["UID 0"]);
    expect_err(
        g.set_uid(a, b.uid()),
        ErrorKind::InvalidArgument,
        &["already used"],
    );
    expect_err(
        g.set_tensor_name(a, "b"),
        ErrorKind::InvalidArgument,
        &["already used"],
    );
    expect_err(
        g.set_strides(a, &[1]),
        ErrorKind::InvalidArgument,
        &["1 strides for a tensor of 2 dims"],
    );
    expect_err(
        g.set_io_dtype(DataType::Other(-3)),
        ErrorKind::InvalidArgument,
        &["unknown data type -3"],
    );
    expect_err(
        g.pointwise(
            PointwiseMode::Other(999),
            &[a],
            &PointwiseOptions::default(),
        ),
        ErrorKind::InvalidArgument,
        &["unknown pointwise mode 999"],
    );
    expect_err(
        g.reduction(ReductionMode::Other(0), a, &ReductionOptions::default()),
        ErrorKind::InvalidArgument,
        &["unknown reduction mode 0"],
    );
    expect_err(
        g.conv_fprop(a, b, &ConvOptions::default().spatial_dims(7)),
        ErrorKind::InvalidArgument,
        &["spatial_dims is 7"],
    );
    expect_err(
        g.matmul(
            a,
            b,
            &MatmulOptions::default().compute_dtype(DataType::Other(55)),
        ),
        ErrorKind::InvalidArgument,
        &["unknown compute data type 55"],
    );
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    expect_err(
        g.matmul(a, b, &MatmulOptions::default().name("mm")),
        ErrorKind::InvalidArgument,
        &["already exists"],
    );
    // The graph's own message is the last failure's.
    assert!(
        g.last_error().contains("already exists"),
        "{}",
        g.last_error()
    );
    // A failed call left the graph as it was.
    assert_eq!(g.tensor_count()?, 3);
    assert_eq!(g.tensors()?, [a, b, c]);
    Ok(())
}

#[test]
fn invalid_argument_checked_in_rust() -> TestResult {
    let (mut g, a, _) = two_inputs()?;
    expect_err(
        g.input("nul\0name", DataType::Float, &[1]),
        ErrorKind::InvalidArgument,
        &["NUL byte at position 3"],
    );
    expect_err(g.set_name("x\0"), ErrorKind::InvalidArgument, &["NUL byte"]);
    expect_err(
        g.find_tensor("a\0b"),
        ErrorKind::InvalidArgument,
        &["NUL byte"],
    );
    expect_err(
        g.add_tensor(&TensorDesc::new([2, 3]).strides([1])),
        ErrorKind::InvalidArgument,
        &["1 strides for 2 dims"],
    );
    expect_err(
        g.pointwise(
            PointwiseMode::Add,
            &[a, a, a, a],
            &PointwiseOptions::default(),
        ),
        ErrorKind::InvalidArgument,
        &["at most 3"],
    );
    expect_err(
        g.matmul(a, a, &MatmulOptions::default().name("bad\0")),
        ErrorKind::InvalidArgument,
        &["node name"],
    );
    expect_err(
        Graph::new()?.build(&BuildOptions::default().heur_modes([HeurMode::A; 5])),
        ErrorKind::InvalidArgument,
        &["5 heuristic modes"],
    );
    Ok(())
}

#[test]
fn invalid_argument_from_build_options() -> TestResult {
    let (mut g, a, b) = two_inputs()?;
    let c = g.matmul(a, b, &MatmulOptions::default())?;
    g.set_output(c, true)?;
    let e = g
        .try_build(None, &BuildOptions::cpu_reference().heur_modes([]))
        .unwrap_err();
    assert_eq!(e.error.kind, ErrorKind::InvalidArgument);
    assert!(
        e.error.message.contains("num_heur_modes is 0"),
        "{}",
        e.error
    );
    let g = e.graph.unwrap();
    let e = g
        .try_build(
            None,
            &BuildOptions::cpu_reference().heur_modes([HeurMode::Other(9)]),
        )
        .unwrap_err();
    assert!(
        e.error.message.contains("heur_modes[0] is 9"),
        "{}",
        e.error
    );
    let g = e.graph.unwrap();
    expect_err(
        g.build(&BuildOptions::default().target(Target::Other(7))),
        ErrorKind::InvalidArgument,
        &["unknown target 7"],
    );
    Ok(())
}

#[test]
fn invalid_argument_from_handles() {
    expect_err(
        Handle::for_device(-2),
        ErrorKind::InvalidArgument,
        &["device -2"],
    );
}

#[test]
fn invalid_argument_at_execute() -> TestResult {
    let (built, a, b, c) = built_matmul()?;
    let (a_d, b_d) = (vec![0f32; 32], vec![0f32; 40]);
    let mut c_d = vec![0f32; 20];
    let mut handle = Handle::new()?;

    // Checked by the library, message read from the handle.
    let err = expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_d)),
                (c, HostBuffer::output(&mut c_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["\"b\"", "has no binding"],
    );
    assert_eq!(handle.last_error(), err.message);
    expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_d)),
                (a, HostBuffer::input(&a_d)),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::output(&mut c_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["bound twice"],
    );
    expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_d)),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::output(&mut c_d)),
                (Tensor::from_uid(999), HostBuffer::input(&a_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["999"],
    );
    // Raw execution: pointer count and NULL pointers.
    let ptrs = [a_d.as_ptr() as *mut _, b_d.as_ptr() as *mut _];
    // SAFETY: refused before any pointer is used.
    let result = unsafe {
        built.execute_ordered(
            &mut handle,
            &ptrs,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )
    };
    expect_err(
        result,
        ErrorKind::InvalidArgument,
        &["2 pointers given for 3 bound tensors"],
    );
    let nulls = [std::ptr::null_mut(); 3];
    // SAFETY: refused before any pointer is used.
    let result = unsafe {
        built.execute_ordered(
            &mut handle,
            &nulls,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )
    };
    expect_err(result, ErrorKind::InvalidArgument, &["is NULL"]);
    let bindings = [DeviceBinding::new(a, std::ptr::null_mut())];
    // SAFETY: refused before any pointer is used.
    let result = unsafe {
        built.execute(
            &mut handle,
            &bindings,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )
    };
    expect_err(result, ErrorKind::InvalidArgument, &["NULL buffer"]);

    // Checked in Rust before the call: sizes, element types, directions.
    expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_d[..31])),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::output(&mut c_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["tensor \"a\"", "128 bytes", "124 bytes"],
    );
    let a_half = vec![0u16; 32];
    expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_half)),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::output(&mut c_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["is FLOAT but the buffer holds u16"],
    );
    expect_err(
        built.execute_host(
            &mut handle,
            &[
                (a, HostBuffer::input(&a_d)),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::input(&c_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["written by the graph", "HostBuffer::output"],
    );
    expect_err(
        built.buffer_len(Tensor::from_uid(999)),
        ErrorKind::InvalidArgument,
        &["999"],
    );

    // Nothing was written by the refused calls; a good call still works.
    assert!(c_d.iter().all(|&v| v == 0.0));
    built.execute_host(
        &mut handle,
        &[
            (a, HostBuffer::input(&a_d)),
            (b, HostBuffer::input(&b_d)),
            (c, HostBuffer::output(&mut c_d)),
        ],
    )?;
    Ok(())
}

/// The checks of device buffers (feature `cudarc`'s, and
/// `check_device_buffer`'s for raw pointers), on host values: no GPU needed.
#[test]
fn device_buffer_checks_name_the_tensor_and_the_rule() -> TestResult {
    let mut g = Graph::named("device_checks")?;
    let x = g.input("x", DataType::BFloat16, &[4, 8])?;
    let w = g.add_tensor(&TensorDesc::new([8, 3]).name("w").dtype(DataType::Half))?;
    let xh = g.unary(PointwiseMode::Identity, x)?;
    let y = g.matmul(xh, w, &MatmulOptions::default().name("mm"))?;
    g.set_output(y, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    let y_type = built.dtype(y)?;

    built.check_device_buffer::<u16>(x, 32, false)?;
    built.check_device_buffer::<u16>(x, 4096, false)?; // longer is fine on the device
    built.check_device_buffer::<u16>(w, 24, true)?; // an input may be writable
    expect_err(
        built.check_device_buffer::<f32>(x, 32, false),
        ErrorKind::InvalidArgument,
        &[
            "tensor \"x\"",
            "is BFLOAT16 but the buffer holds f32",
            "u16 bit patterns",
        ],
    );
    expect_err(
        built.check_device_buffer::<u16>(w, 23, false),
        ErrorKind::InvalidArgument,
        &[
            "device buffer: tensor \"w\"",
            "[8, 3]",
            "spans 24 elements (48 bytes)",
            "46 bytes (23 x u16)",
            "needs at least 24 elements",
        ],
    );
    let y_len = built.buffer_len(y)?;
    let err = if y_type == DataType::Float {
        built.check_device_buffer::<f32>(y, y_len, false)
    } else {
        built.check_device_buffer::<u16>(y, y_len, false)
    };
    expect_err(
        err,
        ErrorKind::InvalidArgument,
        &["written by the graph", "CudaBuffer::output"],
    );
    // A virtual tensor takes no buffer at all.
    expect_err(
        built.check_device_buffer::<u16>(xh, 32, false),
        ErrorKind::InvalidArgument,
        &["takes no buffer", "virtual"],
    );
    Ok(())
}

#[test]
fn virtual_tensors_take_no_buffer() -> TestResult {
    let (mut g, a, b) = two_inputs()?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    let d = g.unary(PointwiseMode::Abs, c)?;
    g.set_output(d, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    let (a_d, b_d, mut c_d, mut d_d) = (
        vec![0f32; 32],
        vec![0f32; 40],
        vec![0f32; 20],
        vec![0f32; 20],
    );
    expect_err(
        built.execute_host(
            &mut Handle::new()?,
            &[
                (a, HostBuffer::input(&a_d)),
                (b, HostBuffer::input(&b_d)),
                (c, HostBuffer::output(&mut c_d)),
                (d, HostBuffer::output(&mut d_d)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["\"mm::c\"", "virtual"],
    );
    Ok(())
}

// --------------------------------------------------------- InvalidGraph

#[test]
fn invalid_graph_names_node_tensor_and_rule() -> TestResult {
    let (mut g, a, _) = two_inputs()?;
    let wrong = g.input("wrong", DataType::Float, &[6, 5])?;
    expect_err(
        g.matmul(a, wrong, &MatmulOptions::default().name("mm")),
        ErrorKind::InvalidGraph,
        &["matmul \"mm\"", "\"a\"", "\"wrong\"", "K = 8", "K = 6"],
    );
    let k3 = g.input("k3", DataType::Float, &[2, 1024, 64])?;
    let q = g.input("q", DataType::Float, &[2, 1, 1024, 64])?;
    expect_err(
        g.sdpa(q, k3, q, &SdpaOptions::default().name("attn")),
        ErrorKind::InvalidGraph,
        &["sdpa \"attn\"", "k", "[b,h_kv,s_kv,d]"],
    );
    expect_err(
        g.sdpa(
            q,
            q,
            q,
            &SdpaOptions::default()
                .causal_mask(true)
                .causal_mask_bottom_right(true),
        ),
        ErrorKind::InvalidGraph,
        &["exclusive"],
    );
    let x3 = g.input("x3", DataType::Float, &[2, 3, 4])?;
    expect_err(
        g.binary(PointwiseMode::Add, a, x3),
        ErrorKind::InvalidGraph,
        &["equal ranks"],
    );
    expect_err(
        g.reduction(
            ReductionMode::Add,
            a,
            &ReductionOptions::default().reduce_axis(40),
        ),
        ErrorKind::InvalidGraph,
        &["axes_mask"],
    );
    expect_err(
        g.pointwise(PointwiseMode::Add, &[a], &PointwiseOptions::default()),
        ErrorKind::InvalidGraph,
        &["in1", "missing"],
    );

    // Whole-graph rules, at validate and at build.
    expect_err(
        Graph::named("empty")?.validate(),
        ErrorKind::InvalidGraph,
        &["\"empty\" has no operations"],
    );
    let (mut g, a, b) = two_inputs()?;
    g.matmul(a, b, &MatmulOptions::default())?;
    expect_err(g.validate(), ErrorKind::InvalidGraph, &["no outputs"]);
    // An input no op reads ("b") is no refusal: it takes no buffer.
    let (mut g, a, _) = two_inputs()?;
    let y = g.unary(PointwiseMode::Abs, a)?;
    g.set_output(y, true)?;
    g.build(&BuildOptions::cpu_reference())?;
    let mut g = Graph::new()?;
    let x = g.input("x", DataType::NotSet, &[3])?;
    let y = g.unary(PointwiseMode::Abs, x)?;
    g.set_output(y, true)?;
    expect_err(
        g.validate(),
        ErrorKind::InvalidGraph,
        &["\"x\"", "no data type"],
    );
    Ok(())
}

// ------------------------------------------------------ NotSupported etc.

#[test]
fn not_supported_for_a_newer_header() {
    expect_err(
        check_version(HEADER_VERSION + 10_000, ABI_VERSION),
        ErrorKind::NotSupported,
        &["older"],
    );
    expect_err(
        check_version(HEADER_VERSION, ABI_VERSION + 1),
        ErrorKind::NotSupported,
        &["ABI"],
    );
}

#[test]
fn gpu_build_without_gpu_is_cudnn_unavailable() -> TestResult {
    if common::gpu_count() > 0 {
        common::skip(
            "gpu_build_without_gpu_is_cudnn_unavailable",
            "this machine has a GPU",
        );
        return Ok(());
    }
    let (built_cpu, ..) = built_matmul()?;
    assert_eq!(built_cpu.target(), Target::CpuReference);
    let (mut g, a, b) = two_inputs()?;
    let c = g.matmul(a, b, &MatmulOptions::default())?;
    g.set_output(c, true)?;
    let e = g.try_build(None, &BuildOptions::gpu()).unwrap_err();
    assert_eq!(e.error.kind, ErrorKind::CudnnUnavailable, "{}", e.error);
    assert!(!e.error.message.is_empty());
    // Target::Auto falls back to the CPU reference.
    let built = e.graph.unwrap().build(&BuildOptions::default())?;
    assert_eq!(built.target(), Target::CpuReference);
    Ok(())
}

#[test]
fn bad_serialized_data() -> TestResult {
    expect_err(
        Graph::from_json("not json"),
        ErrorKind::BadSerializedData,
        &[],
    );
    expect_err(
        Graph::from_bytes(&[0xff, 0x00, 0x7b]),
        ErrorKind::BadSerializedData,
        &[],
    );
    expect_err(
        Graph::from_json("{}"),
        ErrorKind::BadSerializedData,
        &["format"],
    );
    let (built, ..) = built_matmul()?;
    let json = built.to_json()?;
    expect_err(
        Graph::from_json(&json[..json.len() / 2]),
        ErrorKind::BadSerializedData,
        &[],
    );
    let newer = json
        .replacen("\"version\": 1", "\"version\": 99", 1)
        .replacen("\"version\":1", "\"version\":99", 1);
    assert_ne!(newer, json, "the document has a version field: {json}");
    expect_err(
        Graph::from_json(&newer),
        ErrorKind::BadSerializedData,
        &["version 99"],
    );
    expect_err(Graph::from_bytes(&[]), ErrorKind::BadSerializedData, &[]);
    // Random bytes never crash.
    for seed in 0..200u64 {
        let bytes: Vec<u8> = common::data(64, seed)
            .iter()
            .map(|v| (v * 127.0) as i8 as u8)
            .collect();
        assert!(Graph::from_bytes(&bytes).is_err());
    }
    Ok(())
}

#[test]
fn wrong_state_is_ruled_out_by_the_types() -> TestResult {
    // The safe API cannot execute an unbuilt graph or change a built one, so
    // WRONG_STATE only appears through the raw pointers: it still maps to
    // ErrorKind::WrongState with the library's message.
    let (mut g, a, b) = two_inputs()?;
    let c = g.matmul(a, b, &MatmulOptions::default())?;
    g.set_output(c, true)?;
    let mut size = 0i64;
    // SAFETY: a live graph and a valid out-pointer.
    let status = unsafe { sys::cudnnfe_graph_get_workspace_size(g.as_raw(), &mut size) };
    assert_eq!(ErrorKind::from_status(status), Some(ErrorKind::WrongState));
    assert!(g.last_error().contains("not built"), "{}", g.last_error());

    let built = g.build(&BuildOptions::cpu_reference())?;
    // SAFETY: a live graph.
    let status = unsafe { sys::cudnnfe_tensor_set_output(built.as_raw(), c.uid(), 0) };
    assert_eq!(ErrorKind::from_status(status), Some(ErrorKind::WrongState));
    Ok(())
}

#[test]
fn every_status_maps_to_a_kind() {
    let kinds = [
        (1, ErrorKind::InvalidArgument),
        (2, ErrorKind::InvalidGraph),
        (3, ErrorKind::NotSupported),
        (4, ErrorKind::CudnnUnavailable),
        (5, ErrorKind::CudaError),
        (6, ErrorKind::CudnnError),
        (7, ErrorKind::OutOfMemory),
        (8, ErrorKind::BadSerializedData),
        (9, ErrorKind::WrongState),
        (10, ErrorKind::Internal),
        (11, ErrorKind::VerifyFailed),
        (12, ErrorKind::Unknown(12)),
        (-1, ErrorKind::Unknown(-1)),
    ];
    assert_eq!(ErrorKind::from_status(0), None);
    for (status, kind) in kinds {
        assert_eq!(ErrorKind::from_status(status), Some(kind));
        assert_eq!(kind.status(), status);
        assert!(!kind.name().is_empty());
    }
    assert_eq!(ErrorKind::CudaError.name(), "CUDNNFE_STATUS_CUDA_ERROR");
    assert_eq!(
        ErrorKind::OutOfMemory.to_string(),
        "CUDNNFE_STATUS_OUT_OF_MEMORY"
    );
    let e = Error::new(ErrorKind::Internal, "boom");
    assert_eq!((e.kind(), e.message()), (ErrorKind::Internal, "boom"));
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert!(boxed.to_string().ends_with("boom"));
}
