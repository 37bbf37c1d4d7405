//! Puts libcudnnfe's directory in the rpath of this crate's test, example and
//! doc-test binaries, so they run without LD_LIBRARY_PATH, also after the
//! checkout (with its target directory) is copied elsewhere. The entries come
//! from cudnnfe-sys's build script (DEP_CUDNNFE_RPATH); Cargo does not pass a
//! dependency's link arguments on, so a binary crate of yours that wants the
//! same does this too, or sets LD_LIBRARY_PATH (see README.md).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_CUDNNFE_RPATH");
    if let Ok(rpath) = std::env::var("DEP_CUDNNFE_RPATH") {
        for entry in rpath.split(';').filter(|e| !e.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{entry}");
        }
    }
}
