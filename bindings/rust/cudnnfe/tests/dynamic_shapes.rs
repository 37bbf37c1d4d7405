//! Execute-time shapes on the CPU reference (build option
//! override_shape_enabled, BuiltGraph::execute_with_overrides): a matmul run
//! at other shapes than it was built with, against plain Rust.
use std::ffi::c_void;

use cudnnfe::*;

#[test]
fn matmul_runs_at_overridden_shapes() -> Result<(), Error> {
    let mut g = Graph::named("dyn")?;
    let a = g.input("a", DataType::Float, &[1, 4, 8])?;
    let b = g.input("b", DataType::Float, &[1, 8, 6])?;
    let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
    g.set_output(c, true)?;
    let built = g.build(&BuildOptions::cpu_reference().override_shape_enabled(true))?;
    let (m, k, n) = (3usize, 5usize, 2usize);
    let x: Vec<f32> = (0..m * k).map(|i| i as f32 * 0.5 - 2.0).collect();
    let y: Vec<f32> = (0..k * n).map(|i| 1.0 - i as f32 * 0.25).collect();
    let mut out = vec![f32::NAN; m * n];
    let (mi, ki, ni) = (m as i64, k as i64, n as i64);
    let overrides = [
        ShapeOverride::new(a, &[1, mi, ki], &[mi * ki, ki, 1]),
        ShapeOverride::new(b, &[1, ki, ni], &[ki * ni, ni, 1]),
        ShapeOverride::new(c, &[1, mi, ni], &[mi * ni, ni, 1]),
    ];
    let bindings = [
        DeviceBinding::new(a, x.as_ptr() as *mut c_void),
        DeviceBinding::new(b, y.as_ptr() as *mut c_void),
        DeviceBinding::new(c, out.as_mut_ptr().cast()),
    ];
    let mut h = Handle::new()?;
    // SAFETY: host buffers spanning the overridden layouts, alive for the
    // call; the CPU reference needs no workspace or stream.
    unsafe {
        built.execute_with_overrides(
            &mut h,
            &bindings,
            &overrides,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )?
    };
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| x[i * k + p] * y[p * n + j]).sum();
            assert!((out[i * n + j] - want).abs() < 1e-4, "c[{i}][{j}]");
        }
    }
    // A shape change without an override for the output is refused by name.
    // SAFETY: as above; the library refuses before touching the buffers.
    let err = unsafe {
        built.execute_with_overrides(
            &mut h,
            &bindings,
            &overrides[..2],
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )
    }
    .unwrap_err();
    assert!(err.to_string().contains("give it an override too"), "{err}");
    Ok(())
}
