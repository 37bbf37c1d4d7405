//! Typed options of each operation and of the build.
//!
//! Every options type mirrors a C options struct. Its [`Default`] is read
//! from the C init function (`cudnnfe_*_options_init`), so the defaults are
//! the library's. Fields are public; the types are `#[non_exhaustive]` so
//! that fields can be added as the C structs grow: start from
//! `Default::default()` and use the builder methods or assign fields.

use std::ffi::{c_char, CString};
use std::mem::MaybeUninit;
use std::path::PathBuf;

use cudnnfe_sys as sys;

use crate::error::{Error, Result};
use crate::plans::{BehaviorNotes, NumericalNotes};
use crate::types::{BuildPolicy, ConvMode, DataType, HeurMode, NormPhase, Target, Tensor};

/// A Rust string as a C string; a NUL byte inside is an invalid argument.
pub(crate) fn c_string(value: &str, what: &str) -> Result<CString> {
    CString::new(value).map_err(|e| {
        Error::invalid_argument(format!(
            "{what} {value:?} contains a NUL byte at position {}",
            e.nul_position()
        ))
    })
}

pub(crate) fn c_name(name: &Option<String>, what: &str) -> Result<Option<CString>> {
    name.as_deref().map(|n| c_string(n, what)).transpose()
}

