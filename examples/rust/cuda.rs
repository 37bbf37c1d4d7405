//! Just enough of the CUDA runtime, loaded with `dlopen`, to put data on the
//! GPU for the examples and the GPU tests (standard library only).
//!
//! cudnnfe itself never allocates your buffers: real programs get device
//! memory from their framework or a crate such as `cudarc`, and pass the raw
//! device pointers to `BuiltGraph::execute`.
#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;

type Status = c_int;
type MallocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> Status;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> Status;
type MemcpyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> Status;
type MemsetFn = unsafe extern "C" fn(*mut c_void, c_int, usize) -> Status;
type SynchronizeFn = unsafe extern "C" fn() -> Status;
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
const MEMCPY_HOST_TO_DEVICE: c_int = 1;
const MEMCPY_DEVICE_TO_HOST: c_int = 2;

/// The CUDA runtime functions used here.
pub struct Cuda {
    /// The library that was loaded.
    pub library: String,
    malloc: MallocFn,
    free: FreeFn,
    memcpy: MemcpyFn,
    memset: MemsetFn,
    synchronize: SynchronizeFn,
    error_string: ErrorStringFn,
}

/// Libraries tried in order: `CUDNNFE_CUDART_LIBRARY` (the variable the C
/// library honours too), then CUDA 13 and 12 by soname and usual paths.
fn candidates() -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(path) = std::env::var("CUDNNFE_CUDART_LIBRARY") {
        names.push(path);
    }
    for dir in [
        "",
        "/usr/local/cuda/lib64/",
        "/usr/local/cuda/targets/x86_64-linux/lib/",
    ] {
        for so in ["libcudart.so.13", "libcudart.so.12", "libcudart.so"] {
            names.push(format!("{dir}{so}"));
        }
    }
    names
}

impl Cuda {
    /// Loads the CUDA runtime once; `Err` says what was tried.
    pub fn get() -> Result<&'static Cuda, String> {
        static CUDA: OnceLock<Result<Cuda, String>> = OnceLock::new();
        CUDA.get_or_init(Cuda::load).as_ref().map_err(Clone::clone)
    }

    fn load() -> Result<Cuda, String> {
        let mut tried = Vec::new();
        for name in candidates() {
            let c_name = CString::new(name.clone()).map_err(|e| e.to_string())?;
            // SAFETY: a NUL-terminated path; dlopen has no other precondition.
            let handle = unsafe { dlopen(c_name.as_ptr(), RTLD_NOW) };
            if handle.is_null() {
                // SAFETY: dlerror returns NULL or a valid C string.
                let why = unsafe { dlerror() };
                let why = if why.is_null() {
                    String::new()
                } else {
                    unsafe { CStr::from_ptr(why) }
                        .to_string_lossy()
                        .into_owned()
                };
                tried.push(format!("{name} ({why})"));
                continue;
            }
            let symbol = |s: &str| -> Result<*mut c_void, String> {
                let c = CString::new(s).unwrap();
                // SAFETY: a live handle and a NUL-terminated name.
                let p = unsafe { dlsym(handle, c.as_ptr()) };
                if p.is_null() {
                    Err(format!("{name} has no {s}"))
                } else {
                    Ok(p)
                }
            };
            // SAFETY: the signatures are those of the CUDA runtime API.
            unsafe {
                return Ok(Cuda {
                    library: name.clone(),
                    malloc: std::mem::transmute::<*mut c_void, MallocFn>(symbol("cudaMalloc")?),
                    free: std::mem::transmute::<*mut c_void, FreeFn>(symbol("cudaFree")?),
                    memcpy: std::mem::transmute::<*mut c_void, MemcpyFn>(symbol("cudaMemcpy")?),
                    memset: std::mem::transmute::<*mut c_void, MemsetFn>(symbol("cudaMemset")?),
                    synchronize: std::mem::transmute::<*mut c_void, SynchronizeFn>(symbol(
                        "cudaDeviceSynchronize",
                    )?),
                    error_string: std::mem::transmute::<*mut c_void, ErrorStringFn>(symbol(
                        "cudaGetErrorString",
                    )?),
                });
            }
        }
        Err(format!(
            "no CUDA runtime could be loaded; tried: {}",
            tried.join("; ")
        ))
    }

    fn check(&self, status: Status, what: &str) -> Result<(), String> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static string.
        let text = unsafe { CStr::from_ptr((self.error_string)(status)) }.to_string_lossy();
        Err(format!("{what} failed: CUDA error {status} ({text})"))
    }

    /// Waits for all work on the device (and reports asynchronous errors).
    pub fn synchronize(&self) -> Result<(), String> {
        // SAFETY: no arguments.
        self.check(unsafe { (self.synchronize)() }, "cudaDeviceSynchronize")
    }
}

