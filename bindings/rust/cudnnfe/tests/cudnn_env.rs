//! CUDNNFE_CUDNN_LIBRARY names the libcudnn to load; a wrong one fails with
//! ErrorKind::CudnnUnavailable and the path tried (never a crash). Alone in
//! its test binary: the variable is read once per process.

#[test]
fn a_missing_cudnn_is_cudnn_unavailable() {
    let path = "/nonexistent/cudnnfe-test/libcudnn.so.9";
    std::env::set_var("CUDNNFE_CUDNN_LIBRARY", path);
    let err = cudnnfe::cudnn_version().expect_err("cuDNN cannot load from a missing path");
    assert_eq!(err.kind, cudnnfe::ErrorKind::CudnnUnavailable, "{err}");
    assert!(
        err.message.contains(path),
        "the message names the path tried: {err}"
    );
}
