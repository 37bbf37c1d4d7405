//! [`BuiltGraph`]: an immutable, runnable plan, and its execution.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::error::{check_thread, owned_str, Error, Result};
use crate::graph::graph_queries;
use crate::handle::Handle;
use crate::types::{DataType, Shape, Target, Tensor};

/// What a bound tensor's buffer must be, read once at build.
#[derive(Clone, Debug)]
struct BoundTensor {
    tensor: Tensor,
    name: String,
    dtype: DataType,
    shape: Shape,
    /// Bytes of memory the tensor spans.
    bytes: usize,
    /// Written by the graph: a host buffer for it must be writable.
    is_output: bool,
}

/// A built graph: an immutable plan for the GPU (cuDNN) or the CPU reference.
///
/// Made by [`Graph::build`](crate::Graph::build). It offers the read-only
/// queries of a graph, the plan's properties, serialization, and execution:
/// [`execute_host`](Self::execute_host) on host slices for the CPU
/// reference, [`execute`](Self::execute) and
/// [`execute_ordered`](Self::execute_ordered) with device pointers for the GPU.
///
/// # Threads
///
/// `BuiltGraph` is [`Send`] and [`Sync`]: the C ABI allows executing one
/// built graph from many threads at once, each thread with its own
/// [`Handle`] (which the `&mut Handle` parameters enforce) and workspace.
/// Share it with `Arc<BuiltGraph>` or scoped threads.
///
/// Messages of failed queries are read from the calling thread's slot
/// (`cudnnfe_last_error`) rather than from the graph, because another thread
/// may overwrite the graph's message at any time; messages of failed
/// executions come from the [`Handle`].
pub struct BuiltGraph {
    ptr: NonNull<sys::cudnnfe_graph_t>,
    target: Target,
    workspace_size: usize,
    plan_name: String,
    /// Bound tensors in the library's order (ascending UID).
    bound: Vec<BoundTensor>,
    bound_tensors: Vec<Tensor>,
}

// SAFETY: a built graph is immutable and may be executed and queried from
// many threads at once (the C ABI's thread rules); destruction needs
// ownership, so it cannot race with a use.
unsafe impl Send for BuiltGraph {}
// SAFETY: as above.
unsafe impl Sync for BuiltGraph {}

impl Drop for BuiltGraph {
    fn drop(&mut self) {
        // SAFETY: the pointer is live and destroyed once.
        unsafe {
            sys::cudnnfe_graph_destroy(self.ptr.as_ptr());
        }
    }
}

impl fmt::Debug for BuiltGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltGraph")
            .field("target", &self.target)
            .field("plan_name", &self.plan_name)
            .field("workspace_size", &self.workspace_size)
            .field("bound_tensors", &self.bound_tensors)
            .finish()
    }
}

impl BuiltGraph {
    /// Takes ownership of a graph the library has just built.
    pub(crate) fn from_built(ptr: NonNull<sys::cudnnfe_graph_t>) -> Result<BuiltGraph> {
        let mut built = BuiltGraph {
            ptr,
            target: Target::Auto,
            workspace_size: 0,
            plan_name: String::new(),
            bound: Vec::new(),
            bound_tensors: Vec::new(),
        };
        let mut target = 0i32;
        let mut workspace = 0i64;
        let mut plan_name: *const std::ffi::c_char = ptr::null();
        // SAFETY: a live, built graph and valid out-pointers; the plan name
        // is copied at once.
        unsafe {
            built.check(sys::cudnnfe_graph_get_target(built.raw(), &mut target))?;
            built.check(sys::cudnnfe_graph_get_workspace_size(
                built.raw(),
                &mut workspace,
            ))?;
            built.check(sys::cudnnfe_graph_get_plan_name(
                built.raw(),
                &mut plan_name,
            ))?;
            built.plan_name = owned_str(plan_name);
        }
        built.target = Target::from_raw(target);
        built.workspace_size = usize::try_from(workspace).unwrap_or(0);

        let mut count = 0usize;
        // SAFETY: size query, then a buffer of `count` UIDs.
        built.check(unsafe {
            sys::cudnnfe_graph_get_bound_uids(built.raw(), ptr::null_mut(), 0, &mut count)
        })?;
        let mut uids = vec![0i64; count];
        built.check(unsafe {
            sys::cudnnfe_graph_get_bound_uids(
                built.raw(),
                uids.as_mut_ptr(),
                uids.len(),
                &mut count,
            )
        })?;
        uids.truncate(count);
        for uid in uids {
            let tensor = Tensor::from_uid(uid);
            let shape = built.shape(tensor)?;
            let dtype = built.dtype(tensor)?;
            // Written by the graph: an op output marked as an output, which
            // includes a tensor made with `Graph::input` that an op took as
            // its output (sdpa's score_max, sdpa_backward's dsink_token).
            let mut kind = 0;
            // SAFETY: a live graph and a valid out-pointer.
            built.check(unsafe { sys::cudnnfe_tensor_get_kind(built.raw(), uid, &mut kind) })?;
            built.bound.push(BoundTensor {
                tensor,
                name: built.tensor_name(tensor)?,
                dtype,
                bytes: shape.element_span() * dtype.size(),
                shape,
                is_output: kind == sys::CUDNNFE_TENSOR_KIND_OUTPUT,
            });
            built.bound_tensors.push(tensor);
        }
        Ok(built)
    }

