//! Device properties and building without a GPU (DeviceProperties,
//! BuildOptions::device_properties): bad JSON is refused as bad data on any
//! machine; where cuDNN 9.8+ loads, a convolution builds for stored H100
//! properties without a GPU and writes a plan blob naming that GPU.
use std::sync::Arc;

use cudnnfe::*;

// An H100 SXM as cuDNN describes it (tests/test_device_properties.cpp has the same).
const H100_JSON: &str = concat!(
    r#"{"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],"#,
    r#""regsPerBlock":65536,"multiProcessorCount":132,"smCountOrigin":0,"warpSize":32,"#,
    r#""maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,"#,
    r#""oversizedSharedMemoryPerBlock":0,"reservedSharedMemoryPerBlock":1024,"#,
    r#""maxRegistersPerSM":65536,"maxCtasPerSM":32,"maxThreadsPerBlock":1024,"#,
    r#""maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,"supportCoopLaunch":1,"#,
    r#""smClockRateKHz":1980000,"memClockRateKHz":2619000,"memoryBusWidth":5120,"#,
    r#""l2CacheSize":52428800,"deviceName":"NVIDIA H100 80GB HBM3","deviceVer":900,"#,
    r#""driverVer":12080,"cudaDeviceId":0,"totalGlobalMem":85031714816}"#
);

#[test]
fn text_that_is_not_json_is_bad_data() {
    let err = DeviceProperties::from_json("deviceVer=900").unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::BadSerializedData,
        "{}",
        err.message()
    );
    assert!(err.message().contains("not JSON"), "{}", err.message());
    let err = DeviceProperties::from_json("[900]").unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::BadSerializedData,
        "{}",
        err.message()
    );
}

#[test]
fn conv_builds_for_stored_properties_without_a_gpu() -> Result<(), Error> {
    let props = match DeviceProperties::from_json(H100_JSON) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::CudnnUnavailable | ErrorKind::NotSupported
                ),
                "{e:?}"
            );
            eprintln!(
                "skipped: cuDNN cannot make device properties here: {}",
                e.message()
            );
            return Ok(());
        }
    };
    assert_eq!(
        DeviceProperties::from_json(&props.serialize()?)?.serialize()?,
        props.serialize()?
    );
    let mut g = Graph::named("deviceless_conv")?;
    let x = g.input("X", DataType::Float, &[2, 8, 10, 10])?;
    let w = g.input("W", DataType::Float, &[16, 8, 3, 3])?;
    let y = g.conv_fprop(x, w, &ConvOptions::default().padding([1, 1]))?;
    g.set_output(y, true)?;
    let built = g.build(&BuildOptions::default().device_properties(props))?;
    assert_eq!(built.target(), Target::Gpu);
    let blob = built.serialize_plan()?;
    assert!(String::from_utf8_lossy(&blob).contains("NVIDIA H100 80GB HBM3"));
    Ok(())
}
