//! [`Graph`]: a graph under construction.

use std::ffi::c_char;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::built::BuiltGraph;
use crate::error::{check, owned_str, Error, ErrorKind, Result};
use crate::handle::Handle;
use crate::options::{
    c_name, c_string, BuildOptions, ConvOptions, LayoutOptions, MatmulOptions, NormOptions,
    PagedCacheLoadOptions, PointwiseOptions, ReductionOptions, ResampleOptions, RngOptions,
    SdpaBackwardOptions, SdpaFp8BackwardOptions, SdpaFp8Options, SdpaOptions, SoftmaxOptions,
};
use crate::types::{DataType, PointwiseMode, ReductionMode, Tensor};

/// `cudnnfe_graph_add_{layernorm,instancenorm,adalayernorm}`.
type NormForwardFn = unsafe extern "C" fn(
    *mut sys::cudnnfe_graph_t,
    i64,
    i64,
    i64,
    *const sys::cudnnfe_norm_options_t,
    *mut i64,
    *mut i64,
    *mut i64,
) -> sys::cudnnfe_status_t;

/// `cudnnfe_graph_add_{batchnorm,instancenorm,adalayernorm}_backward`.
type NormBackwardFn = unsafe extern "C" fn(
    *mut sys::cudnnfe_graph_t,
    i64,
    i64,
    i64,
    i64,
    i64,
    *const sys::cudnnfe_norm_options_t,
    *mut i64,
    *mut i64,
    *mut i64,
) -> sys::cudnnfe_status_t;

/// Read-only queries shared by [`Graph`] and [`BuiltGraph`]. The type needs
/// `fn raw(&self) -> *mut cudnnfe_graph_t` and
/// `fn check(&self, status) -> Result<()>` (which reads the message).
macro_rules! graph_queries {
    () => {
        /// The graph's name (`"graph"` unless set).
        pub fn name(&self) -> $crate::Result<String> {
            let mut name: *const ::std::ffi::c_char = ::std::ptr::null();
            // SAFETY: on success `name` points at the graph's copy; copied at once.
            self.check(unsafe { ::cudnnfe_sys::cudnnfe_graph_get_name(self.raw(), &mut name) })?;
            Ok(unsafe { $crate::error::owned_str(name) })
        }

        /// Number of tensors in the graph (inputs, scalars, op outputs).
        pub fn tensor_count(&self) -> $crate::Result<usize> {
            let mut count = 0usize;
            // SAFETY: a live graph and a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_tensor_count(self.raw(), &mut count)
            })?;
            Ok(count)
        }

        /// Number of operations in the graph.
        pub fn node_count(&self) -> $crate::Result<usize> {
            let mut count = 0usize;
            // SAFETY: as above.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_node_count(self.raw(), &mut count)
            })?;
            Ok(count)
        }

        /// Every tensor of the graph, in creation order.
        pub fn tensors(&self) -> $crate::Result<Vec<$crate::Tensor>> {
            let mut count = 0usize;
            // SAFETY: size query (NULL buffer), then a buffer of `count`.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_tensor_uids(
                    self.raw(),
                    ::std::ptr::null_mut(),
                    0,
                    &mut count,
                )
            })?;
            let mut uids = vec![0i64; count];
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_tensor_uids(
                    self.raw(),
                    uids.as_mut_ptr(),
                    uids.len(),
                    &mut count,
                )
            })?;
            uids.truncate(count);
            Ok(uids.into_iter().map($crate::Tensor::from_uid).collect())
        }

        /// The graph inputs that left the graph at validation because no op
        /// read them ([`Graph::set_prune_unread_inputs`]), in ascending UID
        /// order (since 0.4).
        pub fn pruned_tensors(&self) -> $crate::Result<Vec<$crate::Tensor>> {
            let mut count = 0usize;
            // SAFETY: size query (NULL buffer), then a buffer of `count`.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_pruned_uids(
                    self.raw(),
                    ::std::ptr::null_mut(),
                    0,
                    &mut count,
                )
            })?;
            let mut uids = vec![0i64; count];
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_pruned_uids(
                    self.raw(),
                    uids.as_mut_ptr(),
                    uids.len(),
                    &mut count,
                )
            })?;
            uids.truncate(count);
            Ok(uids.into_iter().map($crate::Tensor::from_uid).collect())
        }

        /// The tensor named `name`; [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
        /// if there is none.
        pub fn find_tensor(&self, name: &str) -> $crate::Result<$crate::Tensor> {
            let name = $crate::options::c_string(name, "tensor name")?;
            let mut uid = 0i64;
            // SAFETY: a NUL-terminated name and a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_find_tensor(self.raw(), name.as_ptr(), &mut uid)
            })?;
            Ok($crate::Tensor::from_uid(uid))
        }

        /// Dims and strides of a tensor (inferred shapes are known as soon as
        /// the op is added).
        pub fn shape(&self, tensor: $crate::Tensor) -> $crate::Result<$crate::Shape> {
            const MAX: usize = ::cudnnfe_sys::CUDNNFE_MAX_DIMS as usize;
            let mut dims = [0i64; MAX];
            let mut strides = [0i64; MAX];
            let mut ndims = 0i32;
            // SAFETY: both arrays hold CUDNNFE_MAX_DIMS entries, the capacity given.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_get_shape(
                    self.raw(),
                    tensor.uid(),
                    dims.as_mut_ptr(),
                    strides.as_mut_ptr(),
                    MAX as i32,
                    &mut ndims,
                )
            })?;
            let n = (ndims.max(0) as usize).min(MAX);
            Ok($crate::Shape {
                dims: dims[..n].to_vec(),
                strides: strides[..n].to_vec(),
            })
        }

        /// Dims of a tensor.
        pub fn dims(&self, tensor: $crate::Tensor) -> $crate::Result<Vec<i64>> {
            Ok(self.shape(tensor)?.dims)
        }

        /// Strides of a tensor, in elements.
        pub fn strides(&self, tensor: $crate::Tensor) -> $crate::Result<Vec<i64>> {
            Ok(self.shape(tensor)?.strides)
        }

        /// Data type of a tensor as set: [`DataType::NotSet`](crate::DataType::NotSet)
        /// until validation (or build) resolves it from the graph's defaults.
        pub fn dtype(&self, tensor: $crate::Tensor) -> $crate::Result<$crate::DataType> {
            let mut dtype = 0i32;
            // SAFETY: a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_get_dtype(self.raw(), tensor.uid(), &mut dtype)
            })?;
            Ok($crate::DataType::from_raw(dtype))
        }

        /// Name of a tensor (op outputs are named `"<node>::<port>"`).
        pub fn tensor_name(&self, tensor: $crate::Tensor) -> $crate::Result<String> {
            let mut name: *const ::std::ffi::c_char = ::std::ptr::null();
            // SAFETY: on success `name` points at the graph's copy, valid
            // until the tensor is renamed; copied at once.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_get_name(self.raw(), tensor.uid(), &mut name)
            })?;
            Ok(unsafe { $crate::error::owned_str(name) })
        }

        /// Whether the tensor needs a buffer at execute: graph inputs and
        /// outputs do; virtual intermediates and pass-by-value scalars do not.
        pub fn is_bound(&self, tensor: $crate::Tensor) -> $crate::Result<bool> {
            let mut bound = 0i32;
            // SAFETY: a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_is_bound(self.raw(), tensor.uid(), &mut bound)
            })?;
            Ok(bound != 0)
        }

        /// The value of a scalar made with `Graph::scalar`
        /// (`cudnnfe_tensor_get_scalar_value`, since 0.4); an
        /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
        /// for any other tensor.
        pub fn scalar_value(&self, tensor: $crate::Tensor) -> $crate::Result<f64> {
            let mut value = 0f64;
            // SAFETY: a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_get_scalar_value(self.raw(), tensor.uid(), &mut value)
            })?;
            Ok(value)
        }

        /// Whether the tensor is a pass-by-value graph input: bound at
        /// execute to a host pointer whose one element cuDNN reads by value
        /// (`cudnnfe_tensor_get_pass_by_value`, since 0.3).
        pub fn is_pass_by_value(&self, tensor: $crate::Tensor) -> $crate::Result<bool> {
            let mut flag = 0i32;
            // SAFETY: a valid out-pointer.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_tensor_get_pass_by_value(self.raw(), tensor.uid(), &mut flag)
            })?;
            Ok(flag != 0)
        }

        /// The graph's structural fingerprint, 32 lowercase hex digits
        /// (`cudnnfe_graph_get_fingerprint`): a hash of the description
        /// without graph, node and tensor names. Graphs with equal
        /// fingerprints share plans. Data types left unset are hashed as
        /// such: fingerprint a validated or built graph to get the plan
        /// cache's key.
        pub fn fingerprint(&self) -> $crate::Result<String> {
            const SIZE: usize = ::cudnnfe_sys::CUDNNFE_FINGERPRINT_SIZE as usize;
            let mut buf = [0u8; SIZE];
            // SAFETY: a buffer of CUDNNFE_FINGERPRINT_SIZE bytes, its capacity.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_get_fingerprint(
                    self.raw(),
                    buf.as_mut_ptr().cast(),
                    SIZE,
                )
            })?;
            let len = buf.iter().position(|&b| b == 0).unwrap_or(SIZE);
            Ok(String::from_utf8_lossy(&buf[..len]).into_owned())
        }

        /// The graph description as versioned JSON (`docs/graph-json.md`),
        /// which rebuilds on any GPU and cuDNN version.
        pub fn to_json(&self) -> $crate::Result<String> {
            String::from_utf8(self.to_bytes()?).map_err(|e| {
                $crate::Error::new(
                    $crate::ErrorKind::Internal,
                    format!("the serialized graph is not UTF-8: {e}"),
                )
            })
        }

        /// The graph description (the JSON of [`to_json`](Self::to_json)) as bytes.
        pub fn to_bytes(&self) -> $crate::Result<Vec<u8>> {
            let mut size = 0usize;
            // SAFETY: size query, then a buffer of `size` bytes.
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_serialize(
                    self.raw(),
                    ::std::ptr::null_mut(),
                    0,
                    &mut size,
                )
            })?;
            let mut bytes = vec![0u8; size];
            self.check(unsafe {
                ::cudnnfe_sys::cudnnfe_graph_serialize(
                    self.raw(),
                    bytes.as_mut_ptr().cast(),
                    bytes.len(),
                    &mut size,
                )
            })?;
            bytes.truncate(size);
            Ok(bytes)
        }
    };
}
pub(crate) use graph_queries;