pub(crate) fn name_ptr(name: &Option<CString>) -> *const c_char {
    name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Calls a C options init function on fresh memory.
fn init<T>(f: unsafe extern "C" fn(*mut T)) -> T {
    let mut raw = MaybeUninit::<T>::zeroed();
    // SAFETY: the init functions write every field of the struct; zeroed
    // memory is a valid value of these plain-data structs anyway.
    unsafe {
        f(raw.as_mut_ptr());
        raw.assume_init()
    }
}

/// Copies up to three spatial values over `target`; a const-generic array so
/// that more than three (CUDNNFE_MAX_SPATIAL_DIMS) does not compile.
fn spatial<const N: usize>(target: &mut [i64; 3], values: [i64; N]) {
    const { assert!(N <= 3, "convolutions have at most 3 spatial dimensions") };
    target[..N].copy_from_slice(&values);
}

/// Options of [`Graph::conv_fprop`](crate::Graph::conv_fprop),
/// [`conv_dgrad`](crate::Graph::conv_dgrad) and
/// [`conv_wgrad`](crate::Graph::conv_wgrad) (`cudnnfe_conv_options_t`).
///
/// ```
/// let o = cudnnfe::ConvOptions::default().padding([1, 1]).stride([2, 2]);
/// assert_eq!(o.pre_padding, [1, 1, 0]);
/// assert_eq!(o.stride, [2, 2, 1]);
/// assert_eq!(o.dilation, [1, 1, 1]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ConvOptions {
    /// Node name (used in messages and to name outputs); `None`: automatic.
    pub name: Option<String>,
    /// Spatial rank (1 to 3); 0 takes it from the image's rank minus 2.
    pub spatial_dims: i32,
    /// Padding before each spatial dimension (default 0).
    pub pre_padding: [i64; 3],
    /// Padding after each spatial dimension (default 0).
    pub post_padding: [i64; 3],
    /// Stride of each spatial dimension (default 1).
    pub stride: [i64; 3],
    /// Dilation of each spatial dimension (default 1).
    pub dilation: [i64; 3],
    /// Cross-correlation (default) or convolution.
    pub mode: ConvMode,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for ConvOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_conv_options_init);
        ConvOptions {
            name: None,
            spatial_dims: raw.spatial_dims,
            pre_padding: raw.pre_padding,
            post_padding: raw.post_padding,
            stride: raw.stride,
            dilation: raw.dilation,
            mode: ConvMode::from_raw(raw.mode),
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl ConvOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the spatial rank (0: from the image).
    pub fn spatial_dims(mut self, spatial_dims: i32) -> Self {
        self.spatial_dims = spatial_dims;
        self
    }
    /// Sets the same padding before and after each given spatial dimension.
    pub fn padding<const N: usize>(mut self, padding: [i64; N]) -> Self {
        spatial(&mut self.pre_padding, padding);
        spatial(&mut self.post_padding, padding);
        self
    }
    /// Sets the padding before each given spatial dimension.
    pub fn pre_padding<const N: usize>(mut self, padding: [i64; N]) -> Self {
        spatial(&mut self.pre_padding, padding);
        self
    }
    /// Sets the padding after each given spatial dimension.
    pub fn post_padding<const N: usize>(mut self, padding: [i64; N]) -> Self {
        spatial(&mut self.post_padding, padding);
        self
    }
    /// Sets the stride of each given spatial dimension.
    pub fn stride<const N: usize>(mut self, stride: [i64; N]) -> Self {
        spatial(&mut self.stride, stride);
        self
    }
    /// Sets the dilation of each given spatial dimension.
    pub fn dilation<const N: usize>(mut self, dilation: [i64; N]) -> Self {
        spatial(&mut self.dilation, dilation);
        self
    }
    /// Sets cross-correlation or convolution.
    pub fn mode(mut self, mode: ConvMode) -> Self {
        self.mode = mode;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_conv_options_t {
        let mut raw = init(sys::cudnnfe_conv_options_init);
        raw.name = name_ptr(name);
        raw.spatial_dims = self.spatial_dims;
        raw.pre_padding = self.pre_padding;
        raw.post_padding = self.post_padding;
        raw.stride = self.stride;
        raw.dilation = self.dilation;
        raw.mode = self.mode.as_raw();
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of [`Graph::matmul`](crate::Graph::matmul) (`cudnnfe_matmul_options_t`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MatmulOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for MatmulOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_matmul_options_init);
        MatmulOptions {
            name: None,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl MatmulOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_matmul_options_t {
        let mut raw = init(sys::cudnnfe_matmul_options_init);
        raw.name = name_ptr(name);
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of [`Graph::pointwise`](crate::Graph::pointwise)
/// (`cudnnfe_pointwise_options_t`).
///
/// ```
/// let o = cudnnfe::PointwiseOptions::default();
/// assert_eq!(o.relu_lower_clip, 0.0);
/// assert_eq!(o.elu_alpha, 1.0);
/// assert!(o.relu_upper_clip > 1e38);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PointwiseOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
    /// ReLU: lower clip (default 0).
    pub relu_lower_clip: f64,
    /// ReLU: upper clip (default 3.4e38, no clip).
    pub relu_upper_clip: f64,
    /// ReLU: slope below the lower clip (default 0; leaky ReLU when > 0).
    pub relu_lower_clip_slope: f64,
    /// ELU: alpha (default 1).
    pub elu_alpha: f64,
    /// Softplus: beta (default 1).
    pub softplus_beta: f64,
    /// Swish: beta (default 1).
    pub swish_beta: f64,
    /// GenIndex: the dimension to index (default 0).
    pub axis: i32,
}

impl Default for PointwiseOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_pointwise_options_init);
        PointwiseOptions {
            name: None,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
            relu_lower_clip: raw.relu_lower_clip,
            relu_upper_clip: raw.relu_upper_clip,
            relu_lower_clip_slope: raw.relu_lower_clip_slope,
            elu_alpha: raw.elu_alpha,
            softplus_beta: raw.softplus_beta,
            swish_beta: raw.swish_beta,
            axis: raw.axis,
        }
    }
}

impl PointwiseOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }
    /// Sets ReLU's lower and upper clips.
    pub fn relu_clip(mut self, lower: f64, upper: f64) -> Self {
        self.relu_lower_clip = lower;
        self.relu_upper_clip = upper;
        self
    }
    /// Sets ReLU's slope below the lower clip (leaky ReLU).
    pub fn relu_lower_clip_slope(mut self, slope: f64) -> Self {
        self.relu_lower_clip_slope = slope;
        self
    }
    /// Sets ELU's alpha.
    pub fn elu_alpha(mut self, alpha: f64) -> Self {
        self.elu_alpha = alpha;
        self
    }
    /// Sets softplus's beta.
    pub fn softplus_beta(mut self, beta: f64) -> Self {
        self.softplus_beta = beta;
        self
    }
    /// Sets swish's beta.
    pub fn swish_beta(mut self, beta: f64) -> Self {
        self.swish_beta = beta;
        self
    }
    /// Sets the dimension GenIndex indexes.
    pub fn axis(mut self, axis: i32) -> Self {
        self.axis = axis;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_pointwise_options_t {
        let mut raw = init(sys::cudnnfe_pointwise_options_init);
        raw.name = name_ptr(name);
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw.relu_lower_clip = self.relu_lower_clip;
        raw.relu_upper_clip = self.relu_upper_clip;
        raw.relu_lower_clip_slope = self.relu_lower_clip_slope;
        raw.elu_alpha = self.elu_alpha;
        raw.softplus_beta = self.softplus_beta;
        raw.swish_beta = self.swish_beta;
        raw.axis = self.axis;
        raw
    }
}

