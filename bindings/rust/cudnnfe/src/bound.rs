//! [`BoundExecution`]: a built graph fixed to its buffers once
//! (`cudnnfe_graph_bind`), run with one call each time, optionally as a
//! replayed CUDA graph.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::built::BuiltGraph;
use crate::error::{check_thread, Error, ErrorKind, Result};
use crate::handle::Handle;
use crate::types::Tensor;

/// How a [`BoundExecution`] runs (`cudnnfe_cuda_graph_mode_t`;
/// docs/plans.md, "Bound execution").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CudaGraphMode {
    /// `cudnnBackendExecute` with the variant pack made at bind (the C default).
    #[default]
    Off,
    /// A CUDA graph cuDNN fills (`cudnnBackendPopulateCudaGraph`).
    Native,
    /// A CUDA graph recorded by stream capture of `cudnnBackendExecute`.
    Capture,
    /// `Native` where the plan supports it, else `Capture`.
    Auto,
}

impl CudaGraphMode {
    fn to_raw(self) -> sys::cudnnfe_cuda_graph_mode_t {
        match self {
            CudaGraphMode::Off => sys::CUDNNFE_CUDA_GRAPH_OFF as _,
            CudaGraphMode::Native => sys::CUDNNFE_CUDA_GRAPH_NATIVE as _,
            CudaGraphMode::Capture => sys::CUDNNFE_CUDA_GRAPH_CAPTURE as _,
            CudaGraphMode::Auto => sys::CUDNNFE_CUDA_GRAPH_AUTO as _,
        }
    }

    fn from_raw(raw: sys::cudnnfe_cuda_graph_mode_t) -> CudaGraphMode {
        match raw {
            r if r == sys::CUDNNFE_CUDA_GRAPH_NATIVE as sys::cudnnfe_cuda_graph_mode_t => {
                CudaGraphMode::Native
            }
            r if r == sys::CUDNNFE_CUDA_GRAPH_CAPTURE as sys::cudnnfe_cuda_graph_mode_t => {
                CudaGraphMode::Capture
            }
            r if r == sys::CUDNNFE_CUDA_GRAPH_AUTO as sys::cudnnfe_cuda_graph_mode_t => {
                CudaGraphMode::Auto
            }
            _ => CudaGraphMode::Off,
        }
    }
}

/// A built graph bound to fixed buffers, a workspace and a handle: every
/// check is made at bind, and [`execute`](Self::execute) is one C call.
///
/// It borrows the graph and, mutably, the handle for its whole life, so both
/// outlive it and the handle is used by one thread at a time (the C rule).
pub struct BoundExecution<'a> {
    ptr: NonNull<sys::cudnnfe_bound_t>,
    _graph: PhantomData<&'a BuiltGraph>,
    _handle: PhantomData<&'a mut Handle>,
}

impl Drop for BoundExecution<'_> {
    fn drop(&mut self) {
        // SAFETY: the pointer is live and destroyed once.
        unsafe {
            sys::cudnnfe_bound_destroy(self.ptr.as_ptr());
        }
    }
}

impl BuiltGraph {
    /// Binds the graph's selected plan to `data` (the buffer of
    /// `bound_tensors()[i]` at `i`, as [`execute_ordered`](Self::execute_ordered)
    /// takes them), `workspace` and `handle` (`cudnnfe_graph_bind`). With a
    /// CUDA graph mode the work is recorded now and replayed by each
    /// [`BoundExecution::execute`]; it is refused (`NotSupported`, naming the
    /// reason) on the CPU reference and for graphs with pass-by-value inputs.
    ///
    /// # Safety
    ///
    /// As for [`execute`](Self::execute), for as long as the returned value
    /// lives: every pointer stays valid for its tensor (device memory on the
    /// GPU, host memory on the CPU reference) until it is dropped.
    pub unsafe fn bind<'a>(
        &'a self,
        handle: &'a mut Handle,
        data: &[*mut c_void],
        workspace: *mut c_void,
        workspace_size: usize,
        cuda_graph: CudaGraphMode,
    ) -> Result<BoundExecution<'a>> {
        let mut options = MaybeUninit::<sys::cudnnfe_bind_options_t>::zeroed();
        let size = std::mem::size_of::<sys::cudnnfe_bind_options_t>();
        // SAFETY: a writable struct of `size` bytes.
        let mut options = unsafe {
            sys::cudnnfe_bind_options_init_sized(options.as_mut_ptr(), size);
            options.assume_init()
        };
        options.cuda_graph = cuda_graph.to_raw();
        let mut raw: *mut sys::cudnnfe_bound_t = ptr::null_mut();
        // SAFETY: valid out-pointer and options; the caller vouches for the buffers.
        let status = unsafe {
            sys::cudnnfe_graph_bind(
                &mut raw,
                self.raw(),
                handle.raw(),
                data.as_ptr(),
                data.len(),
                workspace,
                workspace_size,
                &options,
            )
        };
        handle.check(status)?;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "cudnnfe_graph_bind returned OK and NULL",
            )
        })?;
        Ok(BoundExecution {
            ptr,
            _graph: PhantomData,
            _handle: PhantomData,
        })
    }
}