/// How to create a graph input: dims, and optionally a name, a data type
/// and strides.
///
/// ```
/// use cudnnfe::{DataType, TensorDesc};
/// // An NHWC image: logical dims NCHW, strides give the memory layout.
/// let x = TensorDesc::new([8, 3, 32, 32])
///     .name("x")
///     .dtype(DataType::Half)
///     .strides([3 * 32 * 32, 1, 32 * 3, 3]);
/// assert_eq!(x.dims, [8, 3, 32, 32]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorDesc {
    /// Name (unique in the graph); `None`: an automatic name.
    pub name: Option<String>,
    /// Element type; `NotSet` takes the graph's io type at validation.
    pub dtype: DataType,
    /// Dims, 1 to 8 of them (`CUDNNFE_MAX_DIMS`).
    pub dims: Vec<i64>,
    /// Strides in elements (any layout; 0 broadcasts); `None`: packed
    /// row-major.
    pub strides: Option<Vec<i64>>,
}

impl TensorDesc {
    /// A tensor of `dims`, packed row-major, data type not set.
    pub fn new(dims: impl Into<Vec<i64>>) -> Self {
        TensorDesc {
            dims: dims.into(),
            ..Default::default()
        }
    }
    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the data type.
    pub fn dtype(mut self, dtype: DataType) -> Self {
        self.dtype = dtype;
        self
    }
    /// Sets the strides (in elements, one per dim).
    pub fn strides(mut self, strides: impl Into<Vec<i64>>) -> Self {
        self.strides = Some(strides.into());
        self
    }
}

/// Outputs of [`Graph::sdpa`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaOutputs {
    /// The attention output `o [b, h_q, s_q, d_v]`.
    pub o: Tensor,
    /// The softmax statistics `[b, h_q, s_q, 1]` FLOAT, when
    /// [`SdpaOptions::generate_stats`] was set.
    pub stats: Option<Tensor>,
}

/// Outputs of [`Graph::sdpa_backward`] and [`Graph::sdpa_backward_with_dbias`]:
/// gradients with the shapes and dimension orders of q, k and v (and of the
/// bias).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaGradients {
    /// Gradient of q.
    pub dq: Tensor,
    /// Gradient of k.
    pub dk: Tensor,
    /// Gradient of v.
    pub dv: Tensor,
    /// Gradient of the bias (`[1, h_q, s_q, s_kv]`, summed over the batch):
    /// only from [`Graph::sdpa_backward_with_dbias`].
    pub dbias: Option<Tensor>,
}

/// Outputs of [`Graph::layernorm`], [`Graph::instancenorm`] and
/// [`Graph::adalayernorm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerNormOutputs {
    /// The normalized output, x's shape.
    pub y: Tensor,
    /// Mean of each group (layer norm: `[N, 1, ..., 1]`; instance norm:
    /// `[N, C, 1, ...]`; adaptive layer norm: `[B, S, 1, ...]`) FLOAT
    /// (training only).
    pub mean: Option<Tensor>,
    /// `1/sqrt(var + epsilon)` of each group, shaped as `mean` (training
    /// only).
    pub inv_variance: Option<Tensor>,
}

/// Outputs of [`Graph::batchnorm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchNormOutputs {
    /// The normalized output, x's shape.
    pub y: Tensor,
    /// Per-channel mean `[1, C, 1, ...]` FLOAT.
    pub mean: Tensor,
    /// Per-channel `1/sqrt(var + epsilon)` `[1, C, 1, ...]` FLOAT (biased
    /// variance).
    pub inv_variance: Tensor,
    /// Updated running mean, when running statistics were given.
    pub next_running_mean: Option<Tensor>,
    /// Updated running variance (unbiased batch variance), when running
    /// statistics were given.
    pub next_running_var: Option<Tensor>,
}

/// Outputs of [`Graph::resample`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResampleOutputs {
    /// The pooled or upsampled output, channels-last unless its strides are set.
    pub y: Tensor,
    /// Max pooling with [`ResampleOptions::generate_index`]: the position of
    /// each maximum inside its window (row-major over the window).
    pub index: Option<Tensor>,
}

/// The per-tensor descales and scales of [`Graph::sdpa_fp8`]: each a FLOAT
/// tensor of one element (a graph input or a scalar).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaFp8Scales {
    /// Descale of q.
    pub descale_q: Tensor,
    /// Descale of k.
    pub descale_k: Tensor,
    /// Descale of v.
    pub descale_v: Tensor,
    /// Descale of the FP8 softmax output P.
    pub descale_s: Tensor,
    /// Scale of P before its cast to FP8.
    pub scale_s: Tensor,
    /// Scale of the output o.
    pub scale_o: Tensor,
}

/// Outputs of [`Graph::sdpa_fp8`]. Mark the amax outputs as graph outputs
/// (validation refuses virtual ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaFp8Outputs {
    /// The attention output `o [b, h_q, s_q, d_v]`, times `scale_o`.
    pub o: Tensor,
    /// The statistics `[b, h_q, s_q, 1]` FLOAT, when asked for.
    pub stats: Option<Tensor>,
    /// Largest magnitude of P `[1, 1, 1, 1]` FLOAT.
    pub amax_s: Tensor,
    /// Largest magnitude of the output before `scale_o`.
    pub amax_o: Tensor,
}

/// The per-tensor descales and scales of [`Graph::sdpa_fp8_backward`]: each
/// a FLOAT tensor of one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaFp8BackwardScales {
    /// Descale of q.
    pub descale_q: Tensor,
    /// Descale of k.
    pub descale_k: Tensor,
    /// Descale of v.
    pub descale_v: Tensor,
    /// Descale of the forward's output o.
    pub descale_o: Tensor,
    /// Descale of the output gradient dO.
    pub descale_do: Tensor,
    /// Descale of the FP8 P.
    pub descale_s: Tensor,
    /// Descale of the FP8 dS.
    pub descale_dp: Tensor,
    /// Scale of P before its cast to FP8.
    pub scale_s: Tensor,
    /// Scale of dq.
    pub scale_dq: Tensor,
    /// Scale of dk.
    pub scale_dk: Tensor,
    /// Scale of dv.
    pub scale_dv: Tensor,
    /// Scale of dS before its cast to FP8.
    pub scale_dp: Tensor,
}

