//! Safe Rust API of **cudnnfe**, a cuDNN Graph API frontend behind a stable
//! C ABI: describe a graph of tensors and operations (matmul, convolutions,
//! pointwise, reductions, normalizations, scaled dot-product attention in
//! FP16/BF16/FP32 and FP8, pooling and resampling, reshape / transpose /
//! slice / concatenate, random numbers), let the library
//! check shapes and types, build it for the GPU (cuDNN) or for the CPU
//! reference, serialize it, and run it.
//!
//! # Example
//!
//! `relu(a @ b + bias)` on the CPU reference, checked against plain Rust:
//!
//! ```
//! use cudnnfe::{BuildOptions, DataType, Graph, Handle, HostBuffer, MatmulOptions, PointwiseMode};
//!
//! let (m, k, n) = (2, 3, 2);
//! let mut g = Graph::named("linear")?;
//! let a = g.input("a", DataType::Float, &[1, m, k])?;
//! let b = g.input("b", DataType::Float, &[1, k, n])?;
//! let bias = g.input("bias", DataType::Float, &[1, 1, n])?; // broadcast over rows
//! let c = g.matmul(a, b, &MatmulOptions::default().name("mm"))?;
//! let y = g.binary(PointwiseMode::Add, c, bias)?;
//! let y = g.unary(PointwiseMode::ReluFwd, y)?;
//! g.set_output(y, true)?;
//! let built = g.build(&BuildOptions::cpu_reference())?;
//!
//! let a_data = [1.0f32, 2.0, 3.0, -4.0, -5.0, -6.0];
//! let b_data = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0];
//! let bias_data = [0.5f32, -1.0];
//! let mut y_data = [0.0f32; 4];
//! let mut handle = Handle::new()?;
//! built.execute_host(&mut handle, &[
//!     (a, HostBuffer::input(&a_data)),
//!     (b, HostBuffer::input(&b_data)),
//!     (bias, HostBuffer::input(&bias_data)),
//!     (y, HostBuffer::output(&mut y_data)),
//! ])?;
//! assert_eq!(y_data, [4.5, 4.0, 0.0, 0.0]);
//! # Ok::<(), cudnnfe::Error>(())
//! ```
//!
//! # Overview
//!
//! * [`Graph`] — a graph under construction. Inputs are [`Tensor`]s (plain
//!   UIDs); each operation method returns its output tensor, whose shape is
//!   inferred at once. Options of each operation are typed structs
//!   ([`MatmulOptions`], [`ConvOptions`], [`PointwiseOptions`],
//!   [`ReductionOptions`], [`SdpaOptions`], [`NormOptions`],
//!   [`LayoutOptions`], [`ResampleOptions`], [`RngOptions`],
//!   [`SdpaFp8Options`], …) with builder methods, whose defaults are the C
//!   library's.
//! * [`Graph::build`] consumes the graph and returns a [`BuiltGraph`], an
//!   immutable plan for a [`Target`]: it runs on host slices
//!   ([`BuiltGraph::execute_host`], CPU reference) or on device pointers
//!   ([`BuiltGraph::execute`], `unsafe`, GPU) with a [`Handle`].
//! * Graphs serialize to JSON ([`Graph::to_json`], [`Graph::from_json`]) and
//!   bytes ([`Graph::to_bytes`], [`Graph::from_bytes`]); a built graph's plan
//!   serializes to a plan blob ([`BuiltGraph::serialize_plan`],
//!   [`BuiltGraph::from_plan`]) that loads without heuristics or plan search.
//! * Plan control (`docs/plans.md`): [`BuildOptions`] carries the build
//!   policy ([`BuildPolicy::All`] builds every plan), engine filters
//!   ([`NumericalNotes`], [`BehaviorNotes`], excluded engines) and the plan
//!   cache settings; a [`BuiltGraph`] lists its plans ([`BuiltGraph::plans`],
//!   [`PlanInfo`]), selects one ([`BuiltGraph::select_plan`]), autotunes
//!   ([`BuiltGraph::autotune`]), says how it was built ([`BuildInfo`]) and
//!   fills CUDA graphs; [`plan_cache_stats`] and [`plan_cache_clear`] act on
//!   the process's plan cache.
//! * Every fallible call returns [`Result`]: [`Error`] carries an
//!   [`ErrorKind`] and the library's full message. No call panics on bad
//!   input.
//! * FP16 / BF16 data are `u16` bit patterns: [`f16_from_f32`],
//!   [`bf16_from_f32`] and back.
//!
//! # Threads
//!
//! [`Graph`]: `Send`, not `Sync` (one thread at a time). [`BuiltGraph`]:
//! `Send + Sync` (execute from many threads at once). [`Handle`]: `Send`,
//! not `Sync` (one per executing thread). These follow the C ABI's rules:
//! a graph under construction belongs to one thread at a time; a built graph
//! is immutable and may be executed from many threads at once, each with its
//! own handle and workspace.
//!
//! ```
//! use std::sync::Arc;
//! use cudnnfe::*;
//! let mut g = Graph::new()?;
//! let x = g.input("x", DataType::Float, &[4])?;
//! let y = g.unary(PointwiseMode::Sqrt, x)?;
//! g.set_output(y, true)?;
//! let built = Arc::new(g.build(&BuildOptions::cpu_reference())?);
//! let workers: Vec<_> = (0..4)
//!     .map(|i| {
//!         let built = Arc::clone(&built);
//!         std::thread::spawn(move || -> Result<f32> {
//!             let mut handle = Handle::new()?; // one per thread
//!             let input = [(i * i) as f32; 4];
//!             let mut out = [0f32; 4];
//!             built.execute_host(&mut handle, &[(x, HostBuffer::input(&input)), (y, HostBuffer::output(&mut out))])?;
//!             Ok(out[0])
//!         })
//!     })
//!     .collect();
//! for (i, w) in workers.into_iter().enumerate() {
//!     assert_eq!(w.join().unwrap()?, i as f32);
//! }
//! # Ok::<(), cudnnfe::Error>(())
//! ```
//!
//! Sharing a graph under construction, or a handle, does not compile:
//!
//! ```compile_fail
//! fn shared<T: Sync>(_: &T) {}
//! shared(&cudnnfe::Graph::new().unwrap());
//! ```
//!
//! ```compile_fail
//! fn shared<T: Sync>(_: &T) {}
//! shared(&cudnnfe::Handle::new().unwrap());
//! ```
//!
//! # Loading or linking
//!
//! By default the `cudnnfe-sys` crate loads `libcudnnfe.so.0` at run time:
//! from `$CUDNNFE_LIBRARY`, else through the dynamic loader, else the Python
//! wheel's copy in the active Python environment. With feature `link` it is
//! linked instead, found through `CUDNNFE_LIB_DIR`, `pkg-config`, or built
//! from the repository with CMake; see the README for the rpath of your own
//! binaries. The raw declarations are re-exported as [`sys`].
//!
//! # cudarc
//!
//! Feature `cudarc` adds `BuiltGraph::execute_cudarc` and
//! `BuiltGraph::bind_cudarc`, which take cudarc's device buffers and
//! streams directly (see the README).
#![deny(missing_docs)]
#![warn(rust_2018_idioms, unsafe_op_in_unsafe_fn)]

