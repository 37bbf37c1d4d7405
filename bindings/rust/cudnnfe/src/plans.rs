//! Plan control (`docs/plans.md`): engine notes, plan and build information,
//! autotune and plan-load options, the process-wide plan cache, and the
//! [`BuiltGraph`] methods that inspect, select, time, serialize and load plans
//! and fill CUDA graphs.

use std::ffi::{c_char, c_void};
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::{BitAnd, BitOr, BitOrAssign};
use std::ptr::{self, NonNull};

use cudnnfe_sys as sys;

use crate::built::{BuiltGraph, DeviceBinding};
use crate::error::{check_thread, owned_str, Error, ErrorKind, Result};
use crate::handle::Handle;
use crate::types::PlanSource;

/// Calls a C init function (`cudnnfe_*_init_sized`) on fresh memory, with
/// the size of the struct this crate was generated with.
fn init<T>(f: unsafe extern "C" fn(*mut T, usize)) -> T {
    let mut raw = MaybeUninit::<T>::zeroed();
    // SAFETY: the init functions write the first `size_of::<T>()` bytes,
    // every field of these plain-data structs; zeroed memory is a valid
    // value of them anyway.
    unsafe {
        f(raw.as_mut_ptr(), std::mem::size_of::<T>());
        raw.assume_init()
    }
}

macro_rules! note_flags {
    (
        $(#[$meta:meta])*
        pub struct $name:ident : $all:path {
            $( $(#[$vmeta:meta])* const $flag:ident = $raw:path; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(u32);

        impl $name {
            $( $(#[$vmeta])* pub const $flag: $name = $name($raw as u32); )*
            /// Every note this version of the crate knows.
            pub const ALL: $name = $name($all as u32);
            const NAMED: &'static [(&'static str, $name)] = &[$( (stringify!($flag), $name::$flag), )*];

            /// No note.
            pub const fn empty() -> $name {
                $name(0)
            }
            /// The C bits (`CUDNNFE_..._NOTE_*`).
            pub const fn bits(self) -> u32 {
                self.0
            }
            /// Notes from C bits, unknown bits kept (a newer library's).
            pub const fn from_bits_retain(bits: u32) -> $name {
                $name(bits)
            }
            /// Whether every note of `other` is set in `self`.
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            /// Whether no note is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
            /// The C names (without prefix) of the notes set, in bit order.
            pub fn names(self) -> Vec<&'static str> {
                Self::NAMED
                    .iter()
                    .filter(|(_, f)| self.contains(*f))
                    .map(|(n, _)| *n)
                    .collect()
            }
        }

        impl BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name {
                $name(self.0 | rhs.0)
            }
        }

        impl BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: $name) {
                self.0 |= rhs.0;
            }
        }

        impl BitAnd for $name {
            type Output = $name;
            fn bitand(self, rhs: $name) -> $name {
                $name(self.0 & rhs.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut names = self.names().join(" | ");
                let unknown = self.0 & !Self::ALL.0;
                if unknown != 0 {
                    if !names.is_empty() {
                        names.push_str(" | ");
                    }
                    names.push_str(&format!("{unknown:#x}"));
                }
                if names.is_empty() {
                    names.push_str("(none)");
                }
                write!(f, "{}({names})", stringify!($name))
            }
        }
    };
}

note_flags! {
    /// Numerical notes of an engine, as bit flags (`CUDNNFE_NUMERICAL_NOTE_*`).
    /// Combine with `|`. On FLOAT data cuDNN reports TF32 math as
    /// `TENSOR_CORE`: exclude it to keep full FP32 math.
    ///
    /// ```
    /// use cudnnfe::NumericalNotes;
    /// let n = NumericalNotes::TENSOR_CORE | NumericalNotes::FFT;
    /// assert!(n.contains(NumericalNotes::FFT) && !n.contains(NumericalNotes::WINOGRAD));
    /// assert_eq!(n.names(), ["TENSOR_CORE", "FFT"]);
    /// assert_eq!(format!("{n:?}"), "NumericalNotes(TENSOR_CORE | FFT)");
    /// ```
    pub struct NumericalNotes: sys::CUDNNFE_NUMERICAL_NOTE_ALL {
        /// Tensor-core math (TF32 on FLOAT data).
        const TENSOR_CORE = sys::CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE;
        /// Inputs converted to a narrower type.
        const DOWN_CONVERT_INPUTS = sys::CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
        /// Reductions in reduced precision.
        const REDUCED_PRECISION_REDUCTION = sys::CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
        /// FFT-based.
        const FFT = sys::CUDNNFE_NUMERICAL_NOTE_FFT;
        /// Results may differ between runs.
        const NONDETERMINISTIC = sys::CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC;
        /// Winograd, any tile size.
        const WINOGRAD = sys::CUDNNFE_NUMERICAL_NOTE_WINOGRAD;
        /// Strict NaN propagation.
        const STRICT_NAN_PROP = sys::CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP;
    }
}

note_flags! {
    /// Behaviour notes of an engine, as bit flags (`CUDNNFE_BEHAVIOR_NOTE_*`).
    pub struct BehaviorNotes: sys::CUDNNFE_BEHAVIOR_NOTE_ALL {
        /// Compiles a kernel at build (NVRTC).
        const RUNTIME_COMPILATION = sys::CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
        /// Needs the filter reordered for INT8x32.
        const REQUIRES_FILTER_INT8X32_REORDER = sys::CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER;
        /// Needs the bias reordered for INT8x32.
        const REQUIRES_BIAS_INT8X32_REORDER = sys::CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER;
        /// The plan can fill a CUDA graph ([`BuiltGraph::populate_cuda_graph`]).
        const SUPPORTS_CUDA_GRAPH_NATIVE_API = sys::CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
        /// Depends on cuBLASLt.
        const CUBLASLT_DEPENDENCY = sys::CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY;
    }
}

/// One plan of a built graph (`cudnnfe_plan_info_t`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PlanInfo {
    /// Its index, for [`BuiltGraph::select_plan`].
    pub index: usize,
    /// Engine and knob choices, e.g. `"eng9_k2=3_k13=1"`; `"cpu_reference"`.
    pub name: String,
    /// cuDNN's global engine index (the N of `engN`); `None` for the CPU
    /// reference.
    pub engine_id: Option<i64>,
    /// Bytes of device workspace the plan needs.
    pub workspace_size: usize,
    /// The engine's numerical notes.
    pub numerical_notes: NumericalNotes,
    /// The engine's behaviour notes.
    pub behavior_notes: BehaviorNotes,
    /// Median time of one execute measured by the last autotune, in
    /// milliseconds; `None` when not timed.
    pub autotune_time_ms: Option<f64>,
    /// Whether execute runs this plan.
    pub selected: bool,
    /// Whether autotune chose it (kept in plan blobs and caches).
    pub chosen_by_autotune: bool,
}