    pub(crate) fn raw(&self) -> *mut sys::cudnnfe_graph_t {
        self.ptr.as_ptr()
    }

    /// Reads the selected plan's workspace size and name again (after
    /// selection or autotune changed the plan).
    pub(crate) fn refresh_plan(&mut self) -> Result<()> {
        let mut workspace = 0i64;
        let mut plan_name: *const std::ffi::c_char = ptr::null();
        // SAFETY: a live, built graph and valid out-pointers; the name is
        // copied at once.
        unsafe {
            self.check(sys::cudnnfe_graph_get_workspace_size(
                self.raw(),
                &mut workspace,
            ))?;
            self.check(sys::cudnnfe_graph_get_plan_name(self.raw(), &mut plan_name))?;
            self.plan_name = owned_str(plan_name);
        }
        self.workspace_size = usize::try_from(workspace).unwrap_or(0);
        Ok(())
    }

    /// Status to `Result`, with the calling thread's message (see the type's
    /// documentation for why not the graph's).
    fn check(&self, status: sys::cudnnfe_status_t) -> Result<()> {
        check_thread(status)
    }

    /// The raw `cudnnfe_graph_t *` of the built graph, for calls this crate
    /// does not wrap. Do not destroy it.
    pub fn as_raw(&self) -> *mut sys::cudnnfe_graph_t {
        self.raw()
    }

    graph_queries!();

    /// Where the plan runs: [`Target::Gpu`] or [`Target::CpuReference`]
    /// (never `Auto`: that is resolved at build).
    pub fn target(&self) -> Target {
        self.target
    }

    /// Bytes of device workspace [`execute`](Self::execute) needs (0 for the
    /// CPU reference): the selected plan's.
    pub fn workspace_size(&self) -> usize {
        self.workspace_size
    }

    /// Name of the engine configuration the selected plan uses (e.g.
    /// `"eng9_k2=3"`), `"cpu_reference"` for the CPU target.
    pub fn plan_name(&self) -> &str {
        &self.plan_name
    }

    /// The tensors that need a buffer at execute (graph inputs and outputs),
    /// in the order [`execute_ordered`](Self::execute_ordered) takes them.
    pub fn bound_tensors(&self) -> &[Tensor] {
        &self.bound_tensors
    }

    fn bound(&self, tensor: Tensor) -> Option<&BoundTensor> {
        self.bound
            .binary_search_by_key(&tensor.uid(), |b| b.tensor.uid())
            .ok()
            .map(|i| &self.bound[i])
    }

    fn not_bound(&self, tensor: Tensor) -> Error {
        match self.tensor_name(tensor) {
            Ok(name) => Error::invalid_argument(format!(
                "tensor \"{name}\" (UID {}) takes no buffer: it is virtual or a pass-by-value scalar",
                tensor.uid()
            )),
            Err(e) => e,
        }
    }

    /// Number of elements a host buffer for `tensor` holds: its memory span
    /// ([`Shape::element_span`]). Only for bound tensors.
    pub fn buffer_len(&self, tensor: Tensor) -> Result<usize> {
        match self.bound(tensor) {
            Some(b) => Ok(b.shape.element_span()),
            None => Err(self.not_bound(tensor)),
        }
    }