mod batchnorm_split;
mod block_scale;
mod bound;
mod built;
#[cfg(feature = "cudarc")]
mod cudarc_buffers;
mod device_properties;
mod error;
mod graph;
mod half;
mod handle;
mod kernel_cache;
mod library;
mod moe;
mod options;
mod plans;
mod types;

use std::sync::OnceLock;

pub use cudnnfe_sys as sys;

/// The cudarc this crate's feature `cudarc` is built with, so that your
/// buffers and streams are of the same version.
#[cfg(feature = "cudarc")]
pub use cudarc;
#[cfg(feature = "cudarc")]
pub use cudarc_buffers::{CudaBoundExecution, CudaBuffer, DeviceBuffer, DeviceBufferMut};

pub use batchnorm_split::{BnFinalizeOutputs, DbnWeightOutputs, GenstatsOutputs, RunningStats};
pub use block_scale::BlockScaleOutputs;
pub use bound::{BoundExecution, CudaGraphMode};
pub use built::{BuiltGraph, DeviceBinding, Element, HostBuffer, ShapeOverride};
pub use device_properties::DeviceProperties;
pub use error::{Error, ErrorKind, Result};
pub use graph::{
    BatchNormOutputs, BuildError, Graph, LayerNormOutputs, NormGradients, ResampleOutputs,
    RmsNormOutputs, SdpaFp8BackwardScales, SdpaFp8Gradients, SdpaFp8Outputs, SdpaFp8Scales,
    SdpaGradients, SdpaOutputs, SoftmaxOutputs, TensorDesc,
};
pub use half::{
    bf16_from_f32, bf16_to_f32, bf16_vec_from_f32, bf16_vec_to_f32, f16_from_f32, f16_to_f32,
    f16_vec_from_f32, f16_vec_to_f32,
};
pub use handle::Handle;
pub use kernel_cache::KernelCache;
pub use library::{
    add_library_search_dir, library_info, set_log_callback, LibraryInfo, LibraryOrigin,
    LoadedLibrary, LogLevel, RuntimeLibrary,
};
pub use options::{
    AttentionCommon, BlockScaleOptions, BnFinalizeOptions, BuildOptions, ConvOptions,
    DbnWeightOptions, GenstatsOptions, LayoutOptions, MatmulOptions, MoeGroupedMatmulOptions,
    NormOptions, PagedCacheLoadOptions, PointwiseOptions, ReductionOptions, ResampleOptions,
    RngOptions, SdpaBackwardOptions, SdpaFp8BackwardOptions, SdpaFp8Options, SdpaOptions,
    SoftmaxOptions,
};
pub use plans::{
    plan_cache_clear, plan_cache_stats, AutotuneOptions, BehaviorNotes, BuildInfo, NumericalNotes,
    PlanCacheStats, PlanInfo, PlanLoadOptions,
};
pub use types::{
    AttentionImplementation, BuildPolicy, ConvMode, DataType, DiagonalAlignment, HeurMode,
    MoeGroupedMatmulMode, NormPhase, PaddingMode, PlanSource, PointwiseMode, ReductionMode,
    ResampleMode, RngDistribution, Shape, Target, Tensor, VerifyMode,
};