/// How a graph was built (`cudnnfe_build_info_t`): where its plan came from
/// and the host wall-clock time of each stage in milliseconds (0 for a
/// stage that did not run).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct BuildInfo {
    /// Where the plan came from.
    pub source: PlanSource,
    /// The whole build (or plan load) call.
    pub total_ms: f64,
    /// Validation and type resolution.
    pub validate_ms: f64,
    /// Fingerprint and plan cache lookups.
    pub cache_ms: f64,
    /// Lowering and finalizing the operation graph.
    pub lower_ms: f64,
    /// Heuristics queries, engine notes and filters.
    pub heuristics_ms: f64,
    /// Support check and plan finalization.
    pub plan_build_ms: f64,
}

/// Counters of this process's plan caches (`cudnnfe_plan_cache_stats_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanCacheStats {
    /// Plan sets held in memory.
    pub entries: u64,
    /// Builds served from memory.
    pub hits: u64,
    /// Cache-enabled GPU builds not served from memory.
    pub misses: u64,
    /// Builds served from the cache directory.
    pub disk_hits: u64,
    /// Plan files written to the cache directory.
    pub disk_writes: u64,
    /// Unreadable, stale or unwritable cache files (ignored).
    pub disk_errors: u64,
}

/// Counters of this process's plan caches (`cudnnfe_plan_cache_get_stats`).
/// Only GPU builds use the caches.
pub fn plan_cache_stats() -> Result<PlanCacheStats> {
    let mut raw = init(sys::cudnnfe_plan_cache_stats_init_sized);
    // SAFETY: an initialized output struct.
    check_thread(unsafe { sys::cudnnfe_plan_cache_get_stats(&mut raw) })?;
    let n = |v: i64| v.max(0) as u64;
    Ok(PlanCacheStats {
        entries: n(raw.entries),
        hits: n(raw.hits),
        misses: n(raw.misses),
        disk_hits: n(raw.disk_hits),
        disk_writes: n(raw.disk_writes),
        disk_errors: n(raw.disk_errors),
    })
}

