//! Runs both examples as tests: on the CPU reference always, and on the GPU
//! when the library sees one (otherwise that half skips with a reason).
use std::io::Write;

use cudnnfe::Target;

#[allow(dead_code)]
#[path = "../matmul_bias.rs"]
mod matmul_bias;
#[allow(dead_code)]
#[path = "../sdpa_causal.rs"]
mod sdpa_causal;

fn gpu_or_skip(test: &str) -> bool {
    let gpus = cudnnfe::device_count().unwrap();
    if gpus == 0 {
        let line = format!("SKIPPED {test}: no GPU (cudnnfe_device_count() == 0)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    gpus > 0
}

#[test]
fn matmul_bias_on_the_cpu_reference() {
    let (target, error) = matmul_bias::run(Target::CpuReference).unwrap();
    assert_eq!(target, Target::CpuReference);
    assert!(error < 2e-2);
}

#[test]
fn sdpa_causal_on_the_cpu_reference() {
    let (target, error) = sdpa_causal::run(Target::CpuReference).unwrap();
    assert_eq!(target, Target::CpuReference);
    assert!(error < 1e-2);
}

#[test]
fn matmul_bias_on_the_gpu() {
    if gpu_or_skip("matmul_bias_on_the_gpu") {
        assert_eq!(matmul_bias::run(Target::Gpu).unwrap().0, Target::Gpu);
    }
}

#[test]
fn sdpa_causal_on_the_gpu() {
    if gpu_or_skip("sdpa_causal_on_the_gpu") {
        assert_eq!(sdpa_causal::run(Target::Gpu).unwrap().0, Target::Gpu);
    }
}

#[test]
fn auto_target_runs_somewhere() {
    let (target, _) = matmul_bias::run(Target::Auto).unwrap();
    assert_ne!(target, Target::Auto, "Auto resolves at build");
}