/// Outputs of [`Graph::sdpa_fp8_backward`]: the gradients (shapes and
/// dimension orders of q, k, v) and their amax outputs `[1, 1, 1, 1]`
/// FLOAT, which must be marked as graph outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdpaFp8Gradients {
    /// Gradient of q.
    pub dq: Tensor,
    /// Gradient of k.
    pub dk: Tensor,
    /// Gradient of v.
    pub dv: Tensor,
    /// Largest magnitude of dq before its scale.
    pub amax_dq: Tensor,
    /// Largest magnitude of dk before its scale.
    pub amax_dk: Tensor,
    /// Largest magnitude of dv before its scale.
    pub amax_dv: Tensor,
    /// Largest magnitude of dS before its scale.
    pub amax_dp: Tensor,
}

/// Outputs of [`Graph::rmsnorm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmsNormOutputs {
    /// The normalized output, x's shape.
    pub y: Tensor,
    /// Per-row `1/sqrt(mean(x²) + epsilon)` `[N, 1, ..., 1]` FLOAT (training only).
    pub inv_rms: Option<Tensor>,
}

/// Outputs of [`Graph::layernorm_backward`] and [`Graph::rmsnorm_backward`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NormGradients {
    /// Gradient of x.
    pub dx: Tensor,
    /// Gradient of scale.
    pub dscale: Tensor,
    /// Gradient of bias (layer norm always; RMS norm when the forward had a bias).
    pub dbias: Option<Tensor>,
}

/// Outputs of [`Graph::softmax`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftmaxOutputs {
    /// `softmax(x)` over the last dimension.
    pub y: Tensor,
    /// Log-sum-exp over the last dim `[..., 1]` FLOAT, when asked for.
    pub stats: Option<Tensor>,
}

/// Why [`Graph::try_build`] failed, with the graph given back so that it can
/// be built again (for instance for another target).
#[derive(Debug)]
pub struct BuildError {
    /// The failure.
    pub error: Error,
    /// The unbuilt graph. `None` only if the library built the graph but
    /// reading the built plan's properties then failed (an internal error).
    pub graph: Option<Graph>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Error {
        e.error
    }
}

/// A graph of tensors and operations under construction.
///
/// Create it, add inputs ([`input`](Self::input), [`add_tensor`](Self::add_tensor),
/// [`scalar`](Self::scalar)) and operations ([`matmul`](Self::matmul),
/// [`conv_fprop`](Self::conv_fprop), [`pointwise`](Self::pointwise),
/// [`reduction`](Self::reduction), [`sdpa`](Self::sdpa), …), mark the
/// results you want with [`set_output`](Self::set_output), then
/// [`build`](Self::build) it into a [`BuiltGraph`] that runs.
///
/// Every failing call returns an [`Error`] with the library's message, read
/// from this graph (`cudnnfe_graph_last_error`). A call that fails leaves the
/// graph as it was.
///
/// # Threads
///
/// A graph under construction belongs to one thread at a time: `Graph` is
/// [`Send`] but not [`Sync`]. Different graphs may be built concurrently.
///
/// ```
/// use cudnnfe::{DataType, Graph, MatmulOptions};
/// let mut g = Graph::named("mlp")?;
/// let a = g.input("a", DataType::Float, &[4, 8])?;
/// let b = g.input("b", DataType::Float, &[8, 5])?;
/// let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
/// g.set_output(c, true)?;
/// assert_eq!(g.dims(c)?, [4, 5]);
/// assert_eq!(g.tensor_name(c)?, "mm::c");
/// # Ok::<(), cudnnfe::Error>(())
/// ```
pub struct Graph {
    ptr: NonNull<sys::cudnnfe_graph_t>,
}

// SAFETY: the C ABI lets a graph under construction move between threads
// ("belongs to one thread at a time"); `&Graph` is not shared (no Sync).
unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cudnnfe_graph_create and is destroyed
        // once. The status can only say the pointer was bad, which it is not.
        unsafe {
            sys::cudnnfe_graph_destroy(self.ptr.as_ptr());
        }
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("tensors", &self.tensor_count().unwrap_or(0))
            .field("nodes", &self.node_count().unwrap_or(0))
            .finish()
    }
}