/// Empties this process's plan cache and zeroes its counters
/// (`cudnnfe_plan_cache_clear`). Graphs built from it keep their plans; the
/// cache directory is not touched.
pub fn plan_cache_clear() -> Result<()> {
    // SAFETY: no arguments.
    check_thread(unsafe { sys::cudnnfe_plan_cache_clear() })
}

/// Options of [`BuiltGraph::autotune`] (`cudnnfe_autotune_options_t`);
/// [`Default`] is the library's.
///
/// ```
/// let o = cudnnfe::AutotuneOptions::default().warmup_iterations(1).max_ms_per_plan(20.0);
/// assert_eq!(o.warmup_iterations, 1);
/// assert!(o.min_iterations >= 1 && o.max_iterations >= o.min_iterations);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AutotuneOptions {
    /// Untimed executes per plan (default 2).
    pub warmup_iterations: i32,
    /// At least this many timed samples per plan (default 5).
    pub min_iterations: i32,
    /// At most this many timed samples per plan (default 50).
    pub max_iterations: i32,
    /// Stop sampling once the median moved by less than this fraction
    /// (default 0.01).
    pub tolerance: f64,
    /// Stop sampling a plan after this much measured GPU time (default 200).
    pub max_ms_per_plan: f64,
}

impl Default for AutotuneOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_autotune_options_init_sized);
        AutotuneOptions {
            warmup_iterations: raw.warmup_iterations,
            min_iterations: raw.min_iterations,
            max_iterations: raw.max_iterations,
            tolerance: raw.tolerance,
            max_ms_per_plan: raw.max_ms_per_plan,
        }
    }
}

impl AutotuneOptions {
    /// Sets the untimed executes per plan.
    pub fn warmup_iterations(mut self, n: i32) -> Self {
        self.warmup_iterations = n;
        self
    }
    /// Sets the minimum number of timed samples per plan.
    pub fn min_iterations(mut self, n: i32) -> Self {
        self.min_iterations = n;
        self
    }
    /// Sets the maximum number of timed samples per plan.
    pub fn max_iterations(mut self, n: i32) -> Self {
        self.max_iterations = n;
        self
    }
    /// Sets the relative change of the median that ends sampling.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }
    /// Sets the GPU time budget per plan, in milliseconds.
    pub fn max_ms_per_plan(mut self, ms: f64) -> Self {
        self.max_ms_per_plan = ms;
        self
    }

    fn to_raw(&self) -> sys::cudnnfe_autotune_options_t {
        let mut raw = init(sys::cudnnfe_autotune_options_init_sized);
        raw.warmup_iterations = self.warmup_iterations;
        raw.min_iterations = self.min_iterations;
        raw.max_iterations = self.max_iterations;
        raw.tolerance = self.tolerance;
        raw.max_ms_per_plan = self.max_ms_per_plan;
        raw
    }
}

/// Options of [`BuiltGraph::from_plan`] (`cudnnfe_plan_load_options_t`).
///
/// ```
/// assert!(!cudnnfe::PlanLoadOptions::default().rebuild_on_mismatch);
/// assert!(cudnnfe::PlanLoadOptions::default().rebuild_on_mismatch(true).rebuild_on_mismatch);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanLoadOptions {
    /// When the plan was made for another GPU architecture or cuDNN version
    /// (or this machine has neither), or its engine configuration no longer
    /// builds: build the graph again from its description with the stored
    /// build options ([`PlanSource::Rebuilt`]) instead of failing. Default
    /// false.
    pub rebuild_on_mismatch: bool,
}

impl Default for PlanLoadOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_plan_load_options_init_sized);
        PlanLoadOptions {
            rebuild_on_mismatch: raw.rebuild_on_mismatch != 0,
        }
    }
}

