//! [`Error`], [`ErrorKind`] and the crate's [`Result`].

use std::ffi::{c_char, CStr};
use std::fmt;

use cudnnfe_sys as sys;

/// What kind of thing went wrong: the C library's `cudnnfe_status_t`.
///
/// The enumeration is `#[non_exhaustive]`: a newer library may add kinds, and
/// a status this crate does not know arrives as [`ErrorKind::Unknown`] with
/// its integer value (never undefined behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `CUDNNFE_STATUS_INVALID_ARGUMENT`: a bad value, an unknown tensor, a
    /// missing or duplicate binding, a buffer of the wrong size.
    InvalidArgument,
    /// `CUDNNFE_STATUS_INVALID_GRAPH`: validation or shape inference failed.
    InvalidGraph,
    /// `CUDNNFE_STATUS_NOT_SUPPORTED`: no engine for this graph, or it needs a
    /// newer cuDNN, GPU or cudnnfe.
    NotSupported,
    /// `CUDNNFE_STATUS_CUDNN_UNAVAILABLE`: libcudnn, libcudart or a GPU could
    /// not be found (the message lists the paths tried).
    CudnnUnavailable,
    /// `CUDNNFE_STATUS_CUDA_ERROR`: a CUDA runtime call failed.
    CudaError,
    /// `CUDNNFE_STATUS_CUDNN_ERROR`: a cuDNN call failed unexpectedly.
    CudnnError,
    /// `CUDNNFE_STATUS_OUT_OF_MEMORY`: a host allocation failed.
    OutOfMemory,
    /// `CUDNNFE_STATUS_BAD_SERIALIZED_DATA`: corrupt or incompatible bytes.
    BadSerializedData,
    /// `CUDNNFE_STATUS_WRONG_STATE`: e.g. executing a graph before building
    /// it. The Rust types ([`Graph`](crate::Graph) versus
    /// [`BuiltGraph`](crate::BuiltGraph)) rule most of these out.
    WrongState,
    /// `CUDNNFE_STATUS_INTERNAL`: a bug in cudnnfe; please report it.
    Internal,
    /// `CUDNNFE_STATUS_VERIFY_FAILED`: verify mode found a result off the CPU
    /// reference ([`BuildOptions::verify`](crate::BuildOptions::verify),
    /// `docs/verify.md`; since 0.4). The message names the graph, node,
    /// plan, cuDNN version, GPU and the worst element.
    VerifyFailed,
    /// A status this version of the crate does not know.
    Unknown(i32),
}

impl ErrorKind {
    /// The kind of a C status; `None` for `CUDNNFE_STATUS_OK`.
    ///
    /// ```
    /// use cudnnfe::ErrorKind;
    /// assert_eq!(ErrorKind::from_status(0), None);
    /// assert_eq!(ErrorKind::from_status(2), Some(ErrorKind::InvalidGraph));
    /// assert_eq!(ErrorKind::from_status(4242), Some(ErrorKind::Unknown(4242)));
    /// ```
    pub fn from_status(status: i32) -> Option<ErrorKind> {
        Some(match status {
            sys::CUDNNFE_STATUS_OK => return None,
            sys::CUDNNFE_STATUS_INVALID_ARGUMENT => ErrorKind::InvalidArgument,
            sys::CUDNNFE_STATUS_INVALID_GRAPH => ErrorKind::InvalidGraph,
            sys::CUDNNFE_STATUS_NOT_SUPPORTED => ErrorKind::NotSupported,
            sys::CUDNNFE_STATUS_CUDNN_UNAVAILABLE => ErrorKind::CudnnUnavailable,
            sys::CUDNNFE_STATUS_CUDA_ERROR => ErrorKind::CudaError,
            sys::CUDNNFE_STATUS_CUDNN_ERROR => ErrorKind::CudnnError,
            sys::CUDNNFE_STATUS_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
            sys::CUDNNFE_STATUS_BAD_SERIALIZED_DATA => ErrorKind::BadSerializedData,
            sys::CUDNNFE_STATUS_WRONG_STATE => ErrorKind::WrongState,
            sys::CUDNNFE_STATUS_INTERNAL => ErrorKind::Internal,
            sys::CUDNNFE_STATUS_VERIFY_FAILED => ErrorKind::VerifyFailed,
            other => ErrorKind::Unknown(other),
        })
    }

