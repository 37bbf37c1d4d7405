//! The 0.4 additions on the CPU, no GPU needed: `Graph::validate_for_build`
//! applies a GPU's support rules for `BuildOptions::sm_version` (ALiBi
//! without a causal mask is refused for a GPU, accepted by the CPU
//! reference), the build options `sm_count` / `sm_version` (negative values
//! are invalid arguments), and sdpa's `score_max` / `score_sum_exp` outputs
//! into tensors the caller made, checked against plain Rust and against the
//! node's own stats (stats = max + ln(sum)).
mod common;

use common::{assert_close, data, expect_err};
use cudnnfe::*;

type TestResult = Result<(), Error>;

/// A HALF sdpa [2, 4, 16, 64] graph named "attn" with `options`, o marked
/// as an output.
fn half_sdpa(options: SdpaOptions) -> Result<Graph, Error> {
    let mut g = Graph::new()?;
    let q = g.input("q", DataType::Half, &[2, 4, 16, 64])?;
    let k = g.input("k", DataType::Half, &[2, 2, 32, 64])?;
    let v = g.input("v", DataType::Half, &[2, 2, 32, 64])?;
    let o = g.sdpa(q, k, v, &options.name("attn"))?.o;
    g.set_output(o, true)?;
    Ok(g)
}

fn gpu_sm90() -> BuildOptions {
    BuildOptions::gpu().sm_version(90)
}

#[test]
fn validate_for_build_applies_the_gpu_rules_of_an_sm_version() -> TestResult {
    // ALiBi without a causal mask: cudnn-frontend refuses it for a GPU; the
    // CPU reference computes it.
    let mut g = half_sdpa(SdpaOptions::default().alibi_mask(true))?;
    expect_err(
        g.validate_for_build(None, &gpu_sm90()),
        ErrorKind::NotSupported,
        &["sdpa \"attn\"", "alibi_mask needs a right bound of 0"],
    );
    g.validate_for_build(None, &BuildOptions::cpu_reference())?;
    // With a handle of ours, as build_with_handle would use it.
    let mut handle = Handle::new()?;
    g.validate_for_build(Some(&mut handle), &BuildOptions::cpu_reference())?;
    expect_err(
        g.validate_for_build(Some(&mut handle), &gpu_sm90()),
        ErrorKind::NotSupported,
        &["alibi_mask"],
    );
    // Validation left the graph buildable: the CPU reference builds it.
    let built = g.build(&BuildOptions::cpu_reference())?;
    assert_eq!(built.target(), Target::CpuReference);

    // With the causal mask cuDNN needs, the same GPU rules accept it.
    let mut g = half_sdpa(SdpaOptions::default().alibi_mask(true).causal_mask(true))?;
    g.validate_for_build(None, &gpu_sm90())?;
    // Bottom-right alignment does not combine with ALiBi on a GPU.
    let mut g = half_sdpa(
        SdpaOptions::default()
            .alibi_mask(true)
            .causal_mask_bottom_right(true),
    )?;
    expect_err(
        g.validate_for_build(None, &gpu_sm90()),
        ErrorKind::NotSupported,
        &["alibi_mask"],
    );
    g.validate_for_build(None, &BuildOptions::cpu_reference())?;
    Ok(())
}

#[test]
fn sm_count_and_sm_version_are_checked() -> TestResult {
    let o = BuildOptions::cpu_reference().sm_count(8).sm_version(90);
    assert_eq!((o.sm_count, o.sm_version), (8, 90));
    let mut g = half_sdpa(SdpaOptions::default())?;
    // The CPU reference validates with any SM target...
    g.validate_for_build(None, &o)?;
    // ...but a negative one is an invalid argument, named.
    expect_err(
        g.validate_for_build(None, &BuildOptions::cpu_reference().sm_count(-1)),
        ErrorKind::InvalidArgument,
        &["sm_count is -1"],
    );
    expect_err(
        g.validate_for_build(None, &BuildOptions::gpu().sm_version(-90)),
        ErrorKind::InvalidArgument,
        &["sm_version is -90"],
    );
    // The build refuses it the same way and gives the graph back.
    let err = g
        .try_build(None, &BuildOptions::cpu_reference().sm_count(-4))
        .unwrap_err();
    assert_eq!(err.error.kind, ErrorKind::InvalidArgument, "{}", err.error);
    assert!(
        err.error.message.contains("sm_count is -4"),
        "{}",
        err.error
    );
    let built = err
        .graph
        .expect("the graph comes back")
        .build(&BuildOptions::cpu_reference().sm_count(4))?;
    assert_eq!(built.target(), Target::CpuReference);
    Ok(())
}

const B: usize = 1;
const H: usize = 2;
const SQ: usize = 3;
const SKV: usize = 5;
const D: usize = 4;