/// Version of the C header these bindings were generated from
/// (`MAJOR * 10000 + MINOR * 100 + PATCH`).
pub const HEADER_VERSION: u32 = sys::CUDNNFE_VERSION;

/// ABI major version of that header (the library's SONAME suffix).
pub const ABI_VERSION: u32 = sys::CUDNNFE_ABI_VERSION;

/// Version of the loaded libcudnnfe (same encoding as [`HEADER_VERSION`]).
pub fn version() -> u32 {
    // SAFETY: no arguments, no state.
    unsafe { sys::cudnnfe_version() }
}

/// Checks that the loaded library is at least `header_version` with ABI
/// major `abi_version`; [`ErrorKind::NotSupported`] with the library's
/// message otherwise. [`Graph::new`] and [`Handle::new`] check
/// ([`HEADER_VERSION`], [`ABI_VERSION`]) once per process.
///
/// ```
/// cudnnfe::check_version(cudnnfe::HEADER_VERSION, cudnnfe::ABI_VERSION)?;
/// let err = cudnnfe::check_version(99_00_00, cudnnfe::ABI_VERSION).unwrap_err();
/// assert_eq!(err.kind, cudnnfe::ErrorKind::NotSupported);
/// # Ok::<(), cudnnfe::Error>(())
/// ```
pub fn check_version(header_version: u32, abi_version: u32) -> Result<()> {
    // SAFETY: plain values; the message is read on this thread at once.
    error::check_thread(unsafe { sys::cudnnfe_check_version(header_version, abi_version) })
}

/// [`check_version`] of this crate's header, once per process.
pub(crate) fn ensure_compatible() -> Result<()> {
    static COMPATIBLE: OnceLock<Result<()>> = OnceLock::new();
    COMPATIBLE
        .get_or_init(|| check_version(HEADER_VERSION, ABI_VERSION))
        .clone()
}

/// Version of the cuDNN the library loads (e.g. 91900 for 9.19.0), loading
/// it if needed. [`ErrorKind::CudnnUnavailable`], with the paths tried, when
/// it cannot be loaded. The environment variable `CUDNNFE_CUDNN_LIBRARY`
/// names a specific libcudnn (`CUDNNFE_CUDART_LIBRARY` likewise for the CUDA
/// runtime).
pub fn cudnn_version() -> Result<i64> {
    let mut version = 0i64;
    // SAFETY: a valid out-pointer.
    error::check_thread(unsafe { sys::cudnnfe_cudnn_version(&mut version) })?;
    Ok(version)
}

/// Number of usable CUDA devices; 0 (not an error) when the CUDA runtime or
/// the driver is missing.
pub fn device_count() -> Result<usize> {
    let mut count = 0i32;
    // SAFETY: a valid out-pointer.
    error::check_thread(unsafe { sys::cudnnfe_device_count(&mut count) })?;
    Ok(count.max(0) as usize)
}