    /// The C status value of this kind.
    pub fn status(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => sys::CUDNNFE_STATUS_INVALID_ARGUMENT,
            ErrorKind::InvalidGraph => sys::CUDNNFE_STATUS_INVALID_GRAPH,
            ErrorKind::NotSupported => sys::CUDNNFE_STATUS_NOT_SUPPORTED,
            ErrorKind::CudnnUnavailable => sys::CUDNNFE_STATUS_CUDNN_UNAVAILABLE,
            ErrorKind::CudaError => sys::CUDNNFE_STATUS_CUDA_ERROR,
            ErrorKind::CudnnError => sys::CUDNNFE_STATUS_CUDNN_ERROR,
            ErrorKind::OutOfMemory => sys::CUDNNFE_STATUS_OUT_OF_MEMORY,
            ErrorKind::BadSerializedData => sys::CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
            ErrorKind::WrongState => sys::CUDNNFE_STATUS_WRONG_STATE,
            ErrorKind::Internal => sys::CUDNNFE_STATUS_INTERNAL,
            ErrorKind::VerifyFailed => sys::CUDNNFE_STATUS_VERIFY_FAILED,
            ErrorKind::Unknown(status) => status,
        }
    }

    /// The library's name of the status, e.g. `"CUDNNFE_STATUS_INVALID_GRAPH"`.
    pub fn name(self) -> &'static str {
        // SAFETY: cudnnfe_status_name returns a static NUL-terminated string
        // for every value (never NULL).
        unsafe { static_str(sys::cudnnfe_status_name(self.status())) }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed cudnnfe call: its [`ErrorKind`] and the library's full message,
/// which names the node, the tensor and the rule, e.g.
/// `matmul "mm": a "a" [4,8] has K = 8 but b "b" [6,5] has K = 6; ...`.
///
/// Messages come from the object the call acted on
/// (`cudnnfe_graph_last_error`, `cudnnfe_handle_last_error`). Checks made by
/// this crate before calling the library (a NUL byte in a name, a host buffer
/// of the wrong size) are reported the same way, as
/// [`ErrorKind::InvalidArgument`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// The full message.
    pub message: String,
}

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The full message.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// `Result<T, cudnnfe::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns a status into a `Result`, reading the message with `message` only on
/// failure.
pub(crate) fn check(status: sys::cudnnfe_status_t, message: impl FnOnce() -> String) -> Result<()> {
    match ErrorKind::from_status(status) {
        None => Ok(()),
        Some(kind) => {
            let mut message = message();
            if message.is_empty() {
                message = format!("{} (the library gave no message)", kind.name());
            }
            Err(Error { kind, message })
        }
    }
}

/// Status of a call with no object: the message is the calling thread's.
pub(crate) fn check_thread(status: sys::cudnnfe_status_t) -> Result<()> {
    // SAFETY: cudnnfe_last_error never returns NULL; the string stays valid
    // until the next cudnnfe call on this thread and is copied at once.
    check(status, || unsafe { owned_str(sys::cudnnfe_last_error()) })
}

/// Copies a C string (NULL gives "").
///
/// # Safety
/// `ptr` is NULL or points at a NUL-terminated string valid for the call.
pub(crate) unsafe fn owned_str(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// # Safety
/// `ptr` points at a static NUL-terminated string.
pub(crate) unsafe fn static_str(ptr: *const c_char) -> &'static str {
    if ptr.is_null() {
        return "";
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .unwrap_or("(non-UTF-8 name)")
}
