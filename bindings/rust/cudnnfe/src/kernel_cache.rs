//! The kernel cache for dynamic shapes (`cudnnfe_kernel_cache_t`): GPU builds
//! of graphs of one topology and different shapes share compiled kernels
//! through it ([`BuildOptions::kernel_cache`](crate::BuildOptions)).
use std::fmt;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::error::{check_thread, Error, ErrorKind, Result};

/// A kernel cache (cudnn-frontend's `create_kernel_cache`). Share it between
/// builds with an `Arc`; plans built with it keep what they need after it
/// is dropped.
pub struct KernelCache {
    ptr: NonNull<sys::cudnnfe_kernel_cache_t>,
}

// SAFETY: the library documents the kernel cache as thread-safe.
unsafe impl Send for KernelCache {}
unsafe impl Sync for KernelCache {}

impl Drop for KernelCache {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cudnnfe_kernel_cache_create and is
        // destroyed once.
        unsafe { sys::cudnnfe_kernel_cache_destroy(self.ptr.as_ptr()) };
    }
}

impl fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelCache({:p})", self.ptr.as_ptr())
    }
}

/// Two caches are equal when they are the same cache.
impl PartialEq for KernelCache {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}

impl KernelCache {
    /// An empty cache.
    pub fn new() -> Result<KernelCache> {
        crate::ensure_compatible()?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_kernel_cache_create(&mut raw) })?;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "cudnnfe_kernel_cache_create returned OK and NULL",
            )
        })?;
        Ok(KernelCache { ptr })
    }

    /// cuDNN's JSON of the cache ([`ErrorKind::WrongState`] while it is
    /// empty).
    pub fn serialize(&self) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: a live cache; a size query with no buffer.
        check_thread(unsafe {
            sys::cudnnfe_kernel_cache_serialize(self.ptr.as_ptr(), ptr::null_mut(), 0, &mut size)
        })?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds `size` bytes.
        check_thread(unsafe {
            sys::cudnnfe_kernel_cache_serialize(
                self.ptr.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut size,
            )
        })?;
        buf.truncate(size);
        String::from_utf8(buf)
            .map_err(|_| Error::new(ErrorKind::Internal, "the kernel cache's JSON is not UTF-8"))
    }

    /// Loads what [`serialize`](Self::serialize) wrote into this empty cache.
    pub fn deserialize(&self, json: &str) -> Result<()> {
        // SAFETY: a live cache; `json` is read during the call only.
        check_thread(unsafe {
            sys::cudnnfe_kernel_cache_deserialize(
                self.ptr.as_ptr(),
                json.as_ptr().cast(),
                json.len(),
            )
        })
    }

    pub(crate) fn raw(&self) -> *mut sys::cudnnfe_kernel_cache_t {
        self.ptr.as_ptr()
    }
}