impl Graph {
    /// Creates an empty graph. Also checks, once per process, that the loaded
    /// libcudnnfe is at least the version these bindings were generated from
    /// ([`ErrorKind::NotSupported`] otherwise).
    pub fn new() -> Result<Graph> {
        crate::ensure_compatible()?;
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        crate::error::check_thread(unsafe { sys::cudnnfe_graph_create(&mut raw) })?;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "cudnnfe_graph_create returned OK and NULL",
            )
        })?;
        Ok(Graph { ptr })
    }

    /// Creates an empty graph named `name` (the name appears in messages).
    pub fn named(name: &str) -> Result<Graph> {
        let mut graph = Graph::new()?;
        graph.set_name(name)?;
        Ok(graph)
    }

    /// Loads a graph description made by [`to_json`](Self::to_json).
    /// [`ErrorKind::BadSerializedData`] says what is wrong and where.
    pub fn from_json(json: &str) -> Result<Graph> {
        Graph::from_bytes(json.as_bytes())
    }

    /// Loads a graph description made by [`to_bytes`](Self::to_bytes) or
    /// [`to_json`](Self::to_json). Never crashes on hostile input.
    pub fn from_bytes(data: &[u8]) -> Result<Graph> {
        let graph = Graph::new()?;
        // SAFETY: `data` is valid for `data.len()` bytes.
        graph.check(unsafe {
            sys::cudnnfe_graph_deserialize(graph.raw(), data.as_ptr().cast::<c_char>(), data.len())
        })?;
        Ok(graph)
    }

    pub(crate) fn raw(&self) -> *mut sys::cudnnfe_graph_t {
        self.ptr.as_ptr()
    }

    /// Turns a status into a `Result` with this graph's message.
    pub(crate) fn check(&self, status: sys::cudnnfe_status_t) -> Result<()> {
        // SAFETY: a live graph; the message is copied before any other call.
        check(status, || unsafe {
            owned_str(sys::cudnnfe_graph_last_error(self.raw()))
        })
    }

    /// The raw `cudnnfe_graph_t *`, for calls this crate does not wrap. Do
    /// not build or destroy it, or change tensor UIDs, through the pointer.
    pub fn as_raw(&self) -> *mut sys::cudnnfe_graph_t {
        self.raw()
    }

    /// Message of the last failing call on this graph; `""` if none.
    pub fn last_error(&self) -> String {
        // SAFETY: a live graph; copied at once.
        unsafe { owned_str(sys::cudnnfe_graph_last_error(self.raw())) }
    }

    // ---- graph-wide settings ----

    /// Names the graph (the name appears in messages).
    pub fn set_name(&mut self, name: &str) -> Result<&mut Self> {
        let name = c_string(name, "graph name")?;
        // SAFETY: a NUL-terminated string; the library copies it.
        self.check(unsafe { sys::cudnnfe_graph_set_name(self.raw(), name.as_ptr()) })?;
        Ok(self)
    }

    /// Data type given at validation to graph inputs and outputs whose type
    /// is not set.
    pub fn set_io_dtype(&mut self, dtype: DataType) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe { sys::cudnnfe_graph_set_io_dtype(self.raw(), dtype.as_raw()) })?;
        Ok(self)
    }

    /// With `prune` true, graph inputs that no op reads leave the graph when
    /// it is validated (as cudnn-frontend's graph holds only the tensors its
    /// ops use): a binding for one is ignored at execute, and a call naming
    /// one fails saying that it left ([`pruned_tensors`](Self::pruned_tensors)
    /// lists them). Default false: such an input stays and takes no buffer
    /// (since 0.4).
    pub fn set_prune_unread_inputs(&mut self, prune: bool) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_graph_set_prune_unread_inputs(self.raw(), i32::from(prune))
        })?;
        Ok(self)
    }

    /// Data type given at validation to virtual (intermediate) tensors whose
    /// type is not set.
    pub fn set_intermediate_dtype(&mut self, dtype: DataType) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_graph_set_intermediate_dtype(self.raw(), dtype.as_raw())
        })?;
        Ok(self)
    }

    /// Data type of operations' math when their options do not set one.
    pub fn set_compute_dtype(&mut self, dtype: DataType) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe { sys::cudnnfe_graph_set_compute_dtype(self.raw(), dtype.as_raw()) })?;
        Ok(self)
    }

    // ---- tensors ----

    /// Adds a graph input described by `desc`.
    pub fn add_tensor(&mut self, desc: &TensorDesc) -> Result<Tensor> {
        let name = c_name(&desc.name, "tensor name")?;
        if let Some(strides) = &desc.strides {
            if strides.len() != desc.dims.len() {
                return Err(Error::invalid_argument(format!(
                    "tensor {:?}: {} strides for {} dims {:?}",
                    desc.name.as_deref().unwrap_or("(unnamed)"),
                    strides.len(),
                    desc.dims.len(),
                    desc.dims
                )));
            }
        }
        let ndims = i32::try_from(desc.dims.len()).unwrap_or(i32::MAX);
        let strides = desc.strides.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        let mut uid = 0i64;
        // SAFETY: `dims` and `strides` (when given) hold `ndims` entries.
        self.check(unsafe {
            sys::cudnnfe_graph_add_tensor(
                self.raw(),
                crate::options::name_ptr(&name),
                desc.dtype.as_raw(),
                ndims,
                desc.dims.as_ptr(),
                strides,
                &mut uid,
            )
        })?;
        Ok(Tensor::from_uid(uid))
    }

    /// Adds a packed row-major graph input: shorthand for
    /// [`add_tensor`](Self::add_tensor).
    pub fn input(&mut self, name: &str, dtype: DataType, dims: &[i64]) -> Result<Tensor> {
        self.add_tensor(&TensorDesc::new(dims).name(name).dtype(dtype))
    }

    /// Adds a pass-by-value scalar (shape `[1]`) holding `value`. It is fed
    /// to the backend automatically and takes no buffer at execute. An empty
    /// `name` gives an automatic one.
    pub fn scalar(&mut self, name: &str, dtype: DataType, value: f64) -> Result<Tensor> {
        let name = c_string(name, "scalar name")?;
        let mut uid = 0i64;
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_scalar(
                self.raw(),
                name.as_ptr(),
                dtype.as_raw(),
                value,
                &mut uid,
            )
        })?;
        Ok(Tensor::from_uid(uid))
    }

    /// Marks an operation's output as a graph output (it then needs a buffer
    /// at execute), or back to virtual. On a graph input, `true` does
    /// nothing (an input is never virtual; an op may take it as its output
    /// later, as sdpa's `score_max`) and `false` is an invalid argument.
    pub fn set_output(&mut self, tensor: Tensor, is_output: bool) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_output(self.raw(), tensor.uid(), is_output as i32)
        })?;
        Ok(self)
    }

    /// Makes the next op added write its output `port` (its name in
    /// docs/graph-json.md, e.g. "dBias") into `tensor`, a tensor made with
    /// [`Graph::add_tensor`] that no op reads yet; it becomes a graph output
    /// keeping its UID, name, dims and strides. The next `add_*` call
    /// consumes the request, added or refused (since 0.4).
    pub fn set_next_output(&mut self, port: &str, tensor: Tensor) -> Result<&mut Self> {
        let port = c_string(port, "output port name")?;
        // SAFETY: a NUL-terminated string the library copies; plain values.
        self.check(unsafe {
            sys::cudnnfe_graph_set_next_output(self.raw(), port.as_ptr(), tensor.uid())
        })?;
        Ok(self)
    }

    /// Marks a one-element graph input as pass-by-value: its binding at
    /// execute is a pointer to host memory, read by value when execute is
    /// called (cudnn-frontend's `is_pass_by_value`; since 0.3).
    pub fn set_pass_by_value(&mut self, tensor: Tensor, pass_by_value: bool) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_pass_by_value(self.raw(), tensor.uid(), pass_by_value as i32)
        })?;
        Ok(self)
    }

    /// Gives an attention operand its ragged (packed) offsets after its op
    /// was added (cudnn-frontend's `set_ragged_offset`, e.g. on the O that
    /// [`Graph::sdpa`] returned); `None` makes it padded. See
    /// `cudnnfe_graph_set_ragged_offset` for the tensors it takes (since 0.3).
    pub fn set_ragged_offset(
        &mut self,
        tensor: Tensor,
        offset: Option<Tensor>,
    ) -> Result<&mut Self> {
        let offset = offset.map_or(0, |t| t.uid());
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_graph_set_ragged_offset(self.raw(), tensor.uid(), offset)
        })?;
        Ok(self)
    }

    /// Opens a score modifier (cudnn-frontend's `score_mod`;
    /// docs/attention.md) and returns its placeholder, a virtual FLOAT
    /// tensor of the scores' `dims` `[b, h_q, s_q, s_kv]`. Add its nodes with
    /// [`Graph::pointwise`], close it with [`Graph::end_score_mod`], then name
    /// the placeholder in `SdpaOptions::score_mod` (or the backward's
    /// `score_mod` / `score_mod_bprop`). `WrongState` while another is open
    /// (`cudnnfe_graph_begin_score_mod`; since 0.3).
    pub fn begin_score_mod(&mut self, name: Option<&str>, dims: &[i64]) -> Result<Tensor> {
        let name = c_name(&name.map(str::to_owned), "score modifier name")?;
        let ndims = i32::try_from(dims.len()).unwrap_or(i32::MAX);
        let mut uid = 0i64;
        // SAFETY: `dims` holds `ndims` entries; the name lives for the call.
        self.check(unsafe {
            sys::cudnnfe_graph_begin_score_mod(
                self.raw(),
                crate::options::name_ptr(&name),
                ndims,
                dims.as_ptr(),
                &mut uid,
            )
        })?;
        Ok(Tensor::from_uid(uid))
    }

    /// Closes the open score modifier of placeholder `score` with `result`
    /// (a node output of it that depends on `score`); `InvalidGraph` naming
    /// the rule otherwise, and the modifier stays open
    /// (`cudnnfe_graph_end_score_mod`; since 0.3).
    pub fn end_score_mod(&mut self, score: Tensor, result: Tensor) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_graph_end_score_mod(self.raw(), score.uid(), result.uid())
        })?;
        Ok(self)
    }

    /// Overrides a tensor's data type (inferred outputs included).
    pub fn set_dtype(&mut self, tensor: Tensor, dtype: DataType) -> Result<&mut Self> {
        // SAFETY: plain values.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_dtype(self.raw(), tensor.uid(), dtype.as_raw())
        })?;
        Ok(self)
    }

    /// Overrides a tensor's dims (inferred outputs included); strides are
    /// re-derived as packed in the same dimension order unless set explicitly.
    pub fn set_dims(&mut self, tensor: Tensor, dims: &[i64]) -> Result<&mut Self> {
        let ndims = i32::try_from(dims.len()).unwrap_or(i32::MAX);
        // SAFETY: `dims` holds `ndims` entries.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_dims(self.raw(), tensor.uid(), ndims, dims.as_ptr())
        })?;
        Ok(self)
    }

    /// Overrides a tensor's strides (one per dim, in elements).
    pub fn set_strides(&mut self, tensor: Tensor, strides: &[i64]) -> Result<&mut Self> {
        let ndims = i32::try_from(strides.len()).unwrap_or(i32::MAX);
        // SAFETY: `strides` holds `ndims` entries.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_strides(self.raw(), tensor.uid(), ndims, strides.as_ptr())
        })?;
        Ok(self)
    }

    /// Renames a tensor; names are unique within a graph.
    pub fn set_tensor_name(&mut self, tensor: Tensor, name: &str) -> Result<&mut Self> {
        let name = c_string(name, "tensor name")?;
        // SAFETY: a NUL-terminated string; the library copies it.
        self.check(unsafe {
            sys::cudnnfe_tensor_set_name(self.raw(), tensor.uid(), name.as_ptr())
        })?;
        Ok(self)
    }

    /// Changes a tensor's UID (it must be > 0 and unused) and returns the
    /// tensor under its new UID; the old `Tensor` value no longer names it.
    pub fn set_uid(&mut self, tensor: Tensor, new_uid: i64) -> Result<Tensor> {
        // SAFETY: plain values.
        self.check(unsafe { sys::cudnnfe_tensor_set_uid(self.raw(), tensor.uid(), new_uid) })?;
        Ok(Tensor::from_uid(new_uid))
    }

    graph_queries!();

    // ---- operations ----

    /// Convolution forward: `y[N,K,*] = conv(image[N,C,*], weight[K,C,*])`.
    /// Dims are logical NC(D)HW in every layout; strides give the memory
    /// layout. `y` (like dgrad's dx and wgrad's dw) is channels-last unless
    /// its strides are set, as in cudnn-frontend.
    pub fn conv_fprop(
        &mut self,
        image: Tensor,
        weight: Tensor,
        options: &ConvOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut y = 0i64;
        // SAFETY: options filled from the init function; valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_conv_fprop(self.raw(), image.uid(), weight.uid(), &raw, &mut y)
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// Convolution backward data: `dx = dgrad(loss dy[N,K,*], weight[K,C,*])`.
    /// `dx`'s spatial dims are the smallest consistent size; override them
    /// with [`set_dims`](Self::set_dims) when the stride is above 1.
    pub fn conv_dgrad(
        &mut self,
        loss: Tensor,
        weight: Tensor,
        options: &ConvOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut dx = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_conv_dgrad(self.raw(), loss.uid(), weight.uid(), &raw, &mut dx)
        })?;
        Ok(Tensor::from_uid(dx))
    }

    /// Convolution backward filter: `dw = wgrad(image x[N,C,*], loss
    /// dy[N,K,*])`. `dw`'s filter size is the largest consistent size;
    /// override it with [`set_dims`](Self::set_dims) when the stride is above 1.
    pub fn conv_wgrad(
        &mut self,
        image: Tensor,
        loss: Tensor,
        options: &ConvOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut dw = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_conv_wgrad(self.raw(), image.uid(), loss.uid(), &raw, &mut dw)
        })?;
        Ok(Tensor::from_uid(dw))
    }

    /// Matrix product `c[..., M, N] = a[..., M, K] @ b[..., K, N]`. Ranks
    /// must match (2 to 8); batch dims of size 1 broadcast.
    pub fn matmul(&mut self, a: Tensor, b: Tensor, options: &MatmulOptions) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut c = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_matmul(self.raw(), a.uid(), b.uid(), &raw, &mut c)
        })?;
        Ok(Tensor::from_uid(c))
    }

    /// Elementwise operation on one to three operands (see [`PointwiseMode`]
    /// for their roles). Operands broadcast: each dim equals the output's or
    /// is 1. More than three operands is an invalid argument.
    pub fn pointwise(
        &mut self,
        mode: PointwiseMode,
        inputs: &[Tensor],
        options: &PointwiseOptions,
    ) -> Result<Tensor> {
        if inputs.len() > 3 {
            return Err(Error::invalid_argument(format!(
                "pointwise {mode:?}: {} operands given; at most 3 (in0, in1, in2)",
                inputs.len()
            )));
        }
        let mut ports = [0i64; 3];
        for (port, tensor) in ports.iter_mut().zip(inputs) {
            *port = tensor.uid();
        }
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut out = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_pointwise(
                self.raw(),
                mode.as_raw(),
                ports[0],
                ports[1],
                ports[2],
                &raw,
                &mut out,
            )
        })?;
        Ok(Tensor::from_uid(out))
    }

    /// A unary pointwise operation with default options, e.g.
    /// `g.unary(PointwiseMode::ReluFwd, x)`.
    pub fn unary(&mut self, mode: PointwiseMode, x: Tensor) -> Result<Tensor> {
        self.pointwise(mode, &[x], &PointwiseOptions::default())
    }

    /// A binary pointwise operation with default options, e.g.
    /// `g.binary(PointwiseMode::Add, a, b)`.
    pub fn binary(&mut self, mode: PointwiseMode, a: Tensor, b: Tensor) -> Result<Tensor> {
        self.pointwise(mode, &[a, b], &PointwiseOptions::default())
    }

    /// `condition ? if_true : if_false`, elementwise (BINARY_SELECT).
    pub fn select(
        &mut self,
        condition: Tensor,
        if_true: Tensor,
        if_false: Tensor,
    ) -> Result<Tensor> {
        self.pointwise(
            PointwiseMode::BinarySelect,
            &[if_true, if_false, condition],
            &PointwiseOptions::default(),
        )
    }

    /// Reduction of `x` along the options' axes (all of them by default);
    /// reduced dims become 1. `y` is channels-last (N, spatial..., C;
    /// row-major for 2 dims) unless its strides are set, as in cudnn-frontend.
    pub fn reduction(
        &mut self,
        mode: ReductionMode,
        x: Tensor,
        options: &ReductionOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut y = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_reduction(self.raw(), mode.as_raw(), x.uid(), &raw, &mut y)
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// Scaled dot-product attention forward. `q [b, h_q, s_q, d]`,
    /// `k [b, h_k, s_kv, d]`, `v [b, h_v, s_kv, d_v]` in logical BHSD order
    /// with any strides (BSHD storage included); `h_k` and `h_v` (which may
    /// differ) must each divide `h_q` (GQA, MQA). Writes `o [b, h_q, s_q,
    /// d_v]`, and the statistics when asked. The tensors named by
    /// `score_max`, `score_sum_exp` and `rng_dump` (made with
    /// [`input`](Self::input)) become the node's outputs: bind them with
    /// `HostBuffer::output`.
    pub fn sdpa(
        &mut self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        options: &SdpaOptions,
    ) -> Result<SdpaOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut o = 0i64;
        let mut stats = 0i64;
        // SAFETY: as conv_fprop; `stats` is always a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_sdpa(
                self.raw(),
                q.uid(),
                k.uid(),
                v.uid(),
                &raw,
                &mut o,
                &mut stats,
            )
        })?;
        let o = Tensor::from_uid(o);
        let stats = Tensor::from_optional_uid(stats);
        Ok(SdpaOutputs { o, stats })
    }

    /// A paged K or V cache gathered to `y [b, h, s, d]` (cudnn-frontend's
    /// paged_cache_load; experimental, cuDNN 9.5+ on the GPU). `container` is
    /// `[num_pages, h, page_size, d]`, `page_table` `[b, 1, pages, 1]` and
    /// `seq_len` `[b, 1, 1, 1]`, integers (INT32 as in cudnn-frontend). Row j
    /// of sequence n is row `j % page_size` of page
    /// `page_table[n][j / page_size]`; rows
    /// `j >= seq_len[n]` are unspecified (0 on the CPU reference). `s` is
    /// `pages * page_size` unless y's dims are set
    /// ([`set_dims`](Self::set_dims)) with `ceil(s / page_size) == pages`.
    pub fn paged_cache_load(
        &mut self,
        container: Tensor,
        seq_len: Tensor,
        page_table: Tensor,
        options: &PagedCacheLoadOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut y = 0i64;
        // SAFETY: as conv_fprop.
        self.check(unsafe {
            sys::cudnnfe_graph_add_paged_cache_load(
                self.raw(),
                container.uid(),
                seq_len.uid(),
                page_table.uid(),
                &raw,
                &mut y,
            )
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// Scaled dot-product attention backward: from q, k, v, o, `d_o` (shapes
    /// as in the forward) and `stats` (the forward's statistics, `[b, h_q,
    /// s_q, 1]` FLOAT), writes dq, dk and dv.
    #[allow(clippy::too_many_arguments)]
    pub fn sdpa_backward(
        &mut self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        o: Tensor,
        d_o: Tensor,
        stats: Tensor,
        options: &SdpaBackwardOptions,
    ) -> Result<SdpaGradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut dq, mut dk, mut dv) = (0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_sdpa_backward(
                self.raw(),
                q.uid(),
                k.uid(),
                v.uid(),
                o.uid(),
                d_o.uid(),
                stats.uid(),
                &raw,
                &mut dq,
                &mut dk,
                &mut dv,
            )
        })?;
        Ok(SdpaGradients {
            dq: Tensor::from_uid(dq),
            dk: Tensor::from_uid(dk),
            dv: Tensor::from_uid(dv),
            dbias: None,
        })
    }

    /// [`sdpa_backward`](Self::sdpa_backward) that also writes the gradient
    /// of the bias: `options.bias` must be set with dims `[1, h_q, s_q,
    /// s_kv]` (the one dBias shape cuDNN's attention engines produce), and
    /// [`SdpaGradients::dbias`] has the bias's dims and holds the sum over
    /// the batch of the gradient of the biased scores.
    #[allow(clippy::too_many_arguments)]
    pub fn sdpa_backward_with_dbias(
        &mut self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        o: Tensor,
        d_o: Tensor,
        stats: Tensor,
        options: &SdpaBackwardOptions,
    ) -> Result<SdpaGradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut dq, mut dk, mut dv, mut dbias) = (0i64, 0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_sdpa_backward_ex(
                self.raw(),
                q.uid(),
                k.uid(),
                v.uid(),
                o.uid(),
                d_o.uid(),
                stats.uid(),
                &raw,
                &mut dq,
                &mut dk,
                &mut dv,
                &mut dbias,
            )
        })?;
        Ok(SdpaGradients {
            dq: Tensor::from_uid(dq),
            dk: Tensor::from_uid(dk),
            dv: Tensor::from_uid(dv),
            dbias: Tensor::from_optional_uid(dbias),
        })
    }

    /// Layer normalization: `y = (x - mean) * inv_variance * scale + bias`.
    /// `scale` and `bias` have x's rank, each dim x's or 1; the statistics
    /// are taken over the dims where the scale is not 1, per index of the
    /// others (`[b, s, d]` with `[1, 1, d]`: per token). In training the
    /// statistics are outputs too.
    pub fn layernorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        options: &NormOptions,
    ) -> Result<LayerNormOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut mean, mut inv_variance) = (0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_layernorm(
                self.raw(),
                x.uid(),
                scale.uid(),
                bias.uid(),
                &raw,
                &mut y,
                &mut mean,
                &mut inv_variance,
            )
        })?;
        Ok(LayerNormOutputs {
            y: Tensor::from_uid(y),
            mean: Tensor::from_optional_uid(mean),
            inv_variance: Tensor::from_optional_uid(inv_variance),
        })
    }

    /// RMS normalization: `y = x * inv_rms * scale (+ bias)`, `inv_rms =
    /// 1/sqrt(mean(x²) + epsilon)` over the dims where the scale is not 1 (as
    /// [`Graph::layernorm`]). In training `inv_rms` is an output too.
    pub fn rmsnorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Option<Tensor>,
        options: &NormOptions,
    ) -> Result<RmsNormOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut inv_rms) = (0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_rmsnorm(
                self.raw(),
                x.uid(),
                scale.uid(),
                bias.map_or(0, Tensor::uid),
                &raw,
                &mut y,
                &mut inv_rms,
            )
        })?;
        Ok(RmsNormOutputs {
            y: Tensor::from_uid(y),
            inv_rms: Tensor::from_optional_uid(inv_rms),
        })
    }

    /// Layer normalization backward: dx, dscale and dbias from dy, x, scale
    /// and the forward's mean and inv_variance.
    pub fn layernorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        options: &NormOptions,
    ) -> Result<NormGradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut dx, mut dscale, mut dbias) = (0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_layernorm_backward(
                self.raw(),
                dy.uid(),
                x.uid(),
                scale.uid(),
                mean.uid(),
                inv_variance.uid(),
                &raw,
                &mut dx,
                &mut dscale,
                &mut dbias,
            )
        })?;
        Ok(NormGradients {
            dx: Tensor::from_uid(dx),
            dscale: Tensor::from_uid(dscale),
            dbias: Tensor::from_optional_uid(dbias),
        })
    }

    /// RMS normalization backward: dx and dscale (and dbias when
    /// `forward_had_bias`) from dy, x, scale and the forward's inv_rms.
    pub fn rmsnorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        inv_rms: Tensor,
        forward_had_bias: bool,
        options: &NormOptions,
    ) -> Result<NormGradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut dx, mut dscale, mut dbias) = (0i64, 0i64, 0i64);
        let dbias_ptr: *mut i64 = if forward_had_bias {
            &mut dbias
        } else {
            ptr::null_mut()
        };
        // SAFETY: filled options; valid out-pointers (dbias NULL asks for none).
        self.check(unsafe {
            sys::cudnnfe_graph_add_rmsnorm_backward(
                self.raw(),
                dy.uid(),
                x.uid(),
                scale.uid(),
                inv_rms.uid(),
                &raw,
                &mut dx,
                &mut dscale,
                dbias_ptr,
            )
        })?;
        Ok(NormGradients {
            dx: Tensor::from_uid(dx),
            dscale: Tensor::from_uid(dscale),
            dbias: Tensor::from_optional_uid(dbias),
        })
    }

    /// `y = softmax(x)` over the last dimension, and the log-sum-exp when
    /// asked for.
    pub fn softmax(&mut self, x: Tensor, options: &SoftmaxOptions) -> Result<SoftmaxOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut stats) = (0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_softmax(self.raw(), x.uid(), &raw, &mut y, &mut stats)
        })?;
        Ok(SoftmaxOutputs {
            y: Tensor::from_uid(y),
            stats: Tensor::from_optional_uid(stats),
        })
    }

    /// Batch normalization, training: statistics per channel `c` of `x [N,
    /// C, spatial...]` over N and the spatial dims (`M` values each);
    /// `scale` and `bias` are `[1, C, 1, ...]`. Writes `mean` and
    /// `inv_variance = 1/sqrt(var + epsilon)` (biased variance) and `y`.
    /// With `running = Some((prev_running_mean, prev_running_var))` it also
    /// writes the updated running statistics: `(1 - momentum) * prev +
    /// momentum * batch`, the variance Bessel-corrected (`var * M / (M -
    /// 1)`). Binding a next output to its prev input's buffer updates it in
    /// place. `options.phase` must be training (see
    /// [`batchnorm_inference`](Self::batchnorm_inference)).
    pub fn batchnorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        running: Option<(Tensor, Tensor)>,
        options: &NormOptions,
    ) -> Result<BatchNormOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (prev_mean, prev_var) = running.map_or((0, 0), |(m, v)| (m.uid(), v.uid()));
        let (mut y, mut mean, mut inv_variance, mut next_mean, mut next_var) =
            (0i64, 0i64, 0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_batchnorm(
                self.raw(),
                x.uid(),
                scale.uid(),
                bias.uid(),
                prev_mean,
                prev_var,
                &raw,
                &mut y,
                &mut mean,
                &mut inv_variance,
                &mut next_mean,
                &mut next_var,
            )
        })?;
        Ok(BatchNormOutputs {
            y: Tensor::from_uid(y),
            mean: Tensor::from_uid(mean),
            inv_variance: Tensor::from_uid(inv_variance),
            next_running_mean: Tensor::from_optional_uid(next_mean),
            next_running_var: Tensor::from_optional_uid(next_var),
        })
    }

    /// Batch normalization, inference:
    /// `y = (x - mean[c]) * inv_variance[c] * scale[c] + bias[c]` with the
    /// given per-channel `mean` and `inv_variance` (`[1, C, 1, ...]`; from
    /// running statistics, `inv_variance = 1/sqrt(running_var + epsilon)`).
    /// Reads only the options' name and compute type. On the GPU cuDNN runs
    /// it only inside its fused batch norm patterns (see the C header).
    pub fn batchnorm_inference(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        options: &NormOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut y = 0i64;
        // SAFETY: filled options and a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_batchnorm_inference(
                self.raw(),
                x.uid(),
                scale.uid(),
                bias.uid(),
                mean.uid(),
                inv_variance.uid(),
                &raw,
                &mut y,
            )
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// Batch normalization backward: dx, dscale and dbias (`[1, C, 1, ...]`
    /// in scale's type) from dy, x, scale and the forward's mean and
    /// inv_variance.
    pub fn batchnorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        options: &NormOptions,
    ) -> Result<NormGradients> {
        self.norm_backward(
            sys::cudnnfe_graph_add_batchnorm_backward,
            [dy, x, scale, mean, inv_variance],
            options,
        )
    }

    /// Instance normalization: statistics per `(n, c)` of `x [N, C,
    /// spatial...]` (rank >= 3) over the spatial dims; `scale` and `bias`
    /// are `[1, C, 1, ...]`, the statistics `[N, C, 1, ...]` FLOAT (training
    /// only).
    pub fn instancenorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        options: &NormOptions,
    ) -> Result<LayerNormOutputs> {
        self.norm_forward(
            sys::cudnnfe_graph_add_instancenorm,
            [x, scale, bias],
            options,
        )
    }

    /// Instance normalization backward: dx, dscale and dbias (`[1, C, 1,
    /// ...]`) from dy, x, scale and the forward's mean and inv_variance.
    pub fn instancenorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        options: &NormOptions,
    ) -> Result<NormGradients> {
        self.norm_backward(
            sys::cudnnfe_graph_add_instancenorm_backward,
            [dy, x, scale, mean, inv_variance],
            options,
        )
    }

    /// Adaptive layer normalization (DiT's): statistics per `(b, s)` of `x
    /// [B, S, features...]` over the features; `scale` and `bias` are
    /// per sample, `[B, 1, features...]`; the statistics `[B, S, 1, ...]`
    /// FLOAT (training only). With zero-centred gamma the gain is `1 +
    /// scale`.
    pub fn adalayernorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        options: &NormOptions,
    ) -> Result<LayerNormOutputs> {
        self.norm_forward(
            sys::cudnnfe_graph_add_adalayernorm,
            [x, scale, bias],
            options,
        )
    }

    /// Adaptive layer normalization backward: dx, and dscale and dbias per
    /// sample (`[B, 1, features...]`) from dy, x, scale and the forward's
    /// mean and inv_variance.
    pub fn adalayernorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        options: &NormOptions,
    ) -> Result<NormGradients> {
        self.norm_backward(
            sys::cudnnfe_graph_add_adalayernorm_backward,
            [dy, x, scale, mean, inv_variance],
            options,
        )
    }

    fn norm_forward(
        &mut self,
        add: NormForwardFn,
        [x, scale, bias]: [Tensor; 3],
        options: &NormOptions,
    ) -> Result<LayerNormOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut mean, mut inv_variance) = (0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            add(
                self.raw(),
                x.uid(),
                scale.uid(),
                bias.uid(),
                &raw,
                &mut y,
                &mut mean,
                &mut inv_variance,
            )
        })?;
        Ok(LayerNormOutputs {
            y: Tensor::from_uid(y),
            mean: Tensor::from_optional_uid(mean),
            inv_variance: Tensor::from_optional_uid(inv_variance),
        })
    }

    fn norm_backward(
        &mut self,
        add: NormBackwardFn,
        [dy, x, scale, mean, inv_variance]: [Tensor; 5],
        options: &NormOptions,
    ) -> Result<NormGradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut dx, mut dscale, mut dbias) = (0i64, 0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            add(
                self.raw(),
                dy.uid(),
                x.uid(),
                scale.uid(),
                mean.uid(),
                inv_variance.uid(),
                &raw,
                &mut dx,
                &mut dscale,
                &mut dbias,
            )
        })?;
        Ok(NormGradients {
            dx: Tensor::from_uid(dx),
            dscale: Tensor::from_uid(dscale),
            dbias: Tensor::from_optional_uid(dbias),
        })
    }

    // ---- layout, resampling and random numbers (docs/layout-ops.md) ----

    /// `y = x` with dims `dims` (same element count), keeping the row-major
    /// order of the logical elements (numpy's reshape). `y` is packed
    /// row-major unless its strides are set. On the GPU a reshape is a view
    /// of x's memory.
    pub fn reshape(&mut self, x: Tensor, dims: &[i64], options: &LayoutOptions) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let ndims = i32::try_from(dims.len()).unwrap_or(i32::MAX);
        let mut y = 0i64;
        // SAFETY: `dims` holds `ndims` entries; filled options; valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_reshape(self.raw(), x.uid(), ndims, dims.as_ptr(), &raw, &mut y)
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// `y`'s dim `i` is x's dim `permutation[i]` (a permutation of `0..rank`).
    /// `y`'s strides default to x's strides permuted: a view of x's memory
    /// in another dimension order (no data moves on the GPU).
    pub fn transpose(
        &mut self,
        x: Tensor,
        permutation: &[usize],
        options: &LayoutOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        // Out-of-range entries become i32::MAX, which the library refuses
        // with its message.
        let perm: Vec<i32> = permutation
            .iter()
            .map(|&p| i32::try_from(p).unwrap_or(i32::MAX))
            .collect();
        let ndims = i32::try_from(perm.len()).unwrap_or(i32::MAX);
        let mut y = 0i64;
        // SAFETY: `perm` holds `ndims` entries; filled options; valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_transpose(
                self.raw(),
                x.uid(),
                ndims,
                perm.as_ptr(),
                &raw,
                &mut y,
            )
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// `y = x[start..end; step]` per dim: one range per dim of x (`0 <=
    /// start < end <= dim`), `steps` (one per dim, each >= 1) or `None` for
    /// 1. `y` is a **view** of x's buffer: it has no buffer of its own and
    /// cannot be a graph output (feed it to an op); on the GPU x must be a
    /// graph input.
    ///
    /// ```
    /// # use cudnnfe::*;
    /// let mut g = Graph::new()?;
    /// let x = g.input("x", DataType::Float, &[4, 10])?;
    /// let y = g.slice(x, &[1..3, 0..10], Some(&[1, 3]), &LayoutOptions::default())?;
    /// assert_eq!(g.dims(y)?, [2, 4]);
    /// # Ok::<(), cudnnfe::Error>(())
    /// ```
    pub fn slice(
        &mut self,
        x: Tensor,
        ranges: &[Range<i64>],
        steps: Option<&[i64]>,
        options: &LayoutOptions,
    ) -> Result<Tensor> {
        if let Some(steps) = steps {
            if steps.len() != ranges.len() {
                return Err(Error::invalid_argument(format!(
                    "slice of {x}: {} steps for {} ranges (one of each per dimension)",
                    steps.len(),
                    ranges.len()
                )));
            }
        }
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let start: Vec<i64> = ranges.iter().map(|r| r.start).collect();
        let end: Vec<i64> = ranges.iter().map(|r| r.end).collect();
        let step = steps.map_or(ptr::null(), <[i64]>::as_ptr);
        let ndims = i32::try_from(ranges.len()).unwrap_or(i32::MAX);
        let mut y = 0i64;
        // SAFETY: start, end and step (when given) hold `ndims` entries.
        self.check(unsafe {
            sys::cudnnfe_graph_add_slice(
                self.raw(),
                x.uid(),
                ndims,
                start.as_ptr(),
                end.as_ptr(),
                step,
                &raw,
                &mut y,
            )
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// `y` = `inputs` (2 to 16, equal ranks and dims except `axis`, one data
    /// type) joined along `axis`; `y` keeps the first input's dimension
    /// order.
    pub fn concatenate(
        &mut self,
        inputs: &[Tensor],
        axis: usize,
        options: &LayoutOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let uids: Vec<i64> = inputs.iter().map(|t| t.uid()).collect();
        let count = i32::try_from(uids.len()).unwrap_or(i32::MAX);
        let axis = i32::try_from(axis).unwrap_or(i32::MAX);
        let mut y = 0i64;
        // SAFETY: `uids` holds `count` entries; filled options; valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_concatenate(self.raw(), count, uids.as_ptr(), axis, &raw, &mut y)
        })?;
        Ok(Tensor::from_uid(y))
    }

    /// Pooling or upsampling of `x [N, C, spatial...]` (1 to 3 spatial dims,
    /// any layout; `y` and the index are channels-last unless their strides
    /// are set, as in cudnn-frontend). Pooling makes
    /// `floor((in + pre + post - window) / stride) + 1` outputs per spatial
    /// dim; upsampling multiplies each by `scale` (half-pixel centres).
    pub fn resample(&mut self, x: Tensor, options: &ResampleOptions) -> Result<ResampleOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut index) = (0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_resample(self.raw(), x.uid(), &raw, &mut y, &mut index)
        })?;
        Ok(ResampleOutputs {
            y: Tensor::from_uid(y),
            index: Tensor::from_optional_uid(index),
        })
    }

    /// A tensor of dims `dims` (packed row-major unless its strides are
    /// set, FLOAT unless its type is set) filled with random numbers of the
    /// options' distribution. `seed_offset`: one-element INT64 (or INT32)
    /// tensors (graph inputs or scalars); `None` uses `options.seed` and
    /// offset 0. The same seed and offset give the same numbers; the CPU
    /// reference's generator differs from cuDNN's (`docs/layout-ops.md`).
    pub fn rng(
        &mut self,
        dims: &[i64],
        seed_offset: Option<(Tensor, Tensor)>,
        options: &RngOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (seed, offset) = seed_offset.map_or((0, 0), |(s, o)| (s.uid(), o.uid()));
        let ndims = i32::try_from(dims.len()).unwrap_or(i32::MAX);
        let mut y = 0i64;
        // SAFETY: `dims` holds `ndims` entries; filled options; valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_rng(self.raw(), ndims, dims.as_ptr(), seed, offset, &raw, &mut y)
        })?;
        Ok(Tensor::from_uid(y))
    }

    // ---- FP8 attention ----

    /// FP8 attention forward (cudnn-frontend's `sdpa_fp8`): q, k, v of one
    /// FP8 type in logical BHSD order, with per-tensor descales and scales.
    /// With `S = Q·Kᵀ * attn_scale * descale_q * descale_k` and `P =
    /// softmax(S)`: `amax_s = max|P|`, `P8 = fp8(P * scale_s)`, `O' = P8·V *
    /// descale_s * descale_v`, `amax_o = max|O'|`, `o = O' * scale_o`. Mark
    /// both amax outputs as graph outputs.
    pub fn sdpa_fp8(
        &mut self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        scales: &SdpaFp8Scales,
        options: &SdpaFp8Options,
    ) -> Result<SdpaFp8Outputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut o, mut stats, mut amax_s, mut amax_o) = (0i64, 0i64, 0i64, 0i64);
        let s = scales;
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_sdpa_fp8(
                self.raw(),
                q.uid(),
                k.uid(),
                v.uid(),
                s.descale_q.uid(),
                s.descale_k.uid(),
                s.descale_v.uid(),
                s.descale_s.uid(),
                s.scale_s.uid(),
                s.scale_o.uid(),
                &raw,
                &mut o,
                &mut stats,
                &mut amax_s,
                &mut amax_o,
            )
        })?;
        Ok(SdpaFp8Outputs {
            o: Tensor::from_uid(o),
            stats: Tensor::from_optional_uid(stats),
            amax_s: Tensor::from_uid(amax_s),
            amax_o: Tensor::from_uid(amax_o),
        })
    }

    /// FP8 attention backward: from q, k, v, the forward's o, the FP8 `d_o`
    /// and the forward's stats, with per-tensor descales and scales (the C
    /// header gives the formulas), writes dq, dk, dv and their amax outputs
    /// (mark those as graph outputs).
    #[allow(clippy::too_many_arguments)]
    pub fn sdpa_fp8_backward(
        &mut self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        o: Tensor,
        d_o: Tensor,
        stats: Tensor,
        scales: &SdpaFp8BackwardScales,
        options: &SdpaFp8BackwardOptions,
    ) -> Result<SdpaFp8Gradients> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut out = [0i64; 7];
        let [dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp] = &mut out;
        let s = scales;
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_sdpa_fp8_backward(
                self.raw(),
                q.uid(),
                k.uid(),
                v.uid(),
                o.uid(),
                d_o.uid(),
                stats.uid(),
                s.descale_q.uid(),
                s.descale_k.uid(),
                s.descale_v.uid(),
                s.descale_o.uid(),
                s.descale_do.uid(),
                s.descale_s.uid(),
                s.descale_dp.uid(),
                s.scale_s.uid(),
                s.scale_dq.uid(),
                s.scale_dk.uid(),
                s.scale_dv.uid(),
                s.scale_dp.uid(),
                &raw,
                dq,
                dk,
                dv,
                amax_dq,
                amax_dk,
                amax_dv,
                amax_dp,
            )
        })?;
        let [dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp] = out.map(Tensor::from_uid);
        Ok(SdpaFp8Gradients {
            dq,
            dk,
            dv,
            amax_dq,
            amax_dk,
            amax_dv,
            amax_dp,
        })
    }

    // ---- validation and build ----

    /// Resolves data types and checks every node's shapes and types, and,
    /// where a GPU is usable, the support rules of that GPU (as
    /// [`validate_for_build`](Self::validate_for_build) with no handle and
    /// default options). [`ErrorKind::InvalidGraph`] names the node, tensor
    /// and rule; [`ErrorKind::NotSupported`] is a graph cudnn-frontend or
    /// cuDNN refuses on that GPU.
    pub fn validate(&mut self) -> Result<()> {
        // SAFETY: a live graph.
        self.check(unsafe { sys::cudnnfe_graph_validate(self.raw()) })
    }

    /// Validates the graph as [`build_with_handle`](Self::build_with_handle)
    /// (or [`build`](Self::build), with `handle` `None`) would with these
    /// options, without building it: shapes and types for every target; for
    /// a GPU target ([`Target::Gpu`](crate::Target::Gpu),
    /// [`Target::Auto`](crate::Target::Auto) with a usable GPU, or
    /// `device_properties`) also the support rules of cudnn-frontend and
    /// cuDNN for that GPU's architecture, or for `options.sm_version` when
    /// set, which fail with [`ErrorKind::NotSupported`]. The CPU reference
    /// checks shapes and types only. `sm_version` makes the GPU rules
    /// testable without a GPU:
    ///
    /// ```
    /// # use cudnnfe::*;
    /// let mut g = Graph::new()?;
    /// let q = g.input("q", DataType::Float, &[1, 2, 4, 8])?;
    /// let o = g.sdpa(q, q, q, &SdpaOptions::default().alibi_mask(true))?.o;
    /// g.set_output(o, true)?;
    /// g.validate_for_build(None, &BuildOptions::cpu_reference())?;
    /// let err = g
    ///     .validate_for_build(None, &BuildOptions::gpu().sm_version(90))
    ///     .unwrap_err();
    /// assert_eq!(err.kind, ErrorKind::NotSupported); // ALiBi needs a causal mask on a GPU
    /// # Ok::<(), cudnnfe::Error>(())
    /// ```
    ///
    /// Since 0.4.
    pub fn validate_for_build(
        &mut self,
        handle: Option<&mut Handle>,
        options: &BuildOptions,
    ) -> Result<()> {
        let raw_options = options.to_raw()?;
        let handle = handle.map_or(ptr::null_mut(), |h| h.raw());
        // SAFETY: a live graph, a live handle or NULL, filled options whose
        // pointers `raw_options` keeps alive for the call.
        self.check(unsafe {
            sys::cudnnfe_graph_validate_for_build(self.raw(), handle, &raw_options.raw)
        })
    }

    /// Validates, lowers and builds the graph for `options.target`. The
    /// graph is consumed; on failure it is dropped too (see
    /// [`try_build`](Self::try_build) to keep it).
    pub fn build(self, options: &BuildOptions) -> Result<BuiltGraph> {
        self.try_build(None, options).map_err(|e| e.error)
    }

    /// Like [`build`](Self::build), with an execution context of yours used
    /// for the GPU build (instead of one owned by the library).
    pub fn build_with_handle(
        self,
        handle: &mut Handle,
        options: &BuildOptions,
    ) -> Result<BuiltGraph> {
        self.try_build(Some(handle), options).map_err(|e| e.error)
    }

    /// Builds the graph, or gives it back with the error, e.g. to retry for
    /// the CPU reference when the GPU build is not supported:
    ///
    /// ```
    /// # use cudnnfe::*;
    /// # let mut g = Graph::new()?;
    /// # let x = g.input("x", DataType::Float, &[4])?;
    /// # let y = g.unary(PointwiseMode::Abs, x)?;
    /// # g.set_output(y, true)?;
    /// let built = match g.try_build(None, &BuildOptions::gpu()) {
    ///     Ok(built) => built,
    ///     Err(BuildError { graph: Some(g), error }) => {
    ///         eprintln!("no GPU build ({error}); using the CPU reference");
    ///         g.build(&BuildOptions::cpu_reference())?
    ///     }
    ///     Err(e) => return Err(e.into()),
    /// };
    /// # let _ = built;
    /// # Ok::<(), cudnnfe::Error>(())
    /// ```
    pub fn try_build(
        self,
        handle: Option<&mut Handle>,
        options: &BuildOptions,
    ) -> Result<BuiltGraph, BuildError> {
        let raw_options = match options.to_raw() {
            Ok(raw) => raw,
            Err(error) => {
                return Err(BuildError {
                    error,
                    graph: Some(self),
                })
            }
        };
        let handle = handle.map_or(ptr::null_mut(), |h| h.raw());
        // SAFETY: a live graph, a live handle or NULL, filled options.
        let status = unsafe { sys::cudnnfe_graph_build(self.raw(), handle, &raw_options.raw) };
        if let Err(error) = self.check(status) {
            return Err(BuildError {
                error,
                graph: Some(self),
            });
        }
        // The graph is built: ownership of the pointer moves to BuiltGraph.
        let this = ManuallyDrop::new(self);
        BuiltGraph::from_built(this.ptr).map_err(|error| BuildError { error, graph: None })
    }
}
