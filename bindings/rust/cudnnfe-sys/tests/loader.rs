//! The run-time loader's search (loader/cudnnfe_loader.c, the default without
//! feature `link`): the Python wheel's copy is the last fallback, and a
//! failure lists every place tried. The loader looks once per process, so
//! each case re-runs this test binary as a child with a made-up environment:
//! no CUDNNFE_LIBRARY, no LD_LIBRARY_PATH, a PATH without python3, and a fake
//! Python environment in a temporary directory. The library to plant there is
//! the one the tests load: $CUDNNFE_LIBRARY.
#![cfg(not(feature = "link"))]

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use cudnnfe_sys::*;

/// Set in a child: what it reports (the test that spawned it).
const CHILD: &str = "CUDNNFE_LOADER_TEST_CHILD";
/// Starts a child's report, which follows the harness's "test ... " on its line.
const REPORT: &str = "loader report: ";

/// In a child: one line saying which library loaded, or why none did.
fn report() {
    // SAFETY: plain calls; strings are copied at once.
    unsafe {
        if cudnnfe_version() == 0 {
            let why = CStr::from_ptr(cudnnfe_last_error()).to_string_lossy();
            println!("{REPORT}FAILED {why}");
            return;
        }
        let mut info = std::mem::MaybeUninit::<cudnnfe_library_info_t>::zeroed();
        cudnnfe_library_info_init_sized(
            info.as_mut_ptr(),
            std::mem::size_of::<cudnnfe_library_info_t>(),
        );
        let mut info = info.assume_init();
        assert_eq!(cudnnfe_library_info(&mut info), CUDNNFE_STATUS_OK);
        let path = CStr::from_ptr(info.cudnnfe_path).to_string_lossy();
        println!("{REPORT}LOADED {path}");
    }
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("cudnnfe-loader-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `test` in a child whose environment holds only `env` (and the child
/// marker), returning its report line.
fn child(test: &str, env: &[(&str, &Path)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(CHILD, "1");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once(REPORT).map(|(_, report)| report.to_string()))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"))
}

/// The library the tests load, or None (and why) when it is unknown or
/// when the dynamic loader finds an installed one anyway (a child with no
/// Python environment around it loads something).
fn built_library(test: &str) -> Option<PathBuf> {
    let Some(lib) = std::env::var_os("CUDNNFE_LIBRARY") else {
        eprintln!("SKIPPED {test}: CUDNNFE_LIBRARY (the built library) is not set");
        return None;
    };
    let lib = std::fs::canonicalize(lib).expect("CUDNNFE_LIBRARY exists");
    let tmp = TempDir::new(&format!("probe-{test}"));
    let line = child(test, &[("HOME", &tmp.0), ("PATH", &tmp.0)]);
    if let Some(installed) = line.strip_prefix("LOADED ") {
        eprintln!(
            "SKIPPED {test}: the dynamic loader finds an installed libcudnnfe first ({installed})"
        );
        return None;
    }
    Some(lib)
}

/// `<prefix>/lib/python3.12/site-packages/cudnnfe/lib/libcudnnfe.so.0`, a
/// link to `library`, as `pip install cudnnfe` lays it out.
fn plant_wheel(prefix: &Path, library: &Path) -> PathBuf {
    let dir = prefix.join("lib/python3.12/site-packages/cudnnfe/lib");
    std::fs::create_dir_all(&dir).unwrap();
    let planted = dir.join("libcudnnfe.so.0");
    std::os::unix::fs::symlink(library, &planted).unwrap();
    planted
}

#[test]
fn wheel_copy_in_virtual_env_is_the_last_fallback() {
    let test = "wheel_copy_in_virtual_env_is_the_last_fallback";
    if std::env::var_os(CHILD).is_some() {
        return report();
    }
    let Some(library) = built_library(test) else {
        return;
    };
    let tmp = TempDir::new("venv");
    let venv = tmp.0.join("venv");
    let planted = plant_wheel(&venv, &library);
    let line = child(
        test,
        &[("VIRTUAL_ENV", &venv), ("HOME", &tmp.0), ("PATH", &tmp.0)],
    );
    assert_eq!(line, format!("LOADED {}", planted.display()));
}

#[test]
fn wheel_copy_beside_python3_on_path_is_found() {
    let test = "wheel_copy_beside_python3_on_path_is_found";
    if std::env::var_os(CHILD).is_some() {
        return report();
    }
    let Some(library) = built_library(test) else {
        return;
    };
    // A virtualenv that is not activated (no VIRTUAL_ENV) but whose bin/ is
    // first on PATH, as `uv run` or a PATH set by hand gives.
    let tmp = TempDir::new("path");
    let env = tmp.0.join("env");
    let planted = plant_wheel(&env, &library);
    let bin = env.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let python = bin.join("python3");
    std::fs::write(&python, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let line = child(test, &[("PATH", &bin), ("HOME", &tmp.0)]);
    assert_eq!(line, format!("LOADED {}", planted.display()));
}

#[test]
fn nothing_found_lists_every_place_tried() {
    let test = "nothing_found_lists_every_place_tried";
    if std::env::var_os(CHILD).is_some() {
        return report();
    }
    if built_library(test).is_none() {
        return;
    }
    let tmp = TempDir::new("none");
    let (venv, conda) = (tmp.0.join("venv"), tmp.0.join("conda"));
    let line = child(
        test,
        &[
            ("VIRTUAL_ENV", &venv),
            ("CONDA_PREFIX", &conda),
            ("HOME", &tmp.0),
            ("PATH", &tmp.0),
        ],
    );
    for part in [
        "FAILED could not load libcudnnfe; tried: CUDNNFE_LIBRARY (not set)",
        "libcudnnfe.so.0 (",
        &format!(
            "{}/lib*/python3*/*-packages/cudnnfe/lib/libcudnnfe.so.0 (no such file)",
            venv.display()
        ),
        &format!(
            "{}/lib*/python3*/*-packages/cudnnfe/lib/libcudnnfe.so.0 (no such file)",
            conda.display()
        ),
        &format!(
            "{}/.local/lib*/python3*/*-packages/cudnnfe/lib/libcudnnfe.so.0",
            tmp.0.display()
        ),
        "Set CUDNNFE_LIBRARY",
        "pip install the cudnnfe wheel",
    ] {
        assert!(line.contains(part), "{line:?} lacks {part:?}");
    }
}

#[test]
fn explicit_path_is_the_only_one_tried() {
    let test = "explicit_path_is_the_only_one_tried";
    if std::env::var_os(CHILD).is_some() {
        return report();
    }
    let Some(library) = built_library(test) else {
        return;
    };
    // A wheel copy that would load, and a wrong explicit path: an error.
    let tmp = TempDir::new("explicit");
    let venv = tmp.0.join("venv");
    plant_wheel(&venv, &library);
    let wrong = tmp.0.join("nonexistent/libcudnnfe.so.0");
    let line = child(
        test,
        &[
            ("CUDNNFE_LIBRARY", &wrong),
            ("VIRTUAL_ENV", &venv),
            ("HOME", &tmp.0),
            ("PATH", &tmp.0),
        ],
    );
    assert!(
        line.starts_with("FAILED could not load libcudnnfe from CUDNNFE_LIBRARY"),
        "{line}"
    );
    assert!(line.contains(&wrong.display().to_string()), "{line}");
    assert!(line.contains("nothing else is tried"), "{line}");
}
