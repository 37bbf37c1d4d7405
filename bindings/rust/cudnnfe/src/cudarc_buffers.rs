//! Feature `cudarc`: [`BuiltGraph::execute_cudarc`] and
//! [`BuiltGraph::bind_cudarc`] run a graph on cudarc's device buffers
//! ([`CudaSlice`], [`CudaView`], [`CudaViewMut`]) and a [`CudaStream`],
//! checking each buffer's element type, length and device against its tensor
//! first (the rules of [`BuiltGraph::check_device_buffer`]), so that they are
//! safe to call.
//!
//! Each buffer's pointer is taken with cudarc's `DevicePtr` /
//! `DevicePtrMut` on the stream the graph runs on: the stream first waits
//! for earlier work of other streams on the buffer, and the returned guards
//! (`SyncOnDrop`) are kept until the execution is enqueued, so that later
//! users of the buffer wait for it in turn (cudarc's own protocol for its
//! copies).

use std::ffi::c_void;
use std::ptr;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    DriverError, SyncOnDrop,
};

use crate::bound::{BoundExecution, CudaGraphMode};
use crate::built::{BufferDesc, BuiltGraph, DeviceBinding, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::handle::Handle;
use crate::types::{Target, Tensor};

mod sealed {
    use super::*;

    /// What the checks read of a device buffer, and its pointer for reading.
    pub trait Read {
        fn desc(&self, writable: bool) -> BufferDesc;
        /// The CUDA device the buffer lives on.
        fn ordinal(&self) -> usize;
        fn read_ptr<'s>(&'s self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>);
    }

    /// The pointer of a device buffer for writing.
    pub trait Write {
        fn write_ptr<'s>(&'s mut self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>);
    }
}

/// A cudarc device buffer a graph may read: [`CudaSlice<T>`],
/// [`CudaView<T>`] or [`CudaViewMut<T>`] of an [`Element`] `T` (`f32` for
/// FLOAT, `u16` for HALF and BFLOAT16 bit patterns, `i32` for INT32, `u8`
/// for UINT8, BOOLEAN and FP8, ...). Sealed.
pub trait DeviceBuffer: sealed::Read {}

/// A cudarc device buffer a graph may write: [`CudaSlice<T>`] or
/// [`CudaViewMut<T>`] of an [`Element`] `T`. Sealed.
pub trait DeviceBufferMut: DeviceBuffer + sealed::Write {}

macro_rules! readable {
    ($($buffer:ty),+) => {$(
        impl<T: Element + DeviceRepr> sealed::Read for $buffer {
            fn desc(&self, writable: bool) -> BufferDesc {
                BufferDesc::of::<T>(DeviceSlice::<T>::len(self), writable)
            }
            fn ordinal(&self) -> usize {
                DeviceSlice::<T>::stream(self).context().ordinal()
            }
            fn read_ptr<'s>(&'s self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>) {
                DevicePtr::<T>::device_ptr(self, stream)
            }
        }
        impl<T: Element + DeviceRepr> DeviceBuffer for $buffer {}
    )+};
}
readable!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

macro_rules! writable {
    ($($buffer:ty),+) => {$(
        impl<T: Element + DeviceRepr> sealed::Write for $buffer {
            fn write_ptr<'s>(&'s mut self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>) {
                DevicePtrMut::<T>::device_ptr_mut(self, stream)
            }
        }
        impl<T: Element + DeviceRepr> DeviceBufferMut for $buffer {}
    )+};
}
writable!(CudaSlice<T>, CudaViewMut<'_, T>);

/// A cudarc buffer given for one tensor: read-only
/// ([`input`](Self::input)) or writable ([`output`](Self::output)), borrowed
/// for `'a`.
pub struct CudaBuffer<'a>(Access<'a>);