/// Row max and sum of exp(score - max) of the scaled scores q·kᵀ/sqrt(d),
/// per (b, h, i), over packed BHSD buffers.
fn score_max_and_sum(q: &[f32], k: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let scale = 1.0 / (D as f64).sqrt();
    let (mut maxes, mut sums) = (Vec::new(), Vec::new());
    for bh in 0..B * H {
        for i in 0..SQ {
            let scores: Vec<f64> = (0..SKV)
                .map(|j| {
                    (0..D)
                        .map(|c| q[(bh * SQ + i) * D + c] as f64 * k[(bh * SKV + j) * D + c] as f64)
                        .sum::<f64>()
                        * scale
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            maxes.push(max);
            sums.push(scores.iter().map(|s| (s - max).exp()).sum());
        }
    }
    (maxes, sums)
}

#[test]
fn sdpa_writes_score_max_and_score_sum_exp_into_caller_tensors() -> TestResult {
    let mut g = Graph::named("dumps")?;
    let q = g.input(
        "q",
        DataType::Float,
        &[B as i64, H as i64, SQ as i64, D as i64],
    )?;
    let kv = [B as i64, H as i64, SKV as i64, D as i64];
    let k = g.input("k", DataType::Float, &kv)?;
    let v = g.input("v", DataType::Float, &kv)?;
    let per_row = [B as i64, H as i64, SQ as i64, 1];
    let max_t = g.input("score_max", DataType::Float, &per_row)?;
    let sum_t = g.input("score_sum_exp", DataType::Float, &per_row)?;
    // cudnn-frontend's order: mark them as outputs before sdpa takes them.
    g.set_output(max_t, true)?.set_output(sum_t, true)?;
    let out = g.sdpa(
        q,
        k,
        v,
        &SdpaOptions::default()
            .generate_stats(true)
            .score_max(max_t)
            .score_sum_exp(sum_t),
    )?;
    let stats = out.stats.expect("stats were asked for");
    g.set_output(out.o, true)?.set_output(stats, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;

    let q_d = data(B * H * SQ * D, 60);
    let k_d = data(B * H * SKV * D, 61);
    let v_d = data(B * H * SKV * D, 62);
    let rows = B * H * SQ;
    let (mut o_d, mut st_d) = (vec![f32::NAN; rows * D], vec![f32::NAN; rows]);
    let (mut max_d, mut sum_d) = (vec![f32::NAN; rows], vec![f32::NAN; rows]);
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_d)),
            (k, HostBuffer::input(&k_d)),
            (v, HostBuffer::input(&v_d)),
            (out.o, HostBuffer::output(&mut o_d)),
            (stats, HostBuffer::output(&mut st_d)),
            (max_t, HostBuffer::output(&mut max_d)),
            (sum_t, HostBuffer::output(&mut sum_d)),
        ],
    )?;
    let (max_ref, sum_ref) = score_max_and_sum(&q_d, &k_d);
    let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
    assert_close(&max_d, &f32s(&max_ref), 1e-5, 1e-4);
    assert_close(&sum_d, &f32s(&sum_ref), 1e-5, 1e-4);
    // The node's own stats are the log-sum-exp: max + ln(sum).
    let lse: Vec<f32> = max_d
        .iter()
        .zip(&sum_d)
        .map(|(&m, &s)| m + s.ln())
        .collect();
    assert_close(&st_d, &lse, 1e-5, 1e-5);
    assert!(
        sum_d.iter().all(|&s| (1.0..=SKV as f32).contains(&s)),
        "{sum_d:?}"
    );

    // The graph writes them: a read-only buffer is refused, naming the tensor.
    let frozen = vec![0f32; rows];
    let err = built
        .execute_host(
            &mut Handle::new()?,
            &[
                (q, HostBuffer::input(&q_d)),
                (k, HostBuffer::input(&k_d)),
                (v, HostBuffer::input(&v_d)),
                (out.o, HostBuffer::output(&mut o_d)),
                (stats, HostBuffer::output(&mut st_d)),
                (max_t, HostBuffer::input(&frozen)),
                (sum_t, HostBuffer::output(&mut sum_d)),
            ],
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.message.contains("\"score_max\"") && err.message.contains("HostBuffer::output"),
        "{err}"
    );

    // A serialized graph keeps them as the node's outputs.
    let reloaded = Graph::from_json(&built.to_json()?)?.build(&BuildOptions::cpu_reference())?;
    let mut max2 = vec![f32::NAN; rows];
    let mut sum2 = vec![f32::NAN; rows];
    reloaded.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_d)),
            (k, HostBuffer::input(&k_d)),
            (v, HostBuffer::input(&v_d)),
            (out.o, HostBuffer::output(&mut o_d)),
            (stats, HostBuffer::output(&mut st_d)),
            (max_t, HostBuffer::output(&mut max2)),
            (sum_t, HostBuffer::output(&mut sum2)),
        ],
    )?;
    assert_eq!((max2, sum2), (max_d, sum_d));
    Ok(())
}

#[test]
fn sdpa_backward_takes_max_total_seq_lens() -> TestResult {
    let o = SdpaBackwardOptions::default()
        .max_total_seq_len_q(64)
        .max_total_seq_len_kv(96);
    assert_eq!((o.max_total_seq_len_q, o.max_total_seq_len_kv), (64, 96));
    let d = SdpaBackwardOptions::default();
    assert_eq!((d.max_total_seq_len_q, d.max_total_seq_len_kv), (0, 0));
    let mut g = Graph::new()?;
    let t = g.input("t", DataType::Half, &[1, 2, 8, 64])?;
    let stats = g.input("stats", DataType::Float, &[1, 2, 8, 1])?;
    let grads = g.sdpa_backward(t, t, t, t, t, stats, &o.name("bwd"))?;
    for x in [grads.dq, grads.dk, grads.dv] {
        g.set_output(x, true)?;
    }
    // Without ragged offsets cudnn-frontend refuses them for a GPU.
    expect_err(
        g.validate_for_build(None, &gpu_sm90()),
        ErrorKind::NotSupported,
        &["max_total_seq_len"],
    );
    g.validate_for_build(None, &BuildOptions::cpu_reference())?;
    // A negative bound is an invalid argument when the node is added.
    let mut g = Graph::new()?;
    let t = g.input("t", DataType::Half, &[1, 2, 8, 64])?;
    let stats = g.input("stats", DataType::Float, &[1, 2, 8, 1])?;
    expect_err(
        g.sdpa_backward(
            t,
            t,
            t,
            t,
            t,
            stats,
            &SdpaBackwardOptions::default().max_total_seq_len_kv(-1),
        ),
        ErrorKind::InvalidArgument,
        &["max_total_seq_len_kv is -1"],
    );
    Ok(())
}