impl PlanLoadOptions {
    /// Sets [`rebuild_on_mismatch`](Self::rebuild_on_mismatch).
    pub fn rebuild_on_mismatch(mut self, rebuild: bool) -> Self {
        self.rebuild_on_mismatch = rebuild;
        self
    }
}

fn index_arg(index: usize) -> Result<i64> {
    i64::try_from(index)
        .map_err(|_| Error::invalid_argument(format!("plan index {index} does not fit in int64")))
}

/// Plans: inspection, selection, autotune, build information, plan blobs,
/// CUDA graphs.
///
/// Selecting and autotuning change which plan the graph runs, so they take
/// `&mut self`: the borrow checker keeps them away from executions running
/// on other threads (through `&BuiltGraph` or an `Arc`).
impl BuiltGraph {
    /// Number of plans (`cudnnfe_graph_get_plan_count`): 1 for a
    /// [`BuildPolicy::HeuristicsChoice`](crate::BuildPolicy::HeuristicsChoice)
    /// build and for the CPU reference; with
    /// [`BuildPolicy::All`](crate::BuildPolicy::All), every configuration
    /// that passed the filters and built.
    pub fn plan_count(&self) -> Result<usize> {
        let mut count = 0i64;
        // SAFETY: a live, built graph and a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_graph_get_plan_count(self.raw(), &mut count) })?;
        Ok(count.max(0) as usize)
    }

    /// Plan `index` (`cudnnfe_graph_get_plan_info`);
    /// [`ErrorKind::InvalidArgument`] naming the count when out of range.
    pub fn plan_info(&self, index: usize) -> Result<PlanInfo> {
        let mut raw = init(sys::cudnnfe_plan_info_init_sized);
        // SAFETY: an initialized output struct; the name it points at lives
        // as long as the graph and is copied at once.
        check_thread(unsafe {
            sys::cudnnfe_graph_get_plan_info(self.raw(), index_arg(index)?, &mut raw)
        })?;
        Ok(PlanInfo {
            index,
            // SAFETY: NULL or a NUL-terminated string owned by the graph.
            name: unsafe { owned_str(raw.name) },
            engine_id: (raw.engine_id >= 0).then_some(raw.engine_id),
            workspace_size: usize::try_from(raw.workspace_size).unwrap_or(0),
            numerical_notes: NumericalNotes::from_bits_retain(raw.numerical_notes),
            behavior_notes: BehaviorNotes::from_bits_retain(raw.behavior_notes),
            autotune_time_ms: (raw.autotune_time_ms >= 0.0).then_some(raw.autotune_time_ms),
            selected: raw.selected != 0,
            chosen_by_autotune: raw.chosen_by_autotune != 0,
        })
    }

    /// Every plan ([`plan_info`](Self::plan_info) of each index).
    pub fn plans(&self) -> Result<Vec<PlanInfo>> {
        (0..self.plan_count()?).map(|i| self.plan_info(i)).collect()
    }

    /// Index of the plan execute runs (`cudnnfe_graph_get_selected_plan`).
    pub fn selected_plan(&self) -> Result<usize> {
        let mut index = 0i64;
        // SAFETY: a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_graph_get_selected_plan(self.raw(), &mut index) })?;
        Ok(index.max(0) as usize)
    }

    /// Makes plan `index` the one execute runs and
    /// [`serialize_plan`](Self::serialize_plan) writes;
    /// [`workspace_size`](Self::workspace_size) and
    /// [`plan_name`](Self::plan_name) follow it.
    pub fn select_plan(&mut self, index: usize) -> Result<()> {
        // SAFETY: a live graph, exclusively borrowed.
        check_thread(unsafe { sys::cudnnfe_graph_select_plan(self.raw(), index_arg(index)?) })?;
        self.refresh_plan()
    }

    /// Times every plan on the GPU with the library's scratch buffers and
    /// workspace on the default stream, selects the fastest, and returns its
    /// index. Build with [`BuildPolicy::All`](crate::BuildPolicy::All) to have
    /// a choice. The timings are recorded in [`plans`](Self::plans), in the
    /// plan blob and in the plan caches. [`ErrorKind::NotSupported`] for a
    /// CPU reference graph, or when no plan could be timed.
    pub fn autotune(&mut self, handle: &mut Handle, options: &AutotuneOptions) -> Result<usize> {
        // SAFETY: NULL bindings and workspace ask the library to allocate
        // (and free) its own; the default stream.
        unsafe { self.autotune_with(handle, &[], ptr::null_mut(), 0, ptr::null_mut(), options) }
    }