enum Access<'a> {
    Read(&'a dyn DeviceBuffer),
    Write(&'a mut dyn DeviceBufferMut),
}

impl<'a> CudaBuffer<'a> {
    /// A buffer the graph only reads (a graph input).
    pub fn input(buffer: &'a impl DeviceBuffer) -> Self {
        CudaBuffer(Access::Read(buffer))
    }

    /// A buffer the graph may write (a graph output; an input may be given
    /// one too).
    pub fn output(buffer: &'a mut impl DeviceBufferMut) -> Self {
        CudaBuffer(Access::Write(buffer))
    }

    fn desc(&self) -> BufferDesc {
        match &self.0 {
            Access::Read(b) => b.desc(false),
            Access::Write(b) => b.desc(true),
        }
    }

    fn ordinal(&self) -> usize {
        match &self.0 {
            Access::Read(b) => b.ordinal(),
            Access::Write(b) => b.ordinal(),
        }
    }

    /// The device pointer for a run on `stream`, and the guard to drop once
    /// that run is enqueued.
    fn ptr<'s>(&'s mut self, stream: &'s CudaStream) -> (*mut c_void, SyncOnDrop<'s>) {
        let (ptr, guard) = match &mut self.0 {
            Access::Read(b) => b.read_ptr(stream),
            Access::Write(b) => b.write_ptr(stream),
        };
        (ptr as usize as *mut c_void, guard)
    }
}

impl std::fmt::Debug for CudaBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let desc = self.desc();
        f.debug_struct("CudaBuffer")
            .field("element", &desc.element)
            .field("len", &desc.len)
            .field("writable", &desc.writable)
            .field("device", &self.ordinal())
            .finish()
    }
}

fn driver_error(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| Error::new(ErrorKind::CudaError, format!("{what}: {e}"))
}

/// The pointers of `buffers` (in `order`) and of `workspace` for a run on
/// `stream`, with the guards to drop once the run is enqueued.
fn pointers<'s>(
    buffers: &'s mut [(Tensor, CudaBuffer<'_>)],
    workspace: Option<&'s mut CudaSlice<u8>>,
    stream: &'s CudaStream,
) -> (Vec<(Tensor, *mut c_void)>, *mut c_void, Vec<SyncOnDrop<'s>>) {
    let mut guards = Vec::with_capacity(buffers.len() + 1);
    let mut pointers = Vec::with_capacity(buffers.len());
    for (tensor, buffer) in buffers.iter_mut() {
        let (ptr, guard) = buffer.ptr(stream);
        pointers.push((*tensor, ptr));
        guards.push(guard);
    }
    let workspace = match workspace {
        Some(w) => {
            let (ptr, guard) = w.device_ptr_mut(stream);
            guards.push(guard);
            ptr as usize as *mut c_void
        }
        None => ptr::null_mut(),
    };
    (pointers, workspace, guards)
}

