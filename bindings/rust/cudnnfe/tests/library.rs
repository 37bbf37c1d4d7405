//! The safe view of library discovery and the log callback. The search
//! order itself is tested in C with fake libraries (tests/discovery).
use std::sync::{Arc, Mutex};

use cudnnfe::*;

#[test]
fn library_info_reports_this_library_and_refuses_late_search_dirs() -> Result<(), Error> {
    let info = library_info()?;
    // The shared library, or this test binary when cudnnfe-sys linked
    // libcudnnfe.a (its cached source build).
    let exe = std::env::current_exe().expect("the test binary's path");
    assert!(
        info.cudnnfe_path.contains("libcudnnfe.so")
            || std::path::Path::new(&info.cudnnfe_path).canonicalize().ok()
                == exe.canonicalize().ok(),
        "{}",
        info.cudnnfe_path
    );
    match info.cudnn.origin {
        LibraryOrigin::NotLoaded => {
            assert!(info.cudnn.path.is_empty() && !info.cudnn.reason.is_empty())
        }
        _ => assert!(info.cudnn.version >= 90000, "{info:?}"),
    }
    let err = add_library_search_dir(RuntimeLibrary::Cudnn, "/late").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongState);
    assert!(err.message().contains("already been looked for"), "{err}");
    Ok(())
}

#[test]
fn log_callback_receives_build_lines() -> Result<(), Error> {
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&lines);
    set_log_callback(
        Some(Box::new(move |_level, line| {
            sink.lock().unwrap().push(line.to_string())
        })),
        LogLevel::Debug,
    )?;
    let mut g = Graph::named("logged_from_rust")?;
    let x = g.input("x", DataType::Float, &[2, 3])?;
    let y = g.pointwise(PointwiseMode::Add, &[x, x], &PointwiseOptions::default())?;
    g.set_output(y, true)?;
    let _built = g.build(&BuildOptions::cpu_reference())?;
    set_log_callback(None, LogLevel::Off)?;
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("build \"logged_from_rust\": CPU reference plan")),
        "{lines:?}"
    );
    Ok(())
}