    /// Number of bytes a buffer (host or device) for `tensor` spans. Only for
    /// bound tensors.
    pub fn buffer_bytes(&self, tensor: Tensor) -> Result<usize> {
        match self.bound(tensor) {
            Some(b) => Ok(b.bytes),
            None => Err(self.not_bound(tensor)),
        }
    }

    /// Checks that a device buffer of `len` elements of `T` may be bound to
    /// `tensor`: `T` holds the tensor's data type (see [`Element`]), `len`
    /// covers at least its memory span ([`buffer_len`](Self::buffer_len)),
    /// and a tensor the graph writes gets a `writable` buffer. The checks
    /// of the cudarc API (feature `cudarc`), for callers of the raw-pointer
    /// [`execute`](Self::execute) too; [`ErrorKind::InvalidArgument`](crate::ErrorKind)
    /// naming the tensor and the rule otherwise.
    ///
    /// ```
    /// use cudnnfe::*;
    /// let mut g = Graph::new()?;
    /// let x = g.input("x", DataType::BFloat16, &[2, 8])?;
    /// let y = g.unary(PointwiseMode::Neg, x)?;
    /// g.set_output(y, true)?;
    /// let built = g.build(&BuildOptions::cpu_reference())?;
    /// built.check_device_buffer::<u16>(x, 16, false)?;
    /// built.check_device_buffer::<u16>(y, 64, true)?; // longer is fine on the device
    /// let err = built.check_device_buffer::<f32>(x, 16, false).unwrap_err();
    /// assert!(err.message.contains("is BFLOAT16 but the buffer holds f32"));
    /// let err = built.check_device_buffer::<u16>(y, 16, false).unwrap_err();
    /// assert!(err.message.contains("written by the graph"));
    /// # Ok::<(), cudnnfe::Error>(())
    /// ```
    pub fn check_device_buffer<T: Element>(
        &self,
        tensor: Tensor,
        len: usize,
        writable: bool,
    ) -> Result<()> {
        let desc = BufferDesc::of::<T>(len, writable);
        self.check_device("device buffer", tensor, &desc)
    }

    /// [`check_device_buffer`](Self::check_device_buffer) of a described
    /// buffer; `at` names it in messages.
    pub(crate) fn check_device(&self, at: &str, tensor: Tensor, desc: &BufferDesc) -> Result<()> {
        match self.bound(tensor) {
            Some(b) => check_buffer(at, b, desc, BufferKind::Device),
            None => Err(self.not_bound(tensor)),
        }
    }