impl BuiltGraph {
    /// Runs the graph (built for [`Target::Gpu`]) on cudarc buffers,
    /// asynchronously on `stream` (feature `cudarc`).
    ///
    /// Every bound tensor needs one buffer ([`CudaBuffer::input`] or, for
    /// tensors the graph writes, [`CudaBuffer::output`]); `workspace` must
    /// hold at least [`workspace_size`](Self::workspace_size) bytes (`None`
    /// when that is 0). Before the call each buffer is checked as
    /// [`check_device_buffer`](Self::check_device_buffer) does (element
    /// type, at least the tensor's span, writable for outputs) and must be on
    /// the stream's device, as must `handle` (made with
    /// [`Handle::for_device`] of that ordinal, or [`Handle::new`]);
    /// [`ErrorKind::InvalidArgument`] naming the buffer, the tensor and the
    /// rule otherwise. Missing or duplicate tensors are refused by the
    /// library, on `handle`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use cudarc::driver::CudaContext;
    /// use cudnnfe::*;
    /// let mut g = Graph::new()?;
    /// let x = g.input("x", DataType::Float, &[1024])?;
    /// let y = g.unary(PointwiseMode::Neg, x)?;
    /// g.set_output(y, true)?;
    /// let built = g.build(&BuildOptions::gpu())?;
    ///
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let x_dev = stream.clone_htod(&vec![1.0f32; 1024])?;
    /// let mut y_dev = stream.alloc_zeros::<f32>(1024)?;
    /// let mut workspace = built.cudarc_workspace(&stream)?;
    /// built.execute_cudarc(
    ///     &mut Handle::for_device(0)?,
    ///     &mut [(x, CudaBuffer::input(&x_dev)), (y, CudaBuffer::output(&mut y_dev))],
    ///     workspace.as_mut(),
    ///     &stream,
    /// )?;
    /// assert_eq!(stream.clone_dtoh(&y_dev)?, vec![-1.0f32; 1024]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn execute_cudarc(
        &self,
        handle: &mut Handle,
        buffers: &mut [(Tensor, CudaBuffer<'_>)],
        workspace: Option<&mut CudaSlice<u8>>,
        stream: &CudaStream,
    ) -> Result<()> {
        let workspace_bytes = self.check_cudarc(handle, buffers, workspace.as_deref(), stream)?;
        stream.context().bind_to_thread().map_err(driver_error(
            "binding the stream's CUDA context to this thread",
        ))?;
        let (pointers, workspace, guards) = pointers(buffers, workspace, stream);
        let bindings: Vec<DeviceBinding> = pointers
            .iter()
            .map(|&(tensor, ptr)| DeviceBinding::new(tensor, ptr))
            .collect();
        // SAFETY: every buffer was checked against its tensor (element type,
        // span, writability) and device; the borrows of `buffers` and the
        // guards' stream ordering keep each one valid and unused by others
        // until the stream reaches this work; the workspace holds
        // `workspace_bytes` bytes; `stream` is a live stream of that device.
        let result = unsafe {
            self.execute(
                handle,
                &bindings,
                workspace,
                workspace_bytes,
                stream.cu_stream().cast(),
            )
        };
        // Only now, with the work enqueued: each guard records the buffer's
        // read or write on `stream`, which later users wait for.
        drop(guards);
        result
    }

    /// A zeroed device workspace of [`workspace_size`](Self::workspace_size)
    /// bytes allocated on `stream`, or `None` when the plan needs none
    /// (feature `cudarc`).
    pub fn cudarc_workspace(
        &self,
        stream: &std::sync::Arc<CudaStream>,
    ) -> Result<Option<CudaSlice<u8>>> {
        if self.workspace_size() == 0 {
            return Ok(None);
        }
        stream
            .alloc_zeros::<u8>(self.workspace_size())
            .map(Some)
            .map_err(driver_error("allocating the workspace"))
    }

    /// Binds the graph to cudarc buffers, a workspace, `handle` and `stream`
    /// once (`cudnnfe_graph_bind`; feature `cudarc`): the checks of
    /// [`execute_cudarc`](Self::execute_cudarc) are made here, and each
    /// [`CudaBoundExecution::execute`] is one call. Every bound tensor needs
    /// exactly one buffer, in any order ([`ErrorKind::InvalidArgument`]
    /// naming the missing, duplicate or unknown tensor otherwise). The
    /// buffers stay borrowed while the bound execution lives. Bind waits for
    /// `stream`'s earlier work: with a CUDA graph mode the library runs the
    /// work once now, on a stream of its own.
    pub fn bind_cudarc<'a>(
        &'a self,
        handle: &'a mut Handle,
        mut buffers: Vec<(Tensor, CudaBuffer<'a>)>,
        mut workspace: Option<&'a mut CudaSlice<u8>>,
        stream: &'a CudaStream,
        cuda_graph: CudaGraphMode,
    ) -> Result<CudaBoundExecution<'a>> {
        let workspace_bytes = self.check_cudarc(handle, &buffers, workspace.as_deref(), stream)?;
        let given: Vec<Tensor> = buffers.iter().map(|(t, _)| *t).collect();
        let order = self.order_for_bind(&given)?;
        stream.context().bind_to_thread().map_err(driver_error(
            "binding the stream's CUDA context to this thread",
        ))?;
        let bound = {
            let (pointers, workspace_ptr, guards) =
                pointers(&mut buffers, workspace.as_deref_mut(), stream);
            let data: Vec<*mut c_void> = order.iter().map(|&i| pointers[i].1).collect();
            stream
                .synchronize()
                .map_err(driver_error("waiting for the stream before bind"))?;
            // SAFETY: as in execute_cudarc; the buffers stay borrowed by the
            // returned value for as long as the library holds their pointers,
            // and the stream's earlier work on them is finished.
            let bound =
                unsafe { self.bind(handle, &data, workspace_ptr, workspace_bytes, cuda_graph) };
            drop(guards);
            bound?
        };
        Ok(CudaBoundExecution {
            bound,
            buffers,
            workspace,
            stream,
        })
    }