/// Options of [`Graph::reduction`](crate::Graph::reduction)
/// (`cudnnfe_reduction_options_t`).
///
/// ```
/// let o = cudnnfe::ReductionOptions::default().reduce_axis(1).reduce_axis(3);
/// assert_eq!(o.axes_mask, 0b1010);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ReductionOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
    /// Bit `i` set: dimension `i` is reduced to 1. 0 (the default) reduces
    /// every dimension. (The output's dims may instead be set with
    /// [`Graph::set_dims`](crate::Graph::set_dims).)
    pub axes_mask: u32,
    /// Ask for a deterministic reduction (default false).
    pub deterministic: bool,
}

impl Default for ReductionOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_reduction_options_init);
        ReductionOptions {
            name: None,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
            axes_mask: raw.axes_mask,
            deterministic: raw.deterministic != 0,
        }
    }
}

impl ReductionOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }
    /// Adds dimension `axis` to the reduced dimensions. An axis of 32 or more
    /// sets every bit, which the library rejects with a message.
    pub fn reduce_axis(mut self, axis: u32) -> Self {
        self.axes_mask |= 1u32.checked_shl(axis).unwrap_or(u32::MAX);
        self
    }
    /// Sets the whole mask of reduced dimensions.
    pub fn axes_mask(mut self, mask: u32) -> Self {
        self.axes_mask = mask;
        self
    }
    /// Asks for a deterministic reduction.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_reduction_options_t {
        let mut raw = init(sys::cudnnfe_reduction_options_init);
        raw.name = name_ptr(name);
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw.axes_mask = self.axes_mask;
        raw.deterministic = self.deterministic as i32;
        raw
    }
}