    /// [`autotune`](Self::autotune) on your buffers: one [`DeviceBinding`]
    /// per bound tensor (outputs are overwritten), `workspace` of
    /// `workspace_size` bytes (plans needing more are not timed; NULL and 0:
    /// the library allocates the largest plan's), on `stream` (NULL: the
    /// default stream), which the call synchronizes. An empty `bindings`
    /// asks the library for scratch buffers.
    ///
    /// # Safety
    ///
    /// As for [`execute`](Self::execute): every pointer valid device memory
    /// spanning its tensor, the workspace `workspace_size` bytes, the stream
    /// NULL or live; nothing else uses them during the call.
    pub unsafe fn autotune_with(
        &mut self,
        handle: &mut Handle,
        bindings: &[DeviceBinding],
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
        options: &AutotuneOptions,
    ) -> Result<usize> {
        let raw = options.to_raw();
        let table = if bindings.is_empty() {
            ptr::null()
        } else {
            bindings.as_ptr().cast::<sys::cudnnfe_binding_t>()
        };
        // SAFETY: DeviceBinding is a transparent cudnnfe_binding_t; the
        // caller vouches for the pointers; the graph is exclusively borrowed.
        check_thread(unsafe {
            sys::cudnnfe_graph_autotune(
                self.raw(),
                handle.raw(),
                table,
                bindings.len(),
                workspace,
                workspace_size,
                stream,
                &raw,
            )
        })?;
        self.refresh_plan()?;
        self.selected_plan()
    }

    /// Where the plan came from and how long each build stage took
    /// (`cudnnfe_graph_get_build_info`).
    pub fn build_info(&self) -> Result<BuildInfo> {
        let mut raw = init(sys::cudnnfe_build_info_init_sized);
        // SAFETY: an initialized output struct.
        check_thread(unsafe { sys::cudnnfe_graph_get_build_info(self.raw(), &mut raw) })?;
        Ok(BuildInfo {
            source: PlanSource::from_raw(raw.source),
            total_ms: raw.total_ms,
            validate_ms: raw.validate_ms,
            cache_ms: raw.cache_ms,
            lower_ms: raw.lower_ms,
            heuristics_ms: raw.heuristics_ms,
            plan_build_ms: raw.plan_build_ms,
        })
    }