    /// Runs the graph on host buffers (a graph built for
    /// [`Target::CpuReference`]).
    ///
    /// Every bound tensor needs exactly one buffer. Each buffer is checked
    /// before the call: its element type must hold the tensor's data type
    /// (see [`Element`]), its length must be the tensor's memory span, and
    /// buffers of tensors the graph writes must be
    /// [`HostBuffer::output`]s. Missing, duplicate, unknown or virtual
    /// tensors are reported by the library, on `handle`.
    ///
    /// ```
    /// use cudnnfe::*;
    /// let mut g = Graph::new()?;
    /// let x = g.input("x", DataType::Float, &[3])?;
    /// let y = g.unary(PointwiseMode::Neg, x)?;
    /// g.set_output(y, true)?;
    /// let built = g.build(&BuildOptions::cpu_reference())?;
    /// let mut out = [0f32; 3];
    /// built.execute_host(
    ///     &mut Handle::new()?,
    ///     &[(x, HostBuffer::input(&[1.0f32, -2.0, 3.0])), (y, HostBuffer::output(&mut out))],
    /// )?;
    /// assert_eq!(out, [-1.0, 2.0, -3.0]);
    /// # Ok::<(), cudnnfe::Error>(())
    /// ```
    pub fn execute_host(
        &self,
        handle: &mut Handle,
        buffers: &[(Tensor, HostBuffer<'_>)],
    ) -> Result<()> {
        if self.target != Target::CpuReference {
            return Err(Error::invalid_argument(format!(
                "execute_host runs graphs built for Target::CpuReference; this one was built for \
                 {:?} (plan \"{}\"): use execute() with device pointers",
                self.target, self.plan_name
            )));
        }
        let mut bindings = Vec::with_capacity(buffers.len());
        for (i, (tensor, buffer)) in buffers.iter().enumerate() {
            if let Some(b) = self.bound(*tensor) {
                check_buffer(&format!("buffer {i}"), b, &buffer.desc, BufferKind::Host)?;
            }
            // Tensors that are not bound are passed on: the library refuses
            // them with its own message before touching any buffer.
            bindings.push(sys::cudnnfe_binding_t {
                uid: tensor.uid(),
                data: buffer.ptr,
            });
        }
        // SAFETY: every bound buffer was checked against its tensor's span,
        // type and direction; the CPU reference needs no workspace or stream.
        let status = unsafe {
            sys::cudnnfe_graph_execute(
                self.raw(),
                handle.raw(),
                bindings.as_ptr(),
                bindings.len(),
                ptr::null_mut(),
                0,
                ptr::null_mut(),
            )
        };
        handle.check(status)
    }

    /// Runs the graph with one [`DeviceBinding`] per bound tensor (device
    /// memory for the GPU target; host memory for the CPU reference).
    /// `workspace` must hold at least [`workspace_size`](Self::workspace_size)
    /// bytes of device memory (it may be NULL when that is 0). `stream` is a
    /// `cudaStream_t` (NULL: the default stream); GPU execution is
    /// asynchronous on it. Errors are reported on `handle`.
    ///
    /// # Safety
    ///
    /// Every pointer must be valid for the whole run (until the stream
    /// reaches this work, for the GPU): each binding's buffer must span its
    /// tensor's layout ([`buffer_bytes`](Self::buffer_bytes)) on the device
    /// the handle uses, output buffers must not be read or written by anyone
    /// else meanwhile, the workspace must hold `workspace_size` bytes and be
    /// used by no other concurrent run, and `stream` must be NULL or a live
    /// stream of that device.
    pub unsafe fn execute(
        &self,
        handle: &mut Handle,
        bindings: &[DeviceBinding],
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        // SAFETY: DeviceBinding is a transparent cudnnfe_binding_t; the
        // caller vouches for the pointers.
        let status = unsafe {
            sys::cudnnfe_graph_execute(
                self.raw(),
                handle.raw(),
                bindings.as_ptr().cast::<sys::cudnnfe_binding_t>(),
                bindings.len(),
                workspace,
                workspace_size,
                stream,
            )
        };
        handle.check(status)
    }

    /// [`execute`](Self::execute) with the tensors of `overrides` taking
    /// other dims and strides for this run (a graph built with
    /// [`BuildOptions::override_shape_enabled`]; since 0.3). The CPU reference
    /// infers the graph again at those shapes; the GPU passes them to cuDNN
    /// and reports its refusal as [`ErrorKind::NotSupported`](crate::ErrorKind).
    ///
    /// # Safety
    ///
    /// As for [`execute`](Self::execute), with each buffer spanning its
    /// tensor's overridden layout.
    pub unsafe fn execute_with_overrides(
        &self,
        handle: &mut Handle,
        bindings: &[DeviceBinding],
        overrides: &[ShapeOverride],
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        let mut raw = Vec::with_capacity(overrides.len());
        for (i, o) in overrides.iter().enumerate() {
            if o.dims.len() != o.strides.len() {
                return Err(Error::invalid_argument(format!(
                    "overrides[{i}]: {} dims and {} strides",
                    o.dims.len(),
                    o.strides.len()
                )));
            }
            raw.push(sys::cudnnfe_shape_override_t {
                uid: o.tensor.uid(),
                num_dims: i32::try_from(o.dims.len()).unwrap_or(i32::MAX),
                dims: o.dims.as_ptr(),
                strides: o.strides.as_ptr(),
            });
        }
        // SAFETY: `raw` points into `overrides`, alive for the call; the
        // caller vouches for the buffers.
        let status = unsafe {
            sys::cudnnfe_graph_execute_with_overrides(
                self.raw(),
                handle.raw(),
                bindings.as_ptr().cast::<sys::cudnnfe_binding_t>(),
                bindings.len(),
                raw.as_ptr(),
                raw.len(),
                workspace,
                workspace_size,
                stream,
            )
        };
        handle.check(status)
    }

    /// The faster form of [`execute`](Self::execute): `data[i]` is the buffer
    /// of `bound_tensors()[i]`.
    ///
    /// # Safety
    ///
    /// As for [`execute`](Self::execute).
    pub unsafe fn execute_ordered(
        &self,
        handle: &mut Handle,
        data: &[*mut c_void],
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller vouches for the pointers.
        let status = unsafe {
            sys::cudnnfe_graph_execute_ordered(
                self.raw(),
                handle.raw(),
                data.as_ptr(),
                data.len(),
                workspace,
                workspace_size,
                stream,
            )
        };
        handle.check(status)
    }
}

/// A tensor and the address of its buffer, for [`BuiltGraph::execute`]
/// (layout-compatible with `cudnnfe_binding_t`, so a slice of them goes to
/// the library as is).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct DeviceBinding(sys::cudnnfe_binding_t);

// SAFETY: a binding is a plain (tensor, address) pair; the address is only
// dereferenced by the unsafe execute calls, whose callers vouch for it.
unsafe impl Send for DeviceBinding {}
// SAFETY: as above.
unsafe impl Sync for DeviceBinding {}

/// A bound tensor's dims and strides (in elements) for one
/// [`BuiltGraph::execute_with_overrides`] run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeOverride {
    /// The tensor.
    pub tensor: Tensor,
    /// Its dims for this run (as many as it has).
    pub dims: Vec<i64>,
    /// Its strides for this run.
    pub strides: Vec<i64>,
}

impl ShapeOverride {
    /// `tensor` at `dims` and `strides`.
    pub fn new(tensor: Tensor, dims: &[i64], strides: &[i64]) -> Self {
        ShapeOverride {
            tensor,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
        }
    }
}

impl DeviceBinding {
    /// Binds `tensor` to the buffer at `data` (a device pointer for the GPU).
    pub fn new(tensor: Tensor, data: *mut c_void) -> Self {
        DeviceBinding(sys::cudnnfe_binding_t {
            uid: tensor.uid(),
            data,
        })
    }
    /// The tensor.
    pub fn tensor(&self) -> Tensor {
        Tensor::from_uid(self.0.uid)
    }
    /// The buffer's address.
    pub fn data(&self) -> *mut c_void {
        self.0.data
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust element type a [`HostBuffer`] can hold, and the tensor data types
/// it holds: `f32` FLOAT, `f64` DOUBLE, `u16` HALF and BFLOAT16 (bit
/// patterns: see [`f16_from_f32`](crate::f16_from_f32),
/// [`bf16_from_f32`](crate::bf16_from_f32)), `i8` INT8, `i32` INT32, `i64`
/// INT64, `u8` UINT8, BOOLEAN (0 or 1) and the FP8 types (FP8_E8M0
/// block scales included). Sealed.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The Rust type's name, for messages.
    const NAME: &'static str;
    /// Whether a buffer of this type holds tensors of `dtype`.
    fn holds(dtype: DataType) -> bool;
}

macro_rules! element {
    ($t:ty, $($dtype:ident)|+) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            fn holds(dtype: DataType) -> bool {
                matches!(dtype, $(DataType::$dtype)|+)
            }
        }
    };
}
element!(f32, Float);
element!(f64, Double);
element!(u16, Half | BFloat16);
element!(i8, Int8);
element!(i32, Int32);
element!(i64, Int64);
element!(u8, UInt8 | Boolean | Fp8E4M3 | Fp8E5M2 | Fp8E8M0);