/// Options of [`Graph::sdpa`](crate::Graph::sdpa) (`cudnnfe_sdpa_options_t`).
///
/// ```
/// let o = cudnnfe::SdpaOptions::default().causal_mask(true).name("attn");
/// assert!(o.causal_mask && !o.generate_stats);
/// assert_eq!(o.attn_scale, 0.0); // 0: 1/sqrt(d)
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Softmax scale applied to Q·Kᵀ; 0 (the default) means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// Also write the softmax statistics (log-sum-exp, `[b, h_q, s_q, 1]`
    /// FLOAT) for a backward pass.
    pub generate_stats: bool,
    /// Causal mask aligned at the top-left corner (row `i` sees columns `<= i`).
    pub causal_mask: bool,
    /// Causal mask aligned at the bottom-right corner (row `i` sees columns
    /// `<= i + s_kv - s_q`). At most one of the two causal flags.
    pub causal_mask_bottom_right: bool,
    /// Additive bias, broadcastable to `[b, h_q, s_q, s_kv]`.
    pub bias: Option<Tensor>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for SdpaOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_sdpa_options_init);
        SdpaOptions {
            name: None,
            attn_scale: raw.attn_scale,
            generate_stats: raw.generate_stats != 0,
            causal_mask: raw.causal_mask != 0,
            causal_mask_bottom_right: raw.causal_mask_bottom_right != 0,
            bias: (raw.bias != 0).then_some(Tensor::from_uid(raw.bias)),
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl SdpaOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the softmax scale (0: `1/sqrt(d)`).
    pub fn attn_scale(mut self, scale: f64) -> Self {
        self.attn_scale = scale;
        self
    }
    /// Asks for the softmax statistics output.
    pub fn generate_stats(mut self, generate: bool) -> Self {
        self.generate_stats = generate;
        self
    }
    /// Sets the top-left causal mask.
    pub fn causal_mask(mut self, causal: bool) -> Self {
        self.causal_mask = causal;
        self
    }
    /// Sets the bottom-right causal mask.
    pub fn causal_mask_bottom_right(mut self, causal: bool) -> Self {
        self.causal_mask_bottom_right = causal;
        self
    }
    /// Sets the additive bias tensor.
    pub fn bias(mut self, bias: Tensor) -> Self {
        self.bias = Some(bias);
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_sdpa_options_t {
        let mut raw = init(sys::cudnnfe_sdpa_options_init);
        raw.name = name_ptr(name);
        raw.attn_scale = self.attn_scale;
        raw.generate_stats = self.generate_stats as i32;
        raw.causal_mask = self.causal_mask as i32;
        raw.causal_mask_bottom_right = self.causal_mask_bottom_right as i32;
        raw.bias = self.bias.map_or(0, Tensor::uid);
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of [`Graph::sdpa_backward`](crate::Graph::sdpa_backward)
/// (`cudnnfe_sdpa_backward_options_t`). Scale, masks and bias must match
/// the forward pass.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaBackwardOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Softmax scale of the forward pass; 0 (the default) means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// The forward's top-left causal mask.
    pub causal_mask: bool,
    /// The forward's bottom-right causal mask.
    pub causal_mask_bottom_right: bool,
    /// The forward's additive bias.
    pub bias: Option<Tensor>,
    /// Bitwise-reproducible gradients (may be slower).
    pub deterministic: bool,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for SdpaBackwardOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_sdpa_backward_options_init);
        SdpaBackwardOptions {
            name: None,
            attn_scale: raw.attn_scale,
            causal_mask: raw.causal_mask != 0,
            causal_mask_bottom_right: raw.causal_mask_bottom_right != 0,
            bias: (raw.bias != 0).then_some(Tensor::from_uid(raw.bias)),
            deterministic: raw.deterministic != 0,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl SdpaBackwardOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the softmax scale (0: `1/sqrt(d)`).
    pub fn attn_scale(mut self, scale: f64) -> Self {
        self.attn_scale = scale;
        self
    }
    /// Sets the top-left causal mask.
    pub fn causal_mask(mut self, causal: bool) -> Self {
        self.causal_mask = causal;
        self
    }
    /// Sets the bottom-right causal mask.
    pub fn causal_mask_bottom_right(mut self, causal: bool) -> Self {
        self.causal_mask_bottom_right = causal;
        self
    }
    /// Sets the forward's additive bias tensor.
    pub fn bias(mut self, bias: Tensor) -> Self {
        self.bias = Some(bias);
        self
    }
    /// Asks for bitwise-reproducible gradients.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_sdpa_backward_options_t {
        let mut raw = init(sys::cudnnfe_sdpa_backward_options_init);
        raw.name = name_ptr(name);
        raw.attn_scale = self.attn_scale;
        raw.causal_mask = self.causal_mask as i32;
        raw.causal_mask_bottom_right = self.causal_mask_bottom_right as i32;
        raw.bias = self.bias.map_or(0, Tensor::uid);
        raw.deterministic = self.deterministic as i32;
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of the normalizations ([`Graph::layernorm`](crate::Graph::layernorm),
/// [`Graph::rmsnorm`](crate::Graph::rmsnorm) and their backward ops)
/// (`cudnnfe_norm_options_t`).
///
/// ```
/// use cudnnfe::{NormOptions, NormPhase};
/// let o = NormOptions::default();
/// assert_eq!((o.phase, o.epsilon, o.zero_centered_gamma), (NormPhase::Training, 1e-5, false));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct NormOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Training (writes the statistics, the default) or inference.
    pub phase: NormPhase,
    /// Added to the variance (or mean square) before the square root
    /// (default 1e-5).
    pub epsilon: f64,
    /// `y` uses `1 + scale` instead of `scale` (zero-centred gamma).
    pub zero_centered_gamma: bool,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for NormOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_norm_options_init);
        NormOptions {
            name: None,
            phase: NormPhase::from_raw(raw.phase),
            epsilon: raw.epsilon,
            zero_centered_gamma: raw.zero_centered_gamma != 0,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl NormOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets training or inference.
    pub fn phase(mut self, phase: NormPhase) -> Self {
        self.phase = phase;
        self
    }
    /// Sets epsilon.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }
    /// Uses `1 + scale` as the gain.
    pub fn zero_centered_gamma(mut self, zero_centered: bool) -> Self {
        self.zero_centered_gamma = zero_centered;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_norm_options_t {
        let mut raw = init(sys::cudnnfe_norm_options_init);
        raw.name = name_ptr(name);
        raw.phase = self.phase.as_raw();
        raw.epsilon = self.epsilon;
        raw.zero_centered_gamma = self.zero_centered_gamma as i32;
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of [`Graph::softmax`](crate::Graph::softmax) (`cudnnfe_softmax_options_t`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SoftmaxOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Also write the log-sum-exp over the last dim (`[..., 1]` FLOAT).
    pub generate_stats: bool,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl Default for SoftmaxOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_softmax_options_init);
        SoftmaxOptions {
            name: None,
            generate_stats: raw.generate_stats != 0,
            compute_dtype: DataType::from_raw(raw.compute_dtype),
        }
    }
}

impl SoftmaxOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Asks for the log-sum-exp output.
    pub fn generate_stats(mut self, generate: bool) -> Self {
        self.generate_stats = generate;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }

    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::cudnnfe_softmax_options_t {
        let mut raw = init(sys::cudnnfe_softmax_options_init);
        raw.name = name_ptr(name);
        raw.generate_stats = self.generate_stats as i32;
        raw.compute_dtype = self.compute_dtype.as_raw();
        raw
    }
}

/// Options of [`Graph::build`](crate::Graph::build) (`cudnnfe_build_options_t`):
/// target, heuristic modes, and plan control (`docs/plans.md`): the build
/// policy, engine filters and the plan caches.
///
/// ```
/// use cudnnfe::{BehaviorNotes, BuildOptions, BuildPolicy, HeurMode, NumericalNotes, Target};
/// let o = BuildOptions::default();
/// assert_eq!(o.target, Target::Auto);
/// assert_eq!(o.heur_modes, [HeurMode::A, HeurMode::Fallback]);
/// assert_eq!(o.policy, BuildPolicy::HeuristicsChoice);
/// assert_eq!(o.max_workspace_size, None);
/// assert!(o.exclude_engines.is_empty() && o.plan_cache_dir.is_none());
/// assert_eq!(BuildOptions::cpu_reference().target, Target::CpuReference);
///
/// // Every plan that keeps full FP32 math and compiles nothing at build.
/// let o = BuildOptions::gpu()
///     .policy(BuildPolicy::All)
///     .exclude_numerical_notes(NumericalNotes::TENSOR_CORE)
///     .exclude_behavior_notes(BehaviorNotes::RUNTIME_COMPILATION)
///     .exclude_engines([7])
///     .max_plans(8);
/// assert_eq!(o.exclude_engines, [7]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BuildOptions {
    /// Where the graph runs (default [`Target::Auto`]).
    pub target: Target,
    /// cuDNN heuristic modes tried in order, 1 to 4 of them (default
    /// `[A, Fallback]`).
    pub heur_modes: Vec<HeurMode>,
    /// How many engine configurations become plans (default
    /// [`BuildPolicy::HeuristicsChoice`]: one).
    pub policy: BuildPolicy,
    /// Skip plans that need more workspace than this many bytes; `None`
    /// (default): no limit.
    pub max_workspace_size: Option<u64>,
    /// Skip engines with any of these numerical notes (default none).
    pub exclude_numerical_notes: NumericalNotes,
    /// Skip engines with any of these behaviour notes (default none).
    pub exclude_behavior_notes: BehaviorNotes,
    /// Keep only engines with every one of these behaviour notes, e.g.
    /// [`BehaviorNotes::SUPPORTS_CUDA_GRAPH_NATIVE_API`] (default none).
    pub require_behavior_notes: BehaviorNotes,
    /// Engines (cuDNN's global engine index, the N of a plan name `engN_...`)
    /// never to use (at most 256; default none).
    pub exclude_engines: Vec<i64>,
    /// With [`BuildPolicy::All`], build at most this many plans; 0
    /// (default): no limit.
    pub max_plans: u32,
    /// True: this build neither reuses nor stores cached plans (default
    /// false).
    pub disable_plan_cache: bool,
    /// Directory of the persistent plan cache, shared safely by processes.
    /// `None` (default): the environment variable `CUDNNFE_PLAN_CACHE_DIR`
    /// when set, else none; an empty path: none.
    pub plan_cache_dir: Option<PathBuf>,
}

/// Build options as the C struct, with the memory its pointers point into.
pub(crate) struct RawBuildOptions {
    pub(crate) raw: sys::cudnnfe_build_options_t,
    _engines: Vec<i64>,
    _cache_dir: Option<CString>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_build_options_init);
        let count = raw.num_heur_modes.clamp(0, raw.heur_modes.len() as i32) as usize;
        BuildOptions {
            target: Target::from_raw(raw.target),
            heur_modes: raw.heur_modes[..count]
                .iter()
                .map(|&m| HeurMode::from_raw(m))
                .collect(),
            policy: BuildPolicy::from_raw(raw.policy),
            max_workspace_size: u64::try_from(raw.max_workspace_size).ok(),
            exclude_numerical_notes: NumericalNotes::from_bits_retain(raw.exclude_numerical_notes),
            exclude_behavior_notes: BehaviorNotes::from_bits_retain(raw.exclude_behavior_notes),
            require_behavior_notes: BehaviorNotes::from_bits_retain(raw.require_behavior_notes),
            exclude_engines: Vec::new(),
            max_plans: raw.max_plans.max(0) as u32,
            disable_plan_cache: raw.disable_plan_cache != 0,
            plan_cache_dir: None,
        }
    }
}