/// A device allocation, freed on drop.
pub struct DeviceBuffer {
    cuda: &'static Cuda,
    ptr: *mut c_void,
    bytes: usize,
}

impl DeviceBuffer {
    /// `bytes` of zeroed device memory (at least one byte is allocated).
    pub fn zeroed(bytes: usize) -> Result<DeviceBuffer, String> {
        let cuda = Cuda::get()?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        cuda.check(
            unsafe { (cuda.malloc)(&mut ptr, bytes.max(1)) },
            "cudaMalloc",
        )?;
        let buffer = DeviceBuffer { cuda, ptr, bytes };
        // SAFETY: `ptr` holds at least `bytes` bytes.
        cuda.check(unsafe { (cuda.memset)(ptr, 0, bytes) }, "cudaMemset")?;
        Ok(buffer)
    }

    /// A device copy of `data`.
    pub fn from_slice<T: Copy>(data: &[T]) -> Result<DeviceBuffer, String> {
        let bytes = std::mem::size_of_val(data);
        let buffer = DeviceBuffer::zeroed(bytes)?;
        // SAFETY: both sides hold `bytes` bytes.
        buffer.cuda.check(
            unsafe {
                (buffer.cuda.memcpy)(
                    buffer.ptr,
                    data.as_ptr().cast(),
                    bytes,
                    MEMCPY_HOST_TO_DEVICE,
                )
            },
            "cudaMemcpy to device",
        )?;
        Ok(buffer)
    }

    /// Copies the whole buffer back into `out` (which must be as large).
    pub fn copy_to<T: Copy>(&self, out: &mut [T]) -> Result<(), String> {
        let bytes = std::mem::size_of_val(out);
        if bytes != self.bytes {
            return Err(format!(
                "copy_to: {bytes} bytes asked from a buffer of {}",
                self.bytes
            ));
        }
        // SAFETY: both sides hold `bytes` bytes; cudaMemcpy waits for the
        // default stream, where the graphs here run.
        self.cuda.check(
            unsafe {
                (self.cuda.memcpy)(
                    out.as_mut_ptr().cast(),
                    self.ptr,
                    bytes,
                    MEMCPY_DEVICE_TO_HOST,
                )
            },
            "cudaMemcpy to host",
        )
    }

    /// The buffer as a `Vec<T>` (`T::default()`-initialised, then copied).
    pub fn to_vec<T: Copy + Default>(&self) -> Result<Vec<T>, String> {
        let mut out = vec![T::default(); self.bytes / std::mem::size_of::<T>()];
        self.copy_to(&mut out)?;
        Ok(out)
    }

    /// The device pointer.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Size in bytes.
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc, freed once.
        unsafe {
            (self.cuda.free)(self.ptr);
        }
    }
}

// SAFETY: device memory is not tied to a host thread.
unsafe impl Send for DeviceBuffer {}
// SAFETY: &DeviceBuffer only hands out the address.
unsafe impl Sync for DeviceBuffer {}