    /// The checks of [`execute_cudarc`](Self::execute_cudarc); the
    /// workspace's size in bytes.
    fn check_cudarc(
        &self,
        handle: &Handle,
        buffers: &[(Tensor, CudaBuffer<'_>)],
        workspace: Option<&CudaSlice<u8>>,
        stream: &CudaStream,
    ) -> Result<usize> {
        if self.target() != Target::Gpu {
            return Err(Error::invalid_argument(format!(
                "cudarc buffers are device memory; this graph was built for {:?} (plan \"{}\"): \
                 build it for Target::Gpu, or use execute_host",
                self.target(),
                self.plan_name()
            )));
        }
        let device = stream.context().ordinal();
        if handle.device() >= 0 && handle.device() as usize != device {
            return Err(Error::invalid_argument(format!(
                "the handle is for CUDA device {} but the stream is on device {device}",
                handle.device()
            )));
        }
        for (i, (tensor, buffer)) in buffers.iter().enumerate() {
            let at = format!("buffer {i}");
            self.check_device(&at, *tensor, &buffer.desc())?;
            check_same_device(&at, buffer.ordinal(), device)?;
        }
        let bytes = workspace.map_or(0, |w| w.len());
        if bytes < self.workspace_size() {
            return Err(Error::invalid_argument(format!(
                "the plan \"{}\" needs a workspace of {} bytes but it has {bytes}: allocate it with \
                 cudarc_workspace()",
                self.plan_name(),
                self.workspace_size()
            )));
        }
        if let Some(w) = workspace {
            check_same_device("the workspace", w.context().ordinal(), device)?;
        }
        Ok(bytes)
    }
}

fn check_same_device(at: &str, buffer: usize, stream: usize) -> Result<()> {
    if buffer == stream {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "{at} is on CUDA device {buffer} but the stream is on device {stream}"
    )))
}

/// A graph bound once to cudarc buffers, a workspace, a handle and a stream
/// ([`BuiltGraph::bind_cudarc`]); [`execute`](Self::execute) runs it on the
/// stream. It borrows all of them for its life.
pub struct CudaBoundExecution<'a> {
    // Declared first, so dropped first: the library's bound execution goes
    // before the borrows of the buffers end.
    bound: BoundExecution<'a>,
    buffers: Vec<(Tensor, CudaBuffer<'a>)>,
    workspace: Option<&'a mut CudaSlice<u8>>,
    stream: &'a CudaStream,
}

impl CudaBoundExecution<'_> {
    /// Runs the bound work, asynchronously on the stream given at bind
    /// (`cudnnfe_bound_execute`). Each buffer is handed to cudarc's
    /// stream ordering as for [`BuiltGraph::execute_cudarc`].
    pub fn execute(&mut self) -> Result<()> {
        let stream = self.stream;
        stream.context().bind_to_thread().map_err(driver_error(
            "binding the stream's CUDA context to this thread",
        ))?;
        // The pointers are the ones fixed at bind (the buffers are borrowed
        // since); taking them again orders this run on the stream.
        let (_, _, guards) = pointers(&mut self.buffers, self.workspace.as_deref_mut(), stream);
        // SAFETY: the buffers bound at bind are still borrowed (so valid and
        // of the checked sizes), `stream` is a live stream of their device,
        // and the guards order other users around this run.
        let result = unsafe { self.bound.execute(stream.cu_stream().cast()) };
        drop(guards);
        result
    }

    /// How it runs: `Off`, `Native` or `Capture`.
    pub fn cuda_graph_mode(&self) -> Result<CudaGraphMode> {
        self.bound.cuda_graph_mode()
    }
}