/// A host slice given to [`BuiltGraph::execute_host`]: read-only for inputs
/// ([`input`](Self::input)), writable for outputs ([`output`](Self::output)).
/// It borrows the slice for its lifetime.
pub struct HostBuffer<'a> {
    ptr: *mut c_void,
    desc: BufferDesc,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a HostBuffer is a `&[T]` or `&mut [T]` of Send + Sync elements, so
// moving it to another thread is fine. It is deliberately not Sync: a shared
// `&HostBuffer` of an output, used by two concurrent executions, would let
// both write the slice.
unsafe impl Send for HostBuffer<'_> {}

impl<'a> HostBuffer<'a> {
    /// A read-only buffer for a graph input.
    pub fn input<T: Element>(data: &'a [T]) -> Self {
        HostBuffer {
            ptr: data.as_ptr() as *mut c_void,
            desc: BufferDesc::of::<T>(data.len(), false),
            _borrow: PhantomData,
        }
    }

    /// A writable buffer for a graph output (an input may be given one too).
    pub fn output<T: Element>(data: &'a mut [T]) -> Self {
        HostBuffer {
            ptr: data.as_mut_ptr().cast(),
            desc: BufferDesc::of::<T>(data.len(), true),
            _borrow: PhantomData,
        }
    }

    /// Size of the buffer in bytes.
    pub fn len_bytes(&self) -> usize {
        self.desc.bytes()
    }

