//! Device properties for building without a GPU (`cudnnfe_device_properties_t`,
//! cuDNN 9.8 or later): one GPU as cuDNN describes it, made where the GPU is
//! and loaded from its JSON anywhere with cuDNN. A build given them
//! ([`BuildOptions::device_properties`](crate::BuildOptions)) makes that GPU's
//! plan without using one; write it with `BuiltGraph::serialize_plan` and load
//! it on such a GPU (docs/plans.md).
use std::fmt;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::error::{check_thread, Error, ErrorKind, Result};

/// A GPU's properties (cudnn-frontend's `create_device_properties`).
/// Immutable; share them between builds with an `Arc`.
pub struct DeviceProperties {
    ptr: NonNull<sys::cudnnfe_device_properties_t>,
}

// SAFETY: the properties are immutable once made; the library only reads them.
unsafe impl Send for DeviceProperties {}
unsafe impl Sync for DeviceProperties {}

impl Drop for DeviceProperties {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a create function and is destroyed once.
        unsafe { sys::cudnnfe_device_properties_destroy(self.ptr.as_ptr()) };
    }
}

impl fmt::Debug for DeviceProperties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceProperties({:p})", self.ptr.as_ptr())
    }
}

/// Two are equal when they are the same object.
impl PartialEq for DeviceProperties {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}

impl DeviceProperties {
    fn adopt(raw: *mut sys::cudnnfe_device_properties_t, what: &str) -> Result<Self> {
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(ErrorKind::Internal, format!("{what} returned OK and NULL"))
        })?;
        Ok(DeviceProperties { ptr })
    }

    /// The properties of CUDA device `device` (needs cuDNN and that GPU).
    pub fn of_device(device: i32) -> Result<Self> {
        crate::ensure_compatible()?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_device_properties_create(&mut raw, device) })?;
        Self::adopt(raw, "cudnnfe_device_properties_create")
    }

    /// Properties loaded from what [`serialize`](Self::serialize) wrote (needs
    /// cuDNN, not a GPU); [`ErrorKind::BadSerializedData`] says why bad JSON is
    /// refused.
    pub fn from_json(json: &str) -> Result<Self> {
        crate::ensure_compatible()?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; `json` is read during the call only.
        check_thread(unsafe {
            sys::cudnnfe_device_properties_create_from_json(
                &mut raw,
                json.as_ptr().cast(),
                json.len(),
            )
        })?;
        Self::adopt(raw, "cudnnfe_device_properties_create_from_json")
    }

    /// cuDNN's JSON of the properties.
    pub fn serialize(&self) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: live properties; a size query with no buffer.
        check_thread(unsafe {
            sys::cudnnfe_device_properties_serialize(
                self.ptr.as_ptr(),
                ptr::null_mut(),
                0,
                &mut size,
            )
        })?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds `size` bytes.
        check_thread(unsafe {
            sys::cudnnfe_device_properties_serialize(
                self.ptr.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut size,
            )
        })?;
        buf.truncate(size);
        String::from_utf8(buf).map_err(|_| {
            Error::new(
                ErrorKind::Internal,
                "the device properties' JSON is not UTF-8",
            )
        })
    }

    pub(crate) fn raw(&self) -> *const sys::cudnnfe_device_properties_t {
        self.ptr.as_ptr()
    }
}
