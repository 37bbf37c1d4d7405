//! By default (no feature `link`): compiles `loader/cudnnfe_loader.c`, which
//! forwards every C function to libcudnnfe loaded at run time (from
//! `$CUDNNFE_LIBRARY`, else `libcudnnfe.so.0` through the dynamic loader, else
//! the Python wheel's copy in the active Python environment), so a
//! project that depends on the crate needs no CMake, C++ compiler or library
//! at build time (the C compiler Rust links with does). The loader is written
//! by bindings/go/gen_loader.py for the Go binding; loader/ links to it.
//!
//! With feature `link`: finds libcudnnfe, or builds it once per machine, and
//! links it. Order, first hit wins:
//!   1. `CUDNNFE_LIB_DIR`: a directory holding libcudnnfe.so (linked
//!      dynamically; dependents' binaries need it on their rpath or the
//!      loader path, see DEP_CUDNNFE_RPATH);
//!   2. `pkg-config cudnnfe`, an installed library at least as new as this
//!      crate (skipped with `CUDNNFE_FROM_SOURCE=1`; linked dynamically, the
//!      .pc file's libdir);
//!   3. the per-machine cache: `$CUDNNFE_CACHE_DIR`, else
//!      `$XDG_CACHE_HOME/cudnnfe-sys`, else `~/.cache/cudnnfe-sys`, one
//!      directory per crate version and hash of the C sources;
//!   4. a CMake build of the C sources (`csrc/`, which the packaged crate
//!      carries) into that cache, so that every other project and target
//!      directory of this machine finds it at step 3.
//!
//! Steps 3 and 4 link libcudnnfe.a statically (with the C++ runtime
//! dynamically): binaries of crates that depend on `cudnnfe` run anywhere,
//! outside `cargo run` too, with no rpath or LD_LIBRARY_PATH. cuDNN is still
//! loaded at run time (docs/loading.md). Extra CMake configure arguments go
//! in `CUDNNFE_CMAKE_ARGS` (whitespace-separated; part of the cache key).
//!
//! Emits, for dependents' build scripts (`links = "cudnnfe"`):
//!   DEP_CUDNNFE_LIB_DIR  the directory
//!   DEP_CUDNNFE_RPATH    rpath entries separated by ';' (dynamic linking
//!                        only: absolute directory, `$ORIGIN`-relative path
//!                        from target/<profile>/deps, and `$ORIGIN` itself
//!                        for a copied bundle); empty when linked statically
//! and adds the same rpath to this crate's own test binaries.
use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "CUDNNFE_LIB_DIR",
        "CUDNNFE_FROM_SOURCE",
        "CUDNNFE_CMAKE_ARGS",
        "CUDNNFE_CACHE_DIR",
        "XDG_CACHE_HOME",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    if env::var_os("CARGO_FEATURE_LINK").is_none() {
        build_loader(&out_dir);
        return;
    }
    let (lib_dir, how, dynamic) =
        if let Some(dir) = env::var_os("CUDNNFE_LIB_DIR").filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            if !dir.join("libcudnnfe.so").exists() {
                panic!(
                    "cudnnfe-sys: CUDNNFE_LIB_DIR={} holds no libcudnnfe.so",
                    dir.display()
                );
            }
            (dir, "CUDNNFE_LIB_DIR", true)
        } else if let Some(dir) = from_pkg_config() {
            (dir, "pkg-config", true)
        } else {
            let (dir, how) = cached_or_built(&out_dir);
            (dir, how, false)
        };
    let lib_dir = lib_dir.canonicalize().unwrap_or(lib_dir);

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:source={how}");
    if !dynamic {
        println!("cargo:rustc-link-lib=static=cudnnfe");
        for lib in ["stdc++", "dl", "pthread", "m"] {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
        println!("cargo:rpath=");
        return;
    }
    println!("cargo:rustc-link-lib=dylib=cudnnfe");
    let rpath = rpath_entries(&lib_dir, &out_dir);
    println!("cargo:rpath={}", rpath.join(";"));
    for entry in &rpath {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{entry}");
    }
}

