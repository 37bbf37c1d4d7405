//! Which cuDNN and CUDA runtime the C library loaded and why
//! ([`library_info`]), search directories for them, and the library's
//! diagnostics log ([`set_log_callback`]; also `CUDNNFE_LOG=info|debug`).
//!
//! The search order (docs/loading.md): `CUDNNFE_CUDNN_LIBRARY` /
//! `CUDNNFE_CUDART_LIBRARY`; the copy already loaded in the process; the
//! directories added with [`add_library_search_dir`]; the system loader.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Mutex;

use cudnnfe_sys as sys;

use crate::error::{self, owned_str, Error, ErrorKind, Result};

/// The rule that chose a loaded library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LibraryOrigin {
    /// Not loaded: the reason lists every path tried.
    NotLoaded,
    /// The explicit variable (`CUDNNFE_CUDNN_LIBRARY`, `CUDNNFE_CUDART_LIBRARY`).
    Environment,
    /// Already loaded in the process (a framework's own copy).
    AlreadyLoaded,
    /// A directory added with [`add_library_search_dir`].
    SearchDir,
    /// The system loader path.
    System,
    /// A value this crate does not know (a newer library).
    Unknown(i32),
}

impl LibraryOrigin {
    fn from_raw(raw: i32) -> Self {
        match raw {
            sys::CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED => Self::NotLoaded,
            sys::CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT => Self::Environment,
            sys::CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED => Self::AlreadyLoaded,
            sys::CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR => Self::SearchDir,
            sys::CUDNNFE_LIBRARY_ORIGIN_SYSTEM => Self::System,
            other => Self::Unknown(other),
        }
    }
}

/// One loaded (or missing) library: its file, version, origin and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedLibrary {
    /// The file loaded; empty when none.
    pub path: String,
    /// Its version (`91900`, `13000`); 0 when none.
    pub version: i64,
    /// The rule that chose it.
    pub origin: LibraryOrigin,
    /// One line: why this file, or why none loaded.
    pub reason: String,
}

/// What [`library_info`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryInfo {
    /// This libcudnnfe.
    pub cudnnfe_path: String,
    /// cuDNN.
    pub cudnn: LoadedLibrary,
    /// The CUDA runtime.
    pub cudart: LoadedLibrary,
}

/// Loads cuDNN and the CUDA runtime if not yet tried (a missing library is
/// reported, not an error) and says which files were loaded and why.
pub fn library_info() -> Result<LibraryInfo> {
    // SAFETY: an all-zero struct is valid (null pointers, zero integers);
    // the init function then writes the defaults into its declared size.
    let mut raw: sys::cudnnfe_library_info_t = unsafe { std::mem::zeroed() };
    unsafe {
        sys::cudnnfe_library_info_init_sized(&mut raw, std::mem::size_of_val(&raw));
    }
    // SAFETY: a valid, initialized out-struct.
    error::check_thread(unsafe { sys::cudnnfe_library_info(&mut raw) })?;
    // SAFETY: the library's strings are NUL-terminated and live for the
    // process; they are copied here.
    let text = |p: *const c_char| unsafe { owned_str(p) };
    Ok(LibraryInfo {
        cudnnfe_path: text(raw.cudnnfe_path),
        cudnn: LoadedLibrary {
            path: text(raw.cudnn_path),
            version: raw.cudnn_version,
            origin: LibraryOrigin::from_raw(raw.cudnn_origin),
            reason: text(raw.cudnn_reason),
        },
        cudart: LoadedLibrary {
            path: text(raw.cudart_path),
            version: raw.cudart_version,
            origin: LibraryOrigin::from_raw(raw.cudart_origin),
            reason: text(raw.cudart_reason),
        },
    })
}

/// A run-time library that [`add_library_search_dir`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuntimeLibrary {
    /// libcudnn.so.9.
    Cudnn,
    /// libcudart.so.13 or .12.
    Cudart,
}

/// Adds a directory to search for `library` after the explicit variable and
/// the copy already loaded. [`ErrorKind::WrongState`] once that library has
/// been looked for.
pub fn add_library_search_dir(library: RuntimeLibrary, directory: &str) -> Result<()> {
    let raw = match library {
        RuntimeLibrary::Cudnn => sys::CUDNNFE_LIBRARY_CUDNN,
        RuntimeLibrary::Cudart => sys::CUDNNFE_LIBRARY_CUDART,
    };
    let dir = CString::new(directory).map_err(|_| {
        Error::new(
            ErrorKind::InvalidArgument,
            "search directory contains a NUL byte",
        )
    })?;
    // SAFETY: a NUL-terminated string the library copies.
    error::check_thread(unsafe { sys::cudnnfe_library_add_search_dir(raw, dir.as_ptr()) })
}

/// A level of the diagnostics log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Nothing.
    Off,
    /// Libraries loaded, build stages with times, plan-cache hits and misses.
    Info,
    /// Info plus the heuristics' engine lists and refusals.
    Debug,
}

impl LogLevel {
    fn raw(self) -> i32 {
        match self {
            Self::Off => sys::CUDNNFE_LOG_LEVEL_OFF,
            Self::Info => sys::CUDNNFE_LOG_LEVEL_INFO,
            Self::Debug => sys::CUDNNFE_LOG_LEVEL_DEBUG,
        }
    }
}

type LogFn = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

static LOG_FN: Mutex<Option<LogFn>> = Mutex::new(None);

unsafe extern "C" fn trampoline(level: i32, message: *const c_char, _user: *mut c_void) {
    if message.is_null() {
        return;
    }
    // SAFETY: the library passes a NUL-terminated line valid for the call.
    let line = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    let level = if level == sys::CUDNNFE_LOG_LEVEL_DEBUG {
        LogLevel::Debug
    } else {
        LogLevel::Info
    };
    // A panic must not unwind into C: catch it and drop the line.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Ok(guard) = LOG_FN.lock() {
            if let Some(f) = guard.as_ref() {
                f(level, &line);
            }
        }
    }));
}

/// Sends the library's log lines at `level` and below to `callback` (`None`:
/// standard error), overriding `CUDNNFE_LOG`. The callback may run on any
/// thread, one call at a time.
pub fn set_log_callback(
    callback: Option<Box<dyn Fn(LogLevel, &str) + Send + Sync>>,
    level: LogLevel,
) -> Result<()> {
    let has_callback = callback.is_some();
    *LOG_FN.lock().unwrap_or_else(|e| e.into_inner()) = callback;
    let c_callback: sys::cudnnfe_log_callback_t =
        if has_callback { Some(trampoline) } else { None };
    // SAFETY: the trampoline lives for the program; user_data is unused.
    error::check_thread(unsafe {
        sys::cudnnfe_set_log_callback(c_callback, std::ptr::null_mut(), level.raw())
    })
}
