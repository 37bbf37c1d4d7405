//! Helpers shared by the integration tests: deterministic data, plain-Rust
//! references, tolerant comparison, expected errors, and visible skips.
#![allow(dead_code)]

use std::io::Write;

/// Minimal CUDA runtime access (dlopen), shared with the examples.
#[path = "../../../../../examples/rust/cuda.rs"]
pub mod cuda;

/// The error `result` must have failed with: of `kind`, its message
/// containing every one of `parts`.
#[track_caller]
pub fn expect_err<T: std::fmt::Debug>(
    result: Result<T, cudnnfe::Error>,
    kind: cudnnfe::ErrorKind,
    parts: &[&str],
) -> cudnnfe::Error {
    let err = result.expect_err("the call should have failed");
    assert_eq!(err.kind, kind, "wrong kind for: {err}");
    for part in parts {
        assert!(
            err.message.contains(part),
            "message {:?} lacks {part:?}",
            err.message
        );
    }
    err
}

/// Prints why a test skipped, past the harness's output capture.
pub fn skip(test: &str, reason: &str) {
    // One write per line, so that lines of parallel tests do not interleave.
    let _ = std::io::stderr().write_all(format!("SKIPPED {test}: {reason}\n").as_bytes());
}

/// Number of GPUs the library sees (0 when there are none or no CUDA).
pub fn gpu_count() -> usize {
    cudnnfe::device_count().expect("cudnnfe_device_count never fails")
}

/// Deterministic values in [-1, 1) (xorshift).
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

/// `buf`, laid out with `dims` and `strides` (in elements, as the graph
/// reports them: channels-last for convolution and pooling outputs), read
/// back in row-major logical order.
pub fn logical<T: Copy>(buf: &[T], dims: &[i64], strides: &[i64]) -> Vec<T> {
    let count: i64 = dims.iter().product();
    let mut index = vec![0i64; dims.len()];
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let offset: i64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        out.push(buf[offset as usize]);
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

/// Asserts |a - e| <= atol + rtol * |e| everywhere, naming the first miss.
#[track_caller]
pub fn assert_close(actual: &[f32], expected: &[f32], atol: f32, rtol: f32) {
    assert_eq!(actual.len(), expected.len(), "lengths differ");
    let mut worst = 0f32;
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let err = (a - e).abs();
        worst = worst.max(err);
        assert!(
            err <= atol + rtol * e.abs() || (a.is_nan() && e.is_nan()) || a == e,
            "element {i}: got {a}, expected {e} (|diff| {err} > {atol} + {rtol}*|e|)"
        );
    }
}

/// c[batch][m][n] = a[batch][m][k] @ b[batch][k][n] (packed row-major).
pub fn matmul(a: &[f32], b: &[f32], batch: usize, m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f32; batch * m * n];
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f64;
                for p in 0..k {
                    acc += a[(bi * m + i) * k + p] as f64 * b[(bi * k + p) * n + j] as f64;
                }
                c[(bi * m + i) * n + j] = acc as f32;
            }
        }
    }
    c
}

/// Attention geometry for [`sdpa`].
#[derive(Clone, Copy, Debug)]
pub struct Attn {
    pub b: usize,
    pub h_q: usize,
    pub h_kv: usize,
    pub s_q: usize,
    pub s_kv: usize,
    pub d: usize,
    pub d_v: usize,
    pub scale: f32,
    pub causal: bool,
    pub causal_bottom_right: bool,
}

/// Plain softmax(scale * q kᵀ + bias) v over packed BHSD buffers; returns
/// (o, stats) with stats the natural log-sum-exp of each row.
pub fn sdpa(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    bias: Option<&[f32]>,
    p: Attn,
) -> (Vec<f32>, Vec<f32>) {
    let mut o = vec![0f32; p.b * p.h_q * p.s_q * p.d_v];
    let mut stats = vec![0f32; p.b * p.h_q * p.s_q];
    let group = p.h_q / p.h_kv;
    for b in 0..p.b {
        for h in 0..p.h_q {
            let hk = h / group;
            for i in 0..p.s_q {
                let mut last = p.s_kv as i64 - 1;
                if p.causal {
                    last = last.min(i as i64);
                }
                if p.causal_bottom_right {
                    last = last.min(i as i64 + p.s_kv as i64 - p.s_q as i64);
                }
                let cols = (last + 1).max(0) as usize;
                let mut scores = vec![0f64; cols];
                for (j, s) in scores.iter_mut().enumerate() {
                    let mut dot = 0f64;
                    for c in 0..p.d {
                        dot += q[((b * p.h_q + h) * p.s_q + i) * p.d + c] as f64
                            * k[((b * p.h_kv + hk) * p.s_kv + j) * p.d + c] as f64;
                    }
                    *s = dot * p.scale as f64;
                    if let Some(bias) = bias {
                        *s += bias[((b * p.h_q + h) * p.s_q + i) * p.s_kv + j] as f64;
                    }
                }
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                for c in 0..p.d_v {
                    let mut acc = 0f64;
                    for (j, s) in scores.iter().enumerate() {
                        acc += (s - max).exp()
                            * v[((b * p.h_kv + hk) * p.s_kv + j) * p.d_v + c] as f64;
                    }
                    o[((b * p.h_q + h) * p.s_q + i) * p.d_v + c] =
                        if cols == 0 { 0.0 } else { (acc / sum) as f32 };
                }
                stats[(b * p.h_q + h) * p.s_q + i] = if cols == 0 {
                    f32::NEG_INFINITY
                } else {
                    (max + sum.ln()) as f32
                };
            }
        }
    }
    (o, stats)
}

