//! The library links and loads (through the build script's rpath, without
//! LD_LIBRARY_PATH) and matches the header the bindings were generated from.
use cudnnfe_sys::*;
use std::ffi::CStr;

#[test]
fn loaded_library_matches_header() {
    let version = unsafe { cudnnfe_version() };
    assert!(
        version >= CUDNNFE_VERSION,
        "library {version} is older than the header"
    );
    let status = unsafe { cudnnfe_check_version(CUDNNFE_VERSION, CUDNNFE_ABI_VERSION) };
    assert_eq!(status, CUDNNFE_STATUS_OK);
}

#[test]
fn enumerations_are_plain_integers() {
    let name = unsafe { CStr::from_ptr(cudnnfe_status_name(CUDNNFE_STATUS_INVALID_GRAPH)) };
    assert_eq!(name.to_str().unwrap(), "CUDNNFE_STATUS_INVALID_GRAPH");
    // A value this header does not know is just an integer.
    let unknown: cudnnfe_status_t = 12345;
    let name = unsafe { CStr::from_ptr(cudnnfe_status_name(unknown)) };
    assert!(!name.to_bytes().is_empty());
    assert_eq!(unsafe { cudnnfe_dtype_size(CUDNNFE_DTYPE_BFLOAT16) }, 2);
    assert_eq!(unsafe { cudnnfe_dtype_size(999) }, 0);
}

#[test]
fn options_init_sets_struct_size() {
    // cudnnfe_sdpa_options_init is a C macro: bindings call the _sized
    // function with their own struct size.
    let mut o = std::mem::MaybeUninit::<cudnnfe_sdpa_options_t>::zeroed();
    let o = unsafe {
        cudnnfe_sdpa_options_init_sized(
            o.as_mut_ptr(),
            std::mem::size_of::<cudnnfe_sdpa_options_t>(),
        );
        o.assume_init()
    };
    assert_eq!(o.struct_size, std::mem::size_of::<cudnnfe_sdpa_options_t>());
    assert_eq!((o.window_left, o.window_right), (-1, -1));
}

#[test]
fn options_init_writes_only_the_callers_struct_size() {
    // A caller built against the first release's smaller struct: the
    // library must not write the fields appended since.
    let old_size = std::mem::offset_of!(cudnnfe_sdpa_options_t, attn_scale_tensor);
    let mut o = std::mem::MaybeUninit::<cudnnfe_sdpa_options_t>::zeroed();
    let o = unsafe {
        let p = o.as_mut_ptr();
        std::ptr::addr_of_mut!((*p).window_left).write(12345);
        std::ptr::addr_of_mut!((*p).dropout_scale).write(777);
        cudnnfe_sdpa_options_init_sized(p, old_size);
        o.assume_init()
    };
    assert_eq!(o.struct_size, old_size);
    assert_eq!(o.attn_scale, 0.0);
    assert_eq!((o.window_left, o.dropout_scale), (12345, 777));
}

#[test]
fn graph_round_trip_through_raw_calls() {
    unsafe {
        let mut g: *mut cudnnfe_graph_t = std::ptr::null_mut();
        assert_eq!(cudnnfe_graph_create(&mut g), CUDNNFE_STATUS_OK);
        let dims = [2i64, 3];
        let mut uid = 0i64;
        let status = cudnnfe_graph_add_tensor(
            g,
            c"x".as_ptr(),
            CUDNNFE_DTYPE_FLOAT,
            2,
            dims.as_ptr(),
            std::ptr::null(),
            &mut uid,
        );
        assert_eq!(status, CUDNNFE_STATUS_OK);
        assert!(uid > 0);
        // A failing call leaves its message on the graph.
        let mut other = 0i64;
        let status = cudnnfe_graph_add_tensor(
            g,
            c"x".as_ptr(),
            CUDNNFE_DTYPE_FLOAT,
            2,
            dims.as_ptr(),
            std::ptr::null(),
            &mut other,
        );
        assert_eq!(status, CUDNNFE_STATUS_INVALID_ARGUMENT);
        assert_eq!(other, 0, "out-parameter untouched on failure");
        let message = CStr::from_ptr(cudnnfe_graph_last_error(g)).to_string_lossy();
        assert!(message.contains("already exists"), "{message}");
        assert_eq!(cudnnfe_graph_destroy(g), CUDNNFE_STATUS_OK);
        assert_eq!(
            cudnnfe_graph_destroy(std::ptr::null_mut()),
            CUDNNFE_STATUS_OK
        );
    }
}
