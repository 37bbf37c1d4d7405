//! Score modifiers through the safe crate (`Graph::begin_score_mod`,
//! `Graph::end_score_mod`, `SdpaOptions::score_mod`) on the CPU reference:
//! softcap (tanh(s / c) * c) against plain loops, as
//! tests/test_cpu_score_mod.cpp checks in C, and the scope rules.
mod common;

use common::data;
use cudnnfe::*;

type TestResult = Result<(), Error>;

const SCORES: [i64; 4] = [1, 2, 3, 5]; // [b, h, s_q, s_kv]
const D: usize = 4;
const CAP: f64 = 0.7;

/// One batch of attention with softcap after the scale (docs/attention.md:
/// s = mod(scale * q.k)), q [h, s_q, d], k and v [h, s_kv, d].
fn softcap_attention(q: &[f32], k: &[f32], v: &[f32]) -> Vec<f32> {
    let (h, s_q, s_kv) = (SCORES[1] as usize, SCORES[2] as usize, SCORES[3] as usize);
    let scale = 1.0 / (D as f64).sqrt();
    let mut o = vec![0f32; h * s_q * D];
    for hh in 0..h {
        for i in 0..s_q {
            let s: Vec<f64> = (0..s_kv)
                .map(|j| {
                    let dot: f64 = (0..D)
                        .map(|c| {
                            q[(hh * s_q + i) * D + c] as f64 * k[(hh * s_kv + j) * D + c] as f64
                        })
                        .sum();
                    (scale * dot / CAP).tanh() * CAP
                })
                .collect();
            let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = s.iter().map(|x| (x - max).exp()).sum();
            for c in 0..D {
                o[(hh * s_q + i) * D + c] = (0..s_kv)
                    .map(|j| (s[j] - max).exp() / z * v[(hh * s_kv + j) * D + c] as f64)
                    .sum::<f64>() as f32;
            }
        }
    }
    o
}

#[test]
fn softcap_score_mod_matches_loops() -> TestResult {
    let (h, s_q, s_kv) = (SCORES[1] as usize, SCORES[2] as usize, SCORES[3] as usize);
    let (q_d, k_d, v_d) = (
        data(h * s_q * D, 71),
        data(h * s_kv * D, 72),
        data(h * s_kv * D, 73),
    );
    let mut g = Graph::named("softcap")?;
    let q = g.input("q", DataType::Float, &[1, h as i64, s_q as i64, D as i64])?;
    let k = g.input("k", DataType::Float, &[1, h as i64, s_kv as i64, D as i64])?;
    let v = g.input("v", DataType::Float, &[1, h as i64, s_kv as i64, D as i64])?;
    let cap = g.scalar("cap", DataType::Float, CAP)?;
    let score = g.begin_score_mod(Some("score"), &SCORES)?;
    let div = g.binary(PointwiseMode::Div, score, cap)?;
    let t = g.unary(PointwiseMode::TanhFwd, div)?;
    let capped = g.binary(PointwiseMode::Mul, t, cap)?;
    g.end_score_mod(score, capped)?;
    let out = g.sdpa(q, k, v, &SdpaOptions::default().score_mod(score))?;
    g.set_output(out.o, true)?;
    let built = g.build(&BuildOptions::cpu_reference())?;
    let mut o = vec![f32::NAN; h * s_q * D];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (q, HostBuffer::input(&q_d)),
            (k, HostBuffer::input(&k_d)),
            (v, HostBuffer::input(&v_d)),
            (out.o, HostBuffer::output(&mut o)),
        ],
    )?;
    common::assert_close(&o, &softcap_attention(&q_d, &k_d, &v_d), 1e-5, 1e-4);
    Ok(())
}

#[test]
fn score_mod_scope_rules() -> TestResult {
    let mut g = Graph::named("scopes")?;
    let x = g.input("x", DataType::Float, &SCORES)?;
    let err = g.begin_score_mod(None, &SCORES[..3]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("4 dims"), "{}", err.message());
    let score = g.begin_score_mod(None, &SCORES)?;
    let err = g.begin_score_mod(None, &SCORES).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongState, "{}", err.message());
    // A result that does not depend on the placeholder is refused.
    let neg = g.unary(PointwiseMode::Neg, x)?;
    let err = g.end_score_mod(score, neg).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph, "{}", err.message());
    let result = g.unary(PointwiseMode::Neg, score)?;
    g.end_score_mod(score, result)?;
    Ok(())
}
