//! Plan control on the GPU: several plans, autotune on the library's scratch
//! buffers, plan blobs of GPU plans, and plan cache hits. Each test skips
//! with a printed reason when the library sees no GPU. A separate test
//! binary from plans.rs, so that its cache counters are its own.
mod common;

use common::skip;
use cudnnfe::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn have_gpu(test: &str) -> bool {
    if common::gpu_count() == 0 {
        skip(test, "no GPU (cudnnfe_device_count() == 0)");
        return false;
    }
    true
}

/// An FP16 batched matmul with FLOAT math, built for the GPU with `options`.
fn half_matmul(handle: &mut Handle, options: &BuildOptions) -> Result<BuiltGraph> {
    let mut g = Graph::named("gpu_plans")?;
    g.set_io_dtype(DataType::Half)?;
    g.set_intermediate_dtype(DataType::Float)?;
    g.set_compute_dtype(DataType::Float)?;
    let a = g.input("a", DataType::Half, &[8, 128, 64])?;
    let b = g.input("b", DataType::Half, &[8, 64, 96])?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(c, true)?;
    g.build_with_handle(handle, options)
}

#[test]
fn gpu_policy_all_autotune_and_plan_blob() -> TestResult {
    if !have_gpu("gpu_policy_all_autotune_and_plan_blob") {
        return Ok(());
    }
    let mut h = Handle::new()?;
    let options = BuildOptions::gpu()
        .policy(BuildPolicy::All)
        .disable_plan_cache(true);
    let mut built = half_matmul(&mut h, &options)?;
    let plans = built.plans()?;
    assert!(!plans.is_empty());
    for p in &plans {
        let id = p.engine_id.expect("GPU plans have an engine");
        assert!(p.name.starts_with(&format!("eng{id}")), "{p:?}");
    }
    for i in 0..plans.len() {
        built.select_plan(i)?;
        assert_eq!(built.plan_name(), plans[i].name);
        assert_eq!(built.workspace_size(), plans[i].workspace_size);
    }
    let chosen = built.autotune(&mut h, &AutotuneOptions::default().max_ms_per_plan(20.0))?;
    assert_eq!(chosen, built.selected_plan()?);
    let timed = built.plan_info(chosen)?;
    assert!(
        timed.chosen_by_autotune && timed.autotune_time_ms.unwrap_or(0.0) > 0.0,
        "{timed:?}"
    );
    assert_eq!(built.plan_name(), timed.name);

    let blob = built.serialize_plan()?;
    let loaded = BuiltGraph::from_plan_with_handle(&mut h, &blob, &PlanLoadOptions::default())?;
    assert_eq!(loaded.build_info()?.source, PlanSource::Serialized);
    assert_eq!(loaded.plan_name(), built.plan_name());
    assert!(loaded.plan_info(0)?.chosen_by_autotune);
    Ok(())
}

#[test]
fn gpu_same_graph_twice_hits_the_plan_cache() -> TestResult {
    if !have_gpu("gpu_same_graph_twice_hits_the_plan_cache") {
        return Ok(());
    }
    plan_cache_clear()?;
    let mut h = Handle::new()?;
    let first = half_matmul(&mut h, &BuildOptions::gpu())?;
    let second = half_matmul(&mut h, &BuildOptions::gpu())?;
    assert_eq!(first.build_info()?.source, PlanSource::Built);
    assert_eq!(second.build_info()?.source, PlanSource::MemoryCache);
    assert_eq!(first.fingerprint()?, second.fingerprint()?);
    let stats = plan_cache_stats()?;
    assert!(
        stats.hits >= 1 && stats.misses >= 1 && stats.entries >= 1,
        "{stats:?}"
    );
    Ok(())
}

#[test]
fn gpu_filters_that_remove_everything_say_so() -> TestResult {
    if !have_gpu("gpu_filters_that_remove_everything_say_so") {
        return Ok(());
    }
    let mut h = Handle::new()?;
    // No engine of a matmul has every behaviour note (INT8x32 reorders,
    // cuBLASLt, runtime compilation and CUDA graph support at once).
    let err = half_matmul(
        &mut h,
        &BuildOptions::gpu().require_behavior_notes(BehaviorNotes::ALL),
    )
    .expect_err("no engine is left");
    assert_eq!(err.kind, ErrorKind::NotSupported, "{err}");
    assert!(err.message.contains("filters removed"), "{err}");
    assert!(err.message.contains("require_behavior_notes"), "{err}");
    Ok(())
}