impl BoundExecution<'_> {
    /// Runs the bound work on `stream` (a `cudaStream_t`; null: the default
    /// stream; ignored by the CPU reference), asynchronously on the GPU
    /// (`cudnnfe_bound_execute`).
    ///
    /// # Safety
    /// `stream` must be null or a live stream of the handle's device, and
    /// the buffers given to bind must still be valid and not used by anyone
    /// else while this run reads or writes them.
    pub unsafe fn execute(&mut self, stream: *mut c_void) -> Result<()> {
        // SAFETY: a live bound execution; the caller vouches for the stream
        // and the buffers fixed at bind.
        check_thread(unsafe { sys::cudnnfe_bound_execute(self.ptr.as_ptr(), stream) })
    }

    /// How it runs: `Off`, `Native` or `Capture` (`Auto` is resolved at bind).
    pub fn cuda_graph_mode(&self) -> Result<CudaGraphMode> {
        let mut mode: sys::cudnnfe_cuda_graph_mode_t = 0;
        // SAFETY: a live bound execution and a valid out-pointer.
        check_thread(unsafe {
            sys::cudnnfe_bound_get_cuda_graph_mode(self.ptr.as_ptr(), &mut mode)
        })?;
        Ok(CudaGraphMode::from_raw(mode))
    }
}

/// Why buffers given as (tensor, buffer) pairs cannot be put in bind order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OrderError {
    /// Pair `i` names a tensor that takes no buffer.
    NotBound(usize),
    /// Pairs `i` and `j` name the same tensor.
    Duplicate(usize, usize),
    /// Bound tensor `k` has no pair.
    Missing(usize),
}

/// For each tensor of `bound` (the graph's bind order), the index of its
/// pair in `given`: every bound tensor exactly once, nothing else.
pub(crate) fn bind_order(
    bound: &[Tensor],
    given: &[Tensor],
) -> std::result::Result<Vec<usize>, OrderError> {
    let mut order: Vec<Option<usize>> = vec![None; bound.len()];
    for (i, tensor) in given.iter().enumerate() {
        let k = bound
            .iter()
            .position(|b| b == tensor)
            .ok_or(OrderError::NotBound(i))?;
        if let Some(j) = order[k] {
            return Err(OrderError::Duplicate(j, i));
        }
        order[k] = Some(i);
    }
    order
        .iter()
        .enumerate()
        .map(|(k, i)| i.ok_or(OrderError::Missing(k)))
        .collect()
}

impl BuiltGraph {
    /// [`bind_order`] with messages naming the tensors.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn order_for_bind(&self, given: &[Tensor]) -> Result<Vec<usize>> {
        let name = |t: Tensor| {
            let name = self.tensor_name(t).unwrap_or_default();
            format!("tensor \"{name}\" (UID {})", t.uid())
        };
        bind_order(self.bound_tensors(), given).map_err(|e| match e {
            OrderError::NotBound(i) => Error::invalid_argument(format!(
                "buffer {i}: {} takes no buffer: it is not an input or output of the built graph",
                name(given[i])
            )),
            OrderError::Duplicate(j, i) => Error::invalid_argument(format!(
                "buffers {j} and {i} are both for {}: give each tensor one buffer",
                name(given[i])
            )),
            OrderError::Missing(k) => Error::invalid_argument(format!(
                "{} has no buffer: bind needs one for every tensor of bound_tensors()",
                name(self.bound_tensors()[k])
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(uids: &[i64]) -> Vec<Tensor> {
        uids.iter().map(|&u| Tensor::from_uid(u)).collect()
    }

    #[test]
    fn bind_order_maps_given_pairs_to_bound_order() {
        assert_eq!(
            bind_order(&t(&[1, 2, 5]), &t(&[5, 1, 2])),
            Ok(vec![1, 2, 0])
        );
        assert_eq!(bind_order(&t(&[]), &t(&[])), Ok(vec![]));
    }

    #[test]
    fn bind_order_names_the_unknown_duplicate_or_missing_pair() {
        let bound = t(&[1, 2, 5]);
        assert_eq!(
            bind_order(&bound, &t(&[1, 7, 2, 5])),
            Err(OrderError::NotBound(1))
        );
        assert_eq!(
            bind_order(&bound, &t(&[1, 2, 1, 5])),
            Err(OrderError::Duplicate(0, 2))
        );
        assert_eq!(bind_order(&bound, &t(&[5, 1])), Err(OrderError::Missing(1)));
    }
}
