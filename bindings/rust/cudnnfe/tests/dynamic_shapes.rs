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

#[test]
fn kernel_cache_on_the_cpu() -> Result<(), Error> {
    let cache = std::sync::Arc::new(KernelCache::new()?);
    assert_eq!(cache.serialize().unwrap_err().kind(), ErrorKind::WrongState);
    assert_eq!(
        cache.deserialize("not json").unwrap_err().kind(),
        ErrorKind::BadSerializedData
    );
    cache.deserialize("{\"kernels\": []}")?;
    assert_eq!(cache.serialize()?, "{\"kernels\": []}");
    assert_eq!(
        cache.deserialize("{}").unwrap_err().kind(),
        ErrorKind::WrongState
    );
    // A CPU reference build takes the cache (and leaves it as it was).
    let mut g = Graph::named("kc")?;
    let x = g.input("x", DataType::Float, &[2])?;
    let y = g.unary(PointwiseMode::Neg, x)?;
    g.set_output(y, true)?;
    let built = g.build(&BuildOptions::cpu_reference().kernel_cache(cache.clone()))?;
    let mut out = [0f32; 2];
    built.execute_host(
        &mut Handle::new()?,
        &[
            (x, HostBuffer::input(&[1.0f32, -2.0])),
            (y, HostBuffer::output(&mut out)),
        ],
    )?;
    assert_eq!(out, [-1.0, 2.0]);
    Ok(())
}