/// 2-D cross-correlation geometry (NCHW packed).
#[derive(Clone, Copy, Debug)]
pub struct Conv2d {
    pub n: usize,
    pub c: usize,
    pub k: usize,
    pub h: usize,
    pub w: usize,
    pub r: usize,
    pub s: usize,
    pub pad: usize,
    pub stride: usize,
    pub dilation: usize,
}

impl Conv2d {
    pub fn out_h(&self) -> usize {
        (self.h + 2 * self.pad - self.dilation * (self.r - 1) - 1) / self.stride + 1
    }
    pub fn out_w(&self) -> usize {
        (self.w + 2 * self.pad - self.dilation * (self.s - 1) - 1) / self.stride + 1
    }
    /// Calls f(n, k, oh, ow, c, ih, iw, r, s) for every in-bounds tap.
    fn taps(&self, mut f: impl FnMut([usize; 9])) {
        for n in 0..self.n {
            for k in 0..self.k {
                for oh in 0..self.out_h() {
                    for ow in 0..self.out_w() {
                        for c in 0..self.c {
                            for r in 0..self.r {
                                for s in 0..self.s {
                                    let ih = (oh * self.stride + r * self.dilation) as i64
                                        - self.pad as i64;
                                    let iw = (ow * self.stride + s * self.dilation) as i64
                                        - self.pad as i64;
                                    if ih < 0
                                        || iw < 0
                                        || ih >= self.h as i64
                                        || iw >= self.w as i64
                                    {
                                        continue;
                                    }
                                    f([n, k, oh, ow, c, ih as usize, iw as usize, r, s]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    fn x_at(&self, n: usize, c: usize, h: usize, w: usize) -> usize {
        ((n * self.c + c) * self.h + h) * self.w + w
    }
    fn w_at(&self, k: usize, c: usize, r: usize, s: usize) -> usize {
        ((k * self.c + c) * self.r + r) * self.s + s
    }
    fn y_at(&self, n: usize, k: usize, h: usize, w: usize) -> usize {
        ((n * self.k + k) * self.out_h() + h) * self.out_w() + w
    }
    pub fn fprop(&self, x: &[f32], wt: &[f32]) -> Vec<f32> {
        let mut y = vec![0f64; self.n * self.k * self.out_h() * self.out_w()];
        self.taps(|[n, k, oh, ow, c, ih, iw, r, s]| {
            y[self.y_at(n, k, oh, ow)] +=
                x[self.x_at(n, c, ih, iw)] as f64 * wt[self.w_at(k, c, r, s)] as f64;
        });
        y.into_iter().map(|v| v as f32).collect()
    }
    pub fn dgrad(&self, dy: &[f32], wt: &[f32]) -> Vec<f32> {
        let mut dx = vec![0f64; self.n * self.c * self.h * self.w];
        self.taps(|[n, k, oh, ow, c, ih, iw, r, s]| {
            dx[self.x_at(n, c, ih, iw)] +=
                dy[self.y_at(n, k, oh, ow)] as f64 * wt[self.w_at(k, c, r, s)] as f64;
        });
        dx.into_iter().map(|v| v as f32).collect()
    }
    pub fn wgrad(&self, x: &[f32], dy: &[f32]) -> Vec<f32> {
        let mut dw = vec![0f64; self.k * self.c * self.r * self.s];
        self.taps(|[n, k, oh, ow, c, ih, iw, r, s]| {
            dw[self.w_at(k, c, r, s)] +=
                dy[self.y_at(n, k, oh, ow)] as f64 * x[self.x_at(n, c, ih, iw)] as f64;
        });
        dw.into_iter().map(|v| v as f32).collect()
    }
}

/// erf by its Maclaurin series (std has none): accurate to ~1e-9 for
/// |x| <= 3, which is all the tests use.
pub fn erf(x: f64) -> f64 {
    if x.abs() > 5.0 {
        return x.signum();
    }
    // Maclaurin series: erf x = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)).
    let mut term = x;
    let mut sum = x;
    let x2 = x * x;
    for n in 1..200 {
        term *= -x2 / n as f64;
        let add = term / (2 * n + 1) as f64;
        sum += add;
        if add.abs() < 1e-17 {
            break;
        }
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}