    /// The selected plan as a plan blob (`cudnnfe_graph_serialize_plan`): a
    /// `CUDNNFE-PLAN` header line, then JSON holding the graph description,
    /// the build options, the engine configuration, the GPU architecture and
    /// cuDNN version, and the autotune record. [`from_plan`](Self::from_plan)
    /// loads it without heuristics or plan search. Unlike
    /// [`to_bytes`](Self::to_bytes) (the graph description, which rebuilds
    /// anywhere), it is tied to the GPU architecture and cuDNN version.
    pub fn serialize_plan(&self) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: size query, then a buffer of `size` bytes.
        check_thread(unsafe {
            sys::cudnnfe_graph_serialize_plan(self.raw(), ptr::null_mut(), 0, &mut size)
        })?;
        let mut bytes = vec![0u8; size];
        check_thread(unsafe {
            sys::cudnnfe_graph_serialize_plan(
                self.raw(),
                bytes.as_mut_ptr().cast::<c_char>(),
                bytes.len(),
                &mut size,
            )
        })?;
        bytes.truncate(size);
        Ok(bytes)
    }

    /// Loads a plan blob made by [`serialize_plan`](Self::serialize_plan):
    /// the stored engine configuration is built directly
    /// ([`PlanSource::Serialized`]). [`ErrorKind::BadSerializedData`] for
    /// truncated, corrupt or hostile bytes (never a crash), and for a plan
    /// made for another GPU architecture or cuDNN version, naming both,
    /// unless [`PlanLoadOptions::rebuild_on_mismatch`];
    /// [`ErrorKind::NotSupported`] when the engine configuration no longer
    /// builds.
    pub fn from_plan(data: &[u8], options: &PlanLoadOptions) -> Result<BuiltGraph> {
        Self::load_plan(None, data, options)
    }

    /// [`from_plan`](Self::from_plan) with an execution context of yours for
    /// the GPU build.
    pub fn from_plan_with_handle(
        handle: &mut Handle,
        data: &[u8],
        options: &PlanLoadOptions,
    ) -> Result<BuiltGraph> {
        Self::load_plan(Some(handle), data, options)
    }

    fn load_plan(
        handle: Option<&mut Handle>,
        data: &[u8],
        options: &PlanLoadOptions,
    ) -> Result<BuiltGraph> {
        crate::ensure_compatible()?;
        let mut raw_graph = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check_thread(unsafe { sys::cudnnfe_graph_create(&mut raw_graph) })?;
        let graph = NonNull::new(raw_graph).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "cudnnfe_graph_create returned OK and NULL",
            )
        })?;
        let mut raw = init(sys::cudnnfe_plan_load_options_init_sized);
        raw.rebuild_on_mismatch = options.rebuild_on_mismatch as i32;
        let handle = handle.map_or(ptr::null_mut(), |h| h.raw());
        // SAFETY: a fresh graph, a live handle or NULL, `data` valid for its
        // length, initialized options.
        let status = unsafe {
            sys::cudnnfe_graph_deserialize_plan(
                graph.as_ptr(),
                handle,
                data.as_ptr().cast::<c_char>(),
                data.len(),
                &raw,
            )
        };
        if let Err(e) = check_thread(status) {
            // SAFETY: the graph is ours and destroyed once.
            unsafe { sys::cudnnfe_graph_destroy(graph.as_ptr()) };
            return Err(e);
        }
        BuiltGraph::from_built(graph)
    }

    /// Adds the selected plan's work on these buffers to `cuda_graph`, a
    /// `cudaGraph_t` you created empty (`cudaGraphCreate`) and own
    /// (`cudnnfe_graph_populate_cuda_graph`); instantiate and launch it with
    /// the CUDA runtime. Needs a plan with
    /// [`BehaviorNotes::SUPPORTS_CUDA_GRAPH_NATIVE_API`] (ask for one with
    /// [`BuildOptions::require_behavior_notes`](crate::BuildOptions::require_behavior_notes))
    /// and cuDNN 9.5+: [`ErrorKind::NotSupported`] otherwise and for the CPU
    /// reference (stream capture of [`execute`](Self::execute) works for
    /// every GPU plan). Errors are reported on `handle`.
    ///
    /// # Safety
    ///
    /// As for [`execute`](Self::execute), for as long as the CUDA graph may
    /// run; `cuda_graph` must be a live `cudaGraph_t`.
    pub unsafe fn populate_cuda_graph(
        &self,
        handle: &mut Handle,
        bindings: &[DeviceBinding],
        workspace: *mut c_void,
        workspace_size: usize,
        cuda_graph: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller vouches for the pointers.
        let status = unsafe {
            sys::cudnnfe_graph_populate_cuda_graph(
                self.raw(),
                handle.raw(),
                bindings.as_ptr().cast::<sys::cudnnfe_binding_t>(),
                bindings.len(),
                workspace,
                workspace_size,
                cuda_graph,
            )
        };
        handle.check(status)
    }

    /// Points the nodes [`populate_cuda_graph`](Self::populate_cuda_graph)
    /// added to `cuda_graph` at new buffers (`cudnnfe_graph_update_cuda_graph`);
    /// then update the instantiated graph (`cudaGraphExecUpdate`) or
    /// instantiate it again.
    ///
    /// # Safety
    ///
    /// As for [`populate_cuda_graph`](Self::populate_cuda_graph).
    pub unsafe fn update_cuda_graph(
        &self,
        handle: &mut Handle,
        bindings: &[DeviceBinding],
        workspace: *mut c_void,
        workspace_size: usize,
        cuda_graph: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller vouches for the pointers.
        let status = unsafe {
            sys::cudnnfe_graph_update_cuda_graph(
                self.raw(),
                handle.raw(),
                bindings.as_ptr().cast::<sys::cudnnfe_binding_t>(),
                bindings.len(),
                workspace,
                workspace_size,
                cuda_graph,
            )
        };
        handle.check(status)
    }
}
