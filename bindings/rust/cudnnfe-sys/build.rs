//! Finds libcudnnfe and links it dynamically.
//!
//! Order: `CUDNNFE_LIB_DIR` (a directory holding libcudnnfe.so), then
//! `pkg-config cudnnfe` (skipped when `CUDNNFE_FROM_SOURCE=1`, or when the
//! installed version is older than this crate), else a CMake build of this
//! repository into `OUT_DIR` (extra configure arguments in
//! `CUDNNFE_CMAKE_ARGS`, whitespace-separated).
//!
//! Emits, for dependents' build scripts (`links = "cudnnfe"`):
//!   DEP_CUDNNFE_LIB_DIR  the directory
//!   DEP_CUDNNFE_RPATH    rpath entries separated by ';' (absolute directory,
//!                        `$ORIGIN`-relative path from target/<profile>/deps,
//!                        and `$ORIGIN` itself for a copied bundle)
//! and adds the same rpath to this crate's own test binaries.
use std::env;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "CUDNNFE_LIB_DIR",
        "CUDNNFE_FROM_SOURCE",
        "CUDNNFE_CMAKE_ARGS",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let (lib_dir, how) = if let Some(dir) = env::var_os("CUDNNFE_LIB_DIR").filter(|d| !d.is_empty())
    {
        let dir = PathBuf::from(dir);
        if !dir.join("libcudnnfe.so").exists() {
            panic!(
                "cudnnfe-sys: CUDNNFE_LIB_DIR={} holds no libcudnnfe.so",
                dir.display()
            );
        }
        (dir, "CUDNNFE_LIB_DIR")
    } else if let Some(dir) = from_pkg_config() {
        (dir, "pkg-config")
    } else {
        (build_with_cmake(&out_dir), "CMake build of this repository")
    };
    let lib_dir = lib_dir.canonicalize().unwrap_or(lib_dir);

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=cudnnfe");
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:source={how}");
    let rpath = rpath_entries(&lib_dir, &out_dir);
    println!("cargo:rpath={}", rpath.join(";"));
    for entry in &rpath {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{entry}");
    }
}

/// The libdir of an installed cudnnfe at least as new as this crate.
fn from_pkg_config() -> Option<PathBuf> {
    if env::var_os("CUDNNFE_FROM_SOURCE").is_some_and(|v| v == "1") {
        return None;
    }
    let pkg_config = env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into());
    let version = env::var("CARGO_PKG_VERSION").unwrap();
    let ok = Command::new(&pkg_config)
        .args([
            "--exists",
            &format!("--atleast-version={version}"),
            "cudnnfe",
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return None;
    }
    let out = Command::new(&pkg_config)
        .args(["--variable=libdir", "cudnnfe"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    if !out.status.success() || dir.is_empty() {
        return None;
    }
    let dir = PathBuf::from(dir);
    if dir.join("libcudnnfe.so").exists() {
        Some(dir)
    } else {
        println!(
            "cargo:warning=pkg-config names {} for cudnnfe but it holds no libcudnnfe.so; building from source",
            dir.display()
        );
        None
    }
}

/// Builds the shared library from this repository (bindings/rust/cudnnfe-sys
/// lives three levels below the root) and returns the directory holding it.
fn build_with_cmake(out_dir: &Path) -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../../..");
    let root = root.canonicalize().unwrap_or(root);
    if !root.join("CMakeLists.txt").exists() || !root.join("include/cudnnfe/cudnnfe.h").exists() {
        panic!(
            "cudnnfe-sys: libcudnnfe not found (CUDNNFE_LIB_DIR is unset and pkg-config knows no \
             cudnnfe) and there is no cudnnfe source tree at {} to build it from",
            root.display()
        );
    }
    for path in ["CMakeLists.txt", "cmake", "src", "include"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    let build = out_dir.join("cmake-build");
    if !build.join("CMakeCache.txt").exists() {
        let mut configure = Command::new("cmake");
        configure.arg("-S").arg(&root).arg("-B").arg(&build).args([
            "-DCUDNNFE_BUILD_TESTS=OFF",
            "-DCUDNNFE_BUILD_EXAMPLES=OFF",
            "-DCMAKE_BUILD_TYPE=Release",
        ]);
        if env::var_os("CMAKE_GENERATOR").is_none() && has_ninja() {
            configure.args(["-G", "Ninja"]);
        }
        if let Ok(extra) = env::var("CUDNNFE_CMAKE_ARGS") {
            configure.args(extra.split_whitespace());
        }
        run(configure, "configure");
    }
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".into());
    let mut compile = Command::new("cmake");
    compile
        .arg("--build")
        .arg(&build)
        .args(["--target", "cudnnfe", "--parallel", &jobs]);
    run(compile, "build");
    build
}

fn has_ninja() -> bool {
    Command::new("ninja")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn run(mut command: Command, step: &str) {
    let output = command.output().unwrap_or_else(|e| {
        panic!("cudnnfe-sys: cannot run {command:?} ({e}); is CMake installed?")
    });
    if !output.status.success() {
        panic!(
            "cudnnfe-sys: CMake {step} of libcudnnfe failed: {command:?}\n--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// rpath entries that find `lib_dir` from binaries in target/<profile>/deps
/// and target/<profile>/examples: the absolute path, the same path relative
/// to `$ORIGIN` (survives moving the whole checkout), and `$ORIGIN` itself
/// (a directory where the binaries and libcudnnfe.so.* were copied together).
fn rpath_entries(lib_dir: &Path, out_dir: &Path) -> Vec<String> {
    let mut entries = vec![lib_dir.display().to_string()];
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
    let profile = out_dir.ancestors().nth(3);
    let in_build = out_dir
        .ancestors()
        .nth(2)
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "build");
    if let (Some(profile), true) = (profile, in_build) {
        let profile = profile
            .canonicalize()
            .unwrap_or_else(|_| profile.to_path_buf());
        if let Some(rel) = relative_path(&profile.join("deps"), lib_dir) {
            entries.push(format!("$ORIGIN/{}", rel.display()));
        }
    }
    entries.push("$ORIGIN".to_string());
    entries
}

/// `to` relative to `from` (both absolute).
fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    if !from.is_absolute() || !to.is_absolute() {
        return None;
    }
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for part in &to[common..] {
        rel.push(part.as_os_str());
    }
    Some(rel)
}
