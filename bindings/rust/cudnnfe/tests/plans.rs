//! Plan control on the CPU reference (no GPU needed): plan queries and
//! selection, build information, fingerprints, plan blobs (format, round
//! trip, damage, another GPU's blob with and without rebuild), build options
//! read back from the blob, GPU-only calls refused with the library's
//! message, and the plan cache counters. GPU behaviour is in plans_gpu.rs.
mod common;

use std::ptr;

use common::{assert_close, data, expect_err, matmul};
use cudnnfe::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const M: usize = 3;
const K: usize = 4;
const N: usize = 5;

/// c = a @ b (FLOAT), built with `options`.
fn matmul_graph(name: &str, n: usize, options: &BuildOptions) -> Result<(BuiltGraph, [Tensor; 3])> {
    let mut g = Graph::named(name)?;
    let a = g.input("a", DataType::Float, &[1, M as i64, K as i64])?;
    let b = g.input("b", DataType::Float, &[1, K as i64, n as i64])?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(c, true)?;
    Ok((g.build(options)?, [a, b, c]))
}

/// Runs a built matmul graph on fixed data; returns (result, plain-Rust reference).
fn run(built: &BuiltGraph, [a, b, c]: [Tensor; 3]) -> Result<(Vec<f32>, Vec<f32>)> {
    let a_data = data(M * K, 1);
    let b_data = data(K * N, 2);
    let mut out = vec![f32::NAN; M * N];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_data)),
            (b, HostBuffer::input(&b_data)),
            (c, HostBuffer::output(&mut out)),
        ],
    )?;
    Ok((out, matmul(&a_data, &b_data, 1, M, K, N)))
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 14695981039346656037;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(1099511628211);
    }
    h
}

/// A blob around `payload` with a correct header (docs/plans.md).
fn wrap(payload: &str) -> Vec<u8> {
    format!(
        "CUDNNFE-PLAN 1 {} {:016x}\n{payload}",
        payload.len(),
        fnv1a64(payload.as_bytes())
    )
    .into_bytes()
}

fn split(blob: &[u8]) -> (String, String) {
    let text = String::from_utf8(blob.to_vec()).expect("a plan blob is UTF-8");
    let (header, payload) = text.split_once('\n').expect("a header line");
    (header.to_string(), payload.to_string())
}

/// The raw JSON value of `key` inside the blob's "build_options" object
/// (one line each in the library's output).
fn stored_option(blob: &[u8], key: &str) -> String {
    let (_, payload) = split(blob);
    let at = payload.find("\"build_options\": {").expect("build_options");
    let rest = &payload[at..];
    let end = rest.find('}').expect("end of build_options");
    let needle = format!("\"{key}\": ");
    let start = rest[..end]
        .find(&needle)
        .unwrap_or_else(|| panic!("no {key}"))
        + needle.len();
    let line = rest[start..].lines().next().unwrap();
    line.trim_end_matches(',').to_string()
}

#[test]
fn cpu_reference_graph_has_one_selected_plan() -> TestResult {
    let (mut built, t) = matmul_graph("one_plan", N, &BuildOptions::cpu_reference())?;
    assert_eq!(built.plan_count()?, 1);
    let info = built.plan_info(0)?;
    assert_eq!(info.index, 0);
    assert_eq!(info.name, "cpu_reference");
    assert_eq!(info.engine_id, None);
    assert_eq!(info.workspace_size, 0);
    assert!(info.numerical_notes.is_empty() && info.behavior_notes.is_empty());
    assert_eq!(info.autotune_time_ms, None);
    assert!(info.selected && !info.chosen_by_autotune);
    assert_eq!(built.plans()?, vec![info]);
    assert_eq!(built.selected_plan()?, 0);
    built.select_plan(0)?;
    assert_eq!(built.plan_name(), "cpu_reference");
    for bad in [1usize, 7] {
        expect_err(
            built.select_plan(bad),
            ErrorKind::InvalidArgument,
            &[
                &format!("plan index {bad} is out of range"),
                "it has 1 plan",
            ],
        );
        expect_err(
            built.plan_info(bad),
            ErrorKind::InvalidArgument,
            &["out of range"],
        );
    }
    expect_err(
        built.select_plan(usize::MAX),
        ErrorKind::InvalidArgument,
        &["does not fit"],
    );
    assert_eq!(built.selected_plan()?, 0);
    let (out, expected) = run(&built, t)?;
    assert_close(&out, &expected, 1e-5, 1e-5);
    Ok(())
}

