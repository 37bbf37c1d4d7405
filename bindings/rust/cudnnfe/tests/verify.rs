//! Verify mode (`BuildOptions::verify`, docs/verify.md) reaches the library:
//! on the CPU reference a right result passes, the library's test hook
//! (`CUDNNFE_VERIFY_TEST_CORRUPT=1`) plants a wrong element that comes back
//! as `ErrorKind::VerifyFailed`, `VerifyMode::Off` wins over the
//! environment, and bad values are refused. One test: it sets environment
//! variables, which the whole process shares.
mod common;

use common::{data, matmul};
use cudnnfe::*;

const M: usize = 3;
const K: usize = 4;
const N: usize = 5;

fn build(options: &BuildOptions) -> Result<(BuiltGraph, [Tensor; 3])> {
    let mut g = Graph::named("verified")?;
    let a = g.input("a", DataType::Float, &[1, M as i64, K as i64])?;
    let b = g.input("b", DataType::Float, &[1, K as i64, N as i64])?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(c, true)?;
    Ok((g.build(options)?, [a, b, c]))
}

fn run(built: &BuiltGraph, [a, b, c]: [Tensor; 3]) -> Result<Vec<f32>> {
    let (a_data, b_data) = (data(M * K, 1), data(K * N, 2));
    let mut out = vec![f32::NAN; M * N];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (a, HostBuffer::input(&a_data)),
            (b, HostBuffer::input(&b_data)),
            (c, HostBuffer::output(&mut out)),
        ],
    )?;
    Ok(out)
}

#[test]
fn verify_mode_reaches_the_library() -> Result<()> {
    std::env::remove_var("CUDNNFE_VERIFY");
    let on = BuildOptions::cpu_reference()
        .verify(VerifyMode::On)
        .verify_samples(4)
        .verify_rtol(0.01);
    assert_eq!(BuildOptions::default().verify, VerifyMode::FromEnv);
    assert_eq!((on.verify_samples, on.verify_rtol), (4, 0.01));

    let (built, t) = build(&on)?;
    let out = run(&built, t)?;
    let want = matmul(&data(M * K, 1), &data(K * N, 2), 1, M, K, N);
    common::assert_close(&out, &want, 1e-5, 1e-5);

    std::env::set_var("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    let (built, t) = build(&on)?;
    let e = run(&built, t).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::VerifyFailed, "{e}");
    for part in [
        "verify: graph \"verified\"",
        "matmul \"mm\"",
        "rtol 0.01",
        "cpu_reference",
    ] {
        assert!(e.message().contains(part), "{part:?} not in {e}");
    }

    std::env::set_var("CUDNNFE_VERIFY", "1");
    let (built, t) = build(&BuildOptions::cpu_reference())?;
    assert_eq!(run(&built, t).unwrap_err().kind(), ErrorKind::VerifyFailed);
    let (built, t) = build(&BuildOptions::cpu_reference().verify(VerifyMode::Off))?;
    run(&built, t)?;
    std::env::remove_var("CUDNNFE_VERIFY");
    std::env::remove_var("CUDNNFE_VERIFY_TEST_CORRUPT");

    let e = build(&BuildOptions::cpu_reference().verify_rtol(-1.0))
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("verify_rtol is -1"), "{e}");
    Ok(())
}