impl BuildOptions {
    /// Default options for the CPU reference target.
    pub fn cpu_reference() -> Self {
        BuildOptions::default().target(Target::CpuReference)
    }
    /// Default options for the GPU target.
    pub fn gpu() -> Self {
        BuildOptions::default().target(Target::Gpu)
    }
    /// Sets the target.
    pub fn target(mut self, target: Target) -> Self {
        self.target = target;
        self
    }
    /// Sets the heuristic modes, tried in order.
    pub fn heur_modes(mut self, modes: impl Into<Vec<HeurMode>>) -> Self {
        self.heur_modes = modes.into();
        self
    }
    /// Sets the build policy.
    pub fn policy(mut self, policy: BuildPolicy) -> Self {
        self.policy = policy;
        self
    }
    /// Skips plans needing more than `bytes` of workspace.
    pub fn max_workspace_size(mut self, bytes: u64) -> Self {
        self.max_workspace_size = Some(bytes);
        self
    }
    /// Skips engines with any of these numerical notes.
    pub fn exclude_numerical_notes(mut self, notes: NumericalNotes) -> Self {
        self.exclude_numerical_notes = notes;
        self
    }
    /// Skips engines with any of these behaviour notes.
    pub fn exclude_behavior_notes(mut self, notes: BehaviorNotes) -> Self {
        self.exclude_behavior_notes = notes;
        self
    }
    /// Keeps only engines with every one of these behaviour notes.
    pub fn require_behavior_notes(mut self, notes: BehaviorNotes) -> Self {
        self.require_behavior_notes = notes;
        self
    }
    /// Never uses these engines (ids, the N of `engN`).
    pub fn exclude_engines(mut self, engines: impl Into<Vec<i64>>) -> Self {
        self.exclude_engines = engines.into();
        self
    }
    /// With [`BuildPolicy::All`], builds at most `n` plans (0: no limit).
    pub fn max_plans(mut self, n: u32) -> Self {
        self.max_plans = n;
        self
    }
    /// Neither reuses nor stores cached plans.
    pub fn disable_plan_cache(mut self, disable: bool) -> Self {
        self.disable_plan_cache = disable;
        self
    }
    /// Uses `dir` as the persistent plan cache (an empty path: none, not
    /// even `CUDNNFE_PLAN_CACHE_DIR`).
    pub fn plan_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plan_cache_dir = Some(dir.into());
        self
    }

    pub(crate) fn to_raw(&self) -> Result<RawBuildOptions> {
        let mut raw = init(sys::cudnnfe_build_options_init);
        raw.target = self.target.as_raw();
        if self.heur_modes.len() > raw.heur_modes.len() {
            return Err(Error::invalid_argument(format!(
                "build options: {} heuristic modes given; at most {} are accepted",
                self.heur_modes.len(),
                raw.heur_modes.len()
            )));
        }
        raw.num_heur_modes = self.heur_modes.len() as i32;
        for (slot, mode) in raw.heur_modes.iter_mut().zip(&self.heur_modes) {
            *slot = mode.as_raw();
        }
        raw.policy = self.policy.as_raw();
        raw.max_workspace_size = match self.max_workspace_size {
            None => -1,
            Some(bytes) => i64::try_from(bytes).map_err(|_| {
                Error::invalid_argument(format!(
                    "build options: max_workspace_size {bytes} does not fit in int64"
                ))
            })?,
        };
        raw.exclude_numerical_notes = self.exclude_numerical_notes.bits();
        raw.exclude_behavior_notes = self.exclude_behavior_notes.bits();
        raw.require_behavior_notes = self.require_behavior_notes.bits();
        // More than the library accepts: the true count, so that it refuses
        // them with its message.
        raw.num_exclude_engines = i32::try_from(self.exclude_engines.len()).unwrap_or(i32::MAX);
        let engines = self.exclude_engines.clone();
        raw.exclude_engines = if engines.is_empty() {
            std::ptr::null()
        } else {
            engines.as_ptr()
        };
        raw.max_plans = i32::try_from(self.max_plans).unwrap_or(i32::MAX);
        raw.disable_plan_cache = self.disable_plan_cache as i32;
        let cache_dir = match &self.plan_cache_dir {
            None => None,
            Some(dir) => {
                let text = dir.to_str().ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "build options: plan_cache_dir {dir:?} is not valid UTF-8"
                    ))
                })?;
                Some(c_string(text, "build options: plan_cache_dir")?)
            }
        };
        raw.plan_cache_dir = cache_dir.as_ref().map_or(std::ptr::null(), |d| d.as_ptr());
        Ok(RawBuildOptions {
            raw,
            _engines: engines,
            _cache_dir: cache_dir,
        })
    }
}