/// Compiles the run-time loader into a static library and links it (with libdl).
fn build_loader(out_dir: &Path) {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let source = manifest.join("loader").join("cudnnfe_loader.c");
    let include = manifest.join("csrc").join("include");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-env-changed=CC");
    let object = out_dir.join("cudnnfe_loader.o");
    let archive = out_dir.join("libcudnnfe_loader.a");
    let cc = env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut compile = Command::new(&cc);
    compile
        .args(["-O2", "-fPIC", "-std=gnu11", "-c"])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&object);
    run_tool(compile, "compile the run-time loader");
    let _ = fs::remove_file(&archive);
    let ar = env::var_os("AR").unwrap_or_else(|| "ar".into());
    let mut pack = Command::new(&ar);
    pack.arg("crs").arg(&archive).arg(&object);
    run_tool(pack, "archive the run-time loader");
    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static=cudnnfe_loader");
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:lib_dir={}", out_dir.display());
    println!("cargo:source=run-time loading");
    println!("cargo:rpath=");
}

fn run_tool(mut command: Command, step: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cudnnfe-sys: cannot {step}: {command:?}: {e}"));
    if !output.status.success() {
        panic!(
            "cudnnfe-sys: cannot {step}: {command:?}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
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

/// The C sources: `csrc/` (links into the repository, and real files in
/// the packaged crate), else the repository three levels up.
fn source_root() -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    for root in [manifest.join("csrc"), manifest.join("../../..")] {
        if root.join("CMakeLists.txt").exists() && root.join("include/cudnnfe/cudnnfe.h").exists() {
            return root.canonicalize().unwrap_or(root);
        }
    }
    panic!(
        "cudnnfe-sys: libcudnnfe not found (CUDNNFE_LIB_DIR is unset and pkg-config knows no \
         cudnnfe) and there are no C sources at {}/csrc to build it from",
        manifest.display()
    );
}

/// Hash of the C sources (paths and contents) and the CMake arguments: the
/// cache key, so that an edited source tree never reuses a stale build.
fn source_hash(root: &Path) -> u64 {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, files);
            } else {
                files.push(path);
            }
        }
    }
    let mut files = vec![root.join("CMakeLists.txt")];
    for dir in ["src", "include", "cmake"] {
        walk(&root.join(dir), &mut files);
    }
    files.sort();
    let mut hasher = DefaultHasher::new();
    for file in &files {
        file.strip_prefix(root).unwrap_or(file).hash(&mut hasher);
        fs::read(file).unwrap_or_default().hash(&mut hasher);
    }
    env::var("CUDNNFE_CMAKE_ARGS")
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// The per-machine cache root, or None when no writable place is known.
fn cache_root() -> Option<PathBuf> {
    let root = env::var_os("CUDNNFE_CACHE_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(|d| PathBuf::from(d).join("cudnnfe-sys"))
        })
        .or_else(|| {
            env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|d| PathBuf::from(d).join(".cache/cudnnfe-sys"))
        })?;
    fs::create_dir_all(&root).ok()?;
    Some(root)
}

/// The cached build of these sources, building it first when missing. The
/// build runs in a directory of its own and is renamed into place, so that
/// concurrent builds never see a half-built library.
fn cached_or_built(out_dir: &Path) -> (PathBuf, &'static str) {
    let root = source_root();
    for path in ["CMakeLists.txt", "cmake", "src", "include"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    let key = format!(
        "{}-{:016x}",
        env::var("CARGO_PKG_VERSION").unwrap(),
        source_hash(&root)
    );
    let Some(cache) = cache_root() else {
        return (
            build_with_cmake(&root, &out_dir.join("cmake-build")),
            "CMake build in OUT_DIR",
        );
    };
    let done = cache.join(&key);
    if done.join("libcudnnfe.a").exists() {
        return (done, "cached build");
    }
    let scratch = cache.join(format!("{key}.building-{}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    build_with_cmake(&root, &scratch);
    if fs::rename(&scratch, &done).is_err() {
        // Another build finished first: use its result.
        let _ = fs::remove_dir_all(&scratch);
    }
    (done, "CMake build into the cache")
}

/// Builds libcudnnfe (static and shared) from `root` in `build`.
fn build_with_cmake(root: &Path, build: &Path) -> PathBuf {
    if !build.join("CMakeCache.txt").exists() {
        let mut configure = Command::new("cmake");
        configure.arg("-S").arg(root).arg("-B").arg(build).args([
            "-DCUDNNFE_BUILD_TESTS=OFF",
            "-DCUDNNFE_BUILD_EXAMPLES=OFF",
            "-DCUDNNFE_BUILD_BENCH=OFF",
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
    compile.arg("--build").arg(build).args([
        "--target",
        "cudnnfe_static",
        "cudnnfe",
        "--parallel",
        &jobs,
    ]);
    run(compile, "build");
    build.to_path_buf()
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