    /// Whether the graph may write the buffer.
    pub fn is_writable(&self) -> bool {
        self.desc.writable
    }
}

impl<'a, T: Element> From<&'a [T]> for HostBuffer<'a> {
    fn from(data: &'a [T]) -> Self {
        HostBuffer::input(data)
    }
}

impl<'a, T: Element> From<&'a mut [T]> for HostBuffer<'a> {
    fn from(data: &'a mut [T]) -> Self {
        HostBuffer::output(data)
    }
}

impl fmt::Debug for HostBuffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("element", &self.desc.element)
            .field("bytes", &self.desc.bytes())
            .field("writable", &self.desc.writable)
            .finish()
    }
}

/// A buffer given for a tensor, as the checks see it: its element type, its
/// length in elements and whether the graph may write it.
///
/// `pub` but not exported, so that the cudarc module's sealed traits can
/// return it.
#[derive(Clone, Copy, Debug)]
pub struct BufferDesc {
    pub(crate) element: &'static str,
    pub(crate) element_size: usize,
    pub(crate) holds: fn(DataType) -> bool,
    pub(crate) len: usize,
    pub(crate) writable: bool,
}

impl BufferDesc {
    pub(crate) fn of<T: Element>(len: usize, writable: bool) -> Self {
        BufferDesc {
            element: T::NAME,
            element_size: std::mem::size_of::<T>(),
            holds: T::holds,
            len,
            writable,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.len * self.element_size
    }
}

/// Where a buffer lives, which sets the length rule and the advice on
/// writable buffers: a host slice must span its tensor exactly (a longer one
/// is almost always the wrong slice), a device allocation at least (pools
/// and reused allocations are often larger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufferKind {
    Host,
    Device,
}

/// Checks a buffer (`at` names it in messages, e.g. "buffer 2") against
/// bound tensor `b`: element type, length, and writability for tensors the
/// graph writes. The one place these rules live, for host slices and device
/// buffers alike.
fn check_buffer(at: &str, b: &BoundTensor, buf: &BufferDesc, kind: BufferKind) -> Result<()> {
    let uid = b.tensor.uid();
    let name = &b.name;
    if !(buf.holds)(b.dtype) {
        return Err(Error::invalid_argument(format!(
            "{at}: tensor \"{name}\" (UID {uid}) is {} but the buffer holds {} \
             (HALF and BFLOAT16 take u16 bit patterns, BOOLEAN and FP8 take u8)",
            b.dtype, buf.element
        )));
    }
    let span = b.shape.element_span();
    let fits = match kind {
        BufferKind::Host => buf.bytes() == b.bytes,
        BufferKind::Device => buf.bytes() >= b.bytes,
    };
    if !fits {
        let (rule, noun) = match kind {
            BufferKind::Host => ("", "buffer"),
            BufferKind::Device => (" at least", "device buffer"),
        };
        return Err(Error::invalid_argument(format!(
            "{at}: tensor \"{name}\" (UID {uid}) {:?} strides {:?} {} spans {span} elements \
             ({} bytes) but the {noun} has {} bytes ({} x {}); it needs{rule} {span} elements",
            b.shape.dims,
            b.shape.strides,
            b.dtype,
            b.bytes,
            buf.bytes(),
            buf.len,
            buf.element
        )));
    }
    if b.is_output && !buf.writable {
        let how = match kind {
            BufferKind::Host => "HostBuffer::output(&mut ...)",
            BufferKind::Device => "a mutable device buffer (CudaBuffer::output(&mut ...))",
        };
        return Err(Error::invalid_argument(format!(
            "{at}: tensor \"{name}\" (UID {uid}) is written by the graph; pass it as {how}"
        )));
    }
    Ok(())
}
