//! [`Handle`]: an execution context.

use std::fmt;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::error::{check, check_thread, owned_str, Error, ErrorKind, Result};

/// An execution context: one thread's cuDNN handle for one GPU (created at
/// first GPU use) and the message of its last failed execution. Cheap to
/// create; also needed (and enough) for the CPU reference.
///
/// # Threads
///
/// A handle may move to another thread ([`Send`]) but not be used by two at
/// once (not [`Sync`]; executions take `&mut Handle`). To run one
/// [`BuiltGraph`](crate::BuiltGraph) from several threads, give each thread
/// its own handle.
pub struct Handle {
    ptr: NonNull<sys::cudnnfe_handle_t>,
    /// The device it was made for; -1: the current one at first GPU use.
    device: i32,
}

// SAFETY: the C ABI's handle is one thread's context at a time; moving it
// between threads is allowed, sharing is not (no Sync).
unsafe impl Send for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: live pointer from cudnnfe_handle_create, destroyed once.
        unsafe {
            sys::cudnnfe_handle_destroy(self.ptr.as_ptr());
        }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").field("ptr", &self.ptr).finish()
    }
}

impl Handle {
    /// A context for the CUDA device that is current when it first touches
    /// the GPU. Never loads cuDNN (that happens at first GPU use).
    pub fn new() -> Result<Handle> {
        Handle::for_device(-1)
    }

    /// A context for CUDA device `device` (`-1`: the current device at first
    /// use). A negative value below -1 is an invalid argument.
    pub fn for_device(device: i32) -> Result<Handle> {
        crate::ensure_compatible()?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_handle_create(&mut raw, device) })?;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "cudnnfe_handle_create returned OK and NULL",
            )
        })?;
        Ok(Handle { ptr, device })
    }

    /// The CUDA device it was made for; -1: the device current at its first
    /// GPU use.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn device(&self) -> i32 {
        self.device
    }

    pub(crate) fn raw(&mut self) -> *mut sys::cudnnfe_handle_t {
        self.ptr.as_ptr()
    }

    /// Status to `Result` with this handle's message.
    pub(crate) fn check(&self, status: sys::cudnnfe_status_t) -> Result<()> {
        check(status, || self.last_error())
    }

    /// Message of the last failed execution with this handle; `""` if none.
    pub fn last_error(&self) -> String {
        // SAFETY: a live handle; copied at once.
        unsafe { owned_str(sys::cudnnfe_handle_last_error(self.ptr.as_ptr())) }
    }

    /// The raw `cudnnfe_handle_t *`, for calls this crate does not wrap. Do
    /// not destroy it.
    pub fn as_raw(&mut self) -> *mut sys::cudnnfe_handle_t {
        self.raw()
    }
}