#[test]
fn build_info_of_a_cpu_build() -> TestResult {
    let (built, _) = matmul_graph("info", N, &BuildOptions::cpu_reference())?;
    let info = built.build_info()?;
    assert_eq!(info.source, PlanSource::Built);
    assert!(
        info.total_ms >= info.validate_ms && info.validate_ms >= 0.0,
        "{info:?}"
    );
    assert_eq!(
        (
            info.cache_ms,
            info.lower_ms,
            info.heuristics_ms,
            info.plan_build_ms
        ),
        (0.0, 0.0, 0.0, 0.0)
    );
    Ok(())
}

#[test]
fn fingerprints_ignore_names_and_see_shapes() -> TestResult {
    let fp = |name: &str, n: usize| -> Result<(String, String)> {
        let mut g = Graph::named(name)?;
        let a = g.input(&format!("{name}_a"), DataType::Float, &[1, 2, 3])?;
        let b = g.input("b", DataType::Float, &[1, 3, n as i64])?;
        let c = g.matmul(a, b, &MatmulOptions::default())?;
        g.set_output(c, true)?;
        g.validate()?;
        let before = g.fingerprint()?;
        let built = g.build(&BuildOptions::cpu_reference())?;
        assert_eq!(built.fingerprint()?, before);
        let (_, payload) = split(&built.serialize_plan()?);
        assert!(payload.contains(&format!("\"fingerprint\": \"{before}\"")));
        Ok((before, built.plan_name().to_string()))
    };
    let (one, _) = fp("one", 4)?;
    let (two, _) = fp("two", 4)?;
    let (wider, _) = fp("three", 6)?;
    assert_eq!(one.len(), 32);
    assert!(one
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_eq!(one, two);
    assert_ne!(one, wider);
    Ok(())
}

#[test]
fn plan_blob_round_trip() -> TestResult {
    let (built, t) = matmul_graph("blob", N, &BuildOptions::cpu_reference())?;
    let blob = built.serialize_plan()?;
    let (header, payload) = split(&blob);
    let fields: Vec<&str> = header.split(' ').collect();
    assert_eq!(fields[..2], ["CUDNNFE-PLAN", "1"]);
    assert_eq!(fields[2].parse::<usize>()?, payload.len());
    assert_eq!(fields[3], format!("{:016x}", fnv1a64(payload.as_bytes())));
    assert!(payload.contains("\"target\": \"CPU_REFERENCE\""));
    assert!(!payload.contains("\"plan\": "), "no engine for the CPU");
    // The graph description is the other format: plain JSON.
    assert!(built.to_json()?.starts_with('{'));

    let loaded = BuiltGraph::from_plan(&blob, &PlanLoadOptions::default())?;
    assert_eq!(loaded.build_info()?.source, PlanSource::Serialized);
    assert_eq!(loaded.target(), Target::CpuReference);
    assert_eq!(loaded.name()?, "blob");
    assert_eq!(loaded.fingerprint()?, built.fingerprint()?);
    assert_eq!(loaded.serialize_plan()?, blob);
    assert_eq!(loaded.bound_tensors(), built.bound_tensors());
    let (out, expected) = run(&loaded, t)?;
    assert_close(&out, &expected, 1e-5, 1e-5);
    // Output buffers of a loaded graph must be writable, as for a built one.
    let (a, b, c) = (t[0], t[1], t[2]);
    let (x, y, z) = (data(M * K, 3), data(K * N, 4), vec![0f32; M * N]);
    expect_err(
        loaded.execute_host(
            &mut Handle::new()?,
            &[
                (a, HostBuffer::input(&x)),
                (b, HostBuffer::input(&y)),
                (c, HostBuffer::input(&z)),
            ],
        ),
        ErrorKind::InvalidArgument,
        &["HostBuffer::output"],
    );
    let mut h = Handle::new()?;
    let again = BuiltGraph::from_plan_with_handle(&mut h, &blob, &PlanLoadOptions::default())?;
    assert_eq!(again.serialize_plan()?, blob);
    Ok(())
}

#[test]
fn damaged_blobs_are_refused() -> TestResult {
    let (built, _) = matmul_graph("damaged", N, &BuildOptions::cpu_reference())?;
    let blob = built.serialize_plan()?;
    let mut flipped = blob.clone();
    let at = blob.len() - 20;
    flipped[at] ^= 0x01;
    let cases: [(&[u8], &str); 4] = [
        (&flipped, "checksum"),
        (&blob[..blob.len() / 2], "plan blob"),
        (b"CUDNNFE-PLAN x", "plan blob"),
        (b"", "plan blob"),
    ];
    for (bytes, needle) in cases {
        expect_err(
            BuiltGraph::from_plan(bytes, &PlanLoadOptions::default()),
            ErrorKind::BadSerializedData,
            &[needle],
        );
    }
    // A graph description is not a plan blob; a plan blob holds a graph
    // description, which Graph::from_bytes loads unbuilt (since 0.4), unless
    // the blob is damaged.
    expect_err(
        BuiltGraph::from_plan(built.to_json()?.as_bytes(), &PlanLoadOptions::default()),
        ErrorKind::BadSerializedData,
        &["plan blob"],
    );
    let described = Graph::from_bytes(&blob)?;
    assert_eq!((described.node_count()?, described.tensor_count()?), (1, 3));
    expect_err(
        Graph::from_bytes(&flipped),
        ErrorKind::BadSerializedData,
        &["checksum"],
    );
    Ok(())
}

#[test]
fn another_gpus_plan_is_refused_unless_rebuilt() -> TestResult {
    let (built, t) = matmul_graph("foreign", N, &BuildOptions::cpu_reference())?;
    let (_, payload) = split(&built.serialize_plan()?);
    let top_target = "\n  \"target\": \"CPU_REFERENCE\",";
    assert_eq!(payload.matches(top_target).count(), 1);
    let faked = payload.replace(
        top_target,
        "\n  \"target\": \"GPU\", \"cudnn_version\": 90100, \
         \"device\": {\"name\": \"Faked GPU\", \"sm\": 75}, \
         \"plan\": {\"name\": \"eng0\", \"engine_id\": 0, \"knobs\": [], \"workspace_size\": 0, \
         \"numerical_notes\": [], \"behavior_notes\": []},",
    );
    let blob = wrap(&faked);
    expect_err(
        BuiltGraph::from_plan(&blob, &PlanLoadOptions::default()),
        ErrorKind::BadSerializedData,
        &["Faked GPU (sm_75)", "cuDNN 9.1.0", "rebuild_on_mismatch"],
    );
    let rebuilt =
        BuiltGraph::from_plan(&blob, &PlanLoadOptions::default().rebuild_on_mismatch(true))?;
    assert_eq!(rebuilt.build_info()?.source, PlanSource::Rebuilt);
    assert_eq!(rebuilt.target(), Target::CpuReference); // the stored build options' target
    let (out, expected) = run(&rebuilt, t)?;
    assert_close(&out, &expected, 1e-5, 1e-5);
    Ok(())
}

#[test]
fn build_options_reach_the_library() -> TestResult {
    let (plain, _) = matmul_graph("defaults", N, &BuildOptions::cpu_reference())?;
    let blob = plain.serialize_plan()?;
    assert_eq!(stored_option(&blob, "policy"), "\"HEURISTICS_CHOICE\"");
    assert_eq!(stored_option(&blob, "max_workspace_size"), "-1");
    assert_eq!(stored_option(&blob, "exclude_engines"), "[]");
    assert_eq!(stored_option(&blob, "max_plans"), "0");

    let options = BuildOptions::cpu_reference()
        .heur_modes([HeurMode::B])
        .policy(BuildPolicy::All)
        .max_workspace_size(1 << 20)
        .exclude_numerical_notes(NumericalNotes::TENSOR_CORE | NumericalNotes::WINOGRAD)
        .exclude_behavior_notes(BehaviorNotes::RUNTIME_COMPILATION)
        .require_behavior_notes(BehaviorNotes::SUPPORTS_CUDA_GRAPH_NATIVE_API)
        .exclude_engines([3, 7])
        .max_plans(4)
        .disable_plan_cache(true)
        .plan_cache_dir("");
    let (built, _) = matmul_graph("options", N, &options)?;
    let blob = built.serialize_plan()?;
    assert_eq!(stored_option(&blob, "policy"), "\"ALL\"");
    assert_eq!(stored_option(&blob, "heur_modes"), "[\"B\"]");
    assert_eq!(stored_option(&blob, "max_workspace_size"), "1048576");
    assert_eq!(
        stored_option(&blob, "exclude_numerical_notes"),
        "[\"TENSOR_CORE\", \"WINOGRAD\"]"
    );
    assert_eq!(
        stored_option(&blob, "exclude_behavior_notes"),
        "[\"RUNTIME_COMPILATION\"]"
    );
    assert_eq!(
        stored_option(&blob, "require_behavior_notes"),
        "[\"SUPPORTS_CUDA_GRAPH_NATIVE_API\"]"
    );
    assert_eq!(stored_option(&blob, "exclude_engines"), "[3, 7]");
    assert_eq!(stored_option(&blob, "max_plans"), "4");
    assert_eq!(built.plan_count()?, 1); // the CPU reference has one plan whatever the policy
    Ok(())
}

#[test]
fn bad_build_options_are_refused_and_the_graph_given_back() -> TestResult {
    let cases: Vec<(BuildOptions, Vec<&str>)> = vec![
        (
            BuildOptions::cpu_reference()
                .exclude_behavior_notes(BehaviorNotes::RUNTIME_COMPILATION)
                .require_behavior_notes(BehaviorNotes::RUNTIME_COMPILATION),
            vec!["both excluded and required"],
        ),
        (
            BuildOptions::cpu_reference().exclude_engines(vec![1i64; 300]),
            vec!["exclude_engines"],
        ),
        (
            BuildOptions::cpu_reference().exclude_engines([-3]),
            vec!["exclude_engines"],
        ),
        (
            BuildOptions::cpu_reference().policy(BuildPolicy::Other(7)),
            vec!["policy"],
        ),
        (
            BuildOptions::cpu_reference()
                .exclude_numerical_notes(NumericalNotes::from_bits_retain(1 << 20)),
            vec!["exclude_numerical_notes"],
        ),
        (
            BuildOptions::cpu_reference().max_workspace_size(u64::MAX),
            vec!["max_workspace_size", "int64"],
        ),
        (
            BuildOptions::cpu_reference().plan_cache_dir("a\0b"),
            vec!["plan_cache_dir", "NUL"],
        ),
    ];
    for (options, parts) in cases {
        let mut g = Graph::named("bad_options")?;
        let x = g.input("x", DataType::Float, &[4])?;
        let y = g.unary(PointwiseMode::Neg, x)?;
        g.set_output(y, true)?;
        let BuildError { error, graph } = g
            .try_build(None, &options)
            .expect_err("the options are invalid");
        assert_eq!(error.kind, ErrorKind::InvalidArgument, "{error}");
        for part in parts {
            assert!(error.message.contains(part), "{part:?} not in {error}");
        }
        let graph = graph.expect("the graph is given back");
        graph.build(&BuildOptions::cpu_reference())?; // and still builds
    }
    Ok(())
}

#[test]
fn gpu_only_calls_are_refused_on_the_cpu_reference() -> TestResult {
    let (mut built, [a, b, c]) = matmul_graph("cpu_only", N, &BuildOptions::cpu_reference())?;
    let mut h = Handle::new()?;
    expect_err(
        built.autotune(&mut h, &AutotuneOptions::default()),
        ErrorKind::NotSupported,
        &["graph \"cpu_only\" was built for the CPU reference; autotune needs a GPU plan"],
    );
    // The options reach the library, which checks them first.
    expect_err(
        built.autotune(&mut h, &AutotuneOptions::default().min_iterations(0)),
        ErrorKind::InvalidArgument,
        &["min_iterations 0"],
    );
    expect_err(
        built.autotune(&mut h, &AutotuneOptions::default().tolerance(2.0)),
        ErrorKind::InvalidArgument,
        &["tolerance"],
    );
    assert_eq!(built.selected_plan()?, 0);
    let (x, y, mut z) = (data(M * K, 5), data(K * N, 6), vec![0f32; M * N]);
    let bindings = [
        DeviceBinding::new(a, x.as_ptr() as *mut _),
        DeviceBinding::new(b, y.as_ptr() as *mut _),
        DeviceBinding::new(c, z.as_mut_ptr().cast()),
    ];
    let fake_graph = 0x1000usize as *mut std::ffi::c_void;
    // SAFETY: host buffers of the right sizes; the library refuses the CPU
    // plan before touching them or the (fake) CUDA graph.
    let populate =
        unsafe { built.populate_cuda_graph(&mut h, &bindings, ptr::null_mut(), 0, fake_graph) };
    expect_err(
        populate,
        ErrorKind::NotSupported,
        &["a CUDA graph needs a GPU plan"],
    );
    assert!(
        h.last_error().contains("CUDA graph"),
        "the message is on the handle"
    );
    // SAFETY: as above.
    let update =
        unsafe { built.update_cuda_graph(&mut h, &bindings, ptr::null_mut(), 0, fake_graph) };
    expect_err(update, ErrorKind::NotSupported, &["CUDA graph"]);
    // SAFETY: as above.
    let tuned = unsafe {
        built.autotune_with(
            &mut h,
            &bindings,
            ptr::null_mut(),
            0,
            ptr::null_mut(),
            &AutotuneOptions::default(),
        )
    };
    expect_err(tuned, ErrorKind::NotSupported, &["autotune"]);
    Ok(())
}

#[test]
fn plan_cache_counters() -> TestResult {
    plan_cache_clear()?;
    let stats = plan_cache_stats()?;
    assert_eq!(stats, PlanCacheStats::default());
    matmul_graph("uncached", N, &BuildOptions::cpu_reference())?; // the CPU reference has no cache
    assert_eq!(plan_cache_stats()?, stats);
    Ok(())
}

#[test]
fn note_flags_and_enumerations_match_the_header() {
    let numerical = [
        NumericalNotes::TENSOR_CORE,
        NumericalNotes::DOWN_CONVERT_INPUTS,
        NumericalNotes::REDUCED_PRECISION_REDUCTION,
        NumericalNotes::FFT,
        NumericalNotes::NONDETERMINISTIC,
        NumericalNotes::WINOGRAD,
        NumericalNotes::STRICT_NAN_PROP,
    ];
    let union = numerical
        .iter()
        .fold(NumericalNotes::empty(), |acc, &n| acc | n);
    assert_eq!(union, NumericalNotes::ALL);
    assert_eq!(
        NumericalNotes::ALL.bits(),
        sys::CUDNNFE_NUMERICAL_NOTE_ALL as u32
    );
    assert_eq!(NumericalNotes::ALL.names().len(), numerical.len());
    let behavior = BehaviorNotes::RUNTIME_COMPILATION
        | BehaviorNotes::REQUIRES_FILTER_INT8X32_REORDER
        | BehaviorNotes::REQUIRES_BIAS_INT8X32_REORDER
        | BehaviorNotes::SUPPORTS_CUDA_GRAPH_NATIVE_API
        | BehaviorNotes::CUBLASLT_DEPENDENCY;
    assert_eq!(behavior, BehaviorNotes::ALL);
    assert_eq!(
        BehaviorNotes::ALL.bits(),
        sys::CUDNNFE_BEHAVIOR_NOTE_ALL as u32
    );
    assert_eq!(
        format!("{:?}", BehaviorNotes::from_bits_retain(8 | 64)),
        "BehaviorNotes(SUPPORTS_CUDA_GRAPH_NATIVE_API | 0x40)"
    );
    assert_eq!(
        format!("{:?}", NumericalNotes::empty()),
        "NumericalNotes((none))"
    );
    assert_eq!(
        BuildPolicy::from_raw(sys::CUDNNFE_BUILD_POLICY_ALL),
        BuildPolicy::All
    );
    assert_eq!(BuildPolicy::default(), BuildPolicy::HeuristicsChoice);
    for (source, raw) in [
        (PlanSource::Built, sys::CUDNNFE_PLAN_SOURCE_BUILT),
        (
            PlanSource::MemoryCache,
            sys::CUDNNFE_PLAN_SOURCE_MEMORY_CACHE,
        ),
        (PlanSource::DiskCache, sys::CUDNNFE_PLAN_SOURCE_DISK_CACHE),
        (PlanSource::Serialized, sys::CUDNNFE_PLAN_SOURCE_SERIALIZED),
        (PlanSource::Rebuilt, sys::CUDNNFE_PLAN_SOURCE_REBUILT),
    ] {
        assert_eq!(PlanSource::from_raw(raw), source);
        assert_eq!(source.as_raw(), raw);
    }
    let defaults = AutotuneOptions::default();
    assert_eq!(
        (
            defaults.warmup_iterations,
            defaults.min_iterations,
            defaults.max_iterations
        ),
        (2, 5, 50)
    );
}
